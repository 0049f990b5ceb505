#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make bench: the resize benchmark for N = 10, 100 and 500 shared containers;
# then, on cgroup v1, N = 100 and 500 in the kubelet scene with every CPU
# loaded (BENCHMARKS.md, "Resize on a busy node"), each with its phases and
# its "ratios N=..." line (daemon p99, external p50 and p99 over the floor)
# and its "cold ratios" line (over the same floor written after the
# daemon's idle gap).
set -eu
out=${1:-build}
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
for n in 10 100 500; do
	"$out/bench-resize" -d "$out" -n "$n" -r "${ROUNDS:-50}"
done
if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && [ -d /sys/fs/cgroup/cpuset ]; then
	for n in 100 500; do
		"$out/bench-resize" -d "$out" -n "$n" -r "${ROUNDS:-50}" -S kubelet -L
	done
fi
