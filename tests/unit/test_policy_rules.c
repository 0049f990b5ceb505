// SPDX-License-Identifier: Apache-2.0
/*
 * The allocation rules (PRD): classification, every rule, every
 * admission error and pool book-keeping.
 * Split from test_policy.c by job; helpers in test_policy.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_policy.h"

/* --- classification --- */

struct classify_case {
	const char *name;
	struct policy_request req;
	enum cpusetd_kind kind;
	unsigned ncpus;
};

static void test_classify(void **state)
{
	const struct classify_case cases[] = {
		{ "guaranteed integer", integer("a", 2), CPUSETD_KIND_INTEGER, 2 },
		{ "guaranteed fractional",
		  { .container_id = "b", .qos = POD_QOS_GUARANTEED, .quota_us = 150000,
		    .period_us = 100000 }, CPUSETD_KIND_SHARED, 0 },
		{ "guaranteed unlimited",
		  { .container_id = "c", .qos = POD_QOS_GUARANTEED, .quota_us = -1,
		    .period_us = 100000 }, CPUSETD_KIND_SHARED, 0 },
		{ "burstable integer quota",
		  { .container_id = "d", .qos = POD_QOS_BURSTABLE, .quota_us = 200000,
		    .period_us = 100000 }, CPUSETD_KIND_SHARED, 0 },
		{ "besteffort", { .container_id = "e", .qos = POD_QOS_BESTEFFORT, .quota_us = -1 },
		  CPUSETD_KIND_SHARED, 0 },
		{ "annotated", annotated("f", "3"), CPUSETD_KIND_ANNOTATED, 1 },
		{ "sandbox of annotated pod",
		  { .container_id = "g", .sandbox = true, .cores_ids = "3",
		    .qos = POD_QOS_BURSTABLE }, CPUSETD_KIND_SHARED, 0 },
		{ "sandbox of integer pod",
		  { .container_id = "h", .sandbox = true, .qos = POD_QOS_GUARANTEED,
		    .quota_us = 100000, .period_us = 100000 }, CPUSETD_KIND_SHARED, 0 },
		{ "odd period", { .container_id = "i", .qos = POD_QOS_GUARANTEED,
				  .quota_us = 150000, .period_us = 50000 },
		  CPUSETD_KIND_INTEGER, 3 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture f = fx(1, 8, 1, POLICY_ON_ERROR_REJECT);
		struct policy_decision d;

		if (policy_admit(f.p, &cases[i].req, &d) != 0)
			fail_msg("%s: admission error %s", cases[i].name, d.reason);
		if (d.kind != cases[i].kind)
			fail_msg("%s: kind %d, want %d", cases[i].name, d.kind, cases[i].kind);
		if (d.kind != CPUSETD_KIND_SHARED)
			assert_int_equal(cpumask_weight(&d.cpus), cases[i].ncpus);
		fx_free(&f);
	}
}

/* --- rules --- */

static void test_annotated_refcount(void **state)
{
	struct fixture f = fx(2, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_decision d;
	struct policy_request a = annotated("a", "2-5"), b = annotated("b", "5,6");

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	tl_assert_mask(&d.cpus, "2-5");
	tl_assert_mask(&d.mems, "0-1");	/* spans both nodes */
	assert_int_equal(policy_admit(f.p, &b, &d), 0);
	tl_assert_mask(&d.mems, "1");
	assert_int_equal(policy_annot_ref(f.p, 5), 2);
	assert_pool(f.p, "0-1,7");
	assert_true(policy_release(f.p, "a"));	/* 2-4 freed */
	assert_int_equal(policy_annot_ref(f.p, 5), 1);
	assert_pool(f.p, "0-4,7");
	assert_true(policy_release(f.p, "b"));
	assert_pool(f.p, "0-7");
	assert_false(policy_release(f.p, "b"));
	fx_free(&f);
}

static void test_annotated_same_set_refcount(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = annotated("a", "1"), b = annotated("b", "1");
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	assert_int_equal(policy_admit(f.p, &b, &d), 0);
	assert_false(policy_release(f.p, "a"));	/* still held by b */
	assert_pool(f.p, "0,2-3");
	assert_true(policy_release(f.p, "b"));
	fx_free(&f);
}

static void test_integer_whole_cores_in_one_node(void **state)
{
	/* 2 nodes × 4 cores × 2 threads: node0 = 0-7, node1 = 8-15. */
	struct fixture f = fx(2, 4, 2, POLICY_ON_ERROR_REJECT);
	struct policy_request a = integer("a", 2), b = integer("b", 3), c = integer("c", 6);
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	tl_assert_mask(&d.cpus, "0-1");		/* one whole core */
	tl_assert_mask(&d.mems, "0");
	assert_int_equal(policy_admit(f.p, &b, &d), 0);
	tl_assert_mask(&d.cpus, "2-4");		/* a core, then a thread */
	assert_int_equal(policy_admit(f.p, &c, &d), 0);
	tl_assert_mask(&d.cpus, "8-13");		/* node1 is the only fit */
	tl_assert_mask(&d.mems, "1");
	assert_string_equal(policy_int_owner(f.p, 9), "c");
	assert_pool(f.p, "5-7,14-15");
	fx_free(&f);
}

static void test_integer_spans_nodes_when_needed(void **state)
{
	struct fixture f = fx(2, 2, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = integer("a", 3);
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	tl_assert_mask(&d.cpus, "0-2");
	tl_assert_mask(&d.mems, "0-1");
	fx_free(&f);
}

static void test_integer_release_returns_cpus(void **state)
{
	struct fixture f = fx(1, 2, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = integer("a", 1), s = shared("s");
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &s, &d), 0);
	tl_assert_mask(&d.cpus, "0-1");
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	tl_assert_mask(&d.cpus, "0");
	assert_pool(f.p, "1");
	assert_true(policy_release(f.p, "a"));
	assert_pool(f.p, "0-1");
	assert_null(policy_int_owner(f.p, 0));
	assert_false(policy_release(f.p, "s"));	/* shared: reserved set unchanged */
	fx_free(&f);
}

/* The controller resizes the pools only when an admission or release
 * says they moved (policy_decision.pools_changed, policy_release). */
static void test_pools_changed_reported(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = integer("a", 1), b = annotated("b", "3"), s = shared("s");
	struct policy_decision d;
	uint64_t gen = policy_pools_gen(f.p);

	(void)state;
	assert_int_equal(policy_admit(f.p, &s, &d), 0);
	assert_false(d.pools_changed);
	assert_true(policy_pools_gen(f.p) == gen);
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	assert_true(d.pools_changed);
	assert_int_equal(policy_admit(f.p, &a, &d), 0);	/* known: nothing moves */
	assert_false(d.pools_changed);
	assert_int_equal(policy_admit(f.p, &b, &d), 0);
	assert_true(d.pools_changed);
	gen = policy_pools_gen(f.p);
	assert_false(policy_release(f.p, "s"));
	assert_true(policy_pools_gen(f.p) == gen);
	assert_true(policy_release(f.p, "a"));
	assert_true(policy_pools_gen(f.p) != gen);
	fx_free(&f);
}

static void test_admit_twice_is_idempotent(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = integer("a", 1);
	struct policy_decision d1, d2;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d1), 0);
	assert_int_equal(policy_admit(f.p, &a, &d2), 0);
	assert_true(cpumask_equal(&d1.cpus, &d2.cpus));
	assert_pool(f.p, "1-3");
	fx_free(&f);
}

/* --- admission errors --- */

struct error_case {
	const char *name;
	const char *setup_annot;	/* annotated "x" admitted first, or NULL */
	int setup_integer;		/* integer "y" of N admitted first, or 0 */
	struct policy_request req;
	int rc;
	enum policy_error err;
	const char *in_reason;
};

static void run_error_case(const struct error_case *c, enum policy_on_error on_error)
{
	struct fixture f = fx(1, 4, 1, on_error);
	struct policy_decision d;
	struct cpumask before, after;
	int r;

	if (c->setup_integer) {
		struct policy_request y = integer("y", c->setup_integer);

		assert_int_equal(policy_admit(f.p, &y, &d), 0);
	}
	if (c->setup_annot) {
		struct policy_request x = annotated("x", c->setup_annot);

		assert_int_equal(policy_admit(f.p, &x, &d), 0);
	}
	policy_reserved(f.p, &before);
	r = policy_admit(f.p, &c->req, &d);
	if (r != c->rc || d.err != c->err)
		fail_msg("%s: rc %d err %d (%s), want rc %d err %d", c->name, r, d.err,
			 d.reason, c->rc, c->err);
	if (!strstr(d.reason, c->in_reason))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", c->name, d.reason, c->in_reason);
	/* Nothing else changed; the container is on the shared pool. */
	policy_reserved(f.p, &after);
	assert_true(cpumask_equal(&before, &after));
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	assert_int_equal(d.reject, on_error == POLICY_ON_ERROR_REJECT);
	assert_non_null(policy_lookup(f.p, c->req.container_id));
	assert_int_equal(policy_lookup(f.p, c->req.container_id)->err, c->err);
	fx_free(&f);
}

static void test_admission_errors(void **state)
{
	const struct error_case cases[] = {
		{ "syntax", NULL, 0, annotated("a", "1-x"), -EINVAL,
		  POLICY_ERR_INVALID_ANNOTATION, "not a non-empty cpulist" },
		{ "reversed", NULL, 0, annotated("a", "3-1"), -EINVAL,
		  POLICY_ERR_INVALID_ANNOTATION, "3-1" },
		{ "empty", NULL, 0, annotated("a", ""), -EINVAL,
		  POLICY_ERR_INVALID_ANNOTATION, "empty" },
		{ "huge id", NULL, 0, annotated("a", "4096"), -EINVAL,
		  POLICY_ERR_INVALID_ANNOTATION, "4096" },
		{ "offline", NULL, 0, annotated("a", "2-5"), -ENXIO,
		  POLICY_ERR_CPU_OFFLINE, "CPUs 4-5 are not online" },
		{ "integer-owned", NULL, 1, annotated("a", "0,2"), -EBUSY,
		  POLICY_ERR_CPU_EXCLUSIVE, "CPU 0 is exclusively owned by y" },
		{ "insufficient", NULL, 0, integer("a", 5), -ENOSPC,
		  POLICY_ERR_INSUFFICIENT_CPUS, "needs 5 exclusive CPUs, only 4 free" },
		{ "insufficient after others", "0-1", 0, integer("a", 3), -ENOSPC,
		  POLICY_ERR_INSUFFICIENT_CPUS, "only 2 free (2-3)" },
		{ "pool empty by integer", NULL, 0, integer("a", 4), -ENOSPC,
		  POLICY_ERR_SHARED_POOL_EMPTY, "would leave 0 CPUs" },
		{ "pool empty by annotation", NULL, 0, annotated("a", "0-3"), -ENOSPC,
		  POLICY_ERR_SHARED_POOL_EMPTY, "min_shared_cpus=1" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_error_case(&cases[i], POLICY_ON_ERROR_REJECT);
		run_error_case(&cases[i], POLICY_ON_ERROR_SHARED);
	}
}

static void test_numa_unresolved(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = annotated("a", "3"), b = integer("b", 3);
	struct policy_decision d;

	(void)state;
	/* CPUs 2-3 online but listed in no node: node 0 alone cannot hold
	 * 3 CPUs, so the integer request reaches CPU 2. */
	for (unsigned cpu = 2; cpu < 4; cpu++) {
		f.topo->cpu[cpu].node = -1;
		cpumask_clear(&f.topo->node_cpus[0], cpu);
	}
	assert_int_equal(policy_admit(f.p, &a, &d), -ENXIO);
	assert_int_equal(d.err, POLICY_ERR_NUMA_UNRESOLVED);
	assert_int_equal(policy_admit(f.p, &b, &d), -ENXIO);
	assert_int_equal(d.err, POLICY_ERR_NUMA_UNRESOLVED);
	fx_free(&f);
}

static void test_sandbox_never_rejected(void **state)
{
	struct fixture f = fx(1, 1, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request a = annotated("a", "0");
	struct policy_request sb = { .container_id = "sb", .sandbox = true,
				     .qos = POD_QOS_BURSTABLE };
	struct policy_decision d;

	(void)state;
	/* One CPU: the annotation would empty the pool. */
	assert_int_equal(policy_admit(f.p, &a, &d), -ENOSPC);
	assert_true(d.reject);
	assert_int_equal(policy_admit(f.p, &sb, &d), 0);
	assert_false(d.reject);
	tl_assert_mask(&d.cpus, "0");
	fx_free(&f);
}

static void test_min_shared_cpus(void **state)
{
	struct topology *t = mk_topo(1, 8, 1);
	struct policy_config cfg = { .min_shared_cpus = 3, .cores_ids_namespaces = "*" };
	struct policy *p;
	struct policy_request a = integer("a", 5), b = integer("b", 6);
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_new(t, &cfg, &p), 0);
	assert_int_equal(policy_admit(p, &b, &d), -ENOSPC);
	assert_int_equal(d.err, POLICY_ERR_SHARED_POOL_EMPTY);
	assert_int_equal(policy_admit(p, &a, &d), 0);
	policy_free(p);
	cfg.min_shared_cpus = 0;
	assert_int_equal(policy_new(t, &cfg, &p), -EINVAL);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_annotated_refcount),
		cmocka_unit_test(test_annotated_same_set_refcount),
		cmocka_unit_test(test_integer_whole_cores_in_one_node),
		cmocka_unit_test(test_integer_spans_nodes_when_needed),
		cmocka_unit_test(test_integer_release_returns_cpus),
		cmocka_unit_test(test_pools_changed_reported),
		cmocka_unit_test(test_admit_twice_is_idempotent),
		cmocka_unit_test(test_admission_errors),
		cmocka_unit_test(test_numa_unresolved),
		cmocka_unit_test(test_sandbox_never_rejected),
		cmocka_unit_test(test_min_shared_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
