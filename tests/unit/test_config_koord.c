// SPDX-License-Identifier: Apache-2.0
/*
 * config: Koordinator's NUMA-aware pools and SYSTEM QoS (issue 25):
 * be_numa_aware (bool, default true) and system_qos_cpus (cpulist,
 * default none): defaults, INI and command line, refusals, what
 * config_check_node refuses for this node (offline, beside
 * reserved_cpus, leaving too little), restart at a reload, printing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "testlib.h"
#include "testlib_config.h"

static void test_defaults_and_set(void **state)
{
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("", NULL, &c), 0);
	assert_true(c.policy.be_numa_aware);
	assert_true(cpumask_empty(&c.policy.system_qos_cpus));
	assert_int_equal(tl_config_parse("be_numa_aware = false\nsystem_qos_cpus = 6-7\n", NULL,
					 &c), 0);
	assert_false(c.policy.be_numa_aware);
	tl_assert_mask(&c.policy.system_qos_cpus, "6-7");
	/* the command line wins */
	assert_int_equal(tl_config_parse("system_qos_cpus = 6-7\n", "--system-qos-cpus=5", &c), 0);
	tl_assert_mask(&c.policy.system_qos_cpus, "5");
	assert_int_equal(tl_config_parse("", "--be-numa-aware=no", &c), 0);
	assert_false(c.policy.be_numa_aware);
}

static void test_refused(void **state)
{
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("system_qos_cpus = 1-x\n", NULL, &c), -EINVAL);
	assert_non_null(strstr(tl_config_msg, "system_qos_cpus"));
	assert_int_equal(tl_config_parse("be_numa_aware = sometimes\n", NULL, &c), -EINVAL);
	assert_non_null(strstr(tl_config_msg, "be_numa_aware"));
}

/* What a start on this node would refuse (online CPUs 0-7). */
static void test_node(void **state)
{
	struct cpumask online = tl_mask("0-7");
	struct cpusetd_config c;
	char err[256];

	(void)state;
	assert_int_equal(tl_config_parse("system_qos_cpus = 6-7\n", NULL, &c), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), 0);
	assert_int_equal(tl_config_parse("system_qos_cpus = 7-8\n", NULL, &c), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "system_qos_cpus 7-8: not all of them are online"));
	assert_int_equal(tl_config_parse("system_qos_cpus = 6-7\nreserved_cpus = 0,7\n", NULL,
					 &c), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "system_qos_cpus and reserved_cpus overlap"));
	/* 7 of 8 for SYSTEM pods: nothing left to be exclusive */
	assert_int_equal(tl_config_parse("system_qos_cpus = 1-7\n", NULL, &c), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "system_qos_cpus takes 7 of the 8 CPUs online"));
}

static bool koord_key(const char *name)
{
	return strcmp(name, "be_numa_aware") == 0 || strcmp(name, "system_qos_cpus") == 0;
}

static void test_reload_and_print(void **state)
{
	struct cpusetd_config c;
	char buf[16384];

	(void)state;
	assert_int_equal(tl_config_restart_keys(koord_key), 2);
	assert_int_equal(tl_config_parse("system_qos_cpus = 6-7\n", NULL, &c), 0);
	tl_config_print(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nsystem_qos_cpus = 6-7\n"));
	assert_non_null(strstr(buf, "\nbe_numa_aware = true\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults_and_set, tl_config_setup,
						tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_refused, tl_config_setup, tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_node, tl_config_setup, tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_reload_and_print, tl_config_setup,
						tl_config_teardown),
	};

	return cmocka_run_group_tests_name("config: Koordinator pools", tests, NULL, NULL);
}
