#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# BPF telemetry on this real kernel (2 CPUs, v1 cpuset): a noisy
# neighbour on an integer container's CPU, and a shared container that
# escaped its cpuset, seen through `bpftool -j map dump pinned` as an SRE
# would. Then the raw_tp twins and the wakeup-timestamp wait source.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start telemetry kubepods
command -v stress-ng >/dev/null || it_skip_all "stress-ng missing (make deps)"
command -v bpftool >/dev/null || it_skip_all "bpftool missing (make deps)"
TEL=$IT_PIN/v$IT_LAYOUT

# --- bpftool readers: .formatted is the BTF view (named fields) ---
dump() { bpftool -j map dump pinned "$TEL/$1" 2>/dev/null; }
cpu_stat() { dump cpu_stats | jq -r --argjson c "$1" ".[] | select(.formatted.key == \$c) | .formatted.value.$2"; }
cg_stat() { dump cgroup_stats | jq -r --argjson id "$1" "[.[] | select(.formatted.key == \$id) | .formatted.value.$2][0] // 0"; }
owner_of() { dump cpu_owner | jq -r --argjson c "$1" '.[] | select(.formatted.key == $c) | .formatted.value.cgroup_id'; }
foreign_ns() {
	dump foreign | jq -r --argjson c "$1" --argjson id "$2" \
		'[.[] | select(.formatted.key.cpu == $c and .formatted.key.cgroup_id == $id) | .formatted.value.ns][0] // 0'
}
# gt A B: integer A > B (counters are u64; bash arithmetic is enough here).
gt() { [ "${1:-0}" -gt "${2:-0}" ]; }
cpu_stat_gt() { gt "$(cpu_stat "$1" "$2")" "$3"; }
cg_stat_gt() { gt "$(cg_stat "$1" "$2")" "$3"; }
foreign_gt() { gt "$(foreign_ns "$1" "$2")" "$3"; }
# The same figures as Prometheus and a person see them.
PROM=$IT_WORK/prom/cpusetd.prom
# prom_gt SERIES MIN: the .prom sample of SERIES (name{labels}, exact) > MIN.
prom_gt() { awk -v s="$1" -v min="$2" '$1 == s && $2 + 0 > min + 0 { f = 1 } END { exit !f }' "$PROM"; }
# prom_ct_gt NAME CONTAINER_ID MIN: the container's sample of NAME > MIN.
prom_ct_gt() {
	awk -v n="$1{" -v id="container_id=\"$2\"" -v min="$3" \
		'index($1, n) == 1 && index($0, id) && $NF + 0 > min + 0 { f = 1 } END { exit !f }' "$PROM"
}
# top_cpu_gt CPU FIELD MIN: cpusetctl top --json over 0.5 s says FIELD > MIN.
top_cpu_gt() {
	"$IT_OUT/cpusetctl" top --json --count 1 --interval 0.5 --state-dir "$IT_WORK/state" \
		--pin-dir "$IT_PIN" | jq -e --argjson c "$1" --argjson min "$3" \
		".cpus[] | select(.cpu == \$c) | .$2 > \$min" >/dev/null
}
# top_cpu_is CPU FIELD VALUE: ... FIELD == VALUE.
top_cpu_is() {
	"$IT_OUT/cpusetctl" top --json --count 1 --interval 0.5 --state-dir "$IT_WORK/state" \
		--pin-dir "$IT_PIN" | jq -e --argjson c "$1" --argjson v "$3" \
		".cpus[] | select(.cpu == \$c) | .$2 == \$v" >/dev/null
}
cg_id() { stat -c %i "$IT_CPUSET$(jq -r .linux.cgroupsPath "$IT_WORK/bundles/$(cid "$1/$2")/config.json")"; }
cg_dir() { echo "$IT_CPUSET$(jq -r .linux.cgroupsPath "$IT_WORK/bundles/$(cid "$1/$2")/config.json")"; }
# busy POD NAME: a busy loop inside the container (joins its cgroup).
busy() { $IT_RUNC exec -d "$(cid "$1/$2")" sh -c 'while :; do :; done'; }
# busy_pid POD NAME: the busy loop's pid (not the container's init).
busy_pid() { grep -vx "$(pid_of "$1" "$2")" "$(cg_dir "$1" "$2")/cgroup.procs" | head -n1; }

# CPU 0 reserved for the system, so the integer container gets CPU 1.
check "daemon starts with telemetry" daemon_start "$ROOT" --reserved-cpus 0 --export-interval 1 --telemetry full
check "telemetry attached via tp_btf" wait_for 5 grep -q "telemetry attached via tp_btf" "$IT_WORK/daemon.log"
check "every telemetry map is pinned under v$IT_LAYOUT/" bash -c \
	"for m in cpu_stats cgroup_stats cpu_owner foreign cpu_node; do [ -e $TEL/\$m ] || exit 1; done"

pod_start s1 burstable 500
pod_start g1 guaranteed 1000
check "integer container owns CPU 1" wait_for 5 allowed_is g1 app 1
G1=$(cg_id g1 app)
S1=$(cg_id s1 app)
check "cpu_owner[1] is the integer container" wait_for 5 test "$(owner_of 1)" = "$G1"
check "cpu_owner[0] is the pool (0)" test "$(owner_of 0)" = 0
busy g1 app
wait_for 5 cg_stat_gt "$G1" cpu_ns 0
G1_V0=$(cg_stat "$G1" violations)

# --- the noisy neighbour: outside kubepods, pinned to CPU 1 ---
NOISY=$IT_CPUSET$IT_CG/noisy
mkdir -p "$NOISY"
cat "$IT_CPUSET$IT_CG/cpuset.cpus" >"$NOISY/cpuset.cpus"
cat "$IT_CPUSET$IT_CG/cpuset.mems" >"$NOISY/cpuset.mems"
NOISY_ID=$(stat -c %i "$NOISY")
f0=$(cpu_stat 1 foreign_ns); sw0=$(cpu_stat 1 switches); w0=$(cg_stat "$G1" rq_wait_ns)
sh -c "echo \$\$ >$NOISY/cgroup.procs; exec taskset -c 1 stress-ng --cpu 1 --timeout 20s --quiet" &
NOISY_PID=$!
check "foreign ns on CPU 1 rises" wait_for 10 cpu_stat_gt 1 foreign_ns $((f0 + 200000000))
check "foreign map names the intruder's cgroup on CPU 1" wait_for 5 foreign_gt 1 "$NOISY_ID" 100000000
check "the owner's run-queue wait rises" wait_for 10 cg_stat_gt "$G1" rq_wait_ns $((w0 + 10000000))
check "CPU 1's switch counter moves" cpu_stat_gt 1 switches "$sw0"
check "CPU 1's run-queue wait histogram has samples" bash -c \
	"[ \$(bpftool -j map dump pinned $TEL/cpu_stats | jq '[.[] | select(.formatted.key == 1) | .formatted.value.rq_wait_hist[]] | add') -gt 0 ]"
check "the owner's own time is not foreign" test "$(foreign_ns 1 "$G1")" = 0
check ".prom: foreign seconds on CPU 1" wait_for 5 prom_gt 'cpusetd_cpu_foreign_seconds_total{cpu="1"}' 0.2
check ".prom: the owner's run-queue wait" wait_for 5 \
	prom_ct_gt cpusetd_container_runqueue_wait_seconds_total "$(cid g1/app)" 0.01
check ".prom: CPU 1's context switches" wait_for 5 prom_gt 'cpusetd_cpu_context_switches_total{cpu="1"}' 0
check "cpusetctl top: foreign time on CPU 1 now" wait_for 5 top_cpu_gt 1 foreign_s_per_s 0.1
check "cpusetctl top: run-queue wait on CPU 1 now" wait_for 5 top_cpu_gt 1 rq_wait_s_per_s 0
check "cpusetctl top: switches on CPU 1 now" wait_for 5 top_cpu_gt 1 switches_per_s 0
check "cpusetctl top: no foreign time on pool CPU 0" top_cpu_is 0 foreign_s_per_s 0
kill "$NOISY_PID" 2>/dev/null; wait "$NOISY_PID" 2>/dev/null

# --- a shared container that escaped its cpuset ---
busy s1 app
wait_for 5 test -n "$(busy_pid s1 app)"
check "shared container placed on the pool (CPU 0)" allowed_is s1 app 0
check "no violation while it stays on its pool" test "$(cg_stat "$S1" violations)" = 0
# The daemon undoes a foreign write at once: stopped, it cannot, while
# its BPF programs go on counting.
kill -STOP "$IT_DAEMON"
echo 0-1 >"$(cg_dir s1 app)/cpuset.cpus"
taskset -pc 1 "$(busy_pid s1 app)" >/dev/null
check "escaped shared container counted as a placement violation" wait_for 5 cg_stat_gt "$S1" violations 0
check "... on CPU 1" test "$(cg_stat "$S1" last_violation_cpu)" = 1
kill -CONT "$IT_DAEMON"
check "the foreign write is undone once the daemon runs" wait_for 5 allowed_is s1 app 0
# Counted from its first exec on: before it, runc may have written the
# parent's set over ours, which the exec check repairs (a real, brief
# violation; bpf/README.md "Telemetry maps").
check "the integer container has no violation once placed" test "$(cg_stat "$G1" violations)" = "$G1_V0"

# --- raw_tp twins (CPUSETD_BPF_NO_TP_BTF) and wakeup timestamps ---
daemon_stop
sw0=$(cpu_stat 0 switches)
CPUSETD_BPF_NO_TP_BTF=1 CPUSETD_TELEMETRY_WAIT_MAP=1 daemon_start "$ROOT" --reserved-cpus 0 --telemetry full
check "raw_tp fallback: telemetry attached via raw_tp" wait_for 5 \
	grep -q "telemetry attached via raw_tp, level full, run-queue wait from wakeup" "$IT_WORK/daemon.log"
check "raw_tp fallback: the pinned counters carry on" wait_for 5 cpu_stat_gt 0 switches "$sw0"
w0=$(cpu_stat 1 rq_wait_count)
check "raw_tp fallback: run-queue waits from wakeups" wait_for 5 cpu_stat_gt 1 rq_wait_count "$w0"
pod_stop g1
check "owner gone: cpu_owner[1] back to the pool" wait_for 5 test "$(owner_of 1)" = 0
check "owner gone: its cgroup_stats entry is dropped" wait_for 5 test "$(cg_stat "$G1" cpu_ns)" = 0
daemon_stop

it_done
