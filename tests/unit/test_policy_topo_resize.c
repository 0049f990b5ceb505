// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resize of integer containers through the allocation policy
 * on the hwloc snapshot 64amd64-4s2n4ca2co (test_policy_topo.h): growing
 * and shrinking on the CPUs held, NUMA alignment kept, and a change of
 * class.
 */
#include "test_policy_topo.h"

/* --- in-place resize --- */

/* Growing keeps the CPUs held, shrinking keeps the baseline, both stay
 * packed around them; below the baseline is refused and changes nothing. */
static void test_resize_integer(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request a = integer("a", "pa", 2, NULL);
	struct policy_decision d, before;
	struct cpumask pool, held;
	struct policy *p;

	(void)state;
	p = mk(&c);
	before = admit(p, a, 0);
	tl_assert_mask(&before.cpus, "0-1");
	assert_int_equal(resize(p, a, 2000, &d), 0);		/* same N */
	assert_int_equal(resize(p, a, 6000, &d), 1);
	tl_assert_mask(&d.cpus, "0-5");				/* grown around 0-1 */
	tl_assert_mask(&d.mems, "0");
	assert_string_equal(policy_int_owner(p, 5), "a");
	policy_shared_pool(p, &pool);
	assert_false(cpumask_test(&pool, 5));
	assert_int_equal(resize(p, a, 4000, &d), 1);
	tl_assert_mask(&d.cpus, "0-3");				/* baseline 0-1 kept */
	assert_null(policy_int_owner(p, 5));
	policy_shared_pool(p, &pool);
	assert_true(cpumask_test(&pool, 5));
	held = d.cpus;
	assert_int_equal(resize(p, a, 1000, &d), -ERANGE);
	assert_int_equal(d.err, POLICY_ERR_RESIZE_BELOW_BASELINE);
	assert_false(d.reject);
	assert_non_null(strstr(d.reason, "resize 4 -> 1"));
	assert_true(cpumask_equal(&policy_lookup(p, "a")->cpus, &held));
	assert_int_equal(policy_lookup(p, "a")->err, POLICY_OK);
	policy_free(p);

	c.alloc.bind = KOORD_BIND_FULL_PCPUS_ONLY;
	p = mk(&c);
	admit(p, a, 0);
	assert_int_equal(resize(p, a, 3000, &d), -EDOM);	/* not whole cores */
	assert_int_equal(d.err, POLICY_ERR_SMT_ALIGNMENT);
	tl_assert_mask(&policy_lookup(p, "a")->cpus, "0-1");
	policy_free(p);
}

/* The NUMA policy holds for growth: single-numa-node refuses to spill out
 * of the container's node, best-effort grows into a second one. */
static void test_resize_numa(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request a = integer("a", "pa", 6, NULL), b = integer("b", "pb", 2, NULL);
	struct policy_decision d;
	struct cpumask pool;
	struct policy *p;

	(void)state;
	c.alloc.align = NUMA_POLICY_SINGLE_NUMA_NODE;
	p = mk(&c);
	d = admit(p, a, 0);
	tl_assert_mask(&d.cpus, "0-5");
	d = admit(p, b, 0);
	tl_assert_mask(&d.cpus, "6-7");				/* bin-packed: node 0 full */
	assert_int_equal(resize(p, a, 8000, &d), -EXDEV);
	assert_int_equal(d.err, POLICY_ERR_TOPOLOGY_AFFINITY);
	tl_assert_mask(&policy_lookup(p, "a")->cpus, "0-5");
	policy_free(p);

	c.alloc.align = NUMA_POLICY_BEST_EFFORT;
	p = mk(&c);
	admit(p, a, 0);
	admit(p, b, 0);
	assert_int_equal(resize(p, a, 8000, &d), 1);
	pool = tl_mask("0-5");
	assert_true(cpumask_subset(&pool, &d.cpus));
	assert_int_equal(nodes_of(&d.cpus), 2);
	assert_int_equal(cpumask_weight(&d.mems), 2);
	policy_free(p);
}

/* A class change: a fractional Guaranteed container resized to whole
 * CPUs becomes integer, and back to the pool when fractional again; a
 * pod that cannot fit stays where it is. The kubelet engine resizes with
 * kubelet's algorithm. */
static void test_resize_reclassify(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request a = integer("a", "pa", 1, NULL);
	struct policy_decision d;
	struct cpumask pool;
	struct policy *p;

	(void)state;
	p = mk(&c);
	a.quota_us = 150000;
	assert_int_equal(admit(p, a, 0).kind, CPUSETD_KIND_SHARED);
	assert_int_equal(resize(p, a, 2000, &d), 1);
	assert_int_equal(d.kind, CPUSETD_KIND_INTEGER);
	tl_assert_mask(&d.cpus, "0-1");
	assert_int_equal(resize(p, a, 2500, &d), 1);
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	policy_shared_pool(p, &pool);
	assert_int_equal(cpumask_weight(&pool), 64);
	assert_int_equal(resize(p, a, 64000, &d), -ENOSPC);	/* pool would be empty */
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	assert_false(d.reject);
	assert_int_equal(policy_lookup(p, "a")->kind, CPUSETD_KIND_SHARED);
	assert_int_equal(resize(p, (struct policy_request){ .container_id = "nope" }, 1000, &d),
			 -ENOENT);
	policy_free(p);

	c.alloc.kubelet_compat = true;
	p = mk(&c);
	d = admit(p, integer("k", "pk", 2, NULL), 0);
	tl_assert_mask(&d.cpus, "0-1");
	assert_int_equal(resize(p, integer("k", "pk", 2, NULL), 5000, &d), 1);
	tl_assert_mask(&d.cpus, "0-4");
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resize_integer),
		cmocka_unit_test(test_resize_numa),
		cmocka_unit_test(test_resize_reclassify),
	};

	return cmocka_run_group_tests_name("policy resize on 64amd64-4s2n4ca2co", tests, setup,
					   teardown);
}
