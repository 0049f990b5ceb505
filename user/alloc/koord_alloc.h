/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Koordinator's CPU allocation for exclusive (LSE/LSR/Guaranteed) pods:
 * which logical CPUs a request of N CPUs gets on one node, given what
 * other pods already hold.
 *
 * Source: Koordinator pkg/scheduler/plugins/nodenumaresource, the CPU
 * accumulator (cpu_accumulator.go: takeCPUs, takePreferredCPUs) and the
 * parts of resource_manager.go around it (FullPCPUsOnly filtering, the
 * even NUMA split); the Koordinator proposal "CPU bind policy", "CPU
 * exclusive policy", "NUMA allocate strategy" and "CPU Allocation
 * Algorithm". Checked against the cases of cpu_accumulator_test.go
 * (fixtures/koord-cases.jsonl, `cpusetctl allocate`).
 *
 * Pure: no I/O, no logging, no globals, no allocation; the same inputs
 * always give the same CPUs (ties are broken by ascending id, which the
 * dense indexes of struct alloc_topo preserve).
 */
#ifndef CPUSETD_KOORD_ALLOC_H
#define CPUSETD_KOORD_ALLOC_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include "alloc_topo.h"
#include "user/base/cpumask.h"

/* How CPUs are picked relative to physical cores (the Koordinator proposal "CPU bind policy"). */
enum koord_bind_policy {
	KOORD_BIND_FULL_PCPUS = 0,	/* "FullPCPUs": whole cores first (default) */
	KOORD_BIND_SPREAD_BY_PCPUS,	/* "SpreadByPCPUs": one CPU per core first */
	KOORD_BIND_FULL_PCPUS_ONLY,	/* "FullPCPUsOnly": whole cores or refuse */
	KOORD__BIND_COUNT,
};

/* Whom to keep away from (the Koordinator proposal "CPUExclusivePolicy"). */
enum koord_excl_policy {
	KOORD_EXCL_NONE = 0,		/* "None" */
	KOORD_EXCL_PCPU,		/* "PCPULevel": avoid cores of PCPULevel pods */
	KOORD_EXCL_NUMA,		/* "NUMANodeLevel": avoid nodes of NUMANodeLevel pods */
	KOORD__EXCL_COUNT,
};

/* Which NUMA node / socket to fill (the Koordinator proposal "NUMA allocate strategy"). */
enum koord_numa_strategy {
	KOORD_NUMA_MOST_ALLOCATED = 0,	/* "MostAllocated": fullest first (bin-pack) */
	KOORD_NUMA_LEAST_ALLOCATED,	/* "LeastAllocated": emptiest first */
	KOORD_NUMA_DISTRIBUTE_EVENLY,	/* "DistributeEvenly": split over all nodes */
	KOORD__NUMA_COUNT,
};

/*
 * What the node's existing allocations left on one CPU: how many pods
 * hold it and the exclusive policy of the last one recorded (Koordinator
 * keeps only the last one too: node_allocation.go addPodAllocation).
 * refs == 0 means free. Arrays are indexed by CPU id, CPUSETD_MAX_CPUS long.
 */
struct koord_cpu_usage {
	uint8_t refs;
	uint8_t excl;			/* enum koord_excl_policy */
};

/* One pod's request. */
struct koord_request {
	unsigned n;			/* logical CPUs wanted; 0 = nothing to do */
	enum koord_bind_policy bind;
	enum koord_excl_policy excl;
	enum koord_numa_strategy numa;
	unsigned max_ref_count;		/* pods that may share one CPU, >= 1 */
	const struct cpumask *preferred;	/* CPUs to take first, or NULL */
};

/*
 * Chooses req->n CPUs for one pod (Koordinator takePreferredCPUs /
 * takeCPUs; the Koordinator proposal "CPU Allocation Algorithm").
 *   t          the node; available and usage are CPU ids of t.
 *   available  CPUs the pod may use (online, not reserved); CPUs whose
 *              usage refs reached req->max_ref_count are dropped from it.
 *   usage      per CPU id, CPUSETD_MAX_CPUS entries, or NULL when nothing
 *              is allocated yet.
 * FullPCPUs packs whole free cores into the fullest (MostAllocated) or
 * emptiest (LeastAllocated) NUMA node, then socket, that can hold the
 * request, and goes on with single logical CPUs when whole cores run
 * out. SpreadByPCPUs takes one CPU per core first. FullPCPUsOnly uses
 * whole free cores only. PCPULevel avoids cores holding CPUs allocated
 * with PCPULevel; NUMANodeLevel avoids NUMA nodes holding CPUs allocated
 * with NUMANodeLevel, then falls back to avoiding cores that hold
 * exclusive CPUs, then to no exclusion. DistributeEvenly: see
 * koord_alloc.c "DistributeEvenly".
 * Returns 0 and *ret (CPU ids, exactly req->n of them, a subset of the
 * usable available CPUs), reason set to "". On error *ret is untouched
 * and reason (len bytes, may be 0) gets one line:
 *   -EINVAL  unknown enum value, max_ref_count 0, or FullPCPUsOnly with n
 *            not a multiple of the CPUs per core;
 *   -ENOSPC  not enough usable CPUs (or whole cores, for FullPCPUsOnly).
 */
int koord_alloc(const struct alloc_topo *t, const struct cpumask *available,
		const struct koord_cpu_usage *usage, const struct koord_request *req,
		struct cpumask *ret, char *reason, size_t len);

/*
 * The order in which the last stage of the accumulator offers the free
 * CPUs to SpreadByPCPUs (Koordinator freeCPUs + spreadCPUs, as
 * TestCPUSpreadByPCPUs checks it): one CPU of every core, then the
 * second ones, ... Only req->numa and req->max_ref_count are used.
 * Writes at most cap CPU ids to ret_order.
 * Returns how many were written; -EINVAL for a bad req; -ENOSPC when
 * cap is too small (ret_order then holds the first cap).
 */
int koord_spread_order(const struct alloc_topo *t, const struct cpumask *available,
		       const struct koord_cpu_usage *usage, const struct koord_request *req,
		       unsigned *ret_order, size_t cap);

/*
 * Book-keeping for the usage array (node_allocation.go addCPUs/release).
 * koord_usage_add: one more pod holds cpus with policy excl (refs
 * saturate at 255). koord_usage_release: one pod fewer; a CPU nobody
 * holds goes back to KOORD_EXCL_NONE. koord_usage_available: the CPUs of
 * t that fewer than max_ref_count pods hold (getAvailableCPUs).
 * Cannot fail.
 */
void koord_usage_add(struct koord_cpu_usage *usage, const struct cpumask *cpus,
		     enum koord_excl_policy excl);
void koord_usage_release(struct koord_cpu_usage *usage, const struct cpumask *cpus);
void koord_usage_available(const struct alloc_topo *t, const struct koord_cpu_usage *usage,
			   unsigned max_ref_count, struct cpumask *ret);

/*
 * Policy names as Koordinator spells them (the Koordinator proposal "Resource spec",
 * "CPU bind policy", "NUMA allocate strategy"; apis/extension constants):
 * node labels, pod resource-spec and cpusetd config use them. The
 * parsers match exactly (case-sensitive, no blanks) and return 0 with
 * *ret set, or -EINVAL for any other name or NULL (*ret untouched). The
 * name functions return a static string, "unknown" for a value out of
 * range.
 */
int koord_bind_policy_parse(const char *name, enum koord_bind_policy *ret);
int koord_excl_policy_parse(const char *name, enum koord_excl_policy *ret);
int koord_numa_strategy_parse(const char *name, enum koord_numa_strategy *ret);
const char *koord_bind_policy_name(enum koord_bind_policy v);
const char *koord_excl_policy_name(enum koord_excl_policy v);
const char *koord_numa_strategy_name(enum koord_numa_strategy v);

#endif
