#!/bin/bash
# The VM lane's test runner, inside the guest (started by tests/vm/init).
#   bash tests/vm/guest.sh [test_a test_b ...]   (default: every test)
# Runs each tests/vm/test_*.sh as `bash tests/vm/test_X.sh build` from the
# project tree (/cpusetd), framed by "vm: begin test_X.sh" and
# "vm: end test_X.sh RC" lines that tests/vm/run.sh reads on the host.
# test_topology runs first: it proves the machine is the one qemu was
# told to build, which every other test takes for granted.
set -u
cd "$(dirname "$0")/../.." || exit 1
per_test_timeout=${VM_TEST_TIMEOUT:-300}

list=()
if [ $# -gt 0 ]; then
	for t in "$@"; do list+=("tests/vm/${t%.sh}.sh"); done
else
	[ -f tests/vm/test_topology.sh ] && list+=(tests/vm/test_topology.sh)
	for t in tests/vm/test_*.sh; do
		[ "$t" = tests/vm/test_topology.sh ] || list+=("$t")
	done
fi

for t in "${list[@]}"; do
	name=${t##*/}
	echo "vm: begin $name"
	if [ -f "$t" ]; then
		timeout -k 5 "$per_test_timeout" bash "$t" build 2>&1
		rc=$?
		[ "$rc" = 124 ] && echo "not ok - timed out after ${per_test_timeout}s"
	else
		echo "not ok - no such test $t"
		rc=1
	fi
	echo "vm: end $name $rc"
done
