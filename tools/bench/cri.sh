#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Container create+start through the CRI, on the containerd lane's private
# containerd (tests/containerd/lib.sh; CRI_CONTAINERD, default 2.x): N
# containers per kind (default 20), one after another, each CreateContainer
# and StartContainer timed by the client (cri.py: the round trip over
# containerd's gRPC socket). Four kinds: without cpusetd, with cpusetd in
# its BPF-only mode (nri = off), with a null NRI plugin (build/nri-probe:
# the floor any plugin pays), and with cpusetd as the runtime's NRI
# plugin (1.7 and 2.x: placing at CreateContainer). They take turns in
# BLOCKS blocks (default 5) of N/BLOCKS containers, each block in a fresh
# Burstable pod removed before the next, so that what drifts during a run
# (the host's load, the runtime's caches) falls on every kind alike. The
# last lines are what the plugin adds: to CreateContainer, the one call it
# is in the path of, and to create+start, as p50 and p99 of all samples
# less those without cpusetd (and less those with the null plugin), and
# as the median of the blocks' p50 differences; then cpusetd's own time per CreateContainer, from its
# cpusetd_nri_request_seconds histogram. Root; `make deps` for 1.7 and 2.x.
#   [CRI_CONTAINERD=1.6|1.7|2.x] [BLOCKS=5] tools/bench/cri.sh [BUILD_DIR] [N]
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
N=${2:-20}
BLOCKS=${BLOCKS:-5}
CRI_CONTAINERD=${CRI_CONTAINERD:-2.x}
. tests/integration/lib.sh
. tests/containerd/lib.sh

cri_setup || exit 1
must() { "$@" && return 0; echo "bench-cri: $* failed; containerd log:" >&2; tail -n 20 "$IT_WORK/containerd.log" >&2; exit 1; }
must cri_build_image
must cri_containerd_start
must cri_image_import
[ $((N % BLOCKS)) = 0 ] || { echo "bench-cri: N ($N) is not a multiple of BLOCKS ($BLOCKS)" >&2; exit 1; }
PER=$((N / BLOCKS))
S=$IT_WORK/samples
mkdir -p "$S"

# pct P: the P-th percentile (nearest rank) of the numbers on stdin.
pct() { sort -g | awk -v p="$1" '{ a[NR] = $1 } END { i = int((NR * p + 99) / 100); print a[i < 1 ? 1 : i] }'; }

# block KIND B: PER containers of kind KIND in a new pod, removed after;
# their create and create+start times appended to $S/KIND.create, .both,
# and the block's own p50s to $S/KIND.blocks ("B create both").
block() {
	local kind=$1 b=$2 pod="$1-$2" out
	must run_pod "$pod" burstable
	out=$(cri run-container "$pod" app --image "$CRI_IMAGE" --attempts "$PER" --cpu-request 100 --cpu-limit 200)
	jq -r --arg p "$pod" '"\($p) app \(.id)"' <<<"$out" >>"$CRI_IDS"
	[ "$(jq -s '[.[] | select(.started)] | length' <<<"$out")" = "$PER" ] ||
		{ echo "bench-cri: $pod: not all $PER started" >&2; jq -c 'select(.error != "")' <<<"$out" >&2; exit 1; }
	jq '.create_ms' <<<"$out" >>"$S/$kind.create"
	jq '.create_ms + .start_ms' <<<"$out" >>"$S/$kind.both"
	jq '.start_ms' <<<"$out" >>"$S/$kind.start"
	echo "$b $(jq '.create_ms' <<<"$out" | pct 50) $(jq '.create_ms + .start_ms' <<<"$out" | pct 50)" >>"$S/$kind.blocks"
	# Gone before the next block: its containers would be in the next
	# daemon's Synchronize, and the runtime's updates of their records
	# (a runc update each) would run during that block.
	must remove_pod "$pod" burstable
}

status() { jq -r "$1" "$IT_WORK/cpusetd/status.json"; }
prom_created_count() { sed -n 's/^cpusetd_nri_request_seconds_count{method="CreateContainer"} //p' "$CRI_PROM"; }
echo "nri = off" >"$IT_WORK/bpf.conf"
[ -z "$CRI_NRI_SOCK" ] || echo "nri_socket = $CRI_NRI_SOCK" >"$IT_WORK/nri.conf"
placed=0 without=0 updates=0
echo "# containerd $CRI_VERSION, runc $(runc --version | awk 'NR == 1 {print $3}'), $N containers per kind in $BLOCKS blocks, $(nproc) CPUs"
for b in $(seq "$BLOCKS"); do
	block no-cpusetd "$b"
	must daemon_start "$IT_WORK/bpf.conf" --log-level info	# as shipped
	block cpusetd-bpf "$b"
	daemon_stop
	[ -n "$CRI_NRI_SOCK" ] || continue
	# The floor of any NRI plugin: ours (build/nri-probe, user/nri's
	# wire) answering every request at once, with no decision and no
	# adjustment. What containerd's NRI adaptation and the round trip
	# cost, cpusetd or not.
	"$IT_OUT/nri-probe" --socket "$CRI_NRI_SOCK" --name null --index 98 >"$IT_WORK/probe.log" 2>&1 &
	probe=$!
	must wait_for 15 grep -q "^synchronize" "$IT_WORK/probe.log"
	block null-plugin "$b"
	kill "$probe"
	wait "$probe" 2>/dev/null
	must daemon_start "$IT_WORK/nri.conf" --log-level info
	must wait_for 15 eval '[ "$(status .daemon.mode)" = nri+bpf ]'
	block cpusetd-nri "$b"
	# cpusetd's own time per CreateContainer (its .prom histogram, the
	# next export after the block): cumulative counts by bound, summed
	# over the blocks.
	must wait_for 5 eval '[ "$(prom_created_count)" = "$(status .counters.nri_placed_at_create)" ]'
	sed -n 's/^cpusetd_nri_request_seconds_bucket{method="CreateContainer",le="\([^"]*\)"} \([0-9]*\)$/\1 \2/p' \
		"$CRI_PROM" >>"$S/served"
	placed=$((placed + $(status .counters.nri_placed_at_create)))
	without=$((without + $(status .counters.created_without_nri)))
	updates=$((updates + $(status .counters.nri_updates_sent)))
	daemon_stop
done

for kind in no-cpusetd cpusetd-bpf null-plugin cpusetd-nri; do
	[ -s "$S/$kind.create" ] || continue
	printf '%-12s create p50 %6.1f p99 %6.1f   start p50 %6.1f   create+start p50 %6.1f p99 %6.1f max %6.1f ms\n' "$kind" \
		"$(pct 50 <"$S/$kind.create")" "$(pct 99 <"$S/$kind.create")" "$(pct 50 <"$S/$kind.start")" \
		"$(pct 50 <"$S/$kind.both")" "$(pct 99 <"$S/$kind.both")" "$(pct 100 <"$S/$kind.both")"
done
[ -n "$CRI_NRI_SOCK" ] || exit 0
echo "# NRI blocks: placed at CreateContainer $placed of $N, created without NRI $without, updates sent to the runtime $updates"
[ "$placed" = "$N" ] && [ "$without" = 0 ] ||
	{ echo "bench-cri: not every container of the NRI blocks went through the plugin" >&2; exit 1; }
# added KIND BASE F COL: KIND's p50 and p99 of all samples less BASE's,
# and the median of the blocks' p50 differences (column COL of .blocks).
added() {
	local kind=$1 base=$2 f=$3 col=$4 blk
	blk=$(paste -d ' ' "$S/$kind.blocks" "$S/$base.blocks" |
		awk -v c="$col" '{ print $c - $(c + 3) }' | pct 50)
	awk -v a="$(pct 50 <"$S/$kind.$f")" -v b="$(pct 50 <"$S/$base.$f")" \
		-v c="$(pct 99 <"$S/$kind.$f")" -v d="$(pct 99 <"$S/$base.$f")" -v m="$blk" -v f="$f" \
		-v w="$kind vs $base" \
		'BEGIN { printf "%-26s adds to %-13s p50 %+.1f ms, p99 %+.1f ms; median of the blocks'"'"' p50 differences %+.1f ms\n", w, f == "both" ? "create+start:" : "create:", a - b, c - d, m }'
}
added cpusetd-nri no-cpusetd create 2
added cpusetd-nri no-cpusetd both 3
added null-plugin no-cpusetd create 2
added cpusetd-nri null-plugin create 2
added cpusetd-nri null-plugin both 3
# The smallest bound holding 50 % and 99 % of the requests.
awk '{ n[$1] += $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
	END { total = n["+Inf"]; p50 = p99 = "";
		for (i = 1; i <= k; i++) {
			if (p50 == "" && n[order[i]] >= 0.5 * total) p50 = order[i]
			if (p99 == "" && n[order[i]] >= 0.99 * total) p99 = order[i]
		}
		printf "cpusetd'"'"'s own time per CreateContainer (cpusetd_nri_request_seconds, %d requests): p50 <= %s s, p99 <= %s s (target p99 <= 200 us)\n", total, p50, p99 }' "$S/served"
echo "# targets for create+start: p50 <= 1 ms, p99 <= 5 ms"
