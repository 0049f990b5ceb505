/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cpusetd ABI between the BPF programs (bpf/) and user space (user/).
 *
 * Types and constants only; includes nothing, so both sides bring their own
 * __u32/__u64 (vmlinux.h on the BPF side, <linux/types.h> in user space).
 * Every struct has explicit padding so the two compilers agree on layout.
 * Map values are structs so `bpftool map dump` prints named fields.
 *
 * Bump CPUSETD_LAYOUT_VERSION whenever a pinned map's key, value, type or
 * flags change: libbpf reuses a pinned map when its type, sizes and flags
 * match and never compares BTF, so a new layout must live in a new pin
 * directory. The daemon removes the directories of older layouts at start
 * (bpf_load_remove_old_layouts).
 */
#ifndef CPUSETD_MAPS_H
#define CPUSETD_MAPS_H

#define CPUSETD_LAYOUT_VERSION	4

/* Largest logical CPU id + 1 the daemon supports (topology limit). */
#define CPUSETD_MAX_CPUS	1024
#define CPUSETD_MASK_WORDS	(CPUSETD_MAX_CPUS / 64)

/* Cgroup path carried in an event, relative to the hierarchy root. */
#define CPUSETD_PATH_MAX	384

enum cpusetd_event_type {
	CPUSETD_EV_MKDIR = 1,	/* cgroup_mkdir under the managed root */
	CPUSETD_EV_RMDIR = 2,	/* cgroup_rmdir under the managed root */
	CPUSETD_EV_EXEC  = 3,	/* exec in a managed container cgroup (see below) */
	CPUSETD_EV_POPULATED = 4,	/* a cgroup under the root gained its first
					 * live task (arg 1) or lost its last (arg 0) */
	CPUSETD_EV_CPUSET_WRITE = 5,	/* another process wrote a managed
					 * container's cpuset.cpus or cpuset.mems */
};

/* CPUSETD_EV_EXEC arg: bit flags. */
#define CPUSETD_EXEC_OWN	1	/* the container's own exec: from a mount
					 * namespace other than the one of the
					 * runtime that made the cgroup */
#define CPUSETD_EXEC_KILLED	2	/* placement said reject: SIGKILLed at once */
#define CPUSETD_EXEC_UNPLACED	4	/* no placement entry (user space could not
					 * write it: map full): the container's
					 * first own exec, reported once so user
					 * space can check it, or kill a rejection
					 * the map could not arm */

/* CPUSETD_EV_CPUSET_WRITE arg: which file. */
enum cpusetd_cpuset_file {
	CPUSETD_FILE_OTHER = 0,
	CPUSETD_FILE_CPUS = 1,
	CPUSETD_FILE_MEMS = 2,
};

/*
 * One ring buffer record.
 *   pid:   exec: the task's tgid; cpuset write: the writer's tgid; else 0
 *   arg:   populated: 1 or 0; exec: CPUSETD_EXEC_* flags; cpuset write:
 *          enum cpusetd_cpuset_file
 *   mntns: mkdir: mount namespace inode of the task that made the cgroup
 *          (the runtime); exec: of the exec'ing task; else 0
 *   comm:  exec: the new comm; cpuset write: the writer's comm
 *   path:  mkdir, rmdir, populated: the cgroup's path, relative to the
 *          hierarchy root, starting with '/', truncated to fit;
 *          cpuset write: the value written (truncated); exec: empty
 */
struct cpusetd_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id;	/* kernfs node id == stat(2) st_ino */
	__u32 type;		/* enum cpusetd_event_type */
	__u32 pid;
	__u32 level;		/* cgroup depth, root = 0 (0 for cpuset writes) */
	__u32 arg;
	__u64 mntns;
	char comm[16];
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
 * re-check (clearing verify_pending when it has sent one), to kill a
 * rejected container at its own first exec, and to report foreign writes.
 *
 * reject_id is the key itself, not a flag: the map is a preallocated hash,
 * whose replaced or deleted elements the kernel hands to the next update
 * of any key while a program may still read them, so a program that
 * looked up one container could read another's value. A kill is taken
 * only when this one aligned word names the cgroup being exec'd in.
 */
struct cpusetd_placement {
	__u32 kind;		/* enum cpusetd_kind */
	__u32 verify_pending;	/* 1: report the container's next own exec */
	__u64 cpus[CPUSETD_MASK_WORDS];	/* bit n = logical CPU n */
	__u64 reject_id;	/* == the key: SIGKILL every own exec
				 * (on_error=reject); 0: admitted */
};

/*
 * lifecycle map (LRU hash): cgroup id -> what BPF saw of a cgroup under
 * the kubepods root since its mkdir. The mkdir program creates the entry,
 * the rmdir program deletes it; user space creates it for cgroups made
 * while the daemon was down. It tells the runtime's own execs (runc's
 * re-exec of itself, in the runtime's mount namespace) from the
 * container's (after the runtime made a new mount namespace for it).
 */
struct cpusetd_lifecycle {
	__u64 runtime_mntns;	/* mount ns inode of the task that made the cgroup */
	__u64 own_execs;	/* execs from any other mount namespace */
	__u64 first_exec_ns;	/* bpf_ktime_get_ns() of the first; 0 = none yet */
};

/* Daemon health counters kept by BPF (single-slot array, key 0). */
struct cpusetd_bpf_health {
	__u64 events_sent;
	__u64 events_lost;	/* ring buffer full: user space resyncs */
};

/*
 * Telemetry (bpf/telemetry.bpf.c): noisy-neighbour figures, attributed to
 * the task being measured (the wakee, the incoming task), never to
 * `current`. Pinned under <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/.
 */

/* Run-queue wait histogram: log2 of microseconds. Slot 0 counts waits
 * under 2 µs, slot k (1 <= k < last) waits in [2^k, 2^(k+1)) µs, the last
 * slot everything from 2^(CPUSETD_HIST_SLOTS-1) µs (~67 s) up. */
#define CPUSETD_HIST_SLOTS	27

/*
 * cpu_stats: array indexed by logical CPU id (CPUSETD_MAX_CPUS entries);
 * each CPU writes only its own slot, so no atomics are needed.
 * Monotonic counters since the programs were loaded (a reused pinned map
 * keeps counting across daemon restarts).
 */
struct cpusetd_cpu_stats {
	__u64 switches;		/* context switches (sched_switch) */
	__u64 preemptions;	/* involuntary: prev was still runnable */
	__u64 cross_switches;	/* prev and next in different cgroups */
	__u64 busy_ns;		/* time running anything but the idle task */
	__u64 rq_wait_ns;	/* run-queue wait of tasks switched in here */
	__u64 rq_wait_count;	/* waits summed in rq_wait_ns */
	__u64 foreign_ns;	/* CPU with an owner: user tasks of other cgroups */
	__u64 kthread_ns;	/* CPU with an owner: kernel threads */
	__u64 rq_wait_hist[CPUSETD_HIST_SLOTS];
	__u64 pad;
};

/*
 * cgroup_stats: hash keyed by cgroup id (__u64), for cgroups that have a
 * placement entry (managed containers). Updated from every CPU: atomics.
 */
struct cpusetd_cgroup_stats {
	__u64 cpu_ns;		/* time its tasks ran */
	__u64 rq_wait_ns;	/* run-queue wait of its tasks */
	__u64 rq_wait_count;
	__u64 preempted;	/* its task was switched out while runnable, for
				 * a task of another cgroup */
	__u64 violations;	/* its task switched in on a CPU outside the
				 * placement cpumask */
	__u64 last_violation_cpu;	/* CPU of the latest violation */
	__u64 numa_migrations;	/* its task moved between CPUs of different
				 * NUMA nodes (sched_migrate_task) */
	__u64 rq_wait_hist[CPUSETD_HIST_SLOTS];
	__u64 pad;
};

/*
 * cpu_owner: array indexed by logical CPU id, written by user space:
 * the container that owns the CPU exclusively (integer containers and
 * scheduled cpusets), or cgroup_id 0 for pool CPUs. BPF uses it to tell
 * foreign time from the owner's.
 */
struct cpusetd_cpu_owner {
	__u64 cgroup_id;	/* owner's cgroup id; 0 = not exclusive */
	__u32 kind;		/* enum cpusetd_kind of the owner */
	__u32 pad;
};

/* foreign: LRU hash of who ran on an owned CPU that was not its owner. */
struct cpusetd_foreign_key {
	__u32 cpu;
	__u32 pad;
	__u64 cgroup_id;	/* the intruder's cgroup (any hierarchy level) */
};

struct cpusetd_foreign {
	__u64 ns;		/* time it ran there */
	__u64 switches;		/* times it was switched in there */
};

/* cpu_node: array indexed by logical CPU id, written by user space at
 * start: the CPU's NUMA node (for numa_migrations); unset = node 0. */
struct cpusetd_cpu_node {
	__u32 node;
	__u32 pad;
};

#endif /* CPUSETD_MAPS_H */
