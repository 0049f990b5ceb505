// SPDX-License-Identifier: Apache-2.0
/*
 * The controller following CPU hotplug (controller_set_topology) on the
 * v1 and v2 trees of test_controller.h: a CPU goes offline as the kernel
 * shows it (sysfs, and on v1 every cpuset losing it), and nothing
 * offline is ever written.
 */
#include "test_controller.h"

/* --- hotplug --- */

static int drop_cpu;	/* the CPU strip_cpu removes */

/* nftw: takes drop_cpu out of every cpuset.cpus, as v1 does on offline. */
static int strip_cpu(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char dir[PATH_MAX];
	struct cpumask m;

	(void)st;
	if (flag != FTW_F || strcmp(path + ftw->base, "cpuset.cpus"))
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", ftw->base - 1, path);
	assert_int_equal(read_mask(dir, "", "cpuset.cpus", &m), 0);
	cpumask_clear(&m, (unsigned)drop_cpu);
	put_mask(dir, "", "cpuset.cpus", &m);
	return 0;
}

/* The snapshot with cpu offline, as x86 sysfs shows it (compare the real
 * 16em64t-4s2c2t-offlines): cpu/online and node0's cpulist lose it, its
 * topology/ directory goes. Read and inheriting from f->topo, as the
 * daemon reads a hotplug. */
static struct topology *topo_offline(struct fx *f, int cpu)
{
	char dir[PATH_MAX], cpudir[PATH_MAX + 64], cmd[PATH_MAX * 3];
	struct cpumask online = f->topo->online;
	struct topology *t;

	snprintf(dir, sizeof(dir), "%s/sys%u", f->dir, ++f->serial);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", sysfs, dir);
	assert_int_equal(system(cmd), 0);
	cpumask_clear(&online, (unsigned)cpu);
	put_mask(dir, "/devices/system/cpu", "online", &online);
	put_mask(dir, "/devices/system/node/node0", "cpulist", &online);
	snprintf(cpudir, sizeof(cpudir), "%s/devices/system/cpu/cpu%d", dir, cpu);
	put(cpudir, "", "online", "0\n");
	snprintf(cmd, sizeof(cmd), "%s/topology", cpudir);
	tl_rm_tree(cmd);
	assert_int_equal(topo_read(dir, &t), 0);
	topo_inherit(t, f->topo);
	return t;
}

/* Moves the controller to t; the old topology may go after. */
static void set_topology(struct fx *f, struct topology *t)
{
	struct topology *old = f->topo;

	assert_int_equal(controller_set_topology(f->c, t), 0);
	f->topo = t;
	topo_free(old);
}

/* No write the daemon tried since the log reset names cpu. */
static void assert_never_written(int cpu)
{
	struct cpumask m;

	assert_false(kern.overflow);
	for (unsigned i = 0; i < kern.n; i++) {
		if (!strstr(kern.log[i].file, "/cpuset.cpus"))
			continue;
		assert_int_equal(cpulist_parse(kern.log[i].value, &m), 0);
		if (cpumask_test(&m, (unsigned)cpu))
			fail_msg("%s = \"%s\" names offline CPU %d", kern.log[i].file,
				 kern.log[i].value, cpu);
	}
}

/*
 * One CPU of an integer container goes offline: the kernel drops it from
 * every cpuset; the container gets a replacement from the pool (shared
 * containers written first, since the replacement comes out of their
 * set) and keeps its other CPU; nothing offline is written. When it comes
 * back the top cpuset has it again and nothing else (v1): the pool grows
 * to it, which needs kubepods, the slice and the pod widened first (the
 * fake kernel refuses a set outside the parent's).
 */
static void test_hotplug(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct ct b2 = start(f, POD_QOS_BESTEFFORT, 0);
	struct cpumask was = assert_exclusive(f, &g, 2), now, all = f->topo->online;
	int lost = cpumask_next(&was, 0), kept = cpumask_next(&was, lost + 1);
	struct topology *t;

	drop_cpu = lost;
	assert_int_equal(nftw(f->cpuset, strip_cpu, 16, FTW_PHYS), 0);
	t = topo_offline(f, lost);
	log_reset();
	set_topology(f, t);
	now = assert_exclusive(f, &g, 2);
	assert_false(cpumask_test(&now, (unsigned)lost));
	assert_true(cpumask_test(&now, (unsigned)kept));
	assert_cpus(f, &b1, pool(f, &now));
	assert_cpus(f, &b2, pool(f, &now));
	assert_before(&b1, &g);
	assert_before(&b2, &g);
	assert_never_written(lost);

	put_mask(f->cpuset, "", "cpuset.cpus", &all);
	assert_int_equal(topo_read(sysfs, &t), 0);
	topo_inherit(t, f->topo);
	set_topology(f, t);
	now = assert_exclusive(f, &g, 2);
	assert_cpus(f, &b1, pool(f, &now));
	assert_cpus(f, &b2, pool(f, &now));
	now = cpus(f, &b1);
	assert_true(cpumask_test(&now, (unsigned)lost));
}


/* v2 hotplug: a CPU of the shared pool goes offline. v2 leaves every own
 * set alone and only the effective sets lose it; the tree is built again
 * (the root's parent is re-read), the pool loses the CPU, the integer
 * container keeps its CPUs, nothing offline is written, and a later
 * start does not build the tree again. */
static void test_v2_hotplug(void **state)
{
	struct fx *f = *state;
	struct ct b1 = start(f, POD_QOS_BURSTABLE, 0);
	struct ct g = start(f, POD_QOS_GUARANTEED, 2);
	struct cpumask excl = assert_exclusive(f, &g, 2), p = pool(f, &excl);
	int lost = cpumask_next(&p, 0);
	uint64_t builds = plan_builds(f);
	struct ct b2;

	cpumask_clear(&kern.top, (unsigned)lost);
	v2_sync();
	log_reset();
	set_topology(f, topo_offline(f, lost));
	assert_int_equal(plan_builds(f), builds + 1);
	assert_eff(f, &g, excl);
	assert_eff(f, &b1, pool(f, &excl));
	assert_never_written(lost);
	b2 = start(f, POD_QOS_BURSTABLE, 0);
	assert_eff(f, &b2, pool(f, &excl));
	assert_int_equal(plan_builds(f), builds + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hotplug, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_hotplug, setup_v2, teardown),
	};

	return cmocka_run_group_tests_name("controller, CPU hotplug, v1 and v2 (" SNAP ")",
					   tests, group_setup, group_teardown);
}
