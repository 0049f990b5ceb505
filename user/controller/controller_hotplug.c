// SPDX-License-Identifier: Apache-2.0
/*
 * CPU hotplug: the policy decides replacements and shortfalls
 * (policy_hotplug.h); here every container is brought to them, pooled
 * ones first, and each change is logged once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"
#include "user/policy/policy_hotplug.h"

/* One container's hotplug change, logged once here, where it is decided. */
static void log_hotplug(struct controller *c, const struct policy_hotplug_change *ch)
{
	const struct policy_entry *e = policy_lookup(c->policy, ch->container_id);
	char lost[CPULIST_MAX], added[CPULIST_MAX], cpus[CPULIST_MAX];

	if (!e)
		return;
	cpulist_format(&ch->lost, lost, sizeof(lost));
	cpulist_format(&ch->added, added, sizeof(added));
	cpulist_format(&e->cpus, cpus, sizeof(cpus));
	switch (ch->what) {
	case POLICY_HP_REPLACED:
		log_notice("%s (%.12s): CPU %s offline, replaced by %s; cpus %s", e->name,
			   e->container_id, lost, added, cpus);
		break;
	case POLICY_HP_REFILLED:
		log_notice("%s (%.12s): shortfall filled with CPU %s; cpus %s", e->name,
			   e->container_id, added, cpus);
		break;
	case POLICY_HP_SHORT:
		c->n.hotplug_shortfalls++;
		log_error("%s (%.12s): %s: %s", e->name, e->container_id,
			  policy_error_name(e->err), e->reason);
		break;
	case POLICY_HP_OFFLINE:
		log_error("%s (%.12s): %s: %s", e->name, e->container_id,
			  policy_error_name(e->err), e->reason);
		break;
	case POLICY_HP_RESTORED:
		log_notice("%s (%.12s): CPU %s online again; cpus %s, error cleared", e->name,
			   e->container_id, added, cpus);
		break;
	}
}

/* The kernel's cpuset.cpus, not what we last wrote: v1 removed offline
 * CPUs behind our back. New decisions from the policy. */
static void refresh_container(struct controller *c, struct container *ct)
{
	struct policy_decision d;

	ct->cpus_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_CPUS, &ct->cpus_applied) == 0;
	if (ct->killed || policy_decision_get(c->policy, ct->info.container_id, &d) < 0)
		return;
	ct->error_logged = ct->error_logged && d.err == ct->d.err;
	if (ct->d.err_hotplug && !d.err)	/* its CPUs are back: listed no more */
		pod_errors_forget(c->errors, ct->meta.namespace_, container_error_pod(ct),
				  container_error_name(ct));
	ct->d = d;
	if (d.err_hotplug) {
		ct->error_logged = true;	/* log_hotplug said it */
		controller_note_pod_error(c, ct, policy_error_name(d.err), d.reason, "kept");
	}
}

/* Pooled first: integer containers' replacements come out of the pool. */
static void converge_hotplug(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;

	it = 0;
	while (strmap_next(c->by_path, &it, &k, &v))
		refresh_container(c, v);
	controller_resize_pools(c);
	it = 0;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!pooled(ct) && !ct->killed)
			controller_apply(c, ct);
		controller_sync_map(c, ct);
	}
}

int controller_set_topology(struct controller *c, const struct topology *topo)
{
	char off[CPULIST_MAX], on[CPULIST_MAX], online[CPULIST_MAX];
	struct policy_hotplug hp;
	int r = policy_set_online(c->policy, topo, &hp);

	if (r < 0)
		return r;
	c->topo = topo;
	controller_plan_rebuild(c);	/* the root's parent has other CPUs now */
	cpulist_format(&hp.went_offline, off, sizeof(off));
	cpulist_format(&hp.came_online, on, sizeof(on));
	cpulist_format(&topo->online, online, sizeof(online));
	log_notice("CPU hotplug: offline now %s, online again %s; online CPUs %s",
		   off[0] ? off : "-", on[0] ? on : "-", online);
	for (size_t i = 0; i < hp.n; i++)
		log_hotplug(c, &hp.changes[i]);
	c->n.hotplug_changes++;
	c->n.hotplug_replacements += hp.replaced;
	policy_hotplug_free(&hp);
	if (c->root[0])
		converge_hotplug(c);
	c->dirty = true;
	return 0;
}
