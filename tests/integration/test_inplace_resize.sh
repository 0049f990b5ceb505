#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# In-place resize (kubelet InPlacePodVerticalScaling) on this real kernel:
# `runc update` changes a running container's CPU limit, as containerd
# does for kubelet, with no cgroup event; the daemon re-reads the limits
# on its timer (--resize-check-ms) and moves the container. This 2-CPU
# host shows the class changes and a refusal; growing and shrinking an
# exclusive set around its baseline is in tests/unit/test_policy_topo_resize.c.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start inplace kubepods
check "daemon starts" daemon_start "$ROOT" --resize-check-ms 100

limit() { $IT_RUNC update --cpu-quota "$3" --cpu-period 100000 "$(cid "$1/$2")"; }
kind_is() {
	jq -e --arg p "$1" --arg k "$2" \
		'.containers[] | select(.pod == $p and .container == "app") | .kind == $k' \
		"$IT_WORK/state/status.json" >/dev/null
}
counter_at_least() { jq -e --argjson n "$2" ".counters.$1 >= \$n" "$IT_WORK/state/status.json" >/dev/null; }
# checked: one more check of the limits done. SIGHUP runs a resync and a
# limit check at once; the resync counter in status.json says it is over.
checked() {
	local n
	n=$(jq .counters.resyncs "$IT_WORK/state/status.json")
	kill -HUP "$IT_DAEMON"
	wait_for 5 counter_at_least resyncs $((n + 1))
}
refusals() { grep -c "in-place resize to $1 CPUs refused" "$IT_WORK/daemon.log"; }
test_refusals() { [ "$(refusals "$2")" -eq "$1" ]; }
refused_once() { test_refusals 1 "$1"; }

pod_start s burstable 500
pod_start g guaranteed 1000
check "integer container gets its own CPU" wait_for 5 allowed_is g app 0
check "the shared container leaves it" wait_for 5 allowed_is s app 1

# 1 CPU -> 0.5: fractional, so back on the shared pool, which grows.
limit g app 50000
check "resized to 0.5 CPU: shared pool" wait_for 5 allowed_is g app 0-1
check "the pool grows back for everyone" wait_for 5 allowed_is s app 0-1
check "status says shared" wait_for 5 kind_is g shared
check "counted as an in-place resize" counter_at_least inplace_resizes 1

# 0.5 -> 1: integer again, the pool shrinks.
limit g app 100000
check "resized to 1 CPU: exclusive again" wait_for 5 allowed_is g app 0
check "the pool shrinks again" wait_for 5 allowed_is s app 1
check "status says integer" wait_for 5 kind_is g integer

# 1 -> 2: would empty the shared pool. Refused: nothing moves, the
# container stays admitted, the refusal is logged once (it is retried on
# every check, silently, also across a resync).
limit g app 200000
check "refusal logged" wait_for 5 refused_once 2.00
check "counted in status.json" wait_for 5 counter_at_least inplace_resizes_refused 1
checked && checked
check "retries stay silent" refused_once 2.00
check "keeps its CPU" allowed_is g app 0
check "the shared container keeps the pool" allowed_is s app 1
check "still running, not rejected" running g app
check "no admission error in status" jq -e '.errors == []' "$IT_WORK/state/status.json" >/dev/null

# An unlimited quota is what a runtime has not written yet: never a resize.
limit g app -1
checked
check "unlimited quota is no resize" allowed_is g app 0
check "... nor a refusal" refused_once 2.00

# Back to 1 CPU (what it holds): nothing to do, and a later refusal of
# the same limit is logged again.
limit g app 100000
checked
limit g app 200000
check "a new refusal is logged again" wait_for 5 test_refusals 2 2.00
check "the shared container is untouched" allowed_is s app 1
it_done
