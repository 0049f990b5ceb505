#!/bin/bash
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
#   - the writes of an integer pod's start and stop do not depend on how
#     many shared pods sit under the slice.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_setup v2hier
[ -n "$IT_V2" ] || it_skip_all "needs pure cgroup v2 (the VM lane)"

# own CGPATH / eff CGPATH: a cgroup's cpuset.cpus / cpuset.cpus.effective.
own() { cat "$IT_CPUSET$1/cpuset.cpus"; }
eff() { cat "$IT_CPUSET$1/cpuset.cpus.effective"; }
ctr_cg() { cg_path "$2" "$(uid "$1")" "$(cid "$1/$3")"; }
pod_cg() { local p; p=$(ctr_cg "$1" "$2" POD) && echo "${p%/*}"; }
slice_cg() { local p; p=$(pod_cg "$1" "$2") && echo "${p%/*}"; }
pool() { jq -r .shared_pool "$IT_WORK/state/status.json"; }
cpus_of() { jq -r --arg p "$1" --arg c "$2" \
	'.containers[] | select(.pod == $p and .container == $c) | .cpus' "$IT_WORK/state/status.json"; }
writes() { jq -r .counters.cgroup_writes "$IT_WORK/state/status.json"; }
resizes() { jq -r .counters.resizes "$IT_WORK/state/status.json"; }
n_containers() { jq '.containers | length' "$IT_WORK/state/status.json"; }

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
# expand CPULIST: one CPU per line.
expand() {
	local r IFS=,
	for r in $1; do
		case $r in *-*) seq "${r%-*}" "${r#*-}" ;; ?*) echo "$r" ;; esac
	done
}
# covers A B: every CPU of cpulist B is in cpulist A.
covers() {
	local c all
	all=$(expand "$1")
	for c in $(expand "$2"); do grep -qx "$c" <<<"$all" || return 1; done
}
wait_containers() { wait_for 20 test "$(n_containers)" = "$1"; }
# quiet: status.json unchanged for 0.5 s (no write in flight).
quiet() {
	local a b
	a=$(stat -c %Y.%i "$IT_WORK/state/status.json")
	sleep 0.5
	b=$(stat -c %Y.%i "$IT_WORK/state/status.json")
	[ "$a" = "$b" ]
}
wait_quiet() { wait_for 20 quiet; }

# Writes of one integer pod's start and stop (sandbox + 1 CPU app).
int_cycle_writes() {
	local w0 n0
	wait_quiet
	w0=$(writes); n0=$(n_containers)
	pod_start "$1" guaranteed 1000 >/dev/null || return 1
	wait_for 20 running "$1" app
	wait_containers $((n0 + 2)); wait_quiet
	pod_stop "$1"
	wait_containers "$n0"; wait_quiet
	echo $(($(writes) - w0))
}

# scenario ROOT_LEAF TAG FULL: FULL=0 skips the runtime-set, writes-per-
# resize and restart parts (the per-test budget under TCG is 300 s).
scenario() {
	local leaf=$1 tag=$2 full=$3 p P W1 W2 ann_cpus=12-13 int_cpus n=8
	ROOT=$IT_CG/$leaf
	it_mkroot "$ROOT"
	IT_ROOT=$ROOT
	daemon_start "$ROOT" || { not_ok "$tag: daemon did not start"; return; }

	for p in s1 s2 s3; do pod_start "$tag-$p" burstable 500; done
	wait_containers 6; wait_quiet
	P=$(pool)
	check "$tag: pool is every CPU ($P)" test "$P" = 0-15
	check "$tag: the burstable slice holds the pool" test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	for p in s1 s2 s3; do
		check "$tag-$p: pod inherits (cpuset.cpus empty)" pod_inherits "$tag-$p" burstable
		check "$tag-$p/app: inherits" inherits "$tag-$p" app burstable
		check "$tag-$p/app: runs on the pool" placed "$tag-$p" app burstable "$P"
	done

	# An integer pod: the pool shrinks with one write at the slice.
	pod_start "$tag-int" guaranteed 2000
	wait_containers 8; wait_quiet
	P=$(pool); int_cpus=$(cpus_of "$tag-int" app)
	check "$tag-int/app: 2 exclusive CPUs ($int_cpus) in its effective set" \
		placed "$tag-int" app guaranteed "$int_cpus"
	check "$tag-int/POD: sandbox on the pool" placed "$tag-int" POD guaranteed "$P"
	check "$tag: slice holds the smaller pool ($P)" test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	for p in s1 s2 s3; do
		check "$tag-$p/app: follows the pool, still inheriting" \
			placed_inheriting "$tag-$p" app burstable "$P"
	done

	if [ "$full" = 1 ]; then
	# Runtime-written own set (linux.resources.cpu.cpus): replaced at exec.
	container_start "$tag-s1" own burstable container 500 "" 3
	wait_for 20 running "$tag-s1" own
	wait_containers 9; wait_quiet
	check "$tag-s1/own: runtime's set '3' replaced, inherits" inherits "$tag-s1" own burstable
	check "$tag-s1/own: runs on the pool" placed "$tag-s1" own burstable "$P"

	# Writes per resize do not grow with the pods under the slice.
	W1=$(int_cycle_writes "$tag-ia")
	for p in s4 s5 s6 s7; do pod_start "$tag-$p" burstable 500; done
	wait_containers 17
	W2=$(int_cycle_writes "$tag-ib")
	check "$tag: integer pod start+stop costs the same writes with 3 or 7 shared pods ($W1, $W2)" \
		test -n "$W1" -a "$W1" = "$W2"
	check "$tag: and few of them (<= 20 for 2 resizes and a pod's sandbox)" test "${W1:-99}" -le 20
	n=17
	fi

	# Annotated pod under the Burstable slice: its own CPUs, not a fallback.
	pod_start "$tag-ann" burstable 500 "$ann_cpus"
	wait_containers $((n + 2)); wait_quiet
	P=$(pool)
	check "$tag-ann/app: exactly $ann_cpus (effective, Cpus_allowed_list)" \
		placed "$tag-ann" app burstable "$ann_cpus"
	check "$tag-ann/app: mems of node 3" test "$(mems_allowed "$tag-ann" app)" = 3
	check "$tag-ann/POD: sandbox on the pool ($P)" placed "$tag-ann" POD burstable "$P"
	for p in s1 s3; do
		check "$tag-$p/app: on the pool without $ann_cpus" placed "$tag-$p" app burstable "$P"
	done
	check "$tag: slice's effective set holds the annotated CPUs" \
		covers "$(eff "$(slice_cg "$tag-s1" burstable)")" "$ann_cpus"

	pod_stop "$tag-ann"
	wait_containers "$n"; wait_quiet
	P=$(pool)
	check "$tag: annotated pod gone: slice holds the pool again" \
		test "$(own "$(slice_cg "$tag-s1" burstable)")" = "$P"
	check "$tag-s2: pod inherits again" pod_inherits "$tag-s2" burstable
	check "$tag-s2/app: on the pool" placed "$tag-s2" app burstable "$P"

	# An older cpusetd (or per-container mode) left every container its
	# own set; a hierarchical restart makes them inherit again.
	if [ "$full" = 1 ]; then
	daemon_stop
	daemon_start "$ROOT" --v2-writes per-container
	wait_quiet
	check "$tag: per-container mode writes the containers' own sets" \
		test "$(own "$(ctr_cg "$tag-s3" burstable app)")" = "$P"
	daemon_stop
	daemon_start "$ROOT"
	wait_quiet
	for p in s3 s6; do
		check "$tag-$p/app: restart makes it inherit" inherits "$tag-$p" app burstable
		check "$tag-$p/app: still on the pool" placed "$tag-$p" app burstable "$P"
	done
	fi
	check "$tag: no write errors" test "$(jq .counters.cgroup_write_errors "$IT_WORK/state/status.json")" = 0
	daemon_stop
	for p in s1 s2 s3 s4 s5 s6 s7 int; do pod_stop "$tag-$p" 2>/dev/null; done
	container_stop "$tag-s1" own
}

scenario kubepods cgfs 1
scenario kubepods.slice sd 0
# On failure, the daemon's view of what it wrote (the work dir goes away).
[ "$IT_FAILED" -eq 0 ] ||
	grep -a 'cpuset.cpus\|re-applied\|failed\|resync' "$IT_WORK/daemon.log" | tail -n 40 | sed 's/^/# daemon: /'
it_done
