// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's NRI handlers (user/daemon/controller_nri.c, through
 * controller_nri_handlers) called directly with built struct
 * nri_container values, against a temporary cgroup v1 tree, with the BPF
 * events of the same containers through controller_handle: what the
 * runtime is told (the reply) and what the kernel holds (the cpuset files
 * the daemon wrote) are both checked.
 *
 * The tree is test_controller.c's v1 layout (kubelet's cgroupfs driver):
 *   <tmp>/cpuset/kubepods[/burstable|/besteffort]/pod<uid>/<64 hex id>/
 *   <tmp>/cpu/<same paths>/cpu.cfs_quota_us, cpu.cfs_period_us
 * NRI's CreateContainer comes when the pod's cgroup exists (its sandbox
 * runs) and the container's does not; the test makes the container's
 * cgroup afterwards, as the runtime does at StartContainer, and writes
 * into it what the runtime writes (the adjustment), or not.
 *
 * write(2) is defined here for the binary: a write to a file of the
 * cpuset tree replaces its value (kernfs; the daemon keeps cpuset.cpus
 * open and writes at the advanced offset) and is logged, so "no write"
 * and "written" are facts, not guesses. Topology: the snapshot
 * 8em64t-2s2ca2c (8 CPUs, one NUMA node 0).
 */
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
#include "cgroupfs/cgfs.h"
#include "maps/cpusetd.h"
#include "user/base/log.h"
#include "user/config/config.h"
#include "user/daemon/controller.h"
#include "user/export/snapshot.h"
#include "user/nri/nri.h"
#include "user/topo/topology.h"

#define SNAP		"8em64t-2s2ca2c"
#define PERIOD_US	100000
#define LOG_MAX		256

/* ------------------------------------------------ kernfs writes, logged */

static struct {
	char root[PATH_MAX];	/* the cpuset hierarchy's directory */
	size_t len;		/* 0: every write passes through */
	bool self;		/* the test (runtime, kubelet) writes */
	char file[LOG_MAX][CGFS_PATH_MAX + 32];
	char value[LOG_MAX][128];
	unsigned n;
} kern;

ssize_t write(int fd, const void *buf, size_t n)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t l;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (!kern.len || kern.self || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (l = readlink(link, path, sizeof(path) - 1)) <= (ssize_t)kern.len)
		return (ssize_t)syscall(SYS_write, fd, buf, n);
	path[l] = '\0';
	if (strncmp(path, kern.root, kern.len) || path[kern.len] != '/')
		return (ssize_t)syscall(SYS_write, fd, buf, n);
	if (kern.n < LOG_MAX) {
		snprintf(kern.file[kern.n], sizeof(kern.file[0]), "%s", path + kern.len);
		snprintf(kern.value[kern.n], sizeof(kern.value[0]), "%.*s",
			 (int)(n < 127 ? n : 127), (const char *)buf);
		kern.value[kern.n][strcspn(kern.value[kern.n], "\n")] = '\0';
		kern.n++;
	}
	if (pwrite(fd, buf, n, 0) != (ssize_t)n || ftruncate(fd, (off_t)n) < 0)
		return -1;
	return (ssize_t)n;
}

/* How many writes of cgroup's file the daemon made since the last reset. */
static unsigned writes_of(const char *cgroup, const char *file)
{
	char want[CGFS_PATH_MAX + 32];
	unsigned k = 0;

	snprintf(want, sizeof(want), "%s/%s", cgroup, file);
	for (unsigned i = 0; i < kern.n; i++)
		k += strcmp(kern.file[i], want) == 0;
	return k;
}

/* ----------------------------------------------------------- the tree */

struct fx {
	char dir[128], cpuset[160], cpu[160];
	struct cpusetd_config cfg;
	struct cgfs *cg;
	struct topology *topo;
	struct controller *c;
	struct nri_handlers h;
	unsigned serial;
};

/* A container as NRI and the kernel name it. */
struct nct {
	struct nri_container nc;
	char pod[CGFS_PATH_MAX];	/* its pod's cgroup */
	char path[CGFS_PATH_MAX];	/* its own, once made */
	uint64_t id;			/* kernfs id once made */
};

static char snapdir[] = "/tmp/test_controller_nri_snap.XXXXXX";
static char sysfs[PATH_MAX];

static void put(const char *dir, const char *cgroup, const char *file, const char *text)
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
}

static struct cpumask get(const struct fx *f, const char *cgroup, const char *file)
{
	char path[PATH_MAX * 2], buf[CPULIST_MAX] = "";
	struct cpumask m;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s%s/%s", f->cpuset, cgroup, file);
	assert_non_null(fp = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	assert_int_equal(cpulist_parse(buf, &m), 0);
	return m;
}

static void mkcg(struct fx *f, const char *cgroup, const char *cpus, const char *mems)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", f->cpuset, cgroup);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s%s", f->cpu, cgroup);
	assert_int_equal(mkdir(path, 0755), 0);
	put(f->cpuset, cgroup, "cpuset.cpus", cpus);
	put(f->cpuset, cgroup, "cpuset.mems", mems);
	put(f->cpuset, cgroup, "cgroup.procs", "");
	put(f->cpu, cgroup, "cpu.cfs_quota_us", "-1\n");
	snprintf(path, sizeof(path), "%d\n", PERIOD_US);
	put(f->cpu, cgroup, "cpu.cfs_period_us", path);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void send(struct fx *f, uint32_t type, const char *path, uint64_t id, uint64_t ts)
{
	struct cpusetd_event ev = { .ts_ns = ts ? ts : now_ns(), .cgroup_id = id, .type = type };

	if (type == CPUSETD_EV_EXEC) {
		ev.pid = (uint32_t)getpid();
		snprintf(ev.comm, sizeof(ev.comm), "app");
	} else {
		snprintf(ev.path, sizeof(ev.path), "%s", path);
	}
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/*
 * A new pod of class qos with its sandbox's cgroup made and announced
 * (a running pause container: kubelet makes it first), and a container
 * of it as NRI describes it at CreateContainer: limit whole CPUs (0 = no
 * limit), its cgroup not made yet.
 */
static struct nct new_nct(struct fx *f, enum pod_qos qos, unsigned limit)
{
	static const char *const slice[] = {
		[POD_QOS_GUARANTEED] = "", [POD_QOS_BURSTABLE] = "/burstable",
		[POD_QOS_BESTEFFORT] = "/besteffort",
	};
	unsigned n = ++f->serial;
	char sb[CGFS_PATH_MAX + 80], pid[32];
	struct nct t;
	uint64_t sb_id;

	memset(&t, 0, sizeof(t));
	snprintf(t.pod, 128, "/kubepods%s/pod%08x-0000-4000-8000-%012x", slice[qos], n, n);
	mkcg(f, t.pod, "0-7\n", "0\n");
	snprintf(sb, sizeof(sb), "%.128s/%012x%052x", t.pod, n + 0x1000, n);	/* the sandbox */
	mkcg(f, sb, "", "");
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(f->cpuset, sb, "cgroup.procs", pid);
	assert_int_equal(cgfs_cgroup_id(f->cg, sb, &sb_id), 0);
	send(f, CPUSETD_EV_MKDIR, sb, sb_id, 0);

	snprintf(t.nc.id, sizeof(t.nc.id), "%012x%052x", n, n);
	snprintf(t.nc.pod_cgroup_parent, sizeof(t.nc.pod_cgroup_parent), "%.128s", t.pod);
	t.nc.state = NRI_CONTAINER_CREATED;
	t.nc.meta.quota_us = -1;
	snprintf(t.nc.meta.namespace_, sizeof(t.nc.meta.namespace_), "default");
	snprintf(t.nc.meta.pod_name, sizeof(t.nc.meta.pod_name), "pod%u", n);
	snprintf(t.nc.meta.container_name, sizeof(t.nc.meta.container_name), "app");
	snprintf(t.nc.meta.pod_uid, sizeof(t.nc.meta.pod_uid), "%08x-0000-4000-8000-%012x", n, n);
	snprintf(t.nc.meta.sandbox_id, sizeof(t.nc.meta.sandbox_id), "%012x%052x", n + 0x1000, n);
	if (limit) {
		t.nc.meta.has_cpu_limit = true;
		t.nc.meta.quota_us = (int64_t)limit * PERIOD_US;
		t.nc.meta.period_us = PERIOD_US;
	}
	snprintf(t.nc.meta.cgroups_path, sizeof(t.nc.meta.cgroups_path), "%.128s/%s", t.pod, t.nc.id);
	snprintf(t.path, sizeof(t.path), "%s", t.nc.meta.cgroups_path);
	return t;
}

/* The runtime's StartContainer: the container's cgroup made (v1: empty
 * sets), its CPU limit written and its init in it; then, when runtime_cpus
 * is not NULL, the runtime's own write of the adjustment (runc's Set).
 * The mkdir event is the caller's (send_mkdir): its order is the test. */
static void make_cgroup(struct fx *f, struct nct *t, const char *runtime_cpus,
			const char *runtime_mems)
{
	char pid[32], q[32];

	mkcg(f, t->path, "", "");
	if (t->nc.meta.has_cpu_limit) {
		snprintf(q, sizeof(q), "%lld\n", (long long)t->nc.meta.quota_us);
		put(f->cpu, t->path, "cpu.cfs_quota_us", q);
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(f->cpuset, t->path, "cgroup.procs", pid);
	if (runtime_cpus)
		put(f->cpuset, t->path, "cpuset.cpus", runtime_cpus);
	if (runtime_mems)
		put(f->cpuset, t->path, "cpuset.mems", runtime_mems);
	assert_int_equal(cgfs_cgroup_id(f->cg, t->path, &t->id), 0);
}

static void send_mkdir(struct fx *f, const struct nct *t, uint64_t ts)
{
	send(f, CPUSETD_EV_MKDIR, t->path, t->id, ts);
}

/* The whole start as a runtime that applied our answer does it. */
static void start_as_told(struct fx *f, struct nct *t, const struct nri_reply *r)
{
	make_cgroup(f, t, r->cpus, r->mems[0] ? r->mems : NULL);
	send_mkdir(f, t, 0);
}

/* runc (pid: ours) wrote value to t's cpuset.cpus; the BPF hook says so. */
static void cpuset_write(struct fx *f, const struct nct *t, const char *value)
{
	struct cpusetd_event ev = { .ts_ns = now_ns(), .cgroup_id = t->id,
				    .type = CPUSETD_EV_CPUSET_WRITE, .arg = CPUSETD_FILE_CPUS,
				    .pid = (uint32_t)getpid() };

	snprintf(ev.comm, sizeof(ev.comm), "runc");
	snprintf(ev.path, sizeof(ev.path), "%s", value);
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* ------------------------------------------------------ reply handling */

/* The layer frees a reply's updates after sending it; here, the test. */
static void reply_free(struct nri_reply *r)
{
	free(r->updates);
	memset(r, 0, sizeof(*r));
}

/* The update of id in r, or NULL. */
static const struct nri_update *update_of(const struct nri_reply *r, const char *id)
{
	for (size_t i = 0; i < r->n_updates; i++)
		if (strcmp(r->updates[i].container_id, id) == 0)
			return &r->updates[i];
	return NULL;
}

static void create(struct fx *f, const struct nct *t, struct nri_reply *r)
{
	memset(r, 0, sizeof(*r));
	kern.n = 0;
	assert_int_equal(f->h.create_container(f->c, &t->nc, r), 0);
}

static uint64_t counter(struct fx *f, size_t offset)
{
	struct snapshot s;
	uint64_t v;

	assert_int_equal(controller_snapshot(f->c, &s), 0);
	v = *(const uint64_t *)((const char *)s.n + offset);
	snapshot_release(&s);
	return v;
}

#define COUNT(f, name)	counter(f, offsetof(struct cpusetd_counters, name))

static void assert_set(const struct fx *f, const char *cgroup, const char *file, const char *want)
{
	struct cpumask m = get(f, cgroup, file);

	tl_assert_mask(&m, want);
}

/* ----------------------------------------------------------- fixture */

static int setup(void **state)
{
	struct cgfs_mounts m = { .mode = CGFS_MODE_V1 };
	char tmpl[] = "/tmp/test_controller_nri.XXXXXX", dir[PATH_MAX], root[CGFS_PATH_MAX];
	struct fx *f = calloc(1, sizeof(*f));
	struct cpusetd_config *c;

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, dir));
	assert_true(strlen(dir) < sizeof(f->dir));
	strcpy(f->dir, dir);
	assert_int_equal(topo_read(sysfs, &f->topo), 0);
	kern.len = 0;
	snprintf(f->cpuset, sizeof(f->cpuset), "%s/cpuset", f->dir);
	snprintf(f->cpu, sizeof(f->cpu), "%s/cpu", f->dir);
	assert_int_equal(mkdir(f->cpuset, 0755), 0);
	assert_int_equal(mkdir(f->cpu, 0755), 0);
	put(f->cpuset, "", "cpuset.cpus", "0-7\n");
	put(f->cpuset, "", "cpuset.mems", "0\n");
	mkcg(f, "/kubepods", "0-7\n", "0\n");
	mkcg(f, "/kubepods/burstable", "0-7\n", "0\n");
	mkcg(f, "/kubepods/besteffort", "0-7\n", "0\n");

	c = &f->cfg;
	*c = (struct cpusetd_config){ .n_bundle_paths = 1 };
	c->policy.min_shared_cpus = 1;
	c->policy.on_error = POLICY_ON_ERROR_REJECT;
	config_policy_defaults(&c->policy);
	snprintf(c->policy.cores_ids_namespaces, sizeof(c->policy.cores_ids_namespaces), "default");
	snprintf(c->bundle_paths[0], sizeof(c->bundle_paths[0]), "%s/bundles/{id}/config.json",
		 f->dir);
	snprintf(c->kubelet_pods_dir, sizeof(c->kubelet_pods_dir), "%s/pods", f->dir);

	snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s", f->cpuset);
	snprintf(m.cpu_mnt, sizeof(m.cpu_mnt), "%s", f->cpu);
	assert_int_equal(cgfs_open(&m, &f->cg), 0);
	snprintf(kern.root, sizeof(kern.root), "%s", f->cpuset);
	kern.len = strlen(kern.root);
	kern.n = 0;
	assert_int_equal(cgfs_find_kubepods_root(f->cg, root, sizeof(root)), 0);
	assert_int_equal(controller_new(&f->cfg, f->cg, f->topo, root, &f->c), 0);
	assert_int_equal(controller_nri_enable(f->c), 0);
	assert_int_equal(controller_resync(f->c), 0);
	controller_nri_handlers(&f->h);
	f->h.connected(f->c, true, "containerd", "2.1.9");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	controller_free(f->c);
	cgfs_free(f->cg);
	topo_free(f->topo);
	kern.len = 0;
	rm_tree(f->dir);
	free(f);
	return 0;
}

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
	assert_int_equal(f->h.synchronize(f->c, cts, 3, &r), 0);
	assert_int_equal(r.n_updates, 0);
	assert_int_equal(COUNT(f, nri_synchronizes), 2);
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

static int group_setup(void **state)
{
	const char *lvl = getenv("CPUSETD_TEST_LOG");

	(void)state;
	if (!lvl || log_parse_level(lvl, &log_max_level) < 0)
		log_max_level = LOG_CRIT;
	if (!mkdtemp(snapdir))
		return -1;
	if (tl_extract_snapshot(SNAP, snapdir) < 0) {
		rm_tree(snapdir);
		return -1;
	}
	snprintf(sysfs, sizeof(sysfs), "%s/" SNAP "/sys", snapdir);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	rm_tree(snapdir);
	return 0;
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
		cmocka_unit_test_setup_teardown(test_stop_widens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_redecides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_kubelet_cpuset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synchronize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_root, setup, teardown),
	};

	return cmocka_run_group_tests_name("controller's NRI handlers on a v1 tree (" SNAP ")",
					   tests, group_setup, group_teardown);
}
