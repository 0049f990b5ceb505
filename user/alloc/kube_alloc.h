/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet-compatible exclusive CPU choices: the static CPU manager policy
 * of the kubelet (pkg/kubelet/cm/cpumanager: cpu_assignment.go,
 * policy_static.go), re-derived in C so that cpusetd in kubelet-compatible
 * mode hands a container exactly the CPUs the kubelet would, tie-breaks
 * included.
 *
 * Pure: no I/O, no logging, no global state. Sets are CPU ids (struct
 * cpumask); topology questions go to struct alloc_topo, whose dense index
 * order is id order (kubelet breaks ties by id). Every function returns 0
 * or a negative errno; on error it writes kubelet's own message, one line,
 * to reason (when reason != NULL and len > 0) and leaves *ret untouched.
 *
 * Messages and errnos shared by the functions below:
 *   -ENOSPC "not enough cpus available to satisfy request: requested=N,
 *           available=M" (M counts the available set as given)
 *   -EINVAL "requested CPUs to be retained B are not a subset of reusable
 *           CPUs A" (resize), or a malformed request
 *   -EPROTO "accounting error, ..." (the distributed algorithm handed out
 *           the wrong number of CPUs; kubelet reports the same)
 */
#ifndef CPUSETD_KUBE_ALLOC_H
#define CPUSETD_KUBE_ALLOC_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloc_topo.h"
#include "user/base/cpumask.h"

enum kube_cpu_sorting {
	KUBE_SORT_PACKED,	/* fill a physical core before the next one (default) */
	KUBE_SORT_SPREAD,	/* one CPU per core first: distribute-cpus-across-cores */
};

/* The static policy options (kubelet --cpu-manager-policy-options). */
struct kube_alloc_opts {
	enum kube_cpu_sorting sorting;	/* KEP-4176 distribute-cpus-across-cores */
	bool prefer_align_uncore;	/* KEP-4800 prefer-align-cpus-by-uncorecache */
	bool distribute_across_numa;	/* KEP-2902 distribute-cpus-across-numa */
	bool full_pcpus_only;		/* KEP-2625 full-pcpus-only */
	bool align_by_socket;		/* KEP-3327 align-by-socket */
	/* CPUs handed out together by kube_take_distributed*() (0 means 1).
	 * The static policy sets it itself: CPUs per core with
	 * full-pcpus-only, else 1. */
	unsigned cpu_group_size;
};

/*
 * kubelet takeByTopologyNUMAPacked: n CPU ids out of avail, packed into as
 * few NUMA nodes, sockets, uncore caches (with prefer_align_uncore) and
 * physical cores as possible, smallest free element first.
 * Uses opts->sorting and opts->prefer_align_uncore only.
 * Returns 0 with *ret = the n CPUs (empty when n = 0); -ENOSPC.
 */
int kube_take_packed(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
		     const struct kube_alloc_opts *opts, struct cpumask *ret,
		     char *reason, size_t len);

/*
 * kubelet takeByTopologyNUMADistributed (KEP-2902): n CPUs spread evenly,
 * in groups of opts->cpu_group_size, over the fewest NUMA nodes that can
 * hold them, the leftover going where it keeps free CPUs balanced; falls
 * back to kube_take_packed (without uncore alignment) when n is not a
 * multiple of the group size or no NUMA combination works. Uses
 * opts->sorting, cpu_group_size and align_by_socket (prefer combinations
 * inside one socket).
 * Returns 0 with *ret; -ENOSPC; -EPROTO.
 */
int kube_take_distributed(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
			  const struct kube_alloc_opts *opts, struct cpumask *ret,
			  char *reason, size_t len);

/*
 * In-place resize of a container holding `allocated` (kubelet
 * takeByTopologyNUMAPackedForResize): the answer keeps `allocated` when
 * growing (n > |allocated|) or `baseline` when shrinking, and grows around
 * them (same NUMA node, socket, cache, core first). avail must include
 * `allocated` (on scale-down it usually is `allocated`). baseline must be
 * a subset of allocated; both may be empty (then it is a fresh take with
 * the resize orderings).
 * Returns 0 with *ret (a superset of the kept CPUs); -ENOSPC; -EINVAL.
 */
int kube_take_packed_resize(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
			    const struct cpumask *allocated, const struct cpumask *baseline,
			    const struct kube_alloc_opts *opts, struct cpumask *ret,
			    char *reason, size_t len);

/*
 * The distributed algorithm for in-place resize (kubelet
 * takeByTopologyNUMADistributedForResize): as kube_take_distributed, with
 * the kept CPUs counted in each NUMA node's share and every node holding
 * kept CPUs in the chosen combination; falls back to
 * kube_take_packed_resize. Inputs and errors as kube_take_packed_resize
 * plus -EPROTO.
 */
int kube_take_distributed_resize(const struct alloc_topo *t, const struct cpumask *avail,
				 unsigned n, const struct cpumask *allocated,
				 const struct cpumask *baseline, const struct kube_alloc_opts *opts,
				 struct cpumask *ret, char *reason, size_t len);

/*
 * kubelet staticPolicy.takeByTopology: kube_take_distributed when
 * opts->distribute_across_numa (groups of CPUs-per-core with
 * full_pcpus_only, else 1), otherwise kube_take_packed. Also how kubelet
 * picks reserved CPUs when only a count is configured:
 * kube_take(t, &t->cpus, count, ...). Errors as those two.
 */
int kube_take(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
	      const struct kube_alloc_opts *opts, struct cpumask *ret, char *reason, size_t len);

/* One container's request to the static policy. */
struct kube_static_req {
	/* Free exclusive-capable CPUs: kubelet's default (shared) cpuset
	 * minus reserved CPUs (GetAvailableCPUs). */
	const struct cpumask *available;
	/* Reserved CPUs (--reserved-cpus, or picked by kube_take). */
	const struct cpumask *reserved;
	/* CPUs of the pod's finished init containers that may be reused
	 * (kubelet cpusToReuse); NULL = none. */
	const struct cpumask *reusable;
	/* CPUs this container already holds in the state; NULL = none. */
	const struct cpumask *assigned;
	/* Topology Manager hint: kernel NUMA node ids; NULL = no hint. */
	const struct cpumask *numa_affinity;
	/* Exclusive CPUs wanted: the container's integer CPU request when
	 * the pod is Guaranteed; 0 when it is not (shared pool). */
	unsigned n;
	struct kube_alloc_opts opts;
};

/* kube_static_allocate: the container stays in the shared pool. */
#define KUBE_ALLOC_SHARED	1

/*
 * kubelet staticPolicy.allocateCPUs: CPUs in the hinted NUMA nodes (their
 * sockets with align_by_socket) first, the rest from the remaining
 * available ∪ reusable CPUs, each part by kube_take. Ignores req->reserved
 * and req->assigned; no SMT check.
 * Returns 0 with *ret; errors as kube_take.
 */
int kube_allocate_cpus(const struct alloc_topo *t, const struct kube_static_req *req,
		       struct cpumask *ret, char *reason, size_t len);

/*
 * kubelet StaticPolicy.Allocate for one container:
 *  - req->n == 0: returns KUBE_ALLOC_SHARED (positive), *ret untouched;
 *  - full-pcpus-only (KEP-2625): -EDOM when n is not a multiple of the
 *    CPUs per core, t->cpus_per_core, the SMT width ("SMT Alignment
 *    Error: requested N cpus not multiple cpus per core = C") or exceeds
 *    the free CPUs whose core has no reserved CPU ("SMT Alignment Error:
 *    not enough free physical CPUs: available physical CPUs = A,
 *    requested CPUs = N, CPUs per core = C"); the CPUs of cores narrower
 *    than C (t->narrow) are neither counted nor handed out;
 *  - a container that already holds CPUs keeps them: *ret = *assigned;
 *  - otherwise kube_allocate_cpus.
 * Returns 0 with *ret; KUBE_ALLOC_SHARED; -EDOM; errors of kube_take.
 */
int kube_static_allocate(const struct alloc_topo *t, const struct kube_static_req *req,
			 struct cpumask *ret, char *reason, size_t len);

/*
 * Internal to user/kube_alloc*.c, not an API.
 */

/* The CPUs a resize keeps (allocated when growing or unchanged, baseline
 * when shrinking), into *ret; -EINVAL with the kubelet message when
 * baseline is not a subset of allocated. */
int kube__retained(const struct cpumask *allocated, const struct cpumask *baseline, unsigned n,
		   struct cpumask *ret, char *reason, size_t len);

/* Dense indexes of the NUMA nodes with CPUs in avail, in kubelet's order
 * (by free CPUs, within sockets when sockets are the upper level; with
 * resize, nodes holding `held` CPUs first). Returns the count. */
unsigned kube__node_order(const struct alloc_topo *t, const struct cpumask *avail,
			  const struct cpumask *held, bool resize, uint16_t *ret);

/* Writes a formatted message to reason when it is usable. */
void kube__reason(char *reason, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
