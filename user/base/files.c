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

int files_read(const char *path, size_t max, char **ret, size_t *ret_len)
{
	size_t cap, len = 0;
	char *buf;
	off_t size;
	int fd, r = 0;

	fd = files_open_regular(path, &size);
	if (fd < 0)
		return fd;
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
