// SPDX-License-Identifier: Apache-2.0
/*
 * The settings as values: each key's effective value formatted as the INI
 * file takes it (--check-config prints them; a SIGHUP reload compares the
 * old and new value of each key), and which keys a running daemon can
 * take without a restart.
 *
 * One table, one row per INI key, in the order of --help. A row names
 * the field(s) it covers, so that config_merge_live copies exactly what
 * the key set, and a formatter. Why a key is LIVE or RESTART is said in
 * systemd/README.md "Reload"; user/daemon/daemon_config.c applies the LIVE ones.
 */
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include "config.h"

typedef void (*fmt_fn)(const struct cpusetd_config *c, char *buf, size_t len);

struct key {
	const char *name;
	enum config_reload reload;
	size_t off, size;	/* the field it sets */
	size_t off2, size2;	/* a second one (bundle_path's count), size2 0 = none */
	fmt_fn fmt;
};

#define FIELD(f)	offsetof(struct cpusetd_config, f), sizeof(((struct cpusetd_config *)0)->f)
#define LIVE		CONFIG_RELOAD_LIVE
#define RESTART		CONFIG_RELOAD_RESTART

static const char *yes_no(bool b)
{
	return b ? "true" : "false";
}

static void f_root(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->kubepods_root); }
static void f_state(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->state_dir); }
static void f_pin(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->pin_dir); }
static void f_pods(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->kubelet_pods_dir); }
static void f_kstate(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->kubelet_state_file); }
static void f_textfile(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->textfile); }
static void f_skip(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->isolate_host_skip); }
static void f_cores_ns(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->policy.cores_ids_namespaces); }
static void f_status_ns(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->policy.resource_status_namespaces); }

static void f_bundles(const struct cpusetd_config *c, char *b, size_t n)
{
	size_t at = 0;

	b[0] = '\0';
	for (unsigned i = 0; i < c->n_bundle_paths && at < n; i++)
		at += (size_t)snprintf(b + at, n - at, "%s%s", i ? "\n" : "", c->bundle_paths[i]);
}

static void f_on_error(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->policy.on_error == POLICY_ON_ERROR_SHARED ? "shared" : "reject");
}

static void f_min_shared(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%u", c->policy.min_shared_cpus); }
static void f_resize(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%u", c->resize_check_ms); }
static void f_interval(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%u", c->export_interval_s); }
static void f_rescan(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%u", c->isolate_host_rescan_ms); }
static void f_nri(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->nri ? "auto" : "off"); }
static void f_nri_socket(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->nri_socket); }
static void f_nri_name(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->nri_plugin_name); }
static void f_nri_index(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->nri_plugin_index); }
/* "" with sched_policy other: no priority, and the key must then be
 * absent (config_print comments it out). */
static void f_prio(const struct cpusetd_config *c, char *b, size_t n)
{
	if (c->sched_priority)
		snprintf(b, n, "%u", c->sched_priority);
	else
		b[0] = '\0';
}
static void f_nice(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%d", c->nice); }
static void f_dry(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->dry_run)); }
static void f_iso(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->isolate_host)); }
static void f_on_rsv(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->run_on_reserved_cpus)); }

static void f_v2(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->v2_per_container ? "per-container" : "hierarchical");
}

static void f_quota(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->keep_exclusive_cpu_quota ? "keep" : "unset");
}

static void f_level(const struct cpusetd_config *c, char *b, size_t n)
{
	static const char *const names[] = {
		[LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	int l = c->log_level;

	snprintf(b, n, "%s", l >= LOG_ERR && l <= LOG_DEBUG && names[l] ? names[l] : "info");
}

static void f_sched(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->sched_policy == SCHED_FIFO ? "fifo" :
		 c->sched_policy == SCHED_RR ? "rr" : "other");
}

static void f_bind(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", koord_bind_policy_name(c->policy.alloc.bind)); }
static void f_excl(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", koord_excl_policy_name(c->policy.alloc.exclusive)); }
static void f_numa(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", koord_numa_strategy_name(c->policy.alloc.numa)); }
static void f_align(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", numa_policy_name(c->policy.alloc.align)); }
static void f_scope(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->policy.alloc.pod_scope ? "pod" : "container"); }
static void f_compat(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->policy.alloc.kubelet_compat)); }
static void f_be(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", c->policy.besteffort_be_pool ? "be" : "shared"); }
static void f_be_numa(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->policy.be_numa_aware)); }
static void f_qos(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", policy_qos_name(c->policy.integer_qos)); }
static void f_isol(const struct cpusetd_config *c, char *b, size_t n) { snprintf(b, n, "%s", yes_no(c->policy.prefer_isolated)); }

static void f_export_cts(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->export_containers == CONFIG_EXPORT_ALL ? "all" :
		 c->export_containers == CONFIG_EXPORT_NONE ? "none" : "exclusive");
}

static void f_telemetry(const struct cpusetd_config *c, char *b, size_t n)
{
	snprintf(b, n, "%s", c->telemetry_full ? "full" : "basic");
}

/* runqueue_wait_buckets_us: the bounds, comma-separated (never "all"). */
static void f_rq_buckets(const struct cpusetd_config *c, char *b, size_t n)
{
	size_t at = 0;

	b[0] = '\0';
	for (unsigned i = 0; i < c->n_rq_buckets && at < n; i++)
		at += (size_t)snprintf(b + at, n - at, "%s%u", i ? "," : "", c->rq_buckets_us[i]);
}

static void f_reserved(const struct cpusetd_config *c, char *b, size_t n)
{
	char list[CPULIST_MAX];

	cpulist_format(&c->policy.reserved_cpus, list, sizeof(list));
	snprintf(b, n, "%s", list);
}

static void f_system_qos(const struct cpusetd_config *c, char *b, size_t n)
{
	char list[CPULIST_MAX];

	cpulist_format(&c->policy.system_qos_cpus, list, sizeof(list));
	snprintf(b, n, "%s", list);
}

/* kubelet's spelling (policy_alloc.c parses the same names); only the
 * options that are on, "" when none is. */
static void f_kubelet_opts(const struct cpusetd_config *c, char *b, size_t n)
{
	const struct policy_kubelet_options *k = &c->policy.alloc.kubelet;
	const struct { const char *name; bool on; } o[] = {
		{ "full-pcpus-only", k->full_pcpus_only },
		{ "distribute-cpus-across-numa", k->distribute_across_numa },
		{ "distribute-cpus-across-cores", k->distribute_across_cores },
		{ "align-by-socket", k->align_by_socket },
		{ "prefer-align-cpus-by-uncorecache", k->prefer_align_by_uncore },
	};
	size_t at = 0;

	b[0] = '\0';
	for (size_t i = 0; i < sizeof(o) / sizeof(o[0]) && at < n; i++)
		if (o[i].on)
			at += (size_t)snprintf(b + at, n - at, "%s%s=true", at ? "," : "", o[i].name);
}

/*
 * LIVE: daemon_config.c applies it at once (log level, timers, the exporter, the
 * daemon's scheduling, host isolation, on_error and the annotation
 * namespaces in the policy) or the
 * controller reads it where it uses it (bundle paths, kubelet pods dir,
 * kubelet state file at the resync that follows the reload).
 * RESTART: what the daemon was built on (state and pin dirs, which hold
 * its locks; the kubepods root and the cgroup driver it implies; the
 * allocation policy, which placements in force were decided by; dry_run
 * and the CFS quota mode, whose start-time recovery a live switch would
 * skip; NRI's mode, socket, name and index, which the one connection
 * is made with).
 */
static const struct key keys[] = {
	{ "kubepods_root", RESTART, FIELD(kubepods_root), 0, 0, f_root },
	{ "bundle_path", LIVE, FIELD(bundle_paths), FIELD(n_bundle_paths), f_bundles },
	{ "state_dir", RESTART, FIELD(state_dir), 0, 0, f_state },
	{ "pin_dir", RESTART, FIELD(pin_dir), 0, 0, f_pin },
	{ "kubelet_pods_dir", LIVE, FIELD(kubelet_pods_dir), 0, 0, f_pods },
	{ "on_error", LIVE, FIELD(policy.on_error), 0, 0, f_on_error },
	{ "min_shared_cpus", RESTART, FIELD(policy.min_shared_cpus), 0, 0, f_min_shared },
	{ "resize_check_ms", LIVE, FIELD(resize_check_ms), 0, 0, f_resize },
	{ "v2_writes", RESTART, FIELD(v2_per_container), 0, 0, f_v2 },
	{ "log_level", LIVE, FIELD(log_level), 0, 0, f_level },
	{ "dry_run", RESTART, FIELD(dry_run), 0, 0, f_dry },
	{ "kubelet_state_file", LIVE, FIELD(kubelet_state_file), 0, 0, f_kstate },
	{ "textfile", LIVE, FIELD(textfile), 0, 0, f_textfile },
	{ "export_interval", LIVE, FIELD(export_interval_s), 0, 0, f_interval },
	/* read from the config at every export (controller_snapshot.c) */
	{ "export_containers", LIVE, FIELD(export_containers), 0, 0, f_export_cts },
	{ "runqueue_wait_buckets_us", LIVE, FIELD(rq_buckets_us), FIELD(n_rq_buckets),
	  f_rq_buckets },
	/* the programs are loaded once, at start (daemon_start.c open_telemetry) */
	{ "telemetry", RESTART, FIELD(telemetry_full), 0, 0, f_telemetry },
	{ "exclusive_cpu_quota", RESTART, FIELD(keep_exclusive_cpu_quota), 0, 0, f_quota },
	{ "isolate_host", LIVE, FIELD(isolate_host), 0, 0, f_iso },
	{ "isolate_host_skip", LIVE, FIELD(isolate_host_skip), 0, 0, f_skip },
	{ "isolate_host_rescan_ms", LIVE, FIELD(isolate_host_rescan_ms), 0, 0, f_rescan },
	{ "sched_policy", LIVE, FIELD(sched_policy), 0, 0, f_sched },
	{ "sched_priority", LIVE, FIELD(sched_priority), 0, 0, f_prio },
	{ "nice", LIVE, FIELD(nice), 0, 0, f_nice },
	{ "run_on_reserved_cpus", LIVE, FIELD(run_on_reserved_cpus), 0, 0, f_on_rsv },
	{ "cpu_bind_policy", RESTART, FIELD(policy.alloc.bind), 0, 0, f_bind },
	{ "cpu_exclusive_policy", RESTART, FIELD(policy.alloc.exclusive), 0, 0, f_excl },
	{ "numa_allocate_strategy", RESTART, FIELD(policy.alloc.numa), 0, 0, f_numa },
	{ "numa_topology_alignment_policy", RESTART, FIELD(policy.alloc.align), 0, 0, f_align },
	{ "topology_manager_scope", RESTART, FIELD(policy.alloc.pod_scope), 0, 0, f_scope },
	{ "kubelet_compat", RESTART, FIELD(policy.alloc.kubelet_compat), 0, 0, f_compat },
	{ "kubelet_cpu_manager_policy_options", RESTART, FIELD(policy.alloc.kubelet), 0, 0,
	  f_kubelet_opts },
	{ "besteffort_pool", RESTART, FIELD(policy.besteffort_be_pool), 0, 0, f_be },
	{ "be_numa_aware", RESTART, FIELD(policy.be_numa_aware), 0, 0, f_be_numa },
	{ "integer_qos", RESTART, FIELD(policy.integer_qos), 0, 0, f_qos },
	{ "reserved_cpus", RESTART, FIELD(policy.reserved_cpus), 0, 0, f_reserved },
	{ "system_qos_cpus", RESTART, FIELD(policy.system_qos_cpus), 0, 0, f_system_qos },
	{ "prefer_isolated_cpus", RESTART, FIELD(policy.prefer_isolated), 0, 0, f_isol },
	/* who may use the fixed-set annotations: a permission, not how CPUs
	 * are chosen; the resync after the reload admits everyone again */
	{ "cores_ids_namespaces", LIVE, FIELD(policy.cores_ids_namespaces), 0, 0, f_cores_ns },
	{ "resource_status_namespaces", LIVE, FIELD(policy.resource_status_namespaces), 0, 0,
	  f_status_ns },
	/* NRI: the connection is made once, at start, as whom it says */
	{ "nri", RESTART, FIELD(nri), 0, 0, f_nri },
	{ "nri_socket", RESTART, FIELD(nri_socket), 0, 0, f_nri_socket },
	{ "nri_plugin_name", RESTART, FIELD(nri_plugin_name), 0, 0, f_nri_name },
	{ "nri_plugin_index", RESTART, FIELD(nri_plugin_index), 0, 0, f_nri_index },
};

#define N_KEYS	(sizeof(keys) / sizeof(keys[0]))

unsigned config_n_keys(void)
{
	return N_KEYS;
}

const char *config_key_name(unsigned i)
{
	return i < N_KEYS ? keys[i].name : NULL;
}

enum config_reload config_key_reload(unsigned i)
{
	return i < N_KEYS ? keys[i].reload : CONFIG_RELOAD_RESTART;
}

size_t config_key_value(const struct cpusetd_config *c, unsigned i, char *buf, size_t len)
{
	/* The longest value: every bundle path, joined. */
	static char tmp[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX];
	size_t n;

	buf[0] = '\0';
	if (i >= N_KEYS)
		return 0;
	keys[i].fmt(c, tmp, sizeof(tmp));
	n = strlen(tmp);
	snprintf(buf, len, "%s", tmp);
	return n;
}

void config_print(const struct cpusetd_config *c, FILE *f)
{
	static char v[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX];

	fprintf(f, "[cpusetd]\n");
	for (unsigned i = 0; i < N_KEYS; i++) {
		char *line, *save = NULL;

		config_key_value(c, i, v, sizeof(v));
		if (!v[0] && keys[i].off == offsetof(struct cpusetd_config, sched_priority)) {
			fprintf(f, "#%s =  (none with sched_policy other)\n", keys[i].name);
			continue;
		}
		if (!v[0]) {
			fprintf(f, "%s =\n", keys[i].name);
			continue;
		}
		for (line = strtok_r(v, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			fprintf(f, "%s = %s\n", keys[i].name, line);
	}
}

void config_merge_live(struct cpusetd_config *to, const struct cpusetd_config *from)
{
	for (unsigned i = 0; i < N_KEYS; i++) {
		if (keys[i].reload != CONFIG_RELOAD_LIVE)
			continue;
		memcpy((char *)to + keys[i].off, (const char *)from + keys[i].off, keys[i].size);
		if (keys[i].size2)
			memcpy((char *)to + keys[i].off2, (const char *)from + keys[i].off2,
			       keys[i].size2);
	}
}
