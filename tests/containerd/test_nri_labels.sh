#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# Koordinator's class as a pod LABEL (koordinator.sh/qosClass, Koordinator's
# LabelPodQoS) through NRI: containerd hands the sandbox's labels to the
# plugin (PodSandbox.labels), cpusetd reads the class there, the label over
# an annotation of that name. On CPUs 0-1, driven through the CRI:
#   - an LSR pod by label (Guaranteed, 1 CPU): exclusive CPU 0, class LSR;
#   - a BE pod by label (a Burstable pod, no annotation): the BE pool 0-1
#     (LSR CPUs are shareable with BE), not the shared pool 1;
#   - a control pod without label: the shared pool, 1;
#   - label LS and annotation BE: the label wins (shared pool 1), status.json
#     records both (qos_class_from label, the annotation's BE kept), and
#     cpusetctl explain says so.
# Each placement is checked in the kernel (the init's Cpus_allowed_list),
# the cgroup and the runtime's own record. SYSTEM pods by label are the
# unit lane's (test_koordlet_numa): system_qos_cpus needs more than 2 CPUs.
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri_labels.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
cri_needs_nri
cri_setup_or_exit
v=$CRI_VERSION
Q=koordinator.sh/qosClass

st() { jq -r "$1" "$IT_WORK/cpusetd/status.json" 2>/dev/null; }
connected() { [ "$(st .daemon.nri.state)" = connected ]; }
record() { cri status "${CTR_ID[$1/$2]}" | jq -r ".$3"; }
cg_file() { cat "$(ctr_cgroup "$1" "$2")/cpuset.$3" 2>/dev/null; }
placed() {
	allowed_is "$1" "$2" "$3" && [ "$(cg_file "$1" "$2" cpus)" = "$3" ] &&
		[ "$(record "$1" "$2" cpus)" = "$3" ]
}
where() { echo "init $(allowed "$1" "$2"), cgroup $(cg_file "$1" "$2" cpus), runtime $(record "$1" "$2" cpus)"; }
# waits NAME TIMEOUT_S CMD...: one TAP line for CMD coming true within
# TIMEOUT_S; NAME is expanded after the wait (single-quote it).
waits() {
	local name=$1 t=$2 rc
	shift 2
	wait_for "$t" "$@"
	rc=$?
	eval "name=\"$name\""
	check "$name" test "$rc" = 0
}
# decision POD JQ: the container's status.json entry matches JQ.
decision() {
	jq_quiet --arg id "${CTR_ID[$1/app]}" ".containers[] | select(.container_id == \$id) | $2" \
		"$IT_WORK/cpusetd/status.json"
}

must "busybox OCI image built" cri_build_image
must "containerd $CRI_CONTAINERD starts with NRI on $CRI_NRI_SOCK" cri_containerd_start
must "image imported" cri_image_import
printf '[cpusetd]\nnri_socket = %s\n' "$CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
must "cpusetd starts (nri_socket = \$CRI_NRI_SOCK)" daemon_start "$IT_WORK/nri.conf"
check "$v: connected" wait_for 15 connected
phase connect

must "LSR by label: pod g1 (Guaranteed, label $Q=LSR)" run_pod g1 guaranteed "label:$Q=LSR"
must "LSR by label: container" run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed
waits '$v: LSR by label: exclusive CPU 0 ($(where g1 app))' 10 placed g1 app 0
check "$v: LSR by label: status.json class LSR, from the label" wait_for 10 decision g1 \
	'.qos_class == "LSR" and .decision.qos_class_from == "label"'

must "BE by label: pod b1 (Burstable, label $Q=BE, no annotation)" run_pod b1 burstable "label:$Q=BE"
must "BE by label: container" run_ctr b1 app --cpu-request 250 --cpu-limit 500
must "control: pod s1 (Burstable, no label)" run_pod s1 burstable
must "control: container" run_ctr s1 app --cpu-request 250 --cpu-limit 500
waits '$v: BE by label: the BE pool 0-1 ($(where b1 app))' 10 placed b1 app 0-1
check "$v: BE by label: status.json class BE, from the label" \
	decision b1 '.qos_class == "BE" and .decision.qos_class_from == "label"'
waits '$v: control: the shared pool 1 ($(where s1 app))' 10 placed s1 app 1

must "conflict: pod c1 (label $Q=LS, annotation $Q=BE)" run_pod c1 burstable "label:$Q=LS" "$Q=BE"
must "conflict: container" run_ctr c1 app --cpu-request 250 --cpu-limit 500
waits '$v: conflict: the label wins, the shared pool 1 ($(where c1 app))' 10 placed c1 app 1
check "$v: conflict: status.json records both (class LS from the label, the annotation's BE)" \
	decision c1 '.qos_class == "LS" and .decision.qos_class_from == "label" and
		.decision.labels["koordinator.sh/qosClass"] == "LS" and
		.decision.annotations["koordinator.sh/qosClass"] == "BE"'
explain_says() {
	"$IT_OUT/cpusetctl" --state-dir "$IT_WORK/cpusetd" explain "$CRI_NS/c1/app" |
		grep -q "pod label koordinator.sh/qosClass, over the annotation's BE"
}
check "$v: conflict: cpusetctl explain names the label and the annotation it overrode" explain_says
check "$v: no cgroup write errors" test "$(st .counters.cgroup_write_errors)" = 0
phase labels
cri_finish "$v:"
