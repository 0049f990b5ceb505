// SPDX-License-Identifier: Apache-2.0
/*
 * config: one precise error line for every kind of bad input (the
 * command line, the INI file, the file itself, min_shared_cpus against
 * the CPUs online); the captured stderr of config_load is checked
 * (fixture: test_config.h).
 */
#include "test_config.h"

/* Bad command lines: -EINVAL and one specific line on stderr. */
static void test_bad_argv(void **state)
{
	static char longpath[PATH_MAX + 2];
	static const struct {
		const char *args[5];
		const char *msg;
	} cases[] = {
		{ { "--min-shared-cpus", "x" },
		  "cpusetd: --min-shared-cpus: expected an integer 1..1023, got 'x'\n" },
		{ { "--min-shared-cpus", "0" }, "1..1023, got '0'" },
		{ { "--min-shared-cpus", "1024" }, "got '1024'" },
		{ { "--min-shared-cpus", "+1" }, "got '+1'" },
		{ { "--min-shared-cpus", " 1" }, "got ' 1'" },
		{ { "--min-shared-cpus", "1x" }, "got '1x'" },
		{ { "--min-shared-cpus", "" }, "got ''" },
		{ { "--min-shared-cpus", "99999999999999999999" }, "got '9999" },
		{ { "--on-error", "kill" }, "cpusetd: --on-error: expected reject|shared, got 'kill'\n" },
		{ { "--log-level", "verbose" }, "--log-level: expected error|warning|notice|info|debug" },
		{ { "--kubepods-root", "kubepods" }, "--kubepods-root: expected an absolute path" },
		{ { "--bundle-path", "run/{id}" }, "--bundle-path: expected an absolute path" },
		{ { "--state-dir", "" }, "--state-dir: expected an absolute path, got ''" },
		{ { "--pin-dir", "bpf" }, "--pin-dir: expected an absolute path" },
		{ { "--kubelet-pods-dir", "." }, "--kubelet-pods-dir: expected an absolute path" },
		{ { "--state-dir", longpath }, "--state-dir: path longer than 4095 characters" },
		{ { "--config", "" }, "--config: expected a file name" },
		{ { "--config", longpath }, "--config: expected a file name" },
		{ { "--bogus" }, "cpusetd: unknown option '--bogus' (see --help)\n" },
		{ { "-x" }, "unknown option '-x'" },
		{ { "--dry-run=yes" }, "unknown option '--dry-run=yes'" },
		{ { "--state-dir" }, "cpusetd: option '--state-dir' needs a value\n" },
		{ { "--min-shared-cpus" }, "option '--min-shared-cpus' needs a value" },
		{ { "stray" }, "cpusetd: unexpected argument 'stray' (see --help)\n" },
		/* fine alone, wrong together or for the node (start-time checks) */
		{ { "--bundle-path", "/etc/passwd" },
		  "cpusetd: bundle_path '/etc/passwd' has no {id}: every container would read "
		  "the same file\n" },
		{ { "--kubelet-cpu-manager-policy-options",
		    "full-pcpus-only=true,distribute-cpus-across-cores=true" },
		  "full-pcpus-only and distribute-cpus-across-cores cannot be used together" },
		{ { "--kubelet-cpu-manager-policy-options",
		    "distribute-cpus-across-numa=true,distribute-cpus-across-cores=true" },
		  "distribute-cpus-across-numa and distribute-cpus-across-cores cannot be used" },
		{ { "--pin-dir", "/var/lib/cpusetd", "--state-dir", "/var/lib/cpusetd" },
		  "pin_dir and state_dir are both '/var/lib/cpusetd'" },
	};
	char kr[300];

	(void)state;
	longpath[0] = '/';
	memset(longpath + 1, 'a', PATH_MAX);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *args[8] = { "--config", ini };
		struct cpusetd_config c, before;

		for (int j = 0; cases[i].args[j]; j++)
			args[2 + j] = cases[i].args[j];
		write_ini("");
		memset(&c, 0x5a, sizeof(c));
		before = c;
		print_message("case: %s %s\n", cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "");
		assert_int_equal(load(&c, args), -EINVAL);
		assert_non_null(strstr(err, cases[i].msg));
		/* exactly one line, and not the help text */
		assert_non_null(strchr(err, '\n'));
		assert_string_equal(strchr(err, '\n'), "\n");
		assert_null(strstr(out, "Usage"));
		assert_memory_equal(&c, &before, sizeof(c));	/* untouched */
	}

	/* kubepods_root has its own, shorter, limit */
	kr[0] = '/';
	memset(kr + 1, 'k', 256);
	kr[257] = '\0';
	const char *args[] = { "--kubepods-root", kr, "--config", ini, NULL };
	struct cpusetd_config c;
	assert_int_equal(load(&c, args), -EINVAL);
	assert_non_null(strstr(err, "--kubepods-root: path longer than 255 characters"));
	kr[255] = '\0';	/* 255 characters: the most that fits */
	assert_int_equal(load(&c, args), 0);
	/* "" asks for auto-detection */
	args[1] = "";
	assert_int_equal(load(&c, args), 0);
	assert_string_equal(c.kubepods_root, "");
}

/* min_shared_cpus against the CPUs online: below is fine, at or above is
 * one line. */
static void test_check_cpus(void **state)
{
	struct cpusetd_config c = { .policy = { .min_shared_cpus = 2 } };
	int se;

	(void)state;
	assert_int_equal(config_check_cpus(&c, 3), 0);
	fflush(stderr);
	se = capture_begin(2);
	assert_int_equal(config_check_cpus(&c, 2), -EINVAL);
	fflush(stderr);
	capture_end(2, se, err, sizeof(err));
	assert_string_equal(err, "cpusetd: min_shared_cpus 2 is not below the 2 CPUs online: "
			    "no CPU could ever be exclusive\n");
	c.policy.min_shared_cpus = 3;
	fflush(stderr);
	se = capture_begin(2);
	assert_int_equal(config_check_cpus(&c, 1), -EINVAL);
	fflush(stderr);
	capture_end(2, se, err, sizeof(err));
	assert_non_null(strstr(err, "the 1 CPU online"));
}

/* Bad INI files: -EINVAL (or -errno), naming file:line and the key. */
static void test_bad_ini(void **state)
{
	static const struct {
		const char *text;
		int line;
		const char *msg;
	} cases[] = {
		{ "state_dir = /s\nfoo = 1\n", 2, "unknown key 'foo'" },
		{ "[cpusetd]\nconfig = /x\n", 2, "unknown key 'config'" },
		{ "[other]\nstate_dir = /s\n", 2, "unknown section [other]" },
		{ "\n\nmin_shared_cpus = many\n", 3, "min_shared_cpus: expected an integer 1..1023, got 'many'" },
		{ "on-error = maybe\n", 1, "on-error: expected reject|shared, got 'maybe'" },
		{ "dry_run = perhaps\n", 1, "dry_run: expected true|false|yes|no|1|0, got 'perhaps'" },
		{ "log_level = loud\n", 1, "log_level: expected error|warning" },
		{ "state_dir = relative\n", 1, "state_dir: expected an absolute path" },
		{ "kubepods_root = kubepods\n", 1, "kubepods_root: expected an absolute path" },
		{ "# ok\njust some words\n", 2, "syntax error" },
		{ "[cpusetd\n", 1, "syntax error" },
		{ "a\nfoo = 1\n", 1, "syntax error" },
		{ "foo = 1\nb\n", 1, "unknown key 'foo'" },
	};
	const char *args[] = { "--config", ini, NULL };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cpusetd_config c;
		char want[256];

		write_ini(cases[i].text);
		print_message("case %zu\n", i);
		assert_int_equal(load(&c, args), -EINVAL);
		snprintf(want, sizeof(want), "cpusetd: %s:%d: %s", ini, cases[i].line, cases[i].msg);
		assert_non_null(strstr(err, want));
		assert_string_equal(strchr(err, '\n'), "\n");
	}
}

static void test_ini_limits(void **state)
{
	const char *args[] = { "--config", ini, NULL };
	char text[1024], *p;
	struct cpusetd_config c;

	(void)state;
	/* too many bundle paths in the file */
	p = text;
	for (int i = 0; i < 9; i++)
		p += sprintf(p, "bundle_path = /p%d/{id}\n", i);
	write_ini(text);
	assert_int_equal(load(&c, args), -EINVAL);
	assert_non_null(strstr(err, ":9: bundle_path: at most 8 bundle paths"));

	/* a line inih would split is refused, not truncated */
	strcpy(text, "state_dir = /");
	memset(text + strlen(text), 'a', 300);
	strcpy(text + strlen("state_dir = /") + 300, "\n");
	write_ini(text);
	assert_int_equal(load(&c, args), -EINVAL);
	assert_non_null(strstr(err, ":1: line longer than"));

	/* the longest line inih takes whole is accepted */
	strcpy(text, "pin_dir = /");
	memset(text + strlen(text), 'b', 197 - strlen(text));
	strcpy(text + 197, "\r\n");
	write_ini(text);
	assert_int_equal(load(&c, args), 0);
	assert_int_equal(strlen(c.pin_dir), 197 - strlen("pin_dir = "));
}

static void test_config_file_errors(void **state)
{
	char missing[160];
	const char *args[] = { "--config", missing, NULL };
	const char *dir[] = { "--config", tmpdir, NULL };
	struct cpusetd_config c;
	int fd;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/missing.conf", tmpdir);
	assert_int_equal(load(&c, args), -ENOENT);
	assert_non_null(strstr(err, "missing.conf"));
	assert_int_equal(load(&c, dir), -EINVAL);
	assert_non_null(strstr(err, "not a regular"));
	/* a FIFO must not hang the start (O_NONBLOCK), a symlink is refused */
	char fifo[160], link[160];
	snprintf(fifo, sizeof(fifo), "%s/fifo.conf", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	args[1] = fifo;
	assert_int_equal(load(&c, args), -EINVAL);
	assert_non_null(strstr(err, "not a regular"));
	unlink(fifo);
	snprintf(link, sizeof(link), "%s/link.conf", tmpdir);
	write_ini("");
	assert_int_equal(symlink(ini, link), 0);
	args[1] = link;
	assert_int_equal(load(&c, args), -ELOOP);
	unlink(link);
	/* a NUL byte inside */
	fd = open(ini, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_int_equal(write(fd, "a=1\0\n", 5), 5);
	close(fd);
	args[1] = ini;
	assert_int_equal(load(&c, args), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_argv),
		cmocka_unit_test(test_check_cpus),
		cmocka_unit_test(test_bad_ini),
		cmocka_unit_test(test_ini_limits),
		cmocka_unit_test(test_config_file_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
