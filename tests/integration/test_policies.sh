#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The allocation policies this 2-CPU, one-node host can show, with the real
# daemon and real runc containers: Koordinator QoS classes (LSE, LSR, LS,
# BE and the BE pool), scheduler-made cpusets (resource-status), bad pod
# annotations, besteffort_pool, reserved_cpus, kubelet takeover from
# cpu_manager_state, and the kubelet-compatible engine. NUMA alignment,
# bind and exclusive policies on bigger machines are unit-tested on real
# topologies (test_policy, cpusetctl allocate on the fixtures).
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start policies kubepods

qos() { printf '{"koordinator.sh/qosClass":"%s"}' "$1"; }
is_kind() {
	jq -e --arg p "$1" --arg k "$2" \
		'.containers[] | select(.pod == $p and .container == "app" and .kind == $k)' \
		"$IT_WORK/state/status.json" >/dev/null
}

check "daemon starts" daemon_start "$ROOT"
pod_start s1 burstable 500
check "shared container on both CPUs" wait_for 5 allowed_is s1 app 0-1

# --- Koordinator QoS classes ---
IT_ANNOTATIONS=$(qos BE) pod_start be1 besteffort
check "BE pod on the BE pool (all CPUs while nothing is exclusive)" wait_for 5 allowed_is be1 app 0-1
check "status says kind be" wait_for 5 is_kind be1 be

IT_ANNOTATIONS=$(qos LS) pod_start ls1 guaranteed 1000
check "LS pod with an integer limit stays on the shared pool" wait_for 5 allowed_is ls1 app 0-1

IT_ANNOTATIONS=$(qos LSR) pod_start lsr guaranteed 1000
check "LSR pod gets an exclusive CPU" wait_for 5 allowed_is lsr app 0
check "shared containers leave the LSR CPU" wait_for 5 allowed_is s1 app 1
check "BE containers may use the LSR CPU" wait_for 5 allowed_is be1 app 0-1
check "status: LSR class, be_pool keeps CPU 0" \
	bash -c "jq -e '.be_pool == \"0-1\" and .shared_pool == \"1\" and
		(.containers[] | select(.pod==\"lsr\" and .container==\"app\") | .qos_class == \"LSR\")' \
		$IT_WORK/state/status.json >/dev/null"
pod_stop lsr
check "LSR pod gone: shared pool whole again" wait_for 5 allowed_is s1 app 0-1

IT_ANNOTATIONS=$(qos LSE) pod_start lse guaranteed 1000
check "LSE pod gets an exclusive CPU" wait_for 5 allowed_is lse app 0
check "BE containers leave an LSE CPU" wait_for 5 allowed_is be1 app 1
pod_stop lse
check "LSE pod gone: BE pool whole again" wait_for 5 allowed_is be1 app 0-1

# --- scheduler-made allocation, verbatim ---
IT_ANNOTATIONS='{"scheduling.koordinator.sh/resource-status":"{\"cpuset\":\"1\"}"}' \
	pod_start sch1 guaranteed 1000
check "resource-status cpuset is honoured verbatim" wait_for 5 allowed_is sch1 app 1
check "shared containers leave it" wait_for 5 allowed_is s1 app 0
IT_ANNOTATIONS='{"scheduling.koordinator.sh/resource-status":"{\"cpuset\":\"1\"}"}' \
	pod_start sch2 guaranteed 1000
check "a conflicting resource-status is refused" wait_for 5 has_error sch2 cpu_exclusive rejected
check "... and rejected with the reason" \
	wait_for 5 bash -c "grep -q 'resource-status cpuset CPU 1 is exclusively owned' $IT_WORK/pods/$(uid sch2)/containers/app/termination"
pod_stop sch2
pod_stop sch1
wait_for 5 allowed_is s1 app 0-1

# --- malformed pod annotations: clear errors, nothing else changes ---
IT_ANNOTATIONS=$(qos Gold) pod_start bad1 guaranteed 1000
check "unknown qosClass refused" wait_for 5 has_error bad1 invalid_annotation rejected
IT_ANNOTATIONS='{"scheduling.koordinator.sh/resource-spec":"{\"preferredCPUBindPolicy\":\"Tight\"}"}' \
	pod_start bad2 guaranteed 1000
check "unknown preferredCPUBindPolicy refused" wait_for 5 has_error bad2 invalid_annotation rejected
IT_ANNOTATIONS='{"scheduling.koordinator.sh/resource-status":"not json"}' pod_start bad3 guaranteed 1000
check "resource-status that is not JSON refused" wait_for 5 has_error bad3 invalid_annotation rejected
IT_ANNOTATIONS=$(qos LSE) pod_start bad4 burstable 500
check "LSE without an integer limit refused" wait_for 5 has_error bad4 invalid_annotation rejected
check "bad pods changed nothing" wait_for 5 allowed_is s1 app 0-1
for p in bad1 bad2 bad3 bad4; do pod_stop $p; done

# --- preferences that the host can carry out ---
IT_ANNOTATIONS='{"scheduling.koordinator.sh/resource-spec":"{\"preferredCPUBindPolicy\":\"SpreadByPCPUs\",\"preferredCPUExclusivePolicy\":\"PCPULevel\"}"}' \
	pod_start pref guaranteed 1000
check "resource-spec preferences admitted" wait_for 5 allowed_is pref app 0
pod_stop pref
pod_stop be1
pod_stop ls1
daemon_stop

# --- besteffort_pool = be, reserved_cpus = 0 ---
check "daemon restarts with besteffort_pool=be, reserved_cpus=0" \
	daemon_start "$ROOT" --besteffort-pool be --reserved-cpus 0
pod_start be2 besteffort
check "BestEffort pod without a class on the BE pool" wait_for 5 is_kind be2 be
pod_start g1 guaranteed 1000
check "reserved CPU 0 is never exclusive: integer gets CPU 1" wait_for 5 allowed_is g1 app 1
check "reserved CPU 0 stays in the shared pool" wait_for 5 allowed_is s1 app 0
check "BE pool leaves the (LSE) integer CPU" wait_for 5 allowed_is be2 app 0
pod_stop g1
pod_stop be2
daemon_stop
out=$(timeout 10 "$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
	--state-dir "$IT_WORK/state2" --pin-dir "$IT_PIN" --reserved-cpus 1023 2>&1); rc=$?
check "reserved_cpus that are not online: the daemon refuses to start" \
	test "$rc" -ne 0 -a "$rc" -ne 124
check "... naming them" grep -q 'reserved_cpus 1023: not all of them are online' <<<"$out"

# --- kubelet takeover: CPU 1 was kubelet's choice for k1/app ---
state=$IT_WORK/cpu_manager_state
pod_start k1 guaranteed 1000
check "before the daemon: runtime gave both CPUs" wait_for 5 allowed_is k1 app 0-1
printf '{"policyName":"static","defaultCpuSet":"0","entries":{"%s":{"app":"1"}},"checksum":1}\n' \
	"$(uid k1)" >"$state"
check "daemon starts with the kubelet checkpoint" daemon_start "$ROOT" --kubelet-state-file "$state"
check "kubelet's assignment is kept (CPU 1, not the default CPU 0)" wait_for 5 allowed_is k1 app 1
check "shared containers get kubelet's default set" wait_for 5 allowed_is s1 app 0
daemon_stop
echo '{"policyName":"static","entries":{"x":{"app":"1-"}}}' >"$state"
check "malformed checkpoint: daemon still starts" daemon_start "$ROOT" --kubelet-state-file "$state"
check "malformed checkpoint is logged" \
	wait_for 5 grep -q "kubelet state $state: malformed; not taking over" "$IT_WORK/daemon.log"
check "malformed checkpoint changes nothing: the running set is kept" wait_for 5 allowed_is k1 app 1
pod_stop k1
daemon_stop

# --- kubelet-compatible engine ---
check "daemon starts with kubelet_compat" \
	daemon_start "$ROOT" --kubelet-compat true --kubelet-cpu-manager-policy-options full-pcpus-only=true
pod_start kc guaranteed 1000
check "kubelet static policy's choice on this host: CPU 0" wait_for 5 allowed_is kc app 0
check "status names the kubelet engine" \
	bash -c "jq -e '.daemon.allocation.engine == \"kubelet\"' $IT_WORK/state/status.json >/dev/null"
pod_stop kc
pod_stop s1
daemon_stop
it_done
