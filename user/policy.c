/*
 * The allocation rules of seeds/002 and their book-keeping (annotRef,
 * intOwner, byCID). Pure: no I/O, no clock, no randomness; the same
 * book-keeping and request always give the same answer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"
#include "strmap.h"

struct policy {
	const struct topology *topo;
	struct policy_config cfg;
	struct strmap *by_cid;				/* byCID: id -> entry */
	uint16_t annot_ref[CPUSETD_MAX_CPUS];		/* annotRef */
	struct policy_entry *int_owner[CPUSETD_MAX_CPUS];	/* intOwner */
	struct cpumask annotated;			/* annot_ref > 0 */
	struct cpumask integer;				/* int_owner != NULL */
};

static const char *const error_names[POLICY_ERR__COUNT] = {
	[POLICY_OK] = "",
	[POLICY_ERR_INVALID_ANNOTATION] = "invalid_annotation",
	[POLICY_ERR_CPU_OFFLINE] = "cpu_offline",
	[POLICY_ERR_CPU_EXCLUSIVE] = "cpu_exclusive",
	[POLICY_ERR_INSUFFICIENT_CPUS] = "insufficient_cpus",
	[POLICY_ERR_SHARED_POOL_EMPTY] = "shared_pool_empty",
	[POLICY_ERR_NUMA_UNRESOLVED] = "numa_unresolved",
};

/* The errno each admission error is returned as. */
static const int error_errno[POLICY_ERR__COUNT] = {
	[POLICY_ERR_INVALID_ANNOTATION] = EINVAL,
	[POLICY_ERR_CPU_OFFLINE] = ENXIO,
	[POLICY_ERR_CPU_EXCLUSIVE] = EBUSY,
	[POLICY_ERR_INSUFFICIENT_CPUS] = ENOSPC,
	[POLICY_ERR_SHARED_POOL_EMPTY] = ENOSPC,
	[POLICY_ERR_NUMA_UNRESOLVED] = ENXIO,
};

const char *policy_error_name(enum policy_error err)
{
	return err < POLICY_ERR__COUNT ? error_names[err] : "unknown";
}

const char *policy_kind_name(enum cpusetd_kind kind)
{
	switch (kind) {
	case CPUSETD_KIND_SHARED: return "shared";
	case CPUSETD_KIND_INTEGER: return "integer";
	case CPUSETD_KIND_ANNOTATED: return "annotated";
	default: return "none";
	}
}

int policy_new(const struct topology *topo, const struct policy_config *cfg,
	       struct policy **ret)
{
	struct policy *p;

	if (!cfg->min_shared_cpus)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->by_cid = strmap_new();
	if (!p->by_cid) {
		free(p);
		return -ENOMEM;
	}
	p->topo = topo;
	p->cfg = *cfg;
	*ret = p;
	return 0;
}

void policy_reset(struct policy *p)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(p->by_cid, &it, &k, &v))
		free(v);
	strmap_free(p->by_cid);
	p->by_cid = strmap_new();	/* NULL on ENOMEM: see policy_admit */
	memset(p->annot_ref, 0, sizeof(p->annot_ref));
	memset(p->int_owner, 0, sizeof(p->int_owner));
	cpumask_zero(&p->annotated);
	cpumask_zero(&p->integer);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	policy_reset(p);
	strmap_free(p->by_cid);
	free(p);
}

void policy_reserved(const struct policy *p, struct cpumask *ret)
{
	cpumask_or(ret, &p->annotated, &p->integer);
}

void policy_shared_pool(const struct policy *p, struct cpumask *ret)
{
	struct cpumask reserved;

	policy_reserved(p, &reserved);
	cpumask_andnot(ret, &p->topo->online, &reserved);
}

unsigned policy_annot_ref(const struct policy *p, unsigned cpu)
{
	return cpu < CPUSETD_MAX_CPUS ? p->annot_ref[cpu] : 0;
}

const char *policy_int_owner(const struct policy *p, unsigned cpu)
{
	return cpu < CPUSETD_MAX_CPUS && p->int_owner[cpu] ? p->int_owner[cpu]->container_id : NULL;
}

const struct policy_entry *policy_lookup(const struct policy *p, const char *container_id)
{
	return p->by_cid ? strmap_get(p->by_cid, container_id) : NULL;
}

const struct policy_entry *policy_next(const struct policy *p, size_t *it)
{
	const char *k;
	void *v;

	return p->by_cid && strmap_next(p->by_cid, it, &k, &v) ? v : NULL;
}

/* --- classification --- */

enum klass { K_ANNOTATED, K_INTEGER, K_SHARED };

static enum klass classify(const struct policy_request *req, unsigned *ret_n)
{
	if (req->sandbox)
		return K_SHARED;	/* pause containers always share */
	if (req->cores_ids)
		return K_ANNOTATED;
	/* Static CPU manager criterion: Guaranteed and quota % period == 0. */
	if (req->qos == CGFS_QOS_GUARANTEED && req->quota_us > 0 && req->period_us > 0 &&
	    (uint64_t)req->quota_us % req->period_us == 0) {
		uint64_t n = (uint64_t)req->quota_us / req->period_us;

		*ret_n = n > CPUSETD_MAX_CPUS ? CPUSETD_MAX_CPUS + 1 : (unsigned)n;
		return K_INTEGER;
	}
	return K_SHARED;
}

/* --- errors --- */

static int fail(struct policy_decision *d, enum policy_error err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct policy_decision *d, enum policy_error err, const char *fmt, ...)
{
	va_list ap;

	d->err = err;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	return -error_errno[err];
}

static void fmt_mask(const struct cpumask *m, char *buf, size_t len)
{
	if (cpulist_format(m, buf, len) < 0)
		snprintf(buf, len, "(%u CPUs)", cpumask_weight(m));
}

/* Refuses when the pool would drop below min_shared_cpus after taking cpus. */
static int check_pool(const struct policy *p, const struct cpumask *cpus,
		      struct policy_decision *d)
{
	struct cpumask pool;

	policy_shared_pool(p, &pool);
	cpumask_andnot(&pool, &pool, cpus);
	if (cpumask_weight(&pool) >= p->cfg.min_shared_cpus)
		return 0;
	return fail(d, POLICY_ERR_SHARED_POOL_EMPTY,
		    "would leave %u CPUs in the shared pool (min_shared_cpus=%u)",
		    cpumask_weight(&pool), p->cfg.min_shared_cpus);
}

/* --- annotated --- */

static int place_annotated(const struct policy *p, const char *text, struct policy_decision *d)
{
	struct cpumask cpus, bad;
	char buf[CPULIST_MAX];
	int r, id;

	r = cpulist_parse(text, &cpus);
	if (r < 0 || cpumask_empty(&cpus))
		return fail(d, POLICY_ERR_INVALID_ANNOTATION,
			    "weka.io/cores-ids \"%.64s\" is not a non-empty cpulist (%s)", text,
			    r < 0 ? strerror(-r) : "empty");
	cpumask_andnot(&bad, &cpus, &p->topo->online);
	if (!cpumask_empty(&bad)) {
		fmt_mask(&bad, buf, sizeof(buf));
		return fail(d, POLICY_ERR_CPU_OFFLINE,
			    "weka.io/cores-ids CPUs %.128s are not online", buf);
	}
	if (topo_nodes_of(p->topo, &cpus, &d->mems) < 0)
		return fail(d, POLICY_ERR_NUMA_UNRESOLVED,
			    "weka.io/cores-ids: no NUMA node known for some of its CPUs");
	cpumask_and(&bad, &cpus, &p->integer);
	id = cpumask_next(&bad, 0);
	if (id >= 0)
		return fail(d, POLICY_ERR_CPU_EXCLUSIVE,
			    "weka.io/cores-ids CPU %d is exclusively owned by %.200s", id,
			    p->int_owner[id]->name);
	r = check_pool(p, &cpus, d);
	if (r < 0)
		return r;
	d->kind = CPUSETD_KIND_ANNOTATED;
	d->cpus = cpus;
	return 0;
}

/* --- integer --- */

/* Free siblings of cpu's physical core within avail. */
static unsigned free_siblings(const struct topology *t, unsigned cpu, const struct cpumask *avail)
{
	struct cpumask m;

	cpumask_and(&m, topo_core_cpus(t, cpu), avail);
	return cpumask_weight(&m);
}

/*
 * Takes up to *need CPUs from avail into *got: whole idle physical cores
 * first (ascending), then single CPUs from the cores with the fewest free
 * siblings, so idle cores stay whole for the next request.
 */
static void take_cores(const struct topology *t, const struct cpumask *avail,
		       unsigned *need, struct cpumask *got)
{
	struct cpumask left = *avail;
	int id;

	cpumask_for_each(id, avail) {
		const struct cpumask *core = topo_core_cpus(t, (unsigned)id);
		unsigned w = cpumask_weight(core);

		if (!*need)
			return;
		if (t->cpu[id].core != id || !cpumask_subset(core, &left) || w > *need)
			continue;
		cpumask_or(got, got, core);
		cpumask_andnot(&left, &left, core);
		*need -= w;
	}
	while (*need && !cpumask_empty(&left)) {
		int best = -1;
		unsigned best_free = ~0u;

		cpumask_for_each(id, &left) {
			unsigned f = free_siblings(t, (unsigned)id, &left);

			if (f < best_free) {
				best = id;
				best_free = f;
			}
		}
		cpumask_set(got, (unsigned)best);
		cpumask_clear(&left, (unsigned)best);
		(*need)--;
	}
}

/* Node free counts, for picking nodes deterministically. */
static unsigned node_free(const struct topology *t, int node, const struct cpumask *free_cpus)
{
	struct cpumask m;

	cpumask_and(&m, &t->node_cpus[node], free_cpus);
	return cpumask_weight(&m);
}

/*
 * N CPUs out of free_cpus: within one NUMA node when one can hold them (the
 * fullest that fits, to keep emptier nodes for bigger requests), else
 * across the nodes with the most free CPUs first.
 */
static void pick_integer(const struct topology *t, const struct cpumask *free_cpus,
			 unsigned n, struct cpumask *ret)
{
	struct cpumask used, avail;
	int node, best = -1;

	cpumask_zero(ret);
	cpumask_for_each(node, &t->nodes) {
		unsigned f = node_free(t, node, free_cpus);

		if (f >= n && (best < 0 || f < node_free(t, best, free_cpus)))
			best = node;
	}
	if (best >= 0) {
		cpumask_and(&avail, &t->node_cpus[best], free_cpus);
		take_cores(t, &avail, &n, ret);
		return;
	}
	cpumask_zero(&used);
	while (n) {
		best = -1;
		cpumask_for_each(node, &t->nodes) {
			if (cpumask_test(&used, (unsigned)node))
				continue;
			if (best < 0 || node_free(t, node, free_cpus) > node_free(t, best, free_cpus))
				best = node;
		}
		if (best < 0)
			break;
		cpumask_set(&used, (unsigned)best);
		cpumask_and(&avail, &t->node_cpus[best], free_cpus);
		take_cores(t, &avail, &n, ret);
	}
	if (n) {	/* CPUs outside every node: take what is left */
		cpumask_andnot(&avail, free_cpus, ret);
		take_cores(t, &avail, &n, ret);
	}
}

static int place_integer(const struct policy *p, unsigned n, struct policy_decision *d)
{
	struct cpumask free_cpus, cpus;
	char buf[CPULIST_MAX];
	int r;

	policy_shared_pool(p, &free_cpus);
	if (cpumask_weight(&free_cpus) < n) {
		fmt_mask(&free_cpus, buf, sizeof(buf));
		return fail(d, POLICY_ERR_INSUFFICIENT_CPUS,
			    "needs %u exclusive CPUs, only %u free (%.128s)", n,
			    cpumask_weight(&free_cpus), buf);
	}
	pick_integer(p->topo, &free_cpus, n, &cpus);
	r = check_pool(p, &cpus, d);
	if (r < 0)
		return r;
	if (topo_nodes_of(p->topo, &cpus, &d->mems) < 0)
		return fail(d, POLICY_ERR_NUMA_UNRESOLVED,
			    "no NUMA node known for some of the chosen CPUs");
	d->kind = CPUSETD_KIND_INTEGER;
	d->cpus = cpus;
	return 0;
}

/* --- shared --- */

static int place_shared(const struct policy *p, struct policy_decision *d)
{
	d->kind = CPUSETD_KIND_SHARED;
	policy_shared_pool(p, &d->cpus);
	cpumask_zero(&d->mems);
	if (cpumask_empty(&d->cpus))
		return fail(d, POLICY_ERR_SHARED_POOL_EMPTY, "the shared pool is empty");
	return 0;
}

/* --- book-keeping --- */

static void decision_from_entry(const struct policy *p, const struct policy_entry *e,
				struct policy_decision *d)
{
	*d = (struct policy_decision){ .kind = e->kind, .err = e->err };
	if (e->kind == CPUSETD_KIND_SHARED)
		policy_shared_pool(p, &d->cpus);
	else
		d->cpus = e->cpus;
	d->mems = e->mems;
	d->reject = e->err && p->cfg.on_error == POLICY_ON_ERROR_REJECT && !e->sandbox;
	snprintf(d->reason, sizeof(d->reason), "%s", e->reason);
}

static int record(struct policy *p, const struct policy_request *req, unsigned n,
		  const struct policy_decision *d)
{
	struct policy_entry *e = calloc(1, sizeof(*e));
	int id;

	if (!e || !p->by_cid)
		goto nomem;
	snprintf(e->container_id, sizeof(e->container_id), "%s", req->container_id);
	snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", req->pod_uid ? req->pod_uid : "");
	snprintf(e->name, sizeof(e->name), "%s", req->name ? req->name : req->container_id);
	e->kind = d->kind;
	e->n_cpus = n;
	e->sandbox = req->sandbox;
	e->err = d->err;
	snprintf(e->reason, sizeof(e->reason), "%s", d->reason);
	if (d->kind != CPUSETD_KIND_SHARED) {
		e->cpus = d->cpus;
		e->mems = d->mems;
	}
	if (strmap_put(p->by_cid, e->container_id, e) < 0)
		goto nomem;
	cpumask_for_each(id, &e->cpus) {
		if (e->kind == CPUSETD_KIND_ANNOTATED) {
			p->annot_ref[id]++;
			cpumask_set(&p->annotated, (unsigned)id);
		} else {
			p->int_owner[id] = e;
			cpumask_set(&p->integer, (unsigned)id);
		}
	}
	return 0;
nomem:
	free(e);
	return -ENOMEM;
}

static int admit_as(struct policy *p, const struct policy_request *req, enum klass k,
		    unsigned n, const struct cpumask *keep, struct policy_decision *d)
{
	int r, rr;

	*d = (struct policy_decision){ 0 };
	if (keep) {
		d->kind = CPUSETD_KIND_INTEGER;
		d->cpus = *keep;
		r = topo_nodes_of(p->topo, keep, &d->mems);
	} else if (k == K_ANNOTATED) {
		r = place_annotated(p, req->cores_ids, d);
	} else if (k == K_INTEGER) {
		r = place_integer(p, n, d);
	} else {
		r = place_shared(p, d);
	}
	if (r < 0) {
		/* Admission error: placed on the shared pool (even if empty, so
		 * the caller leaves its cpus alone), rejected unless a sandbox. */
		d->kind = CPUSETD_KIND_SHARED;
		policy_shared_pool(p, &d->cpus);
		cpumask_zero(&d->mems);
		d->reject = p->cfg.on_error == POLICY_ON_ERROR_REJECT && !req->sandbox;
	}
	rr = record(p, req, n, d);
	return rr < 0 ? rr : r;
}

int policy_admit(struct policy *p, const struct policy_request *req,
		 struct policy_decision *ret)
{
	const struct policy_entry *e = policy_lookup(p, req->container_id);
	unsigned n = 0;
	enum klass k;

	if (e) {
		decision_from_entry(p, e, ret);
		return 0;
	}
	k = classify(req, &n);
	return admit_as(p, req, k, n, NULL, ret);
}

/* Can an integer container keep cur? Exactly n online CPUs, all free, and
 * the pool keeps its minimum. */
static bool can_keep(const struct policy *p, unsigned n, const struct cpumask *cur)
{
	struct cpumask pool, nodes;
	struct policy_decision scratch;

	if (!cur || cpumask_weight(cur) != n)
		return false;
	policy_shared_pool(p, &pool);
	if (!cpumask_subset(cur, &pool))
		return false;
	return check_pool(p, cur, &scratch) == 0 && topo_nodes_of(p->topo, cur, &nodes) == 0;
}

int policy_adopt(struct policy *p, const struct policy_request *req,
		 const struct cpumask *current, struct policy_decision *ret)
{
	unsigned n = 0;
	enum klass k;

	if (policy_lookup(p, req->container_id))
		return policy_admit(p, req, ret);
	k = classify(req, &n);
	if (k == K_INTEGER && can_keep(p, n, current))
		return admit_as(p, req, k, n, current, ret);
	return admit_as(p, req, k, n, NULL, ret);
}

/*
 * Recovery phases. Integer containers that can keep their set go first, so
 * a restart never moves a running exclusive container; then annotated ones
 * (their set is fixed by the annotation); then integer containers that need
 * CPUs; then the rest.
 */
struct slot {
	size_t i;
	int phase;
	uint64_t order;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->phase != y->phase)
		return x->phase - y->phase;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int policy_recover(struct policy *p, const struct policy_request *reqs,
		   const struct cpumask *current, const uint64_t *order, size_t n,
		   struct policy_decision *ret)
{
	struct slot *s = calloc(n ? n : 1, sizeof(*s));
	size_t i;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned cnt = 0;
		enum klass k = classify(&reqs[i], &cnt);

		s[i] = (struct slot){ .i = i, .order = order[i] };
		s[i].phase = k == K_ANNOTATED ? 1 : k == K_INTEGER ? 2 : 3;
		if (k == K_INTEGER && current && cpumask_weight(&current[i]) == cnt)
			s[i].phase = 0;	/* candidate keeper; can_keep decides */
	}
	qsort(s, n, sizeof(*s), slot_cmp);
	for (i = 0; i < n; i++) {
		size_t j = s[i].i;
		int r = policy_adopt(p, &reqs[j], current ? &current[j] : NULL, &ret[j]);

		if (r == -ENOMEM) {
			free(s);
			return r;
		}
	}
	/* Shared decisions taken early saw a larger pool: refresh them. */
	for (i = 0; i < n; i++)
		if (ret[i].kind == CPUSETD_KIND_SHARED)
			policy_shared_pool(p, &ret[i].cpus);
	free(s);
	return 0;
}

bool policy_release(struct policy *p, const char *container_id)
{
	struct policy_entry *e = p->by_cid ? strmap_del(p->by_cid, container_id) : NULL;
	bool changed = false;
	int id;

	if (!e)
		return false;
	cpumask_for_each(id, &e->cpus) {
		if (e->kind == CPUSETD_KIND_ANNOTATED) {
			if (p->annot_ref[id] && --p->annot_ref[id] == 0) {
				cpumask_clear(&p->annotated, (unsigned)id);
				changed = true;
			}
		} else if (p->int_owner[id] == e) {
			p->int_owner[id] = NULL;
			cpumask_clear(&p->integer, (unsigned)id);
			changed = true;
		}
	}
	free(e);
	return changed;
}
