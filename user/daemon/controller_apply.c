// SPDX-License-Identifier: Apache-2.0
/*
 * Admit, release and converge.
 *
 * Ordering: when a pod takes CPUs, shared containers are shrunk first and
 * the exclusive container is written after, so the window in which both
 * run on a CPU is as short as the writes themselves; when a pod leaves,
 * its CPUs go back to the shared pool. The policy says whether the pools
 * moved (policy_decision.pools_changed, policy_release), so they are
 * computed once per event.
 *
 * On cgroup v2 (unless v2_writes = per-container) cpuset.cpus is not
 * written container by container: controller_plan.c writes each set at the
 * highest level where a whole subtree shares it and the containers inherit
 * (cgroupfs/cgfs_plan.h); only mems stay per container. v1 needs every
 * level written, child within parent, so it keeps the per-container path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"

/* Brings one container to its decision. Shared: the current pool, mems
 * untouched; on a pool part, the pool on its nodes and mems those nodes;
 * an empty pool is never written (tasks could not run).
 * Planned (v2): cpuset.cpus is the plan's (apply_one), only mems here. */
void controller_apply(struct controller *c, struct container *ct)
{
	if (!container_live(ct))
		return;		/* holds nothing: no task to place */
	if (controller_planned(c)) {
		if (policy_pool_for(c->policy, &ct->d, &ct->d.cpus) && !pool_part(ct))
			return;
		controller_write_set(c, ct, CGFS_MEMS, &ct->d.mems, &ct->mems_applied, &ct->mems_known);
		return;
	}
	if (policy_pool_for(c->policy, &ct->d, &ct->d.cpus)) {
		if (cpumask_empty(&ct->d.cpus))
			return;
		controller_write_set(c, ct, CGFS_CPUS, &ct->d.cpus, &ct->cpus_applied, &ct->cpus_known);
		if (pool_part(ct))
			controller_write_set(c, ct, CGFS_MEMS, &ct->d.mems, &ct->mems_applied,
					     &ct->mems_known);
		return;
	}
	/* Every CPU of a fixed set offline: nothing of its own to run on;
	 * its cgroup keeps what the kernel left (logged by the hotplug). */
	if (cpumask_empty(&ct->d.cpus))
		return;
	/* cpus before mems: if the mems write fails the container still
	 * runs on its own CPUs, only its memory is not yet node-local. */
	controller_write_set(c, ct, CGFS_CPUS, &ct->d.cpus, &ct->cpus_applied, &ct->cpus_known);
	controller_write_set(c, ct, CGFS_MEMS, &ct->d.mems, &ct->mems_applied, &ct->mems_known);
}

bool controller_off_decision(struct controller *c, struct container *ct, enum cgfs_cpuset_file f)
{
	bool pool, known = f == CGFS_CPUS ? ct->cpus_known : ct->mems_known;
	const struct cpumask *have = f == CGFS_CPUS ? &ct->cpus_applied : &ct->mems_applied;
	const struct cpumask *want;

	if (!container_live(ct))
		return false;
	/* The same choices as controller_apply above, without the writes. */
	if (f == CGFS_CPUS && controller_planned(c))
		return controller_plan_off(c, ct);
	pool = policy_pool_for(c->policy, &ct->d, &ct->d.cpus) && !pool_part(ct);
	if (f == CGFS_MEMS) {
		if (pool || (!controller_planned(c) && cpumask_empty(&ct->d.cpus)))
			return false;	/* mems left as they are */
		want = &ct->d.mems;
	} else {
		if (cpumask_empty(&ct->d.cpus))
			return false;	/* an empty set is never written */
		want = &ct->d.cpus;
	}
	return !known || !cpumask_equal(have, want);
}

/* One container to its decision; planned, the whole tree (a new
 * container can change what its pod or slice must hold). 0 or -ENOMEM. */
int controller_apply_one(struct controller *c, struct container *ct)
{
	int r = controller_plan_apply(c);

	controller_apply(c, ct);
	return r;
}

/* fn on every container that lives on a pool (shared or BE). */
static void for_each_shared(struct controller *c,
			    void (*fn)(struct controller *c, struct container *ct))
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v))
		if (pooled(v))
			fn(c, v);
}

static void sync_one(struct controller *c, struct container *ct)
{
	controller_sync_map(c, ct);	/* a failure is handled there */
}

/* The pooled containers' placement entries, batched: one map update for
 * all of them (controller_set_maps) where one each cost a system call per
 * container. widen: only those whose set grows, to old ∪ their pool,
 * before the writes (controller_widen_map's rule); else every pooled one
 * with a cgroup id to its decision, after them (controller_sync_map's). */
static void pooled_maps(struct controller *c, bool widen)
{
	size_t cap = strmap_count(c->by_path), n = 0, it = 0;
	struct container **cts;
	struct cpumask *ms, pool;
	const char *k;
	void *v;

	if (!c->bpf || !cap || (widen && c->cfg->dry_run))
		return;
	cts = malloc(cap * sizeof(*cts));
	ms = malloc(cap * sizeof(*ms));
	while (cts && ms && n < cap && strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!pooled(ct) || !ct->cgroup_id)
			continue;
		if (!widen) {
			cts[n] = ct;
			ms[n++] = ct->d.cpus;
			continue;
		}
		/* the set controller_apply will write (an empty pool never is) */
		if (!container_live(ct) || !policy_pool_for(c->policy, &ct->d, &pool) ||
		    cpumask_empty(&pool) || cpumask_subset(&pool, &ct->map_cpus))
			continue;
		cts[n] = ct;
		cpumask_or(&ms[n++], &ct->map_cpus, &pool);
	}
	if (cts && ms)
		controller_set_maps(c, cts, ms, n);
	else if (!widen)
		for_each_shared(c, sync_one);	/* out of memory: one by one */
	/* (widening out of memory: the writes widen entry by entry) */
	free(cts);
	free(ms);
}

/* Every pooled container to its current pool: one plan on v2, every
 * container otherwise. Returns 0 or -ENOMEM. */
int controller_resize_pools(struct controller *c)
{
	int r = 0;

	c->n.resizes++;
	c->pools_start_ns = clock_ns(CLOCK_MONOTONIC);
	if (controller_planned(c)) {
		r = controller_plan_apply(c);
	} else {
		pooled_maps(c, true);
		for_each_shared(c, controller_apply);
	}
	c->pools_end_ns = clock_ns(CLOCK_MONOTONIC);
	/* The host leaves new exclusive CPUs with the shared containers,
	 * before their owner is written; freed ones it gets back. */
	controller_isolate_sync(c, false);
	return r;
}

/* The placement map's view of shared containers after a resize; called
 * once converged, so it is not on the convergence clock, but the next
 * event waits for it: one batched update. */
void controller_sync_pooled_maps(struct controller *c)
{
	pooled_maps(c, false);
}

/* ns from a to b, 0 when b is not after a (a mark left from another
 * event). */
static uint64_t span(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/* One convergence sample and its phases (snapshot.h enum conv_phase):
 * the marks handle_ns and pools_*_ns were set by this event's handling,
 * or lie before event_ns and count as 0. */
static void record_convergence(struct controller *c, uint64_t event_ns)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), i = c->conv_count % STATUS_RECENT;
	uint64_t handled = c->handle_ns >= event_ns ? c->handle_ns : event_ns;
	uint64_t p[CONV_PHASE__COUNT];

	if (!event_ns || now < event_ns)
		return;
	if (c->pools_start_ns >= handled && c->pools_end_ns <= now) {
		p[CONV_PHASE_PLAN] = span(handled, c->pools_start_ns);
		p[CONV_PHASE_WRITES] = span(c->pools_start_ns, c->pools_end_ns);
		p[CONV_PHASE_FINISH] = span(c->pools_end_ns, now);
	} else {
		p[CONV_PHASE_PLAN] = span(handled, now);
		p[CONV_PHASE_WRITES] = p[CONV_PHASE_FINISH] = 0;
	}
	p[CONV_PHASE_WAKEUP] = span(event_ns, handled);
	for (int k = 0; k < CONV_PHASE__COUNT; k++) {
		c->conv_phase_ns[k][i] = p[k];
		latency_add(&c->conv_phase_hist[k], p[k]);
	}
	c->conv_ns[i] = now - event_ns;
	c->conv_count++;
	latency_add(&c->conv_hist, now - event_ns);
}

/* Admits a container seen by a mkdir event and converges. */
int controller_place(struct controller *c, struct container *ct, uint64_t event_ns)
{
	struct policy_request req;
	bool released;
	int r;

	ct->state = CT_LIVE;
	released = policy_release(c->policy, ct->info.container_id);	/* admitted again */
	controller_request_of(c, ct, &req);
	r = policy_admit(c->policy, &req, &ct->d);
	if (r == -ENOMEM)
		return r;
	ct->exec_pending = true;
	if (released || ct->d.pools_changed) {
		r = controller_resize_pools(c);		/* shared leave the new CPUs first */
		controller_apply(c, ct);
		record_convergence(c, event_ns);
		controller_sync_pooled_maps(c);
	} else {
		r = controller_apply_one(c, ct);
	}
	if (r == -ENOMEM)
		return r;
	if (!ct->d.reject)
		container_log_decision(ct);	/* a rejection is not a placement */
	controller_sync_map(c, ct);
	if (ct->d.err)
		controller_handle_error(c, ct);
	controller_quota_sync(c, ct);	/* its CFS quota follows the decision */
	c->dirty = true;
	return 0;
}

/* Gives back what ct holds and converges the pools. 0 or -ENOMEM. */
int controller_release(struct controller *c, struct container *ct, uint64_t event_ns)
{
	int r = 0;

	if (policy_release(c->policy, ct->info.container_id)) {
		r = controller_resize_pools(c);
		record_convergence(c, event_ns);
		controller_sync_pooled_maps(c);
	}
	controller_quota_sync(c, ct);	/* its quota (and its pod's) come back */
	c->dirty = true;
	return r == -ENOMEM ? r : 0;
}
