#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds cpusetd's OCI image as one tarball (an OCI image layout: oci-layout,
# index.json, blobs/sha256/...) that `ctr images import` takes (tested), as
# do `skopeo copy oci-archive:` and `podman load`. No registry, no Dockerfile: a
# Debian base made here with debootstrap, the package installed into it with
# dpkg, one gzip'd layer, the JSON written with jq.
#
#   tools/packaging/image/build-image.sh --work DIR --out FILE --deb FILE
#       [--suite CODENAME] [--mirror URL] [--name REF]
#
# --deb FILE    the cpusetd .deb (make deb): dpkg -i inside the base, so the
#               image runs exactly the packaged binaries, unit and conffile.
# --work DIR    scratch and cache: DIR/base is the trimmed Debian base,
#               reused while its stamp (suite, mirror, packages) matches;
#               DIR/debs is debootstrap's package cache.
# --suite       Debian codename of the base (default: this host's, so the
#               libraries match what the binaries were built against).
# --mirror      default: the mirror apt uses here for that suite.
# --name        image reference recorded in index.json (default
#               localhost/cpusetd:<package version>): the name ctr import
#               gives it.
# --out FILE    the tarball; FILE.name gets the image reference.
#
# The base is debootstrap --variant=minbase (dpkg, apt, coreutils, bash)
# plus the runtime libraries the package depends on, upgraded from the
# suite's -updates and -security archives, with docs, man pages and
# locales left out (dpkg path-exclude, as Debian's slim images do). Needs
# root (debootstrap, chroot) and apt's mirror reachable.
set -euo pipefail

die() { echo "build-image: $*" >&2; exit 1; }

work='' out='' deb='' suite='' mirror='' name=''
while [ $# -gt 0 ]; do
	case $1 in
	--work) work=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--deb) deb=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--mirror) mirror=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	-h|--help) sed -n '3,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done
[ -n "$work" ] && [ -n "$out" ] && [ -n "$deb" ] || die "--work, --out and --deb are required"
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
for t in debootstrap jq gzip sha256sum; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done
[ -f "$deb" ] || die "no such .deb: $deb (make deb)"

arch=$(dpkg --print-architecture)
if [ -z "$suite" ]; then
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$suite" ] || die "cannot tell this host's Debian codename: give --suite"
fi
# The mirror apt already uses for that suite (reachable, trusted keyring).
if [ -z "$mirror" ]; then
	mirror=$(apt-get indextargets --format '$(REPO_URI)' "Codename: $suite" "Label: Debian" \
		'Identifier: Packages' 2>/dev/null | head -n1)
	mirror=${mirror:-http://deb.debian.org/debian/}
fi
# The -security archive apt uses for it, if any (another host name or path).
security=$(apt-get indextargets --format '$(REPO_URI)' "Codename: $suite-security" \
	'Identifier: Packages' 2>/dev/null | head -n1)

# --- what goes in: version and the runtime packages it needs ---

# deps_of_deb FILE: the package names of its Depends (first alternative,
# no version or arch qualifier), one a line.
deps_of_deb() {
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:[a-z0-9]+//; s/[[:space:]]//g' |
		grep -v '^$'
}

version=$(dpkg-deb -f "$deb" Version)
pkgs=$(deps_of_deb "$deb" | sort -u | tr '\n' ',')
pkgs=${pkgs%,}
name=${name:-localhost/cpusetd:${version//[^A-Za-z0-9_.-]/_}}
echo "build-image: $name from $deb on Debian $suite ($arch), $mirror"

# --- the base: debootstrap, cached while the stamp matches ---

base=$work/base
stamp="suite=$suite mirror=$mirror security=$security arch=$arch include=$pkgs"
mkdir -p "$work/debs"
if [ ! -f "$base/.stamp" ] || [ "$(cat "$base/.stamp")" != "$stamp" ]; then
	rm -rf --one-file-system "$base" "$base.tmp"
	mkdir -p "$base.tmp/etc/dpkg/dpkg.cfg.d"
	# Left out of every package installed from here on, debootstrap's too.
	cat >"$base.tmp/etc/dpkg/dpkg.cfg.d/01-cpusetd-image-slim" <<-'EOF'
	# cpusetd image: no docs, man pages or translations (the licences stay)
	path-exclude=/usr/share/doc/*
	path-include=/usr/share/doc/*/copyright
	path-exclude=/usr/share/man/*
	path-exclude=/usr/share/info/*
	path-exclude=/usr/share/locale/*
	path-exclude=/usr/share/lintian/*
	EOF
	echo "build-image: debootstrap --variant=minbase $suite (log: $work/debootstrap.log)"
	debootstrap --variant=minbase --arch="$arch" --cache-dir="$(realpath "$work/debs")" \
		${pkgs:+--include="$pkgs"} "$suite" "$base.tmp" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
	# Security and point-release fixes, through apt in the chroot; nothing
	# of the host is mounted into it, the resolver config is a copy.
	{
		echo "deb $mirror $suite main"
		echo "deb $mirror $suite-updates main"
		[ -z "$security" ] || echo "deb $security $suite-security main"
	} >"$base.tmp/etc/apt/sources.list"
	cp -L /etc/resolv.conf "$base.tmp/etc/resolv.conf"
	chroot "$base.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		sh -c 'apt-get -qq update && apt-get -qq -y upgrade && apt-get -qq clean' \
		>>"$work/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$work/debootstrap.log" >&2; die "apt-get upgrade in the base failed"; }
	# What debootstrap installed before the excludes applied, and apt's caches.
	find "$base.tmp/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
	find "$base.tmp/usr/share/doc" -mindepth 1 -type d -empty -delete
	rm -rf "$base.tmp"/usr/share/{man,info,locale,lintian}/* "$base.tmp"/var/lib/apt/lists/* \
		"$base.tmp"/var/cache/apt/* "$base.tmp"/var/cache/debconf/*-old "$base.tmp"/var/log/*.log \
		"$base.tmp"/var/log/apt/* "$base.tmp/etc/resolv.conf" "$base.tmp/etc/hostname"
	echo "$stamp" >"$base.tmp/.stamp"
	mv "$base.tmp" "$base"
fi

# --- the package, into a copy of the base ---

root=$work/rootfs
rm -rf --one-file-system "$root"
cp -a "$base" "$root"
rm -f "$root/.stamp"
cp "$deb" "$root/tmp/cpusetd.deb"
# policy-rc.d: the maintainer scripts must not try to start anything.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	dpkg -i /tmp/cpusetd.deb >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; die "dpkg -i in the image failed"; }
rm -f "$root/usr/sbin/policy-rc.d" "$root/tmp/cpusetd.deb"
# The packaged binary's own word on its revision, for the image's label.
said=$(chroot "$root" /usr/sbin/cpusetd --version) || die "cpusetd does not run in the image"
revision=$(sed -n 's/.*(revision \(.*\)).*/\1/p' <<<"$said")
rm -rf "$root"/var/cache/apt/* "$root"/var/log/*.log "$root"/var/cache/ldconfig/aux-cache

# --- the OCI layout ---

oci=$work/oci
rm -rf "$oci"
mkdir -p "$oci/blobs/sha256"

# blob FILE: moves FILE into blobs/sha256 under its digest; prints
# "<digest> <size>".
blob() {
	local d s
	d=$(sha256sum "$1" | cut -d' ' -f1)
	s=$(stat -c %s "$1")
	mv "$1" "$oci/blobs/sha256/$d"
	echo "$d $s"
}

# The runtime provides /dev, /proc, /sys, /run and /tmp's contents.
tar --sort=name --numeric-owner --one-file-system --xattrs --xattrs-include='security.capability' \
	--exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' --exclude='./run/*' \
	--exclude='./tmp/*' -C "$root" -cf "$work/layer.tar" .
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -9 -f "$work/layer.tar"
read -r layer layer_size < <(blob "$work/layer.tar.gz")

created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
jq -n --arg arch "$arch" --arg created "$created" --arg diff "sha256:$diff_id" \
	--arg version "$version" --arg revision "$revision" --arg suite "$suite" \
	--arg from "$(basename "$deb")" '{
	architecture: $arch, os: "linux", created: $created,
	config: {
		Entrypoint: ["/usr/sbin/cpusetd"],
		Cmd: ["--config", "/etc/cpusetd/cpusetd.conf"],
		Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
		WorkingDir: "/",
		StopSignal: "SIGTERM",
		Labels: {
			"org.opencontainers.image.title": "cpusetd",
			"org.opencontainers.image.description": "CPU and NUMA placement of Kubernetes containers (run as the DaemonSet in tools/packaging/deploy)",
			"org.opencontainers.image.version": $version,
			"org.opencontainers.image.revision": $revision,
			"org.opencontainers.image.base.name": ("debian:" + $suite)
		}
	},
	rootfs: {type: "layers", diff_ids: [$diff]},
	history: [{created: $created, created_by: ("tools/packaging/image/build-image.sh: debootstrap --variant=minbase " + $suite + ", then " + $from)}]
}' >"$work/config.json"
read -r config config_size < <(blob "$work/config.json")

jq -n --arg c "sha256:$config" --argjson cs "$config_size" --arg l "sha256:$layer" \
	--argjson ls "$layer_size" --arg version "$version" '{
	schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
	config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
	layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $l, size: $ls}],
	annotations: {"org.opencontainers.image.version": $version}
}' >"$work/manifest.json"
read -r manifest manifest_size < <(blob "$work/manifest.json")

# io.containerd.image.name: the full name ctr import records;
# org.opencontainers.image.ref.name: the tag, as the OCI layout spec has it.
jq -n --arg m "sha256:$manifest" --argjson ms "$manifest_size" --arg arch "$arch" \
	--arg name "$name" --arg tag "${name##*:}" '{
	schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
	manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
		platform: {architecture: $arch, os: "linux"},
		annotations: {"io.containerd.image.name": $name, "org.opencontainers.image.ref.name": $tag}}]
}' >"$oci/index.json"
echo '{"imageLayoutVersion": "1.0.0"}' >"$oci/oci-layout"

mkdir -p "$(dirname "$out")"
tar --sort=name --numeric-owner --owner=0 --group=0 -C "$oci" -cf "$out.tmp" oci-layout index.json blobs
mv "$out.tmp" "$out"
echo "$name" >"$out.name"
rm -rf --one-file-system "$root" "$oci"
echo "build-image: $out ($(du -h "$out" | cut -f1); layer $((layer_size / 1024 / 1024)) MiB gzip'd," \
	"$(($(du -s --apparent-size -k "$work/base" | cut -f1) / 1024)) MiB base) = $name"
