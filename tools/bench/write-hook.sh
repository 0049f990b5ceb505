#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Cost of the foreign-write hooks on every write(2) of the node, in one run:
#   tools/bench/write-hook.sh [BUILD_DIR] [ROUNDS]
# Where the kernel offers neither fexit nor kprobes, cpusetd catches
# cpuset writes with a fanotify mark on the cpuset filesystem (nothing
# runs for a write elsewhere) or, with fanotify off (CPUSETD_NO_FANOTIFY),
# on the write/pwrite64/writev syscall tracepoints, where every write(2)
# on the node runs a small BPF program (fd -> file -> a managed
# container's cpuset file?). This measures both: 1M one-byte write(2)s to
# /dev/null (dd bs=1) without the daemon, with it on fanotify and with it
# on the syscall hook, rotating ROUNDS (default 7) times, and prints the
# medians in ns per dd iteration (a read(2) and a write(2)) and each
# difference. The daemon gets a kubepods root that does not exist: it
# places nothing and touches no cgroup; its write hook (and its
# telemetry) run as on a node. Needs root.
set -u
out=${1:-build}
rounds=${2:-7}
n=1000000
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" = 0 ] || { echo "bench-write-hook: needs root" >&2; exit 1; }
[ -x "$out/cpusetd" ] || { echo "bench-write-hook: $out/cpusetd not built" >&2; exit 1; }

work=$(mktemp -d /tmp/cpusetd-bench-wh.XXXXXX)
pin=/sys/fs/bpf/cpusetd-bench-wh-$$	# not the node's pin dir
. tools/bench/lib.sh
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

# daemon_on HOOK: the daemon with that write hook forced (this host's two
# fallbacks; a kernel with fexit or kprobes would pick those first).
daemon_on() {
	export CPUSETD_BPF_NO_FEXIT=1 CPUSETD_BPF_NO_KPROBE=1
	[ "$1" = syscall ] && export CPUSETD_NO_FANOTIFY=1
	bench_daemon_on "foreign writes via" --textfile ""
	unset CPUSETD_BPF_NO_FEXIT CPUSETD_BPF_NO_KPROBE CPUSETD_NO_FANOTIFY
	grep -q "foreign writes via $1," "$work/daemon.log" || {
		echo "bench-write-hook: the daemon did not take the $1 hook:" >&2
		cat "$work/daemon.log" >&2
		exit 1
	}
}

ns_per_write >/dev/null	# warm-up
# Rotating arms, so a slow spell of this shared machine hits each alike.
for _ in $(seq "$rounds"); do
	ns_per_write >>"$work/off"
	for hook in fanotify syscall; do
		daemon_on $hook
		ns_per_write >>"$work/$hook"
		bench_daemon_off
	done
done
off=$(median <"$work/off")
echo "dd bs=1 count=$n, $rounds rounds each; ns per read(2)+write(2) pair, median (min-max)"
for arm in off fanotify syscall; do
	m=$(median <"$work/$arm")
	printf '%-28s %6s ns (%s-%s)  %+d ns\n' \
		"$([ $arm = off ] && echo "without cpusetd" || echo "with cpusetd, $arm hook")" "$m" \
		"$(sort -g "$work/$arm" | head -1)" "$(sort -g "$work/$arm" | tail -1)" $((m - off))
done
