/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "decision" object of a status.json container (schema in status.h):
 * the facts `cpusetctl explain` needs to say why a container has its CPUs.
 */
#ifndef CPUSETD_STATUS_DETAIL_H
#define CPUSETD_STATUS_DETAIL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <json-c/json.h>

struct snapshot;
struct snapshot_container;

/*
 * A new object for ct (caller puts it; NULL on ENOMEM):
 *   rule               which allocation rule placed it (status.h lists them)
 *   cpu_quota_us, cpu_period_us   the CPU limit it was classified by
 *                      (-1 / 0 when unlimited / unknown)
 *   n_cpus             exclusive CPUs requested (integer), else 0
 *   exclusive_policy   Koordinator exclusive policy it was given
 *                      ("None", "PCPULevel", "NUMANodeLevel"; "" when not
 *                      exclusive)
 *   pod_affinity       its pod's NUMA affinity (topology_manager_scope=pod)
 *   numa_nodes         NUMA nodes of its CPUs (cpulist of node ids)
 *   annotations        the placement annotations the pod carries, as given
 */
json_object *status_decision_obj(const struct snapshot *s, const struct snapshot_container *ct);

#endif
