// SPDX-License-Identifier: Apache-2.0
/*
 * config: defaults < INI file < command line, and one precise error line
 * for every kind of bad input. stdout/stderr of config_load are captured
 * so the messages themselves are checked.
 *
 * Here the defaults, the precedence and good values; bad input of every
 * kind is in test_config_errors.c, the policy, namespace, export and
 * scheduling keys in test_config_keys.c (fixture: test_config.h).
 */
#include "test_config.h"

static void test_defaults(void **state)
{
	const char *args[] = { "--config", ini, NULL };
	struct cpusetd_config c;

	(void)state;
	/* an empty (or comment-only) file changes nothing */
	write_ini("# nothing here\n; nor here\n\n");
	assert_int_equal(load(&c, args), 0);
	assert_defaults(&c);
	assert_string_equal(c.config_file, ini);
	assert_string_equal(err, "");
}

/* No --config and no default file: defaults, no error. */
static void test_default_file_optional(void **state)
{
	struct cpusetd_config c;

	(void)state;
	if (access(CONFIG_DEFAULT_FILE, F_OK) == 0)
		skip();	/* this machine has a real config */
	assert_int_equal(load(&c, NULL), 0);
	assert_defaults(&c);
	assert_string_equal(c.config_file, CONFIG_DEFAULT_FILE);
}

static void test_ini_values(void **state)
{
	const char *args[] = { "--config", ini, NULL };
	struct cpusetd_config c;

	(void)state;
	write_ini("; cpusetd settings\n"
		  "kubepods_root = /kubepods.slice\n"
		  "[cpusetd]\n"
		  "bundle-path = /b1/{id}/config.json\n"
		  "bundle_path = /b2/{id}/config.json\n"
		  "state_dir = /var/run/x\n"
		  "pin-dir = /sys/fs/bpf/y\n"
		  "kubelet_pods_dir = /data/kubelet/pods\n"
		  "on_error = shared\n"
		  "min_shared_cpus = 4 ; keep four\n"
		  "log-level = debug\n"
		  "dry_run = yes\n");
	assert_int_equal(load(&c, args), 0);
	assert_string_equal(err, "");
	assert_string_equal(c.kubepods_root, "/kubepods.slice");
	assert_int_equal(c.n_bundle_paths, 2);
	assert_string_equal(c.bundle_paths[0], "/b1/{id}/config.json");
	assert_string_equal(c.bundle_paths[1], "/b2/{id}/config.json");
	assert_string_equal(c.state_dir, "/var/run/x");
	assert_string_equal(c.pin_dir, "/sys/fs/bpf/y");
	assert_string_equal(c.kubelet_pods_dir, "/data/kubelet/pods");
	assert_int_equal(c.policy.on_error, POLICY_ON_ERROR_SHARED);
	assert_int_equal(c.policy.min_shared_cpus, 4);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_true(c.dry_run);
}

static void test_ini_booleans(void **state)
{
	static const struct { const char *v; bool want; } cases[] = {
		{ "true", true }, { "yes", true }, { "1", true }, { "TRUE", true },
		{ "false", false }, { "no", false }, { "0", false }, { "No", false },
	};
	const char *args[] = { "--config", ini, NULL };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cpusetd_config c;
		char text[64];

		snprintf(text, sizeof(text), "dry_run = %s\n", cases[i].v);
		write_ini(text);
		assert_int_equal(load(&c, args), 0);
		assert_int_equal(c.dry_run, cases[i].want);
	}
}

static void test_argv_overrides_ini(void **state)
{
	const char *args[] = {
		"--state-dir", "/cli/state", "--config", ini, "--bundle-path", "/cli/{id}.json",
		"--min-shared-cpus", "2", "--on-error=reject", "--log-level", "warning", NULL,
	};
	struct cpusetd_config c;

	(void)state;
	write_ini("state_dir = /ini/state\n"
		  "pin_dir = /ini/pin\n"
		  "bundle_path = /ini/a/{id}\n"
		  "bundle_path = /ini/b/{id}\n"
		  "on_error = shared\n"
		  "min_shared_cpus = 8\n"
		  "dry_run = true\n");
	assert_int_equal(load(&c, args), 0);
	assert_string_equal(err, "");
	assert_string_equal(c.state_dir, "/cli/state");
	assert_string_equal(c.pin_dir, "/ini/pin");		/* not on the command line */
	assert_int_equal(c.n_bundle_paths, 1);			/* the command line's list replaces */
	assert_string_equal(c.bundle_paths[0], "/cli/{id}.json");
	assert_int_equal(c.policy.min_shared_cpus, 2);
	assert_int_equal(c.policy.on_error, POLICY_ON_ERROR_REJECT);
	assert_int_equal(c.log_level, LOG_WARNING);
	assert_true(c.dry_run);
}

static void test_repeated_bundle_path(void **state)
{
	const char *args[] = {
		"--bundle-path", "/a/{id}", "--bundle-path=/b/{id}", "--bundle-path", "/c/{id}.json",
		"--config", ini, "--dry-run", NULL,
	};
	const char *nine[2 + 2 * 9 + 1] = { "--config", ini };
	struct cpusetd_config c;

	(void)state;
	write_ini("");
	assert_int_equal(load(&c, args), 0);
	assert_int_equal(c.n_bundle_paths, 3);
	assert_string_equal(c.bundle_paths[0], "/a/{id}");
	assert_string_equal(c.bundle_paths[1], "/b/{id}");
	assert_string_equal(c.bundle_paths[2], "/c/{id}.json");
	assert_true(c.dry_run);

	for (int i = 1; i <= 9; i++) {
		nine[2 * i] = "--bundle-path";
		nine[2 * i + 1] = "/x/{id}";
	}
	nine[20] = NULL;
	assert_int_equal(load(&c, nine), -EINVAL);
	assert_non_null(strstr(err, "--bundle-path: at most 8 bundle paths"));
	nine[18] = NULL;	/* exactly 8 is fine */
	assert_int_equal(load(&c, nine), 0);
	assert_int_equal(c.n_bundle_paths, CONFIG_MAX_BUNDLE_PATHS);
}

static void test_good_edges(void **state)
{
	const char *args[] = { "--config", ini, "--min-shared-cpus", "1023", "--log-level", "error", NULL };
	struct cpusetd_config c;

	(void)state;
	write_ini("");
	assert_int_equal(load(&c, args), 0);
	assert_int_equal(c.policy.min_shared_cpus, 1023);
	assert_int_equal(c.log_level, LOG_ERR);
}

static void test_help_version(void **state)
{
	static const char *const help[] = { "--help", NULL }, *const h[] = { "-h", NULL },
		*const version[] = { "--version", NULL },
		/* help wins over anything broken around it */
		*const broken[] = { "--bogus", "--config", "/nonexistent", "--help", NULL };
	struct cpusetd_config c;

	(void)state;
	assert_int_equal(load(&c, help), 1);
	assert_non_null(strstr(out, "Usage: cpusetd"));
	assert_non_null(strstr(out, "Examples:"));
	assert_string_equal(err, "");
	assert_int_equal(load(&c, h), 1);
	assert_non_null(strstr(out, "--min-shared-cpus"));
	assert_int_equal(load(&c, version), 1);
	/* the version and the build's git revision (Makefile, revision.h) */
	{
		char want[128];

		assert_true(cpusetd_revision[0] != '\0');
		snprintf(want, sizeof(want), "cpusetd 0.1.0 (revision %s)\n", cpusetd_revision);
		assert_string_equal(out, want);
	}
	assert_int_equal(load(&c, broken), 1);
	assert_non_null(strstr(out, "Usage: cpusetd"));
}

/* getopt state is reset: the same call twice gives the same answer. */
static void test_repeat_calls(void **state)
{
	const char *args[] = { "--config", ini, "--pin-dir", "/p", NULL };
	const char *bad[] = { "--config", ini, "--pin-dir", NULL };

	(void)state;
	write_ini("");
	for (int i = 0; i < 3; i++) {
		struct cpusetd_config c;

		assert_int_equal(load(&c, args), 0);
		assert_string_equal(c.pin_dir, "/p");
		assert_int_equal(load(&c, bad), -EINVAL);
	}
}

/* The shipped default config (systemd/cpusetd.conf) loads as shipped and
 * with every commented setting turned on, and gives the defaults. Tests
 * run from the repository root. */
static void test_shipped_config(void **state)
{
	const char *args[] = { "--config", "systemd/cpusetd.conf", NULL };
	const char *args2[] = { "--config", ini, NULL };
	char text[32768], line[512];
	struct cpusetd_config c;
	FILE *f;

	(void)state;
	assert_int_equal(load(&c, args), 0);
	assert_defaults(&c);
	f = fopen("systemd/cpusetd.conf", "r");
	assert_non_null(f);
	text[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		/* "#key = value" lines are settings; "# prose" is not. */
		const char *l = line[0] == '#' && line[1] != ' ' && line[1] != '\n' ? line + 1 : line;

		strncat(text, l, sizeof(text) - strlen(text) - 1);
	}
	fclose(f);
	write_ini(text);
	assert_int_equal(load(&c, args2), 0);
	assert_defaults(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_default_file_optional),
		cmocka_unit_test(test_ini_values),
		cmocka_unit_test(test_ini_booleans),
		cmocka_unit_test(test_argv_overrides_ini),
		cmocka_unit_test(test_repeated_bundle_path),
		cmocka_unit_test(test_good_edges),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_repeat_calls),
		cmocka_unit_test(test_shipped_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
