#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Rejected containers the daemon did not see start (made while it was
# down), judged at its start's resync (issue 22, L2-L4):
#   - a real `runc create` left waiting for `runc start` is runc's init
#     stage: not killed while created, killed at its first exec;
#   - a program that names itself "runc:[2:INIT]" has started all the
#     same (its exe is its own): killed at once;
#   - one that also runs from a memfd named as runc 1.1's clone looks
#     like the init stage in every way /proc shows, and must not escape
#     for all that: killed once the init stage's time is up (10 s);
#   - a fork bomb (no PID namespace, pids.max 128, so every task forks and
#     the machine is safe) is frozen and killed in one round;
#   - one rejected while the daemon ran and started while it was down is
#     killed at the next start, though the pinned lifecycle map, which
#     counted no exec meanwhile, says it has not started;
#   - with the daemon in a mount namespace of its own (as the unit's
#     sandbox and a DaemonSet's container give it), a task of the host's
#     namespace in a container's cgroup is still the runtime's, not the
#     container's program: the runtime's namespace is the one of whoever
#     started the daemon, found by BPF.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start rejresync kubepods
command -v gcc >/dev/null || it_skip_all "gcc missing (make deps)"
command -v unshare >/dev/null || it_skip_all "unshare missing (util-linux)"
PIDS=/sys/fs/cgroup/pids
# The fork bomb's part is v1's kill (v2 has cgroup.kill).
[ -z "$IT_V2" ] && [ -d "$PIDS" ] && [ -d /sys/fs/cgroup/freezer ] ||
	it_skip_all "needs cgroup v1 with the pids and freezer hierarchies"

# A program that passes for runc's init stage: comm "runc:[2:INIT]"; with
# "memfd", it first re-executes itself from a memfd named like runc 1.1's
# copy of itself. Then it waits, never exec'ing again. With "bomb", a fork
# bomb whose every task keeps forking (retrying when pids.max says no) and
# reaps its children at once.
cat >"$IT_WORK/forge.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bomb") == 0) {
		/* Every task forks for ever, and reaps at once (no zombie
		 * holds a pid): a slot freed by a kill is taken again at once. */
		signal(SIGCHLD, SIG_IGN);
		for (;;)
			fork();
	}
	if (argc > 1 && strcmp(argv[1], "memfd") == 0) {
		int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		int fd = memfd_create("runc_cloned:/proc/self/exe", MFD_CLOEXEC);
		char *args[] = { argv[0], NULL };

		while (sendfile(fd, in, NULL, 1 << 20) > 0)
			;
		fexecve(fd, args, environ);
		return 1;
	}
	prctl(PR_SET_NAME, "runc:[2:INIT]");
	for (;;)
		pause();
}
C
check "the forger builds (gcc -static)" \
	gcc -static -O2 -o "$IT_WORK/rootfs/bin/forge" "$IT_WORK/forge.c"

# Bundle edits (container_start's HOOK): ARG is jq's filter.
edit() { jq "$1" "$2" >"$2.new" && mv "$2.new" "$2"; }
# No PID namespace: the death of its first task does not take the rest.
BOMB='.linux.namespaces |= map(select(.type != "pid")) | .linux.resources.pids = {"limit": 128}
	| .process.args = ["/bin/forge", "bomb"]'

cgp() { cg_path burstable "$(uid "$1")" "$(cid "$1/app")"; }
comm_is() { [ "$(cat "/proc/$(pid_of "$1" app)/comm")" = "$2" ]; }
procs_of() { cat "$IT_CPUSET$(cgp "$1")/cgroup.procs" 2>/dev/null; }
pids_current() { cat "$PIDS$(cgp "$1")/pids.current"; }
log_has() { grep -q "$1" "$IT_WORK/daemon.log"; }

# --- made while the daemon is down ---
for p in c1 f1 m1 b1; do container_start $p POD burstable sandbox 0; done
IT_CREATE=1 container_start c1 app burstable container 500 nope
check "c1: runc create left it created" test "$(status_of c1 app)" = created
container_start f1 app burstable container 500 nope "" edit '.process.args = ["/bin/forge"]'
check "f1: its program calls itself runc:[2:INIT]" wait_for 5 comm_is f1 "runc:[2:INIT]"
container_start m1 app burstable container 500 nope "" edit '.process.args = ["/bin/forge", "memfd"]'
check "m1: its comm and exe are runc 1.1's init stage's" wait_for 5 bash -c \
	"[ \"\$(cat /proc/$(pid_of m1 app)/comm)\" = 'runc:[2:INIT]' ] &&
	 readlink /proc/$(pid_of m1 app)/exe | grep -q '^/memfd:runc_cloned:/proc/self/exe'"
# The bomb last: it keeps half a CPU busy (its 500m quota) until killed.
container_start b1 app burstable container 500 nope "" edit "$BOMB"
bomb_big() { [ "$(procs_of b1 | wc -l)" -ge 100 ]; }
check "b1: the fork bomb runs (100 tasks or more)" wait_for 10 bomb_big
it_log "b1: $(procs_of b1 | wc -l) tasks, pids.current $(pids_current b1) of 128"

check "daemon starts" daemon_start "$ROOT"
t0=${EPOCHREALTIME/./}
for p in c1 f1 m1 b1; do
	check "$p: rejected (invalid_annotation)" wait_for 10 has_error $p invalid_annotation rejected
done

# A reload's resync meanwhile: m1's deadline must stand through it.
rs=$(jq .counters.resyncs "$IT_WORK/state/status.json")
resynced() { jq -e ".counters.resyncs > $rs" "$IT_WORK/state/status.json" >/dev/null; }
kill -HUP "$IT_DAEMON"
check "a reload's resync in m1's 10 s" wait_for 10 resynced

# The resync has decided (status.json is out): what it killed is dead.
check "c1: runc's init stage is left alone (still created)" test "$(status_of c1 app)" = created
check "c1: ... the log says it waits for its first exec" \
	log_has "demo/c1/app ([0-9a-f]*): not started yet, by what its tasks show"
check "c1: runc start works" $IT_RUNC start "$(cid c1/app)"
check "c1: ... and its first exec is killed" wait_for 5 stopped c1 app
check "c1: ... the reason is in its termination file" \
	grep -q '^cpusetd: invalid_annotation' "$IT_WORK/pods/$(uid c1)/containers/app/termination"
check "c1: ... logged as killed at its first exec" log_has "demo/c1/app .*rejected: killed at its first exec"

check "f1: a forged comm does not pass: killed at once" wait_for 5 stopped f1 app
check "f1: ... logged so" log_has "demo/f1/app .*rejected: killed at once"

check "b1: the fork bomb is killed at once" log_has "demo/b1/app .*rejected: killed at once"
# log_us PATTERN: the µs of the day of the first log line matching PATTERN.
log_us() {
	grep -m1 "$1" "$IT_WORK/daemon.log" | sed -E 's/^[0-9-]+T([0-9]+):([0-9]+):([0-9]+)\.([0-9]{6}).*/\1 \2 \3 \4/' |
		{ read -r h m s us; echo $(( ((10#$h * 60 + 10#$m) * 60 + 10#$s) * 1000000 + 10#$us )); }
}
kill_ms=$(( ($(log_us "demo/b1/app .*rejected: killed") - $(log_us "demo/b1/app .*admission error")) / 1000 ))
it_log "b1: killed ${kill_ms} ms after its admission error was logged"
check "b1: ... nothing left in its cgroup" test -z "$(procs_of b1)"
# pids.current also counts the dead until their parent (the host's
# init, once orphaned) reaps them.
pids_gone() { [ "$(pids_current b1)" = 0 ]; }
check "b1: ... and its pids cgroup empties once they are reaped" wait_for 5 pids_gone
it_log "b1: $(grep -o "$(cgp b1): [0-9]* tasks killed while frozen" "$IT_WORK/daemon.log")"
check "b1: ... in one round, frozen" log_has "cgfs: $(cgp b1): [0-9]* tasks killed while frozen"
check "b1: ... and no kill failed" no_match "$IT_WORK/daemon.log" kill_failed

check "m1: a forged memfd init stage is not killed at once" \
	no_match "$IT_WORK/daemon.log" "demo/m1/app .*rejected: killed at once"
check "m1: ... but within its 10 s" wait_for 15 stopped m1 app
ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
it_log "m1 killed ${ms} ms after the daemon's start"
check "m1: ... not before (${ms} ms)" test "$ms" -ge 9000
check "m1: ... logged so" log_has "demo/m1/app .*rejected: killed after 10 s with no exec"
for p in c1 f1 m1 b1; do pod_stop $p; done

# c2: made while the daemon runs (BPF records its mkdir in the pinned
# lifecycle map), started while it is down (no program counts that
# exec): at the next start the map still says "not started".
container_start c2 POD burstable sandbox 0
IT_CREATE=1 container_start c2 app burstable container 500 nope
check "c2: rejected while created" wait_for 10 has_error c2 invalid_annotation rejected
daemon_stop
$IT_RUNC start "$(cid c2/app)"
check "c2: started while the daemon is down" wait_for 5 running c2 app

# --- the daemon in a mount namespace of its own ---
# r1 is runc's init stage, and beside it a task of the host's mount
# namespace stands for runc's own stages there: the runtime's, not the
# container's program, however it is named.
container_start r1 POD burstable sandbox 0
IT_CREATE=1 container_start r1 app burstable container 500 nope
sleep 3600 &
host_task=$!
echo "$host_task" >"$IT_CPUSET$(cgp r1)/cgroup.procs"
host_ns=$(readlink /proc/self/ns/mnt)
IT_WRAP="unshare --mount --propagation unchanged"
check "daemon starts in a mount namespace of its own" daemon_start "$ROOT"
IT_WRAP=
check "... which is not the host's" test "$(readlink "/proc/$IT_DAEMON/ns/mnt")" != "$host_ns"
check "... and takes the host's for the runtime's, from its parent" \
	log_has "runtime mount namespace: ${host_ns//[][]/.}, that of bash\[$$\], which started us"
check "c2: the pinned map's 'not started' is checked: killed at once" wait_for 5 stopped c2 app
check "c2: ... logged so" log_has "demo/c2/app .*rejected: killed at once"
check "r1: rejected" wait_for 10 has_error r1 invalid_annotation rejected
check "r1: the host task in its cgroup is the runtime's: alive" kill -0 "$host_task"
check "r1: ... runc's init stage too" test "$(status_of r1 app)" = created
check "r1: ... the log says it waits for its first exec" \
	log_has "demo/r1/app ([0-9a-f]*): not started yet, by what its tasks show"
check "r1: runc start works" $IT_RUNC start "$(cid r1/app)"
check "r1: ... and its first exec is killed" wait_for 5 stopped r1 app
kill "$host_task" 2>/dev/null
wait "$host_task" 2>/dev/null
pod_stop r1
pod_stop c2
daemon_stop

it_done
