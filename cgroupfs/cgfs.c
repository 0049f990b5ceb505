/*
 * cgroup file access: finding the hierarchies (v1, hybrid, v2), reading and
 * writing cpuset files with the kernel's ordering rules, CFS quota, cgroup
 * ids, killing a cgroup's tasks and walking a subtree.
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
#include "cgfs.h"
#include "../user/log.h"

struct cgfs {
	struct cgfs_mounts m;
	int cpuset_fd;		/* directory fd of m.cpuset_mnt */
	int cpu_fd;		/* directory fd of m.cpu_mnt; -1 when none */
	bool cpu_on_v2;		/* cpu.max rather than cpu.cfs_*_us */
	bool top_balances;	/* v1: top cpuset's sched_load_balance is 1 */
};

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
static int open_beneath(int dirfd, const char *rel, int flags)
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

static int cg_open(int dirfd, const char *path, const char *file, int flags)
{
	char rel[CGFS_PATH_MAX + 64];
	int r = rel_path(path, file, rel, sizeof(rel));

	if (r < 0)
		return r;
	return open_beneath(dirfd, rel, flags);
}

static int vanished(int err)
{
	return err == -ENODEV ? -ENOENT : err;
}

/* Reads all of a small file into buf (NUL-terminated). Returns its length,
 * -EFBIG when it does not fit, -ENOENT when the cgroup vanished, -errno. */
static ssize_t read_text(int dirfd, const char *path, const char *file, char *buf, size_t len)
{
	size_t n = 0;
	int fd = cg_open(dirfd, path, file, O_RDONLY);

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t k = read(fd, buf + n, len - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || n + (size_t)k == len - 1) {
			int r = k < 0 ? vanished(-errno) : -EFBIG;

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
 * whole value. Returns 0, -ENOENT (vanished), -errno. */
static int write_text(int dirfd, const char *path, const char *file, const char *buf)
{
	size_t len = strlen(buf);
	ssize_t k;
	int fd = cg_open(dirfd, path, file, O_WRONLY);

	if (fd < 0)
		return fd;
	k = write(fd, buf, len);
	if (k < 0)
		k = vanished(-errno);
	else if ((size_t)k != len)
		k = -EIO;
	close(fd);
	return (int)(k < 0 ? k : 0);
}

/* ------------------------------------------------------------- detection */

#define MAX_SUBSYS 64

struct detect {
	char v1_names[MAX_SUBSYS][32];	/* controllers bound to a v1 hierarchy */
	int n_v1_names;
	bool cpuset_known;		/* /proc/cgroups has a cpuset line */
	bool cpuset_enabled;
	int cpuset_hier;
	bool has_v1, has_v2;
	char v2_mnt[256];
	char cpuset_v1[256], cpu_v1[256];
};

static bool has_token(const char *list, const char *sep, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p; ) {
		size_t tl = strcspn(p, sep);

		if (tl == wl && !strncmp(p, word, wl))
			return true;
		p += tl;
		p += strspn(p, sep);
	}
	return false;
}

/* /proc/cgroups: "#subsys_name hierarchy num_cgroups enabled". */
static int parse_proc_cgroups(const char *file, struct detect *d)
{
	FILE *f = fopen(file, "re");
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		int hier, num, enabled;

		if (line[0] == '#' || sscanf(line, "%31s %d %d %d", name, &hier, &num, &enabled) != 4)
			continue;
		if (!strcmp(name, "cpuset")) {
			d->cpuset_known = true;
			d->cpuset_enabled = enabled != 0;
			d->cpuset_hier = hier;
		}
		if (hier != 0 && d->n_v1_names < MAX_SUBSYS)
			strcpy(d->v1_names[d->n_v1_names++], name);
	}
	fclose(f);
	return 0;
}

/* Undoes mountinfo's octal escapes (" " is "\040") in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*out++ = *s;
	}
	*out = '\0';
}

static void copy_mnt(char dst[256], const char *mnt)
{
	if (!dst[0])	/* the first mount of a hierarchy wins */
		snprintf(dst, 256, "%s", mnt);
}

/* One mountinfo line: "id parent maj:min root mountpoint opts [tags] - fstype source superopts". */
static void parse_mount_line(char *line, struct detect *d)
{
	char *sep = strstr(line, " - "), *save = NULL, *mnt, *fstype, *super;

	if (!sep)
		return;
	*sep = '\0';
	strtok_r(line, " ", &save);
	for (int i = 0; i < 3; i++)
		strtok_r(NULL, " ", &save);
	mnt = strtok_r(NULL, " ", &save);
	save = NULL;
	fstype = strtok_r(sep + 3, " \n", &save);
	strtok_r(NULL, " \n", &save);
	super = strtok_r(NULL, " \n", &save);
	if (!mnt || !fstype || !super)
		return;
	unescape(mnt);
	if (strlen(mnt) >= 256) {
		log_debug("cgfs: mount point too long, ignored: %s", mnt);
		return;
	}
	if (!strcmp(fstype, "cgroup2")) {
		d->has_v2 = true;
		copy_mnt(d->v2_mnt, mnt);
		return;
	}
	if (strcmp(fstype, "cgroup"))
		return;
	/* "name=systemd" and friends carry no controller; only tokens that
	 * /proc/cgroups names make this a controller hierarchy. */
	for (int i = 0; i < d->n_v1_names; i++)
		if (has_token(super, ",", d->v1_names[i]))
			d->has_v1 = true;
	if (has_token(super, ",", "cpuset"))
		copy_mnt(d->cpuset_v1, mnt);
	if (has_token(super, ",", "cpu"))
		copy_mnt(d->cpu_v1, mnt);
}

static int parse_mountinfo(const char *file, struct detect *d)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		parse_mount_line(line, d);
	free(line);
	fclose(f);
	return 0;
}

/* Controllers available at the v2 root ("cpuset cpu io memory ..."). */
static int read_v2_controllers(const char *mnt, char *buf, size_t len)
{
	char file[300];
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "%s/cgroup.controllers", mnt);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int detect_fill(const struct detect *d, struct cgfs_mounts *m)
{
	char ctrls[512] = "";

	if (!d->has_v1 && !d->has_v2)
		return -ENOENT;
	m->mode = !d->has_v1 ? CGFS_MODE_V2 : d->has_v2 ? CGFS_MODE_HYBRID : CGFS_MODE_V1;
	if (d->has_v2 && read_v2_controllers(d->v2_mnt, ctrls, sizeof(ctrls)) < 0)
		log_debug("cgfs: cannot read %s/cgroup.controllers", d->v2_mnt);

	if (d->cpuset_v1[0]) {
		snprintf(m->cpuset_mnt, sizeof(m->cpuset_mnt), "%s", d->cpuset_v1);
		m->cpuset_hierarchy_id = d->cpuset_hier;
	} else if (has_token(ctrls, " \n", "cpuset")) {
		snprintf(m->cpuset_mnt, sizeof(m->cpuset_mnt), "%s", d->v2_mnt);
		m->cpuset_on_v2 = true;
	} else
		return -ENOENT;

	if (d->cpu_v1[0])
		snprintf(m->cpu_mnt, sizeof(m->cpu_mnt), "%s", d->cpu_v1);
	else if (has_token(ctrls, " \n", "cpu"))
		snprintf(m->cpu_mnt, sizeof(m->cpu_mnt), "%s", d->v2_mnt);
	return 0;
}

int cgfs_detect(const char *mountinfo, const char *cgroups, struct cgfs_mounts *ret)
{
	struct detect d = { 0 };
	struct cgfs_mounts m = { 0 };
	int r;

	if (!ret)
		return -EINVAL;
	r = parse_proc_cgroups(cgroups ? cgroups : "/proc/cgroups", &d);
	if (r < 0)
		return r;
	if (d.cpuset_known && !d.cpuset_enabled) {
		log_debug("cgfs: cpuset controller disabled (cgroup_disable=cpuset?)");
		return -ENOENT;
	}
	r = parse_mountinfo(mountinfo ? mountinfo : "/proc/self/mountinfo", &d);
	if (r < 0)
		return r;
	r = detect_fill(&d, &m);
	if (r < 0) {
		log_debug("cgfs: no hierarchy holds the cpuset controller");
		return r;
	}
	log_debug("cgfs: mode %d, cpuset at %s (%s), cpu at %s", m.mode, m.cpuset_mnt,
		  m.cpuset_on_v2 ? "v2" : "v1", m.cpu_mnt[0] ? m.cpu_mnt : "(none)");
	*ret = m;
	return 0;
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
	if (!m->cpuset_on_v2) {
		char v[8];

		cg->top_balances = read_text(cg->cpuset_fd, "/", "cpuset.sched_load_balance",
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
	free(cg);
}

const struct cgfs_mounts *cgfs_mounts(const struct cgfs *cg)
{
	return &cg->m;
}

static int dir_exists(int dirfd, const char *path)
{
	int fd = cg_open(dirfd, path, NULL, O_PATH | O_DIRECTORY);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int cgfs_find_kubepods_root(struct cgfs *cg, char *ret, size_t len)
{
	static const char *const roots[] = { "/kubepods.slice", "/kubepods" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		int r = dir_exists(cg->cpuset_fd, roots[i]);

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
	n = read_text(cg->cpuset_fd, path, file, buf, sizeof(buf));
	if (n == -EFBIG)
		n = -EINVAL;
	if (n < 0)
		return (int)n;
	return cpulist_parse(buf, ret);
}

/* One write(2) of m's cpulist through *fd, opening it first when it is
 * -1 (the caller owns and closes it). Returns 0, -ENOENT (vanished), -errno. */
static int write_mask_fd(struct cgfs *cg, const char *path, const char *file,
			 const struct cpumask *m, int *fd)
{
	char buf[CPULIST_MAX + 1];
	int n = cpulist_format(m, buf, sizeof(buf) - 1);
	ssize_t k;

	if (n < 0)
		return n;
	strcpy(buf + n, "\n");
	if (*fd < 0) {
		int r = cg_open(cg->cpuset_fd, path, file, O_WRONLY);

		if (r < 0)
			return r;
		*fd = r;
	}
	k = write(*fd, buf, (size_t)n + 1);
	if (k < 0)
		k = vanished(-errno);
	else if (k != n + 1)
		k = -EIO;
	if (k < 0)
		log_debug("cgfs: write %s/%s \"%.*s\": %s", path, file, n, buf, strerror((int)-k));
	return (int)(k < 0 ? k : 0);
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

int cgfs_write_cpuset_fd(struct cgfs *cg, const char *root, const char *path,
			 enum cgfs_cpuset_file f, const struct cpumask *m, int *fd)
{
	const char *file;
	int r, w;

	if (!cg || !root || !path || !m || !fd)
		return -EINVAL;
	if (f == CGFS_EFFECTIVE_CPUS || f == CGFS_EFFECTIVE_MEMS)
		return -EPERM;
	file = cpuset_file(cg, f);
	if (!file)
		return -EINVAL;

	if (cg->m.cpuset_on_v2) {
		r = widen_ancestors(cg, root, path, f, m);
		return r < 0 ? r : write_mask_fd(cg, path, file, m, fd);
	}
	if (cpumask_empty(m))
		return -EINVAL;
	/* v1 refuses a set its parent does not hold with EACCES
	 * (cpuset1_validate_change); EINVAL/ENOSPC are taken alike. */
	r = write_mask_fd(cg, path, file, m, fd);
	if (r != -EACCES && r != -EINVAL && r != -ENOSPC)
		return r;
	w = widen_ancestors(cg, root, path, f, m);
	if (w <= 0)
		return w < 0 ? w : r;
	return write_mask_fd(cg, path, file, m, fd);
}

int cgfs_write_cpuset(struct cgfs *cg, const char *root, const char *path,
		      enum cgfs_cpuset_file f, const struct cpumask *m)
{
	int fd = -1, r = cgfs_write_cpuset_fd(cg, root, path, f, m, &fd);

	if (fd >= 0)
		close(fd);
	return r;
}

int cgfs_skip_sched_rebuild(struct cgfs *cg, const char *path)
{
	if (!cg || !path)
		return -EINVAL;
	if (cg->m.cpuset_on_v2 || !cg->top_balances)
		return 0;
	return write_text(cg->cpuset_fd, path, "cpuset.sched_load_balance", "0");
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
	ssize_t n = read_text(dirfd, path, file, buf, sizeof(buf));

	if (n < 0)
		return n == -EFBIG ? -EINVAL : (int)n;
	return parse_i64(buf, ret);
}

/* cpu.max: "<quota|max> <period>". */
static int read_cpu_max(struct cgfs *cg, const char *path, int64_t *quota, int64_t *period)
{
	char buf[64], *sp;
	ssize_t n = read_text(cg->cpu_fd, path, "cpu.max", buf, sizeof(buf));

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
	fd = cg_open(cg->cpuset_fd, path, NULL, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	close(fd);
	if (r == 0)
		*ret_id = (uint64_t)st.st_ino;
	return r;
}

#define KILL_ROUNDS	20
#define PROCS_MAX	(16u << 20)

/* Reads the whole of path's cgroup.procs into a malloc'ed string. */
static int read_procs(struct cgfs *cg, const char *path, char **ret)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL;
	int fd = cg_open(cg->cpuset_fd, path, "cgroup.procs", O_RDONLY), r = 0;

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
			r = k < 0 ? vanished(-errno) : 0;
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

/* SIGKILLs every pid in cgroup.procs. Returns how many it listed (0 =
 * empty), -ENOENT (vanished), -errno. Never signals pid <= 1 or itself. */
static int kill_round(struct cgfs *cg, const char *path)
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
		if (pid <= 1 || pid == (long)getpid()) {
			log_debug("cgfs: %s holds pid %ld, not killing it", path, pid);
			continue;
		}
		if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
			log_debug("cgfs: kill %ld in %s: %s", pid, path, strerror(errno));
	}
	free(procs);
	return n;
}

/* v2 (5.14+): one write to cgroup.kill. Returns 1 when done, 0 when the
 * file does not exist (older kernel, or v1), -ENOENT (vanished), -errno. */
static int write_cgroup_kill(struct cgfs *cg, const char *path)
{
	int r = write_text(cg->cpuset_fd, path, "cgroup.kill", "1");

	if (r == -ENOENT) {
		r = dir_exists(cg->cpuset_fd, path);
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
		cfd = open_beneath(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
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
	fd = cg_open(cg->cpuset_fd, w.path, NULL, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	r = fn(w.path, arg);
	if (r < 0) {
		close(fd);
		return r;
	}
	return walk_dir(&w, fd, len);
}
