#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cpusetd's OCI image run as its DaemonSet says, under the lane's private
# containerd (Debian's 1.6): `make image` (the .deb on a Debian base), the
# manifest rendered by `kubectl kustomize tools/packaging/deploy` and checked
# (tools/packaging/deploy/check-daemonset.py), the image imported with ctr, then run
# with `ctr run --privileged` with the namespaces, command, args, env,
# memory limit and mounts read from the rendered manifest (a field the run
# would not follow fails the test). The manifest's host paths are mapped to
# this test's own: /sys/fs/cgroup is the real one (the daemon is kept to
# the private kubepods subtree by --kubepods-root), /sys/fs/bpf a bpffs
# instance of its own, the rest directories under the work dir; the lane's
# kubelet pods dir is also mounted at its own path and named with
# --kubelet-pods-dir (see ds_opts), the only other argument added. Then pods through the CRI (shared, annotated,
# integer, a rejection), placements checked through the kernel, the
# liveness probe exec'd in the daemon container (fresh, then a stopped
# daemon's stale heartbeat), and two upgrades (the daemon container
# replaced by a new one in a new pod) that must leave every placement as
# it was. Everything made is removed, the image included.
#   tests/containerd/test_image.sh [BUILD_DIR]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_needs_cpus_0_1
command -v kubectl >/dev/null || it_skip_all "kubectl missing (make deps: kubernetes-client)"
command -v debootstrap >/dev/null || it_skip_all "debootstrap missing (make deps)"
"$CRI_PY" -c 'import yaml' 2>/dev/null || it_skip_all "python3-yaml missing (make deps)"
cri_setup_or_exit
CRI_MUST_LOGS="$IT_WORK/ds-*.log"	# must's tails: the daemon containers' logs too
ctrd() { ctr -a "$CRI_SOCK" -n k8s.io "$@"; }

DS_N=0		# daemon containers started so far
DS_ID=''	# the running one
DS_IDS=()
ds_cleanup() {
	local id
	[ -n "${IT_KEEP:-}" ] && return 0
	[ -n "${CRI_CONTAINERD_PID:-}" ] || return 0
	for id in "${DS_IDS[@]}"; do
		ctrd task kill -s SIGKILL "$id" >/dev/null 2>&1
		ctrd task delete -f "$id" >/dev/null 2>&1
		ctrd container delete "$id" >/dev/null 2>&1
	done
	[ -n "${DS_IMAGE:-}" ] && ctrd images rm "$DS_IMAGE" >/dev/null 2>&1
	return 0
}
trap 'ds_cleanup; cri_cleanup' EXIT

# --- the image and the manifest ---

# A make of its own: not the jobserver of a `make check` above.
image_build() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory OUT="$IT_OUT" image \
		>"$IT_WORK/image-build.log" 2>&1 ||
		{ tail -n 20 "$IT_WORK/image-build.log" | sed 's/^/# /'; return 1; }
	grep '^build-image: .*\.oci\.tar' "$IT_WORK/image-build.log" | sed 's/^/# /'
	DS_DEB=$(sed -n 's/^build-image: .* from \(.*\.deb\) on .*/\1/p' "$IT_WORK/image-build.log")
	[ -f "$DS_DEB" ]
}
must "make image: the .deb on a Debian base, an OCI layout tarball" image_build
DS_TAR=$IT_OUT/cpusetd-image.oci.tar
DS_IMAGE=$(cat "$DS_TAR.name")
it_log "image $DS_IMAGE: $(du -h "$DS_TAR" | cut -f1) ($(stat -c %s "$DS_TAR") bytes)"

must "kubectl kustomize tools/packaging/deploy renders the manifest" \
	bash -c "kubectl kustomize tools/packaging/deploy >$IT_WORK/deploy.yaml 2>$IT_WORK/kustomize.log"
# The manifest's own checks, one TAP line each.
out=$("$CRI_PY" tools/packaging/deploy/check-daemonset.py check "$IT_WORK/deploy.yaml")
echo "$out"
IT_FAILED=$((IT_FAILED + $(grep -c '^not ok' <<<"$out")))
must "the run follows every field of the manifest (check-daemonset.py run-spec)" bash -c \
	"'$CRI_PY' tools/packaging/deploy/check-daemonset.py run-spec $IT_WORK/deploy.yaml >$IT_WORK/spec.json"
SPEC=$IT_WORK/spec.json
check "the manifest names the image make image built ($DS_IMAGE)" \
	jq_quiet --arg i "$DS_IMAGE" '.image == $i' "$SPEC"

# Before containerd: its mount namespace (lib.sh cri_ns_start) gets a copy
# of the host's mounts as they are then, and the daemon container must see
# the same bpffs instance as this test.
mkdir -p "$IT_WORK/bpffs" "$IT_WORK/kubelet/pods" "$IT_WORK/configmap"
mount -t bpf bpf "$IT_WORK/bpffs"	# a bpffs instance of this test's own
must "containerd starts on a private socket" cri_containerd_start
must "busybox image for the pods built" cri_build_image
must "busybox image imported" cri_image_import
must "cpusetd image imported with ctr (no registry)" bash -c \
	"ctr -a '$CRI_SOCK' -n k8s.io images import '$DS_TAR' >'$IT_WORK/ds-import.log' 2>&1"
image_seen() { cri image-status "$DS_IMAGE" >/dev/null; }
check "the CRI sees it under the manifest's name" wait_for 30 image_seen

# --- the manifest, as ctr run options ---

# The manifest's host paths, and where this test puts each: a host path it
# does not know fails the test rather than touch the host.
declare -A HOST=(
	[/sys/fs/cgroup]=/sys/fs/cgroup
	[/sys/fs/bpf]=$IT_WORK/bpffs
	[/run/containerd/io.containerd.runtime.v2.task]=$CRI_STATE_DIR/io.containerd.runtime.v2.task
	[/var/lib/kubelet]=$IT_WORK/kubelet
	[/var/lib/kubelet/pods]=$CRI_PODS_DIR
	[/var/lib/prometheus/node-exporter]=$IT_WORK/textfile
	[/run/cpusetd]=$IT_WORK/state
	[/var/run/nri]=$IT_WORK/host-nri	# 1.6 has no NRI: the daemon retries, BPF places
)
mkdir -p "$IT_WORK/host-nri"
STATE=$IT_WORK/state

# ds_opts: the ctr run options of the manifest, one a line, into DS_OPTS.
ds_opts() {
	local m name kind src dst opts type
	DS_OPTS=()
	jq_quiet .privileged "$SPEC" && DS_OPTS+=(--privileged)
	jq_quiet .host_network "$SPEC" && DS_OPTS+=(--net-host)
	# hostPID: the pid namespace of this shell (the host's, to the lane).
	jq_quiet .host_pid "$SPEC" && DS_OPTS+=(--with-ns "pid:/proc/$$/ns/pid")
	m=$(jq -r .memory_limit "$SPEC")
	[ "$m" -gt 0 ] && DS_OPTS+=(--memory-limit "$m")
	while read -r e; do DS_OPTS+=(--env "$e"); done < <(jq -r '.env[]' "$SPEC")
	while read -r name kind; do
		m=$(jq -c --arg n "$name" '.mounts[] | select(.name == $n)' "$SPEC")
		dst=$(jq -r .dst <<<"$m")
		opts=rbind:$(jq -r 'if .ro then "ro" else "rw" end' <<<"$m"):$(jq -r .propagation <<<"$m")
		if [ "$kind" = configMap ]; then
			src=$IT_WORK/configmap/$name
			jq -j .data <<<"$m" >"$src"
		else
			src=${HOST[$(jq -r .host <<<"$m")]:-}
			[ -n "$src" ] || { echo "# hostPath $(jq -r .host <<<"$m"): no place for it in this test"; return 1; }
			type=$(jq -r .type <<<"$m")
			case $type in
			DirectoryOrCreate) mkdir -p "$src" ;;
			Directory) [ -d "$src" ] || { echo "# hostPath $src: not a directory"; return 1; } ;;
			*) echo "# hostPath type '$type' not run by this test"; return 1 ;;
			esac
		fi
		DS_OPTS+=(--mount "type=bind,src=$src,dst=$dst,options=$opts")
	done < <(jq -r '.mounts[] | "\(.name) \(.kind)"' "$SPEC")
	# The runtime names a container's termination-message file in its
	# bundle by the file's host path, and cpusetd writes it only below its
	# --kubelet-pods-dir: in a cluster the manifest mounts kubelet's pods dir
	# at its own path. This test's pods dir is elsewhere: it is mounted at
	# its own path too, and named (the only path passed).
	DS_OPTS+=(--mount "type=bind,src=$CRI_PODS_DIR,dst=$CRI_PODS_DIR,options=rbind:rw:rslave")
	mapfile -t DS_ARGV < <(jq -r '.command[], .args[]' "$SPEC")
	DS_ARGV+=(--kubepods-root "$ROOT" --kubelet-pods-dir "$CRI_PODS_DIR")
	[ "${#DS_ARGV[@]}" -gt 2 ]
}
must "the manifest's namespaces, limits, env, mounts and argv as ctr run options" ds_opts
it_log "ctr run ${DS_OPTS[*]} $DS_IMAGE ID ${DS_ARGV[*]}"

# ds_start: a new daemon container in a new pod cgroup (a DaemonSet's new
# pod), as the manifest says; up when status.json is written (the first
# full sync), as the startup probe waits for. Sets DS_ID.
ds_start() {
	local cg
	DS_N=$((DS_N + 1))
	# A container ID as kubelet's are (64 hex): cgroups named otherwise are
	# not containers to cpusetd, and in a cluster it places its own.
	DS_ID=$(printf 'cpusetd-ds-%s-%s' "$$" "$DS_N" | sha256sum | cut -c1-64)
	DS_IDS+=("$DS_ID")
	cg=$(pod_cgroup burstable "cpusetd-$DS_N")
	it_mkroot "$cg"
	rm -f "$STATE/status.json"
	ctrd run -d "${DS_OPTS[@]}" --cgroup "$cg/$DS_ID" \
		--runc-binary "$(command -v runc)" --runc-root "$IT_WORK/runc" \
		--fifo-dir "$IT_WORK/fifo" --log-uri "file://$IT_WORK/ds-$DS_N.log" \
		"$DS_IMAGE" "$DS_ID" "${DS_ARGV[@]}" \
		>"$IT_WORK/ds-run-$DS_N.log" 2>&1 || { cat "$IT_WORK/ds-run-$DS_N.log"; return 1; }
	wait_for 60 test -s "$STATE/status.json"
}

# probe WHICH: the manifest's startup or liveness command, exec'd in the
# daemon container as kubelet does; its exit status.
DS_EXEC=0
probe() {
	local -a cmd
	mapfile -t cmd < <(jq -r ".$1[]" "$SPEC")
	DS_EXEC=$((DS_EXEC + 1))
	ctrd task exec --fifo-dir "$IT_WORK/fifo" --exec-id "probe-$DS_EXEC" "$DS_ID" "${cmd[@]}" \
		>"$IT_WORK/probe.out" 2>"$IT_WORK/probe.err"
}
probe_exit() { probe "$1"; echo $?; }
probe_exit_is() { [ "$(probe_exit "$1")" = "$2" ]; }

ds_pid() { runc --root "$IT_WORK/runc/k8s.io" state "$DS_ID" 2>/dev/null | jq -r '.pid // empty'; }

# ds_stop: SIGTERM (kubelet's stop), then the container and its pod go.
ds_stop() {
	local cg
	ctrd task kill -s SIGTERM "$DS_ID" >/dev/null &&
		wait_for 30 bash -c "! runc --root '$IT_WORK/runc/k8s.io' state '$DS_ID' 2>/dev/null | grep -q '\"running\"'" &&
		ctrd task delete "$DS_ID" >/dev/null && ctrd container delete "$DS_ID" || return 1
	cg=$(pod_cgroup burstable "cpusetd-$DS_N")
	for h in /sys/fs/cgroup/*/; do [ -d "$h${cg#/}" ] && rmdir "$h${cg#/}" 2>/dev/null; done
	DS_ID=''
	return 0
}


# dsx CMD...: CMD exec'd in the daemon container; its output and status.
dsx() {
	DS_EXEC=$((DS_EXEC + 1))
	ctrd task exec --fifo-dir "$IT_WORK/fifo" --exec-id "x-$DS_EXEC" "$DS_ID" "$@"
}
dsx_quiet() { dsx "$@" >/dev/null 2>&1; }

must "daemon container 1 starts; status.json written (first sync)" ds_start
pid=$(ds_pid)
deb_version=$(dpkg-deb -f "$DS_DEB" Version)
check "it runs the packaged cpusetd: dpkg says $deb_version in the container" \
	test "$(dsx dpkg-query -W -f '${Version}' cpusetd)" = "$deb_version"
it_log "in the container: $(dsx cpusetd --version)"
conf_in_ctr=$(jq -r '.args | index("--config") as $i | .[$i + 1]' "$SPEC")
check "the ConfigMap file $conf_in_ctr passes cpusetd --check-config in the container" \
	dsx_quiet cpusetd --check-config --config "$conf_in_ctr"
check "hostPID: status.json's pid is the daemon's host PID ($pid)" \
	jq_quiet --argjson p "${pid:-0}" '.daemon.pid == $p' "$STATE/status.json"
check "hostNetwork: the host's network namespace" \
	test "$(readlink "/proc/$pid/ns/net")" = "$(readlink /proc/$$/ns/net)"
check "privileged under containerd: the host's cgroup namespace" \
	test "$(readlink "/proc/$pid/ns/cgroup")" = "$(readlink /proc/$$/ns/cgroup)"
check "startup probe passes once status.json is there" probe_exit_is startup 0
check "liveness probe (cpusetctl status) exits 0" probe_exit_is liveness 0
check "the host's cpusetctl reads the same state and sees the daemon alive" \
	"$IT_OUT/cpusetctl" --state-dir "$STATE" status --json >/dev/null
check "BPF maps pinned in the node's bpffs (/sys/fs/bpf/cpusetd)" \
	bash -c "ls '$IT_WORK/bpffs/cpusetd/' | grep -q ."
check "textfile written in node_exporter's directory" wait_for 30 test -s "$IT_WORK/textfile/cpusetd.prom"
it_log "daemon scheduling in its container: $(chrt -p "$pid" | tr '\n' ' ')"

# maxSurge 0: a second daemon container on the node (a surge pod) must
# refuse to start, since the first holds the instance lock.
ds_second() {
	local id cg
	id=$(printf 'cpusetd-ds-%s-second' "$$" | sha256sum | cut -c1-64)
	DS_IDS+=("$id")
	cg=$(pod_cgroup burstable cpusetd-second)
	it_mkroot "$cg"
	# Its stderr goes to stdout: containerd 1.6's shim loses the stderr of
	# a process that writes it at once and exits (under load, 4 runs in 5
	# here; a shell's `echo x >&2; exit 1` too), while stdout arrives.
	ctrd run -d "${DS_OPTS[@]}" --cgroup "$cg/$id" \
		--runc-binary "$(command -v runc)" --runc-root "$IT_WORK/runc" \
		--fifo-dir "$IT_WORK/fifo" --log-uri "file://$IT_WORK/ds-second.log" \
		"$DS_IMAGE" "$id" /bin/sh -c 'exec "$0" "$@" 2>&1' "${DS_ARGV[@]}" \
		>/dev/null 2>&1 || return 1
	wait_for 60 bash -c "runc --root '$IT_WORK/runc/k8s.io' state '$id' 2>/dev/null | grep -q '\"stopped\"'"
	local rc=$?
	wait_for 20 grep -q "another cpusetd" "$IT_WORK/ds-second.log"
	ctrd task delete "$id" >/dev/null 2>&1
	ctrd container delete "$id" >/dev/null 2>&1
	for h in /sys/fs/cgroup/*/; do [ -d "$h${cg#/}" ] && rmdir "$h${cg#/}" 2>/dev/null; done
	[ $rc = 0 ] || it_log "second daemon container: not stopped within 60 s"
	[ $rc = 0 ] && grep -q "another cpusetd (pid $pid) holds" "$IT_WORK/ds-second.log" && return 0
	it_log "second daemon container's log: $(tr '\n' '|' <"$IT_WORK/ds-second.log" 2>&1 | cut -c1-2000)"
	return 1
}
check "a second daemon container on the node exits: 'another cpusetd (pid $pid) holds ...'" ds_second
check "the first one runs on (liveness 0)" probe_exit_is liveness 0

# --- pods through the CRI, placements through the kernel ---
must "shared: RunPodSandbox" run_pod s1 burstable
must "shared: app" run_ctr s1 app --cpu-request 250 --cpu-limit 500
check "shared: app on the whole pool 0-1" wait_for 30 allowed_is s1 app 0-1
must "annotated: RunPodSandbox (weka.io/cores-ids: 1)" run_pod a1 burstable weka.io/cores-ids=1
must "annotated: app" run_ctr a1 app
check "annotated: app on exactly CPU 1" wait_for 30 allowed_is a1 app 1
check "annotated: the shared app leaves CPU 1" wait_for 30 allowed_is s1 app 0
ds_allowed_is() { [ "$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$(ds_pid)/status")" = "$1" ]; }
ds_self_shared() {
	wait_for 30 ds_allowed_is 0 && return 0
	grep "${DS_ID:0:12}" "$IT_WORK/ds-$DS_N.log" | tail -n 5 | sed 's/^/# /'
	grep Cpus_allowed_list "/proc/$(ds_pid)/status" | sed 's/^/# /'
	return 1
}
check "the daemon's own container (a Burstable pod's) is shared too: 0" ds_self_shared

# placements: "POD/NAME cpuset.cpus Cpus_allowed_list" of every app, as
# the kernel says.
placements() {
	local k
	for k in "$@"; do
		printf '%s %s %s\n' "$k" "$(cat "$(ctr_cgroup "${k%/*}" "${k#*/}")/cpuset.cpus")" \
			"$(allowed "${k%/*}" "${k#*/}")"
	done
}

# sample OUT STOP FILES...: every value each FILE takes, every 10 ms,
# until STOP exists ("FILE VALUE" lines, on change only).
sample() {
	local out=$1 stop=$2 f v
	shift 2
	declare -A last
	while [ ! -e "$stop" ]; do
		for f in "$@"; do
			read -r v <"$f" 2>/dev/null || v=gone
			[ "$v" != "${last[$f]:-}" ] && { echo "$f $v" >>"$out"; last[$f]=$v; }
		done
		sleep 0.01
	done
}

# upgrade NAME APPS...: the daemon container stopped (SIGTERM) and a new one
# started in a new pod while the apps' cpuset.cpus are sampled; every
# placement must be as before, and the new daemon must have corrected
# nothing but its own container.
upgrade() {
	local name=$1 before after files=() k n
	shift
	before=$(placements "$@")
	for k in "$@"; do files+=("$(ctr_cgroup "${k%/*}" "${k#*/}")/cpuset.cpus"); done
	rm -f "$IT_WORK/$name.samples" "$IT_WORK/$name.stop"
	sample "$IT_WORK/$name.samples" "$IT_WORK/$name.stop" "${files[@]}" &
	local sampler=$!
	must "$name: the daemon container stops on SIGTERM (kubelet's stop)" ds_stop
	check "$name: the stopped daemon's heartbeat says stopped (host cpusetctl exits 3)" \
		bash -c "'$IT_OUT/cpusetctl' --state-dir '$STATE' status --json >/dev/null 2>&1; test \$? = 3"
	must "$name: a new daemon container starts in a new pod" ds_start
	check "$name: liveness probe exits 0 in the new container" probe_exit_is liveness 0
	after=$(placements "$@")
	: >"$IT_WORK/$name.stop"
	wait "$sampler"
	check "$name: every placement as before ($(tr '\n' ';' <<<"$before"))" test "$before" = "$after"
	n=$(wc -l <"$IT_WORK/$name.samples")
	check "$name: no cpuset.cpus changed while the daemon was replaced ($n values for $# files)" \
		test "$n" = "$#"
	check "$name: the new daemon corrected nothing but its own container" \
		bash -c "! grep 'resync corrected' '$IT_WORK/ds-$DS_N.log' | grep -v '${DS_ID:0:12}' | grep -q ."
}

upgrade "upgrade 1 (shared + annotated)" s1/app a1/app
must "annotated pod removed" remove_pod a1 burstable
check "shared app back on 0-1" wait_for 30 allowed_is s1 app 0-1

must "integer: RunPodSandbox" run_pod g1 guaranteed
must "integer: app (1 CPU)" run_ctr g1 app --cpu-limit 1000 --memory-limit 67108864 --guaranteed
check "integer: app on an exclusive CPU (0)" wait_for 30 allowed_is g1 app 0
check "integer: cpuset.mems is CPU 0's node" test "$(cat "$(ctr_cgroup g1 app)/cpuset.mems")" = 0
check "integer: the shared app moves to CPU 1" wait_for 30 allowed_is s1 app 1
check "integer: status.json shows it" wait_for 30 jq_quiet --arg id "${CTR_ID[g1/app]}" \
	'.containers[] | select(.container_id == $id and .kind == "integer" and .cpus == "0")' \
	"$STATE/status.json"

# A rejection: the daemon in its container writes the termination message
# through the kubelet pods mount and kills the app by its host PID.
must "rejection: RunPodSandbox with weka.io/cores-ids: 1-x" run_pod x1 burstable weka.io/cores-ids=1-x
rej=$(cri run-container x1 app --image "$CRI_IMAGE" --wait-exit 30 --cpu-limit 500)
echo "x1 app $(jq -r .id <<<"$rej")" >>"$CRI_IDS"
check "rejection: the app was killed (exit 137)" jq_quiet \
	'.status.state == "CONTAINER_EXITED" and .status.exit_code == 137' <<<"$rej"
rej_message() {
	wait_for 30 grep -q '^cpusetd: invalid_annotation' "$(jq -r .termination <<<"$rej")" && return 0
	jq -c . <<<"$rej" | sed 's/^/# /'
	grep -E 'x1|invalid_annotation|termination' "$IT_WORK/ds-$DS_N.log" | tail -n 8 | sed 's/^/# /'
	return 1
}
check "rejection: its termination file says 'cpusetd: invalid_annotation'" rej_message
must "rejection: pod removed" remove_pod x1 burstable

upgrade "upgrade 2 (shared + integer)" s1/app g1/app

# --- liveness of a hung daemon: a stopped process keeps its PID, only its
# heartbeat grows old (stale after 3 export intervals + 5 s) ---
pid=$(ds_pid)
kill -STOP "$pid"
check "liveness probe fails (exit 3) once the heartbeat of a hung daemon is stale" \
	wait_for 120 probe_exit_is liveness 3
it_log "probe said: $(cat "$IT_WORK/probe.err")"
kill -CONT "$pid"
check "liveness probe passes again once it runs" wait_for 60 probe_exit_is liveness 0
check "integer app still on CPU 0" allowed_is g1 app 0

mem=$(cat "$IT_CPUSET/../memory$(pod_cgroup burstable "cpusetd-$DS_N")/$DS_ID/memory.max_usage_in_bytes" 2>/dev/null)
[ -n "$mem" ] && it_log "daemon container peak memory: $((mem / 1024 / 1024)) MiB (limit $(($(jq -r .memory_limit "$SPEC") / 1024 / 1024)) MiB)"

# --- cleanup: containers, the image, pins, state ---
must "the last daemon container stops" ds_stop
check "SIGTERM leaves placements in place" allowed_is g1 app 0
if [ -z "${IT_KEEP:-}" ]; then
	ds_cleanup
	check "the image is removed from containerd" bash -c "! ctr -a '$CRI_SOCK' -n k8s.io images ls -q | grep -qx '$DS_IMAGE'"
	no_ds_left() { ! ctrd containers ls -q | grep -qxF -f <(printf '%s\n' "${DS_IDS[@]}"); }
	check "no daemon container left (${#DS_IDS[@]} were run)" no_ds_left
	cri_cleanup
	trap - EXIT
	left=$(cri_leftovers)
	check "cleanup: no shim, mount (bpffs), cgroup, pin or state dir left${left:+ ($(tr '\n' ';' <<<"$left"))}" \
		test -z "$left"
fi
it_log "took $(($(date +%s) - T0)) s"
it_done
