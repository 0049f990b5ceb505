#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The kubelet systemd cgroup driver's naming (kubepods.slice/
# kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/
# cri-containerd-<id>.scope), made by hand here since there is no systemd.
# Also: cpusetd starts before kubelet, so the kubepods root may appear
# only after the daemon is up.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_setup sysd

[ "$IT_ONLINE" = 0-1 ] || it_skip_all "expects CPUs 0-1 online, have $IT_ONLINE"
ROOT=$IT_CG/kubepods.slice
it_mkroot "$IT_CG"
check "daemon starts before the kubepods root exists" daemon_start "$ROOT"
it_mkroot "$ROOT"
check "daemon notices the root appear" wait_for 5 grep -q "kubepods root $ROOT appeared" "$IT_WORK/daemon.log"

pod_start s1 burstable 500
pod_start b1 besteffort
check "systemd names: shared pod placed" wait_for 5 allowed_is s1 app 0-1
check "cgroup is systemd-named" test -d "$IT_CPUSET$(cg_path burstable "$(uid s1)" "$(cid s1/app)")"
pod_start g1 guaranteed 1000
check "systemd names: integer pod gets its CPU" wait_for 5 allowed_is g1 app 0
check "systemd names: burstable leaves it" wait_for 5 allowed_is s1 app 1
check "systemd names: besteffort leaves it" wait_for 5 allowed_is b1 app 1
check "status shows Guaranteed QoS from the slice name" \
	bash -c "jq -e '.containers[] | select(.pod==\"g1\" and .container==\"app\" and .qos==\"Guaranteed\")' $IT_WORK/state/status.json >/dev/null"

daemon_kill9
pod_start s2 burstable 500
daemon_start "$ROOT"
check "systemd names: restart keeps the integer pod" wait_for 5 allowed_is g1 app 0
check "systemd names: restart corrects a pod started while down" wait_for 5 allowed_is s2 app 1
pod_stop g1
check "systemd names: stop frees the CPU" wait_for 5 allowed_is s2 app 0-1
pod_start a1 burstable 0 1
check "systemd names: annotated pod" wait_for 5 allowed_is a1 app 1
check "systemd names: pool shrinks for it" wait_for 5 allowed_is s1 app 0
pod_stop a1
check "systemd names: pool grows back" wait_for 5 allowed_is s1 app 0-1

it_done
