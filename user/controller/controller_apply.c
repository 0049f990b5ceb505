// SPDX-License-Identifier: Apache-2.0
/*
 * Admit, release and converge.
 *
 * Which containers an event writes, as enforce targets; the order of the
 * writes is enforce_plan's (user/enforce/enforce.h: sets that give CPUs
 * up first, then the host's share, then those that take; placement
 * entries widened before and exact after), the writes enforce_exec's,
 * and each result goes back to its container's record here
 * (controller_write_result). The policy says whether the pools moved
 * (policy_decision.pools_changed, policy_release), so they are computed
 * once per event.
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

/*
 * ct as an enforce target (user/enforce/enforce.h): what its decision
 * writes, by the same choices for every caller. Shared: the current
 * pool, mems untouched; on a pool part, the pool on its nodes and mems
 * those nodes; an empty pool is never written (tasks could not run).
 * Fixed sets: cpus and mems; a set with every CPU offline is not written
 * (its cgroup keeps what the kernel left; logged by the hotplug).
 * Planned (v2): cpuset.cpus is the tree's (controller_plan.c), only mems
 * here. A container without a task holds nothing: no write.
 */
static void target_of(struct controller *c, struct container *ct, bool map_sync,
		      struct enforce_target *t)
{
	bool pool = container_live(ct) && policy_pool_for(c->policy, &ct->d, &ct->d.cpus);

	*t = (struct enforce_target){
		.name = ct->name, .path = ct->path, .cpus_fd = &ct->cpus_fd,
		.cpus_have = ct->cpus_known ? &ct->cpus_applied : NULL,
		.mems_have = ct->mems_known ? &ct->mems_applied : NULL,
		.map_want = map_sync ? &ct->d.cpus : NULL,
	};
	controller_entry_of(c, ct, t);
	if (!container_live(ct))
		return;
	if (!controller_planned(c)) {
		if (cpumask_empty(&ct->d.cpus))
			return;		/* no set: nothing of its own to run on */
		t->cpus = &ct->d.cpus;
	}
	if (!pool || pool_part(ct))
		t->mems = &ct->d.mems;
}

/* The event's targets, kept across events: a resize allocates nothing. */
static int add_target(struct controller *c, struct container *ct, bool map_sync)
{
	struct controller_targets *e = &c->enf;

	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		struct enforce_target *t = realloc(e->t, cap * sizeof(*t));
		struct container **cts = t ? realloc(e->ct, cap * sizeof(*cts)) : NULL;

		if (t)
			e->t = t;
		if (!cts)
			return -ENOMEM;
		e->ct = cts;
		e->cap = cap;
	}
	target_of(c, ct, map_sync, &e->t[e->n]);
	e->ct[e->n++] = ct;
	return 0;
}

void controller_targets_free(struct controller *c)
{
	enforce_plan_free(&c->enf.plan);
	free(c->enf.t);
	free(c->enf.ct);
	free(c->enf.res);
	c->enf = (struct controller_targets){ 0 };
}

static void host_share(void *ctx)
{
	controller_isolate_sync(ctx, false);
}

/* Carries out ops[from..to) of c->enf's plan, each result to its
 * container's record (controller_write_result). */
static void exec_range(struct controller *c, size_t from, size_t to)
{
	struct controller_targets *e = &c->enf;
	struct enforce_io io = { .cg = c->cg, .root = c->root, .bpf = c->bpf,
				 .dry_run = c->cfg->dry_run, .host = host_share, .ctx = c };

	enforce_exec(&io, e->t, &e->plan, from, to, e->res);
	for (size_t k = from; k < to; k++) {
		const struct enforce_op *op = &e->plan.ops[k];

		if (op->kind != ENFORCE_HOST)
			controller_write_result(c, e->ct[op->target], op, e->res[k]);
	}
}

static int plan_targets(struct controller *c, unsigned flags)
{
	struct controller_targets *e = &c->enf;
	int r = enforce_plan(e->t, e->n, flags, &e->plan);

	if (r < 0)
		return r;
	if (e->plan.n > e->res_cap) {
		int *res = realloc(e->res, e->plan.cap * sizeof(*res));

		if (!res)
			return -ENOMEM;
		e->res = res;
		e->res_cap = e->plan.cap;
	}
	return 0;
}

static void record_convergence(struct controller *c, uint64_t event_ns);

/* converge flags */
#define WITH_POOLS	0x1u	/* every pooled container to its pool, and the host */
#define WITH_MAPS	0x2u	/* the exact placement entries after the writes */

/*
 * One event's writes, on v1 (or v2 with per-container writes): ct (may
 * be NULL) and, WITH_POOLS, every pooled container, in the order
 * enforce_plan gives (sets that give CPUs up first, then the host's
 * share, then those that take; entries widened before and exact after).
 * event_ns: a convergence sample ends after the writes (0: none).
 * Returns 0 or -ENOMEM (nothing written then).
 */
static int converge(struct controller *c, struct container *ct, unsigned flags,
		    uint64_t event_ns)
{
	struct controller_targets *e = &c->enf;
	bool maps = flags & WITH_MAPS;
	size_t it = 0;
	const char *k;
	void *v;
	int r = 0;

	e->n = 0;
	if (flags & WITH_POOLS) {
		c->n.resizes++;
		while (!r && strmap_next(c->by_path, &it, &k, &v))
			if (pooled(v) && v != ct)
				r = add_target(c, v, maps);
	}
	if (!r && ct)
		r = add_target(c, ct, maps);
	if (!r)
		r = plan_targets(c, flags & WITH_POOLS ? ENFORCE_WITH_HOST : 0);
	if (r < 0) {
		log_error("cgroup writes: out of memory planning them; retried at the next event");
		return r;
	}
	c->pools_start_ns = clock_ns(CLOCK_MONOTONIC);
	exec_range(c, 0, e->plan.writes_end);
	c->pools_end_ns = clock_ns(CLOCK_MONOTONIC);
	if (event_ns)
		record_convergence(c, event_ns);
	exec_range(c, e->plan.writes_end, e->plan.n);
	return 0;
}

void controller_apply(struct controller *c, struct container *ct)
{
	if (container_live(ct))
		converge(c, ct, 0, 0);
}

bool controller_off_decision(struct controller *c, struct container *ct, enum cgfs_cpuset_file f)
{
	struct enforce_target t;

	if (!container_live(ct))
		return false;
	if (f == CGFS_CPUS && controller_planned(c))
		return controller_plan_off(c, ct);
	target_of(c, ct, false, &t);	/* the same choices as controller_apply */
	if (f == CGFS_MEMS)
		return t.mems && (!t.mems_have || !cpumask_equal(t.mems_have, t.mems));
	return t.cpus && (!t.cpus_have || !cpumask_equal(t.cpus_have, t.cpus));
}

/* One container to its decision; planned, the whole tree (a new
 * container can change what its pod or slice must hold). 0 or -ENOMEM. */
int controller_apply_one(struct controller *c, struct container *ct)
{
	int r = controller_plan_apply(c);

	controller_apply(c, ct);
	return r;
}

/* Every pooled container to its current pool: one plan on v2, every
 * container otherwise. Returns 0 or -ENOMEM. */
int controller_resize_pools(struct controller *c)
{
	int r;

	if (!controller_planned(c))
		return converge(c, NULL, WITH_POOLS, 0);
	c->n.resizes++;
	c->pools_start_ns = clock_ns(CLOCK_MONOTONIC);
	r = controller_plan_apply(c);
	c->pools_end_ns = clock_ns(CLOCK_MONOTONIC);
	/* The host leaves new exclusive CPUs with the shared containers,
	 * before their owner is written; freed ones it gets back. */
	controller_isolate_sync(c, false);
	return r;
}

/* The pooled containers' exact placement entries, in one batch. */
void controller_sync_pooled_maps(struct controller *c)
{
	struct controller_targets *e = &c->enf;
	size_t it = 0;
	const char *k;
	void *v;
	int r = 0;

	if (!c->bpf)
		return;
	e->n = 0;
	while (!r && strmap_next(c->by_path, &it, &k, &v)) {
		if (!pooled(v))
			continue;
		r = add_target(c, v, true);
		if (!r)		/* the entries only */
			e->t[e->n - 1].cpus = e->t[e->n - 1].mems = NULL;
	}
	if (!r)
		r = plan_targets(c, 0);
	if (r < 0) {
		log_warn("placement map: out of memory syncing the pooled containers' entries; "
			 "retried at the next change");
		return;
	}
	exec_range(c, e->plan.writes_end, e->plan.n);
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

/*
 * ct to its decision, its exact placement entry written; pools: the
 * pools moved, so every pooled container and the host follow, and the
 * event's convergence sample ends after the writes. v1: one plan for it
 * all (enforce_plan orders it); v2: the tree's plan, then ct's mems.
 * Returns 0 or -ENOMEM.
 */
int controller_converge(struct controller *c, struct container *ct, bool pools,
			uint64_t event_ns)
{
	int r;

	if (!controller_planned(c))
		return converge(c, ct, (pools ? WITH_POOLS : 0) | WITH_MAPS, pools ? event_ns : 0);
	if (!pools) {
		r = controller_apply_one(c, ct);
		controller_sync_map(c, ct);
		return r;
	}
	r = controller_resize_pools(c);		/* shared leave the new CPUs first */
	controller_apply(c, ct);
	record_convergence(c, event_ns);
	controller_sync_pooled_maps(c);
	controller_sync_map(c, ct);
	return r;
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
	r = controller_converge(c, ct, released || ct->d.pools_changed, event_ns);
	if (r == -ENOMEM)
		return r;
	if (!ct->d.reject)
		container_log_decision(ct);	/* a rejection is not a placement */
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
		if (!controller_planned(c)) {
			r = converge(c, NULL, WITH_POOLS | WITH_MAPS, event_ns);
		} else {
			r = controller_resize_pools(c);
			record_convergence(c, event_ns);
			controller_sync_pooled_maps(c);
		}
	}
	controller_quota_sync(c, ct);	/* its quota (and its pod's) come back */
	c->dirty = true;
	return r == -ENOMEM ? r : 0;
}
