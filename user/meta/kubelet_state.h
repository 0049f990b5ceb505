/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's CPU manager checkpoint (/var/lib/kubelet/cpu_manager_state),
 * read when cpusetd takes over a node that ran kubelet's static policy:
 * the CPUs it assigned to running containers stay theirs.
 *
 * Format (kubelet pkg/kubelet/cm/cpumanager/state/checkpoint.go):
 *   v2: {"policyName":"static","defaultCpuSet":"0,5-7",
 *        "entries":{"<pod UID>":{"<container name>":"1-4"}},"checksum":N}
 *   v1: "entries":{"<container ID>":"1-4"} (kubelet before 1.18).
 * The checksum (a hash of Go's printed form of the struct) is not checked:
 * every field is validated instead, and a file that fails is ignored as a
 * whole.
 */
#ifndef CPUSETD_KUBELET_STATE_H
#define CPUSETD_KUBELET_STATE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include "user/base/cpumask.h"

#define KUBELET_STATE_DEFAULT_PATH	"/var/lib/kubelet/cpu_manager_state"

struct kubelet_assignment {
	char pod_uid[64];		/* "" in v1 files */
	char container[256];		/* container name (v2) or ID (v1) */
	struct cpumask cpus;		/* CPU ids */
};

struct kubelet_state {
	bool is_static;			/* policyName == "static" */
	struct cpumask default_cpuset;	/* kubelet's shared pool */
	size_t n;
	struct kubelet_assignment *a;	/* n entries, heap */
};

/*
 * Parses the checkpoint text into *ret (free with kubelet_state_free).
 * A file whose policy is not "static" (e.g. "none") parses with n = 0.
 * Returns 0; -EBADMSG when it is not JSON of that shape, a cpulist is
 * malformed or a name does not fit; -ENOMEM. *ret untouched on error.
 */
int kubelet_state_parse(const char *text, struct kubelet_state *ret);

/*
 * Reads and parses path (files_read: a regular file, no symlink, no FIFO, at most 4 MiB).
 * Returns 0; -ENOENT when absent; -ELOOP, -EINVAL, -EFBIG (files_read);
 * kubelet_state_parse's errors; -errno.
 */
int kubelet_state_read(const char *path, struct kubelet_state *ret);

void kubelet_state_free(struct kubelet_state *s);

/*
 * The CPUs kubelet assigned to a container: matched by pod UID and
 * container name (v2) or by container ID (v1). NULL when none.
 */
const struct cpumask *kubelet_state_find(const struct kubelet_state *s, const char *pod_uid,
					 const char *container_name, const char *container_id);

#endif
