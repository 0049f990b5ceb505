/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The view of a machine that the allocation algorithms work on: every CPU
 * with its physical core, socket (package), NUMA node and L3/uncore cache
 * group, as dense indexes.
 *
 * It is built from the live topology (sysfs), from kubelet's test
 * topologies (CPUDetails written out as JSON) or from Koordinator's
 * generated ones, so the same algorithm code answers all three.
 *
 * Dense indexes are assigned in ascending order of the original ids, so
 * "lower index" means "lower id" wherever kubelet or Koordinator break a
 * tie by id. Ids are whatever the source uses: kubelet core ids are the
 * lowest CPU id of the sibling group on a live node (cadvisor's unique
 * core id) but arbitrary in test topologies; socket ids may be negative
 * or huge (sysfs physical_package_id).
 */
#ifndef CPUSETD_ALLOC_TOPO_H
#define CPUSETD_ALLOC_TOPO_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdint.h>
#include "user/base/cpumask.h"
#include "user/topo/topology.h"

#define ALLOC_MAX_SOCKETS	64
#define ALLOC_MAX_NODES		TOPO_MAX_NODES
#define ALLOC_NONE		UINT16_MAX	/* "no uncore group known" */

struct alloc_topo {
	struct cpumask cpus;		/* every CPU described */
	unsigned n_cores, n_sockets, n_nodes, n_uncores;
	/* Per CPU id: dense index of its core, socket, node, uncore group
	 * (uncore_of is ALLOC_NONE when unknown). Valid for ids in cpus. */
	uint16_t core_of[CPUSETD_MAX_CPUS];
	uint16_t socket_of[CPUSETD_MAX_CPUS];
	uint16_t node_of[CPUSETD_MAX_CPUS];
	uint16_t uncore_of[CPUSETD_MAX_CPUS];
	/* Per dense index: its CPUs, and the original id. */
	struct cpumask core_cpus[CPUSETD_MAX_CPUS];
	struct cpumask socket_cpus[ALLOC_MAX_SOCKETS];
	struct cpumask node_cpus[ALLOC_MAX_NODES];
	struct cpumask uncore_cpus[CPUSETD_MAX_CPUS];
	long core_id[CPUSETD_MAX_CPUS];
	long socket_id[ALLOC_MAX_SOCKETS];
	int node_id[ALLOC_MAX_NODES];		/* kernel NUMA node id */
	long uncore_id[CPUSETD_MAX_CPUS];
	/* CPUs of the widest core: the SMT width the machine runs (2, 4,
	 * 8), which full-pcpus-only requests must be a multiple of. Not
	 * CPUs / cores as kubelet computes it: an offline sibling or a core
	 * without SMT (hybrid parts) would lower that below the real width. */
	unsigned cpus_per_core;
	/* CPUs of the cores narrower than that (a sibling offline, or a
	 * hybrid part's cores without SMT): never a whole core's worth, so
	 * full-pcpus-only leaves them out (a hybrid part gives only its SMT
	 * cores). Empty on a uniform machine. */
	struct cpumask narrow;
};

/* One CPU as a source describes it; uncore < 0 = unknown. */
struct alloc_cpu_desc {
	unsigned cpu;
	long core, socket, uncore;
	int node;
};

/*
 * Builds *ret from n CPU descriptions (any order). Every CPU of one core
 * must be in one socket and one node.
 * Returns 0; -EINVAL for a CPU id out of range, a CPU given twice, a node
 * id < 0 or a core split across sockets/nodes; -E2BIG for more than
 * ALLOC_MAX_SOCKETS sockets or ALLOC_MAX_NODES nodes. *ret is undefined
 * on error (it is a large struct: allocate it on the heap).
 */
int alloc_topo_build(const struct alloc_cpu_desc *cpus, size_t n, struct alloc_topo *ret);

/*
 * The live view: the CPUs of t in `cpus` (normally t->online), core =
 * lowest CPU id of the SMT sibling group (what kubelet's cadvisor
 * topology calls the unique core id), socket = physical_package_id,
 * node = NUMA node (0 when unknown), uncore = lowest CPU id sharing the L3.
 * Returns 0, or the errors of alloc_topo_build.
 */
int alloc_topo_from_topology(const struct topology *t, const struct cpumask *cpus,
			     struct alloc_topo *ret);

/*
 * Koordinator's generated test topology (buildCPUTopologyForTest,
 * fixtures/SOURCE.md): sockets × nodes_per_socket × cores_per_node ×
 * cpus_per_core CPUs, SMT siblings consecutive,
 * cpu = ((s*nps + n)*cpn + c)*cpc + t; core = cpu / cpc; node =
 * cpu / (cpn*cpc); socket = cpu / (nps*cpn*cpc). One uncore group per node.
 * Returns 0, -EINVAL for a zero factor, -E2BIG beyond the limits.
 */
int alloc_topo_generate(unsigned sockets, unsigned nodes_per_socket, unsigned cores_per_node,
			unsigned cpus_per_core, struct alloc_topo *ret);

/* NUMA node ids (kernel ids, as a mask) of the CPUs in cpus; cannot fail. */
void alloc_topo_nodes_of(const struct alloc_topo *t, const struct cpumask *cpus,
			 struct cpumask *ret);

/* CPUs of the NUMA nodes whose kernel ids are in nodes; cannot fail. */
void alloc_topo_cpus_of_nodes(const struct alloc_topo *t, const struct cpumask *nodes,
			      struct cpumask *ret);

/* Dense node index of kernel node id, or -1 when the node is unknown. */
int alloc_topo_node_index(const struct alloc_topo *t, int node_id);

#endif
