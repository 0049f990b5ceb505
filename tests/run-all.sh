#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test and ends with one "N passed, M failed, K skipped" line.
#   tests/run-all.sh BUILD_DIR [unit|fuzz|integration|containerd|vm|host]
# (host: every lane but the VM lane, which check-stress leaves out)
# Unit tests are the cmocka binaries in BUILD_DIR/tests; integration tests
# are tests/integration/test_*.sh, which print "ok - ..." / "not ok - ..."
# lines (TAP style). Under CI=true an integration test may not skip. The
# containerd lane (tests/containerd/test_*.sh: a private containerd driven
# through the CRI) prints the same lines, as does the VM lane
# (tests/vm/run.sh; VM_TESTS picks guest tests) for the tests it runs in
# the guest; test_containerd.sh runs on containerd 1.6, 1.7 and 2.x. A
# skip ("ok - # SKIP why", lib.sh it_skip_all) is counted
# apart, never as passed; under CI=true it is a failure.
set -u
out=${1:-build}
what=${2:-all}
cd "$(dirname "$0")/.."
# First what a test killed mid-run left behind (its PID gone): cgroup
# subtrees, pin dirs, its daemon. Root only, like the tests that make them.
[ "$(id -u)" = 0 ] && tests/clean-stale.sh
passed=0
failed=0
skipped=0
failed_names=()
# A TAP skip line, also as the VM lane prefixes it ("ok - vm/test_x: # SKIP").
SKIP_RE='^ok - (vm/[^ ]*: )?(# )?SKIP( |$)'

run_unit() {
	local t log p f
	for t in "$out"/tests/test_*; do
		[ -x "$t" ] || continue
		log=$(mktemp)
		"$t" >"$log" 2>&1
		local rc=$?
		cat "$log"
		p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
		f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0}))
		if [ $rc -ne 0 ] && [ "${f:-0}" = 0 ]; then
			failed=$((failed + 1))	# crashed before reporting
		fi
		[ $rc -ne 0 ] && failed_names+=("$(basename "$t")")
		rm -f "$log"
	done
}

# tally LOG RC NAME: adds LOG's ok / not ok / skip lines to the totals; a
# non-zero RC with no "not ok" line counts as one failure (it died before
# saying). Under CI=true a skip is a failure.
tally() {
	local p f s
	s=$(grep -cE "$SKIP_RE" "$1")
	p=$(($(grep -c '^ok - ' "$1") - s))
	f=$(grep -c '^not ok - ' "$1")
	if [ "${CI:-}" = true ] && [ "$s" -gt 0 ]; then
		echo "not ok - $3: $s skipped under CI=true"
		f=$((f + s)) s=0
		[ "$2" -ne 0 ] || failed_names+=("$3")
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$2" -ne 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $3 exited $2"
		failed=$((failed + 1))
	fi
	[ "$2" -ne 0 ] && failed_names+=("$3")
	rm -f "$1"
}

# run_test NAME [VAR=VALUE...] SCRIPT: one test script (with that
# environment), its log tallied under NAME, its time said.
run_test() {
	local name=$1 log rc t0
	shift
	echo "== $name"
	log=$(mktemp)
	t0=$SECONDS
	timeout 600 env "$@" "$out" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "# $name: $((SECONDS - t0)) s"
	tally "$log" "$rc" "$name"
}

# run_lane GLOB: every test script GLOB matches, each with its log tallied.
run_lane() {
	local t
	for t in $1; do
		[ -f "$t" ] || continue
		run_test "$t" bash "$t"
	done
}

run_integration() { run_lane 'tests/integration/test_*.sh'; }

# The containerd lane: each script once per containerd its header names
# ("# cri-versions: 1.6 1.7 2.x"; 1.6 alone when it names none), as
# CRI_CONTAINERD=<v> (tests/containerd/lib.sh), reported as
# "tests/containerd/test_x.sh[<v>]". CRI_VERSIONS="2.x" keeps only those.
run_containerd() {
	local t v vs
	for t in tests/containerd/test_*.sh; do
		[ -f "$t" ] || continue
		vs=$(sed -n 's/^# cri-versions: *//p' "$t" | head -n1)
		for v in ${vs:-1.6}; do
			case " ${CRI_VERSIONS:-$v} " in *" $v "*) ;; *) continue ;; esac
			run_test "$t[$v]" CRI_CONTAINERD="$v" bash "$t"
		done
	done
}

# The lane's own closing "N passed, M failed, K skipped" line is folded into ours.
run_vm() {
	local log rc
	echo "== tests/vm"
	log=$(mktemp)
	# shellcheck disable=SC2086
	tests/vm/run.sh "$out" ${VM_TESTS:-} 2>&1 | grep -Ev '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tee "$log"
	rc=${PIPESTATUS[0]}
	tally "$log" "$rc" tests/vm/run.sh
}

# Every libFuzzer harness (tests/fuzz, built by make fuzz-build) for
# FUZZ_SECONDS each (10 in make check): a short run on the committed
# corpus catches a parser change that crashes on a known input.
run_fuzz() {
	local log rc
	echo "== tests/fuzz"
	log=$(mktemp)
	tests/fuzz/run.sh "$out" "${FUZZ_SECONDS:-10}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	tally "$log" "$rc" tests/fuzz/run.sh
}

# The code map (user/README.md "Code map"): folder dependencies one way, no call
# or include cycle between files, user headers closed to BPF.
run_layout() {
	local log rc
	echo "== tools/check-layout.py"
	log=$(mktemp)
	python3 tools/check-layout.py "$out" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	tally "$log" "$rc" tools/check-layout.py
}

# timed NAME FN...: runs the lane's functions, then says how long it took
# (the suite's own time is a budget: .ci/run must stay under an hour).
lane_times=()
timed() {
	local name=$1 t0=$SECONDS f
	shift
	for f in "$@"; do "$f"; done
	lane_times+=("$name $((SECONDS - t0)) s")
}

case $what in
unit) timed unit run_unit run_layout ;;
fuzz) timed fuzz run_fuzz ;;
integration) timed integration run_integration ;;
containerd) timed containerd run_containerd ;;
vm) timed vm run_vm ;;
host) timed unit run_unit run_layout; timed fuzz run_fuzz; timed integration run_integration
   timed containerd run_containerd ;;
*) timed unit run_unit run_layout; timed fuzz run_fuzz; timed integration run_integration
   timed containerd run_containerd; timed vm run_vm ;;
esac

echo "# lanes: $(IFS=,; echo "${lane_times[*]}" | sed 's/,/, /g')"

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
