#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shared pool on pure cgroup v2 with hierarchical writes (cgfs_plan.h),
# on real runc containers, under the cgroupfs-driver and the systemd-style
# kubepods trees:
#   - the QoS slice holds the pool, pods and containers keep an empty
#     cpuset.cpus and inherit it; checked in cpuset.cpus.effective and the
#     tasks' Cpus_allowed_list;
#   - a container given its own set by the runtime (linux.resources.cpu.cpus)
#     or by per-container writes (an older cpusetd) inherits again: the
#     kernel refuses "" for a cgroup with tasks (ENOSPC), so it gets every
#     CPU (0-15), which inherits just the same;
#   - an annotated pod under the Burstable slice gets exactly its CPUs
#     (v2 would silently fall back to the parent's set otherwise), its
#     sandbox and the other pods the pool;
#   - the writes of a resize of the pool (an integer container's in-place
#     resize) do not depend on how many shared pods sit under the slice.
# Pods get a sandbox only where the sandbox is checked (each runc start
# costs seconds under TCG); the systemd-style tree repeats the placements,
# not the write counts, restarts or the runtime-set case.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start v2hier kubepods

# own CGPATH / eff CGPATH: a cgroup's cpuset.cpus / cpuset.cpus.effective.
own() { local v; read -r v <"$IT_CPUSET$1/cpuset.cpus"; echo "$v"; }
eff() { local v; read -r v <"$IT_CPUSET$1/cpuset.cpus.effective"; echo "$v"; }
ctr_cg() { cg_path "$2" "$(uid "$1")" "$(cid "$1/$3")"; }	# POD QOS NAME
pod_cg() { local p; p=$(ctr_cg "$1" "$2" app) && echo "${p%/*}"; }
slice_cg() { local p; p=$(pod_cg "$1" "$2") && echo "${p%/*}"; }

# status.json read with builtins (a jq start costs ~0.5 s under TCG).
_st() { ST=$(<"$IT_WORK/state/status.json"); }
_num() { _st && [[ $ST =~ \"$1\":([0-9]+) ]] && echo "${BASH_REMATCH[1]}"; }
pool() { _st && [[ $ST =~ \"shared_pool\":\"([^\"]*)\" ]] && echo "${BASH_REMATCH[1]}"; }
writes() { _num cgroup_writes; }
n_containers() { local t; _st || return 1; t=${ST//\"cgroup\":/}; echo $(((${#ST} - ${#t}) / 9)); }
cpus_of() { jq -r --arg p "$1" --arg c "$2" \
	'.containers[] | select(.pod == $p and .container == $c) | .cpus' "$IT_WORK/state/status.json"; }

# placed POD NAME QOS CPULIST: the kernel runs the container exactly there
# (effective set and its init's affinity), whatever level holds the set.
placed() {
	local cg e a
	cg=$(ctr_cg "$1" "$3" "$2") || return 1
	e=$(eff "$cg"); a=$(allowed "$1" "$2")
	[ "$e" = "$4" ] && [ "$a" = "$4" ] && return 0
	it_log "$1/$2: effective '$e', Cpus_allowed_list '$a', want '$4'"
	return 1
}
# inheriting CGPATH: own cpuset.cpus empty, or every CPU (= the parent's).
inheriting() {
	local o
	o=$(own "$1")
	[ -z "$o" ] || [ "$o" = "$IT_ONLINE" ] || { it_log "$1: own '$o'"; return 1; }
}
inherits() { local cg; cg=$(ctr_cg "$1" "$3" "$2") && inheriting "$cg"; }	# POD NAME QOS
pod_inherits() { local cg; cg=$(pod_cg "$1" "$2") && inheriting "$cg"; }	# POD QOS
placed_inheriting() { placed "$@" && inherits "$1" "$2" "$3"; }
wait_containers() { wait_for 20 test "$(n_containers)" = "$1"; }
# quiet: status.json unchanged for 0.3 s (no write in flight).
quiet() {
	local a b
	a=$(stat -c %Y.%i "$IT_WORK/state/status.json")
	vm_sleep 0.3
	b=$(stat -c %Y.%i "$IT_WORK/state/status.json")
	[ "$a" = "$b" ]
}
wait_quiet() { wait_for 20 quiet; }

# resize_writes TAG: the writes of an in-place resize (kubelet's
# InPlacePodVerticalScaling: cpu.max changes, no cgroup event) of the
# integer app from 2 CPUs to 4 and back: two resizes of the pool.
resize_writes() {
	local cg w0
	cg=$(ctr_cg "$1-int" guaranteed app) || return 1
	wait_quiet
	w0=$(writes)
	echo "400000 100000" >"$IT_CPUSET$cg/cpu.max"
	wait_for 10 eval '[ "$(ncpus "$(eff "$cg")")" = 4 ]' || return 1
	wait_quiet
	echo "200000 100000" >"$IT_CPUSET$cg/cpu.max"
	wait_for 10 eval '[ "$(ncpus "$(eff "$cg")")" = 2 ]' || return 1
	wait_quiet
	echo $(($(writes) - w0))
}

# shared_pods TAG: three Burstable pods on the pool, the slice holds it.
shared_pods() {
	local tag=$1 p P
	starts "$tag-s1 app burstable container 500" "$tag-s2 app burstable container 500" \
		"$tag-s3 app burstable container 500"
	wait_containers 3; wait_quiet
	P=$(pool)
	check "$tag: pool is every CPU ($P)" test "$P" = "$IT_ONLINE"
	check "$tag: the burstable slice holds the pool" test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	for p in s1 s2 s3; do
		check "$tag-$p: pod inherits (cpuset.cpus empty)" pod_inherits "$tag-$p" burstable
		check "$tag-$p/app: inherits, runs on the pool" placed_inheriting "$tag-$p" app burstable "$P"
	done
}

# integer_pod TAG SANDBOX N: a Guaranteed pod (with its sandbox when
# SANDBOX=1) takes 2 CPUs; the pool shrinks at the slice.
integer_pod() {
	local tag=$1 n=$3 P int_cpus p
	if [ "$2" = 1 ]; then
		starts "$tag-int POD guaranteed sandbox 0" "$tag-int app guaranteed container 2000"
	else
		starts "$tag-int app guaranteed container 2000"
	fi
	wait_containers "$n"; wait_quiet
	P=$(pool); int_cpus=$(cpus_of "$tag-int" app)
	check "$tag-int/app: 2 exclusive CPUs ($int_cpus) in its effective set" \
		placed "$tag-int" app guaranteed "$int_cpus"
	[ "$2" = 1 ] && check "$tag-int/POD: sandbox on the pool" placed "$tag-int" POD guaranteed "$P"
	check "$tag: slice holds the smaller pool ($P)" test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	for p in s1 s2 s3; do
		check "$tag-$p/app: follows the pool, still inheriting" \
			placed_inheriting "$tag-$p" app burstable "$P"
	done
}

# annotated_pod TAG SANDBOX N: an annotated pod under the Burstable slice
# gets exactly its CPUs, not the v2 fallback; gone, the slice holds the
# pool again. N: containers with it.
annotated_pod() {
	local tag=$1 n=$3 P ann_cpus=12-13 p
	if [ "$2" = 1 ]; then
		starts "$tag-ann POD burstable sandbox 0 $ann_cpus" \
			"$tag-ann app burstable container 500 $ann_cpus"
	else
		starts "$tag-ann app burstable container 500 $ann_cpus"
	fi
	wait_containers "$n"; wait_quiet
	P=$(pool)
	check "$tag-ann/app: exactly $ann_cpus (effective, Cpus_allowed_list)" \
		placed "$tag-ann" app burstable "$ann_cpus"
	check "$tag-ann/app: mems of node 3" mems_are "$tag-ann" app 3
	[ "$2" = 1 ] && check "$tag-ann/POD: sandbox on the pool ($P)" placed "$tag-ann" POD burstable "$P"
	for p in s1 s3; do
		check "$tag-$p/app: on the pool without $ann_cpus" placed "$tag-$p" app burstable "$P"
	done
	check "$tag: slice's effective set holds the annotated CPUs" \
		subset "$ann_cpus" "$(eff "$(slice_cg "$tag-s1" burstable)")"
	if [ "$2" = 1 ]; then pod_stop "$tag-ann"; else container_stop "$tag-ann" app; fi
	wait_containers $((n - 1 - $2)); wait_quiet
	P=$(pool)
	check "$tag: annotated pod gone: slice holds the pool again" \
		test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	check "$tag-s2: pod inherits again, its app on the pool" \
		eval 'pod_inherits "$tag-s2" burstable && placed "$tag-s2" app burstable "$P"'
}

no_write_errors() { check "$1: no write errors" test "$(_num cgroup_write_errors)" = 0; }

# --- the cgroupfs-driver tree: everything ---
T=cgfs
check "$T: daemon starts" daemon_start "$ROOT"
shared_pods $T
integer_pod $T 1 5

# The runtime writes its own set (linux.resources.cpu.cpus "3") after our
# mkdir-time plan, before its program's exec: the write hook catches it as
# it lands (the exec check, second line, where no hook attached).
starts "$T-s1 own burstable container 500 - 3"
wait_containers 6
P=$(pool)
check "$T-s1/own: the runtime's set '3' replaced, inherits" wait_for 10 inherits "$T-s1" own burstable
check "$T-s1/own: runs on the pool" wait_for 10 placed "$T-s1" own burstable "$P"
check "$T-s1/own: the daemon saw the runtime's '3'" \
	grep -Eq "$T-s1/own( \([0-9a-f]+\))?: (runtime left cpus 3 at exec|runtime wrote cpus 3 before its first exec)" \
	"$IT_WORK/daemon.log"

# Writes per resize do not grow with the pods under the slice.
W1=$(resize_writes $T)
starts "$T-s4 app burstable container 500" "$T-s5 app burstable container 500" \
	"$T-s6 app burstable container 500" "$T-s7 app burstable container 500"
wait_containers 10
W2=$(resize_writes $T)
check "$T: two resizes cost the same writes with 3 or 7 shared pods ($W1, $W2)" \
	test -n "$W1" -a "$W1" = "$W2"
check "$T: and few of them (<= 12 for 2 resizes)" test "${W1:-99}" -le 12

annotated_pod $T 1 12

# An older cpusetd (or per-container mode) left every container its own
# set; a hierarchical restart makes them inherit again.
daemon_stop
daemon_start "$ROOT" --v2-writes per-container
wait_quiet
P=$(pool)
check "$T: per-container mode writes the containers' own sets" \
	test "$(own "$(ctr_cg "$T-s3" burstable app)")" = "$P"
daemon_stop
daemon_start "$ROOT"
wait_quiet
for p in s3 s6; do
	check "$T-$p/app: restart makes it inherit, still on the pool" \
		placed_inheriting "$T-$p" app burstable "$P"
done
no_write_errors $T
daemon_stop

# --- the systemd-style tree: the placements again ---
T=sd
vm_root kubepods.slice
check "$T: daemon starts" daemon_start "$ROOT"
shared_pods $T
integer_pod $T 0 4
annotated_pod $T 0 5
no_write_errors $T
daemon_stop

# On failure, the daemon's view of what it wrote (the work dir goes away).
[ "$IT_FAILED" -eq 0 ] ||
	grep -a 'cpuset.cpus\|re-applied\|failed\|resync' "$IT_WORK/daemon.log" | tail -n 40 | sed 's/^/# daemon: /'
vm_done
