#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real ring-buffer overflow: the daemon is stopped (SIGSTOP) while more
# cgroups are created under the root than the ring buffer holds. After
# SIGCONT it must see the loss, resync, and place what it missed.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start lost kubepods
daemon_start "$ROOT"
pod_start s1 burstable 500
wait_for 5 allowed_is s1 app 0-1

kill -STOP "$IT_DAEMON"
# 256 KiB ring, ~420-byte events: 2000 mkdirs overflow it.
mkdir -p "$IT_CPUSET$ROOT/flood"
for i in $(seq 2000); do mkdir "$IT_CPUSET$ROOT/flood/d$i"; done
pod_start g1 guaranteed 1000	# its mkdir event is lost
kill -CONT "$IT_DAEMON"

check "lost events are counted" wait_for 10 bash -c \
	"[ \$(jq .counters.events_lost $IT_WORK/state/status.json) -gt 0 ]"
check "a resync followed" bash -c "[ \$(jq .counters.resyncs $IT_WORK/state/status.json) -ge 2 ]"
check "the container whose event was lost is placed" wait_for 5 allowed_is g1 app 0
check "and the shared pool follows" wait_for 5 allowed_is s1 app 1
rmdir "$IT_CPUSET$ROOT"/flood/d* "$IT_CPUSET$ROOT/flood"
it_done
