// SPDX-License-Identifier: Apache-2.0
/*
 * Daemon settings: defaults, then the INI file, then the command line
 * (see config.h).
 *
 * One table (long_opts) names every setting; INI keys are the same names
 * with '_' or '-', so the file and the command line cannot drift apart.
 * Both go through apply(), which validates a value and says what is wrong
 * in one line; the caller prefixes where it came from ("--state-dir" or
 * "file:line: state_dir"). Everything is built in a private copy and
 * handed out only when all of it is valid.
 *
 * The INI text is fed to inih through our own line reader so that we know
 * the line number of every key (inih reports only the first error's line)
 * and can refuse over-long lines, which inih would otherwise split into a
 * truncated value plus a bogus next line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ini.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "user/base/files.h"
#include "user/base/log.h"
#include "user/nri/nri.h"	/* NRI_DEFAULT_*: one set of defaults */

#define VERSION			CPUSETD_VERSION
#define MIN_SHARED_MAX		(CPUSETD_MAX_CPUS - 1)
/* A config file is a few lines; anything bigger is a mistake. */
#define CONFIG_MAX_BYTES	(1u << 20)

static const char *const default_bundle_paths[] = {
	"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}/config.json",
	"/run/containers/storage/overlay-containers/{id}/userdata/config.json",
};

enum {
	OPT_HELP = 'h',
	OPT_CONFIG = 256,
	OPT_KUBEPODS_ROOT,
	OPT_BUNDLE_PATH,
	OPT_STATE_DIR,
	OPT_PIN_DIR,
	OPT_KUBELET_PODS_DIR,
	OPT_ON_ERROR,
	OPT_MIN_SHARED_CPUS,
	OPT_LOG_LEVEL,
	OPT_DRY_RUN,
	OPT_VERSION,
	OPT_KUBELET_STATE_FILE,
	OPT_TEXTFILE,
	OPT_EXPORT_INTERVAL,
	OPT_POLICY,		/* the allocation-policy settings: config_policy.c */
	OPT_RESIZE_CHECK_MS,
	OPT_V2_WRITES,
	OPT_SCHED_POLICY,
	OPT_SCHED_PRIORITY,
	OPT_NICE,
	OPT_RUN_ON_RESERVED_CPUS,
	OPT_ISOLATE_HOST,
	OPT_ISOLATE_HOST_SKIP,
	OPT_ISOLATE_HOST_RESCAN_MS,
	OPT_EXCLUSIVE_CPU_QUOTA,
	OPT_CHECK_CONFIG,
	OPT_RELEASE,
	OPT_EXPORT_CONTAINERS,
	OPT_RUNQUEUE_WAIT_BUCKETS_US,
	OPT_TELEMETRY,
	OPT_NRI,
	OPT_NRI_SOCKET,
	OPT_NRI_PLUGIN_NAME,
	OPT_NRI_PLUGIN_INDEX,
};

static const struct option long_opts[] = {
	{ "config",		required_argument, NULL, OPT_CONFIG },
	{ "kubepods-root",	required_argument, NULL, OPT_KUBEPODS_ROOT },
	{ "bundle-path",	required_argument, NULL, OPT_BUNDLE_PATH },
	{ "state-dir",		required_argument, NULL, OPT_STATE_DIR },
	{ "pin-dir",		required_argument, NULL, OPT_PIN_DIR },
	{ "kubelet-pods-dir",	required_argument, NULL, OPT_KUBELET_PODS_DIR },
	{ "on-error",		required_argument, NULL, OPT_ON_ERROR },
	{ "min-shared-cpus",	required_argument, NULL, OPT_MIN_SHARED_CPUS },
	{ "log-level",		required_argument, NULL, OPT_LOG_LEVEL },
	{ "dry-run",		no_argument,	   NULL, OPT_DRY_RUN },
	{ "kubelet-state-file",	required_argument, NULL, OPT_KUBELET_STATE_FILE },
	{ "textfile",		required_argument, NULL, OPT_TEXTFILE },
	{ "export-interval",	required_argument, NULL, OPT_EXPORT_INTERVAL },
	{ "cpu-bind-policy",	required_argument, NULL, OPT_POLICY },
	{ "cpu-exclusive-policy", required_argument, NULL, OPT_POLICY },
	{ "numa-allocate-strategy", required_argument, NULL, OPT_POLICY },
	{ "numa-topology-alignment-policy", required_argument, NULL, OPT_POLICY },
	{ "topology-manager-scope", required_argument, NULL, OPT_POLICY },
	{ "kubelet-compat",	required_argument, NULL, OPT_POLICY },
	{ "kubelet-cpu-manager-policy-options", required_argument, NULL, OPT_POLICY },
	{ "besteffort-pool",	required_argument, NULL, OPT_POLICY },
	{ "be-numa-aware",	required_argument, NULL, OPT_POLICY },
	{ "integer-qos",	required_argument, NULL, OPT_POLICY },
	{ "reserved-cpus",	required_argument, NULL, OPT_POLICY },
	{ "system-qos-cpus",	required_argument, NULL, OPT_POLICY },
	{ "prefer-isolated-cpus", required_argument, NULL, OPT_POLICY },
	{ "cores-ids-namespaces", required_argument, NULL, OPT_POLICY },
	{ "resource-status-namespaces", required_argument, NULL, OPT_POLICY },
	{ "resize-check-ms",	required_argument, NULL, OPT_RESIZE_CHECK_MS },
	{ "v2-writes",		required_argument, NULL, OPT_V2_WRITES },
	{ "sched-policy",	required_argument, NULL, OPT_SCHED_POLICY },
	{ "sched-priority",	required_argument, NULL, OPT_SCHED_PRIORITY },
	{ "nice",		required_argument, NULL, OPT_NICE },
	{ "run-on-reserved-cpus", required_argument, NULL, OPT_RUN_ON_RESERVED_CPUS },
	{ "isolate-host",	optional_argument, NULL, OPT_ISOLATE_HOST },
	{ "isolate-host-skip",	required_argument, NULL, OPT_ISOLATE_HOST_SKIP },
	{ "isolate-host-rescan-ms", required_argument, NULL, OPT_ISOLATE_HOST_RESCAN_MS },
	{ "exclusive-cpu-quota", required_argument, NULL, OPT_EXCLUSIVE_CPU_QUOTA },
	{ "export-containers",	required_argument, NULL, OPT_EXPORT_CONTAINERS },
	{ "runqueue-wait-buckets-us", required_argument, NULL, OPT_RUNQUEUE_WAIT_BUCKETS_US },
	{ "telemetry",		required_argument, NULL, OPT_TELEMETRY },
	{ "nri",		required_argument, NULL, OPT_NRI },
	{ "nri-socket",		required_argument, NULL, OPT_NRI_SOCKET },
	{ "nri-plugin-name",	required_argument, NULL, OPT_NRI_PLUGIN_NAME },
	{ "nri-plugin-index",	required_argument, NULL, OPT_NRI_PLUGIN_INDEX },
	{ "help",		no_argument,	   NULL, OPT_HELP },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ "check-config",	no_argument,	   NULL, OPT_CHECK_CONFIG },
	{ "release",		no_argument,	   NULL, OPT_RELEASE },
	{ NULL, 0, NULL, 0 },
};

/* Our line-by-line feed to inih (ini_parse_stream). */
struct ini_src {
	const char *buf;
	size_t len, pos;
	int lineno;		/* line last handed to inih */
	int long_line;		/* first line too long for inih, or 0 */
	int max_len;		/* longest line inih takes whole */
};

struct loader {
	struct cpusetd_config cfg;
	bool bundle_from_ini;	/* the INI file has replaced the defaults */
	bool bundle_from_cli;	/* the command line has replaced the list */
	bool in_ini;
	struct ini_src src;
	int err_line;		/* line of the first INI error, 0 = none */
	char err[PATH_MAX + 128];
	char *msg;		/* the one error line for the caller */
	size_t msg_len;
};

/* Keeps the first error line (no "cpusetd: ", no newline) for the
 * caller: config_load prints it, a reload logs it. */
static void __attribute__((format(printf, 2, 3))) say(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->msg_len || l->msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(l->msg, l->msg_len, fmt, ap);
	va_end(ap);
}

static void usage(void)
{
	printf("Usage: cpusetd [OPTION]...\n"
	       "Places Kubernetes containers on CPUs through the cgroup cpuset controller.\n"
	       "\n"
	       "  --config FILE            INI settings file (default %s)\n"
	       "  --kubepods-root CGPATH   cgroup of the kubepods hierarchy (default: found)\n"
	       "  --bundle-path TEMPLATE   config.json path of a container, \"{id}\" = its ID;\n"
	       "                           repeatable, tried in order, max %d (replaces defaults)\n"
	       "  --state-dir DIR          state files (default /run/cpusetd)\n"
	       "  --pin-dir DIR            pinned BPF maps (default /sys/fs/bpf/cpusetd)\n"
	       "  --kubelet-pods-dir DIR   kubelet pods directory (default /var/lib/kubelet/pods)\n"
	       "  --on-error reject|shared  what to do with a container that cannot be placed\n"
	       "                           (default reject)\n"
	       "  --min-shared-cpus N      CPUs always left to the shared pool, 1..%d (default 1)\n"
	       "  --resize-check-ms MS     how often CPU limits are re-read for in-place\n"
	       "                           resizes, 0 = never (default 1000)\n"
	       "  --v2-writes hierarchical|per-container  cgroup v2: write the shared pool\n"
	       "                           once per QoS slice or pod, containers inherit\n"
	       "                           (default), or into every container\n"
	       "  --log-level LEVEL        error|warning|notice|info|debug (default info)\n"
	       "  --dry-run                decide and report, write no cpuset\n"
	       "  --kubelet-state-file F   kubelet cpu_manager_state to take over (default\n"
	       "                           %s; \"\" = none)\n"
	       "  --textfile FILE          Prometheus textfile to write (default\n"
	       "                           " CONFIG_DEFAULT_TEXTFILE "; \"\" = none)\n"
	       "  --export-interval S      rewrite it at least every S seconds (default 15)\n"
	       "  --export-containers all|exclusive|none  containers with per-container\n"
	       "                           series (default exclusive; sandboxes never)\n"
	       "  --runqueue-wait-buckets-us LIST|all  run-queue histogram bounds in us,\n"
	       "                           powers of two 2..67108864 (default\n"
	       "                           4,16,64,256,1024,4096,16384,65536,262144,1048576)\n"
	       "  --telemetry basic|full   BPF telemetry level (default basic: per-CPU\n"
	       "                           figures; full adds run-queue waits and the\n"
	       "                           per-container figures; restart)\n"
	       "  --exclusive-cpu-quota unset|keep  lift the CFS quota of exclusive containers\n"
	       "                           and their pods (default unset), or keep it\n"
	       "NRI (see the README, NRI; every one needs a restart):\n"
	       "  --nri auto|off           be the runtime's NRI plugin when its socket is\n"
	       "                           there (retried), or only BPF (default auto)\n"
	       "  --nri-socket PATH        the runtime's NRI socket (default\n"
	       "                           " NRI_DEFAULT_SOCKET ")\n"
	       "  --nri-plugin-name NAME   registered as (default " NRI_DEFAULT_NAME ")\n"
	       "  --nri-plugin-index NN    two digits, the runtime's order among plugins\n"
	       "                           (default " NRI_DEFAULT_INDEX ")\n"
	       "Host isolation (see the README, Host isolation):\n"
	       "  --isolate-host[=BOOL]    keep host cgroups, root-cgroup tasks, IRQs and\n"
	       "                           unbound workqueues off exclusive CPUs (default false)\n"
	       "  --isolate-host-skip PATTERNS  cgroups left alone, comma-separated fnmatch\n"
	       "                           patterns of their paths (default none)\n"
	       "  --isolate-host-rescan-ms MS  re-scan root tasks and IRQs every MS,\n"
	       "                           0 = only on changes (default 1000)\n"
	       "The daemon's own scheduling (see the README, Scheduling):\n"
	       "  --sched-policy other|fifo|rr  (default fifo)\n"
	       "  --sched-priority 1..99   with fifo or rr (default %d)\n"
	       "  --nice -20..19           with other (default 0)\n"
	       "  --run-on-reserved-cpus BOOL  run on reserved_cpus when set (default true)\n"
	       "Allocation policy (see cpusetd.conf for what each does):\n"
	       "  --cpu-bind-policy FullPCPUs|SpreadByPCPUs|FullPCPUsOnly\n"
	       "  --cpu-exclusive-policy None|PCPULevel|NUMANodeLevel\n"
	       "  --numa-allocate-strategy MostAllocated|LeastAllocated|DistributeEvenly\n"
	       "  --numa-topology-alignment-policy None|BestEffort|Restricted|SingleNUMANode\n"
	       "  --topology-manager-scope container|pod\n"
	       "  --kubelet-compat BOOL    kubelet static CPU manager's choices\n"
	       "  --kubelet-cpu-manager-policy-options NAME=BOOL,...\n"
	       "  --besteffort-pool shared|be   --integer-qos LSE|LSR\n"
	       "  --be-numa-aware BOOL     BE pods on their resource-status NUMA nodes'\n"
	       "                           part of the BE pool (default true)\n"
	       "  --reserved-cpus CPULIST  --prefer-isolated-cpus BOOL\n"
	       "  --system-qos-cpus CPULIST  Koordinator SYSTEM pods' own CPUs, out of\n"
	       "                           the shared pool (default none: the shared pool)\n"
	       "Who may name CPUs by pod annotation (see the README, Security model):\n"
	       "  --cores-ids-namespaces PATTERNS  namespaces whose pods may use\n"
	       "                           weka.io/cores-ids: comma-separated fnmatch\n"
	       "                           patterns, \"\" = none (default *, every namespace)\n"
	       "  --resource-status-namespaces PATTERNS  the same for Koordinator's\n"
	       "                           resource-status cpuset (default *)\n"
	       "  -h, --help               this text\n"
	       "  --check-config           parse and check the settings as a start would,\n"
	       "                           print them and exit: 0 valid, 1 not; touches\n"
	       "                           nothing (no BPF, no cgroup write, no lock)\n"
	       "  --release                give back what cpusetd changed and exit, with the\n"
	       "                           daemon stopped: shared containers and the QoS\n"
	       "                           slices and pods above them get every CPU again,\n"
	       "                           lifted CFS quotas and host isolation come back,\n"
	       "                           the pinned maps go; exclusive containers keep\n"
	       "                           their CPUs until they end. Exit 0 done (or\n"
	       "                           nothing to do), 1 not all of it, 2 a cpusetd runs\n"
	       "  --version                print the version and git revision\n"
	       "\n"
	       "Examples:\n"
	       "  cpusetd --config /etc/cpusetd/cpusetd.conf\n"
	       "  cpusetd --dry-run --log-level debug\n"
	       "  cpusetd --release --config /etc/cpusetd/cpusetd.conf\n"
	       "  cpusetd --on-error shared --min-shared-cpus 2 \\\n"
	       "          --bundle-path /run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}/config.json\n",
	       CONFIG_DEFAULT_FILE, CONFIG_MAX_BUNDLE_PATHS, MIN_SHARED_MAX,
	       KUBELET_STATE_DEFAULT_PATH, CONFIG_DEFAULT_SCHED_PRIORITY);
}

static void set_defaults(struct cpusetd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->config_file, CONFIG_DEFAULT_FILE);
	for (unsigned i = 0; i < sizeof(default_bundle_paths) / sizeof(default_bundle_paths[0]); i++)
		strcpy(c->bundle_paths[c->n_bundle_paths++], default_bundle_paths[i]);
	strcpy(c->state_dir, "/run/cpusetd");
	strcpy(c->pin_dir, "/sys/fs/bpf/cpusetd");
	strcpy(c->kubelet_pods_dir, "/var/lib/kubelet/pods");
	c->policy.min_shared_cpus = 1;
	c->policy.on_error = POLICY_ON_ERROR_REJECT;
	config_policy_defaults(&c->policy);
	strcpy(c->kubelet_state_file, KUBELET_STATE_DEFAULT_PATH);
	strcpy(c->textfile, CONFIG_DEFAULT_TEXTFILE);
	c->export_interval_s = 15;
	c->log_level = LOG_INFO;
	c->dry_run = false;
	c->resize_check_ms = 1000;
	c->sched_policy = SCHED_FIFO;
	c->sched_priority = 0;	/* resolved by resolve_sched() */
	c->nice = 0;
	c->run_on_reserved_cpus = true;
	c->isolate_host = false;
	c->isolate_host_rescan_ms = 1000;
	c->export_containers = CONFIG_EXPORT_EXCLUSIVE;
	c->nri = true;
	strcpy(c->nri_socket, NRI_DEFAULT_SOCKET);
	strcpy(c->nri_plugin_name, NRI_DEFAULT_NAME);
	strcpy(c->nri_plugin_index, NRI_DEFAULT_INDEX);
	/* powers of 4 from 4 µs to ~1 s: 13 series per CPU instead of 29
	 * (tools/monitoring/README.md "Metrics"); "all" gives back every slot */
	c->n_rq_buckets = 0;
	for (uint32_t us = 4; us <= 1048576; us *= 4)
		c->rq_buckets_us[c->n_rq_buckets++] = us;
}

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
 * Applies one setting (id from long_opts; v NULL for a flag given on the
 * command line). Returns 0 or -EINVAL with the reason in err.
 */
static int apply(struct loader *l, int id, const char *name, const char *v, char *err,
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

/* The setting an INI key names ('_' and '-' alike), or NULL. */
static const struct option *ini_key_opt(const char *key)
{
	char name[64];
	size_t n = strlen(key);

	if (n >= sizeof(name))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	for (const struct option *o = long_opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o->val == OPT_CONFIG || o->val == OPT_HELP || o->val == OPT_VERSION ||
			       o->val == OPT_CHECK_CONFIG || o->val == OPT_RELEASE ? NULL : o;
	return NULL;
}

/* inih handler: returns nonzero to go on; the first error is kept. */
static int on_ini_key(void *user, const char *section, const char *key, const char *value)
{
	struct loader *l = user;
	char why[PATH_MAX + 64];
	const struct option *o;

	if (l->err_line)
		return 0;
	if (section[0] && strcmp(section, "cpusetd") != 0)
		snprintf(l->err, sizeof(l->err), "unknown section [%s]", section);
	else if (!(o = ini_key_opt(key)))
		snprintf(l->err, sizeof(l->err), "unknown key '%s'", key);
	else if (apply(l, o->val, o->name, value, why, sizeof(why)) < 0)
		snprintf(l->err, sizeof(l->err), "%s: %s", key, why);
	else
		return 1;
	l->err_line = l->src.lineno;
	return 0;
}

/* fgets-like reader for inih that counts lines and refuses long ones. */
static char *read_ini_line(char *str, int num, void *stream)
{
	struct ini_src *s = stream;
	const char *p, *nl;
	size_t n, text;

	if (s->pos >= s->len || s->long_line)
		return NULL;
	p = s->buf + s->pos;
	nl = memchr(p, '\n', s->len - s->pos);
	n = nl ? (size_t)(nl - p) + 1 : s->len - s->pos;
	text = n - (nl != NULL);
	if (text > 0 && p[text - 1] == '\r')
		text--;
	s->lineno++;
	/* inih needs room for "\r\n\0" after the text (ini.h, INI_MAX_LINE). */
	s->max_len = num - 3;
	if (num < 3 || text > (size_t)num - 3) {
		s->long_line = s->lineno;
		return NULL;
	}
	memcpy(str, p, n);
	str[n] = '\0';
	s->pos += n;
	return str;
}

/* files_read(), and a NUL inside is not text (inih would stop there). */
static int read_file(const char *path, char **ret, size_t *ret_len)
{
	int r = files_read(path, CONFIG_MAX_BYTES, ret, ret_len);

	if (r == 0 && memchr(*ret, '\0', *ret_len)) {
		free(*ret);
		return -EINVAL;
	}
	return r;
}

/* Loads the INI file. named: given with --config, so it must exist. */
static int load_ini(struct loader *l, bool named)
{
	const char *path = l->cfg.config_file;
	char *buf = NULL;
	int r, line;

	r = read_file(path, &buf, &l->src.len);
	if (r == -ENOENT && !named)
		return 0;
	if (r < 0) {
		say(l, "config file '%s': %s", path,
			r == -EINVAL ? "not a regular text file" : strerror(-r));
		return r;
	}
	l->src.buf = buf;
	l->in_ini = true;
	line = ini_parse_stream(read_ini_line, &l->src, on_ini_key, l);
	l->in_ini = false;
	free(buf);
	if (line < 0) {
		say(l, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (l->src.long_line && (line == 0 || line >= l->src.long_line)) {
		say(l, "%s:%d: line longer than %d characters",
			path, l->src.long_line, l->src.max_len);
		return -EINVAL;
	}
	if (line == 0)
		return 0;
	if (line == l->err_line)
		say(l, "%s:%d: %s", path, line, l->err);
	else
		say(l, "%s:%d: syntax error, expected 'key = value' or [cpusetd]",
			path, line);
	return -EINVAL;
}

/*
 * First pass over argv: --help, --version and --config, which decide what
 * happens before anything else. Other options (and their errors) are left
 * to the second pass. Returns 1 when help or version was printed,
 * 0 with *named, or -EINVAL.
 */
static int scan_early(int argc, char **argv, struct loader *l, bool *named)
{
	int c;

	optind = 0;	/* glibc: full re-initialisation, for repeated calls */
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage();
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("cpusetd %s (revision %s)\n", VERSION, cpusetd_revision);
			return 1;
		}
		if (c != OPT_CONFIG)
			continue;
		if (strlen(optarg) >= sizeof(l->cfg.config_file) || !optarg[0]) {
			say(l, "--config: expected a file name shorter than %d characters",
				PATH_MAX);
			return -EINVAL;
		}
		strcpy(l->cfg.config_file, optarg);
		*named = true;
	}
	return 0;
}

/*
 * The option as the user typed it, for error messages: the argument for a
 * long option (glibc leaves optopt 0 or the option's val there), else the
 * short option letter.
 */
static const char *bad_option(char **argv)
{
	static char shortopt[3];
	const char *arg = argv[optind - 1];

	if (strncmp(arg, "--", 2) == 0 || !optopt || optopt > 127)
		return arg;
	snprintf(shortopt, sizeof(shortopt), "-%c", optopt);
	return shortopt;
}

/* Second pass: every option, in order, over what the INI file gave. */
static int apply_argv(int argc, char **argv, struct loader *l)
{
	char why[PATH_MAX + 64];
	int c, idx;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, &idx)) != -1) {
		if (c == '?') {
			say(l, "unknown option '%s' (see --help)", bad_option(argv));
			return -EINVAL;
		}
		if (c == ':') {
			say(l, "option '%s' needs a value", bad_option(argv));
			return -EINVAL;
		}
		if (c == OPT_CONFIG || c == OPT_HELP || c == OPT_VERSION)
			continue;
		if (c == OPT_CHECK_CONFIG) {	/* a mode, not a setting */
			l->cfg.check_config = true;
			continue;
		}
		if (c == OPT_RELEASE) {		/* a mode too */
			l->cfg.release = true;
			continue;
		}
		if (apply(l, c, long_opts[idx].name, optarg, why, sizeof(why)) < 0) {
			say(l, "--%s: %s", long_opts[idx].name, why);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		say(l, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/*
 * What each option is fine alone but wrong with the others: one line,
 * -EINVAL. min_shared_cpus against the CPUs online needs the topology:
 * config_check_cpus().
 */
static int validate(struct loader *l)
{
	const struct cpusetd_config *c = &l->cfg;
	const struct policy_kubelet_options *k = &c->policy.alloc.kubelet;

	for (unsigned i = 0; i < c->n_bundle_paths; i++) {
		/* Without {id} every container would read one file: one pod's
		 * annotations (or /etc/passwd) for all of them. */
		if (!strstr(c->bundle_paths[i], "{id}")) {
			say(l, "bundle_path '%s' has no {id}: every container "
				"would read the same file", c->bundle_paths[i]);
			return -EINVAL;
		}
	}
	/* kubelet refuses these pairs (pkg/kubelet/cm/cpumanager/policy_options.go). */
	if (k->full_pcpus_only && k->distribute_across_cores) {
		say(l, "kubelet_cpu_manager_policy_options: full-pcpus-only and "
			"distribute-cpus-across-cores cannot be used together");
		return -EINVAL;
	}
	if (k->distribute_across_numa && k->distribute_across_cores) {
		say(l, "kubelet_cpu_manager_policy_options: "
			"distribute-cpus-across-numa and distribute-cpus-across-cores cannot be "
			"used together");
		return -EINVAL;
	}
	if (k->align_by_socket && c->policy.alloc.align == NUMA_POLICY_SINGLE_NUMA_NODE) {
		say(l, "align-by-socket cannot be used with "
			"numa_topology_alignment_policy single-numa-node");
		return -EINVAL;
	}
	if (c->check_config && c->release) {
		say(l, "--check-config and --release: one at a time");
		return -EINVAL;
	}
	/* One directory, two owners: a stray status.json could land in bpffs
	 * or the pins in a plain directory. */
	if (c->pin_dir[0] && strcmp(c->pin_dir, c->state_dir) == 0) {
		say(l, "pin_dir and state_dir are both '%s'", c->pin_dir);
		return -EINVAL;
	}
	return 0;
}

/*
 * A priority belongs to fifo and rr, a nice value to other: a setting the
 * chosen policy would ignore is a mistake, said in one line (-EINVAL).
 * Otherwise fifo and rr get the default priority when none was given.
 */
static int resolve_sched(struct loader *l)
{
	struct cpusetd_config *c = &l->cfg;
	bool rt = c->sched_policy != SCHED_OTHER;

	if (!rt && c->sched_priority) {
		say(l, "sched_priority %u needs sched_policy fifo or rr "
			"(other has no priority; use nice)", c->sched_priority);
		return -EINVAL;
	}
	if (rt && c->nice) {
		say(l, "nice %d needs sched_policy other (fifo and rr "
			"ignore it; use sched_priority)", c->nice);
		return -EINVAL;
	}
	if (rt && !c->sched_priority)
		c->sched_priority = CONFIG_DEFAULT_SCHED_PRIORITY;
	return 0;
}

/* min_shared_cpus against the CPUs online, into err[len]. */
static int check_min_shared(const struct cpusetd_config *c, unsigned online, char *err, size_t len)
{
	unsigned sys = cpumask_weight(&c->policy.system_qos_cpus);

	if (sys && c->policy.min_shared_cpus + sys >= online) {
		snprintf(err, len, "system_qos_cpus takes %u of the %u CPUs online: fewer than "
			 "min_shared_cpus %u + 1 left for the shared pool and exclusive CPUs",
			 sys, online, c->policy.min_shared_cpus);
		return -EINVAL;
	}
	if (c->policy.min_shared_cpus < online)
		return 0;
	snprintf(err, len, "min_shared_cpus %u is not below the %u CPU%s online: "
		 "no CPU could ever be exclusive", c->policy.min_shared_cpus, online,
		 online == 1 ? "" : "s");
	return -EINVAL;
}

int config_check_cpus(const struct cpusetd_config *c, unsigned online)
{
	char err[160];
	int r = check_min_shared(c, online, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "cpusetd: %s\n", err);
	return r;
}

int config_check_node(const struct cpusetd_config *c, const struct cpumask *online, char *err,
		      size_t len)
{
	char list[CPULIST_MAX];

	if (check_min_shared(c, cpumask_weight(online), err, len) < 0)
		return -EINVAL;
	/* controller_new refuses these too: a start would fail. */
	if (!cpumask_subset(&c->policy.system_qos_cpus, online)) {
		cpulist_format(&c->policy.system_qos_cpus, list, sizeof(list));
		snprintf(err, len, "system_qos_cpus %s: not all of them are online", list);
		return -EINVAL;
	}
	if (cpumask_intersects(&c->policy.system_qos_cpus, &c->policy.reserved_cpus)) {
		snprintf(err, len, "system_qos_cpus and reserved_cpus overlap: reserved_cpus stay "
			 "in the shared pool, system_qos_cpus leave it");
		return -EINVAL;
	}
	if (!cpumask_subset(&c->policy.reserved_cpus, online)) {
		cpulist_format(&c->policy.reserved_cpus, list, sizeof(list));
		snprintf(err, len, "reserved_cpus %s: not all of them are online", list);
		return -EINVAL;
	}
	return 0;
}

int config_parse(int argc, char **argv, struct cpusetd_config *ret, char *err, size_t len)
{
	int saved_opterr = opterr, r;
	bool named = false;
	struct loader *l;

	if (len)
		err[0] = '\0';
	/* Large (a dozen PATH_MAX buffers): keep it off the stack. */
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	l->msg = err;
	l->msg_len = len;
	set_defaults(&l->cfg);
	opterr = 0;	/* we print our own one-line errors */
	r = scan_early(argc, argv, l, &named);
	if (r == 0)
		r = load_ini(l, named);
	if (r == 0)
		r = apply_argv(argc, argv, l);
	if (r == 0)
		r = validate(l);
	if (r == 0)
		r = resolve_sched(l);
	opterr = saved_opterr;
	optind = 0;
	if (r == 0)
		*ret = l->cfg;
	free(l);
	return r;
}

int config_load(int argc, char **argv, struct cpusetd_config *ret)
{
	char err[CONFIG_ERR_MAX];
	int r = config_parse(argc, argv, ret, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "cpusetd: %s\n", err[0] ? err : strerror(-r));
	return r;
}
