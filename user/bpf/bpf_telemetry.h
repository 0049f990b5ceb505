/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loads and attaches the telemetry programs (bpf/telemetry.bpf.c) and
 * keeps the maps user space writes for them (cpu_owner, cpu_node).
 *
 * The figures themselves are read with telemetry.h (from this object's
 * fds, bpf_telemetry_fds, or from the pinned files). tp_btf is preferred
 * and probed for each tracepoint; raw_tp is the fallback (bpf_load.h).
 *
 * Single-threaded: one caller drives a struct bpf_telemetry.
 */
#ifndef CPUSETD_BPF_TELEMETRY_H
#define CPUSETD_BPF_TELEMETRY_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "maps/cpusetd.h"
#include "user/telemetry/telemetry.h"

struct bpf_telemetry;

struct bpf_telemetry_opts {
	bool cpuset_on_v2;	/* cpuset controller on the v2 hierarchy */
	/*
	 * The detection object's placement map (bpf_events_placement_fd),
	 * shared so violations are judged against what the controller
	 * wrote. libbpf keeps its own duplicate of the fd.
	 */
	int placement_fd;
	/*
	 * Its generation map (bpf_events_placement_gen_fd): the per-CPU
	 * cgroup cache drops an answer once the placement map changed. < 0:
	 * not shared; cached answers then age out (4 ms) instead.
	 */
	int placement_gen_fd;
	/*
	 * cpu_stats, cgroup_stats, cpu_owner, foreign and cpu_node are pinned
	 * as <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/<map> and reused if already
	 * there, so counters survive a daemon restart. The internal maps
	 * (per-CPU run state, wait timestamps) are never pinned: a stale
	 * timestamp would be charged as a huge wait. NULL: nothing pinned.
	 */
	const char *pin_dir;
	/*
	 * Config telemetry = full (true) or basic (false): which parts of the
	 * switch program are loaded (bpf/telemetry.bpf.c "Levels"). basic
	 * keeps cpu_stats' switches, preemptions, cross_switches, busy_ns,
	 * foreign_ns, kthread_ns and the foreign map; the run-queue wait
	 * fields, cgroup_stats and the NUMA migrations stay 0/empty, and
	 * sched_migrate_task and the wakeup programs are not loaded.
	 */
	bool full;
};

/*
 * Probes tp_btf, opens, sets rodata, shares the placement map, pins (see
 * pin_dir), loads and attaches sched_switch, sched_migrate_task and, when
 * the wait source is "wakeup" (bpf_telemetry_wait_source), sched_wakeup
 * and sched_wakeup_new. opts is not kept.
 * Returns 0 and *ret (free with bpf_telemetry_free), or -EINVAL (opts or
 * ret NULL, placement_fd < 0), -ENOMEM, -ENAMETOOLONG (pin_dir), -errno
 * from mkdir, or the libbpf error unchanged (-EINVAL: pin_dir not on bpffs
 * or a pinned map of another layout; -EPERM without CAP_BPF/CAP_PERFMON).
 * Logs at debug level only; *ret is untouched on failure.
 * Environment, for tests and benchmarks: CPUSETD_TELEMETRY_OFF set makes it
 * return -ECANCELED (the daemon then runs without telemetry);
 * CPUSETD_TELEMETRY_KTIME set times runs with bpf_ktime_get_ns() instead
 * of the run-queue clock; CPUSETD_TELEMETRY_WAIT_MAP=1 forces the "wakeup"
 * wait source (bpf_telemetry_wait_source).
 */
int bpf_telemetry_open(const struct bpf_telemetry_opts *opts, struct bpf_telemetry **ret);

/* Detaches and frees; pinned maps stay (and stop counting). Accepts NULL. */
void bpf_telemetry_free(struct bpf_telemetry *t);

/* "tp_btf" when every tracepoint uses its tp_btf twin, else "raw_tp".
 * Static string; cannot fail. */
const char *bpf_telemetry_attach_mode(const struct bpf_telemetry *t);

/*
 * Where run-queue waits come from: "none" at level basic (not measured);
 * else "run_delay" (the scheduler's per-task
 * sched_info.run_delay, read at sched_switch; the wakeup programs are not
 * loaded) or "wakeup" (our own timestamps from sched_wakeup and
 * sched_wakeup_new, for kernels without run_delay, or forced with
 * CPUSETD_TELEMETRY_WAIT_MAP=1). Static string; cannot fail.
 */
const char *bpf_telemetry_wait_source(const struct bpf_telemetry *t);

/*
 * The level loaded: "full" or "basic"; "off" for t NULL (running without
 * telemetry). Static string; cannot fail.
 */
const char *bpf_telemetry_level(const struct bpf_telemetry *t);

/*
 * Sets cpu_owner for CPU ids 0..n_cpus-1 (n_cpus <= CPUSETD_MAX_CPUS) from
 * owners[] (cgroup_id 0 = not exclusive: a pool CPU); CPU ids from n_cpus
 * up are set to "no owner". Only entries that differ from what this
 * object wrote last are written, so calling it after every placement
 * change costs a memcmp per CPU. Returns 0, -EINVAL (n_cpus too big), or
 * the -errno of the first map update that failed (later ones are still
 * tried; the failed ones are retried on the next call).
 */
int bpf_telemetry_set_owners(struct bpf_telemetry *t, const struct cpusetd_cpu_owner *owners,
			     unsigned n_cpus);

/*
 * Records that logical CPU cpu is on NUMA node node (for the cross-node
 * migration count; CPUs never set count as node 0). Returns 0, -EINVAL
 * (cpu >= CPUSETD_MAX_CPUS), or the -errno of the map update.
 */
int bpf_telemetry_set_cpu_node(struct bpf_telemetry *t, unsigned cpu, unsigned node);

/*
 * Drops the cgroup_stats entry of cgroup_id (a container that went away).
 * Call after its placement entry is gone, or BPF may re-create it.
 * Returns 0 (also when absent) or -errno.
 */
int bpf_telemetry_forget_cgroup(struct bpf_telemetry *t, uint64_t cgroup_id);

/*
 * Drops every cgroup_stats entry whose cgroup id keep() says no to (the
 * containers that vanished while the daemon was down, in a reused pinned
 * map). Returns the number dropped, -ENOMEM, or -errno of a failed delete.
 */
int bpf_telemetry_prune(struct bpf_telemetry *t, bool (*keep)(uint64_t cgroup_id, void *ctx),
			void *ctx);

/* The fds to read a snapshot from with telemetry_read_fds(); owned by t.
 * Cannot fail. */
void bpf_telemetry_fds(const struct bpf_telemetry *t, struct telemetry_fds *ret);

#endif
