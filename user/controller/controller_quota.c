// SPDX-License-Identifier: Apache-2.0
/*
 * The CFS quota of exclusive containers (exclusive_cpu_quota = unset).
 *
 * A container with CPUs of its own and a limit of exactly those CPUs can
 * only lose by its quota: CFS throttles it for whole periods when its
 * threads burst (kubernetes #70585, #67577), although nobody else may run
 * there. kubelet's answer (PR #117030, feature gate
 * DisableCPUQuotaWithExclusiveCPUs): "the container-level cpu limit is
 * removed when the container has a dedicated CPU; the pod-level cpu limit
 * is removed when any container in the pod has a dedicated CPU". We do
 * the same for every container that holds whole CPUs of its own (integer,
 * LSE/LSR, scheduled, annotated with a whole-CPU limit covering its set).
 *
 * Order (kernel/sched/core.c tg_cfs_schedulable_down): on v1 a child's
 * quota may not exceed its parent's (EINVAL), so limits are lifted from
 * the pod down and put back from the container up; v2 takes the smaller
 * and refuses nothing, the same order serves.
 *
 * What we lifted is remembered where it survives us: the cgroup's own
 * trusted.cpusetd.cfs_quota attribute (cgfs.h CGFS_QUOTA_XATTR), written
 * before the "no limit" and removed after the limit is back, so a crash
 * between two steps leaves either the limit in force or the mark beside
 * our -1. Why there and not the pinned placement map or the bundle: the
 * attribute lives exactly as long as the cgroup (nothing stale to clean
 * up), it covers pod cgroups (which have no map entry), it needs no BPF,
 * it follows in-place resizes (a bundle's config.json keeps the limit
 * the container was created with), and an admin sees it with getfattr.
 *
 * Telling our -1 from the runtime's writes: the policy's input is
 * ct->meta's limit, which we never change to -1; the resize poll ignores
 * "no limit" readings (controller_resize.c). A positive reading while we
 * hold the limit lifted is the runtime's new limit (an in-place resize):
 * controller_check_resizes has re-decided with it; if the container still
 * holds whole CPUs the new limit is saved and lifted again, otherwise it
 * stays. A resize the policy refused leaves the runtime's new quota in
 * force (the poll retries it and needs to read it).
 *
 * SIGTERM leaves lifted quotas lifted, as it leaves placements: a
 * restarted daemon finds its marks (controller_quota_adopt). They come
 * back when a container leaves exclusivity, when its tasks exit or its
 * cgroup goes (the pod's), and for all of them when the daemon starts
 * with exclusive_cpu_quota = keep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"

enum quota_want {
	QUOTA_KEEP = 0,		/* its own limit is in force */
	QUOTA_UNSET,		/* it holds whole CPUs: no limit, nor for its pod */
	QUOTA_PENDING,		/* a new limit the policy has not taken: leave it */
};

bool quota_holds_whole_cpus(enum cpusetd_kind kind, unsigned ncpus, int64_t quota_us,
			    uint64_t period_us)
{
	if (kind != CPUSETD_KIND_INTEGER && kind != CPUSETD_KIND_ANNOTATED)
		return false;
	if (quota_us <= 0 || !period_us || !ncpus || (uint64_t)quota_us % period_us)
		return false;
	return (uint64_t)quota_us / period_us >= ncpus;
}

/* ---- where and whether ---------------------------------------------------- */

/* The pod cgroup: ct's parent. false when ct has none (never under a root). */
static bool pod_of(const struct container *ct, char *buf, size_t len)
{
	const char *slash = strrchr(ct->path, '/');

	if (!slash || slash == ct->path || (size_t)(slash - ct->path) >= len)
		return false;
	memcpy(buf, ct->path, (size_t)(slash - ct->path));
	buf[slash - ct->path] = '\0';
	return true;
}

static bool same_pod(const struct container *a, const char *pod)
{
	size_t n = strlen(pod);

	return strncmp(a->path, pod, n) == 0 && a->path[n] == '/' && !strchr(a->path + n + 1, '/');
}

/* Could hold whole CPUs: placed with CPUs of its own, not a sandbox. */
static bool candidate(const struct container *ct)
{
	return container_live(ct) && !ct->killed && !ct->d.reject && !ct->meta.sandbox &&
	       (ct->d.kind == CPUSETD_KIND_INTEGER || ct->d.kind == CPUSETD_KIND_ANNOTATED);
}

/* What controller_check_resizes re-decides: its limit is the policy's. */
static bool resize_managed(const struct container *ct)
{
	return ct->info.qos == POD_QOS_GUARANTEED && ct->d.kind == CPUSETD_KIND_INTEGER &&
	       !ct->d.err;
}

/*
 * The runtime's limit now: the cgroup's positive reading q/p, else the
 * one we saved while we hold it lifted, else the metadata's (the bundle
 * says it before the runtime writes it). false: none.
 */
static bool runtime_limit(const struct container *ct, int64_t q, uint64_t p, int64_t *lq,
			  uint64_t *lp)
{
	if (q > 0) {
		*lq = q;
		*lp = p;
	} else if (ct->quota_unset) {
		*lq = ct->quota_saved_us;
		*lp = ct->quota_saved_period_us;
	} else if (ct->meta.has_cpu_limit && ct->meta.quota_us > 0) {
		*lq = ct->meta.quota_us;
		*lp = ct->meta.period_us;
	} else {
		return false;
	}
	return true;
}

/* q/p: the cgroup's reading (-1/0 when not read). */
static enum quota_want decide(const struct controller *c, const struct container *ct, int64_t q,
			      uint64_t p)
{
	int64_t lq;
	uint64_t lp;

	if (c->cfg->keep_exclusive_cpu_quota || !candidate(ct) || !runtime_limit(ct, q, p, &lq, &lp))
		return QUOTA_KEEP;
	if (q > 0 && resize_managed(ct) && ct->meta.has_cpu_limit &&
	    (q != ct->meta.quota_us || p != ct->meta.period_us))
		return QUOTA_PENDING;
	return quota_holds_whole_cpus(ct->d.kind, cpumask_weight(&ct->d.cpus), lq, lp) ?
	       QUOTA_UNSET : QUOTA_KEEP;
}

/* ---- writes ------------------------------------------------------------------ */

static void failed(struct controller *c, struct container *ct, const char *what,
		   const char *path, int r)
{
	c->n.cpu_quota_errors++;
	if (ct->quota_err_logged)
		return;
	ct->quota_err_logged = true;
	ct_log(LOG_WARNING, ct, "cpu_quota_failed", "%s (%.12s): %s the CFS quota of %s failed: %s",
	       ct->name, ct->info.container_id, what, path, strerror(-r));
}

/* Lifts path's positive limit q/p: the mark first, then "no limit". */
static int lift(struct controller *c, const char *path, int64_t q, uint64_t p)
{
	int r = cgfs_quota_saved_write(c->cg, path, q, p);

	if (r == 0)
		r = cgfs_write_cpu_quota(c->cg, path, -1, p);
	if (r == 0)
		c->n.cpu_quota_unset++;
	return r;
}

/* Puts q/p back on path: the limit first, then the mark goes. */
static int put_back(struct controller *c, const char *path, int64_t q, uint64_t p)
{
	int r = cgfs_write_cpu_quota(c->cg, path, q, p);

	if (r == 0) {
		cgfs_quota_saved_clear(c->cg, path);
		c->n.cpu_quota_restored++;
	}
	return r;
}

/* The pod runs without a limit while one of its containers does. */
static void pod_lift(struct controller *c, struct container *ct)
{
	char pod[CGFS_PATH_MAX];
	int64_t q;
	uint64_t p;
	int r;

	if (!pod_of(ct, pod, sizeof(pod)))
		return;
	r = cgfs_read_cpu_quota(c->cg, pod, &q, &p);
	if (r == -ENOENT || (r == 0 && q <= 0))
		return;		/* gone, or no limit (ours or kubelet's) */
	if (r == 0)
		r = lift(c, pod, q, p);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		failed(c, ct, "lifting", pod, r);
		return;
	}
	log_info("%s: pod cgroup %s: CFS quota %" PRId64 "/%" PRIu64 " us lifted: the container "
		 "holds exclusive CPUs (exclusive_cpu_quota = unset)", ct->name, pod, q, p);
}

/* Whether another container of pod still needs the pod without a limit. */
static bool pod_held(const struct controller *c, const char *pod)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *o = v;

		if (o->quota_hold && same_pod(o, pod))
			return true;
	}
	return false;
}

/* The containers' limits in pod, read live (ours saved where lifted), for
 * cgfs_quota_pod_restore_us. Returns how many (sandboxes do not count); a
 * container without one gets 0. At most max. */
static size_t pod_limits(struct controller *c, const char *pod, int64_t *q, uint64_t *p,
			 size_t max)
{
	size_t it = 0, n = 0;
	const char *k;
	void *v;

	while (n < max && strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *o = v;

		if (o->meta.sandbox || !same_pod(o, pod))
			continue;
		if (cgfs_read_cpu_quota(c->cg, o->path, &q[n], &p[n]) < 0)
			q[n] = -1;
		if (q[n] <= 0 && o->quota_unset) {
			q[n] = o->quota_saved_us;
			p[n] = o->quota_saved_period_us;
		}
		n++;
	}
	return n;
}

#define POD_MAX_CONTAINERS	64

/* ct's pod gets its saved limit back unless a container still holds it
 * lifted; ct may have left the table already. */
static void pod_settle(struct controller *c, struct container *ct)
{
	char pod[CGFS_PATH_MAX];
	int64_t sq, q, lq[POD_MAX_CONTAINERS], want;
	uint64_t sp, p, lp[POD_MAX_CONTAINERS];
	size_t n;
	int r;

	if (!pod_of(ct, pod, sizeof(pod)) || pod_held(c, pod))
		return;
	r = cgfs_quota_saved_read(c->cg, pod, &sq, &sp);
	if (r == -ENODATA || r == -ENOENT)
		return;		/* not ours, or gone with its last container */
	if (r == 0)
		r = cgfs_read_cpu_quota(c->cg, pod, &q, &p);
	if (r == 0 && q > 0) {	/* kubelet wrote its own since: that one stands */
		cgfs_quota_saved_clear(c->cg, pod);
		return;
	}
	if (r < 0) {
		failed(c, ct, "reading", pod, r);
		return;
	}
	n = pod_limits(c, pod, lq, lp, POD_MAX_CONTAINERS);
	want = cgfs_quota_pod_restore_us(sq, sp, p, lq, lp, n);
	r = want > 0 ? put_back(c, pod, want, p) : (int)want;
	if (r < 0 && r != -ENOENT) {
		failed(c, ct, "restoring", pod, r);
		return;
	}
	if (r == 0)
		log_info("%s: pod cgroup %s: CFS quota %" PRId64 "/%" PRIu64 " us restored: no "
			 "container of the pod holds exclusive CPUs any more", ct->name, pod, want, p);
}

/* Why ct's own limit comes back, for the log. */
static const char *restore_reason(const struct controller *c, const struct container *ct)
{
	if (c->cfg->keep_exclusive_cpu_quota)
		return "exclusive_cpu_quota = keep";
	if (!container_live(ct))
		return "every task exited";
	if (ct->killed || ct->d.reject)
		return "rejected";
	if (ct->d.kind != CPUSETD_KIND_INTEGER && ct->d.kind != CPUSETD_KIND_ANNOTATED)
		return "it left exclusivity";
	return "its limit does not cover its CPUs in whole CPUs";
}

static void ct_lift(struct controller *c, struct container *ct, int64_t q, uint64_t p)
{
	int r = lift(c, ct->path, q, p);

	if (r == -ENOENT)
		return;
	if (r < 0) {
		failed(c, ct, "lifting", ct->path, r);
		return;
	}
	ct->quota_unset = true;
	ct->quota_saved_us = q;
	ct->quota_saved_period_us = p;
	ct->quota_err_logged = false;
	log_info("%s (%.12s): CFS quota %" PRId64 "/%" PRIu64 " us lifted: %s with %u whole CPUs "
		 "of its own (exclusive_cpu_quota = unset)", ct->name, ct->info.container_id, q, p,
		 policy_kind_name(ct->d.kind), cpumask_weight(&ct->d.cpus));
}

static void ct_put_back(struct controller *c, struct container *ct)
{
	int r = put_back(c, ct->path, ct->quota_saved_us, ct->quota_saved_period_us);

	if (r < 0 && r != -ENOENT) {
		failed(c, ct, "restoring", ct->path, r);	/* still lifted: retried by the poll */
		return;
	}
	ct->quota_unset = false;
	if (r == 0)
		log_info("%s (%.12s): CFS quota %" PRId64 "/%" PRIu64 " us restored: %s", ct->name,
			 ct->info.container_id, ct->quota_saved_us, ct->quota_saved_period_us,
			 restore_reason(c, ct));
}

/* ---- entry points ------------------------------------------------------------ */

static bool enabled(const struct controller *c)
{
	return !c->cfg->dry_run && cgfs_mounts(c->cg)->cpu_mnt[0];
}

void controller_quota_sync(struct controller *c, struct container *ct)
{
	bool was_hold = ct->quota_hold;
	int64_t q = -1;
	uint64_t p = 0;
	int r;

	if (!enabled(c))
		return;
	if (strmap_get(c->by_path, ct->path) != ct) {
		/* Gone from the table (its rmdir): its cgroup and mark with it. */
		ct->quota_hold = ct->quota_unset = false;
		if (was_hold)
			pod_settle(c, ct);
		return;
	}
	if (!candidate(ct) && !ct->quota_unset && !was_hold)
		return;		/* the common case: no I/O */
	r = cgfs_read_cpu_quota(c->cg, ct->path, &q, &p);
	if (r == -ENOENT)
		return;		/* vanished: its rmdir follows */
	if (r < 0) {
		failed(c, ct, "reading", ct->path, r);
		return;
	}
	if (ct->quota_unset && q > 0) {
		/* The runtime wrote a limit over our "none": its new one. */
		log_info("%s (%.12s): its runtime set CFS quota %" PRId64 "/%" PRIu64 " us",
			 ct->name, ct->info.container_id, q, p);
		ct->quota_unset = false;
		cgfs_quota_saved_clear(c->cg, ct->path);
	}
	switch (decide(c, ct, q, p)) {
	case QUOTA_PENDING:
		return;
	case QUOTA_UNSET:
		ct->quota_hold = true;
		pod_lift(c, ct);		/* the parent first */
		if (q <= 0)
			return;
		/* The runtime's limit is the policy's again, so a refused
		 * resize was taken back: what check_resize would note had it
		 * read this value before we lift it (a resync runs first). */
		if (ct->meta.has_cpu_limit && q == ct->meta.quota_us && p == ct->meta.period_us)
			ct->resize_refused_quota = 0;
		ct_lift(c, ct, q, p);
		return;
	case QUOTA_KEEP:
		ct->quota_hold = false;
		if (ct->quota_unset)
			ct_put_back(c, ct);	/* the child first */
		if (was_hold)
			pod_settle(c, ct);
		return;
	}
}

void controller_quota_poll(struct controller *c, struct container *ct, bool changed)
{
	if (changed || ct->quota_hold || ct->quota_unset ||
	    (!c->cfg->keep_exclusive_cpu_quota && candidate(ct)))
		controller_quota_sync(c, ct);
}

void controller_quota_adopt(struct controller *c, struct container *ct)
{
	int64_t sq, q;
	uint64_t sp, p;
	int r;

	/* Read also in dry_run: a dry run after a real one must see the
	 * limits the real one lifted (it only writes nothing). */
	if (!cgfs_mounts(c->cg)->cpu_mnt[0])
		return;
	r = cgfs_quota_saved_read(c->cg, ct->path, &sq, &sp);
	if (r == -EINVAL) {
		log_warn("%s (%.12s): %s on %s is not a limit cpusetd saved; removed", ct->name,
			 ct->info.container_id, CGFS_QUOTA_XATTR, ct->path);
		if (!c->cfg->dry_run)
			cgfs_quota_saved_clear(c->cg, ct->path);
	}
	if (r < 0 || cgfs_read_cpu_quota(c->cg, ct->path, &q, &p) < 0)
		return;
	if (q > 0) {	/* the runtime's limit is in force: the mark is stale */
		if (!c->cfg->dry_run)
			cgfs_quota_saved_clear(c->cg, ct->path);
		return;
	}
	ct->quota_unset = true;
	ct->quota_saved_us = sq;
	ct->quota_saved_period_us = sp;
	ct->meta.quota_us = sq;
	ct->meta.period_us = sp;
	ct->meta.has_cpu_limit = true;
	log_debug("%s (%.12s): CFS quota lifted by cpusetd, limit %" PRId64 "/%" PRIu64 " us",
		  ct->name, ct->info.container_id, sq, sp);
}

void controller_quota_resync(struct controller *c)
{
	struct strmap *pods;
	size_t it = 0;
	const char *k;
	void *v;

	if (!enabled(c))
		return;
	/* Who holds its pod lifted, before any pod is settled: no pod is put
	 * back and lifted again in one resync. */
	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		ct->quota_hold = decide(c, ct, -1, 0) == QUOTA_UNSET;
	}
	for (it = 0; strmap_next(c->by_path, &it, &k, &v);)
		controller_quota_sync(c, v);
	/* Pods whose mark no container needs (keep mode; a container that
	 * left while we were down): once each. */
	pods = strmap_new();
	for (it = 0; strmap_next(c->by_path, &it, &k, &v);) {
		struct container *ct = v;
		char pod[CGFS_PATH_MAX];

		if (ct->quota_hold || !pod_of(ct, pod, sizeof(pod)) ||
		    (pods && strmap_get(pods, pod)))
			continue;
		if (pods && strmap_put(pods, pod, ct) < 0) {
			strmap_free(pods);
			pods = NULL;	/* out of memory: settle each pod per container */
		}
		pod_settle(c, ct);
	}
	strmap_free(pods);
}
