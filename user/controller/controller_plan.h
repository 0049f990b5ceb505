/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's cgroup v2 hierarchical writes (controller_plan.c):
 * keeps the tree the planner needs (kubepods root, QoS slices, pods,
 * containers) in step with the container table, runs cgfs_plan_v2 and
 * hands its write list to the enforce stage (enforce_plan_tree,
 * enforce_exec). Internal to the controller: controller.c sets
 * it up, controller_apply.c, _events.c, _resync.c, _resize.c and
 * _hotplug.c use it.
 */
#ifndef CPUSETD_CONTROLLER_PLAN_H
#define CPUSETD_CONTROLLER_PLAN_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include "controller_internal.h"

/*
 * Sets up c->plan when the cpuset controller is on cgroup v2 and the
 * config does not ask for per-container writes; leaves it NULL otherwise
 * (v1 keeps writing every container, cgfs_write_cpuset_fd).
 * Returns 0 or -ENOMEM.
 */
int controller_plan_init(struct controller *c);
/* Frees c->plan and sets it NULL. Accepts a NULL plan. Cannot fail. */
void controller_plan_free(struct controller *c);

/* True when cpuset.cpus goes through the planner (c->plan set). */
static inline bool controller_planned(const struct controller *c)
{
	return c->plan != NULL;
}

/*
 * Brings every cpuset.cpus under the root (slices, pods, containers) to
 * the plan for the current decisions: pooled containers on their pool's
 * current set, the others on their own CPUs. Only changed values are
 * written. Widens the placement map of each container before its set can
 * grow (enforce_plan_tree). Write failures are counted and logged
 * (controller_write_result for containers, here for slices and pods),
 * never returned. Reads nothing from the
 * kernel unless the tree must be built again (controller_plan_rebuild).
 * Returns 0 or -ENOMEM (nothing written then; the next call builds).
 */
int controller_plan_apply(struct controller *c);

/*
 * Whether the plan for the current decisions would write ct's own
 * cpuset.cpus (as last written or read: ct->cpus_applied): the file is
 * off what we decided. Plans without writing anything (the tree is built
 * first when it must be, as controller_plan_apply would). true when the
 * tree cannot be built or ct is not in it (a write would be tried);
 * false without a plan. Cannot fail.
 */
bool controller_plan_off(struct controller *c, struct container *ct);

/* ct was put in the table (its mkdir): its leaf joins the kept tree, with
 * its pod and QoS slice when they are new (their cpuset.cpus read once).
 * Out of memory the tree is built again at the next plan. Cannot fail. */
void controller_plan_add(struct controller *c, struct container *ct);

/* ct leaves the table (its rmdir), before it is freed: its leaf becomes a
 * hole the planner ignores. Cannot fail. */
void controller_plan_remove(struct controller *c, struct container *ct);

/* A slice or pod cgroup was removed: forget its cached set and fd, and
 * its node becomes a hole. Harmless for any other path. Cannot fail. */
void controller_plan_forget(struct controller *c, const char *path);

/* Forgets every cached slice and pod (resync, a new root: re-read from
 * the kernel) and builds the tree again at the next plan. */
void controller_plan_reset(struct controller *c);

/* Builds the tree again at the next plan, re-reading the root's parent's
 * effective set (CPU hotplug changed it); cached sets are kept. Also
 * drops every pointer into the table (call it before the table is
 * swapped). Each build counts in counters.plan_builds. Cannot fail. */
void controller_plan_rebuild(struct controller *c);

#endif
