// SPDX-License-Identifier: Apache-2.0
/*
 * Fixed sets (issue 22, M1): what they may not take, their rooms and
 * their recovery.
 * Split from test_policy.c by job; helpers in test_policy.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_policy.h"

/* --- what a fixed set may not take (issue 22, M1) --- */

static const struct pod_policy_ann status_1_2 = { .has_status_cpuset = true,
						  .status_cpuset = (char *)"1-2" };

struct reserved_case {
	const char *name;
	const char *reserved;		/* reserved_cpus */
	struct policy_request req;
	int rc;
	enum policy_error err;
	const char *in_reason;
};

/* reserved_cpus (kubelet reservedSystemCPUs) are never in a fixed set,
 * new or found running: a CPU hotplug is no one's choice, a reserved
 * CPU is the node's (user/README.md "Security model"). */
static void test_fixed_set_reserved(void **state)
{
	const struct reserved_case cases[] = {
		{ "annotated on a reserved CPU", "1", annotated("a", "1"), -EBUSY,
		  POLICY_ERR_CPU_RESERVED,
		  "weka.io/cores-ids CPUs 1 are reserved for the system (reserved_cpus)" },
		{ "annotated partly reserved", "2-3", annotated("a", "0-2"), -EBUSY,
		  POLICY_ERR_CPU_RESERVED, "CPUs 2 are reserved" },
		{ "scheduled on a reserved CPU", "2", scheduled("s", &status_1_2), -EBUSY,
		  POLICY_ERR_CPU_RESERVED, "resource-status cpuset CPUs 2 are reserved" },
		{ "running annotated, CPU reserved since", "2", running(annotated("a", "1-2")),
		  -EBUSY, POLICY_ERR_CPU_RESERVED, "reserved_cpus" },
		{ "running scheduled, CPU reserved since", "1", running(scheduled("s", &status_1_2)),
		  -EBUSY, POLICY_ERR_CPU_RESERVED, "CPUs 1 are" },
		{ "annotated beside reserved CPUs", "0,3", annotated("a", "1-2"), 0, POLICY_OK, "" },
		{ "scheduled beside reserved CPUs", "0", scheduled("s", &status_1_2), 0, POLICY_OK,
		  "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct reserved_case *c = &cases[i];
		struct topology *t = mk_topo(1, 4, 1);
		struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
					     .resource_status_namespaces = "*" };
		struct policy_decision d;
		struct policy *p;
		int r;

		assert_int_equal(cpulist_parse(c->reserved, &cfg.reserved_cpus), 0);
		assert_int_equal(policy_new(t, &cfg, &p), 0);
		r = policy_admit(p, &c->req, &d);
		if (r != c->rc || d.err != c->err)
			fail_msg("%s: rc %d err %d (%s), want rc %d err %d", c->name, r, d.err,
				 d.reason, c->rc, c->err);
		if (!strstr(d.reason, c->in_reason))
			fail_msg("%s: reason \"%s\" lacks \"%s\"", c->name, d.reason, c->in_reason);
		if (r < 0) {
			assert_string_equal(policy_error_name(d.err), "cpu_reserved");
			assert_false(d.err_hotplug);	/* refused, never kept */
			assert_true(d.reject);
			assert_pool(p, "0-3");		/* the reserved CPU stays shared */
		}
		policy_free(p);
		topo_free(t);
	}
}

/*
 * Pod-scope rooms against fixed sets. 2 nodes x 4 CPUs (node 0 = 0-3),
 * BestEffort, pod scope: pod A (pod_cpus CPUs) places 1 CPU (0) and holds
 * a room in node 0 for the rest. Then a fixed set of another pod comes;
 * then A's next container (the rest of its CPUs). A scheduled set may not
 * take the room; an annotated one may, when the room fits elsewhere in
 * node 0; a set found running always may (the room holds what is left).
 */
struct room_case {
	const char *name;
	unsigned pod_cpus;		/* pod A's whole request */
	struct policy_request fixed;	/* the other pod's fixed set */
	int rc;				/* its admission */
	const char *in_reason;
	int rest_rc;			/* A's second container, pod_cpus - 1 CPUs, */
	const char *rest_within;	/* placed inside these CPUs */
};

static void test_fixed_set_rooms(void **state)
{
	static const struct pod_policy_ann status_3 = { .has_status_cpuset = true,
							.status_cpuset = (char *)"3" };
	static const struct pod_policy_ann status_5 = { .has_status_cpuset = true,
							.status_cpuset = (char *)"5" };
	const struct room_case cases[] = {
		{ "scheduled on the room", 4, scheduled("s", &status_3), -EBUSY,
		  "CPU 3 is held for the containers pod ns/A has still to place", 0, "0-3" },
		{ "scheduled beside the room", 3, scheduled("s", &status_5), 0, "", 0, "0-3" },
		{ "annotated on a room that can move", 3, annotated("x", "2"), 0, "", 0, "0-3" },
		{ "annotated on a room that cannot move", 4, annotated("x", "2"), -EBUSY,
		  "which would not fit elsewhere", 0, "0-3" },
		{ "annotated on two CPUs of a room that cannot move", 3, annotated("x", "1-2"),
		  -EBUSY, "CPU 1 is held", 0, "0-3" },
		{ "annotated beside the room", 4, annotated("x", "4-5"), 0, "", 0, "0-3" },
		/* found running: the truth; the pod's room is what is left, and
		 * its second container spills over (BestEffort) */
		{ "running annotated on a full room", 4, running(annotated("x", "2")), 0, "", 0,
		  "4-7" },
		{ "running scheduled on the room", 4, running(scheduled("s", &status_3)), 0, "", 0,
		  "4-7" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct room_case *c = &cases[i];
		struct topology *t = mk_topo(2, 4, 1);
		struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
					     .resource_status_namespaces = "*" };
		struct policy_request a1 = integer("a1", 1), a2 = integer("a2", (int)c->pod_cpus - 1);
		struct policy_decision d, da2;
		struct cpumask within;
		struct policy *p;
		int r;

		cfg.alloc.align = NUMA_POLICY_BEST_EFFORT;
		cfg.alloc.pod_scope = true;
		assert_int_equal(policy_new(t, &cfg, &p), 0);
		a1.pod_uid = a2.pod_uid = "uid-A";
		a1.name = "ns/A/a1";
		a2.name = "ns/A/a2";
		a1.pod_cpus = a2.pod_cpus = c->pod_cpus;
		assert_int_equal(policy_admit(p, &a1, &d), 0);
		tl_assert_mask(&d.cpus, "0");
		r = policy_admit(p, &c->fixed, &d);
		if (r != c->rc || !strstr(d.reason, c->in_reason))
			fail_msg("%s: rc %d (%s), want rc %d with \"%s\"", c->name, r, d.reason, c->rc,
				 c->in_reason);
		if (r < 0) {
			assert_int_equal(d.err, POLICY_ERR_CPU_EXCLUSIVE);
			assert_false(d.err_hotplug);
		}
		r = policy_admit(p, &a2, &da2);
		if (r != c->rest_rc)
			fail_msg("%s: pod A's second container: rc %d (%s), want %d", c->name, r,
				 da2.reason, c->rest_rc);
		if (r == 0) {
			/* in the pod's node, and never on the fixed set */
			within = tl_mask(c->rest_within);
			if (!cpumask_subset(&da2.cpus, &within))
				fail_msg("%s: pod A's second container outside %s", c->name,
					 c->rest_within);
			if (c->rc == 0 && policy_decision_get(p, c->fixed.container_id, &d) == 0 &&
			    d.kind != CPUSETD_KIND_SHARED && cpumask_intersects(&da2.cpus, &d.cpus))
				fail_msg("%s: pod A's second container shares the fixed set's CPUs",
					 c->name);
		}
		policy_free(p);
		topo_free(t);
	}
}

/* Recovery: a kept integer container's room is chosen before the fixed
 * sets are recovered (phase order), maybe on a running annotated set's
 * CPUs; the set stays, even where a new one would be refused, and the
 * room makes way. A running set on a CPU reserved since the last start
 * is refused like a new one. */
static void test_recover_fixed_sets(void **state)
{
	struct topology *t = mk_topo(2, 4, 1);
	struct policy_config cfg = { .min_shared_cpus = 1, .cores_ids_namespaces = "*",
				     .resource_status_namespaces = "*" };
	struct policy_request reqs[] = { integer("a1", 1), running(annotated("x", "2")),
					 running(annotated("y", "7")) };
	struct policy_request a2 = integer("a2", 3);
	struct cpumask cur[3];
	uint64_t order[3] = { 1, 2, 3 };
	struct policy_decision d[3], da2;
	struct policy *p;

	(void)state;
	cfg.alloc.align = NUMA_POLICY_BEST_EFFORT;
	cfg.alloc.pod_scope = true;
	assert_int_equal(cpulist_parse("7", &cfg.reserved_cpus), 0);
	assert_int_equal(policy_new(t, &cfg, &p), 0);
	reqs[0].pod_uid = a2.pod_uid = "uid-A";
	reqs[0].pod_cpus = a2.pod_cpus = 4;	/* its room cannot move */
	for (size_t i = 0; i < 3; i++)
		reqs[i].running = true;
	cpulist_parse("0", &cur[0]);
	cpulist_parse("2", &cur[1]);
	cpulist_parse("7", &cur[2]);
	assert_int_equal(policy_recover(p, reqs, cur, order, 3, d), 0);
	tl_assert_mask(&d[0].cpus, "0");
	assert_int_equal(d[1].err, POLICY_OK);
	tl_assert_mask(&d[1].cpus, "2");
	assert_int_equal(d[2].err, POLICY_ERR_CPU_RESERVED);
	assert_true(d[2].reject);
	assert_false(d[2].err_hotplug);
	assert_int_equal(policy_admit(p, &a2, &da2), 0);
	tl_assert_mask(&da2.cpus, "4-6");	/* the room was short: off CPU 2 */
	policy_free(p);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_set_reserved),
		cmocka_unit_test(test_fixed_set_rooms),
		cmocka_unit_test(test_recover_fixed_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
