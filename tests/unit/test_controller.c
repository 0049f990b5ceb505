// SPDX-License-Identifier: Apache-2.0
/*
 * The controller (user/controller/controller.h) driven against a temporary
 * cgroup v1 tree, without BPF: events in through controller_handle, the
 * outcome read back from the cpuset files it wrote, which are the truth
 * the daemon leaves on a node (the tree and the fake kernel:
 * test_controller.h, test_controller_kern.h). One container's life:
 * admission and its order, release, in-place resize, resync, the exec
 * check, populated events, a refusal. Hotplug, foreign writes and the v2
 * hierarchical writes have files of their own (test_controller_*.c).
 */
#include "test_controller.h"

/* ------------------------------------------------------------- tests */

/* An integer container gets N CPUs of its own, mems of their node; every
 * shared container, before or after it, the rest; the mems of a shared
 * container are left as they are. */
static void test_admit(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g, b2, be, g2;
	struct cpumask excl, excl2, both;

	assert_cpus(f, &b1, f->topo->online);
	g = start(f, POD_QOS_GUARANTEED, 2);
	excl = assert_exclusive(f, &g, 2);
	assert_mems(f, &g, "0");
	assert_cpus(f, &b1, pool(f, &excl));
	b2 = start(f, POD_QOS_BURSTABLE, 0);
	be = start(f, POD_QOS_BESTEFFORT, 0);
	assert_cpus(f, &b2, pool(f, &excl));
	assert_cpus(f, &be, pool(f, &excl));
	assert_mems(f, &b2, "");

	/* A second integer container: disjoint from the first, which stays. */
	g2 = start(f, POD_QOS_GUARANTEED, 3);
	excl2 = assert_exclusive(f, &g2, 3);
	assert_false(cpumask_intersects(&excl, &excl2));
	cpumask_or(&both, &excl, &excl2);
	assert_cpus(f, &g, excl);
	assert_cpus(f, &b1, pool(f, &both));
	assert_cpus(f, &be, pool(f, &both));
}

/* Shared containers leave the new CPUs before the integer container's
 * set lands, so no CPU is shared and exclusive at once. */
static void test_admit_order(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct b2 = start(f, POD_QOS_BESTEFFORT, 0);
	struct ct g;

	log_reset();
	g = start(f, POD_QOS_GUARANTEED, 2);
	assert_exclusive(f, &g, 2);
	assert_before(&b1, &g);
	assert_before(&b2, &g);
}

/* The rmdir of an integer container gives its CPUs back to every shared
 * container; an rmdir event for another cgroup of that name (an older
 * id) releases nothing. */
static void test_release(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct ct b2 = start(f, POD_QOS_BESTEFFORT, 0);
	struct cpumask excl = assert_exclusive(f, &g, 2);
	struct cpusetd_event stale;

	stale = event(CPUSETD_EV_RMDIR, &g, 0);
	stale.cgroup_id = g.id + 1000;		/* an older cgroup of that name */
	assert_int_equal(controller_handle(f->c, &stale), 0);
	assert_cpus(f, &b1, pool(f, &excl));
	remove_ct(f, &g);
	send(f, CPUSETD_EV_RMDIR, &g, 0);
	assert_cpus(f, &b1, f->topo->online);
	assert_cpus(f, &b2, f->topo->online);
	/* The CPUs are free again: a new integer container may take them. */
	g = start(f, POD_QOS_GUARANTEED, 7);
	assert_exclusive(f, &g, 7);
}

/* kubelet's in-place resize: the container that gives CPUs up writes
 * first. Growing keeps the CPUs held; shrinking back keeps the ones it
 * was admitted with; the same limit again, one below that baseline or
 * one that does not fit is refused and writes nothing. */
static void test_resize_inplace(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask two = assert_exclusive(f, &g, 2), three;

	log_reset();
	assert_int_equal(controller_check_resizes(f->c), 0);
	assert_no_writes();

	set_limit(f, &g, 3);
	assert_int_equal(controller_check_resizes(f->c), 1);
	three = assert_exclusive(f, &g, 3);
	assert_true(cpumask_subset(&two, &three));
	assert_cpus(f, &b1, pool(f, &three));
	assert_before(&b1, &g);

	log_reset();
	set_limit(f, &g, 2);
	assert_int_equal(controller_check_resizes(f->c), 1);
	assert_cpus(f, &g, two);
	assert_cpus(f, &b1, pool(f, &two));
	assert_before(&g, &b1);

	log_reset();
	set_limit(f, &g, 1);		/* below the baseline */
	assert_int_equal(controller_check_resizes(f->c), 0);
	set_limit(f, &g, 8);		/* would leave the pool empty */
	assert_int_equal(controller_check_resizes(f->c), 0);
	assert_no_writes();
	assert_cpus(f, &g, two);
}

/*
 * A restart: containers are there before the daemon, one integer one on
 * the set an earlier run gave it (not the one a fresh admission would
 * pick: CPUs of both packages), shared ones stale or right, one integer
 * one with no task yet. The running integer container is not moved (its
 * file is not even written), shared ones get the pool, the empty one
 * holds nothing until its first task; a second resync writes nothing.
 */
static void test_resync(void **state)
{
	struct fx *f = *state;
	struct ct g, b1, b2, w;
	struct cpumask kept = tl_mask("3,6"), wcpus, both;

	ctl_stop(f);
	g = new_ct(f, POD_QOS_GUARANTEED, 2, true);
	put(f->cpuset, g.path, "cpuset.cpus", "3,6\n");
	put(f->cpuset, g.path, "cpuset.mems", "0\n");
	b1 = new_ct(f, POD_QOS_BURSTABLE, 0, true);
	put(f->cpuset, b1.path, "cpuset.cpus", "0-7\n");	/* never shrunk */
	b2 = new_ct(f, POD_QOS_BESTEFFORT, 0, true);
	put(f->cpuset, b2.path, "cpuset.cpus", "0-2,4-5,7\n");
	w = new_ct(f, POD_QOS_GUARANTEED, 2, false);

	ctl_start(f);
	log_reset();
	assert_int_equal(controller_resync(f->c), 0);
	assert_cpus(f, &g, kept);
	assert_int_equal(write_at(g.path, "cpuset.cpus", false), -1);
	assert_cpus(f, &b1, pool(f, &kept));
	assert_cpus(f, &b2, pool(f, &kept));
	assert_int_equal(write_at(b2.path, "cpuset.cpus", false), -1);
	assert_int_equal(write_at(w.path, "cpuset.cpus", false), -1);

	log_reset();
	assert_int_equal(controller_resync(f->c), 0);
	assert_no_writes();

	set_tasks(f, &w, true);
	send(f, CPUSETD_EV_POPULATED, &w, 1);
	wcpus = assert_exclusive(f, &w, 2);
	assert_false(cpumask_intersects(&wcpus, &kept));
	cpumask_or(&both, &wcpus, &kept);
	assert_cpus(f, &b1, pool(f, &both));
	assert_cpus(f, &g, kept);
}

/* --- exec check --- */

/* An exec re-reads the container's own set: one the runtime overwrote
 * after the mkdir-time write is written back, shared or integer; one
 * that is still right is not written again. */
static void test_exec_check(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2);

	log_reset();
	send(f, CPUSETD_EV_EXEC, &g, CPUSETD_EXEC_OWN);
	assert_no_writes();

	put(f->cpuset, g.path, "cpuset.cpus", "0-7\n");	/* runc copies the parent's */
	put(f->cpuset, b1.path, "cpuset.cpus", "0-7\n");
	send(f, CPUSETD_EV_EXEC, &g, CPUSETD_EXEC_OWN);
	assert_cpus(f, &g, excl);
	assert_true(write_at(g.path, "cpuset.cpus", false) >= 0);
	send(f, CPUSETD_EV_EXEC, &b1, CPUSETD_EXEC_OWN);
	assert_cpus(f, &b1, pool(f, &excl));
}

/* Without a bundle the limit comes from the cgroup, and the runtime may
 * write it after the mkdir: placed shared then, integer at its exec,
 * shared containers shrunk first. */
static void test_exec_late_limit(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 0);
	struct cpumask excl;

	assert_cpus(f, &g, f->topo->online);
	set_limit(f, &g, 2);
	log_reset();
	send(f, CPUSETD_EV_EXEC, &g, CPUSETD_EXEC_OWN);
	excl = assert_exclusive(f, &g, 2);
	assert_cpus(f, &b1, pool(f, &excl));
	assert_before(&b1, &g);
}

/* --- populated --- */

/* Its last task gone, an integer container holds nothing: the pool grows
 * back; a populated event with a task still there changes nothing; with
 * a task again it is admitted afresh. */
static void test_populated(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2);

	send(f, CPUSETD_EV_POPULATED, &g, 0);	/* still has its task */
	assert_cpus(f, &b1, pool(f, &excl));
	set_tasks(f, &g, false);
	send(f, CPUSETD_EV_POPULATED, &g, 0);
	assert_cpus(f, &b1, f->topo->online);

	set_tasks(f, &g, true);
	send(f, CPUSETD_EV_POPULATED, &g, 1);
	excl = assert_exclusive(f, &g, 2);
	assert_cpus(f, &b1, pool(f, &excl));
}

/* --- refusals --- */

/* An integer request that would empty the pool is refused (on_error =
 * reject): nothing becomes exclusive, the pool stays whole, and a later
 * request that fits still gets its CPUs. */
static void test_insufficient(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct big = start(f, POD_QOS_GUARANTEED, 8);
	struct ct g;
	struct cpumask excl;

	assert_cpus(f, &b1, f->topo->online);
	assert_cpus(f, &big, f->topo->online);
	g = start(f, POD_QOS_GUARANTEED, 7);
	excl = assert_exclusive(f, &g, 7);
	assert_cpus(f, &b1, pool(f, &excl));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_admit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admit_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resize_inplace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_late_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_populated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insufficient, setup, teardown),
	};

	return cmocka_run_group_tests_name("controller on a v1 tree (" SNAP ")", tests,
					   group_setup, group_teardown);
}
