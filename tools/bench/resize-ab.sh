#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-resize-ab: what stands between the daemon's cpuset writes and the
# open-fds floor, one suspect at a time (BENCHMARKS.md "The suspects,
# measured"). Each arm is the daemon with one thing left out by a
# benchmark-only environment knob; the arms alternate, one bench-resize
# invocation each, ROUNDS times, the whole run under one flock -x of
# /tmp/cpusetd-bench.lock (nobody else's benchmark beside it; keep it to
# a few minutes: N=500 -r 20 is ~5 s an invocation here, the kubelet
# scene's -r 10 ~25 s). Printed per arm: the medians over the
# invocations (min-max in brackets) of the writes phase per write (start
# and stop p50), the daemon's convergence p50 and p99, the open-fds
# floor per write of the same invocations, written back to back (hot) and
# each round after the daemon's idle gap ("cold fd/write"), and in the
# kubelet scene the ratios to both floors.
#
#   sudo tools/bench/resize-ab.sh [BUILD_DIR] [N] [ROUNDS] [-- bench-resize args]
#   sudo tools/bench/resize-ab.sh build 100 3 -- -r 10 -S kubelet -L
#   ARMS="base inline" tools/bench/resize-ab.sh build 500 3
#
# Arms (ARMS= picks some):
#   base     the daemon as shipped
#   norearm  the pages the export's fork write-protected are left to fault
#            one at a time in the next resize (CPUSETD_EXPORT_NO_REARM=1)
#   inline   exports on the loop, no forked child (CPUSETD_EXPORT_INLINE=1):
#            no copy-on-write faults after an export
#   nohook   no foreign-write hook (CPUSETD_WRITE_HOOK_OFF=1): on this host
#            the fanotify mark that queues an event for each of our writes
#   notel    no sched_switch telemetry (CPUSETD_TELEMETRY_OFF=1)
#   nomap    no placement map updates (CPUSETD_PLACEMENT_MAP_OFF=1)
#   none     all four left out
#   normal   all four left out and the daemon a normal task
#            (-o sched_policy=other): what SCHED_FIFO changes in its writes
#   before   the daemon of another build, BEFORE=DIR (its cpusetd), as shipped
set -euo pipefail
out=${1:-build}
n=${2:-100}
rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = -- ] && shift
extra=("$@")
[ ${#extra[@]} -gt 0 ] || extra=(-r 20)
arms=${ARMS:-base norearm inline nohook notel nomap none}
log=$(mktemp -d /tmp/bench-resize-ab.XXXXXX)
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

arm_env() {
	case $1 in
	base) ;;
	norearm) echo CPUSETD_EXPORT_NO_REARM=1 ;;
	inline) echo CPUSETD_EXPORT_INLINE=1 ;;
	nohook) echo CPUSETD_WRITE_HOOK_OFF=1 ;;
	notel) echo CPUSETD_TELEMETRY_OFF=1 ;;
	nomap) echo CPUSETD_PLACEMENT_MAP_OFF=1 ;;
	before) ;;
	none | normal) echo CPUSETD_EXPORT_INLINE=1 CPUSETD_WRITE_HOOK_OFF=1 \
		CPUSETD_TELEMETRY_OFF=1 CPUSETD_PLACEMENT_MAP_OFF=1 ;;
	*) echo "bench-resize-ab: unknown arm $1" >&2; exit 2 ;;
	esac
}

if [ -z "${AB_LOCKED:-}" ]; then
	AB_LOCKED=1 exec flock -x /tmp/cpusetd-bench.lock "$0" "$out" "$n" "$rounds" -- "${extra[@]}"
fi
echo "# N=$n, $rounds rounds of: $arms; bench-resize ${extra[*]}; $(uptime)"
for ((i = 1; i <= rounds; i++)); do
	for a in $arms; do
		# shellcheck disable=SC2046
		d=$out
		[ "$a" = before ] && d=${BEFORE:?before: BEFORE=DIR names the other build}
		more=()
		[ "$a" = normal ] && more=(-o sched_policy=other)
		env $(arm_env "$a") "$out/bench-resize" -d "$d" -n "$n" "${extra[@]}" "${more[@]}" >"$log/$a.$i" 2>&1 ||
			echo "# bench-resize failed ($a, round $i; left out): $(tail -1 "$log/$a.$i")"
	done
done
echo "# after: $(uptime)"

python3 - "$log" "$n" "$rounds" $arms <<'EOF'
import re, statistics, sys
log, n, rounds, arms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
num = r"([0-9.]+)"

def figures(text):
    f = {}
    # writes phase p50 per write: plain "all phases", kubelet "start"/"stop"
    for kind, m in re.findall(r"^\s*(all|start|stop)\s+phases:.*?writes p50 " + num, text, re.M):
        f["writes/" + kind] = float(m) / n
    m = re.search(r"convergence p50 " + num + r" us p99 " + num, text)
    if m:
        f["daemon p50"], f["daemon p99"] = float(m.group(1)), float(m.group(2))
    for kind in ("start", "stop"):
        m = re.search(r"^\s*" + kind + r"\s+daemon p50\s+" + num + r" us p99\s+" + num, text, re.M)
        if m:
            f[kind + " p50"], f[kind + " p99"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"floor \(open fds\) p50 " + num, text) or re.search(r"open fds p50 " + num, text)
    if m:
        f["floor fd/write"] = float(m.group(1)) / n
    m = re.search(r"^  ratios N=\d+: daemon p99/floor " + num + r".*?external p50/floor " + num +
                  r".*?external p99/floor " + num, text, re.M)
    if m:
        f["p99/floor"], f["ext p50/floor"], f["ext p99/floor"] = map(float, m.groups())
    # the cold floor: each round after the daemon's idle gap (bench-resize)
    m = re.search(r"cold ratios N=\d+: daemon p99/floor " + num + r".*?external p50/floor " + num +
                  r".*?external p99/floor " + num, text)
    if m:
        f["p99/cold"], f["ext p50/cold"], f["ext p99/cold"] = map(float, m.groups())
    m = re.search(r"cold ratios.*?after the run.*?daemon p99/it " + num, text)
    if m:
        f["p99/cold-after"] = float(m.group(1))
    m = re.search(r"cold (?:floor|ratios).*?open fds(?: p50)? " + num + r" us, " + num + r" us a write", text)
    if m:
        f["cold fd/write"] = float(m.group(2))
    return f

rows = {}
for a in arms:
    per = [figures(open("%s/%s.%d" % (log, a, i)).read()) for i in range(1, rounds + 1)]
    per = [p for p in per if p] or [{}]
    keys = sorted(set().union(*per))
    rows[a] = {k: [p[k] for p in per if k in p] for k in keys}
keys = sorted(set().union(*[set(r) for r in rows.values()]), key=lambda k: (not k.startswith("writes"), k))
print("%-7s %s" % ("arm", " | ".join(k if "/floor" in k or "/cold" in k else k + " (us)" for k in keys)))
for a in arms:
    cells = []
    for k in keys:
        v = rows[a].get(k, [])
        cells.append("%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v)) if v else "-")
    print("%-7s %s" % (a, " | ".join(cells)))
print("# logs: " + log)
EOF
