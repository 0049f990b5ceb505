/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's state, shared by the files of the cpusetd binary and by
 * nothing else: main.c (the entry point and the event loop), daemon_start.c
 * (start-up: lock, cgroups, topology, BPF, controller, exports, fds),
 * daemon_config.c (SIGHUP's reload, --check-config) and daemon_export.c
 * (the exports the loop writes once a burst settled). Includes only point
 * down that list: main.c uses the three, daemon_config.c uses
 * daemon_start.c and daemon_export.c, daemon_start.c uses daemon_export.c.
 */
#ifndef CPUSETD_DAEMON_INTERNAL_H
#define CPUSETD_DAEMON_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "cgroupfs/cgfs.h"
#include "user/base/clock.h"
#include "user/bpf/bpf_events.h"
#include "user/bpf/bpf_telemetry.h"
#include "user/config/config.h"
#include "user/export/export_textfile.h"
#include "user/export/export_writer.h"
#include "user/export/snapshot.h"
#include "user/export/status.h"
#include "user/process/instance_lock.h"
#include "user/topo/topology.h"
#include "user/controller/controller.h"
#include "daemon_nri.h"

/* One daemon: what main() holds from start to stop. */
struct daemon {
	struct cpusetd_config cfg;	/* in force; the controller borrows it */
	int argc;			/* the command line, parsed again at SIGHUP */
	char **argv;
	char restart_keys[512];		/* changed keys waiting for a restart; "" = none */
	struct cgfs *cg;
	struct topology *topo;
	struct instance_lock lock;
	struct bpf_events *bpf;
	struct bpf_telemetry *tel;	/* NULL: running without telemetry */
	struct controller *ctl;		/* NULL until start() made it */
	struct daemon_nri *nri;		/* NULL: nri = off (daemon_nri.h) */
	uint64_t lost_seen;
	struct export_textfile *prom;	/* NULL: no textfile export */
	int epfd, sigfd;
	int resize_tfd;			/* timerfd for in-place resize checks; -1 */
	int isolate_tfd;		/* timerfd for the host isolation rescan; -1 */
	int uevent_fd;			/* CPU hotplug uevents (hotplug.h); -1 */
	uint64_t resync_tried_us;	/* last retry of a failed resync, CLOCK_MONOTONIC */
	struct status_beat beat;	/* status.json's heartbeat and "updated" */
	uint64_t event_us;		/* last turn that handled an fd, CLOCK_MONOTONIC */
	uint64_t change_us;		/* first placement change not exported yet; 0 = none */
	struct export_writer *xw;	/* the exports' child (export_writer.h) */
	/* the export being written: its snapshot (the child's copy is what it
	 * writes; the loop's is released at once) and what it writes */
	struct {
		struct snapshot s;
		bool prom, status, changed;
	} job;
};

#define RESYNC_RETRY_MS	1000
/*
 * A placement change is exported once no fd has been ready for
 * EXPORT_SETTLE_MS (the events of one burst, runc's for a container or a
 * node's pods starting together, come closer than that; the files follow
 * a burst by that much, far below any reader's poll), and at the latest
 * EXPORT_MAX_DEFER_MS after it, however busy the loop. A turn drains at
 * most DRAIN_MAX_ROUNDS epoll_wait()s, so that timers and the watchdog
 * still get their turn.
 */
#define EXPORT_SETTLE_MS	10
#define EXPORT_MAX_DEFER_MS	200
#define DRAIN_MAX_ROUNDS	64

/* How long a stop waits for an export child before it kills it. */
#define EXPORT_STOP_WAIT_MS	5000

/* CLOCK_MONOTONIC in µs: the loop's timers. */
static inline uint64_t mono_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* --- daemon_start.c --- */

/*
 * Start-up, in order: state dir and instance lock, cgroups, topology,
 * the daemon's own scheduling, BPF detection, the controller, telemetry
 * (optional), the exports, the loop's fds, NRI, the initial resync and
 * the first status.json. d: zeroed with its fds at -1, d->cfg loaded.
 * Returns 0 (ready for READY=1) or -errno, logged; what was opened is
 * left in d for main() to free.
 */
int daemon_start(struct daemon *d);

/* Each present CPU's NUMA node into the telemetry map (d->tel must be
 * set), for the cross-node migration count. Cannot fail (a CPU not
 * written is logged at debug level). */
void daemon_write_cpu_nodes(struct daemon *d);

/* A periodic timerfd of ms milliseconds in d->epfd's set. Returns the
 * fd, -1 when ms == 0 (never), or -errno (< -1). */
int daemon_add_timer(struct daemon *d, unsigned ms);

/* Logs once that the fixed-set annotations of the keys given (cores,
 * status) are open to every namespace. Cannot fail. */
void daemon_log_open_annotations(bool cores, bool status);

/* --- daemon_config.c --- */

/*
 * SIGHUP's reload: the config parsed and checked whole, refused as a
 * whole; the live keys that changed applied, those that need a restart
 * named (d->restart_keys). Returns 0 (also when refused) or -ENOMEM.
 */
int daemon_reload(struct daemon *d);

/* --check-config: c checked against the CPUs online in sysfs, the
 * effective settings on stdout, a verdict on stderr. Changes nothing.
 * Returns the exit code: EXIT_SUCCESS or EXIT_FAILURE. */
int daemon_check_config(const struct cpusetd_config *c);

/* --- daemon_export.c --- */

/* The Prometheus textfile export d->prom from d->cfg ("" = none), fed
 * with telemetry when d->tel is loaded. Returns 0 or -errno, logged. */
int daemon_open_export(struct daemon *d);

/* Writes the exports that are due from one snapshot: in the export
 * child, or on the loop when inline_ (start, stop) or when no child can
 * be forked. Does nothing while a child runs. Cannot fail (logged). */
void daemon_write_status(struct daemon *d, bool inline_);

/* CLOCK_MONOTONIC µs when a pending placement change is to be exported;
 * 0 = none pending. */
uint64_t daemon_export_at_us(const struct daemon *d);

/* Exports a placement change once its burst settled, else the periodic
 * exports that are due. Cannot fail (logged). */
void daemon_export_when_due(struct daemon *d);

/* The loop's side of a finished export (res from export_writer_reap):
 * each result logged once; a child that died has its files written
 * again at the next turn. */
void daemon_export_finished(struct daemon *d, const struct export_result *res);

/* The export child exited (its pidfd is ready): reaps it and takes its
 * results. */
void daemon_on_export_done(struct daemon *d);

#endif
