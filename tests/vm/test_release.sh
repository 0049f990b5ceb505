#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cpusetd --release on pure cgroup v2 (user/release/release.h), after a
# kill -9: the Burstable QoS slice, which the planner narrowed to the
# shared pool, inherits again ("", or every CPU where the kernel refuses
# ""), so a Burstable pod made afterwards gets every CPU; the shared
# container runs on every CPU; the integer container keeps its CPUs (its
# pod held them for it: they are made its own before the pod widens) and
# gets its CFS quota back; a second release changes nothing. The v1 side,
# host isolation and the refusals are tests/integration/test_release.sh.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
. tests/vm/vmlib.sh
vm_start release kubepods
ONLINE=$(cat "$SYS_CPU/online")

own() { local v; read -r v <"$IT_CPUSET$1/cpuset.cpus"; echo "$v"; }
eff() { local v; read -r v <"$IT_CPUSET$1/cpuset.cpus.effective"; echo "$v"; }
ctr() { cg_path "$1" "$(uid "$2")" "$(cid "$2/$3")"; }		# QOS POD NAME
inherits() { local o; o=$(own "$1"); [ -z "$o" ] || [ "$o" = "$ONLINE" ]; }
SLICE=$ROOT/burstable
release() {
	"$IT_OUT/cpusetd" --release --config "$IT_WORK/empty.conf" --kubepods-root "$ROOT" \
		--bundle-path "$IT_WORK/bundles/{id}/config.json" \
		--state-dir "$IT_WORK/state" --pin-dir "$IT_PIN" --kubelet-pods-dir "$IT_WORK/pods" \
		--textfile "" >"$IT_WORK/release.out" 2>&1
	RC=$?
	grep -v ': info: ' "$IT_WORK/release.out" | cut -c1-300 | sed 's/^/#   /'
}

check "daemon starts" daemon_start "$ROOT"
starts "b1 app burstable container 500" "g1 app guaranteed container 4000"
G1=$(ctr guaranteed g1 app)
B1=$(ctr burstable b1 app)
check "g1/app holds 4 CPUs" wait_for 60 allowed_n g1 app 4
EX=$(allowed g1 app)
POOL=$(minus "$ONLINE" "$EX")
check "the Burstable slice holds the pool ($POOL), b1/app runs there" \
	wait_for 30 eval '[ "$(own "$SLICE")" = "$POOL" ] && [ "$(allowed b1 app)" = "$POOL" ]'
check "g1/app's quota is lifted" wait_for 30 eval '[ "$(cat "$IT_CPUSET$G1/cpu.max")" = "max 100000" ]'
daemon_kill9

release
check "--release after kill -9: exit 0" test "$RC" = 0
check "... its summary: the slice and g1's pod widened, g1/app kept, its quota back" \
	grep -q "given every CPU: 1 QoS slices, 1 pods, 0 containers; exclusive containers keeping their CPUs until they end: 1 (their sets made their own first); CFS quotas restored: 1 " "$IT_WORK/release.out"
check "the Burstable slice inherits again, and runs on every CPU" \
	eval 'inherits "$SLICE" && [ "$(eff "$SLICE")" = "$ONLINE" ]'
check "b1/app runs on every CPU" test "$(allowed b1 app)" = "$ONLINE"
check "g1/app keeps its CPUs ($EX), now its own set" \
	eval '[ "$(allowed g1 app)" = "$EX" ] && [ "$(own "$G1")" = "$EX" ]'
check "g1's pod inherits again" inherits "${G1%/*}"
check "g1/app's CFS quota is back (400000 100000)" test "$(cat "$IT_CPUSET$G1/cpu.max")" = "400000 100000"
NEW=$SLICE/pod-new-$$
it_v2_mkdir "$IT_CPUSET$NEW" && mkdir "$IT_CPUSET$NEW/ctr"	# as kubelet and runc make them
check "a Burstable pod made now gets every CPU" \
	eval '[ "$(eff "$NEW")" = "$ONLINE" ] && [ "$(eff "$NEW/ctr")" = "$ONLINE" ]'
rmdir "$IT_CPUSET$NEW/ctr" "$IT_CPUSET$NEW"
release
check "a second --release: exit 0, nothing to give back" \
	eval '[ "$RC" = 0 ] && grep -q "release: nothing to give back" "$IT_WORK/release.out"'

vm_done
