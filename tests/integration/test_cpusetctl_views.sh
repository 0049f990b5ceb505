#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cpusetctl's views on the real daemon with real runc containers: map
# (plain, names the integer container on its CPU), explain (human and
# --json, for an integer, a shared and a rejected container), top --json
# (rates from the pinned telemetry maps), status's contention section, and
# <state-dir>/topology.json in Koordinator's annotation schemas.
# This host has CPUs 0-1: the integer container takes CPU 0, the shared
# pool keeps CPU 1.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start views kubepods
check "daemon starts and writes status.json" daemon_start "$ROOT"
ctl() { "$IT_OUT/cpusetctl" --state-dir "$IT_WORK/state" --pin-dir "$IT_PIN" "$@"; }
st=$IT_WORK/state

pod_start int guaranteed 1000
pod_start shr burstable 500
check "integer container on CPU 0" wait_for 5 allowed_is int app 0
check "shared container on CPU 1" wait_for 5 allowed_is shr app 1
pod_start rej guaranteed 4000
check "the 4-CPU pod is rejected" wait_for 5 has_error rej insufficient_cpus rejected
int_id=$(cid int/app)

# --- map -----------------------------------------------------------------
ctl map --color=never >"$IT_WORK/map" 2>"$IT_WORK/err"
check "map exits 0, nothing on stderr" test $? -eq 0 -a ! -s "$IT_WORK/err"
check "map draws package > NUMA node > cores" bash -c \
	"grep -q '^package ' $IT_WORK/map && grep -q '^  NUMA node 0' $IT_WORK/map &&
	 grep -Eq '^      core [0-9]+ ' $IT_WORK/map"
letter=$(sed -n 's|^  \([a-z0-9]\)  demo/int/app  integer  CPUs 0$|\1|p' "$IT_WORK/map")
check "map legend names the integer container on CPU 0" test -n "$letter"
check "map marks CPU 0 with that letter" grep -Eq "^      core .* 0 $letter( |$)" "$IT_WORK/map"
check "map marks CPU 1 as shared pool" grep -Eq '^      core .* 1 S( |$)' "$IT_WORK/map"
check "map --color=never has no escape codes" bash -c "! grep -q $'\\033' $IT_WORK/map"
check "map --color=always colours" bash -c "ctl() { $IT_OUT/cpusetctl --state-dir $st \"\$@\"; };
	ctl map --color=always | grep -q $'\\033\\['"
check "map honours NO_COLOR (auto, not a TTY)" bash -c \
	"! NO_COLOR=1 $IT_OUT/cpusetctl --state-dir $st map | grep -q $'\\033'"
check "map --json: CPU 0 owned by demo/int/app" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st map --json |
	 jq -e '.[] | select(.cpu == 0) | .owner | .type == \"container\" and .pod == \"int\" and .kind == \"integer\"' >/dev/null"
"$IT_OUT/cpusetctl" --state-dir "$st" map --color=sometimes >/dev/null 2>"$IT_WORK/err"
check "map --color=sometimes: exit 2, one specific line" bash -c \
	"[ $? -eq 2 ] && [ \$(wc -l <$IT_WORK/err) -eq 1 ] && grep -q 'auto, always or never' $IT_WORK/err"

# --- explain ---------------------------------------------------------------
ctl explain demo/int/app >"$IT_WORK/ex" 2>&1
check "explain integer: exit 0" test $? -eq 0
check "explain integer: the rule" grep -Eq '^  rule +integer: Guaranteed QoS' "$IT_WORK/ex"
check "explain integer: the policy that chose" \
	grep -Eq '^  chosen by +koordinator engine: FullPCPUs \(node\), exclusive policy None.*N = 1$' "$IT_WORK/ex"
check "explain integer: CPUs and NUMA nodes" bash -c \
	"grep -Eq '^  CPUs +0 \\(1\\)$' $IT_WORK/ex && grep -Eq '^  NUMA nodes +0 \\(1\\)$' $IT_WORK/ex"
check "explain integer: no error" grep -Eq '^  error +none$' "$IT_WORK/ex"
check "explain by ID prefix finds the same container" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain --json ${int_id:0:10} | jq -e '.pod == \"int\" and .container == \"app\"' >/dev/null"
check "explain --json integer" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain --json demo/int/app | jq -e '
	 .kind == \"integer\" and .rule == \"integer\" and .cpus == \"0\" and .numa_nodes == \"0\"
	 and .policy.engine == \"koordinator\" and .policy.n_cpus == 1
	 and .policy.exclusive_policy == \"None\" and .error == null' >/dev/null"
check "explain --json shared" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain --json demo/shr/app | jq -e '
	 .kind == \"shared\" and .rule == \"default_shared\" and .cpus == \"1\"
	 and .policy == null and (.pool | startswith(\"shared pool\"))' >/dev/null"
check "explain --json sandbox" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain --json demo/int/POD | jq -e '.rule == \"sandbox\"' >/dev/null"
check "explain --json rejected" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain --json demo/rej/app | jq -e '
	 .rule == \"integer\" and .error.reason == \"insufficient_cpus\"
	 and .error.action == \"rejected\" and .policy == null' >/dev/null"
check "explain rejected: the error and its reason" bash -c \
	"$IT_OUT/cpusetctl --state-dir $st explain demo/rej/app |
	 grep -Eq '^  error +insufficient_cpus \\(rejected\\): .*needs 4 exclusive CPUs'"
"$IT_OUT/cpusetctl" --state-dir "$st" explain demo/nope/app >/dev/null 2>"$IT_WORK/err"
check "explain unknown: exit 1, one line" bash -c \
	"[ $? -eq 1 ] && [ \$(wc -l <$IT_WORK/err) -eq 1 ] && grep -q 'no container named' $IT_WORK/err"
"$IT_OUT/cpusetctl" --state-dir "$st" explain 'not-hex!' >/dev/null 2>"$IT_WORK/err"
check "explain bad name: exit 2, one line" bash -c "[ $? -eq 2 ] && [ \$(wc -l <$IT_WORK/err) -eq 1 ]"

# --- top and status contention ----------------------------------------------
if [ -e "$IT_PIN/v$IT_LAYOUT/cpu_stats" ]; then
	ctl top --json --count 2 --interval 0.2 >"$IT_WORK/top" 2>"$IT_WORK/err"
	check "top --json --count 2: exit 0" test $? -eq 0
	check "top --json: two documents" test "$(jq -s length "$IT_WORK/top")" = 2
	# (sorted by foreign time: at the default telemetry = basic there is no wait)
	check "top --json: one entry per online CPU, worst first" bash -c \
		"jq -e -s 'all(.[]; (.cpus | length) == 2 and .sort == \"foreign\" and
		 .cpus[0].foreign_s_per_s >= .cpus[1].foreign_s_per_s)' $IT_WORK/top >/dev/null"
	# the daemon runs the default telemetry = basic: the run-queue wait is
	# not collected, so top gives it as null, never as a 0 that means "no wait"
	check "top --json: every basic figure there and non-negative" bash -c \
		"jq -e -s 'all(.[]; .interval_s > 0 and ([.cpus[], .totals] | all(
		 [.switches_per_s, .preemptions_per_s, .cross_switches_per_s, .busy_s_per_s,
		  .foreign_s_per_s, .kthread_s_per_s, .foreign_s_total]
		 | all(type == \"number\" and . >= 0))))' $IT_WORK/top >/dev/null"
	check "top --json at basic: the run-queue wait absent (null), the level named" bash -c \
		"jq -e -s 'all(.[]; .telemetry == \"basic\" and ([.cpus[], .totals] | all(
		 [.rq_wait_s_per_s, .rq_wait_mean_us, .rq_waits] | all(. == null))))' \
		 $IT_WORK/top >/dev/null"
	check "top --json: the machine switched" bash -c \
		"jq -e -s 'any(.[]; .totals.switches_per_s > 0)' $IT_WORK/top >/dev/null"
	check "status shows contention per CPU" bash -c \
		"ctl() { $IT_OUT/cpusetctl --state-dir $st --pin-dir $IT_PIN \"\$@\"; };
		 ctl status | grep -A1 '^CONTENTION' | grep -Eq 'CPU +SWITCHES +PREEMPTIONS'"
	check "status names the level and says the wait is not collected" bash -c \
		"ctl() { $IT_OUT/cpusetctl --state-dir $st --pin-dir $IT_PIN \"\$@\"; };
		 ctl status >$IT_WORK/st.txt && grep -q 'telemetry basic' $IT_WORK/st.txt &&
		 grep -q 'not collected at telemetry = basic' $IT_WORK/st.txt &&
		 grep -Eq '^  [0-9]+ +[0-9]+ +[0-9]+ +- ' $IT_WORK/st.txt"
else
	it_log "telemetry maps not pinned at $IT_PIN/v$IT_LAYOUT: top and status say so"
	ctl top --json --count 1 >/dev/null 2>"$IT_WORK/err"
	check "top without maps: exit 1 naming the pin dir" bash -c \
		"[ $? -eq 1 ] && grep -q 'no telemetry maps pinned at $IT_PIN/v$IT_LAYOUT' $IT_WORK/err"
	check "status without maps says contention is not available" bash -c \
		"$IT_OUT/cpusetctl --state-dir $st --pin-dir $IT_PIN status | grep -q 'not available: no telemetry maps'"
fi
"$IT_OUT/cpusetctl" --state-dir "$st" top --interval 0 >/dev/null 2>"$IT_WORK/err"
check "top --interval 0: exit 2, one line" bash -c "[ $? -eq 2 ] && [ \$(wc -l <$IT_WORK/err) -eq 1 ]"

# --- topology.json (Koordinator NodeResourceTopology annotations) ------------
tj=$st/topology.json
check "topology.json is written next to status.json" test -s "$tj"
check "topology.json has exactly the three annotations, as strings" bash -c \
	"jq -e 'keys == [\"node.koordinator.sh/cpu-shared-pools\", \"node.koordinator.sh/cpu-topology\",
	 \"node.koordinator.sh/pod-cpu-allocs\"] and all(.[]; type == \"string\")' $tj >/dev/null"
check "cpu-topology: detail [{id, core, socket, node}] for every online CPU" bash -c \
	"jq -e '.\"node.koordinator.sh/cpu-topology\" | fromjson | .detail |
	 length == 2 and all(.[]; keys == [\"core\", \"id\", \"node\", \"socket\"] and
	 all(.[]; type == \"number\")) and (map(.id) == [0, 1])' $tj >/dev/null"
check "pod-cpu-allocs: the integer pod on CPU 0" bash -c \
	"jq -e --arg uid $(uid int) '.\"node.koordinator.sh/pod-cpu-allocs\" | fromjson |
	 . == [{namespace: \"demo\", name: \"int\", uid: \$uid, cpuset: \"0\"}]' $tj >/dev/null"
check "cpu-shared-pools: the shared pool by socket and node" bash -c \
	"jq -e '.\"node.koordinator.sh/cpu-shared-pools\" | fromjson |
	 . == [{socket: 0, node: 0, cpuset: \"1\"}]' $tj >/dev/null"
pod_stop int
check "topology.json follows: no allocs once the pod is gone" wait_for 5 bash -c \
	"jq -e '.\"node.koordinator.sh/pod-cpu-allocs\" == \"[]\"' $tj >/dev/null"
check "... and the shared pool is the whole machine again" bash -c \
	"jq -e '.\"node.koordinator.sh/cpu-shared-pools\" | fromjson | .[0].cpuset == \"0-1\"' $tj >/dev/null"
for p in shr rej; do pod_stop $p; done
it_done
