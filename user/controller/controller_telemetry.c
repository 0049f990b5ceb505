// SPDX-License-Identifier: Apache-2.0
/*
 * The telemetry maps user space owns: cpu_owner from the placements, and
 * the stats of containers that are gone dropped after a resync.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"

/* cpu_owner from the table: integer containers own their CPUs. */
static void sync_cpu_owner(struct controller *c)
{
	static struct cpusetd_cpu_owner owners[CPUSETD_MAX_CPUS];
	size_t it = 0;
	const char *k;
	void *v;
	int cpu, r;

	memset(owners, 0, sizeof(owners));
	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *ct = v;

		if (ct->d.kind != CPUSETD_KIND_INTEGER || ct->d.err || !ct->cgroup_id ||
		    !container_live(ct))
			continue;
		cpumask_for_each(cpu, &ct->d.cpus)
			owners[cpu] = (struct cpusetd_cpu_owner){ .cgroup_id = ct->cgroup_id,
								  .kind = ct->d.kind };
	}
	r = bpf_telemetry_set_owners(c->tel, owners, CPUSETD_MAX_CPUS);
	if (r < 0)
		log_debug("telemetry: cpu_owner update failed: %s", strerror(-r));
}

static bool known_cgroup(uint64_t cgroup_id, void *ctx)
{
	return controller_find_id(ctx, cgroup_id) != NULL;
}

void controller_sync_telemetry(struct controller *c)
{
	int r;

	if (!c->tel)
		return;
	sync_cpu_owner(c);
	if (c->tel_pruned_at == c->n.resyncs)
		return;
	/* O(entries × containers), only after a resync. */
	c->tel_pruned_at = c->n.resyncs;
	r = bpf_telemetry_prune(c->tel, known_cgroup, c);
	if (r < 0)
		log_debug("telemetry: pruning cgroup_stats failed: %s", strerror(-r));
	else if (r > 0)
		log_debug("telemetry: dropped the stats of %d containers that are gone", r);
}

/* The stats of a container that goes (controller_forget's telemetry
 * step, after its placement entry: BPF re-creates the stats of a cgroup
 * the placement map still lists). A failure is left to the prune after
 * the next resync. */
void controller_telemetry_forget(struct controller *c, const struct container *ct)
{
	if (c->tel && ct->cgroup_id)
		bpf_telemetry_forget_cgroup(c->tel, ct->cgroup_id);
}
