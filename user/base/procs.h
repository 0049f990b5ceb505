/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What /proc says of a task, for telling a container's own process from
 * its runtime's when BPF did not see the container start (it was created
 * while the daemon was down), and for telling whether the daemon named in
 * status.json is still alive (cpusetctl).
 */
#ifndef CPUSETD_PROCS_H
#define CPUSETD_PROCS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <stdint.h>

/*
 * Mount namespace inode of pid (stat of /proc/<pid>/ns/mnt; pid 0 = the
 * caller) into *ret. Returns 0, -ENOENT (gone), -errno.
 */
int procs_mntns(int pid, uint64_t *ret);

/*
 * PID namespace inode of pid (stat of /proc/<pid>/ns/pid; pid 0 = the
 * caller) into *ret: two processes see the same PIDs only when these are
 * equal. Returns 0, -ENOENT (gone), -errno.
 */
int procs_pidns(int pid, uint64_t *ret);

/*
 * The comm of pid (/proc/<pid>/comm, at most 15 bytes; pid 0 = the
 * caller) into buf[len], without the newline. Returns 0, -ENOENT (gone,
 * or hidden by hidepid=), -EACCES, -errno; buf is untouched on failure.
 */
int procs_comm(int pid, char *buf, size_t len);

/* A file as stat(2) names it: which file system, which inode. */
struct procs_file_id {
	uint64_t dev, ino;
};

/*
 * The runtime binaries at their usual paths (runc, crun under /usr/bin,
 * /usr/sbin, /usr/local/bin, /usr/local/sbin) that exist here, into
 * ret[max]. Seen from the caller's mount namespace: the host's for the
 * unit (ProtectSystem= keeps the host's files, read-only), the image's in
 * a DaemonSet (which ships none: only memfd clones are recognised there).
 * Returns how many; cannot fail.
 */
int procs_runtime_binaries(struct procs_file_id *ret, int max);

/* What the tasks of a container's cgroup say about its start (procs_start_state). */
enum procs_start {
	PROCS_NOT_STARTED = 0,	/* no task, or only the runtime's own */
	PROCS_STARTED = 1,	/* a task runs the container's own program */
	PROCS_INIT_STAGE = 2,	/* none of its own, but a task that looks like a
				 * runtime's init stage, or that we may not read */
};

/*
 * Whether the container whose cgroup holds the n pids has run its own
 * program, when BPF did not see it start (it was made while the daemon
 * was down), decided from what a container cannot forge:
 *   - a task in runtime_mntns is the runtime's: a container's tasks run in
 *     a mount namespace the runtime made for them, and only a privileged
 *     pod that can setns(2) into the host's could be there;
 *   - a task in another namespace is a runtime's init stage only if its
 *     executable is a runtime's: the same file (st_dev, st_ino) as one of
 *     the n_rt binaries rt (procs_runtime_binaries), or a memfd (runc 1.1
 *     runs `runc init` from "/memfd:runc_cloned:/proc/self/exe", later
 *     runc from a sealed memfd when it must clone);
 *   - any other task in another namespace is the container's own program.
 * The comm ("runc:[2:INIT]") counts for nothing: any task can set its own
 * (prctl PR_SET_NAME, or a file of that name). A memfd can be forged too
 * (memfd_create + fexecve), and a task we may not read (/proc/<pid>/exe
 * and ns/ need ptrace access: the unit has no CAP_SYS_PTRACE) could be
 * anything, so both give PROCS_INIT_STAGE, which the caller must bound in
 * time: a real init stage waits on its exec fifo only between `runc
 * create` and `runc start`, which kubelet runs right after each other
 * (controller_reject.c). Tasks that are gone are skipped.
 * Returns the enum procs_start; cannot fail.
 * Known limit: an init stage run from a private copy of the binary (runc
 * 1.2's overlayfs clone) or from a path not in the list counts as started.
 */
int procs_start_state(const int *pids, int n, uint64_t runtime_mntns,
		      const struct procs_file_id *rt, int n_rt);

#endif
