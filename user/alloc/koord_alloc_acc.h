/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to koord_alloc*.c: one run of Koordinator's CPU accumulator
 * (cpu_accumulator.go takeCPUs) over a given set of CPUs. koord_alloc.c
 * wraps it with the request checks, preferred CPUs, FullPCPUsOnly and
 * DistributeEvenly.
 */
#ifndef CPUSETD_KOORD_ALLOC_ACC_H
#define CPUSETD_KOORD_ALLOC_ACC_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include "koord_alloc.h"

/*
 * Walks the set CPUs of a cpumask word by word: the allocation loops run
 * over 1024-CPU masks many times per request, and a cpumask_next() call
 * per CPU dominated the cost. Do not `break` out of it (it is two loops).
 */
#define koord_each_cpu(cpu, m)								\
	for (unsigned _w = 0; _w < CPUSETD_MASK_WORDS; _w++)				\
		for (uint64_t _b = (m)->bits[_w];						\
		     _b && ((cpu) = _w * 64 + (unsigned)__builtin_ctzll(_b), 1); _b &= _b - 1)

struct koord_acc_args {
	const struct alloc_topo *t;
	const struct koord_cpu_usage *usage;	/* NULL = nothing allocated */
	unsigned max_refs;			/* >= 1 */
	bool spread;				/* SpreadByPCPUs, else FullPCPUs */
	enum koord_excl_policy excl;
	bool most;				/* MostAllocated order, else LeastAllocated */
};

/*
 * Takes n CPUs of avail (CPU ids of a->t, already stripped of CPUs at
 * max_refs) into *ret. Returns 0, or -ENOSPC when avail is too small
 * (*ret untouched).
 */
int koord_acc_take(const struct koord_acc_args *a, const struct cpumask *avail, unsigned n,
		   struct cpumask *ret);

/*
 * The CPUs of avail in the order the accumulator's last stage offers
 * them to SpreadByPCPUs. Writes |avail ∩ a->t->cpus| ids to ret (room for
 * CPUSETD_MAX_CPUS) and returns that count. Cannot fail.
 */
unsigned koord_acc_spread_order(const struct koord_acc_args *a, const struct cpumask *avail,
				uint16_t *ret);

#endif
