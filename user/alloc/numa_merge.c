// SPDX-License-Identifier: Apache-2.0
/*
 * The Topology Manager merge (numa_merge, numa_align.h) of several
 * providers' hints, for up to 64 NUMA nodes.
 *
 * Why the CPU hints stay implicit. kubelet lists every node mask that can
 * hold the request (2^N - 1 masks: fine at 8 nodes, hopeless at 64) and
 * the merge walks the cross product of all providers' lists. The CPU hints
 * have a shape the merge can use instead:
 *  - they are closed upwards: a superset of a hint is a hint (more nodes,
 *    more free CPUs, still holding the reusable CPUs' nodes);
 *  - the preferred ones are exactly the hints with min_affinity nodes.
 * A permutation pairs one CPU mask c with X, the AND of the other masks it
 * picked (all nodes when they are all "no preference"). Then:
 *  - It is preferred only when every hint in it is preferred and all its
 *    masks are equal: either c equals the others' common mask E (one
 *    membership test), or the others are all "no preference" and any
 *    preferred c will do, the fittest of which is one search (below).
 *  - The masks c ∩ X it can merge to are the Y ⊆ X such that
 *    Y ∪ (all − X) is a hint (take c = Y plus every node outside X). They
 *    are closed upwards inside X, so every size from the smallest such Y
 *    up to |X| occurs: each permutation of the explicit lists gives an
 *    interval of sizes.
 * kubelet's HintMerger.compare(), folded over all candidates, amounts to
 * this choice (the tests replay kubelet's fold literally and compare):
 *  1. some preferred candidate: the fittest preferred one;
 *  2. else, with B = the largest of the providers' narrowest hint sizes:
 *     the fittest of B nodes if any candidate has B nodes; else the
 *     fittest of the largest size below B; else the fittest of all (that
 *     is, of the smallest size);
 *  3. no candidate with a node at all: every node, not preferred.
 * "Fittest" is kubelet's Narrowest/Closest: fewer nodes, then (only with
 * prefer-closest-numa-nodes) lower distance sum (same node count, so the
 * same order as kubelet's mean), then lower mask value. So the merge needs
 * per permutation its interval of sizes, and for one size T the fittest
 * Y of T nodes. For the lowest mask value that is a greedy from the
 * highest node down, leaving a node out whenever the lower nodes can still
 * fit: O(N^2). For prefer-closest it is a depth-first search over the
 * C(|X|, T) masks, pruned by capacity and by the distance sum so far
 * (minimum mean distance under a capacity bound has no greedy answer),
 * refused with -E2BIG when C(|X|, T) > NUMA_CLOSEST_MAX_SUBSETS: never
 * below 20 nodes.
 *
 * Masks are handled as 64-bit masks of dense node indexes: index order is
 * kernel id order, so the lowest mask by index is the lowest by id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "numa_align.h"
#include "numa_dense.h"

/* A hint on dense indexes; mask 0 = no preference (kubelet nil). */
struct dhint {
	uint64_t mask;
	bool pref;
};

struct dlist {
	const struct dhint *h;
	size_t n;
};

static const struct dhint any_preferred = { 0, true };
static const struct dhint any_unpreferred = { 0, false };

struct merger {
	uint64_t all;
	unsigned n_nodes;
	bool closest;
	const uint8_t (*dist)[ALLOC_MAX_NODES];
	const struct numa_capacity *cap;	/* the implicit provider, or NULL */
	uint8_t order[ALLOC_MAX_NODES];		/* cap's nodes by avail, descending */
	struct dlist lists[NUMA_MAX_PROVIDERS];	/* the explicit providers */
	size_t n_lists;
	unsigned b;				/* kubelet BestNonPreferredAffinityCount */
};

/* One permutation of the explicit lists, reduced. */
struct perm {
	uint64_t x;	/* AND of its masks, within all nodes */
	uint64_t e;	/* its first mask; 0 when all say "no preference" */
	bool pref;	/* every hint preferred and every mask equal */
};

static uint64_t dist_sum(const struct merger *m, uint64_t y)
{
	uint64_t s = 0;

	for (uint64_t a = y; a; a &= a - 1)
		for (uint64_t b = y; b; b &= b - 1)
			s += m->dist[__builtin_ctzll(a)][__builtin_ctzll(b)];
	return s;
}

/* kubelet Narrowest / Closest as a strict order; b == 0 is "none yet". */
static bool fitter(const struct merger *m, uint64_t a, uint64_t b)
{
	if (!b)
		return true;
	if (popc(a) != popc(b))
		return popc(a) < popc(b);
	if (m->closest) {
		uint64_t da = dist_sum(m, a), db = dist_sum(m, b);

		if (da != db)
			return da < db;
	}
	return a < b;
}

static void consider(const struct merger *m, uint64_t *best, uint64_t y)
{
	if (y && fitter(m, y, *best))
		*best = y;
}

/* Fewest nodes of u whose merge with the implicit provider is a mask:
 * Y ⊆ u such that Y ∪ (all − u) fits. 0 when even u does not. */
static unsigned cap_least(const struct merger *m, uint64_t u)
{
	const struct numa_capacity *c = m->cap;
	uint64_t in = c->must & u;
	uint64_t have = c->base + sum_over(c->avail, (m->all & ~u) | in);
	int k = take_top(c->avail, m->order, m->n_nodes, u & ~in, have, c->request);

	if (k < 0)
		return 0;
	return popc(in) + (unsigned)k ? popc(in) + (unsigned)k : 1;
}

/* Lowest mask Y ⊆ u of `size` nodes with Y ∪ (all − u) fitting, or 0.
 * Decides nodes from the highest down and leaves one out whenever the
 * lower ones can still complete a fitting mask. */
static uint64_t lowest_fit(const struct merger *m, uint64_t u, unsigned size)
{
	const struct numa_capacity *c = m->cap;
	uint64_t in = c->must & u, left = u & ~in;
	uint64_t have = c->base + sum_over(c->avail, (m->all & ~u) | in);

	if (popc(in) > size || popc(u) < size)
		return 0;
	while (left) {
		unsigned b = 63 - (unsigned)__builtin_clzll(left);
		unsigned slots = size - popc(in);

		left &= ~bit(b);
		if (slots <= popc(left) &&
		    have + top_sum(c->avail, m->order, m->n_nodes, left, slots) >= c->request)
			continue;
		if (!slots)
			return 0;
		in |= bit(b);
		have += c->avail[b];
	}
	return popc(in) == size && have >= c->request ? in : 0;
}

/* C(n, k), saturated just above limit. */
static uint64_t binom_capped(unsigned n, unsigned k, uint64_t limit)
{
	uint64_t r = 1;

	if (k > n - k)
		k = n - k;
	for (unsigned i = 0; i < k; i++) {
		r = r * (n - i) / (i + 1);
		if (r > limit)
			return limit + 1;
	}
	return r;
}

/* Depth-first search for closest_fit: picks `k` more of pos[from..nl) in
 * ascending order, the distance sum growing as nodes join. */
struct near_search {
	const struct merger *m;
	unsigned pos[ALLOC_MAX_NODES], nl;
	uint64_t max_from[ALLOC_MAX_NODES + 1];	/* largest avail in pos[i..nl) */
	uint64_t best, best_d;
};

static void near_dfs(struct near_search *s, unsigned from, unsigned k, uint64_t y,
		     uint64_t have, uint64_t d)
{
	const struct merger *m = s->m;

	/* distances only add up, and capacity is bounded by the largest left */
	if (d > s->best_d || have + k * s->max_from[from] < m->cap->request)
		return;
	if (!k) {
		if (d < s->best_d || (d == s->best_d && y < s->best)) {
			s->best = y;
			s->best_d = d;
		}
		return;
	}
	for (unsigned i = from; i + k <= s->nl; i++) {
		unsigned j = s->pos[i];
		uint64_t add = m->dist[j][j];

		for (uint64_t a = y; a; a &= a - 1)
			add += m->dist[__builtin_ctzll(a)][j] + m->dist[j][__builtin_ctzll(a)];
		near_dfs(s, i + 1, k - 1, y | bit(j), have + m->cap->avail[j], d + add);
	}
}

/* Like lowest_fit, closest first (prefer-closest-numa-nodes). No greedy
 * answers "least mean distance under a capacity bound", so it searches;
 * -E2BIG when more than NUMA_CLOSEST_MAX_SUBSETS masks could be visited. */
static int closest_fit(const struct merger *m, uint64_t u, unsigned size, uint64_t *ret)
{
	const struct numa_capacity *c = m->cap;
	uint64_t in = c->must & u, left = u & ~in;
	struct near_search s = { .m = m, .best_d = UINT64_MAX };
	unsigned k;

	*ret = 0;
	if (popc(in) > size || popc(u) < size)
		return 0;
	k = size - popc(in);
	if (binom_capped(popc(left), k, NUMA_CLOSEST_MAX_SUBSETS) > NUMA_CLOSEST_MAX_SUBSETS)
		return -E2BIG;
	for (; left; left &= left - 1)
		s.pos[s.nl++] = (unsigned)__builtin_ctzll(left);
	for (unsigned i = s.nl; i-- > 0;)
		s.max_from[i] = c->avail[s.pos[i]] > s.max_from[i + 1] ?
				c->avail[s.pos[i]] : s.max_from[i + 1];
	near_dfs(&s, 0, k, in, c->base + sum_over(c->avail, (m->all & ~u) | in), dist_sum(m, in));
	*ret = s.best;
	return 0;
}

/* The fittest mask of `size` nodes that permutation mask u merges to. */
static int fittest_of_size(const struct merger *m, uint64_t u, unsigned size, uint64_t *ret)
{
	*ret = 0;
	if (!m->cap) {
		*ret = popc(u) == size ? u : 0;
		return 0;
	}
	if (size < cap_least(m, u) || size > popc(u))
		return 0;
	if (m->closest)
		return closest_fit(m, u, size, ret);
	*ret = lowest_fit(m, u, size);
	return 0;
}

/* Sizes of the masks permutation p merges to, [*lo, *hi]; false: none. */
static bool perm_sizes(const struct merger *m, const struct perm *p, unsigned *lo, unsigned *hi)
{
	if (!p->x)
		return false;
	*hi = popc(p->x);
	*lo = m->cap ? cap_least(m, p->x) : *hi;
	return *lo > 0;
}

static void perm_reduce(const struct merger *m, const size_t *idx, struct perm *p)
{
	*p = (struct perm){ .x = m->all, .pref = true };
	for (size_t i = 0; i < m->n_lists; i++) {
		const struct dhint *h = &m->lists[i].h[idx[i]];

		if (!h->pref)
			p->pref = false;
		if (!h->mask)
			continue;
		if (!p->e)
			p->e = h->mask;
		else if (h->mask != p->e)
			p->pref = false;
		p->x &= h->mask;
	}
}

typedef int (*perm_fn)(const struct merger *m, const struct perm *p, void *arg);

/* Calls fn on every permutation of the explicit lists (one, empty, when
 * there are none; none when a list is empty). */
static int for_each_perm(const struct merger *m, perm_fn fn, void *arg)
{
	size_t idx[NUMA_MAX_PROVIDERS] = { 0 };
	struct perm p;
	size_t i;
	int r;

	for (i = 0; i < m->n_lists; i++)
		if (!m->lists[i].n)
			return 0;
	for (;;) {
		perm_reduce(m, idx, &p);
		r = fn(m, &p, arg);
		if (r < 0)
			return r;
		for (i = 0; i < m->n_lists; i++) {
			if (++idx[i] < m->lists[i].n)
				break;
			idx[i] = 0;
		}
		if (i == m->n_lists)
			return 0;
	}
}

/* Pass 1: preferred candidates, and which sizes the others reach. */
struct survey {
	uint64_t pref;		/* fittest preferred candidate, 0 none */
	bool any_pref_c;	/* an all-"no preference" preferred permutation */
	bool hit_b;		/* some candidate has exactly B nodes */
	unsigned below;		/* largest size below B reached, 0 none */
	unsigned least;		/* smallest size reached, 0 none */
};

static int survey_one(const struct merger *m, const struct perm *p, void *arg)
{
	struct survey *s = arg;
	unsigned lo, hi;

	if (!p->x)
		return 0;
	if (p->pref) {
		if (!m->cap)
			consider(m, &s->pref, p->x);
		else if (!p->e)
			s->any_pref_c = true;
		else if (popc(p->e) == m->cap->min_affinity && cap_fits(m->cap, p->e))
			consider(m, &s->pref, p->e);
	}
	if (!perm_sizes(m, p, &lo, &hi))
		return 0;
	if (lo <= m->b && m->b <= hi)
		s->hit_b = true;
	if (lo < m->b && (hi < m->b ? hi : m->b - 1) > s->below)
		s->below = hi < m->b ? hi : m->b - 1;
	if (!s->least || lo < s->least)
		s->least = lo;
	return 0;
}

/* Pass 2: the fittest candidate of one size. */
struct choice {
	unsigned size;
	uint64_t best;
};

static int choose_one(const struct merger *m, const struct perm *p, void *arg)
{
	struct choice *ch = arg;
	unsigned lo, hi;
	uint64_t y;
	int r;

	if (!perm_sizes(m, p, &lo, &hi) || ch->size < lo || ch->size > hi)
		return 0;
	r = fittest_of_size(m, p->x, ch->size, &y);
	if (r < 0)
		return r;
	consider(m, &ch->best, y);
	return 0;
}

/* The merged best hint on dense masks (kubelet HintMerger.Merge). */
static int merge_dense(const struct merger *m, struct dhint *ret)
{
	struct survey s = { 0 };
	struct choice ch = { 0 };
	int r = for_each_perm(m, survey_one, &s);

	if (r < 0)
		return r;
	if (s.any_pref_c) {
		uint64_t y;

		r = fittest_of_size(m, m->all, m->cap->min_affinity, &y);
		if (r < 0)
			return r;
		consider(m, &s.pref, y);
	}
	if (s.pref) {
		*ret = (struct dhint){ s.pref, true };
		return 0;
	}
	if (!s.least) {
		*ret = (struct dhint){ m->all, false };
		return 0;
	}
	ch.size = s.hit_b ? m->b : s.below ? s.below : s.least;
	r = for_each_perm(m, choose_one, &ch);
	if (r < 0)
		return r;
	*ret = (struct dhint){ ch.best ? ch.best : m->all, false };
	return 0;
}

static size_t store_needed(const struct alloc_topo *t, enum numa_policy policy,
			   const struct numa_hints *pv, size_t n)
{
	size_t need = 0;

	for (size_t i = 0; i < n; i++) {
		if (pv[i].kind == NUMA_HINTS_LIST)
			need += pv[i].n;
		else if (pv[i].kind == NUMA_HINTS_CAPACITY && policy == NUMA_POLICY_SINGLE_NUMA_NODE)
			need += t->n_nodes;
	}
	return need;
}

static int check_cap(const struct merger *m, const struct numa_capacity *c)
{
	if (!c->request || (c->must & ~m->all) || !c->min_affinity ||
	    c->min_affinity > m->n_nodes || c->min_fit > m->n_nodes)
		return -EINVAL;
	return 0;
}

/* kubelet filterSingleNumaHints: one-node preferred hints and preferred
 * "no preference" only. */
static bool single_ok(const struct dhint *h)
{
	return h->pref && popc(h->mask) <= 1;
}

/* An explicit list on dense masks into store; single keeps single_ok only. */
static int add_list(const struct alloc_topo *t, const struct numa_hints *pv, bool single,
		    struct dhint *store, size_t *used, struct dlist *ret)
{
	struct dhint *h = store + *used;
	size_t k = 0;

	if (!pv->list)
		return -EINVAL;
	for (size_t j = 0; j < pv->n; j++) {
		struct dhint d = { 0, pv->list[j].preferred };

		if (to_dense(t, &pv->list[j].nodes, &d.mask) < 0)
			return -EINVAL;
		if (!single || single_ok(&d))
			h[k++] = d;
	}
	*used += k;
	*ret = (struct dlist){ h, k };
	return 0;
}

/* single-numa-node sees the implicit provider as its one-node preferred
 * hints: {i} when one node is preferred (min_affinity 1) and fits. */
static void add_single_cap(const struct merger *m, const struct numa_capacity *c,
			   struct dhint *store, size_t *used, struct dlist *ret)
{
	struct dhint *h = store + *used;
	size_t k = 0;

	for (unsigned i = 0; c->min_affinity == 1 && i < m->n_nodes; i++)
		if (cap_fits(c, bit(i)))
			h[k++] = (struct dhint){ bit(i), true };
	*used += k;
	*ret = (struct dlist){ h, k };
}

/* kubelet filterProvidersHints (+ filterSingleNumaHints), then B. */
static int build(struct merger *m, const struct alloc_topo *t, enum numa_policy policy,
		 const struct numa_hints *pv, size_t n, struct dhint *store)
{
	bool single = policy == NUMA_POLICY_SINGLE_NUMA_NODE;
	size_t used = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		struct dlist *l = &m->lists[m->n_lists];
		const struct dhint *one = NULL;

		switch (pv[i].kind) {
		case NUMA_HINTS_ANY:
			one = &any_preferred;
			break;
		case NUMA_HINTS_LIST:
			if (!pv[i].n) {
				one = &any_unpreferred;
				break;
			}
			r = add_list(t, &pv[i], single, store, &used, l);
			if (r < 0)
				return r;
			m->n_lists++;
			continue;
		case NUMA_HINTS_CAPACITY:
			r = check_cap(m, &pv[i].cap);
			if (r < 0)
				return r;
			if (!pv[i].cap.min_fit) {
				one = &any_unpreferred;
				break;
			}
			if (single) {
				add_single_cap(m, &pv[i].cap, store, &used, l);
				m->n_lists++;
				continue;
			}
			if (m->cap)
				return -EOPNOTSUPP;
			m->cap = &pv[i].cap;
			continue;
		default:
			return -EINVAL;
		}
		if (!single || single_ok(one))
			*l = (struct dlist){ one, 1 };
		else
			*l = (struct dlist){ one, 0 };
		m->n_lists++;
	}
	return 0;
}

/* kubelet maxOfMinAffinityCounts over the filtered providers. */
static unsigned widest_need(const struct merger *m)
{
	unsigned b = m->cap ? m->cap->min_fit : 0;

	for (size_t i = 0; i < m->n_lists; i++) {
		unsigned least = 0;

		for (size_t j = 0; j < m->lists[i].n; j++) {
			unsigned c = popc(m->lists[i].h[j].mask);

			if (c && (!least || c < least))
				least = c;
		}
		if (least > b)
			b = least;
	}
	return b;
}

static int init_merger(struct merger *m, const struct alloc_topo *t, enum numa_policy policy,
		       const struct numa_opts *opts, const struct numa_hints *pv, size_t n,
		       struct dhint *store)
{
	uint64_t perms = 1;
	int r;

	*m = (struct merger){ .all = all_nodes(t), .n_nodes = t->n_nodes };
	m->closest = opts && opts->prefer_closest && policy != NUMA_POLICY_SINGLE_NUMA_NODE;
	m->dist = opts ? opts->distance : NULL;
	if (m->closest && !m->dist)
		return -EINVAL;
	r = build(m, t, policy, pv, n, store);
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n_lists; i++) {
		perms *= m->lists[i].n ? m->lists[i].n : 1;
		if (perms > NUMA_MAX_PERMUTATIONS)
			return -E2BIG;
	}
	if (m->cap)
		sort_desc(m->cap->avail, m->n_nodes, m->order);
	m->b = widest_need(m);
	return 0;
}

int numa_merge(const struct alloc_topo *t, enum numa_policy policy,
	       const struct numa_opts *opts, const struct numa_hints *providers,
	       size_t n, struct numa_hint *ret)
{
	struct dhint *store = NULL, best;
	struct merger m;
	size_t need;
	int r;

	if (!topo_ok(t) || !ret || (n && !providers) || (unsigned)policy > NUMA_POLICY_SINGLE_NUMA_NODE)
		return -EINVAL;
	if (n > NUMA_MAX_PROVIDERS)
		return -E2BIG;
	if (policy == NUMA_POLICY_NONE) {
		/* kubelet's none policy hands out no affinity at all. */
		*ret = (struct numa_hint){ .preferred = false };
		return 0;
	}
	need = store_needed(t, policy, providers, n);
	if (need && !(store = malloc(need * sizeof(*store))))
		return -ENOMEM;
	r = init_merger(&m, t, policy, opts, providers, n, store);
	if (r == 0)
		r = merge_dense(&m, &best);
	free(store);
	if (r < 0)
		return r;
	/* single-numa-node reports "every node" as no affinity at all. */
	if (policy == NUMA_POLICY_SINGLE_NUMA_NODE && best.mask == m.all)
		best.mask = 0;
	to_ids(t, best.mask, &ret->nodes);
	ret->preferred = best.pref;
	return 0;
}
