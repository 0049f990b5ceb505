#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs the libFuzzer harnesses built by `make fuzz-build`, one after the
# other (single job each: the fuzzer should not starve other tests).
#   tests/fuzz/run.sh [BUILD_DIR [SECONDS [NAME...]]]
# NAME defaults to every BUILD_DIR/fuzz/fuzz_* binary. Each runs on
# BUILD_DIR/fuzz/corpus/NAME, seeded from tests/fuzz/corpus/NAME (the tree
# stays clean; what the fuzzer learns there is reused next time), with
# tests/fuzz/NAME.dict when present. Prints one TAP line per harness:
#   ok - fuzz NAME: N execs in S s (E/s), cov C, ft F, corpus U units / SIZE
#   not ok - fuzz NAME: <crash/leak/timeout/oom file> (log: <file>)
# and exits 1 when any harness failed.
set -u
out=${1:-build}
secs=${2:-60}
shift $(($# > 2 ? 2 : $#))
cd "$(dirname "$0")/../.."
fuzz_dir=$out/fuzz
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for b in "$fuzz_dir"/fuzz_*; do
		[ -x "$b" ] && names+=("${b##*/fuzz_}")
	done
fi
if [ ${#names[@]} -eq 0 ]; then
	echo "not ok - fuzz: no harness in $fuzz_dir (make fuzz-build)"
	exit 1
fi

# Last value of "KEY: V" on libFuzzer's final "DONE" (or last status) line.
field() {
	grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse|RELOAD)' "$2" | tail -n1 |
		sed -n "s|.* $1: \([^ ]*\).*|\1|p"
}

failed=0
for name in "${names[@]}"; do
	bin=$fuzz_dir/fuzz_$name
	corpus=$fuzz_dir/corpus/$name
	art=$fuzz_dir/artifacts/$name
	log=$fuzz_dir/logs/$name.log
	if [ ! -x "$bin" ]; then
		echo "not ok - fuzz $name: $bin not built (make fuzz-build)"
		failed=1
		continue
	fi
	mkdir -p "$corpus" "$art" "${log%/*}"
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$corpus/"
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=("-dict=tests/fuzz/$name.dict")
	start=$(date +%s)
	"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$art/" "${dict[@]}" "$corpus" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	if [ $rc -ne 0 ]; then
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n1)
		echo "not ok - fuzz $name: ${crash:-exit $rc} (log: $log)"
		failed=1
		continue
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	corp=$(field corp "$log")
	echo "ok - fuzz $name: ${execs:-?} execs in $took s ($(field exec/s "$log")/s)," \
		"cov $(field cov "$log"), ft $(field ft "$log"), corpus ${corp%%/*} units / ${corp#*/}"
done
exit $failed
