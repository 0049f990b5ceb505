/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One daemon per node state: two cpusetd on the same state dir or BPF pin
 * dir would both place containers, each undoing the other's writes.
 *
 * The lock is flock(2) LOCK_EX|LOCK_NB on two things, held for the
 * daemon's lifetime and dropped by the kernel when it exits (also on
 * kill -9, so no stale lock needs cleaning): the file
 * <state_dir>/cpusetd.lock, which also carries the holder's PID for
 * people, and the pin directory itself (bpffs holds no regular files). A
 * refused start names the holder's PID, read from /proc/locks, which the
 * kernel keeps true.
 */
#ifndef CPUSETD_INSTANCE_LOCK_H
#define CPUSETD_INSTANCE_LOCK_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <sys/types.h>

#define INSTANCE_LOCK_FILE	"cpusetd.lock"

struct instance_lock {
	int state_fd;	/* -1 when not held */
	int pin_fd;	/* -1 when not held or no pin dir */
};

/*
 * Takes the lock on state_dir (must exist; "" = none, for --release on a
 * node without one) and on pin_dir (created 0700 when missing; "" =
 * none). The lock file is opened O_NOFOLLOW and must be ours: a regular
 * file, one link, owned by the euid. On success *ret holds both
 * descriptors (close-on-exec) and the lock file holds our PID.
 * Returns 0; -EWOULDBLOCK when another process holds either lock, with
 * *holder its PID (0 when /proc/locks does not say) and *what the path
 * it holds; for the lock file (*what: state_dir): -ELOOP a symlink,
 * -EINVAL not a regular file (a FIFO planted there), -EMLINK more than
 * one link, -EPERM another owner; -errno of open/mkdir/flock otherwise
 * (*what: the path).
 */
int instance_lock_take(const char *state_dir, const char *pin_dir, struct instance_lock *ret,
		       pid_t *holder, const char **what);

/* Words for instance_lock_take's error err ("cpusetd.lock is a symbolic
 * link", else strerror). Static text; cannot fail. */
const char *instance_lock_why(int err);

/* Releases both locks (closes the descriptors that are not -1); both are
 * -1 after. Cannot fail. */
void instance_lock_release(struct instance_lock *l);

/*
 * The PID holding a flock on the file open as fd, from /proc/locks (lines
 * "N: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<ino> 0 EOF"), matching the
 * device and inode of fd. Returns the PID, 0 when none is listed, or
 * -errno of fstat/fopen.
 */
pid_t instance_lock_holder(int fd);

#endif
