// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetd --release under the kubepods root (release_internal.h): the
 * tree read once, parents first; which containers are exclusive, as the
 * daemon decides at a start; their cpusets left, every other level's
 * widened; the CFS quotas cpusetd lifted put back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/base/log.h"
#include "release_internal.h"

#define QUOTA_MAX_CHILDREN	64

/* --- the tree and who is exclusive --------------------------------------------- */

static int collect(const char *path, void *arg)
{
	struct release *rl = arg;

	if (rl->n == rl->cap) {
		size_t cap = rl->cap ? rl->cap * 2 : 256;
		char **p = realloc(rl->paths, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rl->paths = p;
		rl->cap = cap;
	}
	rl->paths[rl->n] = strdup(path);
	if (!rl->paths[rl->n])
		return -ENOMEM;
	rl->n++;
	return 0;
}

/*
 * The containers that hold CPUs of their own, as the daemon would decide
 * at a start (rl->exclusive, the daemon's controller_exclusive_cgroups),
 * into rl->kept; its log lines silenced (its "would set" and admission
 * lines are not ours). 0 or -errno (logged).
 */
static int classify(struct release *rl)
{
	int level = log_max_level, r;

	log_max_level = LOG_CRIT;
	r = rl->exclusive(rl->cfg, rl->cg, rl->topo, rl->root, rl->kept);
	log_max_level = level;
	if (r < 0)
		log_error("release: cannot rebuild the daemon's decisions under %s (%s): no "
			  "container cpuset is changed", rl->root, strerror(-r));
	return r;
}

/* --- cpusets -------------------------------------------------------------------- */

static void count_widened(struct release *rl, enum cgfs_level level)
{
	if (level == CGFS_LEVEL_QOS)
		rl->slices++;
	else if (level == CGFS_LEVEL_POD)
		rl->pods++;
	else
		rl->containers++;
}

static void log_change(const struct release *rl, const char *path, const struct cpumask *was,
		       const struct cpumask *now, const char *why)
{
	char a[CPULIST_MAX], b[CPULIST_MAX];

	cpulist_format(was, a, sizeof(a));
	cpulist_format(now, b, sizeof(b));
	log_info("release%s: %s cpus %s -> %s%s", release_dry(rl) ? " (dry run, not written)" : "", path,
		 a[0] ? a : "\"\"", b[0] ? b : "\"\" (inherit)", why);
}

/* One cpuset.cpus write: v2 exactly m (cgfs_write_cpus_planned), v1
 * without touching an ancestor. A dry run writes nothing. 0 or -errno. */
static int write_cpus(struct release *rl, const char *path, const struct cpumask *m)
{
	int fd = -1, r;

	if (release_dry(rl))
		return 0;
	if (!rl->v2)
		return cgfs_write_cpuset(rl->cg, path, path, CGFS_CPUS, m);
	r = cgfs_write_cpus_planned(rl->cg, path, m, &fd);
	if (fd >= 0)
		close(fd);
	return r;
}

static void write_failed(struct release *rl, const char *path, int r)
{
	rl->cg_failed++;
	rl->failed = true;
	log_error("release: %s: writing cpuset.cpus failed: %s", path, strerror(-r));
}

/* The level of path; NONE is not a kubelet name (not ours: left alone). */
static enum cgfs_level level_of(const struct release *rl, const char *path)
{
	struct cgfs_path_info info;

	if (cgfs_parse_path(rl->root, path, &info) < 0)
		return CGFS_LEVEL_NONE;
	return info.level;
}

/* v1: each cgroup below the root, parents first, to its parent's set
 * (always a superset there: the kernel keeps children within parents). */
static void widen_v1(struct release *rl)
{
	for (size_t i = 1; i < rl->n; i++) {
		const char *path = rl->paths[i];
		enum cgfs_level level = level_of(rl, path);
		char parent[CGFS_PATH_MAX];
		struct cpumask own, want;
		int r;

		if (level == CGFS_LEVEL_NONE || level == CGFS_LEVEL_ROOT)
			continue;
		if (level == CGFS_LEVEL_CONTAINER && strmap_get(rl->kept, path)) {
			rl->kept_n++;
			continue;
		}
		snprintf(parent, sizeof(parent), "%s", path);
		*strrchr(parent, '/') = '\0';
		r = cgfs_read_cpuset(rl->cg, parent, CGFS_CPUS, &want);
		if (r == 0)
			r = cgfs_read_cpuset(rl->cg, path, CGFS_CPUS, &own);
		if (r == 0 && cpumask_equal(&own, &want))
			continue;
		if (r == 0)
			r = write_cpus(rl, path, &want);
		if (r == -ENOENT)
			continue;	/* gone meanwhile */
		if (r < 0) {
			write_failed(rl, path, r);
			continue;
		}
		log_change(rl, path, &own, &want, "");
		count_widened(rl, level);
	}
}

/* v2, step 1: an exclusive container that inherits its set from its pod
 * gets it as its own, so that widening the pod leaves it where it runs
 * (its effective set, and so its tasks, do not change). */
static void pin_kept_v2(struct release *rl)
{
	for (size_t i = 1; i < rl->n; i++) {
		const char *path = rl->paths[i];
		struct cpumask own, eff;
		int r;

		if (!strmap_get(rl->kept, path))
			continue;
		rl->kept_n++;
		r = cgfs_read_cpuset(rl->cg, path, CGFS_CPUS, &own);
		if (r == 0)
			r = cgfs_read_cpuset(rl->cg, path, CGFS_EFFECTIVE_CPUS, &eff);
		if (r == 0 && cpumask_equal(&own, &eff))
			continue;
		if (r == 0)
			r = write_cpus(rl, path, &eff);
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			write_failed(rl, path, r);
			continue;
		}
		log_change(rl, path, &own, &eff, " (an exclusive container keeps its CPUs)");
		rl->pinned++;
	}
}

/* v2, step 2: everything else inherits, bottom-up (no container moves
 * twice): "" where the kernel takes it, else every online CPU, which is
 * the same (own ⊇ the parent's effective set). */
static void widen_v2(struct release *rl)
{
	struct cpumask none;

	cpumask_zero(&none);
	pin_kept_v2(rl);
	for (size_t i = rl->n; i-- > 1;) {
		const char *path = rl->paths[i];
		enum cgfs_level level = level_of(rl, path);
		struct cpumask own;
		const struct cpumask *want = &none;
		int r;

		if (level == CGFS_LEVEL_NONE || level == CGFS_LEVEL_ROOT || strmap_get(rl->kept, path))
			continue;
		r = cgfs_read_cpuset(rl->cg, path, CGFS_CPUS, &own);
		if (r == 0 && (cpumask_empty(&own) || cpumask_subset(&rl->topo->online, &own)))
			continue;	/* inherits already */
		if (r == 0)
			r = write_cpus(rl, path, want);
		if (r == -ENOSPC) {	/* validate_change: a cgroup with tasks keeps a set */
			want = &rl->topo->online;
			r = write_cpus(rl, path, want);
		}
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			write_failed(rl, path, r);
			continue;
		}
		log_change(rl, path, &own, want, "");
		count_widened(rl, level);
	}
}

/* --- CFS quotas ------------------------------------------------------------------- */

/* The positive limits of path i's direct children (the walk is depth-first:
 * its subtree follows it). Returns how many, at most QUOTA_MAX_CHILDREN. */
static size_t child_limits(struct release *rl, size_t i, int64_t *q, uint64_t *p)
{
	size_t len = strlen(rl->paths[i]), k = 0;

	for (size_t j = i + 1; j < rl->n && k < QUOTA_MAX_CHILDREN; j++) {
		const char *c = rl->paths[j];

		if (strncmp(c, rl->paths[i], len) != 0 || c[len] != '/')
			break;		/* past the subtree */
		if (strchr(c + len + 1, '/'))
			continue;	/* a grandchild */
		if (cgfs_read_cpu_quota(rl->cg, c, &q[k], &p[k]) == 0 && q[k] > 0)
			k++;
	}
	return k;
}

static void quota_failed(struct release *rl, const char *path, const char *what, int r)
{
	rl->quota_failed++;
	rl->failed = true;
	log_error("release: %s: %s the CFS quota failed: %s", path, what, strerror(-r));
}

/* One cgroup's saved limit back (controller_quota.c put it there). */
static void quota_one(struct release *rl, size_t i)
{
	const char *path = rl->paths[i];
	int64_t sq, q, cq[QUOTA_MAX_CHILDREN], want;
	uint64_t sp, p, cp[QUOTA_MAX_CHILDREN];
	int r = cgfs_quota_saved_read(rl->cg, path, &sq, &sp);

	if (r == -ENODATA || r == -ENOENT || r == -EOPNOTSUPP)
		return;		/* not lifted by us, gone, or no xattrs (nothing saved) */
	if (r == -EINVAL) {
		log_warn("release: %s: %s is not a limit cpusetd saved; %s", path,
			 CGFS_QUOTA_XATTR, release_dry(rl) ? "left (dry run)" : "removed");
		if (!release_dry(rl))
			cgfs_quota_saved_clear(rl->cg, path);
		return;
	}
	if (r == 0)
		r = cgfs_read_cpu_quota(rl->cg, path, &q, &p);
	if (r < 0) {
		if (r != -ENOENT)
			quota_failed(rl, path, "reading", r);
		return;
	}
	if (q > 0) {	/* its runtime or kubelet wrote a limit since: that one stands */
		if (!release_dry(rl))
			cgfs_quota_saved_clear(rl->cg, path);
		rl->marks++;
		return;
	}
	/* Never below its children's (v1 refuses a parent under a child). */
	want = cgfs_quota_pod_restore_us(sq, sp, p, cq, cp, child_limits(rl, i, cq, cp));
	r = want > 0 ? 0 : (int)want;
	if (r == 0 && !release_dry(rl))
		r = cgfs_write_cpu_quota(rl->cg, path, want, p);
	if (r == 0 && !release_dry(rl))
		r = cgfs_quota_saved_clear(rl->cg, path);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		quota_failed(rl, path, "restoring", r);
		return;
	}
	rl->quotas++;
	log_info("release%s: %s: CFS quota %" PRId64 "/%" PRIu64 " us restored",
		 release_dry(rl) ? " (dry run, not written)" : "", path, want, p);
}

/* Containers before their pods (bottom-up): on v1 a child's limit may not
 * exceed its parent's, and the parent has none until it gets its own. */
static void restore_quotas(struct release *rl)
{
	if (!cgfs_mounts(rl->cg)->cpu_mnt[0])
		return;
	for (size_t i = rl->n; i-- > 0;)
		quota_one(rl, i);
}

/* cpusets and quotas under the kubepods root. */
void release_tree(struct release *rl)
{
	int r;

	if (!rl->root[0]) {
		log_info("release: no kubepods root: no container cgroup to give back");
		return;
	}
	rl->kept = strmap_new();
	r = rl->kept ? cgfs_walk(rl->cg, rl->root, collect, rl) : -ENOMEM;
	if (r < 0) {
		log_error("release: cannot read the tree under %s: %s", rl->root, strerror(-r));
		rl->failed = true;
		return;
	}
	if (classify(rl) < 0)
		rl->failed = true;
	else if (rl->v2)
		widen_v2(rl);
	else
		widen_v1(rl);
	restore_quotas(rl);
}
