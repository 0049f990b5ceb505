// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's NRI handlers (user/controller/controller_nri.c, through
 * controller_nri_handlers) called directly with built struct
 * nri_container values, against a temporary cgroup v1 tree, with the BPF
 * events of the same containers through controller_handle: what the
 * runtime is told (the reply) and what the kernel holds (the cpuset files
 * the daemon wrote) are both checked.
 *
 * The tree is test_controller.h's v1 layout (kubelet's cgroupfs driver):
 *   <tmp>/cpuset/kubepods[/burstable|/besteffort]/pod<uid>/<64 hex id>/
 *   <tmp>/cpu/<same paths>/cpu.cfs_quota_us, cpu.cfs_period_us
 * NRI's CreateContainer comes when the pod's cgroup exists (its sandbox
 * runs) and the container's does not; the test makes the container's
 * cgroup afterwards, as the runtime does at StartContainer, and writes
 * into it what the runtime writes (the adjustment), or not.
 *
 * Here CreateContainer and what confirms or follows it; stop, update and
 * synchronize are in test_controller_nri_update.c; the fixture and the
 * write(2) log in test_controller_nri.h.
 */
#include "test_controller_nri.h"

/* ------------------------------------------------------------- tests */

/* A shared container is told the shared pool, no mems (left as they
 * are); nothing is written for it before its cgroup exists. */
static void test_create_shared(void **state)
{
	struct fx *f = *state;
	struct nct t = new_nct(f, POD_QOS_BURSTABLE, 0);
	struct nri_reply r;

	create(f, &t, &r);
	assert_string_equal(r.error, "");
	assert_true(r.adjust);
	assert_string_equal(r.cpus, "0-7");
	assert_string_equal(r.mems, "");
	assert_int_equal(r.n_updates, 0);
	assert_int_equal(kern.n, 0);
	assert_int_equal(COUNT(f, nri_placed_at_create), 1);
	reply_free(&r);
}

/*
 * An integer container is told N CPUs of its own and their node; the
 * running shared containers leave those CPUs now (written at once, as
 * with a mkdir) and are listed as updates, so the runtime's record
 * matches the kernel's. An annotated one is told exactly its CPUs.
 */
static void test_create_integer_annotated(void **state)
{
	struct fx *f = *state;
	struct nct s = new_nct(f, POD_QOS_BURSTABLE, 0), g, a;
	struct nri_reply r;
	const struct nri_update *u;
	struct cpumask excl, rest;

	create(f, &s, &r);
	start_as_told(f, &s, &r);
	reply_free(&r);

	g = new_nct(f, POD_QOS_GUARANTEED, 2);
	create(f, &g, &r);
	assert_true(r.adjust);
	assert_int_equal(cpulist_parse(r.cpus, &excl), 0);
	assert_int_equal(cpumask_weight(&excl), 2);
	assert_string_equal(r.mems, "0");
	cpumask_andnot(&rest, &f->topo->online, &excl);
	/* the running shared container: written now, and an update */
	assert_int_equal(writes_of(s.path, "cpuset.cpus"), 1);
	{
		struct cpumask have = get(f, s.path, "cpuset.cpus");

		assert_true(cpumask_equal(&have, &rest));
	}
	assert_non_null(u = update_of(&r, s.nc.id));
	{
		struct cpumask told;

		assert_int_equal(cpulist_parse(u->cpus, &told), 0);
		assert_true(cpumask_equal(&told, &rest));
	}
	assert_string_equal(u->mems, "");
	assert_null(update_of(&r, g.nc.id));	/* itself: the adjustment */
	reply_free(&r);

	a = new_nct(f, POD_QOS_BURSTABLE, 0);
	a.nc.meta.cores_ids = strdup("6");
	assert_non_null(a.nc.meta.cores_ids);
	if (cpumask_test(&excl, 6)) {	/* not an integer CPU: that is another test */
		free(a.nc.meta.cores_ids);
		a.nc.meta.cores_ids = strdup("0");
	}
	create(f, &a, &r);
	assert_string_equal(r.error, "");
	assert_true(r.adjust);
	assert_string_equal(r.cpus, a.nc.meta.cores_ids);
	assert_string_equal(r.mems, "0");
	assert_non_null(update_of(&r, s.nc.id));	/* the pool shrank again */
	reply_free(&r);
	free(a.nc.meta.cores_ids);
}

/*
 * A refusal: CreateContainer fails with today's termination message text,
 * nothing is held or written, the pod's error lists each attempt, and the
 * runtime's Stop and Remove of the container we never admitted are fine.
 */
static void test_refusal(void **state)
{
	struct fx *f = *state;
	struct nct t = new_nct(f, POD_QOS_GUARANTEED, 8);	/* 8 of 8: pool empty */
	struct nri_reply r;
	struct snapshot s;
	const struct pod_error *e;

	create(f, &t, &r);
	assert_false(r.adjust);
	if (strncmp(r.error, "cpusetd: insufficient_cpus: ", 28) != 0 &&
	    strncmp(r.error, "cpusetd: shared_pool_empty: ", 28) != 0)
		fail_msg("error \"%s\"", r.error);
	assert_int_equal(r.n_updates, 0);
	assert_int_equal(kern.n, 0);
	reply_free(&r);
	assert_int_equal(f->h.stop_container(f->c, &t.nc, &r), 0);
	assert_int_equal(r.n_updates, 0);
	f->h.remove(f->c, t.nc.id, "");
	/* kubelet's next attempt: a new container id, the same container */
	t.nc.id[0] = 'f';
	t.nc.meta.cgroups_path[strlen(t.pod) + 1] = 'f';
	create(f, &t, &r);
	assert_true(r.error[0]);
	reply_free(&r);

	assert_int_equal(COUNT(f, nri_refused_at_create), 2);
	assert_int_equal(COUNT(f, nri_placed_at_create), 0);
	assert_int_equal(controller_snapshot(f->c, &s), 0);
	assert_non_null(e = pod_errors_get(s.errors, "default", t.nc.meta.pod_name, "app"));
	assert_int_equal(e->attempts, 2);
	assert_string_equal(e->action, "rejected");
	tl_assert_mask(&s.shared_pool, "0-7");	/* nothing held */
	snapshot_release(&s);
}

/*
 * The mkdir of a container placed at creation confirms it: no write
 * (the runtime writes our answer after its mkdir); its exec finds the
 * runtime's write and writes nothing either.
 */
static void test_confirm_at_mkdir(void **state)
{
	struct fx *f = *state;
	struct nct g = new_nct(f, POD_QOS_GUARANTEED, 2);
	struct nri_reply r;

	create(f, &g, &r);
	make_cgroup(f, &g, NULL, NULL);		/* v1: empty sets at the mkdir */
	kern.n = 0;
	send_mkdir(f, &g, 0);
	assert_int_equal(kern.n, 0);		/* the BPF path would write here */
	/* runc's copy of the parent's set into the new v1 cpuset, reported
	 * by the write hook: the runtime creating it, not a foreign write */
	put(f->cpuset, g.path, "cpuset.cpus", "0-7\n");
	cpuset_write(f, &g, "0-7");
	assert_int_equal(kern.n, 0);
	put(f->cpuset, g.path, "cpuset.cpus", r.cpus);	/* the runtime's write */
	put(f->cpuset, g.path, "cpuset.mems", r.mems);
	cpuset_write(f, &g, r.cpus);
	send(f, CPUSETD_EV_EXEC, NULL, g.id, 0);
	assert_int_equal(kern.n, 0);
	assert_int_equal(COUNT(f, foreign_writes), 0);
	assert_int_equal(COUNT(f, nri_confirmed_at_mkdir), 1);
	assert_int_equal(COUNT(f, nri_not_applied), 0);
	assert_int_equal(COUNT(f, created_without_nri), 0);
	reply_free(&r);
}

/* A runtime that did not apply our answer (it timed out waiting): the
 * exec check writes the decision, counted. */
static void test_not_applied_at_exec(void **state)
{
	struct fx *f = *state;
	struct nct g = new_nct(f, POD_QOS_GUARANTEED, 2);
	struct nri_reply r;
	struct nri_update *u;
	size_t n;

	create(f, &g, &r);
	make_cgroup(f, &g, "0-7\n", "0\n");	/* runc copied its parent's */
	kern.n = 0;
	send_mkdir(f, &g, 0);
	assert_int_equal(kern.n, 0);
	send(f, CPUSETD_EV_EXEC, NULL, g.id, 0);
	assert_int_equal(writes_of(g.path, "cpuset.cpus"), 1);
	assert_set(f, g.path, "cpuset.cpus", r.cpus);
	assert_int_equal(COUNT(f, nri_not_applied), 1);
	/* and its runtime is told again, from the main loop */
	assert_int_equal(controller_nri_outbox(f->c, &u, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(u[0].container_id, g.nc.id);
	assert_string_equal(u[0].cpus, r.cpus);
	free(u);
	reply_free(&r);
}

/* The request handled after the mkdir it came before in time (SIGSTOP):
 * a cgroup made before our answer is written at once; and the other
 * order, the mkdir first, is the BPF path's, the late request then only
 * told the placement in force. */
static void test_late_either_order(void **state)
{
	struct fx *f = *state;
	struct nct g = new_nct(f, POD_QOS_GUARANTEED, 2), h;
	struct nri_reply r;
	uint64_t made = now_ns();
	struct cpumask first;

	make_cgroup(f, &g, "0-7\n", "0\n");
	create(f, &g, &r);
	send_mkdir(f, &g, made);		/* stamped before the answer */
	assert_int_equal(writes_of(g.path, "cpuset.cpus"), 1);
	assert_set(f, g.path, "cpuset.cpus", r.cpus);
	assert_int_equal(COUNT(f, nri_not_applied), 1);
	reply_free(&r);

	h = new_nct(f, POD_QOS_GUARANTEED, 2);
	make_cgroup(f, &h, "0-7\n", "0\n");
	send_mkdir(f, &h, 0);			/* BPF path: created without NRI */
	assert_int_equal(COUNT(f, created_without_nri), 1);
	first = get(f, h.path, "cpuset.cpus");
	assert_int_equal(cpumask_weight(&first), 2);
	create(f, &h, &r);			/* the late request */
	assert_int_equal(kern.n, 0);
	assert_true(r.adjust);
	{
		struct cpumask told;

		assert_int_equal(cpulist_parse(r.cpus, &told), 0);
		assert_true(cpumask_equal(&told, &first));
	}
	assert_int_equal(COUNT(f, nri_placed_at_create), 1);
	reply_free(&r);
}

/* A container whose cgroup appears with no CreateContainer is placed by
 * BPF and counted; a sandbox is not. */
static void test_created_without_nri(void **state)
{
	struct fx *f = *state;
	struct nct s = new_nct(f, POD_QOS_BURSTABLE, 0), g = new_nct(f, POD_QOS_GUARANTEED, 1);
	struct nri_update *u;
	size_t n;

	assert_int_equal(COUNT(f, created_without_nri), 0);	/* the sandboxes */
	make_cgroup(f, &s, NULL, NULL);
	send_mkdir(f, &s, 0);
	assert_int_equal(COUNT(f, created_without_nri), 1);
	make_cgroup(f, &g, NULL, NULL);
	send_mkdir(f, &g, 0);
	assert_int_equal(COUNT(f, created_without_nri), 2);
	{
		struct cpumask m = get(f, g.path, "cpuset.cpus");

		assert_int_equal(cpumask_weight(&m), 1);
	}
	/* the runtime hears of both from the main loop */
	assert_int_equal(controller_nri_outbox(f->c, &u, &n), 0);
	assert_int_equal(n, 2);
	free(u);
	assert_int_equal(controller_nri_outbox(f->c, &u, &n), 0);
	assert_int_equal(n, 0);
	free(u);
}

/* The systemd driver's cgroups_path ("slice:prefix:name") names the
 * cgroup the runtime makes, and one outside the kubepods root is left
 * alone (no answer, nothing held). */
static void test_outside_root(void **state)
{
	struct fx *f = *state;
	struct nct t = new_nct(f, POD_QOS_BURSTABLE, 0);
	struct nri_reply r;

	snprintf(t.nc.meta.cgroups_path, sizeof(t.nc.meta.cgroups_path),
		 "system.slice:cri-containerd:%s", t.nc.id);
	create(f, &t, &r);
	assert_false(r.adjust);
	assert_string_equal(r.error, "");
	assert_int_equal(COUNT(f, nri_placed_at_create), 0);
	reply_free(&r);
}

/* The steps of controller_forget still holding a trace of t, as one
 * string ("" = none). */
static const char *traces(const struct fx *f, const struct nct *t, char *buf, size_t len)
{
	const char *names[16];
	size_t n = controller_traces(f->c, t->id, t->nc.id, names, 16);

	assert_true(n <= 16);
	return tl_join(names, n, buf, len);
}

/*
 * One release per container (controller_forget): a container admitted at
 * CreateContainer and removed before its cgroup was made leaves no trace
 * and gives its CPUs back; a refused one leaves only its pod's error
 * (kubelet's next attempt adds to it); a placed one keeps NRI's record
 * after its rmdir until RemoveContainer.
 */
static void test_forget(void **state)
{
	struct fx *f = *state;
	struct nct p = new_nct(f, POD_QOS_GUARANTEED, 2);
	struct nct big = new_nct(f, POD_QOS_GUARANTEED, 8);
	struct nct g = new_nct(f, POD_QOS_GUARANTEED, 2);
	char buf[256], path[CGFS_PATH_MAX + 200];
	struct nri_reply r;
	struct snapshot s;

	create(f, &p, &r);
	assert_true(r.adjust);
	reply_free(&r);
	assert_string_equal(traces(f, &p, buf, sizeof(buf)), "policy nri");
	f->h.remove(f->c, p.nc.id, "");
	assert_string_equal(traces(f, &p, buf, sizeof(buf)), "");
	assert_int_equal(controller_snapshot(f->c, &s), 0);
	tl_assert_mask(&s.shared_pool, "0-7");	/* its CPUs are back */
	snapshot_release(&s);

	create(f, &big, &r);
	assert_true(r.error[0]);
	reply_free(&r);
	assert_string_equal(traces(f, &big, buf, sizeof(buf)), "errors");

	create(f, &g, &r);
	start_as_told(f, &g, &r);
	reply_free(&r);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "table policy nri");
	snprintf(path, sizeof(path), "%s%s", f->cpuset, g.path);
	tl_rm_tree(path);
	snprintf(path, sizeof(path), "%s%s", f->cpu, g.path);
	tl_rm_tree(path);
	send(f, CPUSETD_EV_RMDIR, g.path, g.id, 0);
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "nri");
	f->h.remove(f->c, g.nc.id, "");
	assert_string_equal(traces(f, &g, buf, sizeof(buf)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_integer_annotated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confirm_at_mkdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_applied_at_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_either_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_created_without_nri, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
	};

	return cmocka_run_group_tests_name("controller's NRI handlers on a v1 tree (" SNAP ")",
					   tests, group_setup, group_teardown);
}
