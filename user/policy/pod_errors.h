/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission errors kept per pod, not per container ID.
 *
 * kubelet restarts a rejected container under a new container ID (the
 * CRI's CreateContainer gives each attempt its own), so an error keyed by
 * container ID vanished with each attempt and came back as a new one. Here
 * the key is namespace/pod/container: every attempt of the same container
 * adds to one entry (attempts, first and last time), and the entry stays
 * until no cgroup of its pod is left (pod_errors_prune), which is when
 * kubelet has deleted the pod. Pure data: no I/O, no clock.
 */
#ifndef CPUSETD_POD_ERRORS_H
#define CPUSETD_POD_ERRORS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pod_error {
	char namespace_[128];
	char pod[256];
	char container[256];
	char pod_uid[64];
	char container_id[72];	/* the latest attempt's */
	char reason[40];	/* label: policy_error_name() or "write_conflict" */
	char message[320];	/* plain text; escaped by each writer */
	char action[16];	/* "rejected", "shared", "kept", "conflict" */
	uint64_t attempts;	/* distinct container IDs that hit it */
	double first, last;	/* unix seconds of the first and latest attempt */
};

struct pod_errors;

/* A new empty table, or NULL on ENOMEM. */
struct pod_errors *pod_errors_new(void);
/* Frees the table and its entries. Accepts NULL. */
void pod_errors_free(struct pod_errors *t);

/*
 * Records an attempt of e's namespace/pod/container (e->attempts, first
 * and last are ignored): a new entry with attempts 1 and first = last =
 * now, or, for an existing one, its reason, message, action and
 * container_id replaced and last = now; attempts grows only when
 * container_id is not the one recorded (the same container seen again,
 * e.g. after a resync, is not a new attempt). now: unix seconds.
 * Returns 1 when it was a new attempt, 0 when not, -ENOMEM (table
 * unchanged).
 */
int pod_errors_note(struct pod_errors *t, const struct pod_error *e, double now);

/*
 * Drops the entry of namespace/pod/container (an error that cleared: a
 * CPU back online). Returns true when there was one. Cannot fail.
 */
bool pod_errors_forget(struct pod_errors *t, const char *namespace_, const char *pod,
		       const char *container);

/* The entry of namespace/pod/container, or NULL. */
const struct pod_error *pod_errors_get(const struct pod_errors *t, const char *namespace_,
				       const char *pod, const char *container);

/*
 * Drops every entry whose pod_uid alive() says is gone (alive returns
 * false). Returns how many were dropped. Cannot fail.
 */
size_t pod_errors_prune(struct pod_errors *t, bool (*alive)(const char *pod_uid, void *ctx),
			void *ctx);

/* Number of entries. */
size_t pod_errors_count(const struct pod_errors *t);

/*
 * Iteration in key order (namespace/pod/container, so exports are
 * stable): `size_t it = 0; const struct pod_error *e; while ((e =
 * pod_errors_next(t, &it))) ...`. The table must not change meanwhile.
 * O(n log n) on the first call after a change, then O(1) per step.
 */
const struct pod_error *pod_errors_next(const struct pod_errors *t, size_t *it);

#endif
