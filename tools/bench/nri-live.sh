#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The live NRI benchmark (issue 23, "Speed"): build/nri-runtime, a test
# runtime of ours, speaks NRI to the real daemon (build/cpusetd, BPF
# attached, real cgroups) on a socket of its own, in a node built the way
# kubelet and runc build one on cgroup v1: a private kubepods root under
# the test subtree, cgroupfs driver paths ROOT/burstable/pod<uid>/<cid>
# (ROOT/pod<uid>/<cid> for Guaranteed), cpuset.cpus/mems copied from the
# parent as runc does, kubelet's CFS quota in the cpu hierarchy, a busybox
# sleep in every container cgroup.
#   1. Synchronize with SYNC_N (1,000) running containers in as many
#      pods, one of them Guaranteed 1 CPU (what fits 2 CPUs), each with
#      its bundle as containerd writes it, the daemon freshly started (its
#      own startup resync done): SYNC_REPS connections, one Synchronize
#      each, 0.5 s after Configure; median, max and the first.
#   2. CreateContainer with CREATE_N (100) running shared containers:
#      ROUNDS (1,000) of a new Burstable container, then ROUNDS of a
#      Guaranteed 1-CPU one (the pool shrinks: in-band updates for the
#      100), each kind back to back and each round after 20 ms idle, a
#      daemon session each; p50/p99/max of the round trip as the runtime
#      sees it, and the daemon's own time from its .prom.
# Each figure is one line with its target beside it; a failed scene
# exits non-zero and prints none. Root.
#   tools/bench/nri-live.sh [BUILD_DIR]    (SYNC_N, SYNC_REPS, CREATE_N, ROUNDS;
#                                           ROUNDS=0: the Synchronize alone,
#                                           SYNC_N=0: the creations alone;
#                                           BENCH_PERF=FILE: perf record of the daemon;
#                                           BENCH_LOG=FILE: its log of scene 1 kept)
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
SYNC_N=${SYNC_N:-1000}
SYNC_REPS=${SYNC_REPS:-5}
CREATE_N=${CREATE_N:-100}
ROUNDS=${ROUNDS:-1000}
. tests/integration/lib.sh

[ -n "$IT_V2" ] && it_skip_all "cgroup v1 scene (the VM lane has v2)"
[ -x "$IT_OUT/nri-runtime" ] || it_skip_all "$IT_OUT/nri-runtime not built"
it_setup bench-nri-live
ROOT=$IT_CG/kubepods
IT_ROOT=$ROOT
it_mkroot "$ROOT/burstable"
SOCK=$IT_WORK/nri.sock
CPU=/sys/fs/cgroup/cpu	# v1's cpu hierarchy (it_cleanup removes $IT_CG there too)
[ -e "$CPU/cpu.cfs_quota_us" ] || it_skip_all "no cgroup v1 cpu hierarchy at $CPU"
SLEEPS=()

fail() {
	echo "bench-nri-live: $*" >&2
	tail -n 20 "$IT_WORK/daemon.log" >&2 2>/dev/null
	exit 1
}

# The scene's processes go first: a cgroup with a task cannot be removed.
scene_stop() {
	[ ${#SLEEPS[@]} -gt 0 ] && kill -KILL "${SLEEPS[@]}" 2>/dev/null
	for p in "${SLEEPS[@]}"; do wait "$p" 2>/dev/null; done
	SLEEPS=()
}
cleanup() { daemon_stop; scene_stop; it_cleanup; }
trap cleanup EXIT

# scene N GUARANTEED: N running containers, one per pod, the first
# GUARANTEED of them Guaranteed; their list for nri-runtime in
# $IT_WORK/list ("b|g POD_UID CID PID").
scene() {
	local n=$1 g=$2 i kind u id cg q
	: >"$IT_WORK/list"
	for ((i = 0; i < n; i++)); do
		kind=b
		[ "$i" -lt "$g" ] && kind=g
		u=$(uid "pod$i"); id=$(cid "pod$i/c")
		cg=$(cg_path "$([ $kind = g ] && echo guaranteed || echo burstable)" "$u" "$id") ||
			fail "no cgroup path"
		it_mkroot "$cg"
		# cpu: the CFS limits kubelet sets (pod = its one container's):
		# 1 CPU for Guaranteed, 500m for Burstable.
		mkdir -p "$CPU$cg"
		q=$([ $kind = g ] && echo 100000 || echo 50000)
		echo "$q" >"$CPU${cg%/*}/cpu.cfs_quota_us" && echo "$q" >"$CPU$cg/cpu.cfs_quota_us" ||
			fail "cannot set the CFS quota of $cg"
		/bin/busybox sleep 100000 &
		SLEEPS+=($!)
		echo $! >"$IT_CPUSET$cg/cgroup.procs" && echo $! >"$CPU$cg/cgroup.procs" ||
			fail "cannot move $! into $cg"
		echo "$kind $u $id $!" >>"$IT_WORK/list"
		# Its bundle, as containerd writes it: the daemon's start-up
		# resync reads it, as on a node (names and limits as nri-runtime
		# sends them: pod "p-" and the UID's first 8, sandbox id the
		# container id reversed, namespace demo).
		mkdir -p "$IT_WORK/bundles/$id"
		printf '{"annotations": {"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.sandbox-id": "%s", "io.kubernetes.cri.sandbox-name": "p-%s", "io.kubernetes.cri.sandbox-namespace": "demo", "io.kubernetes.cri.sandbox-uid": "%s", "io.kubernetes.cri.container-name": "c"}, "linux": {"resources": {"cpu": {"shares": %s, "quota": %s, "period": 100000}}}}\n' \
			"$(rev <<<"$id")" "${u:0:8}" "$u" "$([ $kind = g ] && echo 1024 || echo 102)" "$q" \
			>"$IT_WORK/bundles/$id/config.json"
	done
}

# The daemon, freshly started, connects to nri-runtime's socket.
run() {
	"$IT_OUT/nri-runtime" -s "$SOCK" -l "$IT_WORK/list" -R "$ROOT" "$@" \
		>"$IT_WORK/out" 2>"$IT_WORK/err" &
	local rt=$!
	wait_for 5 test -S "$SOCK" || fail "nri-runtime did not listen"
	# As shipped (log level info), not the tests' debug: a line per
	# request is not what a node pays.
	daemon_start "$ROOT" --nri-socket "$SOCK" --log-level info || fail "the daemon did not start"
	# BENCH_PERF=FILE: the daemon profiled from the end of its start
	# (finding where the time goes; the figures are then not clean).
	[ -n "${BENCH_PERF:-}" ] && { perf record -q -F 2000 --call-graph dwarf,16384 -p "$IT_DAEMON" -o "$BENCH_PERF" & }
	wait "$rt" || { cat "$IT_WORK/err" >&2; fail "nri-runtime failed"; }
	grep -q "NRI: connected to nri-runtime" "$IT_WORK/daemon.log" ||
		fail "the daemon never said it was connected"
}

# own_time METHOD N: the daemon's own time per request of METHOD (its
# cpusetd_nri_request_seconds histogram: request read to reply queued),
# once its .prom counts N of them: the smallest bounds holding 50 % and
# 99 %.
own_time() {
	local prom=$IT_WORK/prom/cpusetd.prom
	wait_for 20 eval "grep -qx 'cpusetd_nri_request_seconds_count{method=\"$1\"} $2' $prom" ||
		fail "the daemon's .prom never counted $2 $1"
	sed -n "s/^cpusetd_nri_request_seconds_bucket{method=\"$1\",le=\"\([^\"]*\)\"} \([0-9]*\)\$/\1 \2/p" "$prom" |
		awk -v m="$1" -v n="$2" '{ if (p50 == "" && $2 >= 0.5 * n) p50 = $1; if (p99 == "" && $2 >= 0.99 * n) p99 = $1 }
			END { printf "  the daemon'"'"'s own time per %s (cpusetd_nri_request_seconds, %d requests): p50 <= %s s, p99 <= %s s\n", m, n, p50, p99 }'
}

cpus_of() { cat "$IT_CPUSET$(cg_path "$1" "$(uid "$2")" "$(cid "$2/c")")/cpuset.cpus"; }

echo "# $(nproc) CPUs online $IT_ONLINE, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$SYNC_N" -gt 0 ]; then
	t0=$(date +%s)
	scene "$SYNC_N" 1
	echo "# scene 1: $SYNC_N containers with a process each in $(($(date +%s) - t0)) s"
	run -r "$SYNC_REPS"
	grep -v '^#' "$IT_WORK/out"
	own_time Synchronize "$SYNC_REPS"
	# Placed: the Guaranteed one holds one CPU of its own, the shared ones
	# the rest (the check can fail: nothing placed leaves them all 0-1).
	g=$(cpus_of guaranteed pod0); s=$(cpus_of burstable "pod$((SYNC_N - 1))")
	case $g in *[,-]*|"") fail "the Guaranteed container has $g, not one CPU" ;; esac
	[ "$s" != "$IT_ONLINE" ] && [ "${s/$g/}" = "$s" ] ||
		fail "a shared container has $s beside the exclusive $g"
	echo "# placed: Guaranteed $g, shared $s; $(grep -c 'NRI synchronize' "$IT_WORK/daemon.log") synchronizes in the log"
	daemon_stop
	[ -n "${BENCH_LOG:-}" ] && cp "$IT_WORK/daemon.log" "$BENCH_LOG"
	scene_stop
	find "$IT_CPUSET$ROOT" "$CPU$ROOT" -mindepth 1 -depth -type d -exec rmdir {} + ||
		fail "scene 1 not removed"
	it_mkroot "$ROOT/burstable"
	: >"$IT_WORK/daemon.log"
fi

[ "$ROUNDS" -gt 0 ] || exit 0
scene "$CREATE_N" 0
# A fresh daemon each: its histogram holds one kind, back to back or
# each after idle.
for kind in "" -g; do
	for mode in -b -i; do
		run -c "$ROUNDS" -C "$IT_CPUSET" $kind $mode
		grep -v '^#' "$IT_WORK/out"
		own_time CreateContainer "$ROUNDS"
		daemon_stop
		: >"$IT_WORK/daemon.log"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
