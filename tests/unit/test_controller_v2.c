// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's hierarchical writes on a cgroup v2 tree
 * (controller_plan.c; the tree and v2's rules: test_controller.h,
 * test_controller_kern.h): the pool written once per slice, containers
 * inheriting it, the plan tree built again only when it must be.
 */
#include "test_controller.h"

/* --- cgroup v2: the hierarchical writes (controller_plan.c) --- */

/* The runtime removes ct, then kubelet its pod: both rmdir events. */
static void stop_pod(struct fx *f, const struct ct *ct)
{
	struct ct pod = *ct;

	*strrchr(pod.path, '/') = '\0';
	assert_int_equal(cgfs_cgroup_id(f->cg, pod.path, &pod.id), 0);
	remove_ct(f, ct);
	send(f, CPUSETD_EV_RMDIR, ct, 0);
	remove_ct(f, &pod);
	send(f, CPUSETD_EV_RMDIR, &pod, 0);
}

/*
 * v2: the Burstable slice holds the pool and its containers inherit it;
 * an integer container holds its CPUs; each start and stop changes the
 * effective sets as they must, and none builds the plan tree again.
 */
static void test_v2_admit(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct be = start(f, POD_QOS_BESTEFFORT, 0);
	uint64_t builds = plan_builds(f);
	struct cpumask excl, slice, want, none = { { 0 } };
	struct ct g, b2;

	assert_true(builds >= 1);
	assert_eff(f, &b1, f->topo->online);
	g = start(f, POD_QOS_GUARANTEED, 2);
	excl = assert_exclusive(f, &g, 2);
	assert_eff(f, &g, excl);
	assert_eff(f, &b1, pool(f, &excl));
	assert_eff(f, &be, pool(f, &excl));
	/* one write at the slice: the containers keep "" and inherit */
	want = pool(f, &excl);
	slice = get(f, "/kubepods/burstable", "cpuset.cpus");
	assert_true(cpumask_equal(&slice, &want));
	assert_cpus(f, &b1, none);
	b2 = start(f, POD_QOS_BURSTABLE, 0);
	assert_eff(f, &b2, pool(f, &excl));
	assert_cpus(f, &b2, none);
	stop_pod(f, &g);
	assert_eff(f, &b1, f->topo->online);
	assert_eff(f, &b2, f->topo->online);
	assert_eff(f, &be, f->topo->online);
	assert_int_equal(plan_builds(f), builds);
}

/*
 * v2 churn: integer and shared pods come and go; every stop leaves holes
 * in the kept tree, and the tree is built again only when holes are most
 * of it (a few times over 40 rounds, never once per pod). The sets stay
 * right before and after each such build.
 */
static void test_v2_churn(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 1);
	struct cpumask excl = assert_exclusive(f, &g, 1), both, e;
	uint64_t builds = plan_builds(f), rounds = 40;

	for (unsigned i = 0; i < rounds; i++) {
		struct ct x = start(f, POD_QOS_BURSTABLE, 0);
		struct ct y = start(f, POD_QOS_GUARANTEED, 2);

		e = assert_exclusive(f, &y, 2);
		assert_false(cpumask_intersects(&e, &excl));
		assert_eff(f, &y, e);
		cpumask_or(&both, &excl, &e);
		assert_eff(f, &b1, pool(f, &both));
		assert_eff(f, &x, pool(f, &both));
		stop_pod(f, &y);
		stop_pod(f, &x);
		assert_eff(f, &b1, pool(f, &excl));
		assert_eff(f, &g, excl);
	}
	/* 4 nodes (2 pods, 2 containers) become holes a round; a build
	 * when more than 64 holes are more than half the tree */
	if (plan_builds(f) - builds < 1 || plan_builds(f) - builds > rounds * 4 / 64 + 1)
		fail_msg("%llu builds in %llu rounds", (unsigned long long)(plan_builds(f) - builds),
			 (unsigned long long)rounds);
}

/* v2: a resync builds the tree again and re-reads the slices: a slice
 * someone else wrote is brought back to the pool. */
static void test_v2_resync(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2);
	uint64_t builds = plan_builds(f);

	put(f->cpuset, "/kubepods/burstable", "cpuset.cpus", "0-7\n");	/* an admin */
	assert_eff(f, &b1, f->topo->online);
	assert_int_equal(controller_resync(f->c), 0);
	assert_int_equal(plan_builds(f), builds + 1);
	assert_eff(f, &b1, pool(f, &excl));
	assert_eff(f, &g, excl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v2_admit, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_v2_churn, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_v2_resync, setup_v2, teardown),
	};

	return cmocka_run_group_tests_name("controller on a v2 tree (" SNAP ")", tests,
					   group_setup, group_teardown);
}
