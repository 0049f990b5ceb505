// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup file access: the handle on the hierarchies, reading and writing
 * cpuset files with the kernel's ordering rules, CFS quota and cgroup ids.
 * Detection lives in cgfs_detect.c, kill and walk in cgfs_tree.c.
 *
 * Every open is openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS) relative to a directory fd of the hierarchy's
 * mount, kept open in struct cgfs, so a path built from a container's
 * cgroup name can neither climb out nor follow a link. Kernels without
 * openat2 (< 5.6) get openat(O_NOFOLLOW) with ".." refused, which guards
 * the last component only; cgroupfs itself holds no symlinks.
 *
 * A cgroup can vanish between any two calls (the container exited). kernfs
 * then reports ENOENT on open and ENODEV on read/write of a file opened
 * before the removal; both come back as -ENOENT.
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

/* ---------------------------------------------------------------- opens */

static bool has_dotdot(const char *rel)
{
	for (const char *p = rel; (p = strstr(p, "..")); p += 2)
		if ((p == rel || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

/* Opens rel (no leading '/') beneath dirfd. Returns an fd or -errno
 * (-EXDEV when rel would leave dirfd, -ELOOP on a symlink). */
int cgfs__open_beneath(int dirfd, const char *rel, int flags)
{
	static bool no_openat2;
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = -1;

	for (int try = 0; !no_openat2 && try < 8; try++) {
		fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == ENOSYS)
			no_openat2 = true;	/* racy but idempotent */
		else if (errno != EAGAIN)	/* EAGAIN: raced a rename; retry */
			return -errno;
	}
	if (!no_openat2)
		return -EAGAIN;
	if (has_dotdot(rel))
		return -EXDEV;
	fd = openat(dirfd, rel, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd >= 0 ? fd : -errno;
}

/* Joins cgroup path ("/a/b", "/" or "") and file (NULL: the directory)
 * into a relative path. Returns 0 or -ENAMETOOLONG / -EINVAL. */
static int rel_path(const char *path, const char *file, char *buf, size_t len)
{
	int n;

	if (!path)
		return -EINVAL;
	while (*path == '/')
		path++;
	if (!*path)
		n = snprintf(buf, len, "%s", file ? file : ".");
	else if (file)
		n = snprintf(buf, len, "%s/%s", path, file);
	else
		n = snprintf(buf, len, "%s", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cgfs__open(int dirfd, const char *path, const char *file, int flags)
{
	char rel[CGFS_PATH_MAX + 64];
	int r = rel_path(path, file, rel, sizeof(rel));

	if (r < 0)
		return r;
	return cgfs__open_beneath(dirfd, rel, flags);
}

int cgfs__vanished(int err)
{
	return err == -ENODEV ? -ENOENT : err;
}

/* Reads all of a small file into buf (NUL-terminated). Returns its length,
 * -EFBIG when it does not fit, -ENOENT when the cgroup vanished, -errno. */
ssize_t cgfs__read_text(int dirfd, const char *path, const char *file, char *buf, size_t len)
{
	size_t n = 0;
	int fd = cgfs__open(dirfd, path, file, O_RDONLY);

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t k = read(fd, buf + n, len - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || n + (size_t)k == len - 1) {
			int r = k < 0 ? cgfs__vanished(-errno) : -EFBIG;

			close(fd);
			return r;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* Writes buf with exactly one write(2): the kernel parses each write as a
 * whole value. O_TRUNC is a no-op on kernfs and makes a test tree of
 * regular files hold exactly buf. Returns 0, -ENOENT (vanished), -errno. */
int cgfs__write_text(int dirfd, const char *path, const char *file, const char *buf)
{
	size_t len = strlen(buf);
	ssize_t k;
	int fd = cgfs__open(dirfd, path, file, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return fd;
	k = write(fd, buf, len);
	if (k < 0)
		k = cgfs__vanished(-errno);
	else if ((size_t)k != len)
		k = -EIO;
	close(fd);
	return (int)(k < 0 ? k : 0);
}

/* ---------------------------------------------------------------- handle */

static int open_mount(const char *mnt)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		log_debug("cgfs: cannot open %s: %s", mnt, strerror(errno));
		return -errno;
	}
	return fd;
}

int cgfs_open(const struct cgfs_mounts *m, struct cgfs **ret)
{
	struct cgfs *cg;
	struct statfs sfs;

	if (!m || !ret || !m->cpuset_mnt[0])
		return -EINVAL;
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	cg->m = *m;
	cg->cpu_fd = -1;
	cg->freezer_fd = -1;
	cg->cpuset_fd = open_mount(m->cpuset_mnt);
	if (cg->cpuset_fd < 0) {
		int r = cg->cpuset_fd;

		free(cg);
		return r;
	}
	if (m->cpu_mnt[0]) {
		cg->cpu_fd = open_mount(m->cpu_mnt);
		if (cg->cpu_fd < 0) {
			int r = cg->cpu_fd;

			cgfs_free(cg);
			return r;
		}
		cg->cpu_on_v2 = m->mode == CGFS_MODE_V2 ||
			(m->cpuset_on_v2 && !strcmp(m->cpu_mnt, m->cpuset_mnt)) ||
			(fstatfs(cg->cpu_fd, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC);
	}
	/* Only the kill uses it, and it has a fallback: a freezer that
	 * cannot be opened is no reason not to run. */
	if (m->freezer_mnt[0])
		cg->freezer_fd = open_mount(m->freezer_mnt);
	if (!m->cpuset_on_v2) {
		char v[8];

		cg->top_balances = cgfs__read_text(cg->cpuset_fd, "/", "cpuset.sched_load_balance",
					     v, sizeof(v)) > 0 && v[0] == '1';
	}
	*ret = cg;
	return 0;
}

void cgfs_free(struct cgfs *cg)
{
	if (!cg)
		return;
	if (cg->cpuset_fd >= 0)
		close(cg->cpuset_fd);
	if (cg->cpu_fd >= 0)
		close(cg->cpu_fd);
	if (cg->freezer_fd >= 0)
		close(cg->freezer_fd);
	free(cg);
}

const struct cgfs_mounts *cgfs_mounts(const struct cgfs *cg)
{
	return &cg->m;
}

int cgfs__dir_exists(int dirfd, const char *path)
{
	int fd = cgfs__open(dirfd, path, NULL, O_PATH | O_DIRECTORY);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int cgfs_find_kubepods_root(struct cgfs *cg, char *ret, size_t len)
{
	static const char *const roots[] = { "/kubepods.slice", "/kubepods" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		int r = cgfs__dir_exists(cg->cpuset_fd, roots[i]);

		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		if (strlen(roots[i]) >= len)
			return -ENAMETOOLONG;
		strcpy(ret, roots[i]);
		return 0;
	}
	return -ENOENT;
}

/* --------------------------------------------------------------- cpusets */

static const char *cpuset_file(const struct cgfs *cg, enum cgfs_cpuset_file f)
{
	static const char *const v1[] = {
		[CGFS_CPUS] = "cpuset.cpus", [CGFS_MEMS] = "cpuset.mems",
		[CGFS_EFFECTIVE_CPUS] = "cpuset.effective_cpus",
		[CGFS_EFFECTIVE_MEMS] = "cpuset.effective_mems",
	};
	static const char *const v2[] = {
		[CGFS_CPUS] = "cpuset.cpus", [CGFS_MEMS] = "cpuset.mems",
		[CGFS_EFFECTIVE_CPUS] = "cpuset.cpus.effective",
		[CGFS_EFFECTIVE_MEMS] = "cpuset.mems.effective",
	};

	if ((unsigned)f > CGFS_EFFECTIVE_MEMS)
		return NULL;
	return cg->m.cpuset_on_v2 ? v2[f] : v1[f];
}

int cgfs_read_cpuset(struct cgfs *cg, const char *path, enum cgfs_cpuset_file f,
		     struct cpumask *ret)
{
	const char *file = cg && ret ? cpuset_file(cg, f) : NULL;
	char buf[CPULIST_MAX + 16];
	ssize_t n;

	if (!file)
		return -EINVAL;
	n = cgfs__read_text(cg->cpuset_fd, path, file, buf, sizeof(buf));
	if (n == -EFBIG)
		n = -EINVAL;
	if (n < 0)
		return (int)n;
	return cpulist_parse(buf, ret);
}

int cgfs_read_running_cpus(struct cgfs *cg, const char *path, struct cpumask *ret)
{
	if (!cg)
		return -EINVAL;
	return cgfs_read_cpuset(cg, path, cg->m.cpuset_on_v2 ? CGFS_EFFECTIVE_CPUS : CGFS_CPUS, ret);
}

bool cgfs_running_is_own(const struct cgfs *cg)
{
	return cg && !cg->m.cpuset_on_v2;
}

int cgfs_list_of(struct cgfs_list *l, const struct cpumask *m)
{
	int n;

	if (!l || !m)
		return -EINVAL;
	if (l->len > 0 && cpumask_equal(&l->m, m))
		return 0;
	l->len = 0;
	n = cpulist_format(m, l->text, sizeof(l->text) - 1);
	if (n < 0)
		return n;
	strcpy(l->text + n, "\n");
	l->m = *m;
	l->len = n + 1;
	return 0;
}

/* One write(2) of l's text through *fd, opening it first when it is
 * -1 (the caller owns and closes it). Returns 0, -ENOENT (vanished), -errno. */
static int write_list_fd(struct cgfs *cg, const char *path, const char *file,
			 const struct cgfs_list *l, int *fd)
{
	int n = l->len;
	ssize_t k;

	if (*fd < 0) {
		int r = cgfs__open(cg->cpuset_fd, path, file, O_WRONLY);

		if (r < 0)
			return r;
		*fd = r;
	}
	k = write(*fd, l->text, (size_t)n);
	if (k < 0)
		k = cgfs__vanished(-errno);
	else if (k != n)
		k = -EIO;
	if (k < 0)
		log_debug("cgfs: write %s/%s \"%.*s\": %s", path, file, n - 1, l->text,
			  strerror((int)-k));
	return (int)(k < 0 ? k : 0);
}

/* m's cpulist through *fd (write_list_fd), formatted here. */
static int write_mask_fd(struct cgfs *cg, const char *path, const char *file,
			 const struct cpumask *m, int *fd)
{
	struct cgfs_list l = { .len = 0 };
	int r = cgfs_list_of(&l, m);

	return r < 0 ? r : write_list_fd(cg, path, file, &l, fd);
}

static int write_mask(struct cgfs *cg, const char *path, const char *file,
		      const struct cpumask *m)
{
	int fd = -1, r = write_mask_fd(cg, path, file, m, &fd);

	if (fd >= 0)
		close(fd);
	return r;
}

/* Length of root without trailing slashes; "/" gives 0. Returns -1 when
 * path is not strictly below root. */
static ssize_t below_root(const char *root, const char *path)
{
	size_t rl = strlen(root);

	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if (strncmp(root, path, rl) || path[rl] != '/' || !path[rl + 1])
		return -1;
	return (ssize_t)rl;
}

/*
 * Widens the ancestors of path from root (inclusive) down to its parent so
 * each holds m: own := own ∪ m, top-down, since on v1 a parent must hold a
 * set before a child may. On v2 an ancestor with an empty own set inherits
 * and is left alone. Never touches anything above root or the hierarchy
 * root. Returns the number of ancestors written, or -errno.
 */
static int widen_ancestors(struct cgfs *cg, const char *root, const char *path,
			   enum cgfs_cpuset_file f, const struct cpumask *m)
{
	ssize_t rl = below_root(root, path);
	char anc[CGFS_PATH_MAX];
	size_t end = strlen(path);
	int widened = 0;

	if (rl < 0 || end >= sizeof(anc))
		return 0;
	while (end > 1 && path[end - 1] == '/')
		end--;
	for (size_t i = (size_t)rl; i < end; i++) {
		struct cpumask own;
		int r;

		if (path[i] != '/' || i == 0 || path[i - 1] == '/')
			continue;
		memcpy(anc, path, i);
		anc[i] = '\0';
		r = cgfs_read_cpuset(cg, anc, f, &own);
		if (r < 0)
			return r;
		if ((cg->m.cpuset_on_v2 && cpumask_empty(&own)) || cpumask_subset(m, &own))
			continue;
		cpumask_or(&own, &own, m);
		r = write_mask(cg, anc, cpuset_file(cg, f), &own);
		if (r < 0)
			return r;
		log_debug("cgfs: widened %s/%s for %s", anc, cpuset_file(cg, f), path);
		widened++;
	}
	return widened;
}

int cgfs_write_cpuset_list_fd(struct cgfs *cg, const char *root, const char *path,
			      enum cgfs_cpuset_file f, const struct cgfs_list *l, int *fd)
{
	const char *file;
	int r, w;

	if (!cg || !root || !path || !l || l->len <= 0 || !fd)
		return -EINVAL;
	if (f == CGFS_EFFECTIVE_CPUS || f == CGFS_EFFECTIVE_MEMS)
		return -EPERM;
	file = cpuset_file(cg, f);
	if (!file)
		return -EINVAL;

	if (cg->m.cpuset_on_v2) {
		r = widen_ancestors(cg, root, path, f, &l->m);
		return r < 0 ? r : write_list_fd(cg, path, file, l, fd);
	}
	if (cpumask_empty(&l->m))
		return -EINVAL;
	/* v1 refuses a set its parent does not hold with EACCES
	 * (cpuset1_validate_change); EINVAL/ENOSPC are taken alike. */
	r = write_list_fd(cg, path, file, l, fd);
	if (r != -EACCES && r != -EINVAL && r != -ENOSPC)
		return r;
	w = widen_ancestors(cg, root, path, f, &l->m);
	if (w <= 0)
		return w < 0 ? w : r;
	return write_list_fd(cg, path, file, l, fd);
}

int cgfs_write_cpuset_fd(struct cgfs *cg, const char *root, const char *path,
			 enum cgfs_cpuset_file f, const struct cpumask *m, int *fd)
{
	struct cgfs_list l = { .len = 0 };
	int r;

	if (!m)
		return -EINVAL;
	r = cgfs_list_of(&l, m);
	return r < 0 ? r : cgfs_write_cpuset_list_fd(cg, root, path, f, &l, fd);
}

int cgfs_write_cpuset(struct cgfs *cg, const char *root, const char *path,
		      enum cgfs_cpuset_file f, const struct cpumask *m)
{
	int fd = -1, r = cgfs_write_cpuset_fd(cg, root, path, f, m, &fd);

	if (fd >= 0)
		close(fd);
	return r;
}

int cgfs_write_cpus_planned(struct cgfs *cg, const char *path, const struct cpumask *m,
			    int *fd)
{
	if (!cg || !path || !m || !fd)
		return -EINVAL;
	if (!cg->m.cpuset_on_v2)
		return -EOPNOTSUPP;	/* v1 needs every level and the subset order */
	return write_mask_fd(cg, path, "cpuset.cpus", m, fd);
}

int cgfs_skip_sched_rebuild(struct cgfs *cg, const char *path)
{
	if (!cg || !path)
		return -EINVAL;
	if (cg->m.cpuset_on_v2 || !cg->top_balances)
		return 0;
	return cgfs__write_text(cg->cpuset_fd, path, "cpuset.sched_load_balance", "0");
}

/* ----------------------------------------------------------------- quota */

/* Parses one decimal integer filling all of s (surrounding space ok). */
static int parse_i64(const char *s, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	end += strspn(end, " \t\n");
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int read_i64(int dirfd, const char *path, const char *file, int64_t *ret)
{
	char buf[64];
	ssize_t n = cgfs__read_text(dirfd, path, file, buf, sizeof(buf));

	if (n < 0)
		return n == -EFBIG ? -EINVAL : (int)n;
	return parse_i64(buf, ret);
}

/* cpu.max: "<quota|max> <period>". */
static int read_cpu_max(struct cgfs *cg, const char *path, int64_t *quota, int64_t *period)
{
	char buf[64], *sp;
	ssize_t n = cgfs__read_text(cg->cpu_fd, path, "cpu.max", buf, sizeof(buf));

	if (n < 0)
		return n == -EFBIG ? -EINVAL : (int)n;
	sp = strchr(buf, ' ');
	if (!sp)
		return -EINVAL;
	*sp++ = '\0';
	if (!strcmp(buf, "max"))
		*quota = -1;
	else if (parse_i64(buf, quota) < 0)
		return -EINVAL;
	return parse_i64(sp, period);
}

int cgfs_read_cpu_quota(struct cgfs *cg, const char *path, int64_t *ret_quota_us,
			uint64_t *ret_period_us)
{
	int64_t quota, period;
	int r;

	if (!cg || !path || !ret_quota_us || !ret_period_us)
		return -EINVAL;
	if (cg->cpu_fd < 0)
		return -EOPNOTSUPP;
	if (cg->cpu_on_v2)
		r = read_cpu_max(cg, path, &quota, &period);
	else {
		r = read_i64(cg->cpu_fd, path, "cpu.cfs_quota_us", &quota);
		if (r >= 0)
			r = read_i64(cg->cpu_fd, path, "cpu.cfs_period_us", &period);
	}
	if (r < 0)
		return r;
	if ((quota < 0 && quota != -1) || quota == 0 || period <= 0)
		return -EINVAL;
	*ret_quota_us = quota;
	*ret_period_us = (uint64_t)period;
	return 0;
}

/* ------------------------------------------------------------ id, kill */

int cgfs_cgroup_id(struct cgfs *cg, const char *path, uint64_t *ret_id)
{
	struct stat st;
	int fd, r = 0;

	if (!cg || !ret_id)
		return -EINVAL;
	fd = cgfs__open(cg->cpuset_fd, path, NULL, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	close(fd);
	if (r == 0)
		*ret_id = (uint64_t)st.st_ino;
	return r;
}

