/*
 * What /proc says of a task, for telling a container's own process from
 * its runtime's when BPF did not see the container start (it was created
 * while the daemon was down).
 */
#ifndef CPUSETD_PROCS_H
#define CPUSETD_PROCS_H

#include <stdint.h>

/*
 * Mount namespace inode of pid (stat of /proc/<pid>/ns/mnt; pid 0 = the
 * caller) into *ret. Returns 0, -ENOENT (gone), -errno.
 */
int procs_mntns(int pid, uint64_t *ret);

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
