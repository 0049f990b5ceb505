/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The clocks the daemon reads. CLOCK_MONOTONIC is the clock of
 * bpf_ktime_get_ns, so event stamps and our own readings compare;
 * CLOCK_REALTIME only for the Unix times people read (status.json, .prom).
 */
#ifndef CPUSETD_CLOCK_H
#define CPUSETD_CLOCK_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdint.h>
#include <time.h>

/* Clock id's time in ns. Cannot fail for the clocks above. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The same in µs. */
static inline uint64_t clock_us(clockid_t id)
{
	return clock_ns(id) / 1000;
}

/* Unix time in seconds, with the fraction. */
static inline double clock_unix_s(void)
{
	return (double)clock_ns(CLOCK_REALTIME) / 1e9;
}

#endif
