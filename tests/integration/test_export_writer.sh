#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The exports are written off the event loop (user/export/export_writer.h):
# with the .prom file's directory on a frozen filesystem (ext4 on a loop
# device, fsfreeze), where every write of it blocks in the kernel, the
# daemon still places and resizes at once; what changed meanwhile (a
# burst of starts and stops) is in status.json once the filesystem thaws;
# and a stop with an export stuck ends in bounded time, the stuck writer
# killed. The old daemon, which wrote on the loop, placed nothing until
# the thaw.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start xwriter kubepods
for t in mkfs.ext4 fsfreeze losetup jq; do
	command -v "$t" >/dev/null || it_skip_all "$t missing (make deps)"
done

FROZEN=$IT_WORK/frozen
PROM=$FROZEN/prom/cpusetd.prom
thaw() { fsfreeze -u "$FROZEN" 2>/dev/null; }
cleanup() {
	thaw
	daemon_stop
	# a killed writer dies only once thawed, and holds the fs until then
	wait_for 10 umount "$FROZEN" || umount -l "$FROZEN"
	it_cleanup
}
trap cleanup EXIT
mkdir -p "$FROZEN"
truncate -s 32M "$IT_WORK/fs.img"
mkfs.ext4 -q -F "$IT_WORK/fs.img" >/dev/null 2>&1 &&
	mount -o loop "$IT_WORK/fs.img" "$FROZEN" 2>/dev/null ||
	it_skip_all "cannot mount an ext4 image on a loop device here"

ST=$IT_WORK/state/status.json
# kind_of POD: its app container's kind in status.json ("" = not there).
kind_of() {
	jq -r --arg p "$1" '.containers[] | select(.pod == $p and .sandbox == false) | .kind' "$ST" 2>/dev/null
}
kind_is() { [ "$(kind_of "$1")" = "$2" ]; }
# children_are N: the daemon has N export children.
children_are() { [ "$(pgrep -P "$IT_DAEMON" -x cpusetd | wc -l)" = "$1" ]; }
# stuck_child: the daemon's one export child sleeps uninterruptibly (D),
# in the frozen filesystem's write path
stuck_child() {
	local p
	p=$(pgrep -P "$IT_DAEMON" -x cpusetd) && [ "$(wc -w <<<"$p")" = 1 ] &&
		[ "$(awk '{print $3}' "/proc/$p/stat")" = D ]
}

pod_start s1 burstable 500
daemon_start "$ROOT" --textfile "$PROM" --export-interval 1
check "the .prom file is written" wait_for 10 test -s "$PROM"
check "status.json lists s1" wait_for 5 kind_is s1 shared

fsfreeze -f "$FROZEN"
# the next heartbeat (1 s) starts an export that blocks on the frozen fs
check "an export child is stuck on the frozen filesystem" \
	wait_for 5 stuck_child
t0=${EPOCHREALTIME/./}
pod_start g1 guaranteed 1000
check "an integer pod is placed while the export is stuck" wait_for 5 allowed_is g1 app 0
check "... and the shared container follows" wait_for 5 allowed_is s1 app 1
it_log "placed in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms with the export stuck"
# a burst while stuck: another pod starts, the integer one stops
pod_start s2 burstable 500
pod_stop g1
check "the burst is placed while the export is stuck" wait_for 5 allowed_is s1 app 0-1
check "... still one export child, none started beside it" children_are 1
check "status.json has not seen the burst yet" test -z "$(kind_of s2)"

thaw
thawed=$(date +%s)
check "after the thaw, status.json says the burst's end: s2 placed" \
	wait_for 10 kind_is s2 shared
check "... g1 gone" wait_for 5 kind_is g1 ""
check "... the pool the whole node again" \
	wait_for 5 bash -c "[ \"\$(jq -r .shared_pool $ST)\" = 0-1 ]"
check "the .prom file is written again" \
	wait_for 5 bash -c "[ \$(stat -c %Y $PROM) -ge $thawed ]"

# A stop while the export is stuck: the writer gets EXPORT_STOP_WAIT_MS
# (5 s), then is killed; the daemon exits.
fsfreeze -f "$FROZEN"
wait_for 5 stuck_child
kill -TERM "$IT_DAEMON"
check "a stop with a stuck export ends within 10 s" wait_for 10 bash -c "! kill -0 $IT_DAEMON"
thaw	# a daemon that wrote on the loop is stuck until now
daemon_stop
check "... and says why status.json is left" grep -q "export writer is stuck" "$IT_WORK/daemon.log"
# After each child, the loop's pages its fork write-protected are made
# writable again (prefault.h; the fault counts are test_prefault's).
check "after an export the loop's pages are re-armed" \
	grep -qE "export written .* [1-9][0-9]* pages re-armed" "$IT_WORK/daemon.log"
check "no error from the writer in the log" no_match "$IT_WORK/daemon.log" -E "export writer died|cannot write .*status.json"
it_done
