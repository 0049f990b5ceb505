#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# The NRI wire layer alone (build/nri-probe, a logging plugin: no policy)
# against a real containerd with NRI on its private socket and plugin dir
# (tests/containerd/lib.sh; CRI_CONTAINERD=1.7|2.x). TAP lines: registers
# (Configure, Synchronize), a CreateContainer with the pod's annotations and
# the container's resources, the probe's adjustment in the kernel before the
# container's first instruction, Stop and the removals, UpdateContainers
# applied, a reconnect after a containerd restart, and a pre-installed
# plugin started by containerd itself on fd 3 (ending with its connection).
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri_wire.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh
[ -x "$IT_OUT/nri-probe" ] || it_skip_all "$IT_OUT/nri-probe not built"
cri_needs_cpus_0_1
cri_setup_or_exit
[ -n "$CRI_NRI_SOCK" ] || it_skip_all "containerd $CRI_CONTAINERD has no NRI"
v=$CRI_VERSION
cri_build_image >/dev/null && cri_containerd_start && cri_image_import ||
	{ not_ok "$v: containerd starts"; exit 1; }
log=$IT_WORK/probe.log
"$IT_OUT/nri-probe" --socket "$CRI_NRI_SOCK" --cpus 1 --update 0 >"$log" 2>&1 &
probe=$!
check "$v: registers, is configured and synchronized" \
	wait_for 10 grep -q "^synchronize 0 containers" "$log"
run_pod p1 burstable weka.io/cores-ids=1 koordinator.sh/qosClass=LS &&
	run_ctr p1 c1 --cpu-limit 500 --cmd "sh -c 'cat /proc/self/status; exec sleep 1000'" >/dev/null
check "$v: CreateContainer with the pod's annotations and the resources" \
	grep -q "^create .* demo/p1/c1 .*quota=50000 period=100000 .*cores-ids=1 " "$log"
check "$v: the adjustment holds from the container's first instruction" \
	wait_for 10 eval 'grep -q "Cpus_allowed_list:.1\$" "$IT_WORK"/logs/demo_p1_*/c1/0.log'
remove_pod p1 burstable
check "$v: StopContainer, RemoveContainer, RemovePodSandbox" \
	wait_for 10 eval 'grep -q "^stop .* demo/p1/c1 .*cpus=\"1\"" "$log" &&
		grep -q "^remove container=[0-9a-f]\{12\} sandbox=$" "$log" &&
		grep -q "^remove container= sandbox=[0-9a-f]\{12\}$" "$log"'
run_pod p2 burstable && run_ctr p2 c2 >/dev/null
# containerd restarts: the probe reconnects, is synchronized with c2,
# and sends UpdateContainers (--update 0) for it.
cri_containerd_restart
check "$v: reconnects after a containerd restart" \
	wait_for 15 grep -q "^synchronize 1 containers" "$log"
check "$v: UpdateContainers applied by the runtime" \
	wait_for 10 eval '[ "$(allowed p2 c2)" = 0 ]'
kill "$probe"
wait "$probe"
check "$v: no protocol error, no failed update ($(grep "^stats" "$log" | tail -n1))" grep -q "protocol_errors=0 update_failures=0" "$log"
# Messages over 4 KiB both ways: 60 containers (each update in a reply
# or a request is ~85 bytes). containerd's reader takes a mux frame only
# whole into a 4 KiB buffer: a larger frame failed Synchronize with
# "cannot allocate memory" and dropped the plugin, over and over.
cri run-container p2 many --image "$CRI_IMAGE" --attempts 60 >/dev/null
"$IT_OUT/nri-probe" --socket "$CRI_NRI_SOCK" --sync-update 0 --update 1 >"$IT_WORK/big.log" 2>&1 &
probe=$!
check "$v: 60 more: Synchronize answered with 61 updates, then UpdateContainers with 62" \
	wait_for 15 grep -q "^update_containers 62 to 1: " "$IT_WORK/big.log"
check "$v: both applied (the last one runs on CPU 1)" wait_for 10 eval '[ "$(allowed p2 c2)" = 1 ]'
kill "$probe"
wait "$probe"
check "$v: one connection, no protocol error ($(grep "^stats" "$IT_WORK/big.log" | tail -n1))" \
	grep -q "^stats connects=1 disconnects=[01] .*protocol_errors=0" "$IT_WORK/big.log"
# Pre-installed: containerd starts it from plugin_path on restart.
printf '#!/bin/sh\nexec %s --cpus 1 >>%s 2>&1\n' "$(realpath "$IT_OUT/nri-probe")" \
	"$IT_WORK/pre.log" >"$CRI_NRI_PLUGINS/10-nri-probe"
chmod +x "$CRI_NRI_PLUGINS/10-nri-probe"
cri_containerd_restart
check "$v: pre-installed: started by containerd, registered on its fd" \
	wait_for 10 eval 'grep -q "^pre-installed as 10-nri-probe on fd 3" "$IT_WORK/pre.log" &&
		grep -q "^connected up containerd" "$IT_WORK/pre.log"'
run_ctr p2 c3 >/dev/null
check "$v: pre-installed: CreateContainer answered" \
	wait_for 10 grep -q "^create .* demo/p2/c3 " "$IT_WORK/pre.log"
cri_containerd_stop
check "$v: pre-installed: the probe ends with its connection" \
	wait_for 10 grep -q "^stats connects=1 " "$IT_WORK/pre.log"
exit "$IT_FAILED"

