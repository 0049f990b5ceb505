/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology.json: the node's CPU facts in the schemas Koordinator uses for
 * its NodeResourceTopology annotations (the Koordinator proposal, "CPU
 * Orchestration API" / NodeResourceTopology), so a node agent can publish
 * the file unchanged as metadata.annotations:
 *
 * {
 *   "node.koordinator.sh/cpu-topology":
 *       "{\"detail\":[{\"id\":0,\"core\":0,\"socket\":0,\"node\":0},...]}",
 *   "node.koordinator.sh/pod-cpu-allocs":
 *       "[{\"namespace\":\"ns\",\"name\":\"pod\",\"uid\":\"...\",\"cpuset\":\"2-3\"},...]",
 *   "node.koordinator.sh/cpu-shared-pools":
 *       "[{\"socket\":0,\"node\":0,\"cpuset\":\"0-1\"},...]"
 * }
 *
 * Each value is a JSON text in a string, as annotation values are
 * (`jq '.[] |= fromjson'` shows them as objects). Field names follow the
 * Go structs CPUTopology/CPUInfo, PodCPUAlloc and CPUSharedPool; the
 * proposal's YAML example spells "cpu" and a string "true", the structs
 * "cpuset" and a bool, and the structs are what Koordinator decodes.
 *
 *   detail    online CPUs only. "core" = lowest CPU id of the physical
 *             core (SMT sibling group: unique on the node, as status.json
 *             and `cpusetctl topology` say); "socket" = dense index of
 *             the package (0..n-1 in package id order), because sysfs
 *             package ids may be -1 or ACPI values like 8442; "node" =
 *             kernel NUMA node id.
 *   allocs    one per pod with exclusive CPUs (integer, scheduled or
 *             annotated containers): the union of its containers' CPUs.
 *             managedByKubelet is omitted when false (omitempty).
 *   pools     the shared pool split by (socket, node); empty parts left out.
 */
#ifndef CPUSETD_EXPORT_KOORD_H
#define CPUSETD_EXPORT_KOORD_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include "user/base/cpumask.h"
#include "user/topo/topology.h"

#define EXPORT_KOORD_FILE		"topology.json"
#define EXPORT_KOORD_CPU_TOPOLOGY	"node.koordinator.sh/cpu-topology"
#define EXPORT_KOORD_POD_CPU_ALLOCS	"node.koordinator.sh/pod-cpu-allocs"
#define EXPORT_KOORD_CPU_SHARED_POOLS	"node.koordinator.sh/cpu-shared-pools"
#define EXPORT_KOORD_BE_CPU_SHARED_POOLS "node.koordinator.sh/be-cpu-shared-pools"
#define EXPORT_KOORD_SYSTEM_QOS_RESOURCE "node.koordinator.sh/system-qos-resource"

/* The node's pools as topology.json publishes them (CPU ids). */
struct export_koord_pools {
	struct cpumask shared;
	const struct cpumask *be;	/* NULL: not published */
	const struct cpumask *system;	/* system_qos_cpus; NULL or empty: none */
};

/* One pod's exclusive CPUs; strings borrowed. */
struct export_koord_pod {
	const char *namespace_;
	const char *name;
	const char *uid;
	struct cpumask cpus;
	bool managed_by_kubelet;
};

/*
 * {"detail": [...]} for the online CPUs of t (CPUTopology). A new object
 * the caller puts; NULL on ENOMEM.
 */
json_object *export_koord_cpu_topology(const struct topology *t);

/*
 * The PodCPUAllocs array for pods[0..n), in the given order, pods with
 * no CPUs skipped. A new array the caller puts; NULL on ENOMEM.
 */
json_object *export_koord_pod_allocs(const struct export_koord_pod *pods, size_t n);

/*
 * The NUMACPUSharedPools array: pool split by (socket, node) of t, in
 * (socket, node) order. A new array the caller puts; NULL on ENOMEM.
 */
json_object *export_koord_shared_pools(const struct topology *t, const struct cpumask *pool);

/*
 * The whole topology.json object (the annotations, values as JSON
 * strings): CPU topology, pod allocations, the shared pool per (socket,
 * NUMA node), the BE pool the same way when it differs from the shared
 * pool (an LSR or annotated CPU is in one and not the other): the parts
 * koordlet binds NUMA-constrained LS and BE pods to; and the SYSTEM QoS
 * CPUs as SystemQOSResource {"cpuset": ...} when set. A new object the
 * caller puts; NULL on ENOMEM.
 */
json_object *export_koord_json(const struct topology *t, const struct export_koord_pod *pods,
			       size_t n, const struct export_koord_pools *pools);

/*
 * Sorts a pod array by (namespace, name, uid) so topology.json does not
 * change with hash order. Cannot fail.
 */
void export_koord_sort(struct export_koord_pod *pods, size_t n);

#endif
