#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# In-place resize through the CRI and NRI: kubelet's
# UpdateContainerResources reaches cpusetd as NRI's UpdateContainer, and
# the runtime writes our answer, not what kubelet sent (kubernetes
# #120230: the runtime's own write no longer fights the placement). After
# every update five views of every container agree: the cgroup's
# cpuset.cpus, its init's Cpus_allowed_list, and the runtime's three
# records of it (ContainerStatus.resources.linux.cpuset_cpus, the spec in
# ContainerStatus' verbose info, `ctr containers info`'s spec).
#   1. kubelet's CPU manager rewrites a shared container's cpuset
#      (cpuset_cpus = 1 alone, then with its CPU limits): it stays on the
#      shared pool, 0-1;
#   2. a Burstable container's limit resized (0.5 -> 1.5 CPU): the quota
#      is kubelet's (cgroup and record), the cpuset still ours;
#   3. a Guaranteed integer container (1 CPU, exclusive CPU 0) resized to
#      0.5 CPU: back on the shared pool, which grows (the other container
#      back on 0-1); resized to 1 CPU again: exclusive again on 0, the
#      pool shrinks (as tests/integration/test_inplace_resize.sh in BPF
#      mode); resized to 2 CPUs: refused (the pool would be empty),
#      nothing moves, the records keep 0;
#   4. no protocol error, no failed update, nothing restored after a
#      foreign write (the runtime never wrote anything but our answer).
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri_resize.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
cri_needs_nri
cri_setup_or_exit

st() { jq -r "$1" "$IT_WORK/cpusetd/status.json" 2>/dev/null; }
counter() { st ".counters.$1"; }
connected() { [ "$(st .daemon.nri.state)" = connected ] && [ "$(st .daemon.mode)" = nri+bpf ]; }

# views POD NAME: "cgroup C, init I, status S, spec P, ctr R", the five
# views of the container's CPUs.
views() {
	local id=${CTR_ID[$1/$2]} s
	s=$(cri status "$id")
	printf 'cgroup %s, init %s, status %s, spec %s, ctr %s' \
		"$(cat "$(ctr_cgroup "$1" "$2")/cpuset.cpus" 2>/dev/null)" "$(allowed "$1" "$2")" \
		"$(jq -r '.resources.cpus // "none"' <<<"$s")" "$(jq -r .cpus <<<"$s")" \
		"$(ctr -a "$CRI_SOCK" -n k8s.io containers info "$id" 2>/dev/null |
			jq -r '.Spec.linux.resources.cpu.cpus // "none"')"
}
# on POD NAME CPUS [new]: all five say CPUS. new: a container no update
# reached yet, whose ContainerStatus.resources may still hold kubelet's
# request (no cpuset): containerd (1.7.24, 2.1.9 container_create.go)
# copies the resources into its status from the spec before NRI's
# adjustment is applied to the container's record; the first
# UpdateContainerResources or NRI update copies them again.
on() {
	local v
	v=$(views "$1" "$2")
	[ "$v" = "cgroup $3, init $3, status $3, spec $3, ctr $3" ] ||
		{ [ "${4:-}" = new ] && [ "$v" = "cgroup $3, init $3, status , spec $3, ctr $3" ]; }
}
# placed NAME POD CTR CPUS [new]: one TAP line, waited for up to 10 s (the
# other containers hear their update in-band or from the outbox).
placed() {
	local t0=${EPOCHREALTIME/./} rc
	wait_for 10 on "$2" "$3" "$4" "${5:-}"
	rc=$?
	check "$1: $2/$3 on $4 ($(views "$2" "$3"); $(((${EPOCHREALTIME/./} - t0) / 1000)) ms)" \
		test "$rc" = 0
}
# quota POD NAME: the cgroup's CFS quota (v1 cpu.cfs_quota_us, v2 cpu.max).
quota() {
	local p
	p=$(jq -r .linux.cgroupsPath "$CRI_BUNDLES/${CTR_ID[$1/$2]}/config.json")
	if [ -n "$IT_V2" ]; then
		read -r q _ <"/sys/fs/cgroup$p/cpu.max" && echo "$q"
	else
		cat "/sys/fs/cgroup/cpu$p/cpu.cfs_quota_us"
	fi
}
kind_is() {
	jq_quiet --arg id "${CTR_ID[$1/$2]}" --arg k "$3" \
		'.containers[] | select(.container_id == $id) | .kind == $k' "$IT_WORK/cpusetd/status.json"
}
resize() { cri update-resources "${CTR_ID[$1/$2]}" "${@:3}"; }

must "busybox OCI image built" cri_build_image
must "containerd $CRI_CONTAINERD starts with NRI on $CRI_NRI_SOCK" cri_containerd_start
must "NRI: containerd serves its private socket" cri_has_nri
must "image imported" cri_image_import
# resize_check_ms = 0: no poll of the cgroups' CPU limits, so every
# resize here is decided at NRI's UpdateContainer alone (with the poll, a
# missed one would still be caught within a second, from the cgroup).
printf '[cpusetd]\nnri_socket = %s\nresize_check_ms = 0\n' "$CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
must "cpusetd starts (nri_socket = \$CRI_NRI_SOCK, resize_check_ms = 0)" daemon_start "$IT_WORK/nri.conf"
must "connected: status.json says mode nri+bpf, state connected" wait_for 15 connected
v=$CRI_VERSION
phase connect

must "shared: pod s1 (Burstable, 0.25/0.5 CPU)" run_pod s1 burstable
must "shared: CreateContainer + StartContainer" run_ctr s1 app --cpu-request 250 --cpu-limit 500
placed "$v: shared: placed" s1 app 0-1 new
restores=$(counter foreign_restores)

# --- 1. kubelet's CPU manager rewrites the cpuset: ours stays ---
must "rewrite: UpdateContainerResources cpuset_cpus=1" resize s1 app --cpuset-cpus 1
placed "rewrite: cpuset_cpus=1 alone: the shared pool, not kubelet's" s1 app 0-1
must "rewrite: UpdateContainerResources with its limits and cpuset_cpus=1" \
	resize s1 app --cpu-request 250 --cpu-limit 500 --cpuset-cpus 1
placed "rewrite: with its limits: the shared pool" s1 app 0-1
phase rewrite

# --- 2. a Burstable container's limit: kubelet's quota, our cpuset ---
must "burstable: resized to 1.5 CPU" resize s1 app --cpu-request 250 --cpu-limit 1500
placed "burstable: resized: still the shared pool" s1 app 0-1
check "burstable: kubelet's quota in the cgroup ($(quota s1 app)) and the record ($(cri status "${CTR_ID[s1/app]}" | jq -c '[.quota, .resources.quota]'))" \
	eval '[ "$(quota s1 app)" = 150000 ] && [ "$(cri status "${CTR_ID[s1/app]}" | jq -c "[.quota, .resources.quota]")" = "[150000,150000]" ]'
phase burstable

# --- 3. a Guaranteed integer container: 1 -> 0.5 -> 1 -> 2 CPUs ---
mem=67108864
must "integer: pod g1 (Guaranteed, 1 CPU)" run_pod g1 guaranteed
must "integer: CreateContainer + StartContainer" \
	run_ctr g1 app --cpu-limit 1000 --memory-limit $mem --guaranteed
placed "integer: exclusive" g1 app 0 new
placed "integer: the pool shrinks" s1 app 1
resizes=$(counter inplace_resizes)
must "integer: resized to 0.5 CPU" resize g1 app --cpu-limit 500 --memory-limit $mem
placed "0.5 CPU: back on the shared pool" g1 app 0-1
placed "0.5 CPU: the pool grows" s1 app 0-1
check "0.5 CPU: status.json says shared" wait_for 5 kind_is g1 app shared
must "integer: resized to 1 CPU again" resize g1 app --cpu-limit 1000 --memory-limit $mem
placed "1 CPU: exclusive again" g1 app 0
placed "1 CPU: the pool shrinks" s1 app 1
check "1 CPU: status.json says integer" wait_for 5 kind_is g1 app integer
check "two in-place resizes counted ($resizes -> $(counter inplace_resizes))" \
	test "$(counter inplace_resizes)" = $((resizes + 2))
must "integer: resized to 2 CPUs" resize g1 app --cpu-limit 2000 --memory-limit $mem
check "2 CPUs: refused (the pool would be empty), logged once" wait_for 5 eval \
	'[ "$(grep -c "in-place resize to 2.00 CPUs refused" "$IT_WORK/daemon.log")" = 1 ]'
placed "2 CPUs: it keeps its CPU" g1 app 0
placed "2 CPUs: the pool keeps its CPU" s1 app 1
check "2 CPUs: counted refused ($(counter inplace_resizes_refused)), status.json still integer" \
	eval '[ "$(counter inplace_resizes_refused)" -ge 1 ] && kind_is g1 app integer'
phase integer

# --- 4. the daemon's own account ---
check "no protocol error, no failed update ($(st .daemon.nri.protocol_errors), $(st .daemon.nri.update_failures))" \
	test "$(st .daemon.nri.protocol_errors)" = 0 -a "$(st .daemon.nri.update_failures)" = 0
check "no foreign write restored: the runtime wrote only our answers ($restores -> $(counter foreign_restores))" \
	test "$(counter foreign_restores)" = "$restores"
check "still connected, created_without_nri 0, nri_not_applied 0" \
	eval 'connected && [ "$(counter created_without_nri)" = 0 ] && [ "$(counter nri_not_applied)" = 0 ]'

cri_finish "$v:"
