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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cpusetd.skel.h"
#include "bpf_events.h"
#include "log.h"

struct bpf_events {
	struct cpusetd_bpf *skel;
	struct ring_buffer *rb;
	int (*handler)(const struct cpusetd_event *ev, void *ctx);
	void *ctx;
	uint64_t lost_base;	/* health.events_lost at open (pinned: survives restarts) */
	bool all_tp_btf;
};

/* One tracepoint and its two program twins. */
struct twin {
	const char *tp;
	struct bpf_program *btf;
	struct bpf_program *raw;
};

/*
 * libbpf output goes to our log at debug level, warnings included: libbpf
 * has no error level, and the caller of bpf_events_open() logs the failure.
 * libbpf's own debug chatter (ELF sections, relocations) is only shown
 * with CPUSETD_LIBBPF_DEBUG=1 in the environment.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int chatty = -1;
	char *msg = NULL;
	size_t n;

	if (chatty < 0)
		chatty = getenv("CPUSETD_LIBBPF_DEBUG") != NULL;
	if (log_max_level < LOG_DEBUG || (level == LIBBPF_DEBUG && !chatty))
		return 0;
	/* Verifier logs are long: allocate rather than truncate. */
	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	n = strlen(msg);
	if (n > 0 && msg[n - 1] == '\n')
		msg[n - 1] = '\0';	/* log_msg() adds its own */
	log_debug("%s", msg);
	free(msg);
	return 0;
}

/*
 * Whether a BPF_PROG_TYPE_TRACING program can be loaded for tracepoint
 * tp as tp_btf: a two-instruction program with expected_attach_type
 * BPF_TRACE_RAW_TP and attach_btf_id = the btf_trace_<tp> typedef.
 * A feature probe, never a kernel version check. Cannot fail: any error
 * means "no".
 */
static bool probe_tp_btf(const struct btf *vmlinux, const char *tp)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.expected_attach_type = BPF_TRACE_RAW_TP,
	);
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char name[128];
	int id, fd;

	if (!vmlinux)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF);
	if (id <= 0) {
		log_debug("bpf: no BTF typedef %s: tp_btf unavailable", name);
		return false;
	}
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0) {
		log_debug("bpf: tp_btf probe for %s failed: %s", tp, strerror(-fd));
		return false;
	}
	close(fd);
	return true;
}

/*
 * Turns autoload off for the twin of each pair that is not used.
 * Sets *ret_all_btf when every pair uses its tp_btf twin.
 * Returns 0 or the libbpf error.
 */
static int choose_twins(struct cpusetd_bpf *skel, bool *ret_all_btf)
{
	const struct twin twins[] = {
		{ "cgroup_mkdir", skel->progs.cg_mkdir_btf, skel->progs.cg_mkdir_raw },
		{ "cgroup_rmdir", skel->progs.cg_rmdir_btf, skel->progs.cg_rmdir_raw },
		{ "sched_process_exec", skel->progs.exec_btf, skel->progs.exec_raw },
	};
	struct btf *vmlinux;
	bool all_btf = true;
	int err = 0;

	/* Parsed once for the three probes; NULL means no tp_btf at all.
	 * CPUSETD_BPF_NO_TP_BTF=1 makes every probe say no, so tests run the
	 * raw_tp path on kernels that have tp_btf (a fault we cannot cause). */
	vmlinux = getenv("CPUSETD_BPF_NO_TP_BTF") ? NULL : btf__load_vmlinux_btf();
	if (!vmlinux)
		log_debug("bpf: no vmlinux BTF or tp_btf disabled: raw_tp only");

	for (size_t i = 0; i < sizeof(twins) / sizeof(twins[0]); i++) {
		bool use_btf = probe_tp_btf(vmlinux, twins[i].tp);

		log_debug("bpf: %s attaches as %s", twins[i].tp, use_btf ? "tp_btf" : "raw_tp");
		err = bpf_program__set_autoload(use_btf ? twins[i].raw : twins[i].btf, false);
		if (err)
			goto cleanup;
		all_btf = all_btf && use_btf;
	}
	*ret_all_btf = all_btf;
cleanup:
	btf__free(vmlinux);
	return err;
}

/* mkdir that accepts an existing directory. Returns 0 or -errno. */
static int mkdir_exist_ok(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Pins placement and health at <pin_dir>/v<layout>/<map>, reusing maps
 * already pinned there (libbpf does that at load). pin_dir must exist or
 * be creatable with one mkdir; whether it is on bpffs is left to libbpf
 * (which fails with -EINVAL, leaving the empty v<layout> directory behind).
 * Returns 0, -ENAMETOOLONG, -errno from mkdir or the libbpf error.
 */
static int set_pin_paths(struct cpusetd_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = { skel->maps.placement, skel->maps.health };
	char dir[4096], path[4096];
	int n, err;

	n = snprintf(dir, sizeof(dir), "%s/v%d", pin_dir, CPUSETD_LAYOUT_VERSION);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	err = mkdir_exist_ok(pin_dir);
	if (err)
		return err;
	err = mkdir_exist_ok(dir);
	if (err)
		return err;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		n = snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(maps[i]));
		if (n < 0 || (size_t)n >= sizeof(path))
			return -ENAMETOOLONG;
		err = bpf_map__set_pin_path(maps[i], path);
		if (err)
			return err;
	}
	return 0;
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

	libbpf_set_print(libbpf_print);

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

void bpf_events_set_root(struct bpf_events *b, uint64_t root_cgroup_id, uint32_t root_level)
{
	/* Two plain stores into the mmapped .bss: a program running in
	 * between may see one old and one new value and let one stray event
	 * through, which user space filters by path anyway. */
	b->skel->bss->root_level = root_level;
	b->skel->bss->root_cgroup_id = root_cgroup_id;
}
