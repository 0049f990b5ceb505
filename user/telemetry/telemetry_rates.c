// SPDX-License-Identifier: Apache-2.0
/* Per-CPU rates between two telemetry snapshots; see telemetry_rates.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "telemetry_rates.h"

static const char *const sort_names[] = {
	[TELEMETRY_SORT_RQ_WAIT] = "rq_wait",
	[TELEMETRY_SORT_FOREIGN] = "foreign",
	[TELEMETRY_SORT_SWITCHES] = "switches",
};

/* A reset counter (maps re-created) counts from zero. */
static uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

static void rate_of(const struct cpusetd_cpu_stats *a, const struct cpusetd_cpu_stats *b,
		    double dt, struct telemetry_rate *r)
{
	uint64_t wait = delta(b->rq_wait_ns, a->rq_wait_ns);

	r->switches_per_s = delta(b->switches, a->switches) / dt;
	r->preemptions_per_s = delta(b->preemptions, a->preemptions) / dt;
	r->cross_switches_per_s = delta(b->cross_switches, a->cross_switches) / dt;
	r->busy_s_per_s = delta(b->busy_ns, a->busy_ns) / 1e9 / dt;
	r->rq_wait_s_per_s = wait / 1e9 / dt;
	r->rq_waits = delta(b->rq_wait_count, a->rq_wait_count);
	r->rq_wait_mean_us = r->rq_waits ? wait / 1e3 / r->rq_waits : 0;
	r->foreign_s_per_s = delta(b->foreign_ns, a->foreign_ns) / 1e9 / dt;
	r->kthread_s_per_s = delta(b->kthread_ns, a->kthread_ns) / 1e9 / dt;
	r->foreign_s_total = b->foreign_ns / 1e9;
}

int telemetry_rates(const struct telemetry_snapshot *prev, const struct telemetry_snapshot *cur,
		    double dt_s, const struct cpumask *cpus, struct telemetry_rate *ret)
{
	unsigned n = prev->n_cpus < cur->n_cpus ? prev->n_cpus : cur->n_cpus, k = 0;

	if (!(dt_s > 0))
		return -EINVAL;
	if (!prev->cpu || !cur->cpu)
		return 0;
	for (unsigned id = 0; id < n && id < CPUSETD_MAX_CPUS; id++) {
		if (cpus && !cpumask_test(cpus, id))
			continue;
		memset(&ret[k], 0, sizeof(ret[k]));
		ret[k].cpu = id;
		rate_of(&prev->cpu[id], &cur->cpu[id], dt_s, &ret[k]);
		ret[k].owner_cgroup_id = cur->owner ? cur->owner[id].cgroup_id : 0;
		k++;
	}
	return (int)k;
}

static double key_of(const struct telemetry_rate *r, enum telemetry_rate_sort key)
{
	switch (key) {
	case TELEMETRY_SORT_FOREIGN: return r->foreign_s_per_s;
	case TELEMETRY_SORT_SWITCHES: return r->switches_per_s;
	default: return r->rq_wait_s_per_s;
	}
}

static enum telemetry_rate_sort sort_key;	/* qsort has no context argument */

static int cmp_desc(double x, double y)
{
	return (x < y) - (x > y);
}

static int rate_cmp(const void *a, const void *b)
{
	const struct telemetry_rate *x = a, *y = b;
	int r;

	if ((r = cmp_desc(key_of(x, sort_key), key_of(y, sort_key))))
		return r;
	for (int k = TELEMETRY_SORT_RQ_WAIT; k <= TELEMETRY_SORT_SWITCHES; k++)
		if ((r = cmp_desc(key_of(x, k), key_of(y, k))))
			return r;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

void telemetry_rates_sort(struct telemetry_rate *r, unsigned n, enum telemetry_rate_sort key)
{
	sort_key = key;
	qsort(r, n, sizeof(*r), rate_cmp);
}

const char *telemetry_rate_sort_name(enum telemetry_rate_sort key)
{
	return key <= TELEMETRY_SORT_SWITCHES ? sort_names[key] : "?";
}

int telemetry_rate_sort_parse(const char *s, enum telemetry_rate_sort *ret)
{
	for (int k = TELEMETRY_SORT_RQ_WAIT; k <= TELEMETRY_SORT_SWITCHES; k++)
		if (strcmp(s, sort_names[k]) == 0) {
			*ret = k;
			return 0;
		}
	return -EINVAL;
}

static void add_d(json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void add_u(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/* The figures shared by a CPU entry (cpu >= 0, named first so a person
 * reading the JSON sees it) and the totals (cpu < 0). */
static json_object *figures(const struct telemetry_rate *r, int cpu)
{
	json_object *o = json_object_new_object();

	if (cpu >= 0)
		json_object_object_add(o, "cpu", json_object_new_int(cpu));

	add_d(o, "switches_per_s", r->switches_per_s);
	add_d(o, "preemptions_per_s", r->preemptions_per_s);
	add_d(o, "cross_switches_per_s", r->cross_switches_per_s);
	add_d(o, "busy_s_per_s", r->busy_s_per_s);
	add_d(o, "rq_wait_s_per_s", r->rq_wait_s_per_s);
	add_d(o, "rq_wait_mean_us", r->rq_wait_mean_us);
	add_u(o, "rq_waits", r->rq_waits);
	add_d(o, "foreign_s_per_s", r->foreign_s_per_s);
	add_d(o, "kthread_s_per_s", r->kthread_s_per_s);
	add_d(o, "foreign_s_total", r->foreign_s_total);
	return o;
}

static void total_add(struct telemetry_rate *t, const struct telemetry_rate *r)
{
	t->switches_per_s += r->switches_per_s;
	t->preemptions_per_s += r->preemptions_per_s;
	t->cross_switches_per_s += r->cross_switches_per_s;
	t->busy_s_per_s += r->busy_s_per_s;
	t->rq_wait_s_per_s += r->rq_wait_s_per_s;
	t->rq_waits += r->rq_waits;
	t->foreign_s_per_s += r->foreign_s_per_s;
	t->kthread_s_per_s += r->kthread_s_per_s;
	t->foreign_s_total += r->foreign_s_total;
}

json_object *telemetry_rates_json(const struct telemetry_rate *r, unsigned n, double dt_s,
				  enum telemetry_rate_sort key)
{
	json_object *o = json_object_new_object(), *cpus = json_object_new_array();
	struct telemetry_rate t = { 0 };

	if (!o || !cpus) {
		json_object_put(o);
		json_object_put(cpus);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		json_object *c = figures(&r[i], (int)r[i].cpu);

		add_u(c, "owner_cgroup_id", r[i].owner_cgroup_id);
		json_object_array_add(cpus, c);
		total_add(&t, &r[i]);
	}
	/* mean over every wait of the interval, not a mean of means */
	t.rq_wait_mean_us = t.rq_waits ? t.rq_wait_s_per_s * dt_s * 1e6 / t.rq_waits : 0;
	add_d(o, "interval_s", dt_s);
	json_object_object_add(o, "sort", json_object_new_string(telemetry_rate_sort_name(key)));
	json_object_object_add(o, "cpus", cpus);
	json_object_object_add(o, "totals", figures(&t, -1));
	return o;
}
