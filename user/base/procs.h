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

/*
 * Whether any of the n pids is the container's own program rather than
 * its runtime: a task in another mount namespace than runtime_mntns that
 * is not one of runc's init stages (which name themselves "runc:[N:...]"
 * before the runtime is done). Tasks that are gone are skipped.
 * Returns 1, 0, or -errno of the first unreadable task other than -ENOENT.
 * Known limit: other runtimes' init stages in the container's namespace
 * count as started (only resync asks; BPF decides everywhere else).
 */
int procs_any_started(const int *pids, int n, uint64_t runtime_mntns);

#endif
