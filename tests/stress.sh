#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make check-stress: every test of `make check` while stress-ng keeps both
# CPUs of this 2-CPU machine busy (one CPU hog per CPU, nice 0, as busy
# application pods would). A check that passes quietly and fails here
# raced something: the daemon, a runtime or the test itself.
#   tests/stress.sh BUILD_DIR
set -u
out=${1:-build}
cd "$(dirname "$0")/.." || exit 1
command -v stress-ng >/dev/null || { echo "not ok - stress-ng missing (make deps)"; exit 1; }
stress-ng --cpu "$(nproc)" --timeout 0 --quiet &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null' EXIT
# Running before the first test starts: the load is there from the start.
sleep 1
kill -0 $hog || { echo "not ok - stress-ng did not start"; exit 1; }
echo "# stress-ng --cpu $(nproc) running as pid $hog"
# The VM lane is not run here. It emulates 16 CPUs on these 2 in TCG:
# with both busy the guest runs at half the emulator's pace, which tests
# that pace (its soft lockups, its watchdog) and not our races, and it
# cost 1,900 s of CI's hour. Its races are the guest's: they would need
# load on the guest's vCPUs (issue 24). make check runs it quietly.
tests/run-all.sh "$out" host
