#!/bin/bash
# Overhead of the BPF telemetry on a context-switch-heavy load, in one run:
#   tools/bench-telemetry.sh [BUILD_DIR] [ROUNDS]
# Alternates ROUNDS (default 7) hackbench runs without the daemon and with
# it (telemetry attached), and prints the median times and the throughput
# ratio. Then one more run with kernel.bpf_stats_enabled=1 (restored after)
# for each telemetry program's run_time_ns / run_cnt from bpftool.
# hackbench (rt-tests) is preferred; `perf bench sched messaging` otherwise.
# Needs root. Touches no cgroup: the daemon gets a kubepods root that does
# not exist, so it places nothing and only the telemetry runs.
set -u
out=${1:-build}
rounds=${2:-7}
cd "$(dirname "$0")/.." || exit 1
[ "$(id -u)" = 0 ] || { echo "bench-telemetry: needs root" >&2; exit 1; }
[ -x "$out/cpusetd" ] || { echo "bench-telemetry: $out/cpusetd not built" >&2; exit 1; }

work=$(mktemp -d /tmp/cpusetd-bench-tel.XXXXXX)
pin=/sys/fs/bpf/cpusetd-bench-tel-$$	# not the node's pin dir
stats_old=$(cat /proc/sys/kernel/bpf_stats_enabled)
. tools/bench-lib.sh
cleanup() {
	bench_daemon_off
	sysctl -q kernel.bpf_stats_enabled="$stats_old"
	rm -rf "$work" "$pin"
}
trap cleanup EXIT

if command -v hackbench >/dev/null; then
	load="hackbench -g 5 -l 500"
	load_s() { hackbench -g 5 -l 500 2>&1 | sed -n 's/^Time: *//p'; }
else
	load="perf bench sched messaging -g 5 -l 500"
	load_s() { perf bench sched messaging -g 5 -l 500 2>&1 | sed -n 's/.*Total time: *\([0-9.]*\).*/\1/p'; }
fi

daemon_on() { bench_daemon_on "telemetry attached" --textfile "$work/cpusetd.prom"; }
daemon_off() { bench_daemon_off; }

sysctl -q kernel.bpf_stats_enabled=0
load_s >/dev/null	# warm-up
for i in $(seq "$rounds"); do
	load_s >>"$work/off"
	daemon_on
	load_s >>"$work/on"
	daemon_off
done
off=$(median <"$work/off")
on=$(median <"$work/on")

# Per-program cost: bpf_stats adds its own clock reads, so it is measured
# apart from the throughput rounds. Our programs are the ones loaded after
# this point (ids only grow).
before=$(bpftool prog show -j | jq '[.[].id] | max // 0')
sysctl -q kernel.bpf_stats_enabled=1
daemon_on
load_s >/dev/null
costs=$(bpftool prog show -j | jq -r --argjson b "$before" '
	.[] | select(.id > $b and (.name | test("^(switch|wakeup|wakeup_new|migrate)_(btf|raw)$")))
	| "\(.name): \(.run_cnt) runs, \(if .run_cnt > 0 then (.run_time_ns / .run_cnt | floor) else 0 end) ns/run"')
daemon_off
sysctl -q kernel.bpf_stats_enabled="$stats_old"

echo "load: $load, $rounds rounds each, alternating; $(nproc) CPUs, $(uname -r)"
echo "without telemetry: median $off s   ($(tr '\n' ' ' <"$work/off"))"
echo "with telemetry:    median $on s   ($(tr '\n' ' ' <"$work/on"))"
awk -v a="$off" -v b="$on" 'BEGIN { printf "throughput with/without: %.4f (%.2f %% loss)\n", a / b, (1 - a / b) * 100 }'
echo "per-program cost (kernel.bpf_stats_enabled=1):"
echo "$costs" | sed 's/^/  /'
