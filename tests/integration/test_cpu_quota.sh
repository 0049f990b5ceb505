#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The CFS quota of exclusive containers (exclusive_cpu_quota,
# user/controller/controller_quota.c) on this real v1 kernel, with real runc
# containers and the real daemon: an integer Guaranteed container and its
# pod run without a quota (cpu.cfs_quota_us -1), a fractional one keeps
# its own; an in-place resize to a fractional limit (runc update, as
# containerd does for kubelet) brings the quota back to the container and
# its pod; a kill -9 and restart (with the bundle gone, so only the saved
# limit on the cgroup can say it) keeps them lifted and still restores at
# a later resize; a container's removal gives its pod its quota back;
# SIGTERM leaves them lifted and exclusive_cpu_quota = keep restores them;
# with keep a new integer container keeps its quota. And the reason for
# all of it: a busy exclusive container is never throttled with unset and
# is with keep. The v2 side is tests/vm/test_cpu_quota.sh.
#
# kubelet's part is played here: each pod cgroup of the cpu hierarchy is
# made with kubelet's pod quota (the sum of its containers' limits) before
# its containers start.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
CPU=/sys/fs/cgroup/cpu
CPUACCT=/sys/fs/cgroup/cpuacct
if [ -n "$IT_V2" ] || [ ! -d "$CPU" ] || [ ! -d "$CPUACCT" ]; then
	it_skip_all "needs the v1 cpu and cpuacct hierarchies (v2: tests/vm/test_cpu_quota.sh)"
fi
it_start quota kubepods
st=$IT_WORK/state

cgp() { cg_path guaranteed "$(uid "$1")" "$(cid "$1/$2")"; }
podp() { local p; p=$(cgp "$1" app); echo "${p%/*}"; }
# pod_prep POD MILLI: kubelet's pod cgroup (cpu hierarchy), quota = limit.
pod_prep() {
	local d
	d=$CPU$(podp "$1")
	mkdir -p "$d" && echo $(($2 * 100)) >"$d/cpu.cfs_quota_us"
}
quota_of() { cat "$CPU$1/cpu.cfs_quota_us"; }
quota_is() { [ "$(quota_of "$1")" = "$2" ]; }
ctq_is() { quota_is "$(cgp "$1" "$2")" "$3"; }
podq_is() { quota_is "$(podp "$1")" "$2"; }
limit() { $IT_RUNC update --cpu-quota "$3" --cpu-period "$4" "$(cid "$1/$2")"; }
kind_is() {
	jq -e --arg id "$(cid "$1/$2")" --arg k "$3" \
		'.containers[] | select(.container_id == $id) | .kind == $k' "$st/status.json" >/dev/null
}
counter_at_least() { jq -e --argjson n "$2" ".counters.$1 >= \$n" "$st/status.json" >/dev/null; }
checked() {
	local n
	n=$(jq .counters.resyncs "$st/status.json")
	kill -HUP "$IT_DAEMON"
	wait_for 5 counter_at_least resyncs $((n + 1))
}
# explain_q POD NAME JQ: cpusetctl explain's view of the live quota (it
# reads the saved-limit mark too: the only reader of it here).
explain_q() {
	"$IT_OUT/cpusetctl" --state-dir "$st" explain --json "$(cid "$1/$2")" |
		jq -e ".cfs_quota | $3" >/dev/null
}
lifted() { explain_q "$1" "$2" ".container.lifted_by_cpusetd and .pod.lifted_by_cpusetd"; }
kept() { explain_q "$1" "$2" "(.container.lifted_by_cpusetd or .pod.lifted_by_cpusetd) | not"; }
saved_is() { explain_q "$1" "$2" ".container.saved_quota_us == $3 and .container.saved_period_us == $4"; }
logged() { grep -cF -- "$1" "$IT_WORK/daemon.log"; }
log_count_is() { [ "$(logged "$1")" -eq "$2" ]; }

# --- busy containers and throttling ------------------------------------------
BUSY_PIDS=()
# busy POD NAME: two busy loops in the container (two, so it wants more
# than its one CPU), and the highest cpu.shares down our own subtree, so
# that under a loaded host (stress-ng) it still gets its whole CPU and
# meets its quota; only the cgroups this test made are touched.
busy() {
	local id d p
	id=$(cid "$1/$2")
	d=$(cgp "$1" "$2")
	p=$CPU
	for part in ${d//\// }; do
		p=$p/$part
		echo 262144 >"$p/cpu.shares"
	done
	for n in 1 2; do
		$IT_RUNC exec -d --pid-file "$IT_WORK/busy-$id-$n" "$id" sh -c 'while :; do :; done' ||
			return 1
		BUSY_PIDS+=("$(cat "$IT_WORK/busy-$id-$n")")
	done
}
# The loops hog their CPU with those shares: gone as soon as measured.
busy_stop() {
	[ ${#BUSY_PIDS[@]} -eq 0 ] || kill -KILL "${BUSY_PIDS[@]}" 2>/dev/null
	BUSY_PIDS=()
}
throttled() { awk '$1 == "nr_throttled" {print $2}' "$CPU$1/cpu.stat"; }
usage_ns() { cat "$CPUACCT$1/cpuacct.usage"; }
ran_ns_since() { [ $(($(usage_ns "$1") - $2)) -ge "$3" ]; }
throttled_since() { [ "$(throttled "$1")" -gt "$2" ]; }

# --- unset (the default) -------------------------------------------------------
pod_prep g 1000
pod_prep f 500
check "daemon starts" daemon_start "$ROOT" --resize-check-ms 100

pod_start g guaranteed 1000
G=$(cgp g app)
check "integer container gets its own CPU" wait_for 5 allowed_is g app 0
check "its quota is lifted (-1)" wait_for 5 ctq_is g app -1
check "its pod's quota is lifted (-1)" wait_for 5 podq_is g -1
check "explain: both lifted" lifted g app
check "explain: the container's limit kept" saved_is g app 100000 100000
check "logged once, with the reason" log_count_is \
	"CFS quota 100000/100000 us lifted: integer with 1 whole CPUs of its own" 1
check "the pod's lift logged" log_count_is "pod cgroup $(podp g): CFS quota 100000/100000 us lifted" 1
# status.json comes from the export child once the burst settled: a live
# check that passed says nothing of it yet, so wait for it too
check "counted" wait_for 10 counter_at_least cpu_quota_unset 2
"$IT_OUT/cpusetctl" --state-dir "$st" explain demo/g/app >"$IT_WORK/ex"
check "explain says it in words" grep -Eq '^  CFS quota +none: lifted by cpusetd.*100000/100000 µs' "$IT_WORK/ex"
check "... and for the pod" grep -Eq '^  pod quota +none: lifted by cpusetd' "$IT_WORK/ex"

pod_start f guaranteed 500
check "fractional container: shared pool" wait_for 5 allowed_is f app 1
checked
check "fractional container keeps its quota" ctq_is f app 50000
check "... and its pod" podq_is f 50000
check "explain: in force, nothing lifted" kept f app
check "the integer one is still lifted after a resync" ctq_is g app -1

# A busy exclusive container with a 10 ms period (kubelet's
# cpuCFSQuotaPeriod can be that): without a quota, never throttled.
limit g app 10000 10000
check "a runtime's new limit over our -1 is saved and lifted again" \
	wait_for 5 saved_is g app 10000 10000
check "... the cgroup reads -1 again" wait_for 5 ctq_is g app -1
check "busy loops start" busy g app
t0=$(throttled "$G"); tp0=$(throttled "$(podp g)"); u0=$(usage_ns "$G")
check "the busy container runs a CPU-second" wait_for 60 ran_ns_since "$G" "$u0" 1000000000
check "unset: nr_throttled stays 0 (container)" test "$(throttled "$G")" -eq "$t0"
check "unset: nr_throttled stays 0 (pod)" test "$(throttled "$(podp g)")" -eq "$tp0"
busy_stop

# In-place resize to 0.5 CPU: fractional, back on the pool, with the
# runtime's new quota; the pod gets its quota back (kubelet's 1 CPU: more
# than the new sum, and what kubelet itself would restore first).
limit g app 5000 10000
check "resized to 0.5: shared" wait_for 5 kind_is g app shared
check "the runtime's new quota stands" wait_for 5 ctq_is g app 5000
check "the pod's quota is back" wait_for 5 podq_is g 100000
check "explain: nothing lifted" wait_for 5 kept g app
check "restore logged with the reason" wait_for 5 log_count_is \
	"pod cgroup $(podp g): CFS quota 100000/100000 us restored: no container" 1
check "counted" wait_for 10 counter_at_least cpu_quota_restored 1
limit g app 10000 10000
check "back to 1 CPU: exclusive again" wait_for 5 allowed_is g app 0
check "... lifted again" wait_for 5 ctq_is g app -1
check "... and its pod" wait_for 5 podq_is g -1

# --- kill -9 and restart ------------------------------------------------------
# The bundle goes away too: the saved limit on the cgroup is all that says
# the container is an integer one (the cgroup reads -1).
daemon_kill9
restores=$(logged "us restored")
gid=$(cid g/app)
mv "$IT_WORK/bundles/$gid" "$IT_WORK/hidden-$gid"
check "daemon restarts" daemon_start "$ROOT" --resize-check-ms 100
check "recovered as integer from the saved limit" kind_is g app integer
check "keeps its CPU" allowed_is g app 0
checked
check "still lifted after the restart" ctq_is g app -1
check "... and its pod" podq_is g -1
check "nothing restored and lifted again" log_count_is "us restored" "$restores"
limit g app 5000 10000
check "a later resize to 0.5 still restores: shared" wait_for 5 kind_is g app shared
check "... the runtime's quota stands" wait_for 5 ctq_is g app 5000
check "... the pod's is back" wait_for 5 podq_is g 100000
mv "$IT_WORK/hidden-$gid" "$IT_WORK/bundles/$gid"

# A container that goes gives its pod the quota back (its sandbox stays).
limit g app 10000 10000
check "integer again: lifted" wait_for 5 ctq_is g app -1
check "... pod too" wait_for 5 podq_is g -1
container_stop g app
check "container gone: its pod's quota is back" wait_for 5 podq_is g 100000
check "... its mark gone (explain of the sandbox)" explain_q g POD ".pod.lifted_by_cpusetd | not"

# --- SIGTERM, then keep ------------------------------------------------------------
pod_prep k 1000
pod_start k guaranteed 1000
K=$(cgp k app)
check "a new integer container: lifted" wait_for 5 ctq_is k app -1
check "... pod too" wait_for 5 podq_is k -1
daemon_stop
check "SIGTERM leaves it lifted" ctq_is k app -1
check "... and its pod" podq_is k -1
check "daemon starts with keep" daemon_start "$ROOT" --resize-check-ms 100 --exclusive-cpu-quota keep
check "keep: the container's quota is back" wait_for 5 ctq_is k app 100000
check "keep: the pod's quota is back" wait_for 5 podq_is k 100000
check "keep: logged with the reason" log_count_is \
	"$(cid k/app | cut -c1-12)): CFS quota 100000/100000 us restored: exclusive_cpu_quota = keep" 1
check "keep: explain says in force" kept k app

limit k app 10000 10000
checked
check "keep: the new limit stays" ctq_is k app 10000
check "busy loops start" busy k app
t0=$(throttled "$K")
check "keep: nr_throttled grows" wait_for 60 throttled_since "$K" "$t0"
busy_stop

pod_stop k
pod_prep j 1000
pod_start j guaranteed 1000
check "keep: a new integer container gets its CPU" wait_for 5 allowed_is j app 0
checked
check "keep: its quota stays" ctq_is j app 100000
check "keep: its pod's stays" podq_is j 100000
check "keep: nothing lifted for it" log_count_is "$(cid j/app | cut -c1-12)): CFS quota 100000/100000 us lifted" 0
it_done
