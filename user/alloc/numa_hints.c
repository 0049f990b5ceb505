// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager hints (numa_align.h): the CPU hints kept implicit as
 * a capacity (numa_capacity_hints, numa_cpu_hints: why, numa_merge.c),
 * and their explicit list when one is wanted (numa_hints_expand).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "numa_align.h"
#include "numa_dense.h"

int numa_capacity_hints(const struct alloc_topo *t, const uint64_t *avail,
			const uint64_t *total, uint64_t base, const struct cpumask *must,
			uint64_t request, struct numa_hints *ret)
{
	struct numa_hints h = { .kind = NUMA_HINTS_ANY };
	struct numa_capacity *c = &h.cap;
	uint8_t order[ALLOC_MAX_NODES];
	unsigned n;
	int k;

	if (!topo_ok(t) || !avail || !total || !ret)
		return -EINVAL;
	n = t->n_nodes;
	if (must && to_dense(t, must, &c->must) < 0)
		return -EINVAL;
	if (!request) {
		*ret = h;
		return 0;
	}
	h.kind = NUMA_HINTS_CAPACITY;
	memcpy(c->avail, avail, n * sizeof(*avail));
	c->base = base;
	c->request = request;
	/* kubelet sizes "preferred" on the whole machine, so a fragmented
	 * node does not lower the bar: the container waits for alignment. */
	sort_desc(total, n, order);
	k = take_top(total, order, n, all_nodes(t), 0, request);
	c->min_affinity = k < 0 ? n : (unsigned)k;
	sort_desc(c->avail, n, order);
	k = take_top(c->avail, order, n, all_nodes(t) & ~c->must,
		     base + sum_over(c->avail, c->must), request);
	c->min_fit = k < 0 ? 0 : popc(c->must) + (unsigned)k;
	if (k >= 0 && !c->min_fit)
		c->min_fit = 1;	/* a hint names at least one node */
	*ret = h;
	return 0;
}

int numa_cpu_hints(const struct alloc_topo *t, const struct cpumask *avail,
		   const struct cpumask *reusable, unsigned n, struct numa_hints *ret)
{
	uint64_t free_[ALLOC_MAX_NODES], total[ALLOC_MAX_NODES];
	struct cpumask own, mine, nodes;
	struct numa_hints h;
	int r;

	if (!topo_ok(t) || !avail || !ret || !cpumask_subset(avail, &t->cpus) ||
	    (reusable && !cpumask_subset(reusable, &t->cpus)))
		return -EINVAL;
	cpumask_zero(&own);
	if (reusable)
		own = *reusable;
	for (unsigned i = 0; i < t->n_nodes; i++) {
		total[i] = cpumask_weight(&t->node_cpus[i]);
		cpumask_and(&mine, avail, &t->node_cpus[i]);
		cpumask_andnot(&mine, &mine, &own);
		free_[i] = cpumask_weight(&mine);
	}
	alloc_topo_nodes_of(t, &own, &nodes);
	r = numa_capacity_hints(t, free_, total, cpumask_weight(&own), &nodes, n, &h);
	if (r < 0)
		return r;
	if (n)
		snprintf(h.what, sizeof(h.what), "%u CPU%s", n, n == 1 ? "" : "s");
	*ret = h;
	return 0;
}

/* Next k-combination of 0..n-1 in lexicographic order; false after the last. */
static bool next_combination(unsigned *idx, unsigned k, unsigned n)
{
	unsigned i = k;

	while (i > 0 && idx[i - 1] == n - k + i - 1)
		i--;
	if (i == 0)
		return false;
	idx[i - 1]++;
	for (unsigned j = i; j < k; j++)
		idx[j] = idx[j - 1] + 1;
	return true;
}

int numa_hints_expand(const struct alloc_topo *t, const struct numa_hints *h,
		      unsigned max_nodes, struct numa_hint *out, size_t cap)
{
	const struct numa_capacity *c;
	unsigned idx[ALLOC_MAX_NODES], n;
	size_t written = 0;
	unsigned long scanned = 0;

	if (!topo_ok(t) || !h || h->kind != NUMA_HINTS_CAPACITY || (!out && cap))
		return -EINVAL;
	c = &h->cap;
	n = t->n_nodes;
	if (!max_nodes || max_nodes > n)
		max_nodes = n;
	if (!c->min_fit)
		return 0;	/* kubelet: an empty list */
	for (unsigned k = 1; k <= max_nodes; k++) {
		for (unsigned i = 0; i < k; i++)
			idx[i] = i;
		do {
			uint64_t m = 0;

			if (++scanned > (1UL << 24))
				return -E2BIG;
			for (unsigned i = 0; i < k; i++)
				m |= bit(idx[i]);
			if (!cap_fits(c, m))
				continue;
			if (written < cap) {
				to_ids(t, m, &out[written].nodes);
				out[written].preferred = k == c->min_affinity;
			}
			written++;
		} while (next_combination(idx, k, n));
	}
	return written > cap ? -ENOSPC : (int)written;
}
