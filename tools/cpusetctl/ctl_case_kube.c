// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet case runner (k8s-cases.jsonl, fixtures/SOURCE.md): maps a
 * case's options.algorithm to the kube_alloc.h routine kubelet's test
 * called, and compares the answer with expect / error.
 *
 * Kubelet's tests compare SMT alignment errors as Go values; the fixture
 * writes them as struct literals ("SMTAlignmentError{RequestedCPUs: 1,
 * CpusPerCore: 2}"). The runner renders such a value as the message
 * kubelet's Error() prints, which is what kube_alloc.h reports.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "ctl_alloc.h"
#include "user/alloc/kube_alloc.h"

struct kcase {
	const char *algorithm, *expect, *error, *description;
	struct cpumask avail;
	unsigned n;
	json_object *opts;
};

static bool opt_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static const char *opt_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) : NULL;
}

/* A cpulist option; absent = empty set. */
static int opt_cpus(json_object *o, const char *key, struct cpumask *ret)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		cpumask_zero(ret);
		return 0;
	}
	return ctl_json_cpulist(o, key, ret);
}

/* The take options of the cpu_assignment.go cases. */
static void take_opts(json_object *o, struct kube_alloc_opts *ret)
{
	const char *s = opt_str(o, "cpu_sorting");
	json_object *v;

	*ret = (struct kube_alloc_opts){
		.sorting = s && !strcmp(s, "spread") ? KUBE_SORT_SPREAD : KUBE_SORT_PACKED,
		.prefer_align_uncore = opt_bool(o, "prefer_align_by_uncore_cache"),
		.align_by_socket = opt_bool(o, "align_by_socket"),
	};
	if (json_object_object_get_ex(o, "cpu_group_size", &v))
		ret->cpu_group_size = (unsigned)json_object_get_int(v);
}

/* kubelet --cpu-manager-policy-options, "true"/"false" strings. */
static void policy_opts(json_object *o, struct kube_alloc_opts *ret)
{
	json_object *po;
	const char *s;

	*ret = (struct kube_alloc_opts){ 0 };
	if (!json_object_object_get_ex(o, "policy_options", &po))
		return;
#define OPT(name) ((s = opt_str(po, name)) && !strcmp(s, "true"))
	ret->full_pcpus_only = OPT("full-pcpus-only");
	ret->align_by_socket = OPT("align-by-socket");
	ret->distribute_across_numa = OPT("distribute-cpus-across-numa");
	ret->prefer_align_uncore = OPT("prefer-align-cpus-by-uncorecache");
	if (OPT("distribute-cpus-across-cores"))
		ret->sorting = KUBE_SORT_SPREAD;
#undef OPT
}

/* The Topology Manager hint: a list of NUMA node ids; absent = none. */
static int numa_affinity(json_object *o, struct cpumask *ret, bool *ret_set)
{
	json_object *v;

	cpumask_zero(ret);
	*ret_set = json_object_object_get_ex(o, "numa_affinity", &v) &&
		   !json_object_is_type(v, json_type_null);
	if (!*ret_set)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return -EINVAL;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		int id = json_object_get_int(json_object_array_get_idx(v, i));

		if (id < 0 || id >= CPUSETD_MAX_CPUS)
			return -EINVAL;
		cpumask_set(ret, (unsigned)id);
	}
	return 0;
}

/*
 * The CPUs the container itself already holds. The schema marks this
 * only through the test name: in "ExpectSameAllocation" the listed
 * assignment is the container's own; elsewhere existing_assignments are
 * other containers' CPUs, already absent from the pool.
 */
static bool own_assignment(const struct kcase *k, struct cpumask *ret)
{
	json_object *ea;

	cpumask_zero(ret);
	if (!strstr(k->description, "ExpectSameAllocation") ||
	    !json_object_object_get_ex(k->opts, "existing_assignments", &ea))
		return false;
	json_object_object_foreach(ea, name, v) {
		struct cpumask m;

		(void)v;
		if (ctl_json_cpulist(ea, name, &m) == 0)
			cpumask_or(ret, ret, &m);
	}
	return true;
}

static int run_static(const struct kcase *k, const struct alloc_topo *t, bool direct,
		      struct cpumask *ret, char *reason, size_t len)
{
	struct cpumask reserved, nodes, own;
	struct kube_static_req req = { .available = &k->avail, .n = k->n };
	bool hinted;

	if (opt_cpus(k->opts, "reserved", &reserved) < 0 ||
	    numa_affinity(k->opts, &nodes, &hinted) < 0)
		return -EINVAL;
	policy_opts(k->opts, &req.opts);
	req.reserved = &reserved;
	req.numa_affinity = hinted ? &nodes : NULL;
	if (direct)
		return kube_allocate_cpus(t, &req, ret, reason, len);
	if (own_assignment(k, &own))
		req.assigned = &own;
	return kube_static_allocate(t, &req, ret, reason, len);
}

/* Runs the routine named by options.algorithm; -ENOTSUP if unknown. */
static int run(const struct kcase *k, const struct alloc_topo *t, struct cpumask *ret,
	       char *reason, size_t len)
{
	struct cpumask alloc, base;
	struct kube_alloc_opts o;
	const char *a = k->algorithm;

	take_opts(k->opts, &o);
	if (!strcmp(a, "numa_packed"))
		return kube_take_packed(t, &k->avail, k->n, &o, ret, reason, len);
	if (!strcmp(a, "numa_distributed"))
		return kube_take_distributed(t, &k->avail, k->n, &o, ret, reason, len);
	if (!strcmp(a, "numa_packed_for_resize") || !strcmp(a, "numa_distributed_for_resize")) {
		if (opt_cpus(k->opts, "allocated", &alloc) < 0 ||
		    opt_cpus(k->opts, "baseline", &base) < 0)
			return -EINVAL;
		if (!strcmp(a, "numa_packed_for_resize"))
			return kube_take_packed_resize(t, &k->avail, k->n, &alloc, &base, &o, ret,
						       reason, len);
		return kube_take_distributed_resize(t, &k->avail, k->n, &alloc, &base, &o, ret,
						    reason, len);
	}
	if (!strcmp(a, "static_policy_allocate"))
		return run_static(k, t, false, ret, reason, len);
	if (!strcmp(a, "static_policy_allocateCPUs"))
		return run_static(k, t, true, ret, reason, len);
	return -ENOTSUP;
}

/* Reads "Name: value" out of a Go struct literal; 0 when absent. */
static long go_field(const char *s, const char *name)
{
	const char *p = strstr(s, name);
	long v = 0;

	if (p && p[strlen(name)] == ':')
		sscanf(p + strlen(name) + 1, " %ld", &v);
	return v;
}

/* The message kubelet's error value prints: SMTAlignmentError literals
 * become SMTAlignmentError.Error(); other texts are messages already. */
static void want_message(const char *err, char *buf, size_t len)
{
	long req, cpc, avail;

	if (strncmp(err, "SMTAlignmentError{", 18) != 0) {
		snprintf(buf, len, "%s", err);
		return;
	}
	req = go_field(err, "RequestedCPUs");
	cpc = go_field(err, "CpusPerCore");
	avail = go_field(err, "AvailablePhysicalCPUs");
	if (strstr(err, "CausedByPhysicalCPUs: true"))
		snprintf(buf, len, "SMT Alignment Error: not enough free physical CPUs: available "
			 "physical CPUs = %ld, requested CPUs = %ld, CPUs per core = %ld",
			 avail, req, cpc);
	else
		snprintf(buf, len, "SMT Alignment Error: requested %ld cpus not multiple cpus per "
			 "core = %ld", req, cpc);
}

static int read_case(json_object *c, struct kcase *ret, char *why, size_t len)
{
	json_object *v;

	memset(ret, 0, sizeof(*ret));
	if (!json_object_object_get_ex(c, "options", &ret->opts) ||
	    !(ret->algorithm = opt_str(ret->opts, "algorithm"))) {
		snprintf(why, len, "no options.algorithm");
		return -EINVAL;
	}
	if (ctl_json_cpulist(c, "available", &ret->avail) < 0) {
		snprintf(why, len, "bad or missing available");
		return -EINVAL;
	}
	if (!json_object_object_get_ex(c, "request", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) < 0) {
		snprintf(why, len, "bad or missing request");
		return -EINVAL;
	}
	ret->n = (unsigned)json_object_get_int(v);
	ret->expect = opt_str(c, "expect");
	ret->error = opt_str(c, "error");
	ret->description = opt_str(c, "description");
	if (!ret->description)
		ret->description = "";
	if (!ret->expect) {
		snprintf(why, len, "no expect");
		return -EINVAL;
	}
	return 0;
}

/* Compares outcome r / got with the case; 0 = match, 1 = mismatch. */
static int judge(const struct kcase *k, int r, const struct cpumask *got, const char *reason,
		 char *why, size_t len)
{
	char g[CPULIST_MAX], want[512];
	struct cpumask exp;

	if (r > 0)
		snprintf(g, sizeof(g), "no-alloc");
	else if (r < 0)
		snprintf(g, sizeof(g), "error \"%s\"", reason);
	else
		cpulist_format(got, g, sizeof(g));
	if (!strcmp(k->expect, "no-alloc")) {
		if (r == KUBE_ALLOC_SHARED)
			return 0;
		snprintf(why, len, "got %s, want no-alloc", g);
		return 1;
	}
	if (!strcmp(k->expect, "error")) {
		want_message(k->error ? k->error : "", want, sizeof(want));
		if (r < 0 && !strcmp(reason, want))
			return 0;
		snprintf(why, len, "got %s, want error \"%s\"", g, want);
		return 1;
	}
	if (cpulist_parse(k->expect, &exp) < 0) {
		snprintf(why, len, "bad expect \"%s\"", k->expect);
		return -EINVAL;
	}
	if (r == 0 && cpumask_equal(got, &exp))
		return 0;
	snprintf(why, len, "got %s, want %s", g, k->expect);
	return 1;
}

int ctl_case_kube(json_object *c, const struct alloc_topo *t, char *why, size_t len)
{
	char reason[512] = "";
	struct cpumask got;
	struct kcase k;
	int r = read_case(c, &k, why, len);

	if (r < 0)
		return r;
	cpumask_zero(&got);
	r = run(&k, t, &got, reason, sizeof(reason));
	if (r == -ENOTSUP) {
		snprintf(why, len, "unknown options.algorithm \"%s\"", k.algorithm);
		return -EINVAL;
	}
	return judge(&k, r, &got, reason, why, len);
}
