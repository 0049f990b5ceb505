/* SPDX-License-Identifier: Apache-2.0 */
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
 * Writes msg, escaped (log_escape: one line), plus a newline into
 * host_path, replacing its content, when host_path is kubelet's
 * termination message file of this container:
 *   <pods_dir>/<pod_uid>/containers/<container_name>/<file>
 * (termination_rel_path, user/meta/termination.h, says exactly what is
 * accepted). It is opened relative to pods_dir with openat2(RESOLVE_BENEATH
 * | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV): no
 * symlink and no mount point on the way; never created; it must be a
 * regular file with a single link. pods_dir is opened with O_NOFOLLOW:
 * its last component must not be a symlink. Nothing is truncated or
 * written unless all checks pass. Logs nothing (it runs on the writer
 * thread): the caller logs the result. Blocks as long as the filesystem
 * does.
 * Returns 0; -EINVAL when pods_dir is not absolute or pod_uid /
 * container_name is not one plain path component, or the file is not a
 * regular file or is hard-linked (a FIFO may give -ENXIO, a directory
 * -EISDIR); -EPERM when host_path is not of kubelet's shape; -ELOOP for a
 * symlink on the way; -EXDEV for a mount point on the way (a bind mount
 * over the file included); -ENOENT; -ENAMETOOLONG; -ENOSYS before Linux
 * 5.6; -errno.
 */
int reject_write_message(const char *pods_dir, const char *pod_uid, const char *container_name,
			 const char *host_path, const char *msg);

#endif
