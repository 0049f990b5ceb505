/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CO-RE workarounds for kernel layout changes that cpusetd.bpf.c reads
 * through. Each one cites the kernel commit it works around and carries
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

#endif /* CPUSETD_CORE_FIXES_BPF_H */
