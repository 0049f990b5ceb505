// SPDX-License-Identifier: Apache-2.0
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

/*
 * The kill (cgfs.h cgfs_kill). Bounds, in CLOCK_MONOTONIC time: a freeze
 * gets FREEZE_WAIT_MS to take hold (a task freezes when it next runs:
 * one whose cgroup used up its CFS quota runs again only in the next
 * period, 100 ms by default; and a cgroup of 100 CPU-bound tasks on one
 * busy CPU takes as many time slices), the unfrozen fallback KILL_ROUNDS
 * rounds, and the wait for the killed tasks to leave cgroup.procs
 * EMPTY_WAIT_MS; the event loop waits on this, so each is short.
 */
#define FREEZE_WAIT_MS	300
#define KILL_ROUNDS	8
#define EMPTY_WAIT_MS	200

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#ifdef SYS_pidfd_open
static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_kill(int fd)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
}
#else
static int sys_pidfd_open(pid_t pid)
{
	(void)pid;
	errno = ENOSYS;
	return -1;
}

static int sys_pidfd_kill(int fd)
{
	(void)fd;
	errno = ENOSYS;
	return -1;
}
#endif

/*
 * Whether pid is in path of the cpuset hierarchy now, by its
 * /proc/<pid>/cgroup line for that hierarchy ("<id>:<controllers>:<path>",
 * id 0 on v2; paths as the reader's cgroup namespace sees them, as ours
 * are). Returns 1, 0 (elsewhere, or gone), -errno.
 */
static int task_in(const struct cgfs *cg, long pid, const char *path)
{
	char file[64], buf[4096], *line, *save = NULL;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "/proc/%ld/cgroup", pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return errno == ESRCH ? 0 : -errno;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *ctrl = strchr(line, ':'), *p = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (p && strtol(line, NULL, 10) == cg->m.cpuset_hierarchy_id)
			return strcmp(p + 1, path) == 0;
	}
	return 0;
}

struct kill_ctx {
	const struct cgfs *cg;
	bool no_pidfd;		/* pidfd_open said ENOSYS: kill(2) from then on */
};

/*
 * SIGKILLs pid unless it is init, the kernel's or our own. Through a
 * pidfd, and only once the task it names is seen in path: a pid read from
 * cgroup.procs may have exited and been reused by then (unless the cgroup
 * is frozen, the one case where kill(2) alone is safe).
 */
static bool kill_pid(void *arg, const char *path, long pid)
{
	struct kill_ctx *k = arg;
	int fd;

	if (pid <= 1 || pid == (long)getpid()) {
		log_debug("cgfs: %s holds pid %ld, not killing it", path, pid);
		return true;
	}
	fd = k->no_pidfd ? -1 : sys_pidfd_open((pid_t)pid);
	if (fd < 0 && !k->no_pidfd && errno == ENOSYS)
		k->no_pidfd = true;
	if (k->no_pidfd) {
		if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
			log_debug("cgfs: kill %ld in %s: %s", pid, path, strerror(errno));
		return true;
	}
	if (fd < 0) {
		if (errno != ESRCH)
			log_debug("cgfs: pidfd_open %ld in %s: %s", pid, path, strerror(errno));
		return true;
	}
	if (task_in(k->cg, pid, path) == 1 && sys_pidfd_kill(fd) < 0 && errno != ESRCH)
		log_debug("cgfs: pidfd_send_signal %ld in %s: %s", pid, path, strerror(errno));
	close(fd);
	return true;
}

/* SIGKILLs every pid in cgroup.procs. Returns how many it listed (0 =
 * empty), -ENOENT (vanished), -errno. Never signals pid <= 1 or itself. */
static int kill_round(struct cgfs *cg, const char *path, struct kill_ctx *k)
{
	return each_pid(cg, path, kill_pid, k);
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

/* Where path freezes: v1's freezer hierarchy (freezer.state), or v2's
 * cgroup.freeze with cgroup.events "frozen 1" (5.2+). */
struct freezer {
	int fd;
	const char *file, *freeze, *thaw, *state_file, *frozen;
};

static bool freezer_of(const struct cgfs *cg, struct freezer *ret)
{
	if (cg->m.cpuset_on_v2)
		*ret = (struct freezer){ cg->cpuset_fd, "cgroup.freeze", "1", "0",
					 "cgroup.events", "\nfrozen 1" };
	else
		*ret = (struct freezer){ cg->freezer_fd, "freezer.state", "FROZEN", "THAWED",
					 "freezer.state", "FROZEN" };
	return ret->fd >= 0;
}

/*
 * Freezes path and waits until it is frozen. Returns 1 frozen, 0 when it
 * cannot be frozen here (no freezer hierarchy, path not in it, a kernel
 * without cgroup.freeze), -ETIMEDOUT when it is still freezing after
 * FREEZE_WAIT_MS (a task in uninterruptible sleep: some tasks are frozen
 * and stay so until the thaw), -errno.
 */
static int freeze(const struct freezer *f, const char *path, long *ret_ms)
{
	char st[256], text[sizeof(st) + 1];
	long start = now_ms();
	int r = cgfs__write_text(f->fd, path, f->file, f->freeze);

	if (r == -ENOENT || r == -EINVAL)
		return 0;
	if (r < 0)
		return r;
	for (long ms = 1;; ms = ms < 8 ? ms * 2 : 8) {
		ssize_t n = cgfs__read_text(f->fd, path, f->state_file, st, sizeof(st));

		*ret_ms = now_ms() - start;
		if (n < 0)
			return (int)n;
		snprintf(text, sizeof(text), "\n%s", st);	/* a line start for v2's match */
		if (strstr(text, f->frozen))
			return 1;
		if (*ret_ms >= FREEZE_WAIT_MS)
			return -ETIMEDOUT;
		sleep_ms(ms);
	}
}

/* Waits up to EMPTY_WAIT_MS until cgroup.procs reads empty (killed tasks
 * take a moment to exit). Returns 0, -EBUSY, -errno. */
static int wait_empty(struct cgfs *cg, const char *path)
{
	long start = now_ms();
	int pid, r;

	for (long ms = 1;; ms = ms < 16 ? ms * 2 : 16) {
		r = cgfs_read_pids(cg, path, &pid, 1);
		if (r == 0 || r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
		if (now_ms() - start >= EMPTY_WAIT_MS)
			return -EBUSY;
		sleep_ms(ms);
	}
}

int cgfs_kill(struct cgfs *cg, const char *path)
{
	struct kill_ctx k = { .cg = cg };
	struct freezer f;
	long frozen_ms = 0;
	int r, n;

	if (!cg || !path)
		return -EINVAL;
	if (cg->m.cpuset_on_v2) {
		r = write_cgroup_kill(cg, path);
		if (r < 0)
			return r == -ENOENT ? 0 : r;
		if (r == 1)
			return wait_empty(cg, path);
	}
	if (freezer_of(cg, &f)) {
		r = freeze(&f, path, &frozen_ms);
		n = r == 1 || r == -ETIMEDOUT ? kill_round(cg, path, &k) : 0;
		if (r != 0)	/* whatever froze thaws: the killed die on the way out */
			cgfs__write_text(f.fd, path, f.file, f.thaw);
		if (r == 1 || r == -ETIMEDOUT) {
			if (n == 0 || n == -ENOENT)
				return 0;
			if (n < 0)
				return n;
			if (r == 1) {	/* none could fork: every task had its signal */
				log_debug("cgfs: %s: %d tasks killed while frozen (froze in %ld ms)",
					  path, n, frozen_ms);
				return wait_empty(cg, path);
			}
		}
		if (r < 0 && r != -ENOENT)
			log_debug("cgfs: cannot freeze %s (%s after %ld ms): killing it unfrozen",
				  path, strerror(-r), frozen_ms);
	}
	/* Unfrozen: tasks may fork while we read, so a few rounds (79 ms of
	 * pauses at most). */
	for (int round = 0, ms = 1; round < KILL_ROUNDS; round++, ms = ms < 16 ? ms * 2 : 16) {
		n = kill_round(cg, path, &k);
		if (n == -ENOENT || n == 0)
			return 0;
		if (n < 0)
			return n;
		sleep_ms(ms);
	}
	r = wait_empty(cg, path);
	if (r == -EBUSY)
		log_debug("cgfs: %s still has tasks after %d rounds", path, KILL_ROUNDS);
	return r;
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
		memcpy(w->path + len, "/", sl);
		memcpy(w->path + len + sl, de->d_name, nl + 1);
		/* fn first: a pruned directory is never opened (fn copes with
		 * one removed since readdir, as with one removed after). */
		r = w->fn(w->path, w->arg);
		if (r == 0) {
			cfd = cgfs__open_beneath(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
			if (cfd >= 0)
				r = walk_dir(w, cfd, len + sl + nl);
			else if (cfd != -ENOENT)	/* ENOENT: removed since readdir */
				r = cfd;
		}
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
