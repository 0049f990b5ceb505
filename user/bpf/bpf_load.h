/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two BPF loaders (bpf_events.c: detection, bpf_telemetry.c:
 * telemetry) do the same way: route libbpf's output into log.h, pick the
 * tp_btf or raw_tp twin of each tracepoint program by probing, and pin
 * maps under the layout-versioned directory.
 *
 * Library code: logs at debug level only.
 */
#ifndef CPUSETD_BPF_LOAD_H
#define CPUSETD_BPF_LOAD_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>

/* One tracepoint and its two program twins (same body, two attach types). */
struct bpf_load_twin {
	const char *tp;			/* tracepoint name, e.g. "sched_switch" */
	struct bpf_program *btf;	/* SEC("tp_btf/<tp>") */
	struct bpf_program *raw;	/* SEC("raw_tp/<tp>") */
};

/*
 * Routes libbpf's print callback (process-wide) into log.h at debug level;
 * libbpf's own debug chatter only with CPUSETD_LIBBPF_DEBUG=1 in the
 * environment. Cannot fail; calling it again is harmless.
 */
void bpf_load_route_print(void);

/*
 * Probes, for each of the n twins, whether this kernel loads its tp_btf
 * program (a feature probe, never a kernel version check) and turns
 * autoload off for the twin that is not used. CPUSETD_BPF_NO_TP_BTF set
 * in the environment makes every probe say no (tests run the raw_tp path
 * on kernels that have tp_btf). Call between open and load.
 * Returns 0 and *ret_all_btf (true when every twin uses tp_btf), or the
 * libbpf error of bpf_program__set_autoload; *ret_all_btf untouched then.
 */
int bpf_load_choose_twins(const struct bpf_load_twin *twins, size_t n, bool *ret_all_btf);

/*
 * Whether this kernel attaches a BPF_TRACE_FEXIT program to the kernel
 * function func (BTF present, trampolines supported): loads and attaches
 * a two-instruction program, then drops it. A feature probe, never a
 * version check. CPUSETD_BPF_NO_FEXIT in the environment makes it say no
 * (tests run the kprobe path on kernels that have fexit). Cannot fail:
 * any error means "no" (logged at debug level).
 */
bool bpf_load_probe_fexit(const char *func);

/*
 * Sets the pin path of each of the n maps to
 * <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/<map name>; libbpf then reuses a map
 * already pinned there at load (same type and sizes) or pins the new one.
 * pin_dir must exist or be creatable with one mkdir; whether it is on
 * bpffs is left to libbpf (load fails with -EINVAL). Call between open and
 * load. Returns 0, -ENAMETOOLONG, -errno from mkdir, or the libbpf error.
 */
int bpf_load_pin_under(struct bpf_map *const *maps, size_t n, const char *pin_dir);

/*
 * After an upgrade to a new CPUSETD_LAYOUT_VERSION the old layout's pins
 * (<pin_dir>/v<k>/, k < the current version) are left behind, each
 * pinned map holding kernel memory for nobody. Removes every such
 * directory whose entries are all pinned maps by our names (any layout's:
 * placement, placement_gen, lifecycle, health, cpu_stats, cgroup_stats,
 * cpu_owner, foreign, cpu_node); one holding anything else is left whole,
 * and so is a newer layout's (after a downgrade it is the newer daemon's).
 * Unlinking a pin never disturbs a program still using its map. Call only
 * while holding the pin dir's instance lock (user/process/instance_lock.h): no other
 * cpusetd runs on it then. Returns the number of directories removed
 * (0 also when pin_dir does not exist), or the -errno of opening pin_dir.
 * Logs at debug level what it left and why.
 */
int bpf_load_remove_old_layouts(const char *pin_dir);

#endif
