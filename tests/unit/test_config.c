// SPDX-License-Identifier: Apache-2.0
/*
 * config: defaults < INI file < command line, and one precise error line
 * for every kind of bad input. stdout/stderr of config_load are captured
 * so the messages themselves are checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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
#include <sys/stat.h>
#include <cmocka.h>
#include "user/config/config.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS	32

static char tmpdir[64], ini[128];
static char out[8192], err[8192];	/* captured stdout / stderr of the last call */

/* Redirects fd into a fresh memfd; returns the saved original fd. */
static int capture_begin(int fd)
{
	int saved = dup(fd), mfd = memfd_create("capture", MFD_CLOEXEC);

	assert_true(saved >= 0 && mfd >= 0);
	assert_int_equal(dup2(mfd, fd), fd);
	close(mfd);
	return saved;
}

static void capture_end(int fd, int saved, char *buf, size_t size)
{
	ssize_t n;

	n = pread(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	assert_int_equal(dup2(saved, fd), fd);
	close(saved);
}

/*
 * config_load with argv = "cpusetd" + args (NULL-terminated), capturing
 * its output into out / err.
 */
static int load(struct cpusetd_config *c, const char *const *args)
{
	char *argv[MAX_ARGS + 2] = { "cpusetd" };
	int argc = 1, so, se, r;

	for (; args && args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	fflush(stdout);
	fflush(stderr);
	so = capture_begin(1);
	se = capture_begin(2);
	r = config_load(argc, argv, c);
	fflush(stdout);
	fflush(stderr);
	capture_end(1, so, out, sizeof(out));
	capture_end(2, se, err, sizeof(err));
	return r;
}

static void write_ini(const char *text)
{
	FILE *f = fopen(ini, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_config.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(ini, sizeof(ini), "%s/cpusetd.conf", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(ini);
	return rmdir(tmpdir);
}

static void assert_defaults(const struct cpusetd_config *c)
{
	assert_string_equal(c->kubepods_root, "");
	assert_int_equal(c->n_bundle_paths, 2);
	assert_string_equal(c->bundle_paths[0],
			    "/run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}/config.json");
	assert_string_equal(c->bundle_paths[1],
			    "/run/containers/storage/overlay-containers/{id}/userdata/config.json");
	assert_string_equal(c->state_dir, "/run/cpusetd");
	assert_string_equal(c->pin_dir, "/sys/fs/bpf/cpusetd");
	assert_string_equal(c->kubelet_pods_dir, "/var/lib/kubelet/pods");
	assert_int_equal(c->policy.min_shared_cpus, 1);
	assert_int_equal(c->policy.on_error, POLICY_ON_ERROR_REJECT);
	assert_int_equal(c->log_level, LOG_INFO);
	assert_false(c->dry_run);
	assert_string_equal(c->kubelet_state_file, "/var/lib/kubelet/cpu_manager_state");
	assert_int_equal(c->policy.alloc.bind, KOORD_BIND_FULL_PCPUS);
	assert_int_equal(c->policy.alloc.exclusive, KOORD_EXCL_NONE);
	assert_int_equal(c->policy.alloc.numa, KOORD_NUMA_MOST_ALLOCATED);
	assert_int_equal(c->policy.alloc.align, NUMA_POLICY_NONE);
	assert_false(c->policy.alloc.pod_scope);
	assert_false(c->policy.alloc.kubelet_compat);
	assert_false(c->policy.besteffort_be_pool);
	assert_int_equal(c->policy.integer_qos, POLICY_QOS_LSE);
	assert_true(cpumask_empty(&c->policy.reserved_cpus));
	assert_false(c->policy.prefer_isolated);
	/* the rule book's: fixed-set annotations from every namespace */
	assert_string_equal(c->policy.cores_ids_namespaces, "*");
	assert_string_equal(c->policy.resource_status_namespaces, "*");
	/* Debian's prometheus-node-exporter textfile directory */
	assert_string_equal(c->textfile, "/var/lib/prometheus/node-exporter/cpusetd.prom");
	assert_int_equal(c->export_interval_s, 15);
	assert_int_equal(c->sched_policy, SCHED_FIFO);
	assert_int_equal(c->sched_priority, CONFIG_DEFAULT_SCHED_PRIORITY);
	assert_int_equal(c->sched_priority, 10);
	assert_int_equal(c->nice, 0);
	assert_true(c->run_on_reserved_cpus);
}

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

/* Who may use the fixed-set annotations: comma-separated namespace
 * patterns like isolate_host_skip's, "" = none, checked strictly (a
 * pattern that can never match a namespace is refused, not ignored). */
static void test_namespace_keys(void **state)
{
	static const struct {
		const char *ini, *argv, *cores, *status;
	} good[] = {
		{ "", NULL, "*", "*" },
		{ "cores_ids_namespaces = weka-system,storage-*\n", NULL, "weka-system,storage-*", "*" },
		{ "resource-status-namespaces = koord-[ab]?\n", NULL, "*", "koord-[ab]?" },
		{ "cores_ids_namespaces =\nresource_status_namespaces =\n", NULL, "", "" },
		{ "cores_ids_namespaces = a\n", "b,c", "b,c", "*" },	/* the command line wins */
		{ "cores_ids_namespaces = a\n", "", "", "*" },
		{ "cores_ids_namespaces = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p\n", NULL,
		  "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", "*" },
	};
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ "cores_ids_namespaces = Kube-System", "got 'Kube-System'" },
		{ "cores_ids_namespaces = a, b", "got ' b'" },
		{ "cores_ids_namespaces = a,,b", "got ''" },
		{ "cores_ids_namespaces = a,", "may not end in ','" },
		{ "cores_ids_namespaces = ,a", "got ''" },
		{ "resource_status_namespaces = ns/x", "expected comma-separated namespace patterns" },
		{ "resource_status_namespaces = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "at most 16" },
	};
	const char *plain[] = { "--config", ini, NULL };
	struct cpusetd_config c;
	char text[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		const char *cli[] = { "--config", ini, "--cores-ids-namespaces", good[i].argv, NULL };

		write_ini(good[i].ini);
		print_message("good %zu\n", i);
		assert_int_equal(load(&c, good[i].argv ? cli : plain), 0);
		assert_string_equal(c.policy.cores_ids_namespaces, good[i].cores);
		assert_string_equal(c.policy.resource_status_namespaces, good[i].status);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char want[256];

		snprintf(text, sizeof(text), "%s\n", bad[i].line);
		write_ini(text);
		print_message("bad %zu\n", i);
		assert_int_equal(load(&c, plain), -EINVAL);
		snprintf(want, sizeof(want), "%s:1: %.*s: ", ini, (int)strcspn(bad[i].line, " "),
			 bad[i].line);
		assert_non_null(strstr(err, want));
		assert_non_null(strstr(err, bad[i].err));
	}
}

/* The allocation-policy keys: every value each takes, from the file and
 * the command line, and one clear line for a bad one. */
static void test_policy_keys(void **state)
{
	const char *args[] = { "--config", ini, "--numa-topology-alignment-policy",
			       "single-numa-node", NULL };
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ "cpu_bind_policy = fullpcpus", "expected FullPCPUs|SpreadByPCPUs|FullPCPUsOnly" },
		{ "cpu_exclusive_policy = Core", "expected None|PCPULevel|NUMANodeLevel" },
		{ "numa_allocate_strategy = Random", "expected MostAllocated" },
		{ "numa_topology_alignment_policy = strict", "expected None|BestEffort" },
		{ "topology_manager_scope = node", "expected container|pod" },
		{ "kubelet_compat = maybe", "expected true|false" },
		{ "kubelet_cpu_manager_policy_options = full-pcpus-only", "NAME=true|false" },
		{ "kubelet_cpu_manager_policy_options = full-pcpus-only=yes", "expected true or false" },
		{ "kubelet_cpu_manager_policy_options = strict-cpu-reservation=true", "known NAME" },
		{ "besteffort_pool = BE", "expected shared|be" },
		{ "integer_qos = LS", "expected LSE|LSR" },
		{ "reserved_cpus = 0-", "expected a cpulist" },
		{ "kubelet_state_file = relative/path", "absolute path" },
	};
	const char *plain[] = { "--config", ini, NULL };
	struct cpusetd_config c;
	char text[256];

	(void)state;
	write_ini("cpu_bind_policy = SpreadByPCPUs\n"
		  "cpu-exclusive-policy = NUMANodeLevel\n"
		  "numa_allocate_strategy = DistributeEvenly\n"
		  "numa_topology_alignment_policy = Restricted\n"
		  "topology_manager_scope = pod\n"
		  "kubelet_compat = true\n"
		  "kubelet_cpu_manager_policy_options = full-pcpus-only=true,"
		  "distribute-cpus-across-numa=true,align-by-socket=false\n"
		  "besteffort_pool = be\n"
		  "integer_qos = LSR\n"
		  "reserved_cpus = 0,2\n"
		  "prefer_isolated_cpus = yes\n"
		  "kubelet_state_file =\n");
	assert_int_equal(load(&c, args), 0);
	assert_int_equal(c.policy.alloc.bind, KOORD_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(c.policy.alloc.exclusive, KOORD_EXCL_NUMA);
	assert_int_equal(c.policy.alloc.numa, KOORD_NUMA_DISTRIBUTE_EVENLY);
	assert_int_equal(c.policy.alloc.align, NUMA_POLICY_SINGLE_NUMA_NODE);	/* CLI wins */
	assert_true(c.policy.alloc.pod_scope);
	assert_true(c.policy.alloc.kubelet_compat);
	assert_true(c.policy.alloc.kubelet.full_pcpus_only);
	assert_true(c.policy.alloc.kubelet.distribute_across_numa);
	assert_false(c.policy.alloc.kubelet.align_by_socket);
	assert_false(c.policy.alloc.kubelet.distribute_across_cores);
	assert_true(c.policy.besteffort_be_pool);
	assert_int_equal(c.policy.integer_qos, POLICY_QOS_LSR);
	assert_true(cpumask_test(&c.policy.reserved_cpus, 0));
	assert_true(cpumask_test(&c.policy.reserved_cpus, 2));
	assert_int_equal(cpumask_weight(&c.policy.reserved_cpus), 2);
	assert_true(c.policy.prefer_isolated);
	assert_string_equal(c.kubelet_state_file, "");

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "%s\n", bad[i].line);
		write_ini(text);
		assert_int_equal(load(&c, plain), -EINVAL);
		if (!strstr(err, bad[i].err) || !strstr(err, ":1: "))
			fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i].line, err, bad[i].err);
	}
}

/* The Prometheus export: textfile ("" = off) and export_interval. */
static void test_export_keys(void **state)
{
	const char *args[] = { "--config", ini, "--export-interval", "60", NULL };
	const char *plain[] = { "--config", ini, NULL };
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ "textfile = cpusetd.prom", "textfile: expected an absolute path" },
		{ "export_interval = 0", "expected seconds 1..86400, got '0'" },
		{ "export_interval = 86401", "got '86401'" },
		{ "export-interval = 1.5", "got '1.5'" },
	};
	struct cpusetd_config c;
	char text[256];

	(void)state;
	write_ini("textfile = /tmp/prom/x.prom\nexport_interval = 5\n");
	assert_int_equal(load(&c, args), 0);
	assert_string_equal(c.textfile, "/tmp/prom/x.prom");
	assert_int_equal(c.export_interval_s, 60);	/* CLI wins */
	write_ini("textfile =\n");
	assert_int_equal(load(&c, plain), 0);
	assert_string_equal(c.textfile, "");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "%s\n", bad[i].line);
		write_ini(text);
		assert_int_equal(load(&c, plain), -EINVAL);
		if (!strstr(err, bad[i].err) || !strstr(err, ":1: "))
			fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i].line, err, bad[i].err);
	}
	write_ini("");
	const char *cli[] = { "--config", ini, "--textfile", "", NULL };
	assert_int_equal(load(&c, cli), 0);
	assert_string_equal(c.textfile, "");
}

/* The daemon's own scheduling: policy, priority (fifo, rr), nice (other),
 * run_on_reserved_cpus; every bad value and every pair the chosen policy
 * would ignore is one line and -EINVAL. */
static void test_sched_keys(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "sched_policy = batch\n", ":1: sched_policy: expected other|fifo|rr, got 'batch'" },
		{ "sched_policy = FIFO\n", "expected other|fifo|rr, got 'FIFO'" },
		{ "sched_priority = 0\n", ":1: sched_priority: expected a priority 1..99, got '0'" },
		{ "sched_priority = 100\n", "expected a priority 1..99, got '100'" },
		{ "sched_priority = -1\n", "got '-1'" },
		{ "sched_priority = high\n", "got 'high'" },
		{ "sched_policy = other\nnice = -21\n", ":2: nice: expected a nice value -20..19, got '-21'" },
		{ "nice = 20\n", "expected a nice value -20..19, got '20'" },
		{ "nice = +1\n", "got '+1'" },
		{ "nice = --1\n", "got '--1'" },
		{ "nice = -\n", "got '-'" },
		{ "nice = 1.5\n", "got '1.5'" },
		{ "run_on_reserved_cpus = maybe\n", "expected true|false|yes|no|1|0, got 'maybe'" },
		/* fine alone, ignored by the policy chosen: refused */
		{ "sched_policy = other\nsched_priority = 10\n",
		  "cpusetd: sched_priority 10 needs sched_policy fifo or rr" },
		{ "nice = -5\n", "cpusetd: nice -5 needs sched_policy other" },
		{ "sched_policy = rr\nnice = 3\n", "cpusetd: nice 3 needs sched_policy other" },
	};
	const char *plain[] = { "--config", ini, NULL };
	const char *cli[] = { "--config", ini, "--sched-policy", "rr", "--sched-priority", "50",
			      "--run-on-reserved-cpus", "false", NULL };
	const char *cli_other[] = { "--config", ini, "--sched-policy", "other", "--nice", "-20", NULL };
	const char *cli_bad[] = { "--config", ini, "--sched-priority", "5", "--sched-policy",
				  "other", NULL };
	struct cpusetd_config c;

	(void)state;
	write_ini("sched_policy = rr\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_RR);
	assert_int_equal(c.sched_priority, CONFIG_DEFAULT_SCHED_PRIORITY);
	write_ini("sched_policy = other\nnice = -7\nrun-on-reserved-cpus = no\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_OTHER);
	assert_int_equal(c.sched_priority, 0);
	assert_int_equal(c.nice, -7);
	assert_false(c.run_on_reserved_cpus);
	write_ini("sched_priority = 99\nnice = 0\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_FIFO);
	assert_int_equal(c.sched_priority, 99);
	/* the command line over the file */
	write_ini("sched_policy = other\nnice = 19\n");
	assert_int_equal(load(&c, cli_other), 0);
	assert_int_equal(c.nice, -20);
	write_ini("sched_priority = 1\nrun_on_reserved_cpus = yes\n");
	assert_int_equal(load(&c, cli), 0);
	assert_int_equal(c.sched_policy, SCHED_RR);
	assert_int_equal(c.sched_priority, 50);
	assert_false(c.run_on_reserved_cpus);
	/* from the file: one line, the file's line when a value is bad */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		write_ini(bad[i].text);
		assert_int_equal(load(&c, plain), -EINVAL);
		if (!strstr(err, bad[i].err) || strcmp(strchr(err, '\n'), "\n") != 0)
			fail_msg("%s: error \"%s\" lacks \"%s\" or is not one line", bad[i].text,
				 err, bad[i].err);
	}
	/* from the command line */
	write_ini("");
	assert_int_equal(load(&c, cli_bad), -EINVAL);
	assert_string_equal(err, "cpusetd: sched_priority 5 needs sched_policy fifo or rr "
			    "(other has no priority; use nice)\n");
	cli_bad[2] = "--nice";
	cli_bad[3] = "x";
	assert_int_equal(load(&c, cli_bad), -EINVAL);
	assert_string_equal(err, "cpusetd: --nice: expected a nice value -20..19, got 'x'\n");
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
		cmocka_unit_test(test_bad_argv),
		cmocka_unit_test(test_check_cpus),
		cmocka_unit_test(test_good_edges),
		cmocka_unit_test(test_bad_ini),
		cmocka_unit_test(test_ini_limits),
		cmocka_unit_test(test_config_file_errors),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_repeat_calls),
		cmocka_unit_test(test_shipped_config),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_namespace_keys),
		cmocka_unit_test(test_export_keys),
		cmocka_unit_test(test_sched_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
