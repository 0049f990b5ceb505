// SPDX-License-Identifier: Apache-2.0
/*
 * Picking an integer container's exclusive CPUs (policy_alloc.h): the NUMA
 * alignment first, then Koordinator's accumulator or kubelet's static
 * policy inside the chosen mask.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "policy_alloc.h"

/* kubelet's option names (policy_options.go), each a boolean. */
static bool *kubelet_option(struct policy_kubelet_options *o, const char *name, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "full-pcpus-only", offsetof(struct policy_kubelet_options, full_pcpus_only) },
		{ "distribute-cpus-across-numa",
		  offsetof(struct policy_kubelet_options, distribute_across_numa) },
		{ "distribute-cpus-across-cores",
		  offsetof(struct policy_kubelet_options, distribute_across_cores) },
		{ "align-by-socket", offsetof(struct policy_kubelet_options, align_by_socket) },
		{ "prefer-align-cpus-by-uncorecache",
		  offsetof(struct policy_kubelet_options, prefer_align_by_uncore) },
	};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strlen(opts[i].name) == len && !strncmp(name, opts[i].name, len))
			return (bool *)((char *)o + opts[i].off);
	return NULL;
}

int policy_kubelet_options_parse(const char *s, struct policy_kubelet_options *ret,
				 char *reason, size_t len)
{
	struct policy_kubelet_options o = { 0 };
	const char *p = s;

	while (*p) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=,");
		bool *opt = kubelet_option(&o, p, k);
		const char *v = p + k + 1;
		size_t vlen = n > k ? n - k - 1 : 0;

		if (!opt || n == k) {
			snprintf(reason, len, "'%.*s' is not NAME=true|false with a known NAME",
				 (int)n, p);
			return -EINVAL;
		}
		if (vlen == 4 && !strncmp(v, "true", 4)) {
			*opt = true;
		} else if (!(vlen == 5 && !strncmp(v, "false", 5))) {
			snprintf(reason, len, "%.*s: expected true or false", (int)k, p);
			return -EINVAL;
		}
		p += n + (p[n] == ',');
	}
	*ret = o;
	return 0;
}

int policy_alloc_check_spec(const struct pod_policy_ann *a, char *reason, size_t len)
{
	enum koord_bind_policy b;
	enum koord_excl_policy e;

	/* FullPCPUsOnly is a node policy: a pod cannot ask for it. */
	if (a->bind_policy[0] && (koord_bind_policy_parse(a->bind_policy, &b) < 0 ||
				  b == KOORD_BIND_FULL_PCPUS_ONLY)) {
		snprintf(reason, len, "%s preferredCPUBindPolicy \"%s\" is not FullPCPUs or "
			 "SpreadByPCPUs", META_RESOURCE_SPEC_ANNOTATION, a->bind_policy);
		return -EINVAL;
	}
	if (a->exclusive_policy[0] && koord_excl_policy_parse(a->exclusive_policy, &e) < 0) {
		snprintf(reason, len, "%s preferredCPUExclusivePolicy \"%s\" is not None, "
			 "PCPULevel or NUMANodeLevel", META_RESOURCE_SPEC_ANNOTATION,
			 a->exclusive_policy);
		return -EINVAL;
	}
	return 0;
}

/* The pod's preferences over the node's defaults; a node-level
 * FullPCPUsOnly cannot be relaxed by a pod. */
static void koord_request_of(const struct policy_alloc_config *c,
			     const struct policy_alloc_req *req, struct koord_request *ret)
{
	const struct pod_policy_ann *a = req->pod;

	*ret = (struct koord_request){ .n = req->n, .bind = c->bind, .excl = c->exclusive,
				       .numa = c->numa, .max_ref_count = 1 };
	if (a && a->bind_policy[0] && c->bind != KOORD_BIND_FULL_PCPUS_ONLY)
		koord_bind_policy_parse(a->bind_policy, &ret->bind);
	if (a && a->exclusive_policy[0])
		koord_excl_policy_parse(a->exclusive_policy, &ret->excl);
}

static int choose_koord(const struct alloc_topo *t, const struct policy_alloc_config *c,
			const struct policy_alloc_req *req, const struct cpumask *avail,
			struct policy_alloc_result *ret, char *reason, size_t len)
{
	struct koord_request kr;
	int r;

	koord_request_of(c, req, &kr);
	r = koord_alloc(t, avail, req->usage, &kr, &ret->cpus, reason, len);
	if (r == -EINVAL && kr.bind == KOORD_BIND_FULL_PCPUS_ONLY)
		return -EDOM;	/* not whole cores */
	if (r < 0)
		return r == -EINVAL ? -ENOSPC : r;
	ret->exclusive_policy = kr.excl;
	return 0;
}

/* kubelet's static policy with its options; the hint nodes go in as the
 * Topology Manager's affinity (kubelet takes the hinted CPUs first). */
static int choose_kube(const struct alloc_topo *t, const struct policy_alloc_config *c,
		       const struct policy_alloc_req *req, const struct cpumask *nodes,
		       struct policy_alloc_result *ret, char *reason, size_t len)
{
	static const struct cpumask none;
	const struct policy_kubelet_options *o = &c->kubelet;
	struct kube_static_req kr = {
		.available = &req->free,
		.reserved = req->reserved ? req->reserved : &none,
		.numa_affinity = cpumask_empty(nodes) ? NULL : nodes,
		.n = req->n,
		.opts = {
			.sorting = o->distribute_across_cores ? KUBE_SORT_SPREAD : KUBE_SORT_PACKED,
			.prefer_align_uncore = o->prefer_align_by_uncore,
			.distribute_across_numa = o->distribute_across_numa,
			.full_pcpus_only = o->full_pcpus_only,
			.align_by_socket = o->align_by_socket,
		},
	};
	int r = kube_static_allocate(t, &kr, &ret->cpus, reason, len);

	if (r == -EDOM || r == 0)
		return r;
	return r > 0 ? -EINVAL : -ENOSPC;	/* n > 0: never "shared" */
}

/*
 * The NUMA mask to allocate in (kernel node ids; empty = no preference):
 * the pod's mask in pod scope once a container of it is placed, else the
 * Topology Manager's best hint for the CPUs wanted. -EXDEV when the
 * policy refuses.
 */
static int align_nodes(const struct alloc_topo *t, const struct policy_alloc_config *c,
		       const struct policy_alloc_req *req, struct cpumask *ret,
		       char *reason, size_t len)
{
	struct numa_hints hints;
	struct numa_hint best;
	int r;

	cpumask_zero(ret);
	if (c->align == NUMA_POLICY_NONE)
		return 0;
	if (req->has_affinity) {
		*ret = req->affinity;
		return 0;
	}
	r = numa_cpu_hints(t, &req->free, req->allocated,
			   req->pod_n > req->n ? req->pod_n : req->n, &hints);
	if (r == 0)
		r = numa_admit(t, c->align, NULL, &hints, 1, &best, reason, len);
	if (r < 0)
		return r == -EXDEV ? r : -ENOSPC;
	*ret = best.nodes;
	return 0;
}

/* The free CPUs inside nodes, or all free ones when nodes is empty or
 * (best-effort, none) too small. -EXDEV when a strict policy cannot fit. */
static int aligned_free(const struct alloc_topo *t, const struct policy_alloc_config *c,
			const struct policy_alloc_req *req, const struct cpumask *nodes,
			struct cpumask *ret, char *reason, size_t len)
{
	struct cpumask in;
	char buf[64];

	*ret = req->free;
	if (cpumask_empty(nodes))
		return 0;
	alloc_topo_cpus_of_nodes(t, nodes, &in);
	cpumask_and(&in, &in, &req->free);
	if (cpumask_weight(&in) >= req->n) {
		*ret = in;
		return 0;
	}
	if (c->align == NUMA_POLICY_NONE || c->align == NUMA_POLICY_BEST_EFFORT)
		return 0;
	if (cpulist_format(nodes, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	snprintf(reason, len, "topology affinity error: the pod's NUMA nodes %s have %u free "
		 "CPUs, %u wanted, under policy %s", buf, cpumask_weight(&in), req->n,
		 numa_policy_name(c->align));
	return -EXDEV;
}

/* Whole physical cores only (FullPCPUsOnly, full-pcpus-only): a resize
 * must keep n a multiple of the CPUs per core, the SMT width
 * (alloc_topo.h). */
static bool whole_cores_only(const struct policy_alloc_config *c)
{
	return c->kubelet_compat ? c->kubelet.full_pcpus_only : c->bind == KOORD_BIND_FULL_PCPUS_ONLY;
}

/* kubelet's resize algorithms, for either engine: the bind policy
 * SpreadByPCPUs (or distribute-cpus-across-cores) spreads over cores. */
static int choose_resize(const struct alloc_topo *t, const struct policy_alloc_config *c,
			 const struct policy_alloc_req *req, const struct cpumask *avail,
			 struct policy_alloc_result *ret, char *reason, size_t len)
{
	static const struct cpumask none;
	const struct cpumask *base = req->baseline ? req->baseline : &none;
	struct koord_request kr;
	struct kube_alloc_opts o = { .sorting = KUBE_SORT_PACKED };
	struct cpumask narrow, whole;
	int r;

	if (req->n < cpumask_weight(base)) {
		snprintf(reason, len, "cannot shrink to %u CPUs: below the %u CPUs it was "
			 "admitted with", req->n, cpumask_weight(base));
		return -ERANGE;
	}
	if (whole_cores_only(c)) {
		if (t->cpus_per_core > 1 && req->n % t->cpus_per_core) {
			snprintf(reason, len, "SMT Alignment Error: requested %u cpus not multiple "
				 "cpus per core = %u", req->n, t->cpus_per_core);
			return -EDOM;
		}
		/* grow by full-width cores only (kube_static_allocate says
		 * why); what it holds stays whatever it is */
		cpumask_andnot(&narrow, &t->narrow, req->allocated);
		cpumask_andnot(&whole, avail, &narrow);
		avail = &whole;
	}
	koord_request_of(c, req, &kr);
	if (c->kubelet_compat ? c->kubelet.distribute_across_cores : kr.bind == KOORD_BIND_SPREAD_BY_PCPUS)
		o.sorting = KUBE_SORT_SPREAD;
	o.prefer_align_uncore = c->kubelet_compat && c->kubelet.prefer_align_by_uncore;
	o.align_by_socket = c->kubelet_compat && c->kubelet.align_by_socket;
	if (c->kubelet_compat && c->kubelet.distribute_across_numa) {
		o.cpu_group_size = c->kubelet.full_pcpus_only ? t->cpus_per_core : 1;
		r = kube_take_distributed_resize(t, avail, req->n, req->allocated, base, &o,
						 &ret->cpus, reason, len);
	} else {
		r = kube_take_packed_resize(t, avail, req->n, req->allocated, base, &o,
					    &ret->cpus, reason, len);
	}
	if (r < 0)
		return r == -EINVAL ? -ERANGE : -ENOSPC;
	ret->exclusive_policy = kr.excl;
	return 0;
}

int policy_alloc_choose(const struct alloc_topo *t, const struct policy_alloc_config *c,
			const struct policy_alloc_req *req, struct policy_alloc_result *ret,
			char *reason, size_t len)
{
	struct policy_alloc_result res = { 0 };
	unsigned have = cpumask_weight(&req->free);
	struct cpumask nodes, avail;
	int r;

	if (have < req->n) {
		char buf[CPULIST_MAX];

		if (cpulist_format(&req->free, buf, sizeof(buf)) < 0)
			buf[0] = '\0';
		snprintf(reason, len, "needs %u exclusive CPUs, only %u free (%.128s)", req->n,
			 have, buf);
		return -ENOSPC;
	}
	r = align_nodes(t, c, req, &nodes, reason, len);
	if (r == 0)
		r = aligned_free(t, c, req, &nodes, &avail, reason, len);
	if (r == 0 && req->allocated)
		r = choose_resize(t, c, req, &avail, &res, reason, len);
	else if (r == 0 && c->kubelet_compat)
		r = choose_kube(t, c, req, &nodes, &res, reason, len);
	else if (r == 0)
		r = choose_koord(t, c, req, &avail, &res, reason, len);
	if (r < 0)
		return r;
	/* The pod's mask (pod scope): the hint, or where its CPUs landed. */
	if (cpumask_empty(&nodes))
		alloc_topo_nodes_of(t, &res.cpus, &nodes);
	res.nodes = nodes;
	*ret = res;
	return 0;
}
