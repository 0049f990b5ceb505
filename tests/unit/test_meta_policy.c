// SPDX-License-Identifier: Apache-2.0
/*
 * meta: pod policy annotations, names, runtime CPU requests and
 * meta_policy_equal().
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

/* Koordinator / cpusetd pod annotations: values kept raw, malformed ones
 * recorded in pod.error without making the bundle unreadable, direct
 * annotations winning over CRI-O's JSON copy. */
static void test_pod_policy(void **state)
{
	struct pod_meta m;
	(void)state;

	assert_int_equal(meta_parse_text("{\"annotations\": {"
		"\"koordinator.sh/qosClass\": \"LSR\","
		"\"scheduling.koordinator.sh/resource-status\": \"{\\\"cpuset\\\":\\\"2-3\\\"}\","
		"\"scheduling.koordinator.sh/resource-spec\": "
		"\"{\\\"preferredCPUBindPolicy\\\":\\\"SpreadByPCPUs\\\","
		"\\\"preferredCPUExclusivePolicy\\\":\\\"PCPULevel\\\"}\","
		"\"cpusetd.io/prefer-isolated-cpus\": \"true\"}}", &m), 0);
	assert_string_equal(m.pod.qos_class, "LSR");
	assert_true(m.pod.has_status_cpuset);
	assert_string_equal(m.pod.status_cpuset, "2-3");
	assert_string_equal(m.pod.bind_policy, "SpreadByPCPUs");
	assert_string_equal(m.pod.exclusive_policy, "PCPULevel");
	assert_string_equal(m.pod.prefer_isolated, "true");
	assert_string_equal(m.pod.error, "");

	/* Not JSON inside the string: recorded, the rest still read. */
	assert_int_equal(meta_parse_text("{\"annotations\": {"
		"\"io.kubernetes.cri.sandbox-name\": \"p\","
		"\"scheduling.koordinator.sh/resource-status\": \"{cpuset: 1}\"}}", &m), 0);
	assert_string_equal(m.pod_name, "p");
	assert_false(m.pod.has_status_cpuset);
	assert_non_null(strstr(m.pod.error, "resource-status"));

	/* Wrong type of a class, and an empty scheduler cpuset = none. */
	assert_int_equal(meta_parse_text("{\"annotations\": {"
		"\"koordinator.sh/qosClass\": \"AVERYLONGQOSCLASSNAME\","
		"\"scheduling.koordinator.sh/resource-status\": \"{\\\"cpuset\\\":\\\"\\\"}\"}}",
		&m), 0);
	assert_non_null(strstr(m.pod.error, "qosClass"));
	assert_false(m.pod.has_status_cpuset);

	/* CRI-O: the pod's annotations serialised in one string. */
	assert_int_equal(meta_parse_text("{\"annotations\": {"
		"\"koordinator.sh/qosClass\": \"BE\","
		"\"io.kubernetes.cri-o.Annotations\": \"{\\\"koordinator.sh/qosClass\\\":\\\"LSE\\\","
		"\\\"cpusetd.io/prefer-isolated-cpus\\\":\\\"false\\\"}\"}}", &m), 0);
	assert_string_equal(m.pod.qos_class, "BE");
	assert_string_equal(m.pod.prefer_isolated, "false");
}

static void test_name(void **state)
{
	static const struct {
		const char *ns, *pod, *ctr, *id;
		bool sandbox;
		size_t len;
		const char *want;
	} cases[] = {
		{ "shop", "web-1", "nginx", "7e6d5c4b3a2f1e0d", false, 128, "shop/web-1/nginx" },
		{ "shop", "web-1", "", "7e6d5c4b3a2f1e0d9c8b", false, 128, "shop/web-1/7e6d5c4b3a2f" },
		{ "shop", "web-1", "", NULL, false, 128, "shop/web-1/?" },
		{ "shop", "web-1", "", "", false, 128, "shop/web-1/?" },
		{ "", "", "", NULL, false, 128, "?/?/?" },
		{ "shop", "web-1", "", "5b2e", true, 128, "shop/web-1/POD" },
		{ "shop", "web-1", "POD", "5b2e", true, 128, "shop/web-1/POD" },
		{ "", "web-1", "app", NULL, false, 128, "?/web-1/app" },
		{ "shop", "web-1", "nginx", NULL, false, 8, "shop/we" },
		{ "sh\nop", "web\x1b", "a", NULL, false, 128, "sh?op/web?/a" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pod_meta m = { .sandbox = cases[i].sandbox };
		char buf[128];

		strcpy(m.namespace_, cases[i].ns);
		strcpy(m.pod_name, cases[i].pod);
		strcpy(m.container_name, cases[i].ctr);
		meta_name(&m, cases[i].id, buf, cases[i].len);
		assert_string_equal(buf, cases[i].want);
	}
}

/* linux.resources.cpu.cpus: whether the runtime writes its own set, and
 * which; an odd value is only a hint and never costs the bundle. */
static void test_runtime_cpus(void **state)
{
	static const struct {
		const char *name, *json, *cpus;
		bool sets;
	} cases[] = {
		{ "absent", "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":2}}}}", "", false },
		{ "empty", "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"\"}}}}", "", false },
		{ "a list", "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"3,8-9\"}}}}", "3,8-9", true },
		{ "a number", "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":3,\"quota\":5}}}}", "", true },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pod_meta m;

		print_message("case: %s\n", cases[i].name);
		assert_int_equal(meta_parse_text(cases[i].json, &m), 0);
		assert_string_equal(m.runtime_cpus, cases[i].cpus);
		assert_int_equal(m.runtime_sets_cpus, cases[i].sets);
	}
}

/* meta_policy_equal: equal for a deep copy and for what is not a policy
 * input (shares, the runtime's record, the paths); not for each input. */
static void test_policy_equal(void **state)
{
	static const char *json =
		"{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"ns\","
		"\"io.kubernetes.cri.sandbox-name\":\"p\",\"io.kubernetes.cri.container-name\":\"c\","
		"\"weka.io/cores-ids\":\"2-3\"},"
		"\"linux\":{\"resources\":{\"cpu\":{\"quota\":200000,\"period\":100000,"
		"\"shares\":2048,\"cpus\":\"0-1\"}}}}";
	struct pod_meta a, b;

	(void)state;
	assert_int_equal(meta_parse_text(json, &a), 0);
	assert_non_null(a.cores_ids);
	assert_int_equal(meta_copy(&b, &a), 0);
	assert_true(meta_policy_equal(&a, &b));
	b.cpu_shares = 1;
	strcpy(b.runtime_cpus, "5");
	strcpy(b.runtime_mems, "1");
	strcpy(b.cgroups_path, "/elsewhere");
	assert_true(meta_policy_equal(&a, &b));
	b.quota_us = 300000;
	assert_false(meta_policy_equal(&a, &b));
	b.quota_us = a.quota_us;
	free(b.cores_ids);
	b.cores_ids = NULL;
	assert_false(meta_policy_equal(&a, &b));
	b.cores_ids = strdup("2-3");
	assert_true(meta_policy_equal(&a, &b));
	strcpy(b.pod.prefer_isolated, "true");
	assert_false(meta_policy_equal(&a, &b));
	b.pod.prefer_isolated[0] = '\0';
	strcpy(b.container_name, "d");
	assert_false(meta_policy_equal(&a, &b));
	meta_release(&a);
	meta_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_equal),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_pod_policy),
		cmocka_unit_test(test_runtime_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
