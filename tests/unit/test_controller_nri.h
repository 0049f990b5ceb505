/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fixture of the controller's NRI tests (test_controller_nri*.c): a
 * temporary cgroup v1 tree in test_controller.h's layout (kubelet's
 * cgroupfs driver), containers as NRI describes them at CreateContainer,
 * the runtime's StartContainer, the replies, and a controller with NRI
 * enabled and connected, per test.
 *
 * write(2) is defined here for the binary: a write to a file of the
 * cpuset tree replaces its value (kernfs; the daemon keeps cpuset.cpus
 * open and writes at the advanced offset) and is logged, so "no write"
 * and "written" are facts, not guesses. Topology: the snapshot
 * 8em64t-2s2ca2c (8 CPUs, one NUMA node 0).
 *
 * Include once per test binary: it defines write(2) for the binary.
 */
#ifndef CPUSETD_TEST_CONTROLLER_NRI_H
#define CPUSETD_TEST_CONTROLLER_NRI_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

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
#include "user/controller/controller.h"
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
static inline unsigned writes_of(const char *cgroup, const char *file)
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
}

static inline struct cpumask get(const struct fx *f, const char *cgroup, const char *file)
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

static inline void mkcg(struct fx *f, const char *cgroup, const char *cpus, const char *mems)
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

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void send(struct fx *f, uint32_t type, const char *path, uint64_t id, uint64_t ts)
{
	struct cpusetd_event ev = { .ts_ns = ts ? ts : now_ns(), .cgroup_id = id, .type = type };

	if (type == CPUSETD_EV_EXEC) {
		ev.pid = (uint32_t)getpid();
		snprintf(ev.comm, sizeof(ev.comm), "app");
	} else {
		/* "%.*s": inlined, gcc sees a caller's longer buffer and warns */
		snprintf(ev.path, sizeof(ev.path), "%.*s", (int)sizeof(ev.path) - 1, path);
	}
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/*
 * A new pod of class qos with its sandbox's cgroup made and announced
 * (a running pause container: kubelet makes it first), and a container
 * of it as NRI describes it at CreateContainer: limit whole CPUs (0 = no
 * limit), its cgroup not made yet.
 */
static inline struct nct new_nct(struct fx *f, enum pod_qos qos, unsigned limit)
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
static inline void make_cgroup(struct fx *f, struct nct *t, const char *runtime_cpus,
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

static inline void send_mkdir(struct fx *f, const struct nct *t, uint64_t ts)
{
	send(f, CPUSETD_EV_MKDIR, t->path, t->id, ts);
}

/* The whole start as a runtime that applied our answer does it. */
static inline void start_as_told(struct fx *f, struct nct *t, const struct nri_reply *r)
{
	make_cgroup(f, t, r->cpus, r->mems[0] ? r->mems : NULL);
	send_mkdir(f, t, 0);
}

/* runc (pid: ours) wrote value to t's cpuset.cpus; the BPF hook says so. */
static inline void cpuset_write(struct fx *f, const struct nct *t, const char *value)
{
	struct cpusetd_event ev = { .ts_ns = now_ns(), .cgroup_id = t->id,
				    .type = CPUSETD_EV_CPUSET_WRITE, .arg = CPUSETD_FILE_CPUS,
				    .pid = (uint32_t)getpid() };

	snprintf(ev.comm, sizeof(ev.comm), "runc");
	/* the value written, cut to the field as with "%s" */
	snprintf(ev.path, sizeof(ev.path), "%.*s", (int)sizeof(ev.path) - 1, value);
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* ------------------------------------------------------ reply handling */

/* The layer frees a reply's updates after sending it; here, the test. */
static inline void reply_free(struct nri_reply *r)
{
	free(r->updates);
	memset(r, 0, sizeof(*r));
}

/* The update of id in r, or NULL. */
static inline const struct nri_update *update_of(const struct nri_reply *r, const char *id)
{
	for (size_t i = 0; i < r->n_updates; i++)
		if (strcmp(r->updates[i].container_id, id) == 0)
			return &r->updates[i];
	return NULL;
}

static inline void create(struct fx *f, const struct nct *t, struct nri_reply *r)
{
	memset(r, 0, sizeof(*r));
	kern.n = 0;
	assert_int_equal(f->h.create_container(f->c, &t->nc, r), 0);
}

static inline uint64_t counter(struct fx *f, size_t offset)
{
	struct snapshot s;
	uint64_t v;

	assert_int_equal(controller_snapshot(f->c, &s), 0);
	v = *(const uint64_t *)((const char *)s.n + offset);
	snapshot_release(&s);
	return v;
}

#define COUNT(f, name)	counter(f, offsetof(struct cpusetd_counters, name))

static inline void assert_set(const struct fx *f, const char *cgroup, const char *file,
			      const char *want)
{
	struct cpumask m = get(f, cgroup, file);

	tl_assert_mask(&m, want);
}

/* ----------------------------------------------------------- fixture */

static inline int setup(void **state)
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

static inline int teardown(void **state)
{
	struct fx *f = *state;

	controller_free(f->c);
	cgfs_free(f->cg);
	topo_free(f->topo);
	kern.len = 0;
	tl_rm_tree(f->dir);
	free(f);
	return 0;
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
