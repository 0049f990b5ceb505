// SPDX-License-Identifier: Apache-2.0
/*
 * The policy's entry points: creating it, admitting and releasing
 * containers. The book-keeping they change is policy_book.c,
 * classification policy_classify.c, placing policy_place.c, the CPUs a
 * running container may keep policy_keep.c, picking integer CPUs
 * policy_alloc.c; recovery, resize and hotplug (policy_recover.c,
 * policy_resize.c, policy_hotplug.c) build on these. Pure: no I/O, no
 * clock, no randomness; the same book-keeping and request always give
 * the same answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_internal.h"

int policy_new(const struct topology *topo, const struct policy_config *cfg,
	       struct policy **ret)
{
	struct policy *p;
	int r;

	if (!cfg->min_shared_cpus)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->at = malloc(sizeof(*p->at));
	p->by_cid = strmap_new();
	p->pods = strmap_new();
	if (!p->at || !p->by_cid || !p->pods) {
		r = -ENOMEM;
		goto fail;
	}
	r = alloc_topo_from_topology(topo, &topo->online, p->at);
	if (r < 0)
		goto fail;
	p->topo = topo;
	p->cfg = *cfg;
	*ret = p;
	return 0;
fail:
	strmap_free(p->pods);
	strmap_free(p->by_cid);
	free(p->at);
	free(p);
	return r;
}

/* Frees every value of *m and replaces it by an empty map (NULL on ENOMEM:
 * see policy_admit). */
static void clear_map(struct strmap **m)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (*m && strmap_next(*m, &it, &k, &v))
		free(v);
	strmap_free(*m);
	*m = strmap_new();
}

void policy_reset(struct policy *p)
{
	clear_map(&p->by_cid);
	clear_map(&p->pods);
	memset(p->annot_ref, 0, sizeof(p->annot_ref));
	memset(p->int_owner, 0, sizeof(p->int_owner));
	cpumask_zero(&p->annotated);
	cpumask_zero(&p->exclusive);
	cpumask_zero(&p->lsr);
	cpumask_zero(&p->pod_rooms);
	p->pools_gen++;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	policy_reset(p);
	strmap_free(p->by_cid);
	strmap_free(p->pods);
	free(p->at);
	free(p);
}

static int record(struct policy *p, const struct policy_request *req,
		  const struct klass_info *ki, const struct policy_decision *d)
{
	struct policy_entry *e = calloc(1, sizeof(*e));

	if (!e || !p->by_cid)
		goto nomem;
	snprintf(e->container_id, sizeof(e->container_id), "%s", req->container_id);
	snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", req->pod_uid ? req->pod_uid : "");
	snprintf(e->name, sizeof(e->name), "%s", req->name ? req->name : req->container_id);
	e->kind = d->kind;
	e->n_cpus = ki->n;
	e->qos = ki->qos;
	e->rule = ki->rule;
	e->exclusive_policy = d->exclusive_policy;
	e->sandbox = req->sandbox;
	e->err = d->err;
	snprintf(e->reason, sizeof(e->reason), "%s", d->reason);
	if (d->kind == CPUSETD_KIND_INTEGER || d->kind == CPUSETD_KIND_ANNOTATED) {
		e->cpus = d->cpus;
		e->mems = d->mems;
		e->baseline = d->cpus;
	}
	if (!d->err && !cpumask_empty(&d->pool_nodes)) {
		e->pool_nodes = d->pool_nodes;
		e->mems = d->mems;
	}
	e->system_pool = !d->err && d->system_pool;
	if (strmap_put(p->by_cid, e->container_id, e) < 0)
		goto nomem;
	policy_own_cpus(p, e);
	e->pod_affinity = policy_pod_affinity_hold(p, e, req->pod_cpus);
	/* A fixed set (annotated, or scheduled: integer without N) on a pod's
	 * room: the room moves (policy_place.c checked it may). */
	if (e->kind == CPUSETD_KIND_ANNOTATED || (e->kind == CPUSETD_KIND_INTEGER && !e->n_cpus))
		policy_pod_rooms_yield(p, &e->cpus);
	return 0;
nomem:
	free(e);
	return -ENOMEM;
}

int policy_admit_as(struct policy *p, const struct policy_request *req,
		    const struct klass_info *ki, const struct cpumask *keep,
		    struct policy_decision *d)
{
	int r, rr;

	if (keep) {
		d->kind = CPUSETD_KIND_INTEGER;
		d->cpus = *keep;
		r = topo_nodes_of(p->topo, keep, &d->mems);
	} else {
		r = policy_place(p, req, ki, d);
	}
	if (r < 0) {
		/* Admission error: placed on the shared pool (even if empty, so
		 * the caller leaves its cpus alone), rejected unless a sandbox. */
		d->kind = CPUSETD_KIND_SHARED;
		policy_shared_pool(p, &d->cpus);
		cpumask_zero(&d->mems);
		d->reject = p->cfg.on_error == POLICY_ON_ERROR_REJECT && !req->sandbox;
	}
	rr = record(p, req, ki, d);
	return rr < 0 ? rr : r;
}

/* Classifies, or records the classification error as an admission error. */
static int admit_new(struct policy *p, const struct policy_request *req,
		     const struct cpumask *current, struct policy_decision *d)
{
	struct klass_info ki;
	const struct cpumask *keep;
	struct cpumask buf;
	int r, rr;

	*d = (struct policy_decision){ 0 };
	r = policy_classify(p, req, &ki, d);
	if (r < 0) {
		ki = (struct klass_info){ .k = K_SHARED,
					  .rule = d->err == POLICY_ERR_INVALID_BUNDLE ?
						  POLICY_RULE_INVALID_BUNDLE :
						  POLICY_RULE_INVALID_ANNOTATION };
		d->kind = CPUSETD_KIND_SHARED;
		policy_shared_pool(p, &d->cpus);
		d->reject = p->cfg.on_error == POLICY_ON_ERROR_REJECT && !req->sandbox;
		rr = record(p, req, &ki, d);
		return rr < 0 ? rr : r;
	}
	keep = ki.k == K_INTEGER ? policy_keepable(p, &ki, req, current, &buf) : NULL;
	return policy_admit_as(p, req, &ki, keep, d);
}

int policy_admit(struct policy *p, const struct policy_request *req,
		 struct policy_decision *ret)
{
	const struct policy_entry *e = policy_lookup(p, req->container_id);
	uint64_t gen = p->pools_gen;
	int r;

	if (e) {
		policy_decision_of(p, e, ret);
		return 0;
	}
	r = admit_new(p, req, NULL, ret);
	ret->pools_changed = p->pools_gen != gen;
	return r;
}

int policy_adopt(struct policy *p, const struct policy_request *req,
		 const struct cpumask *current, struct policy_decision *ret)
{
	if (policy_lookup(p, req->container_id))
		return policy_admit(p, req, ret);
	return admit_new(p, req, current, ret);
}

bool policy_release(struct policy *p, const char *container_id)
{
	struct policy_entry *e = p->by_cid ? strmap_del(p->by_cid, container_id) : NULL;
	bool changed;

	if (!e)
		return false;
	changed = policy_disown_cpus(p, e);
	if (e->pod_affinity)
		policy_pod_affinity_drop(p, e->pod_uid, e->n_cpus);
	free(e);
	return changed;
}

void policy_set_on_error(struct policy *p, enum policy_on_error on_error)
{
	p->cfg.on_error = on_error;
}
