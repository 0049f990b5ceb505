/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * CO-RE workarounds for kernel layout changes that the programs in bpf/
 * read through. Each one cites the kernel commit it works around and carries
 * its own struct flavors (type___suffix), so the code compiles against a
 * vmlinux.h from either side of the change and libbpf picks the branch
 * that matches the running kernel at load time.
 *
 * BPF side only: include after vmlinux.h.
 */
#ifndef CPUSETD_CORE_FIXES_BPF_H
#define CPUSETD_CORE_FIXES_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * commit 7f203bc89eb6 ("cgroup: Replace cgroup->ancestor_ids[] with
 * ->ancestors[]"), merged for v6.1, replaced the array of ancestor cgroup
 * ids with an array of ancestor pointers. Both are indexed by level:
 * [0] is the hierarchy root, [cgrp->level] is cgrp itself.
 * see: https://github.com/torvalds/linux/commit/7f203bc89eb6
 *
 * Before it, ancestor_ids[] held u64 kernfs ids since v5.5; older kernels
 * have no BPF ring buffer (v5.8), so cpusetd never loads on them anyway.
 */
struct cgroup___new {
	struct cgroup *ancestors[0];
} __attribute__((preserve_access_index));

struct cgroup___old {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/*
 * Kernfs id (== cgroup id == st_ino of its directory) of cgrp's ancestor
 * at depth level. The caller guarantees level <= cgrp->level.
 * Returns 0 when the kernel has neither layout or a read fails; 0 is
 * never a valid kernfs id.
 */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cgrp, __u32 level)
{
	struct cgroup___new *cn = (void *)cgrp;
	struct cgroup___old *co = (void *)cgrp;
	struct cgroup *anc = NULL;
	__u64 id = 0;

	if (bpf_core_field_exists(cn->ancestors)) {
		if (bpf_core_read(&anc, sizeof(anc), &cn->ancestors[level]))
			return 0;
		return BPF_CORE_READ(anc, kn, id);
	}
	if (bpf_core_field_exists(co->ancestor_ids)) {
		if (bpf_core_read(&id, sizeof(id), &co->ancestor_ids[level]))
			return 0;
		return id;
	}
	return 0;
}

/*
 * commit 2f064a59a11f ("sched: Change task_struct::state"), merged for
 * v5.14, renamed task_struct::state (a volatile long) to __state (an
 * unsigned int). 0 is TASK_RUNNING under either name.
 * see: https://github.com/torvalds/linux/commit/2f064a59a11f
 */
struct task_struct___state_new {
	unsigned int __state;
} __attribute__((preserve_access_index));

struct task_struct___state_old {
	long state;
} __attribute__((preserve_access_index));

/* The task's scheduler state word; 0 = TASK_RUNNING (runnable). */
static __always_inline unsigned int task_state(struct task_struct *p)
{
	struct task_struct___state_new *new = (void *)p;
	struct task_struct___state_old *old = (void *)p;

	if (bpf_core_field_exists(new->__state))
		return BPF_CORE_READ(new, __state);
	return (unsigned int)BPF_CORE_READ(old, state);
}

/*
 * task_state() for tp_btf programs, where p is a typed kernel pointer: a
 * plain (CO-RE relocated) load instead of a bpf_probe_read_kernel() call.
 * Not valid in raw_tp programs.
 */
static __always_inline unsigned int task_state_btf(struct task_struct *p)
{
	struct task_struct___state_new *new = (void *)p;
	struct task_struct___state_old *old = (void *)p;

	if (bpf_core_field_exists(new->__state))
		return new->__state;
	return (unsigned int)old->state;
}

/*
 * commit bcf9033e5449 ("sched: move CPU field back into thread_info if
 * THREAD_INFO_IN_TASK=y"), merged for v5.16, moved the CPU a task is on
 * from task_struct::cpu to task_struct::thread_info.cpu.
 * see: https://github.com/torvalds/linux/commit/bcf9033e5449
 */
struct task_struct___cpu_old {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct thread_info___cpu_new {
	__u32 cpu;
} __attribute__((preserve_access_index));

struct task_struct___cpu_new {
	struct thread_info___cpu_new thread_info;
} __attribute__((preserve_access_index));

/* task_cpu(p): the CPU the task is queued or running on; 0 if unknown. */
static __always_inline __u32 task_cpu(struct task_struct *p)
{
	struct task_struct___cpu_new *tn = (void *)p;
	struct task_struct___cpu_old *to = (void *)p;

	if (bpf_core_field_exists(tn->thread_info.cpu))
		return BPF_CORE_READ(tn, thread_info.cpu);
	if (bpf_core_field_exists(to->cpu))
		return BPF_CORE_READ(to, cpu);
	return 0;
}

#endif /* CPUSETD_CORE_FIXES_BPF_H */
