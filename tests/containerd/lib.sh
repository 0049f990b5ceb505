# SPDX-License-Identifier: Apache-2.0
# Helpers of the containerd lane: a private containerd (config, root,
# state, gRPC socket, runc root, NRI socket) with its CRI plugin, a local
# busybox image imported without a registry, kubelet's cgroupfs pod cgroups
# under a private subtree, the daemon, and the CRI client (cri.py). Source
# it after tests/integration/lib.sh (wait_for, check, it_skip_all,
# it_mkroot, ...); call cri_setup first. cri_cleanup (the EXIT trap)
# removes everything this lane made and touches nothing else.
#
# CRI_CONTAINERD picks the containerd under test:
#   1.6  the system's (Debian bookworm), no NRI: cpusetd's BPF-only mode;
#   1.7  Debian trixie's, BUILD_DIR/containerd-1.7/usr/bin (make deps),
#        NRI enabled (it is off by default in 1.7), config version 2;
#   2.x  Debian sid's, BUILD_DIR/containerd-2.x/usr/bin (make deps), NRI
#        on (its default), config version 3.
# With NRI, CRI_NRI_SOCK is the runtime's private NRI socket (cpusetd's
# `nri_socket`), CRI_NRI_PLUGINS its pre-installed plugin directory;
# cri_has_nri says whether the running containerd serves NRI.

CRI_PY=/usr/bin/python3	# Debian's python3-grpcio / python3-grpc-tools
CRI_IMAGE=localhost/cpusetd-cri-busybox:1
CRI_NS=demo		# the pods' Kubernetes namespace
CRI_CONTAINERD=${CRI_CONTAINERD:-1.6}
# NRI's timeouts (containerd's defaults, nri v0.6.1 and v0.8.0
# pkg/adaptation/plugin.go: 5 s, 2 s); a test may shorten them before
# cri_containerd_start, e.g. to see the runtime go on without a stopped
# plugin sooner.
CRI_NRI_REGISTRATION_TIMEOUT=${CRI_NRI_REGISTRATION_TIMEOUT:-5s}
CRI_NRI_REQUEST_TIMEOUT=${CRI_NRI_REQUEST_TIMEOUT:-2s}

# cri_select: CRI_BIN, the directory of containerd, ctr and
# containerd-shim-runc-v2 for CRI_CONTAINERD, first on PATH (containerd
# finds its shim on PATH: the system's 1.6 shim must not serve 1.7 or
# 2.x). A version that is not there skips (fails under CI=true); one that
# is not what its name says fails.
cri_select() {
	local v
	case $CRI_CONTAINERD in
	1.6)
		command -v containerd >/dev/null || it_skip_all "containerd missing (make deps)"
		CRI_BIN=$(dirname "$(command -v containerd)")
		;;
	1.7 | 2.x)
		CRI_BIN=$(realpath -m "$IT_OUT/containerd-$CRI_CONTAINERD/usr/bin")
		[ -x "$CRI_BIN/containerd" ] ||
			it_skip_all "containerd $CRI_CONTAINERD missing: $CRI_BIN (make deps)"
		;;
	*)
		not_ok "CRI_CONTAINERD=$CRI_CONTAINERD: 1.6, 1.7 or 2.x"
		exit 1
		;;
	esac
	PATH=$CRI_BIN:$PATH
	v=$(containerd --version | awk '{print $3}')
	case $v in
	"${CRI_CONTAINERD%.x}".*) ;;
	*)
		not_ok "CRI_CONTAINERD=$CRI_CONTAINERD but $CRI_BIN/containerd is $v"
		exit 1
		;;
	esac
	CRI_VERSION=$v
}

cri_require() {
	[ "$(id -u)" = 0 ] || it_skip_all "needs root"
	[ -d "$IT_CPUSET" ] || [ -e /sys/fs/cgroup/cgroup.controllers ] || it_skip_all "no cpuset hierarchy"
	cri_select
	command -v ctr >/dev/null || it_skip_all "ctr missing (make deps)"
	command -v containerd-shim-runc-v2 >/dev/null || it_skip_all "containerd-shim-runc-v2 missing (make deps)"
	command -v runc >/dev/null || it_skip_all "runc missing (make deps)"
	[ -x /bin/busybox ] || it_skip_all "busybox-static missing (make deps)"
	"$CRI_PY" -c 'import grpc, grpc_tools.protoc' 2>/dev/null ||
		it_skip_all "python3-grpcio / python3-grpc-tools missing (make deps)"
	[ -x "$IT_OUT/cpusetd" ] || it_skip_all "$IT_OUT/cpusetd not built"
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
}

# cri_setup: work dir, cgroup subtree, kubepods root, the trap.
cri_setup() {
	cri_require
	IT_WORK=$(mktemp -d /tmp/cpusetd-cri.XXXXXX)
	T0=$(date +%s)
	PHASES='' PHASE_T=$T0
	IT_CG=/cpusetd-cri-$$
	IT_PIN=/sys/fs/bpf/cpusetd-cri-$$
	ROOT=$IT_CG/kubepods
	CRI_SOCK=$IT_WORK/containerd.sock
	CRI_STATE_DIR=$IT_WORK/state	# containerd's state: the bundles
	CRI_BUNDLES=$CRI_STATE_DIR/io.containerd.runtime.v2.task/k8s.io
	CRI_PROM=$IT_WORK/prom/cpusetd.prom
	CRI_IDS=$IT_WORK/ids	# "POD NAME ID" of every container and sandbox made
	CRI_NRI_SOCK='' CRI_NRI_PLUGINS=''
	if [ "$CRI_CONTAINERD" != 1.6 ]; then
		CRI_NRI_SOCK=$IT_WORK/nri/nri.sock
		CRI_NRI_PLUGINS=$IT_WORK/nri/plugins
		mkdir -p "$CRI_NRI_PLUGINS" "$IT_WORK/nri/conf.d"
	fi
	CRI_NRI_EXISTED=
	[ -e /var/run/nri ] && CRI_NRI_EXISTED=1	# NRI's default socket dir: never ours
	mkdir -p "$IT_WORK"/{pods,cpusetd,client,logs,cni/bin,cni/net.d}
	: >"$IT_WORK/empty.conf"
	trap cri_cleanup EXIT
	trap 'exit 143' TERM	# run-all.sh's timeout: still clean up
	trap 'exit 130' INT
	it_mkroot "$ROOT/burstable"
	it_mkroot "$ROOT/besteffort"
	# For the client: generated stubs, its pod records, kubelet's pods dir.
	export CRI_SOCKET=$CRI_SOCK CRI_GEN=$IT_WORK/gen CRI_STATE=$IT_WORK/client \
		CRI_PODS_DIR=$IT_WORK/pods CRI_LOGS=$IT_WORK/logs
	"$CRI_PY" tests/containerd/cri.py gen "$CRI_GEN" >"$IT_WORK/protoc.log" 2>&1 || {
		cat "$IT_WORK/protoc.log"
		return 1
	}
}

cri() { "$CRI_PY" tests/containerd/cri.py "$@"; }

# phase NAME: notes how long the part that ends here took (into PHASES;
# cri_setup starts the clock, T0).
phase() {
	local t
	t=$(date +%s)
	PHASES+="$1 $((t - PHASE_T)) s, "
	PHASE_T=$t
}

# jq_quiet ARGS...: jq -e, for its exit status only.
jq_quiet() { jq -e "$@" >/dev/null; }

# must NAME CMD...: a check the rest of the file cannot do without. On
# failure: the tails of containerd's and cpusetd's logs and of the files
# CRI_MUST_LOGS names (a glob), then exit.
must() {
	local f
	check "$@" && return 0
	# shellcheck disable=SC2086
	for f in "$IT_WORK/containerd.log" "$IT_WORK/daemon.log" ${CRI_MUST_LOGS:-}; do
		[ -e "$f" ] || continue
		it_log "$f (tail):"
		tail -n 20 "$f" | sed 's/^/#   /'
	done
	exit 1
}

# --- the image: busybox as an OCI image layout tarball, no registry ---

# blob FILE: moves FILE into the layout's blobs as sha256:<digest>; prints
# "<digest> <size>".
blob() {
	local d s
	d=$(sha256sum "$1" | cut -d' ' -f1)
	s=$(stat -c %s "$1")
	mv "$1" "$IT_WORK/image/oci/blobs/sha256/$d"
	echo "$d $s"
}

# cri_build_image: rootfs (busybox, sh sleep cat true), one uncompressed
# layer, config, manifest, index.json, oci-layout; one tarball.
cri_build_image() {
	local i=$IT_WORK/image arch ld ls cd cs md ms c
	arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
	mkdir -p "$i"/rootfs/{bin,dev,proc,sys,etc,tmp} "$i/oci/blobs/sha256"
	cp /bin/busybox "$i/rootfs/bin/"
	for c in sh sleep cat true; do ln -s busybox "$i/rootfs/bin/$c"; done
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
		-C "$i/rootfs" -cf "$i/layer.tar" . || return 1
	read -r ld ls < <(blob "$i/layer.tar")
	# The pause (sandbox) container runs the image's Cmd: it must live.
	cat >"$i/config.json" <<-EOF
	{"architecture": "$arch", "os": "linux",
	 "config": {"Env": ["PATH=/bin"], "Cmd": ["sleep", "2147483647"], "WorkingDir": "/"},
	 "rootfs": {"type": "layers", "diff_ids": ["sha256:$ld"]},
	 "history": [{"created_by": "tests/containerd/lib.sh: busybox from busybox-static"}]}
	EOF
	read -r cd cs < <(blob "$i/config.json")
	cat >"$i/manifest.json" <<-EOF
	{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
	 "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:$cd", "size": $cs},
	 "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:$ld", "size": $ls}]}
	EOF
	read -r md ms < <(blob "$i/manifest.json")
	cat >"$i/oci/index.json" <<-EOF
	{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
	 "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
	   "digest": "sha256:$md", "size": $ms,
	   "platform": {"architecture": "$arch", "os": "linux"},
	   "annotations": {"io.containerd.image.name": "$CRI_IMAGE",
	                   "org.opencontainers.image.ref.name": "${CRI_IMAGE##*:}"}}]}
	EOF
	echo '{"imageLayoutVersion": "1.0.0"}' >"$i/oci/oci-layout"
	tar -C "$i/oci" -cf "$i/image.tar" oci-layout index.json blobs
}

# --- containerd ---

# cri_write_config: containerd.toml for CRI_CONTAINERD. 1.6 and 1.7 read
# version 2 (the CRI's settings under io.containerd.grpc.v1.cri); 2.x
# reads version 3, where they are split into io.containerd.cri.v1.images
# (snapshotter, the sandbox image), io.containerd.cri.v1.runtime (runtimes,
# CNI) and io.containerd.grpc.v1.cri (the streaming server) (containerd
# 2.1's `containerd config default`). The same settings either way.
cri_write_config() {
	local v=2 cri='plugins."io.containerd.grpc.v1.cri"' rt
	[ "$CRI_CONTAINERD" = 2.x ] && v=3
	{
		cat <<-EOF
		version = $v
		root = "$IT_WORK/root"
		state = "$CRI_STATE_DIR"
		disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
		  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

		[grpc]
		  address = "$CRI_SOCK"
		[ttrpc]
		  address = "$CRI_SOCK.ttrpc"
		[debug]
		  level = "info"

		[plugins."io.containerd.internal.v1.opt"]
		  path = "$IT_WORK/opt"
		EOF
		if [ $v = 2 ]; then
			rt=$cri
			cat <<-EOF
			# The tasks service needs the v1 runtime loaded; unused, but private too.
			[plugins."io.containerd.runtime.v1.linux"]
			  runtime_root = "$IT_WORK/runc-v1"
			[$cri]
			  sandbox_image = "$CRI_IMAGE"
			EOF
		else
			rt='plugins."io.containerd.cri.v1.runtime"'
			cat <<-EOF
			[plugins."io.containerd.cri.v1.images"]
			  snapshotter = "overlayfs"
			  [plugins."io.containerd.cri.v1.images".pinned_images]
			    sandbox = "$CRI_IMAGE"
			[plugins."io.containerd.image-verifier.v1.bindir"]
			  bin_dir = "$IT_WORK/opt/image-verifier"
			[$cri]
			  stream_server_address = "127.0.0.1"
			  stream_server_port = "0"
			[$rt]
			EOF
		fi
		cat <<-EOF
		  disable_apparmor = true
		  # Never below containerd's own oom_score_adj: a sandboxed host
		  # (no CAP_SYS_RESOURCE) refuses kubelet's negative values.
		  restrict_oom_score_adj = true
		  enable_selinux = false
		  enable_cdi = false
		EOF
		[ $v = 2 ] && cat <<-EOF
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		EOF
		echo "  [$rt.cni]"
		if [ $v = 2 ]; then
			echo "    bin_dir = \"$IT_WORK/cni/bin\""
		else
			echo "    bin_dirs = [\"$IT_WORK/cni/bin\"]"	# bin_dir is deprecated in 2.x
		fi
		cat <<-EOF
		    conf_dir = "$IT_WORK/cni/net.d"
		  [$rt.containerd]
		EOF
		[ $v = 2 ] && echo '    snapshotter = "overlayfs"'
		cat <<-EOF
		    default_runtime_name = "runc"
		    [$rt.containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      pod_annotations = ["weka.io/*", "koordinator.sh/*", "scheduling.koordinator.sh/*"]
		      [$rt.containerd.runtimes.runc.options]
		        BinaryName = "$(command -v runc)"
		        Root = "$IT_WORK/runc"
		        SystemdCgroup = false
		EOF
		# NRI (containerd 1.7 pkg/nri/config.go, 2.1 internal/nri/
		# config.go): the socket plugins connect to, the pre-installed
		# plugins and their configs, all private (2.x would otherwise
		# serve /var/run/nri/nri.sock and start /opt/nri/plugins/*).
		[ -n "$CRI_NRI_SOCK" ] && cat <<-EOF
		[plugins."io.containerd.nri.v1.nri"]
		  disable = false
		  socket_path = "$CRI_NRI_SOCK"
		  plugin_path = "$CRI_NRI_PLUGINS"
		  plugin_config_path = "$IT_WORK/nri/conf.d"
		  plugin_registration_timeout = "$CRI_NRI_REGISTRATION_TIMEOUT"
		  plugin_request_timeout = "$CRI_NRI_REQUEST_TIMEOUT"
		EOF
		true
	} >"$IT_WORK/containerd.toml"
}

# --- a mount namespace of the lane's own for containerd and its shims ---
# All three put their shims' sockets in /run/containerd/s whatever the
# config says (socketRoot, fixed at build time: runtime/v2/shim/
# util_unix.go in 1.6 and 1.7, pkg/shim/util_unix.go in 2.1). So
# containerd runs in a mount namespace, held by a sleeping process
# (CRI_NS_PID), whose /run is a tmpfs showing every entry of the host's
# /run (bind mounts, as they were at the start) but containerd/, its own
# empty directory: the system's
# /run/containerd is never touched, and two runs of the lane never share
# one. Its shims and containers inherit it; the mounts they make (rootfs
# overlays, sandbox shm) live and die with it. A restarted containerd
# enters the same namespace and finds its shims. Processes outside it see
# the same files elsewhere (the work dir, the state dir, cgroupfs, /proc);
# `ctr run` and `ctr task exec` from outside need --fifo-dir in the work
# dir (their default /run/containerd/fifo would be the host's).
cri_ns_start() {
	[ -n "${CRI_NS_PID:-}" ] && return 0
	unshare --mount --propagation private sh -euc '
		h=$1/hostrun
		mkdir "$h"
		mount --rbind /run "$h"
		mount -t tmpfs -o mode=0755,size=16m cpusetd-cri-run /run
		for e in "$h"/* "$h"/.[!.]*; do
			[ -e "$e" ] || [ -L "$e" ] || continue
			n=${e##*/}
			if [ "$n" = containerd ]; then continue
			elif [ -L "$e" ]; then cp -P "$e" "/run/$n"
			elif [ -d "$e" ]; then mkdir "/run/$n" && mount --rbind "$e" "/run/$n"
			else : >"/run/$n" && mount --bind "$e" "/run/$n"
			fi
		done
		mkdir -m 0711 /run/containerd
		umount -l "$h"
		rmdir "$h"
		exec sleep 2147483647' cri-ns "$IT_WORK" >>"$IT_WORK/ns.log" 2>&1 &
	CRI_NS_PID=$!
	cri_ns_ready() { [ "$(cat "/proc/$CRI_NS_PID/comm")" = sleep ]; }
	wait_for 10 cri_ns_ready || { cat "$IT_WORK/ns.log"; return 1; }
	CRI_MNTNS=$(readlink "/proc/$CRI_NS_PID/ns/mnt")
}

# cri_in_ns CMD...: CMD in the lane's mount namespace (sees its /run).
cri_in_ns() { nsenter --mount="/proc/$CRI_NS_PID/ns/mnt" -- "$@"; }

# cri_ns_pids: every process in the lane's mount namespace.
cri_ns_pids() {
	local p
	[ -n "${CRI_MNTNS:-}" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$CRI_MNTNS" ] && echo "${p#/proc/}"
	done
}

# cri_ns_only_holder: nothing but the holder left in the lane's namespace.
cri_ns_only_holder() { [ -z "$(cri_ns_pids | grep -vx "${CRI_NS_PID:-}")" ]; }

cri_ns_stop() {
	[ -n "${CRI_NS_PID:-}" ] || return 0
	kill -KILL "$CRI_NS_PID" 2>/dev/null
	wait "$CRI_NS_PID" 2>/dev/null
	CRI_NS_PID=
}

# cri_containerd_start: the private containerd in the lane's mount
# namespace, up when the CRI answers (and NRI's socket is there).
cri_containerd_start() {
	cri_write_config
	cri_ns_start || return 1
	# nsenter execs containerd: $! is containerd's PID (not a subshell's).
	nsenter --mount="/proc/$CRI_NS_PID/ns/mnt" -- \
		containerd --config "$IT_WORK/containerd.toml" >>"$IT_WORK/containerd.log" 2>&1 &
	CRI_CONTAINERD_PID=$!
	wait_for 30 cri version >/dev/null || return 1
	# NRI's socket comes up with the CRI plugin; a plugin may connect now.
	[ -z "$CRI_NRI_SOCK" ] || wait_for 30 test -S "$CRI_NRI_SOCK"
}

# cri_has_nri: true when the running containerd has its NRI plugin loaded
# and serving CRI_NRI_SOCK (1.7 and 2.x here; never 1.6).
cri_has_nri() {
	[ -n "$CRI_NRI_SOCK" ] && [ -S "$CRI_NRI_SOCK" ] &&
		ctr -a "$CRI_SOCK" plugins ls 2>/dev/null |
		awk '$1 == "io.containerd.nri.v1" && $2 == "nri" && $NF == "ok" {f = 1} END {exit !f}'
}

cri_image_import() {
	ctr -a "$CRI_SOCK" -n k8s.io images import "$IT_WORK/image/image.tar" \
		>"$IT_WORK/import.log" 2>&1 &&
		wait_for 30 cri image-status "$CRI_IMAGE" >/dev/null
}

# cri_containerd_restart: stop and start again, in the same mount
# namespace; the running shims and containers stay and are found again.
cri_containerd_restart() { cri_containerd_stop && cri_containerd_start; }

cri_containerd_stop() {
	[ -n "${CRI_CONTAINERD_PID:-}" ] || return 0
	kill -TERM "$CRI_CONTAINERD_PID" 2>/dev/null
	wait "$CRI_CONTAINERD_PID" 2>/dev/null
	CRI_CONTAINERD_PID=
}

# Shims of our containerd (they outlive it by design): found by the
# private socket in their command line, ended by PID.
cri_shim_pids() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q -- "-address $CRI_SOCK " &&
			echo "${p#/proc/}"
	done
}

cri_cleanup() {
	local id pid m h
	if [ -n "${IT_KEEP:-}" ]; then
		daemon_stop
		echo "# kept $IT_WORK; containerd $CRI_VERSION (PID ${CRI_CONTAINERD_PID:-none}) still serves $CRI_SOCK;" \
			"its mount namespace: nsenter --mount=/proc/${CRI_NS_PID:-none}/ns/mnt"
		return 0
	fi
	daemon_stop 2>/dev/null
	if [ -n "${CRI_CONTAINERD_PID:-}" ]; then
		timeout 60 "$CRI_PY" tests/containerd/cri.py remove-all >/dev/null 2>&1
		cri_containerd_stop
	fi
	for pid in $(cri_shim_pids); do kill -KILL "$pid" 2>/dev/null; done
	for id in $(runc --root "$IT_WORK/runc/k8s.io" list -q 2>/dev/null); do
		runc --root "$IT_WORK/runc/k8s.io" kill "$id" KILL 2>/dev/null
		runc --root "$IT_WORK/runc/k8s.io" delete -f "$id" 2>/dev/null
	done
	# What is still in it (a container the KILL has not ended yet): by
	# PID, all but the holder, which goes last: while it lives, the
	# namespace and so its number (what cri_ns_pids compares) stay ours.
	# A freed one is reused at once by the next mount namespace made (a
	# concurrent lane's next container), whose processes would then look
	# like ours. The namespace and its mounts (rootfs overlays, sandbox
	# shm) go with the holder.
	for pid in $(cri_ns_pids); do
		[ "$pid" = "${CRI_NS_PID:-}" ] || kill -KILL "$pid" 2>/dev/null
	done
	wait_for 10 cri_ns_only_holder
	CRI_NS_LEFT=$(for pid in $(cri_ns_pids); do
		[ "$pid" = "${CRI_NS_PID:-}" ] ||
			echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done)
	cri_ns_stop
	CRI_MNTNS=''
	# Mounts left under the work dir (a test's own), deepest first.
	for m in $(awk -v w="$IT_WORK/" 'index($2, w) == 1 {print $2}' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$IT_CG" ] || continue
		find "$h$IT_CG" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$IT_PIN"
	rm -rf --one-file-system "$IT_WORK"
	return 0
}

# cri_needs_cpus_0_1: the lane's tests name CPUs 0 and 1; skip the whole
# test elsewhere.
cri_needs_cpus_0_1() {
	local online
	online=$(cat /sys/devices/system/cpu/online)
	[ "$online" = 0-1 ] || it_skip_all "expects CPUs 0-1 online, have $online"
}

# cri_needs_nri: skips the whole file unless this containerd has NRI
# (1.7 and 2.x); before cri_setup, so nothing is made for nothing.
cri_needs_nri() {
	case $CRI_CONTAINERD in 1.7 | 2.x) ;; *) it_skip_all "containerd $CRI_CONTAINERD has no NRI" ;; esac
}

# cri_setup_or_exit: cri_setup, or one failed TAP line and the test ends
# (nothing after it can run without the CRI stubs and the work dir).
cri_setup_or_exit() {
	cri_setup || { not_ok "setup: CRI stubs generated by grpc_tools.protoc"; exit 1; }
}

# cri_finish LABEL: the end of a test: containerd and everything it made
# cleaned up (unless IT_KEEP) and checked gone, the phases' times logged
# as "LABEL took N s: ...", the TAP summary. The daemon is stopped first.
cri_finish() {
	local left
	daemon_stop
	if [ -z "${IT_KEEP:-}" ]; then
		cri_cleanup
		trap - EXIT
		left=$(cri_leftovers)
		check "cleanup: no shim, mount, cgroup, pin or work dir left${left:+ ($(tr '\n' ';' <<<"$left"))}" \
			test -z "$left"
	fi
	phase cleanup
	it_log "$1 took $(($(date +%s) - T0)) s: ${PHASES%, }"
	it_done
}

# cri_leftovers: prints what cri_cleanup left behind (nothing, it should).
cri_leftovers() {
	local h pid
	[ -n "$(cri_shim_pids)" ] && echo "shims: $(cri_shim_pids | tr '\n' ' ')"
	awk -v w="$IT_WORK/" 'index($2, w) == 1 {print "mount: " $2}' /proc/self/mounts
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$IT_CG" ] && echo "cgroup: $h$IT_CG"
	done
	[ -e "$IT_PIN" ] && echo "pin dir: $IT_PIN"
	[ -e "$IT_WORK" ] && echo "work dir: $IT_WORK"
	# Seen by cri_cleanup before its namespace went (its number may be
	# another's now).
	[ -n "${CRI_NS_LEFT:-}" ] && sed "s/^/in the lane's mount namespace: /" <<<"$CRI_NS_LEFT"
	[ -z "$CRI_NRI_EXISTED" ] && [ -e /var/run/nri ] && echo "/var/run/nri: $(ls -A /var/run/nri)"
	return 0
}

# --- pods (kubelet's cgroupfs layout) and containers ---

# pod_uid NAME: a pod UID (UUID form), unique to this run.
pod_uid() { printf 'cri-%s-%s' "$1" "$$" | md5sum | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/\1-\2-\3-\4-\5/'; }

# pod_cgroup QOS NAME: kubelet's cgroupfs pod cgroup under the kubepods root.
pod_cgroup() {
	case $1 in
	guaranteed) echo "$ROOT/pod$(pod_uid "$2")" ;;
	*) echo "$ROOT/$1/pod$(pod_uid "$2")" ;;
	esac
}

# run_pod NAME QOS [KEY=VALUE annotations, label:KEY=VALUE labels...]:
# kubelet's pod cgroup, then RunPodSandbox. Sets POD_ID[NAME].
declare -A POD_ID CTR_ID
run_pod() {
	local name=$1 qos=$2 cg a args=()
	shift 2
	cg=$(pod_cgroup "$qos" "$name")
	it_mkroot "$cg"
	for a in "$@"; do
		case $a in
		label:*) args+=(--label "${a#label:}") ;;
		*) args+=(--annotation "$a") ;;
		esac
	done
	POD_ID[$name]=$(cri run-pod "$name" --uid "$(pod_uid "$name")" --namespace "$CRI_NS" \
		--cgroup-parent "$cg" "${args[@]}") || return 1
	[ -n "${POD_ID[$name]}" ] || return 1
	echo "$name POD ${POD_ID[$name]}" >>"$CRI_IDS"
}

# run_ctr POD NAME [cri.py run-container options...]: Create + Start; sets
# CTR_ID[POD/NAME]; CTR_OUT holds cri.py's JSON.
run_ctr() {
	local pod=$1 name=$2 rc
	shift 2
	CTR_OUT=$(cri run-container "$pod" "$name" --image "$CRI_IMAGE" "$@")
	rc=$?
	CTR_ID[$pod/$name]=$(jq -r .id <<<"$CTR_OUT")
	[ -n "${CTR_ID[$pod/$name]}" ] && echo "$pod $name ${CTR_ID[$pod/$name]}" >>"$CRI_IDS"
	[ $rc -eq 0 ] || echo "# run_ctr $pod/$name: $(jq -r .error <<<"$CTR_OUT")"
	return $rc
}

# remove_pod NAME QOS: kubelet's stop and removal, then its pod cgroup goes.
remove_pod() {
	local cg h
	cg=$(pod_cgroup "$2" "$1")
	cri remove-pod "$1" || return 1
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h${cg#/}" ] && rmdir "$h${cg#/}" 2>/dev/null
	done
	unset "POD_ID[$1]"
}

# allowed POD NAME: Cpus_allowed_list of the container's init, as the
# kernel says (NAME = POD: the sandbox's pause process).
allowed() {
	local pid
	if [ "$2" = POD ]; then
		pid=$(runc --root "$IT_WORK/runc/k8s.io" state "${POD_ID[$1]}" 2>/dev/null | jq -r '.pid // empty')
	else
		pid=$(runc --root "$IT_WORK/runc/k8s.io" state "${CTR_ID[$1/$2]}" 2>/dev/null | jq -r '.pid // empty')
	fi
	[ -n "$pid" ] && [ "$pid" != 0 ] || return 1
	awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status"
}
allowed_is() { [ "$(allowed "$1" "$2")" = "$3" ]; }

# ctr_cgroup POD NAME: the container's cpuset cgroup directory.
ctr_cgroup() {
	local id=${CTR_ID[$1/$2]}
	echo "$IT_CPUSET$(jq -r .linux.cgroupsPath "$CRI_BUNDLES/$id/config.json")"
}

# --- the daemon ---

# daemon_start [CONFIG [OPTION...]]: cpusetd on the lane's kubepods root,
# state and pin dirs, with CONFIG as its config file (default: an empty
# one; e.g. one with nri_socket = $CRI_NRI_SOCK), at log level debug
# unless an OPTION says otherwise; up when status.json is written. Its
# Prometheus textfile: $CRI_PROM.
daemon_start() {
	local conf=${1:-$IT_WORK/empty.conf}
	[ $# -gt 0 ] && shift
	rm -f "$IT_WORK/cpusetd/status.json"
	mkdir -p "${CRI_PROM%/*}"
	"$IT_OUT/cpusetd" --config "$conf" --kubepods-root "$ROOT" \
		--bundle-path "$CRI_BUNDLES/{id}/config.json" \
		--state-dir "$IT_WORK/cpusetd" --pin-dir "$IT_PIN" \
		--kubelet-pods-dir "$IT_WORK/pods" --kubelet-state-file "" \
		--log-level debug --textfile "$CRI_PROM" "$@" \
		>>"$IT_WORK/daemon.log" 2>&1 &
	IT_DAEMON=$!
	wait_for 30 test -s "$IT_WORK/cpusetd/status.json"
}

status_json() { cat "$IT_WORK/cpusetd/status.json"; }
