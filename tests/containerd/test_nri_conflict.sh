#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# Two NRI plugins set cpus for the same container: cpusetd (index 99) and
# build/nri-probe (index 10, answering every CreateContainer with cpus 1).
# The runtime refuses such a pair of adjustments (nri pkg/adaptation
# result.go: a field owned by one plugin set by another is a conflict) and
# fails CreateContainer. TAP lines: the CRI error names the conflict; no
# process of the container ran; cpusetd gives back what it had admitted
# for it (an integer container's CPU: the shared pool is whole again, and
# a new integer container gets a CPU); once the probe is gone, the same
# pod's container is placed by cpusetd alone.
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri_conflict.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
[ -x "$IT_OUT/nri-probe" ] || it_skip_all "$IT_OUT/nri-probe not built"
cri_setup_or_exit
[ -n "$CRI_NRI_SOCK" ] || it_skip_all "containerd $CRI_CONTAINERD has no NRI"
v=$CRI_VERSION
STATUS=$IT_WORK/cpusetd/status.json
counter() { jq -r ".counters.$1" "$STATUS" 2>/dev/null; }
nri_state() { jq -r '.daemon.mode + " " + .daemon.nri.state' "$STATUS" 2>/dev/null; }

cri_build_image >/dev/null && cri_containerd_start && cri_image_import ||
	{ not_ok "$v: containerd starts"; exit 1; }
printf 'nri_socket = %s\n' "$CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
must "$v: cpusetd starts" daemon_start "$IT_WORK/nri.conf"
must "$v: cpusetd connected over NRI" wait_for 15 eval '[ "$(nri_state)" = "nri+bpf connected" ]'
must "$v: a shared pod runs on the whole pool" eval 'run_pod s1 burstable && run_ctr s1 app >/dev/null && wait_for 10 allowed_is s1 app 0-1'
"$IT_OUT/nri-probe" --socket "$CRI_NRI_SOCK" --name probe --index 10 --cpus 1 \
	>"$IT_WORK/probe.log" 2>&1 &
PROBE=$!
must "$v: the second plugin registered" wait_for 10 grep -q "^synchronize " "$IT_WORK/probe.log"

must "$v: an integer pod" run_pod g1 guaranteed
pending() { jq -r '.daemon.nri.pending' "$STATUS" 2>/dev/null; }

# The pair of answers: the probe's cpus 1 first (index 10), then ours.
run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed \
	--cmd "sh -c 'echo ran; exec sleep 1000'" >"$IT_WORK/conflict.out"
rc=$?
check "$v: CreateContainer failed" test "$rc" != 0
it_log "CRI error: $(jq -r .error <<<"$CTR_OUT" | head -c 400)"
check "$v: the error names both plugins" \
	eval 'jq -r .error <<<"$CTR_OUT" | grep -q "plugins \"99-cpusetd\" and \"10-probe\" both tried to set"'
check "$v: the probe was asked first" grep -q "^create .* demo/g1/app " "$IT_WORK/probe.log"
check "$v: no process of it ran (no log line)" eval '! grep -qs ran "$IT_WORK"/logs/demo_g1_*/app/0.log'
check "$v: cpusetd holds nothing for it: the shared pod has the whole pool" wait_for 10 allowed_is s1 app 0-1
check "$v: no NRI record left pending" wait_for 10 eval '[ "$(pending)" = 0 ]'
it_log "pending $(pending) counters $(jq -c '.counters | with_entries(select(.key|test("nri")))' "$STATUS")"
kill "$PROBE"; wait "$PROBE" 2>/dev/null
# kubelet's retry: the same pod's container, created again.
must "$v: without the probe, the retry is created and started" \
	run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed \
	--cmd "sh -c 'grep Cpus_allowed_list /proc/self/status; exec sleep 1000'"
cpu=$(allowed g1 app)
check "$v: placed at CreateContainer on a CPU of its own ($cpu)" eval '[ "$cpu" = 0 ] || [ "$cpu" = 1 ]'
check "$v: the shared pod keeps only the other CPU" wait_for 10 allowed_is s1 app "$((1 - cpu))"
check "$v: nothing pending, nothing created without NRI" \
	eval '[ "$(pending)" = 0 ] && [ "$(counter created_without_nri)" = 0 ]'
exit "$IT_FAILED"
