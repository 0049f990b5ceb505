/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Daemon settings: defaults, then the INI file (--config, parsed with
 * inih), then the command line, each overriding the one before.
 * INI keys are the long option names with '-' or '_' (section [cpusetd]
 * or none): kubepods_root, bundle_path (repeatable), state_dir, pin_dir,
 * on_error, min_shared_cpus, log_level, dry_run, kubelet_pods_dir,
 * kubelet_state_file, resize_check_ms, v2_writes; and the allocation policy (config_policy.c):
 * cpu_bind_policy, cpu_exclusive_policy, numa_allocate_strategy,
 * numa_topology_alignment_policy, topology_manager_scope, kubelet_compat,
 * kubelet_cpu_manager_policy_options, besteffort_pool, integer_qos,
 * reserved_cpus, prefer_isolated_cpus; who may use the fixed-set pod
 * annotations (policy_namespaces.c): cores_ids_namespaces,
 * resource_status_namespaces. The Prometheus export (export_textfile.h):
 * textfile ("" = none), export_interval (seconds), export_containers
 * (all|exclusive|none), runqueue_wait_buckets_us (µs bounds, or all). The daemon's own
 * scheduling, applied at start (systemd/README.md "Scheduling"): sched_policy,
 * sched_priority, nice, run_on_reserved_cpus. The CFS quota of exclusive
 * containers: exclusive_cpu_quota (unset|keep). Host isolation (README
 * "Host isolation", user/host/host.h): isolate_host (bool; --isolate-host),
 * isolate_host_skip, isolate_host_rescan_ms. NRI (user/daemon/README.md "NRI"): nri
 * (auto|off), nri_socket, nri_plugin_name, nri_plugin_index.
 */
#ifndef CPUSETD_CONFIG_H
#define CPUSETD_CONFIG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "user/meta/kubelet_state.h"
#include "user/policy/policy.h"

#define CONFIG_MAX_BUNDLE_PATHS		8
/* isolate_host_skip patterns (user/host/host.h HOST_MAX_SKIP) */
#define CONFIG_MAX_ISOLATE_SKIP		16
#define CONFIG_DEFAULT_FILE		"/etc/cpusetd/cpusetd.conf"
/* Debian's prometheus-node-exporter reads *.prom from this directory
 * (its --collector.textfile.directory default, README.textfile). */
#define CONFIG_DEFAULT_TEXTFILE		"/var/lib/prometheus/node-exporter/cpusetd.prom"
#define CONFIG_MAX_EXPORT_INTERVAL	86400
/* runqueue_wait_buckets_us: at most one bound per edge between the BPF
 * run-queue slots (maps/cpusetd.h: 27 log2-µs slots, 26 edges) */
#define CONFIG_MAX_RQ_BUCKETS		26

/* export_containers: which containers get per-container .prom series
 * (tools/monitoring/README.md "Metrics"; the export's enum export_containers, user/export/snapshot.h) */
enum config_export_containers {
	CONFIG_EXPORT_EXCLUSIVE = 0,	/* exclusive ones and those with an admission error */
	CONFIG_EXPORT_ALL,
	CONFIG_EXPORT_NONE,
};
/* SCHED_FIFO/SCHED_RR priority when sched_priority is not given. */
#define CONFIG_DEFAULT_SCHED_PRIORITY	10
#define CPUSETD_VERSION			"0.1.0"
/* Room for config_parse's one error line. */
#define CONFIG_ERR_MAX			(PATH_MAX + 256)

/* The build's git revision (Makefile: git describe --always --dirty in a
 * git tree, else the REVISION file, else "unknown"); config_version.c. */
extern const char cpusetd_revision[];

struct cpusetd_config {
	char config_file[PATH_MAX];
	char kubepods_root[256];	/* "" = find it */
	char bundle_paths[CONFIG_MAX_BUNDLE_PATHS][PATH_MAX];
	unsigned n_bundle_paths;
	char state_dir[PATH_MAX];
	char pin_dir[PATH_MAX];
	char kubelet_pods_dir[PATH_MAX];
	char kubelet_state_file[PATH_MAX];	/* "" = no takeover */
	char textfile[PATH_MAX];	/* Prometheus textfile; "" = no export */
	unsigned export_interval_s;	/* textfile rewritten at least this often */
	struct policy_config policy;
	int log_level;			/* syslog level */
	unsigned resize_check_ms;	/* CPU limits re-read every ms; 0 = never */
	bool dry_run;
	bool v2_per_container;	/* v2_writes = per-container (cgfs_plan.h is the default) */
	int sched_policy;		/* SCHED_OTHER, SCHED_FIFO (default) or SCHED_RR */
	unsigned sched_priority;	/* 1..99 with fifo and rr; 0 with other */
	int nice;			/* -20..19; non-zero only with other */
	bool run_on_reserved_cpus;	/* the daemon's threads on policy.reserved_cpus, if any */
	/* exclusive_cpu_quota = unset (false, the default) | keep (true):
	 * whether exclusive containers and their pods keep their CFS quota
	 * (controller_quota.c; kubelet DisableCPUQuotaWithExclusiveCPUs) */
	bool keep_exclusive_cpu_quota;
	/* isolate_host: keep host cgroups, root-cgroup tasks, IRQs and unbound
	 * workqueues off exclusive CPUs (user/host/host.h) */
	bool isolate_host;
	unsigned isolate_host_rescan_ms;	/* root tasks and IRQs re-scanned every ms;
						 * 0 = only when the exclusive set changes */
	/* comma-separated fnmatch patterns of cgroup paths left alone
	 * with their subtrees ("" = none); at most HOST_MAX_SKIP */
	char isolate_host_skip[1024];
	/* the Prometheus export's cardinality (tools/monitoring/README.md "Metrics"): which
	 * containers get series, and the run-queue histogram's upper bounds
	 * in µs (ascending powers of two 2..2^26, the BPF slot edges) */
	enum config_export_containers export_containers;
	uint32_t rq_buckets_us[CONFIG_MAX_RQ_BUCKETS];
	unsigned n_rq_buckets;
	/* telemetry = basic (false, the default) | full: which BPF telemetry
	 * program is loaded (bpf/telemetry.bpf.c "Levels"; BENCHMARKS.md
	 * "BPF telemetry overhead" for what each costs). Read at start. */
	bool telemetry_full;
	/* NRI (user/daemon/README.md "NRI"): nri = auto (true, the default: the runtime's
	 * plugin whenever its socket is there, retried) | off (BPF only);
	 * the socket, and the name and two-digit index we register as */
	bool nri;
	char nri_socket[PATH_MAX];
	char nri_plugin_name[64];	/* NRI_NAME_MAX */
	char nri_plugin_index[3];
	/* --check-config: check, print, exit (daemon_config.c daemon_check_config); never an INI key */
	bool check_config;
	/* --release: give back what cpusetd changed, exit (release.c); never
	 * an INI key */
	bool release;
};

/*
 * Fills *ret from defaults, the config file and argv. The config file is
 * optional when it is the default and missing; a named one must exist.
 * Any bundle path in the file replaces the default list; any on the
 * command line replaces the file's. Paths must be absolute
 * (kubepods_root may also be "" = auto). INI lines are limited to what
 * inih reads whole (197 characters); longer ones are an error, never cut.
 * Prints the one specific error to stderr on bad input ("cpusetd: --opt:
 * ..." or "cpusetd: FILE:LINE: key: ..."); the help text goes to stdout.
 * *ret is untouched on error. Resets getopt (optind = 0), so it may be
 * called more than once. Refused as a whole (-EINVAL, one line): a
 * bundle path without "{id}", kubelet option pairs kubelet itself refuses
 * (full-pcpus-only or distribute-cpus-across-numa with
 * distribute-cpus-across-cores; align-by-socket with single-numa-node),
 * pin_dir equal to state_dir, sched_priority with sched_policy other,
 * and a non-zero nice with fifo or rr. sched_priority defaults to
 * CONFIG_DEFAULT_SCHED_PRIORITY with fifo and rr, 0 with other.
 * Returns 0; 1 when --help or --version was printed (exit 0);
 * -EINVAL for bad input; -ENOMEM; -errno reading the file.
 */
int config_load(int argc, char **argv, struct cpusetd_config *ret);

/*
 * config_load, except that the one error line goes to err[len] (without
 * the "cpusetd: " prefix and newline; "" when there is none) instead of
 * stderr: the SIGHUP reload logs it. --help and --version still print to
 * stdout (and return 1). Same returns as config_load.
 */
int config_parse(int argc, char **argv, struct cpusetd_config *ret, char *err, size_t len);

/*
 * The start-time check that needs the node: min_shared_cpus must be below
 * online (the number of CPUs online), or no CPU could ever be exclusive.
 * Prints one line to stderr when not. Returns 0 or -EINVAL.
 */
int config_check_cpus(const struct cpusetd_config *c, unsigned online);

/*
 * Every check a start makes against the node, before it changes anything:
 * min_shared_cpus below the CPUs in online (config_check_cpus), and
 * reserved_cpus all in online (controller_new refuses them otherwise).
 * online: the online CPUs (topology). Returns 0, or -EINVAL with the
 * reason in err[len] (one line, no newline).
 */
int config_check_node(const struct cpusetd_config *c, const struct cpumask *online, char *err,
		      size_t len);

/*
 * How a setting takes a new value at SIGHUP (systemd/README.md "Reload"): LIVE ones
 * are applied by the running daemon; RESTART ones only say that a restart
 * is needed, and keep their old value until then.
 */
enum config_reload {
	CONFIG_RELOAD_LIVE = 0,
	CONFIG_RELOAD_RESTART,
};

/* The number of settings (INI keys): indexes 0..n-1 of the calls below. */
unsigned config_n_keys(void);

/* Key i's INI name ("on_error") and how it reloads. i < config_n_keys(). */
const char *config_key_name(unsigned i);
enum config_reload config_key_reload(unsigned i);

/*
 * Key i's value in c as the INI file takes it ("reject", "0-3", "" for
 * none); bundle_path's several values are joined by '\n'. Cut at len
 * (len > 0). Returns the length it needs, like snprintf.
 */
size_t config_key_value(const struct cpusetd_config *c, unsigned i, char *buf, size_t len);

/*
 * Prints c as an INI file ("[cpusetd]", then "key = value" per setting,
 * one line per bundle_path) to f: what --check-config shows. Values
 * come from the admin's own file and command line; printed as they are.
 */
void config_print(const struct cpusetd_config *c, FILE *f);

/*
 * Copies the settings of from whose reload is CONFIG_RELOAD_LIVE into to;
 * the others (CONFIG_RELOAD_RESTART) and config_file/check_config/release stay
 * as to has them. Cannot fail.
 */
void config_merge_live(struct cpusetd_config *to, const struct cpusetd_config *from);

/* "true|yes|1" / "false|no|0" (any case). Returns 0 or -EINVAL.
 * (config_policy.c, which config.c calls: never the other way.) */
int config_parse_bool(const char *v, bool *ret);

/* Sets the allocation-policy option name (long option spelling,
 * "cpu-bind-policy") from v. Returns 0; -ENOENT for a name that is not a
 * policy option; -EINVAL with err[len] saying what was expected. */
int config_policy_set(struct policy_config *c, const char *name, const char *v,
		      char *err, size_t len);

/* The policy defaults other than min_shared_cpus/on_error (FullPCPUs,
 * None, MostAllocated, alignment None, integer pods LSE). Cannot fail. */
void config_policy_defaults(struct policy_config *c);

#endif
