/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How an integer container's exclusive CPUs are picked among the free
 * ones. Two engines, both pure:
 *   Koordinator (default): bind policy FullPCPUs / SpreadByPCPUs /
 *     node-level FullPCPUsOnly, exclusive policy PCPULevel /
 *     NUMANodeLevel, NUMA strategy MostAllocated / LeastAllocated /
 *     DistributeEvenly (koord_alloc.h; the Koordinator proposal).
 *   kubelet-compatible: the static CPU manager's choices with its policy
 *     options (kube_alloc.h), so a node moved from kubelet's static policy
 *     sees the same placements.
 * Either way, a NUMA alignment policy (None / BestEffort / Restricted /
 * SingleNUMANode, kubelet Topology Manager semantics, numa_align.h) picks
 * the narrowest NUMA mask first, and may refuse.
 */
#ifndef CPUSETD_POLICY_ALLOC_H
#define CPUSETD_POLICY_ALLOC_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/alloc/alloc_topo.h"
#include "user/base/cpumask.h"
#include "user/alloc/koord_alloc.h"
#include "user/alloc/kube_alloc.h"
#include "user/meta/meta.h"
#include "user/alloc/numa_align.h"

/* kubelet --cpu-manager-policy-options (KEP-2625 and followers). */
struct policy_kubelet_options {
	bool full_pcpus_only;
	bool distribute_across_numa;
	bool distribute_across_cores;
	bool align_by_socket;
	bool prefer_align_by_uncore;
};

struct policy_alloc_config {
	enum koord_bind_policy bind;		/* cpu_bind_policy */
	enum koord_excl_policy exclusive;	/* cpu_exclusive_policy */
	enum koord_numa_strategy numa;		/* numa_allocate_strategy */
	enum numa_policy align;			/* numa_topology_alignment_policy */
	bool pod_scope;				/* topology_manager_scope = pod */
	bool kubelet_compat;
	struct policy_kubelet_options kubelet;
};

struct policy_alloc_req {
	unsigned n;				/* CPUs wanted, >= 1 */
	struct cpumask free;			/* CPU ids it may take */
	const struct cpumask *reserved;		/* reserved_cpus (kubelet), or NULL */
	const struct pod_policy_ann *pod;	/* resource-spec preferences, or NULL */
	/* Exclusive CPUs held, by CPU id (CPUSETD_MAX_CPUS entries): refs 1
	 * and the exclusive policy they were given; NULL = none. */
	const struct koord_cpu_usage *usage;
	/* Pod scope: the pod's NUMA nodes chosen for an earlier container
	 * (has_affinity), else the whole pod's CPUs to align for (0 = n). */
	bool has_affinity;
	struct cpumask affinity;		/* kernel node ids */
	unsigned pod_n;
	/* In-place resize (kubelet InPlacePodVerticalScaling): the CPUs the
	 * container holds (also in free) and the baseline it must keep when
	 * shrinking; NULL = a fresh allocation. */
	const struct cpumask *allocated;
	const struct cpumask *baseline;
};

struct policy_alloc_result {
	struct cpumask cpus;			/* n CPU ids */
	struct cpumask nodes;			/* the NUMA mask aligned to (node ids) */
	enum koord_excl_policy exclusive_policy;	/* the one used */
};

/*
 * Picks req->n CPUs out of req->free on t by c, honouring the pod's
 * resource-spec preferences (preferredCPUBindPolicy,
 * preferredCPUExclusivePolicy) over the node defaults.
 * With req->allocated (a resize), the answer keeps the allocated CPUs when
 * growing and req->baseline when shrinking, and grows around them (same
 * NUMA node, socket, cache, core first), by kubelet's resize algorithms
 * (takeByTopologyNUMAPackedForResize, or the distributed one with
 * distribute-cpus-across-numa) for either engine; the NUMA hints count
 * the allocated CPUs as reusable, so the mask holds their nodes.
 * Returns 0 and *ret; -ENOSPC not enough free CPUs; -EDOM not whole
 * physical cores under FullPCPUsOnly / full-pcpus-only; -EXDEV refused by
 * the NUMA alignment policy; -ERANGE a shrink below the baseline.
 * reason[len] gets one line on error.
 */
int policy_alloc_choose(const struct alloc_topo *t, const struct policy_alloc_config *c,
			const struct policy_alloc_req *req, struct policy_alloc_result *ret,
			char *reason, size_t len);

/*
 * Checks the names in the pod's resource-spec (preferredCPUBindPolicy
 * FullPCPUs|SpreadByPCPUs, preferredCPUExclusivePolicy
 * None|PCPULevel|NUMANodeLevel). Returns 0, or -EINVAL with reason.
 */
int policy_alloc_check_spec(const struct pod_policy_ann *a, char *reason, size_t len);

/* "full-pcpus-only=true,align-by-socket=false,...": kubelet's option list.
 * Unknown options or values are -EINVAL (reason names it). */
int policy_kubelet_options_parse(const char *s, struct policy_kubelet_options *ret,
				 char *reason, size_t len);

#endif
