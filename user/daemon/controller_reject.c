/*
 * Admission errors: logged once per container, listed per pod, and with
 * on_error=reject the container killed at its own first exec.
 *
 * The termination message. kubelet shows the content of its own file
 * for the container (<pods_dir>/<uid>/containers/<name>/<file>) as the
 * container's termination message once the container has exited, so the
 * reason must be in that file before the kill. The write goes to the
 * writer thread (reject_writer.h), never the loop: the file is on
 * whatever filesystem holds the kubelet pods directory (NFS on some
 * nodes), and a write that hangs there must not hold placement. Order:
 *   1. the error is logged and listed (status.json, cpusetctl, .prom):
 *      that never waits for the file;
 *   2. the message is queued (only for kubelet's own, read-write file of
 *      this pod and container: see queue_message);
 *   3. when the write is done (controller_messages_poll), the placement
 *      map is armed and BPF kills the container's first exec, or it is
 *      killed at once when its program already ran. The kill comes after
 *      the write returned, so kubelet reads the reason.
 * Nothing to write (no kubelet file, a refused one, the slots full) arms
 * at once, as does a write not done after REJECT_MESSAGE_WAIT_MS: a stuck
 * filesystem delays a rejection by that much, never more; the message
 * may then land late or never, the log says which.
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
#include "reject_writer.h"
#include "user/base/clock.h"
#include "user/base/procs.h"
#include "user/meta/termination.h"

/* Slots of the writer: rejections whose message is queued or in flight.
 * More at once (a hung write and a crash-looping rejected pod) are
 * dropped, logged and counted (termination_messages_dropped). */
#define REJECT_MESSAGE_SLOTS	8
/* How long a rejection waits for its message before it is armed anyway
 * (a healthy local disk takes well under a millisecond). */
#define REJECT_MESSAGE_WAIT_MS	1000
/* How long a stopping daemon waits for a write in flight. */
#define REJECT_WRITER_STOP_MS	500

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
	ct->start_unsure = st == PROCS_INIT_STAGE;
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
 * INIT_STAGE_MAX_S to exec, then controller_reject_expire kills it.
 */
static void arm_now(struct controller *c, struct container *ct)
{
	if (!ct->reject_armed) {
		ct->reject_armed = true;
		controller_sync_map(c, ct);
	}
	if (!ct->killed && controller_container_started(c, ct))
		controller_kill_rejected(c, ct, "at once: its program was already running");
	else if (!ct->killed && ct->start_unsure && !ct->reject_deadline_us) {
		ct->reject_deadline_us = clock_us(CLOCK_MONOTONIC) + INIT_STAGE_MAX_S * 1000000ULL;
		if (!c->reject_due_us || ct->reject_deadline_us < c->reject_due_us)
			c->reject_due_us = ct->reject_deadline_us;
		ct_log(LOG_INFO, ct, policy_error_name(ct->d.err),
		       "%s (%.12s): not started yet, by what its tasks show (a runtime's init "
		       "stage?): killed at its first exec, or in %d s", ct->name,
		       ct->info.container_id, INIT_STAGE_MAX_S);
	}
}

uint64_t controller_reject_due_us(const struct controller *c)
{
	return c->reject_due_us;
}

void controller_reject_expire(struct controller *c)
{
	uint64_t now = clock_us(CLOCK_MONOTONIC), next = 0;
	size_t it = 0;
	const char *k;
	void *v;

	if (!c->reject_due_us || now < c->reject_due_us)
		return;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!ct->reject_deadline_us || ct->killed)
			continue;
		if (ct->reject_deadline_us <= now) {
			ct->reject_deadline_us = 0;
			if (ct->d.reject)
				controller_kill_rejected(c, ct, "after " STR(INIT_STAGE_MAX_S) " s with "
							 "no exec: not a runtime's init stage waiting for its start");
		} else if (!next || ct->reject_deadline_us < next) {
			next = ct->reject_deadline_us;
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

/*
 * Hands ct's termination message to the writer thread when there is a
 * file kubelet reads for it: the last mount at its termination path
 * (meta.h), read-write (kubelet's is; a read-only one is not kubelet's),
 * whose source has kubelet's shape for the bundle's pod UID and
 * container name (termination_rel_path; the UID must agree with the
 * cgroup path's, which the pod cannot choose). Anything else is logged
 * once here and nothing is written. Sets ct->message_queued when queued.
 */
static void queue_message(struct controller *c, struct container *ct)
{
	const char *host = ct->meta.termination_log, *uid = ct->meta.pod_uid, *rel;
	struct reject_job *job;
	uint64_t deadline;
	int r;

	if (!host[0]) {
		ct_log(LOG_DEBUG, ct, "termination_message_skipped",
		       "%s: no termination message: no mount at its termination path", ct->name);
		return;
	}
	if (ct->meta.termination_ro) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: the mount at its termination path (from %s) is "
		       "read-only, so not kubelet's", ct->name, host);
		return;
	}
	if (ct->info.pod_uid[0] && strcmp(uid, ct->info.pod_uid) != 0) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: the bundle's pod UID %s is not its cgroup's %s",
		       ct->name, uid, ct->info.pod_uid);
		return;
	}
	r = termination_rel_path(c->cfg->kubelet_pods_dir, uid, ct->meta.container_name, host, &rel);
	if (r < 0) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: %s is not kubelet's file for pod %s container "
		       "\"%s\" under %s", ct->name, host, uid, ct->meta.container_name,
		       c->cfg->kubelet_pods_dir);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		r = -ENOMEM;
	} else {
		job->cgroup_id = ct->cgroup_id;
		snprintf(job->container_id, sizeof(job->container_id), "%s", ct->info.container_id);
		snprintf(job->name, sizeof(job->name), "%s", ct->name);
		snprintf(job->namespace_, sizeof(job->namespace_), "%s", ct->meta.namespace_);
		snprintf(job->pod, sizeof(job->pod), "%s", ct->meta.pod_name);
		snprintf(job->container, sizeof(job->container), "%s", ct->meta.container_name);
		snprintf(job->pod_uid, sizeof(job->pod_uid), "%s", uid);
		snprintf(job->pods_dir, sizeof(job->pods_dir), "%s", c->cfg->kubelet_pods_dir);
		snprintf(job->host_path, sizeof(job->host_path), "%s", host);
		snprintf(job->msg, sizeof(job->msg), "cpusetd: %s: %s", policy_error_name(ct->d.err),
			 ct->d.reason);
		r = reject_writer_submit(c->messages, job);
		free(job);
	}
	if (r < 0) {
		c->n.termination_messages_dropped++;
		c->dirty = true;
		ct_log(LOG_WARNING, ct, "termination_message_dropped",
		       "%s: termination message to %s dropped: %s; rejecting without it", ct->name,
		       host, r == -EAGAIN ? "the writer has no free slot (earlier writes are slow)" :
		       strerror(-r));
		return;
	}
	deadline = clock_ns(CLOCK_MONOTONIC) + REJECT_MESSAGE_WAIT_MS * 1000000ULL;
	ct->message_queued = true;
	ct->message_deadline_ns = deadline;
	if (!c->message_deadline_ns || deadline < c->message_deadline_ns)
		c->message_deadline_ns = deadline;
}

/*
 * on_error=reject, deterministically: the reason goes to the termination
 * message first (queued, see the top of this file), then the placement
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
	if (!ct->message_written) {
		ct->message_written = true;
		queue_message(c, ct);
	}
	if (ct->message_queued)
		return;	/* armed when written or overdue: controller_messages_poll */
	arm_now(c, ct);
}

/* A finished write: its result logged once (with the job's pod fields:
 * the container may be gone), and its container armed when it waits. */
static void message_done(struct controller *c, const struct reject_job *job)
{
	const struct log_pod p = {
		.namespace_ = job->namespace_, .pod = job->pod, .pod_uid = job->pod_uid,
		.container = job->container, .container_id = job->container_id,
		.reason = job->result == 0 ? "termination_message" : "termination_message_failed",
	};
	unsigned long long ms = (unsigned long long)(job->took_ns / 1000000ULL);
	struct container *ct;

	if (job->result == 0)
		log_pod(LOG_INFO, &p, "%s (%.12s): termination message written to %s (%llu ms)",
			job->name, job->container_id, job->host_path, ms);
	else
		log_pod(LOG_WARNING, &p, "%s (%.12s): cannot write termination message %s: %s%s",
			job->name, job->container_id, job->host_path, strerror(-job->result),
			job->result == -EXDEV ? " (a mount point on the way: not kubelet's file)" :
			job->result == -ELOOP ? " (a symlink on the way)" : "");
	ct = controller_find_id(c, job->cgroup_id);
	if (!ct || !ct->message_queued || strcmp(ct->info.container_id, job->container_id) != 0)
		return;	/* gone, or armed already (overdue) */
	ct->message_queued = false;
	if (still_rejected(c, ct))
		arm_now(c, ct);
}

/* Arms the containers whose message is overdue; the next deadline. */
static void arm_overdue(struct controller *c, uint64_t now)
{
	uint64_t next = 0;
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!ct->message_queued)
			continue;
		if (ct->message_deadline_ns > now) {
			if (!next || ct->message_deadline_ns < next)
				next = ct->message_deadline_ns;
			continue;
		}
		ct->message_queued = false;
		ct_log(LOG_WARNING, ct, "termination_message_slow",
		       "%s: termination message to %s not written after %u ms (a slow filesystem?); "
		       "rejecting without waiting for it", ct->name, ct->meta.termination_log,
		       REJECT_MESSAGE_WAIT_MS);
		if (still_rejected(c, ct))
			arm_now(c, ct);
	}
	c->message_deadline_ns = next;
}

void controller_messages_poll(struct controller *c)
{
	struct reject_job *job;
	uint64_t now;

	if (!reject_writer_pending(c->messages) && !c->message_deadline_ns)
		return;	/* the common turn */
	job = malloc(sizeof(*job));
	while (job && reject_writer_next(c->messages, job) == 1)
		message_done(c, job);
	free(job);
	now = clock_ns(CLOCK_MONOTONIC);
	if (c->message_deadline_ns && now >= c->message_deadline_ns)
		arm_overdue(c, now);
}

int controller_messages_timeout_ms(const struct controller *c)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!c->message_deadline_ns)
		return -1;
	if (c->message_deadline_ns <= now)
		return 0;
	return (int)((c->message_deadline_ns - now + 999999) / 1000000);
}

int controller_messages_fd(const struct controller *c)
{
	return reject_writer_fd(c->messages);
}

int controller_messages_init(struct controller *c)
{
	return reject_writer_new(REJECT_MESSAGE_SLOTS, NULL, &c->messages);
}

void controller_messages_free(struct controller *c)
{
	if (reject_writer_free(c->messages, REJECT_WRITER_STOP_MS) == -EBUSY)
		log_warn("termination message writer still busy after %u ms (a write the kernel "
			 "does not return from); not waiting for it", REJECT_WRITER_STOP_MS);
	c->messages = NULL;
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
