// SPDX-License-Identifier: Apache-2.0
/*
 * Writes <state-dir>/topology.json (export_koord.h) from a snapshot of the
 * placements, next to status.json and through the same atomic write
 * (files_write_atomic), only when its text changes: most placement
 * changes (every shared container) leave the exclusive pods and the
 * topology as they were, and a Koordinator agent watching the file should
 * see a change only when there is one.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "snapshot.h"
#include "export_koord.h"
#include "export_koord_write.h"
#include "user/base/files.h"

/*
 * The last text written, where, and the file it became (a rename keeps
 * the temporary file's inode). One per process: the daemon has one state
 * directory; another directory simply writes.
 */
static struct {
	char dir[PATH_MAX];
	char *text;
	size_t len;
	dev_t dev;
	ino_t ino;
} last;

static void path_of(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, EXPORT_KOORD_FILE);
}

/* Whether path holds these bytes. What a process that never wrote the
 * file asks: the daemon's exports run in a forked child (the daemon's
 * export_writer.c) whose memory of the last text ends with it. */
static bool same_on_disk(const char *path, const char *text, size_t len)
{
	char *old = NULL;
	size_t old_len = 0;
	bool same;

	if (files_read(path, len + 1, &old, &old_len) < 0)
		return false;
	same = old_len == len && memcmp(old, text, len) == 0;
	free(old);
	return same;
}

/* Whether dir/topology.json is still the file we wrote with these bytes
 * (not removed or replaced by anyone since). */
static bool unchanged(const char *dir, const char *text, size_t len)
{
	char path[PATH_MAX + sizeof(EXPORT_KOORD_FILE) + 1];
	struct stat st;

	path_of(dir, path, sizeof(path));
	if (!last.text)
		return same_on_disk(path, text, len);
	if (last.len != len || strcmp(last.dir, dir) != 0 || memcmp(last.text, text, len) != 0)
		return false;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == last.dev &&
	       st.st_ino == last.ino && (size_t)st.st_size == len;
}

/* Keeps what was just written; when it cannot (no memory, a path too
 * long, the file gone at once), the next call writes again. */
static void remember(const char *dir, const char *text, size_t len)
{
	char path[PATH_MAX + sizeof(EXPORT_KOORD_FILE) + 1];
	struct stat st;
	char *copy;

	free(last.text);
	last.text = NULL;
	path_of(dir, path, sizeof(path));
	if (strlen(dir) >= sizeof(last.dir) || lstat(path, &st) < 0 || !(copy = malloc(len ? len : 1)))
		return;
	memcpy(copy, text, len);
	strcpy(last.dir, dir);
	last.text = copy;
	last.len = len;
	last.dev = st.st_dev;
	last.ino = st.st_ino;
}

/* The entry of pods[0..n) for uid, or NULL. Linear: a node runs at most a
 * few hundred pods and this runs once per status write. */
static struct export_koord_pod *pod_find(struct export_koord_pod *pods, size_t n, const char *uid)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(pods[i].uid, uid) == 0)
			return &pods[i];
	return NULL;
}

static bool has_own_cpus(const struct policy_decision *d)
{
	return !d->err && (d->kind == CPUSETD_KIND_INTEGER || d->kind == CPUSETD_KIND_ANNOTATED);
}

/* One entry per pod with exclusive CPUs into *ret (caller frees), *ret_n. */
static int collect(const struct snapshot *s, struct export_koord_pod **ret, size_t *ret_n)
{
	struct export_koord_pod *pods = calloc(s->n_containers + 1, sizeof(*pods));
	size_t n = 0;

	if (!pods)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_containers; i++) {
		const struct snapshot_container *ct = &s->containers[i];
		struct export_koord_pod *p;

		if (!has_own_cpus(ct->d))
			continue;
		p = pod_find(pods, n, ct->meta->pod_uid);
		if (!p) {
			p = &pods[n++];
			p->namespace_ = ct->meta->namespace_;
			p->name = ct->meta->pod_name;
			p->uid = ct->meta->pod_uid;
		}
		cpumask_or(&p->cpus, &p->cpus, &ct->d->cpus);
	}
	export_koord_sort(pods, n);
	*ret = pods;
	*ret_n = n;
	return 0;
}

/* Returns 0 (written, or the same bytes already there) or -errno. */
static int write_if_changed(const char *dir, const char *text, size_t len)
{
	int r;

	if (unchanged(dir, text, len))
		return 0;
	r = files_write_atomic(dir, EXPORT_KOORD_FILE, text, len, 0644);
	if (r == 0)
		remember(dir, text, len);
	return r;
}

int export_koord_write(const struct snapshot *s, const char *state_dir)
{
	struct export_koord_pod *pods;
	const char *text;
	json_object *o;
	size_t n;
	int r;

	r = collect(s, &pods, &n);
	if (r < 0)
		return r;
	o = export_koord_json(s->topo, pods, n, &(struct export_koord_pools){
				      .shared = s->shared_pool, .be = &s->be_pool,
				      .system = s->policy ? &s->policy->system_qos_cpus : NULL });
	free(pods);
	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE);
	r = text ? write_if_changed(state_dir, text, strlen(text)) : -ENOMEM;
	json_object_put(o);
	return r;
}
