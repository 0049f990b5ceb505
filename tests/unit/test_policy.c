/*
 * The allocation rules (PRD): classification, every rule, every
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
	struct policy_config cfg = { .min_shared_cpus = 1, .on_error = on_error,
				     .cores_ids_namespaces = "*",
				     .resource_status_namespaces = "*" };
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

/* --- who may name CPUs (issue 22, H2) --- */

static const struct pod_policy_ann status_2 = { .has_status_cpuset = true,
						.status_cpuset = (char *)"2" };

static struct policy_request in_ns(struct policy_request r, const char *ns)
{
	r.namespace_ = ns;
	return r;
}

static struct policy_request scheduled(const char *id, const struct pod_policy_ann *a)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .pod = a,
					.quota_us = -1, .period_us = 100000 };
}

static struct policy_request running(struct policy_request r)
{
	r.running = true;
	return r;
}

static void test_namespace_patterns(void **state)
{
	static const struct {
		const char *list, *ns;
		bool allowed;
	} cases[] = {
		{ "*", "anything", true }, { "*", "", true }, { "*", NULL, true },
		{ "", "default", false }, { "", "", false }, { NULL, "x", false },
		{ "weka-system", "weka-system", true }, { "weka-system", "weka-system2", false },
		{ "weka-*,kube-system", "weka-a", true }, { "weka-*,kube-system", "kube-system", true },
		{ "weka-*,kube-system", "kube", false }, { "team-[ab]", "team-b", true },
		{ "team-[ab]", "team-c", false }, { "team-[!a]", "team-c", true },
		{ "team-?", "team-10", false }, { "a,b", "a,b", false },
	};
	static const struct {
		const char *list;
		bool all;
	} all[] = {
		{ "*", true }, { "**", true }, { "x,*", true }, { "", false }, { "*-a", false },
		{ "?*", false }, { NULL, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (policy_namespace_allowed(cases[i].list, cases[i].ns) != cases[i].allowed)
			fail_msg("'%s' in '%s': want %d", cases[i].ns ? cases[i].ns : "(null)",
				 cases[i].list ? cases[i].list : "(null)", cases[i].allowed);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (policy_namespace_all(all[i].list) != all[i].all)
			fail_msg("'%s': all want %d", all[i].list ? all[i].list : "(null)", all[i].all);
}

struct ns_case {
	const char *name;
	const char *cores_ns, *status_ns;	/* the two config keys */
	struct policy_request req;
	int rc;
	enum policy_error err;
	const char *in_reason;			/* rc < 0 */
	enum cpusetd_kind kind;			/* shared when refused */
};

static void test_annotation_namespaces(void **state)
{
	const struct ns_case cases[] = {
		{ "cores-ids outside the list", "weka-*,kube-system", "*",
		  in_ns(annotated("a", "2"), "tenant"), -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED,
		  "weka.io/cores-ids is not allowed in namespace \"tenant\" (cores_ids_namespaces)", CPUSETD_KIND_SHARED },
		{ "cores-ids inside the list", "weka-*,kube-system", "*",
		  in_ns(annotated("a", "2"), "weka-a"), 0, 0, NULL, CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, the default *", "*", "*", in_ns(annotated("a", "2"), "tenant"), 0, 0,
		  NULL, CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, no namespace given", "*", "", annotated("a", "2"), 0, 0, NULL,
		  CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, list empty: nobody", "", "*", in_ns(annotated("a", "2"), ""),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "namespace \"\"", CPUSETD_KIND_SHARED },
		/* the namespace is asked first: no syntax error for an outsider */
		{ "malformed cores-ids outside", "ok", "*", in_ns(annotated("a", "x"), "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "cores-ids", CPUSETD_KIND_SHARED },
		{ "cores-ids of a Guaranteed integer pod outside", "ok", "*",
		  in_ns((struct policy_request){ .container_id = "a", .name = "a", .cores_ids = "2",
						 .qos = POD_QOS_GUARANTEED, .quota_us = 100000,
						 .period_us = 100000 }, "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "cores_ids_namespaces", CPUSETD_KIND_SHARED },
		{ "resource-status outside", "*", "koord-*", in_ns(scheduled("s", &status_2), "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED,
		  "scheduling.koordinator.sh/resource-status is not allowed in namespace \"tenant\" "
		  "(resource_status_namespaces)", CPUSETD_KIND_SHARED },
		{ "resource-status inside", "", "koord-*", in_ns(scheduled("s", &status_2), "koord-1"),
		  0, 0, NULL, CPUSETD_KIND_INTEGER },
		{ "resource-status: the keys are apart", "tenant", "",
		  in_ns(scheduled("s", &status_2), "tenant"), -EACCES,
		  POLICY_ERR_ANNOTATION_NOT_ALLOWED, "resource_status_namespaces", CPUSETD_KIND_SHARED },
		/* a container found running is admitted again: refused all the same */
		{ "running cores-ids outside", "weka-*", "*",
		  running(in_ns(annotated("a", "2"), "tenant")), -EACCES,
		  POLICY_ERR_ANNOTATION_NOT_ALLOWED, "tenant", CPUSETD_KIND_SHARED },
		{ "sandbox of an annotated pod outside", "weka-*", "",
		  in_ns((struct policy_request){ .container_id = "sb", .sandbox = true,
						 .cores_ids = "2", .qos = POD_QOS_BURSTABLE,
						 .pod = &status_2 }, "tenant"),
		  0, 0, NULL, CPUSETD_KIND_SHARED },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ns_case *c = &cases[i];
		struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
		struct policy_config cfg = { 0 };
		struct cpumask before, after;
		struct policy_decision d;
		int r;

		snprintf(cfg.cores_ids_namespaces, sizeof(cfg.cores_ids_namespaces), "%s",
			 c->cores_ns);
		snprintf(cfg.resource_status_namespaces, sizeof(cfg.resource_status_namespaces),
			 "%s", c->status_ns);
		policy_set_namespaces(f.p, &cfg);
		policy_reserved(f.p, &before);
		r = policy_admit(f.p, &c->req, &d);
		if (r != c->rc || d.err != c->err)
			fail_msg("%s: rc %d err %d (%s), want rc %d err %d", c->name, r, d.err,
				 d.reason, c->rc, c->err);
		if (r < 0) {
			if (!strstr(d.reason, c->in_reason))
				fail_msg("%s: reason \"%s\" lacks \"%s\"", c->name, d.reason,
					 c->in_reason);
			assert_string_equal(policy_error_name(d.err), "annotation_not_allowed");
			assert_true(d.reject);
			assert_false(d.err_hotplug);
			policy_reserved(f.p, &after);
			assert_true(cpumask_equal(&before, &after));	/* took nothing */
		}
		if (d.kind != c->kind)
			fail_msg("%s: kind %d, want %d", c->name, d.kind, c->kind);
		fx_free(&f);
	}
}

/* A reload narrows the lists for admissions from then on; a container
 * already recorded keeps its decision until it is admitted again (the
 * resync after a reload does that: "running cores-ids outside" above). */
static void test_namespaces_reload(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_config narrow = { .cores_ids_namespaces = "weka-*",
					.resource_status_namespaces = "*" };
	struct policy_request a = in_ns(annotated("a", "2"), "tenant"),
			      b = in_ns(annotated("b", "3"), "tenant");
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	policy_set_namespaces(f.p, &narrow);
	assert_int_equal(policy_admit(f.p, &a, &d), 0);	/* known: unchanged */
	assert_int_equal(d.kind, CPUSETD_KIND_ANNOTATED);
	assert_int_equal(policy_admit(f.p, &b, &d), -EACCES);
	assert_true(policy_release(f.p, "a"));
	assert_int_equal(policy_admit(f.p, &a, &d), -EACCES);	/* admitted again */
	assert_pool(f.p, "0-3");
	fx_free(&f);
}

/* --- what a fixed set may not take (issue 22, M1) --- */

static const struct pod_policy_ann status_1_2 = { .has_status_cpuset = true,
						  .status_cpuset = (char *)"1-2" };

struct reserved_case {
	const char *name;
	const char *reserved;		/* reserved_cpus */
	struct policy_request req;
	int rc;
	enum policy_error err;
	const char *in_reason;
};

/* reserved_cpus (kubelet reservedSystemCPUs) are never in a fixed set,
 * new or found running: a CPU hotplug is no one's choice, a reserved
 * CPU is the node's (README "Security model"). */
static void test_fixed_set_reserved(void **state)
{
	const struct reserved_case cases[] = {
		{ "annotated on a reserved CPU", "1", annotated("a", "1"), -EBUSY,
		  POLICY_ERR_CPU_RESERVED,
		  "weka.io/cores-ids CPUs 1 are reserved for the system (reserved_cpus)" },
		{ "annotated partly reserved", "2-3", annotated("a", "0-2"), -EBUSY,
		  POLICY_ERR_CPU_RESERVED, "CPUs 2 are reserved" },
		{ "scheduled on a reserved CPU", "2", scheduled("s", &status_1_2), -EBUSY,
		  POLICY_ERR_CPU_RESERVED, "resource-status cpuset CPUs 2 are reserved" },
		{ "running annotated, CPU reserved since", "2", running(annotated("a", "1-2")),
		  -EBUSY, POLICY_ERR_CPU_RESERVED, "reserved_cpus" },
		{ "running scheduled, CPU reserved since", "1", running(scheduled("s", &status_1_2)),
		  -EBUSY, POLICY_ERR_CPU_RESERVED, "CPUs 1 are" },
		{ "annotated beside reserved CPUs", "0,3", annotated("a", "1-2"), 0, POLICY_OK, "" },
		{ "scheduled beside reserved CPUs", "0", scheduled("s", &status_1_2), 0, POLICY_OK,
		  "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct reserved_case *c = &cases[i];
		struct topology *t = mk_topo(1, 4, 1);
		struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
					     .resource_status_namespaces = "*" };
		struct policy_decision d;
		struct policy *p;
		int r;

		assert_int_equal(cpulist_parse(c->reserved, &cfg.reserved_cpus), 0);
		assert_int_equal(policy_new(t, &cfg, &p), 0);
		r = policy_admit(p, &c->req, &d);
		if (r != c->rc || d.err != c->err)
			fail_msg("%s: rc %d err %d (%s), want rc %d err %d", c->name, r, d.err,
				 d.reason, c->rc, c->err);
		if (!strstr(d.reason, c->in_reason))
			fail_msg("%s: reason \"%s\" lacks \"%s\"", c->name, d.reason, c->in_reason);
		if (r < 0) {
			assert_string_equal(policy_error_name(d.err), "cpu_reserved");
			assert_false(d.err_hotplug);	/* refused, never kept */
			assert_true(d.reject);
			assert_pool(p, "0-3");		/* the reserved CPU stays shared */
		}
		policy_free(p);
		topo_free(t);
	}
}

/*
 * Pod-scope rooms against fixed sets. 2 nodes x 4 CPUs (node 0 = 0-3),
 * BestEffort, pod scope: pod A (pod_cpus CPUs) places 1 CPU (0) and holds
 * a room in node 0 for the rest. Then a fixed set of another pod comes;
 * then A's next container (the rest of its CPUs). A scheduled set may not
 * take the room; an annotated one may, when the room fits elsewhere in
 * node 0; a set found running always may (the room holds what is left).
 */
struct room_case {
	const char *name;
	unsigned pod_cpus;		/* pod A's whole request */
	struct policy_request fixed;	/* the other pod's fixed set */
	int rc;				/* its admission */
	const char *in_reason;
	int rest_rc;			/* A's second container, pod_cpus - 1 CPUs, */
	const char *rest_within;	/* placed inside these CPUs */
};

static void test_fixed_set_rooms(void **state)
{
	static const struct pod_policy_ann status_3 = { .has_status_cpuset = true,
							.status_cpuset = (char *)"3" };
	static const struct pod_policy_ann status_5 = { .has_status_cpuset = true,
							.status_cpuset = (char *)"5" };
	const struct room_case cases[] = {
		{ "scheduled on the room", 4, scheduled("s", &status_3), -EBUSY,
		  "CPU 3 is held for the containers pod ns/A has still to place", 0, "0-3" },
		{ "scheduled beside the room", 3, scheduled("s", &status_5), 0, "", 0, "0-3" },
		{ "annotated on a room that can move", 3, annotated("x", "2"), 0, "", 0, "0-3" },
		{ "annotated on a room that cannot move", 4, annotated("x", "2"), -EBUSY,
		  "which would not fit elsewhere", 0, "0-3" },
		{ "annotated on two CPUs of a room that cannot move", 3, annotated("x", "1-2"),
		  -EBUSY, "CPU 1 is held", 0, "0-3" },
		{ "annotated beside the room", 4, annotated("x", "4-5"), 0, "", 0, "0-3" },
		/* found running: the truth; the pod's room is what is left, and
		 * its second container spills over (BestEffort) */
		{ "running annotated on a full room", 4, running(annotated("x", "2")), 0, "", 0,
		  "4-7" },
		{ "running scheduled on the room", 4, running(scheduled("s", &status_3)), 0, "", 0,
		  "4-7" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct room_case *c = &cases[i];
		struct topology *t = mk_topo(2, 4, 1);
		struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
					     .resource_status_namespaces = "*" };
		struct policy_request a1 = integer("a1", 1), a2 = integer("a2", (int)c->pod_cpus - 1);
		struct policy_decision d, da2;
		struct cpumask within;
		struct policy *p;
		int r;

		cfg.alloc.align = NUMA_POLICY_BEST_EFFORT;
		cfg.alloc.pod_scope = true;
		assert_int_equal(policy_new(t, &cfg, &p), 0);
		a1.pod_uid = a2.pod_uid = "uid-A";
		a1.name = "ns/A/a1";
		a2.name = "ns/A/a2";
		a1.pod_cpus = a2.pod_cpus = c->pod_cpus;
		assert_int_equal(policy_admit(p, &a1, &d), 0);
		tl_assert_mask(&d.cpus, "0");
		r = policy_admit(p, &c->fixed, &d);
		if (r != c->rc || !strstr(d.reason, c->in_reason))
			fail_msg("%s: rc %d (%s), want rc %d with \"%s\"", c->name, r, d.reason, c->rc,
				 c->in_reason);
		if (r < 0) {
			assert_int_equal(d.err, POLICY_ERR_CPU_EXCLUSIVE);
			assert_false(d.err_hotplug);
		}
		r = policy_admit(p, &a2, &da2);
		if (r != c->rest_rc)
			fail_msg("%s: pod A's second container: rc %d (%s), want %d", c->name, r,
				 da2.reason, c->rest_rc);
		if (r == 0) {
			/* in the pod's node, and never on the fixed set */
			within = tl_mask(c->rest_within);
			if (!cpumask_subset(&da2.cpus, &within))
				fail_msg("%s: pod A's second container outside %s", c->name,
					 c->rest_within);
			if (c->rc == 0 && policy_decision_get(p, c->fixed.container_id, &d) == 0 &&
			    d.kind != CPUSETD_KIND_SHARED && cpumask_intersects(&da2.cpus, &d.cpus))
				fail_msg("%s: pod A's second container shares the fixed set's CPUs",
					 c->name);
		}
		policy_free(p);
		topo_free(t);
	}
}

/* Recovery: a kept integer container's room is chosen before the fixed
 * sets are recovered (phase order), maybe on a running annotated set's
 * CPUs; the set stays, even where a new one would be refused, and the
 * room makes way. A running set on a CPU reserved since the last start
 * is refused like a new one. */
static void test_recover_fixed_sets(void **state)
{
	struct topology *t = mk_topo(2, 4, 1);
	struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
				     .resource_status_namespaces = "*" };
	struct policy_request reqs[] = { integer("a1", 1), running(annotated("x", "2")),
					 running(annotated("y", "7")) };
	struct policy_request a2 = integer("a2", 3);
	struct cpumask cur[3];
	uint64_t order[3] = { 1, 2, 3 };
	struct policy_decision d[3], da2;
	struct policy *p;

	(void)state;
	cfg.alloc.align = NUMA_POLICY_BEST_EFFORT;
	cfg.alloc.pod_scope = true;
	assert_int_equal(cpulist_parse("7", &cfg.reserved_cpus), 0);
	assert_int_equal(policy_new(t, &cfg, &p), 0);
	reqs[0].pod_uid = a2.pod_uid = "uid-A";
	reqs[0].pod_cpus = a2.pod_cpus = 4;	/* its room cannot move */
	for (size_t i = 0; i < 3; i++)
		reqs[i].running = true;
	cpulist_parse("0", &cur[0]);
	cpulist_parse("2", &cur[1]);
	cpulist_parse("7", &cur[2]);
	assert_int_equal(policy_recover(p, reqs, cur, order, 3, d), 0);
	tl_assert_mask(&d[0].cpus, "0");
	assert_int_equal(d[1].err, POLICY_OK);
	tl_assert_mask(&d[1].cpus, "2");
	assert_int_equal(d[2].err, POLICY_ERR_CPU_RESERVED);
	assert_true(d[2].reject);
	assert_false(d[2].err_hotplug);
	assert_int_equal(policy_admit(p, &a2, &da2), 0);
	tl_assert_mask(&da2.cpus, "4-6");	/* the room was short: off CPU 2 */
	policy_free(p);
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
		cmocka_unit_test(test_recover_keeps_valid_exclusive),
		cmocka_unit_test(test_recover_kept_integer_beats_annotation),
		cmocka_unit_test(test_recover_is_order_independent),
		cmocka_unit_test(test_namespace_patterns),
		cmocka_unit_test(test_annotation_namespaces),
		cmocka_unit_test(test_namespaces_reload),
		cmocka_unit_test(test_fixed_set_reserved),
		cmocka_unit_test(test_fixed_set_rooms),
		cmocka_unit_test(test_recover_fixed_sets),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
