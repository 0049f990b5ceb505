// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's distributed CPU choice (takeByTopologyNUMADistributed, KEP-2902,
 * and its resize variant): try 1, 2, ... NUMA nodes; among the node
 * combinations that can take an even share each, pick the one whose
 * leftover ("remainder") groups leave the free CPUs per node most
 * balanced (lowest standard deviation, rounded to 3 decimals as kubelet
 * does); hand out the shares with the packed algorithm, node by node.
 *
 * Kubelet enumerates every k-combination of nodes and, for each, every
 * subset of it for the remainder: 2^16 subsets per combination on a
 * 16-node machine, far over our budget. We return the same answer with
 * less work, relying on three facts:
 *  - Two combinations whose members have the same (free, held[, sockets])
 *    values in the same order score the same, and only the first one
 *    enumerated can win (ties keep the earlier). So only the
 *    lexicographically first of each such class is visited ("canonical":
 *    a member is never chosen after skipping an equal one). The same holds
 *    for remainder subsets.
 *  - When the remainder is q whole groups, any subset of q or more nodes
 *    gives one group to each of its first q nodes. The best such score
 *    puts them on the q nodes with most CPUs left; if the greedy optimum
 *    over all ways to place q groups rounds to the same score, smaller
 *    subsets cannot beat it and are not enumerated.
 *  - Sum bounds stop the search as soon as the remaining nodes cannot hold
 *    the request.
 * The first-best subset is searched for only in the winning combination.
 */
#include <errno.h>
#include <float.h>
#include <string.h>
#include "kube_alloc.h"

#define MAXN	ALLOC_MAX_NODES

/* The candidate NUMA nodes, in kubelet's order, and the request. */
struct cand {
	unsigned n;
	uint16_t node[MAXN];
	int avail[MAXN], held[MAXN];
	uint64_t sockets[MAXN];		/* sockets the node's CPUs lie in */
	uint8_t cls[MAXN];		/* first candidate with equal values */
	uint64_t must;			/* candidates holding kept CPUs */
	int want, group, held_total;
	bool align;
};

/* Best combination of one size, and the search state. */
struct pick {
	const struct cand *c;
	unsigned k;
	uint8_t cur[MAXN];
	int top_sum[MAXN + 1][MAXN + 1], top_grp[MAXN + 1][MAXN + 1];
	bool ok[MAXN];		/* may be a member at all (see member_ok) */
	bool found, one_socket, stop;
	double bal;
	uint8_t combo[MAXN];
};

/* One combination after the even share: the free CPUs left per
 * candidate, the remainder and the nodes that may take it. */
struct share {
	int dist, alloc_rem, rem;
	int v[MAXN];
	unsigned nr;
	uint8_t r[MAXN];	/* candidate index of each remainder node */
	uint8_t rc[MAXN];	/* canonical class among r[] by v */
};

/* Go's math.Round: half away from zero; exact below 2^52, no libm. */
static double round_half_away(double x)
{
	double t = (double)(long long)x;

	if (__builtin_fabs(x - t) >= 0.5)
		t += x > 0 ? 1 : -1;
	return t;
}

/*
 * Correctly rounded square root (as Go's math.Sqrt) without libm, which
 * the build does not link: the IEEE instruction where there is one, else
 * the integer square root of the mantissa, rounded to nearest.
 */
static double sqrt_rn(double x)
{
#if defined(__x86_64__)
	__asm__("sqrtsd %1, %0" : "=x"(x) : "x"(x));
	return x;
#elif defined(__aarch64__)
	__asm__("fsqrt %d0, %d1" : "=w"(x) : "w"(x));
	return x;
#else
	uint64_t bits, m;
	unsigned __int128 rem, bit, r = 0;
	int e;

	if (!(x > 0))
		return 0;
	memcpy(&bits, &x, sizeof(bits));
	e = (int)(bits >> 52 & 0x7ff) - 1075;	/* normal numbers only */
	m = (bits & ((1ULL << 52) - 1)) | 1ULL << 52;
	if (e & 1) {
		m <<= 1;
		e--;
	}
	rem = (unsigned __int128)m << 52;	/* 2^104 <= rem < 2^106 */
	for (bit = (unsigned __int128)1 << 104; bit; bit >>= 2) {
		if (rem >= r + bit) {
			rem -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	if (rem > r)
		r++;			/* round to nearest; ties cannot occur */
	e = (e - 52) / 2;
	if (r >> 53) {
		r >>= 1;
		e++;
	}
	bits = (uint64_t)(e + 52 + 1023) << 52 | ((uint64_t)r & ((1ULL << 52) - 1));
	memcpy(&x, &bits, sizeof(x));
	return x;
#endif
}

/* kubelet's "balance score": population standard deviation of free CPUs
 * per candidate node, mean and result rounded to 3 decimals. */
static double balance(const int *v, unsigned n)
{
	double sum = 0, mean, acc = 0;

	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	mean = round_half_away(sum / n * 1000) / 1000;
	for (unsigned i = 0; i < n; i++)
		acc += (v[i] - mean) * (v[i] - mean);
	return round_half_away(sqrt_rn(acc / n) * 1000) / 1000;
}

/*
 * kubelet's remainder hand-out on subset s (indexes into sh->r): one group
 * per node per pass, skipping nodes with less than a group left, until
 * the remainder reaches 0. Like kubelet it only stops a pass when the
 * remainder is exactly 0, so a remainder that is not a multiple of the
 * group size overshoots. false when the subset lacks the groups.
 */
static bool hand_out(const struct share *sh, int g, const uint8_t *s, unsigned ns, int *w)
{
	int groups = 0, rem = sh->rem;

	memcpy(w, sh->v, sizeof(sh->v));
	for (unsigned i = 0; i < ns; i++)
		groups += w[sh->r[s[i]]] / g;
	if (groups * g < rem)
		return false;
	while (rem > 0) {
		for (unsigned i = 0; i < ns; i++) {
			int *x = &w[sh->r[s[i]]];

			if (rem == 0)
				break;
			if (*x < g)
				continue;
			*x -= g;
			rem -= g;
		}
	}
	return true;
}

/* Subset search over sh->r: first (size descending, lexicographic) subset
 * with the lowest score, or the first scoring exactly `target`. */
struct ssearch {
	const struct share *sh;
	unsigned n;		/* candidates, for scoring */
	int g;
	bool find;		/* stop at target instead of minimising */
	double target, best;
	uint8_t idx[MAXN], best_idx[MAXN];
	unsigned size, best_size;
};

static bool visit(struct ssearch *ss)
{
	int w[MAXN];
	double b;

	if (!hand_out(ss->sh, ss->g, ss->idx, ss->size, w))
		return false;
	b = balance(w, ss->n);
	if (ss->find ? b != ss->target : b >= ss->best)
		return false;
	ss->best = b;
	ss->best_size = ss->size;
	memcpy(ss->best_idx, ss->idx, ss->size);
	return ss->find;
}

/* Canonical subsets of size ss->size in lex order; true = stop. */
static bool subsets(struct ssearch *ss, unsigned depth, int prev)
{
	uint64_t gap = 0;

	if (depth == ss->size)
		return visit(ss);
	for (unsigned y = (unsigned)(prev + 1); y + (ss->size - depth) <= ss->sh->nr; y++) {
		if (!(gap >> ss->sh->rc[y] & 1)) {
			ss->idx[depth] = (uint8_t)y;
			if (subsets(ss, depth + 1, (int)y))
				return true;
		}
		gap |= 1ULL << ss->sh->rc[y];
	}
	return false;
}

/* Sizes hi down to lo; returns true when a find succeeded. */
static bool sizes(struct ssearch *ss, unsigned hi, unsigned lo)
{
	for (unsigned s = hi; s >= lo && s > 0; s--) {
		ss->size = s;
		if (subsets(ss, 0, -1))
			return true;
	}
	return false;
}

/* Score of giving one group to each of the q nodes with most left. */
static double top_q(const struct share *sh, int g, unsigned q, unsigned n)
{
	int w[MAXN];
	bool used[MAXN] = { false };

	memcpy(w, sh->v, sizeof(w));
	for (unsigned j = 0; j < q; j++) {
		int bi = -1;

		for (unsigned i = 0; i < sh->nr; i++)
			if (!used[i] && (bi < 0 || sh->v[sh->r[i]] > sh->v[sh->r[bi]]))
				bi = (int)i;
		used[bi] = true;
		w[sh->r[bi]] -= g;
	}
	return balance(w, n);
}

/* Lowest score of any placement of q groups (greedy on a convex cost);
 * DBL_MAX when the nodes cannot hold q groups. */
static double greedy_q(const struct share *sh, int g, unsigned q, unsigned n)
{
	int w[MAXN];

	memcpy(w, sh->v, sizeof(w));
	for (unsigned j = 0; j < q; j++) {
		int bi = -1;

		for (unsigned i = 0; i < sh->nr; i++) {
			int x = w[sh->r[i]];

			if (x >= g && (bi < 0 || x > w[sh->r[bi]]))
				bi = (int)i;
		}
		if (bi < 0)
			return DBL_MAX;
		w[sh->r[bi]] -= g;
	}
	return balance(w, n);
}

/* Canonical (q-1)-subsets of [0, lim) followed by lim; true = found. */
static bool prefixes(struct ssearch *ss, unsigned depth, int prev, unsigned q, unsigned lim)
{
	uint64_t gap = 0;

	if (depth == q - 1) {
		for (unsigned y = (unsigned)(prev + 1); y < lim; y++)
			if (ss->sh->rc[y] == ss->sh->rc[lim])
				return false;	/* an equal earlier prefix was tried */
		ss->idx[depth] = (uint8_t)lim;
		for (unsigned y = lim + 1; y < ss->sh->nr; y++)
			ss->idx[++depth] = (uint8_t)y;
		ss->size = depth + 1;
		return visit(ss);
	}
	for (unsigned y = (unsigned)(prev + 1); y + (q - 1 - depth) <= lim; y++) {
		if (!(gap >> ss->sh->rc[y] & 1)) {
			ss->idx[depth] = (uint8_t)y;
			if (prefixes(ss, depth + 1, (int)y, q, lim))
				return true;
		}
		gap |= 1ULL << ss->sh->rc[y];
	}
	return false;
}

/*
 * kubelet's bestLocalBalance for one combination: the lowest score over
 * remainder subsets (DBL_MAX if none works). With ret_s, also the subset
 * kubelet would keep (first in its enumeration with that score), as
 * candidate indexes; *ret_ns = its size.
 */
static double local_best(const struct share *sh, int g, unsigned n, uint8_t *ret_s,
			 unsigned *ret_ns)
{
	struct ssearch ss = { .sh = sh, .n = n, .g = g, .best = DBL_MAX };
	unsigned q = (unsigned)((sh->rem + g - 1) / g);
	double va = DBL_MAX, low;

	if (sh->rem == 0)
		return balance(sh->v, n);
	if (sh->rem % g == 0 && sh->nr >= q)
		va = top_q(sh, g, q, n);
	low = sh->rem % g == 0 ? greedy_q(sh, g, q, n) : -1;
	if (va != DBL_MAX && low == va) {
		ss.best = va;
	} else if (sh->rem % g == 0) {
		sizes(&ss, q - 1 < sh->nr ? q - 1 : sh->nr, 1);
		if (va <= ss.best)
			ss.best = va;
	} else {
		sizes(&ss, sh->nr, 1);	/* overshooting remainders: no shortcut */
		if (ret_s)
			goto out;
	}
	if (!ret_s)
		return ss.best;
	if (ss.best == va && va != DBL_MAX) {
		ss.find = true;
		ss.target = va;
		for (unsigned s = sh->nr; s >= q; s--)
			if (prefixes(&ss, 0, -1, q, sh->nr - 1 - (s - q)))
				break;
	}
out:
	*ret_ns = ss.best == DBL_MAX ? 0 : ss.best_size;
	for (unsigned i = 0; i < *ret_ns; i++)
		ret_s[i] = sh->r[ss.best_idx[i]];
	return ss.best;
}

/*
 * The even share of combination m[0..k) (candidate indexes): kubelet's
 * per-combination checks, distribution, CPUs left per node and the
 * remainder. false when kubelet would skip the combination.
 */
static bool share_of(const struct cand *c, const uint8_t *m, unsigned k, struct share *sh)
{
	int g = c->group, sum = c->held_total, groups = 0, need_rem;

	for (unsigned i = 0; i < k; i++) {
		sum += c->avail[m[i]];
		groups += (c->avail[m[i]] + c->held[m[i]]) / g;
	}
	if (sum < c->want || groups * g < c->want)
		return false;
	sh->dist = c->want / (int)k / g * g;
	for (unsigned i = 0; c->align && i < k; i++) {
		int whole = (c->avail[m[i]] + c->held[m[i]]) / g * g;

		if (sh->dist > whole)
			sh->dist = whole;
	}
	need_rem = c->want - sh->dist * (int)k;
	sh->alloc_rem = 0;
	for (unsigned i = 0; i < k; i++) {
		int a = c->avail[m[i]], h = c->held[m[i]];

		if (a + h < sh->dist || h > sh->dist + need_rem)
			return false;
		if (h > sh->dist)
			sh->alloc_rem += h - sh->dist;
	}
	for (unsigned i = 0; i < c->n; i++)
		sh->v[i] = c->avail[i];
	for (unsigned i = 0; i < k; i++) {
		int a = c->avail[m[i]], h = c->held[m[i]];

		/* kubelet subtracts the held CPUs from the free ones when a
		 * node already holds more than its share */
		sh->v[m[i]] = h > sh->dist ? a - h : a - (sh->dist - h);
	}
	sh->rem = c->want - sh->dist * (int)k - sh->alloc_rem;
	if (sh->rem < 0)
		return false;
	sh->nr = 0;
	for (unsigned i = 0; i < k; i++)
		if (sh->v[m[i]] >= g)
			sh->r[sh->nr++] = m[i];
	for (unsigned i = 0; i < sh->nr; i++) {
		unsigned j = 0;

		while (sh->v[sh->r[j]] != sh->v[sh->r[i]])
			j++;
		sh->rc[i] = (uint8_t)j;
	}
	return true;
}

static bool one_socket(const struct cand *c, const uint8_t *m, unsigned k)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < k; i++)
		s |= c->sockets[m[i]];
	return s && !(s & (s - 1));
}

/* A complete combination: kubelet's comparison with the best so far. */
static void leaf(struct pick *p)
{
	const struct cand *c = p->c;
	struct share sh;
	uint64_t chosen = 0;
	bool in_one, better;
	double b;

	for (unsigned i = 0; i < p->k; i++)
		chosen |= 1ULL << p->cur[i];
	if (c->must & ~chosen || !share_of(c, p->cur, p->k, &sh))
		return;
	b = local_best(&sh, c->group, c->n, NULL, NULL);
	in_one = c->align && one_socket(c, p->cur, p->k);
	better = b < p->bal;
	if (c->align && in_one != p->one_socket)
		better = in_one;
	if (better) {
		p->found = true;
		p->bal = b;
		p->one_socket = in_one;
		memcpy(p->combo, p->cur, p->k);
	}
	if (p->bal == 0 && (!c->align || p->one_socket))
		p->stop = true;
}

/* Canonical k-combinations in lex order, pruned by sum bounds. */
static void combos(struct pick *p, unsigned depth, int prev, int sum, int grp)
{
	const struct cand *c = p->c;
	uint64_t gap = 0;
	unsigned left = p->k - depth;

	if (depth == p->k) {
		leaf(p);
		return;
	}
	for (unsigned y = (unsigned)(prev + 1); y + left <= c->n && !p->stop; y++) {
		if (sum + p->top_sum[y][left] + c->held_total < c->want ||
		    (grp + p->top_grp[y][left]) * c->group < c->want)
			break;
		if (p->ok[y] && !(gap >> c->cls[y] & 1)) {
			p->cur[depth] = (uint8_t)y;
			combos(p, depth + 1, (int)y, sum + c->avail[y],
			       grp + (c->avail[y] + c->held[y]) / c->group);
		}
		gap |= 1ULL << c->cls[y];
		if (c->must >> y & 1)
			break;	/* every later choice would leave it out */
	}
}

/* top[y][j]: largest total of j values among possible members y.. */
static void tops(const struct pick *p, unsigned k, int top[MAXN + 1][MAXN + 1], bool groups)
{
	const struct cand *c = p->c;

	for (unsigned j = 0; j <= k; j++)
		top[c->n][j] = j ? -(1 << 28) : 0;
	for (int y = (int)c->n - 1; y >= 0; y--) {
		int v = groups ? (c->avail[y] + c->held[y]) / c->group : c->avail[y];

		top[y][0] = 0;
		for (unsigned j = 1; j <= k; j++) {
			int with = p->ok[y] ? v + top[y + 1][j - 1] : -(1 << 28);

			top[y][j] = with > top[y + 1][j] ? with : top[y + 1][j];
		}
	}
}

/*
 * Without align-by-socket the even share of a k-combination does not
 * depend on its members, so kubelet's per-member tests (enough CPUs for
 * the share; no more kept CPUs than share plus remainder) rule nodes out
 * up front. false when a node that must be included is ruled out.
 */
static bool member_ok(struct pick *p)
{
	const struct cand *c = p->c;
	int g = c->group, dist = c->want / (int)p->k / g * g, need_rem = c->want - dist * (int)p->k;

	for (unsigned i = 0; i < c->n; i++) {
		p->ok[i] = c->align || (c->avail[i] + c->held[i] >= dist &&
					c->held[i] <= dist + need_rem);
		if (!p->ok[i] && c->must >> i & 1)
			return false;
	}
	return true;
}

/* Best combination of k nodes into *ret_sh / ret_m; false if none. */
static bool pick_k(const struct cand *c, unsigned k, uint8_t *ret_m, struct pick *p)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->k = k;
	p->bal = DBL_MAX;
	if (!member_ok(p))
		return false;
	tops(p, k, p->top_sum, false);
	tops(p, k, p->top_grp, true);
	combos(p, 0, -1, 0, 0);
	if (p->found)
		memcpy(ret_m, p->combo, k);
	return p->found;
}

struct dist_state {
	const struct alloc_topo *t;
	struct cpumask av, res;
	int need;
};

static void d_take(struct dist_state *s, const struct cpumask *cpus)
{
	cpumask_or(&s->res, &s->res, cpus);
	cpumask_andnot(&s->av, &s->av, cpus);
	s->need -= (int)cpumask_weight(cpus);
}

/* Packs `count` more CPUs into node x next to the ones already chosen
 * there (the resize variant keeps those and grows around them). */
static void fill_node(struct dist_state *s, unsigned x, int count, bool resize,
		      const struct kube_alloc_opts *po)
{
	struct cpumask in, held, got;

	cpumask_and(&in, &s->av, &s->t->node_cpus[x]);
	cpumask_and(&held, &s->res, &s->t->node_cpus[x]);
	if (resize) {
		if (kube_take_packed_resize(s->t, &in, cpumask_weight(&held) + (unsigned)count,
					    &held, &held, po, &got, NULL, 0) < 0)
			return;
		cpumask_andnot(&got, &got, &held);
	} else if (kube_take_packed(s->t, &in, (unsigned)count, po, &got, NULL, 0) < 0) {
		return;
	}
	d_take(s, &got);
}

static int node_free(const struct dist_state *s, unsigned x)
{
	struct cpumask m;

	cpumask_and(&m, &s->av, &s->t->node_cpus[x]);
	return (int)cpumask_weight(&m);
}

/* Hands out the chosen combination: shares, then remainder groups. */
static void allocate(struct dist_state *s, const struct cand *c, const uint8_t *m, unsigned k,
		     bool resize, const struct kube_alloc_opts *po)
{
	uint8_t rs[MAXN];
	unsigned nrs;
	struct share sh;
	int rem;

	share_of(c, m, k, &sh);
	local_best(&sh, c->group, c->n, rs, &nrs);
	for (unsigned i = 0; i < k; i++) {
		int held = c->held[m[i]];

		if (resize && held >= sh.dist)
			continue;
		fill_node(s, c->node[m[i]], sh.dist - held, resize, po);
	}
	rem = c->want - sh.dist * (int)k - sh.alloc_rem;
	while (rem > 0) {
		bool progress = false;

		for (unsigned i = 0; i < nrs; i++) {
			if (rem == 0)
				break;
			if (node_free(s, c->node[rs[i]]) < c->group)
				continue;
			fill_node(s, c->node[rs[i]], c->group, resize, po);
			rem -= c->group;
			progress = true;
		}
		if (!progress)
			break;	/* kubelet would spin here forever */
	}
}

/* Candidates: nodes with free CPUs in kubelet's order, with their counts. */
static void candidates(struct dist_state *s, bool resize, bool align, int want, int group,
		       struct cand *c)
{
	const struct alloc_topo *t = s->t;

	memset(c, 0, sizeof(*c));
	c->n = kube__node_order(t, &s->av, &s->res, resize, c->node);
	c->want = want;
	c->group = group;
	c->align = align;
	c->held_total = (int)cpumask_weight(&s->res);
	for (unsigned i = 0; i < c->n; i++) {
		unsigned x = c->node[i];
		struct cpumask m;
		int cpu;

		c->avail[i] = node_free(s, x);
		cpumask_and(&m, &s->res, &t->node_cpus[x]);
		c->held[i] = (int)cpumask_weight(&m);
		if (c->held[i])
			c->must |= 1ULL << i;
		cpumask_for_each(cpu, &t->node_cpus[x])
			c->sockets[i] |= 1ULL << t->socket_of[cpu];
	}
	for (unsigned i = 0; i < c->n; i++) {
		unsigned j = 0;

		while (c->avail[j] != c->avail[i] || c->held[j] != c->held[i] ||
		       (align && c->sockets[j] != c->sockets[i]))
			j++;
		c->cls[i] = (uint8_t)j;
	}
}

/* Nodes of the topology holding kept CPUs. */
static unsigned held_nodes(const struct dist_state *s)
{
	unsigned n = 0;

	for (unsigned x = 0; x < s->t->n_nodes; x++)
		n += cpumask_intersects(&s->res, &s->t->node_cpus[x]);
	return n;
}

/* kubelet rangeNUMANodesNeededToSatisfy, from the total request. */
static void numa_range(const struct dist_state *s, const struct cand *c, unsigned n, unsigned g,
		       unsigned *ret_min, unsigned *ret_max)
{
	unsigned all = cpumask_weight(&s->t->cpus);
	unsigned groups = (all - 1) / g + 1, per = (groups - 1) / s->t->n_nodes + 1;
	unsigned needed = (n - 1) / g + 1;

	*ret_min = (needed - 1) / per + 1;
	*ret_max = needed < c->n ? needed : c->n;
}

static int distributed(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
		       const struct cpumask *allocated, const struct cpumask *baseline,
		       const struct kube_alloc_opts *opts, bool resize, struct cpumask *ret,
		       char *reason, size_t len)
{
	unsigned g = opts->cpu_group_size ? opts->cpu_group_size : 1, lo, hi;
	struct kube_alloc_opts po = *opts;
	struct dist_state s = { .t = t };
	struct cpumask keep;
	struct pick p;
	struct cand c;
	uint8_t m[MAXN];
	int r;

	po.prefer_align_uncore = false;	/* kubelet: not for distributed yet */
	if (n % g)
		goto packed;
	cpumask_zero(&keep);
	if (resize && (r = kube__retained(allocated, baseline, n, &keep, reason, len)) < 0)
		return r;
	cpumask_and(&s.av, avail, &t->cpus);
	s.need = n > CPUSETD_MAX_CPUS ? CPUSETD_MAX_CPUS + 1 : (int)n;
	d_take(&s, &keep);
	if (s.need < 1) {
		*ret = s.res;
		return 0;
	}
	if (s.need > (int)cpumask_weight(&s.av)) {
		kube__reason(reason, len, "not enough cpus available to satisfy request: "
			     "requested=%u, available=%u", n, cpumask_weight(avail));
		return -ENOSPC;
	}
	candidates(&s, resize, opts->align_by_socket, (int)n, (int)g, &c);
	numa_range(&s, &c, n, g, &lo, &hi);
	if (resize && held_nodes(&s) > lo)
		lo = held_nodes(&s);
	/* kept CPUs on a node with nothing free: no combination can hold them */
	if (held_nodes(&s) != (unsigned)__builtin_popcountll(c.must))
		goto packed;
	for (unsigned k = lo; k <= hi; k++) {
		if (!pick_k(&c, k, m, &p))
			continue;
		allocate(&s, &c, m, k, resize, &po);
		if (s.need != 0) {
			kube__reason(reason, len, "accounting error, %s CPUs allocated, remaining: %d",
				     s.need > 0 ? "not enough" : "too many", s.need);
			return -EPROTO;
		}
		*ret = s.res;
		return 0;
	}
packed:
	if (resize)
		return kube_take_packed_resize(t, avail, n, allocated, baseline, &po, ret, reason,
					       len);
	return kube_take_packed(t, avail, n, &po, ret, reason, len);
}

int kube_take_distributed(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
			  const struct kube_alloc_opts *opts, struct cpumask *ret,
			  char *reason, size_t len)
{
	return distributed(t, avail, n, NULL, NULL, opts, false, ret, reason, len);
}

int kube_take_distributed_resize(const struct alloc_topo *t, const struct cpumask *avail,
				 unsigned n, const struct cpumask *allocated,
				 const struct cpumask *baseline, const struct kube_alloc_opts *opts,
				 struct cpumask *ret, char *reason, size_t len)
{
	return distributed(t, avail, n, allocated, baseline, opts, true, ret, reason, len);
}
