#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Koordinator's NUMA-aware shared pools on pure cgroup v2 with 4 NUMA
# nodes (node k = CPUs 4k..4k+3): a pod whose
# scheduling.koordinator.sh/resource-status names NUMA nodes in
# numaNodeResources (CPUBindPolicyConstrainedBurst) runs on its pool's
# part on those nodes, with cpuset.mems those nodes:
#   - an LS pod on node 1 sits on 4-7, mems 1; a BE pod on node 2 on 8-11;
#   - it moves with its part: an annotated pod pins 4-5, the LS pod goes
#     to 6-7, and back to 4-7 when the pin goes;
#   - the same with integer (Guaranteed, integer CPU) pods: one of 6 CPUs
#     takes CPUs on node 1 (node 0 and two of node 1 under MostAllocated),
#     the LS pod keeps node 1's rest; one of 4 takes CPUs on node 2, the
#     BE pod keeps node 2's rest of the BE pool; both come back when the
#     integer pods go (checked as sets: whichever CPUs the allocator
#     picks, each part is its node minus the integer pods' CPUs);
#   - an annotated pod that would take all of node 1 is refused
#     (shared_pool_empty), the LS pod keeps 4-7;
#   - a pod naming a node this machine lacks is refused (invalid_annotation);
#   - with system_qos_cpus = 14-15, a SYSTEM pod runs there, they leave the
#     shared pool, and a pod may not pin them (cpu_reserved).
# Checked through the kernel: the init's Cpus_allowed_list and
# Mems_allowed_list, and the cgroup's cpuset.mems.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start numapool kubepods

# numa QOS NODES: pod annotations as Koordinator's scheduler writes them.
numa() {
	local n entries=
	for n in $2; do entries="$entries${entries:+,}{\\\"node\\\":$n,\\\"resources\\\":{\\\"cpu\\\":\\\"1\\\"}}"; done
	printf '{"koordinator.sh/qosClass":"%s","scheduling.koordinator.sh/resource-status":"{\\"numaNodeResources\\":[%s]}"}' \
		"$1" "$entries"
}
app_start() { container_start "$1" app "$2" container "${3:-0}" "${4:-}"; }
rejected() {
	jq -e --arg p "$1" --arg r "$2" '.errors[] | select(.pod == $p and .reason == $r)' \
		"$IT_WORK/state/status.json" >/dev/null
}

# together: each start costs seconds under TCG, and their order does not
# matter (remember: vmlib.sh keeps IDs per name, in this shell)
together() {
	local p r=0 pids=()
	for p in "$@"; do
		remember "$p" app
	done
	for p in "$@"; do
		"start_$p" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || r=1; done
	return $r
}
start_ls() { IT_ANNOTATIONS=$(numa LS 1) app_start ls burstable 500; }
start_be() { IT_ANNOTATIONS=$(numa BE 2) app_start be besteffort; }
start_sh() { app_start sh burstable 500; }
start_pin2() { app_start pin2 burstable 0 4-7; }
start_bad() { IT_ANNOTATIONS=$(numa LS 7) app_start bad burstable 500; }
start_sys() { IT_ANNOTATIONS='{"koordinator.sh/qosClass":"SYSTEM"}' app_start sys burstable 500; }
start_pin15() { app_start pin15 burstable 0 15; }

check "daemon starts" daemon_start "$ROOT" --system-qos-cpus 14-15
together ls be sh sys
check "LS pod on node 1: its part of the shared pool, 4-7" wait_for 20 allowed_is ls app 4-7
check "... cpuset.mems and Mems_allowed are node 1" mems_are ls app 1
check "BE pod on node 2: its part of the BE pool, 8-11" wait_for 20 allowed_is be app 8-11
check "... mems node 2" mems_are be app 2
check "a pod without nodes: the whole shared pool, without the SYSTEM CPUs" \
	wait_for 20 allowed_is sh app 0-13
check "a SYSTEM pod on system_qos_cpus 14-15" wait_for 20 allowed_is sys app 14-15
check "topology.json publishes them as system-qos-resource" jq -e \
	'.["node.koordinator.sh/system-qos-resource"] | fromjson | .cpuset == "14-15"' \
	"$IT_WORK/state/topology.json"
explain_pool() {
	"$IT_OUT/cpusetctl" --state-dir "$IT_WORK/state" explain --json demo/ls/app |
		jq -e '.pool | contains("its part on NUMA node(s) 1")' >/dev/null
}
check "cpusetctl explain says why: the shared pool's part on node 1" explain_pool

app_start pin burstable 0 4-5
check "an annotated pod pins 4-5" wait_for 20 allowed_is pin app 4-5
check "the LS pod moves with its part: 6-7" wait_for 20 allowed_is ls app 6-7
check "... mems still node 1" mems_are ls app 1
check "the BE pod is not on node 1: stays" allowed_is be app 8-11
container_stop pin app
check "pin gone: the LS pod has 4-7 again" wait_for 20 allowed_is ls app 4-7

# part_is POD NODE_CPUS INT_PODS...: the pod runs on NODE_CPUS minus the
# integer pods' CPUs, and that is not empty (never widened).
part_is() {
	local pod=$1 want=$2 i a
	shift 2
	for i in "$@"; do
		a=$(allowed "$i" app) || return 1
		want=$(minus "$want" "$a")
	done
	[ -n "$want" ] && allowed_is "$pod" app "$want"
}
# takes_on INT NODE_CPUS: the integer pod runs on some of NODE_CPUS, and
# on as many CPUs as it asked for (exclusive, not the pool).
takes_on() {
	local a
	a=$(allowed "$1" app) || return 1
	[ "$(ncpus "$a")" = "$3" ] && ! disjoint "$a" "$2"
}
app_start int6 guaranteed 6000
check "an integer pod of 6 CPUs takes CPUs on node 1" wait_for 20 takes_on int6 4-7 6
check "the LS pod moves with its part: 4-7 minus the integer pod's" \
	wait_for 20 part_is ls 4-7 int6
check "... mems still node 1" mems_are ls app 1
check "... the BE pod on node 2 stays 8-11" allowed_is be app 8-11
app_start int4 guaranteed 4000
check "an integer pod of 4 CPUs takes CPUs on node 2" wait_for 20 takes_on int4 8-11 4
check "the BE pod moves with its part: 8-11 minus the integer pods'" \
	wait_for 20 part_is be 8-11 int6 int4
check "... mems still node 2" mems_are be app 2
check "... the LS pod: 4-7 minus both integer pods'" part_is ls 4-7 int6 int4
check "... the integer pods are disjoint" disjoint "$(allowed int6 app)" "$(allowed int4 app)"
container_stop int6 app
container_stop int4 app
check "integer pods gone: the LS pod has 4-7 again" wait_for 20 allowed_is ls app 4-7
check "... the BE pod has 8-11 again" wait_for 20 allowed_is be app 8-11

together pin2 bad pin15
check "taking all of node 1 is refused: shared_pool_empty" wait_for 20 rejected pin2 shared_pool_empty
check "... the LS pod keeps 4-7" allowed_is ls app 4-7
check "a node this machine lacks: invalid_annotation" wait_for 20 rejected bad invalid_annotation
check "pinning a SYSTEM CPU: cpu_reserved" wait_for 20 rejected pin15 cpu_reserved
check "... the SYSTEM pod keeps 14-15" allowed_is sys app 14-15
check "no cgroup write errors" test "$(write_errors)" = 0
vm_done
