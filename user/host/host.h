/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host isolation: keeps everything that is not a container off the
 * exclusive CPUs while they are held, and gives each thing back what it
 * had once they are freed (user/daemon/README.md "Host isolation").
 *
 * The host's set is online − exclusive (the shared pool and the reserved
 * system CPUs stay the host's). What is narrowed, each to own ∩ host and
 * never wider than it was:
 *   - every cpuset cgroup outside the kubepods root (v1: each cgroup but
 *     the hierarchy root, the kubepods subtree and the root's ancestors;
 *     v2: each cgroup with the cpuset controller, the same way);
 *   - the tasks of the hierarchy's root cgroup, by their affinity
 *     (sched_setaffinity(2)): the v1 root cpuset cannot be narrowed, and
 *     a node without systemd keeps most processes there. Kernel threads
 *     the kernel pins (PF_NO_SETAFFINITY: per-CPU kthreads, workqueue
 *     workers) are left to the kernel;
 *   - movable IRQs (/proc/irq/N/smp_affinity_list) and the default IRQ
 *     affinity (/proc/irq/default_smp_affinity) for IRQs to come;
 *   - the unbound workqueue cpumask (/sys/devices/virtual/workqueue/cpumask,
 *     Documentation/core-api/workqueue.rst "Affinity Scopes").
 * What each had before is kept in a state file (HOST_STATE_FILE in the
 * daemon's state dir), written before the change it records, so a
 * restarted daemon recomputes everything from the live values and the
 * saved originals: a live value that is no longer what we wrote was
 * changed by someone else since, and becomes the original.
 *
 * Depends on user/base and cgroupfs only. Not thread-safe.
 */
#ifndef CPUSETD_HOST_H
#define CPUSETD_HOST_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroupfs/cgfs.h"
#include "user/base/cpumask.h"

#define HOST_STATE_FILE		"isolation.state"
/* Most skip patterns (isolate_host_skip) honoured. */
#define HOST_MAX_SKIP		16
/* Reasons kept for status (the first ones of a pass). */
#define HOST_MAX_REASONS	8

struct host_opts {
	struct cgfs *cg;		/* borrowed; outlives the handle */
	const char *state_dir;		/* where HOST_STATE_FILE lives */
	const char *proc;		/* "/proc" (tests may point elsewhere) */
	const char *sys;		/* "/sys" */
	/* fnmatch(3) patterns of cgroup paths ("/name", FNM_PATHNAME off) left
	 * alone with their subtrees, e.g. another agent's own cpuset */
	const char *skip[HOST_MAX_SKIP];
	unsigned n_skip;
	bool dry_run;			/* log what would change, write nothing */
};

/* What a pass left in force: the gauges (cpusetd_isolation_*) and
 * cpusetctl's view. Counts are of things narrowed now. */
struct host_status {
	bool active;			/* exclusive CPUs held: the host is narrowed */
	struct cpumask exclusive;	/* the CPUs kept free */
	struct cpumask host;		/* online − exclusive */
	unsigned cgroups_narrowed;
	unsigned cgroups_left;		/* own set all exclusive, or the write refused */
	unsigned tasks_narrowed;
	unsigned tasks_left;		/* affinity all exclusive, or refused (EINVAL, EPERM) */
	unsigned kthreads_pinned;	/* kernel-pinned threads left to the kernel */
	unsigned irqs_moved;
	unsigned irqs_refused;		/* the kernel refused (EIO: not movable) */
	bool irq_default_narrowed;
	bool workqueue_narrowed;
	uint64_t pass_ns;		/* how long the last pass took */
	/* "irq 24: Input/output error", "cgroup /x: its CPUs are all exclusive" */
	char reasons[HOST_MAX_REASONS][128];
	unsigned n_reasons;
};

/* What one pass changed, for the daemon's counters. */
struct host_pass {
	unsigned narrowed;		/* things written narrower */
	unsigned restored;		/* things given back (some or all) of their own */
	unsigned refused;		/* writes the kernel refused */
};

struct host;

/*
 * A handle over o (copied; the strings must outlive it), with the saved
 * originals of the state file loaded when there is one. A malformed line
 * is skipped and logged (the live values still bound what is written).
 * A state file that is not one cpusetd wrote (a symlink, not a regular
 * file, not owned by the euid, writable by group or others, more than
 * one link) drives nothing: it is logged, left in place for a person,
 * and no handle is made (a pass would replace it).
 * Returns 0 and *ret; -EPERM (that refusal); -ENOMEM; -EINVAL for a NULL
 * or bad option.
 */
int host_new(const struct host_opts *o, struct host **ret);

/* Frees h; changes nothing on the node. Accepts NULL. */
void host_free(struct host *h);

/* True when something is narrowed now (or the state file says so). */
bool host_pending(const struct host *h);

/*
 * One pass: brings every host cgroup, root-cgroup task, IRQ and the
 * workqueue mask to own ∩ (online − exclusive), and everything recorded
 * back to its original where exclusive no longer takes from it. An empty
 * exclusive gives everything back and removes the state file.
 * kubepods_root: "/kubepods", "/kubepods.slice", or "" (none yet).
 * online/exclusive: CPU ids. Each thing that changes is logged once
 * (cgroups, the default IRQ affinity and the workqueue at info, tasks and IRQs at debug); refusals once
 * per thing and exclusive set. *pass (may be NULL) gets the counts.
 * Returns 0; -ENOMEM; -errno of the state file write (then nothing was
 * narrowed in this pass: originals are saved before any narrowing).
 */
int host_sync(struct host *h, const char *kubepods_root, const struct cpumask *online,
	      const struct cpumask *exclusive, struct host_pass *pass);

/* Everything back (host_sync with no exclusive CPU). Same returns. */
int host_restore(struct host *h, const char *kubepods_root, const struct cpumask *online,
		 struct host_pass *pass);

/* The state after the last pass into *ret. Cannot fail. */
void host_get_status(const struct host *h, struct host_status *ret);

/* --- helpers, exposed for the unit tests --- */

/* Whether path (a cgroup path, "/a/b") is skipped by one of o's patterns,
 * itself or through an ancestor. */
bool host_skipped(const struct host_opts *o, const char *path);

#endif
