#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian package with Debian's own tools (dpkg-buildpackage,
# debhelper): `make deb` runs it.
#
#   tools/packaging/build-deb.sh OUT VERSION REVISION
#
# The top level of the tree has no debian/ (its layout is fixed), so the
# sources are copied, with tools/packaging/debian/ as debian/, into OUT/deb/cpusetd
# and built there. VERSION is the package version, REVISION the git
# revision, written to the copy's REVISION file: the Makefile reads it
# where there is no .git, so `cpusetd --version` of the package names the
# same revision. The copy keeps the source files' times and debian/build
# (the objects) stays between runs, so a rebuild compiles only what
# changed. Writes OUT/cpusetd_VERSION_ARCH.deb; prints its path last.
set -eu

out=$1
version=$2
revision=$3
cd "$(dirname "$0")/../.."

# A make above us must not hand its jobserver or flags to the package
# build: dpkg-buildpackage starts a make of its own.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKE_TERMOUT MAKE_TERMERR || true

arch=$(dpkg --print-architecture)
stage=$out/deb/cpusetd
mkdir -p "$stage/debian"

for d in bpf cgroupfs maps tools user systemd; do
	rm -rf "${stage:?}/$d"
	cp -a "$d" "$stage/"
done
cp -a Makefile README.md "$stage/"
printf '%s\n' "$revision" >"$stage/REVISION"

# debian/ afresh (dh keeps stamps there that would skip steps), but its
# build/ with the objects stays.
find "$stage/debian" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
cp -a tools/packaging/debian/. "$stage/debian/"

# One changelog entry per build: the changes themselves are in git. Its
# date (dpkg-buildpackage's SOURCE_DATE_EPOCH, so the man pages' date too)
# is the commit's, for a reproducible build.
when=$(git log -1 --format=%ct 2>/dev/null || date +%s)
maint=$(sed -n 's/^Maintainer: //p' tools/packaging/debian/control)
cat >"$stage/debian/changelog" <<EOF
cpusetd ($version) unstable; urgency=medium

  * cpusetd $version, from git revision $revision.

 -- $maint  $(date -R -u -d "@$when")
EOF

rm -f "$out/deb/cpusetd_${version}_$arch".*
(cd "$stage" && dpkg-buildpackage --build=binary --no-sign --no-pre-clean \
	--jobs-try="$(nproc)")
mv "$out/deb/cpusetd_${version}_$arch.deb" "$out/cpusetd_${version}_$arch.deb"
echo "$out/cpusetd_${version}_$arch.deb"
