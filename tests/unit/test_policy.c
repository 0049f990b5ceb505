/*
 * The allocation rules (seeds/002): classification, every rule, every
 * admission error, book-keeping and recovery from a live state.
 * Topologies are built here: nodes × cores × threads, SMT siblings
 * consecutive (cpu = (node*cores + core)*threads + thread).
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
#include "user/policy/policy.h"

static struct topology *mk_topo(unsigned nodes, unsigned cores, unsigned threads)
{
	struct topology *t = calloc(1, sizeof(*t));
	unsigned cpu = 0;

	for (unsigned n = 0; n < nodes; n++)
		for (unsigned c = 0; c < cores; c++)
			for (unsigned th = 0; th < threads; th++, cpu++) {
				unsigned first = cpu - th;

				cpumask_set(&t->present, cpu);
				cpumask_set(&t->online, cpu);
				cpumask_set(&t->node_cpus[n], cpu);
				cpumask_set(&t->core_cpus[first], cpu);
				t->cpu[cpu] = (struct topo_cpu){ .core = (int)first, .package = 0,
								 .node = (int)n };
			}
	for (unsigned n = 0; n < nodes; n++)
		cpumask_set(&t->nodes, n);
	t->n_cores = nodes * cores;
	t->n_packages = 1;
	t->threads_per_core = threads;
	return t;
}

struct fixture {
	struct topology *topo;
	struct policy *p;
};

static struct fixture fx(unsigned nodes, unsigned cores, unsigned threads,
			 enum policy_on_error on_error)
{
	struct policy_config cfg = { .min_shared_cpus = 1, .on_error = on_error };
	struct fixture f = { .topo = mk_topo(nodes, cores, threads) };

	assert_int_equal(policy_new(f.topo, &cfg, &f.p), 0);
	return f;
}

static void fx_free(struct fixture *f)
{
	policy_free(f->p);
	topo_free(f->topo);
}

static struct policy_request integer(const char *id, int ncpu)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_GUARANTEED,
					.quota_us = ncpu * 100000, .period_us = 100000 };
}

static struct policy_request annotated(const char *id, const char *cores)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .cores_ids = cores,
					.quota_us = -1, .period_us = 100000 };
}

static struct policy_request shared(const char *id)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .quota_us = 50000,
					.period_us = 100000 };
}

static void assert_pool(const struct policy *p, const char *want)
{
	struct cpumask pool;

	policy_shared_pool(p, &pool);
	tl_assert_mask(&pool, want);
}

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
	struct policy_config cfg = { .min_shared_cpus = 3 };
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

/* --- recovery --- */

static void test_recover_keeps_valid_exclusive(void **state)
{
	struct fixture f = fx(1, 8, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request reqs[] = {
		shared("s1"), integer("i1", 2), annotated("a1", "6"), integer("i2", 1),
		integer("i3", 2), shared("s2"),
	};
	struct cpumask cur[6];
	uint64_t order[6] = { 10, 20, 30, 40, 50, 60 };
	struct policy_decision d[6];

	(void)state;
	cpulist_parse("0-7", &cur[0]);
	cpulist_parse("4-5", &cur[1]);	/* valid: kept although 0-1 are free */
	cpulist_parse("6", &cur[2]);
	cpulist_parse("3-4", &cur[3]);	/* not N CPUs: gets fresh ones */
	cpulist_parse("0-7", &cur[4]);	/* runtime default: gets fresh CPUs */
	cpulist_parse("1", &cur[5]);
	assert_int_equal(policy_recover(f.p, reqs, cur, order, 6, d), 0);
	tl_assert_mask(&d[1].cpus, "4-5");
	tl_assert_mask(&d[2].cpus, "6");
	assert_int_equal(d[2].err, POLICY_OK);
	assert_int_equal(d[3].kind, CPUSETD_KIND_INTEGER);
	tl_assert_mask(&d[3].cpus, "0");
	assert_int_equal(cpumask_weight(&d[4].cpus), 2);
	assert_false(cpumask_intersects(&d[3].cpus, &d[4].cpus));
	/* Shared containers get the final pool, not the one seen mid-way. */
	assert_true(cpumask_equal(&d[0].cpus, &d[5].cpus));
	assert_pool(f.p, "3,7");
	tl_assert_mask(&d[0].cpus, "3,7");
	fx_free(&f);
}

static void test_recover_kept_integer_beats_annotation(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_request reqs[] = { annotated("a", "1-2"), integer("i", 1) };
	struct cpumask cur[2];
	uint64_t order[2] = { 1, 2 };
	struct policy_decision d[2];

	(void)state;
	cpulist_parse("1-2", &cur[0]);
	cpulist_parse("2", &cur[1]);
	assert_int_equal(policy_recover(f.p, reqs, cur, order, 2, d), 0);
	tl_assert_mask(&d[1].cpus, "2");	/* the running exclusive container stays */
	assert_int_equal(d[0].err, POLICY_ERR_CPU_EXCLUSIVE);
	fx_free(&f);
}

static void test_recover_is_order_independent(void **state)
{
	struct policy_request base[] = {
		integer("i1", 2), integer("i2", 1), annotated("a1", "5-6"), shared("s1"),
		integer("i3", 3), annotated("a2", "6"),
	};
	const size_t n = sizeof(base) / sizeof(base[0]);
	uint64_t base_order[] = { 5, 1, 4, 2, 6, 3 };
	struct cpumask want[6];
	const size_t perms[][6] = {
		{ 0, 1, 2, 3, 4, 5 }, { 5, 4, 3, 2, 1, 0 }, { 2, 0, 5, 1, 3, 4 },
		{ 3, 5, 1, 4, 0, 2 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(perms) / sizeof(perms[0]); k++) {
		struct fixture f = fx(2, 4, 2, POLICY_ON_ERROR_REJECT);
		struct policy_request reqs[6];
		struct cpumask cur[6];
		uint64_t order[6];
		struct policy_decision d[6];

		for (size_t i = 0; i < n; i++) {
			reqs[i] = base[perms[k][i]];
			order[i] = base_order[perms[k][i]];
			cpumask_zero(&cur[i]);	/* nothing valid: all fresh */
		}
		assert_int_equal(policy_recover(f.p, reqs, cur, order, n, d), 0);
		for (size_t i = 0; i < n; i++) {
			size_t orig = perms[k][i];

			if (k == 0)
				want[orig] = d[i].cpus;
			else if (!cpumask_equal(&want[orig], &d[i].cpus))
				fail_msg("permutation %zu: %s moved", k, base[orig].container_id);
		}
		fx_free(&f);
	}
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
		cmocka_unit_test(test_recover_keeps_valid_exclusive),
		cmocka_unit_test(test_recover_kept_integer_beats_annotation),
		cmocka_unit_test(test_recover_is_order_independent),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
