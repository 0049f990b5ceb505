/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The foreign-write hook for kernels where BPF cannot hook the cpuset
 * write handler (no fexit trampolines, no kprobes): a fanotify mark on the
 * cpuset hierarchy's whole filesystem, FAN_MODIFY.
 *
 * Why not the write syscalls' tracepoints (bpf_events' last resort): those
 * run a BPF program on every write(2) of the node and put every task on the
 * traced syscall path (BENCHMARKS "Foreign-write hook"). A filesystem mark
 * costs nothing outside the cgroup filesystem it marks: the VFS raises
 * FAN_MODIFY after a write to a file on it went through (vfs_write ->
 * fsnotify_modify), with the writer's pid. On v1 that filesystem is the
 * cpuset hierarchy alone; on v2 it is the whole cgroup2 tree.
 *
 * Events carry the directory's file handle and the file name
 * (FAN_REPORT_DFID_NAME, Linux 5.9; fanotify(7)): for cgroupfs the handle
 * is the kernfs node id, which is the cgroup id. Kernels that refuse that
 * mode on cgroupfs get the classic mode (an fd per event, resolved through
 * /proc/self/fd).
 *
 * What it cannot see (user/daemon/README.md "Foreign writes"): a write through another
 * instance of the cgroup filesystem (a mount made inside another cgroup
 * namespace); the exec check and the resync still cover those.
 */
#ifndef CPUSETD_FANOTIFY_HOOK_H
#define CPUSETD_FANOTIFY_HOOK_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdint.h>
#include "maps/cpusetd.h"

struct fanotify_hook;

/*
 * Marks the filesystem that holds path mnt (the cpuset hierarchy's mount
 * point) for FAN_MODIFY. Needs CAP_SYS_ADMIN. Returns 0 and *ret (free
 * with fanotify_hook_free), or -EINVAL (NULL argument), -ENOSYS/-EPERM/
 * -ENODEV/-EINVAL from fanotify_init/fanotify_mark (no fanotify, no
 * privilege, a filesystem that refuses marks), -ENOMEM. Logs at debug
 * level only.
 */
int fanotify_hook_open(const char *mnt, struct fanotify_hook **ret);
/* Removes the mark and frees. Accepts NULL. */
void fanotify_hook_free(struct fanotify_hook *h);

/* The fanotify fd, for an epoll set (readable when events wait). */
int fanotify_hook_fd(const struct fanotify_hook *h);

/*
 * Reads every queued event; does not block. For each write to a file
 * named cpuset.cpus or cpuset.mems by a process other than this one,
 * calls handler with a CPUSETD_EV_CPUSET_WRITE event: cgroup_id = the
 * directory's kernfs id, pid = the writer's tgid, comm from /proc (or
 * "(exited)"), arg = CPUSETD_FILE_CPUS/MEMS, ts_ns = CLOCK_MONOTONIC now,
 * path = "" (fanotify does not carry the bytes written: the handler reads
 * the file). Writes to unmanaged cgroups are passed too; the handler
 * filters by cgroup id. Returns the number of events handed over, the
 * handler's negative value, or -errno of read(2).
 */
int fanotify_hook_poll(struct fanotify_hook *h,
		       int (*handler)(const struct cpusetd_event *ev, void *ctx), void *ctx);

/* Queue overflows seen (FAN_Q_OVERFLOW): writes may have been missed, so
 * the caller treats a growth like lost BPF events (full resync). */
uint64_t fanotify_hook_overflows(const struct fanotify_hook *h);

/* "dfid" or "fd": the event mode the kernel accepted (status, tests). */
const char *fanotify_hook_mode(const struct fanotify_hook *h);

#endif
