#!/bin/sh
# Install every Debian package that building, testing and the demo need.
# Idempotent: packages already present are left alone, apt is only called
# when something is missing.
set -eu

PKGS="make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libsystemd-dev libcmocka-dev libjson-c-dev libinih-dev runc busybox-static
systemd util-linux procps jq python3 bzip2 tar"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && { echo "deps: all installed"; exit 0; }

echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
