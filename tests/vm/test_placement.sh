#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Placement on pure cgroup v2, 2 sockets x 4 cores x 2 threads, 4 NUMA
# nodes, with the real daemon and real runc containers, under both the
# cgroupfs-driver (kubepods/...) and the systemd-driver (kubepods.slice/...)
# trees:
#   - integer containers get whole physical cores inside one NUMA node,
#     cpuset.mems exactly that node; SpreadByPCPUs one thread per core;
#   - an annotated pod across two NUMA nodes gets the mems of both;
#     overlapping annotated pods are reference counted;
#   - SingleNUMANode refuses what no single node can hold
#     (topology_affinity) and places what one node can;
#   - the BE pool: off LSE CPUs, on LSR CPUs.
# Checked through the kernel: /proc/PID/status of the container's init and
# the v2 cgroup files (cpuset.cpus.effective where inheritance matters).
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start placement kubepods
ONLINE=$(cat "$SYS_CPU/online")

qos() { printf '{"koordinator.sh/qosClass":"%s"}' "$1"; }
SPREAD='{"scheduling.koordinator.sh/resource-spec":"{\"preferredCPUBindPolicy\":\"SpreadByPCPUs\"}"}'

# integer_ok POD N: N CPUs of whole cores in one NUMA node; mems = that node.
integer_ok() {
	local a
	a=$(allowed "$1" app)
	[ "$(ncpus "$a")" = "$2" ] && whole_cores "$a" &&
		[ "$(ncpus "$(nodes_of "$a")")" = 1 ] && mems_are "$1" app "$(nodes_of "$a")" ||
		{ it_log "$1: cpus '$a' mems '$(cg_file "$1" app cpuset.mems)'"; return 1; }
}

# spread_ok POD N: N CPUs, no two on one core, one NUMA node; mems = it.
spread_ok() {
	local a
	a=$(allowed "$1" app)
	[ "$(ncpus "$a")" = "$2" ] && one_per_core "$a" &&
		[ "$(ncpus "$(nodes_of "$a")")" = 1 ] && mems_are "$1" app "$(nodes_of "$a")" ||
		{ it_log "$1: cpus '$a' mems '$(cg_file "$1" app cpuset.mems)'"; return 1; }
}

# app_start POD QOS MILLI [ANNOTATION]: only the app container. Most
# checks here need no sandbox, and each container costs seconds under TCG.
app_start() { container_start "$1" app "$2" container "${3:-0}" "${4:-}"; }
app_stop() { container_stop "$1" app; }

not_running() { ! running "$1" app; }

# pool_off POD CPULIST: the container's init may run on none of CPULIST.
pool_off() { disjoint "$(allowed "$1" app)" "$2"; }

# effective_is POD NAME CPULIST: what v2 makes of the cgroup's own set and
# its ancestors' (an empty intersection would fall back to the parent's).
effective_is() { [ "$(cg_file "$1" "$2" cpuset.cpus.effective)" = "$3" ]; }

# placement TAG PARTS...: the parts of the scenario on the current $ROOT;
# a part is NAME (part_NAME) or NAME:ARG (part_NAME ARG).
placement() {
	local T=$1 P=$1- part
	shift
	check "$T: daemon starts" daemon_start "$ROOT"
	# The BestEffort app with the shared pod's sandbox: order does not
	# matter, and each start costs seconds under TCG.
	starts "${P}s1 POD burstable sandbox 0" "${P}b1 app besteffort container 0"
	container_start "${P}s1" app burstable container 500
	for part in "$@"; do	# NAME or NAME:ARG
		if [ "$part" = "${part%%:*}" ]; then "part_$part"; else "part_${part%%:*}" "${part#*:}"; fi
	done
	pod_stop "${P}s1"
	app_stop "${P}b1"
	check "$T: no cgroup write errors" test "$(write_errors)" = 0
	daemon_stop
}

part_annotated() {
	check "$T: shared containers on every CPU" wait_for 10 allowed_is "${P}s1" app "$ONLINE"

	# --- annotated pods: across two nodes, overlapping ---
	app_start "${P}a1" burstable 0 3-4
	check "$T: annotated pod across nodes 0 and 1 gets exactly 3-4" wait_for 10 allowed_is "${P}a1" app 3-4
	check "$T: ... its effective set is 3-4" effective_is "${P}a1" app 3-4
	check "$T: ... cpuset.mems and Mems_allowed are both nodes (0-1)" mems_are "${P}a1" app 0-1
	app_start "${P}a2" burstable 0 4-5
	check "$T: overlapping annotated pod gets 4-5" wait_for 10 allowed_is "${P}a2" app 4-5
	check "$T: ... its mems are node 1" mems_are "${P}a2" app 1
	check "$T: shared pool leaves both" wait_for 10 allowed_is "${P}s1" app 0-2,6-15
	check "$T: ... so do BestEffort containers" wait_for 10 allowed_is "${P}b1" app 0-2,6-15
	app_stop "${P}a1"
	check "$T: refcount: CPU 4 stays reserved for the other pod, CPU 3 comes back" \
		wait_for 10 allowed_is "${P}s1" app 0-3,6-15
	check "$T: ... the survivor keeps 4-5" allowed_is "${P}a2" app 4-5
	app_stop "${P}a2"
	check "$T: last annotated pod gone: pool whole" wait_for 10 allowed_is "${P}s1" app "$ONLINE"
}

part_spread() {
	local sp

	# --- SpreadByPCPUs: one thread per core ---
	IT_ANNOTATIONS=$SPREAD app_start "${P}sp" guaranteed 2000
	check "$T: SpreadByPCPUs: 2 CPUs placed" wait_for 10 allowed_n "${P}sp" app 2
	check "$T: SpreadByPCPUs: one thread per core, one node, mems = node" spread_ok "${P}sp" 2
	sp=$(allowed "${P}sp" app)
	check "$T: shared pool leaves the spread CPUs" wait_for 10 pool_off "${P}s1" "$sp"
	app_stop "${P}sp"
	check "$T: spread pod gone: pool whole" wait_for 10 allowed_is "${P}s1" app "$ONLINE"
}

# part_integer [be]: integer pods; with "be", the BE pool too.
part_integer() {
	local g1 g2

	# --- integer pods: whole cores in one node ---
	starts "${P}g1 POD guaranteed sandbox 0" "${P}g2 app guaranteed container 4000"
	container_start "${P}g1" app guaranteed container 2000
	check "$T: integer 2 CPUs placed" wait_for 10 allowed_n "${P}g1" app 2
	check "$T: integer 2 CPUs: one whole core, one node, mems = node" integer_ok "${P}g1" 2
	check "$T: integer 4 CPUs placed" wait_for 10 allowed_n "${P}g2" app 4
	check "$T: integer 4 CPUs: two whole cores, one node, mems = node" integer_ok "${P}g2" 4
	g1=$(allowed "${P}g1" app); g2=$(allowed "${P}g2" app)
	check "$T: integer containers do not share CPUs" disjoint "$g1" "$g2"
	check "$T: shared pool = online - integer" \
		wait_for 10 allowed_n "${P}s1" app $((16 - 6))
	check "$T: ... disjoint from them" disjoint "$(allowed "${P}s1" app)" "$(union "$g1" "$g2")"
	check "$T: sandbox of an integer pod is shared" wait_for 10 allowed_n "${P}g1" POD 10
	[ "$1" = be ] && part_be "$g1" "$g2"
	app_stop "${P}g2"
	pod_stop "${P}g1"
	check "$T: all exclusive pods gone: pool whole" wait_for 10 allowed_is "${P}s1" app "$ONLINE"
}

# The BE pool, with the integer pods of part_integer ($1, $2) running:
# off LSE (integer default) CPUs, on LSR CPUs.
part_be() {
	local g1=$1 g2=$2 lsr

	IT_ANNOTATIONS=$(qos BE) app_start "${P}be" besteffort
	check "$T: BE pod on the BE pool = online - LSE" wait_for 10 allowed_n "${P}be" app 10
	check "$T: ... off the LSE CPUs" disjoint "$(allowed "${P}be" app)" "$(union "$g1" "$g2")"
	IT_ANNOTATIONS=$(qos LSR) app_start "${P}lsr" guaranteed 2000
	check "$T: LSR pod gets a whole core" wait_for 10 allowed_n "${P}lsr" app 2
	lsr=$(allowed "${P}lsr" app)
	check "$T: shared containers leave the LSR CPUs" wait_for 10 allowed_n "${P}s1" app 8
	check "$T: BE containers keep them" subset "$lsr" "$(allowed "${P}be" app)"
	check "$T: status: be_pool and shared_pool" bash -c \
		"jq -e '.be_pool == \"$(allowed "${P}be" app)\" and .shared_pool == \"$(allowed "${P}s1" app)\"' $IT_WORK/state/status.json >/dev/null"
	for p in lsr be; do app_stop "$P$p"; done
}

part_single_numa() {
	daemon_stop
	# --- SingleNUMANode: 4 CPUs per node here ---
	check "$T: daemon starts with SingleNUMANode" \
		daemon_start "$ROOT" --numa-topology-alignment-policy SingleNUMANode
	app_start "${P}big" guaranteed 6000
	# Under TCG the rejection can come while `runc run` is still starting
	# the container, which runc then tears down (cgroup and state): the
	# container and its status entry may be gone, so the evidence is the
	# log, the termination message and the counter.
	check "$T: SingleNUMANode refuses 6 CPUs (no node holds them): topology_affinity" wait_for 10 \
		grep -q "demo/${P}big/app (.*): admission error topology_affinity: .*single-numa-node" "$IT_WORK/daemon.log"
	check "$T: ... the termination message names the reason" \
		wait_for 5 grep -q "cpusetd: topology_affinity: " "$IT_WORK/pods/$(uid "${P}big")/containers/app/termination"
	check "$T: ... the container does not run" wait_for 10 not_running "${P}big"
	check "$T: ... counted as rejected" \
		wait_for 5 jq -e '.counters.rejected >= 1' "$IT_WORK/state/status.json"
	app_start "${P}fit" guaranteed 4000
	check "$T: SingleNUMANode places 4 CPUs: a whole node" wait_for 10 allowed_n "${P}fit" app 4
	check "$T: ... whole cores, one node, mems = node" integer_ok "${P}fit" 4
	check "$T: ... exactly that node's CPUs" test "$(allowed "${P}fit" app)" = \
		"$(cat /sys/devices/system/node/node"$(nodes_of "$(allowed "${P}fit" app)")"/cpulist)"
	for p in big fit; do app_stop "$P$p"; done
}

# The cgroupfs driver gets every part; the systemd driver the ones where
# the path naming matters (QoS from the slice names, pods of each class),
# without the BE pool (the same policy under other names).
# Each container start costs seconds under TCG: the lane's 10 minutes.
placement cgroupfs annotated spread integer:be single_numa
vm_root kubepods.slice
placement systemd annotated integer

vm_done
