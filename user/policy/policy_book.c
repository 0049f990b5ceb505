// SPDX-License-Identifier: Apache-2.0
/*
 * The policy's book-keeping, read and kept: byCID, annotRef and intOwner
 * (PRD §3), the pools they leave, admission-error reasons and the
 * CPUs an integer container may take. Every other policy file calls this
 * one; it calls none of them. Pure: no I/O, no clock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_internal.h"

static const char *const error_names[POLICY_ERR__COUNT] = {
	[POLICY_OK] = "",
	[POLICY_ERR_INVALID_ANNOTATION] = "invalid_annotation",
	[POLICY_ERR_INVALID_BUNDLE] = "invalid_bundle",
	[POLICY_ERR_CPU_OFFLINE] = "cpu_offline",
	[POLICY_ERR_CPU_EXCLUSIVE] = "cpu_exclusive",
	[POLICY_ERR_INSUFFICIENT_CPUS] = "insufficient_cpus",
	[POLICY_ERR_SHARED_POOL_EMPTY] = "shared_pool_empty",
	[POLICY_ERR_NUMA_UNRESOLVED] = "numa_unresolved",
	[POLICY_ERR_TOPOLOGY_AFFINITY] = "topology_affinity",
	[POLICY_ERR_SMT_ALIGNMENT] = "smt_alignment",
	[POLICY_ERR_RESIZE_BELOW_BASELINE] = "resize_below_baseline",
	[POLICY_ERR_ANNOTATION_NOT_ALLOWED] = "annotation_not_allowed",
	[POLICY_ERR_CPU_RESERVED] = "cpu_reserved",
};

/* The errno each admission error is returned as. */
static const int error_errno[POLICY_ERR__COUNT] = {
	[POLICY_ERR_INVALID_ANNOTATION] = EINVAL,
	[POLICY_ERR_INVALID_BUNDLE] = EBADMSG,
	[POLICY_ERR_CPU_OFFLINE] = ENXIO,
	[POLICY_ERR_CPU_EXCLUSIVE] = EBUSY,
	[POLICY_ERR_INSUFFICIENT_CPUS] = ENOSPC,
	[POLICY_ERR_SHARED_POOL_EMPTY] = ENOSPC,
	[POLICY_ERR_NUMA_UNRESOLVED] = ENXIO,
	[POLICY_ERR_TOPOLOGY_AFFINITY] = EXDEV,
	[POLICY_ERR_SMT_ALIGNMENT] = EDOM,
	[POLICY_ERR_RESIZE_BELOW_BASELINE] = ERANGE,
	[POLICY_ERR_ANNOTATION_NOT_ALLOWED] = EACCES,
	[POLICY_ERR_CPU_RESERVED] = EBUSY,
};

const char *policy_error_name(enum policy_error err)
{
	return err < POLICY_ERR__COUNT ? error_names[err] : "unknown";
}

const char *policy_rule_name(enum policy_rule rule)
{
	static const char *const names[POLICY_RULE__COUNT] = {
		[POLICY_RULE_DEFAULT_SHARED] = "default_shared",
		[POLICY_RULE_SANDBOX] = "sandbox",
		[POLICY_RULE_INVALID_ANNOTATION] = "invalid_annotation",
		[POLICY_RULE_INVALID_BUNDLE] = "invalid_bundle",
		[POLICY_RULE_CORES_IDS] = "cores_ids",
		[POLICY_RULE_RESOURCE_STATUS] = "resource_status",
		[POLICY_RULE_QOS_CLASS] = "qos_class",
		[POLICY_RULE_INTEGER] = "integer",
		[POLICY_RULE_BESTEFFORT_POOL] = "besteffort_pool",
	};

	return rule < POLICY_RULE__COUNT ? names[rule] : "unknown";
}

const char *policy_kind_name(enum cpusetd_kind kind)
{
	switch (kind) {
	case CPUSETD_KIND_SHARED: return "shared";
	case CPUSETD_KIND_INTEGER: return "integer";
	case CPUSETD_KIND_ANNOTATED: return "annotated";
	case CPUSETD_KIND_BE: return "be";
	default: return "none";
	}
}

void policy_reserved(const struct policy *p, struct cpumask *ret)
{
	cpumask_or(ret, &p->annotated, &p->exclusive);
}

void policy_shared_pool(const struct policy *p, struct cpumask *ret)
{
	struct cpumask reserved;

	policy_reserved(p, &reserved);
	cpumask_andnot(ret, &p->topo->online, &reserved);
	cpumask_andnot(ret, ret, &p->topo->isolated);
	cpumask_andnot(ret, ret, &p->cfg.system_qos_cpus);
}

void policy_be_pool(const struct policy *p, struct cpumask *ret)
{
	struct cpumask lse;

	cpumask_andnot(&lse, &p->exclusive, &p->lsr);
	cpumask_andnot(ret, &p->topo->online, &p->annotated);
	cpumask_andnot(ret, ret, &lse);
	cpumask_andnot(ret, ret, &p->topo->isolated);
}

bool policy_pool_of(const struct policy *p, enum cpusetd_kind kind, struct cpumask *ret)
{
	if (kind == CPUSETD_KIND_SHARED)
		policy_shared_pool(p, ret);
	else if (kind == CPUSETD_KIND_BE)
		policy_be_pool(p, ret);
	else
		return false;
	return true;
}

/* The CPUs of NUMA nodes (ids) of the topology. */
static void cpus_of_nodes(const struct topology *t, const struct cpumask *nodes,
			  struct cpumask *ret)
{
	int n;

	cpumask_zero(ret);
	cpumask_for_each(n, nodes)
		cpumask_or(ret, ret, &t->node_cpus[n]);
}

bool policy_pool_for(const struct policy *p, const struct policy_decision *d,
		     struct cpumask *ret)
{
	struct cpumask pool, part;

	if (!policy_pool_of(p, d->kind, &pool))
		return false;
	if (d->system_pool)	/* koordlet: the node's system-qos-resource */
		cpumask_and(&pool, &p->cfg.system_qos_cpus, &p->topo->online);
	else if (!cpumask_empty(&d->pool_nodes)) {
		cpus_of_nodes(p->topo, &d->pool_nodes, &part);
		cpumask_and(&pool, &pool, &part);
	}
	*ret = pool;
	return true;
}

unsigned policy_annot_ref(const struct policy *p, unsigned cpu)
{
	return cpu < CPUSETD_MAX_CPUS ? p->annot_ref[cpu] : 0;
}

const char *policy_int_owner(const struct policy *p, unsigned cpu)
{
	return cpu < CPUSETD_MAX_CPUS && p->int_owner[cpu] ? p->int_owner[cpu]->container_id : NULL;
}

const struct policy_entry *policy_lookup(const struct policy *p, const char *container_id)
{
	return p->by_cid ? strmap_get(p->by_cid, container_id) : NULL;
}

int policy_decision_get(const struct policy *p, const char *container_id,
			struct policy_decision *ret)
{
	const struct policy_entry *e = policy_lookup(p, container_id);

	if (!e)
		return -ENOENT;
	policy_decision_of(p, e, ret);
	return 0;
}

const struct policy_entry *policy_next(const struct policy *p, size_t *it)
{
	const char *k;
	void *v;

	return p->by_cid && strmap_next(p->by_cid, it, &k, &v) ? v : NULL;
}

/* --- errors --- */

int policy_fail(struct policy_decision *d, enum policy_error err, const char *fmt, ...)
{
	va_list ap;

	d->err = err;
	va_start(ap, fmt);
	/* Reasons quote pod values (annotations, names): kept raw here, and
	 * escaped once by each sink that writes them (log_escape: the log,
	 * the termination message, status.json), so a backslash in a value
	 * is never escaped twice. */
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	return -error_errno[err];
}

void policy_fmt_mask(const struct cpumask *m, char *buf, size_t len)
{
	if (cpulist_format(m, buf, len) < 0)
		snprintf(buf, len, "(%u CPUs)", cpumask_weight(m));
}

/*
 * A pool part in use (a container Koordinator placed on some NUMA nodes'
 * share of a pool) may not be emptied: it would have nowhere to run, and
 * it is never widened behind the scheduler's back. Taking cpus is checked
 * against both pools: an LSR container's CPUs stay in the BE pool, so a
 * BE part is judged strictly there (refused when LSR alone would empty it).
 */
static int check_parts(const struct policy *p, const struct cpumask *cpus,
		       struct policy_decision *d)
{
	const struct policy_entry *e;
	struct policy_decision pd;
	struct cpumask part, left;
	char nodes[64];
	size_t it = 0;

	while ((e = policy_next(p, &it))) {
		if (cpumask_empty(&e->pool_nodes) || e->err)
			continue;
		pd = (struct policy_decision){ .kind = e->kind, .pool_nodes = e->pool_nodes };
		if (!policy_pool_for(p, &pd, &part) || cpumask_empty(&part))
			continue;	/* already empty: hotplug, not this taker */
		cpumask_andnot(&left, &part, cpus);
		if (!cpumask_empty(&left))
			continue;
		policy_fmt_mask(&e->pool_nodes, nodes, sizeof(nodes));
		return policy_fail(d, POLICY_ERR_SHARED_POOL_EMPTY,
				   "would leave no CPU of the %s pool on NUMA node(s) %s, where "
				   "%.200s runs (resource-status numaNodeResources)",
				   e->kind == CPUSETD_KIND_BE ? "BE" : "shared", nodes, e->name);
	}
	return 0;
}

int policy_check_pool(const struct policy *p, const struct cpumask *cpus,
		      struct policy_decision *d)
{
	struct cpumask pool;

	policy_shared_pool(p, &pool);
	cpumask_andnot(&pool, &pool, cpus);
	if (cpumask_weight(&pool) < p->cfg.min_shared_cpus)
		return policy_fail(d, POLICY_ERR_SHARED_POOL_EMPTY,
				   "would leave %u CPUs in the shared pool (min_shared_cpus=%u)",
				   cpumask_weight(&pool), p->cfg.min_shared_cpus);
	return check_parts(p, cpus, d);
}

/* --- book-keeping --- */

void policy_decision_of(const struct policy *p, const struct policy_entry *e,
			struct policy_decision *d)
{
	*d = (struct policy_decision){ .kind = e->kind, .err = e->err,
				       .exclusive_policy = e->exclusive_policy,
				       .pool_nodes = e->pool_nodes, .system_pool = e->system_pool };
	/* Fixed sets keep offline CPUs in the book-keeping; never write them
	 * (cgroup v1 refuses them). */
	if (!policy_pool_for(p, d, &d->cpus))
		cpumask_and(&d->cpus, &e->cpus, &p->topo->online);
	d->mems = e->mems;
	d->reject = e->err && !e->err_hotplug && p->cfg.on_error == POLICY_ON_ERROR_REJECT &&
		    !e->sandbox;
	d->err_hotplug = e->err_hotplug;
	snprintf(d->reason, sizeof(d->reason), "%s", e->reason);
}

void policy_own_cpus(struct policy *p, struct policy_entry *e)
{
	bool changed = false;
	int id;

	cpumask_for_each(id, &e->cpus) {
		if (e->kind == CPUSETD_KIND_ANNOTATED) {
			changed |= p->annot_ref[id]++ == 0;
			cpumask_set(&p->annotated, (unsigned)id);
			continue;
		}
		p->int_owner[id] = e;
		changed |= !cpumask_test(&p->exclusive, (unsigned)id);
		cpumask_set(&p->exclusive, (unsigned)id);
		if (e->qos == POLICY_QOS_LSR) {
			changed |= !cpumask_test(&p->lsr, (unsigned)id);
			cpumask_set(&p->lsr, (unsigned)id);
		}
	}
	p->pools_gen += changed;
}

uint64_t policy_pools_gen(const struct policy *p)
{
	return p->pools_gen;
}

bool policy_disown_cpus(struct policy *p, struct policy_entry *e)
{
	bool changed = false;
	int id;

	cpumask_for_each(id, &e->cpus) {
		if (e->kind == CPUSETD_KIND_ANNOTATED) {
			if (p->annot_ref[id] && --p->annot_ref[id] == 0) {
				cpumask_clear(&p->annotated, (unsigned)id);
				changed = true;
			}
		} else if (p->int_owner[id] == e) {
			p->int_owner[id] = NULL;
			cpumask_clear(&p->exclusive, (unsigned)id);
			cpumask_clear(&p->lsr, (unsigned)id);
			changed = true;
		}
	}
	p->pools_gen += changed;
	return changed;
}

/* Where an integer container may take CPUs from: the isolated ones when it
 * opted in and enough are free (never a mix: an isolated workload wants
 * no housekeeping CPU), else the rest. */
void policy_free_for(const struct policy *p, const struct klass_info *ki, struct cpumask *ret)
{
	policy_free_beside(p, ki, &p->pod_rooms, ret);
}

bool policy_hold_parts(const struct policy *p, struct cpumask *free_cpus)
{
	struct cpumask before = *free_cpus;
	const struct policy_entry *e;
	struct policy_decision pd;
	struct cpumask part;
	size_t it = 0;
	int first;

	while ((e = policy_next(p, &it))) {
		if (cpumask_empty(&e->pool_nodes) || e->err)
			continue;
		pd = (struct policy_decision){ .kind = e->kind, .pool_nodes = e->pool_nodes };
		if (!policy_pool_for(p, &pd, &part) || !cpumask_subset(&part, free_cpus) ||
		    (first = cpumask_next(&part, 0)) < 0)
			continue;
		cpumask_andnot(free_cpus, free_cpus, topo_core_cpus(p->topo, (unsigned)first));
	}
	return !cpumask_equal(&before, free_cpus);
}

void policy_free_beside(const struct policy *p, const struct klass_info *ki,
			const struct cpumask *rooms, struct cpumask *ret)
{
	struct cpumask free_cpus, iso;

	cpumask_andnot(&free_cpus, &p->topo->online, &p->annotated);
	cpumask_andnot(&free_cpus, &free_cpus, &p->exclusive);
	cpumask_andnot(&free_cpus, &free_cpus, &p->cfg.reserved_cpus);
	cpumask_andnot(&free_cpus, &free_cpus, &p->cfg.system_qos_cpus);
	cpumask_andnot(&free_cpus, &free_cpus, rooms);
	cpumask_and(&iso, &free_cpus, &p->topo->isolated);
	if (ki->prefer_isolated && cpumask_weight(&iso) >= ki->n) {
		*ret = iso;
		return;
	}
	cpumask_andnot(ret, &free_cpus, &p->topo->isolated);
}

enum policy_error policy_alloc_error(int r)
{
	switch (r) {
	case -EDOM: return POLICY_ERR_SMT_ALIGNMENT;
	case -EXDEV: return POLICY_ERR_TOPOLOGY_AFFINITY;
	case -ERANGE: return POLICY_ERR_RESIZE_BELOW_BASELINE;
	default: return POLICY_ERR_INSUFFICIENT_CPUS;
	}
}
