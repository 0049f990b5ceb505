/*
 * cpusetctl's shared helpers: usage errors, clean output of untrusted
 * strings, JSON accessors and loading status.json (written atomically by
 * the daemon, so reading it needs no locking).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/status.h"
#include "ctl.h"

#define CTL_MAX_STATUS_BYTES	(64u << 20)	/* far above any real node */


/* The one line for bad usage: "cpusetctl: <what> (see 'cpusetctl --help')". */
void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", prog);
}

/* Reports getopt_long's ':' or '?' for ctx ("" or "status: "). */
void bad_option(int c, char **argv, const char *ctx)
{
	char opt[3] = { '-', (char)optopt, '\0' };
	const char *arg = argv[optind - 1];
	/* Short options may be clustered ("-jx"): name the one at fault. */
	const char *name = c == '?' && optopt && arg[1] != '-' ? opt : arg;

	usage_error(c == ':' ? "%soption '%s' needs an argument" : "%sunknown option '%s'",
		    ctx, name);
}

void ctl_put_clean(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

const char *ctl_clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* The string member key of obj, or dflt when absent or not a string. */
const char *ctl_jstr(json_object *obj, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return dflt;
	return json_object_get_string(v);
}

/* The integer member key of obj, or dflt when absent or not a number. */
int64_t ctl_jint(json_object *obj, const char *key, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return dflt;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return dflt;
	return json_object_get_int64(v);
}

bool ctl_jbool(json_object *obj, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* The member key of obj if it has type t, else NULL. */
json_object *ctl_jget(json_object *obj, const char *key, json_type t)
{
	json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

/* ---------- loading status.json ---------------------------------------- */

/*
 * Reads the whole of path into a NUL-terminated malloc'd buffer (*ret,
 * the caller frees). Returns 0, -EFBIG, -ENOMEM or -errno.
 */
static int read_file(const char *path, char **ret)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if ((uint64_t)st.st_size > CTL_MAX_STATUS_BYTES) {
		err = -EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			free(buf);
			goto out;
		}
		got += n;
	}
	buf[got] = '\0';
	*ret = buf;
out:
	close(fd);
	return err;
}

/*
 * Parses text, which must be exactly one JSON object (trailing garbage is
 * refused). Returns the object (the caller puts it), or NULL with *why set
 * to a static description.
 */
static json_object *parse_whole(const char *text, const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(text);
	enum json_tokener_error jerr;
	json_object *obj;

	if (!tok) {
		*why = strerror(ENOMEM);
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	*why = jerr == json_tokener_continue ? "unexpected end of data" :
						json_tokener_error_desc(jerr);
	if (obj && text[json_tokener_get_parse_end(tok) +
			strspn(text + json_tokener_get_parse_end(tok), " \t\r\n")] != '\0') {
		*why = "data after the JSON value";
		json_object_put(obj);
		obj = NULL;
	}
	if (obj && !json_object_is_type(obj, json_type_object)) {
		*why = "not a JSON object";
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/*
 * Loads <state_dir>/status.json into *ret (a JSON object; the caller puts
 * it). Prints the one specific error itself. Returns 0 or -errno.
 */
int ctl_status_load(const char *state_dir, json_object **ret)
{
	const char *why;
	char path[PATH_MAX];
	json_object *root;
	char *text = NULL;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", state_dir, STATUS_FILE) >= (int)sizeof(path)) {
		fprintf(stderr, "%s: state directory path too long: %s\n", prog, state_dir);
		return -ENAMETOOLONG;
	}
	err = read_file(path, &text);
	if (err == -ENOENT || err == -ENOTDIR) {
		fprintf(stderr, "%s: no status at %s: is cpusetd running?\n", prog, path);
		return err;
	}
	if (err < 0) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(-err));
		return err;
	}
	root = parse_whole(text, &why);
	free(text);
	if (!root) {
		fprintf(stderr, "%s: cannot parse %s: %s\n", prog, path, why);
		return -EBADMSG;
	}
	if (ctl_jint(root, "version", 0) != 1)
		fprintf(stderr, "%s: warning: %s is not version 1 (has %s), showing what is known\n",
			prog, path, ctl_jget(root, "version", json_type_int) ?
			json_object_get_string(ctl_jget(root, "version", json_type_int)) : "none");
	*ret = root;
	return 0;
}


void ctl_print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}
