// SPDX-License-Identifier: Apache-2.0
/*
 * The records of what host isolation narrowed, and their state file
 * (HOST_STATE_FILE in the state dir), one line per thing:
 *
 *   cgroup ORIG APPLIED PATH       PATH %-escaped (bytes <= ' ', '%', >= 0x7f)
 *   task TID START ORIG APPLIED    START: /proc/TID/stat field 22
 *   irq N ORIG APPLIED
 *   irq_default ORIG APPLIED
 *   workqueue ORIG APPLIED
 *
 * ORIG and APPLIED are cpulists, "-" for empty (a v2 cgroup that
 * inherits). Lines starting with '#' are comments. The file is replaced
 * atomically (files_write_atomic) and removed when nothing is narrowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host_internal.h"
#include "user/base/files.h"
#include "user/base/log.h"

#define STATE_MAX_BYTES	(64u << 20)

static const char kind_char[] = { [HOST_CGROUP] = 'c', [HOST_TASK] = 't', [HOST_IRQ] = 'i',
				  [HOST_IRQ_DEFAULT] = 'd', [HOST_WORKQUEUE] = 'w' };

void host_rec_key(enum host_kind kind, const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%c:%s", kind_char[kind], key);
}

struct host_rec *host_rec_get(const struct host *h, enum host_kind kind, const char *key)
{
	char k[CGFS_PATH_MAX + 8];

	host_rec_key(kind, key, k, sizeof(k));
	return strmap_get(h->recs, k);
}

int host_rec_put(struct host *h, enum host_kind kind, const char *key, uint64_t start,
		 const struct cpumask *orig, const struct cpumask *applied)
{
	char k[CGFS_PATH_MAX + 8];
	struct host_rec *r;

	host_rec_key(kind, key, k, sizeof(k));
	r = strmap_get(h->recs, k);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		if (strmap_put(h->recs, k, r) < 0) {
			free(r);
			return -ENOMEM;
		}
		r->kind = kind;
		snprintf(r->key, sizeof(r->key), "%s", key);
		h->recs_dirty = true;
	} else if (r->start != start || !cpumask_equal(&r->orig, orig) ||
		   !cpumask_equal(&r->applied, applied)) {
		h->recs_dirty = true;
	}
	r->start = start;
	r->orig = *orig;
	r->applied = *applied;
	r->seen = true;
	return 0;
}

void host_rec_del(struct host *h, enum host_kind kind, const char *key)
{
	char k[CGFS_PATH_MAX + 8];
	struct host_rec *r;

	host_rec_key(kind, key, k, sizeof(k));
	r = strmap_del(h->recs, k);
	if (r)
		h->recs_dirty = true;
	free(r);
}

/* --- the file --- */

static void put_list(FILE *f, const struct cpumask *m)
{
	char buf[CPULIST_MAX];

	cpulist_format(m, buf, sizeof(buf));
	fputs(buf[0] ? buf : "-", f);
}

static void put_escaped(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == '%' || *p >= 0x7f)
			fprintf(f, "%%%02x", *p);
		else
			fputc(*p, f);
}

static int unescape(const char *s, char *dst, size_t len)
{
	size_t n = 0;

	for (; *s; s++) {
		unsigned x;

		if (n + 1 >= len)
			return -ENAMETOOLONG;
		if (*s == '%') {
			if (sscanf(s + 1, "%2x", &x) != 1 || !s[1] || !s[2])
				return -EINVAL;
			dst[n++] = (char)x;
			s += 2;
		} else {
			dst[n++] = *s;
		}
	}
	dst[n] = '\0';
	return 0;
}

static int parse_list(const char *s, struct cpumask *ret)
{
	if (strcmp(s, "-") == 0) {
		cpumask_zero(ret);
		return 0;
	}
	return cpulist_parse(s, ret);
}

static void put_rec(FILE *f, const struct host_rec *r)
{
	static const char *const word[] = { [HOST_CGROUP] = "cgroup", [HOST_TASK] = "task",
		[HOST_IRQ] = "irq", [HOST_IRQ_DEFAULT] = "irq_default", [HOST_WORKQUEUE] = "workqueue" };

	fputs(word[r->kind], f);
	if (r->kind == HOST_TASK)
		fprintf(f, " %s %llu", r->key, (unsigned long long)r->start);
	else if (r->kind == HOST_IRQ)
		fprintf(f, " %s", r->key);
	fputc(' ', f);
	put_list(f, &r->orig);
	fputc(' ', f);
	put_list(f, &r->applied);
	if (r->kind == HOST_CGROUP) {
		fputc(' ', f);
		put_escaped(f, r->key);
	}
	fputc('\n', f);
}

int host_state_save(struct host *h)
{
	char *text = NULL;
	size_t len = 0, it = 0;
	const char *k;
	void *v;
	FILE *f;
	int r;

	if (!h->recs_dirty && (strmap_count(h->recs) > 0) == h->saved_nonempty)
		return 0;	/* the file says this already */
	if (!strmap_count(h->recs)) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", h->o.state_dir, HOST_STATE_FILE);
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		h->saved_nonempty = false;
		h->recs_dirty = false;
		return 0;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fputs("# cpusetd host isolation: what each thing had before it was narrowed\n"
	      "# (README \"Host isolation\"); kind [id] original applied [cgroup path]\n", f);
	while (strmap_next(h->recs, &it, &k, &v))
		put_rec(f, v);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	r = files_write_atomic(h->o.state_dir, HOST_STATE_FILE, text, len, 0600);
	free(text);
	if (r == 0) {
		h->saved_nonempty = true;
		h->recs_dirty = false;
	}
	return r;
}

/* One line into a record. 0, -EINVAL (malformed), -ENOMEM. */
static int load_line(struct host *h, char *line)
{
	char *w[6] = { NULL };
	char key[CGFS_PATH_MAX];
	struct cpumask orig, applied;
	unsigned long long start = 0;
	enum host_kind kind;
	int n = 0, o;
	char *save = NULL, *end;

	for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (n < 3)
		return -EINVAL;
	if (strcmp(w[0], "cgroup") == 0 && n == 4) {
		kind = HOST_CGROUP;
		o = 1;
		if (unescape(w[3], key, sizeof(key)) < 0 || key[0] != '/')
			return -EINVAL;
	} else if (strcmp(w[0], "task") == 0 && n == 5) {
		kind = HOST_TASK;
		o = 3;
		if (strspn(w[1], "0123456789") != strlen(w[1]) || strlen(w[1]) > 10)
			return -EINVAL;
		errno = 0;
		start = strtoull(w[2], &end, 10);
		if (errno || *end)
			return -EINVAL;
		snprintf(key, sizeof(key), "%s", w[1]);
	} else if (strcmp(w[0], "irq") == 0 && n == 4) {
		kind = HOST_IRQ;
		o = 2;
		if (strspn(w[1], "0123456789") != strlen(w[1]) || strlen(w[1]) > 10)
			return -EINVAL;
		snprintf(key, sizeof(key), "%s", w[1]);
	} else if ((strcmp(w[0], "irq_default") == 0 || strcmp(w[0], "workqueue") == 0) && n == 3) {
		kind = w[0][0] == 'i' ? HOST_IRQ_DEFAULT : HOST_WORKQUEUE;
		o = 1;
		key[0] = '\0';
	} else {
		return -EINVAL;
	}
	if (parse_list(w[o], &orig) < 0 || parse_list(w[o + 1], &applied) < 0)
		return -EINVAL;
	if (host_rec_put(h, kind, key, start, &orig, &applied) < 0)
		return -ENOMEM;
	host_rec_get(h, kind, key)->seen = false;
	return 0;
}

/* A refusal of files_open_private: the file is not one we wrote. */
static bool refusal(int r)
{
	return r == -ELOOP || r == -EINVAL || r == -EPERM || r == -EACCES || r == -EMLINK;
}

int host_state_load(struct host *h)
{
	char path[4200], why[96], *text = NULL, *save = NULL;
	size_t len;
	unsigned bad = 0, lineno = 0, first_bad = 0;
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s", h->o.state_dir, HOST_STATE_FILE);
	/* It says what to write where, as root: only a file we wrote is
	 * believed (ours: root's, 0600, one link, not a symlink). */
	r = files_read_private(path, geteuid(), STATE_MAX_BYTES, &text, &len, &st);
	if (r == -ENOENT)
		return 0;
	if (refusal(r)) {
		log_error("isolation: %s: %s: not a record cpusetd wrote; nothing is restored "
			  "from it, and it is left for a person to look at (README \"Host "
			  "isolation\")", path, files_refused_why(r, &st, geteuid(), why,
								  sizeof(why)));
		return -EPERM;
	}
	if (r < 0)
		return r;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (l[0] == '#' || !l[0])
			continue;
		r = load_line(h, l);
		if (r == -ENOMEM) {
			free(text);
			return r;
		}
		if (r < 0 && !bad++)
			first_bad = lineno;
	}
	free(text);
	if (bad)
		log_warn("isolation: %s: %u malformed line%s skipped (first: line %u)", path, bad,
			 bad == 1 ? "" : "s", first_bad);
	h->recs_dirty = false;	/* the file holds these */
	h->saved_nonempty = true;	/* there is a file: the next save replaces or removes it */
	if (strmap_count(h->recs)) {
		log_notice("isolation: %s: %zu originals of a previous run loaded", path,
			   strmap_count(h->recs));
	}
	return 0;
}
