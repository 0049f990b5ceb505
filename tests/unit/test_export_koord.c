// SPDX-License-Identifier: Apache-2.0
/*
 * export_koord: the Koordinator NodeResourceTopology annotations built
 * from a hand-made topology (2 packages with sysfs ids 5 and 2, one NUMA
 * node each, SMT2, CPU 7 offline) and a few pods.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/testlib.h"
#include "user/export/export_koord.h"

/* CPUs 0-3 package 5 node 1, CPUs 4-7 package 2 node 0; cores {0,1},
 * {2,3}, {4,5}, {6,7}; CPU 7 offline. */
static struct topology *make_topo(void)
{
	struct topology *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->present = tl_mask("0-7");
	t->online = tl_mask("0-6");
	t->offline = tl_mask("7");
	t->nodes = tl_mask("0-1");
	t->node_cpus[1] = tl_mask("0-3");
	t->node_cpus[0] = tl_mask("4-7");
	for (int id = 0; id < 8; id++) {
		t->cpu[id] = (struct topo_cpu){ .core = id & ~1, .package = id < 4 ? 5 : 2,
						.die = 0, .node = id < 4 ? 1 : 0, .l3 = id < 4 ? 0 : 4 };
		t->core_cpus[id & ~1] = tl_mask(id < 4 ? (id < 2 ? "0-1" : "2-3") :
						(id < 6 ? "4-5" : "6-7"));
	}
	return t;
}

static const char *text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void expect_json(json_object *o, const char *want)
{
	assert_non_null(o);
	if (strcmp(text(o), want) != 0)
		fail_msg("got  %s\nwant %s", text(o), want);
	json_object_put(o);
}

static void test_cpu_topology_dense_sockets(void **state)
{
	struct topology *t = make_topo();

	(void)state;
	expect_json(export_koord_cpu_topology(t),
		    "{\"detail\":["
		    "{\"id\":0,\"core\":0,\"socket\":1,\"node\":1},"
		    "{\"id\":1,\"core\":0,\"socket\":1,\"node\":1},"
		    "{\"id\":2,\"core\":2,\"socket\":1,\"node\":1},"
		    "{\"id\":3,\"core\":2,\"socket\":1,\"node\":1},"
		    "{\"id\":4,\"core\":4,\"socket\":0,\"node\":0},"
		    "{\"id\":5,\"core\":4,\"socket\":0,\"node\":0},"
		    "{\"id\":6,\"core\":6,\"socket\":0,\"node\":0}]}");
	free(t);
}

static void test_pod_allocs(void **state)
{
	struct export_koord_pod pods[] = {
		{ "prod", "db-0", "u-2", tl_mask("2-3"), false },
		{ "prod", "empty", "u-3", { { 0 } }, false },
		{ "kube-system", "etcd", "u-1", tl_mask("6"), true },
	};

	(void)state;
	export_koord_sort(pods, 3);
	expect_json(export_koord_pod_allocs(pods, 3),
		    "[{\"namespace\":\"kube-system\",\"name\":\"etcd\",\"uid\":\"u-1\","
		    "\"cpuset\":\"6\",\"managedByKubelet\":true},"
		    "{\"namespace\":\"prod\",\"name\":\"db-0\",\"uid\":\"u-2\",\"cpuset\":\"2-3\"}]");
	expect_json(export_koord_pod_allocs(NULL, 0), "[]");
}

static void test_shared_pools_by_socket_node(void **state)
{
	struct topology *t = make_topo();
	struct cpumask pool = tl_mask("0-1,4-6");
	struct cpumask one = tl_mask("1");

	(void)state;
	expect_json(export_koord_shared_pools(t, &pool),
		    "[{\"socket\":0,\"node\":0,\"cpuset\":\"4-6\"},"
		    "{\"socket\":1,\"node\":1,\"cpuset\":\"0-1\"}]");
	expect_json(export_koord_shared_pools(t, &one),
		    "[{\"socket\":1,\"node\":1,\"cpuset\":\"1\"}]");
	free(t);
}

/* The file: three annotations whose values are JSON texts. */
static void test_whole_file(void **state)
{
	struct topology *t = make_topo();
	struct cpumask pool = tl_mask("0-1");
	struct export_koord_pod pod = { "ns", "p\"q", "u", tl_mask("2"), false };
	json_object *o = export_koord_json(t, &pod, 1, &(struct export_koord_pools){
						   .shared = pool, .be = &pool }), *v, *inner;

	(void)state;
	assert_non_null(o);
	/* the BE pool is the shared pool: no fourth annotation */
	assert_int_equal(json_object_object_length(o), 3);
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_POD_CPU_ALLOCS, &v));
	assert_true(json_object_is_type(v, json_type_string));
	/* an untrusted name survives the round trip through the string */
	inner = json_tokener_parse(json_object_get_string(v));
	assert_non_null(inner);
	assert_string_equal(json_object_get_string(json_object_object_get(
				json_object_array_get_idx(inner, 0), "name")), "p\"q");
	json_object_put(inner);
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_CPU_SHARED_POOLS, &v));
	assert_string_equal(json_object_get_string(v), "[{\"socket\":1,\"node\":1,\"cpuset\":\"0-1\"}]");
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_CPU_TOPOLOGY, &v));
	assert_non_null(strstr(json_object_get_string(v), "{\"detail\":[{\"id\":0,"));
	json_object_put(o);
	free(t);
}

/* A BE pool that differs (LSR CPUs in it, say) is published beside the
 * shared one, in the same CPUSharedPool shape; NULL means none. So are
 * the SYSTEM QoS CPUs, when set. */
static void test_be_pools(void **state)
{
	struct topology *t = make_topo();
	struct cpumask pool = tl_mask("0"), be = tl_mask("0-1");
	struct export_koord_pod pod = { "ns", "p", "u", tl_mask("2"), false };
	struct cpumask sys = tl_mask("1");
	json_object *o = export_koord_json(t, &pod, 1, &(struct export_koord_pools){
						   .shared = pool, .be = &be }), *v;

	(void)state;
	assert_non_null(o);
	assert_int_equal(json_object_object_length(o), 4);
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_BE_CPU_SHARED_POOLS, &v));
	assert_string_equal(json_object_get_string(v), "[{\"socket\":1,\"node\":1,\"cpuset\":\"0-1\"}]");
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_CPU_SHARED_POOLS, &v));
	assert_string_equal(json_object_get_string(v), "[{\"socket\":1,\"node\":1,\"cpuset\":\"0\"}]");
	json_object_put(o);
	o = export_koord_json(t, &pod, 1, &(struct export_koord_pools){ .shared = pool });
	assert_int_equal(json_object_object_length(o), 3);
	json_object_put(o);
	/* SYSTEM QoS CPUs: SystemQOSResource, only when set */
	o = export_koord_json(t, &pod, 1, &(struct export_koord_pools){
				      .shared = pool, .system = &sys });
	assert_int_equal(json_object_object_length(o), 4);
	assert_true(json_object_object_get_ex(o, EXPORT_KOORD_SYSTEM_QOS_RESOURCE, &v));
	assert_string_equal(json_object_get_string(v), "{\"cpuset\":\"1\"}");
	json_object_put(o);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_topology_dense_sockets),
		cmocka_unit_test(test_pod_allocs),
		cmocka_unit_test(test_shared_pools_by_socket_node),
		cmocka_unit_test(test_whole_file),
		cmocka_unit_test(test_be_pools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
