#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hostile input and faults (issue 12), against the real daemon, real runc
# containers and real files: what a pod, another agent or a careless
# admin can plant must never freeze the daemon, be opened through, be
# silently ignored, forge a log line, or start a second daemon.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start hostile kubepods
PROM_DIR=$IT_WORK/prom
STATE=$IT_WORK/state
LOG=$IT_WORK/daemon.log

# --- planted before the daemon starts: FIFOs and hardlinks where it writes ---
# The old fixed temporary names and the final names. A FIFO opened for
# writing blocks until a reader comes; a hardlink would be truncated and
# chmod-ed through. Both must be left alone.
mkdir -p "$PROM_DIR"
printf 'precious\n' >"$IT_WORK/victim"
chmod 600 "$IT_WORK/victim"
mkfifo "$PROM_DIR/.cpusetd.prom.tmp" "$STATE/.status.json.tmp"
ln "$IT_WORK/victim" "$PROM_DIR/cpusetd.prom"
ln "$IT_WORK/victim" "$STATE/status.json.victim-link" 2>/dev/null
check "daemon starts with FIFOs and hardlinks planted at its paths" \
	daemon_start "$ROOT" --export-interval 1
pod_start s1 burstable 500
check "a pod is placed (the daemon is not frozen in open)" wait_for 2 allowed_is s1 app 0-1
check ".prom is written as a new regular file" wait_for 3 \
	bash -c "[ -f '$PROM_DIR/cpusetd.prom' ] && [ ! -p '$PROM_DIR/cpusetd.prom' ] &&
		 grep -q '^cpusetd_build_info' '$PROM_DIR/cpusetd.prom'"
check "the hardlinked file keeps its content" \
	test "$(cat "$IT_WORK/victim")" = precious
check "... and its mode" test "$(stat -c %a "$IT_WORK/victim")" = 600
check "the planted FIFOs are untouched" \
	test -p "$PROM_DIR/.cpusetd.prom.tmp" -a -p "$STATE/.status.json.tmp"
check "no temporary file is left behind" \
	bash -c "! ls -A '$PROM_DIR' '$STATE' | grep -E '\\.[0-9a-f]{16}\\.tmp$'"

# --- a FIFO as --config: refused at once, never a hang ---
mkfifo "$IT_WORK/fifo.conf"
out=$(timeout 5 "$IT_OUT/cpusetd" --config "$IT_WORK/fifo.conf" 2>&1); rc=$?
check "a FIFO config is refused with exit 1 (not a hang: $rc)" test "$rc" = 1
check "... with one clear line" bash -c "[ \"\$(printf '%s\n' '$out' | wc -l)\" = 1 ] &&
	printf '%s' '$out' | grep -q 'not a regular text file'"
ln -s "$IT_WORK/empty.conf" "$IT_WORK/link.conf"
out=$(timeout 5 "$IT_OUT/cpusetd" --config "$IT_WORK/link.conf" 2>&1); rc=$?
check "a symlinked config is refused with exit 1 (not a start: $rc)" test "$rc" = 1
check "... with one line naming the link and why" test "$out" = \
	"cpusetd: config file '$IT_WORK/link.conf': Too many levels of symbolic links"

# --- start-time validation: one clear line and exit 1 ---
# refused ARGS...: cpusetd exits 1 printing exactly one line matching $WANT.
refused() {
	local out rc
	out=$(timeout 10 "$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" \
		--kubepods-root "$ROOT" --state-dir "$IT_WORK/state2" \
		--pin-dir "$IT_PIN/second" "$@" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
		printf '%s' "$out" | grep -q -- "$WANT" ||
		{ it_log "rc=$rc out: $out"; return 1; }
}
WANT="bundle_path '/etc/passwd' has no {id}" \
	check "a bundle path without {id} is refused" refused --bundle-path /etc/passwd
ncpu=$(nproc --all)
WANT="min_shared_cpus $ncpu is not below the $ncpu CPUs online" \
	check "min_shared_cpus at the online CPUs is refused" refused --min-shared-cpus "$ncpu"
WANT="cannot be used together" check "conflicting kubelet options are refused" refused \
	--kubelet-cpu-manager-policy-options full-pcpus-only=true,distribute-cpus-across-cores=true

# --- a second instance on the same state, or the same pin dir ---
WANT="another cpusetd (pid $IT_DAEMON) holds $IT_WORK/state;" check \
	"a second daemon on the same state dir refuses, naming the holder" \
	refused --state-dir "$IT_WORK/state" --pin-dir "$IT_PIN"
WANT="another cpusetd (pid $IT_DAEMON) holds $IT_PIN;" check \
	"a second daemon on the same pin dir refuses, naming the holder" \
	refused --pin-dir "$IT_PIN"
check "the first daemon runs on" kill -0 "$IT_DAEMON"
check "the lock file names the holder" test "$(cat "$STATE/cpusetd.lock")" = "$IT_DAEMON"

# hostile_pod POD WRITER [QOS]: the sandbox is fine; the app's bundle as
# the daemon sees it is made by WRITER PATH GOOD (GOOD: the bundle runc
# runs, from elsewhere: runc itself refuses most of these).
hostile_pod() {
	local pod=$1 writer=$2 qos=${3:-burstable} id
	container_start "$pod" POD "$qos" sandbox 0
	id=$(cid "$pod/app")
	mkdir -p "$IT_WORK/bundles/$id" "$IT_WORK/elsewhere/$id"
	IT_BUNDLES=$IT_WORK/elsewhere container_start "$pod" app "$qos" container 500 "" "" \
		"$writer" "$IT_WORK/bundles/$id/config.json"
}

# --- no silent fallback: wrong types and sizes are admission errors ---
cores_five() { jq '.annotations["weka.io/cores-ids"] = 5' "$2" >"$1"; }
hostile_pod t1 cores_five
check "cores-ids of the wrong JSON type: invalid_annotation, rejected" \
	wait_for 5 has_error t1 invalid_annotation rejected
check "... the error names the key" bash -c "jq -e '.errors[] | select(.pod == \"t1\") |
	.message | contains(\"\\\"weka.io/cores-ids\\\" is an int, expected a string\")' \
	'$STATE/status.json' >/dev/null"
check "... the container is killed" wait_for 5 stopped t1 app
check "... the termination message says why" \
	wait_for 5 grep -q 'invalid_annotation.*weka.io/cores-ids' \
	"$IT_WORK/pods/$(uid t1)/containers/app/termination"

# A valid list of 256 CPUs (968 bytes) is not cut or dropped: it reaches
# the policy, which says which CPU is not online here.
list=$(seq -s, 0 2 510)
pod_start t2 burstable 500 "$list"
check "a 256-CPU cores list reaches the policy: cpu_offline, not the shared pool" \
	wait_for 5 has_error t2 cpu_offline rejected
big=$(head -c 70000 /dev/zero | tr '\0' 1)
pod_start t3 burstable 500 "$big"
check "a 70 kB cores list: invalid_annotation naming the key and its size" \
	wait_for 5 bash -c "jq -e '.errors[] | select(.pod == \"t3\" and .reason == \"invalid_annotation\") |
	.message | contains(\"is 70000 bytes, limit 65536\")' '$STATE/status.json' >/dev/null"

# --- untrusted text never forges structure ---
# The cores-ids reason quotes the value: a newline in it must not start
# a line of its own anywhere it is written.
pod_start t4 burstable 500 $'x\ncpusetd: info: demo/evil/app placed on 0-1 (forged)'
check "a newline in an annotation value: invalid_annotation" \
	wait_for 5 has_error t4 invalid_annotation rejected
check "... no forged line in the daemon's log" \
	bash -c "! grep -q '^cpusetd: info: demo/evil/app placed' '$LOG'"
check "... the value is escaped in the log" \
	grep -qF 'x\ncpusetd: info: demo/evil/app placed on 0-1 (forged)' "$LOG"
term=$IT_WORK/pods/$(uid t4)/containers/app/termination
check "... the termination message is one line" \
	wait_for 5 bash -c "[ \"\$(wc -l <'$term')\" = 1 ] && grep -qF 'x\\ncpusetd' '$term'"
check "... status.json's message is one escaped line" bash -c "jq -e '.errors[] |
	select(.pod == \"t4\") | .message | (contains(\"x\\\\ncpusetd\") and (contains(\"\\n\") | not))' \
	'$STATE/status.json' >/dev/null"
check "... the .prom file has no forged line" \
	wait_for 3 bash -c "! grep -q '^cpusetd: info' '$PROM_DIR/cpusetd.prom' &&
		grep -q 'cpusetd_pod_admission_error_attempts{.*k8s_pod_name=\"t4\"' '$PROM_DIR/cpusetd.prom'"
# A backslash and an n typed in the value is not that newline (issue 22
# L7): every sink doubles the backslash, once (the reason is kept raw and
# escaped where it is written, never twice).
pod_start t5 burstable 500 'y\ncpusetd: info: demo/evil/app placed on 0-1 (typed)'
check "a backslash in an annotation value: invalid_annotation" \
	wait_for 5 has_error t5 invalid_annotation rejected
check "... the log doubles the backslash, once" bash -c \
	"grep -qF 'y\\\\ncpusetd: info' '$LOG' && ! grep -qF 'y\\\\\\\\n' '$LOG'"
term=$IT_WORK/pods/$(uid t5)/containers/app/termination
check "... the termination message too" wait_for 5 bash -c \
	"grep -qF 'y\\\\ncpusetd: info' '$term' && ! grep -qF 'y\\\\\\\\n' '$term'"
t5_status() {
	jq -e --arg w 'y\\ncpusetd: info' '.errors[] | select(.pod == "t5") | .message |
		contains($w) and (contains("\\\\\\") | not)' "$STATE/status.json" >/dev/null
}
check "... status.json's message too" t5_status

# --- hostile bundles: 50 MB, 100k deep. runc runs a good bundle from
# elsewhere; the daemon's --bundle-path finds the hostile one. ---
fifty_mb() {
	{ printf '{"annotations":{"pad":"'; head -c 50000000 /dev/zero | tr '\0' x; printf '"}}'; } >"$1"
}
deep() { python3 -c "import sys; sys.stdout.write('['*100000 + ']'*100000)" >"$1"; }
fifo_bundle() { mkfifo "$1"; }
bundle_error() {
	jq -e --arg u "$(uid "$1")" --arg w "$2" '.errors[] | select(.pod_uid == $u and
		.reason == "invalid_bundle" and (.message | contains($w)))' "$STATE/status.json" >/dev/null
}
hostile_pod b1 fifty_mb
hostile_pod b2 deep
hostile_pod b3 fifo_bundle
pod_start g1 guaranteed 1000
check "with hostile bundles about, an integer pod is placed within 2 s" \
	wait_for 2 allowed_is g1 app 0
check "a 50 MB config.json: invalid_bundle, larger than 16 MiB" \
	wait_for 5 bundle_error b1 "larger than 16 MiB"
check "a config.json nested 100k deep: invalid_bundle, nested deeper than 64" \
	wait_for 5 bundle_error b2 "nested deeper than 64"
check "a FIFO as config.json: invalid_bundle, not a regular file" \
	wait_for 5 bundle_error b3 "not a regular file"
all_stopped() { stopped b1 app && stopped b2 app && stopped b3 app; }
check "... the hostile bundles' containers are rejected (killed)" wait_for 5 all_stopped
check "the daemon logged each admission error once, with the container ID" \
	test "$(grep -cE '^[0-9T:.+-]+ cpusetd: error: \?/\?/[0-9a-f]{12} \([0-9a-f]{12}\): admission error invalid_bundle' "$LOG")" = 3

# --- a dead daemon does not look alive ---
pid=$IT_DAEMON
daemon_stop
"$IT_OUT/cpusetctl" status --state-dir "$STATE" >"$IT_WORK/ctl.out" 2>"$IT_WORK/ctl.err"; rc=$?
check "after SIGTERM cpusetctl status exits non-zero ($rc)" test "$rc" -ne 0
check "... and says the daemon is not running" grep -qi "not running" "$IT_WORK/ctl.err"
check "the lock is free again: a new daemon starts" daemon_start "$ROOT"
daemon_stop

it_done
