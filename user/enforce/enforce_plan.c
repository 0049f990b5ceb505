// SPDX-License-Identifier: Apache-2.0
/*
 * The planner (enforce.h): the rules as one pass per phase over the
 * targets. Pure: no system call, no log.
 */
#include <errno.h>
#include <stdlib.h>
#include "enforce.h"

static int push(struct enforce_plan *p, enum enforce_op_kind kind, size_t target,
		const struct cpumask *set)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct enforce_op *ops = realloc(p->ops, cap * sizeof(*ops));

		if (!ops)
			return -ENOMEM;
		p->ops = ops;
		p->cap = cap;
	}
	p->ops[p->n] = (struct enforce_op){ .kind = kind, .target = (uint32_t)target };
	if (set)
		p->ops[p->n].set = *set;
	else
		cpumask_zero(&p->ops[p->n].set);
	p->n++;
	return 0;
}

/* Rule 1: the file does not hold want yet (or nobody knows what it holds). */
static bool differs(const struct cpumask *have, const struct cpumask *want)
{
	return !have || !cpumask_equal(have, want);
}

static bool cpus_due(const struct enforce_target *t)
{
	return t->cpus && differs(t->cpus_have, t->cpus);
}

static bool mems_due(const struct enforce_target *t)
{
	return t->mems && differs(t->mems_have, t->mems);
}

/* Rule 2: a known set that becomes a part of itself only gives up. */
static bool gives_only(const struct enforce_target *t)
{
	return t->cpus_have && cpumask_subset(t->cpus, t->cpus_have);
}

/* Rule 3: the entry must allow to before a write of it lands. */
static int widen(struct enforce_plan *p, const struct enforce_target *t, size_t i,
		 const struct cpumask *to)
{
	struct cpumask wide;

	if (!t->map_have || cpumask_subset(to, t->map_have))
		return 0;
	cpumask_or(&wide, t->map_have, to);
	return push(p, ENFORCE_MAP_WIDEN, i, &wide);
}

/* Whether t's writes belong to the phase: the first (give) takes the
 * sets that only give CPUs up; the second every other set, and the
 * targets with only their mems to write. */
static bool in_phase(const struct enforce_target *t, bool give)
{
	if (cpus_due(t))
		return gives_only(t) == give;
	return !give && mems_due(t);
}

/* One phase: its widenings first (one batch), then each target's cpus
 * and mems (rule 4). */
static int phase(const struct enforce_target *t, size_t n, bool give, struct enforce_plan *p)
{
	int r = 0;

	for (size_t i = 0; i < n && !r; i++)
		if (in_phase(&t[i], give) && cpus_due(&t[i]))
			r = widen(p, &t[i], i, t[i].cpus);
	for (size_t i = 0; i < n && !r; i++) {
		if (!in_phase(&t[i], give))
			continue;
		if (cpus_due(&t[i]))
			r = push(p, ENFORCE_CPUS, i, t[i].cpus);
		if (!r && mems_due(&t[i]))
			r = push(p, ENFORCE_MEMS, i, t[i].mems);
	}
	return r;
}

/* Rule 5: the exact entries, last. */
static int exact_maps(const struct enforce_target *t, size_t n, struct enforce_plan *p)
{
	int r = 0;

	p->writes_end = p->n;
	for (size_t i = 0; i < n && !r; i++)
		if (t[i].map_have && t[i].map_want)
			r = push(p, ENFORCE_MAP, i, t[i].map_want);
	return r;
}

static int start(const struct enforce_target *t, size_t n, struct enforce_plan *p)
{
	if (!p || (!t && n) || n > UINT32_MAX)
		return -EINVAL;
	p->n = p->writes_end = 0;
	return 0;
}

static int done(struct enforce_plan *p, int r)
{
	if (r < 0)
		p->n = p->writes_end = 0;
	return r;
}

int enforce_plan(const struct enforce_target *t, size_t n, unsigned flags,
		 struct enforce_plan *p)
{
	int r = start(t, n, p);

	if (r < 0)
		return r;
	r = phase(t, n, true, p);
	if (!r && (flags & ENFORCE_WITH_HOST))
		r = push(p, ENFORCE_HOST, 0, NULL);
	if (!r)
		r = phase(t, n, false, p);
	if (!r)
		r = exact_maps(t, n, p);
	return done(p, r);
}

int enforce_plan_tree(const struct enforce_target *t, size_t n,
		      const struct cgfs_plan_write *w, size_t nw, const int *node_target,
		      struct enforce_plan *p)
{
	int r = start(t, n, p);

	if (r < 0)
		return r;
	if (nw && (!w || !node_target))
		return -EINVAL;
	/* rule 3, for every target whose set may grow through the tree:
	 * its cpus are the target it must end on, whatever level writes it */
	for (size_t i = 0; i < n && !r; i++)
		if (t[i].cpus && !cpumask_empty(t[i].cpus))
			r = widen(p, &t[i], i, t[i].cpus);
	for (size_t k = 0; k < nw && !r; k++) {
		int i = node_target[w[k].node];

		if (i >= 0 && (size_t)i < n)
			r = push(p, ENFORCE_CPUS, (size_t)i, &w[k].cpus);
	}
	for (size_t i = 0; i < n && !r; i++)
		if (mems_due(&t[i]))
			r = push(p, ENFORCE_MEMS, i, t[i].mems);
	if (!r)
		r = exact_maps(t, n, p);
	return done(p, r);
}

void enforce_plan_free(struct enforce_plan *p)
{
	if (!p)
		return;
	free(p->ops);
	p->ops = NULL;
	p->n = p->cap = p->writes_end = 0;
}
