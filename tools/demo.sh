#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make demo: the main job on this machine, with real runc containers.
# Starts cpusetd on a private kubepods root, then shared, integer and
# annotated pods; after every step prints each container's
# Cpus_allowed_list as the kernel reports it and the shared pool.
# Cleans everything up and needs no input.
set -u
cd "$(dirname "$0")/.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_setup demo
ROOT=$IT_CG/kubepods
it_mkroot "$ROOT"

show() {
	local pod name
	printf '\n== %s\n' "$1"
	printf '   shared pool: %-8s reserved: %s\n' \
		"$(jq -r .shared_pool "$IT_WORK/state/status.json")" \
		"$(jq -r '.reserved | if . == "" then "-" else . end' "$IT_WORK/state/status.json")"
	printf '   %-28s %-10s %-16s %s\n' POD/CONTAINER KIND Cpus_allowed_list Mems_allowed_list
	jq -r '.containers[] | "\(.pod) \(if .sandbox then "POD" else .container end) \(.kind)"' \
		"$IT_WORK/state/status.json" | sort |
	while read -r pod name kind; do
		running "$pod" "$name" || continue
		printf '   %-28s %-10s %-16s %s\n' "$pod/$name" "$kind" \
			"$(allowed "$pod" "$name")" "$(mems_allowed "$pod" "$name")"
	done
}

# converged: every running container's Cpus_allowed_list, as the kernel
# reports it, is what cpusetd decided for it.
converged() {
	local pod name cpus
	while read -r pod name cpus; do
		running "$pod" "$name" || continue
		[ "$(allowed "$pod" "$name")" = "$cpus" ] || return 1
	done < <(jq -r '.containers[] | "\(.pod) \(if .sandbox then "POD" else .container end) \(.cpus)"' \
		"$IT_WORK/state/status.json")
}

# step TITLE [CONDITION...]: waits until the kernel shows cpusetd's
# decisions (and CONDITION holds), then prints the state.
step() {
	local title=$1; shift
	if ! wait_for 10 converged || { [ $# -gt 0 ] && ! wait_for 10 "$@"; }; then
		echo "demo: timed out waiting for: $title" >&2
		exit 1
	fi
	show "$title"
}

# has_kind POD NAME KIND: cpusetd has placed that container as KIND.
has_kind() {
	jq -e --arg p "$1" --arg c "$2" --arg k "$3" \
		'.containers[] | select(.pod == $p and .container == $c and .kind == $k)' \
		"$IT_WORK/state/status.json" >/dev/null
}

# gone POD: cpusetd no longer lists the pod.
gone() {
	! jq -e --arg p "$1" '.containers[] | select(.pod == $p)' \
		"$IT_WORK/state/status.json" >/dev/null
}

echo "cpusetd demo: $(nproc) CPUs online ($IT_ONLINE), private kubepods root $ROOT"
daemon_start "$ROOT" --log-level info || { cat "$IT_WORK/daemon.log"; exit 1; }

pod_start web-1 burstable 500
pod_start web-2 besteffort
step "two shared pods start: they get the whole pool" has_kind web-2 app shared

pod_start db guaranteed 1000
step "integer pod db (Guaranteed, cpu: 1) gets an exclusive CPU; the shared pods leave it" \
	has_kind db app integer

pod_stop db
step "db stops: its CPU goes back to the shared pool" gone db

last=${IT_ONLINE##*[-,]}
pod_start storage-a burstable 500 "$last"
pod_start storage-b burstable 0 "$last"
step "two annotated pods (weka.io/cores-ids: \"$last\") share CPU $last; the pool shrinks" \
	has_kind storage-b app annotated

pod_stop storage-a
step "storage-a stops: CPU $last stays reserved, storage-b still holds it" gone storage-a

pod_stop storage-b
step "storage-b stops: the pool is whole again" gone storage-b

pod_start broken burstable 500 "1-x"
wait_for 10 stopped broken app
show "a pod with an invalid annotation is rejected"
printf '   termination message kubelet shows: %s\n' "$(termination_of broken app)"

printf '\n== cpusetctl status\n'
"$IT_OUT/cpusetctl" status --state-dir "$IT_WORK/state"

printf '\n== what cpusetd logged\n'
grep -v debug "$IT_WORK/daemon.log" | sed 's/^/   /'
pod_stop broken
for p in web-1 web-2; do pod_stop $p; done
echo
echo "demo: done, everything cleaned up"
