// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation: one pass plans every change (cgroups, root tasks, IRQs,
 * workqueue), saves the originals of what it is about to narrow (write
 * ahead: a crash between the save and the writes leaves live values equal
 * to the originals, which the next pass reads as such), writes, and saves
 * what is in force.
 *
 * v1 cpusets need the order: a parent must hold every CPU of its children
 * (Documentation/admin-guide/cgroup-v1/cpusets.rst §1.4), so cgroups are
 * first widened to cur ∪ want from the top, then narrowed to want from
 * the bottom. v2 takes any order (effective = own ∩ parent's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_internal.h"
#include "user/base/clock.h"
#include "user/base/log.h"

static const char *const kind_name[] = {
	[HOST_CGROUP] = "cgroup", [HOST_TASK] = "task", [HOST_IRQ] = "irq",
	[HOST_IRQ_DEFAULT] = "default IRQ affinity", [HOST_WORKQUEUE] = "unbound workqueue cpumask",
};

int host_new(const struct host_opts *o, struct host **ret)
{
	struct host *h;
	int r;

	*ret = NULL;
	if (!o || !o->cg || !o->state_dir || !o->proc || !o->sys || o->n_skip > HOST_MAX_SKIP)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->recs = strmap_new();
	h->refused = strmap_new();
	if (!h->recs || !h->refused) {
		host_free(h);
		return -ENOMEM;
	}
	r = host_state_load(h);
	if (r == -ENOMEM || r == -EPERM) {
		host_free(h);	/* -EPERM: refused, logged; no pass may overwrite it */
		return r;
	}
	if (r < 0)
		log_warn("isolation: cannot read %s/%s (%s); originals of a crashed run are "
			 "taken from the live values", o->state_dir, HOST_STATE_FILE, strerror(-r));
	*ret = h;
	return 0;
}

static void free_map(struct strmap *m, bool values)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (values && m && strmap_next(m, &it, &k, &v))
		free(v);
	strmap_free(m);
}

void host_free(struct host *h)
{
	if (!h)
		return;
	free_map(h->recs, true);
	free_map(h->refused, false);
	free(h->plans);
	free(h);
}

bool host_pending(const struct host *h)
{
	return h && strmap_count(h->recs) > 0;
}

void host_get_status(const struct host *h, struct host_status *ret)
{
	*ret = h->st;
}

/* Records as they should be when plan p's write failed: the live value
 * is still cur, and cur's original is what p said. */
static void plan_failed(struct host *h, const struct host_plan *p)
{
	if (cpumask_equal(&p->cur, &p->orig))
		host_rec_del(h, p->kind, p->key);
	else
		host_rec_put(h, p->kind, p->key, p->start, &p->orig, &p->cur);
}

static int write_plan(struct host *h, const struct host_plan *p, const struct cpumask *m)
{
	switch (p->kind) {
	case HOST_CGROUP:
		return host_cgroup_write(h, p->key, m);
	case HOST_TASK:
		return host_task_write(h, p->key, p->start, m);
	default:
		return host_irq_write(h, p->kind, p->key, m);
	}
}

static void log_change(const struct host_plan *p)
{
	char was[CPULIST_MAX], now[CPULIST_MAX];
	int level = p->kind == HOST_TASK || p->kind == HOST_IRQ ? LOG_DEBUG : LOG_INFO;

	cpulist_format(&p->cur, was, sizeof(was));
	cpulist_format(&p->want, now, sizeof(now));
	if (p->kind == HOST_IRQ_DEFAULT || p->kind == HOST_WORKQUEUE)
		log_msg(level, "isolation: %s %s -> %s%s", kind_name[p->kind], was, now,
			p->restore ? " (its own again)" : "");
	else
		log_msg(level, "isolation: %s %s cpus %s -> %s%s", kind_name[p->kind], p->key,
			was[0] ? was : "\"\"", now[0] ? now : "\"\" (inherit)",
			p->restore ? " (its own again)" : "");
}

/* A refusal: logged once per thing and exclusive set, given as a reason. */
static void refused(struct host *h, const struct host_plan *p)
{
	char key[CGFS_PATH_MAX + 8];

	host_reason(h, "%s %s: %s", kind_name[p->kind], p->key, strerror(-p->err));
	host_rec_key(p->kind, p->key, key, sizeof(key));
	if (strmap_get(h->refused, key))
		return;
	strmap_put(h->refused, key, (void *)1);
	log_msg(p->kind == HOST_TASK ? LOG_DEBUG : LOG_INFO,
		"isolation: %s %s refused the host's CPUs: %s%s", kind_name[p->kind], p->key,
		strerror(-p->err), p->kind == HOST_IRQ && p->err == -EIO ?
		" (not movable: managed or per-CPU)" : "");
}

static int by_depth(const void *a, const void *b)
{
	const struct host_plan *x = a, *y = b;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->depth - y->depth;
}

/* Writes every plan; cgroups widened top-down, then narrowed bottom-up. */
static void write_all(struct host *h, struct host_pass *out)
{
	struct cpumask wide;
	size_t i;

	qsort(h->plans, h->n_plans, sizeof(h->plans[0]), by_depth);
	for (i = 0; i < h->n_plans; i++) {
		struct host_plan *p = &h->plans[i];

		if (p->kind != HOST_CGROUP)
			continue;
		cpumask_or(&wide, &p->cur, &p->want);
		if (!cpumask_equal(&wide, &p->cur))
			p->err = write_plan(h, p, &wide);
	}
	for (i = h->n_plans; i-- > 0;) {
		struct host_plan *p = &h->plans[i];

		cpumask_or(&wide, &p->cur, &p->want);
		if (p->err || (p->kind == HOST_CGROUP && cpumask_equal(&wide, &p->want) &&
			       !cpumask_equal(&wide, &p->cur)))
			continue;	/* failed, or the widening wrote it */
		p->err = write_plan(h, p, &p->want);
	}
	for (i = 0; i < h->n_plans; i++) {
		struct host_plan *p = &h->plans[i];

		if (p->err == -ENOENT || p->err == -ESRCH) {
			host_rec_del(h, p->kind, p->key);	/* gone: nothing to keep */
			continue;
		}
		if (p->err) {
			plan_failed(h, p);
			refused(h, p);
			out->refused++;
			if (p->kind == HOST_IRQ)
				h->st.irqs_refused++;
			else if (p->kind == HOST_CGROUP)
				h->st.cgroups_left++;
			else if (p->kind == HOST_TASK)
				h->st.tasks_left++;
			continue;
		}
		log_change(p);
		if (p->restore) {
			host_rec_del(h, p->kind, p->key);
			out->restored++;
		} else if (cpumask_subset(&p->want, &p->cur)) {
			out->narrowed++;
		} else {
			out->restored++;
		}
	}
}

/* Records of things not found live in a pass whose scan of their kind
 * worked are of things that are gone. */
static void drop_unseen(struct host *h, const bool *scanned)
{
	char *keys[64];
	size_t it = 0, n;
	const char *k;
	void *v;

	do {
		n = 0;
		it = 0;
		while (n < 64 && strmap_next(h->recs, &it, &k, &v)) {
			struct host_rec *r = v;

			if (!r->seen && scanned[r->kind])
				keys[n++] = (char *)k;
		}
		for (size_t i = 0; i < n; i++)
			free(strmap_del(h->recs, keys[i]));
	} while (n == 64);
}

static void count_status(struct host *h)
{
	size_t it = 0;
	const char *k;
	void *v;

	h->st.cgroups_narrowed = h->st.tasks_narrowed = h->st.irqs_moved = 0;
	h->st.irq_default_narrowed = h->st.workqueue_narrowed = false;
	while (strmap_next(h->recs, &it, &k, &v)) {
		switch (((struct host_rec *)v)->kind) {
		case HOST_CGROUP: h->st.cgroups_narrowed++; break;
		case HOST_TASK: h->st.tasks_narrowed++; break;
		case HOST_IRQ: h->st.irqs_moved++; break;
		case HOST_IRQ_DEFAULT: h->st.irq_default_narrowed = true; break;
		case HOST_WORKQUEUE: h->st.workqueue_narrowed = true; break;
		}
	}
}

/* Dry run: say what would change, keep nothing. */
static void dry_run(struct host *h)
{
	size_t it = 0;
	const char *k;
	void *v;

	for (size_t i = 0; i < h->n_plans; i++) {
		log_msg(LOG_INFO, "isolation (dry run): would write:");
		log_change(&h->plans[i]);
	}
	while (strmap_next(h->recs, &it, &k, &v))
		free(v);
	strmap_free(h->recs);
	h->recs = strmap_new();
}

int host_sync(struct host *h, const char *kubepods_root, const struct cpumask *online,
	      const struct cpumask *exclusive, struct host_pass *pass)
{
	struct host_pass dummy = { 0 };
	struct host_pass *out = pass ? pass : &dummy;
	bool scanned[HOST_WORKQUEUE + 1] = { false };
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct cpumask host;
	bool active;
	size_t it = 0;
	const char *k;
	void *v;
	int r;

	*out = (struct host_pass){ 0 };
	h->online = *online;
	cpumask_andnot(&host, online, exclusive);
	active = !cpumask_empty(exclusive) && !cpumask_empty(&host);
	if (!cpumask_equal(&h->refused_for, exclusive)) {
		free_map(h->refused, false);	/* new set: refusals are news again */
		h->refused = strmap_new();
		if (!h->refused)
			return -ENOMEM;
		h->refused_for = *exclusive;
	}
	h->st = (struct host_status){ .active = active, .exclusive = *exclusive, .host = host };
	if (!active && !host_pending(h)) {
		if (h->saved_nonempty)
			host_state_save(h);
		return 0;	/* nothing narrowed, nothing to narrow */
	}
	while (strmap_next(h->recs, &it, &k, &v))
		((struct host_rec *)v)->seen = false;
	h->n_plans = 0;
	r = host_cgroups_plan(h, kubepods_root, online, &host, active);
	scanned[HOST_CGROUP] = r == 0;
	if (r == -ENOMEM)
		return r;
	r = host_tasks_plan(h, online, &host, active);
	scanned[HOST_TASK] = r == 0;
	if (r == -ENOMEM)
		return r;
	r = host_irq_plan(h, online, &host, active);
	if (r == -ENOMEM)
		return r;
	scanned[HOST_IRQ] = scanned[HOST_IRQ_DEFAULT] = scanned[HOST_WORKQUEUE] = r == 0;
	drop_unseen(h, scanned);
	if (h->o.dry_run) {
		dry_run(h);
		return 0;
	}
	/* write ahead: the originals of what is about to be narrowed */
	r = host_state_save(h);
	if (r < 0) {
		log_error("isolation: cannot save %s/%s: %s; not narrowing anything",
			  h->o.state_dir, HOST_STATE_FILE, strerror(-r));
		for (size_t i = 0; i < h->n_plans; i++)
			plan_failed(h, &h->plans[i]);
		return r;
	}
	write_all(h, out);
	r = host_state_save(h);
	if (r < 0)
		log_warn("isolation: cannot save %s/%s: %s", h->o.state_dir, HOST_STATE_FILE,
			 strerror(-r));
	count_status(h);
	h->st.pass_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	return 0;
}

int host_restore(struct host *h, const char *kubepods_root, const struct cpumask *online,
		 struct host_pass *pass)
{
	struct cpumask none;

	cpumask_zero(&none);
	return host_sync(h, kubepods_root, online, &none, pass);
}
