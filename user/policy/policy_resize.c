// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resize of a running container (policy_resize in policy.h).
 *
 * kubelet changes a running container's CPU limit without a new cgroup
 * (InPlacePodVerticalScaling): the container keeps running, so a resize
 * that cannot be honoured leaves it exactly where it is; only a change
 * that fits is applied. Exclusive CPUs follow kubelet's resize rules:
 * growing keeps what it holds, shrinking keeps the baseline (the CPUs it
 * was admitted with), and the rest is chosen around them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "policy_internal.h"

/* Which kind a classification lands on, when it does not depend on
 * the free CPUs. */
static enum cpusetd_kind pooled_kind(const struct klass_info *ki)
{
	return ki->k == K_BE ? CPUSETD_KIND_BE : CPUSETD_KIND_SHARED;
}

/* Integer N -> M: the new set around the old one, then the book-keeping. */
static int resize_integer(struct policy *p, struct policy_entry *e,
			  const struct policy_request *req, const struct klass_info *ki,
			  struct policy_decision *d)
{
	struct policy_alloc_req ar = { .n = ki->n, .pod = req->pod,
				       .reserved = &p->cfg.reserved_cpus,
				       .allocated = &e->cpus, .baseline = &e->baseline };
	struct policy_alloc_result res;
	struct cpumask added, mems;
	char why[224];
	unsigned old_n;
	int r;

	policy_free_for(p, ki, &ar.free);
	cpumask_or(&ar.free, &ar.free, &e->cpus);
	policy_pod_affinity(p, req, &ar);
	r = policy_alloc_choose(p->at, &p->cfg.alloc, &ar, &res, why, sizeof(why));
	if (r < 0)
		return policy_fail(d, policy_alloc_error(r), "resize %u -> %u CPUs: %s",
				   e->n_cpus, ki->n, why);
	cpumask_andnot(&added, &res.cpus, &e->cpus);
	r = policy_check_pool(p, &added, d);
	if (r < 0)
		return r;
	if (topo_nodes_of(p->topo, &res.cpus, &mems) < 0)
		return policy_fail(d, POLICY_ERR_NUMA_UNRESOLVED,
				   "resize: no NUMA node known for some of the chosen CPUs");
	old_n = e->n_cpus;
	policy_disown_cpus(p, e);
	e->cpus = res.cpus;
	e->mems = mems;
	e->n_cpus = ki->n;
	policy_own_cpus(p, e);
	if (e->pod_affinity)	/* after owning: the room is chosen around it */
		policy_pod_affinity_resized(p, e->pod_uid, old_n, ki->n);
	policy_decision_of(p, e, d);
	return 1;
}

/* A new class: placed afresh first, swapped in only when that worked. */
static int reclassify(struct policy *p, struct policy_entry *e,
		      const struct policy_request *req, const struct klass_info *ki,
		      struct policy_decision *d)
{
	struct cpumask keep;
	int r;

	if (ki->k == K_INTEGER) {
		/* Pooled: it holds no CPUs, so placing does not see itself. */
		r = policy_place(p, req, ki, d);
		if (r < 0)
			return r;
		keep = d->cpus;
		policy_release(p, e->container_id);
		r = policy_admit_as(p, req, ki, &keep, d);
	} else {
		policy_release(p, e->container_id);
		r = policy_admit_as(p, req, ki, NULL, d);
	}
	return r < 0 ? r : 1;
}

int policy_resize(struct policy *p, const struct policy_request *req,
		  struct policy_decision *ret)
{
	struct policy_entry *e = p->by_cid ? strmap_get(p->by_cid, req->container_id) : NULL;
	struct policy_decision d = { 0 };
	struct klass_info ki;
	uint64_t gen = p->pools_gen;
	int r;

	if (!e)
		return -ENOENT;
	policy_decision_of(p, e, ret);
	ret->pools_changed = false;
	if (e->sandbox || e->err || e->kind == CPUSETD_KIND_ANNOTATED ||
	    policy_classify(p, req, &ki, &d) < 0 || ki.k == K_ANNOTATED || ki.k == K_SCHEDULED)
		return 0;
	if (e->kind == CPUSETD_KIND_INTEGER) {
		if (!e->n_cpus || (ki.k == K_INTEGER && ki.n == e->n_cpus))
			return 0;	/* scheduled cpuset, or the same N */
	} else if (ki.k != K_INTEGER && pooled_kind(&ki) == e->kind) {
		return 0;
	}
	r = e->kind == CPUSETD_KIND_INTEGER && ki.k == K_INTEGER ?
		resize_integer(p, e, req, &ki, &d) : reclassify(p, e, req, &ki, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Refused: the recorded placement stands; say why. */
		ret->err = d.err;
		snprintf(ret->reason, sizeof(ret->reason), "%s", d.reason);
	} else {
		*ret = d;
	}
	ret->reject = false;
	ret->pools_changed = p->pools_gen != gen;
	return r;
}
