// SPDX-License-Identifier: Apache-2.0
/*
 * BPF events in. Every event is a hint to look: the table changes only
 * after the cgroup as it is now agrees (it exists, its id is the
 * event's, its tasks are there or gone as the event says).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"

/* Whether path is, right now, the cgroup the event was about (same
 * kernfs id): a cgroup removed and made again under the same name is
 * another one. */
static bool same_cgroup(struct controller *c, const char *path, uint64_t cgroup_id)
{
	uint64_t id;

	return cgfs_cgroup_id(c->cg, path, &id) == 0 && id == cgroup_id;
}

static int on_mkdir(struct controller *c, const struct cpusetd_event *ev)
{
	struct cgfs_path_info info;
	struct container *ct;
	bool unseen;
	int r;

	if (cgfs_parse_path(c->root, ev->path, &info) < 0 || info.level != CGFS_LEVEL_CONTAINER)
		return 0;
	if (strmap_get(c->by_path, ev->path))
		return 0;	/* already known from a resync */
	if (!same_cgroup(c, ev->path, ev->cgroup_id)) {
		c->n.events_stale++;	/* gone already: its rmdir follows */
		return 0;
	}
	/* Placed at NRI CreateContainer: confirmed, not decided again. */
	r = c->nri ? controller_nri_on_mkdir(c, ev->path, &info, ev->cgroup_id, ev->ts_ns) : 0;
	if (r)
		return r < 0 ? r : 0;
	ct = container_new(c, ev->path, &info, ev->cgroup_id,
			   controller_nri_meta(c, info.container_id));
	unseen = ct && controller_nri_unseen(c, ct);	/* before it is in the table */
	if (!ct || controller_table_put(c, ct) < 0) {
		container_free(ct);
		return -ENOMEM;
	}
	controller_plan_add(c, ct);
	if (ct->meta.sandbox_id[0])
		container_inherit_pod(ct, controller_find_sandbox(c, ct->meta.sandbox_id));
	/* Admitted before its first task: the window between the runtime's
	 * mkdir and its init joining is when the set must land. */
	r = controller_place(c, ct, ev->ts_ns);
	controller_skip_sched_rebuild(c, ct);	/* after convergence: not on its clock */
	if (unseen)
		controller_nri_note_unseen(c, ct);
	return r;
}

static int on_rmdir(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = strmap_get(c->by_path, ev->path);

	if (!ct) {
		controller_plan_forget(c, ev->path);	/* a pod or QoS slice */
		return 0;
	}
	/*
	 * The kernel reports an rmdir only once the cgroup is gone, and its
	 * id is never reused: the id alone says whether the event is about
	 * the container in the table or an older one of that name. No path
	 * lookup here: a lookup of the dying directory waits in
	 * d_invalidate until its remover (runc) is done, and as a real-time
	 * task that has just preempted the remover on its CPU the daemon
	 * spins there until the remover is moved away (BENCHMARKS.md,
	 * "Resize on a busy node": stop p99 58-148 ms with the lookup).
	 */
	if (ct->cgroup_id != ev->cgroup_id) {
		c->n.events_stale++;	/* an older cgroup of that name */
		return 0;
	}
	log_info("%s (%.12s): gone", ct->name, ct->info.container_id);
	return controller_forget(c, ct, ev->ts_ns);	/* every trace, in one order */
}

/*
 * A container's first task appeared or its last exited (v1 and v2: the
 * kernel's populated notification). The live cgroup decides, not the
 * event: a container with no task holds nothing, one that gets a task
 * again is admitted afresh. The container stays in the table (and its
 * error listed) until its rmdir. 0 or -ENOMEM.
 */
static int on_populated(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = strmap_get(c->by_path, ev->path);
	char cpus[CPULIST_MAX];
	bool held;
	int live;

	if (!ct || ct->cgroup_id != ev->cgroup_id)
		return 0;	/* a pod or QoS level, or an older cgroup */
	live = cgfs_populated(c->cg, ct->path);
	if (live < 0)
		return 0;	/* vanished: its rmdir follows */
	if (live && !container_live(ct)) {
		log_info("%s (%.12s): has a task again; admitting it", ct->name,
			 ct->info.container_id);
		controller_nri_retell(c, ct);	/* its runtime hears where it runs now */
		return controller_place(c, ct, ev->ts_ns);
	}
	if (live || !container_live(ct) || ev->arg)
		return 0;
	held = !pooled(ct) && !ct->d.reject;
	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	ct->state = CT_EXITED;
	ct->exec_pending = false;
	controller_sync_map(c, ct);	/* kept: foreign writes still show */
	if (!held) {
		/* Holds nothing: its policy entry stays, for explain. */
		log_info("%s (%.12s): every task exited", ct->name, ct->info.container_id);
		c->dirty = true;
		return 0;
	}
	c->n.exited_released++;
	ct_log(LOG_NOTICE, ct, "released", "%s (%.12s): every task exited; %s cpus %s released",
	       ct->name, ct->info.container_id, policy_kind_name(ct->d.kind), cpus);
	return controller_release(c, ct, ev->ts_ns);
}

int controller_handle(struct controller *c, const struct cpusetd_event *ev)
{
	c->n.events++;
	c->handle_ns = clock_ns(CLOCK_MONOTONIC);	/* the wake-up phase ends */
	if (!c->root[0])
		return 0;
	/* Queued before the latest resync began: it already read the live
	 * tree, which this event can only describe less well. */
	if (ev->ts_ns < c->resync_started_ns) {
		c->n.events_stale++;
		return 0;
	}
	switch (ev->type) {
	case CPUSETD_EV_MKDIR:
		return on_mkdir(c, ev);
	case CPUSETD_EV_RMDIR:
		return on_rmdir(c, ev);
	case CPUSETD_EV_EXEC:
		return controller_on_exec(c, ev);
	case CPUSETD_EV_POPULATED:
		return on_populated(c, ev);
	case CPUSETD_EV_CPUSET_WRITE:
		return controller_on_cpuset_write(c, ev);
	default:
		return 0;
	}
}
