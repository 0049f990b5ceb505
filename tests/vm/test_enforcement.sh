#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Enforcement on Debian's kernel, pure cgroup v2 (issue 11): each way of
# catching a foreign cpuset write this kernel offers (fexit, kprobe, a
# fanotify mark on cgroup2, the write syscalls; the host of `make check`
# may have only the last two), a
# rejection at the container's own first exec with cgroup.kill, and a
# container whose tasks all exited releasing its CPUs while its cgroup
# remains.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start enforce kubepods
ONLINE_ALL=$(cat "$SYS_CPU/online")

own_cpus() { cat "$IT_CPUSET$(cg_path "$1" "$(uid "$2")" "$(cid "$2/app")")/cpuset.cpus"; }
# own_is_not QOS POD CPULIST: the app's own cpuset.cpus is not CPULIST
# (a function, so that wait_for reads it again each time).
own_is_not() { [ "$(own_cpus "$1" "$2")" != "$3" ]; }
g1_cpus() { jq -r '.containers[] | select(.pod == "g1") | .cpus' "$IT_WORK/state/status.json"; }
g1_placed() { [ -n "$(g1_cpus)" ]; }
# The log is per daemon run: the hook's own line, not the previous one's.
reserved_is() { [ "$(jq -r .reserved "$IT_WORK/state/status.json")" = "$1" ]; }

first=1
for hook in fexit kprobe fanotify syscall; do
	case $hook in
	fexit) env=() ;;
	kprobe) env=(CPUSETD_BPF_NO_FEXIT=1) ;;
	fanotify) env=(CPUSETD_BPF_NO_FEXIT=1 CPUSETD_BPF_NO_KPROBE=1) ;;
	syscall) env=(CPUSETD_BPF_NO_FEXIT=1 CPUSETD_BPF_NO_KPROBE=1 CPUSETD_NO_FANOTIFY=1) ;;
	esac
	[ ${#env[@]} -gt 0 ] && export "${env[@]}"
	: >"$IT_WORK/daemon.log"
	check "$hook: daemon starts" daemon_start "$ROOT"
	unset CPUSETD_BPF_NO_FEXIT CPUSETD_BPF_NO_KPROBE CPUSETD_NO_FANOTIFY
	check "$hook: the write hook attached is $hook" \
		test "$(jq -r .daemon.write_hook "$IT_WORK/state/status.json")" = "$hook"
	if [ -n "$first" ]; then
		starts "s1 app burstable container 500" "g1 app guaranteed container 2000"
		first=
	fi
	wait_for 60 g1_placed
	g1=$(g1_cpus)
	wait_for 60 allowed_is g1 app "$g1"
	# On v2 only a narrower own set changes where a container runs (its
	# effective set is own ∩ its pod's): write g1's first CPU alone.
	one=${g1%%[-,]*}
	echo "$one" >"$IT_CPUSET$(cg_path guaranteed "$(uid g1)" "$(cid g1/app)")/cpuset.cpus"
	check "$hook: a foreign write narrowing g1 to CPU $one is undone" \
		wait_for 30 allowed_is g1 app "$g1"
	check "$hook: ... and logged with the writer" wait_for 30 \
		grep -q "demo/g1/app ([0-9a-f]*): [a-z]*\[[0-9]*\] wrote cpuset.cpus $one; restored" \
		"$IT_WORK/daemon.log"
	check "$hook: g1's own set no longer narrows it" \
		wait_for 30 own_is_not guaranteed g1 "$one"
	[ "$hook" = syscall ] || daemon_stop
done

# A rejection: runc's create and start succeed, the program is killed at
# its own first exec (cgroup.kill after it on v2), the reason is written.
container_start rej POD guaranteed sandbox 0
check "rejection: runc run succeeds" container_start rej app guaranteed container 64000
check "rejection: the container is dead" wait_for 60 stopped rej app
check "rejection: the reason is in its termination file" \
	grep -q 'cpusetd: insufficient_cpus' "$IT_WORK/pods/$(uid rej)/containers/app/termination"
check "rejection: listed per pod" wait_for 30 bash -c \
	"jq -e '.errors[] | select(.pod == \"rej\" and .attempts == 1 and .action == \"rejected\")' $IT_WORK/state/status.json >/dev/null"

# Every task of g1 exits, its cgroup stays: its CPUs go back.
cg=$IT_CPUSET$(cg_path guaranteed "$(uid g1)" "$(cid g1/app)")
echo 1 >"$cg/cgroup.kill"
check "exited: g1's CPUs are released while its cgroup remains" wait_for 30 reserved_is ""
check "exited: its cgroup is still there" test -d "$cg"
check "exited: s1 gets every CPU back" wait_for 60 allowed_is s1 app "$ONLINE_ALL"
vm_done
