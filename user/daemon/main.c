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
 * --release gives back what cpusetd changed and exits (release.h).
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
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include "cgroupfs/cgfs.h"
#include "user/bpf/bpf_events.h"
#include "user/bpf/bpf_load.h"
#include "user/bpf/bpf_telemetry.h"
#include "user/config/config.h"
#include "controller.h"
#include "daemon_nri.h"
#include "export_writer.h"
#include "user/export/export_textfile.h"
#include "user/base/clock.h"
#include "user/base/files.h"
#include "user/topo/hotplug.h"
#include "instance_lock.h"
#include "release.h"
#include "self_sched.h"
#include "user/base/log.h"
#include "user/export/status.h"

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
static uint64_t mono_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* The kubepods root from the config, or found; "" when it does not exist
 * yet (we start before kubelet): it is picked up by its mkdir event. */
static void find_root(struct daemon *d, char *root, size_t len)
{
	uint64_t id;

	root[0] = '\0';
	if (d->cfg.kubepods_root[0]) {
		if (cgfs_cgroup_id(d->cg, d->cfg.kubepods_root, &id) == 0)
			snprintf(root, len, "%s", d->cfg.kubepods_root);
		return;
	}
	if (cgfs_find_kubepods_root(d->cg, root, len) < 0)
		root[0] = '\0';
}

static int path_level(const char *path)
{
	int level = 0;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1])
			level++;
	return level;
}

/* A new kubepods root (first kubelet start): adopt it and resync. */
static bool is_awaited_root(const struct daemon *d, const char *path)
{
	if (d->cfg.kubepods_root[0])
		return strcmp(path, d->cfg.kubepods_root) == 0;
	return strcmp(path, "/kubepods") == 0 || strcmp(path, "/kubepods.slice") == 0;
}

static int on_event(const struct cpusetd_event *ev, void *ctx)
{
	struct daemon *d = ctx;

	if (!controller_root(d->ctl)[0] && ev->type == CPUSETD_EV_MKDIR &&
	    is_awaited_root(d, ev->path)) {
		controller_set_root(d->ctl, ev->path);
		bpf_events_set_root(d->bpf, ev->cgroup_id, ev->level);
		log_notice("kubepods root %s appeared", ev->path);
		return controller_resync(d->ctl) == -ENOMEM ? -ENOMEM : 0;
	}
	return controller_handle(d->ctl, ev);
}

static int open_bpf(struct daemon *d, const char *root)
{
	const struct cgfs_mounts *m = cgfs_mounts(d->cg);
	struct bpf_events_opts o = {
		.hierarchy_id = (uint32_t)m->cpuset_hierarchy_id,
		.cpuset_on_v2 = m->cpuset_on_v2,
		.cpuset_mnt = m->cpuset_mnt,
		.pin_dir = d->cfg.pin_dir[0] ? d->cfg.pin_dir : NULL,
		.handler = on_event,
		.ctx = d,
	};
	const char *filter = root[0] ? root : "/";
	int r;

	/* Without a root yet, watch the whole hierarchy; user space filters. */
	r = cgfs_cgroup_id(d->cg, filter, &o.root_cgroup_id);
	if (r < 0)
		return r;
	o.root_level = (uint32_t)path_level(filter);
	r = bpf_events_open(&o, &d->bpf);
	if (r < 0 && o.pin_dir) {
		log_warn("BPF maps cannot be pinned under %s (%s); running unpinned",
			 o.pin_dir, strerror(-r));
		o.pin_dir = NULL;
		r = bpf_events_open(&o, &d->bpf);
	}
	return r;
}

/* Each CPU's NUMA node, for the cross-node migration count. */
static void write_cpu_nodes(struct daemon *d)
{
	int cpu;

	cpumask_for_each(cpu, &d->topo->present)
		if (d->topo->cpu[cpu].node > 0 &&
		    bpf_telemetry_set_cpu_node(d->tel, (unsigned)cpu, (unsigned)d->topo->cpu[cpu].node) < 0)
			log_debug("telemetry: cpu_node[%d] not written", cpu);
}

/*
 * The telemetry programs, sharing the detection object's placement map.
 * Optional: placements do not depend on them, so a kernel or a pin dir
 * they do not fit costs the figures, not the daemon. Pinned where the
 * detection maps are; unpinned when that fails, as open_bpf does.
 */
static void open_telemetry(struct daemon *d)
{
	struct bpf_telemetry_opts o = {
		.cpuset_on_v2 = cgfs_mounts(d->cg)->cpuset_on_v2,
		.placement_fd = bpf_events_placement_fd(d->bpf),
		.placement_gen_fd = bpf_events_placement_gen_fd(d->bpf),
		.pin_dir = d->cfg.pin_dir[0] ? d->cfg.pin_dir : NULL,
		.full = d->cfg.telemetry_full,
	};
	int r;

	r = bpf_telemetry_open(&o, &d->tel);
	if (r < 0 && o.pin_dir) {
		log_warn("telemetry maps cannot be pinned under %s (%s); running unpinned",
			 o.pin_dir, strerror(-r));
		o.pin_dir = NULL;
		r = bpf_telemetry_open(&o, &d->tel);
	}
	if (r < 0) {
		log_warn("cannot load the BPF telemetry programs (%s); running without telemetry",
			 strerror(-r));
		d->tel = NULL;
		return;
	}
	write_cpu_nodes(d);
	log_info("BPF telemetry attached via %s, level %s, run-queue wait from %s",
		 bpf_telemetry_attach_mode(d->tel), bpf_telemetry_level(d->tel),
		 bpf_telemetry_wait_source(d->tel));
}

/* A periodic timerfd of ms milliseconds in the epoll set, or -1 when
 * ms == 0 (never). Returns the fd or -errno. */
static int add_timer(struct daemon *d, unsigned ms)
{
	struct itimerspec its = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (!ms)
		return -1;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	its.it_value.tv_sec = its.it_interval.tv_sec = ms / 1000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)(ms % 1000) * 1000000L;
	ev.data.fd = fd;
	if (timerfd_settime(fd, 0, &its, NULL) < 0 || epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int setup_fds(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sigfd < 0 || d->epfd < 0)
		return -errno;
	ev.data.fd = d->sigfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sigfd, &ev) < 0)
		return -errno;
	ev.data.fd = bpf_events_fd(d->bpf);
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	ev.data.fd = controller_messages_fd(d->ctl);
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	d->resize_tfd = add_timer(d, d->cfg.resize_check_ms);
	if (d->resize_tfd < -1)
		return d->resize_tfd;
	d->isolate_tfd = add_timer(d, d->cfg.isolate_host ? d->cfg.isolate_host_rescan_ms : 0);
	if (d->isolate_tfd < -1)
		return d->isolate_tfd;
	/* Without uevents hotplug is still picked up at SIGHUP and at every
	 * lost-event resync; placements do not depend on it otherwise. */
	d->uevent_fd = hotplug_open();
	ev.data.fd = d->uevent_fd;
	if (d->uevent_fd < 0 || epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->uevent_fd, &ev) < 0)
		log_warn("CPU hotplug uevents unavailable (%s); hotplug is seen at SIGHUP only",
			 strerror(d->uevent_fd < 0 ? -d->uevent_fd : errno));
	return 0;
}

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
		write_cpu_nodes(d);
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

/* --- SIGHUP: reload the config (systemd/README.md "Reload") --- */

static int open_export(struct daemon *d);

/* A periodic timer again after its period changed: *fd closed (which
 * takes it out of the epoll set) and made anew for ms (0 = none). */
static void rearm_timer(struct daemon *d, int *fd, unsigned ms, const char *what)
{
	if (*fd >= 0)
		close(*fd);
	*fd = add_timer(d, ms);
	if (*fd < -1) {
		log_error("reload: cannot set the %s timer: %s; it stays off until a restart",
			  what, strerror(-*fd));
		*fd = -1;
	}
}

/* The textfile or its interval changed: a new exporter; a file at the old
 * path is removed, or node_exporter would serve both (duplicate series). */
static void reopen_export(struct daemon *d, const struct cpusetd_config *old)
{
	export_textfile_free(d->prom);
	d->prom = NULL;
	if (open_export(d) < 0)
		d->prom = NULL;	/* logged: running without the export */
	if (old->textfile[0] && strcmp(old->textfile, d->cfg.textfile) != 0 &&
	    unlink(old->textfile) < 0 && errno != ENOENT)
		log_warn("reload: cannot remove the old textfile %s: %s", old->textfile,
			 strerror(errno));
}

/*
 * Says once that the fixed-set annotations of the keys given (cores,
 * status) are open to every namespace (a pattern "*": the rule book's
 * default), which lets any pod take CPUs out of the shared pool
 * (issue 22, H2). At start for both, at a reload for a key that became so.
 */
static void log_open_annotations(bool cores, bool status)
{
	if (!cores && !status)
		return;
	log_notice("%s%s%s accepted from every namespace (%s%s%s = *): any pod may take "
		   "the CPUs it names out of the shared pool; list the namespaces allowed "
		   "(README \"Security model\")",
		   cores ? META_CORES_IDS_ANNOTATION : "", cores && status ? " and " : "",
		   status ? META_RESOURCE_STATUS_ANNOTATION : "",
		   cores ? "cores_ids_namespaces" : "", cores && status ? ", " : "",
		   status ? "resource_status_namespaces" : "");
}

#define CHANGED(f)	(memcmp(&old->f, &d->cfg.f, sizeof(old->f)) != 0)

/* Side effects of the live keys that changed from old to d->cfg (the
 * rest is read where it is used). Returns 0 or -ENOMEM. */
static int apply_live(struct daemon *d, const struct cpusetd_config *old)
{
	log_max_level = d->cfg.log_level;
	if (CHANGED(resize_check_ms))
		rearm_timer(d, &d->resize_tfd, d->cfg.resize_check_ms, "resize check");
	if (CHANGED(isolate_host) || CHANGED(isolate_host_rescan_ms))
		rearm_timer(d, &d->isolate_tfd,
			    d->cfg.isolate_host ? d->cfg.isolate_host_rescan_ms : 0, "isolation rescan");
	if (CHANGED(textfile) || CHANGED(export_interval_s))
		reopen_export(d, old);
	if (CHANGED(sched_policy) || CHANGED(sched_priority) || CHANGED(nice) ||
	    CHANGED(run_on_reserved_cpus))
		self_sched_apply(&d->cfg, &d->topo->online);
	log_open_annotations(CHANGED(policy.cores_ids_namespaces) &&
			     policy_namespace_all(d->cfg.policy.cores_ids_namespaces),
			     CHANGED(policy.resource_status_namespaces) &&
			     policy_namespace_all(d->cfg.policy.resource_status_namespaces));
	return controller_reconfigure(d->ctl, old) == -ENOMEM ? -ENOMEM : 0;
}

#undef CHANGED

/* Appends name to list[len] ("a, b"); a list cut short ends in "...". */
static void list_add(char *list, size_t len, const char *name)
{
	size_t at = strlen(list);

	if (at + strlen(name) + 6 >= len) {
		if (at + 4 < len && !strstr(list, "..."))
			strcat(list, "...");
		return;
	}
	snprintf(list + at, len - at, "%s%s", at ? ", " : "", name);
}

/*
 * The config file (and the command line, which keeps precedence) parsed
 * and checked whole, as at start; refused as a whole with one error line
 * naming the key and why. Then the live keys that changed are applied and
 * the ones that need a restart named, once per reload. Returns 0 (also
 * when refused: the daemon runs on), or -ENOMEM.
 */
static int reload(struct daemon *d)
{
	char err[CONFIG_ERR_MAX], live[512] = "", restart[sizeof(d->restart_keys)] = "";
	static char a[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX], b[sizeof(a)];
	struct cpusetd_config *next = malloc(sizeof(*next)), *old = malloc(sizeof(*old));
	int r;

	if (!next || !old) {
		free(next);
		free(old);
		return -ENOMEM;
	}
	r = config_parse(d->argc, d->argv, next, err, sizeof(err));
	if (r == 0)
		r = config_check_node(next, &d->topo->online, err, sizeof(err));
	if (r < 0) {
		log_error("reload refused: %s; still running on the old config",
			  err[0] ? err : strerror(-r));
		controller_count_reload(d->ctl, false);
		free(next);
		free(old);
		return r == -ENOMEM ? r : 0;
	}
	for (unsigned i = 0; i < config_n_keys(); i++) {
		config_key_value(&d->cfg, i, a, sizeof(a));
		config_key_value(next, i, b, sizeof(b));
		if (strcmp(a, b) == 0)
			continue;
		if (config_key_reload(i) == CONFIG_RELOAD_LIVE)
			list_add(live, sizeof(live), config_key_name(i));
		else
			list_add(restart, sizeof(restart), config_key_name(i));
	}
	*old = d->cfg;
	config_merge_live(&d->cfg, next);
	r = apply_live(d, old);
	log_notice("reload of %s: %s%s", d->cfg.config_file, live[0] ? "applied " : "no live change",
		   live);
	if (restart[0])
		log_warn("reload of %s: %s changed: takes effect at a restart "
			 "(systemctl restart cpusetd); the old value%s stay%s until then",
			 d->cfg.config_file, restart, strchr(restart, ',') ? "s" : "",
			 strchr(restart, ',') ? "" : "s");
	snprintf(d->restart_keys, sizeof(d->restart_keys), "%s", restart);
	controller_count_reload(d->ctl, true);
	free(next);
	free(old);
	return r;
}

/* Returns 1 to stop, 0 to go on, -ENOMEM. SIGHUP reloads the config,
 * re-reads the online set and forces a resync. */
static int on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			return 1;
		if (reload(d) == -ENOMEM)
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
static void export_finished(struct daemon *d, const struct export_result *res)
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
	log_debug("export written in %.1f ms (the loop's fork: %.0f us)", res->took_ns / 1e6,
		  res->fork_ns / 1e3);
}

/* The export child exited (its pidfd is ready): its results. */
static void on_export_done(struct daemon *d)
{
	struct export_result res;

	if (export_writer_reap(d->xw, 0, &res) == 1)
		export_finished(d, &res);
}

/*
 * The exports that are due (status.json and topology.json, the .prom
 * file), from one snapshot: they say the same thing. Written by the
 * export child (export_writer.h), or here when inline (the first write
 * at start, the last at a stop: no event waits then) or when no child
 * can be forked. While a child runs nothing starts: the next export,
 * after it, carries the state as it is then.
 */
static void write_status(struct daemon *d, bool inline_)
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
				export_finished(d, &res);
		}
	} else {
		if (r != -ECANCELED)
			log_debug("no export child (%s): exporting on the loop", strerror(-r));
		export_job(d, &res);
		res.done = true;
		export_finished(d, &res);
	}
	snapshot_release(s);
	controller_exported(d->ctl, false);
	d->change_us = 0;
}

/* CLOCK_MONOTONIC µs when a pending placement change is to be exported:
 * the burst settled, or it waited long enough. 0 = none pending. */
static uint64_t export_at_us(const struct daemon *d)
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
static void export_when_due(struct daemon *d)
{
	uint64_t now = mono_us();

	if (controller_dirty(d->ctl) && !d->change_us)
		d->change_us = now;
	if (d->change_us && now < export_at_us(d))
		return;
	write_status(d, false);
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
		timeout = timeout_until(export_at_us(d), timeout);
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
			on_export_done(d);
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
		export_when_due(d);
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
			export_finished(d, &res);
		else
			log_warn("the export writer is stuck (%u ms); status.json is left as it is",
				 EXPORT_STOP_WAIT_MS);
	}
	d->beat.stopped = true;
	write_status(d, true);
	return r;
}

/* One open cpuset.cpus per container: lift the soft fd limit to the hard
 * one so a node with thousands of containers keeps the fast path. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
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
static int open_export(struct daemon *d)
{
	int r = export_textfile_new(d->cfg.textfile, d->cfg.export_interval_s, &d->prom);

	if (r < 0)
		log_error("textfile %s: %s", d->cfg.textfile, strerror(-r));
	else if (d->tel)
		export_textfile_set_telemetry(d->prom, read_telemetry, telemetry_snapshot_free, d);
	return r;
}

/* Before anything is loaded, pinned or written: one daemon per state. */
static int take_lock(struct daemon *d)
{
	const char *what;
	pid_t holder;
	int r;

	r = instance_lock_take(d->cfg.state_dir, d->cfg.pin_dir, &d->lock, &holder, &what);
	if (r == -EWOULDBLOCK && holder > 0)
		log_error("another cpusetd (pid %d) holds %s; not starting a second one",
			  (int)holder, what);
	else if (r == -EWOULDBLOCK)
		log_error("another process holds the lock on %s; not starting a second cpusetd",
			  what);
	else if (r < 0 && what == d->cfg.state_dir)
		log_error("cannot lock %s: %s; not starting (remove it if no cpusetd runs)",
			  what, instance_lock_why(r));
	else if (r < 0)
		log_error("cannot lock %s: %s", what, strerror(-r));
	return r;
}

/* After an upgrade that changed the map layout, the old layout's pins
 * hold kernel memory for nobody: ours to remove once we hold the lock. */
static void remove_old_pins(const struct daemon *d)
{
	int n;

	if (!d->cfg.pin_dir[0])
		return;
	n = bpf_load_remove_old_layouts(d->cfg.pin_dir);
	if (n > 0)
		log_info("removed the pinned maps of %d older map layout%s under %s", n,
			 n == 1 ? "" : "s", d->cfg.pin_dir);
	else if (n < 0)
		log_debug("cannot look for older map layouts under %s: %s", d->cfg.pin_dir,
			  strerror(-n));
}

/* The state dir holds the lock and host isolation's record: it must be
 * ours alone (files_check_private_dir). Returns 0 or -errno, logged. */
static int check_state_dir(const struct cpusetd_config *cfg)
{
	char why[96];
	struct stat st;
	int r = files_check_private_dir(cfg->state_dir, geteuid(), &st);

	if (r < 0)
		log_error("state_dir %s: %s: it holds the instance lock and host isolation's "
			  "record, so it must be a directory of uid %u that no group or other user "
			  "may write; not starting", cfg->state_dir,
			  files_refused_why(r, &st, geteuid(), why, sizeof(why)), (unsigned)geteuid());
	return r;
}

static int start(struct daemon *d)
{
	struct cgfs_mounts m;
	char root[CGFS_PATH_MAX];
	int r;

	raise_nofile();
	r = files_mkdir_p(d->cfg.state_dir, 0755);
	if (r < 0) {
		log_error("cannot create %s: %s", d->cfg.state_dir, strerror(-r));
		return r;
	}
	r = check_state_dir(&d->cfg);
	if (r < 0)
		return r;
	r = take_lock(d);
	if (r < 0)
		return r;
	remove_old_pins(d);
	r = cgfs_detect(NULL, NULL, &m);
	if (r < 0) {
		log_error("no cgroup hierarchy with the cpuset controller: %s", strerror(-r));
		return r;
	}
	r = cgfs_open(&m, &d->cg);
	if (r < 0) {
		log_error("cannot open %s: %s", m.cpuset_mnt, strerror(-r));
		return r;
	}
	r = topo_read("/sys", &d->topo);
	if (r < 0) {
		log_error("cannot read the CPU topology from /sys: %s", strerror(-r));
		return r;
	}
	r = config_check_cpus(&d->cfg, cpumask_weight(&d->topo->online));
	if (r < 0)
		return r;
	self_sched_apply(&d->cfg, &d->topo->online);
	find_root(d, root, sizeof(root));
	r = open_bpf(d, root);
	if (r < 0) {
		log_error("cannot load the BPF programs: %s", strerror(-r));
		return r;
	}
	r = controller_new(&d->cfg, d->cg, d->topo, root, &d->ctl);
	if (r < 0) {
		log_error("controller: %s", strerror(-r));
		return r;
	}
	open_telemetry(d);
	controller_attach_bpf(d->ctl, d->bpf, d->tel);
	r = open_export(d);
	if (r < 0)
		return r;
	d->beat.pid = getpid();
	r = export_writer_new(&d->xw);
	if (r < 0) {
		log_error("export writer: %s", strerror(-r));
		return r;
	}
	r = setup_fds(d);
	if (r < 0) {
		log_error("epoll/signalfd: %s", strerror(-r));
		return r;
	}
	/* Requests are answered in the loop, after the resync below. */
	r = daemon_nri_open(&d->cfg, d->ctl, d->epfd, &d->nri);
	if (r < 0)
		return r;
	log_info("cpuset on %s (hierarchy %d), BPF attached via %s, foreign writes via %s, "
		 "kubepods root %s", m.cpuset_mnt, m.cpuset_hierarchy_id,
		 bpf_events_attach_mode(d->bpf), bpf_events_write_hook(d->bpf),
		 root[0] ? root : "(not there yet)");
	if (strcmp(bpf_events_write_hook(d->bpf), "none") == 0)
		log_warn("no BPF hook on cpuset writes attached: a foreign write is undone only "
			 "at the container's exec or the next resync (SIGHUP)");
	log_open_annotations(policy_namespace_all(d->cfg.policy.cores_ids_namespaces),
			     policy_namespace_all(d->cfg.policy.resource_status_namespaces));
	if (root[0]) {
		r = controller_resync(d->ctl);
		if (r < 0) {
			log_error("initial resync failed: %s", strerror(-r));
			return r;
		}
	}
	controller_exported(d->ctl, true);
	write_status(d, true);	/* before READY=1: no event waits for it */
	return 0;
}

/*
 * --check-config (like nginx -t): the checks a start makes before it
 * changes anything (config_load's, and config_check_node's against the
 * CPUs online in sysfs), then the effective settings on stdout and one
 * verdict line on stderr. Loads no BPF, writes no cgroup, takes no lock,
 * creates no directory. Returns the exit code: 0 valid, 1 not.
 */
static int check_config(const struct cpusetd_config *c)
{
	char err[CONFIG_ERR_MAX];
	struct topology *t;
	int r = topo_read("/sys", &t);

	if (r < 0) {
		fprintf(stderr, "cpusetd: cannot read the CPU topology from /sys: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	r = config_check_node(c, &t->online, err, sizeof(err));
	topo_free(t);
	if (r < 0) {
		fprintf(stderr, "cpusetd: %s\n", err);
		return EXIT_FAILURE;
	}
	config_print(c, stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "cpusetd: writing the settings: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	fprintf(stderr, "cpusetd: configuration %s is valid\n", c->config_file);
	return EXIT_SUCCESS;
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
		return check_config(&d.cfg);
	log_max_level = d.cfg.log_level;
	if (d.cfg.release)
		return release_run(&d.cfg);
	d.argc = argc;
	d.argv = argv;
	log_max_level = d.cfg.log_level;
	r = start(&d);
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
