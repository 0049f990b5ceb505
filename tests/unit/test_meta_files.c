// SPDX-License-Identifier: Apache-2.0
/*
 * meta: reading bundle files -- meta_parse_file()'s refusals (missing,
 * symlink, not regular, too big, NUL bytes) and meta_load()'s path templates.
 * Split from test_meta.c by job; no fixtures needed.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/meta/meta.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* A fresh temporary directory; the tests below own it. */
static char tmpdir[64];

static int setup_tmp(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_meta.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void mkdirs(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* path is there but unusable: an invalid bundle naming why, nothing kept. */
static void expect_bad_file(const char *path, const char *why)
{
	struct pod_meta m;

	assert_int_equal(meta_parse_file(path, &m), 0);
	assert_int_equal(m.invalid, META_INVALID_BUNDLE);
	if (!strstr(m.error, why))
		fail_msg("%s: error \"%s\" lacks \"%s\"", path, m.error, why);
	assert_false(m.from_bundle);
}

static void test_parse_file_errors(void **state)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct pod_meta m;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/missing.json", tmpdir);
	assert_int_equal(meta_parse_file(path, &m), -ENOENT);

	/* a symlink is refused even when it points at a good file */
	snprintf(path, sizeof(path), "%s/good.json", tmpdir);
	write_file(path, "{}");
	snprintf(link, sizeof(link), "%s/link.json", tmpdir);
	assert_int_equal(symlink(path, link), 0);
	expect_bad_file(link, "a symbolic link");
	assert_int_equal(meta_parse_file(path, &m), 0);
	assert_int_equal(m.invalid, META_VALID);

	/* not a regular file: a directory, a FIFO (must not block) */
	expect_bad_file(tmpdir, "not a regular file");
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_bad_file(path, "not a regular file");

	/* one byte above the cap (never read); at the cap it is read (and is
	 * bad JSON) */
	snprintf(path, sizeof(path), "%s/big.json", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, META_MAX_CONFIG_BYTES + 1), 0);
	expect_bad_file(path, "larger than 16 MiB");
	assert_int_equal(ftruncate(fd, META_MAX_CONFIG_BYTES), 0);
	expect_bad_file(path, "NUL");
	close(fd);

	/* a NUL byte in the file */
	snprintf(path, sizeof(path), "%s/nul.json", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_int_equal(write(fd, "{}\0", 3), 3);
	close(fd);
	expect_bad_file(path, "NUL");
}

static void test_load_templates(void **state)
{
	char t1[PATH_MAX], t2[PATH_MAX], t3[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
	const char *id = "abc123";
	struct pod_meta m;

	(void)state;
	snprintf(t1, sizeof(t1), "%s/containerd/{id}/config.json", tmpdir);
	snprintf(t2, sizeof(t2), "%s/crio/{id}/userdata/{id}.json", tmpdir);
	const char *templates[] = { t1, t2 };

	assert_int_equal(meta_load(templates, 2, id, &m), -ENOENT);
	assert_int_equal(meta_load(templates, 0, id, &m), -ENOENT);

	/* first missing, second present: every {id} replaced */
	snprintf(dir, sizeof(dir), "%s/crio/%s/userdata", tmpdir, id);
	mkdirs(dir);
	snprintf(path, sizeof(path), "%s/%s.json", dir, id);
	write_file(path, "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
			 "\"io.kubernetes.pod.name\":\"p\"}}");
	assert_int_equal(meta_load(templates, 2, id, &m), 0);
	assert_true(m.sandbox);
	assert_string_equal(m.pod_name, "p");
	/* a sandbox without a sandbox-id annotation is its own sandbox */
	assert_string_equal(m.sandbox_id, id);

	/* both present: the first template wins */
	snprintf(dir, sizeof(dir), "%s/containerd/%s", tmpdir, id);
	mkdirs(dir);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	write_file(path, "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"first\"}}");
	assert_int_equal(meta_load(templates, 2, id, &m), 0);
	assert_string_equal(m.pod_name, "first");
	assert_false(m.sandbox);
	assert_string_equal(m.sandbox_id, "");

	/* the file found is bad: its error, no fallback to the next */
	write_file(path, "{");
	assert_int_equal(meta_load(templates, 2, id, &m), 0);
	assert_int_equal(m.invalid, META_INVALID_BUNDLE);
	assert_string_equal(m.sandbox_id, "");

	/* a template without {id} is used verbatim */
	snprintf(t3, sizeof(t3), "%s/fixed.json", tmpdir);
	write_file(t3, "{\"annotations\":{\"io.kubernetes.pod.namespace\":\"ns\"}}");
	const char *fixed[] = { t3 };
	assert_int_equal(meta_load(fixed, 1, "anything", &m), 0);
	assert_string_equal(m.namespace_, "ns");

	/* a template whose path runs through a file counts as missing */
	snprintf(t3, sizeof(t3), "%s/fixed.json/{id}", tmpdir);
	const char *through[] = { t3, t2 };
	assert_int_equal(meta_load(through, 2, id, &m), 0);
	assert_string_equal(m.pod_name, "p");
}

static void test_load_bad_ids(void **state)
{
	static const char *const bad[] = { "", ".", "..", "../etc", "a/b" };
	const char *templates[] = { "/nonexistent/{id}/config.json" };
	char longid[PATH_MAX];
	struct pod_meta m;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(meta_load(templates, 1, bad[i], &m), -EINVAL);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(meta_load(templates, 1, longid, &m), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse_file_errors, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_load_templates, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_load_bad_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
