// SPDX-License-Identifier: Apache-2.0
/*
 * CPU hotplug in the policy (policy_hotplug.h): the book-keeping follows
 * a new online set.
 *
 * Order inside one call: fixed sets (annotated, scheduled) first, since a
 * listed CPU that is back belongs to its pod again and must not be
 * handed out; then every integer container drops its offline CPUs before
 * any is refilled, so no refill takes a CPU another container is about to
 * lose; then the pod-scope rooms are chosen again. Replacements come out
 * of the same free set as admissions and never take the shared pool below
 * min_shared_cpus.
 *
 * Known limits: a refill uses the node's allocation settings, not the
 * pod's resource-spec preferences (they are not kept in the entry), and
 * does not use its own pod's room.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_hotplug.h"
#include "policy_internal.h"

static bool is_fixed(const struct policy_entry *e)
{
	return e->kind == CPUSETD_KIND_ANNOTATED || (e->kind == CPUSETD_KIND_INTEGER && !e->n_cpus);
}

static bool is_counted(const struct policy_entry *e)
{
	return e->kind == CPUSETD_KIND_INTEGER && e->n_cpus;
}

static struct policy_hotplug_change *add_change(struct policy_hotplug *ret,
						const struct policy_entry *e,
						enum policy_hotplug_what what)
{
	struct policy_hotplug_change *c = &ret->changes[ret->n++];

	*c = (struct policy_hotplug_change){ .what = what };
	snprintf(c->container_id, sizeof(c->container_id), "%s", e->container_id);
	return c;
}

/* --- fixed sets --- */

static void fixed_follow(struct policy *p, struct policy_entry *e, struct policy_hotplug *ret)
{
	struct policy_hotplug_change *c;
	struct cpumask off, runs;
	char offl[CPULIST_MAX], on[CPULIST_MAX];

	cpumask_andnot(&off, &e->cpus, &p->topo->online);
	if (cpumask_equal(&off, &e->offline))
		return;
	c = add_change(ret, e, cpumask_empty(&off) ? POLICY_HP_RESTORED : POLICY_HP_OFFLINE);
	cpumask_andnot(&c->lost, &off, &e->offline);
	cpumask_andnot(&c->added, &e->offline, &off);
	c->missing = cpumask_weight(&off);
	e->offline = off;
	if (cpumask_empty(&off)) {
		e->err = POLICY_OK;
		e->err_hotplug = false;
		e->reason[0] = '\0';
		return;
	}
	cpumask_and(&runs, &e->cpus, &p->topo->online);
	policy_fmt_mask(&off, offl, sizeof(offl));
	policy_fmt_mask(&runs, on, sizeof(on));
	e->err = POLICY_ERR_CPU_OFFLINE;
	e->err_hotplug = true;
	snprintf(e->reason, sizeof(e->reason), "%s CPUs %.100s are offline; runs on %.100s",
		 e->kind == CPUSETD_KIND_ANNOTATED ? "weka.io/cores-ids" : "scheduled cpuset",
		 offl, cpumask_empty(&runs) ? "no CPU of its own" : on);
}

/* --- integer: picking replacements --- */

/* CPUs e may take: as an admission would, on the isolated side only if
 * e lives there (never mixed). */
static void free_for_entry(const struct policy *p, const struct policy_entry *e,
			   struct cpumask *ret)
{
	struct klass_info ki = {
		.k = K_INTEGER,
		.prefer_isolated = !cpumask_empty(&e->cpus) &&
				   cpumask_subset(&e->cpus, &p->topo->isolated),
	};

	policy_free_for(p, &ki, ret);
}

static bool fits_pool(const struct policy *p, const struct cpumask *m)
{
	struct policy_decision scratch;

	return policy_check_pool(p, m, &scratch) == 0;
}

static void take(struct policy *p, struct policy_entry *e, const struct cpumask *m,
		 struct cpumask *added)
{
	policy_disown_cpus(p, e);
	cpumask_or(&e->cpus, &e->cpus, m);
	policy_own_cpus(p, e);
	cpumask_or(added, added, m);
}

/* Takes up to max CPUs of m (ascending) that are free and leave the pool
 * its minimum. Returns how many. */
static unsigned take_upto(struct policy *p, struct policy_entry *e, const struct cpumask *m,
			  unsigned max, struct cpumask *added)
{
	struct cpumask free_cpus, one;
	unsigned n = 0;
	int id;

	free_for_entry(p, e, &free_cpus);
	cpumask_and(&free_cpus, &free_cpus, m);
	cpumask_for_each(id, &free_cpus) {
		if (n == max)
			break;
		cpumask_zero(&one);
		cpumask_set(&one, (unsigned)id);
		if (!fits_pool(p, &one))
			break;
		take(p, e, &one, added);
		n++;
	}
	return n;
}

/* The allocator's choice of `missing` more CPUs around the ones e holds
 * (kubelet's resize rules: keep, then grow nearest), inside e's NUMA
 * nodes when same_node. Returns how many were taken (0 or missing). */
static unsigned take_alloc(struct policy *p, struct policy_entry *e, unsigned missing,
			   bool same_node, struct cpumask *added)
{
	struct policy_alloc_req ar = { .n = cpumask_weight(&e->cpus) + missing,
				       .reserved = &p->cfg.reserved_cpus };
	struct policy_alloc_result res;
	struct cpumask node_cpus, pick;
	char why[128];

	if (!cpumask_empty(&e->cpus))
		ar.allocated = ar.baseline = &e->cpus;
	free_for_entry(p, e, &ar.free);
	if (same_node) {
		if (cpumask_empty(&e->mems))
			return 0;
		alloc_topo_cpus_of_nodes(p->at, &e->mems, &node_cpus);
		cpumask_and(&ar.free, &ar.free, &node_cpus);
	}
	cpumask_or(&ar.free, &ar.free, &e->cpus);
	if (policy_alloc_choose(p->at, &p->cfg.alloc, &ar, &res, why, sizeof(why)) < 0)
		return 0;
	cpumask_andnot(&pick, &res.cpus, &e->cpus);
	if (cpumask_weight(&pick) != missing || !fits_pool(p, &pick))
		return 0;
	take(p, e, &pick, added);
	return missing;
}

/* SMT siblings of the CPUs in m. */
static void siblings_of(const struct topology *t, const struct cpumask *m, struct cpumask *ret)
{
	int id;

	cpumask_zero(ret);
	cpumask_for_each(id, m)
		cpumask_or(ret, ret, topo_core_cpus(t, (unsigned)id));
}

/* Fills e up to N. Returns the CPUs still missing. */
static unsigned refill(struct policy *p, struct policy_entry *e, struct cpumask *added)
{
	unsigned missing = e->n_cpus - cpumask_weight(&e->cpus);
	struct cpumask m;

	/* Its own lost CPUs, then their siblings: the same physical cores. */
	missing -= take_upto(p, e, &e->offline, missing, added);
	siblings_of(p->topo, &e->offline, &m);
	if (missing)
		missing -= take_upto(p, e, &m, missing, added);
	if (missing)
		missing -= take_alloc(p, e, missing, true, added);
	if (missing)
		missing -= take_alloc(p, e, missing, false, added);
	if (missing && !cpumask_empty(&e->mems)) {
		alloc_topo_cpus_of_nodes(p->at, &e->mems, &m);
		missing -= take_upto(p, e, &m, missing, added);
	}
	if (missing)
		missing -= take_upto(p, e, &p->topo->online, missing, added);
	return missing;
}

/* --- integer: following the online set --- */

/* Drops e's offline CPUs into *gone (remembered in e->offline). */
static void drop_offline(struct policy *p, struct policy_entry *e, struct cpumask *gone)
{
	cpumask_andnot(gone, &e->cpus, &p->topo->online);
	if (cpumask_empty(gone))
		return;
	policy_disown_cpus(p, e);
	cpumask_andnot(&e->cpus, &e->cpus, gone);
	policy_own_cpus(p, e);
	cpumask_or(&e->offline, &e->offline, gone);
}

/* Replacements keep the baseline's size (an in-place shrink keeps it). */
static void fix_baseline(struct policy_entry *e, const struct cpumask *added)
{
	unsigned want = cpumask_weight(&e->baseline);
	int id;

	cpumask_and(&e->baseline, &e->baseline, &e->cpus);
	cpumask_for_each(id, added) {
		if (cpumask_weight(&e->baseline) >= want)
			break;
		cpumask_set(&e->baseline, (unsigned)id);
	}
}

static void set_short(struct policy_entry *e, unsigned missing)
{
	char on[CPULIST_MAX];

	policy_fmt_mask(&e->cpus, on, sizeof(on));
	e->err = POLICY_ERR_INSUFFICIENT_CPUS;
	e->err_hotplug = true;
	snprintf(e->reason, sizeof(e->reason),
		 "%u of its %u CPUs went offline and no free CPU replaces them; runs on %.100s",
		 missing, e->n_cpus, cpumask_empty(&e->cpus) ? "none" : on);
}

static void integer_follow(struct policy *p, struct policy_entry *e, const struct cpumask *gone,
			   struct policy_hotplug *ret)
{
	bool was_short = e->err_hotplug;
	struct policy_hotplug_change *c;
	struct cpumask added;
	unsigned missing = 0;

	cpumask_zero(&added);
	if (cpumask_weight(&e->cpus) < e->n_cpus)
		missing = refill(p, e, &added);
	/* Nothing lost, nothing found, and a shortfall already shown (one
	 * kept short by recovery is not yet). */
	if (cpumask_empty(gone) && cpumask_empty(&added) && (!missing || was_short))
		return;
	if (!cpumask_empty(&added)) {
		struct cpumask mems;

		fix_baseline(e, &added);
		/* Unknown node: keep the old mems (memory does not go offline). */
		if (topo_nodes_of(p->topo, &e->cpus, &mems) == 0)
			e->mems = mems;
		ret->replaced += cpumask_weight(&added);
	}
	c = add_change(ret, e, missing ? POLICY_HP_SHORT :
			       cpumask_empty(gone) && was_short ? POLICY_HP_REFILLED :
			       POLICY_HP_REPLACED);
	c->lost = *gone;
	c->added = added;
	c->missing = missing;
	if (missing) {
		set_short(e, missing);
		return;
	}
	cpumask_zero(&e->offline);
	if (was_short) {
		e->err = POLICY_OK;
		e->err_hotplug = false;
		e->reason[0] = '\0';
	}
}

/* --- the whole book-keeping --- */

static size_t count_entries(const struct policy *p)
{
	size_t it = 0, n = 0;

	while (policy_next(p, &it))
		n++;
	return n;
}

/* Every entry, in policy_next order (stable while nothing is added). */
static void follow_all(struct policy *p, struct cpumask *gone, struct policy_hotplug *ret)
{
	struct policy_entry *e;
	size_t it = 0, i = 0;

	while ((e = (struct policy_entry *)policy_next(p, &it)))
		if (is_fixed(e))
			fixed_follow(p, e, ret);
	it = 0;
	while ((e = (struct policy_entry *)policy_next(p, &it)))
		if (is_counted(e))
			drop_offline(p, e, &gone[i++]);
	it = i = 0;
	while ((e = (struct policy_entry *)policy_next(p, &it)))
		if (is_counted(e))
			integer_follow(p, e, &gone[i++], ret);
	policy_pod_rooms_refresh(p);
}

int policy_set_online(struct policy *p, const struct topology *topo, struct policy_hotplug *ret)
{
	size_t n = count_entries(p);
	struct alloc_topo *at = malloc(sizeof(*at));
	struct cpumask *gone = calloc(n ? n : 1, sizeof(*gone));
	struct policy_hotplug out = { .changes = calloc(n ? n : 1, sizeof(*out.changes)) };
	int r = -ENOMEM;

	if (!at || !gone || !out.changes)
		goto fail;
	r = alloc_topo_from_topology(topo, &topo->online, at);
	if (r < 0)
		goto fail;
	cpumask_andnot(&out.went_offline, &p->topo->online, &topo->online);
	cpumask_andnot(&out.came_online, &topo->online, &p->topo->online);
	free(p->at);
	p->at = at;
	p->topo = topo;
	p->pools_gen++;
	follow_all(p, gone, &out);
	free(gone);
	*ret = out;
	return 0;
fail:
	free(at);
	free(gone);
	free(out.changes);
	*ret = (struct policy_hotplug){ 0 };
	return r;
}

void policy_hotplug_free(struct policy_hotplug *ret)
{
	free(ret->changes);
	*ret = (struct policy_hotplug){ 0 };
}
