/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host isolation internals shared by its files and nothing else:
 *   host.c          the pass: write-ahead, writes, status
 *   host_plan.c     planning one thing, skip patterns, reasons
 *   host_state.c    the records and the state file
 *   host_cgroups.c  cpuset cgroups outside the kubepods root
 *   host_tasks.c    affinity of the root cgroup's tasks
 *   host_irq.c      IRQ affinity, the workqueue cpumask, hex masks
 */
#ifndef CPUSETD_HOST_INTERNAL_H
#define CPUSETD_HOST_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/base/strmap.h"
#include "host.h"

enum host_kind {
	HOST_CGROUP = 0,	/* key: the cgroup path */
	HOST_TASK,		/* key: the tid; start tells a reused tid */
	HOST_IRQ,		/* key: the IRQ number */
	HOST_IRQ_DEFAULT,	/* /proc/irq/default_smp_affinity */
	HOST_WORKQUEUE,		/* the unbound workqueue cpumask */
};

/*
 * One thing we narrowed: what it had (orig) and what we wrote (applied).
 * A v2 cgroup's orig may be empty: its cpuset.cpus was "" (inherit).
 */
struct host_rec {
	enum host_kind kind;
	char key[CGFS_PATH_MAX];
	uint64_t start;		/* task: start time (clock ticks after boot) */
	struct cpumask orig, applied;
	bool seen;		/* found live in this pass */
};

/* One change a pass will make. */
struct host_plan {
	enum host_kind kind;
	char key[CGFS_PATH_MAX];
	uint64_t start;
	int depth;		/* cgroup: path depth, for the write order */
	struct cpumask cur;	/* live now */
	struct cpumask orig;	/* what it had before we narrowed */
	struct cpumask want;	/* to write */
	bool restore;		/* want == orig: the record goes after the write */
	int err;		/* -errno of the write, 0 = written */
};

struct host {
	struct host_opts o;
	struct strmap *recs;	/* "<kind>:<key>" -> struct host_rec */
	struct host_plan *plans;
	size_t n_plans, cap_plans;
	struct strmap *refused;	/* "<kind>:<key>" -> (void *)1: logged for this set */
	struct cpumask refused_for;	/* the exclusive set refusals were logged for */
	struct host_status st;
	struct cpumask online;	/* the pass's online set */
	bool saved_nonempty;	/* the state file exists with records */
	bool recs_dirty;	/* records changed since the last save */
};

/* --- host_state.c --- */

/* The map key of a thing ("c:/a", "t:123", "i:24", "d", "w") into buf. */
void host_rec_key(enum host_kind kind, const char *key, char *buf, size_t len);

/* The record of a thing, or NULL. */
struct host_rec *host_rec_get(const struct host *h, enum host_kind kind, const char *key);

/* Records (or updates) orig/applied of a thing. 0 or -ENOMEM. */
int host_rec_put(struct host *h, enum host_kind kind, const char *key, uint64_t start,
		 const struct cpumask *orig, const struct cpumask *applied);

/* Drops a thing's record. */
void host_rec_del(struct host *h, enum host_kind kind, const char *key);

/* Loads HOST_STATE_FILE into h->recs (missing file: nothing). Malformed
 * lines are skipped, logged once. A file that is not one we wrote (a
 * symlink, not regular, not the euid's, group/other-writable, more than
 * one link: files_open_private) is refused, logged, left in place, and
 * nothing is loaded: -EPERM. 0, -EPERM, -ENOMEM, -errno reading. */
int host_state_load(struct host *h);

/* Writes every record to HOST_STATE_FILE atomically (files.h), or
 * removes the file when there is none. 0 or -errno. */
int host_state_save(struct host *h);

/* --- planning: each scans its things and appends plans (host.c) --- */

/* Appends a plan; 0 or -ENOMEM. */
int host_plan_add(struct host *h, const struct host_plan *p);

/*
 * The common rule for one live thing of kind/key with value cur (start:
 * task start time, else 0): its original is its record's when the live
 * value is still what we wrote, else cur (someone set it since); the
 * wanted value is orig ∩ host (orig when active is false). Appends a plan
 * when the wanted value differs from cur; records nothing yet.
 * *ret_orig (may be NULL) gets the original. Returns 1 when the
 * intersection is empty (left as it is: reason given by the caller),
 * 0, -ENOMEM.
 */
int host_plan_thing(struct host *h, enum host_kind kind, const char *key, uint64_t start,
		    int depth, const struct cpumask *cur, const struct cpumask *host, bool active,
		    const struct cpumask *fallback_orig, struct cpumask *ret_orig);

/* A reason for status (kept when there is room). printf-style. */
void host_reason(struct host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- host_cgroups.c --- */

/* Plans every cpuset cgroup outside kubepods_root. 0, -ENOMEM, -errno of
 * the walk (the hierarchy unreadable). */
int host_cgroups_plan(struct host *h, const char *kubepods_root, const struct cpumask *online,
		      const struct cpumask *host, bool active);

/* Writes one cgroup plan's value (v1: no ancestor is touched). 0/-errno. */
int host_cgroup_write(struct host *h, const char *path, const struct cpumask *m);

/* --- host_tasks.c --- */

/* Plans the affinity of every task of the hierarchy's root cgroup.
 * 0, -ENOMEM, -errno reading the task list. */
int host_tasks_plan(struct host *h, const struct cpumask *online, const struct cpumask *host,
		    bool active);

/* sched_setaffinity(tid, m) when tid still started at start. 0/-errno
 * (-ESRCH: gone or reused). */
int host_task_write(struct host *h, const char *tid, uint64_t start, const struct cpumask *m);

/* --- host_irq.c --- */

/* Plans every IRQ, the default affinity and the workqueue mask. 0/-ENOMEM. */
int host_irq_plan(struct host *h, const struct cpumask *online, const struct cpumask *host,
		  bool active);

/* Writes one plan of kind HOST_IRQ / HOST_IRQ_DEFAULT / HOST_WORKQUEUE. */
int host_irq_write(struct host *h, enum host_kind kind, const char *key, const struct cpumask *m);

#endif
