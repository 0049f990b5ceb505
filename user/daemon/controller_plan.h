/*
 * The controller's cgroup v2 hierarchical writes (controller_plan.c):
 * builds the tree the planner needs (kubepods root, QoS slices, pods,
 * containers) from the container table, runs cgfs_plan_v2 and executes
 * its write list. Internal to the controller: controller.c sets it up,
 * controller_apply.c, _events.c, _resync.c and _resize.c use it.
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
 * grow (controller_widen_map). Write failures are counted and logged by
 * controller_note_write / here, never returned.
 * Returns 0 or -ENOMEM (nothing written then).
 */
int controller_plan_apply(struct controller *c);

/* A slice or pod cgroup was removed: forget its cached set and fd.
 * Harmless for any other path. Cannot fail. */
void controller_plan_forget(struct controller *c, const char *path);

/* Forgets every cached slice and pod (resync: re-read from the kernel). */
void controller_plan_reset(struct controller *c);

#endif
