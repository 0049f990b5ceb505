#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Removes what a test killed mid-run (SIGKILL, a lost CI runner) left
# behind, so the next run starts clean: tests/run-all.sh runs it first.
#   tests/clean-stale.sh [-n]      (-n: only say what it would remove)
#
# Only the tests' own names are touched: the private cgroup subtrees
# /cpusetd-NAME-PID (tests/integration/lib.sh it_setup; the containerd
# lane's /cpusetd-cri-PID) in every mounted hierarchy, their BPF pin dirs
# /sys/fs/bpf/cpusetd-NAME-PID, and a daemon started on such a subtree
# (`--kubepods-root /cpusetd-NAME-PID/...`), and each only when no process
# PID is alive: a test that is still running (another run on this machine)
# keeps everything. PID reuse can only make it keep more, never remove a
# live test's subtree.
set -u
dry=
[ "${1:-}" = -n ] && dry=1

# stale NAME: prints the PID if NAME is cpusetd-WORD-PID and PID is gone.
stale() {
	local pid
	[[ $1 =~ ^cpusetd-[A-Za-z0-9_.-]+-([0-9]+)$ ]] || return 1
	pid=${BASH_REMATCH[1]}
	[ -d "/proc/$pid" ] && return 1
	echo "$pid"
}

say() { echo "# clean-stale: $*"; }

# Daemons first: they hold the pin dirs and write the subtrees.
for p in /proc/[0-9]*; do
	cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
	[[ $cmd =~ cpusetd\ .*--kubepods-root\ /(cpusetd-[A-Za-z0-9_.-]+-[0-9]+)/ ]] || continue
	sub=${BASH_REMATCH[1]}
	[[ ${cmd%% *} == */cpusetd ]] || continue
	stale "$sub" >/dev/null || continue
	say "daemon ${p#/proc/} of $sub"
	[ -n "$dry" ] || kill -KILL "${p#/proc/}" 2>/dev/null
done

for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
	for d in "$h"cpusetd-*; do
		[ -d "$d" ] || continue
		stale "${d##*/}" >/dev/null || continue
		say "cgroup subtree $d"
		[ -n "$dry" ] && continue
		# Kill what still runs in it (a test's runc containers), then
		# remove it bottom-up; v2 has cgroup.kill for the whole subtree.
		if [ -e "$d/cgroup.kill" ]; then
			echo 1 >"$d/cgroup.kill" 2>/dev/null
		else
			find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		fi
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$d" ] || break
			sleep 0.1
		done
		[ -d "$d" ] && say "could not remove $d (tasks still in it?)"
	done
done

for d in /sys/fs/bpf/cpusetd-*; do
	[ -d "$d" ] || continue
	stale "${d##*/}" >/dev/null || continue
	say "pin dir $d"
	[ -n "$dry" ] || rm -rf "$d"
done
exit 0
