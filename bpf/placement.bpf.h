/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The placement map (cgroup id -> struct cpusetd_placement) and its
 * generation, declared once
 * for both BPF objects: the detection object owns it, the telemetry
 * object is handed its fd (bpf_map__reuse_fd), which works only while the
 * two declarations agree in type and sizes.
 *
 * BPF side only: include after vmlinux.h and maps/cpusetd.h.
 */
#ifndef CPUSETD_PLACEMENT_BPF_H
#define CPUSETD_PLACEMENT_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);			/* cgroup id */
	__type(value, struct cpusetd_placement);
} placement SEC(".maps");

/*
 * placement_gen[0]: bumped by user space after every change to placement
 * (bpf_events_set/del_placement), so a cache of placement answers (the
 * telemetry's per-CPU cgroup cache) knows at once that it is stale.
 * Mmapable: user space bumps it with one atomic add, no syscall.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} placement_gen SEC(".maps");

#endif /* CPUSETD_PLACEMENT_BPF_H */
