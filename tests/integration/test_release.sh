#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cpusetd --release (user/release/release.h) on this real v1 kernel, with
# real runc containers, after the daemon was killed with -9 (nothing of
# it gave anything back):
#   - shared containers and sandboxes get their parent's set again, the
#     integer and the annotated containers keep their CPUs, lifted CFS
#     quotas (container and pod) come back and their marks go, host
#     isolation is given back from its state file and the file removed,
#     the pinned maps are removed; exit 0 and a summary with the counts;
#   - a second run changes nothing and says so; a run while a daemon
#     holds the instance lock is refused (exit 2) and changes nothing;
#   - the files cpusetd trusts (L5): a symlinked or hard-linked lock file,
#     a group-writable state dir and a group-writable isolation.state are
#     refused by the daemon and by --release, and the planted state file
#     drives no write and is kept; a record the kernel refuses to take
#     back keeps the file too (exit 1).
# v2 (QoS slices back to "", a new pod gets every CPU) is
# tests/vm/test_release.sh.
#
# This test changes host-wide things (host isolation: the affinity of
# every root-cpuset task, IRQs, the workqueue mask): run it under the
# exclusive test lock. It records them first and puts back, in its EXIT
# trap, whatever was not given back (even if the release failed).
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
CPU=/sys/fs/cgroup/cpu
WQ=/sys/devices/virtual/workqueue/cpumask
if [ -n "$IT_V2" ] || [ ! -d "$CPU" ]; then
	it_skip_all "needs v1 cpuset and cpu hierarchies (v2: tests/vm/test_release.sh)"
fi
[ -w "$WQ" ] || it_skip_all "no workqueue cpumask"
command -v python3 >/dev/null || it_skip_all "python3 missing (make deps)"
it_start release kubepods
st=$IT_WORK/state
STATE=$st/isolation.state
HOST=/release-test-$$		# a host cgroup: outside kubepods and /cpusetd-*
SAVE=$IT_WORK/host-save
PIDS=()

# --- what the node had: recorded first (host_save), put back by the trap ---
cleanup() {
	local p
	daemon_stop 2>/dev/null
	host_restore "$SAVE"
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [ -d "$IT_CPUSET$HOST" ]; then
		for p in $(cat "$IT_CPUSET$HOST/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		wait_for 5 bash -c "[ -z \"\$(cat $IT_CPUSET$HOST/cgroup.procs)\" ]"
		rmdir "$IT_CPUSET$HOST" 2>/dev/null
	fi
	for p in "$CPU$IT_CG"; do
		[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	it_cleanup
}
host_save "$SAVE"
trap cleanup EXIT

mkdir -p "$IT_CPUSET$HOST"
echo 0-1 >"$IT_CPUSET$HOST/cpuset.cpus"
cat "$IT_CPUSET/cpuset.mems" >"$IT_CPUSET$HOST/cpuset.mems"
sh -c "echo \$\$ >$IT_CPUSET$HOST/cgroup.procs; exec sleep 100000" & PIDS+=($!); HOST_SLEEP=$!
sh -c "echo \$\$ >$IT_CPUSET/cgroup.procs; exec sleep 100000" & PIDS+=($!); ROOT_SLEEP=$!

ctr() { cg_path "$1" "$(uid "$2")" "$(cid "$2/$3")"; }	# QOS POD NAME
cpus_of() { cat "$IT_CPUSET$1/cpuset.cpus"; }
cpus_is() { [ "$(cpus_of "$1")" = "$2" ]; }
ccpus_is() { cpus_is "$(ctr "$1" "$2" "$3")" "$4"; }		# QOS POD NAME CPUS
aff() { awk '/^Cpus_allowed_list/ {print $2}' "/proc/$1/status"; }
quota_is() { [ "$(cat "$CPU$1/cpu.cfs_quota_us")" = "$2" ]; }
# marked CGPATH: cpusetd's saved limit is on the cgroup (cpu hierarchy).
marked() {
	python3 -c 'import os, sys; os.getxattr(sys.argv[1], "trusted.cpusetd.cfs_quota")' \
		"$CPU$1" 2>/dev/null
}
# pod_prep POD MILLI: kubelet's Guaranteed pod cgroup (cpu), quota = limit.
pod_prep() {
	local d
	d=$(ctr guaranteed "$1" app)
	mkdir -p "$CPU${d%/*}" && echo $(($2 * 100)) >"$CPU${d%/*}/cpu.cfs_quota_us"
}
podq_is() { local d; d=$(ctr guaranteed "$1" app); quota_is "${d%/*}" "$2"; }
ctq_is() { quota_is "$(ctr guaranteed "$1" app)" "$2"; }	# POD QUOTA
# marks POD: both the container's and the pod's saved limits; nomarks: neither.
marks() { local d; d=$(ctr guaranteed "$1" app); marked "$d" && marked "${d%/*}"; }
nomarks() { local d; d=$(ctr guaranteed "$1" app); ! marked "$d" && ! marked "${d%/*}"; }
sandboxes_on() { ccpus_is burstable s1 POD "$1" && ccpus_is guaranteed g1 POD "$1"; }
isolated() { cpus_is "$HOST" 0 && [ "$(aff "$ROOT_SLEEP")" = 0 ]; }
irqs_as_saved() {
	local f v
	while read -r f v; do [ "$(cat "$f")" = "$v" ] || return 1; done <"$SAVE.irq"
}
host_as_saved() {
	cpus_is "$HOST" 0-1 && [ "$(aff "$ROOT_SLEEP")" = 0-1 ] && [ "$(aff "$HOST_SLEEP")" = 0-1 ] &&
		irqs_as_saved && [ "$(cat /proc/irq/default_smp_affinity)" = "$(cat "$SAVE.irqdef")" ] &&
		[ "$(cat "$WQ")" = "$(cat "$SAVE.wq")" ]
}
OPTS=(--reserved-cpus 0 --isolate-host-skip '/cpusetd-*')
ISO_OPTS=("${OPTS[@]}" --isolate-host --isolate-host-rescan-ms 200)
# release [OPTIONS...]: cpusetd --release with the daemon's options;
# output in $IT_WORK/release.out, exit code in RC.
release() {
	"$IT_OUT/cpusetd" --release --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
		--bundle-path "$IT_WORK/bundles/{id}/config.json" \
		--state-dir "$st" --pin-dir "$IT_PIN" --kubelet-pods-dir "$IT_WORK/pods" \
		--textfile "" "${OPTS[@]}" "$@" >"$IT_WORK/release.out" 2>&1
	RC=$?
	sed 's/^/#   /' "$IT_WORK/release.out" | grep -v ': info: ' | cut -c1-400
}
said() { grep -qF -- "$1" "$IT_WORK/release.out"; }

# --- a crashed daemon: shared, integer, host isolation, lifted quotas ---
pod_prep g1 1000
check "daemon starts with host isolation" daemon_start "$ROOT" "${ISO_OPTS[@]}"
pod_start s1 burstable 500
pod_start g1 guaranteed 1000
check "integer g1/app owns CPU 1" wait_for 10 allowed_is g1 app 1
check "shared s1/app on the pool (0)" wait_for 10 ccpus_is burstable s1 app 0
check "s1 and g1 sandboxes on the pool (0)" wait_for 10 sandboxes_on 0
check "isolation: the host cgroup and a root task keep off CPU 1" wait_for 10 isolated
check "quota: g1/app and its pod run without a limit (-1)" \
	wait_for 10 eval 'ctq_is g1 -1 && podq_is g1 -1'
check "quota: the saved limits are on both cgroups" marks g1
check "pinned maps are there" test -d "$IT_PIN"
daemon_kill9
check "kill -9: the state file and every narrowing remain" \
	eval '[ -s "$STATE" ] && isolated && ccpus_is burstable s1 app 0 && ctq_is g1 -1'

release
check "--release: exit 0" test "$RC" = 0
check "shared s1/app: its parent's set (0-1)" ccpus_is burstable s1 app 0-1
check "s1/app's task may run on 0-1" allowed_is s1 app 0-1
check "the sandboxes: 0-1" sandboxes_on 0-1
check "integer g1/app keeps CPU 1 (a running exclusive container is not moved)" allowed_is g1 app 1
check "quota: g1/app has its limit back (100000)" ctq_is g1 100000
check "quota: its pod too (100000)" podq_is g1 100000
check "quota: the saved-limit marks are gone" nomarks g1
check "isolation: host cgroup, root tasks, IRQs, default IRQ and workqueue masks back" host_as_saved
check "isolation: the state file is gone" test ! -e "$STATE"
check "the pinned maps are removed" test ! -e "$IT_PIN"
check "summary: 3 containers given every CPU, 1 exclusive kept, 2 quotas restored" \
	said "given every CPU: 0 QoS slices, 0 pods, 3 containers; exclusive containers keeping their CPUs until they end: 1; CFS quotas restored: 2"
check "summary: isolation given back, its file removed" said "host isolation: given back, its state file removed"

snap() {	# every cpuset.cpus and cfs quota of our subtree, and the host's
	find "$IT_CPUSET$IT_CG" "$CPU$IT_CG" -name cpuset.cpus -o -name cpu.cfs_quota_us |
		sort | xargs grep -H . ; cat "$IT_CPUSET$HOST/cpuset.cpus" "$WQ" /proc/irq/*/smp_affinity_list
}
snap >"$IT_WORK/before2"
release
check "a second --release: exit 0" test "$RC" = 0
check "a second --release: says there is nothing to give back" said "nothing to give back"
check "a second --release: nothing changed" eval 'snap | cmp -s - "$IT_WORK/before2"'

# --- annotated; a daemon running refuses the release ---
pod_stop g1
pod_prep a1 1000
check "daemon starts (no isolation)" daemon_start "$ROOT" "${OPTS[@]}"
pod_start a1 guaranteed 1000 1
check "annotated a1/app on CPU 1" wait_for 10 allowed_is a1 app 1
check "s1/app back on the pool (0)" wait_for 10 ccpus_is burstable s1 app 0
check "a1's quota lifted (a whole CPU covering its set)" wait_for 10 podq_is a1 -1
release
check "--release while the daemon runs: exit 2" test "$RC" = 2
check "... naming the daemon's pid" said "a running cpusetd (pid $IT_DAEMON) holds"
check "... and nothing changed" eval 'ccpus_is burstable s1 app 0 && podq_is a1 -1 && test -d "$IT_PIN"'
daemon_kill9
snap >"$IT_WORK/before-dry"
release --dry-run
check "--release --dry-run: exit 0, says what it would do" \
	eval '[ "$RC" = 0 ] && said "release (dry run, nothing written): given every CPU: 0 QoS slices, 0 pods, 3 containers"'
check "... and writes nothing (cpusets, quotas, marks, pins)" \
	eval 'snap | cmp -s - "$IT_WORK/before-dry" && marks a1 && test -d "$IT_PIN"'
release
check "--release after kill -9: exit 0" test "$RC" = 0
check "annotated a1/app keeps CPU 1" allowed_is a1 app 1
check "shared s1/app: 0-1 again" allowed_is s1 app 0-1
check "a1's quotas back (container and pod), the marks gone" \
	eval 'ctq_is a1 100000 && podq_is a1 100000 && nomarks a1'

# --- L5: what cpusetd trusts in its state dir ---
# start_refused WHAT: the daemon exits 1 at once, saying WHAT.
start_refused() {
	local rc
	timeout 20 "$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
		--state-dir "$st" --pin-dir "$IT_PIN" --textfile "" >"$IT_WORK/refused.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -qF -- "$1" "$IT_WORK/refused.out" && return 0
	sed 's/^/#   /' "$IT_WORK/refused.out"
	echo "#   exit $rc"
	return 1
}
echo "not a lock" >"$IT_WORK/target"
rm -f "$st/cpusetd.lock"
ln -s "$IT_WORK/target" "$st/cpusetd.lock"
check "a symlinked lock file: the daemon refuses to start" start_refused "cpusetd.lock is a symbolic link"
release
check "... and --release refuses too (exit 1)" eval '[ "$RC" = 1 ] && said "cpusetd.lock is a symbolic link"'
check "... its target is untouched" test "$(cat "$IT_WORK/target")" = "not a lock"
rm -f "$st/cpusetd.lock"
ln "$IT_WORK/target" "$st/cpusetd.lock"
check "a hard-linked lock file: refused" start_refused "cpusetd.lock has more than one link"
check "... its target is untouched" test "$(cat "$IT_WORK/target")" = "not a lock"
rm -f "$st/cpusetd.lock"
chmod 0775 "$st"
check "a group-writable state dir: the daemon refuses to start" \
	start_refused "state_dir $st: mode 0775: group or others may write it"
release
check "... and --release refuses (exit 1, nothing released)" \
	eval '[ "$RC" = 1 ] && said "mode 0775: group or others may write it"'
chmod 0755 "$st"
# A record that cannot be given back (CPUs this node does not have): the
# release says so (exit 1) and keeps the file, with that record in it.
echo 0 >"$IT_CPUSET$HOST/cpuset.cpus"
printf 'cgroup 0-7 0 %s\n' "$HOST" >"$STATE"
chmod 0600 "$STATE"
release
check "an isolation record the kernel refuses: --release exits 1" test "$RC" = 1
check "... says what is left and that the file is kept" \
	said "isolation: 0 given back, 1 refused; $STATE is kept with what is left"
check "... and keeps it, with that record" grep -qx "cgroup 0-7 0 $HOST" "$STATE"
echo 0-1 >"$IT_CPUSET$HOST/cpuset.cpus"
rm -f "$STATE"
# An isolation.state that would narrow the host cgroup to CPU 0 if it
# were believed (it says cpusetd wrote 0-1 over an original 0).
printf 'cgroup 0 0-1 %s\n' "$HOST" >"$STATE"
chmod 0660 "$STATE"
cp "$STATE" "$IT_WORK/planted"
release
check "a group-writable isolation.state: --release exits 1" test "$RC" = 1
check "... saying why" said "isolation.state: mode 0660: group or others may write it"
check "... restores nothing from it (the host cgroup keeps 0-1), and keeps it" \
	eval 'cpus_is "$HOST" 0-1 && cmp -s "$STATE" "$IT_WORK/planted"'
check "the daemon with --isolate-host starts" daemon_start "$ROOT" "${ISO_OPTS[@]}"
check "... refuses the file (logged)" wait_for 5 grep -qF "isolation.state: mode 0660" "$IT_WORK/daemon.log"
check "... the exclusive a1 is placed" wait_for 10 allowed_is a1 app 1
check "... and drives nothing from it: host cgroup 0-1, isolation off, file kept" eval \
	'cpus_is "$HOST" 0-1 && jq -e ".isolation == null" "$st/status.json" >/dev/null && cmp -s "$STATE" "$IT_WORK/planted"'
daemon_stop
rm -f "$STATE"

pod_stop a1
pod_stop s1
it_done
