/*
 * Finding the cgroup hierarchies: which mount holds the cpuset controller
 * and which holds cpu, and whether the machine is v1, hybrid or v2, from
 * /proc/self/mountinfo and /proc/cgroups (proc(5), cgroups(7)).
 * Pure parsing apart from reading those two files and, on v2, the root's
 * cgroup.controllers.
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
#include "../user/log.h"

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
