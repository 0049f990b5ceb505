// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's packed CPU choice (takeByTopologyNUMAPacked and its resize
 * variant): whole NUMA nodes and sockets first, then uncore caches, whole
 * cores, single CPUs, each level visited smallest-free-first.
 *
 * Design: one accumulator holds the free set, the chosen set and per-core,
 * per-node, per-socket and per-cache counts of both, updated on every
 * take, so ordering a level costs a pass over the cores and a sort of
 * packed (group, count, index) keys instead of kubelet's map scans. In
 * resize mode every level lists the elements that already hold chosen CPUs
 * first, and "full" counts chosen CPUs as kubelet's resize code does.
 * Everything lives on the stack (about 20 KiB); nothing is allocated.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kube_alloc.h"

#define MAXC	CPUSETD_MAX_CPUS
#define MAXU	(CPUSETD_MAX_CPUS + 1)	/* uncore groups + one for "unknown" */
#define BMW	((MAXU + 63) / 64)
#define MAXP	(ALLOC_MAX_NODES > ALLOC_MAX_SOCKETS ? ALLOC_MAX_NODES : ALLOC_MAX_SOCKETS)

enum lv { LV_NODE, LV_SOCKET, LV_CORE, LV_UNCORE };

struct kacc {
	const struct alloc_topo *t;
	struct cpumask avail;		/* kubelet's acc.details */
	struct cpumask result;
	struct cpumask unc_none;	/* CPUs with no uncore id: one group */
	int need;			/* may go negative, as in kubelet */
	bool resize, numa_first, spread;
	unsigned n_unc, per_socket;
	/* Per level and dense index: all, free and chosen CPUs. Only
	 * elements "touched" (holding free or chosen CPUs) are filled in;
	 * tot = 0 marks the others. */
	uint16_t tot[4][MAXU], cnt[4][MAXU], res[4][MAXU];
	uint8_t core_node[MAXC], core_sock[MAXC];
	uint16_t core_unc[MAXC];
	uint16_t touched[MAXC];		/* touched cores, in touch order */
	unsigned n_touched;
	/* Free CPUs of each core, ascending: head/next hold id + 1, 0 ends */
	uint16_t core_head[MAXC], core_tail[MAXC], cpu_next[MAXC];
};

void kube__reason(char *reason, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!reason || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, len, fmt, ap);
	va_end(ap);
}

static unsigned unc_of(const struct kacc *a, unsigned cpu)
{
	unsigned u = a->t->uncore_of[cpu];

	/* kubelet leaves an unknown cache id at 0: all such CPUs share one */
	return u == ALLOC_NONE ? a->t->n_uncores : u;
}

/* Set bits of m. The build has no -mpopcnt, so the builtin would be a
 * library call per word; CPU masks here are mostly zero words. */
static unsigned weight(const struct cpumask *m)
{
	unsigned n = 0;

	for (int i = 0; i < CPUSETD_MASK_WORDS; i++) {
		uint64_t x = m->bits[i];

		if (!x)
			continue;
		x -= (x >> 1) & 0x5555555555555555ULL;
		x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
		x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
		n += (unsigned)((x * 0x0101010101010101ULL) >> 56);
	}
	return n;
}

/* Fills in the topology facts of cpu's core, node, socket and cache the
 * first time one of their CPUs shows up. */
static void touch(struct kacc *a, unsigned cpu)
{
	const struct alloc_topo *t = a->t;
	unsigned core = t->core_of[cpu], u = unc_of(a, cpu);

	if (a->tot[LV_CORE][core])
		return;
	a->tot[LV_CORE][core] = (uint16_t)weight(&t->core_cpus[core]);
	a->core_node[core] = (uint8_t)t->node_of[cpu];
	a->core_sock[core] = (uint8_t)t->socket_of[cpu];
	a->core_unc[core] = (uint16_t)u;
	a->touched[a->n_touched++] = (uint16_t)core;
	if (!a->tot[LV_NODE][t->node_of[cpu]])
		a->tot[LV_NODE][t->node_of[cpu]] = (uint16_t)weight(&t->node_cpus[t->node_of[cpu]]);
	if (!a->tot[LV_SOCKET][t->socket_of[cpu]])
		a->tot[LV_SOCKET][t->socket_of[cpu]] =
			(uint16_t)weight(&t->socket_cpus[t->socket_of[cpu]]);
	if (!a->tot[LV_UNCORE][u])
		a->tot[LV_UNCORE][u] = (uint16_t)weight(u == t->n_uncores ? &a->unc_none :
								&t->uncore_cpus[u]);
}

/* Adds d to the per-level counters of cpu in tab. */
static void count(struct kacc *a, uint16_t tab[4][MAXU], unsigned cpu, int d)
{
	const struct alloc_topo *t = a->t;

	tab[LV_NODE][t->node_of[cpu]] += d;
	tab[LV_SOCKET][t->socket_of[cpu]] += d;
	tab[LV_CORE][t->core_of[cpu]] += d;
	tab[LV_UNCORE][unc_of(a, cpu)] += d;
}

#define for_each_bit(cpu, m, w, b)						\
	for ((w) = 0; (w) < CPUSETD_MASK_WORDS; (w)++)				\
		for ((b) = (m)->bits[w]; (b) && (((cpu) = (w) * 64 + (unsigned)__builtin_ctzll(b)), 1); \
		     (b) &= (b) - 1)

/* Work is proportional to the free CPUs, not to the machine: the
 * distributed algorithm runs this once per NUMA node it fills. */
static void acc_init(struct kacc *a, const struct alloc_topo *t, const struct cpumask *avail,
		     unsigned n, enum kube_cpu_sorting sorting, bool resize)
{
	unsigned cpu, w;
	uint64_t b;

	memset(a->tot, 0, sizeof(a->tot));
	memset(a->cnt, 0, sizeof(a->cnt));
	memset(a->res, 0, sizeof(a->res));
	a->t = t;
	a->need = n > MAXC ? MAXC + 1 : (int)n;
	a->resize = resize;
	a->numa_first = t->n_sockets >= t->n_nodes;
	a->spread = sorting == KUBE_SORT_SPREAD;
	a->n_unc = t->n_uncores + 1;
	a->per_socket = t->n_sockets ? weight(&t->cpus) / t->n_sockets : 0;
	a->n_touched = 0;
	cpumask_zero(&a->result);
	a->unc_none = t->cpus;
	for (unsigned u = 0; u < t->n_uncores; u++)
		cpumask_andnot(&a->unc_none, &a->unc_none, &t->uncore_cpus[u]);
	cpumask_and(&a->avail, avail, &t->cpus);
	for_each_bit(cpu, &a->avail, w, b) {
		unsigned core = t->core_of[cpu];

		touch(a, cpu);
		count(a, a->cnt, cpu, 1);
		if (a->cnt[LV_CORE][core] == 1)
			a->core_head[core] = (uint16_t)(cpu + 1);
		else
			a->cpu_next[a->core_tail[core]] = (uint16_t)(cpu + 1);
		a->core_tail[core] = (uint16_t)cpu;
		a->cpu_next[cpu] = 0;
	}
}

/* kubelet acc.take: cpus join the result and leave the free set. */
static void take(struct kacc *a, const struct cpumask *cpus)
{
	unsigned cpu, w;
	uint64_t b;

	for_each_bit(cpu, cpus, w, b) {
		if (cpumask_test(&a->avail, cpu)) {
			cpumask_clear(&a->avail, cpu);
			count(a, a->cnt, cpu, -1);
		}
		if (cpumask_test(&a->t->cpus, cpu) && !cpumask_test(&a->result, cpu)) {
			touch(a, cpu);
			cpumask_set(&a->result, cpu);
			count(a, a->res, cpu, 1);
		}
	}
	a->need -= (int)weight(cpus);
}

static bool satisfied(const struct kacc *a)
{
	return a->need < 1;
}

static const struct cpumask *cpus_of(const struct kacc *a, enum lv lv, unsigned x)
{
	switch (lv) {
	case LV_NODE: return &a->t->node_cpus[x];
	case LV_SOCKET: return &a->t->socket_cpus[x];
	case LV_CORE: return &a->t->core_cpus[x];
	default: return x == a->t->n_uncores ? &a->unc_none : &a->t->uncore_cpus[x];
	}
}

/* Takes the free CPUs of element x of a level. */
static void take_free_of(struct kacc *a, enum lv lv, unsigned x)
{
	struct cpumask m;

	cpumask_and(&m, cpus_of(a, lv, x), &a->avail);
	take(a, &m);
}

/*
 * Sort key: resize puts elements holding chosen CPUs (held) first; then
 * fewer free CPUs first; then lower id (= lower dense index).
 */
static uint32_t key(const struct kacc *a, bool held, unsigned cnt, unsigned x)
{
	return (uint32_t)(a->resize && held ? 0 : 1) << 31 | (uint32_t)cnt << 16 | x;
}

static int cmp_key(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a > b) - (a < b);
}

/*
 * Sorts keys and appends their indexes to out, skipping ones already seen
 * (only odd topologies list an element under two parents). A key ends in
 * its index, and an index has one key, so equal keys are the same element
 * and qsort's lack of stability cannot change the order.
 */
static unsigned emit(uint32_t *keys, unsigned n, uint16_t *out, unsigned m, uint64_t *seen)
{
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (unsigned i = 0; i < n; i++) {
		unsigned x = keys[i] & 0xffff;

		if (seen[x / 64] >> (x % 64) & 1)
			continue;
		seen[x / 64] |= 1ULL << (x % 64);
		out[m++] = (uint16_t)x;
	}
	return m;
}

static unsigned level_size(const struct kacc *a, enum lv lv)
{
	switch (lv) {
	case LV_NODE: return a->t->n_nodes;
	case LV_SOCKET: return a->t->n_sockets;
	case LV_CORE: return a->t->n_cores;
	default: return a->n_unc;
	}
}

/* All elements of a level with free CPUs (kubelet: details.NUMANodes(),
 * details.Sockets()), sorted. */
static unsigned list_top(const struct kacc *a, enum lv lv, uint16_t *out)
{
	uint32_t keys[MAXU];
	uint64_t seen[BMW] = { 0 };
	unsigned n = 0;

	for (unsigned x = 0; x < level_size(a, lv); x++)
		if (a->cnt[lv][x])
			keys[n++] = key(a, a->res[lv][x] > 0, a->cnt[lv][x], x);
	return emit(keys, n, out, 0, seen);
}

static unsigned core_parent(const struct kacc *a, enum lv parent, unsigned c)
{
	return parent == LV_NODE ? a->core_node[c] : a->core_sock[c];
}

static unsigned core_child(const struct kacc *a, enum lv child, unsigned c)
{
	switch (child) {
	case LV_NODE: return a->core_node[c];
	case LV_SOCKET: return a->core_sock[c];
	case LV_UNCORE: return a->core_unc[c];
	default: return c;
	}
}

/*
 * For each parent in parents[] (nodes or sockets), in order, the children
 * with free CPUs inside that parent, sorted; appended to out. A child
 * counts as held when it holds chosen CPUs inside that parent (kubelet's
 * resultDetails.XInY(parent)). Cores lie in one node, socket and cache,
 * so the touched cores, bucketed by parent, answer every "children of
 * parent" question.
 */
static unsigned list_within(const struct kacc *a, const uint16_t *parents, unsigned np,
			    enum lv parent, enum lv child, uint16_t *out)
{
	uint16_t start[MAXP + 1] = { 0 }, pos[MAXP], by_parent[MAXC];
	uint32_t keys[MAXU];
	uint64_t seen[BMW] = { 0 };
	unsigned m = 0, nparents = parent == LV_NODE ? a->t->n_nodes : a->t->n_sockets;

	for (unsigned i = 0; i < a->n_touched; i++)
		start[core_parent(a, parent, a->touched[i]) + 1]++;
	for (unsigned p = 0; p < nparents; p++)
		start[p + 1] += start[p];
	memcpy(pos, start, sizeof(pos));
	for (unsigned i = 0; i < a->n_touched; i++) {
		unsigned c = a->touched[i];

		by_parent[pos[core_parent(a, parent, c)]++] = (uint16_t)c;
	}
	for (unsigned i = 0; i < np; i++) {
		uint64_t has[BMW] = { 0 }, held[BMW] = { 0 };
		unsigned n = 0, p = parents[i];

		for (unsigned j = start[p]; j < start[p + 1]; j++) {
			unsigned c = by_parent[j], x = core_child(a, child, c);

			if (child == LV_CORE) {
				if (a->cnt[LV_CORE][c])
					keys[n++] = key(a, a->res[LV_CORE][c] > 0, a->cnt[LV_CORE][c], c);
				continue;
			}
			if (a->cnt[LV_CORE][c])
				has[x / 64] |= 1ULL << (x % 64);
			if (a->res[LV_CORE][c])
				held[x / 64] |= 1ULL << (x % 64);
		}
		for (unsigned w = 0; child != LV_CORE && w < BMW; w++)
			for (uint64_t bits = has[w]; bits; bits &= bits - 1) {
				unsigned x = w * 64 + (unsigned)__builtin_ctzll(bits);

				keys[n++] = key(a, held[w] >> (x % 64) & 1, a->cnt[child][x], x);
			}
		m = emit(keys, n, out, m, seen);
	}
	return m;
}

/* kubelet sortAvailableNUMANodes / Sockets / Cores / UncoreCaches: the
 * upper level (NUMA nodes when there are at least as many sockets as
 * nodes, else sockets) by free CPUs, the lower one within each, cores
 * within the lower one, caches within each node. */
static unsigned order_nodes(const struct kacc *a, uint16_t *out)
{
	uint16_t sockets[ALLOC_MAX_SOCKETS];
	unsigned ns;

	if (a->numa_first)
		return list_top(a, LV_NODE, out);
	ns = list_top(a, LV_SOCKET, sockets);
	return list_within(a, sockets, ns, LV_SOCKET, LV_NODE, out);
}

static unsigned order_sockets(const struct kacc *a, uint16_t *out)
{
	uint16_t nodes[ALLOC_MAX_NODES];
	unsigned nn;

	if (!a->numa_first)
		return list_top(a, LV_SOCKET, out);
	nn = list_top(a, LV_NODE, nodes);
	return list_within(a, nodes, nn, LV_NODE, LV_SOCKET, out);
}

static unsigned order_cores(const struct kacc *a, uint16_t *out)
{
	uint16_t up[MAXP];

	if (a->numa_first)
		return list_within(a, up, order_sockets(a, up), LV_SOCKET, LV_CORE, out);
	return list_within(a, up, order_nodes(a, up), LV_NODE, LV_CORE, out);
}

static unsigned order_uncores(const struct kacc *a, uint16_t *out)
{
	uint16_t nodes[ALLOC_MAX_NODES];

	return list_within(a, nodes, order_nodes(a, nodes), LV_NODE, LV_UNCORE, out);
}

/*
 * Whether element x can be claimed whole. Plain mode follows kubelet's
 * isXFree: all its CPUs free, sockets and cores measured against the
 * topology-wide CPUs per socket / per core as kubelet does, except that
 * CPUs per core is the SMT width (alloc_topo.h) where kubelet divides
 * CPUs by cores; the two agree unless cores differ in width. Resize mode
 * follows isFullX: free plus already chosen CPUs cover it.
 */
static bool whole(const struct kacc *a, enum lv lv, unsigned x)
{
	unsigned per;

	if (a->resize)
		return a->cnt[lv][x] + a->res[lv][x] == a->tot[lv][x];
	if (lv == LV_SOCKET)
		per = a->per_socket;
	else if (lv == LV_CORE)
		per = a->t->cpus_per_core;
	else
		per = a->tot[lv][x];
	return a->cnt[lv][x] == per;
}

/* CPUs claiming x takes: all of it (plain), its free part (resize). */
static unsigned whole_size(const struct kacc *a, enum lv lv, unsigned x)
{
	return a->resize ? a->cnt[lv][x] : a->tot[lv][x];
}

static unsigned order(const struct kacc *a, enum lv lv, uint16_t *out)
{
	switch (lv) {
	case LV_NODE: return order_nodes(a, out);
	case LV_SOCKET: return order_sockets(a, out);
	case LV_CORE: return order_cores(a, out);
	default: return order_uncores(a, out);
	}
}

/* kubelet takeFullNUMANodes / Sockets / Cores / Uncore: every whole
 * element, in order, that the request still needs entirely. */
static void take_whole(struct kacc *a, enum lv lv)
{
	uint16_t list[MAXU];
	unsigned n = order(a, lv, list);

	for (unsigned i = 0; i < n; i++) {
		unsigned x = list[i];

		if (whole(a, lv, x) && a->need >= (int)whole_size(a, lv, x))
			take_free_of(a, lv, x);
	}
}

/*
 * kubelet takePartialUncore: the lowest-id cores of cache u with free
 * CPUs, as many as the remaining request needs in whole cores, taken only
 * if their free CPUs match the request exactly. An odd remainder on SMT
 * drops the highest CPU id so the last core may be split (kubelet tests
 * the remainder against 2 whatever the SMT level).
 */
static int cmp_u16(const void *p, const void *q)
{
	return (int)*(const uint16_t *)p - (int)*(const uint16_t *)q;
}

/* Cores of cache u with free CPUs (and chosen ones, if held), ascending. */
static unsigned cores_in_uncore(const struct kacc *a, unsigned u, bool held, uint16_t *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < a->n_touched; i++) {
		unsigned c = a->touched[i];

		if (a->core_unc[c] == u && a->cnt[LV_CORE][c] && (!held || a->res[LV_CORE][c]))
			out[n++] = (uint16_t)c;
	}
	qsort(out, n, sizeof(*out), cmp_u16);
	return n;
}

static void take_partial_uncore(struct kacc *a, unsigned u)
{
	unsigned cpc = a->t->cpus_per_core ? a->t->cpus_per_core : 1;
	unsigned want = ((unsigned)a->need + cpc - 1) / cpc;
	uint16_t cores[MAXC];
	unsigned n = cores_in_uncore(a, u, false, cores);
	struct cpumask m;

	cpumask_zero(&m);
	for (unsigned i = 0; i < n && i < want; i++) {
		struct cpumask free_cpus;

		cpumask_and(&free_cpus, &a->t->core_cpus[cores[i]], &a->avail);
		cpumask_or(&m, &m, &free_cpus);
	}
	if (a->need % 2 != 0 && cpc > 1 && weight(&m) > (unsigned)a->need) {
		int last = -1, cpu;

		cpumask_for_each(cpu, &m)
			last = cpu;
		cpumask_clear(&m, (unsigned)last);
	}
	if (weight(&m) == (unsigned)a->need)
		take(a, &m);
}

/* Resize first completes the cores of cache u that already hold chosen
 * CPUs (SMT only), lowest core id first, then continues as above. */
static void take_partial_uncore_resize(struct kacc *a, unsigned u)
{
	uint16_t cores[MAXC];
	unsigned n;

	if (a->t->cpus_per_core != 1) {
		n = cores_in_uncore(a, u, true, cores);
		for (unsigned i = 0; i < n; i++) {
			unsigned c = cores[i];

			if (!whole(a, LV_CORE, c))
				continue;
			if (a->need < (int)a->cnt[LV_CORE][c])
				break;
			take_free_of(a, LV_CORE, c);
		}
	}
	take_partial_uncore(a, u);
}

/*
 * kubelet takeUncoreCache. Plain: per cache in order, claim whole caches
 * when the request covers this one, then try this one partially. Resize:
 * claim whole caches once, then try each cache partially.
 */
static void take_uncore(struct kacc *a)
{
	uint16_t list[MAXU];
	unsigned n;

	if (a->resize) {
		take_whole(a, LV_UNCORE);
		if (satisfied(a))
			return;
	}
	n = order_uncores(a, list);
	for (unsigned i = 0; i < n; i++) {
		unsigned u = list[i];

		if (a->resize) {
			take_partial_uncore_resize(a, u);
		} else {
			if (a->need >= (int)a->tot[LV_UNCORE][u])
				take_whole(a, LV_UNCORE);
			if (satisfied(a))
				return;
			take_partial_uncore(a, u);
		}
		if (satisfied(a))
			return;
	}
}

/* Takes one CPU if it is still free; false once the request is met. */
static bool take_one(struct kacc *a, unsigned cpu)
{
	struct cpumask one;

	if (cpumask_test(&a->avail, cpu)) {
		cpumask_zero(&one);
		cpumask_set(&one, cpu);
		take(a, &one);
	}
	return !satisfied(a);
}

/*
 * kubelet takeRemainingCPUs: single CPUs, packed = core by core in core
 * order, spread = socket by socket in socket order, CPU ids ascending
 * within each. kubelet lists them all first; walking the order computed
 * up front and stopping when satisfied takes the same CPUs.
 */
static void take_remaining(struct kacc *a)
{
	uint16_t list[MAXU];
	unsigned n, cpu, w;
	uint64_t b;

	if (a->spread) {
		n = order_sockets(a, list);
		for (unsigned i = 0; i < n; i++) {
			struct cpumask m;

			cpumask_and(&m, &a->t->socket_cpus[list[i]], &a->avail);
			for_each_bit(cpu, &m, w, b)
				if (!take_one(a, cpu))
					return;
		}
		return;
	}
	n = order_cores(a, list);
	for (unsigned i = 0; i < n; i++)
		for (unsigned x = a->core_head[list[i]]; x; x = a->cpu_next[x - 1])
			if (!take_one(a, x - 1))
				return;
}

/* The packed algorithm proper, after the early checks. */
static int packed_steps(struct kacc *a, bool uncore)
{
	take_whole(a, a->numa_first ? LV_NODE : LV_SOCKET);
	if (satisfied(a))
		return 0;
	take_whole(a, a->numa_first ? LV_SOCKET : LV_NODE);
	if (satisfied(a))
		return 0;
	if (uncore) {
		take_uncore(a);
		if (satisfied(a))
			return 0;
	}
	if (!a->spread) {
		take_whole(a, LV_CORE);
		if (satisfied(a))
			return 0;
	}
	take_remaining(a);
	return satisfied(a) ? 0 : -ENOSPC;
}

static int finish(struct kacc *a, unsigned n, const struct cpumask *avail, bool uncore,
		  struct cpumask *ret, char *reason, size_t len)
{
	int r;

	if (satisfied(a)) {
		*ret = a->result;
		return 0;
	}
	if (a->need > (int)weight(&a->avail)) {
		kube__reason(reason, len,
			     "not enough cpus available to satisfy request: requested=%u, available=%u",
			     n, weight(avail));
		return -ENOSPC;
	}
	r = packed_steps(a, uncore);
	if (r < 0) {
		kube__reason(reason, len, "failed to allocate cpus");
		return r;
	}
	*ret = a->result;
	return 0;
}

int kube_take_packed(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
		     const struct kube_alloc_opts *opts, struct cpumask *ret,
		     char *reason, size_t len)
{
	struct kacc a;

	acc_init(&a, t, avail, n, opts->sorting, false);
	return finish(&a, n, avail, opts->prefer_align_uncore, ret, reason, len);
}

int kube__retained(const struct cpumask *allocated, const struct cpumask *baseline, unsigned n,
		   struct cpumask *ret, char *reason, size_t len)
{
	unsigned have = weight(allocated);

	if (!cpumask_empty(allocated) && !cpumask_empty(baseline) &&
	    !cpumask_subset(baseline, allocated)) {
		char b[CPULIST_MAX], al[CPULIST_MAX];

		cpulist_format(baseline, b, sizeof(b));
		cpulist_format(allocated, al, sizeof(al));
		kube__reason(reason, len, "requested CPUs to be retained %s are not a subset of "
			     "reusable CPUs %s", b, al);
		return -EINVAL;
	}
	cpumask_zero(ret);
	if (have && n >= have)
		*ret = *allocated;
	else if (have && n < have)
		*ret = *baseline;
	return 0;
}

int kube_take_packed_resize(const struct alloc_topo *t, const struct cpumask *avail, unsigned n,
			    const struct cpumask *allocated, const struct cpumask *baseline,
			    const struct kube_alloc_opts *opts, struct cpumask *ret,
			    char *reason, size_t len)
{
	struct cpumask keep;
	struct kacc a;
	int r = kube__retained(allocated, baseline, n, &keep, reason, len);

	if (r < 0)
		return r;
	acc_init(&a, t, avail, n, opts->sorting, true);
	if (!cpumask_empty(&keep))
		take(&a, &keep);
	return finish(&a, n, avail, opts->prefer_align_uncore, ret, reason, len);
}

unsigned kube__node_order(const struct alloc_topo *t, const struct cpumask *avail,
			  const struct cpumask *held, bool resize, uint16_t *ret)
{
	struct kacc a;

	acc_init(&a, t, avail, 0, KUBE_SORT_PACKED, resize);
	take(&a, held);
	return order_nodes(&a, ret);
}
