/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A latency histogram over fixed bounds, 25 µs .. 2 s, in the shape a
 * Prometheus histogram is exported in (export_prom.c sums the buckets):
 * the resize convergence (cpusetd_resize_convergence_seconds) and the
 * NRI requests' handling time (cpusetd_nri_request_seconds).
 */
#ifndef CPUSETD_LATENCY_H
#define CPUSETD_LATENCY_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdint.h>

/* The upper bounds in ns, ascending. */
#define LATENCY_BUCKETS	16
extern const uint64_t latency_le_ns[LATENCY_BUCKETS];

/* bucket[i] counts the samples <= latency_le_ns[i] and above the bound
 * before it; bucket[LATENCY_BUCKETS], those above every bound. Not
 * cumulative. Zeroed = empty. */
struct latency_hist {
	uint64_t bucket[LATENCY_BUCKETS + 1];
	uint64_t sum_ns;
};

/* One sample of ns nanoseconds into h. Cannot fail. */
void latency_add(struct latency_hist *h, uint64_t ns);

#endif
