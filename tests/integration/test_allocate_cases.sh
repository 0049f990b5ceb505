#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every allocation case transcribed from kubelet's and Koordinator's unit
# tests (tests/fixtures/k8s-cases.jsonl, koord-cases.jsonl) through
# `cpusetctl allocate`, and the tool's own contract: one line per failing
# case, a closing "N passed, M failed", exit 1 when any case fails.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
CTL=$IT_OUT/cpusetctl
FIX=${CPUSETD_FIXTURES:-tests/fixtures}
. tests/integration/lib.sh	# check/ok/not_ok only: no cgroups, no root needed

for f in k8s-cases koord-cases; do
	total=$(grep -c . "$FIX/$f.jsonl")
	out=$("$CTL" allocate --cases "$FIX/$f.jsonl" --topologies "$FIX/k8s-topologies"); rc=$?
	grep '^FAIL' <<<"$out" | sed 's/^/# /'
	check "$f: all $total cases pass" test "$(tail -n1 <<<"$out")" = "$total passed, 0 failed"
	check "$f: exit 0" test "$rc" -eq 0
done

# A case whose expectation is wrong must fail, and say which and why.
tmp=$(mktemp)
head -n1 "$FIX/k8s-cases.jsonl" | jq -c '.id = "wrong-1" | .expect = "0-3" | del(.error)' >"$tmp"
grep '"id": "koord-000"' "$FIX/koord-cases.jsonl" | jq -c '.id = "wrong-2" | .expect = "6-7"' >>"$tmp"
out=$("$CTL" allocate --cases "$tmp" --topologies "$FIX/k8s-topologies"); rc=$?
check "wrong expectations: exit 1" test "$rc" -eq 1
check "wrong expectations: one FAIL line each" test "$(grep -c '^FAIL wrong-' <<<"$out")" -eq 2
check "wrong expectations: closing line" test "$(tail -n1 <<<"$out")" = "0 passed, 2 failed"
echo '{"id": "bad", "topology": "noSuchTopology", "request": 1}' >"$tmp"
out=$("$CTL" allocate --cases "$tmp" --topologies "$FIX/k8s-topologies"); rc=$?
check "unknown topology: a failing case, not a crash" \
	bash -c "[ $rc -eq 1 ] && grep -q '^FAIL bad: bad case: cannot build its topology' <<<'$out'"
"$CTL" allocate >/dev/null 2>&1
check "no --cases: usage error (exit 2)" test $? -eq 2
rm -f "$tmp"
it_done
