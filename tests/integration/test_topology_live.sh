#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `cpusetctl topology` on this machine matches what sysfs says, read here
# independently with shell tools; and --sysfs reads a real snapshot.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
CTL=$IT_OUT/cpusetctl
FIX=${CPUSETD_FIXTURES:-tests/fixtures}
. tests/integration/lib.sh	# check/ok/not_ok only: no cgroups, no root needed

json=$("$CTL" topology --json) || { not_ok "cpusetctl topology --json runs"; exit 1; }
S=/sys/devices/system
check "online matches cpu/online" test "$(jq -r .online <<<"$json")" = "$(cat $S/cpu/online)"
pk=$(cat $S/cpu/cpu*/topology/physical_package_id | sort -u | wc -l)
check "packages match physical_package_id" test "$(jq .packages <<<"$json")" -eq "$pk"
cores=$(for c in $S/cpu/cpu[0-9]*; do
	[ "$(cat $c/online 2>/dev/null || echo 1)" = 1 ] && cat $c/topology/thread_siblings_list
done | sort -u | wc -l)
check "cores match thread_siblings_list groups" test "$(jq .cores <<<"$json")" -eq "$cores"
nodes_ok=true
for n in $S/node/node[0-9]*; do
	id=${n##*node}; list=$(cat $n/cpulist)
	[ -z "$list" ] && continue
	[ "$(jq -r --arg id "$id" '.numa_nodes[$id]' <<<"$json")" = "$list" ] || nodes_ok=false
done
check "every NUMA node's cpulist matches" $nodes_ok
check "one entry per present CPU" test "$(jq '.cpus | length' <<<"$json")" -eq "$(ls -d $S/cpu/cpu[0-9]* | wc -l)"
check "human output names every package" bash -c "'$CTL' topology | grep -q '^package '"

# A real snapshot through --sysfs: a dual-socket SMT machine.
tmp=$(mktemp -d)
if tar -xjf "$FIX/sysfs/32intel64-2p8co2t+8ve.tar.bz2" -C "$tmp" 2>/dev/null; then
	j=$("$CTL" topology --sysfs "$tmp/32intel64-2p8co2t+8ve/sys" --json)
	check "--sysfs snapshot: 2 packages, 16 cores, 2 threads" \
		test "$(jq -c '[.packages, .cores, .threads_per_core]' <<<"$j")" = "[2,16,2]"
	check "--sysfs snapshot: node cpulists" \
		test "$(jq -c .numa_nodes <<<"$j")" = '{"0":"0-7,16-23","1":"8-15,24-31"}'
	check "--sysfs snapshot: CPU 16 is CPU 0's sibling" \
		test "$(jq '.cpus[] | select(.id == 16) | .core' <<<"$j")" -eq 0
else
	not_ok "fixture $FIX/sysfs/32intel64-2p8co2t+8ve.tar.bz2 readable"
fi
rm -rf "$tmp"
err=$("$CTL" topology --sysfs /nonexistent 2>&1 >/dev/null); rc=$?
check "a missing --sysfs directory: exit 1" test "$rc" -eq 1
check "a missing --sysfs directory: one clear line" \
	test "$(grep -c . <<<"$err")" -eq 1 -a "$(grep -c 'cannot read a topology under /nonexistent' <<<"$err")" -eq 1
it_done
