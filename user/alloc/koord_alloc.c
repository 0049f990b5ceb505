// SPDX-License-Identifier: Apache-2.0
/*
 * koord_alloc(): the request-level rules around Koordinator's CPU
 * accumulator (koord_alloc_acc.c): which CPUs are usable at all (sharing
 * up to max_ref_count, FullPCPUsOnly), preferred CPUs first
 * (takePreferredCPUs) and the DistributeEvenly NUMA split; plus the
 * policy names and the usage book-keeping.
 *
 * DistributeEvenly. Koordinator declared the strategy long before it
 * implemented it: its accumulator only tells MostAllocated from the
 * rest, so DistributeEvenly used to behave as LeastAllocated. Its newer
 * scheduler (koordinator PR #3209, "support distributing pod resources
 * evenly across NUMA nodes") spreads a pod over as many NUMA nodes as
 * can take part (the widest NUMA hint), splits the request over them
 * (resource_manager.go tryBestToDistributeEvenly) and runs the
 * accumulator once per node. We do the same without the hint machinery:
 *  - nodes: every NUMA node with room (usable CPUs; whole free cores for
 *    the FullPCPUs policies); a NUMANodeLevel request leaves out nodes
 *    holding NUMANodeLevel CPUs when the other nodes can hold it;
 *  - split: from the node with the least room up, each node gets what is
 *    still unassigned divided by the nodes left (rounded down to whole
 *    cores for the FullPCPUs policies), capped by its room; a capped node
 *    hands the rest to roomier ones, so shares differ by at most one core
 *    (one CPU for SpreadByPCPUs) unless a node is full;
 *  - each share is taken by the accumulator inside its node (preferred
 *    CPUs first); what rounding leaves over (an odd FullPCPUs request) is
 *    taken from all remaining CPUs in LeastAllocated order.
 * Spreading over the widest set, not the fewest nodes that fit, is what
 * the strategy is for in Koordinator: it keeps per-node memory and CPU
 * headroom balanced for NUMA-bound pods (GPU, NIC) that come later.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "koord_alloc.h"
#include "koord_alloc_acc.h"

static const char *const bind_names[KOORD__BIND_COUNT] = {
	[KOORD_BIND_FULL_PCPUS] = "FullPCPUs",
	[KOORD_BIND_SPREAD_BY_PCPUS] = "SpreadByPCPUs",
	[KOORD_BIND_FULL_PCPUS_ONLY] = "FullPCPUsOnly",
};

static const char *const excl_names[KOORD__EXCL_COUNT] = {
	[KOORD_EXCL_NONE] = "None",
	[KOORD_EXCL_PCPU] = "PCPULevel",
	[KOORD_EXCL_NUMA] = "NUMANodeLevel",
};

static const char *const numa_names[KOORD__NUMA_COUNT] = {
	[KOORD_NUMA_MOST_ALLOCATED] = "MostAllocated",
	[KOORD_NUMA_LEAST_ALLOCATED] = "LeastAllocated",
	[KOORD_NUMA_DISTRIBUTE_EVENLY] = "DistributeEvenly",
};

static int find_name(const char *const *names, unsigned n, const char *name)
{
	for (unsigned i = 0; name && i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

int koord_bind_policy_parse(const char *name, enum koord_bind_policy *ret)
{
	int i = find_name(bind_names, KOORD__BIND_COUNT, name);

	if (i < 0)
		return i;
	*ret = (enum koord_bind_policy)i;
	return 0;
}

int koord_excl_policy_parse(const char *name, enum koord_excl_policy *ret)
{
	int i = find_name(excl_names, KOORD__EXCL_COUNT, name);

	if (i < 0)
		return i;
	*ret = (enum koord_excl_policy)i;
	return 0;
}

int koord_numa_strategy_parse(const char *name, enum koord_numa_strategy *ret)
{
	int i = find_name(numa_names, KOORD__NUMA_COUNT, name);

	if (i < 0)
		return i;
	*ret = (enum koord_numa_strategy)i;
	return 0;
}

const char *koord_bind_policy_name(enum koord_bind_policy v)
{
	return (unsigned)v < KOORD__BIND_COUNT ? bind_names[v] : "unknown";
}

const char *koord_excl_policy_name(enum koord_excl_policy v)
{
	return (unsigned)v < KOORD__EXCL_COUNT ? excl_names[v] : "unknown";
}

const char *koord_numa_strategy_name(enum koord_numa_strategy v)
{
	return (unsigned)v < KOORD__NUMA_COUNT ? numa_names[v] : "unknown";
}

void koord_usage_add(struct koord_cpu_usage *usage, const struct cpumask *cpus,
		     enum koord_excl_policy excl)
{
	int cpu;

	cpumask_for_each(cpu, cpus) {
		if (usage[cpu].refs < UINT8_MAX)
			usage[cpu].refs++;
		usage[cpu].excl = (uint8_t)excl;
	}
}

void koord_usage_release(struct koord_cpu_usage *usage, const struct cpumask *cpus)
{
	int cpu;

	cpumask_for_each(cpu, cpus) {
		if (usage[cpu].refs)
			usage[cpu].refs--;
		if (!usage[cpu].refs)
			usage[cpu].excl = KOORD_EXCL_NONE;
	}
}

void koord_usage_available(const struct alloc_topo *t, const struct koord_cpu_usage *usage,
			   unsigned max_ref_count, struct cpumask *ret)
{
	struct cpumask out = t->cpus;
	unsigned cpu;

	if (usage)
		koord_each_cpu(cpu, &t->cpus)
			if (usage[cpu].refs >= max_ref_count)
				cpumask_clear(&out, cpu);
	if (!max_ref_count)
		cpumask_zero(&out);
	*ret = out;
}

static int fail(char *reason, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (len) {
		va_start(ap, fmt);
		vsnprintf(reason, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int check_request(const struct alloc_topo *t, const struct koord_request *req,
			 char *reason, size_t len)
{
	if (!t->cpus_per_core)
		return fail(reason, len, -EINVAL, "topology has no CPUs");
	if ((unsigned)req->bind >= KOORD__BIND_COUNT)
		return fail(reason, len, -EINVAL, "unknown CPU bind policy %d", (int)req->bind);
	if ((unsigned)req->excl >= KOORD__EXCL_COUNT)
		return fail(reason, len, -EINVAL, "unknown CPU exclusive policy %d",
			    (int)req->excl);
	if ((unsigned)req->numa >= KOORD__NUMA_COUNT)
		return fail(reason, len, -EINVAL, "unknown NUMA allocate strategy %d",
			    (int)req->numa);
	if (!req->max_ref_count)
		return fail(reason, len, -EINVAL, "max_ref_count must be at least 1");
	return 0;
}

/*
 * CPUs of in whose core has cpus_per_core CPUs in in
 * (filterCPUsByRequiredCPUBindPolicy). cpus_per_core is the SMT width, so
 * a core narrower than it (a sibling offline) never qualifies: it would
 * leave FullPCPUsOnly a remainder that splits a core. in may be ret.
 */
static void whole_cores(const struct alloc_topo *t, const struct cpumask *in, struct cpumask *ret)
{
	uint16_t cnt[CPUSETD_MAX_CPUS];
	struct cpumask out;
	unsigned cpu;

	memset(cnt, 0, t->n_cores * sizeof(cnt[0]));
	koord_each_cpu(cpu, in)
		if (cpumask_test(&t->cpus, cpu))
			cnt[t->core_of[cpu]]++;
	cpumask_zero(&out);
	koord_each_cpu(cpu, in)
		if (cpumask_test(&t->cpus, cpu) && cnt[t->core_of[cpu]] == t->cpus_per_core)
			cpumask_set(&out, cpu);
	*ret = out;
}

static bool is_whole_cores(const struct alloc_topo *t, const struct cpumask *cpus)
{
	struct cpumask whole;

	whole_cores(t, cpus, &whole);
	return cpumask_equal(&whole, cpus);
}

/*
 * takePreferredCPUs: the preferred CPUs that are usable go first, the
 * accumulator choosing among them when there are more than needed; the
 * rest comes from the other usable CPUs.
 */
static int take_preferred(const struct koord_acc_args *a, const struct cpumask *avail,
			  const struct cpumask *preferred, unsigned n, struct cpumask *ret)
{
	struct cpumask pref, rest, more;
	unsigned np;
	int r;

	if (!preferred)
		return koord_acc_take(a, avail, n, ret);
	cpumask_and(&pref, avail, preferred);
	np = cpumask_weight(&pref);
	if (!np)
		return koord_acc_take(a, avail, n, ret);
	if (n <= np)
		return koord_acc_take(a, &pref, n, ret);
	cpumask_andnot(&rest, avail, &pref);
	r = koord_acc_take(a, &rest, n - np, &more);
	if (r < 0)
		return r;
	cpumask_or(ret, &pref, &more);
	return 0;
}

/* One NUMA node's part of a DistributeEvenly request. */
struct share {
	unsigned node;		/* dense index */
	unsigned room;		/* CPUs it can give */
	unsigned quota;		/* CPUs it gives */
};

static bool holds_numa_exclusive(const struct alloc_topo *t, const struct koord_cpu_usage *usage,
				 unsigned node)
{
	unsigned cpu;

	koord_each_cpu(cpu, &t->node_cpus[node])
		if (usage[cpu].refs && usage[cpu].excl == KOORD_EXCL_NUMA)
			return true;
	return false;
}

/* Nodes taking part, with their room; see "DistributeEvenly" above. */
static unsigned pick_nodes(const struct koord_acc_args *a, const struct cpumask *avail,
			   const struct koord_request *req, struct share *s)
{
	bool avoid = req->excl == KOORD_EXCL_NUMA && a->usage;
	struct cpumask in_node, whole;
	unsigned k, usable;

	whole_cores(a->t, avail, &whole);
	for (;;) {
		k = 0;
		usable = 0;
		for (unsigned i = 0; i < a->t->n_nodes; i++) {
			if (avoid && holds_numa_exclusive(a->t, a->usage, i))
				continue;
			cpumask_and(&in_node, &a->t->node_cpus[i],
				    req->bind == KOORD_BIND_SPREAD_BY_PCPUS ? avail : &whole);
			s[k] = (struct share){ .node = i, .room = cpumask_weight(&in_node) };
			cpumask_and(&in_node, &a->t->node_cpus[i], avail);
			usable += cpumask_weight(&in_node);
			if (s[k].room)
				k++;
		}
		if (!avoid || usable >= req->n)
			return k;
		avoid = false;
	}
}

/* Fills the quotas; returns what no node could take. */
static unsigned split(struct share *s, unsigned k, unsigned n, unsigned unit)
{
	for (unsigned i = 1; i < k; i++)	/* least room first, then node id */
		for (unsigned j = i; j > 0 && s[j - 1].room > s[j].room; j--) {
			struct share x = s[j];

			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	for (unsigned i = 0; i < k; i++) {
		unsigned q = n / (k - i);

		q -= q % unit;
		s[i].quota = q < s[i].room ? q : s[i].room;
		n -= s[i].quota;
	}
	return n;
}

static int take_evenly(const struct koord_acc_args *a, const struct cpumask *avail,
		       const struct koord_request *req, struct cpumask *ret)
{
	unsigned unit = req->bind == KOORD_BIND_SPREAD_BY_PCPUS ? 1 : a->t->cpus_per_core;
	struct koord_acc_args per_node = *a;
	struct share s[ALLOC_MAX_NODES];
	struct cpumask result, part, got;
	unsigned k = pick_nodes(a, avail, req, s), left = split(s, k, req->n, unit);
	int r;

	/* inside one node the strategy only orders cores; emptiest first */
	per_node.most = false;
	cpumask_zero(&result);
	for (unsigned i = 0; i < k; i++) {
		if (!s[i].quota)
			continue;
		cpumask_and(&part, avail, &a->t->node_cpus[s[i].node]);
		r = take_preferred(&per_node, &part, req->preferred, s[i].quota, &got);
		if (r < 0)
			return r;
		cpumask_or(&result, &result, &got);
	}
	if (left) {
		cpumask_andnot(&part, avail, &result);
		r = take_preferred(&per_node, &part, req->preferred, left, &got);
		if (r < 0)
			return r;
		cpumask_or(&result, &result, &got);
	}
	*ret = result;
	return 0;
}

int koord_alloc(const struct alloc_topo *t, const struct cpumask *available,
		const struct koord_cpu_usage *usage, const struct koord_request *req,
		struct cpumask *ret, char *reason, size_t len)
{
	bool only = req->bind == KOORD_BIND_FULL_PCPUS_ONLY;
	struct koord_request wreq = *req;
	struct koord_acc_args a;
	struct cpumask usable, got, pref;
	int r = check_request(t, req, reason, len);

	if (r < 0)
		return r;
	if (only && req->n % t->cpus_per_core)
		return fail(reason, len, -EINVAL,
			    "FullPCPUsOnly: %u CPUs is not a multiple of the %u CPUs of a core",
			    req->n, t->cpus_per_core);
	koord_usage_available(t, usage, req->max_ref_count, &usable);
	cpumask_and(&usable, &usable, available);
	if (only) {
		whole_cores(t, &usable, &usable);
		if (req->preferred) {
			/* half a preferred core would break the whole-core rule */
			cpumask_and(&pref, req->preferred, &usable);
			whole_cores(t, &pref, &pref);
			wreq.preferred = &pref;
			req = &wreq;
		}
	}
	if (req->n > cpumask_weight(&usable))
		return fail(reason, len, -ENOSPC, "not enough CPUs: %u wanted, %u usable%s",
			    req->n, cpumask_weight(&usable), only ? " in whole free cores" : "");
	a = (struct koord_acc_args){
		.t = t,
		.usage = usage,
		.max_refs = req->max_ref_count,
		.spread = req->bind == KOORD_BIND_SPREAD_BY_PCPUS,
		.excl = req->excl,
		.most = req->numa == KOORD_NUMA_MOST_ALLOCATED,
	};
	if (req->numa == KOORD_NUMA_DISTRIBUTE_EVENLY)
		r = take_evenly(&a, &usable, req, &got);
	else
		r = take_preferred(&a, &usable, req->preferred, req->n, &got);
	if (r < 0)
		return fail(reason, len, r, "failed to allocate %u CPUs", req->n);
	/* cannot happen with whole cores in, whole multiples asked; cheap to be sure */
	if (only && !is_whole_cores(t, &got))
		return fail(reason, len, -ENOSPC, "FullPCPUsOnly: no whole-core answer for %u CPUs",
			    req->n);
	if (len)
		reason[0] = '\0';
	*ret = got;
	return 0;
}

int koord_spread_order(const struct alloc_topo *t, const struct cpumask *available,
		       const struct koord_cpu_usage *usage, const struct koord_request *req,
		       unsigned *ret_order, size_t cap)
{
	uint16_t order[CPUSETD_MAX_CPUS];
	struct koord_acc_args a = {
		.t = t,
		.usage = usage,
		.max_refs = req->max_ref_count,
		.spread = true,
		.excl = KOORD_EXCL_NONE,
		.most = req->numa == KOORD_NUMA_MOST_ALLOCATED,
	};
	struct cpumask usable;
	unsigned n;
	int r = check_request(t, req, NULL, 0);

	if (r < 0)
		return r;
	koord_usage_available(t, usage, req->max_ref_count, &usable);
	cpumask_and(&usable, &usable, available);
	n = koord_acc_spread_order(&a, &usable, order);
	for (unsigned i = 0; i < n && i < cap; i++)
		ret_order[i] = order[i];
	return n > cap ? -ENOSPC : (int)n;
}
