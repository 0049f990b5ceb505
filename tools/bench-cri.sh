#!/bin/bash
# Container create+start through the CRI, on the containerd lane's private
# containerd (tests/containerd/lib.sh; CRI_CONTAINERD, default 2.x): N
# containers (default 20), one after another in one Burstable pod, each
# CreateContainer and StartContainer timed by the client (cri.py: the
# round trip over containerd's gRPC socket). Two rounds in one run, each
# in a fresh pod: without cpusetd, then with cpusetd in its BPF-only mode.
# The baseline for issue 23's figure (the added latency of cpusetd's NRI
# plugin at CreateContainer). Root; `make deps` for 1.7 and 2.x.
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
		printf '%-14s %-7s p50 %7.1f  p90 %7.1f  max %7.1f ms\n' "$name" "${f%_ms}" \
			"$(jq ".$f" <<<"$out" | pct 50)" "$(jq ".$f" <<<"$out" | pct 90)" "$(jq ".$f" <<<"$out" | pct 100)"
	done
	printf '%-14s %-7s p50 %7.1f  p90 %7.1f  max %7.1f ms; %d containers in %d ms\n' "$name" both \
		"$(jq '.create_ms + .start_ms' <<<"$out" | pct 50)" "$(jq '.create_ms + .start_ms' <<<"$out" | pct 90)" \
		"$(jq '.create_ms + .start_ms' <<<"$out" | pct 100)" "$N" $(((t1 - t0) / 1000000))
}

echo "# containerd $CRI_VERSION, runc $(runc --version | awk 'NR == 1 {print $3}'), $N containers per round, $(nproc) CPUs"
round no-cpusetd
must daemon_start
round cpusetd-bpf
daemon_stop
