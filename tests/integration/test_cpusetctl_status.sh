#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cpusetctl status against the hand-written fixture
# tests/unit/fixtures/status-example.json: the summary's key lines, --json,
# the missing-file error (exit 1), an unparsable file (exit 1) and an
# unknown command (exit 2); and the liveness check (exit 3 with one line
# on stderr, the state still shown) on copies of it whose daemon stopped,
# is gone, is another program, or has a late heartbeat. The "daemon" is a
# copy of sleep named cpusetd. Needs no root.
#
# Usage: test_cpusetctl_status.sh [BUILD_DIR]   (default build; or set
# CPUSETCTL to the binary). Prints one "ok - <name>" / "not ok - <name>"
# line per check and exits 1 when any failed.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-build}
case $out in /*) ;; *) out=$top/$out ;; esac
ctl=${CPUSETCTL:-$out/cpusetctl}
fixture=$top/tests/unit/fixtures/status-example.json
failed=0

dir=$(mktemp -d) || exit 1
fake=
trap '[ -z "$fake" ] || kill "$fake" 2>/dev/null; rm -rf "$dir"' EXIT

# A process whose comm is cpusetd, standing in for the daemon.
cp "$(command -v sleep)" "$dir/cpusetd" || exit 1
"$dir/cpusetd" 600 &
fake=$!
mypidns=$(stat -Lc %i /proc/self/ns/pid)

# live [JQ_FILTER]: the fixture as the live fake daemon would write it now
# (heartbeat every 15 s), then JQ_FILTER applied, into $dir/status.json.
live() {
	jq --argjson pid "${fake:-0}" --argjson ns "$mypidns" --argjson now "$(date +%s)" \
		".daemon.pid = \$pid | .daemon.pid_ns = \$ns | .daemon.heartbeat = \$now | ${1:-.}" \
		"$fixture" >"$dir/status.json.tmp" && mv "$dir/status.json.tmp" "$dir/status.json"
}
live || exit 1

check() {	# check NAME COMMAND...: ok when COMMAND succeeds
	name=$1; shift
	if "$@" >/dev/null 2>&1; then
		echo "ok - $name"
	else
		echo "not ok - $name"
		failed=1
	fi
}

# shellcheck disable=SC2317 # called through check
has() {		# has FILE PATTERN: FILE has a line matching the ERE PATTERN
	grep -Eq -- "$2" "$1"
}

if [ ! -x "$ctl" ]; then
	echo "not ok - cpusetctl binary exists at $ctl"
	exit 1
fi
check "the stand-in daemon's comm is cpusetd" test "$(cat "/proc/$fake/comm")" = cpusetd

"$ctl" status --state-dir "$dir" >"$dir/out" 2>"$dir/err"; rc=$?
check "status exits 0" test "$rc" -eq 0
check "status writes nothing to stderr" test ! -s "$dir/err"
check "status shows online CPUs" has "$dir/out" '^Online CPUs: +0-1 \(2 CPUs\)$'
check "status shows NUMA node 0" has "$dir/out" '^NUMA node 0: +0-1'
check "status shows the shared pool" has "$dir/out" '^Shared pool: +1 \(1 CPU\)$'
check "status shows reserved CPUs" has "$dir/out" '^Reserved: +0 \(1 CPU\)$'
check "status has the table header" has "$dir/out" 'NAMESPACE/POD/CONTAINER +KIND +QOS +CPUS +MEMS +ID'
check "status shows the integer container" \
	has "$dir/out" '^  prod/postgres-0/postgres +integer +Guaranteed +0 +0 +e1d2c3b4a596$'
check "status shows the sandbox as POD" \
	has "$dir/out" '^  prod/postgres-0/POD +shared +Guaranteed +1 +- +3a4b5c6d7e8f$'
check "status shows the burstable container" \
	has "$dir/out" '^  default/web-7d4f9c8b6-x2lqz/nginx +shared +Burstable +1 +- +9f2c4d7a1b3e$'
check "status marks the container in error" \
	has "$dir/out" '^  batch/solver-1/solver +shared +Guaranteed +1 +- +7c8d9e0f1a2b +!$'
# The table's rows are the lines after its header up to the legend.
check "status sorts by namespace/pod/container" sh -c \
	"sed -n '/NAMESPACE\\/POD/,/^  (ERR/p' '$dir/out' | sed '1d;\$d' |
	 awk '{print \$1}' | LC_ALL=C sort -c"
check "status lists the error" \
	has "$dir/out" '^  batch/solver-1/solver: insufficient_cpus, rejected$'
check "status shows the error message" has "$dir/out" 'needs 2 exclusive CPUs, 1 free'
check "status shows counters" has "$dir/out" 'events 41, events_lost 0, resyncs 1'
check "status shows convergence percentiles" \
	has "$dir/out" 'count 5, last 182\.3 µs, p50 182\.3 µs, p99 1204\.5 µs'

"$ctl" --state-dir "$dir" status --json >"$dir/json" 2>"$dir/err"; rc=$?
check "status --json exits 0" test "$rc" -eq 0
check "status --json is pretty-printed" has "$dir/json" '^  "shared_pool": "1",$'
check "status --json keeps the error" has "$dir/json" '"reason": "insufficient_cpus"'
# jq comes with make deps: no silent skip when it is missing.
check "status --json equals the file" sh -c \
	"[ \"\$(jq -S . '$dir/status.json')\" = \"\$(jq -S . '$dir/json')\" ]"

# --- liveness: exit 3, one line on stderr, the last state still shown ------

# not_running WHAT ERE: status exits 3, prints the summary all the same and
# one stderr line matching ERE.
not_running() {
	"$ctl" status --state-dir "$dir" >"$dir/out" 2>"$dir/err"; rc=$?
	check "$1: status exits 3" test "$rc" -eq 3
	check "$1: the last state is still shown" has "$dir/out" '^Online CPUs: +0-1'
	check "$1: one line says why" sh -c "[ \$(wc -l <'$dir/err') -eq 1 ]"
	check "$1: '$2'" has "$dir/err" "$2"
}

check "a running daemon is shown as such" has "$dir/out" '^daemon running, heartbeat [0-9]+s ago \(every 15 s\)$'

live '.daemon.state = "stopped" | .daemon.stopped_at = .daemon.heartbeat'
not_running "stopped cleanly" "^cpusetctl: status is [0-9]+ s old: daemon not running: pid $fake stopped cleanly$"
check "stopped: the summary says so" has "$dir/out" '^daemon STOPPED at '
"$ctl" status --json --state-dir "$dir" >"$dir/json" 2>"$dir/err"; rc=$?
check "stopped: status --json exits 3 too, the JSON still printed" sh -c \
	"[ $rc -eq 3 ] && jq -e '.daemon.state == \"stopped\"' '$dir/json' >/dev/null"

live '.daemon.heartbeat -= 60'
not_running "heartbeat 60 s old, every 15 s" \
	"^cpusetctl: status is 6[0-9] s old \(heartbeat every 15 s\): daemon not running or hung\? pid $fake is still there$"
live '.daemon.heartbeat -= 40'
"$ctl" status --state-dir "$dir" >/dev/null 2>"$dir/err"; rc=$?
check "heartbeat 40 s old, every 15 s: within 3 x 15 + 5 s, exits 0" test "$rc" -eq 0 -a ! -s "$dir/err"

sleep 600 &
other=$!
live ".daemon.pid = $other"
not_running "pid reused by another program" \
	"^cpusetctl: status is [0-9]+ s old \(heartbeat every 15 s\): daemon not running\? pid $other is now 'sleep', not 'cpusetd'$"
kill "$other"; wait "$other" 2>/dev/null

live '.daemon.heartbeat -= 3600'
for cmd in "map --color=never" "explain prod/postgres-0/postgres"; do
	# shellcheck disable=SC2086 # cmd is the command and its options
	"$ctl" --state-dir "$dir" $cmd >"$dir/out" 2>"$dir/err"; rc=$?
	check "${cmd%% *} on a stale status: exits 3, output still there" \
		test "$rc" -eq 3 -a -s "$dir/out"
	check "${cmd%% *} on a stale status: says how old" has "$dir/err" '^cpusetctl: status is 60 min old'
done

kill "$fake"; wait "$fake" 2>/dev/null
gone=$fake
fake=
live ".daemon.pid = $gone"
not_running "pid gone (kill -9: no stopped mark)" \
	"^cpusetctl: status is [0-9]+ s old \(heartbeat every 15 s\): daemon not running\? pid $gone is gone$"
# From a pod without hostPID the daemon's PID means nothing: only the
# heartbeat can tell, and it is fresh.
live ".daemon.pid = $gone | .daemon.pid_ns = $mypidns + 1"
"$ctl" status --state-dir "$dir" >/dev/null 2>"$dir/err"; rc=$?
check "another PID namespace, fresh heartbeat: the pid is not checked, exits 0" \
	test "$rc" -eq 0 -a ! -s "$dir/err"

"$ctl" status --state-dir "$dir/absent" >"$dir/out" 2>"$dir/err"; rc=$?
check "missing status.json exits 1" test "$rc" -eq 1
check "missing status.json prints one clear line" sh -c \
	"[ \"\$(cat '$dir/err')\" = 'cpusetctl: no status at $dir/absent/status.json: is cpusetd running?' ]"

mkdir "$dir/bad" && printf '{"version": 1,' >"$dir/bad/status.json"
"$ctl" status --state-dir "$dir/bad" >"$dir/out" 2>"$dir/err"; rc=$?
check "unparsable status.json exits 1" test "$rc" -eq 1
check "unparsable status.json prints one line" sh -c \
	"[ \$(wc -l <'$dir/err') -eq 1 ] && grep -q 'cannot parse' '$dir/err'"

"$ctl" --state-dir "$dir" frobnicate >"$dir/out" 2>"$dir/err"; rc=$?
check "unknown command exits 2" test "$rc" -eq 2
check "unknown command prints one specific line" sh -c \
	"[ \$(wc -l <'$dir/err') -eq 1 ] && grep -q \"unknown command 'frobnicate'\" '$dir/err'"

"$ctl" --help >"$dir/out" 2>&1; rc=$?
check "--help exits 0 and shows examples" sh -c "[ $rc -eq 0 ] && grep -q '^Examples:' '$dir/out'"

exit "$failed"
