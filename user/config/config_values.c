// SPDX-License-Identifier: Apache-2.0
/*
 * One setting's value, from the INI file or the command line alike:
 * checked, stored in the loader's private copy, or refused with the
 * reason in one line (config_apply). Values never reach the config half
 * set: the caller drops the whole copy on the first error.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "config_internal.h"
#include "user/base/log.h"
#include "user/nri/nri.h"	/* nri_plugin_*_valid */

/* Copies an absolute path into dst. Returns 0 or -EINVAL with err set. */
static int set_path(char *dst, size_t size, const char *v, char *err, size_t errlen)
{
	if (v[0] != '/') {
		snprintf(err, errlen, "expected an absolute path, got '%s'", v);
		return -EINVAL;
	}
	if (strlen(v) >= size) {
		snprintf(err, errlen, "path longer than %zu characters", size - 1);
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

/* Strict decimal in lo..hi: digits only, no sign, no blanks. */
static int parse_uint_range(const char *v, unsigned lo, unsigned hi, unsigned *ret)
{
	unsigned long x;
	char *end;

	if (v[0] < '0' || v[0] > '9')
		return -EINVAL;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -EINVAL;
	*ret = (unsigned)x;
	return 0;
}

/* Strict decimal in lo..hi, with an optional '-': no '+', no blanks. */
static int parse_int_range(const char *v, int lo, int hi, int *ret)
{
	unsigned mag;
	long x;

	if (parse_uint_range(v + (v[0] == '-'), 0, (unsigned)INT_MAX, &mag) < 0)
		return -EINVAL;
	x = v[0] == '-' ? -(long)mag : (long)mag;
	if (x < lo || x > hi)
		return -EINVAL;
	*ret = (int)x;
	return 0;
}

static int set_sched_policy(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	static const struct { const char *name; int policy; } names[] = {
		{ "other", SCHED_OTHER }, { "fifo", SCHED_FIFO }, { "rr", SCHED_RR },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(v, names[i].name) == 0) {
			c->sched_policy = names[i].policy;
			return 0;
		}
	}
	snprintf(err, errlen, "expected other|fifo|rr, got '%s'", v);
	return -EINVAL;
}

/* The first bundle path from a source replaces what the previous one gave. */
static int add_bundle_path(struct loader *l, const char *v, char *err, size_t errlen)
{
	struct cpusetd_config *c = &l->cfg;
	bool *replaced = l->in_ini ? &l->bundle_from_ini : &l->bundle_from_cli;

	if (!*replaced) {
		c->n_bundle_paths = 0;
		*replaced = true;
	}
	if (c->n_bundle_paths == CONFIG_MAX_BUNDLE_PATHS) {
		snprintf(err, errlen, "at most %d bundle paths", CONFIG_MAX_BUNDLE_PATHS);
		return -EINVAL;
	}
	if (set_path(c->bundle_paths[c->n_bundle_paths], PATH_MAX, v, err, errlen) < 0)
		return -EINVAL;
	c->n_bundle_paths++;
	return 0;
}

static int set_kubepods_root(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	/* "" asks for auto-detection, as the default does. */
	if (!v[0]) {
		c->kubepods_root[0] = '\0';
		return 0;
	}
	return set_path(c->kubepods_root, sizeof(c->kubepods_root), v, err, errlen);
}

/* isolate_host_skip: comma-separated cgroup path patterns, each starting
 * with '/', at most CONFIG_MAX_ISOLATE_SKIP of them; "" = none. */
static int set_isolate_skip(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	unsigned n = 0;

	if (strlen(v) >= sizeof(c->isolate_host_skip)) {
		snprintf(err, errlen, "longer than %zu characters", sizeof(c->isolate_host_skip) - 1);
		return -EINVAL;
	}
	for (const char *p = v; *p; n++) {
		size_t len = strcspn(p, ",");

		if (p[0] != '/' || len == 0) {
			snprintf(err, errlen, "expected cgroup path patterns starting with '/', "
				 "comma-separated, got '%s'", v);
			return -EINVAL;
		}
		p += len + (p[len] == ',');
	}
	if (n > CONFIG_MAX_ISOLATE_SKIP) {
		snprintf(err, errlen, "at most %d patterns", CONFIG_MAX_ISOLATE_SKIP);
		return -EINVAL;
	}
	strcpy(c->isolate_host_skip, v);
	return 0;
}

/*
 * nri_plugin_name: what the runtime logs and orders us by (with the
 * index); 1..NRI_NAME_MAX-1 letters, digits, '-', '_', '.', as a
 * pre-installed plugin's file name "<index>-<name>" can hold.
 */
static int set_nri_name(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	if (!nri_plugin_name_valid(v)) {
		snprintf(err, errlen, "expected 1..%d letters, digits, '-', '_' or '.', got '%s'",
			 NRI_NAME_MAX - 1, v);
		return -EINVAL;
	}
	strcpy(c->nri_plugin_name, v);
	return 0;
}

/* nri_plugin_index: exactly two digits, "00".."99" (NRI's plugin index). */
static int set_nri_index(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	if (!nri_plugin_index_valid(v)) {
		snprintf(err, errlen, "expected two digits 00..99, got '%s'", v);
		return -EINVAL;
	}
	strcpy(c->nri_plugin_index, v);
	return 0;
}

/* export_containers = all|exclusive|none */
static int set_export_containers(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	static const char *const names[] = {
		[CONFIG_EXPORT_EXCLUSIVE] = "exclusive",
		[CONFIG_EXPORT_ALL] = "all",
		[CONFIG_EXPORT_NONE] = "none",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(v, names[i]) == 0) {
			c->export_containers = (enum config_export_containers)i;
			return 0;
		}
	}
	snprintf(err, errlen, "expected all|exclusive|none, got '%s'", v);
	return -EINVAL;
}

/*
 * runqueue_wait_buckets_us: "all" (every edge between the BPF run-queue
 * slots: 2, 4, ... 2^26 µs) or comma-separated bounds in µs, each such an
 * edge (a power of two 2..2^26: the slots hold no finer figure), strictly
 * ascending, at most CONFIG_MAX_RQ_BUCKETS.
 */
static int set_rq_buckets(struct cpusetd_config *c, const char *v, char *err, size_t errlen)
{
	uint32_t b[CONFIG_MAX_RQ_BUCKETS];
	unsigned n = 0, x;
	char tok[16];

	if (strcmp(v, "all") == 0) {
		for (n = 0; n < CONFIG_MAX_RQ_BUCKETS; n++)
			c->rq_buckets_us[n] = 2u << n;
		c->n_rq_buckets = n;
		return 0;
	}
	for (const char *p = v;; p++) {
		size_t len = strcspn(p, ",");

		if (n == CONFIG_MAX_RQ_BUCKETS) {
			snprintf(err, errlen, "at most %d bounds", CONFIG_MAX_RQ_BUCKETS);
			return -EINVAL;
		}
		snprintf(tok, sizeof(tok), "%.*s", (int)len, p);
		if (len >= sizeof(tok) || parse_uint_range(tok, 2, 1u << CONFIG_MAX_RQ_BUCKETS, &x) < 0 ||
		    (x & (x - 1))) {
			snprintf(err, errlen, "expected 'all' or microseconds that are powers of two "
				 "2..%u (the BPF histogram's slot edges), comma-separated, got '%.*s'",
				 1u << CONFIG_MAX_RQ_BUCKETS, (int)len, p);
			return -EINVAL;
		}
		if (n && x <= b[n - 1]) {
			snprintf(err, errlen, "bounds must be ascending: %u after %u", x, b[n - 1]);
			return -EINVAL;
		}
		b[n++] = x;
		p += len;
		if (!*p)
			break;
	}
	memcpy(c->rq_buckets_us, b, n * sizeof(b[0]));
	c->n_rq_buckets = n;
	return 0;
}

/*
 * Applies one setting (id from config_long_opts; v NULL for a flag given on the
 * command line). Returns 0 or -EINVAL with the reason in err.
 */
int config_apply(struct loader *l, int id, const char *name, const char *v, char *err,
		 size_t errlen)
{
	struct cpusetd_config *c = &l->cfg;

	switch (id) {
	case OPT_POLICY:
		return config_policy_set(&c->policy, name, v, err, errlen);
	case OPT_KUBELET_STATE_FILE:
		if (!v[0]) {	/* "" = no takeover */
			c->kubelet_state_file[0] = '\0';
			return 0;
		}
		return set_path(c->kubelet_state_file, sizeof(c->kubelet_state_file), v, err,
				errlen);
	case OPT_TEXTFILE:
		if (!v[0]) {	/* "" = no export */
			c->textfile[0] = '\0';
			return 0;
		}
		return set_path(c->textfile, sizeof(c->textfile), v, err, errlen);
	case OPT_EXPORT_INTERVAL:
		if (parse_uint_range(v, 1, CONFIG_MAX_EXPORT_INTERVAL, &c->export_interval_s) == 0)
			return 0;
		snprintf(err, errlen, "expected seconds 1..%d, got '%s'", CONFIG_MAX_EXPORT_INTERVAL, v);
		return -EINVAL;
	case OPT_KUBEPODS_ROOT:
		return set_kubepods_root(c, v, err, errlen);
	case OPT_BUNDLE_PATH:
		return add_bundle_path(l, v, err, errlen);
	case OPT_STATE_DIR:
		return set_path(c->state_dir, sizeof(c->state_dir), v, err, errlen);
	case OPT_PIN_DIR:
		return set_path(c->pin_dir, sizeof(c->pin_dir), v, err, errlen);
	case OPT_KUBELET_PODS_DIR:
		return set_path(c->kubelet_pods_dir, sizeof(c->kubelet_pods_dir), v, err, errlen);
	case OPT_ON_ERROR:
		if (strcmp(v, "reject") == 0 || strcmp(v, "shared") == 0) {
			c->policy.on_error = v[0] == 'r' ? POLICY_ON_ERROR_REJECT : POLICY_ON_ERROR_SHARED;
			return 0;
		}
		snprintf(err, errlen, "expected reject|shared, got '%s'", v);
		return -EINVAL;
	case OPT_MIN_SHARED_CPUS:
		if (parse_uint_range(v, 1, MIN_SHARED_MAX, &c->policy.min_shared_cpus) == 0)
			return 0;
		snprintf(err, errlen, "expected an integer 1..%d, got '%s'", MIN_SHARED_MAX, v);
		return -EINVAL;
	case OPT_RESIZE_CHECK_MS:
		if (parse_uint_range(v, 0, 3600000, &c->resize_check_ms) == 0)
			return 0;
		snprintf(err, errlen, "expected milliseconds 0..3600000, got '%s'", v);
		return -EINVAL;
	case OPT_V2_WRITES:
		if (strcmp(v, "hierarchical") == 0 || strcmp(v, "per-container") == 0) {
			c->v2_per_container = v[0] == 'p';
			return 0;
		}
		snprintf(err, errlen, "expected hierarchical|per-container, got '%s'", v);
		return -EINVAL;
	case OPT_SCHED_POLICY:
		return set_sched_policy(c, v, err, errlen);
	case OPT_SCHED_PRIORITY:
		if (parse_uint_range(v, 1, 99, &c->sched_priority) == 0)
			return 0;
		snprintf(err, errlen, "expected a priority 1..99, got '%s'", v);
		return -EINVAL;
	case OPT_NICE:
		if (parse_int_range(v, -20, 19, &c->nice) == 0)
			return 0;
		snprintf(err, errlen, "expected a nice value -20..19, got '%s'", v);
		return -EINVAL;
	case OPT_EXPORT_CONTAINERS:
		return set_export_containers(c, v, err, errlen);
	case OPT_TELEMETRY:
		if (strcmp(v, "basic") == 0 || strcmp(v, "full") == 0) {
			c->telemetry_full = v[0] == 'f';
			return 0;
		}
		snprintf(err, errlen, "expected basic|full, got '%s'", v);
		return -EINVAL;
	case OPT_NRI:
		if (strcmp(v, "auto") == 0 || strcmp(v, "off") == 0) {
			c->nri = v[0] == 'a';
			return 0;
		}
		snprintf(err, errlen, "expected auto|off, got '%s'", v);
		return -EINVAL;
	case OPT_NRI_SOCKET:
		return set_path(c->nri_socket, sizeof(c->nri_socket), v, err, errlen);
	case OPT_NRI_PLUGIN_NAME:
		return set_nri_name(c, v, err, errlen);
	case OPT_NRI_PLUGIN_INDEX:
		return set_nri_index(c, v, err, errlen);
	case OPT_RUNQUEUE_WAIT_BUCKETS_US:
		return set_rq_buckets(c, v, err, errlen);
	case OPT_EXCLUSIVE_CPU_QUOTA:
		if (strcmp(v, "unset") == 0 || strcmp(v, "keep") == 0) {
			c->keep_exclusive_cpu_quota = v[0] == 'k';
			return 0;
		}
		snprintf(err, errlen, "expected unset|keep, got '%s'", v);
		return -EINVAL;
	case OPT_ISOLATE_HOST:
		if (!v) {	/* --isolate-host alone */
			c->isolate_host = true;
			return 0;
		}
		if (config_parse_bool(v, &c->isolate_host) == 0)
			return 0;
		snprintf(err, errlen, "expected true|false|yes|no|1|0, got '%s'", v);
		return -EINVAL;
	case OPT_ISOLATE_HOST_SKIP:
		return set_isolate_skip(c, v, err, errlen);
	case OPT_ISOLATE_HOST_RESCAN_MS:
		if (parse_uint_range(v, 0, 3600000, &c->isolate_host_rescan_ms) == 0)
			return 0;
		snprintf(err, errlen, "expected milliseconds 0..3600000, got '%s'", v);
		return -EINVAL;
	case OPT_RUN_ON_RESERVED_CPUS:
		if (config_parse_bool(v, &c->run_on_reserved_cpus) == 0)
			return 0;
		snprintf(err, errlen, "expected true|false|yes|no|1|0, got '%s'", v);
		return -EINVAL;
	case OPT_LOG_LEVEL:
		if (log_parse_level(v, &c->log_level) == 0)
			return 0;
		snprintf(err, errlen, "expected error|warning|notice|info|debug, got '%s'", v);
		return -EINVAL;
	case OPT_DRY_RUN:
		if (!v) {
			c->dry_run = true;
			return 0;
		}
		if (config_parse_bool(v, &c->dry_run) == 0)
			return 0;
		snprintf(err, errlen, "expected true|false|yes|no|1|0, got '%s'", v);
		return -EINVAL;
	}
	snprintf(err, errlen, "not a setting");
	return -EINVAL;
}
