#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Overhead of cpusetd's BPF telemetry on a context-switch-heavy load, in one run:
#   tools/bench/telemetry.sh [--loaded] [BUILD_DIR] [ROUNDS]
#
# 1. ROUNDS (default 9) rounds of hackbench (`perf bench sched messaging`
#    when hackbench is missing), each round running it three ways, in an
#    order that rotates from round to round so a load that ramps up or
#    down during the run hits every arm alike:
#      none   no daemon
#      notel  the daemon without its telemetry (CPUSETD_TELEMETRY_OFF=1)
#      tel    the daemon as shipped (telemetry = basic, the default)
#      old    with BENCH_BEFORE=DIR: DIR/cpusetd (an earlier build), its
#             telemetry attached, for before/after figures from one run
#    Prints each arm's median time and min-max spread, and the throughput
#    ratios (median time of one arm / median time of the other):
#    telemetry = tel vs notel (what the telemetry costs, the rest of the
#    daemon running in both; the daemon's other programs, such as the
#    foreign-write hook on every write(2), cost what they cost on either
#    side), daemon = tel vs none, and with BENCH_BEFORE the earlier
#    telemetry = old vs notel.
# 2. BENCH_STATS_RUNS (default 5) more runs per scene (BENCH_SCENES, below)
#    of the daemon at each telemetry level, `telemetry = basic` and
#    `telemetry = full` (alternating with as many of the BENCH_BEFORE
#    daemon, at its default level) and kernel.bpf_stats_enabled=1
#    (restored after): run_time_ns / run_cnt of each program the daemon
#    loaded, from bpftool; the median over the runs and its spread. bpf_stats adds two clock reads of its own to every run, so the
#    throughput rounds run without it.
#    In each of these runs an empty tp_btf/sched_switch program
#    (tools/bench/empty.bpf.c, loaded by build/bench-bpf-load) is attached
#    beside the daemon's: the floor any sched_switch program pays here.
#    The target figure is the ratio telemetry/empty, taken within each run
#    (same load, same bpf_stats), printed per scene and level as the
#    median over the runs with its spread ("telemetry/empty basic: 2.10x
#    (2.01-2.20 over 5 runs)"); absolute ns move with the host, the ratio
#    much less.
#    Scenes (BENCH_SCENES, default "plain managed"):
#      plain    hackbench in this script's cgroup; the daemon manages
#               nothing (its kubepods root does not exist), so the
#               per-container parts of the program never run
#      managed  the hackbench groups run in two containers the daemon
#               manages, built as kubelet and runc build them (cgroup
#               v1: cpuset <root>/kubepods/burstable/pod<uid>/<64-hex id>,
#               cpus and mems copied from the parent; an OCI bundle with
#               the CRI annotations the daemon reads), half the groups
#               each: placement has their entries, so the full level's
#               placement lookup, cgroup_stats hash and atomics run on
#               every switch of theirs
#    BENCH_VARIANTS="all" (or names: full no-clock no-ident ...) adds, in
#    the same rotation, one run per variant and round of
#    build/bench/telemetry-NAME.bpf.o: the telemetry's switch program with
#    one part left out (TEL_SKIP in bpf/telemetry.bpf.c, the list in the
#    Makefile's TEL_VARIANTS), loaded alone beside the empty program, no
#    daemon: where the cost goes. Also the sum of every program's
#    run time over the load's CPU time (wall time x CPUs): the share of
#    the machine the programs' own work took, a figure the round-to-round
#    noise of the throughput ratios cannot blur (it leaves out what the
#    programs cost others through the caches).
#
# A shared machine makes any figure noisy, so the script says how loaded
# it was: /proc/loadavg before and after (hackbench's own 160 tasks push
# it up while it runs), and the CPU time the rest of the machine used
# meanwhile (all busy CPU time in /proc/stat minus this script's own
# children), as average CPUs busy, and the time stolen by the hypervisor.
#
# Options and environment:
#   --loaded / BENCH_LOADED=1   run `stress-ng --cpu 2` beside it (the loaded figure)
#   BENCH_QUIET_BELOW=L         first wait (BENCH_QUIET_WAIT s at most, default 600)
#                               until the 1-min loadavg is below L, e.g. 0.5
#   BENCH_IDLE_BELOW=C          ... and until the machine used less than C CPUs
#                               (e.g. 0.1) over 10 s: loadavg decays for
#                               minutes after a hackbench run, this does not
#   BENCH_GROUPS, BENCH_LOOPS   hackbench -g/-l (default 4 and 1500)
#   BENCH_BEFORE=DIR            the "old" arm (see 1.)
#   BENCH_VARIANTS=all|NAMES    the variants' runs (see 2.; plain scene only)
#   BENCH_SCENES="plain managed"  the scenes of the bpf_stats runs (see 2.)
#   ROUNDS=0                    no throughput rounds (only the bpf_stats runs)
# Needs root. The plain scene touches no cgroup: the daemon gets a
# kubepods root that does not exist, so it places nothing and only its
# BPF programs run; the managed one builds a private kubepods tree
# (/cpusetd-bench-tel-PID) and removes it at exit.
set -u
loaded=${BENCH_LOADED:-0}
if [ "${1:-}" = --loaded ]; then
	loaded=1
	shift
fi
out=${1:-build}
rounds=${2:-9}
groups=${BENCH_GROUPS:-4}
loops=${BENCH_LOOPS:-1500}
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" = 0 ] || { echo "bench-telemetry: needs root" >&2; exit 1; }
[ -x "$out/cpusetd" ] || { echo "bench-telemetry: $out/cpusetd not built" >&2; exit 1; }
[ "$rounds" -ge 0 ] 2>/dev/null || { echo "bench-telemetry: ROUNDS must be >= 0" >&2; exit 1; }
[ -x "$out/bench-bpf-load" ] && [ -f "$out/bench/empty.bpf.o" ] ||
	{ echo "bench-telemetry: $out/bench-bpf-load or $out/bench/empty.bpf.o not built" >&2; exit 1; }
variants=${BENCH_VARIANTS:-}
if [ "$variants" = all ]; then
	variants=$(cd "$out/bench" && ls telemetry-*.bpf.o | sed 's/^telemetry-//; s/\.bpf\.o$//' | tr '\n' ' ')
fi
for v in $variants; do
	[ -f "$out/bench/telemetry-$v.bpf.o" ] ||
		{ echo "bench-telemetry: no variant $v ($out/bench/telemetry-$v.bpf.o)" >&2; exit 1; }
done
scenes=${BENCH_SCENES:-plain managed}
for sc in $scenes; do
	case $sc in
	plain) ;;
	managed) command -v hackbench >/dev/null ||
		{ echo "bench-telemetry: the managed scene needs hackbench" >&2; exit 1; } ;;
	*) echo "bench-telemetry: no scene $sc (plain, managed)" >&2; exit 1 ;;
	esac
done
before_dir=${BENCH_BEFORE:-}
[ -z "$before_dir" ] || [ -x "$before_dir/cpusetd" ] ||
	{ echo "bench-telemetry: $before_dir/cpusetd not built" >&2; exit 1; }

work=$(mktemp -d /tmp/cpusetd-bench-tel.XXXXXX)
pin=/sys/fs/bpf/cpusetd-bench-tel-$$	# not the node's pin dir
stats_old=$(cat /proc/sys/kernel/bpf_stats_enabled)
stress=
. tools/bench/lib.sh
LOADERS=()
cleanup() {
	loaders_off
	bench_daemon_off
	scene_managed_off
	if [ -n "$stress" ]; then
		kill "$stress" 2>/dev/null
		wait "$stress" 2>/dev/null
	fi
	sysctl -q kernel.bpf_stats_enabled="$stats_old"
	rm -rf "$work" "$pin"
}
trap cleanup EXIT

if command -v hackbench >/dev/null; then
	load="hackbench -g $groups -l $loops"
	load_s() { hackbench -g "$groups" -l "$loops" 2>&1 | sed -n 's/^Time: *//p'; }
else
	load="perf bench sched messaging -g $groups -l $loops"
	load_s() {
		perf bench sched messaging -g "$groups" -l "$loops" 2>&1 |
			sed -n 's/.*Total time: *\([0-9.]*\).*/\1/p'
	}
fi

daemon_on() { bench_daemon_on "telemetry attached" --textfile "$work/cpusetd.prom"; }

# --- the managed scene: two containers as kubelet and runc make them ---
# The cpuset hierarchy (v1) or the unified one (v2, cpuset enabled down
# the tree), and the kubepods tree's cgroups, top down.
if [ -d /sys/fs/cgroup/cpuset ] && [ -e /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
	CG=/sys/fs/cgroup/cpuset
	CG_V2=0
else
	CG=/sys/fs/cgroup
	CG_V2=1
fi
MROOT=/cpusetd-bench-tel-$$
MPODS=$MROOT/kubepods
MCTS=()
MDIRS=()
# mkcg REL: a cgroup of the tree; v1 copies cpus/mems from the parent
# (v1 starts them empty), v2 enables cpuset for its children.
mkcg() {
	local d=$CG$1
	mkdir "$d" || exit 1
	MDIRS+=("$d")
	if [ "$CG_V2" = 1 ]; then
		echo +cpuset >"$d/../cgroup.subtree_control" 2>/dev/null
	else
		cat "$d/../cpuset.cpus" >"$d/cpuset.cpus"
		cat "$d/../cpuset.mems" >"$d/cpuset.mems"
	fi
}
scene_managed_on() {
	local i uid id
	mkdir -p "$work/bundles"
	[ "$CG_V2" = 1 ] && echo +cpuset >"$CG/cgroup.subtree_control" 2>/dev/null
	mkcg "$MROOT"
	mkcg "$MPODS"
	mkcg "$MPODS/burstable"
	for i in 0 1; do
		uid=$(printf '%08x-0000-4000-8000-%012d' $$ "$i")
		id=$(printf 'tel-%s-%s' $$ "$i" | sha256sum | cut -c1-64)
		# containerd writes the bundle before runc makes the cgroup;
		# burstable without a CPU quota: a shared container
		mkdir -p "$work/bundles/$id"
		printf '%s' '{"ociVersion":"1.0.2","annotations":{
			"io.kubernetes.cri.container-type":"container",
			"io.kubernetes.cri.container-name":"hackbench",
			"io.kubernetes.cri.sandbox-name":"bench-tel-'"$i"'",
			"io.kubernetes.cri.sandbox-namespace":"bench"}}' \
			>"$work/bundles/$id/config.json"
		mkcg "$MPODS/burstable/pod$uid"
		mkcg "$MPODS/burstable/pod$uid/$id"
		MCTS+=("$MPODS/burstable/pod$uid/$id")
	done
}
# scene_managed_off: removes the tree, bottom up (safe when not built).
scene_managed_off() {
	local i
	for ((i = ${#MDIRS[@]} - 1; i >= 0; i--)); do
		rmdir "${MDIRS[$i]}" 2>/dev/null
	done
	MDIRS=()
}
# managed_ready: the daemon placed both containers (status.json lists them
# with a kind); 5 s at most, else the script exits.
managed_ready() {
	for _ in $(seq 250); do
		[ "$(jq '[.containers[]? | select(.kind != null)] | length' \
			"$work/state/status.json" 2>/dev/null)" = 2 ] && return 0
		sleep 0.02
	done
	echo "bench-telemetry: the daemon did not place the managed scene's containers:" >&2
	cat "$work/daemon.log" >&2
	exit 1
}
# managed_load_s: hackbench's groups split over the two containers, run
# at once (each process joins its container before exec); the wall time.
managed_load_s() {
	local i t0 t1 pids=()
	t0=$(date +%s%N)
	for i in 0 1; do
		sh -c 'echo $$ >"$1/cgroup.procs" && exec hackbench -g "$2" -l "$3"' sh \
			"$CG${MCTS[$i]}" $(((groups + 1) / 2)) "$loops" >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	t1=$(date +%s%N)
	awk -v ns="$((t1 - t0))" 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}
daemon_off() { bench_daemon_off; }

# arm NAME: one hackbench run of that arm, its time appended to $work/NAME.
arm() {
	case $1 in
	none) load_s >>"$work/none" ;;
	notel)
		CPUSETD_TELEMETRY_OFF=1 bench_daemon_on "running without telemetry" \
			--textfile "$work/cpusetd.prom"
		load_s >>"$work/notel"
		daemon_off
		;;
	tel)
		daemon_on
		load_s >>"$work/tel"
		daemon_off
		;;
	old)
		out=$before_dir daemon_on
		load_s >>"$work/old"
		daemon_off
		;;
	esac
}

# loader_on ARGS...: build/bench-bpf-load ARGS in the background, once
# its programs are attached (5 s at most, else the script exits).
loader_on() {
	local log="$work/loader.${#LOADERS[@]}"
	"$out/bench-bpf-load" "$@" >"$log" 2>&1 &
	LOADERS+=($!)
	for _ in $(seq 250); do
		grep -q attached "$log" && return 0
		sleep 0.02
	done
	echo "bench-telemetry: bench-bpf-load $* did not attach:" >&2
	cat "$log" >&2
	exit 1
}
# loaders_off: stops every loader (safe when none runs).
loaders_off() {
	local p
	for p in "${LOADERS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	LOADERS=()
}

# record NAME FIRST SECS LAST: after a bpf_stats run, appends "program
# runs ns/run" of each program with an id above FIRST and up to LAST (the
# ones this arm loaded, not another user's loaded meanwhile) to
# $work/costs.NAME, the
# sched_switch program's ns/run over the empty one's to $work/ratio.NAME,
# and the share of the load's CPU time (SECS of wall time on every CPU)
# that the programs but the empty one took to $work/share.NAME.
record() {
	local j
	j=$(bpftool prog show -j | jq -c --argjson b "$2" --argjson l "$4" \
		'[.[] | select(.id > $b and .id <= $l and .run_cnt > 0)]')
	jq -r '.[] | "\(.name) \(.run_cnt) \(.run_time_ns / .run_cnt | floor)"' <<<"$j" >>"$work/costs.$1"
	jq -r '([.[] | select(.name == "switch_btf" or .name == "switch_raw")][0]) as $t
		| ([.[] | select(.name == "empty_switch")][0]) as $e
		| if $t and $e then ($t.run_time_ns / $t.run_cnt) / ($e.run_time_ns / $e.run_cnt)
		  else empty end' <<<"$j" >>"$work/ratio.$1"
	jq -r --arg s "$3" --argjson n "$(nproc)" '
		[.[] | select(.name != "empty_switch") | .run_time_ns] | add // 0
		| . / (($s | tonumber) * 1e9 * $n) * 100' <<<"$j" >>"$work/share.$1"
}

# costs NAME BUILD_DIR LEVEL SCENE: one run of that build's daemon at
# telemetry LEVEL ("" = its default) in SCENE with bpf_stats on and the
# empty program beside it (see record). Its programs are the ones loaded
# after this point (ids only grow).
costs() {
	local first last secs root=/cpusetd-bench-none
	first=$(bpftool prog show -j | jq '[.[].id] | max // 0')
	sysctl -q kernel.bpf_stats_enabled=1
	loader_on "$out/bench/empty.bpf.o"
	[ "$4" = managed ] && root=$MPODS
	out=$2 BENCH_CONF=${3:+telemetry = $3} BENCH_KUBEPODS_ROOT=$root bench_daemon_on \
		"telemetry attached" --textfile "$work/cpusetd.prom" \
		--bundle-path "$work/bundles/{id}/config.json"
	[ "$4" = managed ] && managed_ready
	last=$(bpftool prog show -j | jq '[.[].id] | max // 0')
	if [ "$4" = managed ]; then
		secs=$(managed_load_s)
	else
		secs=$(load_s)
	fi
	record "$1" "$first" "$secs" "$last"
	daemon_off
	loaders_off
	sysctl -q kernel.bpf_stats_enabled=0
}

# variant NAME: one bpf_stats run of build/bench/telemetry-NAME.bpf.o's
# switch program beside the empty one, no daemon; into costs.var-NAME.
variant() {
	local first last secs
	first=$(bpftool prog show -j | jq '[.[].id] | max // 0')
	sysctl -q kernel.bpf_stats_enabled=1
	loader_on "$out/bench/empty.bpf.o"
	loader_on -p switch_btf "$out/bench/telemetry-$1.bpf.o"
	last=$(bpftool prog show -j | jq '[.[].id] | max // 0')
	secs=$(load_s)
	record "var-$1" "$first" "$secs" "$last"
	loaders_off
	sysctl -q kernel.bpf_stats_enabled=0
}

# ratio_line LABEL NAME: the median of the per-run ratios and their spread.
ratio_line() {
	[ -s "$work/ratio.$2" ] || { echo "$1: no ratio (no run had both programs)"; return; }
	printf '%s: %.2fx (%.2f-%.2f over %d runs)\n' "$1" "$(median <"$work/ratio.$2")" \
		"$(sort -g "$work/ratio.$2" | head -1)" "$(sort -g "$work/ratio.$2" | tail -1)" \
		"$(wc -l <"$work/ratio.$2")"
}

# ns_of NAME PROG: "median (min-max)" of PROG's ns/run over NAME's runs.
ns_of() {
	awk -v p="$2" '$1 == p { print $3 }' "$work/costs.$1" | sort -n |
		awk '{ a[NR] = $1 } END { if (NR) printf "%d (%d-%d)", a[int((NR + 1) / 2)], a[1], a[NR] }'
}

# costs_report NAME: per program, the median ns/run over the runs, its
# min-max, and the runs of the median run.
costs_report() {
	local p
	for p in $(cut -d' ' -f1 "$work/costs.$1" | sort -u); do
		awk -v p="$p" '$1 == p { print $3, $2 }' "$work/costs.$1" | sort -n | awk -v p="$p" '
			{ ns[NR] = $1; runs[NR] = $2 }
			END { m = int((NR + 1) / 2)
				printf "  %-16s median %5d ns/run  spread %d-%d over %d runs (%d runs of the program in the median one)\n",
					p, ns[m], ns[1], ns[NR], NR, runs[m] }'
	done
}

# quiet: the gates of BENCH_QUIET_BELOW and BENCH_IDLE_BELOW hold now.
quiet() {
	local b0 b1
	if [ -n "${BENCH_QUIET_BELOW:-}" ]; then
		awk -v l="$BENCH_QUIET_BELOW" '{ exit !($1 < l) }' /proc/loadavg || return 1
	fi
	[ -n "${BENCH_IDLE_BELOW:-}" ] || return 0
	b0=$(bench_busy_ticks)
	sleep 10
	b1=$(bench_busy_ticks)
	awk -v d="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" -v c="$BENCH_IDLE_BELOW" \
		'BEGIN { exit !(d / hz / 10 < c) }'
}
deadline=$((SECONDS + ${BENCH_QUIET_WAIT:-600}))
until quiet; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "bench-telemetry: no quiet window in ${BENCH_QUIET_WAIT:-600} s; measuring anyway" >&2
		break
	fi
	sleep 5
done

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
busy0=$(bench_busy_ticks)
steal0=$(bench_steal_ticks)
self0=$(bench_children_ticks)
t0=$(date +%s%N)
if [ "$loaded" = 1 ]; then
	stress-ng --cpu 2 --quiet &
	stress=$!
fi

sysctl -q kernel.bpf_stats_enabled=0
load_s >/dev/null	# warm-up
arms=(none notel tel)
[ -n "$before_dir" ] && arms+=(old)
n=${#arms[@]}
for i in $(seq 0 $((rounds - 1))); do
	for j in $(seq 0 $((n - 1))); do
		arm "${arms[$(((i + j) % n))]}"
	done
done

[[ " $scenes " = *" managed "* ]] && scene_managed_on
stats_arms=()
for sc in $scenes; do
	stats_arms+=("basic-$sc" "full-$sc")
	[ -n "$before_dir" ] && stats_arms+=("old-$sc")
done
for v in $variants; do stats_arms+=("var-$v"); done
m=${#stats_arms[@]}
for i in $(seq 0 $((${BENCH_STATS_RUNS:-5} - 1))); do
	for j in $(seq 0 $((m - 1))); do
		a=${stats_arms[$(((i + j) % m))]}
		case $a in
		basic-* | full-*) costs "$a" "$out" "${a%%-*}" "${a#*-}" ;;
		old-*) costs "$a" "$before_dir" "" "${a#*-}" ;;
		var-*) variant "${a#var-}" ;;
		esac
	done
done
sysctl -q kernel.bpf_stats_enabled="$stats_old"

if [ -n "$stress" ]; then
	kill "$stress" 2>/dev/null
	wait "$stress" 2>/dev/null
	stress=
fi
t1=$(date +%s%N)
busy1=$(bench_busy_ticks)
steal1=$(bench_steal_ticks)
self1=$(bench_children_ticks)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

spread() { sort -g "$work/$1" | sed -n '1p;$p' | paste -sd- ; }
side() { printf '%-30s median %s s  spread %s s  (%s)\n' "$2" "$(median <"$work/$1")" "$(spread "$1")" "$(tr '\n' ' ' <"$work/$1")"; }
ratio() {
	awk -v name="$1" -v a="$(median <"$work/$2")" -v b="$(median <"$work/$3")" \
		'BEGIN { printf "throughput %s: %.4f (%.2f %% loss)\n", name, a / b, (1 - a / b) * 100 }'
}
echo "load: $load, $rounds rounds of each arm, order rotating; $(nproc) CPUs, $(uname -r)"
echo "beside it: $([ "$loaded" = 1 ] && echo "stress-ng --cpu 2 (LOADED figure)" || echo "nothing of ours (quiet figure)")"
if [ "$rounds" -ge 1 ]; then
	side none "no daemon:"
	side notel "daemon without telemetry:"
	side tel "daemon with telemetry:"
	ratio "telemetry (with/without, daemon in both)" notel tel
	ratio "daemon (with/none)" none tel
	if [ -n "$before_dir" ]; then
		side old "daemon, telemetry of BENCH_BEFORE:"
		ratio "earlier telemetry (with/without)" notel old
	fi
fi
echo "per-program cost, ${BENCH_STATS_RUNS:-5} more runs with kernel.bpf_stats_enabled=1 (run_time_ns / run_cnt),"
echo "empty_switch = an empty tp_btf/sched_switch program attached beside in the same runs:"
for sc in $scenes; do
	for lv in basic full; do
		echo "scene $sc, telemetry = $lv:"
		costs_report "$lv-$sc"
		printf "  programs' run time / the load's CPU time (wall x %d CPUs): median %.2f %% (%s-%s), bpf_stats' own clock reads included\n" \
			"$(nproc)" "$(median <"$work/share.$lv-$sc")" \
			"$(sort -g "$work/share.$lv-$sc" | head -1 | xargs printf %.2f)" \
			"$(sort -g "$work/share.$lv-$sc" | tail -1 | xargs printf %.2f)"
	done
	if [ -n "$before_dir" ]; then
		echo "scene $sc, $before_dir/cpusetd at its default level (runs alternating with the above):"
		costs_report "old-$sc"
	fi
done
if [ -n "$variants" ]; then
	echo "variants of the switch program (build/bench/telemetry-NAME.bpf.o, alone beside the empty one), ns/run median (min-max):"
	printf '  %-12s %-18s %-18s %s\n' variant ns/run "empty ns/run" "ratio to empty, median (min-max)"
	for v in $variants; do
		printf '  %-12s %-18s %-18s %s\n' "$v" "$(ns_of "var-$v" switch_btf)" \
			"$(ns_of "var-$v" empty_switch)" "$(ratio_line x "var-$v" | sed 's/^x: //')"
	done
fi
for sc in $scenes; do
	echo "scene $sc (switch program / empty program, per run):"
	ratio_line "  telemetry/empty basic" "basic-$sc"
	ratio_line "  telemetry/empty full" "full-$sc"
	[ -n "$before_dir" ] && ratio_line "  telemetry/empty of BENCH_BEFORE" "old-$sc"
done
echo "loadavg before: $load_before   after: $load_after"
awk -v b="$((busy1 - busy0))" -v s="$((self1 - self0))" -v st="$((steal1 - steal0))" \
	-v hz="$(getconf CLK_TCK)" -v ns="$((t1 - t0))" 'BEGIN {
	sec = ns / 1e9
	printf "rest of the machine meanwhile: %.2f CPUs busy on average, %.2f CPUs stolen by the hypervisor\n",
		(b - s) / hz / sec, st / hz / sec
}'
[ "$loaded" = 1 ] && echo "(stress-ng counts as this benchmark's own load above)"
exit 0
