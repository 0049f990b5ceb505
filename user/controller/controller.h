/* SPDX-License-Identifier: Apache-2.0 */
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
#include "maps/cpusetd.h"
#include "user/bpf/bpf_events.h"
#include "user/bpf/bpf_telemetry.h"
#include "user/config/config.h"
#include "user/export/snapshot.h"
#include "user/nri/nri.h"
#include "user/topo/topology.h"

struct controller;	/* opaque: controller_internal.h */

/*
 * A controller over borrowed cfg, cg and topo (they must outlive it).
 * root is the kubepods root ("/kubepods", "/kubepods.slice"), or "" when
 * it does not exist yet (controller_set_root). Returns 0 and *ret,
 * -EINVAL (reserved_cpus not all online, bad policy config), -ENOMEM.
 */
int controller_new(const struct cpusetd_config *cfg, struct cgfs *cg,
		   const struct topology *topo, const char *root, struct controller **ret);

/* Frees c and its table (open fds closed); the cgroups stay as they are.
 * Accepts NULL. */
void controller_free(struct controller *c);

/* Where BPF lives: the event loader (placement and lifecycle maps) and
 * the telemetry (cpu_owner, cgroup_stats); either may be NULL (running
 * without). Borrowed. Then finds the runtime's mount namespace, for
 * cgroups made while we were down, and logs once which it took and why
 * (controller.c). Without a kubepods root (no resync follows) the
 * pinned placement map's entries of an earlier run are pruned here.
 * Cannot fail. */
void controller_attach_bpf(struct controller *c, struct bpf_events *bpf,
			   struct bpf_telemetry *tel);

/* The kubepods root, "" until known. */
const char *controller_root(const struct controller *c);

/* The kubepods root appeared (its mkdir event): from now on events under
 * it are handled. The caller resyncs next. Cannot fail (cut to
 * CGFS_PATH_MAX). */
void controller_set_root(struct controller *c, const char *root);

/* n more events lost in a full ring buffer (counted; the caller resyncs). */
void controller_count_lost(struct controller *c, uint64_t n);

/* A SIGHUP config reload: taken (ok) or refused; counted (config_reloads,
 * config_reload_failures) and exported soon. Cannot fail. */
void controller_count_reload(struct controller *c, bool ok);

/*
 * The live settings of the config c borrows changed in place (a reload,
 * config_merge_live); old is what they were. Passes on what the
 * controller holds copies of: on_error and the annotation namespaces
 * (cores_ids_namespaces, resource_status_namespaces) to the policy
 * (admissions from now on; the resync that follows a reload admits every
 * container again), and host isolation: turned off gives everything
 * back, turned on (or new isolate_host_skip) starts over from the
 * kernel's sets and narrows at once. Every other live key is read where it is used.
 * Returns 0 or -ENOMEM.
 */
int controller_reconfigure(struct controller *c, const struct cpusetd_config *old);


/* The -errno of the last resync when it failed, 0 when the last worked. */
int controller_resync_failed(const struct controller *c);

/* A placement, a listed error or a counter (but events) changed since
 * controller_exported. */
bool controller_dirty(const struct controller *c);

/* Marks everything as exported (after status.json and the .prom); or,
 * with dirty, asks for an export without a change (start-up). */
void controller_exported(struct controller *c, bool dirty);

/*
 * The exporters' view of c (snapshot.h) into *ret: containers in table
 * order, pools, counters, errors. Valid until c changes; release with
 * snapshot_release. Returns 0 or -ENOMEM (*ret zeroed).
 */
int controller_snapshot(const struct controller *c, struct snapshot *ret);

/*
 * Rebuilds every placement from the live cgroups and bundles (start-up,
 * lost events): running exclusive containers whose cpuset is still valid
 * keep it, everything else is (re)placed, every shared container gets the
 * pool; placement map entries of containers that are gone are pruned
 * (controller_prune_map). Returns 0, -ENOENT when the root does not exist, -ENOMEM, or
 * the -errno of reading the tree. On failure the table and placements
 * stay as they were, controller_resync_failed() says the error (logged once per
 * errno) until a resync works: the caller retries (controller_retry_resync).
 */
int controller_resync(struct controller *c);

/*
 * Retries a failed resync (controller_resync_failed() != 0); does nothing after a
 * good one. Returns what controller_resync returns, 0 when nothing to do.
 */
int controller_retry_resync(struct controller *c);

struct strmap;

/*
 * cpusetd --release's question (user/release/release.h): the containers
 * under root that hold CPUs of their own, as the daemon would decide at
 * a start. A controller over a copy of cfg with dry_run and release set
 * (a resync: nothing is written, no BPF, no host isolation) is built,
 * resynced and freed; every placed, unrejected integer or annotated
 * container's cgroup path (as cgfs_walk names it under root) goes into
 * kept with the value (void *)1. Logs nothing of its own (the resync may).
 * Returns 0; -ENOMEM; what controller_new or controller_resync return
 * (kept may then hold some of them).
 */
int controller_exclusive_cgroups(const struct cpusetd_config *cfg, struct cgfs *cg,
				 const struct topology *topo, const char *root,
				 struct strmap *kept);

/*
 * Handles one BPF event. Every event is a hint to look: it changes the
 * table only after the cgroup as it is now agrees (it exists, its id is
 * the event's, its tasks are there or gone as the event says). Events
 * stamped before the latest resync began are dropped (events_stale).
 * Returns 0; -ENOMEM is the only fatal error.
 */
int controller_handle(struct controller *c, const struct cpusetd_event *ev);

/*
 * Rejections waiting on something (controller_reject.c): a termination
 * message on the writer thread (controller_message.c, user/reject/reject_writer.h;
 * never written by the loop), or a container that resync found looking
 * like a runtime's init stage (killed if it has not exec'd in 10 s).
 * controller_messages_fd: an fd for the loop's epoll set, readable when
 * a write finished. controller_reject_due_us: the CLOCK_MONOTONIC µs of
 * the earliest deadline (an overdue write, an init stage's time), 0 when
 * none. controller_reject_poll: takes the finished writes (each logged
 * once, with the pod and container) and arms their rejections, arms
 * those whose write is overdue, kills the init stages whose time is up;
 * call it when the fd is readable or the due time has passed (a no-op
 * otherwise). Cannot fail.
 */
int controller_messages_fd(const struct controller *c);
uint64_t controller_reject_due_us(const struct controller *c);
void controller_reject_poll(struct controller *c);

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

/*
 * Brings the telemetry maps user space owns up to date with the
 * placements: cpu_owner (every CPU of an integer container -> that
 * container's cgroup id and kind; 0 for pool CPUs), and after a resync
 * drops the stats of containers that are gone. Call after placements
 * changed (status dirty); no-op without telemetry. Failures are logged at
 * debug level: figures only, nothing decides on them. Cannot fail.
 */
void controller_sync_telemetry(struct controller *c);

/*
 * Host isolation (isolate_host; user/host/host.h, user/daemon/README.md "Host
 * isolation"). controller_isolate_rescan: the periodic pass
 * (isolate_host_rescan_ms) that catches tasks, IRQs and cgroups that
 * appeared or changed since the last; cheap when nothing is held.
 * controller_isolate_stop: gives everything back (SIGTERM): host cgroups,
 * tasks, IRQs and the workqueue mask get their own sets, the state file
 * goes. Both log and count their changes; no-ops with isolation off.
 * Return 0 or -ENOMEM.
 */
int controller_isolate_rescan(struct controller *c);
int controller_isolate_stop(struct controller *c);

/* What the last isolation pass left (the exporters' view), or NULL when
 * isolation is off. Valid until the next pass. */
const struct snapshot_isolation *controller_isolation(const struct controller *c);

/*
 * NRI (config nri = auto; controller_nri.c, user/nri/nri.h). The same
 * policy and writer as the BPF path, asked at CreateContainer; BPF stays
 * the safety net for whatever the runtime makes without asking.
 *
 * controller_nri_enable: keep NRI's records from now on (before the
 * connection is made). Returns 0 or -ENOMEM.
 * controller_nri_handlers: the handlers for nri_conn_new, whose ctx must
 * be c. Cannot fail.
 * controller_nri_outbox: the updates the runtime has not heard of, for
 * changes made outside an NRI request (a BPF event, an in-place resize,
 * hotplug, a resync): *ret (malloc'd, n of them; free it) for
 * nri_conn_update_containers, from the main loop, never from a handler.
 * Nothing (n 0) while NRI is not connected: its Synchronize catches up.
 * Cheap when the pools did not move. Returns 0 or -ENOMEM.
 * controller_nri_untell: n updates the outbox gave that could not be sent
 * (the connection was busy): the runtime has not heard them, so the next
 * outbox gives them again. Cannot fail.
 * controller_nri_state: mode, state and runtime for the snapshot (the
 * connection's counters are the caller's). Cannot fail.
 */
int controller_nri_enable(struct controller *c);
void controller_nri_handlers(struct nri_handlers *ret);
int controller_nri_outbox(struct controller *c, struct nri_update **ret, size_t *n);
void controller_nri_untell(struct controller *c, const struct nri_update *u, size_t n);
void controller_nri_state(const struct controller *c, struct snapshot_nri *ret);

/*
 * The release steps of a container that goes away, by name, in the order
 * controller_forget runs them ("table", ..., "record"): up to max into
 * ret; returns their number. Cannot fail.
 */
size_t controller_forget_order(const char **ret, size_t max);

/*
 * The names of the steps whose table still holds a trace of the
 * container with cgroup_id (0: none) or container_id (64 hex; NULL:
 * none): up to max into ret; returns their number (0: no trace). Only
 * the tables user space can see: the BPF maps and the record's own
 * memory are not reported. Cannot fail.
 */
size_t controller_traces(const struct controller *c, uint64_t cgroup_id, const char *container_id,
			 const char **ret, size_t max);

#endif
