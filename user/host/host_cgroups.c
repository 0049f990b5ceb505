// SPDX-License-Identifier: Apache-2.0
/*
 * Host cpuset cgroups: every cgroup of the cpuset hierarchy but its root,
 * the kubepods subtree (the controller's), the kubepods root's ancestors
 * (they hold the kubepods tree: on v1 they cannot be narrowed below it)
 * and the subtrees isolate_host_skip names.
 *
 * v1: a cgroup with an empty cpuset.cpus has no task (the kernel refuses
 * one there) and is left alone. v2: a cgroup without cpuset.cpus does not
 * have the controller, nor can its children; one whose cpuset.cpus is ""
 * inherits, so it is narrowed only when its parent is not ours to narrow
 * (its set is then the host's), and given "" back after.
 *
 * The walk is our own (openat, O_NOFOLLOW, below the cpuset mount), so
 * the kubepods subtree, thousands of containers, is never descended.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "host_internal.h"
#include "user/base/log.h"

struct walk {
	struct host *h;
	const char *root;		/* kubepods root, "" none */
	const struct cpumask *online, *host;
	bool active, v2;
	char path[CGFS_PATH_MAX];
	int err;			/* first -errno other than a vanished cgroup */
};

/* path is root, or below it. */
static bool under(const char *root, const char *path)
{
	size_t n = strlen(root);

	return n > 1 && strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* path is a strict ancestor of root. */
static bool ancestor_of(const char *root, const char *path)
{
	size_t n = strlen(path);

	if (!root[0] || strcmp(path, "/") == 0)
		return root[0] != '\0';
	return strncmp(root, path, n) == 0 && root[n] == '/';
}

/* One cgroup (w->path, depth levels below the root). Returns whether its
 * children may hold cpusets of their own (v2: it has the controller). */
static int plan_one(struct walk *w, int depth, bool parent_ours, bool *ours)
{
	struct cpumask own;
	int r;

	*ours = false;
	r = cgfs_read_cpuset(w->h->o.cg, w->path, CGFS_CPUS, &own);
	if (r == -ENOENT)
		return w->v2 ? 0 : 1;	/* v2: no controller here nor below; v1: vanished */
	if (r < 0) {
		host_reason(w->h, "cgroup %s: %s", w->path, strerror(-r));
		w->h->st.cgroups_left++;
		return 1;
	}
	if (cpumask_empty(&own) && (!w->v2 || parent_ours)) {
		*ours = w->v2;	/* v2: inherits what we give its parent */
		return 1;	/* v1: no task can be there */
	}
	*ours = true;
	cpumask_and(&own, &own, w->online);
	if (!w->v2 && cpumask_empty(&own))
		return 1;
	r = host_plan_thing(w->h, HOST_CGROUP, w->path, 0, depth, &own, w->host, w->active, NULL,
			    NULL);
	if (r == -ENOMEM)
		return r;
	if (r == 1) {
		host_reason(w->h, "cgroup %s: its CPUs are all exclusive; left as it is", w->path);
		w->h->st.cgroups_left++;
	}
	return 1;
}

static int walk_dir(struct walk *w, int dfd, size_t len, int depth, bool parent_ours)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		bool ours = false;
		int cfd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (len + 1 + nl >= sizeof(w->path))
			continue;
		w->path[len] = '/';
		memcpy(w->path + len + 1, de->d_name, nl + 1);
		if (under(w->root, w->path) || host_skipped(&w->h->o, w->path))
			goto next;
		if (!ancestor_of(w->root, w->path)) {
			r = plan_one(w, depth, parent_ours, &ours);
			if (r < 0)
				break;
			if (r == 0)
				goto next;
		}
		cfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			goto next;	/* vanished */
		r = walk_dir(w, cfd, len + 1 + nl, depth + 1, ours);
		if (r < 0)
			break;
next:
		w->path[len] = '\0';
	}
	closedir(d);
	return r;
}

int host_cgroups_plan(struct host *h, const char *kubepods_root, const struct cpumask *online,
		      const struct cpumask *host, bool active)
{
	const struct cgfs_mounts *m = cgfs_mounts(h->o.cg);
	struct walk w = { .h = h, .root = kubepods_root ? kubepods_root : "", .online = online,
			  .host = host, .active = active, .v2 = m->cpuset_on_v2 };
	int fd = open(m->cpuset_mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	w.path[0] = '\0';
	r = walk_dir(&w, fd, 0, 1, false);
	return r < 0 ? r : 0;
}

int host_cgroup_write(struct host *h, const char *path, const struct cpumask *m)
{
	int fd = -1, r;

	if (!cgfs_mounts(h->o.cg)->cpuset_on_v2)
		return cgfs_write_cpuset(h->o.cg, path, path, CGFS_CPUS, m);	/* root = path: no widening */
	r = cgfs_write_cpus_planned(h->o.cg, path, m, &fd);
	if (r == -ENOSPC && cpumask_empty(m)) {
		/* Some kernels (6.1, the VM lane's) refuse "" on a populated cpuset that had
		 * CPUs (validate_change). Every online CPU is what it had
		 * (its parent is the root): that, instead of inheriting. */
		log_info("isolation: cgroup %s has tasks and the kernel refuses \"\" (inherit) "
			 "back; given every online CPU instead", path);
		r = cgfs_write_cpus_planned(h->o.cg, path, &h->online, &fd);
	}
	if (fd >= 0)
		close(fd);
	return r;
}
