// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager admission (numa_align.h): whether a policy admits the
 * merged hint, and the refusal said in one line when not; pod and
 * container scope; the policies' and scopes' names. The hints are made
 * in numa_hints.c and merged in numa_merge.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "numa_align.h"
#include "numa_dense.h"

bool numa_policy_admits(enum numa_policy policy, const struct numa_hint *best)
{
	if (policy == NUMA_POLICY_RESTRICTED || policy == NUMA_POLICY_SINGLE_NUMA_NODE)
		return best && best->preferred;
	return true;
}

/* "6 CPUs, 1 nvidia.com/gpu" from the providers' labels. */
static void describe_request(const struct numa_hints *pv, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		if (!pv[i].what[0])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%.*s", off ? ", " : "",
					(int)sizeof(pv[i].what), pv[i].what);
	}
	if (!buf[0])
		snprintf(buf, len, "the request");
}

static void describe_refusal(const struct numa_hints *pv, size_t n, enum numa_policy policy,
			     const struct numa_hint *best, char *why, size_t why_len)
{
	char what[160], nodes[400] = "";
	unsigned w = cpumask_weight(&best->nodes);

	if (!why || !why_len)
		return;
	describe_request(pv, n, what, sizeof(what));
	if (w && cpulist_format(&best->nodes, nodes, sizeof(nodes)) < 0)
		snprintf(nodes, sizeof(nodes), "%u of them", w);
	snprintf(why, why_len,
		 "topology affinity error: no preferred NUMA alignment for %s under policy %s (best: %s%s)",
		 what, numa_policy_name(policy), !w ? "none" : w == 1 ? "node " : "nodes ", nodes);
}

int numa_admit(const struct alloc_topo *t, enum numa_policy policy,
	       const struct numa_opts *opts, const struct numa_hints *providers,
	       size_t n, struct numa_hint *ret, char *why, size_t why_len)
{
	struct numa_hint best;
	int r = numa_merge(t, policy, opts, providers, n, &best);

	if (r < 0)
		return r;
	if (!numa_policy_admits(policy, &best)) {
		describe_refusal(providers, n, policy, &best, why, why_len);
		return -EXDEV;
	}
	*ret = best;
	return 0;
}

/* ---- scope ---------------------------------------------------------- */

unsigned numa_pod_cpus(const struct numa_container *c, size_t n)
{
	unsigned init = 0, sidecars = 0, app = 0;

	for (size_t i = 0; c && i < n; i++) {
		switch (c[i].kind) {
		case NUMA_CONTAINER_SIDECAR:
			sidecars += c[i].cpus;
			break;
		case NUMA_CONTAINER_INIT:
			/* runs next to the sidecars started before it */
			if (sidecars + c[i].cpus > init)
				init = sidecars + c[i].cpus;
			break;
		default:
			app += c[i].cpus;
		}
	}
	return init > app + sidecars ? init : app + sidecars;
}

static int admit_one(const struct alloc_topo *t, enum numa_policy policy,
		     const struct numa_opts *opts, const struct cpumask *avail,
		     const struct cpumask *reusable, unsigned cpus, const char *who,
		     struct numa_hint *ret, char *why, size_t why_len)
{
	struct numa_hints h;
	int r = numa_cpu_hints(t, avail, reusable, cpus, &h);

	if (r < 0)
		return r;
	if (who)
		snprintf(h.what, sizeof(h.what), "%u CPU%s of %s", cpus, cpus == 1 ? "" : "s", who);
	return numa_admit(t, policy, opts, &h, 1, ret, why, why_len);
}

int numa_admit_pod(const struct alloc_topo *t, enum numa_policy policy,
		   enum numa_scope scope, const struct numa_opts *opts,
		   const struct cpumask *avail, const struct cpumask *reusable,
		   const struct numa_container *c, size_t n, struct numa_hint *ret,
		   char *why, size_t why_len)
{
	struct numa_hint *out, best;
	int r = 0;

	if (!topo_ok(t) || (n && (!c || !ret)) || (unsigned)scope > NUMA_SCOPE_POD)
		return -EINVAL;
	if (policy == NUMA_POLICY_NONE) {
		for (size_t i = 0; i < n; i++)
			ret[i] = (struct numa_hint){ .preferred = false };
		return 0;
	}
	if (scope == NUMA_SCOPE_POD) {
		r = admit_one(t, policy, opts, avail, reusable, numa_pod_cpus(c, n), NULL,
			      &best, why, why_len);
		for (size_t i = 0; r == 0 && i < n; i++)
			ret[i] = best;
		return r;
	}
	if (!n)
		return 0;
	out = malloc(n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		char who[32];

		snprintf(who, sizeof(who), "container %zu", i);
		r = admit_one(t, policy, opts, avail, reusable, c[i].cpus, who, &out[i],
			      why, why_len);
	}
	if (r == 0)
		memcpy(ret, out, n * sizeof(*out));
	free(out);
	return r;
}

/* ---- names ---------------------------------------------------------- */

static const char *const policy_names[][2] = {
	[NUMA_POLICY_NONE] = { "none", "None" },
	[NUMA_POLICY_BEST_EFFORT] = { "best-effort", "BestEffort" },
	[NUMA_POLICY_RESTRICTED] = { "restricted", "Restricted" },
	[NUMA_POLICY_SINGLE_NUMA_NODE] = { "single-numa-node", "SingleNUMANode" },
};

static const char *const scope_names[] = {
	[NUMA_SCOPE_CONTAINER] = "container",
	[NUMA_SCOPE_POD] = "pod",
};

int numa_policy_parse(const char *s, enum numa_policy *ret)
{
	if (!s || !ret)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++)
		if (!strcmp(s, policy_names[i][0]) || !strcmp(s, policy_names[i][1])) {
			*ret = (enum numa_policy)i;
			return 0;
		}
	return -EINVAL;
}

const char *numa_policy_name(enum numa_policy p)
{
	return (unsigned)p < sizeof(policy_names) / sizeof(policy_names[0]) ?
	       policy_names[p][0] : "?";
}

int numa_scope_parse(const char *s, enum numa_scope *ret)
{
	if (!s || !ret)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++)
		if (!strcmp(s, scope_names[i])) {
			*ret = (enum numa_scope)i;
			return 0;
		}
	return -EINVAL;
}

const char *numa_scope_name(enum numa_scope s)
{
	return (unsigned)s < sizeof(scope_names) / sizeof(scope_names[0]) ? scope_names[s] : "?";
}
