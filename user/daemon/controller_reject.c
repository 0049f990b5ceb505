/*
 * Admission errors: logged once per container, listed per pod, and with
 * on_error=reject the container killed at its own first exec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "reject.h"
#include "user/base/procs.h"

/* Whether the container's own program has run: BPF counted an exec from
 * outside the runtime's mount namespace. A cgroup BPF did not see being
 * made (we were down) gets its lifecycle entry here, from its tasks. */
bool controller_container_started(struct controller *c, struct container *ct)
{
	struct cpusetd_lifecycle lc = { .runtime_mntns = c->self_mntns };
	int pids[64], n;

	if (c->bpf && ct->cgroup_id && bpf_events_get_lifecycle(c->bpf, ct->cgroup_id, &lc) == 0)
		return lc.own_execs > 0;
	n = cgfs_read_pids(c->cg, ct->path, pids, 64);
	if (n > 0 && procs_any_started(pids, n, c->self_mntns) > 0)
		lc.own_execs = 1;
	if (c->bpf && ct->cgroup_id)
		bpf_events_add_lifecycle(c->bpf, ct->cgroup_id, &lc);
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
 * on_error=reject, deterministically: the reason goes to the termination
 * message now, then the placement map is armed, and BPF SIGKILLs the
 * container at its own first exec: never while the runtime's init is
 * still creating it (killing runc's init made `runc create` fail and hid
 * our reason behind the runtime's). If its program already ran (we were
 * late or down), it is killed here instead. Arming before looking pairs
 * with the BPF side counting before it reads the map: an exec is either
 * killed there or counted here.
 *
 * When the entry cannot be written (the map is full: controller_write.c)
 * the rejection stands all the same, one step later: BPF reports the
 * first own exec of a container it has no entry for (CPUSETD_EXEC_UNPLACED)
 * and controller_on_exec kills it then, from user space, so its program
 * runs for the milliseconds that takes; an exec before we looked is
 * counted and killed here as above. Still never the runtime's init, so
 * kubelet still sees exit 137 with our termination message. reject_armed
 * stays set, and every later write of the entry (a resize, the resync
 * after the prune) arms the kill in BPF again.
 */
static void arm_rejection(struct controller *c, struct container *ct)
{
	char msg[512];
	int r;

	if (!ct->message_written && ct->meta.termination_log[0]) {
		snprintf(msg, sizeof(msg), "cpusetd: %s: %s", policy_error_name(ct->d.err),
			 ct->d.reason);
		r = reject_write_message(c->cfg->kubelet_pods_dir, ct->meta.termination_log, msg);
		if (r < 0)
			ct_log(LOG_WARNING, ct, "termination_message_failed",
			       "%s: cannot write termination message %s: %s", ct->name,
			       ct->meta.termination_log, strerror(-r));
		ct->message_written = true;
	}
	if (!ct->reject_armed) {
		ct->reject_armed = true;
		controller_sync_map(c, ct);
	}
	if (!ct->killed && controller_container_started(c, ct))
		controller_kill_rejected(c, ct, "at once: its program was already running");
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
