#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The resize benchmark on pure cgroup v2 (run in the VM lane's guest:
# `tests/vm/run.sh build bench_v2`): for N = 100 and 500 shared containers,
# the daemon with per-container writes and with hierarchical writes
# (--v2-writes), each against the raw write floor measured in the same
# run. Under TCG absolute times mean little: read the ratios and the
# cgroup writes per resize. One "# v2 ..." line of figures per run, one
# TAP line per run that completed.
#   bash tests/vm/bench_v2.sh [BUILD_DIR [ROUNDS]]
cd "$(dirname "$0")/../.." || exit 1
out=${1:-build}
rounds=${2:-${ROUNDS:-10}}
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null && [ ! -d /sys/fs/cgroup/cpuset ] ||
	{ echo "ok - # SKIP needs pure cgroup v2 with cpuset"; exit 0; }
rc=0
for n in 100 500; do
	for s in per-container hierarchical; do
		line=$("$out/bench-resize" -d "$out" -n "$n" -r "$rounds" -s "$s" 2>&1 | tail -n1)
		echo "# $line"
		case $line in
		"v2 $s N=$n "*) echo "ok - bench-resize -n $n -r $rounds -s $s" ;;
		*) echo "not ok - bench-resize -n $n -r $rounds -s $s"; rc=1 ;;
		esac
	done
done
exit $rc
