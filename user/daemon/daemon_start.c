// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's start-up (daemon_start, called by main()): what must hold
 * before anything is loaded (a private state dir, one daemon per state),
 * then the cgroups, the topology, the BPF detection programs (attached
 * first, so that no cgroup event is missed), the controller, the optional
 * telemetry, the exports and the loop's fds, NRI, and the resync from the
 * live cgroups. Also the BPF event handler, which adopts a kubepods root
 * that appears after we started (kubelet starting after us).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "user/base/files.h"
#include "user/base/log.h"
#include "user/bpf/bpf_load.h"
#include "user/process/self_sched.h"
#include "user/topo/hotplug.h"
#include "daemon_internal.h"

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
void daemon_write_cpu_nodes(struct daemon *d)
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
	daemon_write_cpu_nodes(d);
	log_info("BPF telemetry attached via %s, level %s, run-queue wait from %s",
		 bpf_telemetry_attach_mode(d->tel), bpf_telemetry_level(d->tel),
		 bpf_telemetry_wait_source(d->tel));
}

/* A periodic timerfd of ms milliseconds in the epoll set, or -1 when
 * ms == 0 (never). Returns the fd or -errno. */
int daemon_add_timer(struct daemon *d, unsigned ms)
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
	d->resize_tfd = daemon_add_timer(d, d->cfg.resize_check_ms);
	if (d->resize_tfd < -1)
		return d->resize_tfd;
	d->isolate_tfd = daemon_add_timer(d, d->cfg.isolate_host ? d->cfg.isolate_host_rescan_ms : 0);
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

/*
 * Says once that the fixed-set annotations of the keys given (cores,
 * status) are open to every namespace (a pattern "*": the rule book's
 * default), which lets any pod take CPUs out of the shared pool
 * (issue 22, H2). At start for both, at a reload for a key that became so.
 */
void daemon_log_open_annotations(bool cores, bool status)
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

int daemon_start(struct daemon *d)
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
	r = daemon_open_export(d);
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
	/* the pages an export's fork write-protected are re-armed until an
	 * event waits (user/export/export_writer.h) */
	export_writer_watch(d->xw, d->epfd);
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
	daemon_log_open_annotations(policy_namespace_all(d->cfg.policy.cores_ids_namespaces),
			     policy_namespace_all(d->cfg.policy.resource_status_namespaces));
	if (root[0]) {
		r = controller_resync(d->ctl);
		if (r < 0) {
			log_error("initial resync failed: %s", strerror(-r));
			return r;
		}
	}
	controller_exported(d->ctl, true);
	daemon_write_status(d, true);	/* before READY=1: no event waits for it */
	return 0;
}
