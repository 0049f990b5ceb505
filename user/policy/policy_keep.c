// SPDX-License-Identifier: Apache-2.0
/*
 * Which CPUs a running container may keep (PRD §3.4): kubelet's
 * checkpoint or its live cpuset, when they are still free for it, so a
 * restart or takeover never moves a running exclusive container.
 */
#include "policy_internal.h"

/* cur (online CPUs) is free for ki: nobody else's, not reserved, isolated
 * only on opt-in, leaves the pool its minimum, NUMA nodes known. */
static bool can_keep_some(const struct policy *p, const struct klass_info *ki,
			  const struct cpumask *cur)
{
	struct cpumask taken, nodes;
	struct policy_decision scratch;

	policy_reserved(p, &taken);
	cpumask_or(&taken, &taken, &p->cfg.reserved_cpus);
	if (!ki->prefer_isolated)
		cpumask_or(&taken, &taken, &p->topo->isolated);
	if (cpumask_intersects(cur, &taken))
		return false;
	return policy_check_pool(p, cur, &scratch) == 0 &&
	       topo_nodes_of(p->topo, cur, &nodes) == 0;
}

static bool can_keep(const struct policy *p, const struct klass_info *ki,
		     const struct cpumask *cur)
{
	if (!cur || cpumask_weight(cur) != ki->n || !cpumask_subset(cur, &p->topo->online))
		return false;
	return can_keep_some(p, ki, cur);
}

/* A running container's set that lost CPUs to hotplug: its online part,
 * 1..N-1 CPUs, is kept and refilled after recovery (policy_hotplug.c).
 * Into *ret; false when that does not apply. */
static bool can_keep_online(const struct policy *p, const struct klass_info *ki,
			    const struct cpumask *cur, struct cpumask *ret)
{
	unsigned n;

	if (!cur)
		return false;
	cpumask_and(ret, cur, &p->topo->online);
	n = cpumask_weight(ret);
	return n && n < ki->n && cpumask_subset(cur, &p->topo->present) &&
	       can_keep_some(p, ki, ret);
}

const struct cpumask *policy_keepable(const struct policy *p, const struct klass_info *ki,
				      const struct policy_request *req,
				      const struct cpumask *current, struct cpumask *buf)
{
	if (can_keep(p, ki, req->kubelet_cpus))
		return req->kubelet_cpus;
	if (can_keep(p, ki, current))
		return current;
	return req->running && can_keep_online(p, ki, current, buf) ? buf : NULL;
}
