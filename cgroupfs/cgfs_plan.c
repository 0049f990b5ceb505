// SPDX-License-Identifier: Apache-2.0
/*
 * The v2 write planner (see cgfs_plan.h for the rules and the order).
 * Three passes over an array whose parents come before their children:
 * bottom-up to learn what each subtree wants, top-down to choose each
 * node's own set, then the write list in phase order. O(n) in time, no
 * allocation: the per-node scratch lives in the caller's nodes.
 */
#include <errno.h>
#include "cgfs_plan.h"

static int check_tree(const struct cgfs_plan_node *nodes, size_t n)
{
	if (!nodes || n == 0 || nodes[0].parent != -1)
		return -EINVAL;
	for (size_t i = 1; i < n; i++) {
		int p = nodes[i].parent;

		if (p < 0 || (size_t)p >= i || nodes[p].leaf)
			return -EINVAL;
	}
	return 0;
}

/* v2: own ∩ parent's effective; "" or an empty intersection = parent's. */
static void effective_of(const struct cpumask *own, const struct cpumask *parent_eff,
			 struct cpumask *ret)
{
	struct cpumask e;

	cpumask_and(&e, own, parent_eff);
	*ret = cpumask_empty(&e) ? *parent_eff : e;
}

int cgfs_plan_effective(const struct cgfs_plan_node *nodes, size_t n,
			const struct cpumask *own, const struct cpumask *above,
			struct cpumask *ret)
{
	int r = check_tree(nodes, n);

	if (r < 0 || !above || !ret)
		return r < 0 ? r : -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct cpumask *pe = i ? &ret[nodes[i].parent] : above;

		effective_of(own ? &own[i] : &nodes[i].own, pe, &ret[i]);
	}
	return 0;
}

/* Bottom-up: the union of the targets below each node (all_), the first
 * one seen (first_), whether they differ (mixed_), whether any (any_). */
static void gather(struct cgfs_plan_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct cgfs_plan_node *x = &nodes[i];

		x->any_ = x->leaf && !cpumask_empty(&x->target);
		x->mixed_ = false;
		x->all_ = x->any_ ? x->target : (struct cpumask){ { 0 } };
		x->first_ = x->all_;
	}
	for (size_t i = n; i-- > 1; ) {
		struct cgfs_plan_node *x = &nodes[i], *p = &nodes[x->parent];

		if (!x->any_)
			continue;
		if (!p->any_) {
			p->first_ = x->first_;
			p->mixed_ = x->mixed_;
		} else if (x->mixed_ || !cpumask_equal(&p->first_, &x->first_))
			p->mixed_ = true;
		p->any_ = true;
		cpumask_or(&p->all_, &p->all_, &x->all_);
	}
}

/* "Inherit the parent's effective set": "" when the own set is empty
 * already; else the kernel refuses "" while the cgroup has tasks (ENOSPC,
 * cpuset.c validate_change), so every CPU above instead, which the
 * parent's effective set is always within. */
static void inherit(const struct cgfs_plan_node *x, const struct cpumask *above,
		    struct cpumask *ret)
{
	if (cpumask_empty(&x->own) || cpumask_subset(above, &x->own))
		*ret = x->own;
	else
		*ret = *above;
}

/* The own set node i should hold, given its parent's planned effective
 * set pe (cgfs_plan.h: uniform, mixed, top). */
static void choose(const struct cgfs_plan_node *x, bool top, const struct cpumask *pe,
		   const struct cpumask *above, struct cpumask *ret)
{
	if (!x->any_) {
		*ret = x->own;		/* nothing of ours below: leave it */
	} else if (top) {
		*ret = x->own;
		if (!cpumask_empty(&x->own) && !cpumask_subset(&x->all_, &x->own))
			cpumask_or(ret, &x->own, &x->all_);
	} else if (!x->mixed_) {
		/* The top is not ours (an admin may change it): directly
		 * under it a uniform subtree holds its set explicitly. */
		if (x->parent != 0 && cpumask_equal(pe, &x->first_))
			inherit(x, above, ret);
		else
			*ret = x->first_;
	} else if (cpumask_subset(&x->all_, pe)) {
		inherit(x, above, ret);
	} else {
		*ret = x->all_;
	}
}

static void push(const struct cgfs_plan_node *nodes, size_t i, struct cgfs_plan_write *ret,
		 size_t *k)
{
	ret[*k] = (struct cgfs_plan_write){ .node = (int)i, .cpus = nodes[i].want };
	(*k)++;
}

static bool changes(const struct cgfs_plan_node *x)
{
	return !cpumask_equal(&x->want, &x->own);
}

static bool narrows(const struct cgfs_plan_node *x)
{
	return cpumask_subset(&x->eff, &x->eff_now_);
}

static bool exclusive_leaf(const struct cgfs_plan_node *x)
{
	return x->leaf && x->exclusive;
}

int cgfs_plan_v2(struct cgfs_plan_node *nodes, size_t n, const struct cpumask *above,
		 struct cgfs_plan_write *ret, size_t *ret_n)
{
	size_t k = 0;
	int r = check_tree(nodes, n);

	if (r < 0 || !above || !ret || !ret_n)
		return r < 0 ? r : -EINVAL;
	gather(nodes, n);
	for (size_t i = 0; i < n; i++) {
		struct cgfs_plan_node *x = &nodes[i];
		const struct cpumask *pe = i ? &nodes[x->parent].eff : above;
		const struct cpumask *pe_now = i ? &nodes[x->parent].eff_now_ : above;

		effective_of(&x->own, pe_now, &x->eff_now_);
		choose(x, i == 0, pe, above, &x->want);
		effective_of(&x->want, pe, &x->eff);
	}
	for (size_t i = 0; i < n; i++)		/* 1: narrowing, top-down */
		if (changes(&nodes[i]) && !exclusive_leaf(&nodes[i]) && narrows(&nodes[i]))
			push(nodes, i, ret, &k);
	for (size_t i = 0; i < n; i++)		/* 2: exclusive leaves */
		if (changes(&nodes[i]) && exclusive_leaf(&nodes[i]))
			push(nodes, i, ret, &k);
	for (size_t i = n; i-- > 0; )		/* 3: widening, bottom-up */
		if (changes(&nodes[i]) && !exclusive_leaf(&nodes[i]) && !narrows(&nodes[i]))
			push(nodes, i, ret, &k);
	*ret_n = k;
	return 0;
}
