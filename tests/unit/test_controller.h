/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's test fixture (test_controller*.c): a temporary cgroup
 * tree laid out as kubelet and runc lay it out, containers and their
 * events, a controller made and freed in one place, and the checks that
 * read back what it wrote.
 *
 * The tree, per test, as kubelet (cgroupfs driver) and runc lay it out:
 *   <tmp>/cpuset/{cpuset.cpus,cpuset.mems}                 the top cpuset
 *   <tmp>/cpuset/kubepods[/burstable|/besteffort]/pod<uid>/<64 hex id>/
 *       cpuset.cpus, cpuset.mems, cgroup.procs (our pid = has a task)
 *   <tmp>/cpu/<same paths>/cpu.cfs_quota_us, cpu.cfs_period_us
 * No bundle exists, so metadata comes from the cgroup files: QoS from the
 * path, the CPU limit from the quota (Guaranteed + quota = N periods =
 * integer, N exclusive CPUs). Topology: the real snapshot 8em64t-2s2ca2c
 * (8 CPUs, 2 packages, one NUMA node 0, no SMT); min_shared_cpus 1.
 *
 * The controller is made and freed only in ctl_start/ctl_stop, and used
 * through controller.h alone. The writes go through
 * test_controller_kern.h's kernel side.
 */
#ifndef CPUSETD_TEST_CONTROLLER_H
#define CPUSETD_TEST_CONTROLLER_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "testlib.h"
#include "test_controller_kern.h"
#include "cgroupfs/cgfs.h"
#include "maps/cpusetd.h"
#include "user/base/log.h"
#include "user/config/config.h"
#include "user/controller/controller.h"
#include "user/export/snapshot.h"
#include "user/topo/topology.h"

#define SNAP		"8em64t-2s2ca2c"
#define PERIOD_US	100000

/* ----------------------------------------------------------- the tree */

struct fx {
	char dir[128];			/* this test's directory, resolved */
	char cpuset[160], cpu[160];	/* the two hierarchies in it */
	struct cpusetd_config cfg;
	struct cgfs *cg;
	struct topology *topo;
	struct controller *c;
	unsigned serial;		/* names pods, containers, snapshots */
	bool v2;			/* one v2 hierarchy: cpuset == cpu */
};

/* A container cgroup as events and assertions name it. */
struct ct {
	char path[CGFS_PATH_MAX];
	uint64_t id;			/* kernfs id: st_ino, as cgfs reads it */
};

static char snapdir[] = "/tmp/test_controller_snap.XXXXXX";
static char sysfs[PATH_MAX];		/* the pristine snapshot's /sys */

/* Writes text to dir/cgroup/file as the test (the runtime, kubelet, the
 * kernel), not the daemon: truncated, not logged. */
static inline void put(const char *dir, const char *cgroup, const char *file, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s/%s", dir, cgroup, file);
	kern.self = true;
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	kern.self = false;
	if (!strcmp(file, "cpuset.cpus"))
		v2_sync();
}

static inline void put_mask(const char *dir, const char *cgroup, const char *file,
		     const struct cpumask *m)
{
	char buf[CPULIST_MAX + 1];
	int n = cpulist_format(m, buf, sizeof(buf) - 1);

	assert_true(n >= 0);
	strcpy(buf + n, "\n");
	put(dir, cgroup, file, buf);
}

static inline struct cpumask get(const struct fx *f, const char *cgroup, const char *file)
{
	struct cpumask m;
	int r = read_mask(f->cpuset, cgroup, file, &m);

	if (r < 0)
		fail_msg("%s/%s: %s", cgroup, file, strerror(-r));
	return m;
}

static inline struct cpumask cpus(const struct fx *f, const struct ct *ct)
{
	return get(f, ct->path, "cpuset.cpus");
}

/* v2: the set cgroup's tasks run on. */
static inline struct cpumask eff(const struct fx *f, const char *cgroup)
{
	return get(f, cgroup, "cpuset.cpus.effective");
}

/* A cgroup in both hierarchies with the given cpuset, no task, no limit. */
static inline void mkcg(struct fx *f, const char *cgroup, const char *cpus_, const char *mems)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", f->cpuset, cgroup);
	assert_int_equal(mkdir(path, 0755), 0);
	if (f->v2) {		/* a new v2 cgroup: "" sets, no limit, no task */
		put(f->cpuset, cgroup, "cgroup.procs", "");
		put(f->cpuset, cgroup, "cgroup.events", "populated 0\nfrozen 0\n");
		snprintf(path, sizeof(path), "max %d\n", PERIOD_US);
		put(f->cpu, cgroup, "cpu.max", path);
		put(f->cpuset, cgroup, "cpuset.mems", "");
		put(f->cpuset, cgroup, "cpuset.cpus", "");
		return;
	}
	snprintf(path, sizeof(path), "%s%s", f->cpu, cgroup);
	assert_int_equal(mkdir(path, 0755), 0);
	put(f->cpuset, cgroup, "cpuset.cpus", cpus_);
	put(f->cpuset, cgroup, "cpuset.mems", mems);
	put(f->cpuset, cgroup, "cgroup.procs", "");
	put(f->cpu, cgroup, "cpu.cfs_quota_us", "-1\n");
	snprintf(path, sizeof(path), "%d\n", PERIOD_US);
	put(f->cpu, cgroup, "cpu.cfs_period_us", path);
}

static inline void set_tasks(struct fx *f, const struct ct *ct, bool running)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(f->cpuset, ct->path, "cgroup.procs", running ? pid : "");
	if (f->v2)
		put(f->cpuset, ct->path, "cgroup.events",
		    running ? "populated 1\nfrozen 0\n" : "populated 0\nfrozen 0\n");
}

/* The CPU limit as kubelet writes it: cpus whole CPUs, 0 = none. */
static inline void set_limit(struct fx *f, const struct ct *ct, unsigned cpus_)
{
	char quota[32];

	if (f->v2) {
		if (cpus_)
			snprintf(quota, sizeof(quota), "%u %d\n", cpus_ * PERIOD_US, PERIOD_US);
		else
			snprintf(quota, sizeof(quota), "max %d\n", PERIOD_US);
		put(f->cpu, ct->path, "cpu.max", quota);
		return;
	}
	snprintf(quota, sizeof(quota), "%lld\n", cpus_ ? (long long)cpus_ * PERIOD_US : -1LL);
	put(f->cpu, ct->path, "cpu.cfs_quota_us", quota);
}

/*
 * A container in a new pod of class qos, as the runtime leaves it at the
 * mkdir event: its pod copied its parent's sets (kubelet), the container
 * cgroup's own are empty (a new v1 cpuset), its CPU limit is written, and
 * its init is there when running.
 */
static inline struct ct new_ct(struct fx *f, enum pod_qos qos, unsigned limit, bool running)
{
	static const char *const slice[] = {
		[POD_QOS_GUARANTEED] = "", [POD_QOS_BURSTABLE] = "/burstable",
		[POD_QOS_BESTEFFORT] = "/besteffort",
	};
	char parent[64], pod[160], set[CPULIST_MAX], mems[CPULIST_MAX];
	unsigned n = ++f->serial;
	struct cpumask m;
	struct ct ct;

	snprintf(parent, sizeof(parent), "/kubepods%s", slice[qos]);
	snprintf(pod, sizeof(pod), "%s/pod%08x-0000-4000-8000-%012x", parent, n, n);
	m = get(f, parent, "cpuset.cpus");
	cpulist_format(&m, set, sizeof(set));
	m = get(f, parent, "cpuset.mems");
	cpulist_format(&m, mems, sizeof(mems));
	mkcg(f, pod, set, mems);
	snprintf(ct.path, sizeof(ct.path), "%s/%012x%052x", pod, n, n);	/* 64 hex */
	mkcg(f, ct.path, "", "");
	set_limit(f, &ct, limit);
	set_tasks(f, &ct, running);
	assert_int_equal(cgfs_cgroup_id(f->cg, ct.path, &ct.id), 0);
	return ct;
}

/* Removes the container's cgroup from both hierarchies (the runtime's
 * rmdir after its last task left). */
static inline void remove_ct(struct fx *f, const struct ct *ct)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", f->cpuset, ct->path);
	tl_rm_tree(path);
	snprintf(path, sizeof(path), "%s%s", f->cpu, ct->path);
	tl_rm_tree(path);		/* v2: the same directory, gone already */
}

/* ------------------------------------------------------------ events */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the clock BPF stamps with */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* An event about ct as the BPF side fills it (maps/cpusetd.h). */
static inline struct cpusetd_event event(uint32_t type, const struct ct *ct, uint32_t arg)
{
	struct cpusetd_event ev = {
		.ts_ns = now_ns(), .cgroup_id = ct->id, .type = type, .arg = arg,
	};

	if (type == CPUSETD_EV_EXEC) {		/* no path; the task and its comm */
		ev.pid = (uint32_t)getpid();
		snprintf(ev.comm, sizeof(ev.comm), "app");
	} else {
		snprintf(ev.path, sizeof(ev.path), "%s", ct->path);
	}
	for (const char *p = ct->path; *p; p++)
		ev.level += *p == '/';
	return ev;
}

static inline void send(struct fx *f, uint32_t type, const struct ct *ct, uint32_t arg)
{
	struct cpusetd_event ev = event(type, ct, arg);

	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* Another process named comm writes value to ct's file (cpuset.cpus or
 * cpuset.mems); the hook reports it after the write went through, with the
 * bytes (the BPF hooks) or without (fanotify). */
static inline void foreign_write_by(struct fx *f, const struct ct *ct, const char *file,
			     const char *value, const char *comm, bool bytes)
{
	bool cpus_ = strcmp(file, "cpuset.cpus") == 0;
	struct cpusetd_event ev = event(CPUSETD_EV_CPUSET_WRITE, ct,
					cpus_ ? CPUSETD_FILE_CPUS : CPUSETD_FILE_MEMS);

	put(f->cpuset, ct->path, file, value);
	ev.level = 0;
	ev.pid = (uint32_t)getpid();
	snprintf(ev.comm, sizeof(ev.comm), "%s", comm);
	ev.path[0] = '\0';
	if (bytes)
		/* the value written, cut to the field as BPF cuts it ("%.*s":
		 * inlined into a caller with a long buffer, "%s" warns) */
		snprintf(ev.path, sizeof(ev.path), "%.*s", (int)sizeof(ev.path) - 1, value);
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* kubelet writes value to ct's cpuset.cpus (a BPF hook reports it). */
static inline void foreign_write(struct fx *f, const struct ct *ct, const char *value)
{
	foreign_write_by(f, ct, "cpuset.cpus", value, "kubelet", true);
}

/* A running container of class qos, announced by its mkdir event. */
static inline struct ct start(struct fx *f, enum pod_qos qos, unsigned limit)
{
	struct ct ct = new_ct(f, qos, limit, true);

	send(f, CPUSETD_EV_MKDIR, &ct, 0);
	return ct;
}

/* ----------------------------------------------------------- fixture */

/* The one place a controller is made. */
static inline void ctl_start(struct fx *f)
{
	char root[CGFS_PATH_MAX];

	assert_int_equal(cgfs_find_kubepods_root(f->cg, root, sizeof(root)), 0);
	assert_int_equal(controller_new(&f->cfg, f->cg, f->topo, root, &f->c), 0);
}

/* The one place it is freed. */
static inline void ctl_stop(struct fx *f)
{
	controller_free(f->c);
	f->c = NULL;
}

static inline void config(struct fx *f)
{
	struct cpusetd_config *c = &f->cfg;

	*c = (struct cpusetd_config){ .n_bundle_paths = 1 };
	c->policy.min_shared_cpus = 1;
	c->policy.on_error = POLICY_ON_ERROR_REJECT;
	config_policy_defaults(&c->policy);
	snprintf(c->bundle_paths[0], sizeof(c->bundle_paths[0]), "%s/bundles/{id}/config.json",
		 f->dir);
	snprintf(c->kubelet_pods_dir, sizeof(c->kubelet_pods_dir), "%s/pods", f->dir);
}

/* The top cpuset holds the online CPUs and node 0; kubelet's root and
 * QoS slices copy it. */
static inline void make_tree(struct fx *f)
{
	char online[CPULIST_MAX + 1];

	assert_true(cpulist_format(&f->topo->online, online, sizeof(online) - 1) > 0);
	strcat(online, "\n");
	if (f->v2) {	/* the top: effective sets only; kubepods and slices "" */
		snprintf(f->cpuset, sizeof(f->cpuset), "%s/unified", f->dir);
		snprintf(f->cpu, sizeof(f->cpu), "%s", f->cpuset);
		assert_int_equal(mkdir(f->cpuset, 0755), 0);
		put(f->cpuset, "", "cpuset.mems.effective", "0\n");
		put(f->cpuset, "", "cpuset.cpus.effective", online);
		mkcg(f, "/kubepods", "", "");
		mkcg(f, "/kubepods/burstable", "", "");
		mkcg(f, "/kubepods/besteffort", "", "");
		return;
	}
	snprintf(f->cpuset, sizeof(f->cpuset), "%s/cpuset", f->dir);
	snprintf(f->cpu, sizeof(f->cpu), "%s/cpu", f->dir);
	assert_int_equal(mkdir(f->cpuset, 0755), 0);
	assert_int_equal(mkdir(f->cpu, 0755), 0);
	put(f->cpuset, "", "cpuset.cpus", online);
	put(f->cpuset, "", "cpuset.mems", "0\n");
	mkcg(f, "/kubepods", online, "0\n");
	mkcg(f, "/kubepods/burstable", online, "0\n");
	mkcg(f, "/kubepods/besteffort", online, "0\n");
}

/* A fresh tree of the given kind and a controller started on it. */
static inline int setup_tree(void **state, bool v2)
{
	struct cgfs_mounts m = { .mode = v2 ? CGFS_MODE_V2 : CGFS_MODE_V1, .cpuset_on_v2 = v2 };
	char tmpl[] = "/tmp/test_controller.XXXXXX", dir[PATH_MAX];
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, dir));	/* /proc/self/fd shows it so */
	assert_true(strlen(dir) < sizeof(f->dir));
	strcpy(f->dir, dir);
	f->v2 = v2;
	assert_int_equal(topo_read(sysfs, &f->topo), 0);
	kern.len = 0;		/* no rules while the test builds the tree */
	kern.v2 = v2;
	kern.top = f->topo->online;
	make_tree(f);
	config(f);
	snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s", f->cpuset);
	snprintf(m.cpu_mnt, sizeof(m.cpu_mnt), "%s", f->cpu);
	assert_int_equal(cgfs_open(&m, &f->cg), 0);
	snprintf(kern.root, sizeof(kern.root), "%s", f->cpuset);
	kern.len = strlen(kern.root);
	kern.self = false;	/* a failed put() may have left it set */
	v2_sync();
	log_reset();
	ctl_start(f);
	assert_int_equal(controller_resync(f->c), 0);	/* as the daemon starts */
	*state = f;
	return 0;
}

static inline int setup(void **state)
{
	return setup_tree(state, false);
}

static inline int setup_v2(void **state)
{
	return setup_tree(state, true);
}

static inline int teardown(void **state)
{
	struct fx *f = *state;

	if (f->c)
		ctl_stop(f);
	cgfs_free(f->cg);
	topo_free(f->topo);
	kern.len = 0;
	kern.v2 = false;
	tl_rm_tree(f->dir);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ checks */

static inline const char *fmt(const struct cpumask *m, char *buf)
{
	cpulist_format(m, buf, CPULIST_MAX);
	return buf;
}

static inline void assert_cpus(const struct fx *f, const struct ct *ct, struct cpumask want)
{
	struct cpumask got = cpus(f, ct);
	char a[CPULIST_MAX], b[CPULIST_MAX];

	if (!cpumask_equal(&got, &want))
		fail_msg("%s: cpus \"%s\", want \"%s\"", ct->path, fmt(&got, a), fmt(&want, b));
}

/* cgroup's cpuset.mems reads as the cpulist want. */
static inline void assert_mems(const struct fx *f, const struct ct *ct, const char *want)
{
	struct cpumask got = get(f, ct->path, "cpuset.mems");

	tl_assert_mask(&got, want);
}

/* ct holds n online CPUs (v2: runs on them, its pod may hold them);
 * returns them. */
static inline struct cpumask assert_exclusive(const struct fx *f, const struct ct *ct, unsigned n)
{
	struct cpumask got = f->v2 ? eff(f, ct->path) : cpus(f, ct);
	char a[CPULIST_MAX];

	if (cpumask_weight(&got) != n || !cpumask_subset(&got, &f->topo->online))
		fail_msg("%s: cpus \"%s\", want %u online CPUs", ct->path, fmt(&got, a), n);
	return got;
}

/* The shared pool when excl is reserved: online − excl. */
static inline struct cpumask pool(const struct fx *f, const struct cpumask *excl)
{
	struct cpumask m;

	cpumask_andnot(&m, &f->topo->online, excl);
	return m;
}

/* cgroup a's cpuset.cpus was written, and each write of it came before
 * the first write of b's. */
static inline void assert_before(const struct ct *a, const struct ct *b)
{
	int la = write_at(a->path, "cpuset.cpus", true);
	int fb = write_at(b->path, "cpuset.cpus", false);

	if (la < 0 || fb < 0 || la > fb)
		fail_msg("%s written at %d, %s at %d: want the first before", a->path, la,
			 b->path, fb);
}

static inline void assert_no_writes(void)
{
	assert_false(kern.overflow);
	if (kern.n)
		fail_msg("%u writes, the first %s = \"%s\"; want none", kern.n,
			 kern.log[0].file, kern.log[0].value);
}

/* ct runs on exactly want (its effective set, as its tasks see it). */
static inline void assert_eff(const struct fx *f, const struct ct *ct, struct cpumask want)
{
	struct cpumask got = eff(f, ct->path);
	char a[CPULIST_MAX], b[CPULIST_MAX];

	if (!cpumask_equal(&got, &want))
		fail_msg("%s: effective \"%s\", want \"%s\"", ct->path, fmt(&got, a), fmt(&want, b));
}

/* The v2 planner's whole-tree builds so far (status.json counters). */
static inline uint64_t plan_builds(const struct fx *f)
{
	struct snapshot snap;
	uint64_t n;

	assert_int_equal(controller_snapshot(f->c, &snap), 0);
	n = snap.n->plan_builds;
	snapshot_release(&snap);
	return n;
}

static inline int group_setup(void **state)
{
	(void)state;
	return tl_snapshot_group_setup(SNAP, snapdir, sysfs, sizeof(sysfs));
}

static inline int group_teardown(void **state)
{
	(void)state;
	tl_rm_tree(snapdir);
	return 0;
}

#endif
