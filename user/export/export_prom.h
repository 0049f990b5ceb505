/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prometheus text exposition (format 0.0.4) of the daemon's state, for the
 * node_exporter textfile collector.
 *
 * The renderer is pure: it turns a struct export_view (plain data, filled
 * by the daemon from its controller, or by a test by hand) and an optional
 * telemetry snapshot into text in memory. Writing the file is
 * export_daemon.h's job.
 *
 * Naming: one "cpusetd_" prefix, base units (seconds), "_total" on
 * counters, "_info" gauges (value 1) carrying labels that would otherwise
 * repeat on every series. Every family has HELP and TYPE lines and all its
 * series together. No timestamps: the textfile collector refuses them.
 * The README lists every metric.
 *
 * Cardinality (tools/monitoring/README.md "Metrics"): a series that carries a figure has
 * only labels that live as long as what it measures (a CPU id, a
 * container's names and ID, a pool's name); cpulists, which change with
 * every admission, are in their own "_info" series keyed by such an id.
 * Container labels are k8s_namespace_name, k8s_pod_name,
 * k8s_container_name and container_id, never namespace/pod/container:
 * those are the target labels kube-prometheus attaches to every series
 * scraped from node_exporter's pod, and would turn ours into exported_*.
 */
#ifndef CPUSETD_EXPORT_PROM_H
#define CPUSETD_EXPORT_PROM_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "user/base/cpumask.h"
#include "counters.h"
#include "snapshot.h"
#include "user/policy/pod_errors.h"
#include "user/telemetry/telemetry.h"

/* A histogram with fixed upper bounds. bucket[i] counts the samples
 * <= le_ns[i] and > le_ns[i - 1] (NOT cumulative: the renderer sums);
 * bucket[n] counts those above le_ns[n - 1] (+Inf). */
struct export_hist {
	unsigned n;			/* finite bounds */
	const uint64_t *le_ns;		/* n ascending upper bounds, ns */
	const uint64_t *bucket;		/* n + 1 counts */
	uint64_t sum_ns;
};

/* One container, as the controller placed it. Strings are untrusted
 * (they come from pod specs) and are escaped by the renderer. */
struct export_container {
	const char *namespace_, *pod, *container, *container_id;
	const char *kind;		/* "shared", "integer", "annotated", "be" */
	const char *qos;		/* Kubernetes QoS class, or "" */
	const char *qos_class;		/* Koordinator class, or "" */
	struct cpumask cpus, mems;	/* mems empty = left as it is */
	bool exclusive;			/* owns its CPUs (integer, annotated) */
	bool sandbox;			/* a pod's pause container: never exported */
	uint64_t cgroup_id;		/* key into the telemetry; 0 = unknown */
	const char *error;		/* admission error reason, or NULL */
	const char *error_action;	/* "rejected" or "shared" */
};

struct export_view {
	const char *version;		/* cpusetd version */
	const char *revision;		/* its git revision */
	const char *cgroup_mode;	/* "v1", "hybrid", "v2" */
	const char *bpf_attach;		/* "tp_btf", "raw_tp", "none" */
	struct cpumask online, shared_pool, be_pool, reserved;
	const struct export_container *containers;
	size_t n_containers;
	const char *const *error_reasons;	/* every reason's label */
	const uint64_t *error_counts;		/* admissions refused, by reason */
	size_t n_error_reasons;
	struct cpusetd_counters n;	/* every row of counters.h with a metric */
	/* Admission errors per namespace/pod/container (pod_errors.h), kept
	 * until the pod is gone, in name order. */
	const struct pod_error *const *pod_errors;
	size_t n_pod_errors;
	const struct snapshot_writer *writers;	/* foreign writers (comm escaped) */
	size_t n_writers;
	struct export_hist convergence;	/* event -> no shared container overlaps */
	/* its phases (snapshot.h enum conv_phase); NULL = none */
	const struct latency_hist *conv_phases;
	double last_sync_s;		/* unix seconds; 0 = never */
	double update_s;		/* unix seconds of this render: the heartbeat */
	/* NULL: no telemetry (no BPF maps); the rest is still written. */
	const struct telemetry_snapshot *telemetry;
	/* The telemetry level (snapshot.h telemetry): "basic" leaves out the
	 * figures its program does not collect (the run-queue histogram and
	 * every per-container series): absent, not 0. NULL: label left out,
	 * every figure of the snapshot written. */
	const char *telemetry_level;
	/* NULL: isolate_host off (no cpusetd_isolation_* series). */
	const struct snapshot_isolation *isolation;
	/* Which containers get per-container series (cpu_owner_info names an
	 * exclusive owner whatever this says: it is one series per CPU). */
	enum export_containers containers_scope;
	/* The run-queue histogram's upper bounds in µs, ascending, each a
	 * BPF slot edge (a power of two, 2..2^26: export_rq_slot_le_us);
	 * the slots below a bound are summed into it. n_rq_bounds 0 = every
	 * slot edge. */
	const uint32_t *rq_bounds_us;
	unsigned n_rq_bounds;
	/* NRI's state and the connection's counters (snapshot.h) */
	struct snapshot_nri nri;
};

/*
 * Renders v as Prometheus text. Returns 0 with *ret_text (NUL-terminated,
 * caller frees) and *ret_len, or -ENOMEM; on failure the outputs are
 * untouched. Counters and histograms are cumulated here; series of one
 * family are in v's container order and CPU id order.
 */
int export_prom_render(const struct export_view *v, char **ret_text, size_t *ret_len);

/*
 * Writes s into dst[size] as a label value: backslash, double quote and
 * line feed escaped (\\, \", \n), and any byte that is not part of valid
 * UTF-8 replaced by U+FFFD, so hostile pod names can neither end the
 * label nor make the file unparsable. NULL is written as "". Returns the
 * length written, or -ENOSPC when it did not fit (dst then holds a
 * truncated but valid value).
 */
int export_label_escape(const char *s, char *dst, size_t size);

/*
 * The upper bound of run-queue histogram slot k of maps/cpusetd.h, in µs:
 * 2^(k+1) (slot k counts waits below it). The last slot
 * (CPUSETD_HIST_SLOTS - 1) has none: it is +Inf. Cannot fail.
 */
uint64_t export_rq_slot_le_us(unsigned k);

#endif
