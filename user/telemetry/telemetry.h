/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the telemetry maps (maps/cpusetd.h "Telemetry") from user
 * space: the daemon's exporter reads them through its own map fds,
 * cpusetctl through the pinned files, so neither needs the other.
 *
 * A snapshot is a copy taken map by map, not atomically: counters of one
 * CPU may be a few switches apart from another's. Good enough for rates
 * and dashboards; nothing decides on it.
 */
#ifndef CPUSETD_TELEMETRY_H
#define CPUSETD_TELEMETRY_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "maps/cpusetd.h"

/* Names of the pinned files under <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/. */
#define TELEMETRY_MAP_CPU_STATS		"cpu_stats"
#define TELEMETRY_MAP_CGROUP_STATS	"cgroup_stats"
#define TELEMETRY_MAP_CPU_OWNER		"cpu_owner"
#define TELEMETRY_MAP_FOREIGN		"foreign"
#define TELEMETRY_MAP_CPU_NODE		"cpu_node"

struct telemetry_cgroup {
	uint64_t cgroup_id;
	struct cpusetd_cgroup_stats s;
};

struct telemetry_foreign {
	struct cpusetd_foreign_key key;
	struct cpusetd_foreign v;
};

struct telemetry_snapshot {
	unsigned n_cpus;			/* entries of cpu[] and owner[]: ids 0..n_cpus-1 */
	struct cpusetd_cpu_stats *cpu;		/* by logical CPU id */
	struct cpusetd_cpu_owner *owner;	/* by logical CPU id */
	size_t n_cgroups;
	struct telemetry_cgroup *cgroup;	/* sorted by cgroup_id */
	size_t n_foreign;
	struct telemetry_foreign *foreign;	/* sorted by (cpu, cgroup_id) */
};

/* The map fds a snapshot is read from; -1 for a map that is not there
 * (its part of the snapshot stays empty). */
struct telemetry_fds {
	int cpu_stats, cgroup_stats, cpu_owner, foreign;
};

/*
 * Copies the maps into *ret, for CPU ids below n_cpus (the topology's
 * highest possible CPU id + 1, at most CPUSETD_MAX_CPUS). Returns 0, or
 * -EINVAL (fds NULL, n_cpus too big), -ENOMEM, -EPROTO when a map's key or
 * value size is not the one in maps/cpusetd.h (another layout), or the
 * -errno of a map lookup that failed for a reason other than a missing key. *ret is zeroed first; free it with
 * telemetry_snapshot_free either way.
 */
int telemetry_read_fds(const struct telemetry_fds *fds, unsigned n_cpus,
		       struct telemetry_snapshot *ret);

/*
 * As telemetry_read_fds, from the files pinned under
 * <pin_dir>/v<CPUSETD_LAYOUT_VERSION>/. Returns -ENOENT when cpu_stats is
 * not pinned there (daemon never ran with that pin dir, or an older
 * layout), -EACCES/-EPERM without the rights to open pinned maps.
 */
int telemetry_read_pinned(const char *pin_dir, unsigned n_cpus, struct telemetry_snapshot *ret);

/* Frees what a snapshot holds and zeroes it. Accepts NULL. */
void telemetry_snapshot_free(struct telemetry_snapshot *s);

/* The lower bound, in seconds, of histogram slot k (0 for slot 0):
 * 2^k µs. Cannot fail. */
double telemetry_hist_slot_lower_s(unsigned k);

#endif
