/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hint builders and checks shared by the test_numa_align*.c unit tests
 * (numa_align.h). Topologies come from alloc_topo_generate(sockets,
 * nodes per socket, cores per node, threads): nodes hold consecutive
 * CPUs.
 */
#ifndef CPUSETD_TEST_NUMA_ALIGN_H
#define CPUSETD_TEST_NUMA_ALIGN_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "testlib.h"
#include "user/alloc/numa_align.h"

static inline struct numa_hint hint(const char *nodes, bool preferred)
{
	return (struct numa_hint){ .nodes = tl_mask(nodes), .preferred = preferred };
}

static inline struct numa_hints list_of(const struct numa_hint *h, size_t n)
{
	return (struct numa_hints){ .kind = NUMA_HINTS_LIST, .list = h, .n = n };
}

static inline void assert_hint(const struct numa_hint *h, const char *nodes, bool preferred)
{
	char buf[CPULIST_MAX];

	assert_true(cpulist_format(&h->nodes, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, nodes);
	assert_int_equal(h->preferred, preferred);
}

/* CPU hints for n CPUs out of avail, then numa_admit() with extra lists. */
static inline int admit_cpus(const struct alloc_topo *t, enum numa_policy pol, const char *avail,
		      unsigned n, const struct numa_hints *extra, size_t n_extra,
		      struct numa_hint *ret, char *why, size_t why_len)
{
	struct numa_hints pv[4];
	struct cpumask a = avail ? tl_mask(avail) : t->cpus;

	assert_int_equal(numa_cpu_hints(t, &a, NULL, n, &pv[0]), 0);
	for (size_t i = 0; i < n_extra; i++)
		pv[1 + i] = extra[i];
	return numa_admit(t, pol, NULL, pv, 1 + n_extra, ret, why, why_len);
}

#endif
