/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cpusetd ABI between the BPF programs (bpf/) and user space (user/).
 *
 * Types and constants only; includes nothing, so both sides bring their own
 * __u32/__u64 (vmlinux.h on the BPF side, <linux/types.h> in user space).
 * Every struct has explicit padding so the two compilers agree on layout.
 * Map values are structs so `bpftool map dump` prints named fields.
 *
 * Bump CPUSETD_LAYOUT_VERSION whenever a pinned map's key or value changes:
 * libbpf reuses a pinned map when only its sizes match and never compares
 * BTF, so a new layout must live in a new pin directory.
 */
#ifndef CPUSETD_MAPS_H
#define CPUSETD_MAPS_H

#define CPUSETD_LAYOUT_VERSION	1

/* Largest logical CPU id + 1 the daemon supports (topology limit). */
#define CPUSETD_MAX_CPUS	1024
#define CPUSETD_MASK_WORDS	(CPUSETD_MAX_CPUS / 64)

/* Cgroup path carried in an event, relative to the hierarchy root. */
#define CPUSETD_PATH_MAX	384

enum cpusetd_event_type {
	CPUSETD_EV_MKDIR = 1,	/* cgroup_mkdir under the managed root */
	CPUSETD_EV_RMDIR = 2,	/* cgroup_rmdir under the managed root */
	CPUSETD_EV_EXEC  = 3,	/* first exec in a managed container cgroup */
};

/* One ring buffer record. path is empty for CPUSETD_EV_EXEC. */
struct cpusetd_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id;	/* kernfs node id == stat(2) st_ino */
	__u32 type;		/* enum cpusetd_event_type */
	__u32 pid;		/* exec: the new task's tgid; else 0 */
	__u32 level;		/* cgroup depth, root = 0 */
	__u32 pad;
	char path[CPUSETD_PATH_MAX];
};

enum cpusetd_kind {
	CPUSETD_KIND_NONE      = 0,
	CPUSETD_KIND_SHARED    = 1,
	CPUSETD_KIND_INTEGER   = 2,
	CPUSETD_KIND_ANNOTATED = 3,
	CPUSETD_KIND_BE        = 4,	/* on the BE pool (Koordinator BE) */
};

/*
 * placement map: cgroup id -> what user space decided for that container.
 * User space writes it; BPF reads it to pick the exec events worth a
 * re-check and clears verify_pending when it has sent one.
 */
struct cpusetd_placement {
	__u32 kind;		/* enum cpusetd_kind */
	__u32 verify_pending;	/* 1: report the next exec in this cgroup */
	__u64 cpus[CPUSETD_MASK_WORDS];	/* bit n = logical CPU n */
};

/* Daemon health counters kept by BPF (single-slot array, key 0). */
struct cpusetd_bpf_health {
	__u64 events_sent;
	__u64 events_lost;	/* ring buffer full: user space resyncs */
};

#endif /* CPUSETD_MAPS_H */
