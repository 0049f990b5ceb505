#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri-versions: 1.7 2.x
# cpusetd as a pre-installed NRI plugin: containerd itself starts it from
# its (private) plugin dir as 99-cpusetd, with the connection on fd 3
# (NRI_PLUGIN_SOCKET) and an environment of nothing but NRI_PLUGIN_*.
# TAP lines: registered and connected; containerd 1.7 sends a pre-installed
# plugin no Synchronize (2.x does), and placement works either way; an
# integer container placed at CreateContainer (its first instruction on its
# CPU); a containerd restart stops the old daemon (its connection closed)
# and the new one, started by containerd, keeps the integer container
# where it was; containerd stopped: no daemon left behind.
#   [CRI_CONTAINERD=1.7|2.x] tests/containerd/test_nri_preinstalled.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
cri_setup_or_exit
[ -n "$CRI_NRI_SOCK" ] || it_skip_all "containerd $CRI_CONTAINERD has no NRI"
v=$CRI_VERSION
LOG=$IT_WORK/daemon.log
STATUS=$IT_WORK/cpusetd/status.json

# The daemons containerd started: found by their private state dir.
daemon_pids() { pgrep -f -- "--state-dir $IT_WORK/cpusetd( |\$)"; }
stop_daemons() {
	local p
	for p in $(daemon_pids); do kill -TERM "$p" 2>/dev/null; done
	wait_for 10 eval '[ -z "$(daemon_pids)" ]'
}
trap 'stop_daemons; cri_cleanup' EXIT

# The entry containerd runs: absolute paths only (its environment is
# NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET, nothing else).
cat >"$CRI_NRI_PLUGINS/99-cpusetd" <<EOF
#!/bin/sh
exec $(realpath "$IT_OUT/cpusetd") --config $IT_WORK/empty.conf --kubepods-root $ROOT \
	--bundle-path $CRI_BUNDLES/{id}/config.json --state-dir $IT_WORK/cpusetd --pin-dir $IT_PIN \
	--kubelet-pods-dir $IT_WORK/pods --kubelet-state-file "" --log-level debug --textfile "" \
	>>$LOG 2>&1
EOF
chmod +x "$CRI_NRI_PLUGINS/99-cpusetd"

nri_state() { jq -r '.daemon.mode + " " + .daemon.nri.state' "$STATUS" 2>/dev/null; }
counter() { jq -r ".counters.$1" "$STATUS" 2>/dev/null; }

cri_build_image >/dev/null && cri_containerd_start && cri_image_import ||
	{ not_ok "$v: containerd starts"; exit 1; }
check "$v: containerd started cpusetd as 99-cpusetd on fd 3" \
	wait_for 15 grep -q "NRI: pre-installed plugin on fd 3, as 99-cpusetd" "$LOG"
check "$v: registered: mode nri+bpf, connected" wait_for 15 eval '[ "$(nri_state)" = "nri+bpf connected" ]'
first=$(daemon_pids)
check "$v: one daemon" test "$(wc -w <<<"$first")" = 1

must "$v: an integer (Guaranteed) pod through CRI" run_pod g1 guaranteed
must "$v: its container created and started" \
	run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed \
	--cmd "sh -c 'grep Cpus_allowed_list /proc/self/status; exec sleep 1000'"
check "$v: placed at CreateContainer" wait_for 10 eval '[ "$(counter nri_placed_at_create)" -ge 1 ]'
check "$v: its first instruction already ran on one CPU of its own" \
	wait_for 10 eval 'grep -qE "Cpus_allowed_list:.[01]\$" "$IT_WORK"/logs/demo_g1_*/app/0.log'
cpu=$(allowed g1 app)
check "$v: it still runs there ($cpu)" eval '[ "$cpu" = 0 ] || [ "$cpu" = 1 ]'
check "$v: nothing created without NRI" test "$(counter created_without_nri)" = 0
# containerd 1.7 never synchronizes a pre-installed plugin (nri v0.6.1
# pkg/adaptation: only plugins that connect later are synchronized).
case $CRI_CONTAINERD in
1.7) check "$v: no Synchronize (1.7 sends none to a pre-installed plugin)" \
	test "$(counter nri_synchronizes)" = 0 ;;
*) check "$v: synchronized" test "$(counter nri_synchronizes)" -ge 1 ;;
esac

# A containerd restart: the old daemon's connection is closed and it stops;
# containerd starts a new one, which must find the integer container where
# it is (a restart never moves an exclusive container).
cri_containerd_restart
check "$v: the first daemon stopped with its connection" \
	wait_for 15 eval '! kill -0 "$first" 2>/dev/null'
check "$v: it said why" grep -q "closed its connection; stopping" "$LOG"
check "$v: containerd started a second one, connected" \
	wait_for 20 eval '[ -n "$(daemon_pids)" ] && [ "$(daemon_pids)" != "$first" ] && [ "$(nri_state)" = "nri+bpf connected" ]'
check "$v: the integer container did not move" eval '[ "$(allowed g1 app)" = "$cpu" ]'
check "$v: no error and no instance-lock refusal in the log" no_match "$LOG" -E 'instance lock|cannot run|error:'
second=$(daemon_pids)
cri_containerd_stop
check "$v: containerd stopped: its daemon stopped too" wait_for 15 eval '! kill -0 "$second" 2>/dev/null'
exit "$IT_FAILED"
