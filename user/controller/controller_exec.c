// SPDX-License-Identifier: Apache-2.0
/*
 * The exec check: the runtime's own write of a container's cpuset.cpus
 * between our mkdir-time write and the container's program (see below).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"

/*
 * Without a bundle the CPU limit comes from the cgroup, and at mkdir time
 * the runtime may not have written it yet (it creates every controller's
 * directory before setting any limit). At the first exec it has: if the
 * limit now makes the container integer, admit it again. Returns 0 or
 * -ENOMEM.
 */
static int reclassify_from_cgroup(struct controller *c, struct container *ct, uint64_t event_ns)
{
	int64_t quota = -1;
	uint64_t period = 0;

	if (ct->meta.from_bundle || !pooled(ct) || ct->d.err ||
	    cgfs_read_cpu_quota(c->cg, ct->path, &quota, &period) < 0 ||
	    (quota == ct->meta.quota_us && period == ct->meta.period_us))
		return 0;
	ct->meta.quota_us = quota;
	ct->meta.period_us = period;
	ct->meta.has_cpu_limit = true;
	log_info("%s: CPU limit set after its cgroup was created; placing it again", ct->name);
	return controller_place(c, ct, event_ns);
}

/*
 * The exec check and the runtime's own write of cpuset.cpus.
 *
 * A runtime writes linux.resources.cpu.cpus to the container's own set
 * after the cgroup exists and before the container's program execs (runc:
 * Set at procReady, then the exec once `start` opens the exec fifo);
 * before that write it may already have exec'd in the cgroup (runc >= 1.2
 * creates its init there with CLONE_INTO_CGROUP; runc 1.1 re-execs its
 * memfd copy). On v2 with hierarchical writes that write pins the
 * container to the runtime's set, away from the pool its pod inherits.
 *
 * So, while the bundle says such a write is coming and it has not been
 * seen, each exec re-arms the check *before* reading the own set: a write
 * that lands after the read is followed by another exec, which reports.
 * Re-arming after the read (as before) left a window in which the write
 * and the program's exec both passed unseen, which a timer re-read then
 * papered over. Bounded: a runtime that never writes what its bundle said
 * stops costing events after EXEC_CHECKS_MAX. Without a bundle nothing
 * says whether a write comes; v2 re-arms once, for an init created in the
 * cgroup; on v1 the init joins the cgroup after its exec.
 * Known limit: linux.resources.cpu.mems is not tracked this way.
 *
 * Two things now stand in front of this, which remains the second line:
 * the write hook catches the runtime's write as it lands (on_cpuset_write),
 * and BPF reports only the container's own execs when it saw the cgroup
 * made (lifecycle map), so the runtime's own execs no longer spend checks.
 * The re-arming serves cgroups made while the daemon was down.
 */
#define EXEC_CHECKS_MAX	4

static bool expects_runtime_write(const struct controller *c, const struct container *ct)
{
	if (!ct->runtime_write_pending || ct->exec_checks >= EXEC_CHECKS_MAX)
		return false;
	return ct->meta.from_bundle || (cgfs_mounts(c->cg)->cpuset_on_v2 && ct->exec_checks < 2);
}

/* The runtime's write has landed: the own set just read is the bundle's
 * cpus; without a usable value, anything but what we knew before (prev). */
bool container_runtime_write_seen(const struct container *ct, const struct cpumask *prev,
				  bool prev_known)
{
	struct cpumask want;

	if (!ct->cpus_known)
		return false;
	if (ct->meta.runtime_cpus[0] && cpulist_parse(ct->meta.runtime_cpus, &want) == 0)
		return cpumask_equal(&ct->cpus_applied, &want);
	return prev_known ? !cpumask_equal(&ct->cpus_applied, prev) : !cpumask_empty(&ct->cpus_applied);
}

/* An exec in a placed container (the check was armed): the runtime may
 * have written its own cpuset after our mkdir-time write (runc copies the
 * parent's set on v1, or applies linux.resources.cpu.cpus). Re-read and
 * re-apply. */
int controller_on_exec(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = controller_find_id(c, ev->cgroup_id);
	struct cpumask cpus, prev;
	uint64_t writes;
	bool prev_known;

	if (!ct || !container_live(ct))
		return 0;
	if (ev->arg & CPUSETD_EXEC_KILLED) {
		controller_kill_rejected(c, ct, "at its first exec");	/* the rest of its tasks */
		return 0;
	}
	if (ev->arg & CPUSETD_EXEC_UNPLACED) {
		/* BPF has no entry for it (the map was full when we wrote it):
		 * a rejection it could not kill is killed here, at the same
		 * exec, a few milliseconds into the program; anything else gets
		 * its exec check below, and its entry is tried again. */
		if (ct->d.reject && ct->reject_armed) {
			controller_kill_rejected(c, ct, "at its first exec, from user space "
						 "(the placement map could not arm the kill)");
			return 0;
		}
		if (ct->map_err)
			controller_sync_map(c, ct);
	}
	ct->exec_pending = false;	/* BPF cleared verify_pending */
	if (reclassify_from_cgroup(c, ct, ev->ts_ns) == -ENOMEM)
		return -ENOMEM;
	if (ct->d.err)
		controller_handle_error(c, ct);
	if (ct->d.reject)
		return 0;
	ct->exec_checks++;
	if (expects_runtime_write(c, ct)) {	/* before the read: see above */
		ct->exec_pending = true;
		controller_sync_map(c, ct);
	}
	/* What the kernel holds replaces what we believe we wrote; controller_apply()
	 * then writes exactly what differs, by the same rules as always. */
	prev = ct->cpus_applied;
	prev_known = ct->cpus_known;
	ct->cpus_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_CPUS, &ct->cpus_applied) == 0;
	ct->mems_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_MEMS, &ct->mems_applied) == 0;
	if (ct->runtime_write_pending && container_runtime_write_seen(ct, &prev, prev_known)) {
		ct->runtime_write_pending = false;
		if (ct->exec_pending) {		/* nothing more to catch */
			ct->exec_pending = false;
			controller_sync_map(c, ct);
		}
	}
	cpus = ct->cpus_applied;
	writes = c->n.cgroup_writes;
	if (controller_apply_one(c, ct) == -ENOMEM)
		return -ENOMEM;
	controller_quota_sync(c, ct);	/* its runtime has written its limit by now */
	if (c->n.cgroup_writes != writes) {
		char have[CPULIST_MAX];

		cpulist_format(&cpus, have, sizeof(have));
		log_notice("%s: runtime left cpus %s at exec; re-applied", ct->name, have);
		c->n.exec_reapplied++;
		/* Placed at CreateContainer, and the runtime did not write our
		 * answer: it gave up waiting for it (controller_nri.c). */
		if (ct->nri_placed) {
			c->n.nri_not_applied++;
			controller_nri_retell(c, ct);
		}
	}
	ct->nri_placed = false;	/* one exec check decides */
	return 0;
}
