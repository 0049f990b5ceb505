// SPDX-License-Identifier: Apache-2.0
/*
 * The Prometheus textfile export (export_textfile.h): snapshot ->
 * export_view -> export_prom_render -> files_write_atomic.
 *
 * The view borrows the snapshot's strings; it lives only for one
 * render. Containers are sorted (namespace, pod, container, id) so that
 * two files of the same state are the same text.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "user/base/clock.h"
#include "export_prom.h"
#include "export_textfile.h"
#include "snapshot.h"
#include "user/base/files.h"
#include "user/base/log.h"

struct export_textfile {
	char dir[PATH_MAX], name[NAME_MAX + 1];
	unsigned interval_s;
	uint64_t next_us;		/* CLOCK_MONOTONIC of the next periodic write */
	bool written;			/* at least one attempt made */
	int last_err;			/* of the last write; logged once */
	double last_sync_s;
	uint64_t seen_events, seen_resyncs, seen_write_errors;
	export_telemetry_read_fn read;
	export_telemetry_free_fn free_fn;
	void *ctx;
};

int export_textfile_new(const char *path, unsigned interval_s, struct export_textfile **ret)
{
	const char *slash = strrchr(path, '/');
	struct export_textfile *e;
	int r;

	*ret = NULL;
	if (!path[0])
		return 0;
	if (!slash || !slash[1] || strlen(slash + 1) > NAME_MAX || (size_t)(slash - path) >= PATH_MAX)
		return -ENAMETOOLONG;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	/* "/x.prom" lives in "/" */
	snprintf(e->dir, sizeof(e->dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	snprintf(e->name, sizeof(e->name), "%s", slash + 1);
	e->interval_s = interval_s ? interval_s : 1;
	r = files_mkdir_p(e->dir, 0755);
	if (r < 0)
		log_warn("cannot create %s for the Prometheus textfile: %s; will retry",
			 e->dir, strerror(-r));
	*ret = e;
	return 0;
}

void export_textfile_free(struct export_textfile *e)
{
	free(e);
}

void export_textfile_set_telemetry(struct export_textfile *e, export_telemetry_read_fn read,
				   export_telemetry_free_fn free_fn, void *ctx)
{
	if (!e)
		return;
	e->read = read;
	e->free_fn = free_fn;
	e->ctx = ctx;
}

/* "Last sync": the last loop turn that handled events or a resync and
 * saw no new cgroup write error. */
static void track_sync(struct export_textfile *e, const struct cpusetd_counters *n)
{
	if (n->events != e->seen_events || n->resyncs != e->seen_resyncs) {
		if (n->cgroup_write_errors == e->seen_write_errors)
			e->last_sync_s = clock_unix_s();
		e->seen_events = n->events;
		e->seen_resyncs = n->resyncs;
	}
	e->seen_write_errors = n->cgroup_write_errors;
}

/* --- snapshot -> view --- */

static int cmp_ct(const void *a, const void *b)
{
	const struct export_container *x = a, *y = b;
	int r = strcmp(x->namespace_, y->namespace_);

	if (!r)
		r = strcmp(x->pod, y->pod);
	if (!r)
		r = strcmp(x->container, y->container);
	return r ? r : strcmp(x->container_id, y->container_id);
}

static void fill_container(const struct snapshot_container *ct, struct export_container *ret)
{
	const struct policy_decision *d = ct->d;

	*ret = (struct export_container){
		.namespace_ = ct->meta->namespace_,
		.pod = ct->meta->pod_name,
		/* kubelet's (and cAdvisor's) name for the sandbox */
		.container = ct->meta->sandbox ? "POD" : ct->meta->container_name,
		.container_id = ct->container_id,
		.kind = policy_kind_name(d->kind),
		.qos = pod_qos_name(ct->qos),
		.qos_class = ct->entry ? policy_qos_name(ct->entry->qos) : "",
		.cpus = d->cpus,
		.mems = d->mems,
		.exclusive = d->kind == CPUSETD_KIND_INTEGER || d->kind == CPUSETD_KIND_ANNOTATED,
		.sandbox = ct->meta->sandbox,
		.cgroup_id = ct->cgroup_id,
		.error = d->err ? policy_error_name(d->err) : NULL,
		.error_action = d->reject ? "rejected" : "shared",
	};
}

/* The containers, sorted; *ret is malloc'ed (NULL when there are none). */
static int gather_containers(const struct snapshot *s, struct export_container **ret, size_t *ret_n)
{
	struct export_container *list = NULL;

	if (s->n_containers) {
		list = calloc(s->n_containers, sizeof(*list));
		if (!list)
			return -ENOMEM;
		for (size_t i = 0; i < s->n_containers; i++)
			fill_container(&s->containers[i], &list[i]);
		qsort(list, s->n_containers, sizeof(*list), cmp_ct);
	}
	*ret = list;
	*ret_n = s->n_containers;
	return 0;
}

/* Everything but the containers and the telemetry. */
static void fill_view(const struct export_textfile *e, const struct snapshot *s,
		      const char **reasons, struct export_view *v)
{
	*v = (struct export_view){
		.version = s->version,
		.revision = s->revision,
		.cgroup_mode = s->cgroup_mode,
		.bpf_attach = s->bpf_attach,
		.telemetry_level = s->telemetry ? s->telemetry : "off",
		.online = s->topo->online,
		/* index 0 is POLICY_OK: not a reason */
		.error_reasons = reasons + 1,
		.error_counts = s->admission_errors + 1,
		.n_error_reasons = POLICY_ERR__COUNT - 1,
		.n = *s->n,
		.convergence = { .n = LATENCY_BUCKETS, .le_ns = latency_le_ns,
				 .bucket = s->conv_hist->bucket, .sum_ns = s->conv_hist->sum_ns },
		.conv_phases = s->conv_phase_hist,
		.writers = s->writers,
		.n_writers = s->n_writers,
		.shared_pool = s->shared_pool,
		.be_pool = s->be_pool,
		.reserved = s->reserved,
		.isolation = s->isolation,
		.containers_scope = s->prom_containers,
		.rq_bounds_us = s->rq_bounds_us,
		.n_rq_bounds = s->n_rq_bounds,
		.nri = s->nri,
		.last_sync_s = e->last_sync_s,
		.update_s = clock_unix_s(),
	};
	for (unsigned i = 0; i < POLICY_ERR__COUNT; i++)
		reasons[i] = policy_error_name((enum policy_error)i);
}

/* CPU ids the snapshot must cover: up to the highest present one. */
static unsigned n_cpus_of(const struct snapshot *s)
{
	int cpu, last = -1;

	cpumask_for_each(cpu, &s->topo->present)
		last = cpu;
	return (unsigned)(last + 1);
}

/* The pod errors in name order, as the view wants them (an array the
 * caller frees). 0 or -ENOMEM. */
static int gather_errors(const struct snapshot *s, struct export_view *v,
			 const struct pod_error ***ret)
{
	size_t ne = pod_errors_count(s->errors), i = 0;
	const struct pod_error **errs = calloc(ne + 1, sizeof(*errs));
	const struct pod_error *e;

	if (!errs)
		return -ENOMEM;
	while (i < ne && (e = pod_errors_next(s->errors, &i)))
		errs[i - 1] = e;
	v->pod_errors = errs;
	v->n_pod_errors = i;
	*ret = errs;
	return 0;
}

/* Renders s (and the telemetry, if any) into *ret_text / *ret_len. */
static int render(const struct export_textfile *e, const struct snapshot *s,
		  char **ret_text, size_t *ret_len)
{
	const char *reasons[POLICY_ERR__COUNT];
	struct telemetry_snapshot snap = { 0 };
	struct export_container *cts = NULL;
	const struct pod_error **errs = NULL;
	struct export_view v;
	bool have_snap = false;
	int r;

	fill_view(e, s, reasons, &v);
	r = gather_containers(s, &cts, &v.n_containers);
	if (r == 0)
		r = gather_errors(s, &v, &errs);
	if (r < 0) {
		free(cts);
		return r;
	}
	v.containers = cts;
	if (e->read) {
		r = e->read(e->ctx, n_cpus_of(s), &snap);
		have_snap = r == 0;
		if (r < 0)
			log_debug("telemetry snapshot: %s; exporting without it", strerror(-r));
	}
	v.telemetry = have_snap ? &snap : NULL;
	r = export_prom_render(&v, ret_text, ret_len);
	if (have_snap && e->free_fn)
		e->free_fn(&snap);
	free(cts);
	free(errs);
	return r;
}

bool export_textfile_due(const struct export_textfile *e, bool dirty)
{
	return e && (!e->written || dirty || clock_us(CLOCK_MONOTONIC) >= e->next_us);
}

bool export_textfile_begin(struct export_textfile *e, const struct snapshot *s)
{
	if (!e)
		return false;
	track_sync(e, s->n);
	if (!export_textfile_due(e, s->dirty))
		return false;
	e->written = true;
	e->next_us = clock_us(CLOCK_MONOTONIC) + (uint64_t)e->interval_s * 1000000ULL;
	return true;
}

int export_textfile_write(const struct export_textfile *e, const struct snapshot *s)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	r = render(e, s, &text, &len);
	if (r < 0)
		return r;
	r = files_write_atomic(e->dir, e->name, text, len, 0644);
	if (r == -ENOENT && files_mkdir_p(e->dir, 0755) == 0)
		r = files_write_atomic(e->dir, e->name, text, len, 0644);
	free(text);
	return r;
}

void export_textfile_done(struct export_textfile *e, int r)
{
	if (!e)
		return;
	if (r < 0 && r != e->last_err)
		log_warn("cannot write the Prometheus textfile %s/%s: %s", e->dir, e->name,
			 strerror(-r));
	else if (r == 0 && e->last_err)
		log_notice("Prometheus textfile %s/%s written again", e->dir, e->name);
	e->last_err = r;
}

int export_textfile_tick(struct export_textfile *e, const struct snapshot *s)
{
	int r;

	if (!export_textfile_begin(e, s))
		return 0;
	r = export_textfile_write(e, s);
	export_textfile_done(e, r);
	return r < 0 ? r : 1;
}

int export_textfile_timeout_ms(const struct export_textfile *e, int max_ms)
{
	uint64_t now, left_ms;

	if (!e || !e->written)
		return max_ms;
	now = clock_us(CLOCK_MONOTONIC);
	left_ms = now >= e->next_us ? 1 : (e->next_us - now + 999) / 1000;
	return left_ms < (uint64_t)max_ms ? (int)left_ms : max_ms;
}
