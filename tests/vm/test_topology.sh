#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guest is the machine qemu was told to build (tests/vm/run.sh):
# 2 sockets x 4 cores x 2 threads, 4 NUMA nodes with 2 cores each, every
# node with its own memory, SMT real (thread siblings in sysfs), pure
# cgroup v2 with cpuset, and `cpusetctl topology --json` agrees.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_require
SYS=/sys/devices/system

# sysfs_is FILE VALUE: the file holds VALUE (else says what it holds).
sysfs_is() {
	local v
	v=$(cat "$1")
	[ "$v" = "$2" ] || { it_log "$1: '$v'"; return 1; }
}

# --- what the kernel sees ---
check "16 CPUs online" sysfs_is $SYS/cpu/online 0-15
for c in 0 5 10 15; do
	sib=$((c / 2 * 2))-$((c / 2 * 2 + 1))
	check "cpu$c: SMT siblings are $sib" sysfs_is $SYS/cpu/cpu$c/topology/thread_siblings_list "$sib"
	check "cpu$c: package $((c / 8))" sysfs_is $SYS/cpu/cpu$c/topology/physical_package_id $((c / 8))
done
check "SMT is active" sysfs_is $SYS/cpu/smt/active 1
for n in 0 1 2 3; do
	check "node$n: CPUs $((n * 4))-$((n * 4 + 3))" sysfs_is $SYS/node/node$n/cpulist "$((n * 4))-$((n * 4 + 3))"
	check "node$n: has its own memory" \
		awk '/MemTotal/ { exit !($4 > 400000) }' $SYS/node/node$n/meminfo
done
check "pure cgroup v2: cgroup2 at /sys/fs/cgroup, no v1 cpuset" \
	bash -c 'grep -q "^cgroup2 /sys/fs/cgroup cgroup2" /proc/mounts && ! grep -q " cgroup .*cpuset" /proc/mounts'
check "cpuset enabled below the root" grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control
check "tracefs mounted" mountpoint -q /sys/kernel/tracing
check "bpffs mounted" mountpoint -q /sys/fs/bpf
check "kernel BTF present" test -s /sys/kernel/btf/vmlinux

# --- what cpusetctl says ---
json=$("$IT_OUT/cpusetctl" topology --json)
q() { jq -e "$1" <<<"$json" >/dev/null; }
check "cpusetctl: online 0-15, none offline" q '.online == "0-15" and .offline == "" and .online_count == 16'
check "cpusetctl: 2 packages" q '.packages == 2'
check "cpusetctl: 8 cores, 2 threads per core" q '.cores == 8 and .threads_per_core == 2'
check "cpusetctl: NUMA cpulists" \
	q '.numa_nodes == {"0": "0-3", "1": "4-7", "2": "8-11", "3": "12-15"}'
check "cpusetctl: no memory-only node" q '.memory_nodes == ""'
check "cpusetctl: per CPU: package = cpu/8, node = cpu/4" \
	q '[.cpus[] | (.package == (.id / 8 | floor)) and (.node == (.id / 4 | floor))] | all'
check "cpusetctl: per CPU: siblings share a core id, cores are distinct" \
	q '[.cpus[] | {id, core, package}] | group_by([.package, .core]) | length == 8 and
	   all(length == 2 and (.[1].id == .[0].id + 1) and (.[0].id % 2 == 0))'
check "cpusetctl: distances: 10 on the diagonal, more elsewhere" \
	q '.distances | to_entries | all(.key as $k | .value | to_entries |
	   all(if .key == ($k | tonumber) then .value == 10 else .value > 10 end))'

it_done
