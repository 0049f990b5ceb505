#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The telemetry levels (config `telemetry`, bpf/telemetry.bpf.c "Levels")
# on this real kernel (2 CPUs): the key refused when wrong; then the same
# noisy neighbour on an integer container's CPU under the default `basic`
# and under `full`. Both count the intruder's time on the owned CPU, and
# count it right (against the intruder's own run time from
# /proc/PID/schedstat); basic leaves the run-queue wait, the per-container
# figures and the NUMA program out: absent from the .prom file, null in
# cpusetctl top, never loaded; full has them.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start tel_level kubepods
command -v stress-ng >/dev/null || it_skip_all "stress-ng missing (make deps)"
command -v bpftool >/dev/null || it_skip_all "bpftool missing (make deps)"
TEL=$IT_PIN/v$IT_LAYOUT
PROM=$IT_WORK/prom/cpusetd.prom

dump() { bpftool -j map dump pinned "$TEL/$1" 2>/dev/null; }
cpu_stat() { dump cpu_stats | jq -r --argjson c "$1" ".[] | select(.formatted.key == \$c) | .formatted.value.$2"; }
cg_entries() { dump cgroup_stats | jq length; }
foreign_ns() {
	dump foreign | jq -r --argjson c "$1" --argjson id "$2" \
		'[.[] | select(.formatted.key.cpu == $c and .formatted.key.cgroup_id == $id) | .formatted.value.ns][0] // 0'
}
gt() { [ "${1:-0}" -gt "${2:-0}" ]; }
# The daemon's own BPF programs, by name (from its fds: not another
# daemon's on this machine).
daemon_progs() {
	grep -h '^prog_id:' /proc/"$IT_DAEMON"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u |
		while read -r id; do bpftool -j prog show id "$id" | jq -r .name; done
}
has_prog() { daemon_progs | grep -qx "$1"; }
# no_prog PREFIX: none of the daemon's programs is named PREFIX...
no_prog() { ! daemon_progs | grep -q "^$1"; }
top_json() {
	"$IT_OUT/cpusetctl" top --json --count 1 --interval 0.5 --state-dir "$IT_WORK/state" \
		--pin-dir "$IT_PIN"
}
cg_id() { stat -c %i "$IT_CPUSET$(jq -r .linux.cgroupsPath "$IT_WORK/bundles/$(cid "$1/$2")/config.json")"; }
busy() { $IT_RUNC exec -d "$(cid "$1/$2")" sh -c 'while :; do :; done'; }
run_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# --- the key ---
"$IT_OUT/cpusetd" --telemetry everything --check-config >/dev/null 2>"$IT_WORK/err"
check "--telemetry everything: refused (exit 1)" test $? -eq 1
check "... in one line naming the choices" \
	grep -qx "cpusetd: --telemetry: expected basic|full, got 'everything'" "$IT_WORK/err"
printf 'telemetry = Full\n' >"$IT_WORK/bad.conf"
"$IT_OUT/cpusetd" --config "$IT_WORK/bad.conf" --check-config >/dev/null 2>"$IT_WORK/err"
check "telemetry = Full in the file: refused with file and line" bash -c \
	"[ $? -eq 1 ] && grep -qx 'cpusetd: $IT_WORK/bad.conf:1: telemetry: expected basic|full, got .Full.' $IT_WORK/err"
check "--check-config prints the default: telemetry = basic" bash -c \
	"'$IT_OUT/cpusetd' --config '$IT_WORK/empty.conf' --check-config 2>/dev/null | grep -qx 'telemetry = basic'"

# One noisy-neighbour round at the level running: stress-ng outside
# kubepods, pinned to the integer container's CPU 1, for 4 s. Sets
# FOREIGN (the map's ns for it on CPU 1) and HOG (its own run time, ns).
NOISY=$IT_CPUSET$IT_CG/noisy
mkdir -p "$NOISY"
cat "$IT_CPUSET$IT_CG/cpuset.cpus" >"$NOISY/cpuset.cpus"
cat "$IT_CPUSET$IT_CG/cpuset.mems" >"$NOISY/cpuset.mems"
NOISY_ID=$(stat -c %i "$NOISY")
noisy_round() {
	local f0 pid h0 h1
	f0=$(foreign_ns 1 "$NOISY_ID")
	sh -c "echo \$\$ >$NOISY/cgroup.procs; exec taskset -c 1 stress-ng --cpu 1 --timeout 20s --quiet" &
	NOISY_PID=$!
	# the worker (stress-ng forks it) is the busy one: the child
	wait_for 5 pgrep -P "$NOISY_PID" >/dev/null
	pid=$(pgrep -P "$NOISY_PID" | head -n1)
	h0=$(run_ns "$pid")
	F0=$(foreign_ns 1 "$NOISY_ID")
	sleep 4
	h1=$(run_ns "$pid")
	FOREIGN=$(($(foreign_ns 1 "$NOISY_ID") - F0))
	HOG=$((h1 - h0))
	it_log "foreign ns on CPU 1 $FOREIGN, the intruder's run time $HOG ns (before it: $f0)"
}
# within PCT % of each other, both > 0.5 s
close() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(a > 5e8 && b > 5e8 && (a - b < b * p / 100) && (b - a < b * p / 100)) }'; }

# --- basic (the default) ---
check "daemon starts (default level)" daemon_start "$ROOT" --reserved-cpus 0 --export-interval 1
check "log: level basic, no wait source" wait_for 5 \
	grep -q "telemetry attached via [a-z_]*, level basic, run-queue wait from none" "$IT_WORK/daemon.log"
check "status.json: telemetry basic" wait_for 5 \
	bash -c "jq -e '.daemon.telemetry == \"basic\"' $IT_WORK/state/status.json >/dev/null"
check ".prom: build_info says telemetry=\"basic\"" wait_for 5 \
	grep -q '^cpusetd_build_info{.*,telemetry="basic"} 1$' "$PROM"
check "basic: the switch program loaded" has_prog switch_btf
check "basic: no sched_migrate_task program" no_prog migrate_
check "basic: no wakeup programs" no_prog wakeup
pod_start g1 guaranteed 1000
check "integer container owns CPU 1" wait_for 5 allowed_is g1 app 1
G1=$(cg_id g1 app)
busy g1 app
w0=$(cpu_stat 1 rq_wait_count)
noisy_round
check "basic: the intruder's time on owned CPU 1 counted" gt "$FOREIGN" 500000000
check "basic: ... and true: within 10 % of its own run time" close "$FOREIGN" "$HOG" 10
check "basic: .prom foreign seconds on CPU 1" wait_for 5 \
	awk '$1 == "cpusetd_cpu_foreign_seconds_total{cpu=\"1\"}" && $2 > 0.5 { f = 1 } END { exit !f }' "$PROM"
check "basic: cpusetctl top sees the foreign time on CPU 1" bash -c \
	"$(declare -f top_json); IT_OUT=$IT_OUT IT_WORK=$IT_WORK IT_PIN=$IT_PIN
	 top_json | jq -e '.telemetry == \"basic\" and (.cpus[] | select(.cpu == 1)
		| .foreign_s_per_s > 0.1 and .rq_wait_s_per_s == null)' >/dev/null"
kill "$NOISY_PID" 2>/dev/null; wait "$NOISY_PID" 2>/dev/null
check "basic: switches and busy time counted on CPU 1" \
	bash -c "[ $(cpu_stat 1 switches) -gt 0 ] && [ $(cpu_stat 1 busy_ns) -gt 0 ]"
check "basic: no run-queue wait read (CPU 1's count unchanged)" test "$(cpu_stat 1 rq_wait_count)" = "$w0"
check "basic: no per-container stats entry" test "$(cg_entries)" = 0
check "basic: .prom has no run-queue histogram" bash -c "! grep -q '^cpusetd_cpu_runqueue_wait' $PROM"
check "basic: .prom has no per-container telemetry" bash -c \
	"! grep -Eq '^cpusetd_container_(cpu_seconds|runqueue|preemptions|placement_violations|numa)' $PROM"
check "basic: .prom still has the container's placement" \
	grep -q "^cpusetd_container_cpuset_info{.*container_id=\"$(cid g1/app)\"" "$PROM"
daemon_stop
# the raw_tp twin of basic's program (kernels without tp_btf) loads and counts
sw0=$(cpu_stat 0 switches)
CPUSETD_BPF_NO_TP_BTF=1 daemon_start "$ROOT" --reserved-cpus 0
check "basic via raw_tp: attached" wait_for 5 \
	grep -q "telemetry attached via raw_tp, level basic" "$IT_WORK/daemon.log"
check "basic via raw_tp: the pinned switch counter moves" wait_for 5 \
	bash -c "[ \$(bpftool -j map dump pinned $TEL/cpu_stats | jq '.[] | select(.formatted.key == 0) | .formatted.value.switches') -gt $sw0 ]"
daemon_stop

# --- full ---
check "daemon starts with telemetry = full" \
	daemon_start "$ROOT" --reserved-cpus 0 --export-interval 1 --telemetry full
check "log: level full" wait_for 5 grep -q "level full, run-queue wait from" "$IT_WORK/daemon.log"
check "status.json: telemetry full" wait_for 5 \
	bash -c "jq -e '.daemon.telemetry == \"full\"' $IT_WORK/state/status.json >/dev/null"
check "full: sched_migrate_task loaded" has_prog migrate_btf
noisy_round
check "full: the intruder's time on owned CPU 1 counted" gt "$FOREIGN" 500000000
check "full: ... and true: within 10 % of its own run time" close "$FOREIGN" "$HOG" 10
kill "$NOISY_PID" 2>/dev/null; wait "$NOISY_PID" 2>/dev/null
check "full: run-queue waits read on CPU 1" wait_for 5 bash -c \
	"[ \$(bpftool -j map dump pinned $TEL/cpu_stats | jq '.[] | select(.formatted.key == 1) | .formatted.value.rq_wait_count') -gt $w0 ]"
check "full: the integer container's stats entry" wait_for 5 bash -c \
	"bpftool -j map dump pinned $TEL/cgroup_stats | jq -e 'any(.[]; .formatted.key == $G1 and .formatted.value.cpu_ns > 0)' >/dev/null"
check "full: .prom has the run-queue histogram" wait_for 5 \
	grep -q '^cpusetd_cpu_runqueue_wait_seconds_count{cpu="1"} [1-9]' "$PROM"
check "full: .prom has the container's CPU seconds" wait_for 5 \
	grep -q "^cpusetd_container_cpu_seconds_total{.*container_id=\"$(cid g1/app)\"" "$PROM"
daemon_stop
pod_stop g1
rmdir "$NOISY" 2>/dev/null

it_done
