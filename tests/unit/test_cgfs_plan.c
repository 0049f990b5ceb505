// SPDX-License-Identifier: Apache-2.0
/*
 * The cgroup v2 write planner (cgroupfs/cgfs_plan.c), table-driven: each
 * case is a tree (top, QoS slices, pods, containers with their targets and
 * current own sets) and the exact ordered write list expected. Every case
 * is also replayed through the kernel's rule (cgfs_plan_effective): after
 * all writes each container's effective set is its target, and after each
 * single write no container runs outside old ∪ new effective set. Then
 * the scaling claims: writes per resize by pods, not containers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cgroupfs/cgfs_plan.h"
#include "testlib.h"

#define MAXN	16
#define LEAF(p, t, own)	{ p, true, false, t, own }
#define EXCL(p, t, own)	{ p, true, true, t, own }
#define NODE(p, own)	{ p, false, false, "", own }

struct spec {
	int parent;
	bool leaf, exclusive;
	const char *target, *own;
};

struct plan_case {
	const char *name;
	const char *above;
	struct spec nodes[MAXN];
	int n;
	const char *writes;	/* "node=cpus node=cpus ..." in order; "" = none */
};

static const struct plan_case cases[] = {
	{ "fresh burstable slice: one write at the slice, containers inherit", "0-15",
	  { NODE(-1, ""), NODE(0, ""), NODE(1, ""), NODE(1, ""),
	    LEAF(2, "1-15", ""), LEAF(2, "1-15", ""), LEAF(3, "1-15", "") }, 7,
	  "1=1-15" },
	{ "resize: the slice only", "0-15",
	  { NODE(-1, ""), NODE(0, "1-15"), NODE(1, ""), NODE(1, ""),
	    LEAF(2, "2-15", ""), LEAF(2, "2-15", ""), LEAF(3, "2-15", "") }, 7,
	  "1=2-15" },
	{ "nothing changes: no write", "0-15",
	  { NODE(-1, ""), NODE(0, "2-15"), NODE(1, ""), LEAF(2, "2-15", "") }, 4, "" },
	{ "containers with their own set (runtime, older cpusetd) get every CPU: \"\" is refused",
	  "0-15",
	  { NODE(-1, ""), NODE(0, "1-15"), NODE(1, ""), NODE(1, "1-15"),
	    LEAF(2, "2-15", "0-15"), LEAF(2, "2-15", "3"), LEAF(3, "2-15", "1-15") }, 7,
	  "1=2-15 3=0-15 6=0-15 5=0-15" },
	{ "annotated pod arrives under the burstable slice: slice inherits, pods hold their sets",
	  "0-15",
	  { NODE(-1, ""), NODE(0, "0-15"), NODE(1, ""), NODE(1, ""),
	    LEAF(2, "4-15", ""), LEAF(2, "4-15", ""), LEAF(3, "4-15", ""), EXCL(3, "2-3", "") }, 8,
	  "2=4-15 6=4-15 7=2-3" },
	{ "annotated CPUs outside the slice's set: pin children first, open the slice last",
	  "0-15",
	  { NODE(-1, ""), NODE(0, "2-15"), NODE(1, ""), NODE(1, ""),
	    LEAF(2, "2-15", ""), LEAF(2, "2-15", ""), LEAF(3, "2-15", ""), EXCL(3, "0-1", "") }, 8,
	  "2=2-15 6=2-15 7=0-1 1=0-15" },
	{ "resize under a mixed slice: one write per pod, not per container", "0-15",
	  { NODE(-1, ""), NODE(0, ""), NODE(1, "4-15"), NODE(1, ""),
	    LEAF(2, "5-15", ""), LEAF(2, "5-15", ""), LEAF(3, "5-15", "4-15"), EXCL(3, "2-3", "2-3"),
	    NODE(1, "4-15"), LEAF(8, "5-15", ""), LEAF(8, "5-15", ""), LEAF(8, "5-15", "") }, 12,
	  "2=5-15 6=5-15 8=5-15" },
	{ "annotated pod gone: the slice holds the pool again, pods inherit (every CPU)", "0-15",
	  { NODE(-1, ""), NODE(0, ""), NODE(1, "4-15"), LEAF(2, "2-15", ""),
	    NODE(1, "4-15"), LEAF(4, "2-15", "") }, 6,
	  "1=2-15 4=0-15 2=0-15" },
	{ "integer Guaranteed pod under the top: sandbox on the pool, app on its CPUs", "0-15",
	  { NODE(-1, ""), NODE(0, ""), LEAF(1, "1-15", ""), EXCL(1, "0", "") }, 4,
	  "2=1-15 3=0" },
	{ "integer pod's second sandbox-only phase: pod holds the pool until the app arrives",
	  "0-15",
	  { NODE(-1, ""), NODE(0, ""), LEAF(1, "0-15", "") }, 3, "1=0-15" },
	{ "app arrives in a pod that held the pool: pin the sandbox, then open the pod",
	  "0-15",
	  { NODE(-1, ""), NODE(0, "0-15"), LEAF(1, "1-15", ""), EXCL(1, "0", "") }, 4,
	  "2=1-15 3=0" },
	{ "BE slice and burstable slice: one write each", "0-15",
	  { NODE(-1, ""), NODE(0, "2-15"), NODE(1, ""), LEAF(2, "3-15", ""),
	    NODE(0, "0-15"), NODE(4, ""), LEAF(5, "1-15", "") }, 7,
	  "1=3-15 4=1-15" },
	{ "the top's own set lacks a needed CPU: widened, after its children", "0-15",
	  { NODE(-1, "4-15"), NODE(0, ""), NODE(1, ""), LEAF(2, "2-15", "") }, 4,
	  "1=2-15 0=2-15" },
	{ "the top inheriting is never written", "0-15",
	  { NODE(-1, ""), NODE(0, ""), NODE(1, ""), LEAF(2, "2-15", "") }, 4, "1=2-15" },
	{ "a pod with no container yet keeps its set", "0-15",
	  { NODE(-1, ""), NODE(0, "2-15"), NODE(1, "7"), NODE(1, ""), LEAF(3, "3-15", "") }, 5,
	  "1=3-15" },
	{ "a container with no target keeps its set", "0-15",
	  { NODE(-1, ""), NODE(0, "2-15"), NODE(1, ""), LEAF(2, "3-15", ""), LEAF(2, "", "5") }, 5,
	  "1=3-15" },
};

static void build(const struct plan_case *c, struct cgfs_plan_node *nodes)
{
	memset(nodes, 0, sizeof(*nodes) * (size_t)c->n);
	for (int i = 0; i < c->n; i++) {
		nodes[i].parent = c->nodes[i].parent;
		nodes[i].leaf = c->nodes[i].leaf;
		nodes[i].exclusive = c->nodes[i].exclusive;
		nodes[i].target = tl_mask(c->nodes[i].target);
		nodes[i].own = tl_mask(c->nodes[i].own);
	}
}

static void format_writes(const struct cgfs_plan_write *w, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char cpus[CPULIST_MAX];

		cpulist_format(&w[i].cpus, cpus, sizeof(cpus));
		off += (size_t)snprintf(buf + off, len - off, "%s%d=%s", i ? " " : "", w[i].node, cpus);
	}
}

/* Replays the writes one by one through the kernel's rule. */
static void replay(const struct plan_case *c, struct cgfs_plan_node *nodes,
		   const struct cgfs_plan_write *w, size_t nw)
{
	struct cpumask above = tl_mask(c->above), own[MAXN], before[MAXN], eff[MAXN];

	for (int i = 0; i < c->n; i++)
		own[i] = nodes[i].own;
	assert_int_equal(cgfs_plan_effective(nodes, (size_t)c->n, own, &above, before), 0);
	for (size_t k = 0; k < nw; k++) {
		own[w[k].node] = w[k].cpus;
		assert_int_equal(cgfs_plan_effective(nodes, (size_t)c->n, own, &above, eff), 0);
		for (int i = 0; i < c->n; i++) {
			struct cpumask ok;

			if (!nodes[i].leaf || cpumask_empty(&nodes[i].target))
				continue;
			cpumask_or(&ok, &before[i], &nodes[i].target);
			if (!cpumask_subset(&eff[i], &ok))
				fail_msg("%s: after write %zu container %d runs outside old ∪ new",
					 c->name, k, i);
		}
	}
	cgfs_plan_effective(nodes, (size_t)c->n, own, &above, eff);
	for (int i = 0; i < c->n; i++) {
		if (nodes[i].leaf && !cpumask_empty(&nodes[i].target) &&
		    !cpumask_equal(&eff[i], &nodes[i].target))
			fail_msg("%s: container %d does not end on its target", c->name, i);
		if (!cpumask_equal(&eff[i], &nodes[i].eff))
			fail_msg("%s: node %d: planned effective set is not the kernel's", c->name, i);
	}
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plan_case *c = &cases[i];
		struct cgfs_plan_node nodes[MAXN];
		struct cgfs_plan_write w[MAXN];
		struct cpumask above = tl_mask(c->above);
		char got[1024];
		size_t nw = 99;

		build(c, nodes);
		assert_int_equal(cgfs_plan_v2(nodes, (size_t)c->n, &above, w, &nw), 0);
		format_writes(w, nw, got, sizeof(got));
		if (strcmp(got, c->writes))
			fail_msg("%s: writes \"%s\", want \"%s\"", c->name, got, c->writes);
		replay(c, nodes, w, nw);
	}
}

static void test_bad_trees(void **state)
{
	struct cgfs_plan_node nodes[3] = { { .parent = -1 }, { .parent = 0 }, { .parent = 1 } };
	struct cgfs_plan_write w[3];
	struct cpumask above = tl_mask("0-3");
	size_t nw;

	(void)state;
	assert_int_equal(cgfs_plan_v2(nodes, 0, &above, w, &nw), -EINVAL);
	assert_int_equal(cgfs_plan_v2(NULL, 3, &above, w, &nw), -EINVAL);
	assert_int_equal(cgfs_plan_v2(nodes, 3, NULL, w, &nw), -EINVAL);
	nodes[2].parent = 2;
	assert_int_equal(cgfs_plan_v2(nodes, 3, &above, w, &nw), -EINVAL);
	nodes[2].parent = 1;
	nodes[1].leaf = true;
	assert_int_equal(cgfs_plan_v2(nodes, 3, &above, w, &nw), -EINVAL);
	nodes[1].leaf = false;
	nodes[0].parent = 0;
	assert_int_equal(cgfs_plan_v2(nodes, 3, &above, w, &nw), -EINVAL);
	nodes[0].parent = -1;
	assert_int_equal(cgfs_plan_v2(nodes, 3, &above, w, &nw), 0);
	assert_int_equal(nw, 0);
}

/*
 * A kubepods tree: burstable slice with pods × ctrs shared containers and
 * `annotated` annotated pods (sandbox + app), and `integer` Guaranteed
 * integer pods under the top. Every own set as the previous plan left it
 * (planned with pool `from`), then planned again with pool `to`.
 * Returns the number of writes of the second plan.
 */
static size_t resize_writes(int pods, int ctrs, int annotated, int integer)
{
	size_t cap = (size_t)(2 + pods * (ctrs + 1) + (annotated + integer) * 3);
	struct cgfs_plan_node *nodes = calloc(cap, sizeof(*nodes));
	struct cgfs_plan_write *w = calloc(cap, sizeof(*w));
	struct cpumask above = tl_mask("0-63"), pool = tl_mask("8-63");
	size_t n = 0, nw = 0, writes;

	nodes[n++] = (struct cgfs_plan_node){ .parent = -1 };
	nodes[n++] = (struct cgfs_plan_node){ .parent = 0 };
	for (int p = 0; p < pods + annotated; p++) {
		int pod = (int)n;

		nodes[n++] = (struct cgfs_plan_node){ .parent = 1 };
		for (int k = 0; k < (p < pods ? ctrs : 2); k++) {
			bool app = p >= pods && k == 1;

			nodes[n++] = (struct cgfs_plan_node){
				.parent = pod, .leaf = true, .exclusive = app,
				.target = app ? tl_mask("0-1") : pool };
		}
	}
	for (int p = 0; p < integer; p++) {
		int pod = (int)n;

		nodes[n++] = (struct cgfs_plan_node){ .parent = 0 };
		nodes[n++] = (struct cgfs_plan_node){ .parent = pod, .leaf = true, .target = pool };
		nodes[n] = (struct cgfs_plan_node){ .parent = pod, .leaf = true, .exclusive = true };
		cpumask_set(&nodes[n++].target, (unsigned)(2 + p));
	}
	assert_int_equal(cgfs_plan_v2(nodes, n, &above, w, &nw), 0);
	for (size_t i = 0; i < n; i++) {	/* the kernel now holds that plan */
		nodes[i].own = nodes[i].want;
		if (nodes[i].leaf && !nodes[i].exclusive)
			cpumask_clear(&nodes[i].target, 9);	/* the pool shrinks */
	}
	assert_int_equal(cgfs_plan_v2(nodes, n, &above, w, &nw), 0);
	writes = nw;
	free(nodes);
	free(w);
	return writes;
}

static void test_writes_scale_with_pods(void **state)
{
	(void)state;
	/* No annotated pod under the slice: one write, whatever N. */
	assert_int_equal(resize_writes(10, 1, 0, 0), 1);
	assert_int_equal(resize_writes(100, 1, 0, 0), 1);
	assert_int_equal(resize_writes(100, 5, 0, 0), 1);
	assert_int_equal(resize_writes(500, 1, 0, 0), 1);
	/* Integer pods under the top: one write (the sandbox) each. */
	assert_int_equal(resize_writes(100, 5, 0, 3), 1 + 3);
	/* One annotated pod under the slice: every pod once (its shared
	 * pods, and the annotated pod's sandbox), never per container. */
	assert_int_equal(resize_writes(100, 1, 1, 0), 100 + 1);
	assert_int_equal(resize_writes(100, 5, 1, 0), 100 + 1);
	assert_int_equal(resize_writes(100, 5, 4, 2), 100 + 4 + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bad_trees),
		cmocka_unit_test(test_writes_scale_with_pods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
