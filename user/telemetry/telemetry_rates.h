/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-CPU rates between two telemetry snapshots (user/telemetry/telemetry.h), for
 * `cpusetctl top`: pure, so the arithmetic is unit-tested without maps.
 *
 * Counters in cpu_stats are monotonic since the maps were created; a
 * counter that went down means the maps were re-created between the two
 * snapshots, and its delta is then taken as the new value.
 */
#ifndef CPUSETD_TELEMETRY_RATES_H
#define CPUSETD_TELEMETRY_RATES_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <json-c/json.h>
#include <stdint.h>
#include "user/base/cpumask.h"
#include "telemetry.h"

/* One CPU over one interval. "per_s" = events per second; "s_per_s" =
 * seconds of that time per second of wall time (0..1 for one CPU). */
struct telemetry_rate {
	unsigned cpu;
	double switches_per_s;
	double preemptions_per_s;
	double cross_switches_per_s;	/* between tasks of different cgroups */
	double busy_s_per_s;
	double rq_wait_s_per_s;		/* run-queue wait of tasks switched in */
	double rq_wait_mean_us;		/* mean wait in the interval; 0 when none */
	uint64_t rq_waits;		/* waits counted in the interval */
	double foreign_s_per_s;		/* owned CPU: other cgroups' user tasks */
	double kthread_s_per_s;		/* owned CPU: kernel threads */
	double foreign_s_total;		/* foreign seconds since the maps exist */
	uint64_t owner_cgroup_id;	/* exclusive owner now; 0 = pool CPU */
};

enum telemetry_rate_sort {
	TELEMETRY_SORT_RQ_WAIT = 0,	/* run-queue wait s/s, the default */
	TELEMETRY_SORT_FOREIGN,		/* foreign s/s */
	TELEMETRY_SORT_SWITCHES,	/* switches/s */
};

/*
 * Rates of the CPUs in cpus (NULL: all) that both snapshots hold, over
 * dt_s seconds (> 0), into ret (room for CPUSETD_MAX_CPUS entries), in
 * CPU id order. Returns the number of entries, or -EINVAL when dt_s <= 0.
 */
int telemetry_rates(const struct telemetry_snapshot *prev, const struct telemetry_snapshot *cur,
		    double dt_s, const struct cpumask *cpus, struct telemetry_rate *ret);

/* Sorts worst first by key (ties: the other keys, then CPU id). */
void telemetry_rates_sort(struct telemetry_rate *r, unsigned n, enum telemetry_rate_sort key);

/* "rq_wait", "foreign", "switches" <-> the enum; parse returns 0 or -EINVAL. */
const char *telemetry_rate_sort_name(enum telemetry_rate_sort key);
int telemetry_rate_sort_parse(const char *s, enum telemetry_rate_sort *ret);

/*
 * One refresh as JSON: {"interval_s", "sort", "cpus": [per CPU, in r's
 * order: "cpu", "switches_per_s", "preemptions_per_s",
 * "cross_switches_per_s", "busy_s_per_s", "rq_wait_s_per_s",
 * "rq_wait_mean_us", "rq_waits", "foreign_s_per_s", "kthread_s_per_s",
 * "foreign_s_total", "owner_cgroup_id"], "totals": the same sums over the
 * CPUs (rq_wait_mean_us over all their waits; no "cpu", no owner)}.
 * A new object the caller puts; NULL on ENOMEM.
 */
json_object *telemetry_rates_json(const struct telemetry_rate *r, unsigned n, double dt_s,
				  enum telemetry_rate_sort key);

#endif
