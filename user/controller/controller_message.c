// SPDX-License-Identifier: Apache-2.0
/*
 * The termination message of a rejected container: which file, and its
 * write on the writer thread (user/reject/reject_writer.h), never on the loop.
 *
 * kubelet shows the content of its own file for the container
 * (<pods_dir>/<uid>/containers/<name>/<file>) as the container's
 * termination message once the container has exited, so the reason must
 * be in that file before the kill (controller_reject.c arms the kill when
 * controller_message_take hands the container back). The file is on
 * whatever filesystem holds the kubelet pods directory (NFS on some
 * nodes): a write that hangs there must not hold placement, so it runs
 * on a thread, and a rejection waits for it at most
 * REJECT_MESSAGE_WAIT_MS; the message may then land late or never, the
 * log says which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/base/clock.h"
#include "user/meta/termination.h"
#include "user/reject/reject_writer.h"
#include "controller_internal.h"

/* Slots of the writer: rejections whose message is queued or in flight.
 * More at once (a hung write and a crash-looping rejected pod) are
 * dropped, logged and counted (termination_messages_dropped). */
#define REJECT_MESSAGE_SLOTS	8
/* How long a rejection waits for its message before it is armed anyway
 * (a healthy local disk takes well under a millisecond). */
#define REJECT_MESSAGE_WAIT_MS	1000
/* How long a stopping daemon waits for a write in flight. */
#define REJECT_WRITER_STOP_MS	500

/*
 * Whether ct has a file kubelet reads for it: the last mount at its
 * termination path (meta.h), read-write (kubelet's is; a read-only one is
 * not kubelet's), whose source has kubelet's shape for the bundle's pod
 * UID and container name (termination_rel_path; the UID must agree with
 * the cgroup path's, which the pod cannot choose). Anything else is
 * logged once here. Returns true when there is one.
 */
static bool kubelet_file(const struct controller *c, const struct container *ct)
{
	const char *host = ct->meta.termination_log ? ct->meta.termination_log : "";
	const char *uid = ct->meta.pod_uid, *rel;

	if (!host[0]) {
		ct_log(LOG_DEBUG, ct, "termination_message_skipped",
		       "%s: no termination message: no mount at its termination path", ct->name);
		return false;
	}
	if (ct->meta.termination_ro) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: the mount at its termination path (from %s) is "
		       "read-only, so not kubelet's", ct->name, host);
		return false;
	}
	if (ct->info.pod_uid[0] && strcmp(uid, ct->info.pod_uid) != 0) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: the bundle's pod UID %s is not its cgroup's %s",
		       ct->name, uid, ct->info.pod_uid);
		return false;
	}
	if (termination_rel_path(c->cfg->kubelet_pods_dir, uid, ct->meta.container_name, host,
				 &rel) < 0) {
		ct_log(LOG_NOTICE, ct, "termination_message_skipped",
		       "%s: no termination message: %s is not kubelet's file for pod %s container "
		       "\"%s\" under %s", ct->name, host, uid, ct->meta.container_name,
		       c->cfg->kubelet_pods_dir);
		return false;
	}
	return true;
}

/* The writer's job for ct: what it writes where, and the pod fields its
 * result is logged with (the container may be gone by then). */
static void fill_job(const struct controller *c, const struct container *ct,
		     struct reject_job *job)
{
	job->cgroup_id = ct->cgroup_id;
	snprintf(job->container_id, sizeof(job->container_id), "%s", ct->info.container_id);
	snprintf(job->name, sizeof(job->name), "%s", ct->name);
	snprintf(job->namespace_, sizeof(job->namespace_), "%s", ct->meta.namespace_);
	snprintf(job->pod, sizeof(job->pod), "%s", ct->meta.pod_name);
	snprintf(job->container, sizeof(job->container), "%s", ct->meta.container_name);
	snprintf(job->pod_uid, sizeof(job->pod_uid), "%s", ct->meta.pod_uid);
	snprintf(job->pods_dir, sizeof(job->pods_dir), "%s", c->cfg->kubelet_pods_dir);
	snprintf(job->host_path, sizeof(job->host_path), "%s",
		 ct->meta.termination_log ? ct->meta.termination_log : "");
	snprintf(job->msg, sizeof(job->msg), "cpusetd: %s: %s", policy_error_name(ct->d.err),
		 ct->d.reason);
}

bool controller_message_queue(struct controller *c, struct container *ct)
{
	struct reject_job *job;
	int r;

	if (!kubelet_file(c, ct))
		return false;
	job = calloc(1, sizeof(*job));
	if (!job) {
		r = -ENOMEM;
	} else {
		fill_job(c, ct, job);
		r = reject_writer_submit(c->messages, job);
		free(job);
	}
	if (r < 0) {
		c->n.termination_messages_dropped++;
		ct_log(LOG_WARNING, ct, "termination_message_dropped",
		       "%s: termination message to %s dropped: %s; rejecting without it", ct->name,
		       ct->meta.termination_log ? ct->meta.termination_log : "",
		       r == -EAGAIN ? "the writer has no free slot (earlier writes are slow)" :
		       strerror(-r));
		return false;
	}
	ct->rejection.message_queued = true;
	ct->rejection.message_deadline_us = clock_us(CLOCK_MONOTONIC) +
					    REJECT_MESSAGE_WAIT_MS * 1000ULL;
	if (!c->message_due_us || ct->rejection.message_deadline_us < c->message_due_us)
		c->message_due_us = ct->rejection.message_deadline_us;
	return true;
}

/* A finished write, its result logged once (with the job's pod fields).
 * Returns its container when that still waits for it, else NULL. */
static struct container *finished(struct controller *c, const struct reject_job *job)
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
	if (!ct || !ct->rejection.message_queued ||
	    strcmp(ct->info.container_id, job->container_id) != 0)
		return NULL;	/* gone, or handed back already (overdue) */
	ct->rejection.message_queued = false;
	return ct;
}

/* A container whose write is overdue at now (logged), or NULL; keeps
 * c->message_due_us the earliest deadline still waiting. O(table), only
 * once a deadline has passed. */
static struct container *overdue(struct controller *c, uint64_t now_us)
{
	struct container *found = NULL;
	uint64_t next = 0;
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!ct->rejection.message_queued)
			continue;
		if (!found && ct->rejection.message_deadline_us <= now_us)
			found = ct;
		else if (!next || ct->rejection.message_deadline_us < next)
			next = ct->rejection.message_deadline_us;
	}
	c->message_due_us = next;
	if (!found)
		return NULL;
	found->rejection.message_queued = false;
	ct_log(LOG_WARNING, found, "termination_message_slow",
	       "%s: termination message to %s not written after %u ms (a slow filesystem?); "
	       "rejecting without waiting for it", found->name,
	       found->meta.termination_log ? found->meta.termination_log : "",
	       REJECT_MESSAGE_WAIT_MS);
	return found;
}

struct container *controller_message_take(struct controller *c, uint64_t now_us)
{
	struct reject_job job;
	struct container *ct;

	/* Until it says none: that also clears the eventfd. */
	while (reject_writer_next(c->messages, &job) == 1)
		if ((ct = finished(c, &job)))
			return ct;
	if (c->message_due_us && now_us >= c->message_due_us)
		return overdue(c, now_us);
	return NULL;
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
