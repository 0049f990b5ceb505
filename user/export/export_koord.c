// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator NodeResourceTopology annotations from the topology and the
 * placements (schemas and choices in export_koord.h). Pure: data in, JSON
 * out; the daemon writes the file (export_koord_write.c).
 */
#include <stdlib.h>
#include <string.h>
#include "export_koord.h"
#include "user/topo/topology_json.h"

/* Distinct package ids of the online CPUs, ascending, into pkgs; their
 * count. The dense socket index of a package is its position here. */
static unsigned packages_sorted(const struct topology *t, long *pkgs)
{
	unsigned n = 0;
	int id;

	cpumask_for_each(id, &t->online) {
		long p = t->cpu[id].package;
		unsigned i = n;

		/* insertion sort: at most a handful of packages */
		while (i > 0 && pkgs[i - 1] > p)
			i--;
		if (i > 0 && pkgs[i - 1] == p)
			continue;
		memmove(&pkgs[i + 1], &pkgs[i], (n - i) * sizeof(*pkgs));
		pkgs[i] = p;
		n++;
	}
	return n;
}

static int socket_index(const long *pkgs, unsigned n, long package)
{
	for (unsigned i = 0; i < n; i++)
		if (pkgs[i] == package)
			return (int)i;
	return -1;	/* not reached for online CPUs */
}

static void add_int(json_object *o, const char *k, int v)
{
	json_object_object_add(o, k, json_object_new_int(v));
}

json_object *export_koord_cpu_topology(const struct topology *t)
{
	long pkgs[CPUSETD_MAX_CPUS];
	json_object *o = json_object_new_object(), *detail = json_object_new_array();
	unsigned n = packages_sorted(t, pkgs);
	int id;

	if (!o || !detail) {
		json_object_put(o);
		json_object_put(detail);
		return NULL;
	}
	cpumask_for_each(id, &t->online) {
		json_object *c = json_object_new_object();

		add_int(c, "id", id);
		add_int(c, "core", t->cpu[id].core);
		add_int(c, "socket", socket_index(pkgs, n, t->cpu[id].package));
		add_int(c, "node", t->cpu[id].node);
		json_object_array_add(detail, c);
	}
	json_object_object_add(o, "detail", detail);
	return o;
}

json_object *export_koord_pod_allocs(const struct export_koord_pod *pods, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		json_object *p;

		if (cpumask_empty(&pods[i].cpus))
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "namespace", json_object_new_string(pods[i].namespace_));
		json_object_object_add(p, "name", json_object_new_string(pods[i].name));
		json_object_object_add(p, "uid", json_object_new_string(pods[i].uid));
		json_object_object_add(p, "cpuset", cpumask_json(&pods[i].cpus));
		if (pods[i].managed_by_kubelet)
			json_object_object_add(p, "managedByKubelet", json_object_new_boolean(1));
		json_object_array_add(a, p);
	}
	return a;
}

/* The online CPUs of package pkg into *ret. */
static void package_cpus(const struct topology *t, long pkg, struct cpumask *ret)
{
	int id;

	cpumask_zero(ret);
	cpumask_for_each(id, &t->online)
		if (t->cpu[id].package == pkg)
			cpumask_set(ret, (unsigned)id);
}

json_object *export_koord_shared_pools(const struct topology *t, const struct cpumask *pool)
{
	long pkgs[CPUSETD_MAX_CPUS];
	json_object *a = json_object_new_array();
	unsigned n = packages_sorted(t, pkgs);

	for (unsigned s = 0; a && s < n; s++) {
		struct cpumask in_pkg, part;
		int node;

		package_cpus(t, pkgs[s], &in_pkg);
		cpumask_and(&in_pkg, &in_pkg, pool);
		cpumask_for_each(node, &t->nodes) {
			json_object *p;

			cpumask_and(&part, &in_pkg, &t->node_cpus[node]);
			if (cpumask_empty(&part))
				continue;
			p = json_object_new_object();
			add_int(p, "socket", (int)s);
			add_int(p, "node", node);
			json_object_object_add(p, "cpuset", cpumask_json(&part));
			json_object_array_add(a, p);
		}
	}
	return a;
}

/* Adds v to o under key as its JSON text (annotation values are strings);
 * puts v. Returns 0 or -1 on ENOMEM. */
static int add_text(json_object *o, const char *key, json_object *v)
{
	json_object *s;

	if (!v)
		return -1;
	s = json_object_new_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(v);
	if (!s)
		return -1;
	json_object_object_add(o, key, s);
	return 0;
}

/* SystemQOSResource (Koordinator apis/extension): {"cpuset": "..."}. */
static json_object *system_qos(const struct cpumask *cpus)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "cpuset", cpumask_json(cpus));
	return o;
}

json_object *export_koord_json(const struct topology *t, const struct export_koord_pod *pods,
			       size_t n, const struct export_koord_pools *pools)
{
	const struct cpumask *be = pools->be, *sys = pools->system;
	json_object *o = json_object_new_object();

	if (!o || add_text(o, EXPORT_KOORD_CPU_TOPOLOGY, export_koord_cpu_topology(t)) < 0 ||
	    add_text(o, EXPORT_KOORD_POD_CPU_ALLOCS, export_koord_pod_allocs(pods, n)) < 0 ||
	    add_text(o, EXPORT_KOORD_CPU_SHARED_POOLS,
		     export_koord_shared_pools(t, &pools->shared)) < 0 ||
	    /* Only when it says something the shared pools do not. */
	    (be && !cpumask_equal(be, &pools->shared) &&
	     add_text(o, EXPORT_KOORD_BE_CPU_SHARED_POOLS, export_koord_shared_pools(t, be)) < 0) ||
	    (sys && !cpumask_empty(sys) &&
	     add_text(o, EXPORT_KOORD_SYSTEM_QOS_RESOURCE, system_qos(sys)) < 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int pod_cmp(const void *a, const void *b)
{
	const struct export_koord_pod *x = a, *y = b;
	int r;

	if ((r = strcmp(x->namespace_, y->namespace_)) || (r = strcmp(x->name, y->name)))
		return r;
	return strcmp(x->uid, y->uid);
}

void export_koord_sort(struct export_koord_pod *pods, size_t n)
{
	if (n > 1)
		qsort(pods, n, sizeof(*pods), pod_cmp);
}
