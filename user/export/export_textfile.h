/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon side of the Prometheus export: turns a snapshot of the controller (snapshot.h)
 * (and a telemetry snapshot, when there is one) into export_prom's view,
 * renders it and replaces the textfile atomically (files.h) in its own
 * directory, which node_exporter's textfile collector reads. It never
 * reads the file back.
 *
 * When: on the first call, whenever the snapshot is dirty (a placement
 * changed), and every interval seconds, since the contention counters
 * move all the time. A failed write is logged once (until one succeeds)
 * and retried at the next occasion; it never stops the daemon.
 */
#ifndef CPUSETD_EXPORT_TEXTFILE_H
#define CPUSETD_EXPORT_TEXTFILE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/telemetry/telemetry.h"

struct snapshot;
struct export_textfile;

/*
 * Reads a telemetry snapshot of CPU ids below n_cpus into *ret; returns 0
 * or -errno (then no telemetry is exported this time). The export frees
 * a snapshot read with 0 through the matching free function.
 */
typedef int (*export_telemetry_read_fn)(void *ctx, unsigned n_cpus, struct telemetry_snapshot *ret);
typedef void (*export_telemetry_free_fn)(struct telemetry_snapshot *s);

/*
 * A textfile export to path (absolute; "" = none: *ret = NULL, which
 * every other function accepts and ignores), at least every interval_s
 * seconds. Creates the file's directory if it is missing (a failure is
 * only logged: the writes retry). Returns 0 or -ENOMEM, -ENAMETOOLONG.
 */
int export_textfile_new(const char *path, unsigned interval_s, struct export_textfile **ret);

/* Frees e; the file stays. Accepts NULL. */
void export_textfile_free(struct export_textfile *e);

/* Where the per-CPU and per-container figures come from; read NULL (the
 * default) = none. ctx is borrowed. Cannot fail. */
void export_textfile_set_telemetry(struct export_textfile *e, export_telemetry_read_fn read,
				   export_telemetry_free_fn free_fn, void *ctx);

/*
 * Call with the snapshot of each export turn (controller_snapshot, s->dirty
 * when a placement changed). Rewrites the file when due (see above).
 * Returns 1 when it wrote, 0 when not due (or e is NULL), -ENOMEM, or the
 * -errno of the failed write (logged once).
 */
/* Whether export_textfile_tick would write now (dirty: a placement
 * changed), so a caller takes a snapshot only then. False for NULL. */
bool export_textfile_due(const struct export_textfile *e, bool dirty);

int export_textfile_tick(struct export_textfile *e, const struct snapshot *s);

/*
 * export_textfile_tick in three steps, for a caller that writes on
 * another thread or process (the daemon's export writer): begin decides
 * on the caller's side whether the file is due and, when it is, takes
 * the turn (the next periodic write is interval_s from now); write
 * renders s and replaces the file, reading e but never changing it, so
 * a forked child can run it; done logs the result once (until a write
 * succeeds) where begin ran. begin returns true when write is to run
 * (false for NULL); write returns 0 or -ENOMEM, -errno of the write;
 * done accepts NULL.
 */
bool export_textfile_begin(struct export_textfile *e, const struct snapshot *s);
int export_textfile_write(const struct export_textfile *e, const struct snapshot *s);
void export_textfile_done(struct export_textfile *e, int r);

/* The event loop's epoll timeout: max_ms, or less so the next periodic
 * rewrite is on time (at least 1). Cannot fail. */
int export_textfile_timeout_ms(const struct export_textfile *e, int max_ms);

#endif
