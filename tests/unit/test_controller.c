// SPDX-License-Identifier: Apache-2.0
/*
 * The controller (user/daemon/controller.h) driven against a temporary
 * cgroup v1 tree, and a v2 one for the hierarchical writes (the test_v2_*
 * cases), without BPF: events in through controller_handle, the outcome
 * read back from the cpuset files it wrote, which are the truth the
 * daemon leaves on a node.
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
 * Regular files are not kernfs: a write(2) without O_TRUNC leaves the tail
 * of a longer old value, and the controller keeps cpuset.cpus open and
 * writes it again at the advanced offset. So this file defines write(2)
 * for the whole test binary (the library's calls bind to it): a write to
 * a file of the cpuset hierarchy behaves as on v1 (the value replaces the
 * file; the top cpuset is read-only; a set outside the parent's is
 * EACCES; a removed cgroup's file is ENODEV) and is recorded in order in
 * kern.log. The log is how ordering is checked (who wrote first), and
 * that nothing offline was ever written; every other fd is passed
 * through untouched.
 *
 * The v2 tree is one hierarchy (<tmp>/unified, cpu.max beside the cpuset
 * files, cgroup.events for "populated"); a new cgroup's cpuset.cpus is
 * "" there. Its writes follow v2's rules instead (cgroup-v2.rst "Cpuset":
 * any set may be written; "" is refused for a cgroup with tasks and a set
 * of its own, ENOSPC), and after each one every cpuset.cpus.effective of
 * the tree is computed again: own ∩ the parent's effective set, the
 * parent's when that is empty.
 *
 * The controller is made and freed only in ctl_start/ctl_stop, and used
 * through controller.h alone.
 */
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
#include "cgroupfs/cgfs.h"
#include "maps/cpusetd.h"
#include "user/base/log.h"
#include "user/config/config.h"
#include "user/daemon/controller.h"
#include "user/export/snapshot.h"
#include "user/topo/topology.h"

#define SNAP		"8em64t-2s2ca2c"
#define PERIOD_US	100000
#define LOG_MAX		512
#define FILE_MAX	(CGFS_PATH_MAX + 32)	/* "/<cgroup>/<file>" */

/* ------------------------------------------- the kernel side of cpusets */

struct kwrite {
	char file[FILE_MAX];		/* "/kubepods/.../cpuset.cpus" */
	char value[128];
	int err;			/* errno returned; 0 = written */
};

static struct {
	char root[PATH_MAX];	/* the cpuset hierarchy's directory */
	size_t len;		/* 0: no tree, every write passes through */
	bool v2;		/* v2 rules and effective sets */
	struct cpumask top;	/* v2: the top's effective set (online) */
	bool self;		/* the test is writing, not the daemon */
	struct kwrite log[LOG_MAX];
	unsigned n;
	bool overflow;
} kern;

/* Reads cgroup's file (absolute directory dir) into *ret. 0 or -errno. */
static int read_mask(const char *dir, const char *cgroup, const char *file, struct cpumask *ret)
{
	char path[PATH_MAX * 2], buf[CPULIST_MAX] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s%s/%s", dir, cgroup, file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return cpulist_parse(buf, ret);
}

/*
 * The v1 rule for a write of want to cgroup cg's file base
 * (cgroup-v1/cpusets.rst, kernel cpuset1_validate_change): a cpuset's
 * cpus/mems must be within its parent's. Returns 0 or the kernel's errno.
 */
static int v1_rule(char *cg, const char *base, const struct cpumask *want)
{
	struct cpumask have;

	*strrchr(cg, '/') = '\0';	/* its parent */
	if (read_mask(kern.root, cg, base, &have) < 0)
		return EIO;
	return cpumask_subset(want, &have) ? 0 : EACCES;
}

/*
 * The v2 rule (cgroup-v2.rst "Cpuset", kernel cpuset.c validate_change):
 * any set is accepted, but "" not while the cgroup has tasks and a set of
 * its own (ENOSPC).
 */
static int v2_rule(const char *cg, const char *base, const struct cpumask *want)
{
	char procs[32] = "", path[PATH_MAX * 2];
	struct cpumask have;
	FILE *fp;

	if (!cpumask_empty(want) || read_mask(kern.root, cg, base, &have) < 0 ||
	    cpumask_empty(&have))
		return 0;
	snprintf(path, sizeof(path), "%s%s/cgroup.procs", kern.root, cg);
	fp = fopen(path, "r");
	if (fp) {
		if (!fgets(procs, sizeof(procs), fp))
			procs[0] = '\0';
		fclose(fp);
	}
	return procs[0] && procs[0] != '\n' ? ENOSPC : 0;
}

/*
 * What a write of value to file ("/<cgroup>/<file>") meets: a cpuset file
 * must parse, the top's cannot be written (v1: it follows the online
 * CPUs; v2: it has none), then v1's or v2's rule. Other files take any
 * value. Returns 0 or the errno the kernel gives.
 */
static int cpuset_check(const char *file, const char *value)
{
	char cg[FILE_MAX];
	const char *base = strrchr(file, '/') + 1;
	struct cpumask want;

	if (strcmp(base, "cpuset.cpus") && strcmp(base, "cpuset.mems"))
		return 0;
	if (cpulist_parse(value, &want) < 0)
		return EINVAL;
	snprintf(cg, sizeof(cg), "%s", file);
	*strrchr(cg, '/') = '\0';	/* the cgroup; "" is the top */
	if (!cg[0])
		return EACCES;
	return kern.v2 ? v2_rule(cg, base, &want) : v1_rule(cg, base, &want);
}

/* v2: writes dir's cpuset.cpus.effective from its own set and the
 * parent's effective set pe, then its children's. */
static void v2_effective(const char *dir, const struct cpumask *pe)
{
	char path[PATH_MAX], buf[CPULIST_MAX + 1];
	struct cpumask own, eff;
	struct dirent *e;
	DIR *d;
	FILE *fp;

	if (read_mask(dir, "", "cpuset.cpus", &own) < 0)
		cpumask_zero(&own);	/* the top: no cpuset.cpus */
	cpumask_and(&eff, &own, pe);
	if (cpumask_empty(&eff))
		eff = *pe;
	cpulist_format(&eff, buf, sizeof(buf) - 1);
	strcat(buf, "\n");
	snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs(buf, fp);
	fclose(fp);
	assert_non_null(d = opendir(dir));
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			v2_effective(path, &eff);
		}
	closedir(d);
}

/* v2: every effective set of the tree after a change. */
static void v2_sync(void)
{
	bool self = kern.self;

	if (!kern.v2 || !kern.len)
		return;
	kern.self = true;	/* the kernel's own writes: not logged */
	v2_effective(kern.root, &kern.top);
	kern.self = self;
}

static void note(const char *file, const char *value, int err)
{
	struct kwrite *w;

	if (kern.n == LOG_MAX) {
		kern.overflow = true;
		return;
	}
	w = &kern.log[kern.n++];
	snprintf(w->file, sizeof(w->file), "%s", file);
	snprintf(w->value, sizeof(w->value), "%s", value);
	w->value[strcspn(w->value, "\n")] = '\0';
	w->err = err;
}

/* kernfs: one write is one whole value, which replaces the old one. */
static ssize_t kernfs_write(int fd, const struct stat *st, const char *file,
			    const void *buf, size_t n)
{
	char value[CPULIST_MAX] = "";
	int err;

	if (st->st_nlink == 0)
		err = ENODEV;		/* the cgroup was removed */
	else if (n >= sizeof(value))
		err = EINVAL;
	else {
		memcpy(value, buf, n);
		value[n] = '\0';
		err = cpuset_check(file, value);
	}
	note(file, value, err);
	if (!err && (pwrite(fd, buf, n, 0) != (ssize_t)n || ftruncate(fd, (off_t)n) < 0))
		err = errno;
	if (!err)
		v2_sync();
	if (err) {
		errno = err;
		return -1;
	}
	return (ssize_t)n;
}

/* The file fd is open on, as "/<cgroup>/<file>" below the cpuset
 * hierarchy; false for any other fd. */
static bool tree_file(int fd, char *ret, size_t len)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= (ssize_t)kern.len)
		return false;
	path[n] = '\0';
	if (strncmp(path, kern.root, kern.len) || path[kern.len] != '/' ||
	    (size_t)n - kern.len >= len)
		return false;
	snprintf(ret, len, "%s", path + kern.len);
	return true;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	char file[FILE_MAX];
	struct stat st;

	if (!kern.len || kern.self || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !tree_file(fd, file, sizeof(file)))
		return (ssize_t)syscall(SYS_write, fd, buf, n);
	return kernfs_write(fd, &st, file, buf, n);
}

static void log_reset(void)
{
	kern.n = 0;
	kern.overflow = false;
}

/* Position in the log of the first (or last) write of cgroup's file that
 * went through; -1 when none did. */
static int write_at(const char *cgroup, const char *file, bool last)
{
	char want[FILE_MAX];
	int at = -1;

	assert_false(kern.overflow);
	snprintf(want, sizeof(want), "%s/%s", cgroup, file);
	for (unsigned i = 0; i < kern.n; i++) {
		if (kern.log[i].err || strcmp(kern.log[i].file, want))
			continue;
		at = (int)i;
		if (!last)
			break;
	}
	return at;
}

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
	if (!strcmp(file, "cpuset.cpus"))
		v2_sync();
}

static void put_mask(const char *dir, const char *cgroup, const char *file,
		     const struct cpumask *m)
{
	char buf[CPULIST_MAX + 1];
	int n = cpulist_format(m, buf, sizeof(buf) - 1);

	assert_true(n >= 0);
	strcpy(buf + n, "\n");
	put(dir, cgroup, file, buf);
}

static struct cpumask get(const struct fx *f, const char *cgroup, const char *file)
{
	struct cpumask m;
	int r = read_mask(f->cpuset, cgroup, file, &m);

	if (r < 0)
		fail_msg("%s/%s: %s", cgroup, file, strerror(-r));
	return m;
}

static struct cpumask cpus(const struct fx *f, const struct ct *ct)
{
	return get(f, ct->path, "cpuset.cpus");
}

/* v2: the set cgroup's tasks run on. */
static struct cpumask eff(const struct fx *f, const char *cgroup)
{
	return get(f, cgroup, "cpuset.cpus.effective");
}

/* A cgroup in both hierarchies with the given cpuset, no task, no limit. */
static void mkcg(struct fx *f, const char *cgroup, const char *cpus_, const char *mems)
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

static void set_tasks(struct fx *f, const struct ct *ct, bool running)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(f->cpuset, ct->path, "cgroup.procs", running ? pid : "");
	if (f->v2)
		put(f->cpuset, ct->path, "cgroup.events",
		    running ? "populated 1\nfrozen 0\n" : "populated 0\nfrozen 0\n");
}

/* The CPU limit as kubelet writes it: cpus whole CPUs, 0 = none. */
static void set_limit(struct fx *f, const struct ct *ct, unsigned cpus_)
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
static struct ct new_ct(struct fx *f, enum pod_qos qos, unsigned limit, bool running)
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
static void remove_ct(struct fx *f, const struct ct *ct)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s%s", f->cpuset, ct->path);
	rm_tree(path);
	snprintf(path, sizeof(path), "%s%s", f->cpu, ct->path);
	rm_tree(path);		/* v2: the same directory, gone already */
}

/* ------------------------------------------------------------ events */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the clock BPF stamps with */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* An event about ct as the BPF side fills it (maps/cpusetd.h). */
static struct cpusetd_event event(uint32_t type, const struct ct *ct, uint32_t arg)
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

static void send(struct fx *f, uint32_t type, const struct ct *ct, uint32_t arg)
{
	struct cpusetd_event ev = event(type, ct, arg);

	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* Another process named comm writes value to ct's file (cpuset.cpus or
 * cpuset.mems); the hook reports it after the write went through, with the
 * bytes (the BPF hooks) or without (fanotify). */
static void foreign_write_by(struct fx *f, const struct ct *ct, const char *file,
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
		snprintf(ev.path, sizeof(ev.path), "%s", value);	/* the value written */
	assert_int_equal(controller_handle(f->c, &ev), 0);
}

/* kubelet writes value to ct's cpuset.cpus (a BPF hook reports it). */
static void foreign_write(struct fx *f, const struct ct *ct, const char *value)
{
	foreign_write_by(f, ct, "cpuset.cpus", value, "kubelet", true);
}

/* A running container of class qos, announced by its mkdir event. */
static struct ct start(struct fx *f, enum pod_qos qos, unsigned limit)
{
	struct ct ct = new_ct(f, qos, limit, true);

	send(f, CPUSETD_EV_MKDIR, &ct, 0);
	return ct;
}

/* ----------------------------------------------------------- fixture */

/* The one place a controller is made. */
static void ctl_start(struct fx *f)
{
	char root[CGFS_PATH_MAX];

	assert_int_equal(cgfs_find_kubepods_root(f->cg, root, sizeof(root)), 0);
	assert_int_equal(controller_new(&f->cfg, f->cg, f->topo, root, &f->c), 0);
}

/* The one place it is freed. */
static void ctl_stop(struct fx *f)
{
	controller_free(f->c);
	f->c = NULL;
}

static void config(struct fx *f)
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
static void make_tree(struct fx *f)
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
static int setup_tree(void **state, bool v2)
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

static int setup(void **state)
{
	return setup_tree(state, false);
}

static int setup_v2(void **state)
{
	return setup_tree(state, true);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->c)
		ctl_stop(f);
	cgfs_free(f->cg);
	topo_free(f->topo);
	kern.len = 0;
	kern.v2 = false;
	rm_tree(f->dir);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ checks */

static const char *fmt(const struct cpumask *m, char *buf)
{
	cpulist_format(m, buf, CPULIST_MAX);
	return buf;
}

static void assert_cpus(const struct fx *f, const struct ct *ct, struct cpumask want)
{
	struct cpumask got = cpus(f, ct);
	char a[CPULIST_MAX], b[CPULIST_MAX];

	if (!cpumask_equal(&got, &want))
		fail_msg("%s: cpus \"%s\", want \"%s\"", ct->path, fmt(&got, a), fmt(&want, b));
}

/* cgroup's cpuset.mems reads as the cpulist want. */
static void assert_mems(const struct fx *f, const struct ct *ct, const char *want)
{
	struct cpumask got = get(f, ct->path, "cpuset.mems");

	tl_assert_mask(&got, want);
}

/* ct holds n online CPUs (v2: runs on them, its pod may hold them);
 * returns them. */
static struct cpumask assert_exclusive(const struct fx *f, const struct ct *ct, unsigned n)
{
	struct cpumask got = f->v2 ? eff(f, ct->path) : cpus(f, ct);
	char a[CPULIST_MAX];

	if (cpumask_weight(&got) != n || !cpumask_subset(&got, &f->topo->online))
		fail_msg("%s: cpus \"%s\", want %u online CPUs", ct->path, fmt(&got, a), n);
	return got;
}

/* The shared pool when excl is reserved: online − excl. */
static struct cpumask pool(const struct fx *f, const struct cpumask *excl)
{
	struct cpumask m;

	cpumask_andnot(&m, &f->topo->online, excl);
	return m;
}

/* cgroup a's cpuset.cpus was written, and each write of it came before
 * the first write of b's. */
static void assert_before(const struct ct *a, const struct ct *b)
{
	int la = write_at(a->path, "cpuset.cpus", true);
	int fb = write_at(b->path, "cpuset.cpus", false);

	if (la < 0 || fb < 0 || la > fb)
		fail_msg("%s written at %d, %s at %d: want the first before", a->path, la,
			 b->path, fb);
}

static void assert_no_writes(void)
{
	assert_false(kern.overflow);
	if (kern.n)
		fail_msg("%u writes, the first %s = \"%s\"; want none", kern.n,
			 kern.log[0].file, kern.log[0].value);
}

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
	rm_tree(cmd);
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

/* --- refusals and foreign writes --- */

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

/* --- cgroup v2: the hierarchical writes (controller_plan.c) --- */

/* ct runs on exactly want (its effective set, as its tasks see it). */
static void assert_eff(const struct fx *f, const struct ct *ct, struct cpumask want)
{
	struct cpumask got = eff(f, ct->path);
	char a[CPULIST_MAX], b[CPULIST_MAX];

	if (!cpumask_equal(&got, &want))
		fail_msg("%s: effective \"%s\", want \"%s\"", ct->path, fmt(&got, a), fmt(&want, b));
}

/* The v2 planner's whole-tree builds so far (status.json counters). */
static uint64_t plan_builds(const struct fx *f)
{
	struct snapshot snap;
	uint64_t n;

	assert_int_equal(controller_snapshot(f->c, &snap), 0);
	n = snap.n->plan_builds;
	snapshot_release(&snap);
	return n;
}

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

static int group_setup(void **state)
{
	const char *lvl = getenv("CPUSETD_TEST_LOG");

	(void)state;
	/* Quiet unless asked: the refusals tested here are logged errors. */
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
		cmocka_unit_test_setup_teardown(test_admit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admit_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resize_inplace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hotplug, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_late_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_populated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insufficient, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_write_counted_when_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign_writers_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_foreign_write_counted_when_off, setup_v2,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_admit, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_v2_churn, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_v2_resync, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_v2_hotplug, setup_v2, teardown),
	};

	return cmocka_run_group_tests_name("controller on v1 and v2 trees (" SNAP ")", tests,
					   group_setup, group_teardown);
}
