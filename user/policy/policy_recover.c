// SPDX-License-Identifier: Apache-2.0
/*
 * Rebuilding the book-keeping from a live node (PRD §3.4): the
 * kernel's cgroup files, and kubelet's checkpoint on takeover, are the
 * durable truth, so a running exclusive container whose set is still valid
 * is never moved.
 */
#include <errno.h>
#include <stdlib.h>
#include "policy_hotplug.h"
#include "policy_internal.h"

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
		       (cur && req->running && cpumask_intersects(cur, &p->topo->online) &&
			cpumask_weight(cur) <= ki.n) ||
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
	struct policy_hotplug hp;
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
	free(s);
	/* Sets kept short of CPUs offline get refilled, fixed sets with CPUs
	 * offline get their error: the state hotplug events would have made. */
	if (policy_set_online(p, p->topo, &hp) < 0)
		return -ENOMEM;
	policy_hotplug_free(&hp);
	/* Refresh every decision: pooled ones taken early saw larger pools. */
	for (i = 0; i < n; i++)
		policy_decision_get(p, reqs[i].container_id, &ret[i]);
	return 0;
}
