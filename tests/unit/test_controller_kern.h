/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel side of cpusets for the controller's tests
 * (test_controller*.c), over a temporary tree of regular files.
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
 * Include once per test binary: it defines write(2) for the binary.
 */
#ifndef CPUSETD_TEST_CONTROLLER_KERN_H
#define CPUSETD_TEST_CONTROLLER_KERN_H

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
#include "cgroupfs/cgfs.h"
#include "user/topo/topology.h"

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
static inline int read_mask(const char *dir, const char *cgroup, const char *file,
			    struct cpumask *ret)
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
static inline int v1_rule(char *cg, const char *base, const struct cpumask *want)
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
static inline int v2_rule(const char *cg, const char *base, const struct cpumask *want)
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
static inline int cpuset_check(const char *file, const char *value)
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
static inline void v2_effective(const char *dir, const struct cpumask *pe)
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
static inline void v2_sync(void)
{
	bool self = kern.self;

	if (!kern.v2 || !kern.len)
		return;
	kern.self = true;	/* the kernel's own writes: not logged */
	v2_effective(kern.root, &kern.top);
	kern.self = self;
}

static inline void note(const char *file, const char *value, int err)
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
static inline ssize_t kernfs_write(int fd, const struct stat *st, const char *file,
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
static inline bool tree_file(int fd, char *ret, size_t len)
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

static inline void log_reset(void)
{
	kern.n = 0;
	kern.overflow = false;
}

/* Position in the log of the first (or last) write of cgroup's file that
 * went through; -1 when none did. */
static inline int write_at(const char *cgroup, const char *file, bool last)
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

#endif
