#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks systemd/cpusetd.service with `systemd-analyze verify`. verify wants
# the ExecStart binary to exist, so a copy with ExecStart=/bin/true is
# checked in a temporary directory. verify exits 0 even for unknown keys or
# bad values, so any output line naming the unit file is a failure too.
#
# Usage: tools/verify-unit.sh [UNIT]   (default systemd/cpusetd.service)
# Prints "ok - systemd-analyze verify" or "not ok - systemd-analyze verify"
# (with verify's output on stderr); exits 0 or 1.
set -u

unit=${1:-$(dirname "$0")/../systemd/cpusetd.service}
name=$(basename "$unit")

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "not ok - systemd-analyze verify (systemd-analyze not installed)"
	exit 1
fi

dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

if ! sed -E 's|^ExecStart=[^ ]+|ExecStart=/bin/true|' "$unit" >"$dir/$name"; then
	echo "not ok - systemd-analyze verify (cannot read $unit)"
	exit 1
fi

# --man=no: Documentation= pages need not be installed where this runs.
systemd-analyze verify --man=no "$dir/$name" >"$dir/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || grep -q -F -- "$name" "$dir/out"; then
	sed "s|$dir/||g" "$dir/out" >&2
	echo "not ok - systemd-analyze verify"
	exit 1
fi
echo "ok - systemd-analyze verify"
