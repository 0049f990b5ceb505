// SPDX-License-Identifier: Apache-2.0
/*
 * The exporters' view of the controller (export/snapshot.h): what
 * status.json, topology.json and the .prom file say, in one place.
 */
#include <errno.h>
#include <stdlib.h>
#include "controller_internal.h"

static const char *mode_name(enum cgfs_mode m)
{
	return m == CGFS_MODE_V2 ? "v2" : m == CGFS_MODE_HYBRID ? "hybrid" : "v1";
}

static const char *state_name(const struct container *ct)
{
	if (ct->killed)
		return "rejected";
	return ct->state == CT_WAITING ? "waiting" : ct->state == CT_EXITED ? "exited" : "placed";
}

static void fill_container(const struct controller *c, const struct container *ct,
			   struct snapshot_container *ret)
{
	*ret = (struct snapshot_container){
		.container_id = ct->info.container_id,
		.cgroup = ct->path,
		.cgroup_id = ct->cgroup_id,
		.qos = ct->info.qos,
		.meta = &ct->meta,
		.d = &ct->d,
		.entry = policy_lookup(c->policy, ct->info.container_id),
		.state = state_name(ct),
	};
}

/* config.h's export_containers in the export's terms (snapshot.h). */
static enum export_containers prom_containers(const struct cpusetd_config *cfg)
{
	switch (cfg->export_containers) {
	case CONFIG_EXPORT_ALL:
		return EXPORT_CONTAINERS_ALL;
	case CONFIG_EXPORT_NONE:
		return EXPORT_CONTAINERS_NONE;
	case CONFIG_EXPORT_EXCLUSIVE:
		break;
	}
	return EXPORT_CONTAINERS_EXCLUSIVE;
}

/* The table and the writers into arrays the snapshot owns. */
static int gather(const struct controller *c, struct snapshot *s)
{
	size_t n = strmap_count(c->by_path), nw = strmap_count(c->writers), i = 0;
	struct snapshot_container *cts = calloc(n + 1, sizeof(*cts));
	struct snapshot_writer *w = calloc(nw + 1, sizeof(*w));
	const char *k;
	void *v;

	if (!cts || !w) {
		free(cts);
		free(w);
		return -ENOMEM;
	}
	for (size_t it = 0; i < n && strmap_next(c->by_path, &it, &k, &v); i++)
		fill_container(c, v, &cts[i]);
	s->containers = cts;
	s->n_containers = i;
	i = 0;
	for (size_t it = 0; i < nw && strmap_next(c->writers, &it, &k, &v); i++)
		w[i] = (struct snapshot_writer){ .comm = ((struct writer_count *)v)->comm,
						 .writes = ((struct writer_count *)v)->writes };
	s->writers = w;
	s->n_writers = i;
	return 0;
}

int controller_snapshot(const struct controller *c, struct snapshot *ret)
{
	*ret = (struct snapshot){
		.version = CPUSETD_VERSION,
		.revision = cpusetd_revision,
		.cgroup_mode = mode_name(cgfs_mounts(c->cg)->mode),
		.kubepods_root = c->root,
		.bpf_attach = c->bpf ? bpf_events_attach_mode(c->bpf) : "none",
		.telemetry = bpf_telemetry_level(c->tel),
		.write_hook = c->bpf ? bpf_events_write_hook(c->bpf) : "none",
		.dry_run = c->cfg->dry_run,
		.export_interval_s = c->cfg->export_interval_s ? c->cfg->export_interval_s : 1,
		.policy = &c->cfg->policy,
		.topo = c->topo,
		.errors = c->errors,
		.n = &c->n,
		.admission_errors = c->admission_errors,
		.conv_hist = &c->conv_hist,
		.conv_ring = c->conv_ns,
		.conv_ring_len = STATUS_RECENT,
		.conv_count = c->conv_count,
		.conv_phase_ring = { c->conv_phase_ns[0], c->conv_phase_ns[1],
				     c->conv_phase_ns[2], c->conv_phase_ns[3] },
		.conv_phase_hist = c->conv_phase_hist,
		.dirty = controller_dirty(c),
		/* read at every export: a reload of these applies at once */
		.prom_containers = prom_containers(c->cfg),
		.rq_bounds_us = c->cfg->rq_buckets_us,
		.n_rq_bounds = c->cfg->n_rq_buckets,
	};
	controller_nri_state(c, &ret->nri);
	policy_shared_pool(c->policy, &ret->shared_pool);
	policy_be_pool(c->policy, &ret->be_pool);
	policy_reserved(c->policy, &ret->reserved);
	if (gather(c, ret) < 0) {
		*ret = (struct snapshot){ 0 };
		return -ENOMEM;
	}
	return 0;
}
