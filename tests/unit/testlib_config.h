/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A config file per test for the config unit tests; include after
 * <cmocka.h>. tl_config_setup/teardown make and remove a private
 * directory holding tl_ini; tl_config_parse writes a text there and
 * parses "cpusetd --config INI [OPTION]", the error in tl_config_msg.
 */
#ifndef CPUSETD_TESTLIB_CONFIG_H
#define CPUSETD_TESTLIB_CONFIG_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/config/config.h"

static char tl_config_dir[64], tl_ini[128], tl_config_msg[CONFIG_ERR_MAX];

static inline int tl_config_setup(void **state)
{
	(void)state;
	snprintf(tl_config_dir, sizeof(tl_config_dir), "/tmp/cpusetd-cfgtest.XXXXXX");
	assert_non_null(mkdtemp(tl_config_dir));
	snprintf(tl_ini, sizeof(tl_ini), "%s/cpusetd.conf", tl_config_dir);
	return 0;
}

static inline int tl_config_teardown(void **state)
{
	(void)state;
	unlink(tl_ini);
	rmdir(tl_config_dir);
	return 0;
}

/* config_parse of "cpusetd --config INI" + one option (NULL = none), with
 * INI holding text. Returns what config_parse returns. */
static inline int tl_config_parse(const char *text, const char *opt, struct cpusetd_config *c)
{
	char *argv[] = { "cpusetd", "--config", tl_ini, (char *)opt, NULL };
	FILE *f = fopen(tl_ini, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return config_parse(opt ? 4 : 3, argv, c, tl_config_msg, sizeof(tl_config_msg));
}

/* What `cpusetd --check-config` prints for c (config_print), into
 * buf[size], NUL-terminated. */
static inline void tl_config_print(const struct cpusetd_config *c, char *buf, size_t size)
{
	FILE *f;

	memset(buf, 0, size);
	assert_non_null(f = fmemopen(buf, size - 1, "w"));
	config_print(c, f);
	assert_int_equal(fclose(f), 0);
}

/* How many config keys want(name) picks; each must take effect only at a
 * restart (a reload names it). */
static inline unsigned tl_config_restart_keys(bool (*want)(const char *name))
{
	unsigned found = 0;

	for (unsigned i = 0; i < config_n_keys(); i++)
		if (want(config_key_name(i))) {
			assert_int_equal(config_key_reload(i), CONFIG_RELOAD_RESTART);
			found++;
		}
	return found;
}

#endif
