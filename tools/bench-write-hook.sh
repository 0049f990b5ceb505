#!/bin/bash
# Cost of the foreign-write hook on every write(2) of the node, in one run:
#   tools/bench-write-hook.sh [BUILD_DIR] [ROUNDS]
# Where the kernel offers neither fexit nor kprobes, cpusetd catches
# cpuset writes on the write/pwrite64/writev syscall tracepoints, so every
# write(2) on the node runs a small BPF program (fd -> file -> is it a
# cgroupfs cpuset file of a managed container?). This measures that: 1M
# one-byte write(2)s to /dev/null (dd bs=1) without the daemon and with
# it, alternating ROUNDS (default 7) times, and prints the medians in ns
# per write and the difference. The daemon gets a kubepods root that does
# not exist: it places nothing and touches no cgroup; its write hook (and
# its telemetry) run as on a node. Needs root.
set -u
out=${1:-build}
rounds=${2:-7}
n=1000000
cd "$(dirname "$0")/.." || exit 1
[ "$(id -u)" = 0 ] || { echo "bench-write-hook: needs root" >&2; exit 1; }
[ -x "$out/cpusetd" ] || { echo "bench-write-hook: $out/cpusetd not built" >&2; exit 1; }

work=$(mktemp -d /tmp/cpusetd-bench-wh.XXXXXX)
pin=/sys/fs/bpf/cpusetd-bench-wh-$$	# not the node's pin dir
. tools/bench-lib.sh
cleanup() {
	bench_daemon_off
	rm -rf "$work" "$pin"
}
trap cleanup EXIT

# ns per write(2) of one dd run.
ns_per_write() {
	local t0 t1
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count=$n status=none
	t1=$(date +%s%N)
	echo $(((t1 - t0) / n))
}

daemon_on() { bench_daemon_on "foreign writes via" --textfile ""; }
daemon_off() { bench_daemon_off; }

ns_per_write >/dev/null	# warm-up
for _ in $(seq "$rounds"); do
	ns_per_write >>"$work/off"
	daemon_on
	ns_per_write >>"$work/on"
	daemon_off
done
daemon_on
hook=$(sed -n 's/.*foreign writes via \([a-z]*\),.*/\1/p' "$work/daemon.log")
daemon_off
off=$(median <"$work/off")
on=$(median <"$work/on")
echo "write hook: $hook; dd bs=1 count=$n, $rounds rounds each"
echo "without cpusetd: median $off ns per write(2)"
echo "with cpusetd:    median $on ns per write(2)"
echo "difference:      $(awk -v a="$off" -v b="$on" 'BEGIN { print b - a }') ns per write(2)"
