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
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$work" "$pin"
}
trap cleanup EXIT
: >"$work/empty.conf"

# ns per write(2) of one dd run.
ns_per_write() {
	local t0 t1
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count=$n status=none
	t1=$(date +%s%N)
	echo $(((t1 - t0) / n))
}

daemon_on() {
	"$out/cpusetd" --config "$work/empty.conf" --kubepods-root /cpusetd-bench-none \
		--state-dir "$work/state" --pin-dir "$pin" --textfile "" \
		--log-level info >"$work/daemon.log" 2>&1 &
	daemon=$!
	for _ in $(seq 250); do
		grep -q "foreign writes via" "$work/daemon.log" && return 0
		sleep 0.02
	done
	echo "bench-write-hook: the daemon did not start:" >&2
	cat "$work/daemon.log" >&2
	exit 1
}
daemon_off() { kill "$daemon"; wait "$daemon" 2>/dev/null; daemon=; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

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
echo "difference:      $((on - off)) ns per write(2)"
