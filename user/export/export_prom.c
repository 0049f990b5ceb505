// SPDX-License-Identifier: Apache-2.0
/*
 * Prometheus text renderer (export_prom.h): pure, into an
 * open_memstream buffer. One function per metric family group; each
 * family prints its HELP/TYPE once and then all its series, as the text
 * format requires.
 *
 * Seconds are printed from integer nanoseconds as exact decimals
 * ("0.000512"), never through a double, so counters never go backwards by
 * a rounding step and histogram bounds read as the powers of two they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export_prom.h"

/* --- label values --- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The escaped form of the next character of *s into out (at most 4
 * bytes); advances *s. Returns the number of bytes in out. */
static size_t escape_next(const unsigned char **s, char out[4])
{
	size_t n = utf8_len(*s);

	if (!n) {			/* U+FFFD REPLACEMENT CHARACTER */
		memcpy(out, "\xef\xbf\xbd", 3);
		(*s)++;
		return 3;
	}
	if (**s == '\\' || **s == '"' || **s == '\n') {
		out[0] = '\\';
		out[1] = **s == '\n' ? 'n' : (char)**s;
		(*s)++;
		return 2;
	}
	if (**s < 0x20 || **s == 0x7f) {	/* \r, ESC...: no meaning here */
		out[0] = '?';
		(*s)++;
		return 1;
	}
	memcpy(out, *s, n);
	*s += n;
	return n;
}

int export_label_escape(const char *s, char *dst, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = 0;
	char ch[4];

	if (!size)
		return -ENOSPC;
	while (*p) {
		size_t n = escape_next(&p, ch);

		if (len + n >= size) {
			dst[len] = '\0';
			return -ENOSPC;
		}
		memcpy(dst + len, ch, n);
		len += n;
	}
	dst[len] = '\0';
	return (int)len;
}

/* name="escaped value", preceded by a comma unless first. */
static void put_label(FILE *f, const char *name, const char *value, bool first)
{
	const unsigned char *p = (const unsigned char *)(value ? value : "");
	char ch[4];

	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	while (*p)
		fwrite(ch, 1, escape_next(&p, ch), f);
	fputc('"', f);
}

/* --- numbers --- */

/* ns as seconds, exact: "1.5", "0.000002", "3". */
static void put_seconds(FILE *f, uint64_t ns)
{
	char frac[16];
	int n;

	fprintf(f, "%llu", (unsigned long long)(ns / 1000000000ULL));
	if (!(ns % 1000000000ULL))
		return;
	n = snprintf(frac, sizeof(frac), "%09llu", (unsigned long long)(ns % 1000000000ULL));
	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = '\0';
	fprintf(f, ".%s", frac);
}

uint64_t export_rq_slot_le_us(unsigned k)
{
	return 2ULL << k;
}

/* --- families --- */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A family with one unlabelled series. */
static void scalar(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void put_cpulist(FILE *f, const char *label, const struct cpumask *m, bool first)
{
	char buf[CPULIST_MAX];

	if (cpulist_format(m, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	put_label(f, label, buf, first);
}

/* The pod labels of per-container and per-pod series: named so that
 * kube-prometheus' target labels (namespace, pod, container: those of
 * node_exporter's own pod) never clash with them (export_prom.h). */
static void put_pod_labels(FILE *f, const char *ns, const char *pod, const char *container)
{
	put_label(f, "k8s_namespace_name", ns, true);
	put_label(f, "k8s_pod_name", pod, false);
	put_label(f, "k8s_container_name", container, false);
}

static void put_ct_labels(FILE *f, const struct export_container *ct)
{
	put_pod_labels(f, ct->namespace_, ct->pod, ct->container);
	put_label(f, "container_id", ct->container_id, false);
}

/* Whether ct gets per-container series (export_view.containers_scope):
 * a sandbox never does; "exclusive" keeps the containers that own CPUs
 * and those that asked to and could not (an admission error). */
static bool ct_exported(const struct export_view *v, const struct export_container *ct)
{
	if (ct->sandbox)
		return false;
	switch (v->containers_scope) {
	case EXPORT_CONTAINERS_ALL:
		return true;
	case EXPORT_CONTAINERS_NONE:
		return false;
	case EXPORT_CONTAINERS_EXCLUSIVE:
		break;
	}
	return ct->exclusive || ct->error;
}

/*
 * One histogram series: cumulative _bucket lines, _sum, _count.
 * labels: the series' other labels already formatted ("" or `cpu="3"`).
 * le[i] in ns; bucket[0..n] not cumulative, bucket[n] = +Inf.
 */
static void hist_series(FILE *f, const char *name, const char *labels, unsigned n,
			const uint64_t *le_ns, const uint64_t *bucket, uint64_t sum_ns)
{
	const char *sep = labels[0] ? "," : "";
	uint64_t cum = 0;

	for (unsigned i = 0; i <= n; i++) {
		cum += bucket[i];
		fprintf(f, "%s_bucket{%s%sle=\"", name, labels, sep);
		if (i < n)
			put_seconds(f, le_ns[i]);
		else
			fputs("+Inf", f);
		fprintf(f, "\"} %llu\n", (unsigned long long)cum);
	}
	fprintf(f, "%s_sum%s%s%s ", name, labels[0] ? "{" : "", labels, labels[0] ? "}" : "");
	put_seconds(f, sum_ns);
	fprintf(f, "\n%s_count%s%s%s %llu\n", name, labels[0] ? "{" : "", labels,
		labels[0] ? "}" : "", (unsigned long long)cum);
}

/* NRI (user/daemon/README.md "NRI"): whether it is in use, with whom, and the
 * connection's counters; nothing with nri = off. */
static void render_nri(FILE *f, const struct snapshot_nri *n)
{
	if (!n->enabled)
		return;
	family(f, "cpusetd_nri_info", "gauge",
	       "NRI's state (connected, connecting) and the runtime it registered with (value 1).");
	fputs("cpusetd_nri_info{", f);
	put_label(f, "state", n->state, true);
	put_label(f, "mode", n->mode, false);
	put_label(f, "runtime", n->runtime_name, false);
	put_label(f, "runtime_version", n->runtime_version, false);
	fputs("} 1\n", f);
	scalar(f, "cpusetd_nri_connected", "gauge",
	       "1 while registered with the runtime over NRI (placement at CreateContainer).",
	       strcmp(n->state, "connected") == 0);
	scalar(f, "cpusetd_nri_pending_containers", "gauge",
	       "Containers placed at CreateContainer whose cgroup is not made yet.", n->pending);
	scalar(f, "cpusetd_nri_connects_total", "counter",
	       "Registrations with the runtime over NRI.", n->connects);
	scalar(f, "cpusetd_nri_disconnects_total", "counter",
	       "NRI connections lost or closed for an error.", n->disconnects);
	scalar(f, "cpusetd_nri_requests_total", "counter",
	       "NRI requests from the runtime answered.", n->requests);
	scalar(f, "cpusetd_nri_protocol_errors_total", "counter",
	       "Malformed NRI frames or messages (each closes the connection).", n->protocol_errors);
	scalar(f, "cpusetd_nri_update_failures_total", "counter",
	       "Container updates the runtime reported as failed.", n->update_failures);
	if (!n->n_served)
		return;
	family(f, "cpusetd_nri_request_seconds", "histogram",
	       "NRI requests answered, by method: from the request read to the reply queued.");
	for (size_t i = 0; i < n->n_served; i++) {
		char labels[96];

		snprintf(labels, sizeof(labels), "method=\"%s\"", n->served_methods[i]);
		hist_series(f, "cpusetd_nri_request_seconds", labels, LATENCY_BUCKETS,
			    latency_le_ns, n->served[i].bucket, n->served[i].sum_ns);
	}
}

static void render_daemon(FILE *f, const struct export_view *v)
{
	family(f, "cpusetd_build_info", "gauge",
	       "cpusetd version and how it runs (value 1).");
	fputs("cpusetd_build_info{", f);
	put_label(f, "version", v->version, true);
	put_label(f, "revision", v->revision ? v->revision : "unknown", false);
	put_label(f, "cgroup_mode", v->cgroup_mode, false);
	put_label(f, "bpf_attach", v->bpf_attach, false);
	if (v->telemetry_level)
		put_label(f, "telemetry", v->telemetry_level, false);
	fputs("} 1\n", f);
	family(f, "cpusetd_last_sync_timestamp_seconds", "gauge",
	       "Unix time of the last resync or handled event that ended without a cgroup write error.");
	fprintf(f, "cpusetd_last_sync_timestamp_seconds %.3f\n", v->last_sync_s);
	/* The file's own heartbeat: node_exporter keeps serving the last
	 * file of a dead daemon, so only an age tells (README, Metrics). */
	family(f, "cpusetd_last_update_timestamp_seconds", "gauge",
	       "Unix time this file was written; rewritten at least every export interval.");
	fprintf(f, "cpusetd_last_update_timestamp_seconds %.3f\n", v->update_s);
	for (unsigned i = 0; i < COUNTERS_N; i++)
		if (counter_info[i].metric)
			scalar(f, counter_info[i].metric, "counter", counter_info[i].help,
			       counter_value(&v->n, i));
	family(f, "cpusetd_foreign_cpuset_writes_total", "counter",
	       "Writes of a managed container's cpuset.cpus/cpuset.mems by another process, by its comm.");
	for (size_t i = 0; i < v->n_writers; i++) {
		fputs("cpusetd_foreign_cpuset_writes_total{", f);
		put_label(f, "comm", v->writers[i].comm, true);
		fprintf(f, "} %llu\n", (unsigned long long)v->writers[i].writes);
	}
	render_nri(f, &v->nri);
	scalar(f, "cpusetd_telemetry_available", "gauge",
	       "1 when the BPF telemetry maps were read for this file.", v->telemetry != NULL);
	family(f, "cpusetd_resize_convergence_seconds", "histogram",
	       "From a pod start/stop event to no shared container overlapping a reserved CPU.");
	hist_series(f, "cpusetd_resize_convergence_seconds", "", v->convergence.n,
		    v->convergence.le_ns, v->convergence.bucket, v->convergence.sum_ns);
	if (!v->conv_phases)
		return;
	family(f, "cpusetd_resize_phase_seconds", "histogram",
	       "Each phase of a resize's convergence: wakeup (event to the daemon), plan, "
	       "writes (the pool), finish (to converged).");
	for (int p = 0; p < CONV_PHASE__COUNT; p++) {
		char labels[48];

		snprintf(labels, sizeof(labels), "phase=\"%s\"", conv_phase_names[p]);
		hist_series(f, "cpusetd_resize_phase_seconds", labels, LATENCY_BUCKETS,
			    latency_le_ns, v->conv_phases[p].bucket, v->conv_phases[p].sum_ns);
	}
}

static void pool_series(FILE *f, const char *name, const char *pool,
			const struct cpumask *m, bool info)
{
	fprintf(f, "%s{", name);
	put_label(f, "pool", pool, true);
	if (info) {
		put_cpulist(f, "cpus", m, false);
		fputs("} 1\n", f);
	} else {
		fprintf(f, "} %u\n", cpumask_weight(m));
	}
}

static void render_pools(FILE *f, const struct export_view *v)
{
	scalar(f, "cpusetd_online_cpus", "gauge", "Online logical CPUs.", cpumask_weight(&v->online));
	scalar(f, "cpusetd_reserved_cpus", "gauge",
	       "CPUs of exclusive (integer) and annotated containers.", cpumask_weight(&v->reserved));
	family(f, "cpusetd_pool_cpus", "gauge", "Logical CPUs in a pool (shared, be).");
	pool_series(f, "cpusetd_pool_cpus", "shared", &v->shared_pool, false);
	pool_series(f, "cpusetd_pool_cpus", "be", &v->be_pool, false);
	family(f, "cpusetd_pool_info", "gauge", "A pool's CPUs as a cpulist (value 1).");
	pool_series(f, "cpusetd_pool_info", "shared", &v->shared_pool, true);
	pool_series(f, "cpusetd_pool_info", "be", &v->be_pool, true);
}

/*
 * Three families, so that no label changes with the allocation on a
 * series that lives as long as the container: container_info (what it
 * is), container_cpus (a figure), and container_cpuset_info (its
 * cpulists), the last only for exclusive containers, whose CPUs change
 * only when their own allocation does. A pooled container's CPUs are its
 * pool's (pool_info): repeating them on every pooled container would make
 * a new series per container at every exclusive admission.
 */
static void render_placement(FILE *f, const struct export_view *v)
{
	family(f, "cpusetd_container_info", "gauge",
	       "A container cpusetd places: its kind (shared, be: the pool of that name; "
	       "integer, annotated: cpusetd_container_cpuset_info) and QoS (value 1).");
	for (size_t i = 0; i < v->n_containers; i++) {
		const struct export_container *ct = &v->containers[i];

		if (!ct_exported(v, ct))
			continue;
		fputs("cpusetd_container_info{", f);
		put_ct_labels(f, ct);
		put_label(f, "kind", ct->kind, false);
		put_label(f, "qos", ct->qos, false);
		put_label(f, "qos_class", ct->qos_class, false);
		fputs("} 1\n", f);
	}
	family(f, "cpusetd_container_cpus", "gauge", "Logical CPUs in a container's cpuset.");
	for (size_t i = 0; i < v->n_containers; i++) {
		if (!ct_exported(v, &v->containers[i]))
			continue;
		fputs("cpusetd_container_cpus{", f);
		put_ct_labels(f, &v->containers[i]);
		fprintf(f, "} %u\n", cpumask_weight(&v->containers[i].cpus));
	}
	family(f, "cpusetd_container_cpuset_info", "gauge",
	       "An exclusive container's CPUs and memory nodes as cpulists (value 1).");
	for (size_t i = 0; i < v->n_containers; i++) {
		const struct export_container *ct = &v->containers[i];

		if (!ct->exclusive || !ct_exported(v, ct))
			continue;
		fputs("cpusetd_container_cpuset_info{", f);
		put_ct_labels(f, ct);
		put_cpulist(f, "cpus", &ct->cpus, false);
		put_cpulist(f, "mems", &ct->mems, false);
		fputs("} 1\n", f);
	}
}

static void owner_series(FILE *f, unsigned cpu, const char *owner,
			 const struct export_container *ct)
{
	static const struct export_container none;

	fprintf(f, "cpusetd_cpu_owner_info{cpu=\"%u\",", cpu);
	put_label(f, "owner", owner, true);
	fputc(',', f);
	put_ct_labels(f, ct ? ct : &none);
	fputs("} 1\n", f);
}

/* Exclusive owners first, then pool membership; a CPU nobody may use
 * (isolated, not opted in) shows as owner "none". */
static void render_owners(FILE *f, const struct export_view *v)
{
	struct cpumask used = v->shared_pool;
	int cpu;

	family(f, "cpusetd_cpu_owner_info", "gauge",
	       "Who may run on an online CPU: an exclusive container (owner = its kind), "
	       "the shared or BE pool, or none (value 1).");
	cpumask_or(&used, &used, &v->be_pool);
	for (size_t i = 0; i < v->n_containers; i++) {
		const struct export_container *ct = &v->containers[i];

		if (!ct->exclusive)
			continue;
		cpumask_for_each(cpu, &ct->cpus)
			owner_series(f, (unsigned)cpu, ct->kind, ct);
		cpumask_or(&used, &used, &ct->cpus);
	}
	cpumask_for_each(cpu, &v->online) {
		if (cpumask_test(&v->shared_pool, (unsigned)cpu))
			owner_series(f, (unsigned)cpu, "shared", NULL);
		if (cpumask_test(&v->be_pool, (unsigned)cpu))
			owner_series(f, (unsigned)cpu, "be", NULL);
		if (!cpumask_test(&used, (unsigned)cpu))
			owner_series(f, (unsigned)cpu, "none", NULL);
	}
}

static void render_errors(FILE *f, const struct export_view *v)
{
	family(f, "cpusetd_admission_errors_total", "counter",
	       "Containers that could not be placed as asked, by reason.");
	for (size_t i = 0; i < v->n_error_reasons; i++) {
		fputs("cpusetd_admission_errors_total{", f);
		put_label(f, "reason", v->error_reasons[i], true);
		fprintf(f, "} %llu\n", (unsigned long long)v->error_counts[i]);
	}
	family(f, "cpusetd_container_admission_error_info", "gauge",
	       "A running container's admission error and what was done (value 1).");
	for (size_t i = 0; i < v->n_containers; i++) {
		const struct export_container *ct = &v->containers[i];

		if (!ct->error || !ct_exported(v, ct))
			continue;
		fputs("cpusetd_container_admission_error_info{", f);
		put_ct_labels(f, ct);
		put_label(f, "reason", ct->error, false);
		put_label(f, "action", ct->error_action, false);
		fputs("} 1\n", f);
	}
	family(f, "cpusetd_pod_admission_error_attempts", "gauge",
	       "Attempts (container IDs) of a pod's container that hit an admission error; kept until the pod is gone.");
	for (size_t i = 0; i < v->n_pod_errors; i++) {
		const struct pod_error *e = v->pod_errors[i];

		fputs("cpusetd_pod_admission_error_attempts{", f);
		put_pod_labels(f, e->namespace_, e->pod, e->container);
		put_label(f, "reason", e->reason, false);
		put_label(f, "action", e->action, false);
		fprintf(f, "} %llu\n", (unsigned long long)e->attempts);
	}
	family(f, "cpusetd_pod_admission_error_last_timestamp_seconds", "gauge",
	       "Unix time of the latest attempt of a pod's container that hit an admission error.");
	for (size_t i = 0; i < v->n_pod_errors; i++) {
		const struct pod_error *e = v->pod_errors[i];

		fputs("cpusetd_pod_admission_error_last_timestamp_seconds{", f);
		put_pod_labels(f, e->namespace_, e->pod, e->container);
		fprintf(f, "} %.3f\n", e->last);
	}
}

/* --- telemetry --- */

/* Level basic: its program keeps no run-queue wait and no per-container
 * figure (bpf/telemetry.bpf.c "Levels"), so those families are left out
 * rather than written as zeros a dashboard would take for "no wait". */
static bool telemetry_basic(const struct export_view *v)
{
	return v->telemetry_level && strcmp(v->telemetry_level, "basic") == 0;
}

/* A per-CPU counter: field at byte offset off of struct cpusetd_cpu_stats;
 * ns = true prints it as seconds. */
struct cpu_metric {
	const char *name, *help;
	size_t off;
	bool ns;
};

static const struct cpu_metric cpu_metrics[] = {
	{ "cpusetd_cpu_context_switches_total", "Context switches on the CPU.",
	  offsetof(struct cpusetd_cpu_stats, switches), false },
	{ "cpusetd_cpu_preemptions_total", "Involuntary switches: the task left still runnable.",
	  offsetof(struct cpusetd_cpu_stats, preemptions), false },
	{ "cpusetd_cpu_cross_container_switches_total",
	  "Switches between tasks of different cgroups.",
	  offsetof(struct cpusetd_cpu_stats, cross_switches), false },
	{ "cpusetd_cpu_busy_seconds_total", "Time the CPU ran anything but its idle task.",
	  offsetof(struct cpusetd_cpu_stats, busy_ns), true },
	{ "cpusetd_cpu_foreign_seconds_total",
	  "Time an exclusively owned CPU ran user tasks of other cgroups than its owner.",
	  offsetof(struct cpusetd_cpu_stats, foreign_ns), true },
	{ "cpusetd_cpu_kthread_seconds_total",
	  "Time an exclusively owned CPU ran kernel threads.",
	  offsetof(struct cpusetd_cpu_stats, kthread_ns), true },
};

/* CPUs to report: online ones the snapshot covers. */
static bool cpu_reported(const struct export_view *v, unsigned cpu)
{
	return cpu < v->telemetry->n_cpus && cpumask_test(&v->online, cpu);
}

static void render_cpu_counters(FILE *f, const struct export_view *v)
{
	for (size_t m = 0; m < sizeof(cpu_metrics) / sizeof(cpu_metrics[0]); m++) {
		const struct cpu_metric *cm = &cpu_metrics[m];

		family(f, cm->name, "counter", cm->help);
		for (unsigned cpu = 0; cpu < v->telemetry->n_cpus; cpu++) {
			uint64_t x;

			if (!cpu_reported(v, cpu))
				continue;
			memcpy(&x, (const char *)&v->telemetry->cpu[cpu] + cm->off, sizeof(x));
			fprintf(f, "%s{cpu=\"%u\"} ", cm->name, cpu);
			if (cm->ns)
				put_seconds(f, x);
			else
				fprintf(f, "%llu", (unsigned long long)x);
			fputc('\n', f);
		}
	}
}

/*
 * The histogram bucket of each BPF slot: slot k (waits below 2^(k+1) µs)
 * goes to the first bound at or above its upper edge, the last slot and
 * any slot above every bound to +Inf (index n). Bounds that are slot
 * edges (the config's rule) make this exact. Fills le_ns[n] and
 * to[CPUSETD_HIST_SLOTS]; returns n.
 */
static unsigned rq_buckets(const struct export_view *v, uint64_t *le_ns, unsigned *to)
{
	unsigned n = v->n_rq_bounds && v->n_rq_bounds < CPUSETD_HIST_SLOTS ?
		     v->n_rq_bounds : CPUSETD_HIST_SLOTS - 1;

	for (unsigned j = 0; j < n; j++)
		le_ns[j] = (v->n_rq_bounds ? v->rq_bounds_us[j] : export_rq_slot_le_us(j)) * 1000ULL;
	for (unsigned k = 0, j = 0; k < CPUSETD_HIST_SLOTS; k++) {
		uint64_t edge_ns = export_rq_slot_le_us(k) * 1000;

		while (j < n && (k == CPUSETD_HIST_SLOTS - 1 || le_ns[j] < edge_ns))
			j++;
		to[k] = j;
	}
	return n;
}

/* Run-queue wait per CPU from the log2-µs slots, summed into the
 * configured buckets (rq_buckets). */
static void render_cpu_rq(FILE *f, const struct export_view *v)
{
	uint64_t le_ns[CPUSETD_HIST_SLOTS - 1], bucket[CPUSETD_HIST_SLOTS];
	unsigned to[CPUSETD_HIST_SLOTS], n = rq_buckets(v, le_ns, to);
	char labels[32];

	family(f, "cpusetd_cpu_runqueue_wait_seconds", "histogram",
	       "Run-queue wait of tasks switched in on the CPU (wakeup to run).");
	for (unsigned cpu = 0; cpu < v->telemetry->n_cpus; cpu++) {
		const struct cpusetd_cpu_stats *s = &v->telemetry->cpu[cpu];

		if (!cpu_reported(v, cpu))
			continue;
		memset(bucket, 0, sizeof(bucket));
		for (unsigned k = 0; k < CPUSETD_HIST_SLOTS; k++)
			bucket[to[k]] += s->rq_wait_hist[k];
		snprintf(labels, sizeof(labels), "cpu=\"%u\"", cpu);
		hist_series(f, "cpusetd_cpu_runqueue_wait_seconds", labels, n, le_ns, bucket,
			    s->rq_wait_ns);
	}
}

static int cmp_cgroup(const void *key, const void *elem)
{
	uint64_t id = *(const uint64_t *)key, other = ((const struct telemetry_cgroup *)elem)->cgroup_id;

	return id < other ? -1 : id > other;
}

static const struct cpusetd_cgroup_stats *cgroup_stats(const struct telemetry_snapshot *t,
						       uint64_t id)
{
	const struct telemetry_cgroup *e;

	if (!id || !t->n_cgroups)
		return NULL;
	e = bsearch(&id, t->cgroup, t->n_cgroups, sizeof(*t->cgroup), cmp_cgroup);
	return e ? &e->s : NULL;
}

struct ct_metric {
	const char *name, *help;
	size_t off;
	bool ns;
};

static const struct ct_metric ct_metrics[] = {
	{ "cpusetd_container_cpu_seconds_total", "Time the container's tasks ran.",
	  offsetof(struct cpusetd_cgroup_stats, cpu_ns), true },
	{ "cpusetd_container_runqueue_wait_seconds_total",
	  "Run-queue wait of the container's tasks.",
	  offsetof(struct cpusetd_cgroup_stats, rq_wait_ns), true },
	{ "cpusetd_container_runqueue_waits_total", "Run-queue waits summed in the seconds.",
	  offsetof(struct cpusetd_cgroup_stats, rq_wait_count), false },
	{ "cpusetd_container_preemptions_total",
	  "Times a task of the container was preempted by another cgroup's task.",
	  offsetof(struct cpusetd_cgroup_stats, preempted), false },
	{ "cpusetd_container_placement_violations_total",
	  "Times a task of the container ran on a CPU outside its cpuset.",
	  offsetof(struct cpusetd_cgroup_stats, violations), false },
	{ "cpusetd_container_numa_migrations_total",
	  "Times a task of the container moved to a CPU of another NUMA node.",
	  offsetof(struct cpusetd_cgroup_stats, numa_migrations), false },
};

static void render_ct_telemetry(FILE *f, const struct export_view *v)
{
	for (size_t m = 0; m < sizeof(ct_metrics) / sizeof(ct_metrics[0]); m++) {
		const struct ct_metric *cm = &ct_metrics[m];

		family(f, cm->name, "counter", cm->help);
		for (size_t i = 0; i < v->n_containers; i++) {
			const struct export_container *ct = &v->containers[i];
			const struct cpusetd_cgroup_stats *s;
			uint64_t x;

			if (!ct_exported(v, ct) || !(s = cgroup_stats(v->telemetry, ct->cgroup_id)))
				continue;
			memcpy(&x, (const char *)s + cm->off, sizeof(x));
			fprintf(f, "%s{", cm->name);
			put_ct_labels(f, ct);
			fputs("} ", f);
			if (cm->ns)
				put_seconds(f, x);
			else
				fprintf(f, "%llu", (unsigned long long)x);
			fputc('\n', f);
		}
	}
}

/* Host isolation (isolate_host): what its last pass left, as gauges. */
static void render_isolation(FILE *f, const struct export_view *v)
{
	const struct snapshot_isolation *is = v->isolation;

	if (!is)
		return;
	scalar(f, "cpusetd_isolation_active", "gauge",
	       "1 while exclusive CPUs are held and the host is kept off them (isolate_host).",
	       is->active);
	scalar(f, "cpusetd_isolation_exclusive_cpus", "gauge",
	       "CPUs host isolation keeps free for their owners.", cpumask_weight(&is->exclusive));
	scalar(f, "cpusetd_isolation_host_cgroups_narrowed", "gauge",
	       "Cgroups outside the kubepods root narrowed to online - exclusive.",
	       is->cgroups_narrowed);
	scalar(f, "cpusetd_isolation_host_cgroups_left", "gauge",
	       "Cgroups outside kubepods left as they are (own CPUs all exclusive, or refused).",
	       is->cgroups_left);
	scalar(f, "cpusetd_isolation_tasks_narrowed", "gauge",
	       "Root-cgroup tasks whose affinity excludes the exclusive CPUs by our write.",
	       is->tasks_narrowed);
	scalar(f, "cpusetd_isolation_tasks_left", "gauge",
	       "Root-cgroup tasks left on exclusive CPUs (affinity all exclusive, or refused).",
	       is->tasks_left);
	scalar(f, "cpusetd_isolation_kthreads_pinned", "gauge",
	       "Per-CPU kernel threads (PF_NO_SETAFFINITY) left to the kernel.", is->kthreads_pinned);
	scalar(f, "cpusetd_isolation_irqs_moved", "gauge",
	       "IRQs whose smp_affinity_list was narrowed off the exclusive CPUs.", is->irqs_moved);
	scalar(f, "cpusetd_isolation_irqs_refused", "gauge",
	       "IRQs that could not be moved (the kernel refused: managed or per-CPU).",
	       is->irqs_refused);
	scalar(f, "cpusetd_isolation_irq_default_narrowed", "gauge",
	       "1 when /proc/irq/default_smp_affinity is narrowed.", is->irq_default_narrowed);
	scalar(f, "cpusetd_isolation_workqueue_narrowed", "gauge",
	       "1 when the unbound workqueue cpumask is narrowed.", is->workqueue_narrowed);
}

int export_prom_render(const struct export_view *v, char **ret_text, size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int bad;

	if (!f)
		return -ENOMEM;
	render_daemon(f, v);
	render_pools(f, v);
	render_placement(f, v);
	render_owners(f, v);
	render_errors(f, v);
	render_isolation(f, v);
	if (v->telemetry && v->telemetry->cpu) {
		render_cpu_counters(f, v);
		if (!telemetry_basic(v))
			render_cpu_rq(f, v);
	}
	if (v->telemetry && !telemetry_basic(v))
		render_ct_telemetry(f, v);
	bad = ferror(f);
	if (fclose(f) || bad) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
