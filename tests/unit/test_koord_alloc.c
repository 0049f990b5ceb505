// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's CPU allocation (user/alloc/koord_alloc.h): policy names, the
 * rules of every bind / exclusive policy and NUMA strategy, and property
 * checks over many generated node states, up to a 1024-CPU 16-node
 * machine. The exact answers of Koordinator's own tests are checked by
 * `cpusetctl allocate --cases fixtures/koord-cases.jsonl`.
 *
 * Topologies are Koordinator's generated ones (alloc_topo_generate):
 * SMT siblings consecutive, node = cpu / (cores_per_node * threads).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "testlib.h"
#include "user/alloc/koord_alloc.h"

static struct koord_request req(unsigned n, enum koord_bind_policy bind,
				enum koord_excl_policy excl, enum koord_numa_strategy numa)
{
	return (struct koord_request){ .n = n, .bind = bind, .excl = excl, .numa = numa,
				       .max_ref_count = 1 };
}

/* koord_alloc that must succeed; returns the CPUs. */
static struct cpumask alloc_ok(const struct alloc_topo *t, const struct cpumask *avail,
			       const struct koord_cpu_usage *usage, const struct koord_request *r)
{
	char reason[128] = "x";
	struct cpumask got;

	assert_int_equal(koord_alloc(t, avail, usage, r, &got, reason, sizeof(reason)), 0);
	assert_string_equal(reason, "");
	assert_int_equal(cpumask_weight(&got), r->n);
	return got;
}

static unsigned in_node(const struct alloc_topo *t, const struct cpumask *m, unsigned node)
{
	struct cpumask x;

	cpumask_and(&x, m, &t->node_cpus[node]);
	return cpumask_weight(&x);
}

/* True when some CPU of m shares a core with some CPU of other. */
static bool shares_core(const struct alloc_topo *t, const struct cpumask *m,
			const struct cpumask *other)
{
	int a, b;

	cpumask_for_each(a, m)
		cpumask_for_each(b, other)
			if (t->core_of[a] == t->core_of[b])
				return true;
	return false;
}

static bool whole_cores(const struct alloc_topo *t, const struct cpumask *m)
{
	int cpu;

	cpumask_for_each(cpu, m)
		if (!cpumask_subset(&t->core_cpus[t->core_of[cpu]], m))
			return false;
	return true;
}

static void test_names(void **state)
{
	static const char *const bind[] = { "FullPCPUs", "SpreadByPCPUs", "FullPCPUsOnly" };
	static const char *const excl[] = { "None", "PCPULevel", "NUMANodeLevel" };
	static const char *const numa[] = { "MostAllocated", "LeastAllocated", "DistributeEvenly" };
	enum koord_bind_policy b = KOORD_BIND_FULL_PCPUS;
	enum koord_excl_policy e = KOORD_EXCL_NONE;
	enum koord_numa_strategy s = KOORD_NUMA_MOST_ALLOCATED;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(koord_bind_policy_parse(bind[i], &b), 0);
		assert_string_equal(koord_bind_policy_name(b), bind[i]);
		assert_int_equal(koord_excl_policy_parse(excl[i], &e), 0);
		assert_string_equal(koord_excl_policy_name(e), excl[i]);
		assert_int_equal(koord_numa_strategy_parse(numa[i], &s), 0);
		assert_string_equal(koord_numa_strategy_name(s), numa[i]);
	}
	/* exact spelling only; *ret untouched on error */
	assert_int_equal(koord_bind_policy_parse("fullpcpus", &b), -EINVAL);
	assert_int_equal(koord_bind_policy_parse("", &b), -EINVAL);
	assert_int_equal(koord_bind_policy_parse(NULL, &b), -EINVAL);
	assert_int_equal(b, KOORD_BIND_FULL_PCPUS_ONLY);
	assert_int_equal(koord_excl_policy_parse("Default", &e), -EINVAL);
	assert_int_equal(e, KOORD_EXCL_NUMA);
	assert_int_equal(koord_numa_strategy_parse("MostAllocated ", &s), -EINVAL);
	assert_int_equal(s, KOORD_NUMA_DISTRIBUTE_EVENLY);
	assert_string_equal(koord_bind_policy_name(KOORD__BIND_COUNT), "unknown");
	assert_string_equal(koord_excl_policy_name((enum koord_excl_policy)-1), "unknown");
	assert_string_equal(koord_numa_strategy_name(KOORD__NUMA_COUNT), "unknown");
}

static void test_bind_policies(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 4, 2);
	struct koord_request r = req(4, KOORD_BIND_FULL_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask got, halves = tl_mask("0,2,4,6");

	(void)state;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	tl_assert_mask(&got, "0-3");
	r.bind = KOORD_BIND_SPREAD_BY_PCPUS;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	tl_assert_mask(&got, "0,2,4,6");
	/* FullPCPUs with no whole core left goes on with logical CPUs */
	r.bind = KOORD_BIND_FULL_PCPUS;
	r.n = 3;
	got = alloc_ok(t, &halves, NULL, &r);
	assert_true(cpumask_subset(&got, &halves));
	/* an odd FullPCPUs request: whole cores, then one more CPU */
	r.n = 5;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	tl_assert_mask(&got, "0-4");
	r.n = 0;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	assert_true(cpumask_empty(&got));
	free(t);
}

static void test_full_pcpus_only(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 4, 2);
	struct koord_request r = req(3, KOORD_BIND_FULL_PCPUS_ONLY, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask got = tl_mask("63"), avail = tl_mask("0-2,4,6-7"), pref = tl_mask("2,6-7");
	char reason[160] = "";

	(void)state;
	assert_int_equal(koord_alloc(t, &t->cpus, NULL, &r, &got, reason, sizeof(reason)),
			 -EINVAL);
	assert_non_null(strstr(reason, "FullPCPUsOnly"));
	assert_non_null(strstr(reason, "multiple"));
	tl_assert_mask(&got, "63");
	/* whole free cores 0-1 and 6-7 only: 4 fits, 6 does not */
	r.n = 4;
	got = alloc_ok(t, &avail, NULL, &r);
	tl_assert_mask(&got, "0-1,6-7");
	r.n = 6;
	got = tl_mask("63");
	assert_int_equal(koord_alloc(t, &avail, NULL, &r, &got, reason, sizeof(reason)), -ENOSPC);
	assert_non_null(strstr(reason, "whole"));
	tl_assert_mask(&got, "63");
	/* half a preferred core is not preferred */
	r.n = 2;
	r.preferred = &pref;
	avail = tl_mask("2-7");
	got = alloc_ok(t, &avail, NULL, &r);
	tl_assert_mask(&got, "6-7");
	free(t);
}

static void test_errors_leave_ret(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 4, 2);
	struct koord_request r = req(9, KOORD_BIND_FULL_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask got = tl_mask("100");
	char reason[128] = "";

	(void)state;
	assert_int_equal(koord_alloc(t, &t->cpus, NULL, &r, &got, reason, sizeof(reason)),
			 -ENOSPC);
	assert_non_null(strstr(reason, "not enough"));
	r.n = 1;
	r.max_ref_count = 0;
	assert_int_equal(koord_alloc(t, &t->cpus, NULL, &r, &got, reason, sizeof(reason)),
			 -EINVAL);
	r.max_ref_count = 1;
	r.bind = KOORD__BIND_COUNT;
	assert_int_equal(koord_alloc(t, &t->cpus, NULL, &r, &got, NULL, 0), -EINVAL);
	r.bind = KOORD_BIND_FULL_PCPUS;
	r.numa = KOORD__NUMA_COUNT;
	assert_int_equal(koord_alloc(t, &t->cpus, NULL, &r, &got, reason, sizeof(reason)),
			 -EINVAL);
	tl_assert_mask(&got, "100");
	free(t);
}

static void test_pcpu_level(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 8, 2);
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS] = { 0 };
	struct koord_request r = req(4, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_PCPU,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask held = tl_mask("0,2,4"), avail, got;

	(void)state;
	koord_usage_add(usage, &held, KOORD_EXCL_PCPU);
	koord_usage_available(t, usage, 1, &avail);
	got = alloc_ok(t, &avail, usage, &r);
	assert_false(shares_core(t, &got, &held));
	/* without the policy the siblings of the held CPUs are fine */
	r.excl = KOORD_EXCL_NONE;
	got = alloc_ok(t, &avail, usage, &r);
	assert_true(shares_core(t, &got, &held));
	/* more than the free cores can give: still served, cores reused */
	r.excl = KOORD_EXCL_PCPU;
	r.n = 12;
	got = alloc_ok(t, &avail, usage, &r);
	assert_true(shares_core(t, &got, &held));
	free(t);
}

static void test_numa_level_and_fallback(void **state)
{
	struct alloc_topo *t = tl_generate(2, 1, 4, 2);
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS] = { 0 };
	struct koord_request r = req(4, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_NUMA,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask held = tl_mask("0"), pcpu = tl_mask("10"), both, avail, got;

	(void)state;
	/* node 0 holds a NUMANodeLevel CPU: the pod goes to node 1 */
	koord_usage_add(usage, &held, KOORD_EXCL_NUMA);
	koord_usage_available(t, usage, 1, &avail);
	got = alloc_ok(t, &avail, usage, &r);
	assert_int_equal(in_node(t, &got, 1), 4);
	r.bind = KOORD_BIND_FULL_PCPUS;
	got = alloc_ok(t, &avail, usage, &r);
	tl_assert_mask(&got, "8-11");
	/* both nodes hold one: falls back to keeping off exclusive cores */
	held = tl_mask("8");
	koord_usage_add(usage, &held, KOORD_EXCL_NUMA);
	koord_usage_add(usage, &pcpu, KOORD_EXCL_PCPU);
	koord_usage_available(t, usage, 1, &avail);
	r.bind = KOORD_BIND_SPREAD_BY_PCPUS;
	r.n = 3;
	got = alloc_ok(t, &avail, usage, &r);
	both = tl_mask("0,8,10");
	assert_false(shares_core(t, &got, &both));
	/* and serves it even when no core is clean */
	r.n = 13;
	got = alloc_ok(t, &avail, usage, &r);
	assert_true(cpumask_subset(&got, &avail));
	free(t);
}

static void test_most_vs_least_allocated(void **state)
{
	struct alloc_topo *t = tl_generate(2, 2, 4, 2);
	struct koord_request r = req(2, KOORD_BIND_FULL_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask avail = tl_mask("4-31"), got;

	(void)state;
	/* node 0 is half used: bin-packing fills it, spreading avoids its socket */
	got = alloc_ok(t, &avail, NULL, &r);
	tl_assert_mask(&got, "4-5");
	r.numa = KOORD_NUMA_LEAST_ALLOCATED;
	got = alloc_ok(t, &avail, NULL, &r);
	tl_assert_mask(&got, "16-17");
	r.bind = KOORD_BIND_SPREAD_BY_PCPUS;
	r.n = 4;
	got = alloc_ok(t, &avail, NULL, &r);
	assert_int_equal(in_node(t, &got, 2), 4);
	/* node 0 has only two free cores: the fullest node that fits is 1 */
	r.numa = KOORD_NUMA_MOST_ALLOCATED;
	got = alloc_ok(t, &avail, NULL, &r);
	assert_int_equal(in_node(t, &got, 1), 4);
	free(t);
}

static void test_distribute_evenly(void **state)
{
	struct alloc_topo *t = tl_generate(2, 2, 4, 2);
	struct koord_request r = req(8, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_DISTRIBUTE_EVENLY);
	struct cpumask avail = tl_mask("6-31"), got;

	(void)state;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	for (unsigned n = 0; n < 4; n++)
		assert_int_equal(in_node(t, &got, n), 2);
	/* FullPCPUs: whole cores, at most one core apart */
	r.bind = KOORD_BIND_FULL_PCPUS;
	r.n = 12;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	assert_true(whole_cores(t, &got));
	for (unsigned n = 0; n < 4; n++) {
		assert_true(in_node(t, &got, n) >= 2);
		assert_true(in_node(t, &got, n) <= 4);
	}
	/* a nearly full node gives what it has, the others share the rest */
	r.bind = KOORD_BIND_SPREAD_BY_PCPUS;
	got = alloc_ok(t, &avail, NULL, &r);
	assert_int_equal(in_node(t, &got, 0), 2);
	for (unsigned n = 1; n < 4; n++) {
		assert_true(in_node(t, &got, n) >= 3);
		assert_true(in_node(t, &got, n) <= 4);
	}
	/* an odd FullPCPUs request: the extra CPU comes from anywhere left */
	r.bind = KOORD_BIND_FULL_PCPUS;
	r.n = 9;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	for (unsigned n = 0; n < 4; n++)
		assert_true(in_node(t, &got, n) >= 2);
	free(t);
}

static void test_max_ref_count(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 4, 2);
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS] = { 0 };
	struct koord_request r = req(6, KOORD_BIND_FULL_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask avail, got, first;

	(void)state;
	r.max_ref_count = 2;
	koord_usage_available(t, usage, 2, &avail);
	first = alloc_ok(t, &avail, usage, &r);
	koord_usage_add(usage, &first, KOORD_EXCL_PCPU);
	/* a second pod may share them; the never-used cores come first */
	koord_usage_available(t, usage, 2, &avail);
	r.n = 2;
	got = alloc_ok(t, &avail, usage, &r);
	assert_false(cpumask_intersects(&got, &first));
	r.n = 8;
	got = alloc_ok(t, &avail, usage, &r);
	koord_usage_add(usage, &got, KOORD_EXCL_PCPU);
	/* now the first pod's CPUs are held twice: only 6,7 are left */
	koord_usage_available(t, usage, 2, &avail);
	tl_assert_mask(&avail, "6-7");
	r.n = 3;
	assert_int_equal(koord_alloc(t, &t->cpus, usage, &r, &got, NULL, 0), -ENOSPC);
	koord_usage_release(usage, &first);
	koord_usage_available(t, usage, 2, &avail);
	tl_assert_mask(&avail, "0-7");
	koord_usage_available(t, usage, 1, &avail);
	tl_assert_mask(&avail, "");
	free(t);
}

static void test_preferred(void **state)
{
	struct alloc_topo *t = tl_generate(2, 1, 16, 2);
	struct koord_request r = req(2, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	struct cpumask pref = tl_mask("11,13,15,17"), avail, got;

	(void)state;
	r.preferred = &pref;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	tl_assert_mask(&got, "11,13");
	/* more than preferred: all of them, the rest by the usual rules */
	r.n = 6;
	got = alloc_ok(t, &t->cpus, NULL, &r);
	assert_true(cpumask_subset(&pref, &got));
	/* preferred CPUs that are not available do not count */
	pref = tl_mask("40-50");
	avail = tl_mask("0-39");
	r.n = 2;
	got = alloc_ok(t, &avail, NULL, &r);
	tl_assert_mask(&got, "32,34");	/* the fuller node, as without preference */
	free(t);
}

static void test_spread_order(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 4, 2);
	struct koord_request r = req(0, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_MOST_ALLOCATED);
	static const unsigned want[] = { 0, 2, 4, 6, 1, 3, 5, 7 };
	unsigned got[8];

	(void)state;
	assert_int_equal(koord_spread_order(t, &t->cpus, NULL, &r, got, 8), 8);
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(koord_spread_order(t, &t->cpus, NULL, &r, got, 4), -ENOSPC);
	free(t);
}

/* A small deterministic generator, so failures reproduce. */
static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

/* A random node state: some CPUs held, some once, some by exclusive pods. */
static void random_state(const struct alloc_topo *t, unsigned *seed,
			 struct koord_cpu_usage *usage, struct cpumask *avail)
{
	int cpu;

	memset(usage, 0, CPUSETD_MAX_CPUS * sizeof(*usage));
	cpumask_zero(avail);
	cpumask_for_each(cpu, &t->cpus) {
		unsigned x = rnd(seed) % 8;

		if (x < 3) {
			usage[cpu].refs = (uint8_t)(1 + x % 2);
			usage[cpu].excl = (uint8_t)(rnd(seed) % KOORD__EXCL_COUNT);
		}
		if (rnd(seed) % 16)
			cpumask_set(avail, (unsigned)cpu);
	}
}

/* Checks the invariants of one request on one state. */
static void check_one(const struct alloc_topo *t, const struct koord_cpu_usage *usage,
		      const struct cpumask *avail, const struct koord_request *r)
{
	struct cpumask usable, got = tl_mask("1023"), again;
	char reason[160];
	int ret = koord_alloc(t, avail, usage, r, &got, reason, sizeof(reason));

	koord_usage_available(t, usage, r->max_ref_count, &usable);
	cpumask_and(&usable, &usable, avail);
	if (ret < 0) {
		assert_int_equal(ret, -ENOSPC);
		assert_true(reason[0] != '\0');
		tl_assert_mask(&got, "1023");
		if (r->bind != KOORD_BIND_FULL_PCPUS_ONLY)
			assert_true(r->n > cpumask_weight(&usable));
		return;
	}
	assert_int_equal(cpumask_weight(&got), r->n);
	assert_true(cpumask_subset(&got, &usable));
	if (r->bind == KOORD_BIND_FULL_PCPUS_ONLY)
		assert_true(whole_cores(t, &got));
	assert_int_equal(koord_alloc(t, avail, usage, r, &again, NULL, 0), 0);
	assert_true(cpumask_equal(&got, &again));
}

static void run_properties(const struct alloc_topo *t, unsigned rounds, unsigned seed)
{
	struct koord_cpu_usage *usage = calloc(CPUSETD_MAX_CPUS, sizeof(*usage));
	unsigned total = cpumask_weight(&t->cpus);
	struct cpumask avail, pref;

	assert_non_null(usage);
	for (unsigned i = 0; i < rounds; i++) {
		struct koord_request r = {
			.n = rnd(&seed) % (total / 2 + 2),
			.bind = rnd(&seed) % KOORD__BIND_COUNT,
			.excl = rnd(&seed) % KOORD__EXCL_COUNT,
			.numa = rnd(&seed) % KOORD__NUMA_COUNT,
			.max_ref_count = 1 + rnd(&seed) % 2,
		};

		random_state(t, &seed, usage, &avail);
		if (r.bind == KOORD_BIND_FULL_PCPUS_ONLY)
			r.n -= r.n % t->cpus_per_core;
		if (rnd(&seed) % 4 == 0) {
			cpumask_zero(&pref);
			for (unsigned k = 0; k < 6; k++)
				cpumask_set(&pref, rnd(&seed) % total);
			r.preferred = &pref;
		}
		check_one(t, usage, &avail, &r);
	}
	free(usage);
}

static void test_properties_small(void **state)
{
	static const unsigned shapes[][4] = {
		{ 1, 1, 4, 2 }, { 2, 1, 4, 2 }, { 2, 2, 4, 2 }, { 2, 2, 2, 2 },
		{ 2, 1, 8, 2 }, { 1, 2, 6, 1 }, { 2, 2, 3, 4 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct alloc_topo *t = tl_generate(shapes[i][0], shapes[i][1], shapes[i][2],
					    shapes[i][3]);

		run_properties(t, 400, 7 + i);
		free(t);
	}
}

/* 1024 CPUs, 16 nodes: random states, then a node filled pod by pod. */
static void test_large_topology(void **state)
{
	struct alloc_topo *t = tl_generate(2, 8, 32, 2);
	struct koord_cpu_usage *usage = calloc(CPUSETD_MAX_CPUS, sizeof(*usage));
	struct koord_request r = req(32, KOORD_BIND_SPREAD_BY_PCPUS, KOORD_EXCL_NONE,
				     KOORD_NUMA_DISTRIBUTE_EVENLY);
	struct cpumask avail, got, all;
	unsigned seed = 99, pods = 0;

	(void)state;
	assert_non_null(usage);
	assert_int_equal(cpumask_weight(&t->cpus), 1024);
	assert_int_equal(t->n_nodes, 16);
	run_properties(t, 150, 3);
	got = alloc_ok(t, &t->cpus, NULL, &r);
	for (unsigned n = 0; n < 16; n++)
		assert_int_equal(in_node(t, &got, n), 2);
	/* pods of every kind until the machine is full: never overlapping */
	cpumask_zero(&all);
	for (;;) {
		r = req(1 + rnd(&seed) % 48, rnd(&seed) % 2, rnd(&seed) % KOORD__EXCL_COUNT,
			rnd(&seed) % KOORD__NUMA_COUNT);
		koord_usage_available(t, usage, 1, &avail);
		if (r.n > cpumask_weight(&avail))
			r.n = cpumask_weight(&avail);
		if (!r.n)
			break;
		got = alloc_ok(t, &avail, usage, &r);
		assert_false(cpumask_intersects(&got, &all));
		cpumask_or(&all, &all, &got);
		koord_usage_add(usage, &got, r.excl);
		pods++;
	}
	assert_true(cpumask_equal(&all, &t->cpus));
	assert_true(pods > 20);
	free(usage);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bind_policies),
		cmocka_unit_test(test_full_pcpus_only),
		cmocka_unit_test(test_errors_leave_ret),
		cmocka_unit_test(test_pcpu_level),
		cmocka_unit_test(test_numa_level_and_fallback),
		cmocka_unit_test(test_most_vs_least_allocated),
		cmocka_unit_test(test_distribute_evenly),
		cmocka_unit_test(test_max_ref_count),
		cmocka_unit_test(test_preferred),
		cmocka_unit_test(test_spread_order),
		cmocka_unit_test(test_properties_small),
		cmocka_unit_test(test_large_topology),
	};

	return cmocka_run_group_tests_name("koord_alloc", tests, NULL, NULL);
}
