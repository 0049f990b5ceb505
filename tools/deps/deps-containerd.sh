#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# containerd 1.7 (Debian trixie) and 2.x (Debian sid) for the containerd
# lane, unpacked under BUILD_DIR, never installed: the system's containerd
# (bookworm's 1.6) stays the BPF-only lane.
#   tools/deps/deps-containerd.sh [BUILD_DIR]	(make deps; root)
# Each suite gets a private apt (BUILD_DIR/apt/<suite>/: sources, lists,
# cache, an empty dpkg status) built at run time from the machine's own
# sources: the stanzas of its release's suite (os-release VERSION_CODENAME),
# with their URIs, components and keyrings, the suite swapped. So the
# machine's mirror, proxy and keys are used and no host name is written
# here. `apt-get download` + `dpkg-deb -x` into BUILD_DIR/containerd-<v>/;
# skipped when that holds the candidate version already
# (BUILD_DIR/containerd-<v>/VERSION). Any failure exits non-zero, loudly:
# CI runs `make deps` first and a missing runtime must not become a skip.
set -eu

out=${1:-build}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

die() { echo "deps-containerd: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (apt's download sandbox)"
for c in apt-get apt-cache dpkg-deb awk; do
	command -v "$c" >/dev/null || die "$c missing"
done
. /etc/os-release
host=${VERSION_CODENAME:-}
[ -n "$host" ] || die "no VERSION_CODENAME in /etc/os-release"

# sources SUITE: deb822 stanzas for SUITE from every active source of the
# host's own suite (one-line .list entries converted). Suites such as
# bookworm-security or a vendor's cloud-sdk-bookworm do not match.
sources() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v host="$host" -v to="$1" '
		$1 == "deb" {
			i = 2; signed = ""; arch = ""
			if ($2 ~ /^\[/) {	# [opt=val ...]
				for (; i <= NF; i++) {
					o = $i; sub(/^\[/, "", o); last = sub(/\]$/, "", o)
					if (o ~ /^signed-by=/) signed = substr(o, 11)
					if (o ~ /^arch=/) arch = substr(o, 6)
					if (last) { i++; break }
				}
			}
			if ($(i + 1) != host) next
			comps = ""
			for (j = i + 2; j <= NF && $j !~ /^#/; j++) comps = comps " " $j
			printf "Types: deb\nURIs: %s\nSuites: %s\nComponents:%s\n", $i, to, comps
			if (signed != "") printf "Signed-By: %s\n", signed
			if (arch != "") { gsub(",", " ", arch); printf "Architectures: %s\n", arch }
			print ""
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# A stanza is kept whole (Signed-By may be an inline key on
		# continuation lines) when it has Types deb, the host suite and
		# is not Enabled: no; only its Suites line is rewritten.
		awk -v host="$host" -v to="$1" '
		function flush() {
			if (keep && deb && on) printf "%s\n", buf
			buf = ""; keep = 0; deb = 0; on = 1
		}
		BEGIN { on = 1 }
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{
			line = $0
			if (tolower($1) == "types:") {
				for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1
				line = "Types: deb"	# no deb-src indexes
			}
			if (tolower($1) == "enabled:" && tolower($2) == "no") on = 0
			if (tolower($1) == "suites:") {
				for (i = 2; i <= NF; i++) if ($i == host) keep = 1
				line = "Suites: " to
			}
			buf = buf line "\n"
		}
		END { flush() }' "$f"
	done
}

# fetch SUITE DIR SERIES: containerd of SUITE into OUT/DIR; its version
# must start with SERIES (the lane's name for it).
fetch() {
	suite=$1 dest=$out/$2 series=$3
	a=$out/apt/$suite
	mkdir -p "$a/etc/sources.list.d" "$a/etc/preferences.d" "$a/state/lists/partial" \
		"$a/cache/archives/partial" "$a/debs"
	: >"$a/status"
	sources "$suite" >"$a/etc/sources.list.d/host.sources"
	[ -s "$a/etc/sources.list.d/host.sources" ] ||
		die "no apt source of suite '$host' in /etc/apt/sources.list{,.d} to derive $suite's from"
	# Read after the machine's apt.conf.d (its proxy and auth stay): the
	# machine's update hooks are not ours to run.
	cat >"$a/last.conf" <<-EOF
	#clear APT::Update::Pre-Invoke;
	#clear APT::Update::Post-Invoke;
	#clear APT::Update::Post-Invoke-Success;
	EOF
	cat >"$a/apt.conf" <<-EOF
	Dir::Etc::main "$a/last.conf";
	Dir::Etc::sourcelist "$a/etc/sources.list";
	Dir::Etc::sourceparts "$a/etc/sources.list.d";
	Dir::Etc::preferences "$a/etc/preferences";
	Dir::Etc::preferencesparts "$a/etc/preferences.d";
	Dir::State "$a/state";
	Dir::State::lists "$a/state/lists";
	Dir::State::status "$a/status";
	Dir::Cache "$a/cache";
	Dir::Cache::archives "$a/cache/archives";
	Dir::Cache::pkgcache "";
	Dir::Cache::srcpkgcache "";
	Acquire::Languages "none";
	APT::Get::List-Cleanup "true";
	EOF
	export APT_CONFIG="$a/apt.conf"
	# apt's download sandbox user must reach the lists and the .debs.
	chown -R _apt:root "$a/state/lists" "$a/cache/archives" "$a/debs" 2>/dev/null || true

	apt-get update -qq || die "$suite: apt-get update failed (sources: $a/etc/sources.list.d/host.sources)"
	v=$(apt-cache policy containerd | awk '$1 == "Candidate:" {print $2}')
	case $v in "" | "(none)") die "$suite: no containerd candidate" ;; esac
	case $v in "$series".*) ;; *) die "$suite: containerd $v is not $series.x" ;; esac
	if [ -x "$dest/usr/bin/containerd" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$v" ]; then
		echo "deps-containerd: $suite containerd $v already in $dest"
	else
		rm -f "$a/debs"/containerd_*.deb
		(cd "$a/debs" && apt-get download -qq "containerd=$v") || die "$suite: apt-get download containerd=$v failed"
		deb=$(ls "$a/debs"/containerd_*.deb)
		check_depends "$suite" "$deb"
		rm -rf "$dest.new"
		dpkg-deb -x "$deb" "$dest.new" || die "$suite: dpkg-deb -x $deb failed"
		echo "$v" >"$dest.new/VERSION"
		rm -rf "$dest"
		mv "$dest.new" "$dest"
		echo "deps-containerd: $suite containerd $v unpacked into $dest"
	fi
	unset APT_CONFIG
	# They must run here (the system's libc, runc).
	for b in containerd ctr containerd-shim-runc-v2; do
		[ -x "$dest/usr/bin/$b" ] || die "$dest/usr/bin/$b missing"
	done
	"$dest/usr/bin/containerd" --version || die "$dest/usr/bin/containerd does not run here"
	"$dest/usr/bin/ctr" --version >/dev/null || die "$dest/usr/bin/ctr does not run here"
	"$dest/usr/bin/containerd-shim-runc-v2" -v >/dev/null || die "$dest/usr/bin/containerd-shim-runc-v2 does not run here"
}

# check_depends SUITE DEB: every dependency is libc6 (>= V) with V at most
# the system's libc6, or runc (the system's serves). Anything else would
# have to come from SUITE too, which this script does not do.
check_depends() {
	libc=$(dpkg-query -W -f='${Version}' libc6)
	dpkg-deb -f "$2" Depends | tr ',' '\n' | sed 's/^ *//; s/ *$//' | while read -r dep; do
		[ -n "$dep" ] || continue
		case $dep in
		runc | "runc "*) ;;
		"libc6 (>= "*)
			need=${dep#libc6 (>= }
			need=${need%)}
			dpkg --compare-versions "$libc" ge "$need" ||
				die "$1: containerd needs libc6 >= $need, the system has $libc"
			;;
		*) die "$1: containerd depends on '$dep' (only libc6 and runc are provided)" ;;
		esac
	done || exit 1
}

fetch trixie containerd-1.7 1.7
fetch sid containerd-2.x 2
