/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology as JSON (json-c), shared by status.json and
 * `cpusetctl topology --json` so both speak the same keys:
 *   online, offline, isolated (cpulists); online_count; packages,
 *   cores (counts), threads_per_core (most common); numa_nodes {id:
 *   cpulist} for nodes with CPUs; memory_nodes (cpulist of CPU-less node
 *   ids); and with per_cpu: distances {id: [..] in numa node id order}
 *   and cpus [{id, online, core, package, die, node, l3}] (present CPUs)
 *   ("core" = lowest CPU id of the SMT sibling group, "l3" = lowest CPU
 *   id sharing the L3, -1 unknown).
 */
#ifndef CPUSETD_TOPOLOGY_JSON_H
#define CPUSETD_TOPOLOGY_JSON_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <json-c/json.h>
#include <stdbool.h>
#include "topology.h"

/* m as a JSON cpulist string ("0-3,8"; "" when empty), a new object the
 * caller puts; NULL on ENOMEM. Shared by every JSON cpusetd writes. */
json_object *cpumask_json(const struct cpumask *m);

/* A new JSON object (caller puts it), or NULL on ENOMEM. */
json_object *topo_json(const struct topology *t, bool per_cpu);

#endif
