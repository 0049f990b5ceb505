// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resizes (kubelet InPlacePodVerticalScaling): a running
 * container's CPU limit changed with no cgroup event, so a timer re-reads
 * the limits; whoever gives CPUs up writes first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"

static void log_resize_refused(struct controller *c, struct container *ct,
			       const struct policy_decision *d, int64_t quota, uint64_t period)
{
	char cpus[CPULIST_MAX];

	c->n.inplace_resizes_refused++;
	if (ct->resize_refused_quota == quota)
		return;
	ct->resize_refused_quota = quota;
	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	ct_log(LOG_WARNING, ct, policy_error_name(d->err),
	       "%s (%.12s): in-place resize to %.2f CPUs refused (%s: %s); keeps cpus %s",
	       ct->name, ct->info.container_id, (double)quota / (double)period,
	       policy_error_name(d->err), d->reason, cpus);
}

/* Brings ct and the pools to a resized decision: whoever gives CPUs up
 * writes first, so no CPU is ever in two exclusive sets (enforce_plan on
 * v1; on v2 the tree's plan: the pools narrow, then exclusive sets land,
 * then the pools widen, cgfs_plan.h). */
static void apply_resize(struct controller *c, struct container *ct)
{
	if (controller_planned(c)) {
		if (ct->d.pools_changed)
			c->n.resizes++;
		controller_apply_one(c, ct);
		controller_sync_pooled_maps(c);
		controller_sync_map(c, ct);
		return;
	}
	controller_converge(c, ct, ct->d.pools_changed, 0);
}

int controller_resize_to(struct controller *c, struct container *ct, int64_t quota,
			 uint64_t period)
{
	struct policy_decision d;
	struct policy_request req;
	int64_t was_quota = ct->meta.quota_us;
	uint64_t was_period = ct->meta.period_us;
	bool was_limited = ct->meta.has_cpu_limit;
	int r;

	if (ct->meta.sandbox || ct->info.qos != POD_QOS_GUARANTEED || ct->killed ||
	    ct->d.err || ct->d.kind == CPUSETD_KIND_ANNOTATED || quota <= 0 || !period)
		return 0;
	if (was_limited && quota == was_quota && period == was_period) {
		ct->resize_refused_quota = 0;	/* a refused resize was taken back */
		return 0;
	}
	ct->meta.quota_us = quota;
	ct->meta.period_us = period;
	ct->meta.has_cpu_limit = true;
	controller_request_of(c, ct, &req);
	r = policy_resize(c->policy, &req, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Not applied, not an admission error: the placement stands.
		 * Keep the old limit so the next check tries again. */
		ct->meta.quota_us = was_quota;
		ct->meta.period_us = was_period;
		ct->meta.has_cpu_limit = was_limited;
		log_resize_refused(c, ct, &d, quota, period);
		return 0;
	}
	ct->resize_refused_quota = 0;
	if (r == 0)
		return 0;	/* a limit change within the same class and N */
	ct->d = d;
	apply_resize(c, ct);
	log_info("%s (%.12s): in-place resize to %.2f CPUs", ct->name, ct->info.container_id,
		 (double)quota / (double)period);
	container_log_decision(ct);
	c->n.inplace_resizes++;
	c->dirty = true;
	return 1;
}

/* One container of the timer's: 1 when its placement changed, 0 when
 * not, -ENOMEM. */
static int check_resize(struct controller *c, struct container *ct)
{
	int64_t quota;
	uint64_t period;

	if (!container_live(ct) || ct->meta.sandbox || ct->info.qos != POD_QOS_GUARANTEED ||
	    ct->killed || ct->d.err || ct->d.kind == CPUSETD_KIND_ANNOTATED ||
	    cgfs_read_cpu_quota(c->cg, ct->path, &quota, &period) < 0)
		return 0;
	return controller_resize_to(c, ct, quota, period);
}

int controller_check_resizes(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;
	int n = 0, r;

	if (!c->root[0])
		return 0;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		r = check_resize(c, v);
		if (r < 0)
			return r;
		controller_quota_poll(c, v, r > 0);	/* a runtime's write over our "no limit" */
		n += r;
	}
	return n;
}
