# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmarks that run the daemon beside a load
# (telemetry.sh, write-hook.sh). Source it after setting:
#   out  the build dir;  work  a scratch dir;  pin  a bpffs pin dir that
#   is not the node's. The daemon gets a kubepods root that does not
#   exist: it places nothing and touches no cgroup, while its BPF programs
#   run as on a node.
# Optional: BENCH_KUBEPODS_ROOT (a kubepods root the caller built, the
#   daemon then manages what is under it), BENCH_CONF (the config file's
#   text, e.g. "telemetry = full").

BENCH_DAEMON=

# bench_daemon_on READY_PATTERN [cpusetd options...]: starts the daemon
# and waits (5 s at most) for READY_PATTERN in its log; exits the script
# with the log on stderr when it does not come.
bench_daemon_on() {
	local ready=$1
	shift
	printf '%s\n' "${BENCH_CONF:-}" >"$work/empty.conf"
	"$out/cpusetd" --config "$work/empty.conf" \
		--kubepods-root "${BENCH_KUBEPODS_ROOT:-/cpusetd-bench-none}" \
		--state-dir "$work/state" --pin-dir "$pin" --log-level info "$@" \
		>"$work/daemon.log" 2>&1 &
	BENCH_DAEMON=$!
	for _ in $(seq 250); do
		grep -q "$ready" "$work/daemon.log" && return 0
		sleep 0.02
	done
	echo "${0##*/}: the daemon did not get to '$ready':" >&2
	cat "$work/daemon.log" >&2
	exit 1
}

# bench_daemon_off: stops it (also safe when none runs, for EXIT traps).
bench_daemon_off() {
	[ -n "$BENCH_DAEMON" ] || return 0
	kill "$BENCH_DAEMON" 2>/dev/null
	wait "$BENCH_DAEMON" 2>/dev/null
	BENCH_DAEMON=
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# bench_busy_ticks: CPU time the whole machine spent busy since boot, in
# clock ticks (/proc/stat "cpu": user nice system irq softirq; guest time
# is inside user already; idle, iowait and steal are not busy here).
bench_busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }

# bench_steal_ticks: time the hypervisor gave to others, in clock ticks.
bench_steal_ticks() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }

# bench_children_ticks: CPU time of this shell's finished (waited-for)
# descendants, in clock ticks (/proc/PID/stat cutime + cstime): what the
# benchmark itself ran, to tell it from the rest of the machine.
bench_children_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
