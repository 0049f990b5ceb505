/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgfs_plan: where to write cpuset.cpus on cgroup v2, and in which order.
 * Pure: a tree of cgroups in, a list of writes out; no I/O.
 *
 * cgroup v2 (Documentation/admin-guide/cgroup-v2.rst, "Cpuset"):
 *   cpuset.cpus.effective = cpuset.cpus ∩ the parent's effective set;
 *   an empty cpuset.cpus uses the parent's effective set ("inherit"), and
 *   so does a non-empty one whose intersection with it is empty (fallback).
 * So one write at a QoS slice or a pod moves every container below it
 * whose own set is empty. The plan writes each set at the highest level
 * where a whole subtree shares it:
 *   - a node whose leaves all want the same set T ("uniform") holds T, or
 *     inherits it when its parent's effective set is already T;
 *   - a node whose leaves want different sets ("mixed") inherits when its
 *     parent's effective set holds all of them, else holds their union:
 *     never a set that would clip or fall back for a child;
 *   - "inherits" is an empty own set; a node whose own set is not empty
 *     cannot go back to "" while it has tasks (the kernel says ENOSPC:
 *     kernel/cgroup/cpuset.c validate_change, "Cpusets with tasks ...
 *     can't be changed to have empty cpus_allowed"), so it gets every CPU
 *     above the top instead (own ⊇ parent's effective set: the same
 *     effective set, and it stays so whatever the parent later holds);
 *   - the top node (the kubepods root) is not ours: it is only widened
 *     (own ∪ union of the targets) when its own non-empty set lacks a CPU
 *     some leaf needs.
 * A resize of the shared pool then costs one write per uniform subtree
 * directly under the root (a QoS slice holding only pooled pods, a
 * Guaranteed pod) plus one per pooled pod or sandbox under a mixed slice:
 * it grows with the pods whose set changes, not with the containers.
 *
 * Order, so that no container runs, even for the duration of the writes,
 * where neither its old nor its new set allows (as far as the fallback
 * rule permits):
 *   1. writes that narrow a node's effective set (or leave it), top-down:
 *      a parent narrowing first moves its inheriting children with it;
 *   2. leaves with CPUs of their own (exclusive), after everyone else has
 *      left those CPUs;
 *   3. writes that widen, bottom-up: children are pinned to their own set
 *      before their parent opens up (e.g. a slice going from the shared
 *      pool to "" when an annotated pod arrives under it).
 * Known limit: a child whose own set is disjoint from its parent's new set
 * falls back to all of the parent's set until its own write lands.
 */
#ifndef CPUSETD_CGFS_PLAN_H
#define CPUSETD_CGFS_PLAN_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include "user/base/cpumask.h"

struct cgfs_plan_node {
	/* --- input --- */
	int parent;		/* index of the parent, below this node's own;
				 * -1 for node 0 (the top) and only for it */
	bool leaf;		/* a container: target is where it must run */
	bool exclusive;		/* leaf with CPUs of its own (integer, annotated) */
	struct cpumask target;	/* leaf: its effective set must be exactly this;
				 * empty = no opinion (left as it is) */
	struct cpumask own;	/* cpuset.cpus now; empty = "" = inherit */
	/* --- output of cgfs_plan_v2 --- */
	struct cpumask want;	/* cpuset.cpus it should hold */
	struct cpumask eff;	/* cpuset.cpus.effective once written */
	/* --- private to the planner --- */
	struct cpumask all_, first_, eff_now_;
	bool any_, mixed_;
};

struct cgfs_plan_write {
	int node;		/* index into the nodes */
	struct cpumask cpus;	/* to write; empty = write "" (inherit) */
};

/*
 * Plans the cpuset.cpus writes for the tree nodes[0..n) whose top's
 * parent has the effective set *above (online CPUs when the top is the
 * hierarchy root). Nodes without a leaf below them (with a target) keep
 * their own set. Fills nodes[i].want and nodes[i].eff, and ret[] (room for
 * n entries) with one entry per node whose own set changes, in the order
 * described above; *ret_n = their number.
 * Returns 0; -EINVAL for a bad tree (n == 0, a parent index not below its
 * child's, node 0 with a parent, a leaf with children) or NULL arguments.
 * Cannot fail otherwise; allocates nothing.
 */
int cgfs_plan_v2(struct cgfs_plan_node *nodes, size_t n, const struct cpumask *above,
		 struct cgfs_plan_write *ret, size_t *ret_n);

/*
 * The kernel's rule: effective set of every node from own[] (own[i] for
 * nodes[i]; NULL = nodes[i].own) and *above, into ret[i] (room for n).
 * Same tree rules as cgfs_plan_v2; used by it and by the tests to check a
 * plan. Returns 0 or -EINVAL.
 */
int cgfs_plan_effective(const struct cgfs_plan_node *nodes, size_t n,
			const struct cpumask *own, const struct cpumask *above,
			struct cpumask *ret);

#endif
