/*
 * CPU topology read from sysfs under a root (the directory that would be
 * mounted at /sys), so tests can point it at real snapshots.
 *
 * Physical cores are SMT sibling groups (topology/core_cpus_list, or
 * thread_siblings_list on older kernels), never core_id, which repeats per
 * die on AMD. A machine without /sys/devices/system/node is one NUMA node 0.
 * Sources: Documentation/ABI/stable/sysfs-devices-system-cpu,
 * Documentation/admin-guide/cputopology.rst.
 */
#ifndef CPUSETD_TOPOLOGY_H
#define CPUSETD_TOPOLOGY_H

#include "cpumask.h"

#define TOPO_MAX_NODES	64

struct topo_cpu {
	int core;	/* lowest logical CPU id of its SMT sibling group */
	int package;	/* physical_package_id; -1 when unknown */
	int node;	/* NUMA node id; -1 when no node lists it */
};

struct topology {
	struct cpumask present;		/* CPUs that have a cpuN directory */
	struct cpumask online;
	struct cpumask nodes;		/* NUMA nodes that hold CPUs */
	struct cpumask node_cpus[TOPO_MAX_NODES];
	struct topo_cpu cpu[CPUSETD_MAX_CPUS];	/* valid for present CPUs */
	/* SMT sibling group, indexed by its lowest CPU id (topo_cpu.core). */
	struct cpumask core_cpus[CPUSETD_MAX_CPUS];
	unsigned n_cores;		/* sibling groups among online CPUs */
	unsigned n_packages;
	unsigned threads_per_core;	/* most common sibling count */
};

/*
 * Reads the topology under sysfs_root ("/sys" for the live system).
 * Returns 0 and a heap topology in *ret (free with topo_free); -ENOENT when
 * devices/system/cpu is missing; -ENOMEM; -EINVAL on unparsable files.
 */
int topo_read(const char *sysfs_root, struct topology **ret);
void topo_free(struct topology *t);

/*
 * Union of the NUMA nodes of the CPUs in cpus, into *ret (node ids).
 * Returns 0, or -ENXIO when some CPU has no known node (ret untouched).
 */
int topo_nodes_of(const struct topology *t, const struct cpumask *cpus, struct cpumask *ret);

/* The present CPUs of cpu's SMT sibling group (its physical core); an
 * empty set for an id out of range. Cannot fail. */
const struct cpumask *topo_core_cpus(const struct topology *t, unsigned cpu);

#endif
