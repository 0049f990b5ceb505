/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpusetd --release: gives back what cpusetd changed on the node, then
 * exits (tools/packaging/deploy/README.md "Uninstalling, and giving CPUs back"). The package's
 * prerm runs it on remove, after the unit is stopped; an admin runs it to
 * hand a node back to kubelet, or after a crash the daemon will not come
 * back from.
 *
 * What it gives back, with the daemon stopped:
 *   - cpusets under the kubepods root: every QoS slice, pod and shared,
 *     BE, sandbox, exited or rejected container gets the set it would
 *     have without cpusetd (v2: "" = inherit, or every online CPU where
 *     the kernel refuses "" on a cgroup with tasks; v1: its parent's set,
 *     parents first). A running exclusive container (integer, annotated,
 *     scheduled) keeps its CPUs: moving it would clobber the affinities
 *     its threads set (the design's rule at every restart), and kubelet
 *     starts its next attempt in a cgroup that inherits everything. On v2
 *     its own set is written first when it inherited it from its pod, so
 *     that widening the pod does not move it. Which containers are
 *     exclusive is the daemon's own decision, rebuilt as a start does
 *     (controller_resync in a dry run: nothing is written by it);
 *   - the CFS quotas cpusetd lifted (exclusive_cpu_quota = unset): the
 *     saved limit (trusted.cpusetd.cfs_quota) goes back on every cgroup
 *     that has one, containers before their pods;
 *   - host isolation: everything its state file records is given back,
 *     and the file is removed once nothing in it is left (user/host);
 *   - the pinned BPF maps (pin_dir, only on a bpffs): nothing writes or
 *     reads them once the daemon is gone, and a later daemon makes new
 *     ones.
 * Idempotent: what already has its set is not written, so a second run,
 * or a run on a node where cpusetd never ran, changes nothing. With
 * dry_run it logs what it would give back and writes nothing (the lock
 * is still taken).
 */
#ifndef CPUSETD_RELEASE_H
#define CPUSETD_RELEASE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include "user/config/config.h"

struct cgfs;
struct strmap;
struct topology;

/* Exit codes of release_run. */
#define RELEASE_DONE		0	/* everything given back, or nothing to */
#define RELEASE_PARTIAL		1	/* something is left (each thing logged) */
#define RELEASE_LOCKED		2	/* a cpusetd holds the instance lock: nothing done */

/*
 * Which containers hold CPUs of their own: the daemon's own decision at
 * a start, which only the daemon can make (user/controller/controller.h
 * controller_exclusive_cgroups is the one main.c passes). For cfg, over
 * cg and topo, under the kubepods root: each such container's cgroup
 * path into kept, value (void *)1. Returns 0 or -errno (the release then
 * changes no container cpuset).
 */
typedef int (*release_exclusive_fn)(const struct cpusetd_config *cfg, struct cgfs *cg,
				    const struct topology *topo, const char *root,
				    struct strmap *kept);

/*
 * Gives everything back for the daemon configured by cfg (its kubepods
 * root, state dir, pin dir, bundle paths and policy: the same options as
 * the daemon's); exclusive tells which containers keep their CPUs. Takes the instance lock first (instance_lock.h) on what
 * exists of state_dir and pin_dir, and creates neither. Logs each change
 * at info and one summary line at notice; each failure at error.
 * Returns the exit code: RELEASE_DONE, RELEASE_PARTIAL (also for a state
 * dir or state file that is not cpusetd's, or an unreadable tree),
 * RELEASE_LOCKED.
 */
int release_run(const struct cpusetd_config *cfg, release_exclusive_fn exclusive);

#endif
