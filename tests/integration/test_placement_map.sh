#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The BPF placement map (issue 22 M2, L1). It is pinned and bounded (65536
# entries): it must not keep the keys of containers that went away unseen,
# and a full map is an error, never silence.
#   1. An older layout's pins (an upgrade) go at start; a directory that
#      holds anything not ours stays.
#   2. 1,000 containers, 900 of them removed while the daemon is down:
#      after its restart the map holds exactly the live containers. One
#      removed while it is up loses its entry at its rmdir.
#   3. A map made full on purpose (junk keys, one bpf(2) batch update): a
#      new container's entry fails and that is logged once, counted and
#      listed for its pod; a rejected container is still killed at its
#      first exec (from user space, since BPF has no entry to kill by);
#      the next resync (SIGHUP) prunes the junk, the entries are written,
#      and the kill is BPF's again.
# The 1,000 containers are plain cgroups of the runtime's shape without a
# task, made without runc (the daemon places a container at its mkdir),
# so the file runs in seconds.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start pmap kubepods
command -v python3 >/dev/null || it_skip_all "python3 missing (make deps)"
command -v bpftool >/dev/null || it_skip_all "bpftool missing (make deps)"
P=$IT_PIN/v$IT_LAYOUT/placement
LOG=$IT_WORK/daemon.log
STATUS=$IT_WORK/state/status.json

map_keys() { python3 tests/integration/bpf_map.py keys "$P" | sort -n; }
# The cgroup ids (inode numbers) of every container cgroup under the root.
live_ids() {
	find "$IT_CPUSET$ROOT" -mindepth 2 -type d -regextype posix-extended \
		-regex '.*/[0-9a-f]{64}' -printf '%i\n' | sort -n
}
same_keys() { [ "$(map_keys)" = "$(live_ids)" ]; }
jqs() { jq -e "$1" "$STATUS" >/dev/null; }
has_key() { map_keys | grep -qx "$1"; }
id_of() { stat -c %i "$IT_CPUSET$(cg_path "$1" "$(uid "$2")" "$(cid "$2/$3")")"; }

# --- 1. pins of an older layout, made before the daemon's first start ---
mkdir -p "$IT_PIN/v3" "$IT_PIN/v2"
bpftool map create "$IT_PIN/v3/placement" type hash key 8 value 144 entries 1 name placement
bpftool map create "$IT_PIN/v3/health" type array key 4 value 16 entries 1 name health
bpftool map create "$IT_PIN/v2/someone_else" type array key 4 value 4 entries 1 name someone
check "daemon starts" daemon_start "$ROOT"
check "an older layout's pins are removed at start" test ! -e "$IT_PIN/v3"
check "... and that is logged" grep -q "removed the pinned maps of 1 older map layout under $IT_PIN" "$LOG"
check "a layout directory holding anything else is left" test -e "$IT_PIN/v2/someone_else"
check "the current layout is pinned under v$IT_LAYOUT" test -e "$P"

# --- 2. containers removed while the daemon is down ---
pod_start s1 burstable 500
wait_for 30 allowed_is s1 app 0-1
pods=()
for p in 0 1 2 3 4 5 6 7 8 9; do
	pods[p]=$ROOT/burstable/pod$(uid fake$p)
	it_mkroot "${pods[p]}"
done
fake() { echo "$IT_CPUSET${pods[$1 % 10]}/$(printf 'f%063x' "$1")"; }
for i in $(seq 1000); do mkdir "$(fake "$i")"; done
check "1,000 containers placed: the map holds every live container" wait_for 60 same_keys
it_log "placement map: $(map_keys | wc -l) entries"
# One more, removed while the daemon is up: its rmdir deletes its entry
# at once (controller_forget), not the prune after a resync.
mkdir "$(fake 1001)"
id=$(stat -c %i "$(fake 1001)")
no_key() { ! has_key "$1"; }
check "a container made while the daemon is up has its entry" wait_for 10 has_key "$id"
rmdir "$(fake 1001)"
check "its rmdir deletes the entry at once, nothing pruned" wait_for 10 no_key "$id"
check "... placement_map_pruned still 0" wait_for 10 jqs '.counters.placement_map_pruned == 0'
daemon_kill9
for i in $(seq 101 1000); do rmdir "$(fake "$i")"; done
check "daemon restarts" daemon_start "$ROOT"
check "after the restart the map holds exactly the live containers" same_keys
check "... 102 of them (100 made here, s1's sandbox and app)" test "$(map_keys | wc -l)" = 102
check "900 entries pruned, counted in status.json" \
	jqs '.counters.placement_map_pruned == 900'
check "... and logged with the number" \
	grep -q "cpusetd: info: placement map: pruned 900 entries of containers that are gone" "$LOG"

# --- 3. a map made full on purpose ---
n0=$(map_keys | wc -l)
junk=$(python3 tests/integration/bpf_map.py fill "$P" $((0x7ead000000000000)))
it_log "junk keys: $junk"
check "the map is full with junk ($junk keys + $n0)" test "$((junk + n0))" = 65536

pod_start full burstable 500
check "a new container's failed entry is listed for its pod" \
	wait_for 30 has_error full placement_map_error kept
check "... with what it costs" jqs '.errors[] | select(.pod == "full" and .container == "app")
	| .message | test("placement map update failed: Argument list too long [(]all 65536 entries taken[)]; until its entry is written only its first exec is checked")'
check "... counted: placement_map_errors is 2 (sandbox and app)" \
	jqs '.counters.placement_map_errors == 2'
check "... in the .prom" wait_for 30 grep -q '^cpusetd_placement_map_errors_total 2$' \
	"$IT_WORK/prom/cpusetd.prom"
check "... logged at error level once for the cause, naming the pod" bash -c \
	"[ \$(grep -c 'cpusetd: error: demo/full/.*placement map update failed: Argument list too long' $LOG) -eq 1 ]"

container_start rej POD guaranteed sandbox 0
IT_ATTEMPT=1 check "a rejection the map cannot arm: runc run succeeds" \
	container_start rej app guaranteed container 4000
IT_ATTEMPT=1 check "... it is still killed, at its first exec" wait_for 5 stopped rej app
check "... with the reason in its termination message" grep -q \
	'cpusetd: insufficient_cpus: needs 4 exclusive CPUs' "$IT_WORK/pods/$(uid rej)/containers/app/termination"
check "... by cpusetd, since BPF had no entry to kill by" wait_for 5 grep -q \
	"demo/rej/app ($(IT_ATTEMPT=1 cid rej/app | cut -c1-12)): rejected: killed at its first exec, from user space" "$LOG"
check "... its admission error stays listed as it was" has_error rej insufficient_cpus rejected
check "... and 2 more failed entries are counted (its sandbox and it)" \
	jqs '.counters.placement_map_errors == 4'
check "... still one error line for the cause" bash -c \
	"[ \$(grep -c 'cpusetd: error: .*placement map update failed' $LOG) -eq 1 ]"

pruned=$(jq .counters.placement_map_pruned "$STATUS")
kill -HUP "$IT_DAEMON"
check "SIGHUP: the resync prunes the junk" wait_for 30 \
	jqs ".counters.placement_map_pruned >= $pruned + $junk"
check "... the container gets its entry" wait_for 10 has_key "$(id_of burstable full app)"
check "... which is logged" grep -q "demo/full/app ([0-9a-f]*): placement map entry written" "$LOG"
check "... and its error is no longer listed" wait_for 10 \
	bash -c "! jq -e '.errors[] | select(.reason == \"placement_map_error\")' $STATUS >/dev/null"
check "the map holds exactly the live containers again" same_keys
: >"$IT_WORK/pods/$(uid rej)/containers/app/termination"
IT_ATTEMPT=2 container_start rej app guaranteed container 4000
IT_ATTEMPT=2 check "the next attempt is killed by BPF again" wait_for 5 stopped rej app
check "... at its first exec" wait_for 5 grep -q \
	"demo/rej/app ($(IT_ATTEMPT=2 cid rej/app | cut -c1-12)): rejected: killed at its first exec (insufficient_cpus)" "$LOG"
check "no error after the prune" jqs '.counters.placement_map_errors == 4'

IT_ATTEMPT=1 container_stop rej app
IT_ATTEMPT=2 container_stop rej app
container_stop rej POD
pod_stop full
pod_stop s1
it_done
