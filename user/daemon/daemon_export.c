// SPDX-License-Identifier: Apache-2.0
/*
 * The loop's exports: status.json, topology.json and the Prometheus
 * textfile, written from one snapshot once a burst of events settled
 * (or by their own period), by the export child of export_writer.c or,
 * when none can be had, on the loop. The loop waits for no export but
 * the last one at a stop.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "user/base/log.h"
#include "daemon_internal.h"

/* The export's work, in the child (or on the loop when no child can be
 * had): render and write what d->job says is due. Changes nothing of d. */
static void export_job(void *ctx, struct export_result *ret)
{
	const struct daemon *d = ctx;

	if (d->job.prom)
		ret->prom = export_textfile_write(d->prom, &d->job.s);
	if (d->job.status)
		ret->status = status_write_files(&d->job.s, &d->beat, d->cfg.state_dir,
						 d->job.changed);
}

/* The export child: its copies of the fds whose close others wait for go
 * first (the instance lock, LOCK_NB: a restart after a kill -9 must not
 * find it held by a child; the NRI connection: the runtime sees our
 * close), then the export. */
static void export_child(void *ctx, struct export_result *ret)
{
	const struct daemon *d = ctx;
	int nri_fd = daemon_nri_fd(d->nri);

	if (d->lock.state_fd >= 0)
		close(d->lock.state_fd);
	if (d->lock.pin_fd >= 0)
		close(d->lock.pin_fd);
	if (nri_fd >= 0)
		close(nri_fd);
	export_job(ctx, ret);
}

/* The loop's side of a finished export: each result logged once. A child
 * that died mid-way has its files written again at the next turn. */
void daemon_export_finished(struct daemon *d, const struct export_result *res)
{
	if (!res->done) {
		log_warn("the export writer died before it finished; exporting again");
		d->beat.next_us = 0;
		return;
	}
	if (d->job.prom)
		export_textfile_done(d->prom, res->prom);
	if (d->job.status && res->status < 0)
		log_warn("cannot write %s/%s: %s", d->cfg.state_dir, STATUS_FILE,
			 strerror(-res->status));
	log_debug("export written in %.1f ms (the loop's fork: %.0f us; %zu pages re-armed "
		  "in %.0f us%s)", res->took_ns / 1e6, res->fork_ns / 1e3, res->rearm_pages,
		  res->rearm_ns / 1e3, res->rearm == 1 ? ", stopped by an event" :
		  res->rearm < 0 ? ", not supported" : "");
}

/* The export child exited (its pidfd is ready): its results. */
void daemon_on_export_done(struct daemon *d)
{
	struct export_result res;

	if (export_writer_reap(d->xw, 0, &res) == 1)
		daemon_export_finished(d, &res);
}

/*
 * The exports that are due (status.json and topology.json, the .prom
 * file), from one snapshot: they say the same thing. Written by the
 * export child (user/export/export_writer.h), or here when inline (the first write
 * at start, the last at a stop: no event waits then) or when no child
 * can be forked. While a child runs nothing starts: the next export,
 * after it, carries the state as it is then.
 */
void daemon_write_status(struct daemon *d, bool inline_)
{
	struct export_result res = { 0 };
	struct snapshot *s = &d->job.s;
	int r = -ECANCELED;

	if (export_writer_busy(d->xw))
		return;
	if (!status_due(controller_dirty(d->ctl), &d->beat) &&
	    !export_textfile_due(d->prom, controller_dirty(d->ctl)))
		return;	/* the common turn: nothing to take a snapshot for */
	if (controller_dirty(d->ctl))
		controller_sync_telemetry(d->ctl);
	if (controller_snapshot(d->ctl, s) < 0) {
		log_warn("out of memory taking the status snapshot; exporting later");
		return;
	}
	s->isolation = controller_isolation(d->ctl);
	s->restart_needed = d->restart_keys;
	daemon_nri_stats(d->nri, &s->nri);
	d->job.prom = export_textfile_begin(d->prom, s);
	d->job.status = status_due(s->dirty, &d->beat);
	d->job.changed = d->job.status && status_begin(s, &d->beat);
	if (!inline_)
		r = export_writer_start(d->xw, export_child, d);
	if (r == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = export_writer_fd(d->xw) };

		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0) {
			log_warn("cannot poll the export writer: %s; waiting for it",
				 strerror(errno));
			if (export_writer_reap(d->xw, EXPORT_STOP_WAIT_MS, &res) == 1)
				daemon_export_finished(d, &res);
		}
	} else {
		if (r != -ECANCELED)
			log_debug("no export child (%s): exporting on the loop", strerror(-r));
		export_job(d, &res);
		res.done = true;
		daemon_export_finished(d, &res);
	}
	snapshot_release(s);
	controller_exported(d->ctl, false);
	d->change_us = 0;
}

/* CLOCK_MONOTONIC µs when a pending placement change is to be exported:
 * the burst settled, or it waited long enough. 0 = none pending. */
uint64_t daemon_export_at_us(const struct daemon *d)
{
	uint64_t settled = d->event_us + EXPORT_SETTLE_MS * 1000ULL;
	uint64_t latest = d->change_us + EXPORT_MAX_DEFER_MS * 1000ULL;

	if (!d->change_us)
		return 0;
	return settled < latest ? settled : latest;
}

/* The exports that are due: a placement change once its burst settled
 * (export_at_us), else the periodic ones (the .prom file's interval,
 * status.json's heartbeat), which decide for themselves. */
void daemon_export_when_due(struct daemon *d)
{
	uint64_t now = mono_us();

	if (controller_dirty(d->ctl) && !d->change_us)
		d->change_us = now;
	if (d->change_us && now < daemon_export_at_us(d))
		return;
	daemon_write_status(d, false);
}

/* The export's telemetry source: the loader's own map fds. */
static int read_telemetry(void *ctx, unsigned n_cpus, struct telemetry_snapshot *ret)
{
	const struct daemon *d = ctx;
	struct telemetry_fds fds;

	bpf_telemetry_fds(d->tel, &fds);
	return telemetry_read_fds(&fds, n_cpus, ret);
}

/* The Prometheus textfile export ("" = none), with the telemetry when
 * its programs are loaded. */
int daemon_open_export(struct daemon *d)
{
	int r = export_textfile_new(d->cfg.textfile, d->cfg.export_interval_s, &d->prom);

	if (r < 0)
		log_error("textfile %s: %s", d->cfg.textfile, strerror(-r));
	else if (d->tel)
		export_textfile_set_telemetry(d->prom, read_telemetry, telemetry_snapshot_free, d);
	return r;
}
