/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpusetd --release, between its files (release.h is the interface):
 *   release.c       the lock, host isolation, the pins, the summary, the run
 *   release_tree.c  under the kubepods root: who is exclusive, cpusets, quotas
 */
#ifndef CPUSETD_RELEASE_INTERNAL_H
#define CPUSETD_RELEASE_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include "cgroupfs/cgfs.h"
#include "user/base/strmap.h"
#include "user/config/config.h"
#include "user/topo/topology.h"
#include "release.h"

struct release {
	const struct cpusetd_config *cfg;
	release_exclusive_fn exclusive;	/* the daemon's decision (release.h) */
	struct cgfs *cg;
	struct topology *topo;
	char root[CGFS_PATH_MAX];	/* kubepods root, "" none */
	struct strmap *kept;		/* container path -> (void *)1: exclusive, left */
	char **paths;			/* every cgroup under root, parents first */
	size_t n, cap;
	bool v2;
	/* what was done, for the summary */
	unsigned slices, pods, containers, kept_n, pinned, cg_failed;
	unsigned quotas, marks, quota_failed;
	unsigned iso_restored;
	const char *iso;		/* what became of host isolation */
	unsigned pins;
	bool failed;
};

static inline bool release_dry(const struct release *rl)
{
	return rl->cfg->dry_run;
}

/*
 * Everything under rl->root (nothing, said at info, when it is ""): the
 * tree is read, the
 * exclusive containers told apart (the daemon's decisions, a dry-run
 * resync), cpusets widened (v1 parents first to the parent's set; v2
 * exclusive ones pinned, then the rest inherits, children first), then
 * the lifted CFS quotas put back, children first. Counts and failures go
 * to rl (each failure logged). Cannot fail otherwise.
 */
void release_tree(struct release *rl);

#endif
