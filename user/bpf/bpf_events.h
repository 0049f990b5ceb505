/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loads and attaches the detection programs (bpf/cpusetd.bpf.c) and hands
 * their ring-buffer events to a callback.
 *
 * tp_btf is preferred; when the kernel lacks BTF for a tracepoint (probed
 * by loading a trivial BTF-typed program, never by kernel version) the
 * raw_tp twin of that program is loaded instead. The cpuset write hook
 * (foreign writes) is fexit on cpuset_write_resmask where the kernel
 * attaches one (probed), else a kprobe/kretprobe pair on it, else a
 * fanotify mark on the cpuset filesystem (fanotify_hook.h; not BPF, and
 * free for every write elsewhere), else the write syscalls' tracepoints
 * (a BPF program on every write(2) of the node), else none: the daemon
 * then runs on the exec check alone (bpf_events_write_hook).
 * CPUSETD_BPF_NO_FEXIT, CPUSETD_BPF_NO_KPROBE and CPUSETD_NO_FANOTIFY in
 * the environment skip the first three (tests).
 *
 * Single-threaded: one caller drives a struct bpf_events. libbpf's print
 * callback is process-wide; bpf_events_open() routes it into log.h at
 * debug level.
 */
#ifndef CPUSETD_BPF_EVENTS_H
#define CPUSETD_BPF_EVENTS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "maps/cpusetd.h"

struct bpf_events;

struct bpf_events_opts {
	uint32_t hierarchy_id;		/* cpuset hierarchy; 0 = v2 default */
	bool cpuset_on_v2;		/* exec: read the v2 cgroup, not v1 cpuset's */
	uint64_t root_cgroup_id;	/* kubepods root's cgroup id */
	uint32_t root_level;		/* kubepods root's depth (hierarchy root = 0) */
	const char *cpuset_mnt;		/* cpuset hierarchy's mount (fanotify hook); NULL: none */
	/*
	 * placement, placement_gen, lifecycle and health are pinned as
	 * <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/<name> and reused if already there (a restarted daemon
	 * finds its placements; stale ones are for it to overwrite or delete).
	 * pin_dir must be on bpffs and exist or be creatable by one mkdir.
	 * The ring buffer is never pinned. NULL: nothing pinned.
	 */
	const char *pin_dir;
	/*
	 * Called for each event; ev points into the ring buffer and is valid
	 * only during the call. A negative return stops bpf_events_poll (that
	 * event counts as consumed).
	 */
	int (*handler)(const struct cpusetd_event *ev, void *ctx);
	void *ctx;
};

/*
 * Probes tp_btf, opens, sets the rodata filter from opts, pins (see
 * pin_dir), loads and attaches. opts is not kept (pin_dir may be freed
 * after the call). Returns 0 and *ret (free with bpf_events_free), or
 * -EINVAL (opts, opts->handler or ret NULL), -ENAMETOOLONG (pin_dir),
 * -errno from mkdir, or the libbpf error unchanged, e.g. -EINVAL when
 * pin_dir is not on bpffs or a pinned map has another layout, -EPERM
 * without CAP_BPF/CAP_PERFMON. Logs at debug level only; *ret is left
 * untouched on failure.
 */
int bpf_events_open(const struct bpf_events_opts *opts, struct bpf_events **ret);
/* Detaches and frees everything; pinned maps stay. Accepts NULL. */
void bpf_events_free(struct bpf_events *b);

/* The fd to put in an epoll set (readable when events wait): the ring
 * buffer's, or an epoll fd holding it and the fanotify group's. */
int bpf_events_fd(const struct bpf_events *b);

/*
 * Consumes every waiting event (ring buffer, then fanotify), calling the
 * handler; does not block. Returns the number of events handled (0 if
 * none), or the handler's negative value, or a negative libbpf error or
 * -errno of the fanotify read.
 */
int bpf_events_poll(struct bpf_events *b);

/*
 * Events the BPF side could not queue since open (ring buffer full), plus
 * fanotify queue overflows; the count of a previous run in a reused
 * pinned map is subtracted. One map lookup syscall. A value that grew since the last call means user space
 * must resync. Returns 0 if the lookup fails (it should not).
 */
uint64_t bpf_events_lost(const struct bpf_events *b);

/*
 * How the programs were attached: "tp_btf" when every tracepoint
 * (cgroup_mkdir, cgroup_rmdir, sched_process_exec) uses its tp_btf twin,
 * else "raw_tp" (at least one fell back). Static string; cannot fail.
 */
const char *bpf_events_attach_mode(const struct bpf_events *b);

/*
 * How foreign cpuset writes are caught: "fexit", "kprobe", "fanotify",
 * "syscall", or "none" (none attached; logged by the caller). Static
 * string; cannot fail.
 */
const char *bpf_events_write_hook(const struct bpf_events *b);

/*
 * The lifecycle entry of a cgroup (maps/cpusetd.h struct
 * cpusetd_lifecycle): the runtime's mount namespace and the container's
 * own execs seen so far. Returns 0 and *ret, -ENOENT when BPF has none
 * (the cgroup was made while the daemon was down), or -errno.
 */
int bpf_events_get_lifecycle(const struct bpf_events *b, uint64_t cgroup_id,
			     struct cpusetd_lifecycle *ret);

/* What probe_runtime_mntns (bpf/cpusetd.bpf.c) found. */
struct bpf_mntns_probe {
	uint64_t mntns;		/* mount ns inode of the nearest ancestor in another
				 * one than ours; ours when there is none */
	uint64_t own_mntns;	/* ours */
	uint32_t pid;		/* that ancestor's pid (as the kernel's init pid
				 * namespace numbers it); 0 when none */
	char comm[16];		/* its comm; "" when none */
};

/*
 * Runs the probe_runtime_mntns program once in the caller's context
 * (BPF_PROG_TEST_RUN on a raw_tp program, kernel 5.10+): the mount
 * namespace of the caller's nearest ancestor outside its own, which BPF
 * reads where /proc would need ptrace access. Returns 0 and *ret,
 * -ENOTSUP / -EINVAL (a kernel that cannot run it), -ENODATA, -errno.
 */
int bpf_events_probe_runtime_mntns(struct bpf_events *b, struct bpf_mntns_probe *ret);

/*
 * Creates the lifecycle entry of a cgroup BPF did not see being made
 * (resync), unless one exists: the BPF side's own record wins. With
 * replace, overwrites it (resync found the container started while the
 * programs were detached; an exec BPF counts meanwhile only adds).
 * Returns 0 (also when one existed) or -errno.
 */
int bpf_events_add_lifecycle(struct bpf_events *b, uint64_t cgroup_id,
			     const struct cpusetd_lifecycle *lc, bool replace);

/*
 * Records the placement of a container cgroup (cgroup_id = kernfs id =
 * st_ino of its directory) in the BPF placement map, as given. With
 * pl->verify_pending = 1 the exec check is armed: the container's next
 * own exec sends one CPUSETD_EV_EXEC and the BPF side clears the flag.
 * With pl->reject_id = cgroup_id every own exec is SIGKILLed and reported
 * (any other value: not rejected). Without an entry, the container's first
 * own exec is reported with CPUSETD_EXEC_UNPLACED. An entry
 * also makes writes by other processes to the cgroup's cpuset files
 * reported (CPUSETD_EV_CPUSET_WRITE). Overwrites any existing entry, then
 * bumps placement_gen. Returns 0 or the -errno of the map update (-E2BIG
 * when the map's 65536 entries are full).
 */
int bpf_events_set_placement(struct bpf_events *b, uint64_t cgroup_id,
			     const struct cpusetd_placement *pl);

/*
 * bpf_events_set_placement for n entries in one system call
 * (BPF_MAP_UPDATE_BATCH, Linux 5.6): ids[i] gets pls[i]. Entries are
 * written in order; *ret_done says how many were (all of them on
 * success). Bumps placement_gen once when any was. Returns 0 or the
 * -errno of the update (-E2BIG: the map is full; -EINVAL/-ENOTSUPP: a
 * kernel without batch updates), entries from *ret_done on not written.
 */
int bpf_events_set_placements(struct bpf_events *b, const uint64_t *ids,
			      const struct cpusetd_placement *pls, uint32_t n,
			      uint32_t *ret_done);
/*
 * Narrows the mkdir/rmdir filter to a new kubepods root (one that appeared
 * after bpf_events_open). Cannot fail.
 */
void bpf_events_set_root(struct bpf_events *b, uint64_t root_cgroup_id, uint32_t root_level);

/*
 * The placement map's fd, owned by b (valid until bpf_events_free): the
 * telemetry object reuses it (bpf_telemetry_opts.placement_fd) so both
 * read the entries written here. Cannot fail.
 */
int bpf_events_placement_fd(const struct bpf_events *b);
/*
 * The placement_gen map's fd (one __u64, bumped after every change to the
 * placement map by bpf_events_set/del_placement), owned by b: the
 * telemetry object reuses it to know its cached placement answers are
 * stale (bpf_telemetry_opts.placement_gen_fd). Cannot fail.
 */
int bpf_events_placement_gen_fd(const struct bpf_events *b);

/* Removes the entry of cgroup_id, then bumps placement_gen. Returns 0
 * (also when absent) or -errno. */
int bpf_events_del_placement(struct bpf_events *b, uint64_t cgroup_id);

/*
 * Removes every placement entry whose cgroup id keep() says no to (the
 * containers that went away unseen: an rmdir while the daemon was down,
 * or one dropped as stale before a resync; the map is pinned, so their
 * keys outlive any run), then bumps placement_gen once if any went. One
 * pass over the keys, collected before any is deleted (a deleted key
 * cannot be walked on from). Returns the number removed, -ENOMEM, or the
 * -errno of the first delete that failed (the walk stops there).
 */
int bpf_events_prune_placements(struct bpf_events *b,
				bool (*keep)(uint64_t cgroup_id, void *ctx), void *ctx);

#endif
