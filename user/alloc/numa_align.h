/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NUMA alignment with kubelet Topology Manager semantics (pure: no I/O,
 * no logging, no globals): hint generation for exclusive CPUs, the merge
 * of several providers' hints, and the admission rules of the policies
 * none / best-effort / restricted / single-numa-node, for pod or
 * container scope.
 *
 * Sources: KEP-693 "Node Topology Manager"; kubelet Topology
 * Manager walk-through) §3.2 "TopologyHints", "HintProviders",
 * "Policy.Merge"; kubelet pkg/kubelet/cm/topologymanager (policy.go
 * HintMerger, policy_{none,best_effort,restricted,single_numa_node}.go,
 * policy_options.go, numa_info.go, bitmask/bitmask.go) and
 * pkg/kubelet/cm/cpumanager/policy_static.go (generateCPUTopologyHints,
 * podGuaranteedCPUs).
 *
 * A NUMA mask is a struct cpumask of kernel node ids (bit n = node n). In
 * a hint, an empty mask is kubelet's nil affinity: "no NUMA preference".
 * kubelet refuses machines with more than 8 NUMA nodes because it lists
 * every node combination; here the CPU hints are kept implicit (struct
 * numa_capacity) and the merge reasons on them directly, so up to
 * ALLOC_MAX_NODES (64) nodes give the answer the full listing would
 * (numa_merge.c explains why).
 *
 * Errors: -EINVAL bad input; -EXDEV "refused by the policy" (the request
 * cannot be served with the NUMA locality the policy demands: think
 * "cross-node"); -E2BIG past a documented work bound; -EOPNOTSUPP for a
 * provider shape the merge cannot reason on; -ENOMEM.
 */
#ifndef CPUSETD_NUMA_ALIGN_H
#define CPUSETD_NUMA_ALIGN_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloc_topo.h"
#include "user/base/cpumask.h"

/* kubelet --topology-manager-policy. */
enum numa_policy {
	NUMA_POLICY_NONE,
	NUMA_POLICY_BEST_EFFORT,
	NUMA_POLICY_RESTRICTED,
	NUMA_POLICY_SINGLE_NUMA_NODE,
};

/* kubelet --topology-manager-scope. */
enum numa_scope {
	NUMA_SCOPE_CONTAINER,
	NUMA_SCOPE_POD,
};

#define NUMA_MAX_PROVIDERS	16		/* hint lists in one merge */
#define NUMA_MAX_PERMUTATIONS	(1u << 20)	/* cross product of explicit lists */
#define NUMA_CLOSEST_MAX_SUBSETS (1u << 17)	/* prefer-closest: masks compared per search */

/* One topology hint: nodes = kernel node ids, empty = no NUMA preference. */
struct numa_hint {
	struct cpumask nodes;
	bool preferred;
};

/*
 * The hints of a per-node quantity, kept implicit: a mask M is a hint when
 * it includes every node of `must` and base + sum of avail[i] over M >=
 * request; it is preferred when it has exactly min_affinity nodes. Indexes
 * are alloc_topo dense node indexes (t->node_id[i] is the kernel id).
 * Built by numa_capacity_hints() / numa_cpu_hints(); read-only after.
 */
struct numa_capacity {
	uint64_t avail[ALLOC_MAX_NODES];	/* free units per node now */
	uint64_t base;			/* units already owned, counted for any mask */
	uint64_t request;		/* units asked for, > 0 */
	uint64_t must;			/* dense nodes every hint includes */
	unsigned min_affinity;		/* nodes needed on the empty machine */
	unsigned min_fit;		/* nodes needed now; 0 = no mask fits */
};

enum numa_hints_kind {
	NUMA_HINTS_ANY,		/* provider has no preference (kubelet nil list) */
	NUMA_HINTS_LIST,	/* explicit list; n == 0 = nothing can be aligned */
	NUMA_HINTS_CAPACITY,	/* implicit, see struct numa_capacity */
};

/* One provider's hints for one resource. */
struct numa_hints {
	enum numa_hints_kind kind;
	const struct numa_hint *list;	/* LIST: n hints (borrowed) */
	size_t n;
	struct numa_capacity cap;	/* CAPACITY */
	char what[48];			/* for messages, e.g. "6 CPUs"; may be "" */
};

/* Merge options (kubelet --topology-manager-policy-options). */
struct numa_opts {
	/* prefer-closest-numa-nodes: among equally wide masks, lowest mean
	 * distance wins before the lowest mask. Ignored by single-numa-node. */
	bool prefer_closest;
	/* Node distances (sysfs nodeN/distance) by dense node index; needed
	 * with prefer_closest. */
	const uint8_t (*distance)[ALLOC_MAX_NODES];
};

/* What a pod's container asks for (data in for the scope helpers). */
enum numa_container_kind {
	NUMA_CONTAINER_APP,
	NUMA_CONTAINER_INIT,
	NUMA_CONTAINER_SIDECAR,		/* init container with restartPolicy Always */
};

struct numa_container {
	unsigned cpus;		/* exclusive CPUs (Guaranteed, integer); 0 = none */
	enum numa_container_kind kind;
};

/*
 * Parses a policy name: kubelet's "none", "best-effort", "restricted",
 * "single-numa-node" or Koordinator's "None", "BestEffort", "Restricted",
 * "SingleNUMANode" (exact spelling). Returns 0 and *ret, -EINVAL for
 * anything else (NULL too); *ret untouched on error.
 */
int numa_policy_parse(const char *s, enum numa_policy *ret);

/* kubelet's spelling of p ("best-effort"...), "?" when out of range. */
const char *numa_policy_name(enum numa_policy p);

/* Parses "container" or "pod" (kubelet spelling). 0, or -EINVAL. */
int numa_scope_parse(const char *s, enum numa_scope *ret);
const char *numa_scope_name(enum numa_scope s);

/*
 * Hints of `request` units of a per-node quantity (CPUs, memory, devices):
 * avail[i] free and total[i] installed on dense node i < t->n_nodes; base
 * units already owned by the container (restart, resize) sitting on the
 * nodes `must` (kernel ids), which every hint must then include.
 * min_affinity counts nodes by total[] (the empty machine), as kubelet's
 * generateCPUTopologyHints does; min_fit by what is free now.
 * request == 0 gives kind ANY (kubelet: no hints = no preference).
 * Returns 0 and *ret; -EINVAL when t has no node or must names a node t
 * lacks. *ret untouched on error.
 */
int numa_capacity_hints(const struct alloc_topo *t, const uint64_t *avail,
			const uint64_t *total, uint64_t base, const struct cpumask *must,
			uint64_t request, struct numa_hints *ret);

/*
 * The CPU manager's hints (kubelet policy_static.go
 * generateCPUTopologyHints) for n exclusive CPUs: avail = CPUs free for
 * exclusive use, reusable = CPUs the container already holds or reuses
 * from its init containers (may be NULL or empty; counted once if also in
 * avail). Every mask holding the reusable CPUs' nodes and >= n of
 * avail ∪ reusable is a hint; preferred = as many nodes as the fewest
 * that hold n CPUs of the whole machine. ret->what = "n CPUs".
 * Returns 0 and *ret (kind ANY for n == 0, CAPACITY otherwise, min_fit 0
 * when nothing fits); -EINVAL for a CPU outside t->cpus.
 */
int numa_cpu_hints(const struct alloc_topo *t, const struct cpumask *avail,
		   const struct cpumask *reusable, unsigned n, struct numa_hints *ret);

/*
 * Lists the hints of a CAPACITY provider the way kubelet does: masks by
 * increasing node count, then in kubelet's combination order (ascending
 * node lists), only those with at most max_nodes nodes (0 = any size).
 * For display and tests: at 64 nodes the full list is astronomically long.
 * Returns the number written to out[0..cap); -ENOSPC when more than cap
 * hints exist (out then holds the first cap); -EINVAL for another kind;
 * -E2BIG when more than 2^24 masks would have to be looked at.
 */
int numa_hints_expand(const struct alloc_topo *t, const struct numa_hints *h,
		      unsigned max_nodes, struct numa_hint *out, size_t cap);

/*
 * The merged best hint of providers[0..n) under policy (kubelet
 * Policy.Merge): the cross product of the providers' hints, each
 * permutation ANDed, preferred only when every hint in it is preferred and
 * all its masks are equal; the best is the narrowest preferred one (fewer
 * nodes, then lowest mask, or with prefer_closest lowest mean distance
 * before lowest mask); with no preferred one, kubelet's rule for
 * non-preferred hints (widest need of any provider first). single-numa-node
 * first keeps only one-node preferred hints and "no preference" ones, and
 * reports the all-nodes mask as no preference. none gives {empty, false}.
 * At most one provider may be CAPACITY (the others are explicit lists, or
 * expand them first); explicit masks must name nodes of t. opts may be
 * NULL. Admission is numa_policy_admits(policy, ret).
 * Returns 0 and *ret; -EINVAL bad input (or prefer_closest without
 * distances); -EOPNOTSUPP for two CAPACITY providers; -E2BIG past
 * NUMA_MAX_PROVIDERS, NUMA_MAX_PERMUTATIONS or, for prefer_closest,
 * NUMA_CLOSEST_MAX_SUBSETS; -ENOMEM. *ret untouched on error.
 */
int numa_merge(const struct alloc_topo *t, enum numa_policy policy,
	       const struct numa_opts *opts, const struct numa_hints *providers,
	       size_t n, struct numa_hint *ret);

/* kubelet canAdmitPodResult: none and best-effort always, restricted and
 * single-numa-node only a preferred hint. Cannot fail. */
bool numa_policy_admits(enum numa_policy policy, const struct numa_hint *best);

/*
 * numa_merge() followed by the policy's admission rule.
 * Returns 0 and *ret (the hint to allocate with); -EXDEV when the policy
 * refuses, with one line in why (if why_len > 0), e.g. "topology affinity
 * error: no preferred NUMA alignment for 6 CPUs under policy restricted
 * (best: nodes 0-1)"; or numa_merge()'s errors. *ret untouched on error.
 */
int numa_admit(const struct alloc_topo *t, enum numa_policy policy,
	       const struct numa_opts *opts, const struct numa_hints *providers,
	       size_t n, struct numa_hint *ret, char *why, size_t why_len);

/*
 * Exclusive CPUs of a whole pod (kubelet podGuaranteedCPUs): the larger of
 * the app containers plus sidecars, and of each init container plus the
 * sidecars started before it. Cannot fail.
 */
unsigned numa_pod_cpus(const struct numa_container *c, size_t n);

/*
 * Topology Manager admission of a pod's CPU requests, c[0..n) in pod spec
 * order (init and sidecar containers first, as kubelet walks them).
 * Scope pod: one merge for numa_pod_cpus(), every ret[i] gets that hint.
 * Scope container: one merge per container, each against the same avail
 * (kubelet allocates between containers; a caller that does so calls
 * numa_admit per container instead). Policy none admits with empty hints.
 * Returns 0 and ret[0..n); -EXDEV refused (why names the container index
 * in container scope); -ENOMEM; numa_cpu_hints()/numa_merge() errors.
 * ret untouched on error.
 */
int numa_admit_pod(const struct alloc_topo *t, enum numa_policy policy,
		   enum numa_scope scope, const struct numa_opts *opts,
		   const struct cpumask *avail, const struct cpumask *reusable,
		   const struct numa_container *c, size_t n, struct numa_hint *ret,
		   char *why, size_t why_len);

#endif
