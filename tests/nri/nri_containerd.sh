#!/bin/bash
# The NRI wire layer (build/nri-probe) against a real containerd, each
# given as the root of an unpacked Debian package (dpkg-deb -x), e.g.
# trixie's 1.7 and sid's 2.x:
#   tests/nri/nri_containerd.sh BUILD_DIR CONTAINERD_ROOT...
# Not a lane of its own (yet): the packages come by hand until `make deps`
# brings them. Everything is private (tests/containerd/lib.sh: config,
# root, state, sockets, runc root, cgroup subtree), with NRI on its own
# socket and plugin dir. TAP lines per containerd: registers (Configure,
# Synchronize), a CreateContainer with the pod's annotations and the
# container's resources, the probe's adjustment in the kernel before the
# container's first instruction, Stop and the removals, UpdateContainers
# applied, a reconnect after a containerd restart, and a pre-installed
# plugin started by containerd itself. Run as root from anywhere.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
shift
. tests/integration/lib.sh
. tests/containerd/lib.sh
[ $# -gt 0 ] || it_skip_all "no containerd given"
[ -x "$IT_OUT/nri-probe" ] || it_skip_all "$IT_OUT/nri-probe not built"
online=$(cat /sys/devices/system/cpu/online)
[ "$online" = 0-1 ] || it_skip_all "expects CPUs 0-1 online, have $online"
ORIG_PATH=$PATH

# The NRI section for the config lib.sh writes (version 2: 2.x migrates it).
eval "lib_$(declare -f cri_write_config)"
cri_write_config() {
	lib_cri_write_config
	cat >>"$IT_WORK/containerd.toml" <<-EOF
	[plugins."io.containerd.nri.v1.nri"]
	  disable = false
	  socket_path = "$IT_WORK/nri.sock"
	  plugin_path = "$IT_WORK/nri-plugins"
	  plugin_config_path = "$IT_WORK/nri-conf"
	EOF
}

# One containerd, in a subshell: lib.sh's EXIT trap cleans each up.
one() (
	local root=$1 v log probe
	export PATH=$root/usr/bin:$ORIG_PATH
	cri_setup || { not_ok "setup"; exit 1; }
	v=$(containerd --version | awk '{print $3}')
	mkdir -p "$IT_WORK/nri-plugins"
	cri_build_image >/dev/null && cri_containerd_start && cri_image_import ||
		{ not_ok "$v: containerd starts"; exit 1; }
	log=$IT_WORK/probe.log
	"$IT_OUT/nri-probe" --socket "$IT_WORK/nri.sock" --cpus 1 --update 0 >"$log" 2>&1 &
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
	cri_containerd_stop
	cri_containerd_start
	check "$v: reconnects after a containerd restart" \
		wait_for 15 grep -q "^synchronize 1 containers" "$log"
	check "$v: UpdateContainers applied by the runtime" \
		wait_for 10 eval '[ "$(allowed p2 c2)" = 0 ]'
	kill "$probe"
	wait "$probe"
	grep -q "protocol_errors=0 update_failures=0" "$log" || not_ok "$v: probe stats: $(tail -1 "$log")"
	# Pre-installed: containerd starts it from plugin_path on restart.
	printf '#!/bin/sh\nexec %s --cpus 1 >>%s 2>&1\n' "$(realpath "$IT_OUT/nri-probe")" \
		"$IT_WORK/pre.log" >"$IT_WORK/nri-plugins/10-nri-probe"
	chmod +x "$IT_WORK/nri-plugins/10-nri-probe"
	cri_containerd_stop
	cri_containerd_start
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
)

rc=0
for root in "$@"; do
	one "$root" || rc=1
done
exit $rc
