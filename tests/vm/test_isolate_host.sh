#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Host isolation (isolate_host) on pure cgroup v2, 16 CPUs: an exclusive
# container's CPUs are kept free of a host cgroup outside kubepods that
# inherits its set (it is given the host's set, then "" back), of an
# admin's cgroup with its own set (intersected, never widened), of a
# process in the root cgroup (its affinity), of the default IRQ affinity
# and of the unbound workqueue cpumask; all of it comes back when the CPUs
# are freed, at SIGTERM, and after kill -9 and a restart.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start isolate kubepods
ONLINE=$(cat "$SYS_CPU/online")
WQ=/sys/devices/virtual/workqueue/cpumask
HOST=/isolate-host-vm-$$		# inherits: cpuset.cpus ""
ADMIN=/isolate-admin-vm-$$	# an admin's own set: CPUs 0-3
STATE=$IT_WORK/state/isolation.state
WQ0=$(cat "$WQ")
IRQDEF0=$(cat /proc/irq/default_smp_affinity)

mkdir "$IT_CPUSET$HOST" "$IT_CPUSET$ADMIN"
echo 0-3 >"$IT_CPUSET$ADMIN/cpuset.cpus"
sh -c "echo \$\$ >$IT_CPUSET$HOST/cgroup.procs; exec sleep 100000" & HOST_SLEEP=$!
sh -c "echo \$\$ >$IT_CPUSET/cgroup.procs; exec sleep 100000" & ROOT_SLEEP=$!
cleanup() {
	daemon_stop 2>/dev/null
	kill "$HOST_SLEEP" "$ROOT_SLEEP" 2>/dev/null
	wait "$HOST_SLEEP" "$ROOT_SLEEP" 2>/dev/null
	[ "$(cat "$WQ")" = "$WQ0" ] || echo "$WQ0" >"$WQ"
	[ "$(cat /proc/irq/default_smp_affinity)" = "$IRQDEF0" ] ||
		echo "$IRQDEF0" >/proc/irq/default_smp_affinity
	rmdir "$IT_CPUSET$HOST" "$IT_CPUSET$ADMIN" 2>/dev/null
	vm_cleanup
}
trap cleanup EXIT

aff() { awk '/^Cpus_allowed_list/ {print $2}' "/proc/$1/status"; }
excl() { jq -r '.isolation.exclusive // ""' "$IT_WORK/state/status.json"; }
# isolated HOSTSET: every thing on HOSTSET (online − exclusive).
isolated() {
	[ "$(cat "$IT_CPUSET$HOST/cpuset.cpus")" = "$1" ] &&
		[ "$(cat "$IT_CPUSET$HOST/cpuset.cpus.effective")" = "$1" ] &&
		[ "$(aff "$ROOT_SLEEP")" = "$1" ] && [ "$(aff "$HOST_SLEEP")" = "$1" ] &&
		[ "$(cat "$IT_CPUSET$ADMIN/cpuset.cpus")" = 0-3 ]
}
# The inheriting cgroup gets "" back, or, where the kernel refuses ""
# on a cgroup with tasks (6.1), every online CPU: what it had.
given_back() {
	case $(cat "$IT_CPUSET$HOST/cpuset.cpus") in "" | "$ONLINE") ;; *) return 1 ;; esac &&
		[ "$(cat "$IT_CPUSET$HOST/cpuset.cpus.effective")" = "$ONLINE" ] &&
		[ "$(aff "$ROOT_SLEEP")" = "$ONLINE" ] && [ "$(aff "$HOST_SLEEP")" = "$ONLINE" ] &&
		[ "$(cat "$IT_CPUSET$ADMIN/cpuset.cpus")" = 0-3 ] &&
		[ "$(cat "$WQ")" = "$WQ0" ] && [ "$(cat /proc/irq/default_smp_affinity)" = "$IRQDEF0" ] &&
		[ ! -e "$STATE" ]
}
wq_off() { disjoint "$(list_of < <(cpus_of_hex "$(cat "$WQ")"))" "$1"; }
# cpus_of_hex MASK: the CPU ids of a kernel hex mask, one a line.
cpus_of_hex() {
	local h=${1//,/} i
	for ((i = 0; i < ${#h} * 4; i++)); do
		(( (16#${h:${#h} - 1 - i / 4:1} >> (i % 4)) & 1 )) && echo "$i"
	done
}
active() { jq -e '.isolation.active' "$IT_WORK/state/status.json" >/dev/null; }

ISO_OPTS=(--reserved-cpus 0-1 --isolate-host --isolate-host-rescan-ms 500)
check "daemon starts with --isolate-host" daemon_start "$ROOT" "${ISO_OPTS[@]}"
check "no exclusive CPU: nothing narrowed" given_back
starts "g1 POD guaranteed sandbox 0" "g1 app guaranteed container 4000"
check "isolation active" wait_for 60 active
EX=$(excl)
HS=$(minus "$ONLINE" "$EX")
it_log "exclusive $EX, host $HS"
check "4 exclusive CPUs, none of them reserved" bash -c "[ $(ncpus "$EX") = 4 ]"
check "host cgroup (inherits), root and host tasks on online - exclusive; admin's 0-3 kept" \
	wait_for 30 isolated "$HS"
check "unbound workqueue cpumask off the exclusive CPUs" wq_off "$EX"
check "default IRQ affinity off the exclusive CPUs" \
	disjoint "$(list_of < <(cpus_of_hex "$(cat /proc/irq/default_smp_affinity)"))" "$EX"
check "the state file records the host cgroup's inherited set as -" grep -q "^cgroup - $HS $HOST\$" "$STATE"

container_stop g1 app
check "CPUs freed: everything back (\"\" or every CPU for the inheriting cgroup)" wait_for 60 given_back

starts "g1 app guaranteed container 4000"
check "held again: isolated" wait_for 60 active
HS=$(minus "$ONLINE" "$(excl)")
check "held again: on online - exclusive" wait_for 30 isolated "$HS"
daemon_kill9
check "kill -9: still isolated, the state file kept" bash -c "[ -s $STATE ]"
check "restart after kill -9" daemon_start "$ROOT" "${ISO_OPTS[@]}"
check "after the restart: isolated, on the same set" wait_for 60 isolated "$HS"
daemon_stop
check "SIGTERM: everything back" given_back

# kill -9, then started with the option off: given back at start.
check "isolation on once more" daemon_start "$ROOT" "${ISO_OPTS[@]}"
check "isolated again" wait_for 60 isolated "$HS"
daemon_kill9
check "restart with isolate_host off" daemon_start "$ROOT" --reserved-cpus 0-1
check "off after a crash: everything back at start" wait_for 60 given_back
check "off after a crash: the state file is gone" test ! -e "$STATE"
daemon_stop

container_stop g1 app
container_stop g1 POD
vm_done
