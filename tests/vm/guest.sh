#!/bin/bash
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

uptime_s() { local up _; read -r up _ </proc/uptime; echo "${up%.*}"; }
for t in "${list[@]}"; do
	name=${t##*/}
	echo "vm: begin $name"
	t0=$(uptime_s)
	if [ -f "$t" ]; then
		timeout -k 5 "$per_test_timeout" bash "$t" build 2>&1 | stamp
		rc=${PIPESTATUS[0]}
		[ "$rc" = 124 ] && echo "not ok - timed out after ${per_test_timeout}s"
	else
		echo "not ok - no such test $t"
		rc=1
	fi
	echo "vm: end $name $rc"
	echo "vm: took $name $(($(uptime_s) - t0))"
done
