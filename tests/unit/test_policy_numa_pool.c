// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's NUMA-aware shared pools (the Koordinator proposal,
 * CPUBindPolicyConstrainedBurst; koordlet runtimehooks/hooks/cpuset
 * rule.go): a pod whose resource-status names NUMA nodes in
 * numaNodeResources runs on its pool's part on those nodes, with its
 * memory there, follows the pool, and is never widened: an empty part is
 * an admission error, and an exclusive admission that would empty a part
 * in use is refused.
 *
 * Machine: the hwloc snapshot 64amd64-4s2n4ca2co (tests/fixtures/sysfs):
 * 8 NUMA nodes of 8 CPUs, node k = CPUs 8k..8k+7, SMT pairs n,n+1.
 * koordlet's own cases (rule_test.go Test_cpusetRule_getContainerCPUSet
 * at koordinator-sh/koordinator 0b38f960) are transcribed in
 * tests/fixtures/koordlet-cpuset-cases.jsonl (test_koordlet_fixture: the
 * annotations through meta's parser, on a machine whose NUMA nodes are
 * the cases' share pools) and written out in test_koordlet_cases on the
 * snapshot.
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

static char tmpdir[] = "/tmp/test_policy_numa_pool.XXXXXX";
static struct topology *topo;

static struct policy *mk_policy_sys(bool be_numa_aware, const char *ns_allowed,
				     const char *system_qos)
{
	struct policy_config cfg = { .min_shared_cpus = 1, .on_error = POLICY_ON_ERROR_REJECT,
				     .integer_qos = POLICY_QOS_LSE,
				     .be_numa_aware = be_numa_aware,
				     .cores_ids_namespaces = "*" };
	struct policy *p;

	snprintf(cfg.resource_status_namespaces, sizeof(cfg.resource_status_namespaces), "%s",
		 ns_allowed);
	assert_int_equal(cpulist_parse(system_qos, &cfg.system_qos_cpus), 0);
	assert_int_equal(policy_new(topo, &cfg, &p), 0);
	return p;
}

static struct policy *mk_policy(bool be_numa_aware, const char *ns_allowed)
{
	return mk_policy_sys(be_numa_aware, ns_allowed, "");
}

/* A pod annotation set naming NUMA nodes (a cpulist of node ids). */
static struct pod_policy_ann on_nodes(const char *qos, const char *nodes)
{
	struct pod_policy_ann a = { 0 };

	snprintf(a.qos_class, sizeof(a.qos_class), "%s", qos);
	if (nodes) {
		assert_int_equal(cpulist_parse(nodes, &a.status_numa), 0);
		a.has_status_numa = true;
	}
	return a;
}

static struct policy_request burstable(const char *id, const struct pod_policy_ann *a)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.namespace_ = "team", .qos = POD_QOS_BURSTABLE,
					.quota_us = 50000, .period_us = 100000, .pod = a };
}

static struct policy_request integer(const char *id, int n)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.namespace_ = "team", .qos = POD_QOS_GUARANTEED,
					.quota_us = n * 100000, .period_us = 100000 };
}

static struct policy_request annotated(const char *id, const char *cores)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.namespace_ = "team", .qos = POD_QOS_BURSTABLE,
					.cores_ids = cores, .quota_us = -1, .period_us = 100000 };
}

/* What the container runs on now (its pool part follows the pool). */
static void assert_now(const struct policy *p, const char *id, const char *cpus,
		       const char *mems)
{
	struct policy_decision d;

	assert_int_equal(policy_decision_get(p, id, &d), 0);
	tl_assert_mask(&d.cpus, cpus);
	tl_assert_mask(&d.mems, mems);
}

/* koordlet's rule cases, as cpusetd sees them: the node's share pools are
 * the shared pool on each node (node.koordinator.sh/cpu-shared-pools). */
static void test_koordlet_cases(void **state)
{
	struct pod_policy_ann n0 = on_nodes("", "0"), n01 = on_nodes("LS", "0-1"),
			      ls = on_nodes("LS", NULL), none = on_nodes("", NULL);
	struct policy_request r;
	struct policy_decision d;
	struct policy *p = mk_policy(true, "*");

	(void)state;
	/* "get cpuset from annotation share pool": node 0 -> node 0's share
	 * (with memory there: mems are written, koordlet leaves them). */
	r = burstable("c1", &n0);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	tl_assert_mask(&d.cpus, "0-7");
	tl_assert_mask(&d.mems, "0");
	tl_assert_mask(&d.pool_nodes, "0");
	/* two nodes: the join of their shares */
	r = burstable("c2", &n01);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "0-15");
	tl_assert_mask(&d.mems, "0-1");
	/* "get all share pools for ls pod" and "... origin burstable pod
	 * under none policy": the whole pool, mems left alone. */
	r = burstable("c3", &ls);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "0-63");
	assert_true(cpumask_empty(&d.mems));
	assert_true(cpumask_empty(&d.pool_nodes));
	r = burstable("c4", &none);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "0-63");
	assert_true(cpumask_empty(&d.mems));
	policy_free(p);
}

/* The part follows the pool; an exclusive admission may not empty it. */
static void test_follows_and_protects(void **state)
{
	struct pod_policy_ann n1 = on_nodes("LS", "1");
	struct policy_request r = burstable("web", &n1), i;
	struct policy_decision d;
	struct policy *p = mk_policy(true, "*");

	(void)state;
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "8-15");
	/* An integer pod takes 6 CPUs; the allocator packs node 0 first,
	 * so an annotated pod pins node 1's CPUs 8-11 instead. */
	i = annotated("pin", "8-11");
	assert_int_equal(policy_admit(p, &i, &d), 0);
	assert_true(d.pools_changed);
	assert_now(p, "web", "12-15", "1");
	/* Taking the rest of node 1 would leave "web" nowhere: refused. */
	i = annotated("pin2", "12-15");
	assert_int_equal(policy_admit(p, &i, &d), -ENOSPC);
	assert_int_equal(d.err, POLICY_ERR_SHARED_POOL_EMPTY);
	assert_non_null(strstr(d.reason, "NUMA node(s) 1"));
	assert_non_null(strstr(d.reason, "web"));
	assert_now(p, "web", "12-15", "1");	/* unchanged */
	/* Part of it is fine. */
	i = annotated("pin3", "12-13");
	assert_int_equal(policy_admit(p, &i, &d), 0);
	assert_now(p, "web", "14-15", "1");
	/* An integer pod goes to another node rather than be refused for
	 * emptying the part: MostAllocated would pick node 1 (the fullest)
	 * first, and the choice is made again without the part's last core. */
	i = integer("db2", 2);
	assert_int_equal(policy_admit(p, &i, &d), 0);
	assert_int_equal(d.kind, CPUSETD_KIND_INTEGER);
	assert_false(cpumask_intersects(&d.cpus, &topo->node_cpus[1]));
	assert_now(p, "web", "14-15", "1");
	/* A release widens it again. */
	assert_true(policy_release(p, "pin"));
	assert_true(policy_release(p, "pin3"));
	assert_now(p, "web", "8-15", "1");
	/* Integer containers elsewhere do not touch it. */
	i = integer("db", 8);
	assert_int_equal(policy_admit(p, &i, &d), 0);
	assert_false(cpumask_intersects(&d.cpus, &topo->node_cpus[1]));
	assert_now(p, "web", "8-15", "1");
	policy_free(p);
}

static void test_refusals(void **state)
{
	struct pod_policy_ann n9 = on_nodes("LS", "3,9"), n2 = on_nodes("", "2"),
			      bad = on_nodes("", NULL);
	struct policy_request r, i;
	struct policy_decision d;
	struct policy *p = mk_policy(true, "*"), *q;

	(void)state;
	/* A node this machine does not have (8 nodes: 0-7). */
	r = burstable("x", &n9);
	assert_int_equal(policy_admit(p, &r, &d), -EINVAL);
	assert_int_equal(d.err, POLICY_ERR_INVALID_ANNOTATION);
	assert_non_null(strstr(d.reason, "numaNodeResources names NUMA node(s) 9"));
	assert_true(d.reject);
	/* An empty part at admission: node 2 all pinned first. */
	i = annotated("pin", "16-23");
	assert_int_equal(policy_admit(p, &i, &d), 0);
	r = burstable("y", &n2);
	assert_int_equal(policy_admit(p, &r, &d), -ENOSPC);
	assert_int_equal(d.err, POLICY_ERR_SHARED_POOL_EMPTY);
	assert_non_null(strstr(d.reason, "no CPU of the shared pool is left on NUMA node(s) 2"));
	/* A malformed numaNodeResources (meta recorded it): invalid_annotation. */
	snprintf(bad.error, sizeof(bad.error), "%s", "scheduling.koordinator.sh/resource-status: "
		 "\"numaNodeResources\"[0].node is not an integer 0-1023");
	r = burstable("z", &bad);
	assert_int_equal(policy_admit(p, &r, &d), -EINVAL);
	assert_int_equal(d.err, POLICY_ERR_INVALID_ANNOTATION);
	policy_free(p);

	/* Outside resource_status_namespaces: not allowed (as the cpuset). */
	q = mk_policy(true, "koord-*");
	r = burstable("w", &n2);
	assert_int_equal(policy_admit(q, &r, &d), -EACCES);
	assert_int_equal(d.err, POLICY_ERR_ANNOTATION_NOT_ALLOWED);
	policy_free(q);
}

/* BE pods: the BE pool's part with be_numa_aware, the whole BE pool without. */
static void test_be(void **state)
{
	struct pod_policy_ann be3 = on_nodes("BE", "3");
	struct policy_request r = burstable("be", &be3), i = integer("lse", 2);
	struct policy_decision d;
	struct policy *p = mk_policy(true, "*"), *q = mk_policy(false, "*");

	(void)state;
	assert_int_equal(policy_admit(p, &r, &d), 0);
	assert_int_equal(d.kind, CPUSETD_KIND_BE);
	tl_assert_mask(&d.cpus, "24-31");
	tl_assert_mask(&d.mems, "3");
	assert_int_equal(policy_admit(q, &r, &d), 0);
	assert_int_equal(d.kind, CPUSETD_KIND_BE);
	tl_assert_mask(&d.cpus, "0-63");
	assert_true(cpumask_empty(&d.mems));
	/* An LSE container elsewhere leaves node 3's BE part alone. */
	assert_int_equal(policy_admit(p, &i, &d), 0);
	assert_now(p, "be", "24-31", "3");
	policy_free(p);
	policy_free(q);
}

/* The pod's sandbox goes where its containers go (koordlet sets the
 * sandbox by the same rule), and is never refused. */
static void test_sandbox(void **state)
{
	struct pod_policy_ann n4 = on_nodes("", "4");
	struct policy_request r = burstable("sb", &n4);
	struct policy_decision d;
	struct policy *p = mk_policy(true, "*");

	(void)state;
	r.sandbox = true;
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "32-39");
	tl_assert_mask(&d.mems, "4");
	policy_free(p);
}

/* SYSTEM QoS pods on system_qos_cpus (koordlet's system-qos-resource
 * rule): out of the shared pool, never exclusive nor in a fixed set; a
 * NUMA part comes first; unset, SYSTEM pods use the shared pool. */
static void test_system_qos(void **state)
{
	struct pod_policy_ann sys = on_nodes("SYSTEM", NULL), sys1 = on_nodes("SYSTEM", "1"),
			      ls = on_nodes("LS", NULL);
	struct policy_request r = burstable("agent", &sys), i;
	struct policy_decision d;
	struct cpumask pool;
	struct policy *p = mk_policy_sys(true, "*", "62-63"), *q = mk_policy(true, "*");

	(void)state;
	assert_int_equal(policy_admit(p, &r, &d), 0);
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	assert_true(d.system_pool);
	tl_assert_mask(&d.cpus, "62-63");
	assert_true(cpumask_empty(&d.mems));
	policy_shared_pool(p, &pool);
	tl_assert_mask(&pool, "0-61");
	/* its sandbox too */
	r = burstable("agent-sb", &sys);
	r.sandbox = true;
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "62-63");
	/* other pods: the shared pool without them */
	r = burstable("web", &ls);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	tl_assert_mask(&d.cpus, "0-61");
	/* never exclusive: 62 integer CPUs cannot be had (62-63 are not free) */
	i = integer("big", 62);
	assert_int_equal(policy_admit(p, &i, &d), -ENOSPC);
	/* nor in a fixed set */
	i = annotated("pin", "63");
	assert_int_equal(policy_admit(p, &i, &d), -EBUSY);
	assert_int_equal(d.err, POLICY_ERR_CPU_RESERVED);
	assert_non_null(strstr(d.reason, "system_qos_cpus"));
	/* a NUMA part comes first (koordlet's order) */
	r = burstable("agent1", &sys1);
	assert_int_equal(policy_admit(p, &r, &d), 0);
	assert_false(d.system_pool);
	tl_assert_mask(&d.cpus, "8-15");
	/* unset: SYSTEM pods share the pool */
	r = burstable("agent", &sys);
	assert_int_equal(policy_admit(q, &r, &d), 0);
	assert_false(d.system_pool);
	tl_assert_mask(&d.cpus, "0-63");
	policy_free(p);
	policy_free(q);
}

/* A machine of the case's share pools: node n holds the CPUs of the pools
 * on node n, each CPU a core of its own (heap; free()). */
static struct topology *pools_machine(json_object *pools)
{
	struct topology *t = calloc(1, sizeof(*t));
	struct cpumask m;
	int cpu;

	assert_non_null(t);
	for (size_t i = 0; i < json_object_array_length(pools); i++) {
		json_object *p = json_object_array_get_idx(pools, i), *v;
		int node;

		assert_true(json_object_object_get_ex(p, "node", &v));
		node = json_object_get_int(v);
		assert_true(json_object_object_get_ex(p, "cpuset", &v));
		assert_int_equal(cpulist_parse(json_object_get_string(v), &m), 0);
		cpumask_set(&t->nodes, (unsigned)node);
		cpumask_or(&t->node_cpus[node], &t->node_cpus[node], &m);
		cpumask_for_each(cpu, &m) {
			cpumask_set(&t->present, (unsigned)cpu);
			cpumask_set(&t->online, (unsigned)cpu);
			cpumask_set(&t->core_cpus[cpu], (unsigned)cpu);
			t->cpu[cpu] = (struct topo_cpu){ .core = cpu, .package = node, .node = node };
			t->n_cores++;
		}
	}
	t->n_packages = 1;
	t->threads_per_core = 1;
	return t;
}

/* The pod's labels and annotations as the runtime hands them over (the
 * Koordinator QoS class is a label there; cpusetd reads it from the pod's
 * annotations, as containerd's pod_annotations or NRI pass them). */
static void case_meta(json_object *c, struct pod_meta *m)
{
	struct meta_annotation a[16];
	size_t n = 0;
	static const char *const maps[] = { "pod_labels", "pod_annotations" };

	for (size_t k = 0; k < 2; k++) {
		json_object *o;

		assert_true(json_object_object_get_ex(c, maps[k], &o));
		json_object_object_foreach(o, key, val) {
			assert_true(n < 16);
			a[n++] = (struct meta_annotation){ key, strlen(key),
				json_object_get_string(val), strlen(json_object_get_string(val)) };
		}
	}
	assert_int_equal(meta_parse_annotations(a, n, m), 0);
}

static void test_koordlet_fixture(void **state)
{
	char path[512], line[4096];
	unsigned ran = 0, skipped = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/koordlet-cpuset-cases.jsonl", tl_fixtures());
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f)) {
		json_object *c = json_tokener_parse(line), *v;
		struct policy_config cfg = { .min_shared_cpus = 1, .be_numa_aware = true,
					     .cores_ids_namespaces = "*",
					     .resource_status_namespaces = "*" };
		struct policy_decision d;
		struct policy_request r;
		struct topology *t;
		struct pod_meta m;
		struct policy *p;
		const char *id, *want, *parent;
		int rc;

		assert_non_null(c);
		id = json_object_get_string(json_object_object_get(c, "id"));
		if (json_object_object_get_ex(c, "cpusetd", &v)) {	/* not applicable */
			skipped++;
			json_object_put(c);
			continue;
		}
		want = json_object_get_string(json_object_object_get(c, "expect"));
		parent = json_object_get_string(json_object_object_get(c, "cgroup_parent"));
		t = pools_machine(json_object_object_get(c, "share_pools"));
		assert_int_equal(policy_new(t, &cfg, &p), 0);
		case_meta(c, &m);
		r = (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
			.namespace_ = "ns", .invalid = m.invalid, .invalid_why = m.error,
			.qos = strncmp(parent, "besteffort/", 11) == 0 ? POD_QOS_BESTEFFORT :
			       POD_QOS_BURSTABLE, .quota_us = -1, .period_us = 100000, .pod = &m.pod };
		rc = policy_admit(p, &r, &d);
		if (strcmp(want, "error") == 0) {
			if (rc == 0)
				fail_msg("%s: admitted, want an error", id);
			assert_int_equal(d.err, POLICY_ERR_INVALID_ANNOTATION);
		} else {
			struct cpumask w;

			if (rc != 0)
				fail_msg("%s: %s", id, d.reason);
			assert_int_equal(cpulist_parse(want, &w), 0);
			if (!cpumask_equal(&w, &d.cpus))
				fail_msg("%s: not on %s", id, want);
		}
		ran++;
		meta_release(&m);
		policy_free(p);
		free(t);
		json_object_put(c);
	}
	fclose(f);
	assert_int_equal(ran, 3);
	assert_int_equal(skipped, 3);
}

static int setup(void **state)
{
	char root[1024];

	(void)state;
	if (!mkdtemp(tmpdir) || tl_extract_snapshot("64amd64-4s2n4ca2co", tmpdir) < 0)
		return -1;
	snprintf(root, sizeof(root), "%s/64amd64-4s2n4ca2co/sys", tmpdir);
	return topo_read(root, &topo) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX];

	(void)state;
	topo_free(topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_koordlet_cases),
		cmocka_unit_test(test_koordlet_fixture),
		cmocka_unit_test(test_follows_and_protects),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_be),
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_system_qos),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
