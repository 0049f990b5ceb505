// SPDX-License-Identifier: Apache-2.0
/*
 * The INI file: read whole (bounded), fed to inih line by line through
 * our own reader, which counts lines (inih reports only the first
 * error's) and refuses over-long ones (inih would split them); each key
 * goes through config_apply like its command-line option.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "config_internal.h"
#include "user/base/files.h"

/* A config file is a few lines; anything bigger is a mistake. */
#define CONFIG_MAX_BYTES	(1u << 20)

/* The setting an INI key names ('_' and '-' alike), or NULL. */
static const struct option *ini_key_opt(const char *key)
{
	char name[64];
	size_t n = strlen(key);

	if (n >= sizeof(name))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	for (const struct option *o = config_long_opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o->val == OPT_CONFIG || o->val == OPT_HELP || o->val == OPT_VERSION ||
			       o->val == OPT_CHECK_CONFIG || o->val == OPT_RELEASE ? NULL : o;
	return NULL;
}

/* inih handler: returns nonzero to go on; the first error is kept. */
static int on_ini_key(void *user, const char *section, const char *key, const char *value)
{
	struct loader *l = user;
	char why[PATH_MAX + 64];
	const struct option *o;

	if (l->err_line)
		return 0;
	if (section[0] && strcmp(section, "cpusetd") != 0)
		snprintf(l->err, sizeof(l->err), "unknown section [%s]", section);
	else if (!(o = ini_key_opt(key)))
		snprintf(l->err, sizeof(l->err), "unknown key '%s'", key);
	else if (config_apply(l, o->val, o->name, value, why, sizeof(why)) < 0)
		snprintf(l->err, sizeof(l->err), "%s: %s", key, why);
	else
		return 1;
	l->err_line = l->src.lineno;
	return 0;
}

/* fgets-like reader for inih that counts lines and refuses long ones. */
static char *read_ini_line(char *str, int num, void *stream)
{
	struct ini_src *s = stream;
	const char *p, *nl;
	size_t n, text;

	if (s->pos >= s->len || s->long_line)
		return NULL;
	p = s->buf + s->pos;
	nl = memchr(p, '\n', s->len - s->pos);
	n = nl ? (size_t)(nl - p) + 1 : s->len - s->pos;
	text = n - (nl != NULL);
	if (text > 0 && p[text - 1] == '\r')
		text--;
	s->lineno++;
	/* inih needs room for "\r\n\0" after the text (ini.h, INI_MAX_LINE). */
	s->max_len = num - 3;
	if (num < 3 || text > (size_t)num - 3) {
		s->long_line = s->lineno;
		return NULL;
	}
	memcpy(str, p, n);
	str[n] = '\0';
	s->pos += n;
	return str;
}

/* files_read(), and a NUL inside is not text (inih would stop there). */
static int read_file(const char *path, char **ret, size_t *ret_len)
{
	int r = files_read(path, CONFIG_MAX_BYTES, ret, ret_len);

	if (r == 0 && memchr(*ret, '\0', *ret_len)) {
		free(*ret);
		return -EINVAL;
	}
	return r;
}

/* Loads the INI file. named: given with --config, so it must exist. */
int config_load_ini(struct loader *l, bool named)
{
	const char *path = l->cfg.config_file;
	char *buf = NULL;
	int r, line;

	r = read_file(path, &buf, &l->src.len);
	if (r == -ENOENT && !named)
		return 0;
	if (r < 0) {
		say(l, "config file '%s': %s", path,
			r == -EINVAL ? "not a regular text file" : strerror(-r));
		return r;
	}
	l->src.buf = buf;
	l->in_ini = true;
	line = ini_parse_stream(read_ini_line, &l->src, on_ini_key, l);
	l->in_ini = false;
	free(buf);
	if (line < 0) {
		say(l, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (l->src.long_line && (line == 0 || line >= l->src.long_line)) {
		say(l, "%s:%d: line longer than %d characters",
			path, l->src.long_line, l->src.max_len);
		return -EINVAL;
	}
	if (line == 0)
		return 0;
	if (line == l->err_line)
		say(l, "%s:%d: %s", path, line, l->err);
	else
		say(l, "%s:%d: syntax error, expected 'key = value' or [cpusetd]",
			path, line);
	return -EINVAL;
}
