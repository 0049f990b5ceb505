// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager pod scope (KEP-2570; user/README.md "Sources"): the first
 * exclusive container of a pod aligns the whole pod's CPUs to a NUMA mask,
 * and its later containers take their CPUs inside that mask. The daemon
 * sees containers one at a time (kubelet admits a pod's containers
 * together), so the pod's total comes from the pod cgroup's CPU limit
 * (policy_request.pod_cpus) and, per pod UID while any of its exclusive
 * containers lives, we keep:
 *   - the mask;
 *   - the room: as many CPUs inside the mask as the pod has not placed
 *     yet, chosen by the same allocator. Other pods' exclusive containers
 *     never take them (policy_free_for leaves out every room); the pod's
 *     own containers may. Room CPUs stay in the shared pool until used.
 * Fixed sets (issue 22, M1; policy_place.c): a scheduled set never takes
 * a room; an annotated one may, when the room can be chosen again in full
 * in the pod's mask (policy_pod_rooms_block replays what
 * policy_pod_rooms_yield then does). A fixed set found running (recovery)
 * is the truth: rooms make way for it, whole or not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_internal.h"

struct pod_affinity {
	struct cpumask nodes;		/* kernel NUMA node ids */
	struct cpumask room;		/* held for the pod's later containers */
	unsigned refs;			/* exclusive containers holding it */
	unsigned pod_cpus;		/* the pod's integer CPUs; 0 unknown */
	unsigned placed;		/* CPUs of its exclusive containers */
	char name[320];			/* "namespace/pod", for messages */
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
		cpumask_or(&ar->free, &ar->free, &a->room);
		return;
	}
	ar->pod_n = req->pod_cpus > ar->n ? req->pod_cpus : ar->n;
}

/*
 * The room a would get now for what its pod has still to place: chosen
 * by the allocator inside its mask, out of the free CPUs not in rooms
 * (the other pods' rooms) nor in minus (NULL: none). Returns 0 with *ret
 * (empty when nothing is left to place), or -ENOSPC when it cannot be
 * whole, with *ret = every such CPU in the mask.
 */
static int choose_room(const struct policy *p, const struct pod_affinity *a,
		       const struct cpumask *rooms, const struct cpumask *minus,
		       struct cpumask *ret)
{
	struct klass_info ki = { .k = K_INTEGER };
	struct policy_alloc_req ar = { .has_affinity = true, .affinity = a->nodes };
	struct policy_alloc_result res;
	char why[64];

	cpumask_zero(ret);
	if (a->pod_cpus <= a->placed)
		return 0;
	ki.n = ar.n = a->pod_cpus - a->placed;
	policy_free_beside(p, &ki, rooms, &ar.free);
	if (minus)
		cpumask_andnot(&ar.free, &ar.free, minus);
	alloc_topo_cpus_of_nodes(p->at, &a->nodes, &res.cpus);
	cpumask_and(&ar.free, &ar.free, &res.cpus);
	if (policy_alloc_choose(p->at, &p->cfg.alloc, &ar, &res, why, sizeof(why)) < 0) {
		*ret = ar.free;
		return -ENOSPC;
	}
	*ret = res.cpus;
	return 0;
}

/* Chooses the room again for what the pod has still to place. Short of
 * room (another pod came first, or a wrong pod limit): it holds what is
 * left in the mask. */
static void refresh_room(struct policy *p, struct pod_affinity *a)
{
	cpumask_andnot(&p->pod_rooms, &p->pod_rooms, &a->room);
	choose_room(p, a, &p->pod_rooms, NULL, &a->room);
	cpumask_or(&p->pod_rooms, &p->pod_rooms, &a->room);
}

/* The pod's entry, created with nodes when missing; name is a container's
 * "namespace/pod/container" (its pod part is kept). NULL on ENOMEM. */
static struct pod_affinity *get_or_add(struct policy *p, const char *pod_uid,
				       const struct cpumask *nodes, const char *name)
{
	struct pod_affinity *a = strmap_get(p->pods, pod_uid);
	char *slash;

	if (a)
		return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->nodes = *nodes;
	snprintf(a->name, sizeof(a->name), "%s", name && name[0] ? name : pod_uid);
	slash = strrchr(a->name, '/');
	if (slash && slash != a->name)
		*slash = '\0';
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
		get_or_add(p, req->pod_uid, nodes, req->name);
}

bool policy_pod_affinity_hold(struct policy *p, const struct policy_entry *e, unsigned pod_cpus)
{
	struct pod_affinity *a;

	if (e->kind != CPUSETD_KIND_INTEGER || !in_scope(p, e->pod_uid))
		return false;
	a = get_or_add(p, e->pod_uid, &e->mems, e->name);
	if (!a)
		return false;	/* ENOMEM: the pod is aligned per container */
	a->refs++;
	a->placed += e->n_cpus;
	if (pod_cpus > a->pod_cpus)
		a->pod_cpus = pod_cpus;
	refresh_room(p, a);
	return true;
}

void policy_pod_affinity_resized(struct policy *p, const char *pod_uid, unsigned old_n,
				 unsigned new_n)
{
	struct pod_affinity *a = p->pods ? strmap_get(p->pods, pod_uid) : NULL;

	if (!a)
		return;
	a->placed = a->placed - old_n + new_n;
	refresh_room(p, a);
}

void policy_pod_affinity_drop(struct policy *p, const char *pod_uid, unsigned n_cpus)
{
	struct pod_affinity *a = p->pods ? strmap_get(p->pods, pod_uid) : NULL;

	if (!a)
		return;
	a->placed = a->placed > n_cpus ? a->placed - n_cpus : 0;
	if (--a->refs == 0) {
		cpumask_andnot(&p->pod_rooms, &p->pod_rooms, &a->room);
		free(strmap_del(p->pods, pod_uid));
		return;
	}
	refresh_room(p, a);
}

void policy_pod_rooms_refresh(struct policy *p)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (p->pods && strmap_next(p->pods, &it, &k, &v))
		refresh_room(p, v);
}

const char *policy_pod_room_holder(const struct policy *p, const struct cpumask *cpus,
				   int *ret_cpu)
{
	const struct pod_affinity *a;
	struct cpumask both;
	size_t it = 0;
	const char *k;
	void *v;

	while (p->pods && strmap_next(p->pods, &it, &k, &v)) {
		a = v;
		cpumask_and(&both, &a->room, cpus);
		if (!cpumask_empty(&both)) {
			*ret_cpu = cpumask_next(&both, 0);
			return a->name;
		}
	}
	return NULL;
}

/* The same walk, in the same order, as policy_pod_rooms_yield, on a copy
 * of the rooms: what yield would choose, without choosing it. */
const char *policy_pod_rooms_block(const struct policy *p, const struct cpumask *cpus,
				   int *ret_cpu)
{
	struct cpumask rooms = p->pod_rooms, room, both;
	const struct pod_affinity *a;
	size_t it = 0;
	const char *k;
	void *v;

	while (p->pods && strmap_next(p->pods, &it, &k, &v)) {
		a = v;
		cpumask_and(&both, &a->room, cpus);
		if (cpumask_empty(&both))
			continue;
		cpumask_andnot(&rooms, &rooms, &a->room);
		if (choose_room(p, a, &rooms, cpus, &room) < 0) {
			*ret_cpu = cpumask_next(&both, 0);
			return a->name;
		}
		cpumask_or(&rooms, &rooms, &room);
	}
	return NULL;
}

void policy_pod_rooms_yield(struct policy *p, const struct cpumask *cpus)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (p->pods && strmap_next(p->pods, &it, &k, &v))
		if (cpumask_intersects(&((struct pod_affinity *)v)->room, cpus))
			refresh_room(p, v);
}
