// SPDX-License-Identifier: Apache-2.0
/*
 * The tasks of the hierarchy's root cgroup (v1: the root cpuset's
 * "tasks"; v2: the root's "cgroup.threads"), by their affinity
 * (sched_setaffinity(2), per thread). The root cpuset cannot be narrowed
 * (v1: its cpuset.cpus is read-only, every online CPU), and moving tasks
 * into a cgroup of ours would change what /proc/PID/cgroup says of them
 * and where every tool accounts them; an affinity is inherited by every
 * fork and thread a task makes, so the new ones keep off the exclusive
 * CPUs too, and the periodic rescan catches the rest.
 *
 * Kernel threads the kernel pins (PF_NO_SETAFFINITY: per-CPU kthreads,
 * workqueue workers, which follow the workqueue cpumask) are left alone:
 * sched_setaffinity refuses them with EINVAL.
 *
 * A task born from a narrowed one carries the narrowed affinity: its
 * original is taken as its creator's, found by the value (any record whose
 * applied set it carries), so it is given back the same as its parent.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_internal.h"
#include "user/base/files.h"

/* include/linux/sched.h */
#define PF_KTHREAD		0x00200000u
#define PF_NO_SETAFFINITY	0x04000000u
#define TASKS_MAX_BYTES		(64u << 20)

/* One applied value and the union of the originals it came from. */
struct lineage {
	struct cpumask applied, orig;
};

struct lineages {
	struct lineage *v;
	size_t n;
};

static int lineage_build(const struct host *h, struct lineages *ret)
{
	size_t it = 0, cap = 0;
	const char *k;
	void *v;

	ret->v = NULL;
	ret->n = 0;
	while (strmap_next(h->recs, &it, &k, &v)) {
		const struct host_rec *r = v;
		size_t i;

		if (r->kind != HOST_TASK)
			continue;
		for (i = 0; i < ret->n && !cpumask_equal(&ret->v[i].applied, &r->applied); i++)
			;
		if (i == ret->n) {
			if (ret->n == cap) {
				struct lineage *n;

				cap = cap ? cap * 2 : 8;
				n = realloc(ret->v, cap * sizeof(*n));
				if (!n) {
					free(ret->v);
					return -ENOMEM;
				}
				ret->v = n;
			}
			ret->v[ret->n++] = (struct lineage){ .applied = r->applied, .orig = r->orig };
		} else {
			cpumask_or(&ret->v[i].orig, &ret->v[i].orig, &r->orig);
		}
	}
	return 0;
}

static const struct cpumask *lineage_find(const struct lineages *l, const struct cpumask *cur)
{
	for (size_t i = 0; i < l->n; i++)
		if (cpumask_equal(&l->v[i].applied, cur))
			return &l->v[i].orig;
	return NULL;
}

/* flags (field 9) and start time (field 22) of /proc/<tid>/stat. */
static int task_stat(const struct host *h, const char *tid, unsigned *flags, uint64_t *start)
{
	char path[256], *text = NULL, *p, *save = NULL;
	unsigned long long v[20] = { 0 };
	size_t len;
	int r, i = 0;

	snprintf(path, sizeof(path), "%s/%s/stat", h->o.proc, tid);
	r = files_read(path, 4096, &text, &len);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	/* comm may hold anything: fields start after the last ')' */
	p = strrchr(text, ')');
	if (!p) {
		free(text);
		return -EINVAL;
	}
	for (char *t = strtok_r(p + 1, " ", &save); t && i < 20; t = strtok_r(NULL, " ", &save), i++)
		v[i] = strtoull(t, NULL, 10);
	free(text);
	if (i < 20)
		return -EINVAL;
	*flags = (unsigned)v[6];	/* field 9: fields after ')' start at 3 */
	*start = v[19];			/* field 22 */
	return 0;
}

static int get_affinity(int tid, struct cpumask *ret)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(tid, sizeof(set), &set) < 0)
		return -errno;
	cpumask_zero(ret);
	for (unsigned c = 0; c < CPU_SETSIZE && c < CPUSETD_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpumask_set(ret, c);
	return 0;
}

int host_task_write(struct host *h, const char *tid, uint64_t start, const struct cpumask *m)
{
	unsigned flags;
	uint64_t now;
	cpu_set_t set;
	int c, r = task_stat(h, tid, &flags, &now);

	if (r < 0)
		return r;
	if (now != start)
		return -ESRCH;	/* the tid was reused since the plan */
	CPU_ZERO(&set);
	cpumask_for_each(c, m)
		if (c < CPU_SETSIZE)
			CPU_SET(c, &set);
	return sched_setaffinity(atoi(tid), sizeof(set), &set) < 0 ? -errno : 0;
}

static int plan_task(struct host *h, const char *tid, const struct lineages *lin,
		     const struct cpumask *online, const struct cpumask *host, bool active)
{
	const struct cpumask *fallback = NULL;
	const struct host_rec *rec;
	struct cpumask cur;
	unsigned flags;
	uint64_t start;
	int r;

	if (task_stat(h, tid, &flags, &start) < 0)
		return 0;	/* gone */
	if (flags & PF_NO_SETAFFINITY) {
		h->st.kthreads_pinned++;
		return 0;
	}
	if (get_affinity(atoi(tid), &cur) < 0)
		return 0;
	cpumask_and(&cur, &cur, online);
	rec = host_rec_get(h, HOST_TASK, tid);
	if (!rec || rec->start != start)
		fallback = lineage_find(lin, &cur);
	r = host_plan_thing(h, HOST_TASK, tid, start, 0, &cur, host, active, fallback, NULL);
	if (r == 1) {
		h->st.tasks_left++;
		host_reason(h, "task %s%s: its affinity is all exclusive; left as it is", tid,
			    flags & PF_KTHREAD ? " (kernel thread)" : "");
	}
	return r < 0 ? r : 0;
}

int host_tasks_plan(struct host *h, const struct cpumask *online, const struct cpumask *host,
		    bool active)
{
	const struct cgfs_mounts *m = cgfs_mounts(h->o.cg);
	char path[300], *text = NULL, *save = NULL;
	struct lineages lin;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/%s", m->cpuset_mnt,
		 m->cpuset_on_v2 ? "cgroup.threads" : "tasks");
	r = files_read(path, TASKS_MAX_BYTES, &text, &len);
	if (r < 0)
		return r;
	r = lineage_build(h, &lin);
	for (char *t = strtok_r(text, "\n", &save); r == 0 && t; t = strtok_r(NULL, "\n", &save))
		if (strspn(t, "0123456789") == strlen(t) && strlen(t) <= 10)
			r = plan_task(h, t, &lin, online, host, active);
	free(lin.v);
	free(text);
	return r;
}
