/*
 * Rebuilding the book-keeping from a live node (seeds/002 §3.4): the
 * kernel's cgroup files, and kubelet's checkpoint on takeover, are the
 * durable truth, so a running exclusive container whose set is still valid
 * is never moved.
 */
#include <errno.h>
#include <stdlib.h>
#include "policy_internal.h"

static bool can_keep(const struct policy *p, const struct klass_info *ki,
		     const struct cpumask *cur)
{
	struct cpumask taken, nodes;
	struct policy_decision scratch;

	if (!cur || cpumask_weight(cur) != ki->n || !cpumask_subset(cur, &p->topo->online))
		return false;
	policy_reserved(p, &taken);
	cpumask_or(&taken, &taken, &p->cfg.reserved_cpus);
	if (!ki->prefer_isolated)
		cpumask_or(&taken, &taken, &p->topo->isolated);
	if (cpumask_intersects(cur, &taken))
		return false;
	return policy_check_pool(p, cur, &scratch) == 0 &&
	       topo_nodes_of(p->topo, cur, &nodes) == 0;
}

const struct cpumask *policy_keepable(const struct policy *p, const struct klass_info *ki,
				      const struct policy_request *req,
				      const struct cpumask *current)
{
	if (can_keep(p, ki, req->kubelet_cpus))
		return req->kubelet_cpus;
	return can_keep(p, ki, current) ? current : NULL;
}

/*
 * Recovery phases. Integer containers that may keep their set go first, so
 * a restart never moves a running exclusive container; then annotated and
 * scheduled ones (their set is fixed by an annotation); then integer
 * containers that need CPUs; then pooled ones.
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

static int phase_of(const struct policy *p, const struct policy_request *req,
		    const struct cpumask *cur)
{
	struct policy_decision scratch = { 0 };
	struct klass_info ki;

	if (policy_classify(p, req, &ki, &scratch) < 0)
		return 3;
	switch (ki.k) {
	case K_ANNOTATED:
	case K_SCHEDULED:
		return 1;
	case K_INTEGER:
		/* candidate keeper; policy_keepable decides */
		return (cur && cpumask_weight(cur) == ki.n) ||
		       (req->kubelet_cpus && cpumask_weight(req->kubelet_cpus) == ki.n) ? 0 : 2;
	default:
		return 3;
	}
}

int policy_recover(struct policy *p, const struct policy_request *reqs,
		   const struct cpumask *current, const uint64_t *order, size_t n,
		   struct policy_decision *ret)
{
	struct slot *s = calloc(n ? n : 1, sizeof(*s));
	size_t i;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s[i] = (struct slot){ .i = i, .order = order[i],
				      .phase = phase_of(p, &reqs[i], current ? &current[i] : NULL) };
	qsort(s, n, sizeof(*s), slot_cmp);
	for (i = 0; i < n; i++) {
		size_t j = s[i].i;
		int r = policy_adopt(p, &reqs[j], current ? &current[j] : NULL, &ret[j]);

		if (r == -ENOMEM) {
			free(s);
			return r;
		}
	}
	/* Pooled decisions taken early saw larger pools: refresh them. */
	for (i = 0; i < n; i++)
		policy_pool_of(p, ret[i].kind, &ret[i].cpus);
	free(s);
	return 0;
}
