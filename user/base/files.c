// SPDX-License-Identifier: Apache-2.0
/* Safe file access for paths that others can write (files.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "files.h"

int files_open_regular(const char *path, off_t *size_ret)
{
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else
		r = S_ISREG(st.st_mode) ? 0 : -EINVAL;
	if (r < 0) {
		close(fd);
		return r;
	}
	if (size_ret)
		*size_ret = st.st_size;
	return fd;
}

int files_open_private(const char *path, uid_t owner, struct stat *st_ret)
{
	struct stat st = { 0 };
	int fd, r = 0;

	if (st_ret)
		*st_ret = st;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (st.st_uid != owner)
		r = -EPERM;
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		r = -EACCES;
	else if (st.st_nlink != 1)
		r = -EMLINK;
	if (st_ret)
		*st_ret = st;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int files_check_private_dir(const char *dir, uid_t owner, struct stat *st_ret)
{
	struct stat st = { 0 };
	int fd, r = 0;

	/* O_PATH: a directory we may not read is still checked. */
	fd = open(dir, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (S_ISLNK(st.st_mode))
		r = -ELOOP;
	else if (!S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	else if (st.st_uid != owner)
		r = -EPERM;
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		r = -EACCES;
	close(fd);
	if (st_ret)
		*st_ret = st;
	return r;
}

const char *files_refused_why(int err, const struct stat *st, uid_t owner, char *buf,
			      size_t len)
{
	switch (err) {
	case -ELOOP:
		snprintf(buf, len, "a symbolic link");
		break;
	case -EINVAL:
		snprintf(buf, len, "not a regular file");
		break;
	case -ENOTDIR:
		snprintf(buf, len, "not a directory");
		break;
	case -EPERM:
		snprintf(buf, len, "owned by uid %u, not %u", st ? (unsigned)st->st_uid : 0u,
			 (unsigned)owner);
		break;
	case -EACCES:
		snprintf(buf, len, "mode %04o: group or others may write it",
			 st ? (unsigned)(st->st_mode & 07777) : 0u);
		break;
	case -EMLINK:
		snprintf(buf, len, "%lu links (a hard link to another file)",
			 st ? (unsigned long)st->st_nlink : 0ul);
		break;
	default:
		snprintf(buf, len, "%s", strerror(-err));
		break;
	}
	return buf;
}

/* Up to max bytes of the regular file open as fd, whose size is size;
 * closes fd. files_read's returns. */
static int read_fd(int fd, off_t size, size_t max, char **ret, size_t *ret_len)
{
	size_t cap, len = 0;
	char *buf;
	int r = 0;

	if (size < 0 || (uint64_t)size > max) {
		close(fd);
		return -EFBIG;
	}
	/* Room for one byte past max: a file that grew since fstat shows. */
	cap = (size_t)size + 2 > max + 1 ? max + 1 : (size_t)size + 2;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p;

			if (cap > max)
				break;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			p = realloc(buf, cap + 1);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!r && len > max)
		r = -EFBIG;
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int files_read(const char *path, size_t max, char **ret, size_t *ret_len)
{
	off_t size;
	int fd = files_open_regular(path, &size);

	return fd < 0 ? fd : read_fd(fd, size, max, ret, ret_len);
}

int files_read_private(const char *path, uid_t owner, size_t max, char **ret, size_t *ret_len,
		       struct stat *st_ret)
{
	struct stat st;
	int fd = files_open_private(path, owner, &st);

	if (st_ret)
		*st_ret = st;
	return fd < 0 ? fd : read_fd(fd, st.st_size, max, ret, ret_len);
}

static int write_all(int fd, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* A new file dir/.name.<random>.tmp, never an existing one. Returns the
 * fd and the name in tmp, or -errno. */
static int create_temp(int dirfd, const char *name, mode_t mode, char *tmp, size_t size)
{
	for (int try = 0; try < 16; try++) {
		uint64_t rnd;
		int fd;

		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&rnd ^ (uint64_t)try;
		snprintf(tmp, size, ".%s.%016llx.tmp", name, (unsigned long long)rnd);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int files_write_atomic(const char *dir, const char *name, const char *text, size_t len,
		       mode_t mode)
{
	char tmp[256];
	int dirfd, fd, r;

	if (strchr(name, '/'))
		return -EINVAL;
	if (strlen(name) > 200)
		return -ENAMETOOLONG;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	fd = create_temp(dirfd, name, mode, tmp, sizeof(tmp));
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	r = write_all(fd, text, len);
	if (!r && fchmod(fd, mode) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r)
		unlinkat(dirfd, tmp, 0);
	close(dirfd);
	return r;
}

int files_mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX], *comp, *save = NULL;
	int fd, r = 0;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	fd = open(buf[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		bool made = mkdirat(fd, comp, mode) == 0;
		int next;

		if (!made && errno != EEXIST) {
			r = -errno;
			break;
		}
		/* What we made is ours: a symlink swapped in since is refused. */
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (made ? O_NOFOLLOW : 0));
		if (next < 0) {
			r = errno == ENOTDIR && made ? -ELOOP : -errno;
			break;
		}
		close(fd);
		fd = next;
	}
	close(fd);
	return r;
}
