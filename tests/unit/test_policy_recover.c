// SPDX-License-Identifier: Apache-2.0
/*
 * Recovery from a live state: kept exclusive sets, integer vs annotation,
 * order independence.
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
		cmocka_unit_test(test_recover_keeps_valid_exclusive),
		cmocka_unit_test(test_recover_kept_integer_beats_annotation),
		cmocka_unit_test(test_recover_is_order_independent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
