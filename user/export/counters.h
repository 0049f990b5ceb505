/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's counters, in one table. Each X(name, metric, help) row
 * makes a field of struct cpusetd_counters, a key of status.json's
 * "counters" object (name) and, when metric is not NULL, a Prometheus
 * counter with its help text (export_prom.c). A new counter is one row
 * here and the line of code that counts it.
 */
#ifndef CPUSETD_COUNTERS_H
#define CPUSETD_COUNTERS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <stdint.h>

#define CPUSETD_COUNTERS(X) \
	X(events, "cpusetd_events_total", "Cgroup events handled.") \
	X(events_lost, "cpusetd_bpf_events_lost_total", \
	  "Cgroup events lost in a full BPF ring buffer (each forces a resync).") \
	X(resyncs, "cpusetd_resyncs_total", "Full rebuilds from the live cgroups.") \
	X(resync_failures, "cpusetd_resync_failures_total", \
	  "Resyncs that could not read the cgroup tree (retried every second).") \
	X(resizes, "cpusetd_pool_resizes_total", \
	  "Times every pooled container was brought to new pools.") \
	/* status.json only: the v2 planner's whole-tree builds (controller_plan.c) */ \
	X(plan_builds, NULL, NULL) \
	X(cgroup_writes, "cpusetd_cgroup_writes_total", \
	  "cpuset.cpus/cpuset.mems writes attempted.") \
	X(cgroup_write_errors, "cpusetd_cgroup_write_errors_total", \
	  "cpuset writes that failed (a vanished cgroup is not an error).") \
	X(exec_reapplied, "cpusetd_exec_reapplied_total", \
	  "Containers whose runtime changed their cpuset before the first exec.") \
	X(rejected, "cpusetd_rejected_containers_total", \
	  "Containers killed for an admission error (on_error=reject).") \
	X(termination_messages_dropped, "cpusetd_termination_messages_dropped_total", \
	  "Rejections whose termination message was not written: the writer had no free slot.") \
	X(inplace_resizes, "cpusetd_inplace_resizes_total", \
	  "In-place CPU limit changes of Guaranteed containers applied.") \
	X(inplace_resizes_refused, "cpusetd_inplace_resizes_refused_total", \
	  "In-place CPU limit changes that could not be placed (retried).") \
	X(hotplug_changes, "cpusetd_hotplug_changes_total", \
	  "Changes of the online CPU set applied.") \
	X(hotplug_replacements, "cpusetd_hotplug_replacements_total", \
	  "CPUs given to integer containers in place of CPUs that went offline.") \
	X(hotplug_shortfalls, "cpusetd_hotplug_shortfalls_total", \
	  "Integer containers left with fewer CPUs than asked after a CPU went offline.") \
	X(events_stale, "cpusetd_events_stale_total", \
	  "Events dropped: queued before a resync, or for a cgroup that is gone or was made again.") \
	X(exited_released, "cpusetd_exited_released_total", \
	  "Exclusive or annotated containers whose CPUs were released because every task exited.") \
	/* controller_quota.c: exclusive_cpu_quota = unset */ \
	X(cpu_quota_unset, "cpusetd_cpu_quota_unset_total", \
	  "CFS quotas of exclusive containers and their pods lifted (cpu.max max, cfs_quota_us -1).") \
	X(cpu_quota_restored, "cpusetd_cpu_quota_restored_total", \
	  "CFS quotas put back on containers that left exclusivity and on their pods.") \
	X(cpu_quota_errors, "cpusetd_cpu_quota_errors_total", \
	  "CFS quota or saved-limit writes that failed (logged).") \
	/* controller_isolate.c: isolate_host (user/host/host.h) */ \
	X(isolation_passes, "cpusetd_isolation_passes_total", \
	  "Host isolation passes (exclusive set changed, rescan, resync, stop).") \
	X(isolation_narrowed, "cpusetd_isolation_narrowed_total", \
	  "Host cgroups, root-cgroup tasks, IRQs and workqueue masks narrowed off exclusive CPUs.") \
	X(isolation_restored, "cpusetd_isolation_restored_total", \
	  "Host cgroups, tasks, IRQs and workqueue masks given back their own CPUs.") \
	X(isolation_refused, "cpusetd_isolation_refused_total", \
	  "Host isolation writes the kernel refused (an IRQ that cannot move: EIO).") \
	/* by writer in .prom: cpusetd_foreign_cpuset_writes_total{comm} */ \
	X(foreign_writes, NULL, NULL) \
	X(foreign_restores, "cpusetd_foreign_write_restores_total", \
	  "Foreign cpuset writes undone by writing the placement again.") \
	X(write_conflicts, "cpusetd_write_conflicts_total", \
	  "Containers given up after a writer kept overwriting their cpuset (write_conflict).") \
	/* controller_write.c: the BPF placement map (bpf/README.md "BPF maps") */ \
	X(placement_map_errors, "cpusetd_placement_map_errors_total", \
	  "Containers whose BPF placement map entry could not be written (map full).") \
	/* status.json only: entries of containers gone unseen, pruned at resyncs */ \
	X(placement_map_pruned, NULL, NULL) \
	/* main.c: SIGHUP reloads of the config file (systemd/README.md "Reload") */ \
	X(config_reloads, "cpusetd_config_reloads_total", \
	  "SIGHUP config reloads taken (the file was valid; restart-only keys wait).") \
	X(config_reload_failures, "cpusetd_config_reload_failures_total", \
	  "SIGHUP config reloads refused (invalid file): the old config stays.") \
	/* controller_nri.c, controller_nri_book.c: NRI (user/daemon/README.md "NRI") */ \
	X(nri_placed_at_create, "cpusetd_nri_placed_at_create_total", \
	  "Containers placed at NRI CreateContainer (the runtime applies the answer).") \
	X(nri_refused_at_create, "cpusetd_nri_refused_at_create_total", \
	  "NRI CreateContainer requests refused for an admission error (on_error=reject).") \
	X(nri_confirmed_at_mkdir, "cpusetd_nri_confirmed_at_mkdir_total", \
	  "Containers placed at CreateContainer whose cgroup mkdir confirmed them (no new decision).") \
	X(nri_not_applied, "cpusetd_nri_not_applied_total", \
	  "Containers placed at CreateContainer whose runtime did not apply the answer: written by the BPF path.") \
	X(created_without_nri, "cpusetd_created_without_nri_total", \
	  "Containers whose cgroup appeared without an NRI CreateContainer while NRI was in use: placed by BPF.") \
	X(nri_updates_sent, "cpusetd_nri_updates_sent_total", \
	  "Container cpuset updates sent to the runtime over NRI (in replies and UpdateContainers).") \
	X(nri_synchronizes, "cpusetd_nri_synchronizes_total", \
	  "NRI Synchronize requests handled (a rebuild from the live cgroups unless the table agrees).")

/* Monotonic since the daemon started. */
struct cpusetd_counters {
#define COUNTER_FIELD(name, metric, help) uint64_t name;
	CPUSETD_COUNTERS(COUNTER_FIELD)
#undef COUNTER_FIELD
};

/* One row of the table: the field is at offset in struct cpusetd_counters. */
struct counter_info {
	const char *name;	/* status.json key, and the field's name */
	const char *metric;	/* Prometheus name, or NULL: not exported as one */
	const char *help;	/* its HELP text (NULL with metric) */
	size_t offset;
};

#define COUNTER_INFO(name, metric, help) +1
enum { COUNTERS_N = 0 CPUSETD_COUNTERS(COUNTER_INFO) };
#undef COUNTER_INFO

/* Every counter, in table order (COUNTERS_N rows). */
extern const struct counter_info counter_info[COUNTERS_N];

/* The value of row i of n. i < COUNTERS_N. */
static inline uint64_t counter_value(const struct cpusetd_counters *n, unsigned i)
{
	return *(const uint64_t *)((const char *)n + counter_info[i].offset);
}

#endif
