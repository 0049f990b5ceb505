/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NUMA node masks on dense indexes (bit i = the topology's i-th node,
 * alloc_topo.node_id[i]), shared by the hint generation (numa_hints.c)
 * and the merge (numa_merge.c): conversions to and from kernel node ids,
 * and the capacity sums both reason with. Static inline: they sit in
 * both files' inner loops. Index order is kernel id order, so the lowest
 * mask by index is the lowest by id.
 */
#ifndef CPUSETD_NUMA_DENSE_H
#define CPUSETD_NUMA_DENSE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "numa_align.h"

static inline unsigned popc(uint64_t m)
{
	return (unsigned)__builtin_popcountll(m);
}

static inline uint64_t bit(unsigned i)
{
	return 1ULL << i;
}

static inline uint64_t all_nodes(const struct alloc_topo *t)
{
	return t->n_nodes >= 64 ? ~0ULL : bit(t->n_nodes) - 1;
}

static inline bool topo_ok(const struct alloc_topo *t)
{
	return t && t->n_nodes > 0 && t->n_nodes <= ALLOC_MAX_NODES;
}

/* Dense mask of the kernel node ids in m; -EINVAL when t lacks one. */
static inline int to_dense(const struct alloc_topo *t, const struct cpumask *m, uint64_t *ret)
{
	uint64_t d = 0;

	for (unsigned i = 0; i < t->n_nodes; i++)
		if (cpumask_test(m, (unsigned)t->node_id[i]))
			d |= bit(i);
	if (popc(d) != cpumask_weight(m))
		return -EINVAL;
	*ret = d;
	return 0;
}

static inline void to_ids(const struct alloc_topo *t, uint64_t d, struct cpumask *ret)
{
	cpumask_zero(ret);
	for (; d; d &= d - 1)
		cpumask_set(ret, (unsigned)t->node_id[__builtin_ctzll(d)]);
}

static inline uint64_t sum_over(const uint64_t *v, uint64_t m)
{
	uint64_t s = 0;

	for (; m; m &= m - 1)
		s += v[__builtin_ctzll(m)];
	return s;
}

/* Node indexes 0..n-1 by v descending, ties by lower index: stable. */
static inline void sort_desc(const uint64_t *v, unsigned n, uint8_t *order)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;

		while (j > 0 && v[order[j - 1]] < v[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = (uint8_t)i;
	}
}

/* How many of pool's nodes, largest v first, bring have up to need;
 * -1 when all of them do not. */
static inline int take_top(const uint64_t *v, const uint8_t *order, unsigned n, uint64_t pool,
		    uint64_t have, uint64_t need)
{
	int k = 0;

	for (unsigned j = 0; j < n && have < need; j++)
		if (pool & bit(order[j])) {
			have += v[order[j]];
			k++;
		}
	return have >= need ? k : -1;
}

/* Sum of the k largest v over pool's nodes. */
static inline uint64_t top_sum(const uint64_t *v, const uint8_t *order, unsigned n, uint64_t pool,
			unsigned k)
{
	uint64_t s = 0;

	for (unsigned j = 0; j < n && k; j++)
		if (pool & bit(order[j])) {
			s += v[order[j]];
			k--;
		}
	return s;
}

static inline bool cap_fits(const struct numa_capacity *c, uint64_t m)
{
	return !(c->must & ~m) && c->base + sum_over(c->avail, m) >= c->request;
}

#endif
