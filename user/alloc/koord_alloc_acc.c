// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's CPU accumulator (cpu_accumulator.go takeCPUs), restated.
 *
 * The accumulator looks at ever wider, looser places and stops at the
 * first one that holds what is still needed:
 *   1. FullPCPUs (or no SMT): whole free cores of one NUMA node, then of
 *      one socket; then whole sockets, largest first, and single cores of
 *      the smallest remaining sockets;
 *   2. SpreadByPCPUs: one NUMA node, then one socket, whose free CPUs can
 *      hold the request, taken one CPU per core before second siblings;
 *   3. whatever is left, one CPU per core first, on the socket the result
 *      already uses, so that a request larger than whole cores allow
 *      still gets logical CPUs.
 * Nodes and sockets are visited by the NUMA strategy: fewest free CPUs
 * first (MostAllocated, to bin-pack) or most (LeastAllocated); ties go to
 * the lower id. Exclusive policies are honoured as "passes": a step is
 * tried with the exclusion and then without it, so they steer but never
 * fail a request.
 *
 * Each ordering is one sort of 128-bit keys: Koordinator's comparison
 * fields from most to least significant, the item (CPU, core) in the low
 * 16 bits. Keys are therefore unique and the order total, which is what
 * makes the answer stable (the Koordinator proposal "The algorithm MUST BE stable").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "koord_alloc_acc.h"

typedef unsigned __int128 kkey;

#define FIELD_BITS	11		/* counts and dense indexes are <= 1024 */
#define FIELD_MAX	((1u << FIELD_BITS) - 1)
#define REFSUM_BITS	20		/* sum of uint8 refs over a core */
#define ITEM_BITS	16
#define MAX_GROUPS	(ALLOC_MAX_NODES > ALLOC_MAX_SOCKETS ? ALLOC_MAX_NODES : ALLOC_MAX_SOCKETS)

struct acc {
	const struct koord_acc_args *a;
	const struct alloc_topo *t;
	unsigned cpc, per_node, per_socket;	/* CPUs per core / node / socket */
	unsigned need;
	struct cpumask free;			/* still allocatable */
	struct cpumask result;
	struct cpumask core_excl;		/* dense core indexes to avoid */
	struct cpumask node_excl;		/* dense node indexes to avoid */
};

/* CPUs grouped by node or socket, groups in visiting order. */
struct groups {
	unsigned n;
	uint16_t start[MAX_GROUPS], len[MAX_GROUPS];
	uint16_t cpus[CPUSETD_MAX_CPUS];
};

/*
 * A pass: which exclusions are on, and whether lists keep only one CPU
 * per core (Koordinator does that whenever it filters, even with no
 * exclusive policy, which is why an idle SpreadByPCPUs request lands on
 * distinct cores).
 */
struct pass {
	bool numa, pcpu, extract;
};

static const struct pass passes_none[] = { { false, false, true }, { false, false, false } };
static const struct pass passes_pcpu[] = { { false, true, true }, { false, false, false } };
/* NUMANodeLevel falls back to keeping off exclusive cores (the Koordinator proposal). */
static const struct pass passes_numa[] = {
	{ true, false, true }, { false, true, true }, { false, false, false },
};

static unsigned passes_of(enum koord_excl_policy excl, const struct pass **ret)
{
	switch (excl) {
	case KOORD_EXCL_PCPU: *ret = passes_pcpu; return 2;
	case KOORD_EXCL_NUMA: *ret = passes_numa; return 3;
	default: *ret = passes_none; return 2;
	}
}

static kkey push(kkey k, unsigned bits, unsigned v)
{
	return k << bits | v;
}

/* A count ordered by the NUMA strategy: fewest first when bin-packing. */
static unsigned by_strategy(const struct acc *c, unsigned v)
{
	return c->a->most ? v : FIELD_MAX - v;
}

static unsigned item_of(kkey k)
{
	return (unsigned)(k & ((1u << ITEM_BITS) - 1));
}

static unsigned refs_of(const struct acc *c, unsigned cpu)
{
	/* Koordinator looks at reference counts only when sharing is on. */
	return c->a->usage && c->a->max_refs > 1 ? c->a->usage[cpu].refs : 0;
}

static bool excluded(const struct acc *c, unsigned cpu, bool numa, bool pcpu)
{
	return (numa && cpumask_test(&c->node_excl, c->t->node_of[cpu])) ||
	       (pcpu && cpumask_test(&c->core_excl, c->t->core_of[cpu]));
}

/*
 * Cores and nodes that other pods' exclusive CPUs put off limits. A
 * NUMANodeLevel request also collects exclusive cores, for its fallback.
 */
static void seed_exclusions(struct acc *c)
{
	enum koord_excl_policy want = c->a->excl;
	unsigned cpu;

	if (!c->a->usage || want == KOORD_EXCL_NONE)
		return;
	koord_each_cpu(cpu, &c->t->cpus) {
		const struct koord_cpu_usage *u = &c->a->usage[cpu];

		if (!u->refs || u->excl == KOORD_EXCL_NONE)
			continue;
		if (u->excl == KOORD_EXCL_PCPU || want == KOORD_EXCL_NUMA)
			cpumask_set(&c->core_excl, c->t->core_of[cpu]);
		if (u->excl == KOORD_EXCL_NUMA && want == KOORD_EXCL_NUMA)
			cpumask_set(&c->node_excl, c->t->node_of[cpu]);
	}
}

static void acc_init(struct acc *c, const struct koord_acc_args *a, const struct cpumask *avail,
		     unsigned n)
{
	const struct alloc_topo *t = a->t;
	unsigned total = cpumask_weight(&t->cpus);

	memset(c, 0, sizeof(*c));
	c->a = a;
	c->t = t;
	c->cpc = t->cpus_per_core ? t->cpus_per_core : 1;
	c->per_node = t->n_nodes ? total / t->n_nodes : total;
	c->per_socket = t->n_sockets ? total / t->n_sockets : total;
	c->need = n;
	cpumask_and(&c->free, avail, &t->cpus);
	seed_exclusions(c);
}

/* The pod's own CPUs count as exclusive for the rest of its request. */
static void take(struct acc *c, const uint16_t *cpus, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		unsigned cpu = cpus[i];

		cpumask_set(&c->result, cpu);
		cpumask_clear(&c->free, cpu);
		if (c->a->excl != KOORD_EXCL_NONE)
			cpumask_set(&c->core_excl, c->t->core_of[cpu]);
		if (c->a->excl == KOORD_EXCL_NUMA)
			cpumask_set(&c->node_excl, c->t->node_of[cpu]);
	}
	c->need -= k;
}

/*
 * Sum of the reference counts of each core's free CPUs (getCoreRefCount);
 * all zero unless sharing is on.
 */
static void core_refsums(const struct acc *c, uint32_t *ret)
{
	unsigned cpu;

	memset(ret, 0, c->t->n_cores * sizeof(*ret));
	if (!c->a->usage || c->a->max_refs < 2)
		return;
	koord_each_cpu(cpu, &c->free)
		ret[c->t->core_of[cpu]] += refs_of(c, cpu);
}

/* Each core's candidate CPUs, ascending, as linked lists built in one pass. */
struct core_lists {
	uint16_t cnt[CPUSETD_MAX_CPUS];		/* per core */
	uint16_t head[CPUSETD_MAX_CPUS];	/* per core */
	uint16_t tail[CPUSETD_MAX_CPUS];	/* per core */
	uint16_t next[CPUSETD_MAX_CPUS];	/* per CPU */
};

static void lists_init(const struct acc *c, struct core_lists *l)
{
	memset(l->cnt, 0, c->t->n_cores * sizeof(l->cnt[0]));
}

/* CPUs must come in ascending order. */
static void lists_add(const struct acc *c, struct core_lists *l, unsigned cpu)
{
	unsigned core = c->t->core_of[cpu];

	if (l->cnt[core]++)
		l->next[l->tail[core]] = (uint16_t)cpu;
	else
		l->head[core] = (uint16_t)cpu;
	l->tail[core] = (uint16_t)cpu;
}

static unsigned lists_emit(const struct core_lists *l, unsigned core, uint16_t *out)
{
	unsigned cpu = l->head[core];

	for (unsigned i = 0; i < l->cnt[core]; i++, cpu = l->next[cpu])
		out[i] = (uint16_t)cpu;
	return l->cnt[core];
}

static int cmp_key(const void *pa, const void *pb)
{
	kkey a = *(const kkey *)pa, b = *(const kkey *)pb;

	return (a > b) - (a < b);
}

/*
 * Ascending. Every key ends in its item, so no two are equal and qsort's
 * order is the one total order: no stability is lost by not merging.
 * Keys built in item order are often sorted already (idle cores in id
 * order); one pass finds that and skips qsort's indirect 128-bit compares.
 */
static void sort_keys(kkey *keys, unsigned n)
{
	unsigned i = 1;

	while (i < n && keys[i - 1] <= keys[i])
		i++;
	if (i < n)
		qsort(keys, n, sizeof(*keys), cmp_key);
}

static unsigned group_of(const struct acc *c, bool by_node, unsigned cpu)
{
	return by_node ? c->t->node_of[cpu] : c->t->socket_of[cpu];
}

/* Cuts g->cpus[0..n), sorted group by group, into one slice per group;
 * gid[i] = the node/socket of slice i. */
static void slice(const struct acc *c, bool by_node, unsigned n, struct groups *g, uint16_t *gid)
{
	g->n = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned grp = group_of(c, by_node, g->cpus[i]);

		if (g->n == 0 || gid[g->n - 1] != grp) {
			gid[g->n] = (uint16_t)grp;
			g->start[g->n] = (uint16_t)i;
			g->len[g->n++] = 0;
		}
		g->len[g->n - 1]++;
	}
}

/* Puts the slices in the order of their keys (item = slice number). */
static void order_slices(struct groups *g, kkey *keys)
{
	uint16_t start[MAX_GROUPS], len[MAX_GROUPS];

	sort_keys(keys, g->n);
	for (unsigned i = 0; i < g->n; i++) {
		start[i] = g->start[item_of(keys[i])];
		len[i] = g->len[item_of(keys[i])];
	}
	memcpy(g->start, start, g->n * sizeof(*start));
	memcpy(g->len, len, g->n * sizeof(*len));
}

/*
 * freeCoresInNode / freeCoresInSocket: the completely free cores of each
 * node (by_node) or socket, cores by reference count then id, groups by
 * free whole-core CPUs, then (nodes) by free CPUs of their socket.
 * skip_numa leaves out nodes a NUMANodeLevel request must avoid.
 */
static void whole_cores_in(const struct acc *c, bool by_node, bool skip_numa, struct groups *g)
{
	unsigned sock_free[ALLOC_MAX_SOCKETS] = { 0 }, nk = 0, n = 0, cpu;
	uint32_t refsum[CPUSETD_MAX_CPUS];
	kkey keys[CPUSETD_MAX_CPUS];
	uint16_t gid[MAX_GROUPS];
	struct core_lists l;

	core_refsums(c, refsum);
	lists_init(c, &l);
	koord_each_cpu(cpu, &c->free) {
		if (skip_numa && excluded(c, cpu, true, false))
			continue;
		lists_add(c, &l, cpu);
		sock_free[c->t->socket_of[cpu]]++;
	}
	for (unsigned core = 0; core < c->t->n_cores; core++) {
		kkey k;

		if (l.cnt[core] != c->cpc)
			continue;
		k = push(0, FIELD_BITS, group_of(c, by_node, l.head[core]));
		k = push(k, REFSUM_BITS, refsum[core]);
		keys[nk++] = push(k, ITEM_BITS, core);
	}
	sort_keys(keys, nk);
	for (unsigned i = 0; i < nk; i++)
		n += lists_emit(&l, item_of(keys[i]), g->cpus + n);
	slice(c, by_node, n, g, gid);
	for (unsigned i = 0; i < g->n; i++) {
		kkey k = push(0, FIELD_BITS, by_strategy(c, g->len[i]));

		if (by_node) {
			unsigned sock = c->t->socket_of[g->cpus[g->start[i]]];

			k = push(k, FIELD_BITS, by_strategy(c, sock_free[sock]));
		}
		k = push(k, FIELD_BITS, gid[i]);
		keys[i] = push(k, ITEM_BITS, i);
	}
	order_slices(g, keys);
}

/* Keeps the first CPU of each core, in list order (extractCPU). */
static unsigned one_per_core(const struct acc *c, uint16_t *cpus, unsigned n)
{
	struct cpumask seen;
	unsigned k = 0;

	cpumask_zero(&seen);
	for (unsigned i = 0; i < n; i++) {
		unsigned core = c->t->core_of[cpus[i]];

		if (!cpumask_test(&seen, core)) {
			cpumask_set(&seen, core);
			cpus[k++] = cpus[i];
		}
	}
	return k;
}

/*
 * freeCPUsInNode / freeCPUsInSocket: the free CPUs of each node or
 * socket minus the exclusions of the pass, by reference count then id,
 * one per core when the pass extracts. Nodes are ordered by their free
 * CPUs before extraction, then their socket's; sockets by what is left
 * after extraction. A socket only ever skips PCPULevel cores.
 */
static void cpus_in(const struct acc *c, bool by_node, const struct pass *p, struct groups *g)
{
	unsigned node_free[ALLOC_MAX_NODES] = { 0 }, sock_free[ALLOC_MAX_SOCKETS] = { 0 };
	bool numa = by_node && p->numa;
	uint16_t gid[MAX_GROUPS], len[MAX_GROUPS];
	kkey keys[CPUSETD_MAX_CPUS], k;
	unsigned nk = 0, cpu;

	koord_each_cpu(cpu, &c->free) {
		if (excluded(c, cpu, numa, p->pcpu))
			continue;
		node_free[c->t->node_of[cpu]]++;
		sock_free[c->t->socket_of[cpu]]++;
		k = push(0, FIELD_BITS, group_of(c, by_node, cpu));
		k = push(k, FIELD_BITS, refs_of(c, cpu));
		keys[nk++] = push(k, ITEM_BITS, cpu);
	}
	sort_keys(keys, nk);
	for (unsigned i = 0; i < nk; i++)
		g->cpus[i] = (uint16_t)item_of(keys[i]);
	slice(c, by_node, nk, g, gid);
	for (unsigned i = 0; i < g->n; i++) {
		unsigned k = g->len[i];

		if (p->extract)
			k = one_per_core(c, g->cpus + g->start[i], k);
		len[i] = (uint16_t)k;
	}
	for (unsigned i = 0; i < g->n; i++) {
		unsigned first = g->cpus[g->start[i]];

		if (by_node) {
			k = push(0, FIELD_BITS, by_strategy(c, node_free[gid[i]]));
			k = push(k, FIELD_BITS, by_strategy(c, sock_free[c->t->socket_of[first]]));
		} else {
			k = push(0, FIELD_BITS, by_strategy(c, len[i]));
		}
		k = push(k, FIELD_BITS, gid[i]);
		keys[i] = push(k, ITEM_BITS, i);
	}
	memcpy(g->len, len, g->n * sizeof(*len));
	order_slices(g, keys);
}

/* A core's CPUs (ascending) by reference count, then id; a core is small. */
static void sort_siblings(const struct acc *c, uint16_t *cpus, unsigned n)
{
	for (unsigned j = 1; j < n; j++)
		for (unsigned k = j; k > 0 && refs_of(c, cpus[k - 1]) > refs_of(c, cpus[k]); k--) {
			uint16_t x = cpus[k];

			cpus[k] = cpus[k - 1];
			cpus[k - 1] = x;
		}
}

/*
 * freeCPUs: every free CPU minus the pass's exclusions, core by core.
 * Cores on the socket the result already uses most come first, then by
 * free CPUs of their socket and node (NUMA strategy), cores with fewer
 * free CPUs first (fill half-used cores), socket id, reference count,
 * core id; within a core by reference count then id.
 */
static unsigned cpus_flat(const struct acc *c, const struct pass *p, uint16_t *out)
{
	unsigned node_free[ALLOC_MAX_NODES] = { 0 }, sock_free[ALLOC_MAX_SOCKETS] = { 0 };
	unsigned colo[ALLOC_MAX_SOCKETS] = { 0 }, nk = 0, n = 0, cpu;
	uint32_t refsum[CPUSETD_MAX_CPUS];
	kkey keys[CPUSETD_MAX_CPUS];
	struct core_lists l;

	core_refsums(c, refsum);
	lists_init(c, &l);
	koord_each_cpu(cpu, &c->result)
		colo[c->t->socket_of[cpu]]++;
	koord_each_cpu(cpu, &c->free) {
		if (excluded(c, cpu, p->numa, p->pcpu))
			continue;
		lists_add(c, &l, cpu);
		node_free[c->t->node_of[cpu]]++;
		sock_free[c->t->socket_of[cpu]]++;
	}
	for (unsigned core = 0; core < c->t->n_cores; core++) {
		unsigned first, sock;
		kkey k;

		if (!l.cnt[core])
			continue;
		first = l.head[core];
		sock = c->t->socket_of[first];
		k = push(0, FIELD_BITS, FIELD_MAX - colo[sock]);
		k = push(k, FIELD_BITS, by_strategy(c, sock_free[sock]));
		k = push(k, FIELD_BITS, by_strategy(c, node_free[c->t->node_of[first]]));
		k = push(k, FIELD_BITS, l.cnt[core]);
		k = push(k, FIELD_BITS, sock);
		k = push(k, REFSUM_BITS, refsum[core]);
		keys[nk++] = push(k, ITEM_BITS, core);
	}
	sort_keys(keys, nk);
	for (unsigned i = 0; i < nk; i++) {
		unsigned start = n;

		n += lists_emit(&l, item_of(keys[i]), out + n);
		sort_siblings(c, out + start, n - start);
	}
	return n;
}

/*
 * spreadCPUs: the first CPU of every core in list order, then every
 * core's second one, and so on. A list no longer than one core is left
 * as it is, as Koordinator does.
 */
static unsigned spread(const struct acc *c, const uint16_t *in, unsigned n, uint16_t *out)
{
	uint16_t seen[CPUSETD_MAX_CPUS], rank[CPUSETD_MAX_CPUS], max = 0;
	unsigned k = 0;

	if (n <= c->cpc) {
		memcpy(out, in, n * sizeof(*in));
		return n;
	}
	for (unsigned i = 0; i < n; i++)
		seen[c->t->core_of[in[i]]] = 0;
	for (unsigned i = 0; i < n; i++) {
		rank[i] = seen[c->t->core_of[in[i]]]++;
		if (rank[i] > max)
			max = rank[i];
	}
	for (unsigned r = 0; r <= max; r++)
		for (unsigned i = 0; i < n; i++)
			if (rank[i] == r)
				out[k++] = in[i];
	return k;
}

/* The first group of whole cores that holds the request gets it. */
static bool whole_cores_one_group(struct acc *c, bool by_node, bool skip_numa)
{
	struct groups g;

	whole_cores_in(c, by_node, skip_numa, &g);
	for (unsigned i = 0; i < g.n; i++)
		if (g.len[i] >= c->need) {
			take(c, g.cpus + g.start[i], c->need);
			return true;
		}
	return false;
}

/* Stable: equal lengths keep the strategy's order. */
static void sort_by_len(const struct groups *g, uint16_t *idx, unsigned n, bool longest_first)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0; j--) {
			unsigned a = g->len[idx[j - 1]], b = g->len[idx[j]];
			uint16_t x;

			if (longest_first ? a >= b : a <= b)
				break;
			x = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = x;
		}
}

/*
 * Too big for one socket (or no socket has room): whole sockets' free
 * cores, largest first, then cores one by one from the sockets with the
 * fewest free cores. Stops taking cores once less than a core is needed;
 * Koordinator moves on to the next socket there and takes a core too
 * many (an odd request can come back one CPU larger), we leave the
 * remainder to the logical-CPU stage instead.
 */
static bool take_cores_across_sockets(struct acc *c)
{
	uint16_t idx[MAX_GROUPS], left[MAX_GROUPS];
	unsigned nleft = 0;
	struct groups g;

	whole_cores_in(c, false, false, &g);
	for (unsigned i = 0; i < g.n; i++)
		idx[i] = (uint16_t)i;
	sort_by_len(&g, idx, g.n, true);
	for (unsigned i = 0; i < g.n; i++) {
		if (c->need < g.len[idx[i]]) {
			left[nleft++] = idx[i];
			continue;
		}
		take(c, g.cpus + g.start[idx[i]], g.len[idx[i]]);
		if (!c->need)
			return true;
	}
	sort_by_len(&g, left, nleft, false);
	for (unsigned i = 0; i < nleft && c->need >= c->cpc; i++)
		for (unsigned off = 0; off + c->cpc <= g.len[left[i]] && c->need >= c->cpc;
		     off += c->cpc) {
			take(c, g.cpus + g.start[left[i]] + off, c->cpc);
			if (!c->need)
				return true;
		}
	return false;
}

static bool take_whole_cores(struct acc *c, const struct pass *p, unsigned np)
{
	if (c->need <= c->per_node)
		for (unsigned i = 0; i < np; i++)
			if (whole_cores_one_group(c, true, p[i].numa))
				return true;
	if (c->need <= c->per_socket && whole_cores_one_group(c, false, false))
		return true;
	return take_cores_across_sockets(c);
}

static bool spread_one_group(struct acc *c, bool by_node, const struct pass *p)
{
	uint16_t order[CPUSETD_MAX_CPUS];
	struct groups g;

	cpus_in(c, by_node, p, &g);
	for (unsigned i = 0; i < g.n; i++)
		if (g.len[i] >= c->need) {
			spread(c, g.cpus + g.start[i], g.len[i], order);
			take(c, order, c->need);
			return true;
		}
	return false;
}

/* SpreadByPCPUs inside one node, else one socket, even if a pass must
 * give up on the exclusion or on distinct cores to fit. */
static bool take_spread_in_group(struct acc *c, const struct pass *p, unsigned np)
{
	if (c->need <= c->per_node)
		for (unsigned i = 0; i < np; i++)
			if (spread_one_group(c, true, &p[i]))
				return true;
	if (c->need <= c->per_socket)
		for (unsigned i = 0; i < np; i++)
			if (spread_one_group(c, false, &p[i]))
				return true;
	return false;
}

static bool take_remaining(struct acc *c, const struct pass *p, unsigned np)
{
	uint16_t list[CPUSETD_MAX_CPUS], order[CPUSETD_MAX_CPUS];

	for (unsigned i = 0; i < np; i++) {
		unsigned n = spread(c, list, cpus_flat(c, &p[i], list), order);

		for (unsigned j = 0; j < n; j++) {
			take(c, &order[j], 1);
			if (!c->need)
				return true;
		}
	}
	return false;
}

int koord_acc_take(const struct koord_acc_args *a, const struct cpumask *avail, unsigned n,
		   struct cpumask *ret)
{
	const struct pass *p;
	unsigned np = passes_of(a->excl, &p);
	struct acc c;

	acc_init(&c, a, avail, n);
	if (n > cpumask_weight(&c.free))
		return -ENOSPC;
	if (!n)
		goto done;
	if ((!a->spread || c.cpc == 1) && take_whole_cores(&c, p, np))
		goto done;
	if (a->spread && take_spread_in_group(&c, p, np))
		goto done;
	if (!take_remaining(&c, p, np))
		return -ENOSPC;
done:
	*ret = c.result;
	return 0;
}

unsigned koord_acc_spread_order(const struct koord_acc_args *a, const struct cpumask *avail,
				uint16_t *ret)
{
	static const struct pass all = { false, false, false };
	uint16_t list[CPUSETD_MAX_CPUS];
	struct acc c;

	acc_init(&c, a, avail, 0);
	return spread(&c, list, cpus_flat(&c, &all, list), ret);
}
