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

enum lv { LV_NODE, LV_SOCKET, LV_CORE, LV_UNCORE };

struct kacc {
	const struct alloc_topo *t;
	struct cpumask avail;		/* kubelet's acc.details */
	struct cpumask result;
	struct cpumask unc_none;	/* CPUs with no uncore id: one group */
	int need;			/* may go negative, as in kubelet */
	bool resize, numa_first, spread;
	unsigned n_unc;
	uint16_t tot[4][MAXU], cnt[4][MAXU], res[4][MAXU];
	uint8_t core_node[MAXC], core_sock[MAXC];
	uint16_t core_unc[MAXC];
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

static unsigned of(const struct kacc *a, enum lv lv, unsigned cpu)
{
	switch (lv) {
	case LV_NODE: return a->t->node_of[cpu];
	case LV_SOCKET: return a->t->socket_of[cpu];
	case LV_CORE: return a->t->core_of[cpu];
	default: return unc_of(a, cpu);
	}
}

/* Adds d to the per-level counters of cpu in tab. */
static void count(struct kacc *a, uint16_t tab[4][MAXU], unsigned cpu, int d)
{
	for (int lv = 0; lv < 4; lv++)
		tab[lv][of(a, lv, cpu)] += d;
}

#define for_each_bit(cpu, m, w, b)						\
	for ((w) = 0; (w) < CPUSETD_MASK_WORDS; (w)++)				\
		for ((b) = (m)->bits[w]; (b) && (((cpu) = (w) * 64 + (unsigned)__builtin_ctzll(b)), 1); \
		     (b) &= (b) - 1)

static void acc_init(struct kacc *a, const struct alloc_topo *t, const struct cpumask *avail,
		     unsigned n, enum kube_cpu_sorting sorting, bool resize)
{
	unsigned cpu, w;
	uint64_t b;

	memset(a, 0, sizeof(*a));
	a->t = t;
	a->need = n > MAXC ? MAXC + 1 : (int)n;
	a->resize = resize;
	a->numa_first = t->n_sockets >= t->n_nodes;
	a->spread = sorting == KUBE_SORT_SPREAD;
	a->n_unc = t->n_uncores + 1;
	cpumask_and(&a->avail, avail, &t->cpus);
	for_each_bit(cpu, &t->cpus, w, b) {
		unsigned core = t->core_of[cpu];

		count(a, a->tot, cpu, 1);
		a->core_node[core] = (uint8_t)t->node_of[cpu];
		a->core_sock[core] = (uint8_t)t->socket_of[cpu];
		a->core_unc[core] = (uint16_t)unc_of(a, cpu);
		if (t->uncore_of[cpu] == ALLOC_NONE)
			cpumask_set(&a->unc_none, cpu);
	}
	for_each_bit(cpu, &a->avail, w, b)
		count(a, a->cnt, cpu, 1);
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
			cpumask_set(&a->result, cpu);
			count(a, a->res, cpu, 1);
		}
	}
	a->need -= (int)cpumask_weight(cpus);
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

static int cmp_u32(const void *p, const void *q)
{
	uint32_t x = *(const uint32_t *)p, y = *(const uint32_t *)q;

	return (x > y) - (x < y);
}

/* Sorts keys and appends their indexes to out, skipping ones already seen
 * (only odd topologies list an element under two parents). */
static unsigned emit(uint32_t *keys, unsigned n, uint16_t *out, unsigned m, uint64_t *seen)
{
	qsort(keys, n, sizeof(*keys), cmp_u32);
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
 * so walking the cores answers every "children of parent" question.
 */
static unsigned list_within(const struct kacc *a, const uint16_t *parents, unsigned np,
			    enum lv parent, enum lv child, uint16_t *out)
{
	uint32_t keys[MAXU];
	uint64_t seen[BMW] = { 0 }, has[BMW], held[BMW];
	unsigned m = 0;

	for (unsigned i = 0; i < np; i++) {
		unsigned n = 0;

		memset(has, 0, sizeof(has));
		memset(held, 0, sizeof(held));
		for (unsigned c = 0; c < a->t->n_cores; c++) {
			unsigned x;

			if (core_parent(a, parent, c) != parents[i])
				continue;
			x = core_child(a, child, c);
			if (a->cnt[LV_CORE][c])
				has[x / 64] |= 1ULL << (x % 64);
			if (a->res[LV_CORE][c])
				held[x / 64] |= 1ULL << (x % 64);
		}
		for (unsigned x = 0; x < level_size(a, child); x++)
			if (has[x / 64] >> (x % 64) & 1)
				keys[n++] = key(a, held[x / 64] >> (x % 64) & 1, a->cnt[child][x], x);
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
	uint16_t up[ALLOC_MAX_NODES > ALLOC_MAX_SOCKETS ? ALLOC_MAX_NODES : ALLOC_MAX_SOCKETS];

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
 * topology-wide CPUs per socket / per core as kubelet does. Resize mode
 * follows isFullX: free plus already chosen CPUs cover it.
 */
static bool whole(const struct kacc *a, enum lv lv, unsigned x)
{
	unsigned per;

	if (a->resize)
		return a->cnt[lv][x] + a->res[lv][x] == a->tot[lv][x];
	if (lv == LV_SOCKET)
		per = a->t->n_sockets ? cpumask_weight(&a->t->cpus) / a->t->n_sockets : 0;
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
static void take_partial_uncore(struct kacc *a, unsigned u)
{
	unsigned cpc = a->t->cpus_per_core ? a->t->cpus_per_core : 1;
	unsigned want = ((unsigned)a->need + cpc - 1) / cpc, got = 0;
	struct cpumask m;

	cpumask_zero(&m);
	for (unsigned c = 0; c < a->t->n_cores && got < want; c++) {
		struct cpumask free_cpus;

		if (a->core_unc[c] != u || !a->cnt[LV_CORE][c])
			continue;
		cpumask_and(&free_cpus, &a->t->core_cpus[c], &a->avail);
		cpumask_or(&m, &m, &free_cpus);
		got++;
	}
	if (a->need % 2 != 0 && cpc > 1 && cpumask_weight(&m) > (unsigned)a->need) {
		int last = -1, cpu;

		cpumask_for_each(cpu, &m)
			last = cpu;
		cpumask_clear(&m, (unsigned)last);
	}
	if (cpumask_weight(&m) == (unsigned)a->need)
		take(a, &m);
}

/* Resize first completes the cores of cache u that already hold chosen
 * CPUs (SMT only), lowest core id first, then continues as above. */
static void take_partial_uncore_resize(struct kacc *a, unsigned u)
{
	if (a->t->cpus_per_core != 1) {
		for (unsigned c = 0; c < a->t->n_cores; c++) {
			if (a->core_unc[c] != u || !a->cnt[LV_CORE][c] || !a->res[LV_CORE][c] ||
			    !whole(a, LV_CORE, c))
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

/* Appends the free CPUs of cpus to out in id order. */
static unsigned append_free(const struct kacc *a, const struct cpumask *cpus, uint16_t *out,
			    unsigned n)
{
	struct cpumask m;
	unsigned cpu, w;
	uint64_t b;

	cpumask_and(&m, cpus, &a->avail);
	for_each_bit(cpu, &m, w, b)
		if (n < MAXC)
			out[n++] = (uint16_t)cpu;
	return n;
}

/* kubelet takeRemainingCPUs: single CPUs, packed = core by core in core
 * order, spread = socket by socket in socket order (CPU ids ascending). */
static void take_remaining(struct kacc *a)
{
	uint16_t list[MAXU], cpus[MAXC];
	unsigned n, k = 0;

	if (a->spread) {
		n = order_sockets(a, list);
		for (unsigned i = 0; i < n; i++)
			k = append_free(a, &a->t->socket_cpus[list[i]], cpus, k);
	} else {
		n = order_cores(a, list);
		for (unsigned i = 0; i < n; i++)
			k = append_free(a, &a->t->core_cpus[list[i]], cpus, k);
	}
	for (unsigned i = 0; i < k && !satisfied(a); i++) {
		struct cpumask one;

		if (!cpumask_test(&a->avail, cpus[i]))
			continue;
		cpumask_zero(&one);
		cpumask_set(&one, cpus[i]);
		take(a, &one);
	}
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
	if (a->need > (int)cpumask_weight(&a->avail)) {
		kube__reason(reason, len,
			     "not enough cpus available to satisfy request: requested=%u, available=%u",
			     n, cpumask_weight(avail));
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
	unsigned have = cpumask_weight(allocated);

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
