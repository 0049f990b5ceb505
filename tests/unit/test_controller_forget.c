// SPDX-License-Identifier: Apache-2.0
/*
 * One release per container (controller_forget, user/README.md "One
 * owner per container"): its steps run in the documented order, and
 * after a container's rmdir no table the controller keeps holds a trace
 * of it (the table and its indexes, the policy's book, the pod's errors,
 * NRI's record), on the v1 and v2 trees of test_controller.h; nor after a
 * resync that finds a container gone whose rmdir was never seen; a pod's
 * errors stay while any container cgroup of it is left. The BPF
 * maps are not there without BPF; the integration lane covers them.
 */
#include "test_controller.h"

#define MAX_STEPS 16

/* The container id of ct: its cgroup's name (64 hex). */
static const char *id_of(const struct ct *ct)
{
	return strrchr(ct->path, '/') + 1;
}

/* The steps still holding a trace of ct, as one string ("" = none). */
static const char *traces(const struct fx *f, const struct ct *ct, char *buf, size_t len)
{
	const char *names[MAX_STEPS];
	size_t n = controller_traces(f->c, ct->id, id_of(ct), names, MAX_STEPS);

	assert_true(n <= MAX_STEPS);
	return tl_join(names, n, buf, len);
}

static void rmdir_ct(struct fx *f, const struct ct *ct)
{
	remove_ct(f, ct);
	send(f, CPUSETD_EV_RMDIR, ct, 0);
}

/* The order, and why, is controller_forget.c's: the table first (every
 * later step asks it), the placement map before telemetry, the pools
 * after the map, errors after the table, the record's memory last. */
static void test_order(void **state)
{
	static const char *const want[] = { "table", "placement_map", "telemetry", "policy",
					    "errors", "record" };
	const char *names[MAX_STEPS];
	size_t n = controller_forget_order(names, MAX_STEPS), k = 0;

	(void)state;
	assert_true(n >= 6 && n <= MAX_STEPS);
	/* The constraints, not the whole list: a new step may go between. */
	for (size_t i = 0; i < n && k < 6; i++)
		if (strcmp(names[i], want[k]) == 0)
			k++;
	if (k != 6)
		fail_msg("step \"%s\" out of order", want[k]);
	assert_string_equal(names[n - 1], "record");
	assert_string_equal(names[0], "table");
}

/*
 * An exclusive container, a shared one and a refused one (8 CPUs: more
 * than the pool can give) each hold their traces while they live, and
 * none after their rmdir; the CPUs are back in the shared pool.
 */
static void test_rmdir_leaves_no_trace(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct ct b = start(f, POD_QOS_BURSTABLE, 0);
	struct ct big = start(f, POD_QOS_GUARANTEED, 8);
	struct cpumask all = f->topo->online;
	char buf[256];

	assert_exclusive(f, &g, 2);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "table policy");
	assert_string_equal(traces(f, &b, buf, sizeof(buf)), "table policy");
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "table policy errors");

	rmdir_ct(f, &g);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "");
	if (f->v2)		/* the pools converged */
		assert_eff(f, &b, all);
	else
		assert_cpus(f, &b, all);
	rmdir_ct(f, &big);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "");	/* its pod is gone */
	rmdir_ct(f, &b);
	assert_string_equal(traces(f, &b, buf, sizeof(buf)), "");

	/* Its CPUs are free again: a new container gets as many. */
	g = start(f, POD_QOS_GUARANTEED, 7);
	assert_exclusive(f, &g, 7);
}

/* A second running container in ct's pod (the pod's own cgroup is
 * there: new_ct made it), announced by its mkdir. */
static struct ct start_beside(struct fx *f, const struct ct *ct, unsigned limit)
{
	unsigned n = ++f->serial;
	struct ct sib;

	snprintf(sib.path, sizeof(sib.path), "%.*s/%012x%052x",
		 (int)(strrchr(ct->path, '/') - ct->path), ct->path, n, n);	/* 64 hex */
	mkcg(f, sib.path, "", "");
	set_limit(f, &sib, limit);
	set_tasks(f, &sib, true);
	assert_int_equal(cgfs_cgroup_id(f->cg, sib.path, &sib.id), 0);
	send(f, CPUSETD_EV_MKDIR, &sib, 0);
	return sib;
}

/*
 * A pod's errors stay while any container cgroup of it is in the table,
 * whichever goes first, and go with its last (controller_pod_cgroups:
 * a count off by one either way fails here). Another pod's rmdir prunes
 * nothing of it.
 */
static void test_errors_live_with_pod(void **state)
{
	struct fx *f = *state;
	struct ct big = start(f, POD_QOS_GUARANTEED, 8);
	struct ct one = start_beside(f, &big, 1);
	struct ct two = start_beside(f, &big, 1);
	struct ct other = start(f, POD_QOS_BURSTABLE, 0);
	char buf[256];

	assert_exclusive(f, &one, 1);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "table policy errors");
	rmdir_ct(f, &other);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "table policy errors");
	rmdir_ct(f, &big);	/* the refused one first: two of its pod left */
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "errors");
	rmdir_ct(f, &one);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "errors");
	rmdir_ct(f, &two);	/* the pod's last */
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "");
}

/* The same across a resync: the rebuilt table counts the pod's cgroup
 * that is left, and the next rmdir of another pod keeps its errors. */
static void test_errors_live_across_resync(void **state)
{
	struct fx *f = *state;
	struct ct big = start(f, POD_QOS_GUARANTEED, 8);
	struct ct one = start_beside(f, &big, 1);
	struct ct other = start(f, POD_QOS_BURSTABLE, 0);
	char buf[256];

	remove_ct(f, &big);	/* its rmdir missed */
	assert_int_equal(controller_resync(f->c), 0);
	rmdir_ct(f, &other);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "errors");
	rmdir_ct(f, &one);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "");
}

/* The rmdir of an older cgroup of the same name (another kernfs id) is
 * not the container's: every trace stays. */
static void test_stale_rmdir_keeps_traces(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct ct old = g;
	char buf[256];

	old.id = g.id + 1000;
	send(f, CPUSETD_EV_RMDIR, &old, 0);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "table policy");
	assert_exclusive(f, &g, 2);
}

/* Every task exited: the CPUs go back, the record stays (its error
 * listed, its cgroup still there) until the rmdir forgets it. */
static void test_exit_then_rmdir(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	char buf[256];

	set_tasks(f, &g, false);
	send(f, CPUSETD_EV_POPULATED, &g, 0);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "table");
	rmdir_ct(f, &g);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "");
}

/* A removal the daemon never heard of (its rmdir event lost, or made while
 * it was down): the resync rebuilds every table from the live tree, and
 * no trace of it is left either; its CPUs are free again. */
static void test_resync_forgets_missed_rmdir(void **state)
{
	struct fx *f = *state;
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct ct big = start(f, POD_QOS_GUARANTEED, 8);
	char buf[256];

	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "table policy errors");
	remove_ct(f, &g);
	remove_ct(f, &big);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "table policy");
	assert_int_equal(controller_resync(f->c), 0);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "");
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "");
	g = start(f, POD_QOS_GUARANTEED, 7);
	assert_exclusive(f, &g, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test_setup_teardown(test_rmdir_leaves_no_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmdir_leaves_no_trace, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_errors_live_with_pod, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_live_with_pod, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_errors_live_across_resync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_rmdir_keeps_traces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_then_rmdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_then_rmdir, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_resync_forgets_missed_rmdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync_forgets_missed_rmdir, setup_v2, teardown),
	};

	return cmocka_run_group_tests_name("controller, one release per container, v1 and v2 ("
					   SNAP ")", tests, group_setup, group_teardown);
}
