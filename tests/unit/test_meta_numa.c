// SPDX-License-Identifier: Apache-2.0
/*
 * resource-status numaNodeResources (user/meta/meta_pod.c): Koordinator's
 * NUMA-aware scheduler names the NUMA nodes of a pod's share of the shared
 * pool (apis/extension NUMANodeResource, read by koordlet's cpuset rule).
 * Every listed node counts; a malformed value is an annotation error that
 * names the entry and never spoils the rest of the bundle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "testlib.h"
#include "user/meta/meta.h"

/* A bundle whose resource-status is the JSON text status (escaped here). */
static int parse_status(const char *status, struct pod_meta *m)
{
	char doc[4096], esc[2048];
	size_t j = 0;

	for (size_t i = 0; status[i] && j + 2 < sizeof(esc); i++) {
		if (status[i] == '"' || status[i] == '\\')
			esc[j++] = '\\';
		esc[j++] = status[i];
	}
	esc[j] = '\0';
	snprintf(doc, sizeof(doc), "{\"annotations\": {"
		 "\"io.kubernetes.cri.sandbox-name\": \"p\","
		 "\"scheduling.koordinator.sh/resource-status\": \"%s\"}}", esc);
	return meta_parse_text(doc, m);
}

static void test_nodes(void **state)
{
	struct pod_meta m;

	(void)state;
	/* koordlet's rule_test "get cpuset from annotation share pool": one
	 * node with CPU. */
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":0,"
		"\"resources\":{\"cpu\":\"2\"}}]}", &m), 0);
	assert_true(m.pod.has_status_numa);
	tl_assert_mask(&m.pod.status_numa, "0");
	assert_false(m.pod.has_status_cpuset);
	assert_string_equal(m.pod.error, "");
	meta_release(&m);

	/* BE pods: batch-cpu (milli-CPUs, "2k" = 2000) above zero binds. */
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":1,"
		"\"resources\":{\"kubernetes.io/batch-cpu\":\"2k\"}}]}", &m), 0);
	assert_true(m.pod.has_status_numa);
	tl_assert_mask(&m.pod.status_numa, "1");
	meta_release(&m);

	/* No CPU on any node binds nothing (koordlet a7a1b76: "no cpu numa
	 * allocation"): no resources, hugepages or memory only, cpu zero,
	 * batch-cpu zero or below. */
	static const char *const no_cpu[] = {
		"{\"numaNodeResources\":[{\"node\":0}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":null}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"hugepages-1Gi\":\"2Gi\"}}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":\"0\",\"memory\":\"1Gi\"}}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":\"0.000m\"}}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":0}}]}",
		"{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"kubernetes.io/batch-cpu\":\"-1\"}}]}",
	};
	for (size_t i = 0; i < sizeof(no_cpu) / sizeof(no_cpu[0]); i++) {
		assert_int_equal(parse_status(no_cpu[i], &m), 0);
		if (m.pod.has_status_numa || m.pod.error[0])
			fail_msg("%s: bound or refused (%s)", no_cpu[i], m.pod.error);
		meta_release(&m);
	}

	/* One entry with CPU binds every entry's node (koordlet joins the
	 * share pools of all entries). */
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":2,"
		"\"resources\":{\"memory\":\"1Gi\"}},{\"node\":0,\"resources\":"
		"{\"cpu\":\"500m\"}}]}", &m), 0);
	tl_assert_mask(&m.pod.status_numa, "0,2");
	meta_release(&m);

	/* As the scheduler writes it: resources per node; a repeat is one. */
	assert_int_equal(parse_status("{\"numaNodeResources\":["
		"{\"node\":3,\"resources\":{\"cpu\":\"4\",\"memory\":\"8Gi\"}},"
		"{\"node\":1,\"resources\":{\"cpu\":\"2\"}},{\"node\":3}]}", &m), 0);
	tl_assert_mask(&m.pod.status_numa, "1,3");
	assert_string_equal(m.pod.error, "");
	meta_release(&m);

	/* Beside a cpuset (an LSR pod of a NUMA-aware scheduler). */
	assert_int_equal(parse_status("{\"cpuset\":\"4-5\",\"numaNodeResources\":"
		"[{\"node\":1023,\"resources\":{\"cpu\":1}}]}", &m), 0);
	assert_true(m.pod.has_status_cpuset);
	assert_string_equal(m.pod.status_cpuset, "4-5");
	tl_assert_mask(&m.pod.status_numa, "1023");
	meta_release(&m);

	/* Absent, null and [] are "not given". */
	static const char *const none[] = {
		"{}", "{\"numaNodeResources\":null}", "{\"numaNodeResources\":[]}",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		assert_int_equal(parse_status(none[i], &m), 0);
		assert_false(m.pod.has_status_numa);
		assert_true(cpumask_empty(&m.pod.status_numa));
		assert_string_equal(m.pod.error, "");
		meta_release(&m);
	}
}

static void test_malformed(void **state)
{
	static const struct {
		const char *status;
		const char *why;	/* in pod.error */
	} bad[] = {
		{ "{\"numaNodeResources\":{\"node\":1}}", "\"numaNodeResources\" is not an array" },
		{ "{\"numaNodeResources\":\"1\"}", "\"numaNodeResources\" is not an array" },
		{ "{\"numaNodeResources\":[1]}", "\"numaNodeResources\"[0] is not an object" },
		{ "{\"numaNodeResources\":[{\"node\":0},null]}",
		  "\"numaNodeResources\"[1] is not an object" },
		{ "{\"numaNodeResources\":[{}]}", "[0].node is not an integer 0-1023" },
		{ "{\"numaNodeResources\":[{\"node\":null}]}", "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":\"1\"}]}", "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":1.5}]}", "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":-1}]}", "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":1024}]}", "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":99999999999999999999}]}",
		  "[0].node is not an integer" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":[]}]}",
		  "[0].resources is not an object" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":\"cpu\"}]}",
		  "[0].resources is not an object" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":\"two\"}}]}",
		  "[0].resources: cpu or kubernetes.io/batch-cpu is not a quantity" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":\"2x\"}}]}",
		  "is not a quantity" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":{\"cpu\":true}}]}",
		  "is not a quantity" },
		{ "{\"numaNodeResources\":[{\"node\":0,\"resources\":"
		  "{\"kubernetes.io/batch-cpu\":\"1e\"}}]}", "is not a quantity" },
	};
	char many[4096] = "{\"numaNodeResources\":[";
	struct pod_meta m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_status(bad[i].status, &m), 0);
		assert_int_equal(m.invalid, META_VALID);	/* the policy refuses it */
		if (!strstr(m.pod.error, bad[i].why) ||
		    !strstr(m.pod.error, "scheduling.koordinator.sh/resource-status"))
			fail_msg("%s: error \"%s\", want \"%s\"", bad[i].status, m.pod.error,
				 bad[i].why);
		assert_false(m.pod.has_status_numa);
		assert_string_equal(m.pod_name, "p");	/* the rest is read */
		meta_release(&m);
	}

	/* An absurd count: 65 entries. */
	for (int i = 0; i < META_MAX_NUMA_ENTRIES + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s{\"node\":%d}",
			 i ? "," : "", i % 4);
	strcat(many, "]}");
	assert_int_equal(parse_status(many, &m), 0);
	assert_non_null(strstr(m.pod.error, "has 65 entries, more than 64"));
	assert_false(m.pod.has_status_numa);
	meta_release(&m);
}

/* Part of the policy's inputs: a change of nodes is a change of policy. */
static void test_policy_equal(void **state)
{
	struct pod_meta a, b;

	(void)state;
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":1,\"resources\":{\"cpu\":\"1\"}}]}", &a), 0);
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":1,\"resources\":{\"cpu\":\"1\"}}]}", &b), 0);
	assert_true(meta_policy_equal(&a, &b));
	meta_release(&b);
	assert_int_equal(parse_status("{\"numaNodeResources\":[{\"node\":2,\"resources\":{\"cpu\":\"1\"}}]}", &b), 0);
	assert_false(meta_policy_equal(&a, &b));
	meta_release(&b);
	assert_int_equal(parse_status("{}", &b), 0);
	assert_false(meta_policy_equal(&a, &b));
	meta_release(&b);
	meta_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_policy_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
