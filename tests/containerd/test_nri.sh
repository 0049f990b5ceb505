#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# cpusetd as the NRI plugin of a real containerd (CRI_CONTAINERD: trixie's
# 1.7 or sid's 2.x, NRI on a private socket: tests/containerd/lib.sh),
# driven through the CRI as kubelet drives it, with BPF beside it. Every
# placement is checked three ways: the kernel (the container's own first
# instruction prints its Cpus_allowed_list, read from its CRI log; the
# init's /proc status; the cgroup's cpuset files) and the runtime's own
# record (ContainerStatus' runtimeSpec cpus/mems) saying the same.
# Scenarios, reusing pods (CPUs 0-1):
#   1. connected: status.json mode nri+bpf, the runtime's name/version;
#   2. shared, annotated, integer placed at CreateContainer, confirmed at
#      mkdir, none created without NRI;
#   3. refusals (invalid_annotation, shared_pool_empty): CreateContainer
#      fails with our reason, no process of the container ever ran, the
#      error listed in status.json with its attempts;
#   4. a stop widens the pool (kernel and runtime record);
#   5. kill -9 and restart: reconnected, re-synced, the integer container
#      never moved (sampled every 10 ms);
#   6. containerd restarted elsewhere (NRI on, our plugin not connected):
#      a new pod is placed by BPF, counted created_without_nri; then back
#      on its socket: reconnected, the runtime's record corrected;
#   7. cpusetd stopped (SIGSTOP) past the runtime's request timeout: the
#      create goes on without it, BPF places the container after SIGCONT,
#      the plugin reconnects and the next create goes through NRI.
# The pre-installed mode and a second plugin setting cpus: test_nri_preinstalled.sh,
# test_nri_conflict.sh.
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
cri_needs_nri
# The runtime's request timeout (containerd's default, said explicitly):
# scenario 7 stops cpusetd for longer than this.
CRI_NRI_REQUEST_TIMEOUT=2s
cri_setup_or_exit
# waits NAME TIMEOUT_S CMD...: one TAP line for CMD coming true within
# TIMEOUT_S, with how long it took; NAME is expanded after the wait (it
# may show the values waited for: single-quote it).
waits() {
	local name=$1 t=$2 t0=${EPOCHREALTIME/./} rc
	shift 2
	wait_for "$t" "$@"
	rc=$?
	eval "name=\"$name\""
	check "$name ($(((${EPOCHREALTIME/./} - t0) / 1000)) ms)" test "$rc" = 0
	return "$rc"
}

# --- what the test reads ---

st() { jq -r "$1" "$IT_WORK/cpusetd/status.json" 2>/dev/null; }
counter() { st ".counters.$1"; }
connected() { [ "$(st .daemon.nri.state)" = connected ] && [ "$(st .daemon.mode)" = nri+bpf ]; }
# The container's init reads its own /proc status before anything else
# (a shell builtin: no fork) and logs it: its very first CPUs.
FIRST_CMD="sh -c 'while read -r k v; do case \$k in Cpus_allowed_list:) echo first-cpus \$v ;; esac; done </proc/self/status; exec sleep 3600'"
# first_cpus POD NAME: what that first instruction printed (CRI log line
# "<time> stdout F first-cpus <list>").
first_cpus() {
	awk '$4 == "first-cpus" {print $5}' \
		"$IT_WORK/logs/${CRI_NS}_$1_$(pod_uid "$1")/$2/0.log" 2>/dev/null
}
# first_is NAME POD CTR CPUS: one TAP line: the container's first
# instruction ran on CPUS (its log line waited for, up to 10 s).
first_is() {
	local pod=$2 ctr=$3
	wait_for 10 eval '[ -n "$(first_cpus "$pod" "$ctr")" ]'
	check "$1 ($(first_cpus "$pod" "$ctr"))" test "$(first_cpus "$pod" "$ctr")" = "$4"
}
# record POD NAME FIELD: the runtime's own record (cpus or mems).
record() { cri status "${CTR_ID[$1/$2]}" | jq -r ".$3"; }
cg_file() { cat "$(ctr_cgroup "$1" "$2")/cpuset.$3" 2>/dev/null; }
# placed POD NAME CPUS: the init's CPUs, the cgroup's cpuset.cpus and the
# runtime's record all say CPUS.
placed() {
	allowed_is "$1" "$2" "$3" && [ "$(cg_file "$1" "$2" cpus)" = "$3" ] &&
		[ "$(record "$1" "$2" cpus)" = "$3" ]
}
# where POD NAME: the three, for a failing check's line.
where() { echo "init $(allowed "$1" "$2"), cgroup $(cg_file "$1" "$2" cpus), runtime $(record "$1" "$2" cpus)"; }
# pod_started POD: the pod's containers as the CRI lists them (not the sandbox).
pod_ctrs() { cri ps | awk -v p="$1" '$2 == p && $3 != "POD"'; }

must "busybox OCI image built" cri_build_image
must "containerd $CRI_CONTAINERD starts with NRI on $CRI_NRI_SOCK" cri_containerd_start
must "NRI: containerd serves its private socket" cri_has_nri
must "image imported" cri_image_import
printf '[cpusetd]\nnri_socket = %s\n' "$CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
must "cpusetd starts (nri_socket = \$CRI_NRI_SOCK)" daemon_start "$IT_WORK/nri.conf"
v=$CRI_VERSION

# --- 1. connected ---
check "$v: connected: status.json says mode nri+bpf, state connected" wait_for 15 connected
check "$v: connected: the runtime named (\"$(st .daemon.nri.runtime)\" \"$(st .daemon.nri.runtime_version)\")" \
	test "$(st .daemon.nri.runtime)" = containerd -a -n "$(st .daemon.nri.runtime_version)"
waits '$v: connected: synchronized once ($(counter nri_synchronizes))' 10 eval '[ "$(counter nri_synchronizes)" = 1 ]'
phase connect

# --- 2. placed at CreateContainer ---
must "shared: pod s1 and its container" run_pod s1 burstable
must "shared: CreateContainer + StartContainer" run_ctr s1 app --cpu-request 250 --cpu-limit 500 --cmd "$FIRST_CMD"
first_is 'shared: first instruction on 0-1' s1 app 0-1
waits 'shared: init, cgroup and the runtime record say 0-1 ($(where s1 app))' 10 placed s1 app 0-1

must "annotated: pod a1 (weka.io/cores-ids: 1)" run_pod a1 burstable weka.io/cores-ids=1
must "annotated: CreateContainer + StartContainer" run_ctr a1 app --cmd "$FIRST_CMD"
first_is 'annotated: first instruction on exactly 1' a1 app 1
waits 'annotated: init, cgroup and the runtime record say 1 ($(where a1 app))' 10 placed a1 app 1
check "annotated: mems 0 in the cgroup and the runtime's record" \
	test "$(cg_file a1 app mems)" = 0 -a "$(record a1 app mems)" = 0
check "annotated: the shared container left CPU 1, in the kernel and the runtime's record" \
	wait_for 10 placed s1 app 0
# --- 4. a stop widens the pool ---
must "annotated: pod stopped and removed" remove_pod a1 burstable
waits 'stop: the shared container back on 0-1, kernel and runtime record ($(where s1 app))' 10 placed s1 app 0-1

must "integer: pod g1 (Guaranteed, 1 CPU)" run_pod g1 guaranteed
must "integer: CreateContainer + StartContainer" run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed --cmd "$FIRST_CMD"
first_is 'integer: first instruction on exclusive CPU 0' g1 app 0
waits 'integer: init, cgroup and the runtime record say 0 ($(where g1 app))' 10 placed g1 app 0
check "integer: mems 0 in the cgroup and the runtime's record" \
	test "$(cg_file g1 app mems)" = 0 -a "$(record g1 app mems)" = 0
check "integer: the shared container moved to 1, kernel and runtime record" wait_for 10 placed s1 app 1
check "integer: status.json kind integer, cpus 0" wait_for 10 jq_quiet --arg id "${CTR_ID[g1/app]}" \
	'.containers[] | select(.container_id == $id and .kind == "integer" and .cpus == "0")' \
	"$IT_WORK/cpusetd/status.json"
check "counters: 3 placed at create ($(counter nri_placed_at_create)), 3 confirmed at mkdir ($(counter nri_confirmed_at_mkdir))" \
	wait_for 10 eval '[ "$(counter nri_placed_at_create)" = 3 ] && [ "$(counter nri_confirmed_at_mkdir)" = 3 ]'
check "counters: created_without_nri 0, nri_not_applied 0" \
	test "$(counter created_without_nri)" = 0 -a "$(counter nri_not_applied)" = 0
phase placed

# --- 3. refusals: CreateContainer fails with our reason, nothing ran ---
# refused POD QOS REASON ATTEMPTS [run-container options]: the pod, then
# ATTEMPTS creates, each refused with REASON.
refused() {
	local pod=$1 qos=$2 reason=$3 n=$4 out errs h cg tasks
	shift 4
	out=$(cri run-container "$pod" app --image "$CRI_IMAGE" --attempts "$n" --cmd "$FIRST_CMD" "$@")
	errs=$(jq -r '.error' <<<"$out" | grep -c "cpusetd: $reason")
	it_log "CreateContainer's error: $(jq -r .error <<<"$out" | head -n1)"
	check "$reason: CreateContainer refused with 'cpusetd: $reason' $errs of $n" test "$errs" = "$n"
	check "$reason: the runtime lists no container in the pod" test -z "$(pod_ctrs "$pod")"
	# The pod's cgroup holds only its sandbox's; no log line was written.
	cg=$IT_CPUSET$(pod_cgroup "$qos" "$pod")
	tasks=$(find "$cg" -mindepth 1 -type d | wc -l)
	check "$reason: no container cgroup in the pod's ($tasks dir: the sandbox)" test "$tasks" = 1
	check "$reason: no output from the container (no process ever ran)" \
		test -z "$(cat "$IT_WORK/logs/${CRI_NS}_${pod}_$(pod_uid "$pod")/app/"*.log 2>/dev/null)"
	check "$reason: status.json lists the error with its $n attempts" wait_for 10 jq_quiet \
		--arg ns "$CRI_NS" --arg p "$pod" --arg r "$reason" --argjson n "$n" \
		'.errors[] | select(.namespace == $ns and .pod == $p and .container == "app"
		  and .reason == $r and .action == "rejected" and .attempts == $n)' \
		"$IT_WORK/cpusetd/status.json"
}
must "refusal: pod x1 with weka.io/cores-ids: 1-x" run_pod x1 burstable weka.io/cores-ids=1-x
refused x1 burstable invalid_annotation 3 --cpu-limit 500
must "refusal: pod r1 (Guaranteed, 1 CPU: the pool would be empty)" run_pod r1 guaranteed
refused r1 guaranteed shared_pool_empty 1 --cpu-limit 1000 --memory-limit 67108864 --guaranteed
check "refusals: nri_refused_at_create 4 ($(counter nri_refused_at_create))" test "$(counter nri_refused_at_create)" = 4
check "refusals: nobody moved (g1 on 0, s1 on 1)" eval 'placed g1 app 0 && placed s1 app 1'
must "refusals: pods removed" eval 'remove_pod x1 burstable && remove_pod r1 guaranteed'
check "refusals: the errors go with their pods" wait_for 10 eval \
	'[ "$(st "[.errors[] | select(.pod == \"x1\" or .pod == \"r1\")] | length")" = 0 ]'
phase refusals

# --- 5. kill -9, restart: reconnected, re-synced, nothing moved ---
# sample FILE OUT STOP: every value FILE takes, every 10 ms, until STOP exists.
sample() {
	local v last=''
	while [ ! -e "$3" ]; do
		read -r v <"$1" 2>/dev/null || v=gone
		[ "$v" != "$last" ] && { echo "$v" >>"$2"; last=$v; }
		sleep 0.01
	done
}
g1_cpus=$(ctr_cgroup g1 app)/cpuset.cpus
sample "$g1_cpus" "$IT_WORK/g1.samples" "$IT_WORK/g1.stop" &
sampler=$!
daemon_kill9
must "kill -9: cpusetd starts again" daemon_start "$IT_WORK/nri.conf"
check "kill -9: reconnected (mode nri+bpf)" wait_for 15 connected
waits 'kill -9: re-synced (nri_synchronizes $(counter nri_synchronizes))' 10 eval '[ "$(counter nri_synchronizes)" -ge 1 ]'
live_ids() { cri ps | awk '$4 == "CONTAINER_RUNNING" || $4 == "SANDBOX_READY" {print $1}' | sort; }
status_ids() { st '.containers[].container_id' | sort; }
same_ids() { [ "$(live_ids)" = "$(status_ids)" ] && [ -n "$(live_ids)" ]; }
check "kill -9: status.json lists exactly the live containers and sandboxes ($(live_ids | wc -l))" \
	wait_for 10 same_ids
check "kill -9: g1 on 0, s1 on 1 (kernel and runtime record)" eval 'placed g1 app 0 && placed s1 app 1'
# The runtime's records are as the first daemon left them: nothing to
# answer (a node's first connection answers nearly every container).
check "kill -9: the re-sync sent the runtime no update ($(counter nri_updates_sent))" \
	test "$(counter nri_updates_sent)" = 0
# ... and found the table its start-up resync built from the bundles
# saying what the runtime says: kept, not rebuilt (resyncs: the start-up one).
check "kill -9: the re-sync kept the table (resyncs $(counter resyncs))" test "$(counter resyncs)" = 1
: >"$IT_WORK/g1.stop"
wait "$sampler"
check "kill -9: the integer container never moved (cpuset.cpus every 10 ms: $(tr '\n' ' ' <"$IT_WORK/g1.samples"))" \
	test "$(cat "$IT_WORK/g1.samples")" = 0
phase kill-9

# --- 6. containerd restarted; meanwhile NRI on, our plugin not connected ---
connects=$(st .daemon.nri.connects)
sock=$CRI_NRI_SOCK
CRI_NRI_SOCK=$IT_WORK/nri/elsewhere.sock
must "containerd restarted with its NRI socket elsewhere" cri_containerd_restart
CRI_NRI_SOCK=$sock
waits 'not connected: status.json says so ($(st .daemon.nri.state), mode $(st .daemon.mode))' \
	10 eval '! connected && [ "$(st .daemon.mode)" = bpf ]'
must "not connected: pod s3 and its container" run_pod s3 burstable
must "not connected: CreateContainer + StartContainer" run_ctr s3 app --cpu-limit 500 --cmd "$FIRST_CMD"
check "not connected: BPF places it on the pool (1) ($(wait_for 10 allowed_is s3 app 1; allowed s3 app))" \
	allowed_is s3 app 1
waits 'not connected: created_without_nri 1 ($(counter created_without_nri))' \
	10 eval '[ "$(counter created_without_nri)" = 1 ]'
check "not connected: logged once for pod s3" \
	test "$(grep -c "$CRI_NS/s3/.*created without an NRI CreateContainer (NRI not connected)" "$IT_WORK/daemon.log")" = 1
must "containerd restarted on its NRI socket" cri_containerd_restart
waits 'containerd restart: reconnected (connects $connects -> $(st .daemon.nri.connects))' \
	15 eval 'connected && [ "$(st .daemon.nri.connects)" -gt "$connects" ]'
waits 'containerd restart: the runtime record of s3 corrected to 1 ($(where s3 app))' 10 placed s3 app 1
check "containerd restart: g1 on 0, s1 on 1 (kernel and runtime record)" eval 'placed g1 app 0 && placed s1 app 1'
phase containerd-restart

# --- 7. slower than the request timeout (SIGSTOP): fail-open, BPF places ---
must "stopped: pod s4" run_pod s4 burstable
# Placed at create and applied: a request the runtime abandoned may be
# answered after SIGCONT (placed) and then found not applied.
applied() { echo $(($(counter nri_placed_at_create) - $(counter nri_not_applied))); }
placed_before=$(applied)
without=$(($(counter created_without_nri) + $(counter nri_not_applied)))
connects=$(st .daemon.nri.connects)
kill -STOP "$IT_DAEMON"
ok=0
run_ctr s4 app --cpu-limit 500 --cmd "$FIRST_CMD" && ok=1
took=$(jq -r '(.create_ms // 0) + (.start_ms // 0) | floor' <<<"$CTR_OUT")
check "stopped: the create goes on without cpusetd after the request timeout (create+start ${took} ms)" \
	test "$ok" = 1 -a "$took" -ge 1900
first_is 'stopped: its first instruction ran where the runtime put it, 0-1' s4 app 0-1
kill -CONT "$IT_DAEMON"
waits 'stopped: after SIGCONT BPF places it on 1 ($(allowed s4 app))' 10 allowed_is s4 app 1
# Counted once, as created_without_nri when the daemon reads the cgroup's
# mkdir first, as nri_not_applied when it reads the runtime's abandoned
# request first (both wait in their queues while it is stopped).
missed() { echo $(($(counter created_without_nri) + $(counter nri_not_applied))); }
waits 'stopped: counted once, created_without_nri + nri_not_applied $without -> $(missed) ($(counter created_without_nri) + $(counter nri_not_applied))' \
	10 eval '[ "$(missed)" = $((without + 1)) ]' ||
	grep "$CRI_NS/s4/app " "$IT_WORK/daemon.log" | sed 's/^/# /'
waits 'stopped: the plugin reconnects (connects $connects -> $(st .daemon.nri.connects))' \
	15 eval 'connected && [ "$(st .daemon.nri.connects)" -gt "$connects" ]'
must "recovered: another container in s4" run_ctr s4 app2 --cpu-limit 500 --cmd "$FIRST_CMD"
waits 'recovered: placed at create again, applied by the runtime (placed - not applied $placed_before -> $(applied))' \
	10 eval '[ "$(applied)" = $((placed_before + 1)) ]'
waits 'stopped: the runtime record of s4 corrected to 1 ($(where s4 app))' 10 placed s4 app 1
first_is 'recovered: its first instruction on 1' s4 app2 1
check "recovered: everything where it belongs" \
	eval 'placed g1 app 0 && placed s1 app 1 && placed s3 app 1 && placed s4 app 1 && placed s4 app2 1'
check "no protocol error, no failed update ($(st .daemon.nri.protocol_errors), $(st .daemon.nri.update_failures))" \
	test "$(st .daemon.nri.protocol_errors)" = 0 -a "$(st .daemon.nri.update_failures)" = 0
phase sigstop

# The .prom times every request answered: at least every CreateContainer
# placed or refused by this daemon (a late one answered with the
# placement in force counts too), one Synchronize per connection.
prom_count() { sed -n "s/^cpusetd_nri_request_seconds_count{method=\"$1\"} //p" "$CRI_PROM"; }
prom_ok() {
	local created sync want
	created=$(prom_count CreateContainer) sync=$(prom_count Synchronize)
	want=$(($(counter nri_placed_at_create) + $(counter nri_refused_at_create)))
	[ -n "$created" ] && [ "$created" -ge "$want" ] && [ "$created" -gt 0 ] &&
		[ "$sync" = "$(counter nri_synchronizes)" ]
}
waits '.prom: cpusetd_nri_request_seconds counts every CreateContainer ($(prom_count CreateContainer)) and Synchronize ($(prom_count Synchronize))' \
	5 prom_ok

cri_finish "$v:"
