// SPDX-License-Identifier: Apache-2.0
/*
 * Loader for the telemetry programs (bpf/telemetry.bpf.c), and the
 * writer of the maps they read from user space (cpu_owner, cpu_node).
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
#include "maps/cpusetd.h"	/* before the skeleton: its rodata uses our types */
#include "telemetry.skel.h"
#include "bpf_load.h"
#include "bpf_telemetry.h"
#include "user/base/log.h"

struct bpf_telemetry {
	struct telemetry_bpf *skel;
	bool all_tp_btf;
	bool wait_from_map;
	bool full;		/* opts->full: telemetry = full */
	/* cpu_owner as last written; `known` false until the first write,
	 * so a reused pinned map is overwritten once in full. */
	bool owner_known[CPUSETD_MAX_CPUS];
	struct cpusetd_cpu_owner owner[CPUSETD_MAX_CPUS];
};

/*
 * Whether the kernel keeps sched_info.run_delay (CONFIG_SCHED_INFO, and
 * on older kernels only with schedstats or delay accounting on): then
 * /proc/1/schedstat exists and init has waited on a run queue at some
 * point since boot. CPUSETD_TELEMETRY_WAIT_MAP=1 says no, so tests cover
 * the fallback. Cannot fail: any doubt means no.
 */
static bool run_delay_kept(void)
{
	unsigned long long run_ns, wait_ns;
	FILE *f;
	int n;

	if (getenv("CPUSETD_TELEMETRY_WAIT_MAP"))
		return false;
	f = fopen("/proc/1/schedstat", "re");
	if (!f)
		return false;
	n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
	fclose(f);
	return n == 2 && wait_ns > 0;
}

/* Without run_delay the wakeup programs keep the wait timestamps;
 * with it they are not needed and not loaded. Returns 0 or libbpf error. */
static int choose_wait_source(struct bpf_telemetry *t)
{
	struct bpf_program *wakeups[] = {
		t->skel->progs.wakeup_btf, t->skel->progs.wakeup_raw,
		t->skel->progs.wakeup_new_btf, t->skel->progs.wakeup_new_raw,
	};
	int err = 0;

	/* basic measures no wait at all: neither source. */
	t->wait_from_map = t->full && !run_delay_kept();
	t->skel->rodata->wait_from_map = t->wait_from_map;
	log_debug("telemetry: run-queue wait from %s", !t->full ? "nowhere (basic)" :
		  t->wait_from_map ? "wakeup timestamps" : "sched_info.run_delay");
	for (size_t i = 0; !t->wait_from_map && !err && i < sizeof(wakeups) / sizeof(wakeups[0]); i++)
		err = bpf_program__set_autoload(wakeups[i], false);
	return err;
}

static int choose_twins(struct telemetry_bpf *skel, bool *ret_all_btf)
{
	const struct bpf_load_twin twins[] = {
		{ "sched_switch", skel->progs.switch_btf, skel->progs.switch_raw },
		{ "sched_wakeup", skel->progs.wakeup_btf, skel->progs.wakeup_raw },
		{ "sched_wakeup_new", skel->progs.wakeup_new_btf, skel->progs.wakeup_new_raw },
		{ "sched_migrate_task", skel->progs.migrate_btf, skel->progs.migrate_raw },
	};

	return bpf_load_choose_twins(twins, sizeof(twins) / sizeof(twins[0]), ret_all_btf);
}

/* The maps SREs and cpusetctl read; the internal ones stay unpinned. */
static int set_pin_paths(struct telemetry_bpf *skel, const char *pin_dir)
{
	struct bpf_map *const maps[] = {
		skel->maps.cpu_stats, skel->maps.cgroup_stats, skel->maps.cpu_owner,
		skel->maps.foreign, skel->maps.cpu_node,
	};

	return bpf_load_pin_under(maps, sizeof(maps) / sizeof(maps[0]), pin_dir);
}

/* Everything between open and attach; returns 0 or the first error. */
static int prepare(struct bpf_telemetry *t, const struct bpf_telemetry_opts *opts)
{
	int err;

	t->skel->rodata->cpuset_on_v2 = opts->cpuset_on_v2;
	/* The clock is rq->clock where the programs can read it (see
	 * clock_now() in bpf/telemetry.bpf.c); CPUSETD_TELEMETRY_KTIME=1
	 * forces bpf_ktime_get_ns(), so a benchmark can weigh the two. */
	t->skel->rodata->clock_ktime = getenv("CPUSETD_TELEMETRY_KTIME") != NULL;
	/* Tests stretch the cgroup cache's lifetime, so that only the
	 * generation can tell it a placement changed. */
	if (getenv("CPUSETD_TELEMETRY_CACHE_TTL_MS"))
		t->skel->rodata->cache_ttl_ns =
			strtoull(getenv("CPUSETD_TELEMETRY_CACHE_TTL_MS"), NULL, 10) * 1000000ULL;
	t->skel->rodata->tel_full = t->full;
	err = choose_twins(t->skel, &t->all_tp_btf);
	if (!err)
		err = choose_wait_source(t);
	/* basic counts no NUMA migration: sched_migrate_task not loaded */
	if (!err && !t->full)
		err = bpf_program__set_autoload(t->skel->progs.migrate_btf, false);
	if (!err && !t->full)
		err = bpf_program__set_autoload(t->skel->progs.migrate_raw, false);
	if (err) {
		log_debug("telemetry: set_autoload failed: %s", strerror(-err));
		return err;
	}
	/* One placement map for both objects: user space writes it once. */
	err = bpf_map__reuse_fd(t->skel->maps.placement, opts->placement_fd);
	if (!err && opts->placement_gen_fd >= 0)
		err = bpf_map__reuse_fd(t->skel->maps.placement_gen, opts->placement_gen_fd);
	if (err) {
		log_debug("telemetry: cannot share the placement map: %s", strerror(-err));
		return err;
	}
	if (opts->pin_dir) {
		err = set_pin_paths(t->skel, opts->pin_dir);
		if (err) {
			log_debug("telemetry: cannot pin under %s: %s", opts->pin_dir,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

int bpf_telemetry_open(const struct bpf_telemetry_opts *opts, struct bpf_telemetry **ret)
{
	struct bpf_telemetry *t = NULL;
	int err;

	if (!opts || !ret || opts->placement_fd < 0)
		return -EINVAL;
	/* For benchmarks: the daemon without telemetry, all else equal. */
	if (getenv("CPUSETD_TELEMETRY_OFF"))
		return -ECANCELED;

	bpf_load_route_print();

	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}

	t->full = opts->full;
	t->skel = telemetry_bpf__open();
	if (!t->skel) {
		err = errno ? -errno : -EINVAL;
		log_debug("telemetry: open failed: %s", strerror(-err));
		goto cleanup;
	}

	err = prepare(t, opts);
	if (err)
		goto cleanup;

	err = telemetry_bpf__load(t->skel);
	if (err) {
		log_debug("telemetry: load failed: %s", strerror(-err));
		goto cleanup;
	}

	err = telemetry_bpf__attach(t->skel);
	if (err) {
		log_debug("telemetry: attach failed: %s", strerror(-err));
		goto cleanup;
	}

	*ret = t;
	return 0;

cleanup:
	bpf_telemetry_free(t);
	return err;
}

void bpf_telemetry_free(struct bpf_telemetry *t)
{
	if (!t)
		return;
	/* Detaches and closes; the placement fd closed here is libbpf's
	 * duplicate, the original stays with bpf_events. */
	telemetry_bpf__destroy(t->skel);
	free(t);
}

const char *bpf_telemetry_attach_mode(const struct bpf_telemetry *t)
{
	return t->all_tp_btf ? "tp_btf" : "raw_tp";
}

const char *bpf_telemetry_wait_source(const struct bpf_telemetry *t)
{
	if (!t->full)
		return "none";
	return t->wait_from_map ? "wakeup" : "run_delay";
}

const char *bpf_telemetry_level(const struct bpf_telemetry *t)
{
	return t ? (t->full ? "full" : "basic") : "off";
}

/* Writes cpu's owner unless it is what we wrote last. Returns 0 or -errno. */
static int set_owner(struct bpf_telemetry *t, uint32_t cpu, const struct cpusetd_cpu_owner *o)
{
	struct cpusetd_cpu_owner v = { .cgroup_id = o->cgroup_id, .kind = o->kind };
	int err;

	if (t->owner_known[cpu] && !memcmp(&t->owner[cpu], &v, sizeof(v)))
		return 0;
	err = bpf_map__update_elem(t->skel->maps.cpu_owner, &cpu, sizeof(cpu), &v, sizeof(v),
				   BPF_ANY);
	if (err)
		return err;
	t->owner[cpu] = v;
	t->owner_known[cpu] = true;
	return 0;
}

int bpf_telemetry_set_owners(struct bpf_telemetry *t, const struct cpusetd_cpu_owner *owners,
			     unsigned n_cpus)
{
	static const struct cpusetd_cpu_owner none;
	int first = 0, err;

	if (n_cpus > CPUSETD_MAX_CPUS)
		return -EINVAL;
	for (uint32_t cpu = 0; cpu < CPUSETD_MAX_CPUS; cpu++) {
		err = set_owner(t, cpu, cpu < n_cpus ? &owners[cpu] : &none);
		if (err && !first)
			first = err;
	}
	return first;
}

int bpf_telemetry_set_cpu_node(struct bpf_telemetry *t, unsigned cpu, unsigned node)
{
	struct cpusetd_cpu_node v = { .node = node };
	uint32_t key = cpu;

	if (cpu >= CPUSETD_MAX_CPUS)
		return -EINVAL;
	return bpf_map__update_elem(t->skel->maps.cpu_node, &key, sizeof(key), &v, sizeof(v),
				    BPF_ANY);
}

int bpf_telemetry_forget_cgroup(struct bpf_telemetry *t, uint64_t cgroup_id)
{
	int err;

	err = bpf_map__delete_elem(t->skel->maps.cgroup_stats, &cgroup_id, sizeof(cgroup_id), 0);
	return err == -ENOENT ? 0 : err;
}

int bpf_telemetry_prune(struct bpf_telemetry *t, bool (*keep)(uint64_t cgroup_id, void *ctx),
			void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.cgroup_stats), n = 0, err = 0;
	uint64_t key, *prev = NULL, *drop = NULL;
	size_t cap = 0;

	/* Collect first, delete after: deleting the key get_next_key walks
	 * from would restart the walk. */
	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		prev = &key;
		if (keep(key, ctx))
			continue;
		if ((size_t)n == cap) {
			uint64_t *d = realloc(drop, (cap ? cap * 2 : 64) * sizeof(*d));

			if (!d) {
				free(drop);
				return -ENOMEM;
			}
			drop = d;
			cap = cap ? cap * 2 : 64;
		}
		drop[n++] = key;
	}
	for (int i = 0; i < n && !err; i++)
		if (bpf_map_delete_elem(fd, &drop[i]) < 0 && errno != ENOENT)
			err = -errno;
	free(drop);
	return err ? err : n;
}

void bpf_telemetry_fds(const struct bpf_telemetry *t, struct telemetry_fds *ret)
{
	*ret = (struct telemetry_fds){
		.cpu_stats = bpf_map__fd(t->skel->maps.cpu_stats),
		.cgroup_stats = bpf_map__fd(t->skel->maps.cgroup_stats),
		.cpu_owner = bpf_map__fd(t->skel->maps.cpu_owner),
		.foreign = bpf_map__fd(t->skel->maps.foreign),
	};
}
