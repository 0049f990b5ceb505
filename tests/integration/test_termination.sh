#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where a rejected container's termination message goes (issue 22 H1),
# with the real daemon and real runc containers. Only kubelet's own file
# for that pod and container gets it: never another file a bundle names
# at the termination path (a read-only file outside the pods dir, a
# subPath volume under the pod's dir listed before kubelet's mount,
# another pod's or container's file), never a file behind a mount point
# under the pods dir, never through a read-only mount. Each time the
# container is still rejected (killed) and the reason still reaches
# status.json. A write that hangs (a frozen filesystem under the pods
# dir) holds neither placement nor the rejection nor the daemon's stop.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
for t in fsfreeze mkfs.ext4 mountpoint; do
	command -v $t >/dev/null || it_skip_all "$t missing (make deps)"
done
it_start termination kubepods
LOG=$IT_WORK/daemon.log
SLOW=$IT_WORK/slow	# a loop-mounted ext4 we can freeze: the pods dir of the last part
BOUND=()		# files bind-mounted under the pods dir

# Nothing may touch a frozen filesystem, a daemon stop included (its
# writer thread may be stuck there): thaw first, then unmount what we
# mounted, then the usual cleanup.
cleanup() {
	mountpoint -q "$SLOW" && fsfreeze -u "$SLOW" 2>/dev/null
	for b in "${BOUND[@]}"; do umount -l "$b" 2>/dev/null; done
	daemon_stop 2>/dev/null
	mountpoint -q "$SLOW" && umount -l "$SLOW"
	it_cleanup
}
trap cleanup EXIT

check "daemon starts" daemon_start "$ROOT"

term_of() { echo "$IT_WORK/pods/$(uid "$1")/containers/app/termination"; }
# precious FILE: a file that must never change: "precious", mode 0444
# (root writes it anyway: only the daemon's checks stand in the way).
precious() { mkdir -p "${1%/*}"; printf 'precious\n' >"$1"; chmod 0444 "$1"; }
untouched() { [ "$(cat "$1")" = precious ] && [ "$(stat -c %a "$1")" = 444 ]; }

# Bundle hooks (container_start HOOK ARG): edit the app's config.json
# before runc runs it. jq: these bundles are few and the host is fast.
edit() { jq "${@:2}" "$1" >"$1.new" && mv "$1.new" "$1"; }
# The pod's own read-only mount at the path, listed before kubelet's (as
# kubelet lists volume mounts before its termination mount).
first_mount() {
	edit "$2" --arg s "$1" '.mounts |= (.[:2] + [{destination: "/dev/termination-log",
		type: "bind", source: $s, options: ["rbind", "rprivate", "ro"]}] + .[2:])'
}
# The only mount at the path has source ARG (read-write).
only_mount() {
	edit "$2" --arg s "$1" '(.mounts[] | select(.destination == "/dev/termination-log") | .source) = $s'
}
# kubelet's own mount, made read-only.
ro_mount() {
	edit "$2" '(.mounts[] | select(.destination == "/dev/termination-log") | .options) =
		["rbind", "rprivate", "ro"]'
}
# bind FILE TARGET: FILE bind-mounted at TARGET on the host (made first).
bind() { [ -e "$2" ] || : >"$2"; mount --bind "$1" "$2" && BOUND+=("$2"); }
# A file from elsewhere bind-mounted over kubelet's file on the host.
bind_over() {
	bind "$1" "$(jq -r '.mounts[] | select(.destination == "/dev/termination-log") | .source' "$2")"
}

# rejected POD HOOK ARG: a pod whose app has an invalid cores-ids
# annotation (invalid_annotation: rejected), its bundle edited by HOOK.
rejected() {
	container_start "$1" POD burstable sandbox 0 &&
		container_start "$1" app burstable container 500 "not-a-list" "" "$2" "$3"
}
# still_rejected POD: killed, and the reason listed in status.json.
still_rejected() {
	check "$1: ... still rejected: the container is killed" wait_for 5 stopped "$1" app
	check "$1: ... and the reason reaches status.json" wait_for 5 has_error "$1" invalid_annotation rejected
}
# logged POD TEXT: one log line about POD's app says TEXT.
logged() { grep "/$1/app" "$LOG" | grep -qF -- "$2"; }

# Each case waits for the daemon's one log line about the file (the
# decision, or the write's result) before it looks at the files.

# --- a read-only file outside the pods dir, the only mount at the path ---
victim=$IT_WORK/outside/victim
precious "$victim"
rejected a1 only_mount "$victim"
still_rejected a1
check "a1: the log says the file is not kubelet's" \
	wait_for 5 logged a1 "no termination message: $victim is not kubelet's file"
check "a1: ... a read-only file outside the pods dir is unchanged" untouched "$victim"

# --- the subPath attack (the issue's reproduction): a volume with a subPath
# at the path, read-only in the pod. kubelet binds the volume's file (here a
# read-only file outside the pods dir) under the pod's volume-subpaths and
# lists that mount first, its own termination mount last. ---
hostfile=$IT_WORK/outside/hostpath-file
sub=$IT_WORK/pods/$(uid b1)/volume-subpaths/data/app/0
precious "$hostfile"
mkdir -p "${sub%/*}"
check "b1: the subPath file is a bind mount of a file outside the pods dir" bind "$hostfile" "$sub"
rejected b1 first_mount "$sub"
still_rejected b1
check "b1: the write to kubelet's own file (the last mount) is logged" \
	wait_for 5 logged b1 "termination message written to $(term_of b1)"
check "b1: ... once" test "$(grep "/b1/app" "$LOG" | grep -c "termination message written")" = 1
check "b1: ... the reason is in kubelet's file" grep -q '^cpusetd: invalid_annotation: ' "$(term_of b1)"
check "b1: ... the subPath file (and the file outside behind it) is unchanged" untouched "$hostfile"

# --- a mount point on the way: a file bound over kubelet's file ---
victim2=$IT_WORK/outside/victim2
precious "$victim2"
rejected c1 bind_over "$victim2"
check "c1: the bind mount is in place" mountpoint -q "$(term_of c1)"
still_rejected c1
check "c1: the kernel refuses the mount point (RESOLVE_NO_XDEV), logged with the pod" \
	wait_for 5 logged c1 "cannot write termination message $(term_of c1): Invalid cross-device link"
check "c1: ... the file behind it is unchanged" untouched "$victim2"

# --- a read-only mount at the path: not kubelet's, nothing written ---
rejected d1 ro_mount
still_rejected d1
check "d1: the log says the mount is read-only" wait_for 5 logged d1 "is read-only, so not kubelet's"
check "d1: ... nothing is written through it" test ! -s "$(term_of d1)"

# --- another pod's file, another container's file ---
other=$IT_WORK/pods/$(uid someone-else)/containers/app/termination
side=$IT_WORK/pods/$(uid e2)/containers/side/termination
precious "$other"
precious "$side"
rejected e1 only_mount "$other"
rejected e2 only_mount "$side"
still_rejected e1
still_rejected e2
check "e1: another pod's file: the log says it is not kubelet's" wait_for 5 logged e1 "is not kubelet's file"
check "e1: ... unchanged" untouched "$other"
check "e2: another container's file: the log says it is not kubelet's" wait_for 5 logged e2 "is not kubelet's file"
check "e2: ... unchanged" untouched "$side"

# --- a write that hangs: the pods dir on a filesystem frozen for real ---
# (fsfreeze: every write to it waits, uninterruptibly, until it thaws).
mkdir -p "$SLOW"
truncate -s 16M "$IT_WORK/slow.img"
mkfs.ext4 -q -F "$IT_WORK/slow.img"
check "a loop-mounted ext4 for the pods dir" mount -o loop "$IT_WORK/slow.img" "$SLOW"
for p in f0 f1 f2; do
	mkdir -p "$SLOW/$(uid $p)/containers/app"
	: >"$SLOW/$(uid $p)/containers/app/termination"
done
daemon_stop
check "daemon starts with the pods dir on it" daemon_start "$ROOT" --kubelet-pods-dir "$SLOW"
# The bundle names the file there; the filesystem freezes just before runc.
slow_mount() { only_mount "$1" "$2" && fsfreeze -f "$SLOW"; }
# ... and thaws 200 ms later: a slow write, well within the wait.
brief_freeze() {
	slow_mount "$1" "$2" || return
	{ sleep 0.2; fsfreeze -u "$SLOW"; } &
	THAW=$!
}
# line PATTERN: the number of the first log line matching PATTERN.
line() { grep -n -m1 -- "$1" "$LOG" | cut -d: -f1; }

# A slow write (200 ms): the kill waits for it, so kubelet reads the reason.
rejected f0 brief_freeze "$SLOW/$(uid f0)/containers/app/termination"
wait "$THAW"
check "f0: killed" wait_for 5 stopped f0 app
check "f0: ... the write is logged" wait_for 5 logged f0 "termination message written to"
check "f0: ... before the kill: the message was there when the container died" \
	test "$(line "/f0/app.*termination message written")" -lt "$(line "/f0/app.*rejected: killed")"
check "f0: ... the reason is in kubelet's file" \
	grep -q '^cpusetd: invalid_annotation: ' "$SLOW/$(uid f0)/containers/app/termination"
rejected f1 slow_mount "$SLOW/$(uid f1)/containers/app/termination"
check "f1: the filesystem is frozen" bash -c "! fsfreeze -f '$SLOW' 2>/dev/null"
check "f1: the error is listed at once" wait_for 5 has_error f1 invalid_annotation rejected
pod_start g1 guaranteed 1000
check "a pod started meanwhile is placed within 2 s: the hung write holds no placement" \
	wait_for 2 allowed_is g1 app 0
check "f1: the rejection does not wait for the write: killed" wait_for 5 stopped f1 app
check "f1: ... after the write was overdue (logged)" logged f1 "not written after 1000 ms"
check "f1: nothing written while frozen" test ! -s "$SLOW/$(uid f1)/containers/app/termination"
fsfreeze -u "$SLOW"
check "f1: thawed, the message lands in kubelet's file" \
	wait_for 5 grep -q '^cpusetd: invalid_annotation: ' "$SLOW/$(uid f1)/containers/app/termination"
check "f1: ... and the write is logged once" wait_for 5 logged f1 "termination message written to"

# A stop while a write hangs: the daemon does all of its own stop and
# leaves the stuck thread behind (the process ends when the kernel lets
# the thread go, here at the thaw).
rejected f2 slow_mount "$SLOW/$(uid f2)/containers/app/termination"
check "f2: killed while its write hangs" wait_for 5 stopped f2 app
pid=$IT_DAEMON
writer=$(grep -lx cpusetd-msg /proc/"$pid"/task/*/comm 2>/dev/null | head -n1)
writer=${writer%/comm}
check "f2: the writer thread is stuck in the kernel (D)" \
	bash -c "[ -n '$writer' ] && grep -q '^State:.*D' '$writer/status'"
kill -TERM "$pid"
check "a stop with a hung write: the daemon's stop ends (status.json says stopped)" \
	wait_for 5 bash -c "jq -e '.daemon.state == \"stopped\"' '$IT_WORK/state/status.json' >/dev/null &&
		grep -q 'stopping; placements stay' '$LOG' && grep -q 'writer still busy.*not waiting for it' '$LOG'"
fsfreeze -u "$SLOW"
check "... the stuck thread goes once the filesystem thaws" wait_for 10 test ! -e "$writer"
wait "$pid" 2>/dev/null
IT_DAEMON=

it_done
