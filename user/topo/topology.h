/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU topology read from sysfs under a root (the directory that would be
 * mounted at /sys), so tests can point it at real snapshots.
 *
 * Physical cores are SMT sibling groups (topology/core_cpus_list, or
 * thread_siblings_list / thread_siblings on older kernels), never core_id,
 * which repeats per die on AMD. L3 groups come from
 * cache/index3/shared_cpu_list. A machine without
 * /sys/devices/system/node is one NUMA node 0 holding every CPU.
 * Sources: Documentation/ABI/stable/sysfs-devices-system-cpu,
 * Documentation/ABI/stable/sysfs-devices-node,
 * Documentation/admin-guide/cputopology.rst.
 *
 * Ids are as the kernel numbers them: CPU ids < CPUSETD_MAX_CPUS (1024),
 * NUMA node ids < CPUSETD_MAX_CPUS (they may be sparse: 0,1,33,72), at most
 * TOPO_MAX_NODES nodes; package ids may be negative (-1 on POWER) or huge
 * (ACPI PPTT ids on ARM).
 */
#ifndef CPUSETD_TOPOLOGY_H
#define CPUSETD_TOPOLOGY_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdint.h>
#include "user/base/cpumask.h"

#define TOPO_MAX_NODES	64

struct topo_cpu {
	int core;	/* lowest logical CPU id of its SMT sibling group */
	long package;	/* physical_package_id as sysfs gives it; -1 unknown */
	int die;	/* die_id; -1 when unknown */
	int node;	/* NUMA node id; -1 when no node lists it */
	int l3;		/* lowest CPU id sharing its L3; -1 when unknown */
};

struct topology {
	struct cpumask present;		/* CPUs that have a cpuN directory */
	struct cpumask online;
	struct cpumask offline;		/* cpu/offline, else present − online */
	struct cpumask isolated;	/* cpu/isolated (isolcpus=) */
	struct cpumask nodes;		/* NUMA node ids that hold CPUs */
	struct cpumask memory_nodes;	/* node ids with no CPU (memory only) */
	struct cpumask node_cpus[CPUSETD_MAX_CPUS];	/* by node id, as sysfs lists */
	struct topo_cpu cpu[CPUSETD_MAX_CPUS];	/* valid for present CPUs */
	/* SMT sibling group, indexed by its lowest CPU id (topo_cpu.core). */
	struct cpumask core_cpus[CPUSETD_MAX_CPUS];
	/* node distances (nodeN/distance), by node *index* in node_ids. */
	unsigned n_nodes;		/* node directories read, CPU-less ones too */
	int node_ids[TOPO_MAX_NODES];
	uint8_t distance[TOPO_MAX_NODES][TOPO_MAX_NODES];
	unsigned n_cores;		/* sibling groups among online CPUs */
	unsigned n_packages;		/* distinct package ids among online CPUs */
	unsigned threads_per_core;	/* most common online sibling count */
};

/*
 * Reads the topology under sysfs_root ("/sys" for the live system).
 * Returns 0 and a heap topology in *ret (free with topo_free); -ENOENT when
 * devices/system/cpu is missing; -E2BIG with more than TOPO_MAX_NODES
 * nodes; -ENOMEM.
 */
int topo_read(const char *sysfs_root, struct topology **ret);
void topo_free(struct topology *t);

/* One file of an in-memory sysfs: path relative to the root
 * ("devices/system/cpu/online"), and its content. */
struct topo_file {
	const char *path;
	const char *text;
};

/*
 * topo_read on files[n] instead of a directory (tests, fuzzing). A
 * directory exists when some path lies below it ("devices/system/node/"
 * alone makes an empty one); the first file of a path wins; a text is
 * cut as a read of the same buffer would cut it. Same returns as
 * topo_read (-ENOENT: no path under devices/system/cpu/).
 */
int topo_read_mem(const struct topo_file *files, size_t n, struct topology **ret);

/*
 * CPU hotplug: what sysfs says about an offline CPU is thin. Its
 * topology/ directory is gone (no siblings, package, die), x86 drops it
 * from its node's cpulist, and its online siblings list only themselves.
 * Physical cores, packages and nodes do not change while the machine
 * runs, so fresh (read after a hotplug event) takes those facts from prev
 * (the topology read before) for every CPU present in both: a CPU keeps
 * the node, package, die and L3 it had, and a sibling group keeps the
 * widest membership either snapshot knew. Counts (n_cores, n_packages,
 * threads_per_core) are recomputed over fresh->online. prev may be NULL
 * (nothing to inherit). Cannot fail.
 */
void topo_inherit(struct topology *fresh, const struct topology *prev);

/*
 * Union of the NUMA nodes of the CPUs in cpus, into *ret (node ids).
 * Returns 0, or -ENXIO when some CPU has no known node (ret untouched).
 */
int topo_nodes_of(const struct topology *t, const struct cpumask *cpus, struct cpumask *ret);

/* The present CPUs of cpu's SMT sibling group (its physical core); an
 * empty set for an id out of range. Cannot fail. */
const struct cpumask *topo_core_cpus(const struct topology *t, unsigned cpu);

#endif
