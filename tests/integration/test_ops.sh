#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Operations (systemd/README.md "Operations"): --version and the build's git revision
# (both binaries, status.json, cpusetd_build_info); --check-config checks
# as a start would and touches nothing; SIGHUP reloads the config file
# (a live key applied, a restart-only key named, a broken file refused
# with the old config kept, the command line keeping precedence, counted
# in status.json and the .prom); log entries in a real journald, with
# POD/CONTAINER/CONTAINER_ID/REASON fields.
#
# journald: this machine has no systemd as PID 1, so the test starts its
# own systemd-journald in a journal namespace (systemd-journald NS, as
# LogNamespace= services get) and runs the daemon in a private mount
# namespace where that namespace's sockets sit at /run/systemd/journal,
# as systemd itself arranges for LogNamespace=. The daemon's stderr is a
# file whose dev:ino is given in JOURNAL_STREAM, the way systemd names a
# journal stream. journalctl --namespace reads what journald stored.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start ops kubepods
command -v jq >/dev/null || it_skip_all "jq missing (make deps)"

CONF=$IT_WORK/ops.conf
ST=$IT_WORK/state/status.json
PROM=$IT_WORK/prom/cpusetd.prom
LOG=$IT_WORK/daemon.log
jqs() { jq -r "$1" "$ST"; }
prom_value() { sed -n "s/^$1 //p" "$PROM"; }

# --- --version, revision ---
# The revision the Makefile wrote for this build (others may commit
# between the build and the test); in a git tree it must name a commit.
want_rev=$(sed -n 's/^#define CPUSETD_REVISION "\(.*\)"$/\1/p' "$IT_OUT/revision.h")
check "the build has a revision ($want_rev)" test -n "$want_rev"
if [ -e .git ] && command -v git >/dev/null; then
	hash=${want_rev%-dirty}; hash=${hash##*-g}
	check "... naming a commit of this tree (git describe --always --dirty)" \
		bash -c "git rev-parse -q --verify '$hash^{commit}' >/dev/null"
fi
check "cpusetd --version: version and the build's revision" \
	bash -c "'$IT_OUT/cpusetd' --version | grep -qxF 'cpusetd 0.1.0 (revision $want_rev)'"
check "cpusetctl --version: the same" \
	bash -c "'$IT_OUT/cpusetctl' --version | grep -qxF 'cpusetctl 0.1.0 (revision $want_rev)'"
check "cpusetctl -V: the same" \
	bash -c "'$IT_OUT/cpusetctl' -V | grep -qxF 'cpusetctl 0.1.0 (revision $want_rev)'"

# --- --check-config: as a start checks, touching nothing ---
NOSTATE=$IT_WORK/nostate
NOPIN=/sys/fs/bpf/cpusetd-ops-check-$$
NOPROM=$IT_WORK/noprom/x.prom
chk() {	# chk FILE [options]: --check-config with paths that must stay absent
	local f=$1; shift
	"$IT_OUT/cpusetd" --check-config --config "$f" --state-dir "$NOSTATE" --pin-dir "$NOPIN" \
		--textfile "$NOPROM" "$@" >"$IT_WORK/chk.out" 2>"$IT_WORK/chk.err"
}
untouched() { [ ! -e "$NOSTATE" ] && [ ! -e "$NOPIN" ] && [ ! -e "${NOPROM%/*}" ]; }
printf 'on_error = shared\nresize_check_ms = 250\n' >"$CONF"
check "--check-config: a valid file exits 0" chk "$CONF"
check "... prints the effective settings (file and command line)" bash -c "
	grep -qx 'on_error = shared' '$IT_WORK/chk.out' &&
	grep -qx 'resize_check_ms = 250' '$IT_WORK/chk.out' &&
	grep -qx 'state_dir = $NOSTATE' '$IT_WORK/chk.out' &&
	grep -qx 'min_shared_cpus = 1' '$IT_WORK/chk.out'"
check "... and says it is valid" grep -q "configuration $CONF is valid" "$IT_WORK/chk.err"
check "... what it prints loads back the same" bash -c "
	'$IT_OUT/cpusetd' --check-config --config '$IT_WORK/chk.out' >'$IT_WORK/chk2.out' 2>/dev/null &&
	cmp -s '$IT_WORK/chk.out' '$IT_WORK/chk2.out'"
printf 'on_error = shared\nno_such_key = 1\n' >"$CONF"
chk "$CONF"; rc=$?
check "--check-config: an unknown key exits 1 ($rc)" test "$rc" = 1
check "... naming file, line and key" grep -qF "cpusetd: $CONF:2: unknown key 'no_such_key'" "$IT_WORK/chk.err"
printf 'on_error = sometimes\n' >"$CONF"
chk "$CONF"; rc=$?
check "--check-config: a bad value exits 1 ($rc)" test "$rc" = 1
check "... naming the key and what it expects" \
	grep -qF "cpusetd: $CONF:1: on_error: expected reject|shared, got 'sometimes'" "$IT_WORK/chk.err"
printf '' >"$CONF"
chk "$CONF" --no-such-option; rc=$?
check "--check-config: an unknown option exits 1 ($rc)" test "$rc" = 1
check "... and says which" grep -qF "unknown option '--no-such-option'" "$IT_WORK/chk.err"
chk "$CONF" --pin-dir "$NOSTATE"; rc=$?
check "--check-config: the cross-key checks too (pin_dir = state_dir: $rc)" \
	bash -c "[ $rc = 1 ] && grep -qF 'pin_dir and state_dir are both' '$IT_WORK/chk.err'"
chk "$CONF" --reserved-cpus 0-63; rc=$?
check "--check-config: the node checks too (reserved CPUs offline: $rc)" \
	bash -c "[ $rc = 1 ] && grep -qF 'reserved_cpus 0-63: not all of them are online' '$IT_WORK/chk.err'"
check "--check-config made no state dir, pin dir or textfile dir" untouched

# --- SIGHUP: reload ---
printf '[cpusetd]\non_error = reject\n' >"$CONF"
pod_start s1 burstable 500
daemon_start "$ROOT" --config "$CONF"
check "status.json: version and revision" \
	test "$(jqs '.daemon.version + " " + .daemon.revision')" = "0.1.0 $want_rev"
check ".prom: cpusetd_build_info carries the revision" \
	grep -qF "revision=\"$want_rev\"" "$PROM"
check "status.json: no reload yet" \
	test "$(jqs '"\(.counters.config_reloads) \(.counters.config_reload_failures) [\(.daemon.restart_needed)]"')" = "0 0 []"
resyncs=$(jqs .counters.resyncs)
# A live key (on_error), a restart-only one (reserved_cpus), and
# log_level, which the command line (--log-level debug) keeps.
printf '[cpusetd]\non_error = shared\nreserved_cpus = 1\nlog_level = error\nexport_interval = 2\n' >"$CONF"
kill -HUP "$IT_DAEMON"
reloaded() { [ "$(jqs .counters.config_reloads)" = 1 ]; }
check "SIGHUP: the reload is counted" wait_for 10 reloaded
check "... the live key is in force (on_error shared)" test "$(jqs .daemon.on_error)" = shared
check "... and so is export_interval" test "$(jqs .daemon.export_interval_s)" = 2
check "... the log says what was applied" \
	grep -q "reload of $CONF: applied on_error, export_interval$" "$LOG"
check "... the command line keeps precedence (log_level not changed)" \
	no_match "$LOG" -e 'reload of.*log_level' -e 'log_level.*reload of'
check "... the restart-only key is named once, with the restart it needs" \
	test "$(grep -c "reload of $CONF: reserved_cpus changed: takes effect at a restart" "$LOG")" = 1
check "... and keeps its old value" test "$(jqs '.daemon.allocation.reserved_cpus | length')" = 0
check "... status.json lists it" test "$(jqs .daemon.restart_needed)" = reserved_cpus
check "... the resync SIGHUP always did still happens" \
	wait_for 5 bash -c "[ \$(jq .counters.resyncs '$ST') -gt $resyncs ]"
# on_error = shared, live: a container that cannot be placed stays shared
pod_start big guaranteed 2000
# (2 CPUs of 2: shared_pool_empty)
big_kept() { jq -e '.errors[] | select(.pod == "big" and .action == "shared")' "$ST" >/dev/null; }
check "... a new admission follows it: kept on the shared pool, not rejected" \
	wait_for 10 big_kept
check "... and runs" test "$(status_of big app)" = running

# A broken file changes nothing.
printf '[cpusetd]\non_error = reject\nexport_interval = 3\nbogus line without equals\n' >"$CONF"
kill -HUP "$IT_DAEMON"
refused() { [ "$(jqs .counters.config_reload_failures)" = 1 ]; }
check "a broken file: the refusal is counted" wait_for 10 refused
check "... logged as an error naming file and line" \
	grep -q "error: reload refused: $CONF:4: syntax error" "$LOG"
check "... the old config stays (on_error shared, interval 2)" \
	test "$(jqs '.daemon.on_error + " " + (.daemon.export_interval_s | tostring)')" = "shared 2"
check "... the daemon runs on" kill -0 "$IT_DAEMON"
printf '[cpusetd]\non_error = never\n' >"$CONF"
kill -HUP "$IT_DAEMON"
check "a bad value: refused, naming the key and why" \
	wait_for 10 grep -q "reload refused: $CONF:2: on_error: expected reject|shared, got 'never'" "$LOG"
printf '[cpusetd]\non_error = shared\nexport_interval = 2\nmin_shared_cpus = 2\n' >"$CONF"
kill -HUP "$IT_DAEMON"
check "a check against the node (min_shared_cpus = CPUs online): refused" \
	wait_for 10 grep -q "reload refused: min_shared_cpus 2 is not below the 2 CPUs online" "$LOG"
check ".prom: reloads and failures counted" wait_for 10 bash -c "
	[ \"\$(sed -n 's/^cpusetd_config_reloads_total //p' '$PROM')\" = 1 ] &&
	[ \"\$(sed -n 's/^cpusetd_config_reload_failures_total //p' '$PROM')\" = 3 ]"
# Back to the start's file: nothing waits for a restart any more.
printf '[cpusetd]\non_error = reject\n' >"$CONF"
kill -HUP "$IT_DAEMON"
check "reverting the file: no restart pending, on_error reject again" wait_for 10 bash -c "
	[ \"\$(jq -r '.daemon.restart_needed + \" \" + .daemon.on_error' '$ST')\" = ' reject' ]"
daemon_stop
pod_stop big

# --- the unit ---
check "the unit reloads with SIGHUP" grep -qx 'ExecReload=/bin/kill -HUP \$MAINPID' systemd/cpusetd.service
check "the unit may write Debian node_exporter's textfile directory" \
	grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' systemd/cpusetd.service
check "the default textfile is in that directory" bash -c "
	'$IT_OUT/cpusetd' --check-config --config '$IT_WORK/empty.conf' 2>/dev/null |
	grep -qx 'textfile = /var/lib/prometheus/node-exporter/cpusetd.prom'"

# --- journald ---
JD=/lib/systemd/systemd-journald
if [ ! -x "$JD" ] || ! command -v journalctl >/dev/null || ! command -v unshare >/dev/null; then
	it_log "SKIP journald part: systemd-journald, journalctl or unshare missing"
	[ $IT_FAILED -eq 0 ]; exit
fi
NS=cpusetdops$$
MID=$(cat /etc/machine-id 2>/dev/null)
JD_PID=
journal_cleanup() {
	[ -n "$JD_PID" ] && kill "$JD_PID" 2>/dev/null && wait "$JD_PID" 2>/dev/null
	rm -rf "/run/systemd/journal.$NS"
	[ -n "$MID" ] && rm -rf "/var/log/journal/$MID.$NS" "/run/log/journal/$MID.$NS"
	it_cleanup
}
trap journal_cleanup EXIT
SYSTEMD_LOG_TARGET=console "$JD" "$NS" >"$IT_WORK/journald.log" 2>&1 &
JD_PID=$!
if ! wait_for 10 test -S "/run/systemd/journal.$NS/socket"; then
	not_ok "systemd-journald $NS made no socket: $(head -c 300 "$IT_WORK/journald.log")"
	exit 1
fi
JLOG=$IT_WORK/jdaemon.log
: >"$JLOG"
STREAM=$(stat -c '%d:%i' "$JLOG")
rm -f "$ST"
# A private mount namespace: the journal namespace's sockets at the
# standard path, as systemd sets up for a LogNamespace= service.
mkdir -p "$IT_WORK/jsock"
JOURNAL_STREAM=$STREAM unshare -m --propagation private sh -c '
	mount --bind "/run/systemd/journal.$1" "$2" &&
	mount -t tmpfs -o mode=0755 tmpfs /run/systemd &&
	mkdir /run/systemd/journal &&
	mount --bind "$2" /run/systemd/journal || exit 1
	shift 2
	exec "$@"' sh "$NS" "$IT_WORK/jsock" \
	"$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
	--bundle-path "$IT_WORK/bundles/{id}/config.json" --state-dir "$IT_WORK/state" \
	--pin-dir "$IT_PIN" --kubelet-pods-dir "$IT_WORK/pods" --log-level debug \
	--textfile "$PROM" >>"$JLOG" 2>&1 &
IT_DAEMON=$!
check "journald: the daemon starts with its stderr as the journal stream" \
	wait_for 20 test -s "$ST"
jq_entries() { journalctl --namespace="$NS" --no-pager -o json "$@" 2>/dev/null; }
pod_start jg guaranteed 1000
pod_start jx guaranteed 2000
entry() {	# entry MATCH...: the first entry that matches, as JSON
	jq_entries "$@" | head -n1 | grep -q . && jq_entries "$@" | head -n1 >"$IT_WORK/entry.json"
}
ej() { jq -r "$1" "$IT_WORK/entry.json"; }
check "journald: the placement of demo/jg is found with POD=demo/jg REASON=placed" \
	wait_for 20 entry POD=demo/jg CONTAINER=app REASON=placed
check "... with CONTAINER_ID, POD_UID, PRIORITY=6 (info) and SYSLOG_IDENTIFIER" \
	test "$(ej '[.CONTAINER_ID, .POD_UID, .PRIORITY, .SYSLOG_IDENTIFIER] | join(" ")')" = \
	"$(cid jg/app) $(uid jg) 6 cpusetd"
check "... MESSAGE is the same one line as on stderr" \
	bash -c "jq -r .MESSAGE '$IT_WORK/entry.json' | grep -q '^demo/jg/app ([0-9a-f]\{12\}): integer, cpus 0'"
check "journald: the admission error of demo/jx, PRIORITY=3, REASON=insufficient_cpus" \
	wait_for 20 entry POD=demo/jx REASON=insufficient_cpus PRIORITY=3
check "... its MESSAGE says why" bash -c "jq -r .MESSAGE '$IT_WORK/entry.json' | grep -q 'admission error insufficient_cpus'"
check "journald: messages without a pod have no POD field" \
	bash -c "jq_() { journalctl --namespace='$NS' --no-pager -o json; }; jq_ | jq -e -s \
	'[.[] | select(.MESSAGE | startswith(\"resync:\"))] | length > 0 and all(.POD == null)' >/dev/null"
check "journald: nothing went to the stream itself" no_match "$JLOG" 'placed\|integer, cpus'
daemon_stop
pod_stop jg
pod_stop jx
# Without JOURNAL_STREAM (or with another file's): stderr, timestamped.
check "stderr: RFC 3339 timestamps on every line of the daemon's log" bash -c "
	grep -q . '$LOG' && ! grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}[+-][0-9]{2}:[0-9]{2} cpusetd: [a-z]+: ' '$LOG' | grep -q ."
[ $IT_FAILED -eq 0 ]
