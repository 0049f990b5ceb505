#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# BPF telemetry on 16 CPUs in 4 NUMA nodes: the per-CPU maps and the
# Prometheus export name the right CPU and NUMA node.
#   - cpu_node[cpu] is the CPU's NUMA node (sysfs), for all 16;
#   - a busy loop pinned to one CPU moves that CPU's busy_ns, nobody else's
#     by as much; an integer container owns exactly its CPUs in cpu_owner;
#   - a noisy neighbour on one of the owned CPUs shows up as foreign_ns on
#     that CPU only;
#   - a task moved from a CPU of node 0 to one of node 3 counts a NUMA
#     migration for its container, one moved within a node does not;
#   - the .prom file has per-CPU series for 16 CPUs and the same owner,
#     foreign and NUMA-migration figures.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start telemetry kubepods
TEL=$IT_PIN/v$IT_LAYOUT
PROM=$IT_WORK/prom/cpusetd.prom

dump() { bpftool -j map dump pinned "$TEL/$1" 2>/dev/null; }
cpu_stat() { dump cpu_stats | jq -r --argjson c "$1" ".[] | select(.formatted.key == \$c) | .formatted.value.$2"; }
cg_stat() { dump cgroup_stats | jq -r --argjson id "$1" "[.[] | select(.formatted.key == \$id) | .formatted.value.$2][0] // 0"; }
cg_dir() { echo "$IT_CPUSET$(jq -r .linux.cgroupsPath "$IT_WORK/bundles/$(cid "$1/$2")/config.json")"; }
cg_id() { stat -c %i "$(cg_dir "$1" "$2")"; }
gt() { [ "${1:-0}" -gt "${2:-0}" ]; }
cg_stat_gt() { gt "$(cg_stat "$1" "$2")" "$3"; }
prom_has() { grep -Eq -- "$1" "$PROM"; }
# busy POD: a busy loop in the container; prints nothing.
busy() { $IT_RUNC exec -d "$(cid "$1/app")" sh -c 'while :; do :; done'; }
busy_pid() { grep -vx "$(pid_of "$1" app)" "$(cg_dir "$1" app)/cgroup.procs" | head -n1; }

# cpu_node_right: all 16 entries match sysfs.
cpu_node_right() {
	local want have c
	want=$(for c in $(cpus "$(cat "$SYS_CPU/online")"); do echo "$c $(node_of "$c")"; done)
	have=$(dump cpu_node | jq -r '.[] | select(.formatted.key < 16) | "\(.formatted.key) \(.formatted.value.node)"')
	[ "$want" = "$have" ] || { it_log "cpu_node: $(tr '\n' ' ' <<<"$have")"; return 1; }
}

# owners_are CPULIST CGID: cpu_owner is CGID on exactly those CPUs, 0 elsewhere.
owners_are() {
	local want have c
	want=$(for c in $(cpus 0-15); do
		if subset "$c" "$1"; then echo "$c $2"; else echo "$c 0"; fi
	done)
	have=$(dump cpu_owner | jq -r '.[] | select(.formatted.key < 16) | "\(.formatted.key) \(.formatted.value.cgroup_id)"')
	[ "$want" = "$have" ] || { it_log "cpu_owner: $(tr '\n' ' ' <<<"$have")"; return 1; }
}

# foreign_delta SINCE: "cpu seconds" of foreign_ns grown since the dump SINCE.
foreign_delta() {
	jq -r --slurpfile a <(echo "$1") --slurpfile b <(dump cpu_stats) -n '
		[$a[0][] | select(.formatted.key < 16) | .formatted.value.foreign_ns] as $old |
		$b[0][] | select(.formatted.key < 16) |
		"\(.formatted.key) \((.formatted.value.foreign_ns - $old[.formatted.key]) / 1e9)"'
}
# foreign_on CPU SINCE: CPU got over 0.3 s of foreign time since SINCE.
foreign_on() { foreign_delta "$2" | awk -v c="$1" '$1 == c && $2 > 0.3 { f = 1 } END { exit !f }'; }
# foreign_only_on CPU SINCE: and every other CPU less than a tenth of it.
foreign_only_on() {
	foreign_delta "$2" | awk -v c="$1" '
		{ d[$1] = $2 } END {
			if (NR != 16) { print "# " NR " CPUs in cpu_stats"; exit 1 }
			for (k in d) if (k != c && d[k] > d[c] / 10) { print "# CPU " k ": " d[k] " s"; bad = 1 }
			exit bad }'
}

# busy_grew CPU SINCE SECONDS: CPU's busy_ns grew by at least SECONDS
# since the dump SINCE.
busy_grew() {
	local d
	d=$(jq -r --slurpfile a <(echo "$2") --slurpfile b <(dump cpu_stats) --argjson c "$1" -n '
		([$b[0][] | select(.formatted.key == $c) | .formatted.value.busy_ns][0] -
		 [$a[0][] | select(.formatted.key == $c) | .formatted.value.busy_ns][0]) / 1e9')
	awk -v d="$d" -v min="$3" 'BEGIN { exit !(d + 0 >= min + 0) }' ||
		{ it_log "CPU $1 busy for $d s"; return 1; }
}

# all: the shared container s1's series are checked below too
check "daemon starts with telemetry" daemon_start "$ROOT" --export-interval 1 --export-containers all \
	--telemetry full
check "telemetry attached" wait_for 10 grep -q "telemetry attached via" "$IT_WORK/daemon.log"
check "cpu_node: every CPU's NUMA node, as sysfs says" cpu_node_right

# --- a busy CPU: its own counters, nobody else's ---
before=$(dump cpu_stats)
taskset -c 13 timeout 2 sh -c 'while :; do :; done'
check "a 2 s loop pinned to CPU 13: CPU 13 busy for at least 1.5 s of it" busy_grew 13 "$before" 1.5

# --- an integer container: owner of exactly its CPUs ---
container_start s1 app burstable container 500
container_start g1 app guaranteed container 2000
check "integer container placed" wait_for 10 allowed_n g1 app 2
G1=$(cg_id g1 app); S1=$(cg_id s1 app)
OWN=$(allowed g1 app)
check "cpu_owner: the integer container on its 2 CPUs ($OWN), 0 on the other 14" wait_for 10 owners_are "$OWN" "$G1"

# --- a noisy neighbour on the owner's first CPU ---
# From here on the test's own processes and the daemon stay off the owned
# CPUs, so that the only foreign time there is the neighbour's.
others=$(minus 0-15 "$OWN")
taskset -pc "$others" $$ >/dev/null
taskset -apc "$others" "$IT_DAEMON" >/dev/null
victim=$(cpus "$OWN" | head -n1)
NOISY=$IT_CPUSET$IT_CG/noisy
mkdir -p "$NOISY"
before=$(dump cpu_stats)
sh -c "echo \$\$ >$NOISY/cgroup.procs; exec taskset -c $victim sh -c 'while :; do :; done'" &
NOISY_PID=$!
check "foreign time on CPU $victim grows" wait_for 60 foreign_on "$victim" "$before"
kill "$NOISY_PID"; wait "$NOISY_PID" 2>/dev/null
check "... and on no other CPU" foreign_only_on "$victim" "$before"

# --- NUMA migrations of a shared container's task ---
# on_cpu PID CPU: the task last ran on CPU (field 39 of /proc/PID/stat).
on_cpu() { [ "$(cut -d' ' -f39 "/proc/$1/stat")" = "$2" ]; }
busy s1
wait_for 10 test -n "$(busy_pid s1)"
BP=$(busy_pid s1)
# Two nodes the integer container is not on: CPUs A1, A2 of one, B1, B2 of the other.
read -r na nb < <(for n in 0 1 2 3; do [ "$n" = "$(nodes_of "$OWN")" ] || echo "$n"; done | head -n2 | tr '\n' ' ')
read -r A1 A2 < <(cpus "$(cat /sys/devices/system/node/node$na/cpulist)" | head -n2 | tr '\n' ' ')
read -r B1 B2 < <(cpus "$(cat /sys/devices/system/node/node$nb/cpulist)" | head -n2 | tr '\n' ' ')
migrations_are() { [ "$(cg_stat "$S1" numa_migrations)" = "$1" ]; }
taskset -pc "$A1" "$BP" >/dev/null
wait_for 10 on_cpu "$BP" "$A1"
m0=$(cg_stat "$S1" numa_migrations)
taskset -pc "$A2" "$BP" >/dev/null		# within node $na
wait_for 10 on_cpu "$BP" "$A2"
taskset -pc "$B1" "$BP" >/dev/null		# node $na -> node $nb
wait_for 10 on_cpu "$BP" "$B1"
taskset -pc "$B2" "$BP" >/dev/null		# within node $nb
check "the task moved $A1 -> $A2 -> $B1 -> $B2" wait_for 10 on_cpu "$BP" "$B2"
check "one NUMA migration counted for its container (node $na -> $nb)" \
	wait_for 10 migrations_are $((m0 + 1))
kill "$BP" 2>/dev/null

# --- the Prometheus export ---
check "prom: per-CPU context switches for all 16 CPUs" wait_for 10 bash -c \
	"[ \$(grep -Ec '^cpusetd_cpu_context_switches_total\\{cpu=\"([0-9]|1[0-5])\"\\} [0-9]+\$' $PROM) = 16 ]"
for c in $(cpus "$OWN"); do
	check "prom: CPU $c owned by the integer container" \
		prom_has "^cpusetd_cpu_owner_info\\{cpu=\"$c\",owner=\"integer\",k8s_namespace_name=\"demo\",k8s_pod_name=\"g1\",k8s_container_name=\"app\","
done
check "prom: the integer container's mems are its node" \
	prom_has "^cpusetd_container_cpuset_info\\{k8s_namespace_name=\"demo\",k8s_pod_name=\"g1\",k8s_container_name=\"app\",.*cpus=\"$OWN\",mems=\"$(nodes_of "$OWN")\"\\} 1\$"
check "prom: foreign seconds on CPU $victim" wait_for 10 \
	prom_has "^cpusetd_cpu_foreign_seconds_total\\{cpu=\"$victim\"\\} (0\\.[1-9]|[1-9])"
check "prom: the shared container's NUMA migrations" wait_for 10 \
	prom_has '^cpusetd_container_numa_migrations_total\{k8s_namespace_name="demo",k8s_pod_name="s1",k8s_container_name="app",.*\} [1-9]'
check "prom: the shared pool is the other 14 CPUs" \
	prom_has "^cpusetd_pool_info\\{pool=\"shared\",cpus=\"$(minus 0-15 "$OWN")\"\\} 1\$"
daemon_stop

vm_done
