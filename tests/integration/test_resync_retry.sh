#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A resync that cannot read the cgroup tree: the daemon's open-file limit
# is lowered to what it already holds (prlimit on the live process), so
# the walk's first open fails with EMFILE, a real fault of a busy node.
# The placements in force must stay, the failure must be logged once and
# counted, and the resync must be retried until the limit is back.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start resync kubepods
command -v prlimit >/dev/null || it_skip_all "needs prlimit (util-linux)"
daemon_start "$ROOT"
pod_start s1 burstable 500
pod_start g1 guaranteed 1000
check "placed before the fault" wait_for 10 allowed_is g1 app 0
check "... shared pool on the rest" wait_for 10 allowed_is s1 app 1

st() { jq -e "$@" "$IT_WORK/state/status.json" >/dev/null; }
resyncs=$(jq .counters.resyncs "$IT_WORK/state/status.json")
read -r soft hard < <(prlimit --pid "$IT_DAEMON" --nofile -o SOFT,HARD --noheadings)
open_now=$(ls "/proc/$IT_DAEMON/fd" | wc -l)
prlimit --pid "$IT_DAEMON" --nofile="$open_now:$hard"
kill -HUP "$IT_DAEMON"
check "the failed resync is logged with its cause" wait_for 10 \
	grep -q "resync under $ROOT failed: Too many open files; placements stay" "$IT_WORK/daemon.log"
# Two retries at 1 s, both failing. Nothing to wait on: without a free fd
# the daemon cannot rewrite status.json or the .prom file either.
sleep 2.5
check "... once, not at every retry" \
	test "$(grep -c "resync under $ROOT failed" "$IT_WORK/daemon.log")" = 1
check "placements stay: the integer container keeps CPU 0" allowed_is g1 app 0
check "... the shared one CPU 1" allowed_is s1 app 1
both_running() { running s1 app && running g1 app; }
check "... both still running" both_running

prlimit --pid "$IT_DAEMON" --nofile="$soft:$hard"
check "retried until it works (resyncs counted)" wait_for 10 st ".counters.resyncs > $resyncs"
check "... the failures counted in status.json" st '.counters.resync_failures >= 1'
check "... and in the .prom file" wait_for 10 \
	grep -Eq '^cpusetd_resync_failures_total [1-9]' "$IT_WORK/prom/cpusetd.prom"
check "... no more failures after that" bash -c \
	"f=\$(jq .counters.resync_failures $IT_WORK/state/status.json); sleep 1.5;
	 [ \"\$(jq .counters.resync_failures $IT_WORK/state/status.json)\" = \"\$f\" ]"
check "placements unchanged after the retry" bash -c \
	"[ \"\$(grep Cpus_allowed_list /proc/$(pid_of g1 app)/status | cut -f2)\" = 0 ]"
pod_start s2 besteffort
check "events are handled again" wait_for 10 allowed_is s2 app 1
check "no cgroup write errors" st '.counters.cgroup_write_errors == 0'
it_done
