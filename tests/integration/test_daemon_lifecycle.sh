#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The daemon's contract with systemd and the node: sd_notify READY=1 only
# after the initial sync, STOPPING=1 on SIGTERM; --dry-run decides and logs
# but writes nothing; liveness is visible (status.json's heartbeat and the
# .prom timestamp move with no event, cpusetctl exits 3 once the daemon
# stopped, hangs or is killed); bad options stop it with one clear line;
# make install lays out binaries, unit and config.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start life kubepods
command -v python3 >/dev/null || it_skip_all "python3 missing (make deps)"

# A NOTIFY_SOCKET listener that records each datagram with whether
# status.json existed when it arrived.
cat >"$IT_WORK/notify.py" <<'PY'
import os, socket, sys
sock, out, status = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
with open(out, "a", buffering=1) as f:
    while True:
        msg = s.recv(4096).decode()
        for line in msg.splitlines():
            f.write(f"{line} status_exists={os.path.exists(status)}\n")
PY
python3 "$IT_WORK/notify.py" "$IT_WORK/notify.sock" "$IT_WORK/notify.log" \
	"$IT_WORK/state/status.json" &
NOTIFY_PID=$!
wait_for 5 test -S "$IT_WORK/notify.sock"
pod_start s1 burstable 500
NOTIFY_SOCKET=$IT_WORK/notify.sock WATCHDOG_USEC=2000000 daemon_start "$ROOT"
check "READY=1 is sent" wait_for 5 grep -q "^READY=1" "$IT_WORK/notify.log"
check "READY=1 comes after the initial sync" grep -q "^READY=1 status_exists=True" "$IT_WORK/notify.log"
check "the watchdog is pinged" wait_for 5 grep -q "^WATCHDOG=1" "$IT_WORK/notify.log"
daemon_stop
check "STOPPING=1 on SIGTERM" wait_for 5 grep -q "^STOPPING=1" "$IT_WORK/notify.log"
kill "$NOTIFY_PID" 2>/dev/null

# The raw_tp twins, as on kernels without tp_btf: same behaviour.
CPUSETD_BPF_NO_TP_BTF=1 daemon_start "$ROOT"
check "raw_tp fallback: reported in status" \
	test "$(jq -r .daemon.bpf_attach "$IT_WORK/state/status.json")" = raw_tp
pod_start g0 guaranteed 1000
check "raw_tp fallback: mkdir seen, integer placed" wait_for 5 allowed_is g0 app 0
check "raw_tp fallback: shared follow" wait_for 5 allowed_is s1 app 1
pod_stop g0
check "raw_tp fallback: rmdir seen, CPU back" wait_for 5 allowed_is s1 app 0-1
container_start g0b POD guaranteed sandbox 0
container_start g0b app guaranteed container 1000 "" 0-1
check "raw_tp fallback: exec check re-applies" wait_for 5 allowed_is g0b app 0
pod_stop g0b
daemon_stop
check "default: tp_btf on this kernel" bash -c "grep -q 'BPF attached via tp_btf' $IT_WORK/daemon.log"

# --dry-run: decisions are logged, nothing is written.
daemon_start "$ROOT" --dry-run
pod_start g1 guaranteed 1000
check "dry-run: the decision is made" wait_for 5 grep -q "dry-run: demo/g1/app: would set cpuset.cpus to 0" "$IT_WORK/daemon.log"
check "dry-run: the integer container is not moved" allowed_is g1 app 0-1
check "dry-run: shared containers are not moved" allowed_is s1 app 0-1
daemon_stop
pod_stop g1

# Liveness: heartbeats every --export-interval, with or without events.
ST=$IT_WORK/state/status.json
PROM=$IT_WORK/prom/cpusetd.prom
jqs() { jq -r "$1" "$ST"; }
prom_ts() { sed -n 's/^cpusetd_last_update_timestamp_seconds //p' "$PROM"; }
# advanced OLD NEW: NEW is a larger number than OLD.
advanced() { [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(b > a) }'; }
hb_advanced() { advanced "$hb" "$(jqs .daemon.heartbeat)"; }
prom_advanced() { advanced "$ts" "$(prom_ts)"; }
# ctl_rc WANT: cpusetctl status exits WANT (its stderr in $IT_WORK/ctl.err).
ctl_rc() {
	"$IT_OUT/cpusetctl" status --state-dir "$IT_WORK/state" >"$IT_WORK/ctl.out" 2>"$IT_WORK/ctl.err"
	[ $? -eq "$1" ]
}
daemon_start "$ROOT" --export-interval 1
check "status.json: running, heartbeat every 1 s, its pid and comm" bash -c \
	"jq -e '.daemon | .state == \"running\" and .export_interval_s == 1 and .stopped_at == null
	 and .pid == $IT_DAEMON and .comm == \"cpusetd\" and .heartbeat > 0' $ST >/dev/null"
wait_for 5 test -s "$PROM"
hb=$(jqs .daemon.heartbeat); upd=$(jqs .updated); ts=$(prom_ts)
# 1 s + slack: 3 s
check "the heartbeat advances with no event" wait_for 3 hb_advanced
check "... while 'updated' (the last change) stays" test "$(jqs .updated)" = "$upd"
check ".prom has cpusetd_last_update_timestamp_seconds (gauge)" bash -c \
	"grep -qx '# TYPE cpusetd_last_update_timestamp_seconds gauge' $PROM && [ -n '$ts' ]"
check "... and it advances with no event" wait_for 3 prom_advanced
ctl_rc 0; check "cpusetctl status: exit 0, nothing on stderr, while it runs" \
	test $? -eq 0 -a ! -s "$IT_WORK/ctl.err"

# Hung (SIGSTOP): the pid is there, the heartbeat ages past 3 x 1 + 5 s.
pid=$IT_DAEMON
kill -STOP "$pid"
check "hung daemon: cpusetctl status exits 3 once the heartbeat is late" wait_for 20 ctl_rc 3
check "... saying how late and that its pid is still there" grep -Eq \
	"^cpusetctl: status is [0-9]+ s old \(heartbeat every 1 s\): daemon not running or hung\? pid $pid is still there$" \
	"$IT_WORK/ctl.err"
check "... and still printing the last state" grep -q '^Online CPUs:' "$IT_WORK/ctl.out"
# kill -9 leaves no stopped mark: the pid is gone, the heartbeat stale.
kill -CONT "$pid"; daemon_kill9
check "after kill -9: state still says running" test "$(jqs .daemon.state)" = running
check "after kill -9: cpusetctl status exits 3" ctl_rc 3
check "... saying the pid is gone and how old the status is" grep -Eq \
	"^cpusetctl: status is [0-9]+ s old \(heartbeat every 1 s\): daemon not running\? pid $pid is gone$" \
	"$IT_WORK/ctl.err"

# A clean stop (SIGTERM) marks the status stopped.
daemon_start "$ROOT" --export-interval 1
pid=$IT_DAEMON
check "a new daemon: cpusetctl status exits 0" ctl_rc 0
daemon_stop
check "after SIGTERM: status.json says stopped, and when" bash -c \
	"jq -e '.daemon | .state == \"stopped\" and .stopped_at == .heartbeat and .pid == $pid' $ST >/dev/null"
check "after SIGTERM: cpusetctl status exits 3" ctl_rc 3
check "... and says the daemon is not running" grep -Eq \
	"^cpusetctl: status is [0-9]+ s old: daemon not running: pid $pid stopped cleanly$" "$IT_WORK/ctl.err"
check "... in the summary too" grep -q '^daemon STOPPED at ' "$IT_WORK/ctl.out"

# Bad input: one specific line, non-zero exit, nothing started.
out=$("$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --min-shared-cpus x 2>&1)
check "bad option: exit status 1" test $? -eq 1
check "bad option: one line naming it" test "$(printf '%s\n' "$out" | wc -l)" -eq 1 -a -n "$(printf '%s' "$out" | grep -- --min-shared-cpus)"
printf '[cpusetd]\nno_such_key = 1\n' >"$IT_WORK/bad.conf"
out=$("$IT_OUT/cpusetd" --config "$IT_WORK/bad.conf" 2>&1)
check "bad config key: refused with file:line" bash -c "printf '%s' '$out' | grep -q 'bad.conf:2'"
# Started by a runtime as a pre-installed NRI plugin under a name the
# config could not hold: refused (escaped in the log), not registered.
out=$(NRI_PLUGIN_SOCKET=3 NRI_PLUGIN_IDX=99 NRI_PLUGIN_NAME=$'cpu:set\033d' timeout 20 \
	"$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
	--state-dir "$IT_WORK/state" --pin-dir "$IT_PIN" --textfile "" 3</dev/null 2>&1)
check "pre-installed under a bad NRI_PLUGIN_NAME: exit status 1" test $? -eq 1
check "... one line saying so, the name escaped" bash -c \
	"printf '%s' \"\$1\" | grep -qF 'the runtime named us \"cpu:set\\x1bd\", index \"99\"'" _ "$out"

# make install into a staging root.
make -s install DESTDIR="$IT_WORK/dest" PREFIX=/usr OUT="$IT_OUT" >/dev/null 2>&1
check "install: daemon" test -x "$IT_WORK/dest/usr/sbin/cpusetd"
check "install: cpusetctl" test -x "$IT_WORK/dest/usr/sbin/cpusetctl"
# (make install and uninstall in full: test_deb.sh)
check "install: unit points at the installed daemon" \
	grep -q "^ExecStart=/usr/sbin/cpusetd " "$IT_WORK/dest/usr/lib/systemd/system/cpusetd.service"
check "install: default config" test -f "$IT_WORK/dest/etc/cpusetd/cpusetd.conf"

it_done
