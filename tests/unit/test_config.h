/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fixture of the test_config*.c unit tests: config_load run on an
 * argv with its stdout and stderr captured (so the messages themselves
 * are checked), an INI file in a private directory made by the group
 * setup, and the defaults as one check.
 */
#ifndef CPUSETD_TEST_CONFIG_H
#define CPUSETD_TEST_CONFIG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

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
static inline int capture_begin(int fd)
{
	int saved = dup(fd), mfd = memfd_create("capture", MFD_CLOEXEC);

	assert_true(saved >= 0 && mfd >= 0);
	assert_int_equal(dup2(mfd, fd), fd);
	close(mfd);
	return saved;
}

static inline void capture_end(int fd, int saved, char *buf, size_t size)
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
static inline int load(struct cpusetd_config *c, const char *const *args)
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

static inline void write_ini(const char *text)
{
	FILE *f = fopen(ini, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* A line of cpusetd.conf and a part of the one error line it must give. */
struct bad_line {
	const char *line, *err;
};

/*
 * Each of bad[0..n) alone in the file: the load fails with -EINVAL and
 * says "FILE:1: KEY: " (KEY as the line spells it) and bad[i].err.
 */
static inline void assert_bad_lines(const struct bad_line *bad, size_t n)
{
	const char *plain[] = { "--config", ini, NULL };
	struct cpusetd_config c;
	char text[256], want[256];

	for (size_t i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%s\n", bad[i].line);
		write_ini(text);
		assert_int_equal(load(&c, plain), -EINVAL);
		snprintf(want, sizeof(want), "%s:1: %.*s: ", ini, (int)strcspn(bad[i].line, " "),
			 bad[i].line);
		if (!strstr(err, want) || !strstr(err, bad[i].err))
			fail_msg("%s: error \"%s\" lacks \"%s\" or \"%s\"", bad[i].line, err, want,
				 bad[i].err);
	}
}

static inline int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_config.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(ini, sizeof(ini), "%s/cpusetd.conf", tmpdir);
	return 0;
}

static inline int teardown(void **state)
{
	(void)state;
	unlink(ini);
	return rmdir(tmpdir);
}

static inline void assert_defaults(const struct cpusetd_config *c)
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

#endif
