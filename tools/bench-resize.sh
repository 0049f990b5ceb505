#!/bin/sh
# make bench: the resize benchmark for N = 10, 100 and 500 shared containers.
set -eu
out=${1:-build}
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
for n in 10 100 500; do
	"$out/bench-resize" -d "$out" -n "$n" -r "${ROUNDS:-50}"
done
