#!/bin/bash
# The daemon's contract with systemd and the node: sd_notify READY=1 only
# after the initial sync, STOPPING=1 on SIGTERM; --dry-run decides and logs
# but writes nothing; bad options stop it with one clear line; make install
# lays out binaries, unit and config.
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

# Bad input: one specific line, non-zero exit, nothing started.
out=$("$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --min-shared-cpus x 2>&1)
check "bad option: exit status 1" test $? -eq 1
check "bad option: one line naming it" test "$(printf '%s\n' "$out" | wc -l)" -eq 1 -a -n "$(printf '%s' "$out" | grep -- --min-shared-cpus)"
printf '[cpusetd]\nno_such_key = 1\n' >"$IT_WORK/bad.conf"
out=$("$IT_OUT/cpusetd" --config "$IT_WORK/bad.conf" 2>&1)
check "bad config key: refused with file:line" bash -c "printf '%s' '$out' | grep -q 'bad.conf:2'"

# make install into a staging root.
make -s install DESTDIR="$IT_WORK/dest" PREFIX=/usr OUT="$IT_OUT" >/dev/null 2>&1
check "install: daemon" test -x "$IT_WORK/dest/usr/sbin/cpusetd"
check "install: cpusetctl" test -x "$IT_WORK/dest/usr/bin/cpusetctl"
check "install: unit points at the installed daemon" \
	grep -q "^ExecStart=/usr/sbin/cpusetd " "$IT_WORK/dest/etc/systemd/system/cpusetd.service"
check "install: default config" test -f "$IT_WORK/dest/etc/cpusetd/cpusetd.conf"

it_done
