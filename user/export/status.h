/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.json: the daemon's view for cpusetctl and people, rewritten
 * atomically (temp file in the same directory, fsync-free rename) in
 * --state-dir after every change. It is an output only: the daemon never
 * reads it back; the live cgroups are the truth.
 *
 * Schema (version 1):
 * {
 *   "version": 1,
 *   "updated": <unix seconds, float>   (the last write that carried a change)
 *   "daemon": {"state": "running"|"stopped",
 *              "heartbeat": <unix seconds, float>  (this write),
 *              "export_interval_s": N  (heartbeat period),
 *              "stopped_at": null | <unix seconds, float>,
 *              "pid": N, "comm": "<its /proc comm>",
 *              "pid_ns": N  (inode of its PID namespace; 0 = unknown),
 *              "version": "0.1.0", "revision": "v0.1.0-12-gabcdef0",
 *              "cgroup_mode": "v1"|"hybrid"|"v2",
 *              "kubepods_root": "/kubepods", "bpf_attach": "tp_btf"|"raw_tp",
 *              "write_hook": "fexit"|"kprobe"|"syscall"|"none",
 *              "dry_run": bool, "on_error": "reject"|"shared",
 *              "min_shared_cpus": N,
 *              "restart_needed": "state_dir, pin_dir"  (config keys a SIGHUP
 *                 reload found changed that wait for a restart; "" = none),
 *              "allocation": {"engine": "koordinator"|"kubelet",
 *                 "cpu_bind_policy", "cpu_exclusive_policy",
 *                 "numa_allocate_strategy", "numa_topology_alignment_policy",
 *                 "topology_manager_scope", "besteffort_pool", "integer_qos":
 *                 strings as in the config file, "reserved_cpus": "<cpulist>",
 *                 "prefer_isolated_cpus": bool}},
 *   "topology": {"online": "<cpulist>", "offline": "<cpulist>",
 *                "isolated": "<cpulist>", "online_count": N, "cores": N,
 *                "packages": N, "threads_per_core": N,
 *                "numa_nodes": {"<id>": "<cpulist>", ...},
 *                "memory_nodes": "<node list>",
 *                "distances": {"<id>": [N, ...]},
 *                "cpus": [{"id", "online", "core", "package", "die",
 *                          "node", "l3"}, ...]}   (user/topo/topology_json.h)
 *   "shared_pool": "<cpulist>",
 *   "be_pool": "<cpulist>",
 *   "reserved": "<cpulist>",
 *   "containers": [
 *     {"container_id": "<hex>", "namespace": "...", "pod": "...",
 *      "container": "...", "pod_uid": "...", "sandbox": bool,
 *      "qos": "Guaranteed"|"Burstable"|"BestEffort"|"",
 *      "kind": "shared"|"integer"|"annotated"|"be",
 *      "qos_class": "LSE"|"LSR"|"LS"|"BE"|"SYSTEM"|"", "cpus": "<cpulist>",
 *      "mems": "<cpulist>" ("" = left as is), "cgroup": "<path>",
 *      "state": "placed"|"waiting"|"exited"|"rejected"
 *               (waiting: no task yet at a resync; exited: every task
 *                gone, holds nothing; rejected: killed for its error),
 *      "error": null | {"reason": "<label>", "message": "..." (one line,
 *                                  log_escape'd: "\\" is a backslash),
 *                       "action": "rejected"|"shared"|"kept"},
 *               (kept: a CPU hotplug error, reason cpu_offline or
 *                insufficient_cpus; the container keeps its placement)
 *      "decision": {"rule": "sandbox"|"invalid_annotation"|"invalid_bundle"|"cores_ids"|
 *                      "resource_status"|"qos_class"|"integer"|
 *                      "besteffort_pool"|"default_shared",
 *                   "cpu_quota_us": N (-1 none), "cpu_period_us": N,
 *                   "n_cpus": N (integer, else 0),
 *                   "exclusive_policy": "None"|"PCPULevel"|"NUMANodeLevel"|"",
 *                   "pod_affinity": bool, "numa_nodes": "<node list>",
 *                   "annotations": {"<key>": "<value as given>", ...}}
 *                  (user/export/status_detail.h)}, ...],
 *   "errors": [ {"namespace", "pod", "container", "pod_uid",
 *                "container_id" (latest attempt), "reason", "message",
 *                "action": "rejected"|"shared"|"kept"|"conflict",
 *                "attempts": N, "first": <unix s>, "last": <unix s>}, ...]
 *             (per namespace/pod/container, kept until the pod's last
 *              cgroup is gone: user/policy/pod_errors.h),
 *   "counters": {"events": N, "events_lost": N, "resyncs": N, "resync_failures": N,
 *                "cgroup_writes": N, "cgroup_write_errors": N,
 *                "exec_reapplied": N, "rejected": N, "resizes": N,
 *                "inplace_resizes": N, "inplace_resizes_refused": N,
 *                "hotplug_changes": N, "hotplug_replacements": N,
 *                "hotplug_shortfalls": N, "events_stale": N,
 *                "exited_released": N, "foreign_writes": N,
 *                "foreign_restores": N, "write_conflicts": N,
 *                "placement_map_errors": N, "placement_map_pruned": N, ...},
 *   "foreign_writers": {"<comm>": N, ...}  (the first 16 comms, then "other"),
 *   "convergence": {"count": N, "last_ns": N,
 *                   "recent_ns": [N, ...],   (newest last, at most 1024)
 *                   "phases": {"wakeup_ns": [N, ...], "plan_ns": [...],
 *                              "writes_ns": [...], "finish_ns": [...]}}
 *                   (each sample's phases, same order: snapshot.h)
 * }
 * Liveness: the daemon rewrites the file at least every export_interval
 * seconds even when nothing changed, so "heartbeat" keeps moving while it
 * runs; at a clean stop (SIGTERM) a last write says "stopped". A reader
 * takes a heartbeat older than 3 intervals + 5 s, a "stopped", or a pid
 * that is gone or is not a cpusetd (its comm) as "not running"
 * (tools/cpusetctl/ctl_live.h), pid_ns telling whether it sees the same PIDs.
 * Every write that carries a change is followed by <state-dir>/topology.json,
 * the Koordinator NodeResourceTopology annotations (user/export/export_koord.h),
 * when its text changed; heartbeats leave it alone.
 * "convergence" samples are the time from the BPF event (bpf_ktime_get_ns)
 * to the moment no shared container overlaps a reserved CPU, taken for
 * every event that changed the reserved set.
 */
#ifndef CPUSETD_STATUS_H
#define CPUSETD_STATUS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>

#define STATUS_FILE	"status.json"
#define STATUS_RECENT	1024

struct snapshot;

/*
 * What status.json says of the daemon's life, kept by the event loop
 * between writes. Zero-initialised = running, nothing written yet. The
 * period is the controller's config export_interval_s.
 */
struct status_beat {
	uint64_t next_us;	/* CLOCK_MONOTONIC µs of the next heartbeat write */
	double updated;		/* unix s of the last write that carried a change; 0 = none */
	bool stopped;		/* set for the last write, at a clean stop */
	int pid;		/* the daemon's, for "pid" (a forked writer's
				 * getpid() is its own); 0 = getpid() */
};

/*
 * Whether status.json is due now: dirty (a placement changed), b->stopped,
 * no write yet, or the heartbeat. Cannot fail.
 */
bool status_due(bool dirty, const struct status_beat *b);

/*
 * The event loop's epoll timeout in ms: max_ms, or less so the next
 * heartbeat is on time (at least 1; max_ms when nothing was written
 * yet). Cannot fail.
 */
int status_timeout_ms(const struct status_beat *b, int max_ms);

/*
 * Writes <state_dir>/status.json for the snapshot s with b's liveness, and
 * topology.json when s->dirty (or on the first write). Sets b->updated
 * when s->dirty and
 * schedules b's next heartbeat export_interval_s from now, also on failure
 * (retried then). Returns 0 or -errno (-ENOMEM, or the write's; the old
 * file stays in place on failure).
 */
int status_write(const struct snapshot *s, struct status_beat *b, const char *state_dir);

/*
 * status_write in two steps, for a writer on another thread or process
 * (the daemon's export writer): status_begin updates b on the caller's
 * side (next heartbeat, "updated") and returns whether the write carries
 * a change (then topology.json goes with it); status_write_files builds
 * and writes the files from s and b without changing either, so a forked
 * child can run it. status_begin cannot fail; status_write_files returns
 * 0 or -errno as status_write.
 */
bool status_begin(const struct snapshot *s, struct status_beat *b);
int status_write_files(const struct snapshot *s, const struct status_beat *b,
		       const char *state_dir, bool changed);

#endif
