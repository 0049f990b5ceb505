// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's static CPU manager policy around the take algorithms
 * (policy_static.go): option dispatch (takeByTopology), Topology Manager
 * NUMA hints (allocateCPUs), full-pcpus-only SMT checks and the
 * keep-what-you-hold rule (Allocate). The CPU manager state (shared pool,
 * assignments) stays with the caller; these functions only answer.
 */
#include <errno.h>
#include "kube_alloc.h"

int kube_take(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
	      const struct kube_alloc_opts *opts, struct cpumask *ret, char *reason, size_t len)
{
	struct kube_alloc_opts o = *opts;

	if (!o.distribute_across_numa)
		return kube_take_packed(t, avail, n, &o, ret, reason, len);
	/* whole cores per group only when full-pcpus-only asks for them;
	 * kubelet refuses align-by-socket together with this option */
	o.cpu_group_size = o.full_pcpus_only && t->cpus_per_core ? t->cpus_per_core : 1;
	o.align_by_socket = false;
	return kube_take_distributed(t, avail, n, &o, ret, reason, len);
}

/* kubelet getAlignedCPUs: the CPUs of cpus in the hinted NUMA nodes, or in
 * their whole sockets with align-by-socket. */
static void aligned_cpus(const struct alloc_topo *t, const struct cpumask *nodes, bool by_socket,
			 const struct cpumask *cpus, struct cpumask *ret)
{
	struct cpumask in_nodes, area;
	int cpu;

	alloc_topo_cpus_of_nodes(t, nodes, &in_nodes);
	area = in_nodes;
	if (by_socket)
		cpumask_for_each(cpu, &in_nodes)
			cpumask_or(&area, &area, &t->socket_cpus[t->socket_of[cpu]]);
	cpumask_and(ret, cpus, &area);
}

int kube_allocate_cpus(const struct alloc_topo *t, const struct kube_static_req *req,
		       struct cpumask *ret, char *reason, size_t len)
{
	struct cpumask pool = *req->available, result, got, rest;
	unsigned have;
	int r;

	if (req->reusable)
		cpumask_or(&pool, &pool, req->reusable);
	cpumask_zero(&result);
	if (req->numa_affinity) {
		struct cpumask aligned;
		unsigned k;

		aligned_cpus(t, req->numa_affinity, req->opts.align_by_socket, &pool, &aligned);
		k = cpumask_weight(&aligned);
		r = kube_take(t, &aligned, req->n < k ? req->n : k, &req->opts, &result, reason,
			      len);
		if (r < 0)
			return r;
	}
	have = cpumask_weight(&result);
	cpumask_andnot(&rest, &pool, &result);
	r = kube_take(t, &rest, req->n > have ? req->n - have : 0, &req->opts, &got, reason, len);
	if (r < 0)
		return r;
	cpumask_or(ret, &result, &got);
	return 0;
}

/* kubelet enforceSMTAlignment (KEP-2625): whole cores only, and only from
 * cores without reserved CPUs (a reserved sibling would split a core).
 * CPUs per core is the SMT width (alloc_topo.h), so a request that is a
 * multiple of CPUs / cores but not of the width (15 on SMT4 with a
 * sibling offline, where kubelet's own division gives 3) is refused here,
 * in kubelet's words. */
static int smt_check(const struct alloc_topo *t, const struct kube_static_req *req,
		     char *reason, size_t len)
{
	unsigned cpc = t->cpus_per_core, phys;
	struct cpumask busy, free_cores;
	int cpu;

	if (!req->opts.full_pcpus_only || !cpc)
		return 0;
	if (req->n % cpc) {
		kube__reason(reason, len, "SMT Alignment Error: requested %u cpus not multiple "
			     "cpus per core = %u", req->n, cpc);
		return -EDOM;
	}
	cpumask_zero(&busy);
	if (req->reserved)
		cpumask_for_each(cpu, req->reserved)
			if (cpumask_test(&t->cpus, (unsigned)cpu))
				cpumask_or(&busy, &busy, &t->core_cpus[t->core_of[cpu]]);
	cpumask_andnot(&free_cores, req->available, &busy);
	phys = cpumask_weight(&free_cores);
	if (req->n > phys) {
		kube__reason(reason, len, "SMT Alignment Error: not enough free physical CPUs: "
			     "available physical CPUs = %u, requested CPUs = %u, CPUs per core = %u",
			     phys, req->n, cpc);
		return -EDOM;
	}
	return 0;
}

/*
 * full-pcpus-only leaves out the cores narrower than the SMT width (a
 * sibling offline, a hybrid part's cores without SMT): kubelet's take
 * claims whole NUMA nodes and sockets first, and a narrow core inside one
 * leaves a remainder that is not whole cores, so the last core would be
 * split. kubelet never sees this, as CPUs / cores hides the width there.
 * On a uniform machine nothing is left out.
 */
static void whole_width_only(const struct alloc_topo *t, struct kube_static_req *req,
			     struct cpumask *avail, struct cpumask *reuse)
{
	if (!req->opts.full_pcpus_only)
		return;
	cpumask_andnot(avail, req->available, &t->narrow);
	req->available = avail;
	if (req->reusable) {
		cpumask_andnot(reuse, req->reusable, &t->narrow);
		req->reusable = reuse;
	}
}

int kube_static_allocate(const struct alloc_topo *t, const struct kube_static_req *req,
			 struct cpumask *ret, char *reason, size_t len)
{
	struct kube_static_req wreq = *req;
	struct cpumask avail, reuse;
	int r;

	if (!req->n)
		return KUBE_ALLOC_SHARED;
	whole_width_only(t, &wreq, &avail, &reuse);
	r = smt_check(t, &wreq, reason, len);
	if (r < 0)
		return r;
	if (req->assigned) {
		*ret = *req->assigned;
		return 0;
	}
	return kube_allocate_cpus(t, &wreq, ret, reason, len);
}
