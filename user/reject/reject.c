// SPDX-License-Identifier: Apache-2.0
/*
 * Writes the reason of a rejection into the container's termination
 * message file (see reject.h).
 *
 * host_path comes from the pod's config.json, so it is untrusted. It is
 * taken only when it is kubelet's own file for this pod and container
 * (termination_rel_path, user/meta/termination.h: a pure check of its
 * shape), and then opened by the kernel beneath a pods_dir fd with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV), not by string games: a symlink swapped in after the
 * check, or a mount point anywhere below pods_dir (a bind mount over
 * kubelet's file, a volume mounted under the pod's directory), is refused
 * by the kernel, so the write stays on pods_dir's own filesystem and in
 * kubelet's own file. pods_dir's own last component must not be a
 * symlink either (O_NOFOLLOW): a node that symlinks the pods directory
 * itself must configure the real path (symlinks higher up, such as
 * /var/lib -> /data, are followed).
 * Needs Linux >= 5.6 for openat2; older kernels get -ENOSYS, never a
 * weaker fallback.
 *
 * It may block for as long as that filesystem does (NFS): the daemon
 * calls it on its writer thread (reject_writer.h), never on the loop;
 * so it logs nothing (log.c is the loop's) and returns what happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "user/base/log.h"
#include "user/meta/termination.h"
#include "reject.h"

/* Writes all of buf. Returns 0 or -errno (-EIO when nothing moves). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Opens rel beneath dirfd for writing, refusing symlinks and mount
 * points anywhere on the way (-ELOOP, -EXDEV). O_NONBLOCK so that a FIFO
 * cannot block us; no O_TRUNC here, so that nothing is changed before
 * the file type is checked.
 */
static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
		.flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	int fd, tries = 0;

	/* EAGAIN: the kernel saw a rename race; retry a few times only. */
	do
		fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 8);
	return fd < 0 ? -errno : fd;
}

/*
 * Checks that fd is a plain, singly linked regular file, then empties it.
 * A hard link would let a file elsewhere on the same filesystem be
 * reached from under pods_dir; kubelet's files always have one link.
 */
static int check_and_truncate(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		return -EINVAL;
	if (ftruncate(fd, 0) < 0)
		return -errno;
	return 0;
}

int reject_write_message(const char *pods_dir, const char *pod_uid, const char *container_name,
			 const char *host_path, const char *msg)
{
	const char *rel;
	int dirfd, fd, r;

	if (strlen(host_path) >= PATH_MAX)
		return -ENAMETOOLONG;
	r = termination_rel_path(pods_dir, pod_uid, container_name, host_path, &rel);
	if (r < 0)
		return r;
	dirfd = open(pods_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	fd = open_beneath(dirfd, rel);
	close(dirfd);
	if (fd < 0)
		return fd;
	r = check_and_truncate(fd);
	if (r == 0) {
		/* kubelet shows the file as the container's message: one line
		 * (an escape is at most 4 bytes per byte). */
		size_t size = 4 * strlen(msg) + 1;
		char *line = malloc(size);

		if (line) {
			log_escape(msg, line, size);
			r = write_all(fd, line, strlen(line));
			free(line);
		} else {
			r = -ENOMEM;
		}
	}
	if (r == 0)
		r = write_all(fd, "\n", 1);
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	return r;
}
