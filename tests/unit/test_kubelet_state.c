// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet_state: the CPU manager checkpoint, v2 and v1 shapes, and
 * malformed files that must be refused whole.
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
#include "user/meta/kubelet_state.h"

static void assert_cpus(const struct cpumask *m, const char *want)
{
	char buf[CPULIST_MAX];

	assert_non_null(m);
	assert_true(cpulist_format(m, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, want);
}

/* What kubelet 1.28 writes (checksum value arbitrary: it is not checked). */
static void test_v2(void **state)
{
	struct kubelet_state s;
	(void)state;

	assert_int_equal(kubelet_state_parse(
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0,5-7\",\"entries\":"
		"{\"0a1b-uid\":{\"app\":\"1-2\",\"side\":\"3\"},\"ffff-uid\":{\"db\":\"4\"}},"
		"\"checksum\":1527836470}", &s), 0);
	assert_true(s.is_static);
	assert_int_equal(s.n, 3);
	assert_cpus(&s.default_cpuset, "0,5-7");
	assert_cpus(kubelet_state_find(&s, "0a1b-uid", "app", "cid"), "1-2");
	assert_cpus(kubelet_state_find(&s, "0a1b-uid", "side", NULL), "3");
	assert_cpus(kubelet_state_find(&s, "ffff-uid", "db", NULL), "4");
	assert_null(kubelet_state_find(&s, "ffff-uid", "app", NULL));
	assert_null(kubelet_state_find(&s, NULL, "app", "app"));
	kubelet_state_free(&s);
}

static void test_v1_and_none(void **state)
{
	struct kubelet_state s;
	(void)state;

	assert_int_equal(kubelet_state_parse(
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":"
		"{\"8d1f0c5a\":\"1-3\"},\"checksum\":1}", &s), 0);
	assert_int_equal(s.n, 1);
	assert_cpus(kubelet_state_find(&s, "uid", "name", "8d1f0c5a"), "1-3");
	kubelet_state_free(&s);

	assert_int_equal(kubelet_state_parse(
		"{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":1}", &s), 0);
	assert_false(s.is_static);
	assert_int_equal(s.n, 0);
	kubelet_state_free(&s);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"defaultCpuSet\":\"0\"}",
		"{\"policyName\":1}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0-\"}",
		"{\"policyName\":\"static\",\"entries\":[]}",
		"{\"policyName\":\"static\",\"entries\":{\"u\":{\"c\":\"1,x\"}}}",
		"{\"policyName\":\"static\",\"entries\":{\"u\":{\"c\":7}}}",
		"{\"policyName\":\"static\",\"entries\":{\"u\":{\"\":\"1\"}}}",
		"{\"policyName\":\"static\",\"entries\":{}} trailing",
	};
	struct kubelet_state s = { .n = 42 };
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(kubelet_state_parse(bad[i], &s), -EBADMSG);
	assert_int_equal(s.n, 42);	/* untouched */
}

static void test_read(void **state)
{
	char dir[] = "/tmp/cpusetd-kst-XXXXXX", path[64], link[64];
	struct kubelet_state s;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(kubelet_state_read(path, &s), -ENOENT);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"policyName\":\"static\",\"entries\":{\"u\":{\"c\":\"2\"}}}\n", f);
	fclose(f);
	assert_int_equal(kubelet_state_read(path, &s), 0);
	assert_cpus(kubelet_state_find(&s, "u", "c", NULL), "2");
	kubelet_state_free(&s);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(kubelet_state_read(link, &s), -ELOOP);
	assert_int_equal(kubelet_state_read(dir, &s), -EINVAL);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v1_and_none),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
