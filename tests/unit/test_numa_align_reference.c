// SPDX-License-Identifier: Apache-2.0
/*
 * NUMA alignment (numa_align.h) against answers found another way: at 64
 * nodes, brute force over all masks of up to 3 nodes; on up to 8 nodes,
 * kubelet's own limit, a randomized check of the implicit CPU hints
 * against a literal replay of kubelet (full hint listing, full cross
 * product, HintMerger.compare fold). Both draw from one pseudo-random
 * sequence, in this order, so the cases are the same at every run.
 */
#include "test_numa_align.h"

/* At 64 nodes, compare with brute force over all masks of up to 3 nodes. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_sixty_four_nodes_brute(void **state)
{
	struct alloc_topo *t = tl_generate(4, 16, 4, 4);

	(void)state;
	for (int trial = 0; trial < 40; trial++) {
		unsigned free_[64] = { 0 }, n = 17 + (unsigned)(rnd() % 32);	/* 2-3 nodes */
		unsigned need = n <= 32 ? 2 : 3;
		uint64_t want = 0;
		struct cpumask a;
		struct numa_hint best;
		int r;

		cpumask_zero(&a);
		for (unsigned cpu = 0; cpu < 1024; cpu++)
			if (rnd() % 4 != 0) {
				cpumask_set(&a, cpu);
				free_[cpu / 16]++;
			}
		/* lowest mask of `need` nodes with >= n free, by increasing value */
		for (unsigned hi = need - 1; hi < 64 && !want; hi++)
			for (unsigned mid = need - 2; mid < hi && !want; mid++) {
				if (need == 2) {
					if (free_[mid] + free_[hi] >= n)
						want = (1ULL << mid) | (1ULL << hi);
					continue;
				}
				for (unsigned lo = 0; lo < mid && !want; lo++)
					if (free_[lo] + free_[mid] + free_[hi] >= n)
						want = (1ULL << lo) | (1ULL << mid) | (1ULL << hi);
			}
		{
			struct numa_hints h;

			assert_int_equal(numa_cpu_hints(t, &a, NULL, n, &h), 0);
			r = numa_admit(t, NUMA_POLICY_RESTRICTED, NULL, &h, 1, &best, NULL, 0);
		}
		if (!want) {
			assert_int_equal(r, -EXDEV);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(best.nodes.bits[0], want);
	}
	free(t);
}

/* ---- kubelet, replayed literally ------------------------------------ */

/* A hint on dense node indexes; mask 0 = nil. */
struct rh {
	uint64_t mask;
	bool pref;
};

static void ref_combos(unsigned n, unsigned size, unsigned start, uint64_t acc, unsigned depth,
		       uint64_t *out, size_t *k)
{
	if (depth == size) {
		out[(*k)++] = acc;
		return;
	}
	for (unsigned i = start; i < n; i++)
		ref_combos(n, size, i + 1, acc | (1ULL << i), depth + 1, out, k);
}

/* generateCPUTopologyHints, over bitmask.IterateBitMasks order. */
static size_t ref_cpu_hints(const struct alloc_topo *t, const struct cpumask *avail,
			    const struct cpumask *reuse, unsigned req, struct rh *out)
{
	static uint64_t masks[1 << 8];
	unsigned n = t->n_nodes, min_aff = n;
	size_t nm = 0, k = 0;
	int cpu;

	for (unsigned size = 1; size <= n; size++)
		ref_combos(n, size, 0, 0, 0, masks, &nm);
	for (size_t i = 0; i < nm; i++) {
		unsigned in_mask = 0, matching = 0;
		bool skip = false;

		cpumask_for_each(cpu, &t->cpus)
			if (masks[i] >> t->node_of[cpu] & 1)
				in_mask++;
		if (in_mask >= req && (unsigned)__builtin_popcountll(masks[i]) < min_aff)
			min_aff = (unsigned)__builtin_popcountll(masks[i]);
		cpumask_for_each(cpu, reuse) {
			if (!(masks[i] >> t->node_of[cpu] & 1))
				skip = true;
			matching++;
		}
		if (skip)
			continue;
		cpumask_for_each(cpu, avail)
			if (masks[i] >> t->node_of[cpu] & 1)
				matching++;
		if (matching >= req)
			out[k++] = (struct rh){ masks[i], false };
	}
	for (size_t i = 0; i < k; i++)
		out[i].pref = (unsigned)__builtin_popcountll(out[i].mask) == min_aff;
	return k;
}

struct ref_merger {
	uint64_t all;
	unsigned b;
	const uint8_t (*dist)[ALLOC_MAX_NODES];	/* NULL: narrowest */
};

static int cnt(uint64_t m)
{
	return __builtin_popcountll(m);
}

static bool ref_narrower(uint64_t a, uint64_t b)
{
	return cnt(a) == cnt(b) ? a < b : cnt(a) < cnt(b);
}

static double ref_avg(const struct ref_merger *r, uint64_t m)
{
	double sum = 0, n = 0;

	for (uint64_t a = m; a; a &= a - 1)
		for (uint64_t b = m; b; b &= b - 1) {
			sum += r->dist[__builtin_ctzll(a)][__builtin_ctzll(b)];
			n++;
		}
	return sum / n;
}

/* CompareNUMAAffinityMasks: true when the candidate wins. */
static bool ref_cmp_masks(const struct ref_merger *r, uint64_t cur, uint64_t cand)
{
	uint64_t best;

	if (cand == cur)
		return false;
	if (!r->dist || cnt(cur) != cnt(cand)) {
		best = ref_narrower(cur, cand) ? cur : cand;
	} else {
		double dc = ref_avg(r, cur), dn = ref_avg(r, cand);

		if (dc == dn)
			best = cur < cand ? cur : cand;
		else
			best = dc < dn ? cur : cand;
	}
	return best != cur;
}

/* HintMerger.compare: true when the candidate replaces the current one. */
static bool ref_compare(const struct ref_merger *r, const struct rh *cur, bool have,
			const struct rh *cand)
{
	int b = (int)r->b;

	if (cnt(cand->mask) == 0)
		return false;
	if (!have)
		return true;
	if (!cur->pref && cand->pref)
		return true;
	if (cur->pref && !cand->pref)
		return false;
	if (cur->pref && cand->pref)
		return ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cur->mask) > b)
		return ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cur->mask) == b)
		return cnt(cand->mask) == b && ref_cmp_masks(r, cur->mask, cand->mask);
	if (cnt(cand->mask) > b)
		return false;
	if (cnt(cand->mask) == b)
		return true;
	if (cnt(cand->mask) > cnt(cur->mask))
		return true;
	if (cnt(cand->mask) < cnt(cur->mask))
		return false;
	return ref_cmp_masks(r, cur->mask, cand->mask);
}

struct ref_provider {
	bool any;		/* nil hints: no preference */
	const struct rh *h;
	size_t n;
};

static struct rh ref_merge(unsigned n_nodes, enum numa_policy pol,
			   const uint8_t (*dist)[ALLOC_MAX_NODES], const struct ref_provider *pv,
			   size_t npv)
{
	static const struct rh nil_pref = { 0, true }, nil_unpref = { 0, false };
	static struct rh store[8][1 << 8];
	size_t sizes[8], idx[8] = { 0 }, nl = 0;
	struct ref_merger r = { .all = n_nodes >= 64 ? ~0ULL : (1ULL << n_nodes) - 1 };
	bool single = pol == NUMA_POLICY_SINGLE_NUMA_NODE, have = false;
	struct rh best = { 0 };

	r.dist = single ? NULL : dist;
	for (size_t i = 0; i < npv; i++, nl++) {	/* filterProvidersHints */
		const struct rh *src = pv[i].any ? &nil_pref : pv[i].n ? pv[i].h : &nil_unpref;
		size_t n = pv[i].any || !pv[i].n ? 1 : pv[i].n;

		sizes[nl] = 0;
		for (size_t j = 0; j < n; j++)
			if (!single || (src[j].pref && cnt(src[j].mask) <= 1))
				store[nl][sizes[nl]++] = src[j];
	}
	for (size_t i = 0; i < nl; i++) {	/* maxOfMinAffinityCounts */
		int least = 0;

		for (size_t j = 0; j < sizes[i]; j++)
			if (store[i][j].mask && (!least || cnt(store[i][j].mask) < least))
				least = cnt(store[i][j].mask);
		if (least > (int)r.b)
			r.b = (unsigned)least;
	}
	for (size_t i = 0; i < nl; i++)
		if (!sizes[i])
			goto out;
	for (;;) {
		struct rh cand = { r.all, true };
		uint64_t first = 0;
		size_t i;

		for (i = 0; i < nl; i++) {	/* mergePermutation */
			const struct rh *h = &store[i][idx[i]];

			if (h->mask) {
				if (!first)
					first = h->mask;
				if (h->mask != first)
					cand.pref = false;
				cand.mask &= h->mask;
			}
			if (!h->pref)
				cand.pref = false;
		}
		if (ref_compare(&r, &best, have, &cand)) {
			best = cand;
			have = true;
		}
		for (i = 0; i < nl; i++) {
			if (++idx[i] < sizes[i])
				break;
			idx[i] = 0;
		}
		if (i == nl)
			break;
	}
out:
	if (!have)
		best = (struct rh){ r.all, false };
	if (single && best.mask == r.all)
		best.mask = 0;
	return best;
}

static uint64_t dense_of(const struct alloc_topo *t, const struct cpumask *ids)
{
	uint64_t d = 0;

	for (unsigned i = 0; i < t->n_nodes; i++)
		if (cpumask_test(ids, (unsigned)t->node_id[i]))
			d |= 1ULL << i;
	return d;
}

static void ids_of(const struct alloc_topo *t, uint64_t d, struct cpumask *ret)
{
	cpumask_zero(ret);
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (d >> i & 1)
			cpumask_set(ret, (unsigned)t->node_id[i]);
}

/* A random machine of n <= 8 nodes, 1-4 CPUs each, node ids 0,1,.. or 0,3,.. */
static struct alloc_topo *random_topo(unsigned n)
{
	struct alloc_cpu_desc d[64];
	struct alloc_topo *t = calloc(1, sizeof(*t));
	unsigned stride = rnd() % 2 ? 1 : 3, cpu = 0;

	assert_non_null(t);
	for (unsigned node = 0; node < n; node++)
		for (unsigned k = 1 + (unsigned)(rnd() % 4); k; k--, cpu++)
			d[cpu] = (struct alloc_cpu_desc){ .cpu = cpu, .core = cpu, .socket = 0,
							  .uncore = node, .node = (int)(node * stride) };
	assert_int_equal(alloc_topo_build(d, cpu, t), 0);
	return t;
}

/* A random explicit provider: ANY, empty, or 1-4 random hints. */
static void random_list(const struct alloc_topo *t, struct rh *rh, struct numa_hint *api,
			struct ref_provider *rp, struct numa_hints *ap)
{
	unsigned shape = (unsigned)(rnd() % 8);
	uint64_t all = (1ULL << t->n_nodes) - 1;

	if (shape == 0) {
		*rp = (struct ref_provider){ .any = true };
		*ap = (struct numa_hints){ .kind = NUMA_HINTS_ANY };
		return;
	}
	if (shape == 1) {
		*rp = (struct ref_provider){ .h = rh, .n = 0 };
		*ap = list_of(api, 0);
		return;
	}
	rp->any = false;
	rp->h = rh;
	rp->n = 1 + rnd() % 4;
	for (size_t j = 0; j < rp->n; j++) {
		rh[j].mask = rnd() % 6 == 0 ? 0 : rnd() & all;	/* some nil (and empty) */
		rh[j].pref = rnd() % 3 != 0;
		ids_of(t, rh[j].mask, &api[j].nodes);
		api[j].preferred = rh[j].pref;
	}
	*ap = list_of(api, rp->n);
}

static void test_matches_kubelet_fold(void **state)
{
	static struct rh cpu_ref[1 << 8];
	static struct numa_hint cpu_api[1 << 8];
	static const enum numa_policy pols[] = { NUMA_POLICY_BEST_EFFORT, NUMA_POLICY_RESTRICTED,
						 NUMA_POLICY_SINGLE_NUMA_NODE };
	uint8_t dist[ALLOC_MAX_NODES][ALLOC_MAX_NODES];
	unsigned checked = 0, preferred = 0;

	(void)state;
	for (int trial = 0; trial < 6000; trial++) {
		struct alloc_topo *t = random_topo(1 + (unsigned)(rnd() % 8));
		unsigned total = cpumask_weight(&t->cpus), req = (unsigned)(rnd() % (total + 2));
		struct cpumask avail, reuse;
		struct rh lists[2][4];
		struct numa_hint api[2][4], got;
		struct ref_provider rp[3];
		struct numa_hints ap[3];
		size_t n_extra = rnd() % 3, nref;
		enum numa_policy pol = pols[rnd() % 3];
		bool closest = rnd() % 2;
		struct numa_opts opts = { .prefer_closest = closest, .distance = dist };
		struct rh want;
		int cpu, r;

		cpumask_zero(&avail);
		cpumask_zero(&reuse);
		cpumask_for_each(cpu, &t->cpus) {
			unsigned x = (unsigned)(rnd() % 8);

			if (x < 5)
				cpumask_set(&avail, cpu);
			else if (x >= 6 && trial % 2 == 0)
				cpumask_set(&reuse, cpu);
		}
		for (unsigned i = 0; i < t->n_nodes; i++)	/* asymmetric half the time */
			for (unsigned j = 0; j <= i; j++) {
				static const uint8_t d[] = { 12, 20, 21, 30 };

				dist[i][j] = dist[j][i] = i == j ? 10 : d[rnd() % 4];
				if (trial % 2)
					dist[j][i] = i == j ? 10 : d[rnd() % 4];
			}

		/* the CPU hints: implicit vs kubelet's full list */
		assert_int_equal(numa_cpu_hints(t, &avail, &reuse, req, &ap[0]), 0);
		nref = ref_cpu_hints(t, &avail, &reuse, req, cpu_ref);
		rp[0] = (struct ref_provider){ .any = req == 0, .h = cpu_ref, .n = nref };
		if (req) {
			assert_int_equal(numa_hints_expand(t, &ap[0], 0, cpu_api, 1 << 8), (int)nref);
			for (size_t i = 0; i < nref; i++) {
				assert_int_equal(dense_of(t, &cpu_api[i].nodes), cpu_ref[i].mask);
				assert_int_equal(cpu_api[i].preferred, cpu_ref[i].pref);
			}
		}
		for (size_t i = 0; i < n_extra; i++)
			random_list(t, lists[i], api[i], &rp[1 + i], &ap[1 + i]);

		want = ref_merge(t->n_nodes, pol, closest ? dist : NULL, rp, 1 + n_extra);
		r = numa_merge(t, pol, &opts, ap, 1 + n_extra, &got);
		assert_int_equal(r, 0);
		if (dense_of(t, &got.nodes) != want.mask || got.preferred != want.pref)
			fail_msg("trial %d: %s nodes=%u req=%u closest=%d extra=%zu: got %#llx/%d "
				 "want %#llx/%d", trial, numa_policy_name(pol), t->n_nodes, req,
				 closest, n_extra, (unsigned long long)dense_of(t, &got.nodes),
				 got.preferred, (unsigned long long)want.mask, want.pref);
		/* the same with the CPU hints listed out explicitly */
		if (req) {
			struct numa_hints listed[3];

			memcpy(listed, ap, sizeof(ap));
			listed[0] = list_of(cpu_api, nref);
			assert_int_equal(numa_merge(t, pol, &opts, listed, 1 + n_extra, &got), 0);
			assert_int_equal(dense_of(t, &got.nodes), want.mask);
			assert_int_equal(got.preferred, want.pref);
		}
		checked++;
		preferred += want.pref;
		free(t);
	}
	/* the random cases cover both outcomes */
	assert_true(preferred > checked / 5 && preferred < checked * 4 / 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sixty_four_nodes_brute),
		cmocka_unit_test(test_matches_kubelet_fold),
	};

	return cmocka_run_group_tests_name("numa_align against references", tests, NULL, NULL);
}
