#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.6 1.7 2.x
# cpusetd (BPF-only mode) under a real containerd (CRI_CONTAINERD: Debian's
# 1.6, trixie's 1.7 or sid's 2.x with NRI on and no plugin connected; CRI
# plugin, runc shim v2), driven through the CRI gRPC API the way kubelet
# drives it: RunPodSandbox
# into kubelet's cgroupfs pod cgroups, CreateContainer with the termination
# message file bind-mounted, StartContainer, ContainerStatus, Stop/Remove.
# Pod annotations reach the bundles through containerd's pod_annotations.
# Everything is private: containerd's config, root, state, socket and runc
# root, the cgroup subtree, the BPF pin dir. Placements are checked through
# the kernel (/proc/PID/status Cpus_allowed_list, cpuset files); outcomes
# are waited on (up to 30 s), never raced. This host has CPUs 0-1.
#   [CRI_CONTAINERD=1.6|1.7|2.x] tests/containerd/test_containerd.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
cri_setup_or_exit
must "busybox OCI image built (layer, config, manifest, index.json)" cri_build_image
must "containerd starts on a private socket, CRI runtime.v1 answers" cri_containerd_start
it_log "runtime: $(cri version) ($CRI_BIN/containerd $CRI_VERSION)"
if [ -n "$CRI_NRI_SOCK" ]; then
	check "NRI: containerd $CRI_CONTAINERD serves its private socket $CRI_NRI_SOCK" cri_has_nri
fi
must "image imported with ctr; the CRI sees it (no registry)" cri_image_import
must "cpusetd starts" daemon_start

phase setup
# --- shared: a Burstable pod runs on the whole pool ---
must "shared: RunPodSandbox" run_pod s1 burstable
must "shared: CreateContainer + StartContainer" run_ctr s1 app --cpu-request 250 --cpu-limit 500 --memory-limit 67108864
check "shared: app runs on the whole pool 0-1" wait_for 30 allowed_is s1 app 0-1
check "shared: its sandbox (pause) too" wait_for 30 allowed_is s1 POD 0-1
# containerd finds its shim on PATH: the system's 1.6 shim must not serve 1.7 or 2.x.
shim_exes() { for p in $(cri_shim_pids); do readlink "/proc/$p/exe"; done | sort -u; }
check "the shims are containerd $CRI_CONTAINERD's own ($(shim_exes | tr '\n' ' '))" \
	test "$(shim_exes)" = "$(realpath "$CRI_BIN/containerd-shim-runc-v2")"
# Their sockets are in the lane's own /run/containerd/s (lib.sh cri_ns_start).
shim_socks() { cri_in_ns ls /run/containerd/s; }
not_on_host() { local n; for n in $(shim_socks); do [ ! -e "/run/containerd/s/$n" ] || return 1; done; }
check "the shims' sockets are in the lane's own /run/containerd/s ($(shim_socks | wc -l)), none in the host's" \
	eval '[ -n "$(shim_socks)" ] && not_on_host'

# --- annotated: weka.io/cores-ids through pod_annotations ---
must "annotated: RunPodSandbox" run_pod a1 burstable weka.io/cores-ids=1
must "annotated: CreateContainer + StartContainer" run_ctr a1 app
check "annotated: the pod annotation is in the app's bundle config.json" \
	jq_quiet '.annotations["weka.io/cores-ids"] == "1"' "$CRI_BUNDLES/${CTR_ID[a1/app]}/config.json"
check "annotated: app runs on exactly CPU 1" wait_for 30 allowed_is a1 app 1
check "annotated: cpuset.mems is CPU 1's node" test "$(cat "$(ctr_cgroup a1 app)/cpuset.mems")" = 0
check "annotated: the shared container leaves CPU 1" wait_for 30 allowed_is s1 app 0
check "annotated: its sandbox is shared (0)" wait_for 30 allowed_is a1 POD 0
must "annotated: pod stopped and removed" remove_pod a1 burstable
check "annotated pod gone: shared back on 0-1" wait_for 30 allowed_is s1 app 0-1

# --- Koordinator's NUMA-aware pools: resource-status numaNodeResources
# through pod_annotations (this host has one node: its part is the pool) ---
NUMA0='{"numaNodeResources":[{"node":0,"resources":{"cpu":"1"}}]}'
must "numa pool: RunPodSandbox with resource-status numaNodeResources node 0" \
	run_pod n1 burstable koordinator.sh/qosClass=LS "scheduling.koordinator.sh/resource-status=$NUMA0"
must "numa pool: CreateContainer + StartContainer" run_ctr n1 app --cpu-limit 500
check "numa pool: app on node 0's part of the shared pool, 0-1" wait_for 30 allowed_is n1 app 0-1
check "numa pool: status.json: bound to node 0 by the annotation" wait_for 30 jq_quiet \
	'.containers[] | select(.pod == "n1" and .container == "app")
	 | .decision.pool_nodes == "0" and .decision.annotations["resource-status.numaNodeResources"] == "0"' \
	"$IT_WORK/cpusetd/status.json"
check "numa pool: cpuset.mems node 0" test "$(cat "$(ctr_cgroup n1 app)/cpuset.mems")" = 0
must "numa pool: pod stopped and removed" remove_pod n1 burstable

phase shared+annotated
# --- rejections: StartContainer succeeds, the app is killed at its first
# exec with the reason in its termination message; kubelet's restarts are
# new attempts in the same sandbox ---
# reject_attempts POD REASON N [run-container options]: N attempts (cri.py
# runs them one after another, each once the previous one exited); counts
# what held into STARTED, KILLED, MESSAGES; CRI_STATUS: the CRI's view.
reject_attempts() {
	local pod=$1 reason=$2 n=$3 out t
	shift 3
	out=$(cri run-container "$pod" app --image "$CRI_IMAGE" --attempts "$n" --wait-exit 30 "$@")
	jq -r --arg p "$pod" '"\($p) app \(.id)"' <<<"$out" >>"$CRI_IDS"
	STARTED=$(jq -s '[.[] | select(.started and .error == "")] | length' <<<"$out")
	KILLED=$(jq -s '[.[] | select(.status.state == "CONTAINER_EXITED" and .status.exit_code == 137)] | length' <<<"$out")
	CRI_STATUS=$(jq -r '"reason=\(.status.reason) message=\(.status.message | @json)"' <<<"$out" | sort -u | tr '\n' ' ')
	jq -r 'select(.error != "") | "# \(.attempt): \(.error)"' <<<"$out"
	MESSAGES=0
	for t in $(jq -r .termination <<<"$out"); do
		wait_for 30 grep -q "^cpusetd: $reason" "$t" && MESSAGES=$((MESSAGES + 1))
	done
	LAST_TERM=$t
}

must "rejection (shared_pool_empty): RunPodSandbox of a Guaranteed pod" run_pod r1 guaranteed
reject_attempts r1 shared_pool_empty 20 --cpu-limit 2000 --memory-limit 67108864 --guaranteed
check "shared_pool_empty: StartContainer succeeded $STARTED of 20" test "$STARTED" = 20
check "shared_pool_empty: exited with code 137 (SIGKILL) $KILLED of 20" test "$KILLED" = 20
check "shared_pool_empty: termination file says 'cpusetd: shared_pool_empty' $MESSAGES of 20" test "$MESSAGES" = 20
# containerd does not read the termination file (kubelet does, into the
# pod status): its ContainerStatus message may be empty. Shown, not checked.
it_log "ContainerStatus as the CRI reports it: $CRI_STATUS"
it_log "termination message: $(cat "$LAST_TERM")"
check "shared_pool_empty: status.json lists the error with its 20 attempts" wait_for 30 jq_quiet \
	--arg ns "$CRI_NS" '.errors[] | select(.namespace == $ns and .pod == "r1" and .container == "app"
	  and .reason == "shared_pool_empty" and .action == "rejected" and .attempts == 20)' \
	"$IT_WORK/cpusetd/status.json"
check "shared_pool_empty: the sandbox keeps running (shared, 0-1)" allowed_is r1 POD 0-1
check "shared_pool_empty: the shared container never moved" allowed_is s1 app 0-1
must "shared_pool_empty: pod removed" remove_pod r1 guaranteed
check "shared_pool_empty: the error goes with the pod" wait_for 30 bash -c \
	"! jq -e '.errors[] | select(.pod == \"r1\")' $IT_WORK/cpusetd/status.json >/dev/null"

must "rejection (invalid_annotation): RunPodSandbox with weka.io/cores-ids: 1-x" \
	run_pod x1 burstable weka.io/cores-ids=1-x
reject_attempts x1 invalid_annotation 20 --cpu-limit 500
check "invalid_annotation: StartContainer succeeded $STARTED of 20" test "$STARTED" = 20
check "invalid_annotation: exited with code 137 (SIGKILL) $KILLED of 20" test "$KILLED" = 20
check "invalid_annotation: termination file says 'cpusetd: invalid_annotation' $MESSAGES of 20" test "$MESSAGES" = 20
check "invalid_annotation: status.json lists the error with its 20 attempts" wait_for 30 jq_quiet \
	--arg ns "$CRI_NS" '.errors[] | select(.namespace == $ns and .pod == "x1" and .container == "app"
	  and .reason == "invalid_annotation" and .action == "rejected" and .attempts == 20)' \
	"$IT_WORK/cpusetd/status.json"
check "invalid_annotation: the sandbox keeps running" allowed_is x1 POD 0-1
must "invalid_annotation: pod removed" remove_pod x1 burstable
check "no 'OCI runtime create failed' (StartError) in containerd's log" \
	no_match "$IT_WORK/containerd.log" 'OCI runtime'

phase rejections
# --- integer: a Guaranteed pod with a whole CPU gets it to itself ---
must "integer: RunPodSandbox" run_pod g1 guaranteed
must "integer: CreateContainer + StartContainer" run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed
check "integer: app gets exclusive CPU 0" wait_for 30 allowed_is g1 app 0
check "integer: cpuset.mems is CPU 0's node" test "$(cat "$(ctr_cgroup g1 app)/cpuset.mems")" = 0
check "integer: the shared container moves to CPU 1" wait_for 30 allowed_is s1 app 1
check "integer: its sandbox is shared (1)" wait_for 30 allowed_is g1 POD 1
check "integer: status.json shows it" wait_for 30 jq_quiet --arg id "${CTR_ID[g1/app]}" \
	'.containers[] | select(.container_id == $id and .kind == "integer" and .cpus == "0")' \
	"$IT_WORK/cpusetd/status.json"

# --- a foreign write is undone ---
g1_cpus=$(ctr_cgroup g1 app)/cpuset.cpus
ms=$(ms_until_restored "$g1_cpus")
check "foreign write of 0-1 restored to 0 within 1 s (${ms} ms)" test "$ms" -le 1000
id12=${CTR_ID[g1/app]:0:12}
check "the writer is named in the log: 'demo/g1/app ($id12): bash[PID] wrote cpuset.cpus 0-1; restored 0'" \
	wait_for 30 grep -q "$CRI_NS/g1/app ($id12): bash\[[0-9]*\] wrote cpuset.cpus 0-1; restored 0" \
	"$IT_WORK/daemon.log"
check "integer: still on CPU 0" wait_for 30 allowed_is g1 app 0

phase integer+foreign-write
# --- kill -9, churn while down, restart ---
# sample FILE OUT STOP: every value FILE takes, every 10 ms, until STOP exists.
sample() {
	local v last=''
	while [ ! -e "$3" ]; do
		read -r v <"$1" 2>/dev/null || v=gone
		[ "$v" != "$last" ] && { echo "$v" >>"$2"; last=$v; }
		sleep 0.01
	done
}
sample "$g1_cpus" "$IT_WORK/g1.samples" "$IT_WORK/g1.stop" &
sampler=$!
daemon_kill9
cp "$CRI_IDS" "$IT_WORK/ids.up"
must "while down: shared pod s1 stopped and removed" remove_pod s1 burstable
must "while down: RunPodSandbox s2" run_pod s2 burstable
must "while down: s2 CreateContainer + StartContainer" run_ctr s2 app --cpu-limit 500
check "while down: the new shared container starts on the runtime's 0-1" wait_for 30 allowed_is s2 app 0-1
must "restart: cpusetd starts again" daemon_start
check "restart: the shared container started while down is corrected to 1" wait_for 30 allowed_is s2 app 1
check "restart: its sandbox too" wait_for 30 allowed_is s2 POD 1
check "restart: the integer container is still on CPU 0" allowed_is g1 app 0
: >"$IT_WORK/g1.stop"
wait "$sampler"
check "restart: the integer container never moved (cpuset.cpus sampled every 10 ms: $(tr '\n' ' ' <"$IT_WORK/g1.samples"))" \
	test "$(cat "$IT_WORK/g1.samples")" = 0

live_ids() { cri ps | awk '$4 == "CONTAINER_RUNNING" || $4 == "SANDBOX_READY" {print $1}' | sort; }
status_ids() { jq -r '.containers[].container_id' "$IT_WORK/cpusetd/status.json" | sort; }
same_ids() { [ "$(live_ids)" = "$(status_ids)" ] && [ -n "$(live_ids)" ]; }
if check "restart: status.json lists exactly the live containers and sandboxes ($(live_ids | wc -l))" \
	wait_for 30 same_ids; then :; else
	diff <(live_ids) <(status_ids) | sed 's/^/# live vs status.json: /'
fi

phase restart
# --- kubelet's call order, as cpusetd relies on it: the bundle's
# config.json is there before runc makes the container's cgroup, so every
# container is named from its bundle at its mkdir ---
named=0 total=0
while read -r p n id; do
	total=$((total + 1))
	grep -q "$CRI_NS/$p/$n (${id:0:12})" "$IT_WORK/daemon.log" && named=$((named + 1))
done <"$IT_WORK/ids.up"
check "call order: every container started while cpusetd ran was named from its bundle at mkdir ($named of $total)" \
	test "$named" = "$total" -a "$total" -gt 40
check "call order: no container logged without its bundle ('?/?/<id>')" \
	no_match "$IT_WORK/daemon.log" -F '?/?/'

# --- containerd restarted under running pods (what the NRI tests need):
# in the lane's mount namespace it finds its shims again ---
phase call-order
must "containerd restarts" cri_containerd_restart
running() { [ "$(cri status "${CTR_ID[$1]}" | jq -r .state)" = CONTAINER_RUNNING ]; }
check "after the restart the CRI still sees g1/app and s2/app running (their shims found again)" \
	eval 'running g1/app && running s2/app'
check "after the restart: placements unchanged (g1 on 0, s2 on 1)" eval 'allowed_is g1 app 0 && allowed_is s2 app 1'
phase containerd-restart

daemon_stop
check "SIGTERM leaves placements in place" allowed_is g1 app 0
cri_finish lane
