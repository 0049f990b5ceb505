#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install every Debian package that building, testing and the demo need,
# then (tools/deps/deps-containerd.sh) unpack containerd 1.7 and 2.x under
# BUILD_DIR for the containerd lane.
#   tools/deps/deps.sh [BUILD_DIR]
# Idempotent: packages already present are left alone, apt is only called
# when something is missing.
set -eu
out=${1:-build}

# libclang-rt-dev: the sanitizer and libFuzzer runtimes of `make fuzz`,
# only recommended by clang, so --no-install-recommends would skip them.
# debhelper, lintian: `make deb` and tests/integration/test_deb.sh;
# man-db, groff-base: `make man` and its warning check (man --warnings).
PKGS="make gcc clang llvm libclang-rt-dev pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libsystemd-dev libcmocka-dev libjson-c-dev libinih-dev runc busybox-static
systemd util-linux procps jq python3 python3-yaml bzip2 tar
prometheus prometheus-node-exporter curl
stress-ng rt-tests strace
qemu-system-x86 cpio kmod
containerd python3-grpcio python3-grpc-tools
protobuf-c-compiler libprotobuf-c-dev
debhelper lintian man-db groff-base
debootstrap"
# `make image` (tools/packaging/image): debootstrap builds its Debian base. Its test
# renders tools/packaging/deploy with `kubectl kustomize`: Debian's kubectl is
# kubernetes-client, installed only where no kubectl is on PATH (another
# package's /usr/bin/kubectl would conflict with it).
command -v kubectl >/dev/null 2>&1 || PKGS="$PKGS kubernetes-client"

# Packages that ship a service we only run by hand in tests (promtool and
# node_exporter for the textfile export test, containerd for the CRI lane on
# its own private socket): never start or enable them.
SERVICE_PKGS="prometheus prometheus-node-exporter containerd"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all installed"
	exec "$(dirname "$0")/deps-containerd.sh" "$out"
fi

echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Debian's maintainer scripts start services through invoke-rc.d /
# deb-systemd-invoke, which honour policy-rc.d (exit 101 = do not start);
# provide one for the install unless the machine already has its own.
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && own_policy=1
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing || rc=$?
[ -n "$own_policy" ] && rm -f "$policy"
[ "${rc:-0}" -eq 0 ] || exit "$rc"
# Their postinst still enables the units (deb-systemd-helper) and the SysV
# links: undo that for the ones installed now (systemctl disable works
# without a running systemd too), and stop them should a running systemd
# have started them anyway. A service someone installed before is left
# alone.
for p in $SERVICE_PKGS; do
	case " $missing " in *" $p "*) ;; *) continue ;; esac
	now=
	[ -d /run/systemd/system ] && now=--now
	systemctl disable $now "$p.service" >/dev/null 2>&1 || true
done

exec "$(dirname "$0")/deps-containerd.sh" "$out"
