// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetd: the node daemon. Start-up order matters:
 *   1. attach the BPF detection programs, so no cgroup event is missed;
 *   2. resync from the live cgroups (containers that started while we were
 *      down are placed or corrected);
 *   3. READY=1, then the event loop.
 * SIGTERM leaves every placement in place: the kernel keeps them. Host
 * isolation (isolate_host) is the exception: what it narrowed is given
 * back at stop (controller_isolate_stop).
 *
 * SIGHUP reloads the config file (systemd/README.md "Reload"): parsed and checked
 * whole as a start would, refused as a whole when anything is wrong; of
 * a good one the keys that can change live are applied, those that need
 * a restart are named; then the full resync SIGHUP always did.
 * --check-config parses and checks the same way and stops there;
 * --release gives back what cpusetd changed and exits (user/release/release.h).
 *
 * The loop handles a burst of events whole (every ready fd, until none
 * is) before it exports, and a placement change is exported once the
 * burst has settled: status.json, the .prom file and topology.json are
 * written once per burst, not once per event, and never between an event
 * and the next one already waiting.
 *
 * The loop never waits on a file a pod's filesystem holds: rejected
 * containers' termination messages are written by a thread of their own
 * (controller_message.c); the loop polls its eventfd for the results and
 * never waits for it, at a stop neither (a stuck write is left behind).
 *
 * This file is the entry point and the loop; its parts, sharing struct
 * daemon through daemon_internal.h: daemon_start.c (start-up),
 * daemon_config.c (reload, --check-config), daemon_export.c (the exports).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include "user/base/log.h"
#include "user/process/self_sched.h"
#include "user/release/release.h"
#include "user/topo/hotplug.h"
#include "daemon_internal.h"

/*
 * Re-reads the topology (online set from sysfs; what it cannot tell about
 * offline CPUs inherited from the old one, topo_inherit). When the online
 * set changed, the controller moves to the new topology and the old one is
 * freed (nothing else holds it: the policy, status and exports borrow the
 * controller's). Returns 0, or -ENOMEM.
 */
static int check_online(struct daemon *d)
{
	struct topology *t;
	int r = topo_read("/sys", &t);

	if (r < 0) {
		log_warn("CPU hotplug: cannot read the topology from /sys (%s); keeping the old one",
			 strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	topo_inherit(t, d->topo);
	if (cpumask_equal(&t->online, &d->topo->online)) {
		topo_free(t);
		return 0;
	}
	r = controller_set_topology(d->ctl, t);
	if (r < 0) {
		log_error("CPU hotplug: cannot follow the new online set: %s", strerror(-r));
		topo_free(t);
		return r == -ENOMEM ? r : 0;
	}
	topo_free(d->topo);
	d->topo = t;
	if (d->tel)
		daemon_write_cpu_nodes(d);
	self_sched_follow_cpus(&d->cfg, &d->topo->online);
	return 0;
}

/* uevents waiting: a cpu one (or an overflow) means look again. */
static int on_uevent(struct daemon *d)
{
	int r = hotplug_drain(d->uevent_fd);

	if (r < 0)
		log_debug("uevent socket: %s", strerror(-r));
	return r > 0 ? check_online(d) : 0;
}

/* kubelet resized a container in place: no cgroup event says so. */
static int on_resize_timer(struct daemon *d)
{
	uint64_t expirations;

	if (read(d->resize_tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return -errno;
	return controller_check_resizes(d->ctl) == -ENOMEM ? -ENOMEM : 0;
}

/* Host isolation: tasks, IRQs and cgroups that appeared since the last
 * pass (a fork inherits its parent's affinity; the rest is caught here). */
static int on_isolate_timer(struct daemon *d)
{
	uint64_t expirations;

	if (read(d->isolate_tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return -errno;
	return controller_isolate_rescan(d->ctl) == -ENOMEM ? -ENOMEM : 0;
}


/* Returns 1 to stop, 0 to go on, -ENOMEM. SIGHUP reloads the config,
 * re-reads the online set and forces a resync. */
static int on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			return 1;
		if (daemon_reload(d) == -ENOMEM)
			return -ENOMEM;
		log_notice("SIGHUP: full resync");
		if (check_online(d) == -ENOMEM)
			return -ENOMEM;
		if (controller_root(d->ctl)[0])
			controller_resync(d->ctl);
		controller_check_resizes(d->ctl);
	}
	return 0;
}

/* The ring buffer overflowed: some cgroup events are gone. Only a full
 * resync from the live tree is correct after that. */
static void check_lost(struct daemon *d)
{
	uint64_t lost = bpf_events_lost(d->bpf);

	if (lost == d->lost_seen)
		return;
	log_warn("%llu BPF events lost (ring buffer full): full resync",
		 (unsigned long long)(lost - d->lost_seen));
	controller_count_lost(d->ctl, lost - d->lost_seen);
	d->lost_seen = lost;
	check_online(d);	/* a resync is a full look: hotplug included */
	if (controller_root(d->ctl)[0])
		controller_resync(d->ctl);
}

/* A failed resync (the tree unreadable for a moment) is retried every
 * RESYNC_RETRY_MS, not at every event: each try walks the whole tree. */
static int retry_resync(struct daemon *d)
{
	uint64_t now = mono_us();

	if (!controller_resync_failed(d->ctl) || now - d->resync_tried_us < RESYNC_RETRY_MS * 1000ULL)
		return 0;
	d->resync_tried_us = now;
	return controller_retry_resync(d->ctl);
}

/* timeout (ms; -1 = none) cut to reach the CLOCK_MONOTONIC µs at (0 =
 * nothing due); 1 when at is within a millisecond. */
static int timeout_until(uint64_t at, int timeout)
{
	uint64_t now, ms;

	if (!at)
		return timeout;
	now = mono_us();
	if (at <= now + 1000)
		return 1;
	ms = (at - now + 999) / 1000;
	return timeout < 0 || ms < (uint64_t)timeout ? (int)ms : timeout;
}

/* epoll_wait's timeout in ms (at least 1): the next periodic export,
 * heartbeat, resync retry, watchdog ping, rejection deadline (an overdue
 * termination message, an init stage's time) or pending change's export. */
static int loop_timeout_ms(const struct daemon *d, bool wd, uint64_t wd_usec)
{
	int timeout = export_textfile_timeout_ms(d->prom, wd ? (int)(wd_usec / 4000) : 5000);

	timeout = status_timeout_ms(&d->beat, timeout);	/* status.json's heartbeat */
	timeout = timeout_until(controller_reject_due_us(d->ctl), timeout);
	timeout = timeout_until(daemon_nri_due_us(d->nri), timeout);	/* a reconnect */
	if (controller_resync_failed(d->ctl) && (timeout < 0 || timeout > RESYNC_RETRY_MS))
		timeout = RESYNC_RETRY_MS;
	/* while a child writes, its exit wakes the loop for what waits */
	if (!export_writer_busy(d->xw))
		timeout = timeout_until(daemon_export_at_us(d), timeout);
	return timeout > 0 ? timeout : 1;
}

/* Handles the ready fds. Returns 1 to stop, 0 to go on, -ENOMEM. */
static int dispatch(struct daemon *d, const struct epoll_event *evs, int n)
{
	int r;

	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == d->sigfd && (r = on_signal(d)) != 0)
			return r;
		if (evs[i].data.fd == d->uevent_fd && on_uevent(d) == -ENOMEM)
			return -ENOMEM;
		if (evs[i].data.fd == bpf_events_fd(d->bpf) && bpf_events_poll(d->bpf) == -ENOMEM)
			return -ENOMEM;
		if (evs[i].data.fd == d->resize_tfd && on_resize_timer(d) == -ENOMEM)
			return -ENOMEM;
		if (evs[i].data.fd == d->isolate_tfd && on_isolate_timer(d) == -ENOMEM)
			return -ENOMEM;
		if (evs[i].data.fd == controller_messages_fd(d->ctl))
			controller_reject_poll(d->ctl);
		if (daemon_nri_owns(d->nri, evs[i].data.fd) && daemon_nri_on_ready(d->nri) == -ENOMEM)
			return -ENOMEM;
		if (evs[i].data.fd == export_writer_fd(d->xw))
			daemon_on_export_done(d);
	}
	return 0;
}

/*
 * Waits up to timeout ms for an fd, then handles every fd that is ready
 * until none is (DRAIN_MAX_ROUNDS at most): the ring buffer refills while
 * we write cgroup files, and a timer or a signal may be waiting beside
 * it. Returns 1 to stop, 0 to go on, -errno.
 */
static int handle_burst(struct daemon *d, int timeout)
{
	struct epoll_event evs[8];
	int n, r;

	for (int round = 0; round < DRAIN_MAX_ROUNDS; round++) {
		n = epoll_wait(d->epfd, evs, sizeof(evs) / sizeof(evs[0]), round ? 0 : timeout);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n == 0)
			return 0;
		d->event_us = mono_us();
		r = dispatch(d, evs, n);
		if (r)
			return r;
	}
	return 0;
}

static int run(struct daemon *d)
{
	uint64_t wd_usec = 0, wd_last = 0, at;
	bool wd = sd_watchdog_enabled(0, &wd_usec) > 0;
	int r;

	for (;;) {
		r = handle_burst(d, loop_timeout_ms(d, wd, wd_usec));
		if (r)
			return r < 0 ? r : 0;
		check_lost(d);
		if (retry_resync(d) == -ENOMEM)
			return -ENOMEM;
		/* NRI's reconnects, and what the runtime must hear of this turn's
		 * changes (never from inside one of its requests) */
		r = daemon_nri_turn(d->nri);
		if (r)
			return r < 0 ? r : 0;
		at = controller_reject_due_us(d->ctl);
		if (at && mono_us() >= at)
			controller_reject_poll(d->ctl);	/* overdue messages, init stages */
		daemon_export_when_due(d);
		if (wd && mono_us() - wd_last >= wd_usec / 2) {
			sd_notify(0, "WATCHDOG=1");
			wd_last = mono_us();
		}
	}
}

/* The event loop until a signal stops it (0) or it fails (-errno). Its
 * last status.json says "stopped", so that a file left behind is never
 * taken for a live daemon's state (a kill -9 leaves the heartbeat to age). */
static int loop(struct daemon *d)
{
	int r = run(d);

	/* What host isolation narrowed goes back before "stopped" is said. */
	if (controller_isolate_stop(d->ctl) == -ENOMEM && !r)
		r = -ENOMEM;
	/* the export being written finishes first, then the last one */
	if (export_writer_busy(d->xw)) {
		struct export_result res;

		if (export_writer_reap(d->xw, EXPORT_STOP_WAIT_MS, &res) == 1)
			daemon_export_finished(d, &res);
		else
			log_warn("the export writer is stuck (%u ms); status.json is left as it is",
				 EXPORT_STOP_WAIT_MS);
	}
	d->beat.stopped = true;
	daemon_write_status(d, true);
	return r;
}

int main(int argc, char **argv)
{
	struct daemon d = { .epfd = -1, .sigfd = -1, .resize_tfd = -1, .isolate_tfd = -1,
			    .uevent_fd = -1,
			    .lock = { .state_fd = -1, .pin_fd = -1 } };
	int r;

	r = config_load(argc, argv, &d.cfg);
	if (r)
		return r > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (d.cfg.check_config)
		return daemon_check_config(&d.cfg);
	log_max_level = d.cfg.log_level;
	if (d.cfg.release)
		return release_run(&d.cfg, controller_exclusive_cgroups);
	d.argc = argc;
	d.argv = argv;
	log_max_level = d.cfg.log_level;
	r = daemon_start(&d);
	if (r == 0) {
		sd_notify(0, "READY=1\nSTATUS=placing containers");
		r = loop(&d);
		sd_notify(0, "STOPPING=1");
		log_info("stopping; placements stay as they are");
	}
	daemon_nri_free(d.nri);		/* its handlers use the controller */
	controller_free(d.ctl);
	bpf_telemetry_free(d.tel);
	export_writer_free(d.xw, 0);	/* a stuck one was waited for in loop() */
	export_textfile_free(d.prom);
	bpf_events_free(d.bpf);
	topo_free(d.topo);
	cgfs_free(d.cg);
	instance_lock_release(&d.lock);
	if (d.epfd >= 0)
		close(d.epfd);
	if (d.sigfd >= 0)
		close(d.sigfd);
	if (d.resize_tfd >= 0)
		close(d.resize_tfd);
	if (d.isolate_tfd >= 0)
		close(d.isolate_tfd);
	if (d.uevent_fd >= 0)
		close(d.uevent_fd);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
