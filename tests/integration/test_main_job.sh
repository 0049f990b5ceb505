#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The main job on this real kernel: the real daemon, real runc containers
# in a private cgroup subtree, checked through the kernel
# (/proc/PID/status Cpus_allowed_list and the cgroup files).
# This host has 2 CPUs (0-1): an exclusive container takes CPU 0 (lowest
# first) and the shared pool keeps CPU 1.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start main kubepods
check "daemon starts and writes status.json" daemon_start "$ROOT"

# --- integer pod: exclusive CPU, shared containers leave it ---
pod_start s1 burstable 500
pod_start s2 besteffort
check "shared container starts on the whole pool" wait_for 5 allowed_is s1 app 0-1
pod_start g1 guaranteed 1000
check "integer container gets its own CPU" wait_for 5 allowed_is g1 app 0
check "integer container's mems are its NUMA node" test "$(cg_file g1 app cpuset.mems)" = 0
check "shared containers leave the exclusive CPU" wait_for 5 allowed_is s1 app 1
check "besteffort containers leave it too" wait_for 5 allowed_is s2 app 1
check "sandbox of the integer pod is shared" wait_for 5 allowed_is g1 POD 1
check "status.json shows the integer placement" \
	bash -c "jq -e '.containers[] | select(.pod==\"g1\" and .container==\"app\" and .kind==\"integer\" and .cpus==\"0\")' $IT_WORK/state/status.json >/dev/null"
pod_stop g1
check "stopping the integer pod gives the CPU back" wait_for 5 allowed_is s1 app 0-1
check "... to every shared container" wait_for 5 allowed_is s2 app 0-1

# --- the runtime writes its own set after our mkdir-time write ---
container_start g2 POD guaranteed sandbox 0
container_start g2 app guaranteed container 1000 "" 0-1
check "exec check re-applies a set the runtime overwrote" wait_for 5 allowed_is g2 app 0
# The write hook catches runc's write as it lands; the exec check is the
# second line, for kernels where no hook attached.
check "the runtime's write is caught and counted" bash -c \
	"jq -e '.counters.foreign_restores + .counters.exec_reapplied >= 1' $IT_WORK/state/status.json >/dev/null"
pod_stop g2
wait_for 5 allowed_is s1 app 0-1

# --- no bundle: what the cgroup says (path QoS, CPU quota) ---
# The bundle lives outside every --bundle-path template, so the daemon
# cannot find it; runc sets the quota only after the cgroup exists.
container_start g5 POD guaranteed sandbox 0
container_start g5 app guaranteed container 1000
check "with its bundle: integer" wait_for 5 allowed_is g5 app 0
pod_stop g5
wait_for 5 allowed_is s1 app 0-1
IT_BUNDLES=$IT_WORK/elsewhere container_start g6 app guaranteed container 1000
check "without a bundle: integer from cpu.cfs_quota_us" wait_for 5 allowed_is g6 app 0
check "without a bundle: shared leave its CPU" wait_for 5 allowed_is s1 app 1
IT_BUNDLES=$IT_WORK/elsewhere container_stop g6 app
check "without a bundle: stop frees the CPU" wait_for 5 allowed_is s1 app 0-1

# --- annotated pods: exact CPUs, reference counted ---
pod_start a1 burstable 500 1
pod_start a2 burstable 0 1
check "annotated pod gets exactly its CPUs" wait_for 5 allowed_is a1 app 1
check "overlapping annotated pod shares them" wait_for 5 allowed_is a2 app 1
check "annotated mems = NUMA nodes of its CPUs" test "$(cg_file a1 app cpuset.mems)" = 0
check "shared pool excludes annotated CPUs" wait_for 5 allowed_is s1 app 0
check "sandbox of an annotated pod is shared" wait_for 5 allowed_is a1 POD 0
pod_stop a1
check "CPU stays reserved while another annotated pod holds it" wait_for 5 allowed_is s1 app 0
check "... and the survivor keeps it" allowed_is a2 app 1
pod_stop a2
check "last annotated pod gone: CPU back in the pool" wait_for 5 allowed_is s1 app 0-1

# --- admission errors, on_error=reject ---
# expect_reject POD REASON: app killed, reason in its termination file,
# sandbox left running on the shared pool, error in status.json.
expect_reject() {
	local pod=$1 reason=$2
	check "$reason: app container is killed" wait_for 5 stopped "$pod" app
	check "$reason: termination message names the reason" \
		wait_for 5 grep -q "$reason" "$IT_WORK/pods/$(uid "$pod")/containers/app/termination"
	check "$reason: sandbox keeps running" running "$pod" POD
	check "$reason: error shown in status" wait_for 5 has_error "$pod" "$reason" rejected
	check "$reason: shared containers untouched" allowed_is s1 app "${3:-0-1}"
}

pod_start e1 burstable 500 "1-x"
expect_reject e1 invalid_annotation
pod_start e2 burstable 500 "5"
expect_reject e2 cpu_offline
pod_start e3 guaranteed 4000
expect_reject e3 insufficient_cpus
pod_start e4 guaranteed 2000
expect_reject e4 shared_pool_empty
pod_start e5 burstable 0 "0-1"
expect_reject e5 shared_pool_empty
pod_start g3 guaranteed 1000
wait_for 5 allowed_is g3 app 0
pod_start e6 burstable 0 "0"
expect_reject e6 cpu_exclusive 1
check "an error touches no other container" allowed_is g3 app 0
check "cpusetctl status lists the errors" bash -c \
	"$IT_OUT/cpusetctl status --state-dir $IT_WORK/state | grep -q cpu_exclusive"
for p in e1 e2 e3 e4 e5 e6; do pod_stop $p; done
pod_stop g3
wait_for 5 allowed_is s1 app 0-1

# --- on_error=shared: the container stays, on the shared pool ---
daemon_stop
daemon_start "$ROOT" --on-error shared
pod_start e7 burstable 500 "1-x"
check "on_error=shared: error visible" wait_for 5 has_error e7 invalid_annotation shared
check "on_error=shared: container keeps running" running e7 app
check "on_error=shared: on the shared pool" allowed_is e7 app 0-1
pod_stop e7
daemon_stop

# --- crash recovery: kill -9, churn while down, restart ---
daemon_start "$ROOT"
pod_start g4 guaranteed 1000
pod_start s4 burstable 500
check "before the crash: integer on 0" wait_for 5 allowed_is g4 app 0
wait_for 5 allowed_is s4 app 1
daemon_kill9
pod_stop s4			# gone while down
pod_start s3 burstable 500	# starts on the runtime's default set
check "while down, a new shared container runs everywhere" wait_for 5 allowed_is s3 app 0-1
daemon_start "$ROOT"
check "after restart: the integer container did not move" wait_for 5 allowed_is g4 app 0
check "after restart: the shared container started while down is corrected" wait_for 5 allowed_is s3 app 1
check "after restart: the correction is logged with the old and new set" \
	grep -q 'demo/s3/app ([0-9a-f]*): resync corrected cpus 0-1 -> 1 (shared)' "$IT_WORK/daemon.log"
check "after restart: older shared containers keep the right pool" wait_for 5 allowed_is s1 app 1
check "after restart: every container accounted for" bash -c \
	"[ \$(jq '.containers | length' $IT_WORK/state/status.json) -eq \$($IT_RUNC list -q | wc -l) ]"
daemon_kill9
pod_stop g4			# its CPU must come back at restart
daemon_start "$ROOT"
check "an integer pod stopped while down frees its CPU at restart" wait_for 5 allowed_is s3 app 0-1
daemon_stop
check "SIGTERM leaves placements in place" allowed_is s3 app 0-1

it_done
