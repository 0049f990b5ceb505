// SPDX-License-Identifier: Apache-2.0
/*
 * The allocation policies on a real machine this host is not: the hwloc
 * snapshot 64amd64-4s2n4ca2co (test_policy_topo.h). Covers what the
 * 2-CPU integration host cannot show: bind and exclusive policies, NUMA
 * strategies, Topology Manager alignment and scope, isolated and reserved
 * CPUs, kubelet takeover, kubelet-compatible mode, and stability. In-place
 * resize: test_policy_topo_resize.c; full-pcpus-only on SMT4 / SMT8
 * machines: test_policy_topo_smt.c.
 */
#include "test_policy_topo.h"

/* --- bind policies --- */

static void test_bind_policies(void **state)
{
	struct policy_config c = base_cfg();
	struct pod_policy_ann spread = { .bind_policy = "SpreadByPCPUs" };
	struct policy *p = mk(&c);
	struct policy_decision d;
	unsigned cores, whole;

	(void)state;
	d = admit(p, integer("full", "p1", 4, NULL), 0);	/* FullPCPUs default */
	cores_of(&d.cpus, &cores, &whole);
	assert_int_equal(cores, 2);
	assert_int_equal(whole, 2);
	assert_int_equal(nodes_of(&d.cpus), 1);
	d = admit(p, integer("spread", "p2", 4, &spread), 0);
	cores_of(&d.cpus, &cores, &whole);
	assert_int_equal(cores, 4);				/* one CPU per core */
	assert_int_equal(whole, 0);
	policy_free(p);

	c.alloc.bind = KOORD_BIND_FULL_PCPUS_ONLY;
	p = mk(&c);
	d = admit(p, integer("odd", "p3", 3, NULL), -EDOM);
	assert_int_equal(d.err, POLICY_ERR_SMT_ALIGNMENT);
	assert_int_equal(d.kind, CPUSETD_KIND_SHARED);
	d = admit(p, integer("even", "p4", 4, &spread), 0);	/* node policy wins */
	cores_of(&d.cpus, &cores, &whole);
	assert_int_equal(whole, 2);
	policy_free(p);
}

/* --- exclusive policies --- */

static void test_exclusive_policies(void **state)
{
	struct pod_policy_ann pcpu = { .bind_policy = "SpreadByPCPUs",
				       .exclusive_policy = "PCPULevel" };
	struct pod_policy_ann numa = { .exclusive_policy = "NUMANodeLevel" };
	struct policy_config c = base_cfg();
	struct policy *p = mk(&c);
	struct policy_decision a, b;
	struct cpumask both, na, nb;
	unsigned cores, whole;

	(void)state;
	/* Two 1-CPU PCPULevel containers never share a physical core. */
	a = admit(p, integer("a", "pa", 1, &pcpu), 0);
	b = admit(p, integer("b", "pb", 1, &pcpu), 0);
	cpumask_or(&both, &a.cpus, &b.cpus);
	cores_of(&both, &cores, &whole);
	assert_int_equal(cores, 2);
	/* Two NUMANodeLevel containers never share a NUMA node. */
	a = admit(p, integer("c", "pc", 2, &numa), 0);
	b = admit(p, integer("d", "pd", 2, &numa), 0);
	assert_int_equal(topo_nodes_of(topo, &a.cpus, &na), 0);
	assert_int_equal(topo_nodes_of(topo, &b.cpus, &nb), 0);
	assert_false(cpumask_intersects(&na, &nb));
	policy_free(p);
}

/* --- NUMA allocate strategies --- */

static int node_of_first(const struct cpumask *m)
{
	return topo->cpu[cpumask_next(m, 0)].node;
}

static void test_numa_strategies(void **state)
{
	struct policy_config c = base_cfg();
	struct policy *p = mk(&c);
	struct policy_decision a, b;

	(void)state;
	a = admit(p, integer("a", "pa", 2, NULL), 0);
	b = admit(p, integer("b", "pb", 2, NULL), 0);
	assert_int_equal(node_of_first(&a.cpus), node_of_first(&b.cpus));	/* bin-pack */
	policy_free(p);

	c.alloc.numa = KOORD_NUMA_LEAST_ALLOCATED;
	p = mk(&c);
	a = admit(p, integer("a", "pa", 2, NULL), 0);
	b = admit(p, integer("b", "pb", 2, NULL), 0);
	assert_int_not_equal(node_of_first(&a.cpus), node_of_first(&b.cpus));
	policy_free(p);

	c.alloc.numa = KOORD_NUMA_DISTRIBUTE_EVENLY;
	p = mk(&c);
	a = admit(p, integer("a", "pa", 16, NULL), 0);
	for (unsigned n = 0, prev = 0; n < 8; n++) {
		struct cpumask in;

		cpumask_and(&in, &topo->node_cpus[n], &a.cpus);
		if (cpumask_empty(&in))
			continue;
		if (prev)	/* every node used holds the same share */
			assert_int_equal(cpumask_weight(&in), prev);
		prev = cpumask_weight(&in);
	}
	assert_true(nodes_of(&a.cpus) >= 2);
	policy_free(p);
}

/* --- Topology Manager alignment --- */

static void test_alignment(void **state)
{
	struct policy_config c = base_cfg();
	struct policy *p;
	struct policy_decision d;

	(void)state;
	c.alloc.align = NUMA_POLICY_SINGLE_NUMA_NODE;
	p = mk(&c);
	d = admit(p, integer("eight", "p1", 8, NULL), 0);
	assert_int_equal(nodes_of(&d.cpus), 1);
	assert_int_equal(cpumask_weight(&d.mems), 1);
	d = admit(p, integer("ten", "p2", 10, NULL), -EXDEV);
	assert_int_equal(d.err, POLICY_ERR_TOPOLOGY_AFFINITY);
	assert_non_null(strstr(d.reason, "topology affinity error"));
	policy_free(p);

	/* Restricted: a 10-CPU container needs 2 nodes on the empty machine,
	 * so a 2-node mask is preferred and admitted. */
	c.alloc.align = NUMA_POLICY_RESTRICTED;
	p = mk(&c);
	d = admit(p, integer("ten", "p2", 10, NULL), 0);
	assert_int_equal(nodes_of(&d.cpus), 2);
	/* Fragment the other nodes (one CPU taken on each), then ask for 8:
	 * one node is preferred, none has 8 free: refused. */
	for (unsigned n = 2; n < 8; n++) {
		char cores[8], id[8];
		struct policy_request r = { .container_id = id, .name = id, .pod_uid = id,
					    .cores_ids = cores, .qos = POD_QOS_BURSTABLE,
					    .quota_us = -1 };

		snprintf(id, sizeof(id), "an%u", n);
		snprintf(cores, sizeof(cores), "%u", 8 * n + 7);
		admit(p, r, 0);
	}
	d = admit(p, integer("eight", "p3", 8, NULL), -EXDEV);
	assert_int_equal(d.err, POLICY_ERR_TOPOLOGY_AFFINITY);
	policy_free(p);

	/* BestEffort admits the same request across nodes. */
	c.alloc.align = NUMA_POLICY_BEST_EFFORT;
	p = mk(&c);
	d = admit(p, integer("six", "p4", 6, NULL), 0);
	assert_int_equal(nodes_of(&d.cpus), 1);
	d = admit(p, integer("five", "p5", 5, NULL), 0);	/* node 0 has 2 left */
	assert_int_equal(nodes_of(&d.cpus), 1);
	policy_free(p);
}

/* Pod scope: the pod's whole request (pod cgroup limit) picks the mask,
 * its containers share it. */
static void pod_scope_run(bool pod_scope, int *ret_node1, int *ret_node2)
{
	struct policy_config c = base_cfg();
	struct policy_request r1 = integer("c1", "podA", 2, NULL), r2 = integer("c2", "podA", 6, NULL);
	struct policy_request fill = { .container_id = "fill", .name = "fill", .pod_uid = "fill",
				       .cores_ids = "0-5", .qos = POD_QOS_BURSTABLE,
				       .quota_us = -1 };
	struct policy_decision d1, d2;
	struct policy *p;

	c.alloc.align = NUMA_POLICY_RESTRICTED;
	c.alloc.pod_scope = pod_scope;
	p = mk(&c);
	admit(p, fill, 0);			/* node 0 keeps 2 free CPUs */
	r1.pod_cpus = r2.pod_cpus = 8;
	d1 = admit(p, r1, 0);
	d2 = admit(p, r2, 0);
	*ret_node1 = node_of_first(&d1.cpus);
	*ret_node2 = node_of_first(&d2.cpus);
	assert_int_equal(nodes_of(&d1.cpus), 1);
	assert_int_equal(nodes_of(&d2.cpus), 1);
	/* The mask lives while the pod has exclusive containers. */
	assert_true(policy_release(p, "c1"));
	assert_true(policy_release(p, "c2"));
	d1 = admit(p, integer("c3", "podA", 2, NULL), 0);
	assert_int_equal(node_of_first(&d1.cpus), 0);	/* aligned afresh */
	policy_free(p);
}

/* Pod scope: the pod's whole request (its pod cgroup's limit, 8 CPUs)
 * picks one node for all its containers; container scope aligns each on
 * its own, so the 2-CPU one lands in node 0's leftovers. */
static void test_pod_scope(void **state)
{
	int n1, n2;

	(void)state;
	pod_scope_run(true, &n1, &n2);
	assert_int_equal(n1, 1);
	assert_int_equal(n2, 1);
	pod_scope_run(false, &n1, &n2);
	assert_int_equal(n1, 0);
	assert_int_equal(n2, 1);
}

/* Pod scope holds the pod's room: another pod's container admitted
 * between the pod's first and second container cannot take the CPUs the
 * second one needs in the pod's mask, though it could otherwise. */
static void test_pod_scope_room(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request a1 = integer("a1", "podA", 2, NULL), a2 = integer("a2", "podA", 6, NULL);
	struct policy_request b = integer("b", "podB", 6, NULL);
	struct policy_decision da1, da2, db;
	struct cpumask nodes;
	struct policy *p;

	(void)state;
	c.alloc.align = NUMA_POLICY_BEST_EFFORT;
	c.alloc.pod_scope = true;
	p = mk(&c);
	a1.pod_cpus = a2.pod_cpus = 8;
	da1 = admit(p, a1, 0);
	/* Bin-packing would put b on podA's node: the room keeps it out. */
	db = admit(p, b, 0);
	assert_int_not_equal(node_of_first(&db.cpus), node_of_first(&da1.cpus));
	da2 = admit(p, a2, 0);
	assert_int_equal(topo_nodes_of(topo, &da2.cpus, &nodes), 0);
	assert_int_equal(cpumask_weight(&nodes), 1);
	assert_int_equal(node_of_first(&da2.cpus), node_of_first(&da1.cpus));
	/* Once the pod is whole, nothing is held: a 2-CPU container of a new
	 * pod may bin-pack next to b. */
	db = admit(p, integer("c", "podC", 2, NULL), 0);
	assert_int_not_equal(node_of_first(&db.cpus), node_of_first(&da1.cpus));
	/* The room goes with the pod: podA gone, its node is free again. */
	assert_true(policy_release(p, "a1"));
	assert_true(policy_release(p, "a2"));
	db = admit(p, integer("d", "podD", 8, NULL), 0);
	assert_int_equal(node_of_first(&db.cpus), node_of_first(&da1.cpus));
	policy_free(p);
}

/* --- pools, isolated and reserved CPUs --- */

static void test_isolated_and_reserved(void **state)
{
	struct pod_policy_ann opt_in = { .prefer_isolated = "true" };
	struct policy_config c = base_cfg();
	struct cpumask saved = topo->isolated, pool;
	struct policy_decision d;
	struct policy *p;

	(void)state;
	cpulist_parse("56-63", &topo->isolated);	/* as if booted isolcpus=56-63 */
	cpulist_parse("0-1", &c.reserved_cpus);
	p = mk(&c);
	policy_shared_pool(p, &pool);
	tl_assert_mask(&pool, "0-55");			/* reserved stay, isolated never */
	d = admit(p, integer("plain", "p1", 2, NULL), 0);
	assert_false(cpumask_intersects(&d.cpus, &topo->isolated));
	assert_false(cpumask_intersects(&d.cpus, &c.reserved_cpus));
	d = admit(p, integer("iso", "p2", 4, &opt_in), 0);
	assert_true(cpumask_subset(&d.cpus, &topo->isolated));
	d = admit(p, integer("iso2", "p3", 6, &opt_in), 0);	/* 4 isolated left: not mixed */
	assert_false(cpumask_intersects(&d.cpus, &topo->isolated));
	policy_free(p);

	c.prefer_isolated = true;				/* node-wide opt-in */
	p = mk(&c);
	d = admit(p, integer("iso", "p2", 2, NULL), 0);
	assert_true(cpumask_subset(&d.cpus, &topo->isolated));
	policy_free(p);
	topo->isolated = saved;
}

static void test_be_pool_and_lsr(void **state)
{
	struct pod_policy_ann lsr = { .qos_class = "LSR" }, be = { .qos_class = "BE" };
	struct policy_config c = base_cfg();
	struct policy_request ber = { .container_id = "be", .name = "be", .pod_uid = "pbe",
				      .qos = POD_QOS_BESTEFFORT, .quota_us = -1, .pod = &be };
	struct policy_decision a, b, e;
	struct cpumask shared, bep;
	struct policy *p;

	(void)state;
	p = mk(&c);
	a = admit(p, integer("lse", "p1", 8, NULL), 0);		/* integer = LSE */
	b = admit(p, integer("lsr", "p2", 8, &lsr), 0);
	e = admit(p, ber, 0);
	assert_int_equal(e.kind, CPUSETD_KIND_BE);
	policy_shared_pool(p, &shared);
	policy_be_pool(p, &bep);
	assert_false(cpumask_intersects(&shared, &a.cpus));
	assert_false(cpumask_intersects(&shared, &b.cpus));
	assert_false(cpumask_intersects(&bep, &a.cpus));	/* LSE: never shared */
	assert_true(cpumask_subset(&b.cpus, &bep));		/* LSR: BE may use */
	assert_true(cpumask_equal(&e.cpus, &bep));
	assert_int_equal(policy_lookup(p, "lsr")->qos, POLICY_QOS_LSR);
	policy_free(p);

	c.integer_qos = POLICY_QOS_LSR;				/* config: integer = LSR */
	p = mk(&c);
	a = admit(p, integer("int", "p1", 8, NULL), 0);
	policy_be_pool(p, &bep);
	assert_true(cpumask_subset(&a.cpus, &bep));
	policy_free(p);
}

/* --- scheduler-made allocations (resource-status) --- */

static void test_scheduled(void **state)
{
	struct pod_policy_ann s1 = { .has_status_cpuset = true, .status_cpuset = "10-13" };
	struct pod_policy_ann s2 = { .has_status_cpuset = true, .status_cpuset = "13-14" };
	struct pod_policy_ann s3 = { .has_status_cpuset = true, .status_cpuset = "20" };
	struct pod_policy_ann s4 = { .has_status_cpuset = true, .status_cpuset = "60-70" };
	struct pod_policy_ann s5 = { .has_status_cpuset = true, .status_cpuset = "1-" };
	struct policy_request pin = { .container_id = "pin", .name = "pin", .pod_uid = "pin",
				      .cores_ids = "20", .qos = POD_QOS_BURSTABLE, .quota_us = -1 };
	struct policy_config c = base_cfg();
	struct policy *p = mk(&c);
	struct policy_decision d;
	struct policy_request r;

	(void)state;
	r = integer("s1", "p1", 4, &s1);
	d = admit(p, r, 0);
	tl_assert_mask(&d.cpus, "10-13");		/* verbatim, not re-picked */
	tl_assert_mask(&d.mems, "1");
	assert_int_equal(d.kind, CPUSETD_KIND_INTEGER);
	r = integer("s2", "p2", 2, &s2);
	d = admit(p, r, -EBUSY);
	assert_int_equal(d.err, POLICY_ERR_CPU_EXCLUSIVE);
	assert_non_null(strstr(d.reason, "CPU 13 is exclusively owned by s1"));
	admit(p, pin, 0);
	d = admit(p, integer("s3", "p3", 1, &s3), -EBUSY);
	assert_non_null(strstr(d.reason, "pinned by a weka.io/cores-ids pod"));
	d = admit(p, integer("s4", "p4", 11, &s4), -ENXIO);
	assert_int_equal(d.err, POLICY_ERR_CPU_OFFLINE);
	d = admit(p, integer("s5", "p5", 1, &s5), -EINVAL);
	assert_int_equal(d.err, POLICY_ERR_INVALID_ANNOTATION);
	/* An integer container never gets scheduled CPUs. */
	d = admit(p, integer("i", "pi", 8, NULL), 0);
	assert_false(cpumask_intersects(&d.cpus, &policy_lookup(p, "s1")->cpus));
	policy_free(p);
}

/* --- kubelet takeover and kubelet-compatible mode --- */

static void test_kubelet_takeover(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request reqs[2] = { integer("k1", "pk", 2, NULL), integer("k2", "pk2", 2, NULL) };
	struct cpumask cur[2], kcpus, bad;
	struct policy_decision d[2];
	uint64_t order[2] = { 1, 2 };
	struct policy *p = mk(&c);

	(void)state;
	cpulist_parse("40-41", &kcpus);
	cpulist_parse("0-1", &bad);			/* reserved below */
	cpulist_parse("0-63", &cur[0]);			/* the runtime's set */
	cpulist_parse("0-63", &cur[1]);
	reqs[0].kubelet_cpus = &kcpus;
	reqs[1].kubelet_cpus = &bad;
	policy_free(p);
	cpulist_parse("0-1", &c.reserved_cpus);
	p = mk(&c);
	assert_int_equal(policy_recover(p, reqs, cur, order, 2, d), 0);
	tl_assert_mask(&d[0].cpus, "40-41");		/* kubelet's choice kept */
	assert_false(cpumask_intersects(&d[1].cpus, &bad));	/* invalid: allocated afresh */
	assert_int_equal(cpumask_weight(&d[1].cpus), 2);
	policy_free(p);
}

static void test_kubelet_compat(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_decision d;
	struct policy *p;

	(void)state;
	c.alloc.kubelet_compat = true;
	p = mk(&c);
	/* kubelet packs: a whole NUMA node's 8 CPUs, then cores. */
	d = admit(p, integer("a", "pa", 8, NULL), 0);
	tl_assert_mask(&d.cpus, "0-7");
	d = admit(p, integer("b", "pb", 2, NULL), 0);
	tl_assert_mask(&d.cpus, "8-9");
	policy_free(p);

	c.alloc.kubelet.full_pcpus_only = true;
	p = mk(&c);
	d = admit(p, integer("odd", "po", 3, NULL), -EDOM);
	assert_int_equal(d.err, POLICY_ERR_SMT_ALIGNMENT);
	policy_free(p);
}

/* --- the rule each container was classified by (status, explain) --- */

static void test_rules(void **state)
{
	static const struct pod_policy_ann be = { .qos_class = "BE" }, ls = { .qos_class = "LS" },
		lse = { .qos_class = "LSE" }, st = { .has_status_cpuset = true, .status_cpuset = "9" };
	struct policy_config c = base_cfg();
	struct {
		struct policy_request req;
		const char *rule;
	} cases[] = {
		{ { .container_id = "sb", .sandbox = true, .quota_us = -1 }, "sandbox" },
		{ { .container_id = "an", .cores_ids = "3", .quota_us = -1 }, "cores_ids" },
		{ { .container_id = "st", .pod = &st, .quota_us = -1 }, "resource_status" },
		{ { .container_id = "be", .pod = &be, .quota_us = -1 }, "qos_class" },
		{ { .container_id = "ls", .pod = &ls, .quota_us = -1 }, "qos_class" },
		{ integer("in", "pi", 2, NULL), "integer" },
		{ { .container_id = "bu", .qos = POD_QOS_BURSTABLE, .quota_us = -1 }, "default_shared" },
		{ { .container_id = "bp", .qos = POD_QOS_BESTEFFORT, .quota_us = -1 }, "besteffort_pool" },
		{ { .container_id = "bad", .pod = &lse, .quota_us = -1 }, "invalid_annotation" },
	};
	struct policy_decision d;
	struct policy *p;

	(void)state;
	c.besteffort_be_pool = true;
	p = mk(&c);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		policy_admit(p, &cases[i].req, &d);
		assert_string_equal(policy_rule_name(policy_lookup(p, cases[i].req.container_id)->rule),
				    cases[i].rule);
	}
	policy_free(p);
}

/* --- stability: the same containers in any arrival order --- */

static void test_stable_under_arrival_order(void **state)
{
	struct pod_policy_ann spread = { .bind_policy = "SpreadByPCPUs" };
	struct policy_config c = base_cfg();
	struct policy_request reqs[6] = {
		integer("a", "pa", 3, NULL), integer("b", "pb", 8, &spread),
		integer("c", "pc", 5, NULL), integer("d", "pd", 1, NULL),
		integer("e", "pe", 12, NULL), integer("f", "pf", 2, &spread),
	};
	struct policy_decision want[6], got[6];
	uint64_t order[6] = { 10, 20, 30, 40, 50, 60 };
	static const int perms[3][6] = {
		{ 5, 4, 3, 2, 1, 0 }, { 2, 0, 4, 1, 5, 3 }, { 1, 3, 5, 0, 2, 4 },
	};
	struct policy *p;

	(void)state;
	c.alloc.align = NUMA_POLICY_BEST_EFFORT;
	p = mk(&c);
	assert_int_equal(policy_recover(p, reqs, NULL, order, 6, want), 0);
	for (int k = 0; k < 3; k++) {
		struct policy_request r[6];
		uint64_t o[6];

		for (int i = 0; i < 6; i++) {
			r[i] = reqs[perms[k][i]];
			o[i] = order[perms[k][i]];
		}
		policy_reset(p);
		assert_int_equal(policy_recover(p, r, NULL, o, 6, got), 0);
		for (int i = 0; i < 6; i++)
			assert_true(cpumask_equal(&got[i].cpus, &want[perms[k][i]].cpus));
	}
	/* And a fresh policy with the same history answers the same. */
	policy_reset(p);
	for (int i = 0; i < 6; i++) {
		struct policy_decision d = admit(p, reqs[i], 0);

		assert_true(cpumask_equal(&d.cpus, &want[i].cpus));
	}
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_policies),
		cmocka_unit_test(test_exclusive_policies),
		cmocka_unit_test(test_numa_strategies),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_pod_scope),
		cmocka_unit_test(test_pod_scope_room),
		cmocka_unit_test(test_isolated_and_reserved),
		cmocka_unit_test(test_be_pool_and_lsr),
		cmocka_unit_test(test_scheduled),
		cmocka_unit_test(test_kubelet_takeover),
		cmocka_unit_test(test_kubelet_compat),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_stable_under_arrival_order),
	};

	return cmocka_run_group_tests_name("policy on 64amd64-4s2n4ca2co", tests, setup, teardown);
}
