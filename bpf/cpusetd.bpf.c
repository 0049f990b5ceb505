// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cpusetd detection programs: tell user space, through the `events` ring
 * buffer, that a container cgroup appeared (cgroup_mkdir) or went away
 * (cgroup_rmdir) below the kubepods root, and that a cgroup whose placement
 * user space wants re-checked ran its first exec (sched_process_exec).
 *
 * No policy here: the programs only filter to the managed hierarchy and
 * subtree and copy ids out. Settings are rodata, fixed at load time.
 *
 * Each tracepoint has two twins sharing one __always_inline body: a tp_btf
 * program (typed, cheapest) and a raw_tp program for kernels without BTF
 * for that tracepoint. The loader (user/bpf_events.c) probes and loads only
 * one twin of each pair. Both twins read kernel memory through
 * BPF_CORE_READ, so one body is valid under either verifier model.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps/cpusetd.h"
#include "core_fixes.bpf.h"
#include "task_cgroup.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load (struct bpf_events_opts). */
const volatile __u32 hierarchy_id = 0;		/* cpuset hierarchy; 0 = v2 */
const volatile bool cpuset_on_v2 = false;	/* exec: use css_set->dfl_cgrp */
/* Not rodata: user space narrows the filter when the kubepods root
 * appears after start-up (bpf_events_set_root). */
__u64 root_cgroup_id = 0;	/* kubepods root's kernfs id */
__u32 root_level = 0;		/* kubepods root's depth */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

#include "placement.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpusetd_bpf_health);
} health SEC(".maps");

/*
 * The first 8 bytes of struct cpusetd_placement, seen as one word.
 * clang 14 without -mcpu=v3 (our BPF_CFLAGS) can only emit 64-bit atomics,
 * so verify_pending is cleared by a 64-bit compare-and-swap of this word.
 */
union placement_head {
	__u64 word;
	struct {
		__u32 kind;
		__u32 verify_pending;
	};
};
_Static_assert(__builtin_offsetof(struct cpusetd_placement, kind) == 0 &&
	       __builtin_offsetof(struct cpusetd_placement, verify_pending) == 4,
	       "placement_head must mirror struct cpusetd_placement");

static __always_inline void count(bool sent)
{
	struct cpusetd_bpf_health *h;
	__u32 zero = 0;

	h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return;
	if (sent)
		__sync_fetch_and_add(&h->events_sent, 1);
	else
		__sync_fetch_and_add(&h->events_lost, 1);
}

/* Reserves an event with its header filled in; NULL (counted lost) if full. */
static __always_inline struct cpusetd_event *
event_new(__u32 type, __u64 cgroup_id, __u32 pid, __u32 level)
{
	struct cpusetd_event *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(false);
		return NULL;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = cgroup_id;
	ev->type = type;
	ev->pid = pid;
	ev->level = level;
	ev->pad = 0;
	ev->path[0] = '\0';
	return ev;
}

static __always_inline void event_send(struct cpusetd_event *ev)
{
	bpf_ringbuf_submit(ev, 0);
	count(true);
}

/* cgroup_mkdir / cgroup_rmdir: cgroups strictly below the kubepods root. */
static __always_inline int on_cgroup(struct cgroup *cgrp, const char *path, __u32 type)
{
	struct cpusetd_event *ev;
	__u64 id;
	int level;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != (int)hierarchy_id)
		return 0;
	level = BPF_CORE_READ(cgrp, level);
	if (level <= 0 || (__u32)level <= root_level)
		return 0;
	if (cgroup_ancestor_id(cgrp, root_level) != root_cgroup_id)
		return 0;

	id = BPF_CORE_READ(cgrp, kn, id);
	ev = event_new(type, id, 0, level);
	if (!ev)
		return 0;
	/* Relative to the hierarchy root, starts with '/'; truncated to fit. */
	bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), path);
	event_send(ev);
	return 0;
}

/*
 * sched_process_exec: report the first exec in a cgroup whose placement
 * is armed (verify_pending == 1). Clearing the flag is a compare-and-swap,
 * so when several tasks of the cgroup exec at once exactly one reports.
 */
static __always_inline int on_exec(struct task_struct *p)
{
	union placement_head old, new;
	struct cpusetd_placement *pl;
	struct cpusetd_event *ev;
	struct cgroup *cgrp;
	__u64 id;

	cgrp = task_cgroup(p, cpuset_on_v2);
	if (!cgrp)
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	pl = bpf_map_lookup_elem(&placement, &id);
	if (!pl)
		return 0;

	old.word = *(volatile __u64 *)pl;
	if (old.verify_pending != 1)
		return 0;
	new = old;
	new.verify_pending = 0;
	/*
	 * Fails if another exec cleared the flag first (it reports), or if
	 * user space replaced the entry meanwhile; the next exec then sees
	 * the new value, so nothing armed is lost for good.
	 * Racy in one corner we live with: a preallocated hash map recycles a
	 * replaced element without waiting for readers, so if user space
	 * rewrites this key and another key reuses the old element between
	 * our lookup and the swap, we may clear that key's flag and report
	 * under our id. User space re-arms and rechecks on resync anyway.
	 */
	if (__sync_val_compare_and_swap((__u64 *)pl, old.word, new.word) != old.word)
		return 0;

	ev = event_new(CPUSETD_EV_EXEC, id, BPF_CORE_READ(p, tgid),
		       BPF_CORE_READ(cgrp, level));
	if (!ev)
		return 0;
	event_send(ev);
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cg_mkdir_btf, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_MKDIR);
}

SEC("raw_tp/cgroup_mkdir")
int BPF_PROG(cg_mkdir_raw, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_MKDIR);
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cg_rmdir_btf, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_RMDIR);
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(cg_rmdir_raw, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_RMDIR);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(p);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(p);
}
