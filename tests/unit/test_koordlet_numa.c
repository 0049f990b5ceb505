// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's own cases for what a node agent reads, run through
 * cpusetd's parser and policy: tests/fixtures/koordlet-numa-cases.jsonl
 * (koordinator-sh/koordinator a7a1b76, see tests/fixtures/SOURCE.md).
 *   kind "cpuset": koordlet's cpuset hook (rule_test.go
 *     Test_cpusetRule_getContainerCPUSet): the pod's labels and
 *     annotations, the node's share pools, BE share pools and SYSTEM
 *     CPUs -> the cpuset koordlet writes. Here the machine's NUMA nodes
 *     are the cases' pools; CPUs in a BE pool but not in the share pool
 *     are held by an LSR pod (Koordinator's meaning of that difference);
 *     the SYSTEM CPUs are system_qos_cpus on node 0 (the one case that
 *     has them puts 0-3 beside node 0's 4-7).
 *   kind "qos": the pod's labels -> its QoS class (qos_utils_test.go).
 * Cases that do not apply to a node agent that is the CPU manager carry
 * a "cpusetd" reason and are counted, not run.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "testlib.h"
#include "user/policy/policy.h"
#include "user/topo/topology.h"

static const char *str(json_object *c, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(c, key, &v) ? json_object_get_string(v) : "";
}

/* The union of a pool list's cpusets into per-node masks of t. */
static void add_pools(struct topology *t, json_object *pools, struct cpumask *all)
{
	for (size_t i = 0; pools && i < json_object_array_length(pools); i++) {
		json_object *p = json_object_array_get_idx(pools, i), *v;
		struct cpumask m;
		int node;

		assert_true(json_object_object_get_ex(p, "node", &v));
		node = json_object_get_int(v);
		assert_int_equal(cpulist_parse(str(p, "cpuset"), &m), 0);
		cpumask_set(&t->nodes, (unsigned)node);
		cpumask_or(&t->node_cpus[node], &t->node_cpus[node], &m);
		cpumask_or(all, all, &m);
	}
}

/* The case's machine (heap; free()): every CPU a core of its own. */
static struct topology *machine(json_object *c, struct cpumask *share, struct cpumask *be,
				const struct cpumask *sys)
{
	struct topology *t = calloc(1, sizeof(*t));
	json_object *v = NULL;
	int cpu;

	assert_non_null(t);
	add_pools(t, json_object_object_get(c, "share_pools"), share);
	*be = *share;
	if (json_object_object_get_ex(c, "be_share_pools", &v))
		add_pools(t, v, be);
	cpumask_or(&t->node_cpus[0], &t->node_cpus[0], sys);
	for (int n = 0; n <= META_MAX_NUMA_NODE; n++) {
		cpumask_for_each(cpu, &t->node_cpus[n]) {
			cpumask_set(&t->present, (unsigned)cpu);
			cpumask_set(&t->online, (unsigned)cpu);
			cpumask_set(&t->core_cpus[cpu], (unsigned)cpu);
			t->cpu[cpu] = (struct topo_cpu){ .core = cpu, .node = n };
			t->n_cores++;
		}
	}
	t->n_packages = 1;
	t->threads_per_core = 1;
	return t;
}

/* The case's pod labels and annotations as the runtime hands them over
 * (NRI: the sandbox's labels and annotations). */
static void case_meta(json_object *c, struct pod_meta *m)
{
	struct meta_annotation l[8], a[8];
	size_t nl = 0, na = 0;
	json_object *o;

	assert_true(json_object_object_get_ex(c, "pod_labels", &o));
	json_object_object_foreach(o, lk, lv) {
		assert_true(nl < 8);
		l[nl++] = (struct meta_annotation){ lk, strlen(lk), json_object_get_string(lv),
						    strlen(json_object_get_string(lv)) };
	}
	assert_true(json_object_object_get_ex(c, "pod_annotations", &o));
	json_object_object_foreach(o, ak, av) {
		assert_true(na < 8);
		a[na++] = (struct meta_annotation){ ak, strlen(ak), json_object_get_string(av),
						    strlen(json_object_get_string(av)) };
	}
	assert_int_equal(meta_parse_pod(l, nl, a, na, m), 0);
}

static void run_cpuset(json_object *c, const char *id)
{
	struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
				     .resource_status_namespaces = "*" };
	struct cpumask share = { 0 }, be = { 0 }, held, want;
	struct pod_policy_ann lsr = { .qos_class = "LSR", .has_status_cpuset = true };
	char held_list[CPULIST_MAX];
	struct policy_decision d;
	struct policy_request r;
	struct topology *t;
	struct pod_meta m;
	struct policy *p;
	json_object *v;
	int rc;

	assert_int_equal(cpulist_parse(str(c, "system_qos_cpuset"), &cfg.system_qos_cpus), 0);
	cfg.be_numa_aware = json_object_object_get_ex(c, "be_cpu_manager", &v) &&
			    json_object_get_boolean(v);
	t = machine(c, &share, &be, &cfg.system_qos_cpus);
	assert_int_equal(policy_new(t, &cfg, &p), 0);
	cpumask_andnot(&held, &be, &share);
	cpumask_andnot(&held, &held, &cfg.system_qos_cpus);
	if (!cpumask_empty(&held)) {
		cpulist_format(&held, held_list, sizeof(held_list));
		lsr.status_cpuset = held_list;
		r = (struct policy_request){ .container_id = "lsr", .pod_uid = "lsr", .name = "lsr",
			.namespace_ = "ns", .qos = POD_QOS_GUARANTEED,
			.quota_us = (long)cpumask_weight(&held) * 100000, .period_us = 100000,
			.pod = &lsr };
		if (policy_admit(p, &r, &d) != 0)
			fail_msg("%s: the LSR pod on %s: %s", id, held_list, d.reason);
	}
	case_meta(c, &m);
	r = (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
		.namespace_ = "ns", .invalid = m.invalid, .invalid_why = m.error,
		.qos = strncmp(str(c, "cgroup_parent"), "besteffort/", 11) == 0 ?
		       POD_QOS_BESTEFFORT : POD_QOS_BURSTABLE,
		.quota_us = -1, .period_us = 100000, .pod = &m.pod };
	rc = policy_admit(p, &r, &d);
	if (strcmp(str(c, "expect"), "error") == 0) {
		if (rc == 0)
			fail_msg("%s: admitted, want an error", id);
		assert_int_equal(d.err, POLICY_ERR_INVALID_ANNOTATION);
	} else {
		char got[CPULIST_MAX];

		if (rc != 0)
			fail_msg("%s: %s", id, d.reason);
		assert_int_equal(cpulist_parse(str(c, "expect"), &want), 0);
		cpulist_format(&d.cpus, got, sizeof(got));
		if (!cpumask_equal(&want, &d.cpus))
			fail_msg("%s (%s): on %s, koordlet writes %s", id, str(c, "description"),
				 got, str(c, "expect"));
	}
	meta_release(&m);
	policy_free(p);
	free(t);
}

static void run_qos(json_object *c, const char *id)
{
	const char *want = str(c, "expect");
	struct pod_meta m;

	case_meta(c, &m);
	if (strcmp(m.pod.qos_class, strcmp(want, "none") == 0 ? "" : want) != 0)
		fail_msg("%s (%s): class \"%s\", want %s", id, str(c, "description"),
			 m.pod.qos_class, want);
	meta_release(&m);
}

static void test_fixture(void **state)
{
	char path[512], line[8192];
	unsigned ran = 0, skipped = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/koordlet-numa-cases.jsonl", tl_fixtures());
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f)) {
		json_object *c = json_tokener_parse(line), *v;
		const char *id;

		assert_non_null(c);
		id = str(c, "id");
		if (json_object_object_get_ex(c, "cpusetd", &v))
			skipped++;	/* not applicable: the reason is in the file */
		else if (strcmp(str(c, "kind"), "qos") == 0)
			run_qos(c, id), ran++;
		else
			run_cpuset(c, id), ran++;
		json_object_put(c);
	}
	fclose(f);
	assert_int_equal(ran, 15);
	assert_int_equal(skipped, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
