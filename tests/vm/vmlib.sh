# SPDX-License-Identifier: Apache-2.0
# Helpers for the guest tests of the VM lane, on top of
# tests/integration/lib.sh (source that first). The machine is the one
# tests/vm/run.sh boots, but these read its shape from sysfs rather than
# assume it, so a test says what it checks, not where CPUs happen to be.

SYS_CPU=/sys/devices/system/cpu
# Under TCG the daemon loads and verifies its BPF programs on 16 emulated
# CPUs: its first status.json can take far longer than on a real host.
# Under make check-stress (stress-ng beside qemu on a 2-CPU host) a vCPU
# has been seen stalled 45-60 s (guest soft lockup in clear_page_erms,
# "clocksource: Long readout interval" 57 s) in the middle of a start:
# that daemon's BPF load alone took 57 s and its status.json came after
# 83 s, twice at the same test (test_v2_hierarchy's third start). The
# wait is an upper bound only; a start that works returns at once.
IT_START_TIMEOUT=240

# vm_sleep SECONDS: sleeps without starting a program: bash's read times
# out on a FIFO nobody writes (opened read-write, so the open does not
# block). Under TCG a fork+exec of even busybox costs 0.1-0.2 s of a
# vCPU, and wait_for below would pay two per poll.
VM_FIFO=/tmp/vm-sleep.$$
mkfifo "$VM_FIFO" 2>/dev/null
vm_sleep() { read -r -t "$1" _ <>"$VM_FIFO"; }

# wait_for TIMEOUT_S CMD...: lib.sh's, without its two programs per poll
# (GNU date for the clock, sleep): the clock is $EPOCHREALTIME, the pause
# vm_sleep. lib.sh's polled about every 0.3 s here, all of it forks that
# took host CPU from the guest's real work; this one polls every 50 ms
# plus what CMD costs, and only CMD costs CPU.
wait_for() {
	local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
	shift
	while ! "$@" 2>/dev/null; do
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || return 1
		vm_sleep 0.05	# a timed-out read is status 142: not the loop's
	done
	return 0
}

# vm_start NAME ROOT_LEAF: it_setup, then the kubepods root
# ROOT=$IT_CG/ROOT_LEAF ("kubepods" = cgroupfs driver, "kubepods.slice" =
# systemd driver), with cpuset enabled down to it.
vm_start() {
	it_setup "$1"
	[ -n "$IT_V2" ] || it_skip_all "the VM lane expects pure cgroup v2"
	trap vm_cleanup EXIT
	vm_root "$2"
}

# vm_root ROOT_LEAF: (another) kubepods root in the private subtree.
vm_root() {
	ROOT=$IT_CG/$1
	IT_ROOT=$ROOT
	it_mkroot "$ROOT"
}

# The set helpers below are plain bash (no sort, comm or seq): under TCG
# every fork costs tens of milliseconds, and they run in wait_for loops.

# cpus CPULIST: one CPU id per line ("0-2,5" -> 0 1 2 5).
cpus() {
	local IFS=, r i
	for r in $1; do
		case $r in
		*-*) for ((i = ${r%-*}; i <= ${r#*-}; i++)); do echo "$i"; done ;;
		?*) echo "$r" ;;
		esac
	done
}

# _set NAME CPULIST: the associative array NAME gets one key per CPU.
_set() {
	local -n _s=$1
	local IFS=, r i
	_s=()
	for r in $2; do
		case $r in
		*-*) for ((i = ${r%-*}; i <= ${r#*-}; i++)); do _s[$i]=1; done ;;
		?*) _s[$r]=1 ;;
		esac
	done
}

# ncpus CPULIST: how many CPUs.
ncpus() { local -A a; _set a "$1"; echo "${#a[@]}"; }

# list_of: ids on stdin (one a line, sorted) -> compact list "0-2,5".
list_of() {
	local id s= p= out=
	while read -r id; do
		if [ -z "$s" ]; then s=$id
		elif [ "$id" -ne $((p + 1)) ]; then
			out+=$s$([ "$s" = "$p" ] || echo "-$p"),; s=$id
		fi
		p=$id
	done
	[ -n "$s" ] && out+=$s$([ "$s" = "$p" ] || echo "-$p")
	echo "$out"
}

# _list NAME: the keys of set NAME as a compact cpulist.
_list() {
	local -n _l=$1
	local i
	for ((i = 0; i < 1024; i++)); do [ -n "${_l[$i]:-}" ] && echo "$i"; done | list_of
}

# node_of CPU: its NUMA node, from sysfs.
node_of() {
	local d
	for d in "$SYS_CPU/cpu$1"/node*; do echo "${d##*node}"; return; done
}

# core_of CPU: "package:core" (the physical core).
core_of() {
	local p c
	read -r p <"$SYS_CPU/cpu$1/topology/physical_package_id"
	read -r c <"$SYS_CPU/cpu$1/topology/core_id"
	echo "$p:$c"
}

# nodes_of CPULIST: the distinct NUMA nodes, as a list ("0-1").
nodes_of() {
	local -A n
	local c d
	for c in $(cpus "$1"); do
		for d in "$SYS_CPU/cpu$c"/node*; do n[${d##*node}]=1; done
	done
	_list n
}

# disjoint A B: the cpulists share no CPU.
disjoint() {
	local -A a
	local c
	_set a "$1"
	for c in $(cpus "$2"); do [ -z "${a[$c]:-}" ] || return 1; done
}
# subset A B: every CPU of A is in B.
subset() {
	local -A b
	local c
	_set b "$2"
	for c in $(cpus "$1"); do [ -n "${b[$c]:-}" ] || return 1; done
}
# union A B...: the cpulist of all.
union() {
	local -A u
	local l c
	for l in "$@"; do for c in $(cpus "$l"); do u[$c]=1; done; done
	_list u
}
# minus A B: the CPUs of A not in B.
minus() {
	local -A b m
	local c
	_set b "$2"
	for c in $(cpus "$1"); do [ -n "${b[$c]:-}" ] || m[$c]=1; done
	_list m
}

# whole_cores CPULIST: every CPU's SMT siblings are in the list too.
whole_cores() {
	local c sib
	for c in $(cpus "$1"); do
		read -r sib <"$SYS_CPU/cpu$c/topology/thread_siblings_list"
		subset "$sib" "$1" || return 1
	done
}

# one_per_core CPULIST: no two CPUs are SMT siblings.
one_per_core() {
	local -A seen
	local c k
	for c in $(cpus "$1"); do
		k=$(core_of "$c")
		[ -z "${seen[$k]:-}" ] || return 1
		seen[$k]=1
	done
}

# allowed_n POD NAME N: the container's init may run on exactly N CPUs.
allowed_n() {
	local a
	a=$(allowed "$1" "$2") || return 1
	[ "$(ncpus "$a")" = "$3" ]
}

# mems_are POD NAME NODES: the container's cpuset.mems and the kernel's
# Mems_allowed_list of its init are both NODES.
mems_are() {
	[ "$(cg_file "$1" "$2" cpuset.mems)" = "$3" ] && [ "$(mems_allowed "$1" "$2")" = "$3" ]
}

# allowed POD NAME / mems_allowed POD NAME: lib.sh's, read with builtins.
allowed() { _status_field "$1" "$2" Cpus_allowed_list; }
mems_allowed() { _status_field "$1" "$2" Mems_allowed_list; }
_status_field() {
	local pid k v
	pid=$(pid_of "$1" "$2")
	[ -n "$pid" ] && [ "$pid" != 0 ] || return 1
	while read -r k v; do
		[ "$k" = "$3:" ] && { echo "$v"; return 0; }
	done <"/proc/$pid/status"
	return 1
}

# write_errors: the daemon's failed cgroup writes so far.
write_errors() { jq -r .counters.cgroup_write_errors "$IT_WORK/state/status.json"; }

# --- faster stand-ins for lib.sh helpers ---
# Under TCG every runc or jq start costs about half a second (Go runtime,
# jq's builtins), and the helpers below run inside wait_for loops. They
# read the same facts without starting either: the container's init pid
# from runc's state file (runc keeps "init_process_pid" there for as long
# as the container exists) and its state from /proc.

# IDs are hashes (lib.sh's cid and uid fork three programs each): kept
# once per name, in this shell, so checks cost no forks of programs.
declare -A VM_CID VM_UID
eval "_lib_cid() $(declare -f cid | tail -n +2)"
eval "_lib_uid() $(declare -f uid | tail -n +2)"
cid() { if [ -n "${VM_CID[$1]:-}" ]; then echo "${VM_CID[$1]}"; else _lib_cid "$1"; fi; }
uid() { if [ -n "${VM_UID[$1]:-}" ]; then echo "${VM_UID[$1]}"; else _lib_uid "$1"; fi; }
# remember POD NAME: computes both IDs once, in this shell.
remember() {
	[ -n "${VM_CID["$1/$2"]:-}" ] || VM_CID["$1/$2"]=$(_lib_cid "$1/$2")
	[ -n "${VM_CID["$1/POD"]:-}" ] || VM_CID["$1/POD"]=$(_lib_cid "$1/POD")
	[ -n "${VM_UID[$1]:-}" ] || VM_UID[$1]=$(_lib_uid "$1")
}
eval "_lib_container_start() $(declare -f container_start | tail -n +2)"
container_start() {
	remember "$1" "$2"
	_lib_container_start "$@"
}

# starts "POD NAME QOS TYPE MILLI [ANN [CPUS]]"...: container_starts at
# once, for containers whose order does not matter (each costs seconds
# under TCG, mostly runc's Go starts); "-" is an empty argument. Fails
# if one failed.
starts() {
	local a x w pids=() p r=0
	for a in "$@"; do
		w=()
		for x in $a; do [ "$x" = - ] && x=; w+=("$x"); done
		remember "${w[0]}" "${w[1]}"
		_lib_container_start "${w[@]}" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || r=1; done
	return $r
}

pid_of() {
	local id=${VM_CID["$1/$2"]:-} line pid
	[ -n "$id" ] || id=$(cid "$1/$2")
	[ -r "$IT_WORK/runc/$id/state.json" ] || return 0
	read -r line <"$IT_WORK/runc/$id/state.json"
	case $line in *'"init_process_pid":'*) ;; *) return 0 ;; esac
	pid=${line#*\"init_process_pid\":}
	echo "${pid%%[!0-9]*}"
}

# status_of POD NAME: running, stopped (init gone or a zombie) or empty
# (no such container).
status_of() {
	local pid st
	pid=$(pid_of "$1" "$2")
	[ -n "$pid" ] || return 0
	st=
	read -r st <"/proc/$pid/stat" 2>/dev/null
	st=${st##*) }
	st=${st%% *}
	case $st in
	"" | Z | X) echo stopped ;;
	*) echo running ;;
	esac
}

# container_stop POD NAME: what `runc kill KILL` and `runc delete` do to
# the kernel (every task killed, the cgroup removed, which is the event
# the daemon sees) without their two Go starts, seconds under TCG; then
# runc's state dir of the container, which only runc itself reads.
container_stop() {
	local id=${VM_CID["$1/$2"]:-} b cg
	[ -n "$id" ] || id=$(cid "$1/$2")
	b=${IT_BUNDLES:-$IT_WORK/bundles}/$id
	cg=$(sed -n 's/.*"cgroupsPath": "\([^"]*\)".*/\1/p' "$b/config.json" 2>/dev/null)
	if [ -n "$cg" ] && [ -d "$IT_CPUSET$cg" ]; then
		echo 1 >"$IT_CPUSET$cg/cgroup.kill"
		wait_for 10 grep -qx 'populated 0' "$IT_CPUSET$cg/cgroup.events"
		wait_for 5 rmdir "$IT_CPUSET$cg"
	fi
	rm -rf "$IT_WORK/runc/$id" "$b"
}

# vm_cleanup: it_cleanup in one stroke: cgroup.kill on the private
# subtree (v2) instead of two runc calls per container, then the runc
# state, cgroups, pins and work dir.
vm_cleanup() {
	[ -n "${IT_KEEP:-}" ] && { daemon_stop; echo "# kept $IT_WORK"; return; }
	daemon_stop 2>/dev/null
	if [ -d "$IT_CPUSET$IT_CG" ]; then
		echo 1 >"$IT_CPUSET$IT_CG/cgroup.kill"
		wait_for 10 grep -qx 'populated 0' "$IT_CPUSET$IT_CG/cgroup.events"
		find "$IT_CPUSET$IT_CG" -depth -type d -exec rmdir {} + 2>/dev/null
	fi
	rm -rf "$IT_PIN" "$IT_WORK" "$VM_FIFO"
}

# vm_done: it_done, and on failure the daemon's last words.
vm_done() {
	if [ "$IT_FAILED" -ne 0 ] && [ -f "$IT_WORK/daemon.log" ]; then
		tail -n 40 "$IT_WORK/daemon.log" | sed 's/^/# daemon: /'
	fi
	it_done
}
