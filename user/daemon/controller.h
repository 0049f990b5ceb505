/*
 * The controller: turns detection events into placements.
 *
 *   event -> classify/allocate (policy) -> writes (cgroupfs) -> status
 *
 * It owns the container table (by cgroup path), the policy book-keeping
 * and the counters. Everything it knows can be rebuilt from the live
 * cgroups and bundles (controller_resync); nothing is persisted.
 */
#ifndef CPUSETD_CONTROLLER_H
#define CPUSETD_CONTROLLER_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "cgroupfs/cgfs.h"
#include "user/bpf/bpf_events.h"
#include "user/bpf/bpf_telemetry.h"
#include "user/config/config.h"
#include "user/meta/meta.h"
#include "user/policy/pod_errors.h"
#include "user/policy/policy.h"
#include "user/export/status.h"
#include "user/topo/topology.h"

/*
 * Sets up c (caller-allocated) over borrowed cfg, cg, topo. root may be
 * "" when the kubepods root does not exist yet. Returns 0, -EINVAL (bad
 * policy config), -ENOMEM.
 */
int controller_init(struct controller *c, const struct cpusetd_config *cfg,
		    struct cgfs *cg, const struct topology *topo, const char *root);
void controller_fini(struct controller *c);

/*
 * Rebuilds every placement from the live cgroups and bundles (start-up,
 * lost events): running exclusive containers whose cpuset is still valid
 * keep it, everything else is (re)placed, every shared container gets the
 * pool. Returns 0, -ENOENT when the root does not exist, -ENOMEM, or
 * the -errno of reading the tree. On failure the table and placements
 * stay as they were, c->resync_failed holds the error (logged once per
 * errno) until a resync works: the caller retries (controller_retry_resync).
 */
int controller_resync(struct controller *c);

/*
 * Retries a failed resync (c->resync_failed != 0); does nothing after a
 * good one. Returns what controller_resync returns, 0 when nothing to do.
 */
int controller_retry_resync(struct controller *c);

/*
 * Handles one BPF event. Every event is a hint to look: it changes the
 * table only after the cgroup as it is now agrees (it exists, its id is
 * the event's, its tasks are there or gone as the event says). Events
 * stamped before the latest resync began are dropped (events_stale).
 * Returns 0; -ENOMEM is the only fatal error.
 */
int controller_handle(struct controller *c, const struct cpusetd_event *ev);

/*
 * In-place resizes (kubelet InPlacePodVerticalScaling): kubelet and the
 * runtime change a running container's CPU limit (cpu.max, or
 * cpu.cfs_quota_us/cfs_period_us) with no cgroup event, so the caller runs
 * this on a timer. Re-reads the limit of every Guaranteed, non-sandbox,
 * non-annotated container (one small read each) and applies the ones that
 * changed with policy_resize; a refused one keeps its CPUs, is logged once
 * per limit, and is tried again next time (it may fit once CPUs free up).
 * An unlimited reading is never a resize: it is a container whose runtime
 * has not written its limit yet.
 * Returns the number of containers whose placement changed, or -ENOMEM.
 */
int controller_check_resizes(struct controller *c);

/*
 * CPU hotplug: moves the policy and c onto topo (borrowed from now on; the
 * topology c had must stay valid during the call and may be freed after)
 * and converges (policy_set_online, policy_hotplug.h): every container's
 * cpuset.cpus is read again first (cgroup v1 drops offline CPUs from every
 * cpuset and never gives them back), pooled containers are written first
 * (they give up the replacement CPUs), then the others; no offline CPU is
 * ever written. Each changed container is logged once with the reason;
 * counters hotplug_*. The same online set again writes nothing.
 * Returns 0, or -ENOMEM / the policy's error with nothing changed.
 */
int controller_set_topology(struct controller *c, const struct topology *topo);

/* Container for a cgroup id, or NULL (linear: exec events are rare). */
struct container *controller_find_id(const struct controller *c, uint64_t cgroup_id);

/*
 * Brings the telemetry maps user space owns up to date with the
 * placements: cpu_owner (every CPU of an integer container -> that
 * container's cgroup id and kind; 0 for pool CPUs), and after a resync
 * drops the stats of containers that are gone. Call after placements
 * changed (status dirty); no-op without telemetry. Failures are logged at
 * debug level: figures only, nothing decides on them. Cannot fail.
 */
void controller_sync_telemetry(struct controller *c);

#endif
