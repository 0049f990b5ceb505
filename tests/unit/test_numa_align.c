// SPDX-License-Identifier: Apache-2.0
/*
 * NUMA alignment with kubelet Topology Manager semantics (numa_align.h):
 * the Topology Manager walk-through's cases, kubelet's policy rules, more
 * than 8 NUMA nodes, pod scope and bad input. The checks against
 * reference answers (brute force, kubelet replayed literally) are in
 * test_numa_align_reference.c.
 *
 * Topologies come from alloc_topo_generate(sockets, nodes per socket,
 * cores per node, threads): nodes hold consecutive CPUs.
 */
#include "test_numa_align.h"

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
		cmocka_unit_test(test_pod_cpus),
		cmocka_unit_test(test_pod_scope),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("numa_align", tests, NULL, NULL);
}
