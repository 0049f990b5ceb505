// SPDX-License-Identifier: Apache-2.0
/*
 * One release for a container that goes away: every table that holds a
 * trace of it, in one fixed order (user/README.md, "One owner per
 * container"). The record in the table (by cgroup path, indexed by
 * cgroup id and container id) owns the container; each feature keeps its
 * own side table and is listed here once, so a removal path calls
 * controller_forget() and cannot miss one or get the order wrong.
 *
 * A feature whose state lives in the record itself (quota saved values,
 * defence, exec check, termination message, reject deadline) goes with
 * the record; it needs a hook only when it also holds something outside
 * it (the pod's quota: the policy step's quota sync puts it back).
 */
#include <errno.h>
#include <string.h>
#include "controller_internal.h"
#include "controller_plan.h"

/* What one release knows as it goes. */
struct forget {
	uint64_t event_ns;	/* the event's CLOCK_MONOTONIC stamp; 0 = not timed */
	bool in_table;		/* the record was in the table (it had a cgroup) */
	int r;			/* -ENOMEM of a step that failed; the rest still run */
};

struct container_hook {
	const char *name;
	/* Drops ct's trace. Cannot fail but -ENOMEM into f->r. */
	void (*forget)(struct controller *c, struct container *ct, struct forget *f);
	/* Whether a trace of the container remains (for tests and
	 * cpusetctl-style checks); NULL where it cannot be seen from here
	 * (a BPF map without BPF, the record's own memory). */
	bool (*holds)(const struct controller *c, uint64_t cgroup_id, const char *container_id);
};

/* --- the steps, in their order (hooks[] below) --- */

static void forget_table(struct controller *c, struct container *ct, struct forget *f)
{
	f->in_table = strmap_get(c->by_path, ct->path) == ct;
	if (f->in_table)
		controller_table_del(c, ct);
}

static bool holds_table(const struct controller *c, uint64_t cgroup_id, const char *container_id)
{
	return controller_find_id(c, cgroup_id) || controller_find_container(c, container_id);
}

static void forget_plan(struct controller *c, struct container *ct, struct forget *f)
{
	if (f->in_table)	/* only a table entry has a leaf in the v2 plan */
		controller_plan_remove(c, ct);
}

static void forget_placement(struct controller *c, struct container *ct, struct forget *f)
{
	if (f->in_table)
		controller_unmap(c, ct);	/* controller_write.c: the map's one writer */
}

static void forget_telemetry(struct controller *c, struct container *ct, struct forget *f)
{
	if (f->in_table)
		controller_telemetry_forget(c, ct);
}

/* The policy's book, the pools that widen (converged, mirrored into the
 * placement map) and the CFS quota of it and its pod (controller_release;
 * the quota sees it gone from the table and gives the pod its limit
 * back). */
static void forget_policy(struct controller *c, struct container *ct, struct forget *f)
{
	if (controller_release(c, ct, f->event_ns) < 0)
		f->r = -ENOMEM;
}

static bool holds_policy(const struct controller *c, uint64_t cgroup_id, const char *container_id)
{
	(void)cgroup_id;
	return policy_lookup(c->policy, container_id) != NULL;
}

/* NRI's record is the runtime's container, which outlives its cgroup
 * until RemoveContainer (controller_nri.c frees it there); only the
 * pending container it points to is this record. */
static void forget_nri(struct controller *c, struct container *ct, struct forget *f)
{
	struct nri_rec *r = nri_rec_get(c, ct->info.container_id);

	(void)f;
	if (r && r->pending == ct)
		r->pending = NULL;
}

static bool holds_nri(const struct controller *c, uint64_t cgroup_id, const char *container_id)
{
	(void)cgroup_id;
	return nri_rec_get(c, container_id) != NULL;
}

/* Whether a container cgroup of the pod is still in the table: the
 * table's pod index (controller_pod_cgroups), by the same key the error
 * was noted under (meta.pod_uid). */
static bool pod_has_cgroup(const char *pod_uid, void *ctx)
{
	return controller_pod_cgroups(ctx, pod_uid) > 0;
}

/* Errors live as long as their pod: until no container cgroup of it is
 * left (the sandbox's goes last). O(errors) with an O(1) lookup per
 * pod, only at rmdir of a container and when there are errors at all. */
void controller_prune_errors(struct controller *c)
{
	if (pod_errors_count(c->errors) && pod_errors_prune(c->errors, pod_has_cgroup, c))
		c->dirty = true;
}

/* A pod's errors live until its last container cgroup is gone (kubelet's
 * next attempt adds to the same entry): pruned only when a cgroup went. */
static void forget_errors(struct controller *c, struct container *ct, struct forget *f)
{
	(void)ct;
	if (f->in_table)
		controller_prune_errors(c);
}

static bool holds_errors(const struct controller *c, uint64_t cgroup_id, const char *container_id)
{
	const struct pod_error *e;
	size_t it = 0;

	(void)cgroup_id;
	while ((e = pod_errors_next(c->errors, &it)))
		if (strcmp(e->container_id, container_id) == 0)
			return true;
	return false;
}

static void forget_record(struct controller *c, struct container *ct, struct forget *f)
{
	(void)c;
	(void)f;
	container_free(ct);
}

/*
 * The order, and why:
 *  1. table: first, because every later step asks the table whether the
 *     container is still there (the pool resize must not write or mirror
 *     it, its quota sync sees it gone, the error prune counts it out).
 *  2. plan: its v2 leaf, before the pools are planned again.
 *  3. placement map entry, then 4. telemetry: BPF re-creates a cgroup's
 *     stats entry while its placement entry says it is managed.
 *  5. policy: its CPUs back to the pools, which converge now; its quota.
 *  6. nri: a pending container's pointer in its record.
 *  7. errors: last of the tables, once the cgroup is out of the table.
 *  8. record: its memory (kept fd, metadata) after every step used it.
 */
static const struct container_hook hooks[] = {
	{ "table", forget_table, holds_table },
	{ "plan", forget_plan, NULL },
	{ "placement_map", forget_placement, NULL },
	{ "telemetry", forget_telemetry, NULL },
	{ "policy", forget_policy, holds_policy },
	{ "nri", forget_nri, holds_nri },
	{ "errors", forget_errors, holds_errors },
	{ "record", forget_record, NULL },
};

#define N_HOOKS (sizeof(hooks) / sizeof(hooks[0]))

int controller_forget(struct controller *c, struct container *ct, uint64_t event_ns)
{
	struct forget f = { .event_ns = event_ns };

	for (size_t i = 0; i < N_HOOKS; i++)
		hooks[i].forget(c, ct, &f);
	return f.r;
}

size_t controller_forget_order(const char **ret, size_t max)
{
	for (size_t i = 0; i < N_HOOKS && i < max; i++)
		ret[i] = hooks[i].name;
	return N_HOOKS;
}

size_t controller_traces(const struct controller *c, uint64_t cgroup_id, const char *container_id,
			 const char **ret, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < N_HOOKS; i++)
		if (hooks[i].holds && hooks[i].holds(c, cgroup_id, container_id ? container_id : "")) {
			if (n < max)
				ret[n] = hooks[i].name;
			n++;
		}
	return n;
}
