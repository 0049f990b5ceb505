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
 * Whether a container holds a placement. The live kernel decides: a
 * container cgroup with no task holds nothing (its CPUs go back to the
 * pools), whether it never had one when a resync found it (the runtime
 * between its mkdir and its first task, or a stopped container whose
 * cgroup remains) or lost its last (BPF cgroup_notify_populated). It is
 * admitted when a task appears.
 */
enum container_state {
	CT_LIVE = 0,	/* admitted: its decision is in force */
	CT_WAITING,	/* found empty at a resync: admitted at its first task */
	CT_EXITED,	/* every task exited: released */
};

/* One container cgroup under the kubepods root. */
struct container {
	char path[CGFS_PATH_MAX];
	uint64_t cgroup_id;
	struct cgfs_path_info info;
	struct pod_meta meta;
	char name[320];			/* namespace/pod/container */
	struct policy_decision d;	/* latest decision */
	struct cpumask cpus_applied;	/* its own cpuset.cpus as we last wrote or read
					 * it (v2 planned: often "", inherited) */
	struct cpumask mems_applied;
	bool cpus_known, mems_known;
	struct cpumask cpus_running;	/* resync: where its tasks ran at the scan
					 * (cgfs_read_running_cpus); recovery keeps
					 * an exclusive container there. Not its own
					 * set: on v2 that is "" when it inherits */
	int cpus_fd;			/* cpuset.cpus kept open for resizes; -1 */
	bool exec_pending;		/* placement map armed, no exec seen yet */
	unsigned exec_checks;		/* exec events handled */
	bool runtime_write_pending;	/* its runtime may still write its own
					 * cpuset.cpus (controller.c, on_exec) */
	struct cpumask map_cpus;	/* placement map's cpus as we last wrote them */
	bool error_logged;
	bool killed;
	bool rebuild_skipped;		/* cgfs_skip_sched_rebuild done */
	int64_t resize_refused_quota;	/* in-place resize refused for this
					 * limit (logged once); 0 = none */
	enum container_state state;
	bool reject_armed;		/* placement map says reject: BPF kills its
					 * own exec (termination message written) */
	bool message_written;		/* termination message written */
	/* Foreign writes of its cpuset files (controller_defend.c). */
	unsigned restores;		/* restores in the current fight */
	uint64_t last_restore_ns;	/* CLOCK_MONOTONIC of the latest */
	bool conflict;			/* gave up: a writer kept fighting */
	char writer_logged[17];		/* comm of the writer logged last */
};

/* A container's decision is in force (it is not waiting or exited). */
static inline bool container_live(const struct container *ct)
{
	return ct->state == CT_LIVE;
}

/*
 * Resize convergence histogram (the Prometheus export's
 * cpusetd_resize_convergence_seconds): conv_hist[i] counts the samples
 * <= controller_conv_le_ns[i] and above the bound before it; the last
 * slot, those above every bound. Not cumulative; counts since start.
 */
#define CONTROLLER_CONV_BUCKETS	16
extern const uint64_t controller_conv_le_ns[CONTROLLER_CONV_BUCKETS];

struct controller_counters {
	uint64_t events, events_lost, resyncs;
	uint64_t resync_failures;	/* resyncs that could not read the tree */
	uint64_t cgroup_writes, cgroup_write_errors;
	uint64_t exec_reapplied, rejected, resizes;
	uint64_t inplace_resizes, inplace_resizes_refused;
	/* CPU hotplug: online-set changes applied, replacement CPUs given to
	 * integer containers, containers left short of N. */
	uint64_t hotplug_changes, hotplug_replacements, hotplug_shortfalls;
	uint64_t admission_errors[POLICY_ERR__COUNT];	/* by reason, once per container */
	uint64_t conv_hist[CONTROLLER_CONV_BUCKETS + 1];
	uint64_t conv_sum_ns;
	/* Events dropped: queued before the latest resync, or for a cgroup
	 * that is gone or has another id now. */
	uint64_t events_stale;
	/* Containers released because their last task exited. */
	uint64_t exited_released;
	/* Foreign cpuset writes: seen, undone, and containers given up
	 * (write_conflict). By writer in controller.writers. */
	uint64_t foreign_writes, foreign_restores, write_conflicts;
};

/* Foreign writes by one writer's comm (controller.writers). */
struct writer_count {
	char comm[17];
	uint64_t writes;
};

struct controller {
	const struct cpusetd_config *cfg;
	struct cgfs *cg;
	const struct topology *topo;
	struct policy *policy;
	struct bpf_events *bpf;		/* NULL when running without BPF */
	struct bpf_telemetry *tel;	/* NULL when running without telemetry */
	char root[CGFS_PATH_MAX];	/* kubepods root; "" until it exists */
	struct strmap *by_path;		/* path -> struct container */
	struct controller_counters n;
	uint64_t conv_ns[STATUS_RECENT];	/* convergence samples, ring */
	uint64_t conv_count;
	bool dirty;			/* status.json needs a rewrite */
	uint64_t tel_pruned_at;		/* n.resyncs when telemetry was last pruned */
	int resync_failed;		/* -errno of the last resync, 0 = it worked */
	struct controller_plan *plan;	/* v2 hierarchical writes; NULL: every container */
	uint64_t resync_started_ns;	/* CLOCK_MONOTONIC: older events are stale */
	uint64_t self_mntns;		/* our mount namespace: the runtime's, for
					 * cgroups made while we were down */
	struct pod_errors *errors;	/* admission errors by namespace/pod/container */
	struct strmap *writers;		/* comm -> struct writer_count */
};

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
