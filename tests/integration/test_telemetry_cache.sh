#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The per-CPU cgroup cache of the sched_switch telemetry (bpf/telemetry.bpf.c,
# struct cg_cache) on this real kernel: the placement map changes under a
# cgroup whose css_set is cached on every switch-in, and the exported
# figures follow within the cache's lifetime (4 ms), never stay wrong, and
# a cgroup that is let go is not re-created by a cached entry; and, with
# that lifetime stretched, a bump of the placement generation is what
# makes a change seen at once. Also: the
# run-queue clock the programs time runs with agrees with the kernel's own
# run time of the tasks, and the run-queue wait they take from
# sched_info.run_delay with the kernel's own sum of it.
#
# The cgroup is a host cgroup of this test's own subtree (outside the
# kubepods root, so the daemon never manages it); the test writes its
# placement entry itself, through bpftool on the pinned map, as the
# daemon's controller would.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start telemetry_cache kubepods
command -v stress-ng >/dev/null || it_skip_all "stress-ng missing (make deps)"
command -v bpftool >/dev/null || it_skip_all "bpftool missing (make deps)"
TEL=$IT_PIN/v$IT_LAYOUT

dump() { bpftool -j map dump pinned "$TEL/$1" 2>/dev/null; }
cpu_stat() { dump cpu_stats | jq -r --argjson c "$1" ".[] | select(.formatted.key == \$c) | .formatted.value.$2"; }
# cg_stat ID FIELD: the field of cgroup_stats[ID]; "none" without an entry.
cg_stat() { dump cgroup_stats | jq -r --argjson id "$1" "[.[] | select(.formatted.key == \$id) | .formatted.value.$2][0] // \"none\""; }
gt() { [ "${1:-0}" -gt "${2:-0}" ] 2>/dev/null; }
cg_stat_gt() { gt "$(cg_stat "$1" "$2")" "$3"; }

# Little-endian hex bytes for bpftool: le32 N, le64 N.
le() { printf "%0$(($1 * 2))x" "$2" | sed 's/../& /g' | awk '{ for (i = NF; i >= 1; i--) printf "%s ", $i }'; }
# placement_set ID CPUMASK: a shared container's entry (struct
# cpusetd_placement: kind, verify_pending, cpus[16], reject, pad), cpus in
# the first word.
placement_set() {
	local v
	v="$(le 4 1) $(le 4 0) $(le 8 "$2")"
	for _ in $(seq 15); do v="$v $(le 8 0)"; done
	v="$v $(le 4 0) $(le 4 0)"
	# shellcheck disable=SC2046,SC2086 # one hex byte per word
	bpftool map update pinned "$TEL/placement" key hex $(le 8 "$1") value hex $v
}
# shellcheck disable=SC2046
placement_del() { bpftool map delete pinned "$TEL/placement" key hex $(le 8 "$1"); }
# shellcheck disable=SC2046
stats_del() { bpftool map delete pinned "$TEL/cgroup_stats" key hex $(le 8 "$1"); }

switches_gt() { gt "$(cpu_stat 1 switches)" "$1"; }
# switches_pass N: CPU 1 made N more context switches from now on.
switches_pass() {
	local s0
	s0=$(cpu_stat 1 switches)
	wait_for 20 switches_gt $((s0 + $1))
}

# run_ns: the kernel's run time (ns, /proc/PID/schedstat field 1) of every
# task in the host cgroup, summed.
run_ns() {
	local t sum=0 ns
	for t in $(cat "$HOST/tasks"); do
		read -r ns _ <"/proc/$t/schedstat" 2>/dev/null && sum=$((sum + ns))
	done
	echo "$sum"
}
run_ns_ge() { [ "$(run_ns)" -ge "$1" ]; }
# wait_ns: their run-queue wait (ns, /proc/PID/schedstat field 2), summed.
wait_ns() {
	local t sum=0 ns wait
	for t in $(cat "$HOST/tasks"); do
		read -r ns wait _ <"/proc/$t/schedstat" 2>/dev/null && sum=$((sum + wait))
	done
	echo "$sum"
}

# The hogs go before it_cleanup removes their cgroup.
stop_hogs() {
	local t
	for t in $(cat "$HOST/tasks" 2>/dev/null); do kill -KILL "$t" 2>/dev/null; done
	wait "$HOGS" 2>/dev/null
}

check "daemon starts with telemetry" daemon_start "$ROOT" --reserved-cpus 0 --telemetry full
check "telemetry attached via tp_btf" wait_for 5 grep -q "telemetry attached via tp_btf" "$IT_WORK/daemon.log"
check "the placement map is pinned" test -e "$TEL/placement"

HOST=$IT_CPUSET$IT_CG/host
mkdir -p "$HOST"
cat "$IT_CPUSET$IT_CG/cpuset.cpus" >"$HOST/cpuset.cpus"
cat "$IT_CPUSET$IT_CG/cpuset.mems" >"$HOST/cpuset.mems"
HID=$(stat -c %i "$HOST")
# Two CPU hogs sharing CPU 1: the scheduler switches between them every
# few ms, so their css_set is in CPU 1's cache all the time.
sh -c "echo \$\$ >$HOST/cgroup.procs; exec taskset -c 1 stress-ng --cpu 2 --timeout 120s --quiet" &
HOGS=$!
trap 'stop_hogs; it_cleanup' EXIT
check "the hogs run on CPU 1" wait_for 5 bash -c "[ \$(wc -l <$HOST/tasks) -ge 3 ]"
switches_pass 200
check "unmanaged: no stats entry for the host cgroup" test "$(cg_stat "$HID" cpu_ns)" = none

placement_set "$HID" 3
check "made managed while cached: its run time counts" wait_for 5 cg_stat_gt "$HID" cpu_ns 0
check "allowed on CPUs 0-1: no violation" test "$(cg_stat "$HID" violations)" = 0

# rq->clock against the kernel's own account (sum_exec_runtime, on
# rq_clock_task) over at least a second of their run time; the two differ
# by the runs not yet charged at either end (a few ms each) and by
# stolen time, which only rq->clock includes.
# The same window for the run-queue wait (the two hogs wait about as long
# as they run), which the programs take from the growth of each task's
# run_delay between its switch-in and its switch-out: against the tasks'
# run_delay it may differ only by the waits at either end (seen: +4 %).
b0=$(cg_stat "$HID" cpu_ns); k0=$(run_ns); bw0=$(cg_stat "$HID" rq_wait_ns); kw0=$(wait_ns)
wait_for 30 run_ns_ge $((k0 + 1000000000))
b1=$(cg_stat "$HID" cpu_ns); k1=$(run_ns); bw1=$(cg_stat "$HID" rq_wait_ns); kw1=$(wait_ns)
db=$((b1 - b0)); dk=$((k1 - k0)); dbw=$((bw1 - bw0)); dkw=$((kw1 - kw0))
it_log "run time: BPF $db ns, kernel $dk ns; run-queue wait: BPF $dbw ns, kernel $dkw ns"
check "run time on the run-queue clock within 5 % + 50 ms of the kernel's" \
	awk -v b="$db" -v k="$dk" 'BEGIN { d = b - k; if (d < 0) d = -d; exit !(k >= 1e9 && d <= 0.05 * k + 5e7) }'
check "run-queue wait within 10 % + 50 ms of the kernel's run_delay" \
	awk -v b="$dbw" -v k="$dkw" 'BEGIN { d = b - k; if (d < 0) d = -d; exit !(k >= 5e8 && d <= 0.1 * k + 5e7) }'

placement_set "$HID" 1
check "shrunk to CPU 0 under a cached entry: violation counted" wait_for 5 cg_stat_gt "$HID" violations 0
check "... on CPU 1" test "$(cg_stat "$HID" last_violation_cpu)" = 1

placement_set "$HID" 3
switches_pass 200	# judged against the map before the write, at most
v1=$(cg_stat "$HID" violations)
switches_pass 200
check "widened back: no violation counted any more" test "$(cg_stat "$HID" violations)" = "$v1"

# Let go, as the controller does: placement first, then the stats.
placement_del "$HID"
stats_del "$HID"
switches_pass 400
check "let go: a cached entry does not re-create its stats" test "$(cg_stat "$HID" cpu_ns)" = none

# The generation: the daemon bumps placement_gen after every change it
# makes to the placement map, and a cached answer from an older
# generation is not used. With the cache's lifetime stretched to 10
# minutes, only the generation can make a change seen.
daemon_stop
CPUSETD_TELEMETRY_CACHE_TTL_MS=600000 daemon_start "$ROOT" --reserved-cpus 0 --telemetry full
check "restarted with a 10 min cache lifetime" test -e "$TEL/placement_gen"
gen=1000
# shellcheck disable=SC2046
gen_bump() { gen=$((gen + 1)); bpftool map update pinned "$TEL/placement_gen" key hex $(le 4 0) value hex $(le 8 $gen); }
switches_pass 200	# the hogs' css_set is cached as unmanaged
placement_set "$HID" 3
gen_bump
check "generation bumped: made managed at once" wait_for 5 cg_stat_gt "$HID" cpu_ns 0
switches_pass 200
# Not a check: another css_set hashed into the hogs' slot would evict
# their entry and show the change without a bump.
placement_set "$HID" 1
switches_pass 400
it_log "violations before the bump: $(cg_stat "$HID" violations) (0 unless the slot was evicted)"
gen_bump
check "the bump: the violation is counted" wait_for 5 cg_stat_gt "$HID" violations 0
placement_del "$HID"
gen_bump
stats_del "$HID"
switches_pass 400
check "let go with a bump: no stats re-created" test "$(cg_stat "$HID" cpu_ns)" = none

stop_hogs
daemon_stop
it_done
