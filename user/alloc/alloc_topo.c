// SPDX-License-Identifier: Apache-2.0
/*
 * Builds the allocation view of a machine (alloc_topo.h): distinct ids per
 * level are sorted and numbered, so index order is id order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "alloc_topo.h"

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Sorts and de-duplicates ids[0..n); returns the distinct count. */
static size_t unique_sorted(long *ids, size_t n)
{
	size_t k = 0;

	qsort(ids, n, sizeof(*ids), cmp_long);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || ids[k - 1] != ids[i])
			ids[k++] = ids[i];
	return k;
}

static uint16_t index_of(const long *ids, size_t n, long id)
{
	const long *p = bsearch(&id, ids, n, sizeof(*ids), cmp_long);

	return (uint16_t)(p - ids);
}

/* Distinct ids of one level, sorted: field picks core/socket/uncore/node. */
enum level { L_CORE, L_SOCKET, L_NODE, L_UNCORE };

static long level_id(const struct alloc_cpu_desc *d, enum level l)
{
	switch (l) {
	case L_CORE: return d->core;
	case L_SOCKET: return d->socket;
	case L_NODE: return d->node;
	default: return d->uncore;
	}
}

static size_t collect(const struct alloc_cpu_desc *cpus, size_t n, enum level l, long *ids)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (l != L_UNCORE || cpus[i].uncore >= 0)
			ids[k++] = level_id(&cpus[i], l);
	return unique_sorted(ids, k);
}

static int check_descs(const struct alloc_cpu_desc *cpus, size_t n)
{
	struct cpumask seen;

	cpumask_zero(&seen);
	for (size_t i = 0; i < n; i++) {
		if (cpus[i].cpu >= CPUSETD_MAX_CPUS || cpumask_test(&seen, cpus[i].cpu) ||
		    cpus[i].node < 0 || cpus[i].node >= CPUSETD_MAX_CPUS)
			return -EINVAL;
		cpumask_set(&seen, cpus[i].cpu);
	}
	return 0;
}

/* Every CPU of a core shares its socket and node. */
static int check_cores(const struct alloc_topo *t)
{
	for (unsigned c = 0; c < t->n_cores; c++) {
		int first = cpumask_next(&t->core_cpus[c], 0), cpu;

		cpumask_for_each(cpu, &t->core_cpus[c])
			if (t->socket_of[cpu] != t->socket_of[first] ||
			    t->node_of[cpu] != t->node_of[first])
				return -EINVAL;
	}
	return 0;
}

/*
 * cpus_per_core is the widest core, not CPUs / cores (kubelet's and
 * Koordinator's CPUsPerCore): one offline sibling on SMT4 makes that
 * 255 / 64 = 3, so full-pcpus-only let 15 CPUs through and refused 16, and
 * a hybrid part (2-thread and 1-thread cores) got 1, no SMT at all.
 * narrow collects the cores below that width, which no whole-core answer
 * can use.
 */
static void smt_width(struct alloc_topo *t)
{
	for (unsigned c = 0; c < t->n_cores; c++) {
		unsigned w = cpumask_weight(&t->core_cpus[c]);

		if (w > t->cpus_per_core)
			t->cpus_per_core = w;
	}
	for (unsigned c = 0; c < t->n_cores; c++)
		if (cpumask_weight(&t->core_cpus[c]) < t->cpus_per_core)
			cpumask_or(&t->narrow, &t->narrow, &t->core_cpus[c]);
}

int alloc_topo_build(const struct alloc_cpu_desc *cpus, size_t n, struct alloc_topo *ret)
{
	long *ids[4];
	size_t cnt[4];
	int r = check_descs(cpus, n);

	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	for (int l = 0; l < 4; l++) {
		ids[l] = malloc((n ? n : 1) * sizeof(long));
		if (!ids[l]) {
			while (l--)
				free(ids[l]);
			return -ENOMEM;
		}
		cnt[l] = collect(cpus, n, l, ids[l]);
	}
	if (cnt[L_SOCKET] > ALLOC_MAX_SOCKETS || cnt[L_NODE] > ALLOC_MAX_NODES) {
		r = -E2BIG;
		goto out;
	}
	ret->n_cores = cnt[L_CORE];
	ret->n_sockets = cnt[L_SOCKET];
	ret->n_nodes = cnt[L_NODE];
	ret->n_uncores = cnt[L_UNCORE];
	for (size_t i = 0; i < cnt[L_CORE]; i++)
		ret->core_id[i] = ids[L_CORE][i];
	for (size_t i = 0; i < cnt[L_SOCKET]; i++)
		ret->socket_id[i] = ids[L_SOCKET][i];
	for (size_t i = 0; i < cnt[L_NODE]; i++)
		ret->node_id[i] = (int)ids[L_NODE][i];
	for (size_t i = 0; i < cnt[L_UNCORE]; i++)
		ret->uncore_id[i] = ids[L_UNCORE][i];
	for (size_t i = 0; i < n; i++) {
		const struct alloc_cpu_desc *d = &cpus[i];
		unsigned cpu = d->cpu;

		cpumask_set(&ret->cpus, cpu);
		ret->core_of[cpu] = index_of(ids[L_CORE], cnt[L_CORE], d->core);
		ret->socket_of[cpu] = index_of(ids[L_SOCKET], cnt[L_SOCKET], d->socket);
		ret->node_of[cpu] = index_of(ids[L_NODE], cnt[L_NODE], d->node);
		ret->uncore_of[cpu] = d->uncore < 0 ? ALLOC_NONE :
				      index_of(ids[L_UNCORE], cnt[L_UNCORE], d->uncore);
		cpumask_set(&ret->core_cpus[ret->core_of[cpu]], cpu);
		cpumask_set(&ret->socket_cpus[ret->socket_of[cpu]], cpu);
		cpumask_set(&ret->node_cpus[ret->node_of[cpu]], cpu);
		if (ret->uncore_of[cpu] != ALLOC_NONE)
			cpumask_set(&ret->uncore_cpus[ret->uncore_of[cpu]], cpu);
	}
	smt_width(ret);
	r = check_cores(ret);
out:
	for (int l = 0; l < 4; l++)
		free(ids[l]);
	return r;
}

int alloc_topo_from_topology(const struct topology *t, const struct cpumask *cpus,
			     struct alloc_topo *ret)
{
	struct alloc_cpu_desc *d = calloc(CPUSETD_MAX_CPUS, sizeof(*d));
	size_t n = 0;
	int cpu, r;

	if (!d)
		return -ENOMEM;
	cpumask_for_each(cpu, cpus) {
		if (!cpumask_test(&t->present, cpu))
			continue;
		d[n++] = (struct alloc_cpu_desc){
			.cpu = cpu,
			.core = t->cpu[cpu].core,
			.socket = t->cpu[cpu].package,
			.node = t->cpu[cpu].node < 0 ? 0 : t->cpu[cpu].node,
			.uncore = t->cpu[cpu].l3,
		};
	}
	r = alloc_topo_build(d, n, ret);
	free(d);
	return r;
}

int alloc_topo_generate(unsigned sockets, unsigned nodes_per_socket, unsigned cores_per_node,
			unsigned cpus_per_core, struct alloc_topo *ret)
{
	unsigned long total = (unsigned long)sockets * nodes_per_socket * cores_per_node *
			      cpus_per_core;
	unsigned per_node = cores_per_node * cpus_per_core;
	struct alloc_cpu_desc *d;
	int r;

	if (!sockets || !nodes_per_socket || !cores_per_node || !cpus_per_core)
		return -EINVAL;
	if (total > CPUSETD_MAX_CPUS)
		return -E2BIG;
	d = calloc(total, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < total; cpu++)
		d[cpu] = (struct alloc_cpu_desc){
			.cpu = cpu,
			.core = cpu / cpus_per_core,
			.node = (int)(cpu / per_node),
			.socket = cpu / (per_node * nodes_per_socket),
			.uncore = cpu / per_node,
		};
	r = alloc_topo_build(d, total, ret);
	free(d);
	return r;
}

void alloc_topo_nodes_of(const struct alloc_topo *t, const struct cpumask *cpus,
			 struct cpumask *ret)
{
	int cpu;

	cpumask_zero(ret);
	cpumask_for_each(cpu, cpus)
		if (cpumask_test(&t->cpus, cpu))
			cpumask_set(ret, t->node_id[t->node_of[cpu]]);
}

void alloc_topo_cpus_of_nodes(const struct alloc_topo *t, const struct cpumask *nodes,
			      struct cpumask *ret)
{
	cpumask_zero(ret);
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (cpumask_test(nodes, t->node_id[i]))
			cpumask_or(ret, ret, &t->node_cpus[i]);
}

int alloc_topo_node_index(const struct alloc_topo *t, int node_id)
{
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->node_id[i] == node_id)
			return (int)i;
	return -1;
}
