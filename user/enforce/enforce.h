/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plan->write stage: what an event's decisions mean as writes, and
 * in which order (enforce_plan, pure), then the writes themselves
 * (enforce_exec, the one place they are made).
 *
 * In: one target per cgroup the event may change, each with what is
 * decided (its cpuset.cpus and cpuset.mems, its placement map entry) and
 * the live view (what the files and the entry hold as last written or
 * read). Out: an ordered list of operations. The rules, each unit-tested
 * from tests/fixtures/enforce (tests/unit/test_enforce_plan.c):
 *
 *  1. A file that holds its value already is not written; a file whose
 *     value is unknown is.
 *  2. Sets that only give CPUs up are written first, then the host's
 *     share (host isolation, when the event asks for it), then every set
 *     that takes a CPU: a CPU leaves its old holder before its new one
 *     gets it, so no CPU is in two exclusive sets, and the window in which
 *     a shared and an exclusive container share one is the writes
 *     themselves. An unknown set counts as taking.
 *  3. Before a set that takes CPUs lands, the placement map allows them
 *     (entry := entry ∪ set), so telemetry never counts a run on a new
 *     CPU as a placement violation; the widenings of one phase go in one
 *     batch, before that phase's writes.
 *  4. A container's cpuset.cpus before its cpuset.mems: if the mems write
 *     fails it still runs on its own CPUs, only its memory is not yet
 *     node-local.
 *  5. The exact placement entries last, in one batch, after every write
 *     (the entry then says exactly what was decided).
 *  6. Otherwise the input order is kept.
 *
 * cgroup v2's hierarchical cpuset.cpus writes are planned by
 * cgroupfs/cgfs_plan.h (its own ordering: pools narrow, exclusive sets
 * land, pools widen); enforce_plan_tree turns that list into the same
 * operations, with rules 3 and 5 around it.
 *
 * Depends on user/base, cgroupfs and the BPF placement map (user/bpf).
 */
#ifndef CPUSETD_ENFORCE_H
#define CPUSETD_ENFORCE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroupfs/cgfs.h"
#include "cgroupfs/cgfs_plan.h"
#include "maps/cpusetd.h"
#include "user/base/cpumask.h"

struct bpf_events;

/* A placement entry's fields but its CPUs (maps/cpusetd.h struct
 * cpusetd_placement: the CPUs come with each operation). */
struct enforce_entry {
	uint32_t kind;			/* enum cpusetd_kind */
	uint32_t verify_pending;	/* 1: report the container's next own exec */
	uint64_t reject_id;		/* == cgroup_id: kill every own exec; 0 */
};

/*
 * One cgroup an event may change. The sets are the caller's (the
 * container record's, borrowed for one plan and its execution): a target
 * is a few pointers, so a resize of a thousand containers copies no set.
 */
struct enforce_target {
	/* where (for enforce_exec and its logs; the planner ignores them) */
	const char *name;		/* for a dry run's log line; NULL: path */
	const char *path;		/* cgroup path under the cpuset mount */
	int *cpus_fd;			/* its cpuset.cpus kept open (-1: not yet) */
	bool planned;			/* v2 hierarchical: cpuset.cpus exactly as
					 * given, no ancestor touched */
	/* decided: the CPU ids and NUMA node ids to write; NULL: that file
	 * is not this event's to write */
	const struct cpumask *cpus, *mems;
	/* the live view: the files as last written or read; NULL: unknown */
	const struct cpumask *cpus_have, *mems_have;
	/* its placement map entry; map_have NULL: none (no map, no key) */
	const struct cpumask *map_have;	/* the entry's CPUs as last written */
	const struct cpumask *map_want;	/* the exact entry, written last; NULL:
					 * not this event's to write */
	uint64_t cgroup_id;		/* the entry's key */
	struct enforce_entry entry;
};

enum enforce_op_kind {
	ENFORCE_MAP_WIDEN,	/* entry's CPUs := set (have ∪ to come), before writes */
	ENFORCE_CPUS,		/* cpuset.cpus := set (CPU ids) */
	ENFORCE_MEMS,		/* cpuset.mems := set (NUMA node ids) */
	ENFORCE_HOST,		/* the host's share follows the pools (no target) */
	ENFORCE_MAP,		/* entry's CPUs := set, the exact decision */
};

struct enforce_op {
	enum enforce_op_kind kind;
	uint32_t target;	/* index into the targets; unused for HOST */
	struct cpumask set;
};

/* An ordered operation list. Reusable: enforce_plan empties it first and
 * grows ops as needed; enforce_plan_free releases it. */
struct enforce_plan {
	struct enforce_op *ops;
	size_t n, cap;
	size_t writes_end;	/* ops[writes_end..n) are the final ENFORCE_MAP batch */
};

/* enforce_plan flags */
#define ENFORCE_WITH_HOST	0x1u	/* the pools change: plan the host's share */

/*
 * The ordered operations that bring the n targets t[] from their live
 * view to their decision, by rules 1-6 above; flags: ENFORCE_WITH_HOST.
 * Pure: reads t, writes p only. Returns 0, -EINVAL (t NULL with n > 0,
 * p NULL, n over UINT32_MAX), -ENOMEM (p is then empty).
 */
int enforce_plan(const struct enforce_target *t, size_t n, unsigned flags,
		 struct enforce_plan *p);

/*
 * The same for cgroup v2's hierarchical writes: w[0..nw) is
 * cgfs_plan_v2's ordered write list, node_target[i] the target index of
 * plan node i (-1: a node with no target, which is never written: a
 * hole). Out: the widenings of every target whose cpus grow past its
 * entry (rule 3), the writes in w's order as ENFORCE_CPUS ops, then each
 * target's cpuset.mems (rules 1, 4), then the exact entries (rule 5).
 * Returns as enforce_plan.
 */
int enforce_plan_tree(const struct enforce_target *t, size_t n,
		      const struct cgfs_plan_write *w, size_t nw, const int *node_target,
		      struct enforce_plan *p);

/* Frees p's list (p itself is the caller's). Accepts NULL. */
void enforce_plan_free(struct enforce_plan *p);

/* enforce_exec's result of an operation it did not carry out: a dry
 * run's write or widening, an entry without a placement map. */
#define ENFORCE_SKIPPED		1

/* Where enforce_exec writes. */
struct enforce_io {
	struct cgfs *cg;
	const char *root;		/* the kubepods root: the ancestors v1
					 * writes may widen stop there */
	struct bpf_events *bpf;		/* NULL: no placement map */
	bool dry_run;			/* log each write instead; no widening */
	void (*host)(void *ctx);	/* ENFORCE_HOST; NULL: skipped */
	void *ctx;
};

/*
 * Carries out ops[from..to) of p on targets t (the same array the plan
 * was made from), in order: cpuset files through cgroupfs (cpuset.cpus
 * through the target's kept fd, opened on first use; planned targets
 * with cgfs_write_cpus_planned), placement entries through the BPF map
 * (consecutive entry operations in one batched update; entries that fail
 * in it are tried one by one). res[k] (k in from..to) gets each
 * operation's result: 0, ENFORCE_SKIPPED, -ENOENT (the cgroup vanished),
 * or the -errno of the write or map update (-E2BIG: the placement map is
 * full). Nothing is logged above debug level but a dry run's writes (at
 * info): the caller owns the records and says what a failure means for
 * the container. Dry run: writes and widenings are skipped, exact entries
 * written.
 */
void enforce_exec(const struct enforce_io *io, const struct enforce_target *t,
		  const struct enforce_plan *p, size_t from, size_t to, int *res);

#endif
