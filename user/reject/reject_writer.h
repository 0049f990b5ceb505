/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The termination message writer: one thread that writes rejected
 * containers' termination messages (reject_write_message) off the event
 * loop, so that a slow or hung filesystem under the kubelet pods
 * directory (NFS, a frozen or failing disk) never holds placement.
 *
 * The loop hands a job over (reject_writer_submit copies it into one of
 * a fixed number of slots) and goes on; the thread writes; the finished
 * job comes back through an eventfd the loop polls
 * (reject_writer_fd, reject_writer_next). A full set of slots refuses a
 * job at once (-EAGAIN): the caller drops it, logs and counts it. Only
 * the loop's thread calls these functions; the writer thread itself logs
 * nothing (log.c is not thread-safe), the loop logs each result.
 * At shutdown (reject_writer_free) the thread gets a bounded time to
 * finish the job at hand; one stuck in the kernel is left behind, never
 * waited for (the process exits around it).
 */
#ifndef CPUSETD_REJECT_WRITER_H
#define CPUSETD_REJECT_WRITER_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <limits.h>
#include <stdint.h>

/* One termination message to write, with what the loop needs to log the
 * result and find the container again. Plain data: copied in and out. */
struct reject_job {
	uint64_t cgroup_id;		/* the container's */
	char container_id[72];
	char name[320];			/* for the result's log line: ns/pod/container, */
	char namespace_[128];		/* and its journal fields */
	char pod[256];
	char container[256];		/* the bundle's container name, also the path's */
	char pod_uid[64];		/* the path's pod UID */
	char pods_dir[PATH_MAX];
	char host_path[PATH_MAX];	/* the bundle's termination mount source */
	char msg[512];			/* raw: reject_write_message escapes it */
	/* set by the writer */
	int result;			/* 0 or -errno of the write */
	uint64_t took_ns;		/* how long the write took (CLOCK_MONOTONIC) */
};

/* What the thread runs for a job: returns 0 or -errno (into job->result).
 * NULL in reject_writer_new: reject_writer_write. */
typedef int (*reject_job_fn)(const struct reject_job *job);

struct reject_writer;

/* Maximum slots (jobs queued, being written, or finished and not yet
 * collected). */
#define REJECT_WRITER_MAX_SLOTS	64

/*
 * A writer with n_slots slots (1..REJECT_WRITER_MAX_SLOTS) running fn
 * (NULL: reject_writer_write). Its thread starts at the first submit, so
 * a daemon that rejects nothing never has one. Returns 0 and *ret, or
 * -EINVAL (n_slots), -ENOMEM, -errno of eventfd.
 */
int reject_writer_new(unsigned n_slots, reject_job_fn fn, struct reject_writer **ret);

/*
 * Stops the writer: jobs not started are dropped; the job being written
 * gets up to wait_ms to finish, then the thread is joined and everything
 * freed. A thread still stuck after that (a write the kernel does not
 * return from) is detached and frees the writer itself if it ever
 * returns; the caller does not wait. Returns 0, or -EBUSY when a thread
 * was left behind. Accepts NULL (0).
 */
int reject_writer_free(struct reject_writer *w, unsigned wait_ms);

/* The eventfd that is readable when finished jobs wait for
 * reject_writer_next (EFD_NONBLOCK, EFD_CLOEXEC; owned by w). */
int reject_writer_fd(const struct reject_writer *w);

/*
 * Copies *job into a free slot for the thread (started now if not yet).
 * Jobs are written one at a time, oldest first. Returns 0; -EAGAIN when
 * every slot is taken (nothing queued); -errno when the thread cannot be
 * started (then it is tried again at the next submit).
 */
int reject_writer_submit(struct reject_writer *w, const struct reject_job *job);

/*
 * The oldest finished job into *ret (its result and took_ns set), its
 * slot freed. Returns 1, or 0 when none is finished. Clears the eventfd
 * when it returns 0, so call it until it does.
 */
int reject_writer_next(struct reject_writer *w, struct reject_job *ret);

/* Jobs submitted and not yet collected (queued, being written, or
 * finished). Cannot fail. */
unsigned reject_writer_pending(struct reject_writer *w);

/* The default job: reject_write_message(job->pods_dir, job->pod_uid,
 * job->container, job->host_path, job->msg) (reject.h). */
int reject_writer_write(const struct reject_job *job);

#endif
