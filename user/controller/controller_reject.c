// SPDX-License-Identifier: Apache-2.0
/*
 * Admission errors: logged once per container, listed per pod, and with
 * on_error=reject the container killed at its own first exec.
 *
 * A rejection, in order:
 *   1. the error is logged and listed (status.json, cpusetctl, .prom):
 *      that never waits for anything;
 *   2. the reason goes to kubelet's termination message file for the
 *      container, on the writer thread (controller_message.c);
 *   3. when that write is done, or overdue, the placement map is armed
 *      and BPF kills the container's first exec, or it is killed at once
 *      when its program already ran. The kill comes after the write
 *      returned, so kubelet reads the reason. Nothing to write arms at
 *      once.
 * While the write is in flight the container keeps what its admission
 * gave it and is not yet armed: if its program starts in that window it
 * runs until step 3 kills it, as when we were late. (A write on a local
 * disk takes microseconds; kubelet starts the container well after.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "user/base/clock.h"
#include "user/base/procs.h"

#define STR_(x)	#x
#define STR(x)	STR_(x)

/*
 * Whether the container's own program has run: BPF counted an exec from
 * outside the runtime's mount namespace. A cgroup BPF did not see being
 * made (we were down) gets its lifecycle entry here, from its tasks
 * (procs_start_state; so does one that BPF's entry from before our start
 * calls not started), with the runtime's namespace as BPF would have
 * recorded it at mkdir (controller.c find_runtime_mntns). Tasks that may
 * be a runtime's init stage, or that we may not read or see, leave ct
 * start_unsure: not started, but not believed for ever (arm_rejection).
 */
bool controller_container_started(struct controller *c, struct container *ct)
{
	struct cpusetd_lifecycle lc = { .runtime_mntns = c->runtime_mntns };
	int pids[64], n, st = PROCS_NOT_STARTED;
	bool have = c->bpf && ct->cgroup_id &&
		    bpf_events_get_lifecycle(c->bpf, ct->cgroup_id, &lc) == 0;

	/* The map is pinned and outlives us, but nothing counted the execs
	 * of the time we were down: until our first resync is done, an entry
	 * that says "not started" is checked against the tasks too. */
	if (have && (lc.own_execs > 0 || c->lifecycle_checked))
		return lc.own_execs > 0;
	n = cgfs_read_pids(c->cg, ct->path, pids, 64);
	if (n > 0) {
		c->n_runtimes = procs_runtime_binaries(c->runtimes, 8);	/* an upgrade moves them */
		st = procs_start_state(pids, n, c->runtime_mntns, c->runtimes, c->n_runtimes);
	} else if (n == 0 && cgfs_mounts(c->cg)->cpuset_on_v2 && cgfs_populated(c->cg, ct->path) == 1) {
		/* Tasks our PID namespace does not show (a DaemonSet without
		 * hostPID): cgroup.procs leaves them out, cgroup.events not. */
		st = PROCS_INIT_STAGE;
	}
	if (st == PROCS_STARTED)
		lc.own_execs = 1;
	ct->rejection.start_unsure = st == PROCS_INIT_STAGE;
	if (c->bpf && ct->cgroup_id && (!have || st == PROCS_STARTED))
		bpf_events_add_lifecycle(c->bpf, ct->cgroup_id, &lc, have);
	return lc.own_execs > 0;
}

/* Kills a rejected container whose own program ran (BPF killed the exec
 * already, or it ran before the rejection was armed); every task goes. */
void controller_kill_rejected(struct controller *c, struct container *ct, const char *when)
{
	int r = cgfs_kill(c->cg, ct->path);

	if (r < 0)
		ct_log(LOG_WARNING, ct, "kill_failed", "%s: killing rejected container failed: %s",
		       ct->name, strerror(-r));
	if (ct->killed)
		return;
	ct->killed = true;
	c->n.rejected++;
	c->dirty = true;
	ct_log(LOG_NOTICE, ct, policy_error_name(ct->d.err), "%s (%.12s): rejected: killed %s (%s)",
	       ct->name, ct->info.container_id, when, policy_error_name(ct->d.err));
}

/*
 * How long a rejected container that resync found with what may be a
 * runtime's init stage (start_unsure) is left to its first exec. A real
 * init stage waits on its exec fifo only from `runc create` to `runc
 * start`, which kubelet (through the runtime) runs one right after the
 * other; what still looks like one after this long is not waiting for a
 * start, or is a container that forged the look (a memfd executable,
 * or tasks we may not read) to be taken for one and escape its first-exec
 * kill by never exec'ing again. Either way it is killed then: a forger
 * gains at most this long on the shared pool, as any pod may have.
 */
#define INIT_STAGE_MAX_S	10

/*
 * Arms the rejection now: BPF kills the container's own first exec; if
 * its program already ran (we were late or down), it is killed here.
 * Arming before looking pairs with the BPF side counting before it reads
 * the map: an exec is either killed there or counted here.
 * BPF's count is unforgeable (the exec that starts the container's
 * program happens in its own mount namespace, whatever it calls itself).
 * A container BPF did not see made is judged from /proc instead, where
 * a look-alike of a runtime's init stage is forgeable: it gets
 * INIT_STAGE_MAX_S to exec, then controller_reject_poll kills it.
 */
static void arm_now(struct controller *c, struct container *ct)
{
	if (!ct->reject_armed) {
		ct->reject_armed = true;
		controller_sync_map(c, ct);
	}
	if (!ct->killed && controller_container_started(c, ct))
		controller_kill_rejected(c, ct, "at once: its program was already running");
	else if (!ct->killed && ct->rejection.start_unsure && !ct->rejection.reject_deadline_us) {
		ct->rejection.reject_deadline_us = clock_us(CLOCK_MONOTONIC) +
						   INIT_STAGE_MAX_S * 1000000ULL;
		if (!c->reject_due_us || ct->rejection.reject_deadline_us < c->reject_due_us)
			c->reject_due_us = ct->rejection.reject_deadline_us;
		ct_log(LOG_INFO, ct, policy_error_name(ct->d.err),
		       "%s (%.12s): not started yet, by what its tasks show (a runtime's init "
		       "stage?): killed at its first exec, or in %d s", ct->name,
		       ct->info.container_id, INIT_STAGE_MAX_S);
	}
}

/* Kills the rejected containers whose INIT_STAGE_MAX_S passed by now
 * (µs); keeps c->reject_due_us the earliest deadline left. */
static void expire_init_stages(struct controller *c, uint64_t now)
{
	uint64_t next = 0;
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!ct->rejection.reject_deadline_us || ct->killed)
			continue;
		if (ct->rejection.reject_deadline_us <= now) {
			ct->rejection.reject_deadline_us = 0;
			if (ct->d.reject)
				controller_kill_rejected(c, ct, "after " STR(INIT_STAGE_MAX_S) " s with "
							 "no exec: not a runtime's init stage waiting for its start");
		} else if (!next || ct->rejection.reject_deadline_us < next) {
			next = ct->rejection.reject_deadline_us;
		}
	}
	c->reject_due_us = next;
}

/* Whether ct's rejection is still to be armed (its decision may have
 * changed while its message was written). */
static bool still_rejected(const struct controller *c, const struct container *ct)
{
	return ct->d.err && ct->d.reject && !ct->d.err_hotplug && !c->cfg->dry_run;
}

uint64_t controller_reject_due_us(const struct controller *c)
{
	if (!c->message_due_us || (c->reject_due_us && c->reject_due_us < c->message_due_us))
		return c->reject_due_us;
	return c->message_due_us;
}

void controller_reject_poll(struct controller *c)
{
	uint64_t now = clock_us(CLOCK_MONOTONIC);
	struct container *ct;

	while ((ct = controller_message_take(c, now)))
		if (still_rejected(c, ct))
			arm_now(c, ct);
	if (c->reject_due_us && now >= c->reject_due_us)
		expire_init_stages(c, now);
}

/*
 * on_error=reject, deterministically: the reason goes to the termination
 * message first (step 2 at the top of this file), then the placement
 * map is armed, and BPF SIGKILLs the container at its own first exec:
 * never while the runtime's init is still creating it (killing runc's
 * init made `runc create` fail and hid our reason behind the runtime's).
 * If its program already ran (we were late or down), it is killed when
 * armed instead.
 *
 * When the entry cannot be written (the map is full: controller_write.c)
 * the rejection stands all the same, one step later: BPF reports the
 * first own exec of a container it has no entry for (CPUSETD_EXEC_UNPLACED)
 * and controller_on_exec kills it then, from user space, so its program
 * runs for the milliseconds that takes; an exec before we looked is
 * counted and killed when armed, as above. Still never the runtime's
 * init, so kubelet still sees exit 137 with our termination message.
 * reject_armed stays set, and every later write of the entry (a resize,
 * the resync after the prune) arms the kill in BPF again.
 */
static void arm_rejection(struct controller *c, struct container *ct)
{
	if (!ct->rejection.message_written) {
		ct->rejection.message_written = true;
		if (controller_message_queue(c, ct))
			return;	/* armed when written or overdue: controller_reject_poll */
	}
	if (!ct->rejection.message_queued)
		arm_now(c, ct);
}

/* Admission error: logged once per container, listed per pod;
 * on_error=reject arms the kill at the container's own first exec. */
void controller_handle_error(struct controller *c, struct container *ct)
{
	if (ct->d.err_hotplug) {
		/* Not an admission error: logged where the hotplug was seen
		 * (controller_set_topology); recovery only says it once. */
		if (!ct->error_logged)
			ct_log(LOG_WARNING, ct, policy_error_name(ct->d.err),
			       "%s (%.12s): %s: %s; keeps running", ct->name,
			       ct->info.container_id, policy_error_name(ct->d.err), ct->d.reason);
		ct->error_logged = true;
		controller_note_pod_error(c, ct, policy_error_name(ct->d.err), ct->d.reason, "kept");
		return;
	}
	if (!ct->error_logged) {
		bool armed = ct->d.reject && !c->cfg->dry_run;

		ct_log(LOG_ERR, ct, policy_error_name(ct->d.err),
		       "%s (%.12s): admission error %s: %s; %s", ct->name,
			  ct->info.container_id, policy_error_name(ct->d.err), ct->d.reason,
			  armed ? "rejecting it at its first exec" :
			  ct->d.reject ? "dry run: would reject it" : "keeping it on the shared pool");
		ct->error_logged = true;
		c->admission_errors[ct->d.err]++;
		c->dirty = true;
	}
	controller_note_pod_error(c, ct, policy_error_name(ct->d.err), ct->d.reason,
		       ct->d.reject ? "rejected" : "shared");
	if (!ct->d.reject || c->cfg->dry_run)
		return;
	arm_rejection(c, ct);
}
