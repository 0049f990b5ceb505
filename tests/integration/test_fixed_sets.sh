#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Who may name CPUs, and what a named set may not take (issue 22, H2 and
# M1), with the real daemon and real runc containers on this 2-CPU host:
#  - weka.io/cores-ids and resource-status from a namespace outside
#    cores_ids_namespaces / resource_status_namespaces: refused with
#    annotation_not_allowed, shown everywhere an admission error is
#    (status.json, termination message, cpusetctl status, .prom, log);
#    the same pod in a listed namespace is placed; the default * places
#    it and the start-up log says so once; a reload that narrows a list
#    refuses (kills) a running pod at the resync that follows;
#  - a fixed set on a reserved_cpus CPU: refused with cpu_reserved, new
#    or found running after a restart that reserved its CPU;
#  - a pod-scope room: a scheduled set on it is refused, and so is an
#    annotated one when the room cannot move (here it never can: on 2 CPUs
#    the room's CPU is also the last shared one, so the room's refusal
#    must come before shared_pool_empty). An annotated set on a room that
#    can move elsewhere needs more CPUs: tests/unit/test_policy.c.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start fixed-sets kubepods
st=$IT_WORK/state
conf=$IT_WORK/fixed-sets.conf
status1='{"scheduling.koordinator.sh/resource-status":"{\"cpuset\":\"1\"}"}'
notice='accepted from every namespace'

counter_at_least() { jq -e --argjson n "$2" ".counters.$1 >= \$n" "$st/status.json" >/dev/null; }
# reload TEXT: the config file becomes TEXT, SIGHUP, and the resync that
# follows a reload is done.
reload() {
	local n
	printf '%s\n' "$1" >"$conf"
	n=$(jq .counters.resyncs "$st/status.json")
	kill -HUP "$IT_DAEMON"
	wait_for 5 counter_at_least resyncs $((n + 1))
}
notices() { grep -c "$notice" "$IT_WORK/daemon.log"; }
message_has() { grep -qF -- "$3" "$IT_WORK/pods/$(uid "$1")/containers/$2/termination"; }
prom_has() { grep -qF -- "$1" "$IT_WORK/prom/cpusetd.prom"; }
ctl_has() { "$IT_OUT/cpusetctl" status --state-dir "$st" | grep -qF -- "$1"; }
# cpu_quota POD MILLI: kubelet's pod cgroup with the pod's CPU limit
# (pod scope sizes the pod's room from it).
cpu_quota() {
	local p
	p=$(cg_path guaranteed "$(uid "$1")" x)
	p=${p%/*}
	if [ -n "$IT_V2" ]; then
		it_mkroot "$p" && echo "$(($2 * 100)) 100000" >"$IT_CPUSET$p/cpu.max"
	else
		mkdir -p "/sys/fs/cgroup/cpu$p" && echo $(($2 * 100)) >"/sys/fs/cgroup/cpu$p/cpu.cfs_quota_us"
	fi
}

# --- H2: the default *, as the rule book says ---
: >"$conf"
check "daemon starts with the default lists" daemon_start "$ROOT" --config "$conf"
pod_start s1 burstable 500
check "the start-up log says once that every namespace may pin CPUs" \
	wait_for 5 test "$(notices)" = 1
check "... at notice level, naming both annotations" grep -q \
	"notice: weka.io/cores-ids and scheduling.koordinator.sh/resource-status $notice" \
	"$IT_WORK/daemon.log"
IT_NAMESPACE=tenant pod_start a1 burstable 500 1
check "default *: a cores-ids pod of any namespace is placed" wait_for 5 allowed_is a1 app 1
pod_stop a1

# --- H2: explicit lists, live at a reload ---
check "reload to explicit lists" reload "cores_ids_namespaces = weka-*
resource_status_namespaces = koord"
check "... applied live" grep -q "applied cores_ids_namespaces, resource_status_namespaces" \
	"$IT_WORK/daemon.log"
check "... and the notice is not repeated" test "$(notices)" = 1
IT_NAMESPACE=tenant pod_start x1 burstable 500 1
check "cores-ids outside the list: annotation_not_allowed, rejected" \
	wait_for 5 has_error x1 annotation_not_allowed rejected
check "... its termination message names the annotation, namespace and key" \
	wait_for 5 message_has x1 app \
	'cpusetd: annotation_not_allowed: weka.io/cores-ids is not allowed in namespace "tenant" (cores_ids_namespaces)'
check "... killed at its first exec" wait_for 5 stopped x1 app
check "... the log says so" grep -q "tenant/x1/app .*admission error annotation_not_allowed" \
	"$IT_WORK/daemon.log"
check "... it took nothing: shared pool whole" wait_for 5 allowed_is s1 app 0-1
IT_NAMESPACE=tenant IT_ANNOTATIONS=$status1 pod_start x2 guaranteed 1000
check "resource-status outside the list: annotation_not_allowed, rejected" \
	wait_for 5 has_error x2 annotation_not_allowed rejected
check "... its message names resource-status and its key" wait_for 5 message_has x2 app \
	'scheduling.koordinator.sh/resource-status is not allowed in namespace "tenant" (resource_status_namespaces)'
check "cpusetctl status lists annotation_not_allowed" ctl_has annotation_not_allowed
check ".prom: counted by reason" \
	wait_for 5 grep -qE '^cpusetd_admission_errors_total\{reason="annotation_not_allowed"\} 2$' \
	"$IT_WORK/prom/cpusetd.prom"
check ".prom: the pod's error series" wait_for 5 grep -qE \
	'^cpusetd_pod_admission_error_attempts\{k8s_namespace_name="tenant",k8s_pod_name="x1",.*reason="annotation_not_allowed"' \
	"$IT_WORK/prom/cpusetd.prom"
pod_stop x1
pod_stop x2
IT_NAMESPACE=koord IT_ANNOTATIONS=$status1 pod_start k1 guaranteed 1000
check "resource-status in a listed namespace is placed" wait_for 5 allowed_is k1 app 1
pod_stop k1
IT_NAMESPACE=weka-a pod_start w1 burstable 500 1
check "cores-ids in a namespace a pattern matches is placed" wait_for 5 allowed_is w1 app 1
IT_NAMESPACE=weka-system pod_start rr burstable 500 1
check "... and another one on the same CPU" wait_for 5 allowed_is rr app 1

# --- H2: narrowing a list refuses running pods at the resync ---
check "reload narrows cores_ids_namespaces to weka-system" reload "cores_ids_namespaces = weka-system
resource_status_namespaces = koord"
check "a running pod no longer allowed: annotation_not_allowed at the resync" \
	wait_for 5 has_error w1 annotation_not_allowed rejected
check "... and killed (it was running)" wait_for 5 stopped w1 app
check "a running pod still allowed keeps its CPU" allowed_is rr app 1
pod_stop w1
daemon_stop

# --- M1: reserved_cpus are never a fixed set's ---
check "restart with reserved_cpus = 1" daemon_start "$ROOT" --config "$conf" --reserved-cpus 1
check "explicit lists: no notice at this start" test "$(notices)" = 1
check "the running set on a CPU reserved since: cpu_reserved at recovery" \
	wait_for 5 has_error rr cpu_reserved rejected
check "... killed, never kept" wait_for 5 stopped rr app
check "... its message names reserved_cpus" wait_for 5 message_has rr app \
	'cpusetd: cpu_reserved: weka.io/cores-ids CPUs 1 are reserved for the system (reserved_cpus)'
pod_stop rr
IT_NAMESPACE=weka-system pod_start rn burstable 500 1
check "a new cores-ids pod on a reserved CPU: cpu_reserved" wait_for 5 has_error rn cpu_reserved rejected
IT_NAMESPACE=koord IT_ANNOTATIONS=$status1 pod_start rk guaranteed 1000
check "a resource-status cpuset on a reserved CPU: cpu_reserved" \
	wait_for 5 has_error rk cpu_reserved rejected
check ".prom: cpu_reserved counted" \
	wait_for 5 prom_has 'cpusetd_admission_errors_total{reason="cpu_reserved"} 3'
check "the reserved CPU stays shared" wait_for 5 allowed_is s1 app 0-1
pod_stop rn
pod_stop rk
daemon_stop

# --- M1: a pod-scope room is not a fixed set's ---
check "restart with topology_manager_scope = pod" \
	daemon_start "$ROOT" --config "$conf" --topology-manager-scope pod
cpu_quota A 2000
pod_start A guaranteed 1000
check "pod A (2 CPUs, its first container 1) gets CPU 0; CPU 1 is its room" \
	wait_for 5 allowed_is A app 0
IT_NAMESPACE=koord IT_ANNOTATIONS=$status1 pod_start sc guaranteed 1000
check "a resource-status cpuset on the room: refused, naming the pod" \
	wait_for 5 message_has sc app \
	'cpusetd: cpu_exclusive: scheduling.koordinator.sh/resource-status cpuset CPU 1 is held for the containers pod demo/A has still to place'
IT_NAMESPACE=weka-system pod_start an burstable 500 1
check "cores-ids on a room that cannot move: refused" wait_for 5 message_has an app \
	'cpusetd: cpu_exclusive: weka.io/cores-ids CPU 1 is held for the containers pod demo/A has still to place (topology_manager_scope=pod), which would not fit elsewhere'
check "pod A keeps CPU 0" allowed_is A app 0
pod_stop sc
pod_stop an
pod_stop A
pod_stop s1
daemon_stop
it_done
