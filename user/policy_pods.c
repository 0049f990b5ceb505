/*
 * Topology Manager pod scope (KEP-2570, seeds/001 "scope"): the first
 * exclusive container of a pod aligns the whole pod's CPUs to a NUMA mask,
 * and its later containers take their CPUs inside that mask. The daemon
 * sees containers one at a time, so the pod's total comes from the pod
 * cgroup's CPU limit (policy_request.pod_cpus) and the mask is kept here,
 * by pod UID, while any of its exclusive containers lives.
 */
#include <stdlib.h>
#include <string.h>
#include "policy_internal.h"

struct pod_affinity {
	struct cpumask nodes;		/* kernel NUMA node ids */
	unsigned refs;			/* exclusive containers holding it */
};

static bool in_scope(const struct policy *p, const char *pod_uid)
{
	return p->cfg.alloc.pod_scope && pod_uid && pod_uid[0] && p->pods;
}

void policy_pod_affinity(const struct policy *p, const struct policy_request *req,
			 struct policy_alloc_req *ar)
{
	const struct pod_affinity *a;

	if (!in_scope(p, req->pod_uid))
		return;
	a = strmap_get(p->pods, req->pod_uid);
	if (a) {
		ar->has_affinity = true;
		ar->affinity = a->nodes;
		return;
	}
	ar->pod_n = req->pod_cpus > ar->n ? req->pod_cpus : ar->n;
}

/* The pod's entry, created with nodes when missing; NULL on ENOMEM. */
static struct pod_affinity *get_or_add(struct policy *p, const char *pod_uid,
				       const struct cpumask *nodes)
{
	struct pod_affinity *a = strmap_get(p->pods, pod_uid);

	if (a)
		return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->nodes = *nodes;
	if (strmap_put(p->pods, pod_uid, a) < 0) {
		free(a);
		return NULL;
	}
	return a;
}

void policy_pod_affinity_note(struct policy *p, const struct policy_request *req,
			      const struct cpumask *nodes)
{
	if (in_scope(p, req->pod_uid))
		get_or_add(p, req->pod_uid, nodes);
}

bool policy_pod_affinity_hold(struct policy *p, const struct policy_entry *e)
{
	struct pod_affinity *a;

	if (e->kind != CPUSETD_KIND_INTEGER || !in_scope(p, e->pod_uid))
		return false;
	a = get_or_add(p, e->pod_uid, &e->mems);
	if (!a)
		return false;	/* ENOMEM: the pod is aligned per container */
	a->refs++;
	return true;
}

void policy_pod_affinity_drop(struct policy *p, const char *pod_uid)
{
	struct pod_affinity *a = p->pods ? strmap_get(p->pods, pod_uid) : NULL;

	if (a && --a->refs == 0)
		free(strmap_del(p->pods, pod_uid));
}
