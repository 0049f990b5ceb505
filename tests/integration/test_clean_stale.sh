#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/clean-stale.sh (run by tests/run-all.sh before the lanes): what a
# test killed mid-run left is removed, what a running test owns is kept.
#   - a dead test's subtree /cpusetd-NAME-PID (PID gone), with a pod
#     cgroup and a process in it, its pin dir, and a daemon started on it:
#     the process and the daemon are killed, subtree and pin dir removed;
#   - this test's own subtree and pin dir (its PID alive) are kept;
#   - -n says what it would remove and removes nothing.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_setup clean
mkdir -p "$IT_PIN"

# A PID that is gone: a child that has exited and been reaped.
sh -c 'exit 0' &
DEAD=$!
wait "$DEAD"
[ -d "/proc/$DEAD" ] && it_skip_all "PID $DEAD was reused at once"
STALE=/cpusetd-cleantest-$DEAD
SPIN=/sys/fs/bpf/cpusetd-cleantest-$DEAD
sleeper= daemon=
cleanup() {
	[ -n "$sleeper" ] && kill -KILL "$sleeper" 2>/dev/null
	[ -n "$daemon" ] && kill -KILL "$daemon" 2>/dev/null
	find "$IT_CPUSET$STALE" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$SPIN"
	it_cleanup
}
trap cleanup EXIT

# The dead test's leftovers: subtree, pod cgroup with a task, pin dir.
if [ -n "$IT_V2" ]; then
	it_v2_mkdir "$IT_CPUSET$STALE"
	mkdir "$IT_CPUSET$STALE/pod"
else
	mkdir -p "$IT_CPUSET$STALE/pod"
	for d in "$STALE" "$STALE/pod"; do
		cat "$IT_CPUSET/cpuset.cpus" >"$IT_CPUSET$d/cpuset.cpus"
		cat "$IT_CPUSET/cpuset.mems" >"$IT_CPUSET$d/cpuset.mems"
	done
fi
sleep 1000 &
sleeper=$!
echo "$sleeper" >"$IT_CPUSET$STALE/pod/cgroup.procs"
mkdir -p "$SPIN/v$IT_LAYOUT"
# Its daemon: a process whose command line is a cpusetd on that subtree
# (perl-base's sleep under that name: perl keeps the argv it is given).
mkdir -p "$IT_WORK/bin"
(exec -a "$IT_WORK/bin/cpusetd" perl -e 'sleep 1000' -- \
	--kubepods-root "$STALE/kubepods" --pin-dir "$SPIN") &
daemon=$!
wait_for 5 grep -q kubepods-root "/proc/$daemon/cmdline"

tests/clean-stale.sh -n >"$IT_WORK/dry" 2>&1; sed "s/^/# /" "$IT_WORK/dry"
check "-n names the subtree" grep -q "cgroup subtree $IT_CPUSET$STALE\$" "$IT_WORK/dry"
check "-n names the pin dir" grep -q "pin dir $SPIN\$" "$IT_WORK/dry"
check "-n names the daemon" grep -q "daemon $daemon of ${STALE#/}\$" "$IT_WORK/dry"
check "-n removes nothing" test -d "$IT_CPUSET$STALE/pod" -a -d "$SPIN" -a -d "/proc/$sleeper" -a -d "/proc/$daemon"
check "-n names nothing of this (live) test" no_match "$IT_WORK/dry" -e "$IT_CG" -e "$IT_PIN"

tests/clean-stale.sh >"$IT_WORK/run" 2>&1
check "the dead test's daemon is killed" wait_for 5 eval "! kill -0 $daemon 2>/dev/null || grep -q '^State:.*Z' /proc/$daemon/status"
check "the process in its subtree is killed" wait_for 5 eval "! kill -0 $sleeper 2>/dev/null || grep -q '^State:.*Z' /proc/$sleeper/status"
check "its subtree is gone" test ! -e "$IT_CPUSET$STALE"
check "its pin dir is gone" test ! -e "$SPIN"
check "this test's subtree is kept" test -d "$IT_CPUSET$IT_CG"
check "this test's pin dir is kept" test -d "$IT_PIN"
check "nothing could not be removed" no_match "$IT_WORK/run" "could not"
it_done
