// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetd --release (release.h): the instance lock, then what is under
 * the kubepods root (release_tree.c), host isolation and the pins, each
 * counted and logged, and one summary. Every step runs even when an
 * earlier one failed: the node gets back as much as can be given.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "user/base/files.h"
#include "user/base/log.h"
#include "user/base/strmap.h"
#include "user/host/host.h"
#include "user/process/instance_lock.h"
#include "release.h"
#include "release_internal.h"

/* --- the lock ---------------------------------------------------------------- */

static bool exists(const char *path)
{
	struct stat st;

	return path[0] && lstat(path, &st) == 0;
}

/* What exists of the state and pin dirs, locked as a start does. Returns
 * 0, or the exit code (logged). */
static int lock(const struct cpusetd_config *cfg, struct instance_lock *l)
{
	const char *state = exists(cfg->state_dir) ? cfg->state_dir : "";
	const char *pins = exists(cfg->pin_dir) ? cfg->pin_dir : "";
	const char *what;
	char why[96];
	struct stat st;
	pid_t holder;
	int r;

	if (state[0]) {
		r = files_check_private_dir(state, geteuid(), &st);
		if (r < 0) {
			log_error("release: state_dir %s: %s: neither its lock nor host isolation's "
				  "record can be trusted; nothing released", state,
				  files_refused_why(r, &st, geteuid(), why, sizeof(why)));
			return RELEASE_PARTIAL;
		}
	}
	r = instance_lock_take(state, pins, l, &holder, &what);
	if (r == -EWOULDBLOCK) {
		if (holder > 0)
			log_error("release: a running cpusetd (pid %d) holds %s: nothing released; "
				  "stop it first (systemctl stop cpusetd)", (int)holder, what);
		else
			log_error("release: another process holds the lock on %s: nothing released; "
				  "stop the cpusetd that runs first", what);
		return RELEASE_LOCKED;
	}
	if (r < 0) {
		log_error("release: cannot lock %s: %s; nothing released", what,
			  what == state ? instance_lock_why(r) : strerror(-r));
		return RELEASE_PARTIAL;
	}
	return 0;
}
/* --- host isolation ---------------------------------------------------------------- */

static void restore_isolation(struct release *rl)
{
	const struct cpusetd_config *cfg = rl->cfg;
	struct host_opts o = { .cg = rl->cg, .state_dir = cfg->state_dir, .proc = "/proc",
			       .sys = "/sys", .dry_run = cfg->dry_run };
	char skip[sizeof(cfg->isolate_host_skip)], path[PATH_MAX + 32], *save = NULL;
	struct host_pass pass;
	struct host *h;
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, HOST_STATE_FILE);
	if (lstat(path, &st) < 0) {
		rl->iso = "nothing recorded";
		return;
	}
	snprintf(skip, sizeof(skip), "%s", cfg->isolate_host_skip);
	for (char *t = strtok_r(skip, ",", &save); t && o.n_skip < HOST_MAX_SKIP;
	     t = strtok_r(NULL, ",", &save))
		o.skip[o.n_skip++] = t;
	r = host_new(&o, &h);	/* a file that is not ours: refused and logged there */
	if (r < 0) {
		rl->failed = true;
		rl->iso = "its state file was refused and kept";
		if (r != -EPERM)
			log_error("release: isolation: %s: %s", path, strerror(-r));
		return;
	}
	r = host_restore(h, rl->root, &rl->topo->online, &pass);
	rl->iso_restored = pass.restored;
	if (release_dry(rl)) {		/* logged by host_restore: what it would write */
		rl->iso = "dry run, what would be given back is logged";
	} else if (r < 0 || host_pending(h) || lstat(path, &st) == 0) {
		rl->failed = true;
		rl->iso = "not all given back; its state file is kept";
		log_error("release: isolation: %u given back, %u refused; %s is kept with what "
			  "is left (README \"Host isolation\" says how to give it back by hand)",
			  pass.restored, pass.refused, path);
	} else {
		rl->iso = "given back, its state file removed";
	}
	host_free(h);
}

/* --- the pins ------------------------------------------------------------------------ */

/* Removes what is in the directory open as dfd (closed), depth first.
 * Counts the removed files into *n. Returns 0 or the first -errno. */
static int remove_tree(int dfd, unsigned *n)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		int sub, e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
			(*n)++;
			continue;
		}
		if (errno != EISDIR && errno != EPERM) {
			r = r ? r : -errno;
			continue;
		}
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = sub < 0 ? -errno : remove_tree(sub, n);
		if (e == 0 && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
			e = -errno;
		if (e < 0 && !r)
			r = e;
	}
	closedir(d);
	return r;
}

/* The pinned maps are ours, and nothing uses them once the daemon is
 * gone. Only on a bpffs: a pin_dir set to anything else is left alone. */
static void remove_pins(struct release *rl)
{
	const char *dir = rl->cfg->pin_dir;
	struct statfs sf;
	int fd, r;

	if (!exists(dir))
		return;
	if (statfs(dir, &sf) < 0 || sf.f_type != BPF_FS_MAGIC) {
		log_warn("release: %s is not on a bpffs: left alone", dir);
		return;
	}
	if (release_dry(rl)) {
		log_info("release (dry run): would remove the pinned maps under %s", dir);
		return;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = fd < 0 ? -errno : remove_tree(fd, &rl->pins);
	if (r == 0 && rmdir(dir) < 0)
		r = -errno;
	if (r < 0) {
		rl->failed = true;
		log_error("release: cannot remove the pinned maps under %s: %s", dir, strerror(-r));
	}
}

/* --- the run --------------------------------------------------------------------------- */

/* The cgroup mounts, the topology and the kubepods root ("" none) into
 * rl. 0 or -errno (logged). */
static int open_node(struct release *rl)
{
	struct cgfs_mounts m;
	int r;

	r = cgfs_detect(NULL, NULL, &m);
	if (r < 0) {
		log_error("release: no cgroup hierarchy with the cpuset controller: %s", strerror(-r));
		return r;
	}
	r = cgfs_open(&m, &rl->cg);
	if (r < 0) {
		log_error("release: cannot open %s: %s", m.cpuset_mnt, strerror(-r));
		return r;
	}
	rl->v2 = m.cpuset_on_v2;
	r = topo_read("/sys", &rl->topo);
	if (r < 0) {
		log_error("release: cannot read the CPU topology from /sys: %s", strerror(-r));
		return r;
	}
	/* The daemon's root, as main.c finds it. */
	if (rl->cfg->kubepods_root[0]) {
		uint64_t id;

		if (cgfs_cgroup_id(rl->cg, rl->cfg->kubepods_root, &id) == 0)
			snprintf(rl->root, sizeof(rl->root), "%s", rl->cfg->kubepods_root);
	} else if (cgfs_find_kubepods_root(rl->cg, rl->root, sizeof(rl->root)) < 0) {
		rl->root[0] = '\0';
	}
	return 0;
}

/* One line: what was given back, per kind, and what was not. */
static void summary(const struct release *rl)
{
	bool any = rl->slices || rl->pods || rl->containers || rl->pinned || rl->quotas ||
		   rl->marks || rl->iso_restored || rl->pins;

	if (!any && !rl->failed) {
		log_notice("release: nothing to give back (exclusive containers keeping their CPUs "
			   "until they end: %u)", rl->kept_n);
		return;
	}
	log_msg(rl->failed ? LOG_ERR : LOG_NOTICE,
		"release%s%s: given every CPU: %u QoS slices, %u pods, %u containers; exclusive "
		"containers keeping their CPUs until they end: %u%s; CFS quotas restored: %u "
		"(stale marks dropped: %u); host isolation: %s (%u things given back); pinned "
		"maps removed: %u", release_dry(rl) ? " (dry run, nothing written)" : "",
		rl->failed ? " (not all of it)" : "", rl->slices, rl->pods,
		rl->containers, rl->kept_n, rl->pinned ? " (their sets made their own first)" : "",
		rl->quotas, rl->marks, rl->iso, rl->iso_restored, rl->pins);
}

int release_run(const struct cpusetd_config *cfg, release_exclusive_fn exclusive)
{
	struct instance_lock l = { .state_fd = -1, .pin_fd = -1 };
	struct release rl = { .cfg = cfg, .exclusive = exclusive, .iso = "nothing recorded" };
	int code = lock(cfg, &l);

	if (code)
		return code;
	if (open_node(&rl) < 0) {
		rl.failed = true;
	} else {
		release_tree(&rl);
		if (exists(cfg->state_dir))
			restore_isolation(&rl);
	}
	remove_pins(&rl);
	summary(&rl);
	for (size_t i = 0; i < rl.n; i++)
		free(rl.paths[i]);
	free(rl.paths);
	strmap_free(rl.kept);
	topo_free(rl.topo);
	cgfs_free(rl.cg);
	instance_lock_release(&l);
	return rl.failed ? RELEASE_PARTIAL : RELEASE_DONE;
}
