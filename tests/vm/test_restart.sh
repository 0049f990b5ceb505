#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Crash recovery on pure cgroup v2 with 16 CPUs: `kill -9` of the daemon
# in the middle of a churn of container starts and stops (integer, shared
# and annotated), the churn going on while it is down, then a restart.
# The invariants, read from the kernel and from status.json:
#   - no exclusive container that was placed before the crash moved;
#   - no shared container overlaps a reserved (exclusive or annotated) CPU;
#   - every running container is accounted for in status.json, and no
#     container that is gone is;
#   - exclusive containers started while the daemon was down got whole
#     cores of their own.
# Then a second crash right after a start event, and a restart that must
# converge to the same placements.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start restart kubepods
ONLINE=$(cat "$SYS_CPU/online")

app_stop() { container_stop "$1" app; }

# kind_of POD: the kind status.json gives the pod's app container.
kind_of() {
	jq -r --arg p "$1" '.containers[] | select(.pod == $p and .container == "app") | .kind' \
		"$IT_WORK/state/status.json"
}

# The test's ledger of what runs: LIVE[pod]=qos:milli:annotation (one app
# container per pod), kept by ups/down.
declare -A LIVE
down() { app_stop "$1"; unset "LIVE[$1]"; }
# ups "POD QOS [MILLI [ANNOTATION]]"...: app containers started at once,
# entered in the ledger.
ups() {
	local a w args=()
	for a in "$@"; do
		read -r -a w <<<"$a"
		args+=("${w[0]} app ${w[1]} container ${w[2]:-0} ${w[3]:--}")
	done
	starts "${args[@]}" || return 1
	for a in "$@"; do
		read -r -a w <<<"$a"
		LIVE[${w[0]}]="${w[1]}:${w[2]:-0}:${w[3]:-}"
	done
}

# exclusive_pods: pods of the ledger that hold exclusive or annotated CPUs.
exclusive_pods() {
	local p
	for p in "${!LIVE[@]}"; do
		case ${LIVE[$p]} in
		guaranteed:[1-9]*000:*) echo "$p" ;;
		*:*:?*) echo "$p" ;;
		esac
	done
}
shared_pods() {
	local p
	for p in "${!LIVE[@]}"; do
		case ${LIVE[$p]} in guaranteed:[1-9]*000:* | *:*:?*) ;; *) echo "$p" ;; esac
	done
}

# reserved: the union of every exclusive/annotated container's CPUs.
reserved() {
	local p l=""
	for p in $(exclusive_pods); do l="$l,$(allowed "$p" app)"; done
	union "${l#,}"
}

# no_overlap: every shared container is off every reserved CPU, and uses
# the rest.
no_overlap() {
	local r p pool
	r=$(reserved)
	pool=$(minus "$ONLINE" "$r")
	for p in $(shared_pods); do
		[ "$(allowed "$p" app)" = "$pool" ] || { it_log "$p: $(allowed "$p" app), pool $pool"; return 1; }
	done
}

# exclusives_disjoint: no two exclusive containers share a CPU (annotated
# ones may, they are reference counted; here they never do).
exclusives_disjoint() {
	local p all=""
	for p in $(exclusive_pods); do all="$all $(cpus "$(allowed "$p" app)")"; done
	[ -z "$(tr ' ' '\n' <<<"$all" | grep . | sort | uniq -d)" ]
}

# accounted: status.json has exactly the running containers (by ID).
accounted() {
	local want have
	want=$(for p in "${!LIVE[@]}"; do cid "$p/app"; done | sort)
	have=$(jq -r '.containers[].container_id' "$IT_WORK/state/status.json" | sort)
	[ "$want" = "$have" ] || { it_log "want $(wc -w <<<"$want"), have $(wc -w <<<"$have")"; return 1; }
}

# snapshot: "pod cpus" of every exclusive container.
snapshot() {
	local p
	for p in $(exclusive_pods); do echo "$p $(allowed "$p" app)"; done | sort
}

# unmoved SNAPSHOT: each of those containers (if still running) has the same CPUs.
unmoved() {
	local p c
	while read -r p c; do
		[ -n "${LIVE[$p]:-}" ] || continue
		[ "$(allowed "$p" app)" = "$c" ] || { it_log "$p moved: $c -> $(allowed "$p" app)"; return 1; }
	done <<<"$1"
}

# integer_core POD: two CPUs, one whole physical core.
integer_core() {
	local l
	l=$(allowed "$1" app)
	[ "$(ncpus "$l")" = 2 ] && whole_cores "$l"
}

kinds_right() {
	[ "$(kind_of i2)" = integer ] && [ "$(kind_of a2)" = annotated ] &&
		[ "$(kind_of c2)" = shared ] && [ "$(kind_of s1)" = shared ]
}

check "daemon starts" daemon_start "$ROOT"
ups "s1 burstable 500" "g1 guaranteed 2000" "a1 burstable 0 14-15" \
	"g2 guaranteed 4000" "s2 besteffort"
check "before the crash: placements converge" wait_for 20 no_overlap
check "before the crash: exclusive containers are disjoint" exclusives_disjoint
before=$(snapshot)
it_log "before: $(tr '\n' ' ' <<<"$before")"

# --- the churn; kill -9 in its middle ---
ups "c1 burstable 300" "i1 guaranteed 2000"
check "churn: integer container placed" wait_for 10 allowed_n i1 app 2
before=$(snapshot)
# Two CPUs of today's shared pool for an annotated pod that comes while down.
A2=$(cpus "$(minus "$ONLINE" "$(reserved)")" | tail -n2 | list_of)
down s2
daemon_kill9			# right after a stop event
down g1				# while down; its CPUs must come back
down c1
# i2 while down: the runtime's default set
ups "i2 guaranteed 2000" "c2 besteffort" "a2 burstable 0 $A2"
check "while down, new containers run where the runtime put them" \
	test "$(allowed i2 app)" = "$ONLINE"

check "restart" daemon_start "$ROOT"
check "after restart: converged (no shared container on a reserved CPU)" wait_for 20 no_overlap
check "after restart: no exclusive container placed before the crash moved" unmoved "$before"
check "after restart: integer started while down got one whole core" wait_for 10 integer_core i2
check "after restart: annotated pod started while down has its CPUs" allowed_is a2 app "$A2"
check "after restart: exclusive containers are disjoint" exclusives_disjoint
check "after restart: every container accounted for" wait_for 10 accounted
check "after restart: kinds right" kinds_right
check "after restart: no cgroup write errors" test "$(write_errors)" = 0

# --- second crash, right after a start event ---
before=$(snapshot)
ups "i3 guaranteed 2000"
daemon_kill9
check "second restart" daemon_start "$ROOT"
check "second restart: converged" wait_for 20 no_overlap
check "second restart: nothing placed before moved" unmoved "$before"
check "second restart: the container started at the crash got one whole core" \
	wait_for 10 integer_core i3
check "second restart: exclusive containers are disjoint" exclusives_disjoint
check "second restart: every container accounted for" wait_for 10 accounted
after=$(snapshot)
daemon_stop
check "SIGTERM and start again: the same placements" daemon_start "$ROOT"
check "... converged" wait_for 20 no_overlap
check "... identical" test "$(snapshot)" = "$after"
check "no cgroup write errors" test "$(write_errors)" = 0
daemon_stop

vm_done
