/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU hotplug in the policy (pure: data in, data out).
 *
 * When CPUs go offline or come back, the book-keeping follows the online
 * set of a new topology (user/README.md "The rules"):
 *   shared/BE   pools are online − reserved: they shrink and grow by
 *               themselves, nothing is recorded;
 *   integer     a container that lost a CPU gets a replacement from the
 *               free set, keeping N: the lost CPU's SMT sibling if free,
 *               else what the allocator picks around the CPUs it still
 *               holds (same NUMA node first, the node policy's whole-core
 *               rules), else any free CPU, nearest node first. Without
 *               one it keeps what is left and carries the shortfall as
 *               its error (insufficient_cpus); it is refilled as soon as
 *               CPUs are free again (its own lost CPUs first). A
 *               replacement is kept when the lost CPU comes back: that
 *               CPU returns to the shared pool;
 *   annotated   (and Koordinator-scheduled sets, also fixed by the pod)
 *               keep every listed CPU in the book-keeping, run on the
 *               online ones, and carry cpu_offline as their error while
 *               any listed CPU is offline; the error clears when it is
 *               back, and the CPU is theirs again, never the pool's.
 * A hotplug error is never a rejection: the container keeps running.
 * The result depends only on the book-keeping and the new online set, not
 * on which events were seen, so a missed or repeated event converges.
 */
#ifndef CPUSETD_POLICY_HOTPLUG_H
#define CPUSETD_POLICY_HOTPLUG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include "user/base/cpumask.h"
#include "policy.h"
#include "user/topo/topology.h"

enum policy_hotplug_what {
	POLICY_HP_REPLACED,	/* integer: lost CPUs replaced (maybe partly) */
	POLICY_HP_SHORT,	/* integer: lost CPUs, short of N (error set) */
	POLICY_HP_REFILLED,	/* integer: a shortfall filled (error cleared) */
	POLICY_HP_OFFLINE,	/* fixed set: listed CPUs offline (error set) */
	POLICY_HP_RESTORED,	/* fixed set: every listed CPU online again */
};

/* One container whose placement changed. */
struct policy_hotplug_change {
	char container_id[72];
	enum policy_hotplug_what what;
	struct cpumask lost;	/* CPUs it no longer runs on (went offline) */
	struct cpumask added;	/* replacement CPUs, or fixed CPUs back online */
	unsigned missing;	/* CPUs it is short of now (integer), or
				 * listed CPUs offline (fixed) */
};

struct policy_hotplug {
	struct cpumask went_offline;	/* old online − new online */
	struct cpumask came_online;	/* new online − old online */
	unsigned replaced;		/* replacement CPUs handed out */
	size_t n;
	struct policy_hotplug_change *changes;	/* n entries, heap */
};

/*
 * Moves p onto topo (borrowed from now on, in place of the topology p was
 * created with; the old one must stay valid during the call and may be
 * freed after it) and updates the book-keeping as described above.
 * Fills *ret (free with policy_hotplug_free) with the containers whose
 * placement changed; an unchanged online set gives n = 0.
 * Returns 0; -ENOMEM (p still on its old topology, *ret empty), or the
 * errors of alloc_topo_from_topology (-EINVAL, -E2BIG) likewise.
 */
int policy_set_online(struct policy *p, const struct topology *topo, struct policy_hotplug *ret);

/* Frees ret->changes and empties *ret; accepts an empty one. */
void policy_hotplug_free(struct policy_hotplug *ret);

#endif
