// SPDX-License-Identifier: Apache-2.0
/*
 * Placing a classified container: which CPUs, which memory nodes.
 * Exclusive CPUs come out of online − annotated − exclusive −
 * reserved_cpus, and out of the isolated CPUs only for containers that
 * opt in (CRI-RM's isolated pool); how they are picked inside
 * that set is policy_alloc.c. Fixed sets (annotated, scheduled) are what
 * a pod names: honoured only from the namespaces the config allows, and
 * never on reserved_cpus, exclusive CPUs or a room another pod needs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "policy_internal.h"

/* --- fixed sets: annotated (PRD §3.3) and scheduled --- */

#define SCHEDULED_WHAT	META_RESOURCE_STATUS_ANNOTATION " cpuset"

/* Who may ask for a fixed set (issue 22, H2): the pod's namespace against
 * the config's list (key names it in the message). */
static int check_namespace(const struct policy_request *req, const char *annotation,
			   const char *list, const char *key, struct policy_decision *d)
{
	const char *ns = req->namespace_ ? req->namespace_ : "";

	if (policy_namespace_allowed(list, ns))
		return 0;
	return policy_fail(d, POLICY_ERR_ANNOTATION_NOT_ALLOWED,
			   "%s is not allowed in namespace \"%.64s\" (%s)", annotation, ns, key);
}

/* A set held by others: reserved_cpus (never given to a pod), exclusive
 * owners, and pod-scope rooms (issue 22, M1). A scheduled set never takes
 * a room; an annotated one only when the room can move. A set found
 * running is the truth: rooms make way for it (policy_pod_rooms_yield). */
static int check_held(const struct policy *p, const char *what, const struct cpumask *cpus,
		      bool scheduled, bool running, struct policy_decision *d)
{
	char buf[CPULIST_MAX];
	struct cpumask bad;
	const char *pod;
	int id;

	cpumask_and(&bad, cpus, &p->cfg.reserved_cpus);
	if (!cpumask_empty(&bad)) {
		policy_fmt_mask(&bad, buf, sizeof(buf));
		return policy_fail(d, POLICY_ERR_CPU_RESERVED,
				   "%s CPUs %.128s are reserved for the system (reserved_cpus)",
				   what, buf);
	}
	cpumask_and(&bad, cpus, &p->cfg.system_qos_cpus);
	if (!cpumask_empty(&bad)) {
		policy_fmt_mask(&bad, buf, sizeof(buf));
		return policy_fail(d, POLICY_ERR_CPU_RESERVED,
				   "%s CPUs %.128s are SYSTEM pods' (system_qos_cpus)", what, buf);
	}
	cpumask_and(&bad, cpus, &p->exclusive);
	if ((id = cpumask_next(&bad, 0)) >= 0)
		return policy_fail(d, POLICY_ERR_CPU_EXCLUSIVE,
				   "%s CPU %d is exclusively owned by %.200s", what, id,
				   p->int_owner[id]->name);
	if (running)
		return 0;
	pod = scheduled ? policy_pod_room_holder(p, cpus, &id) : policy_pod_rooms_block(p, cpus, &id);
	if (pod)
		return policy_fail(d, POLICY_ERR_CPU_EXCLUSIVE,
				   "%s CPU %d is held for the containers pod %.160s has still to "
				   "place (topology_manager_scope=pod)%s", what, id, pod,
				   scheduled ? "" : ", which would not fit elsewhere");
	return 0;
}

/* A set a pod annotation names (what): a non-empty cpulist of online CPUs
 * whose NUMA nodes are known, none held by others (check_held). */
static int fixed_set(const struct policy *p, const char *what, const char *text, bool scheduled,
		     bool running, struct policy_decision *d, struct cpumask *ret)
{
	struct cpumask cpus, bad;
	char buf[CPULIST_MAX];
	int r;

	r = cpulist_parse(text, &cpus);
	if (r < 0 || cpumask_empty(&cpus))
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION,
				   "%s \"%.64s\" is not a non-empty cpulist (%s)", what, text,
				   r < 0 ? strerror(-r) : "empty");
	cpumask_andnot(&bad, &cpus, &p->topo->online);
	/* Running with some CPUs offline: hotplug (policy_hotplug.c marks it),
	 * unless none is left to run on or the kernel does not know them. */
	if (running && !cpumask_equal(&bad, &cpus) && cpumask_subset(&bad, &p->topo->present))
		cpumask_zero(&bad);
	if (!cpumask_empty(&bad)) {
		policy_fmt_mask(&bad, buf, sizeof(buf));
		return policy_fail(d, POLICY_ERR_CPU_OFFLINE, "%s CPUs %.128s are not online",
				   what, buf);
	}
	if (topo_nodes_of(p->topo, &cpus, &d->mems) < 0)
		return policy_fail(d, POLICY_ERR_NUMA_UNRESOLVED,
				   "%s: no NUMA node known for some of its CPUs", what);
	r = check_held(p, what, &cpus, scheduled, running, d);
	if (r < 0)
		return r;
	*ret = cpus;
	return 0;
}

/* Exactly the listed CPUs; other annotated pods may list them too. */
static int place_annotated(const struct policy *p, const struct policy_request *req,
			   struct policy_decision *d)
{
	struct cpumask cpus;
	int r = check_namespace(req, META_CORES_IDS_ANNOTATION, p->cfg.cores_ids_namespaces,
				"cores_ids_namespaces", d);

	if (r == 0)
		r = fixed_set(p, META_CORES_IDS_ANNOTATION, req->cores_ids, false, req->running, d,
			      &cpus);
	if (r == 0)
		r = policy_check_pool(p, &cpus, d);
	if (r < 0)
		return r;
	d->kind = CPUSETD_KIND_ANNOTATED;
	d->cpus = cpus;
	return 0;
}

/* Koordinator's resource-status cpuset, verbatim and exclusive: also off
 * the CPUs annotated pods pin. */
static int place_scheduled(const struct policy *p, const struct policy_request *req,
			   struct policy_decision *d)
{
	struct cpumask cpus, bad;
	int r, id;

	r = check_namespace(req, META_RESOURCE_STATUS_ANNOTATION,
			    p->cfg.resource_status_namespaces, "resource_status_namespaces", d);
	if (r == 0)
		r = fixed_set(p, SCHEDULED_WHAT, req->pod->status_cpuset, true, req->running, d,
			      &cpus);
	if (r < 0)
		return r;
	cpumask_and(&bad, &cpus, &p->annotated);
	if ((id = cpumask_next(&bad, 0)) >= 0)
		return policy_fail(d, POLICY_ERR_CPU_EXCLUSIVE,
				   "%s CPU %d is pinned by a weka.io/cores-ids pod", SCHEDULED_WHAT,
				   id);
	r = policy_check_pool(p, &cpus, d);
	if (r < 0)
		return r;
	d->kind = CPUSETD_KIND_INTEGER;
	d->cpus = cpus;
	return 0;
}

/* --- integer --- */

/* What the accumulator must know of the exclusive CPUs already held. */
static void exclusive_usage(const struct policy *p, struct koord_cpu_usage *usage)
{
	int id;

	cpumask_for_each(id, &p->exclusive)
		usage[id] = (struct koord_cpu_usage){ .refs = 1,
						      .excl = p->int_owner[id]->exclusive_policy };
}

static int place_integer(struct policy *p, const struct policy_request *req,
			 const struct klass_info *ki, struct policy_decision *d)
{
	struct policy_alloc_req ar = { .n = ki->n, .pod = req->pod, .usage = p->usage,
				       .reserved = &p->cfg.reserved_cpus };
	struct policy_alloc_result res;
	char why[256];
	int r;

	policy_free_for(p, ki, &ar.free);
	memset(p->usage, 0, sizeof(p->usage));
	exclusive_usage(p, p->usage);
	policy_pod_affinity(p, req, &ar);
	r = policy_alloc_choose(p->at, &p->cfg.alloc, &ar, &res, why, sizeof(why));
	if (r < 0)
		return policy_fail(d, policy_alloc_error(r), "%s", why);
	r = policy_check_pool(p, &res.cpus, d);
	/* It would empty a pool part in use: choose again without the
	 * parts' last cores (another NUMA node), before refusing. */
	if (r < 0 && policy_hold_parts(p, &ar.free) &&
	    policy_alloc_choose(p->at, &p->cfg.alloc, &ar, &res, why, sizeof(why)) == 0)
		r = policy_check_pool(p, &res.cpus, d);
	if (r < 0)
		return r;
	if (topo_nodes_of(p->topo, &res.cpus, &d->mems) < 0)
		return policy_fail(d, POLICY_ERR_NUMA_UNRESOLVED,
				   "no NUMA node known for some of the chosen CPUs");
	d->kind = CPUSETD_KIND_INTEGER;
	d->cpus = res.cpus;
	d->exclusive_policy = res.exclusive_policy;
	policy_pod_affinity_note(p, req, &res.nodes);
	return 0;
}

/* --- pools --- */

#define NUMA_WHAT	META_RESOURCE_STATUS_ANNOTATION " numaNodeResources"

/*
 * The NUMA nodes a pooled container is bound to: Koordinator's
 * resource-status numaNodeResources (CPUBindPolicyConstrainedBurst: the
 * scheduler picked the nodes, the node agent binds the pod to those
 * nodes' part of its pool; the Koordinator proposal, koordlet's
 * runtimehooks/hooks/cpuset/rule.go). BE pods only with be_numa_aware.
 * Returns 0 with *nodes (empty: the whole pool), or an admission error
 * for a namespace the config does not allow or a node this machine
 * does not have.
 */
static int pool_nodes(const struct policy *p, const struct policy_request *req,
		      enum cpusetd_kind kind, struct cpumask *nodes, struct policy_decision *d)
{
	const struct pod_policy_ann *a = req->pod;
	struct cpumask known, bad;
	char buf[64];
	int r;

	cpumask_zero(nodes);
	if (!a || !a->has_status_numa || (kind == CPUSETD_KIND_BE && !p->cfg.be_numa_aware))
		return 0;
	r = check_namespace(req, META_RESOURCE_STATUS_ANNOTATION,
			    p->cfg.resource_status_namespaces, "resource_status_namespaces", d);
	if (r < 0)
		return r;
	cpumask_or(&known, &p->topo->nodes, &p->topo->memory_nodes);
	cpumask_andnot(&bad, &a->status_numa, &known);
	if (!cpumask_empty(&bad)) {
		policy_fmt_mask(&bad, buf, sizeof(buf));
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION,
				   "%s names NUMA node(s) %s, which this machine does not have",
				   NUMA_WHAT, buf);
	}
	*nodes = a->status_numa;
	return 0;
}

/* A Koordinator SYSTEM pod (its sandbox too: koordlet sets both by one
 * rule) while system_qos_cpus is set. */
static bool system_pod(const struct policy *p, const struct policy_request *req,
		       const struct klass_info *ki)
{
	if (cpumask_empty(&p->cfg.system_qos_cpus))
		return false;
	if (req->sandbox)
		return req->pod && strcmp(req->pod->qos_class, "SYSTEM") == 0;
	return ki->qos == POLICY_QOS_SYSTEM;
}

static int place_pool(const struct policy *p, const struct policy_request *req,
		      const struct klass_info *ki, enum cpusetd_kind kind,
		      struct policy_decision *d)
{
	const char *pool = kind == CPUSETD_KIND_BE ? "BE" : "shared";
	char buf[64];
	int r;

	d->kind = kind;
	cpumask_zero(&d->mems);
	r = pool_nodes(p, req, kind, &d->pool_nodes, d);
	if (r < 0) {
		cpumask_zero(&d->pool_nodes);
		return r;
	}
	/* koordlet's order: a NUMA part first, then the SYSTEM set. */
	d->system_pool = cpumask_empty(&d->pool_nodes) && system_pod(p, req, ki);
	policy_pool_for(p, d, &d->cpus);
	if (d->system_pool) {
		if (cpumask_empty(&d->cpus)) {
			d->system_pool = false;
			return policy_fail(d, POLICY_ERR_SHARED_POOL_EMPTY,
					   "no CPU of system_qos_cpus is online");
		}
		return 0;
	}
	if (cpumask_empty(&d->pool_nodes)) {
		if (cpumask_empty(&d->cpus))
			return policy_fail(d, POLICY_ERR_SHARED_POOL_EMPTY, "the %s pool is empty",
					   pool);
		return 0;
	}
	/* Never widened behind the scheduler's back: no CPU of the pool
	 * left on its nodes is an error, not the whole pool. */
	if (cpumask_empty(&d->cpus)) {
		policy_fmt_mask(&d->pool_nodes, buf, sizeof(buf));
		cpumask_zero(&d->pool_nodes);
		return policy_fail(d, POLICY_ERR_SHARED_POOL_EMPTY,
				   "no CPU of the %s pool is left on NUMA node(s) %s (%s)", pool,
				   buf, NUMA_WHAT);
	}
	d->mems = d->pool_nodes;	/* memory on the nodes it runs on */
	return 0;
}

int policy_place(struct policy *p, const struct policy_request *req,
		 const struct klass_info *ki, struct policy_decision *d)
{
	switch (ki->k) {
	case K_ANNOTATED:
		return place_annotated(p, req, d);
	case K_SCHEDULED:
		return place_scheduled(p, req, d);
	case K_INTEGER:
		return place_integer(p, req, ki, d);
	case K_BE:
		return place_pool(p, req, ki, CPUSETD_KIND_BE, d);
	default:
		return place_pool(p, req, ki, CPUSETD_KIND_SHARED, d);
	}
}
