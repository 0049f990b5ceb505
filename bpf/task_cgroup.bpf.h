/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A task's container identity, shared by the detection programs
 * (cpusetd.bpf.c) and the telemetry programs (telemetry.bpf.c): the
 * task's cgroup in the hierarchy that carries the cpuset controller, and
 * that cgroup's kernfs id (== st_ino of its directory == the placement
 * map's key).
 *
 * task_cgroup()/task_cgroup_id() read through BPF_CORE_READ, so they are
 * valid in raw_tp programs (plain u64 args) as well as in tp_btf ones;
 * task_cgroup_id_btf() is the cheaper tp_btf-only twin. The cset_*
 * variants start from a css_set the caller already holds (telemetry keys
 * its per-CPU cgroup cache by it).
 *
 * BPF side only: include after vmlinux.h.
 */
#ifndef CPUSETD_TASK_CGROUP_BPF_H
#define CPUSETD_TASK_CGROUP_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * The cgroup a css_set names in the cpuset hierarchy: on v2 the default
 * hierarchy's cgroup (dfl_cgrp), on v1 the cpuset css's cgroup. A css_set
 * never changes which cgroups it names (a task that moves gets another
 * css_set), so the answer holds for as long as cset lives. NULL if it
 * cannot be read (no cpuset controller in this kernel, a read fault).
 */
static __always_inline struct cgroup *cset_cgroup(struct css_set *cset, bool on_v2)
{
	struct cgroup_subsys_state *css = NULL;
	int ssid;

	if (!cset)
		return NULL;
	if (on_v2)
		return BPF_CORE_READ(cset, dfl_cgrp);
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, cpuset_cgrp_id))
		return NULL;
	ssid = bpf_core_enum_value(enum cgroup_subsys_id, cpuset_cgrp_id);
	if (bpf_core_read(&css, sizeof(css), &cset->subsys[ssid]) || !css)
		return NULL;
	return BPF_CORE_READ(css, cgroup);
}

/* The task's cgroup in the cpuset hierarchy (cset_cgroup() of its
 * css_set, task->cgroups); NULL if it cannot be read (an exiting task). */
static __always_inline struct cgroup *task_cgroup(struct task_struct *p, bool on_v2)
{
	return cset_cgroup(BPF_CORE_READ(p, cgroups), on_v2);
}

/* cset_cgroup()'s kernfs id; 0 (never a valid id) when it cannot be read. */
static __always_inline __u64 cset_cgroup_id(struct css_set *cset, bool on_v2)
{
	struct cgroup *cgrp = cset_cgroup(cset, on_v2);

	return cgrp ? BPF_CORE_READ(cgrp, kn, id) : 0;
}

/* task_cgroup()'s kernfs id; 0 (never a valid id) when it cannot be read. */
static __always_inline __u64 task_cgroup_id(struct task_struct *p, bool on_v2)
{
	return cset_cgroup_id(BPF_CORE_READ(p, cgroups), on_v2);
}

/*
 * cset_cgroup_id() for tp_btf programs, where cset is a typed kernel
 * pointer (read from a task_struct argument with a plain load): plain
 * loads (CO-RE relocated, fault-safe under the verifier) instead of one
 * bpf_probe_read_kernel() call per hop, which costs ~5x more on the
 * sched_switch path. Not valid in raw_tp programs; 0 when unreadable.
 */
static __always_inline __u64 cset_cgroup_id_btf(struct css_set *cset, bool on_v2)
{
	struct cgroup_subsys_state *css;
	struct cgroup *cgrp;
	int ssid;

	if (on_v2) {
		cgrp = cset->dfl_cgrp;
		return cgrp ? cgrp->kn->id : 0;
	}
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, cpuset_cgrp_id))
		return 0;
	ssid = bpf_core_enum_value(enum cgroup_subsys_id, cpuset_cgrp_id);
	css = cset->subsys[ssid];	/* ssid: a load-time constant */
	if (!css || !css->cgroup)
		return 0;
	return css->cgroup->kn->id;
}

/* task_cgroup_id() for tp_btf programs (see cset_cgroup_id_btf()). */
static __always_inline __u64 task_cgroup_id_btf(struct task_struct *p, bool on_v2)
{
	return cset_cgroup_id_btf(p->cgroups, on_v2);
}

#endif /* CPUSETD_TASK_CGROUP_BPF_H */
