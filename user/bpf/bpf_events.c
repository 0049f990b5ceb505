// SPDX-License-Identifier: Apache-2.0
/*
 * Loader for the detection programs (bpf/cpusetd.bpf.c): probes which
 * twin (tp_btf or raw_tp) of each tracepoint program this kernel can load,
 * sets the rodata filter, pins the shared maps, attaches, and turns ring
 * buffer records into handler calls.
 *
 * Shape as in libbpf-bootstrap: open -> set rodata -> load -> attach; every
 * handle starts NULL and every failure sets err and jumps to cleanup once.
 * Library code: logs at debug level only; the caller logs the decision.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpusetd.skel.h"
#include "bpf_events.h"
#include "bpf_load.h"
#include "fanotify_hook.h"
#include "user/base/log.h"

/* How cpuset writes are hooked, best first (bpf/cpusetd.bpf.c; fanotify:
 * fanotify_hook.h). */
enum write_hook { HOOK_FEXIT, HOOK_KPROBE, HOOK_FANOTIFY, HOOK_SYSCALL, HOOK_NONE };

static const char *const hook_names[] = { "fexit", "kprobe", "fanotify", "syscall", "none" };

struct bpf_events {
	struct cpusetd_bpf *skel;
	struct ring_buffer *rb;
	int (*handler)(const struct cpusetd_event *ev, void *ctx);
	void *ctx;
	uint64_t lost_base;	/* health.events_lost at open (pinned: survives restarts) */
	bool all_tp_btf;
	enum write_hook hook;
	volatile uint64_t *gen;		/* placement_gen[0], mmapped; NULL: not mapped */
	struct fanotify_hook *fan;	/* HOOK_FANOTIFY only */
	int epfd;			/* ring buffer + fan, when fan is set */
};

/* Turns autoload off for the twin of each pair that is not used.
 * Returns 0 or the libbpf error. */
static int choose_twins(struct cpusetd_bpf *skel, bool *ret_all_btf)
{
	const struct bpf_load_twin twins[] = {
		{ "cgroup_mkdir", skel->progs.cg_mkdir_btf, skel->progs.cg_mkdir_raw },
		{ "cgroup_rmdir", skel->progs.cg_rmdir_btf, skel->progs.cg_rmdir_raw },
		{ "cgroup_notify_populated", skel->progs.cg_populated_btf,
		  skel->progs.cg_populated_raw },
		{ "sched_process_exec", skel->progs.exec_btf, skel->progs.exec_raw },
	};

	return bpf_load_choose_twins(twins, sizeof(twins) / sizeof(twins[0]), ret_all_btf);
}

/* Autoload only the programs of the chosen cpuset write hook.
 * Returns 0 or the libbpf error. */
static int choose_hook(struct cpusetd_bpf *skel, enum write_hook hook)
{
	const struct {
		struct bpf_program *prog;
		enum write_hook hook;
	} progs[] = {
		{ skel->progs.cpuset_write_fexit, HOOK_FEXIT },
		{ skel->progs.cpuset_write_kprobe, HOOK_KPROBE },
		{ skel->progs.cpuset_write_kretprobe, HOOK_KPROBE },
		{ skel->progs.write_enter, HOOK_SYSCALL },
		{ skel->progs.write_exit, HOOK_SYSCALL },
		{ skel->progs.pwrite_enter, HOOK_SYSCALL },
		{ skel->progs.pwrite_exit, HOOK_SYSCALL },
		{ skel->progs.writev_enter, HOOK_SYSCALL },
		{ skel->progs.writev_exit, HOOK_SYSCALL },
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(progs) / sizeof(progs[0]); i++)
		err = bpf_program__set_autoload(progs[i].prog, progs[i].hook == hook);
	return err;
}

/* The best hook this kernel may take: probed, never by version. */
static enum write_hook first_hook(void)
{
	if (bpf_load_probe_fexit("cpuset_write_resmask"))
		return HOOK_FEXIT;
	if (!getenv("CPUSETD_BPF_NO_KPROBE") &&
	    access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0)
		return HOOK_KPROBE;
	/* For benchmarks only (BENCHMARKS.md "suspects"): no write hook at
	 * all, to measure what the fanotify mark costs our own writes. */
	if (getenv("CPUSETD_WRITE_HOOK_OFF"))
		return HOOK_NONE;
	if (!getenv("CPUSETD_NO_FANOTIFY"))
		return HOOK_FANOTIFY;
	log_debug("bpf: no kprobe PMU, CPUSETD_NO_FANOTIFY: write hook from syscalls");
	return HOOK_SYSCALL;
}

/* Pins placement, lifecycle and health under <pin_dir>/v<layout>/ (bpf_load.h). */
static int set_pin_paths(struct cpusetd_bpf *skel, const char *pin_dir)
{
	struct bpf_map *const maps[] = { skel->maps.placement, skel->maps.placement_gen,
					 skel->maps.lifecycle, skel->maps.health };

	return bpf_load_pin_under(maps, sizeof(maps) / sizeof(maps[0]), pin_dir);
}

/* Reads the health counters (key 0). Returns 0 or the libbpf error. */
static int read_health(const struct bpf_events *b, struct cpusetd_bpf_health *ret)
{
	uint32_t zero = 0;

	return bpf_map__lookup_elem(b->skel->maps.health, &zero, sizeof(zero),
				    ret, sizeof(*ret), 0);
}

/* ring_buffer callback: hands the record to the handler in place, no copy. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct bpf_events *b = ctx;

	if (size < sizeof(struct cpusetd_event)) {
		log_debug("bpf: short ring buffer record (%zu bytes), skipped", size);
		return 0;
	}
	return b->handler(data, b->ctx);
}

/* With the fanotify hook, one epoll fd holds the ring buffer's and the
 * fanotify group's, so the caller still waits on one fd. Returns 0 or
 * -errno. */
static int join_fds(struct bpf_events *b)
{
	struct epoll_event ev = { .events = EPOLLIN };

	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epfd < 0)
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(b->rb);
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	ev.data.fd = fanotify_hook_fd(b->fan);
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	return 0;
}

/* One try at open -> rodata -> load -> attach with the given write hook;
 * fan (HOOK_FANOTIFY) is taken over, freed on failure. Returns 0 and
 * *ret, or the error (everything freed). */
static int open_with(const struct bpf_events_opts *opts, enum write_hook hook,
		     struct fanotify_hook *fan, struct bpf_events **ret)
{
	struct cpusetd_bpf_health h;
	struct bpf_events *b = NULL;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b) {
		fanotify_hook_free(fan);
		err = -ENOMEM;
		goto cleanup;
	}
	b->fan = fan;
	b->epfd = -1;
	b->handler = opts->handler;
	b->ctx = opts->ctx;
	b->hook = hook;

	b->skel = cpusetd_bpf__open();
	if (!b->skel) {
		err = errno ? -errno : -EINVAL;
		log_debug("bpf: open failed: %s", strerror(-err));
		goto cleanup;
	}

	b->skel->rodata->hierarchy_id = opts->hierarchy_id;
	b->skel->rodata->cpuset_on_v2 = opts->cpuset_on_v2;
	b->skel->rodata->self_tgid = (uint32_t)getpid();
	b->skel->bss->root_cgroup_id = opts->root_cgroup_id;
	b->skel->bss->root_level = opts->root_level;

	err = choose_twins(b->skel, &b->all_tp_btf);
	if (!err)
		err = choose_hook(b->skel, hook);
	if (err) {
		log_debug("bpf: set_autoload failed: %s", strerror(-err));
		goto cleanup;
	}

	if (opts->pin_dir) {
		err = set_pin_paths(b->skel, opts->pin_dir);
		if (err) {
			log_debug("bpf: cannot pin under %s: %s", opts->pin_dir, strerror(-err));
			goto cleanup;
		}
	}

	err = cpusetd_bpf__load(b->skel);
	if (err) {
		log_debug("bpf: load (write hook %s) failed: %s", hook_names[hook], strerror(-err));
		goto cleanup;
	}

	err = cpusetd_bpf__attach(b->skel);
	if (err) {
		log_debug("bpf: attach (write hook %s) failed: %s", hook_names[hook],
			  strerror(-err));
		goto cleanup;
	}

	/* A reused pinned health map carries the previous run's count. */
	err = read_health(b, &h);
	if (err) {
		log_debug("bpf: health map lookup failed: %s", strerror(-err));
		goto cleanup;
	}
	b->lost_base = h.events_lost;

	/* Without the mapping the telemetry cache still expires by age. */
	b->gen = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(b->skel->maps.placement_gen), 0);
	if (b->gen == MAP_FAILED) {
		log_debug("bpf: placement_gen mmap failed: %s", strerror(errno));
		b->gen = NULL;
	}

	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_record, b, NULL);
	if (!b->rb) {
		err = errno ? -errno : -ENOMEM;
		log_debug("bpf: ring buffer setup failed: %s", strerror(-err));
		goto cleanup;
	}
	if (b->fan) {
		err = join_fds(b);
		if (err) {
			log_debug("bpf: epoll for fanotify failed: %s", strerror(-err));
			goto cleanup;
		}
	}

	*ret = b;
	return 0;

cleanup:
	bpf_events_free(b);
	return err;
}

int bpf_events_open(const struct bpf_events_opts *opts, struct bpf_events **ret)
{
	enum write_hook hook;
	int err;

	if (!opts || !opts->handler || !ret)
		return -EINVAL;

	bpf_load_route_print();
	/* The write hook is the one optional part: a kernel whose cpuset
	 * handler cannot be hooked still gets placements; each weaker hook
	 * is tried before none. Other errors are the same for every try. */
	for (hook = first_hook();;) {
		struct fanotify_hook *fan = NULL;

		/* Before the load: a kernel without fanotify (or a cgroupfs
		 * that refuses the mark) takes the syscall hook at once. */
		if (hook == HOOK_FANOTIFY &&
		    (!opts->cpuset_mnt || fanotify_hook_open(opts->cpuset_mnt, &fan) < 0))
			hook = HOOK_SYSCALL;
		err = open_with(opts, hook, fan, ret);
		if (!err || hook == HOOK_NONE || err == -ENOMEM || err == -EPERM)
			return err;
		hook++;
	}
}

void bpf_events_free(struct bpf_events *b)
{
	if (!b)
		return;
	if (b->gen)
		munmap((void *)b->gen, (size_t)sysconf(_SC_PAGESIZE));
	if (b->epfd >= 0)
		close(b->epfd);
	fanotify_hook_free(b->fan);
	ring_buffer__free(b->rb);
	/* Detaches and closes; pinned maps stay for the next run. */
	cpusetd_bpf__destroy(b->skel);
	free(b);
}

int bpf_events_fd(const struct bpf_events *b)
{
	return b->fan ? b->epfd : ring_buffer__epoll_fd(b->rb);
}

int bpf_events_poll(struct bpf_events *b)
{
	int n = ring_buffer__consume(b->rb), f;

	if (n < 0 || !b->fan)
		return n;
	f = fanotify_hook_poll(b->fan, b->handler, b->ctx);
	return f < 0 ? f : n + f;
}

uint64_t bpf_events_lost(const struct bpf_events *b)
{
	struct cpusetd_bpf_health h;

	/* One syscall; on the (unexpected) failure report nothing new. */
	if (read_health(b, &h))
		return 0;
	/* A fanotify queue overflow may have dropped a foreign write: the
	 * same cure, a resync, applies. */
	return h.events_lost - b->lost_base + (b->fan ? fanotify_hook_overflows(b->fan) : 0);
}

const char *bpf_events_write_hook(const struct bpf_events *b)
{
	return hook_names[b->hook];
}

int bpf_events_get_lifecycle(const struct bpf_events *b, uint64_t cgroup_id,
			     struct cpusetd_lifecycle *ret)
{
	return bpf_map__lookup_elem(b->skel->maps.lifecycle, &cgroup_id, sizeof(cgroup_id),
				    ret, sizeof(*ret), 0);
}

int bpf_events_add_lifecycle(struct bpf_events *b, uint64_t cgroup_id,
			     const struct cpusetd_lifecycle *lc, bool replace)
{
	int err = bpf_map__update_elem(b->skel->maps.lifecycle, &cgroup_id, sizeof(cgroup_id),
				       lc, sizeof(*lc), replace ? BPF_ANY : BPF_NOEXIST);

	return err == -EEXIST ? 0 : err;
}

int bpf_events_probe_runtime_mntns(struct bpf_events *b, struct bpf_mntns_probe *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = bpf_program__fd(b->skel->progs.probe_runtime_mntns);
	int err;

	if (fd < 0)
		return -ENOTSUP;
	err = bpf_prog_test_run_opts(fd, &opts);
	if (err)
		return err;
	if (!b->skel->bss->probed_mntns)
		return -ENODATA;
	ret->mntns = b->skel->bss->probed_mntns;
	ret->own_mntns = b->skel->bss->probed_own_mntns;
	ret->pid = b->skel->bss->probed_pid;
	snprintf(ret->comm, sizeof(ret->comm), "%.*s", (int)sizeof(b->skel->bss->probed_comm),
		 b->skel->bss->probed_comm);
	return 0;
}

const char *bpf_events_attach_mode(const struct bpf_events *b)
{
	return b->all_tp_btf ? "tp_btf" : "raw_tp";
}

/* After the map changed: caches of its answers (telemetry) are stale.
 * Release order: the map write is visible before the new generation. */
static void bump_gen(struct bpf_events *b)
{
	if (b->gen)
		__atomic_add_fetch(b->gen, 1, __ATOMIC_RELEASE);
}

int bpf_events_set_placement(struct bpf_events *b, uint64_t cgroup_id,
			     const struct cpusetd_placement *pl)
{
	int err = bpf_map__update_elem(b->skel->maps.placement, &cgroup_id, sizeof(cgroup_id),
				       pl, sizeof(*pl), BPF_ANY);

	if (!err)
		bump_gen(b);
	return err;
}

int bpf_events_set_placements(struct bpf_events *b, const uint64_t *ids,
			      const struct cpusetd_placement *pls, uint32_t n,
			      uint32_t *ret_done)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	uint32_t count = n;
	int err;

	*ret_done = 0;
	if (!n)
		return 0;
	err = bpf_map_update_batch(bpf_map__fd(b->skel->maps.placement), ids, pls, &count,
				   &opts);
	if (count > n)
		count = 0;	/* not filled in by a failure before the first entry */
	if (count)
		bump_gen(b);
	*ret_done = err ? count : n;
	return err;
}

int bpf_events_del_placement(struct bpf_events *b, uint64_t cgroup_id)
{
	int err;

	err = bpf_map__delete_elem(b->skel->maps.placement, &cgroup_id, sizeof(cgroup_id), 0);
	if (!err)
		bump_gen(b);
	return err == -ENOENT ? 0 : err;
}

int bpf_events_prune_placements(struct bpf_events *b,
				bool (*keep)(uint64_t cgroup_id, void *ctx), void *ctx)
{
	int fd = bpf_map__fd(b->skel->maps.placement), err = 0;
	uint64_t key, *prev = NULL, *drop = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		prev = &key;
		if (keep(key, ctx))
			continue;
		if (n == cap) {
			size_t c2 = cap ? cap * 2 : 64;
			uint64_t *d = realloc(drop, c2 * sizeof(*d));

			if (!d) {
				free(drop);
				return -ENOMEM;
			}
			drop = d;
			cap = c2;
		}
		drop[n++] = key;
	}
	for (size_t i = 0; i < n && !err; i++)
		if (bpf_map_delete_elem(fd, &drop[i]) < 0 && errno != ENOENT)
			err = -errno;
	free(drop);
	if (n)
		bump_gen(b);
	return err ? err : (int)n;
}

int bpf_events_placement_fd(const struct bpf_events *b)
{
	return bpf_map__fd(b->skel->maps.placement);
}

int bpf_events_placement_gen_fd(const struct bpf_events *b)
{
	return bpf_map__fd(b->skel->maps.placement_gen);
}

void bpf_events_set_root(struct bpf_events *b, uint64_t root_cgroup_id, uint32_t root_level)
{
	/* Two plain stores into the mmapped .bss: a program running in
	 * between may see one old and one new value and let one stray event
	 * through, which user space filters by path anyway. */
	b->skel->bss->root_level = root_level;
	b->skel->bss->root_cgroup_id = root_cgroup_id;
}
