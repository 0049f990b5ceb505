// SPDX-License-Identifier: Apache-2.0
/*
 * config: the Prometheus export's cardinality settings, export_containers
 * and runqueue_wait_buckets_us (tools/monitoring/README.md "Metrics"): defaults, INI and
 * command line, every way a bucket list is refused (not a BPF slot
 * edge, not ascending, too many, empty), and how --check-config prints
 * them (config_print); the telemetry level (telemetry = basic | full):
 * default, refusals, printed, restart-only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "testlib_config.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))


static void test_defaults(void **state)
{
	static const uint32_t want[] = { 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576 };
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("", NULL, &c), 0);
	assert_int_equal(c.export_containers, CONFIG_EXPORT_EXCLUSIVE);
	assert_int_equal(c.n_rq_buckets, ARRAY_SIZE(want));
	assert_memory_equal(c.rq_buckets_us, want, sizeof(want));
}

static void test_export_containers(void **state)
{
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("export_containers = none\n", NULL, &c), 0);
	assert_int_equal(c.export_containers, CONFIG_EXPORT_NONE);
	/* the command line wins over the file */
	assert_int_equal(tl_config_parse("export_containers = none\n", "--export-containers=all", &c), 0);
	assert_int_equal(c.export_containers, CONFIG_EXPORT_ALL);
	assert_int_equal(tl_config_parse("export-containers = exclusive\n", NULL, &c), 0);
	assert_int_equal(c.export_containers, CONFIG_EXPORT_EXCLUSIVE);
	assert_int_equal(tl_config_parse("export_containers = sandboxes\n", NULL, &c), -EINVAL);
	assert_non_null(strstr(tl_config_msg, ":1: export_containers: expected all|exclusive|none, got 'sandboxes'"));
	assert_int_equal(tl_config_parse("", "--export-containers=All", &c), -EINVAL);
	assert_string_equal(tl_config_msg, "--export-containers: expected all|exclusive|none, got 'All'");
}

static bool is_telemetry(const char *name) { return strcmp(name, "telemetry") == 0; }

/* telemetry = basic | full: basic by default, anything else refused in
 * one line naming both, printed as given, applied only at a restart. */
static void test_telemetry_level(void **state)
{
	struct cpusetd_config c;
	char text[16384];

	(void)state;
	assert_int_equal(tl_config_parse("", NULL, &c), 0);
	assert_false(c.telemetry_full);
	tl_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\ntelemetry = basic\n"));
	assert_int_equal(tl_config_parse("telemetry = full\n", NULL, &c), 0);
	assert_true(c.telemetry_full);
	tl_config_print(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\ntelemetry = full\n"));
	/* the command line wins over the file */
	assert_int_equal(tl_config_parse("telemetry = full\n", "--telemetry=basic", &c), 0);
	assert_false(c.telemetry_full);
	assert_int_equal(tl_config_parse("telemetry = Full\n", NULL, &c), -EINVAL);
	assert_non_null(strstr(tl_config_msg, ":1: telemetry: expected basic|full, got 'Full'"));
	assert_int_equal(tl_config_parse("", "--telemetry=off", &c), -EINVAL);
	assert_string_equal(tl_config_msg, "--telemetry: expected basic|full, got 'off'");
	assert_int_equal(tl_config_parse("telemetry =\n", NULL, &c), -EINVAL);
	assert_int_equal(tl_config_restart_keys(is_telemetry), 1);
}

static void test_buckets_list_and_all(void **state)
{
	static const uint32_t want[] = { 8, 64, 512, 1048576 };
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("runqueue_wait_buckets_us = 8,64,512,1048576\n", NULL, &c), 0);
	assert_int_equal(c.n_rq_buckets, ARRAY_SIZE(want));
	assert_memory_equal(c.rq_buckets_us, want, sizeof(want));
	assert_int_equal(tl_config_parse("", "--runqueue-wait-buckets-us=all", &c), 0);
	assert_int_equal(c.n_rq_buckets, CONFIG_MAX_RQ_BUCKETS);
	assert_int_equal(c.rq_buckets_us[0], 2);
	assert_int_equal(c.rq_buckets_us[CONFIG_MAX_RQ_BUCKETS - 1], 67108864);
	assert_int_equal(tl_config_parse("", "--runqueue-wait-buckets-us=67108864", &c), 0);
	assert_int_equal(c.n_rq_buckets, 1);
}

struct bad_case {
	const char *value, *why;
};

static const struct bad_case bad_cases[] = {
	{ "3", "powers of two 2..67108864" },		/* no slot edge */
	{ "0", "powers of two" },
	{ "1", "powers of two" },			/* slot 0 is below 2 µs */
	{ "134217728", "powers of two" },		/* above the last edge */
	{ "64,8", "bounds must be ascending: 8 after 64" },
	{ "8,8", "bounds must be ascending: 8 after 8" },
	{ "8,,16", "got ''" },
	{ "8,", "got ''" },
	{ "", "got ''" },
	{ " 8", "got ' 8'" },
	{ "8us", "got '8us'" },
	{ "-8", "got '-8'" },
	{ "99999999999999999999", "powers of two" },
	{ "2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,"
	  "524288,1048576,2097152,4194304,8388608,16777216,33554432,67108864,4",
	  "at most 26 bounds" },
};

static void test_buckets_refused(void **state)
{
	struct cpusetd_config c;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		char opt[512];

		snprintf(opt, sizeof(opt), "--runqueue-wait-buckets-us=%s", bad_cases[i].value);
		if (tl_config_parse("", opt, &c) != -EINVAL || !strstr(tl_config_msg, bad_cases[i].why))
			fail_msg("'%s': got '%s', want '%s'", bad_cases[i].value, tl_config_msg, bad_cases[i].why);
		if (strncmp(tl_config_msg, "--runqueue-wait-buckets-us: ", 28) != 0)
			fail_msg("'%s': the error does not name the option: '%s'", bad_cases[i].value, tl_config_msg);
	}
}

/* --check-config shows both keys as the INI file takes them. */
static void test_printed(void **state)
{
	struct cpusetd_config c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(tl_config_parse("export_containers = all\nruntime_wait = 1\n", NULL, &c), -EINVAL);
	assert_int_equal(tl_config_parse("export_containers = all\nrunqueue_wait_buckets_us = 16,1024\n",
			       NULL, &c), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	config_print(&c, f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "\nexport_containers = all\n"));
	assert_non_null(strstr(text, "\nrunqueue_wait_buckets_us = 16,1024\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_export_containers),
		cmocka_unit_test(test_telemetry_level),
		cmocka_unit_test(test_buckets_list_and_all),
		cmocka_unit_test(test_buckets_refused),
		cmocka_unit_test(test_printed),
	};

	return cmocka_run_group_tests(tests, tl_config_setup, tl_config_teardown);
}
