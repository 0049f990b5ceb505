#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CPU hotplug on the VM lane's guest (16 CPUs, nodes of 4: 0-3 .. 12-15,
# SMT siblings 2k,2k+1, pure cgroup v2), with the real daemon and runc
# containers. CPUs go offline and come back through sysfs, as an operator
# or SMT control does it; the daemon must learn of it from the kernel's
# uevents (no SIGHUP, no polling) and:
#   - shrink the shared pool, with no write errors;
#   - give an integer container a replacement CPU on the same NUMA node,
#     keeping N, logged and counted (hotplug_replacements);
#   - keep an annotated pod on its other CPUs with a cpu_offline error
#     (action "kept", never a rejection), also across a SIGHUP resync;
#   - when CPUs are back: the pool grows again, the annotated pod gets its
#     CPU back and its error clears, the integer container keeps its
#     replacement.
# Every CPU this test takes offline is brought back on exit.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
SYS=/sys/devices/system/cpu
vm_start hotplug kubepods
[ "$(cat $SYS/online)" = 0-15 ] || it_skip_all "expects the VM lane's CPUs 0-15 online"

TOUCHED=
restore_cpus() {
	local c
	for c in $TOUCHED; do echo 1 >$SYS/cpu$c/online 2>/dev/null; done
}
trap 'restore_cpus; vm_cleanup' EXIT

# cpu_set N 0|1: takes CPU N offline or brings it back.
cpu_set() {
	TOUCHED="$TOUCHED $1"
	echo "$2" >$SYS/cpu$1/online
}

st() { jq -e "$@" "$IT_WORK/state/status.json" >/dev/null; }
cpus_of() {
	jq -r --arg p "$1" '.containers[] | select(.pod == $p and .container == "app") | .cpus' \
		"$IT_WORK/state/status.json"
}
eff_is() { [ "$(cg_file "$1" app cpuset.cpus.effective)" = "$2" ]; }
# placed POD CPULIST: status, the effective cpuset and the process agree.
placed() { [ "$(cpus_of "$1")" = "$2" ] && eff_is "$1" "$2" && allowed_is "$1" app "$2"; }
no_write_errors() {
	# note_write's line: "<pod> (<cgroup>): writing cpuset.cpus failed: ..."
	st '.counters.cgroup_write_errors == 0' && no_match "$IT_WORK/daemon.log" 'writing .* failed' &&
		return
	grep 'writing .* failed' "$IT_WORK/daemon.log" | tail -n 5 | while read -r l; do it_log "$l"; done
	return 1
}
# cpulist_has LIST CPU
cpulist_has() {
	local r a b
	for r in ${1//,/ }; do
		a=${r%-*}; b=${r#*-}
		[ "$2" -ge "$a" ] && [ "$2" -le "$b" ] && return 0
	done
	return 1
}
# same_node_pair LIST NODE: two CPUs, both on NUMA node NODE (cpu/4).
same_node_pair() {
	local ids
	ids=$(jq -rn --arg l "$1" '$l | split(",") | map(if test("-") then
		(split("-") | map(tonumber) | [range(.[0]; .[1] + 1)]) else [tonumber] end) | add | .[]')
	[ "$(wc -w <<<"$ids")" = 2 ] || return 1
	for c in $ids; do [ $((c / 4)) = "$2" ] || return 1; done
}

pool() { jq -r .shared_pool "$IT_WORK/state/status.json"; }
# shared_on_pool: the shared container's effective set and affinity are
# the pool status.json shows.
shared_on_pool() { local p; p=$(pool); eff_is s1 "$p" && allowed_is s1 app "$p"; }
pool_lacks() { ! cpulist_has "$(pool)" "$1"; }
pool_has_both() { cpulist_has "$(pool)" "$1" && cpulist_has "$(pool)" "$2"; }
lacks() { ! cpulist_has "$1" "$2"; }
moved_from() { [ "$(cpus_of int)" != "$1" ]; }
no_error_for() { ! jq -e --arg p "$1" '.errors[] | select(.pod == $p)' "$IT_WORK/state/status.json" >/dev/null; }
all_running() { running s1 app && running ann app && running int app; }

check "daemon starts" daemon_start "$ROOT"
check "uevents are listened to" no_match "$IT_WORK/daemon.log" 'uevents unavailable'
# The integer pod before the annotated one, on an empty node: its NUMA
# node has room for a replacement (the annotated pod's node would not,
# and the replacement would rightly go elsewhere).
starts "s1 POD burstable sandbox 0" "int POD guaranteed sandbox 0"
starts "s1 app burstable container 500" "int app guaranteed container 2000"
check "integer pod placed" wait_for 10 st '.containers[] | select(.pod == "int" and .container == "app") | .kind == "integer"'
pod_start ann burstable 0 6-7
check "annotated pod on 6-7" wait_for 10 placed ann 6-7
INT=$(cpus_of int)
LOST=${INT##*[-,]}		# its highest CPU (CPU 0 may not go offline)
NODE=$((LOST / 4))
it_log "integer pod on $INT; will take CPU $LOST (node $NODE) offline"
check "shared pod on the pool" wait_for 10 shared_on_pool
POOL=$(pool)

# --- a shared-pool CPU goes offline ---
cpu_set 13 0
check "shared pool shrinks (status)" wait_for 10 pool_lacks 13
check "... counted as a hotplug change" wait_for 10 st '.counters.hotplug_changes >= 1'
check "shared container: cpuset.cpus.effective and Cpus_allowed_list = the pool" \
	wait_for 10 shared_on_pool
check "no write errors" no_write_errors

# --- an integer container's CPU goes offline ---
cpu_set "$LOST" 0
check "integer pod gets a replacement" wait_for 10 moved_from "$INT"
NEW=$(cpus_of int)
it_log "integer pod now on $NEW"
check "... still 2 CPUs, both on node $NODE" same_node_pair "$NEW" "$NODE"
check "... without CPU $LOST" lacks "$NEW" "$LOST"
check "... cpuset.cpus.effective and Cpus_allowed_list agree" wait_for 10 placed int "$NEW"
check "... mems still node $NODE" wait_for 10 st ".containers[] | select(.pod == \"int\" and .container == \"app\") | .mems == \"$NODE\""
check "... counted (hotplug_replacements)" st '.counters.hotplug_replacements >= 1'
check "... logged with the container" grep -q "demo/int/app.*CPU $LOST offline, replaced by" "$IT_WORK/daemon.log"
check "... no error for it" no_error_for int
check "shared pool without the replacement" pool_lacks "${NEW##*[-,]}"
check "no write errors" no_write_errors

# --- an annotated pod's CPU goes offline ---
cpu_set 7 0
check "annotated pod keeps CPU 6" wait_for 10 placed ann 6
check "... error cpu_offline, kept (not rejected)" wait_for 10 has_error ann cpu_offline kept
check "... still running" running ann app
check "... logged" grep -q "demo/ann/app.*cpu_offline" "$IT_WORK/daemon.log"
check "... CPU 7 stays reserved for it" st '.reserved | test("7")'

# --- SIGHUP resync while CPUs are offline: nothing is rejected or moved ---
kill -HUP "$IT_DAEMON"
# Under TCG on a loaded host a resync can take seconds: wait long, it
# returns as soon as the counter moves.
check "SIGHUP: resync done" wait_for 60 st '.counters.resyncs >= 2'
check "SIGHUP: annotated pod keeps CPU 6 and its kept error" wait_for 10 has_error ann cpu_offline kept
check "SIGHUP: ... not killed" running ann app
check "SIGHUP: ... placement unchanged" placed ann 6
check "SIGHUP: integer pod not moved" wait_for 10 placed int "$NEW"
check "no write errors" no_write_errors

# --- everything comes back ---
cpu_set 13 1
cpu_set 7 1
cpu_set "$LOST" 1
check "annotated pod gets CPU 7 back" wait_for 10 placed ann 6-7
check "... its error clears" wait_for 10 no_error_for ann
check "integer pod keeps its replacement" wait_for 10 placed int "$NEW"
check "CPUs 13 and $LOST back in the shared pool" wait_for 10 pool_has_both 13 "$LOST"
check "shared container runs on the whole pool" wait_for 10 shared_on_pool
check "no write errors over the whole test" no_write_errors
check "every container still running" all_running

vm_done
