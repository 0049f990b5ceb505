#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Enforcement whatever the timing (issue 11): every placement is defended
# after it is written, every event is checked against the live kernel, a
# container with no task holds nothing, and a rejection has one moment:
# the container's own first exec, never while runc is still creating it.
# Real daemon, real runc, this kernel's cgroup v1; outcomes are waited on
# with generous timeouts, never raced.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start enforce kubepods
check "daemon starts" daemon_start "$ROOT"
hook=$(jq -r .daemon.write_hook "$IT_WORK/state/status.json")
it_log "foreign writes caught via: $hook"
check "a BPF hook on cpuset writes is attached" test "$hook" != none

pod_start s1 burstable 500
wait_for 30 allowed_is s1 app 0-1
pod_start g1 guaranteed 1000
check "integer container on CPU 0" wait_for 30 allowed_is g1 app 0
wait_for 30 allowed_is s1 app 1
g1_cpus=$IT_CPUSET$(cg_path guaranteed "$(uid g1)" "$(cid g1/app)")/cpuset.cpus

# --- 1. a foreign write is undone at once: worst of 5 within 100 ms ---
worst=0
for i in 1 2 3 4 5; do
	ms=$(ms_until_restored "$g1_cpus")
	[ "$ms" -gt "$worst" ] && worst=$ms
	sleep 0.2
done
it_log "foreign write restored: worst of 5 = ${worst} ms"
check "a foreign write is restored within 100 ms (worst of 5: ${worst} ms)" test "$worst" -le 100
check "the integer container is still on CPU 0" allowed_is g1 app 0
check "the writer is named in the log, once" bash -c \
	"[ \$(grep -c 'demo/g1/app ([0-9a-f]*): bash\[[0-9]*\] wrote cpuset.cpus 0-1; restored 0' $IT_WORK/daemon.log) -eq 1 ]"
check "foreign writes counted by writer" bash -c \
	"jq -e '.foreign_writers.bash >= 5 and .counters.foreign_restores >= 5' $IT_WORK/state/status.json >/dev/null"
check ".prom: foreign writes by comm" wait_for 30 grep -q \
	'^cpusetd_foreign_cpuset_writes_total{comm="bash"} [1-9]' "$IT_WORK/prom/cpusetd.prom"

# A writer that keeps fighting becomes a conflict, not a loop.
for i in 1 2 3 4 5 6 7 8; do echo 0-1 >"$g1_cpus"; sleep 0.05; done
check "a writer that keeps fighting: write_conflict listed" wait_for 30 bash -c \
	"jq -e '.errors[] | select(.pod == \"g1\" and .reason == \"write_conflict\" and .action == \"conflict\")' $IT_WORK/state/status.json >/dev/null"
check "... logged once as a conflict" bash -c \
	"[ \$(grep -c 'demo/g1/app .*write conflict: bash' $IT_WORK/daemon.log) -eq 1 ]"
# One more write, and once the daemon has handled it (its counter moved),
# the file must still hold the writer's value.
fw=$(jq .counters.foreign_writes "$IT_WORK/state/status.json")
echo 0-1 >"$g1_cpus"
wait_for 30 jq -e ".counters.foreign_writes > $fw" "$IT_WORK/state/status.json" >/dev/null
check "... and no longer restored" test "$(cat "$g1_cpus")" = 0-1
pod_stop g1
check "conflict error goes with the pod" wait_for 30 bash -c \
	"! jq -e '.errors[] | select(.pod == \"g1\")' $IT_WORK/state/status.json >/dev/null"
wait_for 30 allowed_is s1 app 0-1

# --- 2. the runtime's own set (linux.resources.cpu.cpus) ---
fw=$(jq .counters.foreign_writes "$IT_WORK/state/status.json")
container_start g2 POD guaranteed sandbox 0
container_start g2 app guaranteed container 1000 "" 0-1
check "runtime-set case: the container runs on its exclusive CPU" wait_for 30 allowed_is g2 app 0
check "runtime-set case: its cgroup says 0" test "$(cg_file g2 app cpuset.cpus)" = 0
pod_stop g2
wait_for 30 allowed_is s1 app 0-1
check "runtime-set case: the runtime's write is not a foreign write" \
	jq -e ".counters.foreign_writes == $fw" "$IT_WORK/state/status.json"

# --- 3. a killed container whose cgroup stays holds nothing ---
pod_start g3 guaranteed 1000
wait_for 30 allowed_is g3 app 0
wait_for 30 allowed_is s1 app 1
$IT_RUNC kill "$(cid g3/app)" KILL
t0=${EPOCHREALTIME/./}
wait_for 30 allowed_is s1 app 0-1
ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
it_log "exclusive CPU of a killed container released after ${ms} ms"
check "a killed container's CPU is back in the pool within 1 s (${ms} ms)" test "$ms" -le 1000
check "its cgroup is still there (runc keeps it until delete)" \
	test -d "$IT_CPUSET$(cg_path guaranteed "$(uid g3)" "$(cid g3/app)")"
check "status shows it exited, holding nothing" bash -c \
	"jq -e '.containers[] | select(.pod == \"g3\" and .container == \"app\") | .state == \"exited\"' $IT_WORK/state/status.json >/dev/null &&
	 jq -e '.reserved == \"\"' $IT_WORK/state/status.json >/dev/null"

# --- 4. kill -9, restart with that dead container present ---
daemon_kill9
daemon_start "$ROOT"
check "restart: the dead container is not admitted" bash -c \
	"jq -e '.reserved == \"\" and .shared_pool == \"0-1\"' $IT_WORK/state/status.json >/dev/null"
check "restart: the shared pool keeps both CPUs" wait_for 30 allowed_is s1 app 0-1
pod_start g4 guaranteed 1000
check "restart: a new integer pod gets the CPU" wait_for 30 allowed_is g4 app 0
pod_stop g4
pod_stop g3
wait_for 30 allowed_is s1 app 0-1

# --- 5. 100 rejections: runc run succeeds, dead within 2 s, reason kept ---
container_start rej POD guaranteed sandbox 0
ok_runs=0 dead=0 reasons=0
for i in $(seq 100); do
	IT_ATTEMPT=$i container_start rej app guaranteed container 4000 && ok_runs=$((ok_runs + 1))
	IT_ATTEMPT=$i wait_for 2 stopped rej app && dead=$((dead + 1))
	grep -q 'cpusetd: insufficient_cpus: needs 4 exclusive CPUs' \
		"$IT_WORK/pods/$(uid rej)/containers/app/termination" && reasons=$((reasons + 1))
	: >"$IT_WORK/pods/$(uid rej)/containers/app/termination"
	IT_ATTEMPT=$i container_stop rej app
done
check "100 rejections: runc run succeeded $ok_runs of 100" test "$ok_runs" = 100
check "100 rejections: dead within 2 s $dead of 100" test "$dead" = 100
check "100 rejections: reason in the termination file $reasons of 100" test "$reasons" = 100
check "the error is kept per pod, with its attempts" bash -c \
	"jq -e '.errors[] | select(.pod == \"rej\" and .container == \"app\" and .reason == \"insufficient_cpus\"
	  and .action == \"rejected\" and .attempts == 100 and .last >= .first)' $IT_WORK/state/status.json >/dev/null"
check "cpusetctl status shows the attempts" bash -c \
	"$IT_OUT/cpusetctl status --state-dir $IT_WORK/state | grep -q 'demo/rej/app: insufficient_cpus, rejected, 100 attempts'"
check ".prom: attempts per pod" wait_for 30 grep -q \
	'^cpusetd_pod_admission_error_attempts{k8s_namespace_name="demo",k8s_pod_name="rej",k8s_container_name="app",reason="insufficient_cpus",action="rejected"} 100$' \
	"$IT_WORK/prom/cpusetd.prom"
check "a rejected container is never logged as placed" bash -c \
	"! grep -E 'demo/rej/app \\([0-9a-f]+\\): (shared|integer)' $IT_WORK/daemon.log"
check "the shared pool never moved" allowed_is s1 app 0-1
container_stop rej POD
check "the error goes when the pod's last cgroup goes" wait_for 30 bash -c \
	"! jq -e '.errors[] | select(.pod == \"rej\")' $IT_WORK/state/status.json >/dev/null"

# --- 6. SIGSTOP, overflow, churn, SIGCONT: no ghost ---
kill -STOP "$IT_DAEMON"
pod_start gh guaranteed 1000	# its mkdir event is queued...
pod_stop gh			# ...and it is gone before the daemon runs
mkdir -p "$IT_CPUSET$ROOT/flood"
for i in $(seq 1500); do mkdir "$IT_CPUSET$ROOT/flood/d$i"; done
for i in $(seq 1500); do rmdir "$IT_CPUSET$ROOT/flood/d$i"; done
rmdir "$IT_CPUSET$ROOT/flood"
pod_start g5 guaranteed 1000	# made while stopped, still running
kill -CONT "$IT_DAEMON"
check "overflow seen: events lost and a resync" wait_for 30 bash -c \
	"jq -e '.counters.events_lost > 0 and .counters.resyncs >= 2' $IT_WORK/state/status.json >/dev/null"
check "no ghost: the container gone while stopped is not in the table" bash -c \
	"! jq -e '.containers[] | select(.pod == \"gh\")' $IT_WORK/state/status.json >/dev/null"
check "the container made while stopped is placed" wait_for 30 allowed_is g5 app 0
check "only it holds a CPU" bash -c "jq -e '.reserved == \"0\"' $IT_WORK/state/status.json >/dev/null"
check "the shared pool follows" wait_for 30 allowed_is s1 app 1
pod_stop g5
check "and gets the CPU back after" wait_for 30 allowed_is s1 app 0-1

# --- 7. the hooks a kernel without fexit and kprobes falls back to ---
# fanotify (a mark on the cpuset filesystem: free for every other write
# of the node) and, with it switched off, the write syscalls' tracepoints.
# Each must catch and undo a foreign write, name the writer, and never
# count the daemon's own writes.
mkdir "$IT_CPUSET$ROOT/unmanaged"
cp "$IT_CPUSET$ROOT/cpuset.mems" "$IT_CPUSET$ROOT/unmanaged/cpuset.mems"
for hook in fanotify syscall; do
	daemon_stop
	export CPUSETD_BPF_NO_FEXIT=1 CPUSETD_BPF_NO_KPROBE=1
	[ $hook = syscall ] && export CPUSETD_NO_FANOTIFY=1
	check "$hook: daemon starts" daemon_start "$ROOT"
	unset CPUSETD_BPF_NO_FEXIT CPUSETD_BPF_NO_KPROBE CPUSETD_NO_FANOTIFY
	check "$hook: the write hook attached is $hook" \
		test "$(jq -r .daemon.write_hook "$IT_WORK/state/status.json")" = $hook
	# A normal run: runc writes its containers' cpuset files as it makes
	# them (the parent's sets copied into a new v1 cpuset, the bundle's
	# cpus); none of that is a foreign write (issue 22 L8).
	pod_start n$hook burstable 500
	pod_start i$hook guaranteed 1000
	check "$hook: normal run: integer container on CPU 0" wait_for 30 allowed_is i$hook app 0
	check "$hook: normal run: shared containers on the pool" wait_for 30 allowed_is n$hook app 1
	pod_stop i$hook
	container_start r$hook POD guaranteed sandbox 0
	container_start r$hook app guaranteed container 1000 "" 0-1
	check "$hook: normal run: runtime-set container on CPU 0" wait_for 30 allowed_is r$hook app 0
	pod_stop r$hook
	pod_stop n$hook
	wait_for 30 allowed_is s1 app 0-1
	wait_for 30 bash -c "! jq -e '.containers[] | select(.pod == \"n$hook\")' \
		$IT_WORK/state/status.json >/dev/null"
	check "$hook: a normal run of containers counts no foreign write" \
		jq -e '.counters.foreign_writes == 0' "$IT_WORK/state/status.json"
	pod_start g6$hook guaranteed 1000
	check "$hook: integer container on CPU 0" wait_for 30 allowed_is g6$hook app 0
	wait_for 30 allowed_is s1 app 1
	f=$IT_CPUSET$(cg_path guaranteed "$(uid g6$hook)" "$(cid g6$hook/app)")/cpuset.cpus
	fw0=$(jq .counters.foreign_writes "$IT_WORK/state/status.json")
	worst=0
	for i in 1 2 3; do
		ms=$(ms_until_restored "$f")
		[ "$ms" -gt "$worst" ] && worst=$ms
		sleep 0.2
	done
	it_log "$hook: foreign write restored: worst of 3 = ${worst} ms"
	check "$hook: a foreign write is restored within 100 ms (worst of 3: ${worst} ms)" \
		test "$worst" -le 100
	check "$hook: the writer is named in the log" grep -q \
		"demo/g6$hook/app ([0-9a-f]*): bash\[[0-9]*\] wrote cpuset.cpus 0-1; restored 0" \
		"$IT_WORK/daemon.log"
	# Writes elsewhere on the filesystem: an unmanaged cgroup's cpuset, a
	# managed one's other file.
	echo 0-1 >"$IT_CPUSET$ROOT/unmanaged/cpuset.cpus"
	echo 0 >"${f%/cpuset.cpus}/notify_on_release"
	# Three foreign writes, three restores by the daemon: exactly three
	# counted (its own restores are not foreign), once the status is out.
	check "$hook: exactly the 3 foreign writes counted, not the daemon's own" wait_for 30 \
		jq -e ".counters.foreign_writes - $fw0 == 3 and .counters.foreign_restores >= 3" \
		"$IT_WORK/state/status.json"
	sleep 0.5
	it_log "$hook: foreign writes counted: $(jq ".counters.foreign_writes - $fw0" "$IT_WORK/state/status.json")"
	check "$hook: ... and still 3 once the dust settles" \
		jq -e ".counters.foreign_writes - $fw0 == 3" "$IT_WORK/state/status.json"
	pod_stop g6$hook
	wait_for 30 allowed_is s1 app 0-1
done
rmdir "$IT_CPUSET$ROOT/unmanaged"

it_done
