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
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpusetd.skel.h"
#include "bpf_events.h"
#include "bpf_load.h"
#include "log.h"

struct bpf_events {
	struct cpusetd_bpf *skel;
	struct ring_buffer *rb;
	int (*handler)(const struct cpusetd_event *ev, void *ctx);
	void *ctx;
	uint64_t lost_base;	/* health.events_lost at open (pinned: survives restarts) */
	bool all_tp_btf;
};

/* Turns autoload off for the twin of each pair that is not used.
 * Returns 0 or the libbpf error. */
static int choose_twins(struct cpusetd_bpf *skel, bool *ret_all_btf)
{
	const struct bpf_load_twin twins[] = {
		{ "cgroup_mkdir", skel->progs.cg_mkdir_btf, skel->progs.cg_mkdir_raw },
		{ "cgroup_rmdir", skel->progs.cg_rmdir_btf, skel->progs.cg_rmdir_raw },
		{ "sched_process_exec", skel->progs.exec_btf, skel->progs.exec_raw },
	};

	return bpf_load_choose_twins(twins, sizeof(twins) / sizeof(twins[0]), ret_all_btf);
}

/* Pins placement and health under <pin_dir>/v<layout>/ (bpf_load.h). */
static int set_pin_paths(struct cpusetd_bpf *skel, const char *pin_dir)
{
	struct bpf_map *const maps[] = { skel->maps.placement, skel->maps.health };

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

int bpf_events_open(const struct bpf_events_opts *opts, struct bpf_events **ret)
{
	struct cpusetd_bpf_health h;
	struct bpf_events *b = NULL;
	int err;

	if (!opts || !opts->handler || !ret)
		return -EINVAL;

	bpf_load_route_print();

	b = calloc(1, sizeof(*b));
	if (!b) {
		err = -ENOMEM;
		goto cleanup;
	}
	b->handler = opts->handler;
	b->ctx = opts->ctx;

	b->skel = cpusetd_bpf__open();
	if (!b->skel) {
		err = errno ? -errno : -EINVAL;
		log_debug("bpf: open failed: %s", strerror(-err));
		goto cleanup;
	}

	b->skel->rodata->hierarchy_id = opts->hierarchy_id;
	b->skel->rodata->cpuset_on_v2 = opts->cpuset_on_v2;
	b->skel->bss->root_cgroup_id = opts->root_cgroup_id;
	b->skel->bss->root_level = opts->root_level;

	err = choose_twins(b->skel, &b->all_tp_btf);
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
		log_debug("bpf: load failed: %s", strerror(-err));
		goto cleanup;
	}

	err = cpusetd_bpf__attach(b->skel);
	if (err) {
		log_debug("bpf: attach failed: %s", strerror(-err));
		goto cleanup;
	}

	/* A reused pinned health map carries the previous run's count. */
	err = read_health(b, &h);
	if (err) {
		log_debug("bpf: health map lookup failed: %s", strerror(-err));
		goto cleanup;
	}
	b->lost_base = h.events_lost;

	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_record, b, NULL);
	if (!b->rb) {
		err = errno ? -errno : -ENOMEM;
		log_debug("bpf: ring buffer setup failed: %s", strerror(-err));
		goto cleanup;
	}

	*ret = b;
	return 0;

cleanup:
	bpf_events_free(b);
	return err;
}

void bpf_events_free(struct bpf_events *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	/* Detaches and closes; pinned maps stay for the next run. */
	cpusetd_bpf__destroy(b->skel);
	free(b);
}

int bpf_events_fd(const struct bpf_events *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int bpf_events_poll(struct bpf_events *b)
{
	return ring_buffer__consume(b->rb);
}

uint64_t bpf_events_lost(const struct bpf_events *b)
{
	struct cpusetd_bpf_health h;

	/* One syscall; on the (unexpected) failure report nothing new. */
	if (read_health(b, &h))
		return 0;
	return h.events_lost - b->lost_base;
}

const char *bpf_events_attach_mode(const struct bpf_events *b)
{
	return b->all_tp_btf ? "tp_btf" : "raw_tp";
}

int bpf_events_set_placement(struct bpf_events *b, uint64_t cgroup_id,
			     const struct cpusetd_placement *pl)
{
	return bpf_map__update_elem(b->skel->maps.placement, &cgroup_id, sizeof(cgroup_id),
				    pl, sizeof(*pl), BPF_ANY);
}

int bpf_events_del_placement(struct bpf_events *b, uint64_t cgroup_id)
{
	int err;

	err = bpf_map__delete_elem(b->skel->maps.placement, &cgroup_id, sizeof(cgroup_id), 0);
	return err == -ENOENT ? 0 : err;
}

int bpf_events_placement_fd(const struct bpf_events *b)
{
	return bpf_map__fd(b->skel->maps.placement);
}

void bpf_events_set_root(struct bpf_events *b, uint64_t root_cgroup_id, uint32_t root_level)
{
	/* Two plain stores into the mmapped .bss: a program running in
	 * between may see one old and one new value and let one stray event
	 * through, which user space filters by path anyway. */
	b->skel->bss->root_level = root_level;
	b->skel->bss->root_cgroup_id = root_cgroup_id;
}
