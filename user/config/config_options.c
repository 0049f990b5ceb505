// SPDX-License-Identifier: Apache-2.0
/*
 * The settings' names: one table (config_long_opts) for the command line
 * and, with '_' or '-', the INI keys, and the --help text that lists them.
 */
#include <getopt.h>
#include <stdio.h>
#include "config.h"
#include "config_internal.h"
#include "user/nri/nri.h"	/* NRI_DEFAULT_*, named in --help */

const struct option config_long_opts[] = {
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

void config_usage(void)
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
