// SPDX-License-Identifier: Apache-2.0
/*
 * NUMA alignment with kubelet Topology Manager semantics (numa_align.h):
 * the Topology Manager walk-through's cases, kubelet's policy rules, more than 8 NUMA nodes,
 * pod scope, and a randomized check of the implicit CPU hints against a
 * literal replay of kubelet (full hint listing, full cross product,
 * HintMerger.compare fold) on up to 8 nodes, kubelet's own limit.
 *
 * Topologies come from alloc_topo_generate(sockets, nodes per socket,
 * cores per node, threads): nodes hold consecutive CPUs.
 */
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

static struct numa_hint hint(const char *nodes, bool preferred)
{
	return (struct numa_hint){ .nodes = tl_mask(nodes), .preferred = preferred };
}

static struct numa_hints list_of(const struct numa_hint *h, size_t n)
{
	return (struct numa_hints){ .kind = NUMA_HINTS_LIST, .list = h, .n = n };
}

static void assert_hint(const struct numa_hint *h, const char *nodes, bool preferred)
{
	char buf[CPULIST_MAX];

	assert_true(cpulist_format(&h->nodes, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, nodes);
	assert_int_equal(h->preferred, preferred);
}

/* CPU hints for n CPUs out of avail, then numa_admit() with extra lists. */
static int admit_cpus(const struct alloc_topo *t, enum numa_policy pol, const char *avail,
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

/* ---- names ---------------------------------------------------------- */

static void test_names(void **state)
{
	static const struct { const char *s; enum numa_policy p; } ok[] = {
		{ "none", NUMA_POLICY_NONE }, { "None", NUMA_POLICY_NONE },
		{ "best-effort", NUMA_POLICY_BEST_EFFORT }, { "BestEffort", NUMA_POLICY_BEST_EFFORT },
		{ "restricted", NUMA_POLICY_RESTRICTED }, { "Restricted", NUMA_POLICY_RESTRICTED },
		{ "single-numa-node", NUMA_POLICY_SINGLE_NUMA_NODE },
		{ "SingleNUMANode", NUMA_POLICY_SINGLE_NUMA_NODE },
	};
	static const char *const bad[] = { "", "BESTEFFORT", "best_effort", "single-numa",
					    "SingleNumaNode", " none", "strict" };
	enum numa_policy p = NUMA_POLICY_RESTRICTED;
	enum numa_scope s = NUMA_SCOPE_POD;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(numa_policy_parse(ok[i].s, &p), 0);
		assert_int_equal(p, ok[i].p);
		assert_int_equal(numa_policy_parse(numa_policy_name(p), &p), 0);
		assert_int_equal(p, ok[i].p);
	}
	p = NUMA_POLICY_RESTRICTED;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(numa_policy_parse(bad[i], &p), -EINVAL);
	assert_int_equal(numa_policy_parse(NULL, &p), -EINVAL);
	assert_int_equal(p, NUMA_POLICY_RESTRICTED);	/* untouched */
	assert_string_equal(numa_policy_name(NUMA_POLICY_SINGLE_NUMA_NODE), "single-numa-node");
	assert_string_equal(numa_policy_name((enum numa_policy)9), "?");

	assert_int_equal(numa_scope_parse("container", &s), 0);
	assert_int_equal(s, NUMA_SCOPE_CONTAINER);
	assert_int_equal(numa_scope_parse("pod", &s), 0);
	assert_int_equal(s, NUMA_SCOPE_POD);
	assert_int_equal(numa_scope_parse("Pod", &s), -EINVAL);
	assert_int_equal(numa_scope_parse("node", &s), -EINVAL);
	assert_string_equal(numa_scope_name(NUMA_SCOPE_CONTAINER), "container");
}

/* ---- Topology Manager ------------------------------------------------------ */

/* Topology Manager "TopologyHints": 2 CPUs on a 2-node machine give
 * {01: True}, {10: True}, {11: False}. */
static void test_doc_hints_two_nodes(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);	/* nodes 0: 0-3, 1: 4-7 */
	struct numa_hints h;
	struct numa_hint out[8];

	(void)state;
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 2, &h), 0);
	assert_int_equal(h.kind, NUMA_HINTS_CAPACITY);
	assert_string_equal(h.what, "2 CPUs");
	assert_int_equal(numa_hints_expand(t, &h, 0, out, 8), 3);
	assert_hint(&out[0], "0", true);
	assert_hint(&out[1], "1", true);
	assert_hint(&out[2], "0-1", false);
	assert_int_equal(numa_hints_expand(t, &h, 1, out, 8), 2);
	assert_int_equal(numa_hints_expand(t, &h, 0, out, 2), -ENOSPC);

	/* no exclusive CPUs: no preference at all (kubelet nil hints) */
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 0, &h), 0);
	assert_int_equal(h.kind, NUMA_HINTS_ANY);
	free(t);
}

/* Topology Manager: all but 2 CPUs taken, the two left on different nodes, 2
 * requested: the only hint is {11: False}, because one node could hold
 * them on the empty machine. restricted refuses, best-effort admits. */
static void test_doc_fragmented_only_unpreferred(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint out[4], best, keep;
	struct numa_hints h;
	struct cpumask a = tl_mask("3,7");
	char why[256] = "";

	(void)state;
	assert_int_equal(numa_cpu_hints(t, &a, NULL, 2, &h), 0);
	assert_int_equal(numa_hints_expand(t, &h, 0, out, 4), 1);
	assert_hint(&out[0], "0-1", false);

	memset(&keep, 0xa5, sizeof(keep));
	best = keep;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "3,7", 2, NULL, 0, &best, why,
				    sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 2 CPUs "
				 "under policy restricted (best: nodes 0-1)");
	assert_memory_equal(&best, &keep, sizeof(best));	/* untouched */

	assert_int_equal(admit_cpus(t, NUMA_POLICY_BEST_EFFORT, "3,7", 2, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0-1", false);
	free(t);
}

/* Topology Manager "Policy.Merge": Container0 and Container1, cpu + gpu + nic. */
static void test_doc_merge_table(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint both[] = { hint("0", true), hint("1", true) }, one[] = { hint("1", true) };
	struct numa_hints c0[] = { list_of(both, 2), list_of(both, 2) };
	struct numa_hints c1[] = { list_of(one, 1), list_of(one, 1) };
	static const enum numa_policy pols[] = { NUMA_POLICY_BEST_EFFORT, NUMA_POLICY_RESTRICTED,
						 NUMA_POLICY_SINGLE_NUMA_NODE };
	struct numa_hint best;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		/* Container0 on the empty machine: {cpu: {0,1}, gpu: 0, nic: 0} */
		assert_int_equal(admit_cpus(t, pols[i], NULL, 2, c0, 2, &best, NULL, 0), 0);
		assert_hint(&best, "0", true);
		/* Container1: gpu and nic only on node 1 now */
		assert_int_equal(admit_cpus(t, pols[i], "2-7", 2, c1, 2, &best, NULL, 0), 0);
		assert_hint(&best, "1", true);
	}
	free(t);
}

/* ---- policies ------------------------------------------------------- */

static void test_single_node_fit_preferred(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best;

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 3, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0", true);
	/* node 0 has 2 free: node 1 is the narrowest preferred */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-1,4-7", 3, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "1", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, "0-1,4-7", 3, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "1", true);
	free(t);
}

/* A 2-node mask is preferred only when no single node could ever hold the
 * request: 6 CPUs > 4 per node, so {0,1} is the preferred fit. */
static void test_span_two_nodes(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best, out[4];
	struct numa_hints h;
	struct cpumask a = tl_mask("0-1,4-6");

	(void)state;
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 6, &h), 0);
	assert_int_equal(h.cap.min_affinity, 2);
	assert_int_equal(numa_hints_expand(t, &h, 0, out, 4), 1);
	assert_hint(&out[0], "0-1", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 6, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0-1", true);

	/* 4 CPUs with 2 + 3 free: only {0,1} fits, but one node could hold 4 */
	assert_int_equal(numa_cpu_hints(t, &a, NULL, 4, &h), 0);
	assert_int_equal(h.cap.min_affinity, 1);
	assert_int_equal(h.cap.min_fit, 2);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-1,4-6", 4, NULL, 0, &best,
				    NULL, 0), -EXDEV);
	free(t);
}

static void test_restricted_refusal(void **state)
{
	struct alloc_topo *t = tl_generate(1, 4, 2, 2);	/* 4 nodes × 4 CPUs */
	struct numa_hint best;
	char why[256];

	(void)state;
	/* 6 CPUs fit 2 nodes on the empty machine; free: 2 per node */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-1,4-5,8-9,12-13", 6, NULL, 0,
				    &best, why, sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 6 CPUs "
				 "under policy restricted (best: nodes 0-2)");
	/* a short buffer gets a truncated line, never an overflow */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-1,4-5,8-9,12-13", 6, NULL, 0,
				    &best, why, 12), -EXDEV);
	assert_string_equal(why, "topology af");
	free(t);
}

/* single-numa-node keeps only one-node preferred hints. */
static void test_single_numa_refuses_two_node_fit(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best;
	char why[256];

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, NULL, 6, NULL, 0, &best, why,
				    sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 6 CPUs "
				 "under policy single-numa-node (best: none)");
	/* fits one node on the empty machine, but not now */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, "0-1,4-6", 4, NULL, 0, &best,
				    NULL, 0), -EXDEV);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, NULL, 4, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "0", true);
	free(t);
}

/* On one node the single-numa-node best is "every node", reported as no
 * affinity (kubelet: nil), and admitted. */
static void test_single_numa_one_node_machine(void **state)
{
	struct alloc_topo *t = tl_generate(1, 1, 2, 2);
	struct numa_hint best;

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, NULL, 3, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 3, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0", true);
	free(t);
}

static void test_best_effort_admits_non_preferred(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best;

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_BEST_EFFORT, "0-1,4-6", 4, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "0-1", false);
	/* more than the machine has: no hint at all, still admitted */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_BEST_EFFORT, NULL, 9, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0-1", false);
	free(t);
}

static void test_none_policy(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best;

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_NONE, "3,7", 2, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "", false);
	assert_true(numa_policy_admits(NUMA_POLICY_NONE, &best));
	assert_true(numa_policy_admits(NUMA_POLICY_BEST_EFFORT, &best));
	assert_false(numa_policy_admits(NUMA_POLICY_RESTRICTED, &best));
	free(t);
}

/* Reusable CPUs (restart, init containers) pin their nodes into every hint. */
static void test_reusable(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct cpumask a = tl_mask("0-3,6-7"), r = tl_mask("5");
	struct numa_hints h;
	struct numa_hint out[4], best;

	(void)state;
	assert_int_equal(numa_cpu_hints(t, &a, &r, 2, &h), 0);
	assert_int_equal(numa_hints_expand(t, &h, 0, out, 4), 2);
	assert_hint(&out[0], "1", true);
	assert_hint(&out[1], "0-1", false);
	assert_int_equal(numa_admit(t, NUMA_POLICY_RESTRICTED, NULL, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "1", true);
	/* the reusable CPU alone is enough: still node 1 only */
	assert_int_equal(numa_cpu_hints(t, &a, &r, 1, &h), 0);
	assert_int_equal(numa_admit(t, NUMA_POLICY_RESTRICTED, NULL, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "1", true);
	free(t);
}

/* CPU + a device provider. */
static void test_merge_two_providers(void **state)
{
	struct alloc_topo *t = tl_generate(1, 4, 2, 2);	/* 4 nodes × 4 CPUs */
	struct numa_hint dev[] = { hint("2", true), hint("3", true) }, dev3[] = { hint("3", true) };
	struct numa_hint mem[] = { hint("0-1", true), hint("0-3", false) };
	struct numa_hints d = list_of(dev, 2), d3 = list_of(dev3, 1), m = list_of(mem, 2);
	struct numa_hints none = { .kind = NUMA_HINTS_LIST, .n = 0 };
	struct numa_hints any = { .kind = NUMA_HINTS_ANY };
	struct numa_hint best;
	char why[256];

	(void)state;
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 2, &d, 1, &best, NULL, 0), 0);
	assert_hint(&best, "2", true);
	/* node 3 has no free CPU: no preferred alignment with the device */
	strcpy(d3.what, "1 example.com/dev");
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-11", 2, &d3, 1, &best, why,
				    sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 2 CPUs, "
				 "1 example.com/dev under policy restricted (best: node 3)");
	assert_int_equal(admit_cpus(t, NUMA_POLICY_BEST_EFFORT, "0-11", 2, &d3, 1, &best, NULL, 0), 0);
	assert_hint(&best, "3", false);
	/* 6 CPUs need two nodes; memory prefers {0,1} */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 6, &m, 1, &best, NULL, 0), 0);
	assert_hint(&best, "0-1", true);
	/* a provider with nothing possible blocks preference; "any" does not */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 2, &none, 1, &best, NULL, 0),
			 -EXDEV);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 2, &any, 1, &best, NULL, 0), 0);
	assert_hint(&best, "0", true);
	/* two explicit lists alone (no CPU request): kubelet's plain merge */
	{
		struct numa_hints two[] = { m, d };

		assert_int_equal(numa_admit(t, NUMA_POLICY_BEST_EFFORT, NULL, two, 2, &best,
					    NULL, 0), 0);
		assert_hint(&best, "2", false);
	}
	free(t);
}

/* prefer-closest-numa-nodes: among 2-node fits, the closest pair wins. */
static void test_prefer_closest(void **state)
{
	struct alloc_topo *t = tl_generate(1, 4, 2, 2);
	uint8_t dist[ALLOC_MAX_NODES][ALLOC_MAX_NODES] = { { 0 } };
	struct numa_opts opts = { .prefer_closest = true, .distance = dist };
	struct numa_hints h;
	struct numa_hint best;
	struct cpumask busy0 = tl_mask("4-15");

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 4; j++)
			dist[i][j] = i == j ? 10 : (i + j) % 2 == 0 ? 12 : 30;	/* {0,2}, {1,3} close */
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 6, &h), 0);
	assert_int_equal(numa_admit(t, NUMA_POLICY_RESTRICTED, NULL, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "0-1", true);
	assert_int_equal(numa_admit(t, NUMA_POLICY_RESTRICTED, &opts, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "0,2", true);
	/* node 0 busy: {1,3} */
	assert_int_equal(numa_cpu_hints(t, &busy0, NULL, 6, &h), 0);
	assert_int_equal(numa_admit(t, NUMA_POLICY_BEST_EFFORT, &opts, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "1,3", true);
	/* needs distances, except under single-numa-node which ignores it */
	opts.distance = NULL;
	assert_int_equal(numa_admit(t, NUMA_POLICY_RESTRICTED, &opts, &h, 1, &best, NULL, 0),
			 -EINVAL);
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 2, &h), 0);
	assert_int_equal(numa_admit(t, NUMA_POLICY_SINGLE_NUMA_NODE, &opts, &h, 1, &best, NULL, 0), 0);
	assert_hint(&best, "0", true);
	free(t);
}

/* ---- more than 8 nodes ---------------------------------------------- */

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void test_sixteen_nodes(void **state)
{
	struct alloc_topo *t = tl_generate(2, 8, 32, 2);	/* 16 nodes × 64 CPUs */
	struct numa_hint best, dev[] = { hint("9", true), hint("14", true) };
	struct numa_hints d = list_of(dev, 2);
	double t0;

	(void)state;
	assert_int_equal(t->n_nodes, 16);
	t0 = now_us();
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 100, NULL, 0, &best, NULL, 0), 0);
	assert_true(now_us() - t0 < 1000);
	assert_hint(&best, "0-1", true);
	/* node 0 has 10 free: the lowest fitting pair is {1,2} */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-9,64-1023", 100, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "1-2", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 1000, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0-15", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, NULL, 64, &d, 1, &best,
				    NULL, 0), 0);
	assert_hint(&best, "9", true);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_SINGLE_NUMA_NODE, NULL, 65, NULL, 0, &best,
				    NULL, 0), -EXDEV);
	free(t);
}

static void test_sixty_four_nodes(void **state)
{
	struct alloc_topo *t = tl_generate(4, 16, 4, 4);	/* 64 nodes × 16 CPUs */
	struct numa_hint best, dev[] = { hint("61-63", true) };
	struct numa_hints d = list_of(dev, 1), h;
	double t0;

	(void)state;
	assert_int_equal(t->n_nodes, 64);
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 40, NULL, 0, &best, NULL, 0), 0);
	assert_hint(&best, "0-2", true);
	/* only the last three nodes are free */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "976-1023", 40, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "61-63", true);
	/* a device list equal to a preferred CPU mask */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 40, &d, 1, &best, NULL, 0), 0);
	assert_hint(&best, "61-63", true);
	/* 500 CPUs: 32 of 64 nodes, C(64,32) ~ 1.8e18 masks kubelet would list */
	t0 = now_us();
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, NULL, 500, NULL, 0, &best, NULL, 0), 0);
	assert_true(now_us() - t0 < 1000);
	assert_hint(&best, "0-31", true);
	/* node 31 has 3 free: the lowest 32-node fit swaps it for node 32 */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "0-495,509-1023", 500, NULL, 0,
				    &best, NULL, 0), 0);
	assert_hint(&best, "0-30,32", true);
	/* node 0 has 3 free: no fitting 32-node mask can hold it */
	assert_int_equal(admit_cpus(t, NUMA_POLICY_RESTRICTED, "13-1023", 500, NULL, 0, &best,
				    NULL, 0), 0);
	assert_hint(&best, "1-32", true);
	/* listing them is refused, not attempted */
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 500, &h), 0);
	assert_int_equal(numa_hints_expand(t, &h, 0, &best, 1), -E2BIG);
	free(t);
}

/* At 64 nodes, compare with brute force over all masks of up to 3 nodes. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_sixty_four_nodes_brute(void **state)
{
	struct alloc_topo *t = tl_generate(4, 16, 4, 4);

	(void)state;
	for (int trial = 0; trial < 40; trial++) {
		unsigned free_[64] = { 0 }, n = 17 + (unsigned)(rnd() % 32);	/* 2-3 nodes */
		unsigned need = n <= 32 ? 2 : 3;
		uint64_t want = 0;
		struct cpumask a;
		struct numa_hint best;
		int r;

		cpumask_zero(&a);
		for (unsigned cpu = 0; cpu < 1024; cpu++)
			if (rnd() % 4 != 0) {
				cpumask_set(&a, cpu);
				free_[cpu / 16]++;
			}
		/* lowest mask of `need` nodes with >= n free, by increasing value */
		for (unsigned hi = need - 1; hi < 64 && !want; hi++)
			for (unsigned mid = need - 2; mid < hi && !want; mid++) {
				if (need == 2) {
					if (free_[mid] + free_[hi] >= n)
						want = (1ULL << mid) | (1ULL << hi);
					continue;
				}
				for (unsigned lo = 0; lo < mid && !want; lo++)
					if (free_[lo] + free_[mid] + free_[hi] >= n)
						want = (1ULL << lo) | (1ULL << mid) | (1ULL << hi);
			}
		{
			struct numa_hints h;

			assert_int_equal(numa_cpu_hints(t, &a, NULL, n, &h), 0);
			r = numa_admit(t, NUMA_POLICY_RESTRICTED, NULL, &h, 1, &best, NULL, 0);
		}
		if (!want) {
			assert_int_equal(r, -EXDEV);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(best.nodes.bits[0], want);
	}
	free(t);
}

/* ---- scope ---------------------------------------------------------- */

static void test_pod_cpus(void **state)
{
	const struct numa_container a[] = { { 4, NUMA_CONTAINER_INIT }, { 2, NUMA_CONTAINER_APP },
					    { 3, NUMA_CONTAINER_APP } };
	const struct numa_container b[] = { { 6, NUMA_CONTAINER_INIT }, { 2, NUMA_CONTAINER_APP },
					    { 3, NUMA_CONTAINER_APP } };
	/* sidecar 1 then init 4: the init runs next to it (5); apps 2 + 1 */
	const struct numa_container c[] = { { 1, NUMA_CONTAINER_SIDECAR }, { 4, NUMA_CONTAINER_INIT },
					    { 2, NUMA_CONTAINER_APP } };
	const struct numa_container d[] = { { 4, NUMA_CONTAINER_INIT }, { 3, NUMA_CONTAINER_SIDECAR },
					    { 2, NUMA_CONTAINER_APP } };

	(void)state;
	assert_int_equal(numa_pod_cpus(a, 3), 5);
	assert_int_equal(numa_pod_cpus(b, 3), 6);
	assert_int_equal(numa_pod_cpus(c, 3), 5);
	assert_int_equal(numa_pod_cpus(d, 3), 5);
	assert_int_equal(numa_pod_cpus(NULL, 0), 0);
}

static void test_pod_scope(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	const struct numa_container c[] = { { 2, NUMA_CONTAINER_APP }, { 3, NUMA_CONTAINER_APP } };
	const struct numa_container big[] = { { 2, NUMA_CONTAINER_APP }, { 5, NUMA_CONTAINER_APP } };
	struct numa_hint out[2], keep[2];
	char why[256];

	(void)state;
	/* pod scope: 5 CPUs need both nodes, one hint for every container */
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_RESTRICTED, NUMA_SCOPE_POD, NULL, &t->cpus,
					NULL, c, 2, out, NULL, 0), 0);
	assert_hint(&out[0], "0-1", true);
	assert_hint(&out[1], "0-1", true);
	/* container scope: each fits node 0 on its own */
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_RESTRICTED, NUMA_SCOPE_CONTAINER, NULL,
					&t->cpus, NULL, c, 2, out, NULL, 0), 0);
	assert_hint(&out[0], "0", true);
	assert_hint(&out[1], "0", true);
	/* single-numa-node: the pod as a whole does not fit one node */
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_SINGLE_NUMA_NODE, NUMA_SCOPE_POD, NULL,
					&t->cpus, NULL, c, 2, out, why, sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 5 CPUs "
				 "under policy single-numa-node (best: none)");
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_SINGLE_NUMA_NODE, NUMA_SCOPE_CONTAINER,
					NULL, &t->cpus, NULL, c, 2, out, NULL, 0), 0);
	memcpy(keep, out, sizeof(out));
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_SINGLE_NUMA_NODE, NUMA_SCOPE_CONTAINER,
					NULL, &t->cpus, NULL, big, 2, out, why, sizeof(why)), -EXDEV);
	assert_string_equal(why, "topology affinity error: no preferred NUMA alignment for 5 CPUs "
				 "of container 1 under policy single-numa-node (best: none)");
	assert_memory_equal(out, keep, sizeof(out));
	/* none: admitted without affinity */
	assert_int_equal(numa_admit_pod(t, NUMA_POLICY_NONE, NUMA_SCOPE_POD, NULL, &t->cpus, NULL,
					big, 2, out, NULL, 0), 0);
	assert_hint(&out[1], "", false);
	free(t);
}

static void test_bad_input(void **state)
{
	struct alloc_topo *t = tl_generate(1, 2, 2, 2);
	struct numa_hint best, bad[] = { hint("7", true) };
	struct numa_hints pv[2], l = list_of(bad, 1);
	struct cpumask a = tl_mask("0-8");

	(void)state;
	assert_int_equal(numa_cpu_hints(t, &a, NULL, 2, &pv[0]), -EINVAL);
	assert_int_equal(numa_cpu_hints(t, &t->cpus, &a, 2, &pv[0]), -EINVAL);
	assert_int_equal(numa_cpu_hints(t, &t->cpus, NULL, 2, &pv[0]), 0);
	pv[1] = pv[0];
	assert_int_equal(numa_merge(t, NUMA_POLICY_BEST_EFFORT, NULL, pv, 2, &best), -EOPNOTSUPP);
	pv[1] = l;
	assert_int_equal(numa_merge(t, NUMA_POLICY_BEST_EFFORT, NULL, pv, 2, &best), -EINVAL);
	pv[1].list = NULL;
	assert_int_equal(numa_merge(t, NUMA_POLICY_BEST_EFFORT, NULL, pv, 2, &best), -EINVAL);
	assert_int_equal(numa_merge(t, (enum numa_policy)7, NULL, pv, 1, &best), -EINVAL);
	assert_int_equal(numa_merge(t, NUMA_POLICY_BEST_EFFORT, NULL, NULL, 1, &best), -EINVAL);
	assert_int_equal(numa_merge(t, NUMA_POLICY_BEST_EFFORT, NULL, pv, NUMA_MAX_PROVIDERS + 1,
				    &best), -E2BIG);
	assert_int_equal(numa_hints_expand(t, &l, 0, &best, 1), -EINVAL);
	free(t);
}

/* ---- kubelet, replayed literally ------------------------------------ */

/* A hint on dense node indexes; mask 0 = nil. */
struct rh {
	uint64_t mask;
	bool pref;
};

static void ref_combos(unsigned n, unsigned size, unsigned start, uint64_t acc, unsigned depth,
		       uint64_t *out, size_t *k)
{
	if (depth == size) {
		out[(*k)++] = acc;
		return;
	}
	for (unsigned i = start; i < n; i++)
		ref_combos(n, size, i + 1, acc | (1ULL << i), depth + 1, out, k);
}

/* generateCPUTopologyHints, over bitmask.IterateBitMasks order. */
static size_t ref_cpu_hints(const struct alloc_topo *t, const struct cpumask *avail,
			    const struct cpumask *reuse, unsigned req, struct rh *out)
{
	static uint64_t masks[1 << 8];
	unsigned n = t->n_nodes, min_aff = n;
	size_t nm = 0, k = 0;
	int cpu;

	for (unsigned size = 1; size <= n; size++)
		ref_combos(n, size, 0, 0, 0, masks, &nm);
	for (size_t i = 0; i < nm; i++) {
		unsigned in_mask = 0, matching = 0;
		bool skip = false;

		cpumask_for_each(cpu, &t->cpus)
			if (masks[i] >> t->node_of[cpu] & 1)
				in_mask++;
		if (in_mask >= req && (unsigned)__builtin_popcountll(masks[i]) < min_aff)
			min_aff = (unsigned)__builtin_popcountll(masks[i]);
		cpumask_for_each(cpu, reuse) {
			if (!(masks[i] >> t->node_of[cpu] & 1))
				skip = true;
			matching++;
		}
		if (skip)
			continue;
		cpumask_for_each(cpu, avail)
			if (masks[i] >> t->node_of[cpu] & 1)
				matching++;
		if (matching >= req)
			out[k++] = (struct rh){ masks[i], false };
	}
	for (size_t i = 0; i < k; i++)
		out[i].pref = (unsigned)__builtin_popcountll(out[i].mask) == min_aff;
	return k;
}

struct ref_merger {
	uint64_t all;
	unsigned b;
	const uint8_t (*dist)[ALLOC_MAX_NODES];	/* NULL: narrowest */
};

static int cnt(uint64_t m)
{
	return __builtin_popcountll(m);
}

static bool ref_narrower(uint64_t a, uint64_t b)
{
	return cnt(a) == cnt(b) ? a < b : cnt(a) < cnt(b);
}

static double ref_avg(const struct ref_merger *r, uint64_t m)
{
	double sum = 0, n = 0;

	for (uint64_t a = m; a; a &= a - 1)
		for (uint64_t b = m; b; b &= b - 1) {
			sum += r->dist[__builtin_ctzll(a)][__builtin_ctzll(b)];
			n++;
		}
	return sum / n;
}

/* CompareNUMAAffinityMasks: true when the candidate wins. */
static bool ref_cmp_masks(const struct ref_merger *r, uint64_t cur, uint64_t cand)
{
	uint64_t best;

	if (cand == cur)
		return false;
	if (!r->dist || cnt(cur) != cnt(cand)) {
		best = ref_narrower(cur, cand) ? cur : cand;
	} else {
		double dc = ref_avg(r, cur), dn = ref_avg(r, cand);

		if (dc == dn)
			best = cur < cand ? cur : cand;
		else
			best = dc < dn ? cur : cand;
	}
	return best != cur;
}

/* HintMerger.compare: true when the candidate replaces the current one. */
static bool ref_compare(const struct ref_merger *r, const struct rh *cur, bool have,
			const struct rh *cand)
{
	int b = (int)r->b;

	if (cnt(cand->mask) == 0)
		return false;
	if (!have)
		return true;
	if (!cur->pref && cand->pref)
		return true;
	if (cur->pref && !cand->pref)
		return false;
	if (cur->pref && cand->pref)
		return ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cur->mask) > b)
		return ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cur->mask) == b)
		return cnt(cand->mask) == b && ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cand->mask) > b)
		return false;
	if (cnt(cand->mask) == b)
		return true;
	if (cnt(cand->mask) > cnt(cur->mask))
		return true;
	if (cnt(cand->mask) < cnt(cur->mask))
		return false;
	return ref_cmp_masks(r, cur->mask, cand->mask);
}

struct ref_provider {
	bool any;		/* nil hints: no preference */
	const struct rh *h;
	size_t n;
};

static struct rh ref_merge(unsigned n_nodes, enum numa_policy pol,
			   const uint8_t (*dist)[ALLOC_MAX_NODES], const struct ref_provider *pv,
			   size_t npv)
{
	static const struct rh nil_pref = { 0, true }, nil_unpref = { 0, false };
	static struct rh store[8][1 << 8];
	size_t sizes[8], idx[8] = { 0 }, nl = 0;
	struct ref_merger r = { .all = n_nodes >= 64 ? ~0ULL : (1ULL << n_nodes) - 1 };
	bool single = pol == NUMA_POLICY_SINGLE_NUMA_NODE, have = false;
	struct rh best = { 0 };

	r.dist = single ? NULL : dist;
	for (size_t i = 0; i < npv; i++, nl++) {	/* filterProvidersHints */
		const struct rh *src = pv[i].any ? &nil_pref : pv[i].n ? pv[i].h : &nil_unpref;
		size_t n = pv[i].any || !pv[i].n ? 1 : pv[i].n;

		sizes[nl] = 0;
		for (size_t j = 0; j < n; j++)
			if (!single || (src[j].pref && cnt(src[j].mask) <= 1))
				store[nl][sizes[nl]++] = src[j];
	}
	for (size_t i = 0; i < nl; i++) {	/* maxOfMinAffinityCounts */
		int least = 0;

		for (size_t j = 0; j < sizes[i]; j++)
			if (store[i][j].mask && (!least || cnt(store[i][j].mask) < least))
				least = cnt(store[i][j].mask);
		if (least > (int)r.b)
			r.b = (unsigned)least;
	}
	for (size_t i = 0; i < nl; i++)
		if (!sizes[i])
			goto out;
	for (;;) {
		struct rh cand = { r.all, true };
		uint64_t first = 0;
		size_t i;

		for (i = 0; i < nl; i++) {	/* mergePermutation */
			const struct rh *h = &store[i][idx[i]];

			if (h->mask) {
				if (!first)
					first = h->mask;
				if (h->mask != first)
					cand.pref = false;
				cand.mask &= h->mask;
			}
			if (!h->pref)
				cand.pref = false;
		}
		if (ref_compare(&r, &best, have, &cand)) {
			best = cand;
			have = true;
		}
		for (i = 0; i < nl; i++) {
			if (++idx[i] < sizes[i])
				break;
			idx[i] = 0;
		}
		if (i == nl)
			break;
	}
out:
	if (!have)
		best = (struct rh){ r.all, false };
	if (single && best.mask == r.all)
		best.mask = 0;
	return best;
}

static uint64_t dense_of(const struct alloc_topo *t, const struct cpumask *ids)
{
	uint64_t d = 0;

	for (unsigned i = 0; i < t->n_nodes; i++)
		if (cpumask_test(ids, (unsigned)t->node_id[i]))
			d |= 1ULL << i;
	return d;
}

static void ids_of(const struct alloc_topo *t, uint64_t d, struct cpumask *ret)
{
	cpumask_zero(ret);
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (d >> i & 1)
			cpumask_set(ret, (unsigned)t->node_id[i]);
}

/* A random machine of n <= 8 nodes, 1-4 CPUs each, node ids 0,1,.. or 0,3,.. */
static struct alloc_topo *random_topo(unsigned n)
{
	struct alloc_cpu_desc d[64];
	struct alloc_topo *t = calloc(1, sizeof(*t));
	unsigned stride = rnd() % 2 ? 1 : 3, cpu = 0;

	assert_non_null(t);
	for (unsigned node = 0; node < n; node++)
		for (unsigned k = 1 + (unsigned)(rnd() % 4); k; k--, cpu++)
			d[cpu] = (struct alloc_cpu_desc){ .cpu = cpu, .core = cpu, .socket = 0,
							  .uncore = node, .node = (int)(node * stride) };
	assert_int_equal(alloc_topo_build(d, cpu, t), 0);
	return t;
}

/* A random explicit provider: ANY, empty, or 1-4 random hints. */
static void random_list(const struct alloc_topo *t, struct rh *rh, struct numa_hint *api,
			struct ref_provider *rp, struct numa_hints *ap)
{
	unsigned shape = (unsigned)(rnd() % 8);
	uint64_t all = (1ULL << t->n_nodes) - 1;

	if (shape == 0) {
		*rp = (struct ref_provider){ .any = true };
		*ap = (struct numa_hints){ .kind = NUMA_HINTS_ANY };
		return;
	}
	if (shape == 1) {
		*rp = (struct ref_provider){ .h = rh, .n = 0 };
		*ap = list_of(api, 0);
		return;
	}
	rp->any = false;
	rp->h = rh;
	rp->n = 1 + rnd() % 4;
	for (size_t j = 0; j < rp->n; j++) {
		rh[j].mask = rnd() % 6 == 0 ? 0 : rnd() & all;	/* some nil (and empty) */
		rh[j].pref = rnd() % 3 != 0;
		ids_of(t, rh[j].mask, &api[j].nodes);
		api[j].preferred = rh[j].pref;
	}
	*ap = list_of(api, rp->n);
}

static void test_matches_kubelet_fold(void **state)
{
	static struct rh cpu_ref[1 << 8];
	static struct numa_hint cpu_api[1 << 8];
	static const enum numa_policy pols[] = { NUMA_POLICY_BEST_EFFORT, NUMA_POLICY_RESTRICTED,
						 NUMA_POLICY_SINGLE_NUMA_NODE };
	uint8_t dist[ALLOC_MAX_NODES][ALLOC_MAX_NODES];
	unsigned checked = 0, preferred = 0;

	(void)state;
	for (int trial = 0; trial < 6000; trial++) {
		struct alloc_topo *t = random_topo(1 + (unsigned)(rnd() % 8));
		unsigned total = cpumask_weight(&t->cpus), req = (unsigned)(rnd() % (total + 2));
		struct cpumask avail, reuse;
		struct rh lists[2][4];
		struct numa_hint api[2][4], got;
		struct ref_provider rp[3];
		struct numa_hints ap[3];
		size_t n_extra = rnd() % 3, nref;
		enum numa_policy pol = pols[rnd() % 3];
		bool closest = rnd() % 2;
		struct numa_opts opts = { .prefer_closest = closest, .distance = dist };
		struct rh want;
		int cpu, r;

		cpumask_zero(&avail);
		cpumask_zero(&reuse);
		cpumask_for_each(cpu, &t->cpus) {
			unsigned x = (unsigned)(rnd() % 8);

			if (x < 5)
				cpumask_set(&avail, cpu);
			else if (x >= 6 && trial % 2 == 0)
				cpumask_set(&reuse, cpu);
		}
		for (unsigned i = 0; i < t->n_nodes; i++)	/* asymmetric half the time */
			for (unsigned j = 0; j <= i; j++) {
				static const uint8_t d[] = { 12, 20, 21, 30 };

				dist[i][j] = dist[j][i] = i == j ? 10 : d[rnd() % 4];
				if (trial % 2)
					dist[j][i] = i == j ? 10 : d[rnd() % 4];
			}

		/* the CPU hints: implicit vs kubelet's full list */
		assert_int_equal(numa_cpu_hints(t, &avail, &reuse, req, &ap[0]), 0);
		nref = ref_cpu_hints(t, &avail, &reuse, req, cpu_ref);
		rp[0] = (struct ref_provider){ .any = req == 0, .h = cpu_ref, .n = nref };
		if (req) {
			assert_int_equal(numa_hints_expand(t, &ap[0], 0, cpu_api, 1 << 8), (int)nref);
			for (size_t i = 0; i < nref; i++) {
				assert_int_equal(dense_of(t, &cpu_api[i].nodes), cpu_ref[i].mask);
				assert_int_equal(cpu_api[i].preferred, cpu_ref[i].pref);
			}
		}
		for (size_t i = 0; i < n_extra; i++)
			random_list(t, lists[i], api[i], &rp[1 + i], &ap[1 + i]);

		want = ref_merge(t->n_nodes, pol, closest ? dist : NULL, rp, 1 + n_extra);
		r = numa_merge(t, pol, &opts, ap, 1 + n_extra, &got);
		assert_int_equal(r, 0);
		if (dense_of(t, &got.nodes) != want.mask || got.preferred != want.pref)
			fail_msg("trial %d: %s nodes=%u req=%u closest=%d extra=%zu: got %#llx/%d "
				 "want %#llx/%d", trial, numa_policy_name(pol), t->n_nodes, req,
				 closest, n_extra, (unsigned long long)dense_of(t, &got.nodes),
				 got.preferred, (unsigned long long)want.mask, want.pref);
		/* the same with the CPU hints listed out explicitly */
		if (req) {
			struct numa_hints listed[3];

			memcpy(listed, ap, sizeof(ap));
			listed[0] = list_of(cpu_api, nref);
			assert_int_equal(numa_merge(t, pol, &opts, listed, 1 + n_extra, &got), 0);
			assert_int_equal(dense_of(t, &got.nodes), want.mask);
			assert_int_equal(got.preferred, want.pref);
		}
		checked++;
		preferred += want.pref;
		free(t);
	}
	/* the random cases cover both outcomes */
	assert_true(preferred > checked / 5 && preferred < checked * 4 / 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_doc_hints_two_nodes),
		cmocka_unit_test(test_doc_fragmented_only_unpreferred),
		cmocka_unit_test(test_doc_merge_table),
		cmocka_unit_test(test_single_node_fit_preferred),
		cmocka_unit_test(test_span_two_nodes),
		cmocka_unit_test(test_restricted_refusal),
		cmocka_unit_test(test_single_numa_refuses_two_node_fit),
		cmocka_unit_test(test_single_numa_one_node_machine),
		cmocka_unit_test(test_best_effort_admits_non_preferred),
		cmocka_unit_test(test_none_policy),
		cmocka_unit_test(test_reusable),
		cmocka_unit_test(test_merge_two_providers),
		cmocka_unit_test(test_prefer_closest),
		cmocka_unit_test(test_sixteen_nodes),
		cmocka_unit_test(test_sixty_four_nodes),
		cmocka_unit_test(test_sixty_four_nodes_brute),
		cmocka_unit_test(test_pod_cpus),
		cmocka_unit_test(test_pod_scope),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_matches_kubelet_fold),
	};

	return cmocka_run_group_tests_name("numa_align", tests, NULL, NULL);
}
