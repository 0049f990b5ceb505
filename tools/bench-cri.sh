#!/bin/bash
# Container create+start through the CRI, on the containerd lane's private
# containerd (tests/containerd/lib.sh; CRI_CONTAINERD, default 2.x): N
# containers (default 20), one after another in one Burstable pod, each
# CreateContainer and StartContainer timed by the client (cri.py: the
# round trip over containerd's gRPC socket). # Three rounds in one run, each in a fresh pod: without cpusetd, with
# cpusetd in its BPF-only mode (nri = off), and with cpusetd as the
# runtime's NRI plugin (1.7 and 2.x: placing at CreateContainer). The last
# line is what the plugin adds to create+start: its p50 and p99 less those
# of the round without cpusetd. Root; `make deps` for 1.7 and 2.x.
#   [CRI_CONTAINERD=1.6|1.7|2.x] tools/bench-cri.sh [BUILD_DIR] [N]
cd "$(dirname "$0")/.." || exit 1
IT_OUT=${1:-build}
N=${2:-20}
CRI_CONTAINERD=${CRI_CONTAINERD:-2.x}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_setup || exit 1
must() { "$@" && return 0; echo "bench-cri: $* failed; containerd log:" >&2; tail -n 20 "$IT_WORK/containerd.log" >&2; exit 1; }
must cri_build_image
must cri_containerd_start
must cri_image_import

# pct P: the P-th percentile (nearest rank) of the numbers on stdin.
pct() { sort -g | awk -v p="$1" '{ a[NR] = $1 } END { i = int((NR * p + 99) / 100); print a[i < 1 ? 1 : i] }'; }

# round NAME: N containers in a new pod; one line of figures.
round() {
	local name=$1 out t0 t1 f
	must run_pod "$name" burstable
	t0=$(date +%s%N)
	out=$(cri run-container "$name" app --image "$CRI_IMAGE" --attempts "$N" --cpu-request 100 --cpu-limit 200)
	t1=$(date +%s%N)
	jq -r --arg p "$name" '"\($p) app \(.id)"' <<<"$out" >>"$CRI_IDS"
	[ "$(jq -s '[.[] | select(.started)] | length' <<<"$out")" = "$N" ] ||
		{ echo "bench-cri: $name: not all $N started" >&2; jq -c 'select(.error != "")' <<<"$out" >&2; exit 1; }
	for f in create_ms start_ms; do
		printf '%-14s %-7s p50 %7.1f  p99 %7.1f  max %7.1f ms\n' "$name" "${f%_ms}" \
			"$(jq ".$f" <<<"$out" | pct 50)" "$(jq ".$f" <<<"$out" | pct 99)" "$(jq ".$f" <<<"$out" | pct 100)"
	done
	P50[$name]=$(jq '.create_ms + .start_ms' <<<"$out" | pct 50)
	P99[$name]=$(jq '.create_ms + .start_ms' <<<"$out" | pct 99)
	printf '%-14s %-7s p50 %7.1f  p99 %7.1f  max %7.1f ms; %d containers in %d ms\n' "$name" both \
		"${P50[$name]}" "${P99[$name]}" \
		"$(jq '.create_ms + .start_ms' <<<"$out" | pct 100)" "$N" $(((t1 - t0) / 1000000))
	# Gone before the next round: its containers would be in the next
	# daemon's Synchronize, and the runtime's updates of their records
	# (a runc update each) would run during that round.
	must remove_pod "$name" burstable
}
declare -A P50 P99

echo "# containerd $CRI_VERSION, runc $(runc --version | awk 'NR == 1 {print $3}'), $N containers per round, $(nproc) CPUs"
round no-cpusetd
echo "nri = off" >"$IT_WORK/bpf.conf"
must daemon_start "$IT_WORK/bpf.conf"
round cpusetd-bpf
daemon_stop
if [ -n "$CRI_NRI_SOCK" ]; then
	echo "nri_socket = $CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
	must daemon_start "$IT_WORK/nri.conf"
	must wait_for 15 eval '[ "$(jq -r .daemon.mode "$IT_WORK/cpusetd/status.json")" = nri+bpf ]'
	round cpusetd-nri
	echo "# placed at CreateContainer: $(jq .counters.nri_placed_at_create "$IT_WORK/cpusetd/status.json")," \
		"created without NRI: $(jq .counters.created_without_nri "$IT_WORK/cpusetd/status.json")," \
		"updates sent to the runtime: $(jq .counters.nri_updates_sent "$IT_WORK/cpusetd/status.json")"
	[ -z "${BENCH_DEBUG:-}" ] || grep -E "NRI|nri|warn|error" "$IT_WORK/daemon.log" | grep -v "shared, cpus" | tail -n 8 >&2
	[ -z "${BENCH_DEBUG:-}" ] || grep -iE "nri|plugin" "$IT_WORK/containerd.log" | tail -n 12 >&2
	daemon_stop
	awk -v a="${P50[cpusetd-nri]}" -v b="${P50[no-cpusetd]}" -v c="${P99[cpusetd-nri]}" -v d="${P99[no-cpusetd]}" \
		'BEGIN { printf "NRI plugin adds to create+start: p50 %+.1f ms, p99 %+.1f ms (targets: 1 ms, 5 ms)\n", a - b, c - d }'
fi
