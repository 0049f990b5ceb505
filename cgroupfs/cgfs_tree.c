/*
 * Whole-cgroup operations: killing every task of a cgroup (rejected
 * containers) and walking a subtree (resync).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include "cgfs_internal.h"
#include "user/base/log.h"

#define KILL_ROUNDS	20
#define PROCS_MAX	(16u << 20)

/* Reads the whole of path's cgroup.procs into a malloc'ed string. */
static int read_procs(struct cgfs *cg, const char *path, char **ret)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL;
	int fd = cgfs__open(cg->cpuset_fd, path, "cgroup.procs", O_RDONLY), r = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t k;

		if (!buf || n + 1 >= cap) {
			size_t ncap = buf ? cap * 2 : cap;
			char *nb = ncap > PROCS_MAX ? NULL : realloc(buf, ncap);

			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		k = read(fd, buf + n, cap - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k < 0 ? cgfs__vanished(-errno) : 0;
			break;
		}
		n += (size_t)k;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}

/*
 * The one parser of cgroup.procs (decimal pids, one a line): calls
 * fn(arg, path, pid) for each pid in order until fn returns false.
 * Returns how many pids fn was given, -ENOENT (vanished), -errno.
 */
static int each_pid(struct cgfs *cg, const char *path,
		    bool (*fn)(void *arg, const char *path, long pid), void *arg)
{
	char *procs, *p, *end;
	int r = read_procs(cg, path, &procs), n = 0;

	if (r < 0)
		return r;
	for (p = procs; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		n++;
		if (!fn(arg, path, pid))
			break;
	}
	free(procs);
	return n;
}

/* SIGKILLs pid unless it is init, the kernel's or our own. */
static bool kill_pid(void *arg, const char *path, long pid)
{
	(void)arg;
	if (pid <= 1 || pid == (long)getpid()) {
		log_debug("cgfs: %s holds pid %ld, not killing it", path, pid);
		return true;
	}
	if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
		log_debug("cgfs: kill %ld in %s: %s", pid, path, strerror(errno));
	return true;
}

/* SIGKILLs every pid in cgroup.procs. Returns how many it listed (0 =
 * empty), -ENOENT (vanished), -errno. Never signals pid <= 1 or itself. */
static int kill_round(struct cgfs *cg, const char *path)
{
	return each_pid(cg, path, kill_pid, NULL);
}

/* v2 (5.14+): one write to cgroup.kill. Returns 1 when done, 0 when the
 * file does not exist (older kernel, or v1), -ENOENT (vanished), -errno. */
static int write_cgroup_kill(struct cgfs *cg, const char *path)
{
	int r = cgfs__write_text(cg->cpuset_fd, path, "cgroup.kill", "1");

	if (r == -ENOENT) {
		r = cgfs__dir_exists(cg->cpuset_fd, path);
		return r < 0 ? r : 0;
	}
	return r < 0 ? r : 1;
}

int cgfs_kill(struct cgfs *cg, const char *path)
{
	struct timespec delay = { 0, 1000000 };
	int r;

	if (!cg || !path)
		return -EINVAL;
	if (cg->m.cpuset_on_v2) {
		r = write_cgroup_kill(cg, path);
		if (r < 0)
			return r == -ENOENT ? 0 : r;
	}
	/* Also after cgroup.kill: waits until the tasks are gone, so that an
	 * rmdir right after does not fail with EBUSY. */
	for (int round = 0; round < KILL_ROUNDS; round++) {
		r = kill_round(cg, path);
		if (r == -ENOENT || r == 0)
			return 0;
		if (r < 0)
			return r;
		nanosleep(&delay, NULL);
		if (delay.tv_nsec < 50000000)
			delay.tv_nsec *= 2;
	}
	log_debug("cgfs: %s still has tasks after %d rounds", path, KILL_ROUNDS);
	return -EBUSY;
}

struct pid_buf {
	int *pids;
	int n, max;
};

/* Stores pid while there is room; stops the parse when full. */
static bool store_pid(void *arg, const char *path, long pid)
{
	struct pid_buf *b = arg;

	(void)path;
	if (b->n >= b->max)
		return false;
	b->pids[b->n++] = (int)pid;
	return b->n < b->max;
}

int cgfs_read_pids(struct cgfs *cg, const char *path, int *ret, int max)
{
	struct pid_buf b = { .pids = ret, .max = max };
	int r = each_pid(cg, path, store_pid, &b);

	return r < 0 ? r : b.n;
}

int cgfs_populated(struct cgfs *cg, const char *path)
{
	char buf[256], *line;
	ssize_t n;
	int pid;

	if (!cg->m.cpuset_on_v2) {
		int r = cgfs_read_pids(cg, path, &pid, 1);

		return r < 0 ? r : r > 0;
	}
	n = cgfs__read_text(cg->cpuset_fd, path, "cgroup.events", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	line = strstr(buf, "populated ");
	if (!line || (line != buf && line[-1] != '\n'))
		return -EINVAL;
	return line[strlen("populated ")] == '1';
}

/* ------------------------------------------------------------------ walk */

struct walk {
	int (*fn)(const char *path, void *arg);
	void *arg;
	char path[CGFS_PATH_MAX];
};

/* Visits the children of the directory fd (path in w->path, len chars),
 * each before its own children. Takes ownership of fd. */
static int walk_dir(struct walk *w, int fd, size_t len)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	for (errno = 0; (de = readdir(d)); errno = 0) {
		size_t nl = strlen(de->d_name), sl = len > 1 ? 1 : 0;
		int cfd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (len + sl + nl >= sizeof(w->path)) {
			log_debug("cgfs: path too long, skipped: %s/%s", w->path, de->d_name);
			continue;
		}
		cfd = cgfs__open_beneath(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
		if (cfd == -ENOENT)
			continue;	/* removed since readdir */
		if (cfd < 0) {
			r = cfd;
			break;
		}
		memcpy(w->path + len, "/", sl);
		memcpy(w->path + len + sl, de->d_name, nl + 1);
		r = w->fn(w->path, w->arg);
		if (r >= 0)
			r = walk_dir(w, cfd, len + sl + nl);
		else
			close(cfd);
		w->path[len] = '\0';
		if (r < 0)
			break;
		r = 0;
	}
	if (!de && errno && errno != ENOENT && errno != ENODEV)
		r = -errno;
	closedir(d);
	return r;
}

int cgfs_walk(struct cgfs *cg, const char *root,
	      int (*fn)(const char *path, void *arg), void *arg)
{
	struct walk w = { .fn = fn, .arg = arg };
	size_t len;
	int fd, r;

	if (!cg || !root || !fn)
		return -EINVAL;
	while (*root == '/')
		root++;
	len = (size_t)snprintf(w.path, sizeof(w.path), "/%s", root);
	if (len >= sizeof(w.path))
		return -ENAMETOOLONG;
	while (len > 1 && w.path[len - 1] == '/')
		w.path[--len] = '\0';
	fd = cgfs__open(cg->cpuset_fd, w.path, NULL, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	r = fn(w.path, arg);
	if (r < 0) {
		close(fd);
		return r;
	}
	return walk_dir(&w, fd, len);
}
