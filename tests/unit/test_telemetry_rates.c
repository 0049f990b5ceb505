// SPDX-License-Identifier: Apache-2.0
/*
 * telemetry_rates: per-CPU rates between two snapshots, a counter reset,
 * the worst-first order and the JSON a test of `cpusetctl top --json`
 * asserts on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "tests/unit/testlib.h"
#include "user/telemetry/telemetry_rates.h"

#define N 4

static struct cpusetd_cpu_stats prev_cpu[N], cur_cpu[N];
static struct cpusetd_cpu_owner owner[N];
static struct telemetry_snapshot prev = { .n_cpus = N, .cpu = prev_cpu };
static struct telemetry_snapshot cur = { .n_cpus = N, .cpu = cur_cpu, .owner = owner };

static int setup(void **state)
{
	(void)state;
	memset(prev_cpu, 0, sizeof(prev_cpu));
	memset(cur_cpu, 0, sizeof(cur_cpu));
	memset(owner, 0, sizeof(owner));
	/* CPU 1: 200 switches, 50 waits of 40 µs, 0.5 s foreign in 2 s */
	prev_cpu[1] = (struct cpusetd_cpu_stats){ .switches = 100, .rq_wait_ns = 1000,
						   .rq_wait_count = 10, .foreign_ns = 1000000000 };
	cur_cpu[1] = (struct cpusetd_cpu_stats){ .switches = 300, .preemptions = 20,
						  .rq_wait_ns = 1000 + 50 * 40000,
						  .rq_wait_count = 60, .foreign_ns = 1500000000,
						  .busy_ns = 1000000000 };
	owner[1].cgroup_id = 4242;
	/* CPU 2: more switches, less waiting */
	cur_cpu[2] = (struct cpusetd_cpu_stats){ .switches = 1000, .rq_wait_ns = 1000,
						  .rq_wait_count = 1 };
	/* CPU 3: the maps were re-created: counters went down */
	prev_cpu[3] = (struct cpusetd_cpu_stats){ .switches = 5000 };
	cur_cpu[3] = (struct cpusetd_cpu_stats){ .switches = 10 };
	return 0;
}

static void test_rates(void **state)
{
	struct telemetry_rate r[CPUSETD_MAX_CPUS];

	(void)state;
	assert_int_equal(telemetry_rates(&prev, &cur, 2.0, NULL, r), N);
	assert_int_equal(r[1].cpu, 1);
	assert_true(r[1].switches_per_s == 100.0);
	assert_true(r[1].preemptions_per_s == 10.0);
	assert_int_equal(r[1].rq_waits, 50);
	assert_true(r[1].rq_wait_mean_us == 40.0);
	assert_true(r[1].foreign_s_per_s == 0.25);
	assert_true(r[1].foreign_s_total == 1.5);
	assert_true(r[1].busy_s_per_s == 0.5);
	assert_int_equal(r[1].owner_cgroup_id, 4242);
	assert_true(r[3].switches_per_s == 5.0);	/* reset: counts from 0 */
	assert_true(r[0].rq_wait_mean_us == 0);		/* no waits: 0, not NaN */
	assert_int_equal(telemetry_rates(&prev, &cur, 0, NULL, r), -EINVAL);
}

static void test_only_given_cpus(void **state)
{
	struct telemetry_rate r[CPUSETD_MAX_CPUS];
	struct cpumask m = tl_mask("1,3,9");

	(void)state;
	assert_int_equal(telemetry_rates(&prev, &cur, 1.0, &m, r), 2);
	assert_int_equal(r[0].cpu, 1);
	assert_int_equal(r[1].cpu, 3);
}

static void test_sort_worst_first(void **state)
{
	struct telemetry_rate r[CPUSETD_MAX_CPUS];
	enum telemetry_rate_sort k;

	(void)state;
	telemetry_rates(&prev, &cur, 1.0, NULL, r);
	telemetry_rates_sort(r, N, TELEMETRY_SORT_RQ_WAIT);
	assert_int_equal(r[0].cpu, 1);
	assert_int_equal(r[1].cpu, 2);
	telemetry_rates_sort(r, N, TELEMETRY_SORT_SWITCHES);
	assert_int_equal(r[0].cpu, 2);
	assert_int_equal(r[1].cpu, 1);
	assert_int_equal(r[2].cpu, 3);
	assert_int_equal(r[3].cpu, 0);
	assert_int_equal(telemetry_rate_sort_parse("foreign", &k), 0);
	assert_int_equal(k, TELEMETRY_SORT_FOREIGN);
	assert_int_equal(telemetry_rate_sort_parse("Foreign", &k), -EINVAL);
}

static double num(json_object *o, const char *k)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_double(v);
}

static void test_json(void **state)
{
	struct telemetry_rate r[CPUSETD_MAX_CPUS];
	json_object *o, *cpus, *tot;

	(void)state;
	telemetry_rates(&prev, &cur, 2.0, NULL, r);
	telemetry_rates_sort(r, N, TELEMETRY_SORT_RQ_WAIT);
	o = telemetry_rates_json(r, N, 2.0, TELEMETRY_SORT_RQ_WAIT);
	assert_non_null(o);
	assert_true(num(o, "interval_s") == 2.0);
	assert_true(json_object_object_get_ex(o, "cpus", &cpus));
	assert_int_equal(json_object_array_length(cpus), N);
	assert_true(num(json_object_array_get_idx(cpus, 0), "cpu") == 1);
	assert_true(json_object_object_get_ex(o, "totals", &tot));
	assert_true(num(tot, "switches_per_s") == (200 + 1000 + 10) / 2.0);
	assert_true(num(tot, "rq_waits") == 51);
	/* (50 * 40 µs + 1 µs) / 51 waits */
	assert_true(num(tot, "rq_wait_mean_us") > 39.2 && num(tot, "rq_wait_mean_us") < 39.3);
	assert_false(json_object_object_get_ex(tot, "cpu", NULL));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rates, setup),
		cmocka_unit_test_setup(test_only_given_cpus, setup),
		cmocka_unit_test_setup(test_sort_worst_first, setup),
		cmocka_unit_test_setup(test_json, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
