// SPDX-License-Identifier: Apache-2.0
/*
 * config for operations: config_parse keeps its one error line for the
 * caller (a SIGHUP reload logs it) and prints nothing; --check-config is
 * a mode, never an INI key; config_print writes a file that loads back
 * to the same settings; config_merge_live takes exactly the LIVE keys;
 * config_check_node refuses what a start would.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/config/config.h"

static char tmpdir[64], ini[128], printed[128];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* config_parse over "cpusetd --config ini" + args; stderr must stay
 * empty (checked through a memfd). */
static int parse(struct cpusetd_config *c, const char *const *args, char *err, size_t len)
{
	char *argv[32] = { "cpusetd", "--config", ini };
	char seen[256];
	int argc = 3, se, mfd, r;
	ssize_t n;

	for (; args && args[argc - 3]; argc++)
		argv[argc] = (char *)args[argc - 3];
	fflush(stderr);
	se = dup(2);
	mfd = memfd_create("stderr", 0);
	assert_true(se >= 0 && mfd >= 0);
	dup2(mfd, 2);
	r = config_parse(argc, argv, c, err, len);
	fflush(stderr);
	n = pread(mfd, seen, sizeof(seen) - 1, 0);
	dup2(se, 2);
	close(se);
	close(mfd);
	assert_int_equal(n, 0);
	return r;
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_config_reload.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(ini, sizeof(ini), "%s/cpusetd.conf", tmpdir);
	snprintf(printed, sizeof(printed), "%s/printed.conf", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(ini);
	unlink(printed);
	return rmdir(tmpdir);
}

/* Errors name the file, line, key and reason; nothing is printed. */
static void test_parse_errors(void **state)
{
	static const char *const bad_opt[] = { "--bogus", NULL }, *const check[] = { "--check-config", NULL };
	static const char *const release[] = { "--release", NULL };
	static const char *const both[] = { "--release", "--check-config", NULL };
	struct cpusetd_config c;
	char err[CONFIG_ERR_MAX];

	(void)state;
	write_file(ini, "log_level = debug\non_error = sometimes\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: on_error: expected reject|shared, got 'sometimes'"));
	assert_non_null(strstr(err, ini));
	assert_null(strchr(err, '\n'));
	write_file(ini, "no_such_key = 1\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1: unknown key 'no_such_key'"));
	/* --check-config is a mode of the command line, not a setting */
	write_file(ini, "check_config = true\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key 'check_config'"));
	write_file(ini, "");
	assert_int_equal(parse(&c, bad_opt, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown option '--bogus' (see --help)");
	/* cross-key checks are in it too */
	write_file(ini, "sched_policy = other\nsched_priority = 5\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sched_priority 5 needs sched_policy fifo or rr"));
	write_file(ini, "state_dir = /x\npin_dir = /x\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pin_dir and state_dir are both '/x'");
	write_file(ini, "on_error = shared\n");
	assert_int_equal(parse(&c, check, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_true(c.check_config);
	assert_int_equal(c.policy.on_error, POLICY_ON_ERROR_SHARED);
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), 0);
	assert_false(c.check_config);
	/* --release too: a mode, one at a time */
	write_file(ini, "release = true\n");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key 'release'"));
	write_file(ini, "");
	assert_int_equal(parse(&c, release, err, sizeof(err)), 0);
	assert_true(c.release);
	assert_false(c.check_config);
	assert_int_equal(parse(&c, both, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--check-config and --release: one at a time");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), 0);
	assert_false(c.release);
}

/* Every key's value, as config_key_value gives it. */
static void assert_same(const struct cpusetd_config *a, const struct cpusetd_config *b)
{
	static char va[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX], vb[sizeof(va)];

	for (unsigned i = 0; i < config_n_keys(); i++) {
		config_key_value(a, i, va, sizeof(va));
		config_key_value(b, i, vb, sizeof(vb));
		if (strcmp(va, vb) != 0)
			fail_msg("%s: '%s' vs '%s'", config_key_name(i), va, vb);
	}
}

/* What --check-config prints is a config file that loads back to the
 * same settings (defaults and non-defaults alike). */
static void test_print_round_trip(void **state)
{
	struct cpusetd_config a, b;
	char err[CONFIG_ERR_MAX];
	FILE *f;
	char *argv_b[] = { "cpusetd", "--config", printed, NULL };

	(void)state;
	write_file(ini, "on_error = shared\nmin_shared_cpus = 2\nbundle_path = /b/{id}/c.json\n"
		   "bundle_path = /c/{id}/c.json\nreserved_cpus = 0,2-3\ntextfile =\n"
		   "kubelet_cpu_manager_policy_options = full-pcpus-only=true,align-by-socket=true\n"
		   "sched_policy = other\nnice = -5\nisolate_host = yes\n"
		   "isolate_host_skip = /a*,/b\nlog_level = debug\ncpu_bind_policy = SpreadByPCPUs\n"
		   "numa_topology_alignment_policy = restricted\nv2_writes = per-container\n"
		   "cores_ids_namespaces = weka-*,storage\nresource_status_namespaces =\n");
	assert_int_equal(parse(&a, NULL, err, sizeof(err)), 0);
	f = fopen(printed, "w");
	assert_non_null(f);
	config_print(&a, f);
	assert_int_equal(fclose(f), 0);
	if (config_parse(3, argv_b, &b, err, sizeof(err)) != 0)
		fail_msg("printed file: %s", err);
	assert_same(&a, &b);
	assert_int_equal(b.n_bundle_paths, 2);
	assert_string_equal(b.bundle_paths[1], "/c/{id}/c.json");
	assert_string_equal(b.textfile, "");
	/* and the defaults */
	write_file(ini, "");
	assert_int_equal(parse(&a, NULL, err, sizeof(err)), 0);
	f = fopen(printed, "w");
	assert_non_null(f);
	config_print(&a, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_parse(3, argv_b, &b, err, sizeof(err)), 0);
	assert_same(&a, &b);
}

/* Every setting of long_opts is a key of the table (so --check-config
 * shows it and a reload classifies it), each once. */
static void test_keys_cover_options(void **state)
{
	static char v[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX];
	struct cpusetd_config c;
	char err[CONFIG_ERR_MAX], text[128];

	(void)state;
	write_file(ini, "");
	assert_int_equal(parse(&c, NULL, err, sizeof(err)), 0);
	for (unsigned i = 0; i < config_n_keys(); i++) {
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(config_key_name(i), config_key_name(j));
		/* each name is a key the INI file takes, with its own value */
		config_key_value(&c, i, v, sizeof(v));
		if (strchr(v, '\n'))
			*strchr(v, '\n') = '\0';
		snprintf(text, sizeof(text), "%s = %.90s\n", config_key_name(i), v);
		write_file(ini, text);
		if (parse(&c, NULL, err, sizeof(err)) != 0)
			fail_msg("%s: %s", config_key_name(i), err);
	}
	assert_null(config_key_name(config_n_keys()));
}

/* LIVE keys are copied, RESTART keys stay, and the classification is
 * the documented one for the keys a reload test relies on. */
static void test_merge_live(void **state)
{
	struct cpusetd_config run, next;
	char err[CONFIG_ERR_MAX];
	static char vr[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX], vn[sizeof(vr)];
	unsigned live = 0, restart = 0;

	(void)state;
	write_file(ini, "");
	assert_int_equal(parse(&run, NULL, err, sizeof(err)), 0);
	write_file(ini, "on_error = shared\nlog_level = debug\nresize_check_ms = 250\n"
		   "export_interval = 7\nstate_dir = /elsewhere\nmin_shared_cpus = 2\n"
		   "reserved_cpus = 1\nbundle_path = /x/{id}/config.json\n"
		   "cores_ids_namespaces = weka-*\n");
	assert_int_equal(parse(&next, NULL, err, sizeof(err)), 0);
	config_merge_live(&run, &next);
	assert_string_equal(run.policy.cores_ids_namespaces, "weka-*");
	assert_string_equal(run.policy.resource_status_namespaces, "*");
	assert_int_equal(run.policy.on_error, POLICY_ON_ERROR_SHARED);
	assert_int_equal(run.log_level, LOG_DEBUG);
	assert_int_equal(run.resize_check_ms, 250);
	assert_int_equal(run.export_interval_s, 7);
	assert_int_equal(run.n_bundle_paths, 1);
	assert_string_equal(run.bundle_paths[0], "/x/{id}/config.json");
	assert_string_equal(run.state_dir, "/run/cpusetd");
	assert_int_equal(run.policy.min_shared_cpus, 1);
	assert_true(cpumask_empty(&run.policy.reserved_cpus));
	for (unsigned i = 0; i < config_n_keys(); i++) {
		config_key_value(&run, i, vr, sizeof(vr));
		config_key_value(&next, i, vn, sizeof(vn));
		if (config_key_reload(i) == CONFIG_RELOAD_LIVE) {
			live++;
			if (strcmp(vr, vn) != 0)
				fail_msg("live key %s not merged", config_key_name(i));
		} else {
			restart++;
		}
	}
	assert_true(live > 5 && restart > 5);
	for (unsigned i = 0; i < config_n_keys(); i++) {
		const char *n = config_key_name(i);

		if (!strcmp(n, "state_dir") || !strcmp(n, "pin_dir") || !strcmp(n, "kubepods_root") ||
		    !strcmp(n, "reserved_cpus") || !strcmp(n, "min_shared_cpus"))
			assert_int_equal(config_key_reload(i), CONFIG_RELOAD_RESTART);
		if (!strcmp(n, "log_level") || !strcmp(n, "on_error") || !strcmp(n, "textfile") ||
		    !strcmp(n, "isolate_host") || !strcmp(n, "resize_check_ms") ||
		    !strcmp(n, "cores_ids_namespaces") || !strcmp(n, "resource_status_namespaces"))
			assert_int_equal(config_key_reload(i), CONFIG_RELOAD_LIVE);
	}
}

/* The node checks: min_shared_cpus below online, reserved_cpus online. */
static void test_check_node(void **state)
{
	struct cpusetd_config c = { .policy = { .min_shared_cpus = 1 } };
	struct cpumask online;
	char err[256];

	(void)state;
	assert_int_equal(cpulist_parse("0-3", &online), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), 0);
	assert_int_equal(cpulist_parse("2-3", &c.policy.reserved_cpus), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), 0);
	assert_int_equal(cpulist_parse("3-4", &c.policy.reserved_cpus), 0);
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "reserved_cpus 3-4: not all of them are online");
	cpumask_zero(&c.policy.reserved_cpus);
	c.policy.min_shared_cpus = 4;
	assert_int_equal(config_check_node(&c, &online, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "min_shared_cpus 4 is not below the 4 CPUs online"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_print_round_trip),
		cmocka_unit_test(test_keys_cover_options),
		cmocka_unit_test(test_merge_live),
		cmocka_unit_test(test_check_node),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
