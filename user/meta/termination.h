/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which host file may take a rejected container's termination message:
 * kubelet's own file for that container, and no other (user/README.md "Security
 * model"). Pure: strings in, a verdict out; no I/O.
 *
 * kubelet makes one file per container attempt under its pods directory,
 * <pods_dir>/<pod UID>/containers/<container name>/<random> (kubelet
 * kuberuntime_container.go makeMounts: filepath.Join of the pod's
 * container dir and a random name), and binds it read-write at the
 * container's terminationMessagePath, after the pod's volume mounts. The
 * bundle's mount source is the pod's to shape (a volume with a subPath at
 * that path has a source under <pods_dir>/<uid>/volume-subpaths/...), so
 * only a source of exactly kubelet's shape, for this pod and this
 * container, is taken. reject_write_message (user/reject/reject.h) then
 * opens it without following a symlink or crossing a mount point.
 */
#ifndef CPUSETD_TERMINATION_H
#define CPUSETD_TERMINATION_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

/* A pod UID or container name longer than this is refused (a path
 * component cannot be longer; a real UID is 36, a name at most 63). */
#define TERMINATION_NAME_MAX	255

/*
 * The part of host_path to open relative to pods_dir, when host_path is
 * kubelet's termination message file of this container:
 *   host_path == <pods_dir>/<pod_uid>/containers/<container_name>/<file>
 * pods_dir: absolute; trailing slashes are ignored ("/" is the root).
 * pod_uid, container_name: the bundle's (untrusted text): each must be
 * one plain path component: not empty, not "." or "..", no '/', at most
 * TERMINATION_NAME_MAX bytes.
 * host_path: the bundle's mount source (untrusted), compared byte for
 * byte: it starts with pods_dir as spelled there, and below it no doubled
 * slash, no "." or ".." component and nothing after <file>; <file> is one
 * component of 1..TERMINATION_NAME_MAX bytes, not "." or "..". kubelet's
 * paths are clean (filepath.Join), so this costs nothing real.
 * Returns 0 and *ret_rel pointing into host_path at
 * "<pod_uid>/containers/<container_name>/<file>"; -EINVAL when pods_dir
 * is not absolute or pod_uid / container_name is not a plain component;
 * -EPERM when host_path has any other shape (*ret_rel untouched).
 */
int termination_rel_path(const char *pods_dir, const char *pod_uid, const char *container_name,
			 const char *host_path, const char **ret_rel);

#endif
