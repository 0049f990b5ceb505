/*
 * Rejecting a container (on_error=reject): put the reason where kubelet
 * reads it (the termination message file), then kill the container.
 * kubelet shows the file's content in the pod status as the container's
 * termination message (Kubernetes docs "Determine the Reason for Pod
 * Failure"); the file's host side is under the kubelet pods directory,
 * /var/lib/kubelet/pods/<uid>/containers/<name>/<random>.
 */
#ifndef CPUSETD_REJECT_H
#define CPUSETD_REJECT_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

/*
 * Writes msg (log_escape'd: one line) plus a newline
 * into host_path, replacing its content.
 * host_path must be an absolute path strictly under pods_dir (absolute; a
 * trailing slash is fine) with no ".." component; it is opened relative to
 * pods_dir with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), never
 * created, and must be a regular file with a single link. pods_dir is
 * opened with O_NOFOLLOW: its last component must not be a symlink.
 * Nothing is truncated or written unless all checks pass.
 * Returns 0; -EPERM when host_path is outside pods_dir or has ".."; -ELOOP
 * for a symlink on the way; -ENOENT; -EINVAL when not a regular file or
 * hard-linked (a FIFO may give -ENXIO, a directory -EISDIR);
 * -ENAMETOOLONG; -ENOSYS before Linux 5.6; -errno.
 */
int reject_write_message(const char *pods_dir, const char *host_path, const char *msg);

#endif
