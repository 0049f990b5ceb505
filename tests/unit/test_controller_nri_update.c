// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's NRI handlers after CreateContainer (StopContainer,
 * UpdateContainer, Synchronize), called directly against the temporary
 * cgroup v1 tree of test_controller_nri.h: what the runtime is told (the
 * reply, the updates of other containers) and what the kernel holds.
 */
#include "test_controller_nri.h"

/* ------------------------------------------------------------- tests */

/* A stop gives the CPUs back: the shared containers widen now and are
 * listed in the reply. */
static void test_stop_widens(void **state)
{
	struct fx *f = *state;
	struct nct s = new_nct(f, POD_QOS_BURSTABLE, 0), g;
	struct nri_reply r;
	const struct nri_update *u;
	struct cpumask m;

	create(f, &s, &r);
	start_as_told(f, &s, &r);
	reply_free(&r);
	g = new_nct(f, POD_QOS_GUARANTEED, 3);
	create(f, &g, &r);
	start_as_told(f, &g, &r);
	reply_free(&r);
	m = get(f, s.path, "cpuset.cpus");
	assert_int_equal(cpumask_weight(&m), 5);

	memset(&r, 0, sizeof(r));
	kern.n = 0;
	assert_int_equal(f->h.stop_container(f->c, &g.nc, &r), 0);
	assert_set(f, s.path, "cpuset.cpus", "0-7");
	assert_non_null(u = update_of(&r, s.nc.id));
	assert_string_equal(u->cpus, "0-7");
	reply_free(&r);
	/* its Remove changes nothing more */
	kern.n = 0;
	f->h.remove(f->c, g.nc.id, "");
	assert_int_equal(kern.n, 0);
}

/* UpdateContainer with a new CPU limit re-decides as an in-place resize
 * does, and answers with the container's own set either way. */
static void test_update_redecides(void **state)
{
	struct fx *f = *state;
	struct nct s = new_nct(f, POD_QOS_BURSTABLE, 0), g;
	struct nri_reply r;
	const struct nri_update *u;
	struct cpumask m;

	create(f, &s, &r);
	start_as_told(f, &s, &r);
	reply_free(&r);
	g = new_nct(f, POD_QOS_GUARANTEED, 2);
	create(f, &g, &r);
	start_as_told(f, &g, &r);
	reply_free(&r);

	memset(&r, 0, sizeof(r));	/* the same limit: re-asserted */
	assert_int_equal(f->h.update_container(f->c, &g.nc, &r), 0);
	assert_non_null(u = update_of(&r, g.nc.id));
	assert_int_equal(cpulist_parse(u->cpus, &m), 0);
	assert_int_equal(cpumask_weight(&m), 2);
	assert_string_equal(u->mems, "0");
	reply_free(&r);

	g.nc.meta.quota_us = 3 * PERIOD_US;	/* resized to 3 CPUs */
	assert_int_equal(f->h.update_container(f->c, &g.nc, &r), 0);
	assert_non_null(u = update_of(&r, g.nc.id));
	assert_int_equal(cpulist_parse(u->cpus, &m), 0);
	assert_int_equal(cpumask_weight(&m), 3);
	m = get(f, g.path, "cpuset.cpus");
	assert_int_equal(cpumask_weight(&m), 3);
	m = get(f, s.path, "cpuset.cpus");
	assert_int_equal(cpumask_weight(&m), 5);
	assert_non_null(update_of(&r, s.nc.id));
	reply_free(&r);
}

/* kubelet's CPU manager sends a shared container a cpuset of its own
 * (UpdateContainerResources with cpuset_cpus alone: no limit): the answer
 * is the pool, every time it asks, and the kernel keeps the pool
 * (kubernetes #120230; tests/containerd/test_nri_resize.sh end to end). */
static void test_update_kubelet_cpuset(void **state)
{
	struct fx *f = *state;
	struct nct s = new_nct(f, POD_QOS_BURSTABLE, 0);
	struct nri_reply r;
	const struct nri_update *u;

	create(f, &s, &r);
	start_as_told(f, &s, &r);
	reply_free(&r);
	snprintf(s.nc.meta.runtime_cpus, sizeof(s.nc.meta.runtime_cpus), "1");
	s.nc.meta.runtime_sets_cpus = true;
	for (int i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		assert_int_equal(f->h.update_container(f->c, &s.nc, &r), 0);
		assert_non_null(u = update_of(&r, s.nc.id));
		assert_string_equal(u->cpus, "0-7");
		assert_string_equal(u->mems, "");	/* a pool's mems: left as they are */
		assert_int_equal(r.n_updates, 1);
		reply_free(&r);
	}
	assert_set(f, s.path, "cpuset.cpus", "0-7");
}

/*
 * Synchronize: the table is rebuilt from the live cgroups with NRI's
 * metadata (an annotated pod is known by its NRI annotations alone: no
 * bundle), and shared containers whose runtime record differs from the
 * kernel get updates; a created, not started container is admitted.
 */
static void test_synchronize(void **state)
{
	struct fx *f = *state;
	struct nct a = new_nct(f, POD_QOS_BURSTABLE, 0), s = new_nct(f, POD_QOS_BURSTABLE, 0);
	struct nct p = new_nct(f, POD_QOS_GUARANTEED, 2);
	struct nri_container cts[3];
	struct nri_reply r;
	const struct nri_update *u;
	struct cpumask m;
	uint64_t resyncs;

	/* two running before the plugin was there: placed by BPF, shared */
	make_cgroup(f, &a, NULL, NULL);
	send_mkdir(f, &a, 0);
	make_cgroup(f, &s, NULL, NULL);
	send_mkdir(f, &s, 0);
	assert_set(f, a.path, "cpuset.cpus", "0-7");

	a.nc.meta.cores_ids = strdup("4-5");
	assert_non_null(a.nc.meta.cores_ids);
	a.nc.state = s.nc.state = NRI_CONTAINER_RUNNING;
	snprintf(s.nc.meta.runtime_cpus, sizeof(s.nc.meta.runtime_cpus), "0-7");
	cts[0] = a.nc;
	cts[1] = s.nc;
	cts[2] = p.nc;		/* created, not started */
	memset(&r, 0, sizeof(r));
	assert_int_equal(f->h.synchronize(f->c, cts, 3, &r), 0);
	assert_set(f, a.path, "cpuset.cpus", "4-5");
	assert_set(f, a.path, "cpuset.mems", "0");
	assert_non_null(u = update_of(&r, a.nc.id));
	assert_string_equal(u->cpus, "4-5");
	assert_non_null(u = update_of(&r, s.nc.id));	/* its record said 0-7 */
	assert_int_equal(cpulist_parse(u->cpus, &m), 0);
	assert_false(cpumask_test(&m, 4));
	assert_false(cpumask_test(&m, 5));
	assert_int_equal(cpumask_weight(&m), 4);	/* minus 4-5 and p's 2 */
	assert_non_null(u = update_of(&r, p.nc.id));	/* admitted, told */
	assert_int_equal(cpulist_parse(u->cpus, &m), 0);
	assert_int_equal(cpumask_weight(&m), 2);
	assert_int_equal(COUNT(f, nri_synchronizes), 1);

	/* A reconnect: the runtime's records say what it was told, cpus and
	 * mems alike (p now started). Nothing to answer. */
	for (int i = 0; i < 3; i++) {
		struct pod_meta *m = &cts[i].meta;

		u = update_of(&r, cts[i].id);
		snprintf(m->runtime_cpus, sizeof(m->runtime_cpus), "%.64s", u->cpus);
		snprintf(m->runtime_mems, sizeof(m->runtime_mems), "%.64s", u->mems);
	}
	assert_string_equal(cts[0].meta.runtime_mems, "0");	/* a set of its own */
	make_cgroup(f, &p, cts[2].meta.runtime_cpus, "0");
	send_mkdir(f, &p, 0);
	cts[2].state = NRI_CONTAINER_RUNNING;
	reply_free(&r);
	memset(&r, 0, sizeof(r));
	resyncs = COUNT(f, resyncs);
	controller_exported(f->c, false);
	assert_int_equal(f->h.synchronize(f->c, cts, 3, &r), 0);
	assert_int_equal(r.n_updates, 0);
	assert_int_equal(COUNT(f, nri_synchronizes), 2);
	/* Nothing changed but its counter: still due for status.json (CI
	 * once waited out the heartbeat for it), and shown once only. */
	assert_true(controller_dirty(f->c));
	controller_exported(f->c, false);
	assert_false(controller_dirty(f->c));
	/* The table already says what the runtime says: no walk again. */
	assert_int_equal(COUNT(f, resyncs), resyncs);
	/* A record that lost the mems (only they): told again. */
	cts[2].meta.runtime_mems[0] = '\0';
	reply_free(&r);
	memset(&r, 0, sizeof(r));
	assert_int_equal(f->h.synchronize(f->c, cts, 3, &r), 0);
	assert_int_equal(r.n_updates, 1);
	assert_non_null(u = update_of(&r, p.nc.id));
	assert_string_equal(u->mems, "0");
	assert_int_equal(COUNT(f, resyncs), resyncs);	/* mems: not a policy input */
	/* Metadata that differs (another cores-ids for a): rebuilt from the
	 * cgroups, and a moves. */
	free(cts[0].meta.cores_ids);
	cts[0].meta.cores_ids = strdup("6-7");
	assert_non_null(cts[0].meta.cores_ids);
	reply_free(&r);
	memset(&r, 0, sizeof(r));
	assert_int_equal(f->h.synchronize(f->c, cts, 3, &r), 0);
	assert_int_equal(COUNT(f, resyncs), resyncs + 1);
	assert_set(f, a.path, "cpuset.cpus", "6-7");
	assert_non_null(u = update_of(&r, a.nc.id));
	assert_string_equal(u->cpus, "6-7");
	reply_free(&r);
	free(cts[0].meta.cores_ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stop_widens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_redecides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_kubelet_cpuset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synchronize, setup, teardown),
	};

	return cmocka_run_group_tests_name("controller's NRI stop, update, sync, v1 (" SNAP ")",
					   tests, group_setup, group_teardown);
}
