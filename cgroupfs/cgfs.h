/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroupfs: everything that knows cgroup v1 vs v2, the kubelet cgroup
 * drivers' path naming, and the ordering rules of cpuset writes.
 *
 * Paths are relative to the root of the hierarchy that holds the cpuset
 * controller, with a leading '/': "/kubepods/burstable/pod<uid>/<id>".
 * All file access goes through openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
 * from the hierarchy's mount fd, so a path never leaves cgroupfs.
 *
 * Library code: logs at debug level only; callers decide and log.
 * Kernel rules (Documentation/admin-guide/cgroup-v1/cpusets.rst,
 * Documentation/admin-guide/cgroup-v2.rst "Cpuset"):
 *   v1: a child's cpuset.cpus/mems must stay a subset of its parent's, and
 *       a cgroup with tasks may not have an empty cpus or mems.
 *   v2: effective = own ∩ parent's effective; an empty value inherits, and
 *       an empty intersection falls back to the parent's effective set.
 */
#ifndef CPUSETD_CGFS_H
#define CPUSETD_CGFS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/base/cpumask.h"
#include "user/base/qos.h"

/* Longest cgroup path (relative, with leading '/') handled. */
#define CGFS_PATH_MAX	CPUSETD_PATH_MAX

enum cgfs_mode {
	CGFS_MODE_V1 = 1,	/* only v1 hierarchies */
	CGFS_MODE_HYBRID = 2,	/* v1 controllers + a v2 mount (e.g. /sys/fs/cgroup/unified) */
	CGFS_MODE_V2 = 3,	/* pure v2 */
};

/* Where the controllers we need live, as read from mountinfo. */
struct cgfs_mounts {
	enum cgfs_mode mode;
	bool cpuset_on_v2;		/* cpuset controller is on the v2 hierarchy */
	int cpuset_hierarchy_id;	/* /proc/cgroups id; 0 for v2 */
	char cpuset_mnt[256];		/* mount point holding cpuset */
	char cpu_mnt[256];		/* mount point holding cpu (quota) */
	char freezer_mnt[256];		/* v1 freezer hierarchy (cgfs_kill); "" = none */
};

/*
 * Reads mountinfo (NULL: /proc/self/mountinfo) and cgroups (NULL:
 * /proc/cgroups) and fills *ret.
 * Returns 0; -ENOENT when no hierarchy has the cpuset controller (on v2:
 * "cpuset" missing from the root's cgroup.controllers); -errno on I/O error.
 */
int cgfs_detect(const char *mountinfo, const char *cgroups, struct cgfs_mounts *ret);

/*
 * cgfs_detect on texts instead of files, for tests and fuzzing: mountinfo
 * and cgroups are the contents of the two files, v2_controllers that of
 * the v2 root's cgroup.controllers (used instead of reading it).
 * Returns 0; -ENOENT as cgfs_detect; -EINVAL for a NULL argument;
 * -ENOMEM.
 */
int cgfs_detect_text(const char *mountinfo, const char *cgroups, const char *v2_controllers,
		     struct cgfs_mounts *ret);

struct cgfs;

/*
 * Opens the hierarchies named in *m. Returns 0 and a handle in *ret (free
 * with cgfs_free), or -errno when a mount point cannot be opened.
 */
int cgfs_open(const struct cgfs_mounts *m, struct cgfs **ret);
void cgfs_free(struct cgfs *cg);
const struct cgfs_mounts *cgfs_mounts(const struct cgfs *cg);

/*
 * Finds the kubepods root: "/kubepods.slice" (systemd driver) if present,
 * else "/kubepods" (cgroupfs driver). Writes it to ret (size len).
 * Returns 0, -ENOENT when neither exists, -ENAMETOOLONG.
 */
int cgfs_find_kubepods_root(struct cgfs *cg, char *ret, size_t len);

/* --- path naming (pure; no I/O) --- */

enum cgfs_level {
	CGFS_LEVEL_NONE = 0,	/* outside the root, or not a kubelet name */
	CGFS_LEVEL_ROOT,	/* the kubepods root itself */
	CGFS_LEVEL_QOS,		/* burstable / besteffort slice */
	CGFS_LEVEL_POD,		/* pod<uid> */
	CGFS_LEVEL_CONTAINER,	/* a container (or sandbox) under a pod */
};

enum cgfs_runtime {
	CGFS_RT_PLAIN = 0,	/* bare id (cgroupfs driver, any runtime) */
	CGFS_RT_CONTAINERD,	/* cri-containerd-<id>.scope */
	CGFS_RT_CRIO,		/* crio-<id>.scope or crio-<id> */
	CGFS_RT_DOCKER,		/* docker-<id>.scope */
};

struct cgfs_path_info {
	enum cgfs_level level;
	enum pod_qos qos;
	enum cgfs_runtime runtime;
	bool systemd;			/* systemd driver naming */
	char pod_uid[64];		/* with dashes, e.g. "1b4e28ba-2fa1-..." */
	char container_id[72];		/* lowercase hex */
};

/*
 * Classifies path relative to the kubepods root (both with leading '/').
 * Recognises the cgroupfs driver ("<root>/burstable/pod<uid>/<id>") and the
 * systemd driver ("<root>/kubepods-burstable.slice/kubepods-burstable-pod
 * <uid_with_underscores>.slice/cri-containerd-<id>.scope", crio-, docker-).
 * Container ids are 12-64 lowercase hex digits; pod UIDs are lowercase
 * letters, digits and dashes (at most 63). The driver is told by the first
 * component below root (".slice" = systemd), whatever root is called.
 * Trailing and doubled slashes are ignored; "." and ".." give NONE.
 * CRI-O "crio-conmon-<id>.scope" and anything unrecognised get
 * CGFS_LEVEL_NONE, with every other field zero. For LEVEL_ROOT, systemd is
 * set when root's last component ends in ".slice".
 * Returns 0 and fills *ret (level NONE included); -EINVAL for NULL/overlong.
 */
int cgfs_parse_path(const char *root, const char *path, struct cgfs_path_info *ret);

/* --- files --- */

enum cgfs_cpuset_file {
	CGFS_CPUS = 0,		/* cpuset.cpus */
	CGFS_MEMS,		/* cpuset.mems */
	CGFS_EFFECTIVE_CPUS,	/* cpuset.effective_cpus (read only) */
	CGFS_EFFECTIVE_MEMS,	/* cpuset.effective_mems (read only) */
};

/*
 * Reads a cpuset file of path into *ret (CPU ids or NUMA node ids).
 * Returns 0, -ENOENT when the cgroup vanished, -EINVAL on unparsable
 * content, -ERANGE for an id >= CPUSETD_MAX_CPUS, other -errno.
 */
int cgfs_read_cpuset(struct cgfs *cg, const char *path, enum cgfs_cpuset_file f,
		     struct cpumask *ret);

/*
 * The CPUs path's tasks may run on now, into *ret: on v1 its cpuset.cpus
 * (a child is always within its parent there); on v2 its
 * cpuset.cpus.effective, because its own cpuset.cpus says nothing about
 * that when it inherits: "" or, once it had a set, every CPU above
 * (cgfs_plan.h), and a set disjoint from its parent's falls back to the
 * parent's. This is the set a restart must not move a container from.
 * Returns 0, -ENOENT when the cgroup vanished, -EINVAL (NULL arguments,
 * unparsable content), -ERANGE, other -errno.
 */
int cgfs_read_running_cpus(struct cgfs *cg, const char *path, struct cpumask *ret);

/*
 * Whether cgfs_read_running_cpus reads the cgroup's own cpuset.cpus (v1),
 * so a caller that has just read or written that set may take it as the
 * running one without reading again (a resync of 1,000 containers read
 * each file twice). Cannot fail; false for NULL.
 */
bool cgfs_running_is_own(const struct cgfs *cg);

/*
 * Writes m to path's cpuset.cpus or cpuset.mems (one write(2) of the
 * cpulist). On v1, when the kernel refuses because an ancestor does not
 * hold the set (EACCES from the kernel's subset check; EINVAL/ENOSPC are
 * treated alike), widens the ancestors between root (the kubepods root,
 * inclusive) and path's parent from the top (own := own ∪ m), never above
 * root, and retries once. On v2 the same is done
 * for ancestors whose own non-empty set lacks part of m, so the effective
 * set is m rather than the parent's fallback.
 * An empty m on v1 is refused with -EINVAL (tasks could not run); on v2 it
 * means "inherit".
 * Returns 0 written; -ENOENT when the cgroup vanished (callers treat this
 * as "nothing to do"); -EPERM for the read-only effective files; other
 * -errno from the kernel (v1: -EACCES when widening could not help, e.g.
 * something above root lacks m; -ERANGE for a CPU id the kernel does not
 * know). Ancestors widened before a failure stay widened.
 */
int cgfs_write_cpuset(struct cgfs *cg, const char *root, const char *path,
		      enum cgfs_cpuset_file f, const struct cpumask *m);

/*
 * cgfs_write_cpuset through a file kept open in *fd across calls: *fd = -1
 * the first time; the function opens it and leaves it open; the caller
 * closes it (when the cgroup goes). A resize then costs one write(2) per
 * container instead of a path walk, open, write and close (4.7 µs vs
 * 12 µs per write measured on v1). A write through the fd of a removed
 * cgroup fails with ENODEV, reported as -ENOENT. Same returns otherwise.
 */
int cgfs_write_cpuset_fd(struct cgfs *cg, const char *root, const char *path,
			 enum cgfs_cpuset_file f, const struct cpumask *m, int *fd);

/* A cpulist as written: m's text with its newline (len bytes, 0 = none
 * yet). Zero-initialise it; cgfs_list_of formats it. */
struct cgfs_list {
	struct cpumask m;
	int len;
	char text[CPULIST_MAX + 1];
};

/*
 * l holds m's text: formatted unless l holds m already, so a caller that
 * writes one set to many cgroups (a pool's resize) formats it once.
 * Returns 0, -EINVAL (NULL), -ENOSPC (cannot happen with CPULIST_MAX).
 */
int cgfs_list_of(struct cgfs_list *l, const struct cpumask *m);

/*
 * cgfs_write_cpuset_fd with the set as l (cgfs_list_of), its text not
 * formatted again. -EINVAL also for a list never formatted. Same returns
 * otherwise.
 */
int cgfs_write_cpuset_list_fd(struct cgfs *cg, const char *root, const char *path,
			      enum cgfs_cpuset_file f, const struct cgfs_list *l, int *fd);

/*
 * v2 only: writes m to path's cpuset.cpus exactly as given, through *fd
 * as cgfs_write_cpuset_fd does (*fd = -1 the first time; the caller
 * closes it), and nothing else: no ancestor is read or widened, because
 * the caller planned every level (cgfs_plan.h). An empty m writes ""
 * (the cgroup then uses its parent's effective set, cgroup-v2.rst
 * "Cpuset": "an empty value indicates that the cgroup is using the same
 * setting as the nearest cgroup ancestor with a non-empty cpuset.cpus").
 * Returns 0; -ENOENT when the cgroup vanished; -EOPNOTSUPP on v1; other
 * -errno from the kernel (-EINVAL for a CPU it does not know, -EMFILE).
 */
int cgfs_write_cpus_planned(struct cgfs *cg, const char *path, const struct cpumask *m,
			    int *fd);

/*
 * v1 only: clears cpuset.sched_load_balance of a container cgroup when the
 * top cpuset load-balances every CPU. Then the flag has no effect on the
 * scheduler ("If the top cpuset has sched_load_balance enabled, ... the
 * setting of the flag in any other cpusets won't matter",
 * Documentation/admin-guide/cgroup-v1/cpusets.rst §1.7), but while it is
 * set every cpuset.cpus write to that cgroup rebuilds the sched domains,
 * which walks every cpuset: measured here 43 µs per write with 300
 * cpusets, 19 µs without the rebuild. Known limit: if an admin later turns
 * the top flag off, these containers are left out of load balancing.
 * Does nothing (returns 0) on v2 or when the top cpuset does not balance.
 * Returns 0, -ENOENT (vanished), -errno.
 */
int cgfs_skip_sched_rebuild(struct cgfs *cg, const char *path);

/*
 * Reads the CFS bandwidth of path: cpu.max on v2, cpu.cfs_quota_us and
 * cpu.cfs_period_us on v1 (in the cpu controller's hierarchy).
 * *ret_quota_us is -1 for "no limit"; *ret_period_us > 0.
 * Returns 0, -ENOENT (vanished), -EINVAL (garbage), -EOPNOTSUPP when no
 * hierarchy holds the cpu controller (cpu_mnt empty), -errno.
 */
int cgfs_read_cpu_quota(struct cgfs *cg, const char *path, int64_t *ret_quota_us,
			uint64_t *ret_period_us);

/* --- CFS quota writes and the saved limit (cgfs_quota.c) --- */

/*
 * The extended attribute on a cgroup directory of the cpu hierarchy that
 * holds the limit cpusetd lifted: "<quota_us> <period_us>" in decimal.
 * kernfs keeps it while the cgroup lives (a daemon crash does not lose
 * it, the cgroup's removal does); only CAP_SYS_ADMIN may set trusted.*.
 */
#define CGFS_QUOTA_XATTR	"trusted.cpusetd.cfs_quota"

/*
 * Writes path's CFS bandwidth in the cpu hierarchy: on v2 cpu.max =
 * "max <period_us>" for quota_us -1 (no limit), else "<quota_us>
 * <period_us>"; on v1 cpu.cfs_quota_us = quota_us, preceded, when
 * quota_us > 0 and the period differs, by cpu.cfs_period_us = period_us.
 * Each value is one write(2). The caller orders parent and child: on v1
 * the kernel refuses (-EINVAL) a child's limit above its parent's
 * (kernel/sched/core.c tg_cfs_schedulable_down), so a limit is lifted
 * from the pod down and put back from the container up.
 * period_us: 1000..1000000 (the kernel's range).
 * Returns 0; -EINVAL (bad arguments, or the kernel refused the value);
 * -ENOENT (vanished); -EOPNOTSUPP (no cpu hierarchy); other -errno.
 */
int cgfs_write_cpu_quota(struct cgfs *cg, const char *path, int64_t quota_us, uint64_t period_us);

/*
 * The saved limit of path (CGFS_QUOTA_XATTR) into *quota_us (> 0) and
 * *period_us (1000..1000000). Returns 0; -ENODATA when there is none;
 * -EINVAL when the attribute is not a mark we write; -ENOENT (vanished);
 * -EOPNOTSUPP (no cpu hierarchy, or the filesystem has no xattrs);
 * other -errno.
 */
int cgfs_quota_saved_read(struct cgfs *cg, const char *path, int64_t *quota_us,
			  uint64_t *period_us);

/* Saves quota_us (> 0) / period_us on path (replacing any). Returns 0;
 * -EINVAL for values cgfs_quota_format refuses; -ENOENT; -EOPNOTSUPP;
 * -EPERM without CAP_SYS_ADMIN; other -errno. */
int cgfs_quota_saved_write(struct cgfs *cg, const char *path, int64_t quota_us,
			   uint64_t period_us);

/* Removes path's saved limit. Returns 0 (also when there was none);
 * -ENOENT (vanished); -EOPNOTSUPP; other -errno. */
int cgfs_quota_saved_clear(struct cgfs *cg, const char *path);

/* The mark's text, "<quota_us> <period_us>", into buf (size len).
 * Returns 0; -EINVAL for quota_us <= 0 or a period outside
 * 1000..1000000; -ENAMETOOLONG when len is too small. Pure. */
int cgfs_quota_format(int64_t quota_us, uint64_t period_us, char *buf, size_t len);

/* The inverse, on len bytes of text (no NUL needed): two decimal numbers
 * with one space between, nothing else, in the ranges above. Returns 0
 * or -EINVAL (outputs untouched). Pure. */
int cgfs_quota_parse(const char *text, size_t len, int64_t *quota_us, uint64_t *period_us);

/* The quota a pod gets back (in pod_period_us units) when cpusetd puts
 * back the limit it lifted: kubelet's own value saved_us /
 * saved_period_us (its sum of the containers' limits plus pod overhead),
 * raised to the sum of the n containers' limits (quota_us[i] /
 * period_us[i]) when every one has one, so a resize since then is
 * covered and v1 accepts it (no child above its parent). Returns the
 * quota in µs, > 0; -EINVAL when no value is known. Pure. */
int64_t cgfs_quota_pod_restore_us(int64_t saved_us, uint64_t saved_period_us,
				  uint64_t pod_period_us, const int64_t *quota_us,
				  const uint64_t *period_us, size_t n);

/*
 * cgroup id of path in the cpuset hierarchy (the kernfs node id, as the
 * cgroup tracepoints report it; equal to stat(2) st_ino). On v1/hybrid this
 * is the cpuset hierarchy's id, not the v2 id bpf_get_current_cgroup_id()
 * returns: each hierarchy numbers its own nodes.
 * Returns 0, -ENOENT, -errno.
 */
int cgfs_cgroup_id(struct cgfs *cg, const char *path, uint64_t *ret_id);

/*
 * Kills every task in path, without ever signalling a task outside it:
 *   v2 (5.14+): one write to cgroup.kill;
 *   v1: the cgroup at the same path in the freezer hierarchy (kubelet's
 *       cgroupfs and systemd drivers and runc name a container's cgroup
 *       alike in every hierarchy) is frozen, every pid of cgroup.procs is
 *       SIGKILLed while frozen, then thawed: a frozen task can neither
 *       fork nor exit, so one round reaches them all and no pid read can
 *       be recycled before the signal (cgroup-v1/freezer-subsystem.rst);
 *       v2 before 5.14 the same with cgroup.freeze (5.2+);
 *   otherwise (no freezer, or not frozen within 300 ms): rounds of
 *       pidfd_open, a check that the task is still in path
 *       (/proc/<pid>/cgroup), pidfd_send_signal; kill(2) where pidfds
 *       are missing (< 5.3).
 * Then waits, at most 200 ms, until cgroup.procs reads empty, so an rmdir
 * can follow. Blocks the caller for 600 ms at worst, a few ms usually.
 * Never signals pid 1 or the caller itself.
 * Returns 0 (also when the cgroup vanished), -EBUSY when tasks remain, -errno.
 */
int cgfs_kill(struct cgfs *cg, const char *path);

/*
 * Whether path has a live task: on v2 its cgroup.events "populated" line
 * (which counts descendants too), on v1 whether its cgroup.procs lists a
 * pid (a container cgroup has no children). This is the live truth the
 * BPF populated events are checked against.
 * Returns 1 populated, 0 empty, -ENOENT when the cgroup vanished, -errno.
 */
int cgfs_populated(struct cgfs *cg, const char *path);

/*
 * Up to max pids of the processes in path (its cgroup.procs) into ret.
 * Returns how many (0: none), -ENOENT (vanished), -errno.
 */
int cgfs_read_pids(struct cgfs *cg, const char *path, int *ret, int max);

/*
 * Walks the tree under root depth-first, parents before children, calling
 * fn(path, arg) for root and every descendant directory ("/a/b", no
 * trailing slash; path is only valid during the call). Stops and returns
 * fn's value when it is negative; a positive value (CGFS_WALK_PRUNE) skips
 * that directory's children, which are then not even opened (a container's
 * cgroup has none of interest: its readdir was a third of a resync's
 * time at 1,000 containers). Directories
 * that vanish mid-walk are skipped, and so are paths longer than
 * CGFS_PATH_MAX. Returns 0, -ENOENT when root is missing, -errno.
 */
#define CGFS_WALK_PRUNE	1
int cgfs_walk(struct cgfs *cg, const char *root,
	      int (*fn)(const char *path, void *arg), void *arg);

#endif
