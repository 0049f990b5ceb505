#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The daemon inside the shipped unit's sandbox (systemd/cpusetd.service):
# with exactly its CapabilityBoundingSet (setpriv) it still takes the
# cheap foreign-write hook (fanotify needs CAP_SYS_ADMIN; without it the
# daemon falls back to the syscall tracepoints, which tax every write(2)
# of the node), lifts an integer container's CFS quota (the saved limit
# is a trusted.* attribute: CAP_SYS_ADMIN again) and undoes a foreign
# write, rejects a container (its termination message written by the
# writer thread); and every syscall it makes (strace -f) is one its
# SystemCallFilter allows, groups expanded by systemd-analyze. There is
# no systemd as PID 1 here, so these two parts of the sandbox are applied
# by hand; `systemd-analyze verify` checks the rest (test_systemd_unit).
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
UNIT=systemd/cpusetd.service
CPU=/sys/fs/cgroup/cpu
for t in setpriv strace systemd-analyze; do
	command -v $t >/dev/null || it_skip_all "$t missing (make deps)"
done
if [ -n "$IT_V2" ] || [ ! -d "$CPU" ]; then
	it_skip_all "needs the v1 cpu hierarchy (quota)"
fi
it_start sandbox kubepods

# CapabilityBoundingSet=CAP_A CAP_B -> +a,+b for setpriv.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sed -n 's/^CAP_\(.*\)/+\L\1/p' | paste -sd,)
check "the unit names its capabilities" test -n "$caps"
it_log "capabilities: $caps"

# expand NAME...: syscalls, with @groups expanded (nested ones too).
expand() {
	local t x
	for t; do
		case $t in
		@*) systemd-analyze syscall-filter "$t" </dev/null | sed -n 's/^    \([-@a-z0-9_]*\)$/\1/p' |
			while read -r x; do expand "$x"; done ;;
		*) echo "$t" ;;
		esac
	done
}
# shellcheck disable=SC2046
expand $(sed -n 's/^SystemCallFilter=//p' "$UNIT") | sort -u >"$IT_WORK/allowed"
check "the unit's syscall filter expands" test "$(wc -l <"$IT_WORK/allowed")" -gt 100

cgp() { cg_path guaranteed "$(uid "$1")" "$(cid "$1/app")"; }
# kubelet's pod cgroup in the cpu hierarchy, quota = the pod's limit.
pod_prep() { local p; p=$(cgp "$1"); mkdir -p "$CPU${p%/*}" && echo $(($2 * 100)) >"$CPU${p%/*}/cpu.cfs_quota_us"; }

# A rejected container already running when the daemon starts: it is
# killed through the freezer and pidfds, which the filter must allow. The
# unit cannot read the /proc of another root process's tasks (no
# CAP_SYS_PTRACE), so unless the container runs with fewer capabilities
# than the daemon, it is killed by its 10 s deadline, not at once.
container_start x1 POD burstable sandbox 0
container_start x1 app burstable container 500 nope

# As the service manager does before the exec: SCHED_FIFO 10 from the
# unit's CPUSchedulingPolicy/Priority, then the bounding set.
prio=$(sed -n 's/^CPUSchedulingPriority=//p' "$UNIT")
IT_WRAP="strace -f -qq -o $IT_WORK/strace.txt chrt -f $prio setpriv --bounding-set=-all,$caps --inh-caps=-all --"
check "daemon starts with the unit's capabilities only" daemon_start "$ROOT"
IT_WRAP=
pid=$(pgrep -P "$IT_DAEMON" -x cpusetd)
check "... and runs with them" bash -c "grep -q '^CapBnd:.*' /proc/$pid/status &&
	[ \"\$(sed -n 's/^CapEff:\\t//p' /proc/$pid/status)\" = \"\$(setpriv --bounding-set=-all,$caps --inh-caps=-all -- sed -n 's/^CapEff:\\t//p' /proc/self/status)\" ]"
hook=$(jq -r .daemon.write_hook "$IT_WORK/state/status.json")
it_log "foreign writes caught via: $hook"
check "foreign writes: a hook that costs nothing outside cpuset writes ($hook)" \
	bash -c "[ $hook = fexit ] || [ $hook = kprobe ] || [ $hook = fanotify ]"

pod_prep g1 1000
pod_start g1 guaranteed 1000
check "integer container on CPU 0" wait_for 30 allowed_is g1 app 0
check "its CFS quota is lifted" wait_for 30 bash -c "[ \$(cat $CPU$(cgp g1)/cpu.cfs_quota_us) = -1 ]"
check "no quota error" jq -e '.counters.cpu_quota_errors == 0' "$IT_WORK/state/status.json"
ms=$(ms_until_restored "$IT_CPUSET$(cgp g1)/cpuset.cpus")
check "a foreign write is undone ($ms ms)" test "$ms" -le 100
# /proc/1/ns/mnt needs ptrace access (no CAP_SYS_PTRACE here): the
# runtime's mount namespace comes from BPF (issue 22 L2).
check "the runtime's mount namespace is found by BPF, without ptrace access" \
	grep -q "runtime mount namespace: ours, mnt:\[[0-9]*\], which every ancestor shares" "$IT_WORK/daemon.log"
# (At debug level this kernel's own refusal of fexit shows, as for root.)
check "nothing refused for want of a privilege" bash -c \
	"! grep -v ': debug: ' $IT_WORK/daemon.log | grep -E 'Operation not permitted|EPERM'"
# A rejection: its termination message is written by the daemon's writer
# thread (a thread of its own, then openat2 and the write): those
# syscalls are in the trace below too.
pod_start r1 burstable 500 "not-a-list"
check "a rejected container is killed" wait_for 30 stopped r1 app
check "... its termination message written (the writer thread)" wait_for 30 \
	grep -q '^cpusetd: invalid_annotation: ' "$IT_WORK/pods/$(uid r1)/containers/app/termination"
check "a rejected container running before the start is killed" wait_for 20 stopped x1 app
it_log "$(grep -o 'demo/x1/app .*rejected: killed [^(]*' "$IT_WORK/daemon.log")"
pod_stop x1
pod_stop g1
check "the quota comes back with the container gone" wait_for 30 bash -c \
	"[ ! -e $CPU$(cgp g1)/cpu.cfs_quota_us ] || [ \$(cat $CPU$(cgp g1)/cpu.cfs_quota_us) != -1 ]"

# The daemon is strace's child: stop it, then strace ends.
kill -TERM "$pid"
wait "$IT_DAEMON"
IT_DAEMON=
# Its syscalls from its own execve on (setpriv's before it are not the
# unit's ExecStart=).
awk -v bin="$IT_OUT/cpusetd" '
	!on && index($0, "execve(\"" bin "\"") { on = 1 }
	on { sub(/^[0-9]+ +/, ""); if (match($0, /^[a-z_0-9]+\(/)) print substr($0, 1, RLENGTH - 1) }' \
	"$IT_WORK/strace.txt" | sort -u >"$IT_WORK/used"
check "strace saw the daemon's syscalls" test "$(wc -l <"$IT_WORK/used")" -gt 20
check "... the rejected container's kill among them (pidfd_open, pidfd_send_signal)" \
	bash -c "grep -qx pidfd_open '$IT_WORK/used' && grep -qx pidfd_send_signal '$IT_WORK/used'"
comm -23 "$IT_WORK/used" "$IT_WORK/allowed" >"$IT_WORK/denied"
it_log "syscalls the filter would refuse: $(paste -sd' ' "$IT_WORK/denied")"
check "every syscall it made is in the unit's SystemCallFilter" test ! -s "$IT_WORK/denied"
it_done
