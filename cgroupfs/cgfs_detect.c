// SPDX-License-Identifier: Apache-2.0
/*
 * Finding the cgroup hierarchies: which mount holds the cpuset controller
 * and which holds cpu, and whether the machine is v1, hybrid or v2, from
 * /proc/self/mountinfo and /proc/cgroups (proc(5), cgroups(7)).
 * Pure parsing apart from reading those two files and, on v2, the root's
 * cgroup.controllers; cgfs_detect_text takes all three as text, and both
 * entries share every line of the parsing (stdio streams, fmemopen for
 * text), so tests and the fuzzer exercise what the daemon runs.
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
	char cpuset_v1[256], cpu_v1[256], freezer_v1[256];
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
static void parse_proc_cgroups(FILE *f, struct detect *d)
{
	char line[256];

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
}

/* Undoes mountinfo's octal escapes (" " is "\040") in place. Returns
 * false for "\000", which no kernel writes and which would cut the path
 * short into another, valid-looking one. */
static bool unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			if (!*out++)
				return false;
			s += 3;
		} else
			*out++ = *s;
	}
	*out = '\0';
	return true;
}

/* Whether /proc/cgroups binds controller name to a v1 hierarchy. */
static bool bound_v1(const struct detect *d, const char *name)
{
	for (int i = 0; i < d->n_v1_names; i++)
		if (!strcmp(d->v1_names[i], name))
			return true;
	return false;
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
	/* A mount point is absolute: anything else is not a kernel line. */
	if (!unescape(mnt) || mnt[0] != '/') {
		log_debug("cgfs: mountinfo line with a bad mount point ignored");
		return;
	}
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
	 * /proc/cgroups names make this a controller hierarchy. The same
	 * rule picks the cpuset and cpu mounts: a v1 line naming a controller
	 * that /proc/cgroups puts on hierarchy 0 (v2) is stale or forged, and
	 * taking it would pair a v1 mount with mode V2 (found by fuzzing,
	 * tests/fuzz/corpus/cgfs_detect/regress-*). */
	for (int i = 0; i < d->n_v1_names; i++)
		if (has_token(super, ",", d->v1_names[i]))
			d->has_v1 = true;
	if (has_token(super, ",", "cpuset") && bound_v1(d, "cpuset"))
		copy_mnt(d->cpuset_v1, mnt);
	if (has_token(super, ",", "cpu") && bound_v1(d, "cpu"))
		copy_mnt(d->cpu_v1, mnt);
	if (has_token(super, ",", "freezer") && bound_v1(d, "freezer"))
		copy_mnt(d->freezer_v1, mnt);
}

static void parse_mountinfo(FILE *f, struct detect *d)
{
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, f) > 0)
		parse_mount_line(line, d);
	free(line);
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

/* ctrls: the v2 root's cgroup.controllers text, or NULL to read it from
 * the v2 mount. */
static int detect_fill(const struct detect *d, const char *v2_controllers, struct cgfs_mounts *m)
{
	char ctrls[512] = "";

	if (!d->has_v1 && !d->has_v2)
		return -ENOENT;
	m->mode = !d->has_v1 ? CGFS_MODE_V2 : d->has_v2 ? CGFS_MODE_HYBRID : CGFS_MODE_V1;
	if (d->has_v2 && v2_controllers)
		snprintf(ctrls, sizeof(ctrls), "%s", v2_controllers);
	else if (d->has_v2 && read_v2_controllers(d->v2_mnt, ctrls, sizeof(ctrls)) < 0)
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
	/* v2 freezes with cgroup.freeze in the cpuset hierarchy itself. */
	if (!m->cpuset_on_v2 && d->freezer_v1[0])
		snprintf(m->freezer_mnt, sizeof(m->freezer_mnt), "%s", d->freezer_v1);
	return 0;
}

/* Both sources as streams; the rest of cgfs_detect / cgfs_detect_text. */
static int detect(FILE *mountinfo, FILE *cgroups, const char *v2_controllers,
		  struct cgfs_mounts *ret)
{
	struct detect d = { 0 };
	struct cgfs_mounts m = { 0 };
	int r;

	parse_proc_cgroups(cgroups, &d);
	if (d.cpuset_known && !d.cpuset_enabled) {
		log_debug("cgfs: cpuset controller disabled (cgroup_disable=cpuset?)");
		return -ENOENT;
	}
	parse_mountinfo(mountinfo, &d);
	r = detect_fill(&d, v2_controllers, &m);
	if (r < 0) {
		log_debug("cgfs: no hierarchy holds the cpuset controller");
		return r;
	}
	log_debug("cgfs: mode %d, cpuset at %s (%s), cpu at %s, freezer at %s", m.mode,
		  m.cpuset_mnt, m.cpuset_on_v2 ? "v2" : "v1", m.cpu_mnt[0] ? m.cpu_mnt : "(none)",
		  m.freezer_mnt[0] ? m.freezer_mnt : "(none)");
	*ret = m;
	return 0;
}

int cgfs_detect(const char *mountinfo, const char *cgroups, struct cgfs_mounts *ret)
{
	FILE *mi = NULL, *cg = NULL;
	int r;

	if (!ret)
		return -EINVAL;
	cg = fopen(cgroups ? cgroups : "/proc/cgroups", "re");
	if (!cg)
		return -errno;
	mi = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!mi) {
		r = -errno;
		fclose(cg);
		return r;
	}
	r = detect(mi, cg, NULL, ret);
	fclose(mi);
	fclose(cg);
	return r;
}

/* A read-only stream over text (glibc >= 2.22 takes "" too; mode "r"
 * never writes to the buffer). NULL with errno on failure. */
static FILE *text_stream(const char *text)
{
	return fmemopen((void *)text, strlen(text), "r");
}

int cgfs_detect_text(const char *mountinfo, const char *cgroups, const char *v2_controllers,
		     struct cgfs_mounts *ret)
{
	FILE *mi = NULL, *cg = NULL;
	int r = -ENOMEM;

	if (!mountinfo || !cgroups || !v2_controllers || !ret)
		return -EINVAL;
	mi = text_stream(mountinfo);
	cg = text_stream(cgroups);
	if (mi && cg)
		r = detect(mi, cg, v2_controllers, ret);
	if (mi)
		fclose(mi);
	if (cg)
		fclose(cg);
	return r;
}
