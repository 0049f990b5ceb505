// SPDX-License-Identifier: Apache-2.0
/*
 * Resync: rebuild the table and every placement from the live cgroups,
 * the bundles and kubelet's checkpoint (start-up, lost events). A running
 * exclusive container whose set is still valid is never moved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"

struct scan {
	struct controller *c;
	struct container **list;
	size_t n, cap;
};

static int scan_one(const char *path, void *arg)
{
	struct scan *s = arg;
	struct cgfs_path_info info;
	struct container *ct;

	if (cgfs_parse_path(s->c->root, path, &info) < 0 || info.level != CGFS_LEVEL_CONTAINER)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct container **l = realloc(s->list, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		s->list = l;
		s->cap = cap;
	}
	ct = container_new(s->c, path, &info, 0, controller_nri_meta(s->c, info.container_id));
	if (!ct)
		return -ENOMEM;
	controller_quota_adopt(s->c, ct);	/* a limit we lifted: recovery places by it */
	/* What the kernel holds now: the own sets, which the plan and the
	 * writes start from, and where the tasks run, which recovery starts
	 * from. On v2 the two differ when the container inherits its set
	 * from its pod (hierarchical writes): its own set is then "" or
	 * every CPU, and taking that for its placement moved running
	 * exclusive containers at a restart. Unreadable: empty, as if new. */
	ct->cpus_known = cgfs_read_cpuset(s->c->cg, path, CGFS_CPUS, &ct->cpus_applied) == 0;
	ct->mems_known = cgfs_read_cpuset(s->c->cg, path, CGFS_MEMS, &ct->mems_applied) == 0;
	if (ct->cpus_known && cgfs_running_is_own(s->c->cg))
		ct->cpus_running = ct->cpus_applied;	/* v1: the same file */
	else if (cgfs_read_running_cpus(s->c->cg, path, &ct->cpus_running) < 0)
		cpumask_zero(&ct->cpus_running);
	/* Recovery never admits a cgroup with no task: a stopped container
	 * whose cgroup remains, or one whose runtime has not put its init
	 * there yet; either is admitted at its first task (on_populated). */
	if (cgfs_populated(s->c->cg, path) == 0)
		ct->state = CT_WAITING;
	controller_container_started(s->c, ct);	/* BPF's lifecycle entry, made if missing */
	/* The runtime's write already there: recovery plans over it. */
	if (ct->runtime_write_pending && ct->meta.runtime_cpus[0] &&
	    container_runtime_write_seen(ct, &ct->cpus_applied, ct->cpus_known))
		ct->runtime_write_pending = false;
	s->list[s->n++] = ct;
	return CGFS_WALK_PRUNE;	/* its own sub-cgroups are none of ours */
}

static int inherit_all(struct container **list, size_t n)
{
	struct strmap *sandboxes = strmap_new();

	if (!sandboxes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (list[i]->meta.sandbox && strmap_put(sandboxes, list[i]->info.container_id, list[i]) < 0) {
			strmap_free(sandboxes);
			return -ENOMEM;
		}
	for (size_t i = 0; i < n; i++)
		if (list[i]->meta.sandbox_id[0])
			container_inherit_pod(list[i], strmap_get(sandboxes, list[i]->meta.sandbox_id));
	strmap_free(sandboxes);
	return 0;
}

/*
 * kubelet's checkpoint, when taking over a node from its static policy
 * (user/README.md "Beyond the rule book"). A malformed file is logged once per
 * resync and changes nothing; a missing one is the normal case.
 */
static void read_kubelet_state(const struct controller *c, struct kubelet_state *ret)
{
	int r;

	*ret = (struct kubelet_state){ 0 };
	if (!c->cfg->kubelet_state_file[0])
		return;
	r = kubelet_state_read(c->cfg->kubelet_state_file, ret);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_error("kubelet state %s: %s; not taking over its assignments",
			  c->cfg->kubelet_state_file, r == -EBADMSG ? "malformed" : strerror(-r));
		*ret = (struct kubelet_state){ 0 };
	} else if (ret->n) {
		log_info("kubelet state %s: %zu assignments of kubelet's static policy kept "
			 "where still valid", c->cfg->kubelet_state_file, ret->n);
	}
}

static int recover(struct controller *c, struct container **list, size_t n)
{
	struct kubelet_state ks = { 0 };
	struct policy_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct cpumask *cur = calloc(n + 1, sizeof(*cur));
	uint64_t *order = calloc(n + 1, sizeof(*order));
	struct policy_decision *d = calloc(n + 1, sizeof(*d));
	int r = -ENOMEM;

	if (!reqs || !cur || !order || !d)
		goto out;
	read_kubelet_state(c, &ks);
	for (size_t i = 0; i < n; i++) {
		controller_request_of(c, list[i], &reqs[i]);
		reqs[i].kubelet_cpus = kubelet_state_find(&ks, list[i]->meta.pod_uid,
							  list[i]->meta.container_name,
							  list[i]->info.container_id);
		reqs[i].running = true;	/* a CPU offline is hotplug, not refusal */
		cur[i] = list[i]->cpus_running;
		order[i] = list[i]->cgroup_id;
	}
	policy_reset(c->policy);
	r = policy_recover(c->policy, reqs, cur, order, n, d);
	for (size_t i = 0; r == 0 && i < n; i++)
		list[i]->d = d[i];
out:
	kubelet_state_free(&ks);
	free(reqs);
	free(cur);
	free(order);
	free(d);
	return r;
}

/* recover() over the containers that have a task, and those NRI admitted
 * whose cgroup is not made yet (the runtime was told their sets); the
 * others hold nothing until they get one. 0 or -ENOMEM. */
static int recover_live(struct controller *c, struct container **list, size_t n)
{
	size_t pending = controller_nri_n_pending(c);
	struct container **live = calloc(n + pending + 1, sizeof(*live));
	size_t k = 0;
	int r;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (container_live(list[i]))
			live[k++] = list[i];
	controller_nri_list_pending(c, live + k);
	k += pending;
	r = recover(c, live, k);
	free(live);
	return r;
}

/* Swaps in the scanned table, keeping per-container memory (errors
 * already logged) of containers that survived. */
static int install_table(struct controller *c, struct container **list, size_t n)
{
	struct strmap *m = strmap_new();

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct container *old = strmap_get(c->by_path, list[i]->path);

		if (old && old->cgroup_id == list[i]->cgroup_id) {
			bool unsure = list[i]->rejection.start_unsure;

			list[i]->error_logged = old->error_logged && old->d.err == list[i]->d.err;
			list[i]->killed = old->killed;
			/* A rejection under way and a fight with a writer go on:
			 * the scan says nothing new of either. A deadline stands
			 * (controller_reject.c): the entry we made for it says
			 * nothing new; the scan may only add a doubt. */
			list[i]->rejection = old->rejection;
			list[i]->rejection.start_unsure |= unsure;
			list[i]->defence = old->defence;
			list[i]->rebuild_skipped = old->rebuild_skipped;
			list[i]->nri_placed = old->nri_placed;
			/* A refused resize is not news after a resync either. */
			list[i]->resize_refused_quota = old->resize_refused_quota;
			/* Its failed map entry: the write below says whether it
			 * works now (and takes its listed error back). */
			list[i]->map_err = old->map_err;
		}
		if (strmap_put(m, list[i]->path, list[i]) < 0) {
			strmap_free(m);
			return -ENOMEM;
		}
	}
	if (controller_table_swap(c, m) < 0) {
		strmap_free(m);
		return -ENOMEM;
	}
	return 0;
}

/* The old table still describes the placements in force: keep it, say
 * so once per cause, and let the main loop retry. */
static void resync_failed(struct controller *c, int r)
{
	c->n.resync_failures++;
	if (c->resync_failed != r)
		log_error("resync under %s failed: %s; placements stay as they are, retrying",
			  c->root, strerror(-r));
	c->resync_failed = r;
	c->dirty = true;
}

int controller_retry_resync(struct controller *c)
{
	return c->resync_failed ? controller_resync(c) : 0;
}

/* One line per container whose CPUs the resync changed: where its tasks
 * ran at the scan, and where they may run now. */
static void log_corrected(struct controller *c, const struct container *ct)
{
	char was[CPULIST_MAX], now[CPULIST_MAX];
	struct cpumask m;

	if (!container_live(ct) || cpumask_empty(&ct->cpus_running))
		return;
	/* v1: what the resync wrote is what runs (controller_plan.c keeps
	 * cpus_applied); no second read of every container's file. */
	if (ct->cpus_known && cgfs_running_is_own(c->cg))
		m = ct->cpus_applied;
	else if (cgfs_read_running_cpus(c->cg, ct->path, &m) < 0)
		return;
	if (cpumask_equal(&m, &ct->cpus_running))
		return;
	cpulist_format(&ct->cpus_running, was, sizeof(was));
	cpulist_format(&m, now, sizeof(now));
	ct_log(LOG_NOTICE, ct, "resync_corrected", "%s (%.12s): resync corrected cpus %s -> %s (%s)",
	       ct->name, ct->info.container_id, was, now, policy_kind_name(ct->d.kind));
}

int controller_resync(struct controller *c)
{
	struct scan s = { .c = c };
	uint64_t started = clock_ns(CLOCK_MONOTONIC);
	int r;

	if (!c->root[0])
		return -ENOENT;
	r = cgfs_walk(c->cg, c->root, scan_one, &s);
	if (r == 0)
		r = inherit_all(s.list, s.n);
	if (r == 0)
		r = recover_live(c, s.list, s.n);
	if (r == 0) {
		controller_plan_rebuild(c);	/* it points into the old table */
		r = install_table(c, s.list, s.n);
	}
	if (r < 0) {
		for (size_t i = 0; i < s.n; i++)
			container_free(s.list[i]);
		free(s.list);
		resync_failed(c, r);
		return r;
	}
	c->resync_failed = 0;
	c->resync_started_ns = started;
	/* Before the entries are written again: room for every container. */
	controller_prune_map(c);
	/* Shared first: they leave reserved CPUs before exclusive ones land.
	 * Slices and pods are re-read: anyone may have written them. */
	controller_plan_reset(c);
	controller_isolate_stale(c);	/* the host too: anyone may have changed it */
	controller_resize_pools(c);
	for (size_t i = 0; i < s.n; i++) {
		struct container *ct = s.list[i];

		if (!pooled(ct))
			controller_apply(c, ct);
		if (ct->d.err)
			controller_handle_error(c, ct);
		controller_skip_sched_rebuild(c, ct);
		/* Armed: a container caught between its mkdir and its first
		 * exec may still get a set from its runtime. */
		ct->exec_pending = container_live(ct);
		controller_sync_map(c, ct);
	}
	for (size_t i = 0; i < s.n; i++)
		log_corrected(c, s.list[i]);
	controller_quota_resync(c);	/* CFS quotas as the decisions say, pods last */
	free(s.list);
	controller_prune_errors(c);
	c->lifecycle_checked = true;
	c->n.resyncs++;
	c->dirty = true;
	log_info("resync: %zu containers under %s", s.n, c->root);
	return 0;
}
