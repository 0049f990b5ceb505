// SPDX-License-Identifier: Apache-2.0
/*
 * Loader helpers shared by bpf_events.c and bpf_telemetry.c: libbpf
 * logging, the tp_btf feature probe and twin choice, layout-versioned
 * pin paths. See bpf_load.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "maps/cpusetd.h"
#include "bpf_load.h"
#include "user/base/log.h"

/*
 * libbpf output goes to our log at debug level, warnings included: libbpf
 * has no error level, and the caller of the loader logs the failure.
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

void bpf_load_route_print(void)
{
	libbpf_set_print(libbpf_print);
}

/*
 * Whether a BPF_PROG_TYPE_TRACING program can be loaded for tracepoint
 * tp as tp_btf: a two-instruction program with expected_attach_type
 * BPF_TRACE_RAW_TP and attach_btf_id = the btf_trace_<tp> typedef.
 * Cannot fail: any error means "no".
 */
/*
 * Loads "return 0" as a BPF_PROG_TYPE_TRACING program of attach type
 * type on the vmlinux BTF type btf_id: the kernel checks that it can
 * attach there. Returns the program fd or the -errno of the load.
 */
static int load_trivial_tracing(enum bpf_attach_type type, int btf_id)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.expected_attach_type = type,
		.attach_btf_id = (__u32)btf_id,
	);
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &opts);
}

static bool probe_tp_btf(const struct btf *vmlinux, const char *tp)
{
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
	fd = load_trivial_tracing(BPF_TRACE_RAW_TP, id);
	if (fd < 0) {
		log_debug("bpf: tp_btf probe for %s failed: %s", tp, strerror(-fd));
		return false;
	}
	close(fd);
	return true;
}

int bpf_load_choose_twins(const struct bpf_load_twin *twins, size_t n, bool *ret_all_btf)
{
	struct btf *vmlinux;
	bool all_btf = true;
	int err = 0;

	/* Parsed once for every probe; NULL means no tp_btf at all. */
	vmlinux = getenv("CPUSETD_BPF_NO_TP_BTF") ? NULL : btf__load_vmlinux_btf();
	if (!vmlinux)
		log_debug("bpf: no vmlinux BTF or tp_btf disabled: raw_tp only");

	for (size_t i = 0; i < n; i++) {
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

bool bpf_load_probe_fexit(const char *func)
{
	struct btf *vmlinux = NULL;
	int id, fd = -1, link = -1;
	bool ok = false;

	if (getenv("CPUSETD_BPF_NO_FEXIT"))
		return false;
	vmlinux = btf__load_vmlinux_btf();
	id = vmlinux ? btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC) : -ENOENT;
	if (id <= 0) {
		log_debug("bpf: no BTF for function %s: fexit unavailable", func);
		goto cleanup;
	}
	fd = load_trivial_tracing(BPF_TRACE_FEXIT, id);
	if (fd < 0) {
		log_debug("bpf: fexit probe load for %s failed: %s", func, strerror(-fd));
		goto cleanup;
	}
	link = bpf_link_create(fd, 0, BPF_TRACE_FEXIT, NULL);
	if (link < 0)
		log_debug("bpf: fexit probe attach to %s failed: %s", func, strerror(-link));
	ok = link >= 0;
cleanup:
	if (link >= 0)
		close(link);
	if (fd >= 0)
		close(fd);
	btf__free(vmlinux);
	return ok;
}

/* mkdir that accepts an existing directory. Returns 0 or -errno. */
static int mkdir_exist_ok(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int bpf_load_pin_under(struct bpf_map *const *maps, size_t n, const char *pin_dir)
{
	char dir[4096], path[4096];
	int len, err;

	len = snprintf(dir, sizeof(dir), "%s/v%d", pin_dir, CPUSETD_LAYOUT_VERSION);
	if (len < 0 || (size_t)len >= sizeof(dir))
		return -ENAMETOOLONG;
	err = mkdir_exist_ok(pin_dir);
	if (err)
		return err;
	err = mkdir_exist_ok(dir);
	if (err)
		return err;

	for (size_t i = 0; i < n; i++) {
		len = snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(maps[i]));
		if (len < 0 || (size_t)len >= sizeof(path))
			return -ENAMETOOLONG;
		err = bpf_map__set_pin_path(maps[i], path);
		if (err)
			return err;
	}
	return 0;
}

/* Every name a pinned map of ours has had, in any layout. */
static bool our_map_name(const char *name)
{
	static const char *const names[] = {
		"placement", "placement_gen", "lifecycle", "health", "cpu_stats",
		"cgroup_stats", "cpu_owner", "foreign", "cpu_node",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* The layout version k of a directory named "v<k>", or -1. */
static long layout_of(const char *name)
{
	char *end;
	long k;

	if (name[0] != 'v' || name[1] < '0' || name[1] > '9')
		return -1;
	k = strtol(name + 1, &end, 10);
	return *end ? -1 : k;
}

/* Whether dir (open, at pin_dir/name) holds only pinned maps by our names:
 * regular files on bpffs. */
static bool only_our_maps(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	bool ours = true;
	struct stat st;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (ours && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ours = our_map_name(e->d_name) &&
		       fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       S_ISREG(st.st_mode);
		if (!ours)
			log_debug("bpf: %s/%s is not a map of ours: left", name, e->d_name);
	}
	closedir(d);
	return ours;
}

/* Unlinks the pins in pin_dir/name, then the directory. 0 or -errno. */
static int remove_layout(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	int err = 0;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (e = readdir(d)))
		if (our_map_name(e->d_name) && unlinkat(dirfd(d), e->d_name, 0) < 0)
			err = -errno;
	closedir(d);
	if (!err && unlinkat(dir, name, AT_REMOVEDIR) < 0)
		err = -errno;
	return err;
}

int bpf_load_remove_old_layouts(const char *pin_dir)
{
	int fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), n = 0, err;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((e = readdir(d))) {
		long k = layout_of(e->d_name);

		if (k < 0 || k >= CPUSETD_LAYOUT_VERSION || !only_our_maps(dirfd(d), e->d_name))
			continue;
		err = remove_layout(dirfd(d), e->d_name);
		if (err)
			log_debug("bpf: removing %s/%s failed: %s", pin_dir, e->d_name,
				  strerror(-err));
		else
			n++;
	}
	closedir(d);
	return n;
}
