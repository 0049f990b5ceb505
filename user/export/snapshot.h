/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the exporters (status.json, topology.json, the .prom textfile)
 * read: one snapshot of the controller, taken by the daemon
 * (controller_snapshot) after each burst of events and at each heartbeat.
 * The exporters never see the controller itself, so they cannot change
 * it, and the dependency points one way: daemon -> export.
 *
 * Every pointer is borrowed from the controller and valid until its next
 * call that changes anything; the arrays belong to the snapshot
 * (snapshot_release).
 */
#ifndef CPUSETD_SNAPSHOT_H
#define CPUSETD_SNAPSHOT_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "user/meta/meta.h"
#include "user/policy/pod_errors.h"
#include "user/policy/policy.h"
#include "user/topo/topology.h"
#include "user/base/latency.h"
#include "counters.h"

/*
 * The phases of one resize's convergence, in order (tools/monitoring/README.md "Metrics"):
 * wakeup, the BPF event to the controller taking it (ring buffer, the
 * loop's wake-up, events ahead of it); plan, from there to the first
 * write (the cgroup checks, the bundle, the policy, the ordered write
 * list of user/enforce: on v1 one look at every pooled container's
 * record); writes, the event's cpuset writes in the plan's order (every
 * pooled container's, and on v1 the new container's own after them);
 * finish, the last write to converged (the exact placement entries come
 * after the sample). They add up to the convergence sample.
 */
enum conv_phase {
	CONV_PHASE_WAKEUP,
	CONV_PHASE_PLAN,
	CONV_PHASE_WRITES,
	CONV_PHASE_FINISH,
	CONV_PHASE__COUNT,
};

/* "wakeup", "plan", "writes", "finish", by enum conv_phase. */
extern const char *const conv_phase_names[CONV_PHASE__COUNT];

/* One container cgroup under the kubepods root. */
struct snapshot_container {
	const char *container_id;	/* lowercase hex, from its cgroup name */
	const char *cgroup;		/* its path under the hierarchy */
	uint64_t cgroup_id;		/* key into the telemetry; 0 = unknown */
	enum pod_qos qos;		/* from its cgroup path */
	const struct pod_meta *meta;	/* names, annotations, CPU limit */
	const struct policy_decision *d;	/* the decision in force */
	const struct policy_entry *entry;	/* its byCID record, or NULL */
	/* "placed", "waiting" (no task yet at a resync), "exited" (every
	 * task gone, holds nothing), "rejected" (killed for its error) */
	const char *state;
};

/* Foreign cpuset writes by one writer's comm (untrusted, escaped by
 * each exporter). */
struct snapshot_writer {
	const char *comm;
	uint64_t writes;
};

/* Host isolation (isolate_host) as its last pass left it. */
struct snapshot_isolation {
	bool active;			/* exclusive CPUs held: the host is narrowed */
	struct cpumask exclusive;	/* the CPUs kept free */
	struct cpumask host;		/* online − exclusive */
	unsigned cgroups_narrowed, cgroups_left;	/* left: all exclusive, or refused */
	unsigned tasks_narrowed, tasks_left;
	unsigned kthreads_pinned;	/* per-CPU kernel threads, left to the kernel */
	unsigned irqs_moved, irqs_refused;
	bool irq_default_narrowed, workqueue_narrowed;
	uint64_t pass_ns;		/* how long the last pass took */
	const char (*reasons)[128];	/* why things were left ("irq 24: ...") */
	unsigned n_reasons;
};

/*
 * Which containers get per-container series in the .prom file (config
 * export_containers; tools/monitoring/README.md "Metrics", cardinality): every one, those
 * that hold exclusive CPUs (integer, annotated) or have an admission
 * error, or none. Sandboxes never do.
 */
enum export_containers {
	EXPORT_CONTAINERS_EXCLUSIVE = 0,	/* the default */
	EXPORT_CONTAINERS_ALL,
	EXPORT_CONTAINERS_NONE,
};

/* NRI (controller_nri.c; the connection's figures set by the daemon). */
struct snapshot_nri {
	bool enabled;			/* config nri = auto */
	const char *mode;		/* "nri+bpf" while connected, else "bpf" */
	const char *state;		/* "connected", "connecting", "off" */
	const char *runtime_name;	/* the runtime's, as it registered us; "" */
	const char *runtime_version;
	size_t pending;			/* admitted at CreateContainer, no cgroup yet */
	/* the connection's (nri.h struct nri_stats) */
	uint64_t connects, disconnects, requests, protocol_errors, update_failures;
	/* each timed request method's handling time (nri_stats.served), by
	 * name; borrowed, valid until the next snapshot */
	const struct latency_hist *served;
	const char *const *served_methods;
	size_t n_served;
};

struct snapshot {
	/* how the daemon runs */
	const char *version;		/* cpusetd's */
	const char *revision;		/* its git revision (config.h cpusetd_revision) */
	const char *cgroup_mode;	/* "v1", "hybrid", "v2" */
	const char *kubepods_root;	/* "" until it exists */
	const char *bpf_attach;		/* "tp_btf", "raw_tp", "none" */
	/* the BPF telemetry loaded (config telemetry): "basic", "full", or
	 * "off" (none loaded); NULL = "off" */
	const char *telemetry;
	const char *write_hook;		/* "fexit", "kprobe", "syscall", "none" */
	bool dry_run;
	unsigned export_interval_s;	/* status heartbeat and .prom period, >= 1 */
	const struct policy_config *policy;	/* the allocation settings */
	const struct topology *topo;
	/* the pools now (CPU ids) */
	struct cpumask shared_pool, be_pool, reserved;
	/* containers in table order; exporters sort as they need */
	const struct snapshot_container *containers;
	size_t n_containers;
	const struct pod_errors *errors;	/* per namespace/pod/container */
	const struct snapshot_writer *writers;
	size_t n_writers;
	const struct cpusetd_counters *n;
	const uint64_t *admission_errors;	/* [POLICY_ERR__COUNT], by reason */
	const struct latency_hist *conv_hist;
	/* the latest convergence samples (ns), a ring of conv_ring_len:
	 * sample i (0 = the first ever) is at conv_ring[i % conv_ring_len] */
	const uint64_t *conv_ring;
	size_t conv_ring_len;
	uint64_t conv_count;
	/* each phase's share of the samples: rings beside conv_ring (sample
	 * i's phase p at conv_phase_ring[p][i % conv_ring_len]) and
	 * histograms (arrays of CONV_PHASE__COUNT) */
	const uint64_t *conv_phase_ring[CONV_PHASE__COUNT];
	const struct latency_hist *conv_phase_hist;
	/* a placement changed since the daemon last exported */
	bool dirty;
	/* NULL: isolate_host off (set by the daemon: controller_isolation) */
	const struct snapshot_isolation *isolation;
	/* config keys a SIGHUP reload found changed that wait for a restart,
	 * "a, b"; NULL or "" = none (set by the daemon, main.c) */
	const char *restart_needed;
	/* NRI's state and figures (mode, state from the controller; the
	 * connection's counters set by the daemon) */
	struct snapshot_nri nri;
	/* .prom settings (config export_containers, runqueue_wait_buckets_us):
	 * which containers get series, and the run-queue histogram's upper
	 * bounds in µs (ascending powers of two, BPF slot edges; borrowed;
	 * n_rq_bounds 0 = every slot) */
	enum export_containers prom_containers;
	const uint32_t *rq_bounds_us;
	unsigned n_rq_bounds;
};

/* Frees the arrays of s (not what they borrow). Accepts a zeroed s. */
void snapshot_release(struct snapshot *s);

#endif
