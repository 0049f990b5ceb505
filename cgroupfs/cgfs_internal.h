/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroupfs internals shared by cgfs.c (handle, cpuset files, quota, ids)
 * and cgfs_tree.c (kill, walk). Not for use outside cgroupfs/.
 */
#ifndef CPUSETD_CGFS_INTERNAL_H
#define CPUSETD_CGFS_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <sys/types.h>
#include "cgfs.h"

struct cgfs {
	struct cgfs_mounts m;
	int cpuset_fd;		/* directory fd of m.cpuset_mnt */
	int cpu_fd;		/* directory fd of m.cpu_mnt; -1 when none */
	bool cpu_on_v2;		/* cpu.max rather than cpu.cfs_*_us */
	int freezer_fd;		/* directory fd of m.freezer_mnt; -1 when none */
	bool top_balances;	/* v1: top cpuset's sched_load_balance is 1 */
};

/*
 * Opens file (or the directory itself when file is NULL) of the cgroup at
 * path, beneath the mount dirfd, never following a link (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS).
 * Returns the fd, -ENOENT when the cgroup vanished, -errno.
 */
int cgfs__open(int dirfd, const char *path, const char *file, int flags);

/* Opens rel (relative, no leading '/') beneath dirfd the same way. */
int cgfs__open_beneath(int dirfd, const char *rel, int flags);

/* 0 when the cgroup directory at path exists, -ENOENT, -errno. */
int cgfs__dir_exists(int dirfd, const char *path);

/* ENODEV (file of a removed cgroup) -> -ENOENT; other values unchanged. */
int cgfs__vanished(int err);

/* Reads all of a small file into buf (NUL-terminated). Returns its length,
 * -EFBIG when it does not fit, -ENOENT when the cgroup vanished, -errno. */
ssize_t cgfs__read_text(int dirfd, const char *path, const char *file, char *buf, size_t len);

/* Writes buf with exactly one write(2). Returns 0, -ENOENT, -errno. */
int cgfs__write_text(int dirfd, const char *path, const char *file, const char *buf);

#endif
