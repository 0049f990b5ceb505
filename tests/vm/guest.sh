#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM lane's test runner, inside the guest (started by tests/vm/init).
#   bash tests/vm/guest.sh [test_a test_b ...]   (default: every test)
# Runs each tests/vm/test_*.sh as `bash tests/vm/test_X.sh build` from the
# project tree (/cpusetd), framed by "vm: begin test_X.sh" and
# "vm: end test_X.sh RC" lines that tests/vm/run.sh reads on the host,
# then "vm: took test_X.sh SECONDS" (the guest's clock).
# test_topology runs first: it proves the machine is the one qemu was
# told to build, which every other test takes for granted.
set -u
cd "$(dirname "$0")/../.." || exit 1
per_test_timeout=${VM_TEST_TIMEOUT:-420}

# stamp: copies the lines, each TAP line followed by "#t UPTIME" (the
# console log then shows where a slow test spends its time; the host side
# leaves these lines out of its report).
stamp() {
	local line up _
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok - "* | "not ok - "*) read -r up _ </proc/uptime; echo "#t $up" ;;
		esac
	done
}

list=()
if [ $# -gt 0 ]; then
	for t in "$@"; do list+=("tests/vm/${t%.sh}.sh"); done
else
	[ -f tests/vm/test_topology.sh ] && list+=(tests/vm/test_topology.sh)
	for t in tests/vm/test_*.sh; do
		[ "$t" = tests/vm/test_topology.sh ] || list+=("$t")
	done
fi

# VM_STRESS=N (tests/vm/run.sh's VM_STRESS): N busy loops in a cgroup of
# their own (/vm-stress, outside every test's subtree) for the length of
# each test: races under load in the guest, whose vCPUs are loaded, not
# in the emulator, whose host is. Tests that measure CPU time on chosen
# CPUs (test_telemetry's foreign time) are not meant to pass under it.
stress_pids=()
stress_start() {
	local i
	[ "${VM_STRESS:-0}" -gt 0 ] || return 0
	mkdir -p /sys/fs/cgroup/vm-stress
	for ((i = 0; i < VM_STRESS; i++)); do
		sh -c 'echo $$ >/sys/fs/cgroup/vm-stress/cgroup.procs; exec sh -c "while :; do :; done"' &
		stress_pids+=($!)
	done
	echo "# vm: $VM_STRESS busy loops in /sys/fs/cgroup/vm-stress"
}
stress_stop() {
	[ ${#stress_pids[@]} -gt 0 ] || return 0
	kill "${stress_pids[@]}" 2>/dev/null
	wait "${stress_pids[@]}" 2>/dev/null
	stress_pids=()
	rmdir /sys/fs/cgroup/vm-stress 2>/dev/null
}

uptime_s() { local up _; read -r up _ </proc/uptime; echo "${up%.*}"; }
for t in "${list[@]}"; do
	name=${t##*/}
	echo "vm: begin $name"
	t0=$(uptime_s)
	if [ -f "$t" ]; then
		stress_start
		timeout -k 5 "$per_test_timeout" bash "$t" build 2>&1 | stamp
		rc=${PIPESTATUS[0]}
		[ "$rc" = 124 ] && echo "not ok - timed out after ${per_test_timeout}s"
		stress_stop
	else
		echo "not ok - no such test $t"
		rc=1
	fi
	echo "vm: end $name $rc"
	echo "vm: took $name $(($(uptime_s) - t0))"
done
