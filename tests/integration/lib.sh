# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the integration tests and the demo: a private cgroup
# subtree, a private runc root, containerd-shaped bundles, and waits on
# conditions (never bare sleeps). Source it; call it_setup first.
#
# Everything lives under $IT_WORK and the cgroup subtree $IT_CG (a
# directory directly under every hierarchy's root); it_cleanup removes both
# and touches nothing else.

IT_OUT=${IT_OUT:-build}
IT_FAILED=0
# The pinned maps live in $IT_PIN/v$IT_LAYOUT (maps/cpusetd.h).
IT_LAYOUT=$(sed -n 's/^#define CPUSETD_LAYOUT_VERSION[[:space:]]*\([0-9]*\).*/\1/p' maps/cpusetd.h)
# The cpuset hierarchy: v1 (and hybrid) have their own mount; on pure v2
# (the VM lane) it is the unified root, with IT_V2=1. Ancestors there
# must enable cpuset in cgroup.subtree_control and children inherit
# their parent's effective set while their own cpuset.cpus is empty.
if [ -d /sys/fs/cgroup/cpuset ] || ! grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	IT_CPUSET=/sys/fs/cgroup/cpuset
	IT_V2=
else
	IT_CPUSET=/sys/fs/cgroup
	IT_V2=1
fi

it_log() { printf '# %s\n' "$*"; }

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; IT_FAILED=$((IT_FAILED + 1)); }

# check NAME CMD...: one TAP line for CMD's exit status.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# Skips the whole file, unless CI=true where a skip is a failure. The
# line is TAP's skip ("ok - # SKIP why"): tests/run-all.sh counts it
# apart, never as passed.
it_skip_all() {
	if [ "${CI:-}" = true ]; then
		not_ok "cannot run: $*"
		exit 1
	fi
	echo "ok - # SKIP $*"
	exit 0
}

# no_match FILE GREP_ARGS...: FILE exists and `grep GREP_ARGS` finds no
# line in it (exit 1; 2, an error, fails too). A bare `! grep -q PAT FILE`
# passes when FILE is missing.
no_match() {
	local f=$1; shift
	[ -f "$f" ] || { it_log "no_match: $f does not exist"; return 1; }
	grep -q "$@" "$f"
	[ $? = 1 ]
}

# wait_for TIMEOUT_S CMD...: polls CMD every 20 ms until it succeeds.
wait_for() {
	local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
	while ! "$@" 2>/dev/null; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

it_require() {
	[ "$(id -u)" = 0 ] || it_skip_all "needs root"
	[ -d "$IT_CPUSET" ] || [ -e /sys/fs/cgroup/cgroup.controllers ] || it_skip_all "no cpuset hierarchy"
	command -v runc >/dev/null || it_skip_all "runc missing (make deps)"
	[ -x /bin/busybox ] || it_skip_all "busybox-static missing (make deps)"
	[ -x "$IT_OUT/cpusetd" ] || it_skip_all "$IT_OUT/cpusetd not built"
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
}

# it_setup NAME: private work dir, cgroup subtree, busybox rootfs.
it_setup() {
	it_require
	IT_NAME=$1
	IT_WORK=$(mktemp -d "/tmp/cpusetd-$IT_NAME.XXXXXX")
	IT_CG=/cpusetd-$IT_NAME-$$
	IT_PIN=/sys/fs/bpf/cpusetd-$IT_NAME-$$
	IT_RUNC="runc --root $IT_WORK/runc"
	mkdir -p "$IT_WORK"/{bundles,pods,state} "$IT_WORK/rootfs/bin" "$IT_WORK/rootfs/dev"
	cp /bin/busybox "$IT_WORK/rootfs/bin/"
	for c in sh sleep cat true; do ln -sf busybox "$IT_WORK/rootfs/bin/$c"; done
	: >"$IT_WORK/empty.conf"
	# v1: children start with empty cpus/mems; give our subtree the root's.
	# v2: they inherit; enable the controllers for the subtree's children.
	if [ -n "$IT_V2" ]; then
		it_v2_mkdir "$IT_CPUSET$IT_CG"
	elif [ -d "$IT_CPUSET" ]; then
		mkdir -p "$IT_CPUSET$IT_CG"
		cat "$IT_CPUSET/cpuset.cpus" >"$IT_CPUSET$IT_CG/cpuset.cpus"
		cat "$IT_CPUSET/cpuset.mems" >"$IT_CPUSET$IT_CG/cpuset.mems"
	fi
	IT_ONLINE=$(cat /sys/devices/system/cpu/online)
	trap it_cleanup EXIT
}

# it_start NAME ROOT_LEAF: it_setup, then the kubepods root
# ROOT=$IT_CG/ROOT_LEAF. The tests name CPUs 0 and 1, so they need exactly
# those online (a bigger machine runs them in the VM lane instead).
it_start() {
	it_setup "$1"
	[ "$IT_ONLINE" = 0-1 ] || it_skip_all "expects CPUs 0-1 online, have $IT_ONLINE"
	ROOT=$IT_CG/$2
	IT_ROOT=$ROOT
	it_mkroot "$ROOT"
}

# it_v2_mkdir DIR: a v2 cgroup whose children get cpuset and cpu (as
# kubelet's cgroup managers enable them down the kubepods tree).
it_v2_mkdir() {
	mkdir -p "$1"
	grep -qw cpuset "${1%/*}/cgroup.subtree_control" ||
		echo "+cpuset +cpu" >"${1%/*}/cgroup.subtree_control"
	echo "+cpuset +cpu" >"$1/cgroup.subtree_control"
}

# it_mkroot CGPATH: the kubepods root (and parents) in the cpuset hierarchy.
it_mkroot() {
	local p=$IT_CPUSET dir
	local IFS=/
	for dir in ${1#/}; do
		p=$p/$dir
		[ -d "$p" ] && continue
		if [ -n "$IT_V2" ]; then
			it_v2_mkdir "$p"
			continue
		fi
		mkdir "$p"
		cat "${p%/*}/cpuset.cpus" >"$p/cpuset.cpus"
		cat "${p%/*}/cpuset.mems" >"$p/cpuset.mems"
	done
}

it_cleanup() {
	[ -n "${IT_KEEP:-}" ] && { daemon_stop; echo "# kept $IT_WORK"; return; }
	local id
	daemon_stop 2>/dev/null
	for id in $($IT_RUNC list -q 2>/dev/null); do
		$IT_RUNC kill "$id" KILL 2>/dev/null
		$IT_RUNC delete -f "$id" 2>/dev/null
	done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$IT_CG" ] || continue
		find "$h$IT_CG" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$IT_PIN"
	rm -rf "$IT_WORK"
}

# cid NAME: a stable 64-hex container ID for a name. IT_ATTEMPT=N makes
# another ID for the same name: kubelet's next attempt of a container.
cid() { printf '%s-%s%s' "$1" "$$" "${IT_ATTEMPT:+#$IT_ATTEMPT}" | sha256sum | cut -c1-64; }
# uid NAME: a pod UID (UUID form).
uid() { printf '%s-%s' "$1" "$$" | md5sum | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/\1-\2-\3-\4-\5/'; }

# --- the daemon ---

# daemon_start ROOT [extra options...]
daemon_start() {
	IT_ROOT=$1; shift
	rm -f "$IT_WORK/state/status.json"
	# IT_WRAP: a command line the daemon runs under (test_unit_sandbox).
	# shellcheck disable=SC2086
	${IT_WRAP:-} "$IT_OUT/cpusetd" --config "$IT_WORK/empty.conf" --kubepods-root "$IT_ROOT" \
		--bundle-path "$IT_WORK/bundles/{id}/config.json" \
		--state-dir "$IT_WORK/state" --pin-dir "$IT_PIN" \
		--kubelet-pods-dir "$IT_WORK/pods" --log-level debug \
		--textfile "$IT_WORK/prom/cpusetd.prom" "$@" \
		>>"$IT_WORK/daemon.log" 2>&1 &
	IT_DAEMON=$!
	wait_for "${IT_START_TIMEOUT:-20}" test -s "$IT_WORK/state/status.json"
}

daemon_stop() {
	[ -n "${IT_DAEMON:-}" ] || return 0
	kill -TERM "$IT_DAEMON" 2>/dev/null
	wait "$IT_DAEMON" 2>/dev/null
	IT_DAEMON=
}

daemon_kill9() {
	kill -KILL "$IT_DAEMON"
	wait "$IT_DAEMON" 2>/dev/null
	IT_DAEMON=
}

status_json() { cat "$IT_WORK/state/status.json"; }

# --- pods and containers ---

# cg_path QOS UID CID: the container's cgroup path under $IT_ROOT, in the
# naming of the root's driver (".slice" root = systemd driver).
cg_path() {
	local qos=$1 uid=$2 id=$3 u
	# Never outside the private subtree: no root, no container.
	case ${IT_ROOT:-} in
	"$IT_CG"/*) ;;
	*) echo "lib.sh: cg_path: IT_ROOT '${IT_ROOT:-}' is not under $IT_CG" >&2; return 1 ;;
	esac
	case $IT_ROOT in
	*.slice)
		u=${uid//-/_}
		case $qos in
		guaranteed) echo "$IT_ROOT/kubepods-pod$u.slice/cri-containerd-$id.scope" ;;
		*) echo "$IT_ROOT/kubepods-$qos.slice/kubepods-$qos-pod$u.slice/cri-containerd-$id.scope" ;;
		esac ;;
	*)
		case $qos in
		guaranteed) echo "$IT_ROOT/pod$uid/$id" ;;
		*) echo "$IT_ROOT/$qos/pod$uid/$id" ;;
		esac ;;
	esac
}

# json_escape VAR: VAR's value made fit for a JSON string, in place
# (no subshell: the VM lane pays for every fork).
json_escape() {
	local -n _s=$1
	_s=${_s//\\/\\\\}
	_s=${_s//\"/\\\"}
	_s=${_s//$'\n'/\\n}
	_s=${_s//$'\t'/\\t}
	_s=${_s//$'\r'/\\r}
}

# container_start POD NAME QOS TYPE CPU_MILLI [ANNOTATION] [CPUS_IN_SPEC] [HOOK PATH]
#   TYPE: sandbox|container; CPU_MILLI: limit in millicores, 0 = none.
#   HOOK PATH: runs HOOK PATH BUNDLE_JSON before runc (hostile bundles).
#   IT_ANNOTATIONS: a JSON object of more pod annotations (as containerd's
#   pod_annotations passes them), e.g. '{"koordinator.sh/qosClass":"BE"}'.
#   IT_NAMESPACE: the pod's namespace (default demo).
#   IT_CREATE=1: `runc create` only; the container waits for `runc start`.
# Writes a containerd-shaped config.json and runs it with runc.
container_start() {
	local pod=$1 name=$2 qos=$3 type=$4 milli=$5 annot=${6:-} spec_cpus=${7:-} hook=${8:-}
	local id uid sid b term cg quota=0
	id=$(cid "$pod/$name"); uid=$(uid "$pod"); sid=$(cid "$pod/POD")
	b=${IT_BUNDLES:-$IT_WORK/bundles}/$id
	term=$IT_WORK/pods/$uid/containers/$name/termination
	mkdir -p "$b" "${term%/*}"
	: >"$term"
	[ "$milli" -gt 0 ] && quota=$((milli * 100))
	cg=$(cg_path "$qos" "$uid" "$id") || return 1
	# Written by the shell, not jq: under TCG (the VM lane) a jq start
	# costs half a second per container. IDs, paths and cpulists are
	# ours; names come from the tests (hostile ones too): escaped.
	local annots="" cpu extra=${IT_ANNOTATIONS:-"{}"} jpod=$pod jname=$name jannot=$annot
	local jns=${IT_NAMESPACE:-demo}
	json_escape jpod; json_escape jname; json_escape jannot; json_escape jns
	[ "$type" = container ] && annots+=", \"io.kubernetes.cri.container-name\": \"$jname\""
	[ -n "$annot" ] && annots+=", \"weka.io/cores-ids\": \"$jannot\""
	extra=${extra#\{}; extra=${extra%\}}
	[ -n "$extra" ] && annots+=", $extra"
	cpu='"shares": 2, "period": 100000'
	[ "$quota" -gt 0 ] && cpu='"shares": '$((quota * 1024 / 100000))', "period": 100000, "quota": '$quota
	[ -n "$spec_cpus" ] && cpu+=", \"cpus\": \"$spec_cpus\""
	cat >"$b/config.json" <<-EOF
	{
	  "ociVersion": "1.0.2",
	  "process": {"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/",
	              "args": ["sleep", "3600"], "env": ["PATH=/bin"]},
	  "root": {"path": "$IT_WORK/rootfs", "readonly": true},
	  "hostname": "$jname",
	  "mounts": [
	    {"destination": "/proc", "type": "proc", "source": "proc"},
	    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755"]},
	    {"destination": "/dev/termination-log", "type": "bind", "source": "$term",
	     "options": ["rbind", "rprivate", "rw"]}
	  ],
	  "annotations": {
	    "io.kubernetes.cri.container-type": "$type",
	    "io.kubernetes.cri.sandbox-id": "$sid",
	    "io.kubernetes.cri.sandbox-name": "$jpod",
	    "io.kubernetes.cri.sandbox-namespace": "$jns",
	    "io.kubernetes.cri.sandbox-uid": "$uid"$annots
	  },
	  "linux": {
	    "cgroupsPath": "$cg",
	    "resources": {"cpu": {$cpu}},
	    "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}]
	  }
	}
	EOF
	[ -z "$hook" ] || "$hook" "$9" "$b/config.json"
	local verb="run -d"
	[ -z "${IT_CREATE:-}" ] || verb=create
	# shellcheck disable=SC2086
	$IT_RUNC $verb --bundle "$b" "$id" >"$IT_WORK/runc-$id.log" 2>&1
}

# container_stop POD NAME: kill, delete (the cgroup goes with it).
container_stop() {
	local id
	id=$(cid "$1/$2")
	$IT_RUNC kill "$id" KILL 2>/dev/null
	wait_for 5 container_gone_or_stopped "$id"
	$IT_RUNC delete -f "$id" 2>/dev/null
	rm -rf "${IT_BUNDLES:-$IT_WORK/bundles}/$id"
}

container_gone_or_stopped() {
	local s
	s=$($IT_RUNC state "$1" 2>/dev/null | jq -r .status) || return 0
	[ "$s" = stopped ] || [ -z "$s" ]
}

# pod_start POD QOS [MILLI] [ANNOTATION]: sandbox + one app container "app".
pod_start() {
	container_start "$1" POD "$2" sandbox 0 "${4:-}" &&
		container_start "$1" app "$2" container "${3:-0}" "${4:-}"
}

pod_stop() {
	container_stop "$1" app
	container_stop "$1" POD
}

pid_of() { $IT_RUNC state "$(cid "$1/$2")" 2>/dev/null | jq -r '.pid // empty'; }
status_of() { $IT_RUNC state "$(cid "$1/$2")" 2>/dev/null | jq -r '.status // empty'; }

running() { [ "$(status_of "$1" "$2")" = running ]; }
stopped() { [ "$(status_of "$1" "$2")" = stopped ]; }

# has_error POD REASON ACTION: status.json lists that admission error.
has_error() {
	jq -e --arg p "$1" --arg r "$2" --arg a "$3" \
		'.errors[] | select(.pod == $p and .reason == $r and .action == $a)' \
		"$IT_WORK/state/status.json" >/dev/null
}

# allowed POD NAME: Cpus_allowed_list of the container's init, as the kernel says.
allowed() {
	local pid
	pid=$(pid_of "$1" "$2")
	[ -n "$pid" ] && [ "$pid" != 0 ] || return 1
	awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status"
}

mems_allowed() {
	local pid
	pid=$(pid_of "$1" "$2")
	awk '/^Mems_allowed_list/ {print $2}' "/proc/$pid/status"
}

# allowed_is POD NAME CPULIST
allowed_is() { [ "$(allowed "$1" "$2")" = "$3" ]; }

termination_of() { cat "$IT_WORK/pods/$(uid "$1")/containers/$2/termination"; }

cg_file() {
	local id
	id=$(cid "$1/$2")
	cat "$IT_CPUSET$(jq -r .linux.cgroupsPath "$IT_WORK/bundles/$id/config.json")/$3"
}

# ms_until_restored FILE: writes 0-1 to FILE (a foreign write), prints
# the milliseconds until it reads 0 again, polled with bash builtins (no
# fork), or 9999 after 2 s.
ms_until_restored() {
	local v t0 t
	echo 0-1 >"$1"
	t0=${EPOCHREALTIME/./}
	while :; do
		read -r v <"$1"
		t=${EPOCHREALTIME/./}
		[ "$v" = 0 ] && { echo $(((t - t0) / 1000)); return; }
		[ $((t - t0)) -gt 2000000 ] && { echo 9999; return; }
	done
}

it_done() {
	[ "$IT_FAILED" -eq 0 ]
}

# --- host isolation's safety net (test_isolate_host, test_release) ---

# host_save PREFIX: records what isolate_host narrows: every IRQ's
# affinity, the default IRQ mask, the unbound workqueue cpumask and the
# affinity of each root-cgroup task, in PREFIX.irq, .irqdef, .wq, .tasks.
host_save() {
	local f t wq=/sys/devices/virtual/workqueue/cpumask
	for f in /proc/irq/*/smp_affinity_list; do echo "$f $(cat "$f")"; done >"$1.irq"
	cat /proc/irq/default_smp_affinity >"$1.irqdef"
	cat "$wq" >"$1.wq"
	while read -r t; do
		echo "$t $(taskset -pc "$t" 2>/dev/null | sed 's/.*: //')"
	done <"$IT_CPUSET/tasks" >"$1.tasks"
}

# host_restore PREFIX: puts back what still differs from host_save's
# record; a task only when it looks narrowed by us (CPU 0 only).
host_restore() {
	local f v cur t a wq=/sys/devices/virtual/workqueue/cpumask
	while read -r f v; do
		cur=$(cat "$f" 2>/dev/null) || continue
		[ "$cur" = "$v" ] || echo "$v" >"$f" 2>/dev/null
	done <"$1.irq"
	[ "$(cat /proc/irq/default_smp_affinity)" = "$(cat "$1.irqdef")" ] ||
		cat "$1.irqdef" >/proc/irq/default_smp_affinity
	[ "$(cat "$wq")" = "$(cat "$1.wq")" ] || cat "$1.wq" >"$wq"
	while read -r t a; do
		cur=$(taskset -pc "$t" 2>/dev/null | sed 's/.*: //') || continue
		[ "$cur" = 0 ] && [ "$a" != 0 ] && [ -n "$a" ] && taskset -pc "$a" "$t" >/dev/null 2>&1
	done <"$1.tasks"
}
