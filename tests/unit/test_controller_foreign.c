// SPDX-License-Identifier: Apache-2.0
/*
 * Foreign writes to the controller's cgroups (a runtime, kubelet, an
 * admin) on the v1 and v2 trees of test_controller.h: which are undone,
 * which are counted, and the writer table's bound.
 */
#include "test_controller.h"

/* Another writer's change of a placed container is undone, until the
 * fifth restore in a row: then the controller gives up and leaves it. */
static void test_foreign_write(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2);
	struct cpumask all = f->topo->online;

	for (int i = 0; i < 5; i++) {
		foreign_write(f, &g, "0-7\n");
		assert_cpus(f, &g, excl);
	}
	foreign_write(f, &g, "0-7\n");
	assert_cpus(f, &g, all);
}

/* Foreign writes counted so far, and by the writer comm (0: none). */
static uint64_t foreign_writes(const struct fx *f, const char *comm)
{
	struct snapshot snap;
	uint64_t n = 0;

	assert_int_equal(controller_snapshot(f->c, &snap), 0);
	if (!comm)
		n = snap.n->foreign_writes;
	for (size_t i = 0; comm && i < snap.n_writers; i++)
		if (strcmp(snap.writers[i].comm, comm) == 0)
			n = snap.writers[i].writes;
	snapshot_release(&snap);
	return n;
}

/*
 * A foreign write is counted only when it left the file off our
 * decision (issue 22 L8), with the bytes (BPF hooks) and without
 * (fanotify): a runtime copying the pool into a new cgroup, writing the
 * set we chose, or writing a pooled container's mems (which we leave
 * alone) is not foreign; kubelet writing every CPU is, and is undone.
 */
static void test_foreign_write_counted_when_off(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2);
	char same[CPULIST_MAX + 1], shared[CPULIST_MAX + 1];
	uint64_t n = 0;

	fmt(&excl, same);
	strcat(same, "\n");
	{
		struct cpumask p = pool(f, &excl);

		fmt(&p, shared);
		strcat(shared, "\n");
	}
	for (int bytes = 0; bytes < 2; bytes++) {
		foreign_write_by(f, &b1, "cpuset.mems", "0\n", "runc", bytes);
		foreign_write_by(f, &b1, "cpuset.cpus", shared, "runc", bytes);
		foreign_write_by(f, &g, "cpuset.cpus", same, "runc", bytes);
		foreign_write_by(f, &g, "cpuset.mems", "0\n", "runc", bytes);
		assert_int_equal(foreign_writes(f, NULL), n);
		assert_int_equal(foreign_writes(f, "runc"), 0);
		foreign_write_by(f, &g, "cpuset.cpus", "0-7\n", "kubelet", bytes);
		assert_int_equal(foreign_writes(f, NULL), ++n);
		assert_int_equal(foreign_writes(f, "kubelet"), n);
		assert_cpus(f, &g, excl);	/* undone */
		foreign_write_by(f, &b1, "cpuset.cpus", same, "kubelet", bytes);
		assert_int_equal(foreign_writes(f, NULL), ++n);
		assert_cpus(f, &b1, pool(f, &excl));
	}
}

/*
 * The writer table is bounded (issue 22 L6): the first 16 distinct comms
 * keep their own count, every later one is counted under "other"; no
 * entry ever goes away or goes back (each is a Prometheus series).
 */
static void test_foreign_writers_bounded(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct snapshot snap;
	char comm[16];

	assert_exclusive(f, &g, 2);
	for (int i = 0; i < 17; i++) {
		snprintf(comm, sizeof(comm), "w%02d", i);
		foreign_write_by(f, &g, "cpuset.cpus", "0-7\n", comm, true);
	}
	assert_int_equal(controller_snapshot(f->c, &snap), 0);
	assert_int_equal(snap.n_writers, 17);
	snapshot_release(&snap);
	for (int i = 0; i < 16; i++) {
		snprintf(comm, sizeof(comm), "w%02d", i);
		assert_int_equal(foreign_writes(f, comm), 1);
	}
	assert_int_equal(foreign_writes(f, "w16"), 0);
	assert_int_equal(foreign_writes(f, "other"), 1);
	foreign_write_by(f, &g, "cpuset.cpus", "0-6\n", "w17", true);
	foreign_write_by(f, &g, "cpuset.cpus", "0-5\n", "w03", true);
	assert_int_equal(foreign_writes(f, "other"), 2);
	assert_int_equal(foreign_writes(f, "w03"), 2);
	assert_int_equal(foreign_writes(f, NULL), 19);
	assert_int_equal(controller_snapshot(f->c, &snap), 0);
	assert_int_equal(snap.n_writers, 17);
	snapshot_release(&snap);
}

/* v2: the plan decides a container's own cpuset.cpus; a write that
 * leaves what the plan wants (a shared container's "", inherited) is not
 * foreign, one that pins it elsewhere is, and is undone. */
static void test_v2_foreign_write_counted_when_off(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2), none = { { 0 } }, own;
	char same[CPULIST_MAX + 1];

	assert_cpus(f, &b1, none);	/* it inherits its slice's pool */
	for (int bytes = 0; bytes < 2; bytes++) {
		own = cpus(f, &b1);	/* "", then what the restore left */
		fmt(&own, same);
		foreign_write_by(f, &b1, "cpuset.cpus", same, "runc", bytes);
		foreign_write_by(f, &b1, "cpuset.mems", "0\n", "runc", bytes);
		assert_int_equal(foreign_writes(f, NULL), (uint64_t)bytes);
		foreign_write_by(f, &b1, "cpuset.cpus", "0\n", "kubelet", bytes);
		assert_int_equal(foreign_writes(f, NULL), (uint64_t)bytes + 1);
		assert_eff(f, &b1, pool(f, &excl));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_foreign_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_write_counted_when_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign_writers_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_foreign_write_counted_when_off, setup_v2,
						teardown),
	};

	return cmocka_run_group_tests_name("controller, foreign writes, v1 and v2 (" SNAP ")",
					   tests, group_setup, group_teardown);
}
