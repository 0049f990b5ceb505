// SPDX-License-Identifier: Apache-2.0
/*
 * config: the NRI settings (user/daemon/README.md "NRI"): nri (auto|off), nri_socket,
 * nri_plugin_name, nri_plugin_index: defaults, INI and command line,
 * each refusal, that every one waits for a restart at a reload, and how
 * --check-config prints them.
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


static void test_defaults(void **state)
{
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("", NULL, &c), 0);
	assert_true(c.nri);
	assert_string_equal(c.nri_socket, "/var/run/nri/nri.sock");
	assert_string_equal(c.nri_plugin_name, "cpusetd");
	assert_string_equal(c.nri_plugin_index, "99");
}

static void test_set(void **state)
{
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(tl_config_parse("nri = off\nnri_socket = /run/x/nri.sock\n"
			       "nri_plugin_name = cpu-set_d.1\nnri_plugin_index = 05\n", NULL, &c), 0);
	assert_false(c.nri);
	assert_string_equal(c.nri_socket, "/run/x/nri.sock");
	assert_string_equal(c.nri_plugin_name, "cpu-set_d.1");
	assert_string_equal(c.nri_plugin_index, "05");
	assert_int_equal(tl_config_parse("nri = off\n", "--nri=auto", &c), 0);	/* argv wins */
	assert_true(c.nri);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"nri = on\n", "nri = \n", "nri_socket = relative.sock\n",
		"nri_plugin_name = \n", "nri_plugin_name = a/b\n", "nri_plugin_name = a b\n",
		"nri_plugin_name = 0123456789012345678901234567890123456789012345678901234567890123\n",
		"nri_plugin_index = 9\n", "nri_plugin_index = 100\n", "nri_plugin_index = 9a\n",
		"nri_plugin_index = -1\n",
	};
	struct cpusetd_config c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tl_config_parse(bad[i], NULL, &c) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(strstr(tl_config_msg, "nri"));
	}
}

/* Every NRI key needs a restart, and --check-config shows it as INI. */
static bool nri_key(const char *name)
{
	return strncmp(name, "nri", 3) == 0;
}

static void test_reload_and_print(void **state)
{
	struct cpusetd_config c;
	char buf[4096];

	(void)state;
	assert_int_equal(tl_config_restart_keys(nri_key), 4);
	assert_int_equal(tl_config_parse("nri = off\n", NULL, &c), 0);
	tl_config_print(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nnri = off\n"));
	assert_non_null(strstr(buf, "\nnri_socket = /var/run/nri/nri.sock\n"));
	assert_non_null(strstr(buf, "\nnri_plugin_index = 99\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, tl_config_setup, tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_set, tl_config_setup, tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_refused, tl_config_setup, tl_config_teardown),
		cmocka_unit_test_setup_teardown(test_reload_and_print, tl_config_setup, tl_config_teardown),
	};

	return cmocka_run_group_tests_name("config: NRI settings", tests, NULL, NULL);
}
