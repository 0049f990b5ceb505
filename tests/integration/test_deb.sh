#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installing cpusetd: `make install` / `make uninstall` into a staging root
# (files, the unit in $(PREFIX)/lib/systemd/system with ExecStart at the
# installed daemon, an edited config kept, nothing else left), then the
# Debian package for real on this machine with dpkg (through apt-get):
# `make deb` twice (two revisions, so two versions), lintian with no error
# or warning, install (every file, dpkg -s, the conffile, --version of the
# installed binaries, the unit's ExecStart and systemd-analyze verify, the
# unit enabled but not started: no systemd runs here), upgrade (the new
# revision runs, a locally edited conffile is kept), remove (programs
# gone, conffile kept) and purge (conffile, state directory, metrics file
# and enable links gone; pins a running cpusetd still locks are left).
#
# It changes the machine only through the package and the default state
# paths, refuses to start when any of them is already there (a cpusetd
# package or make install it did not make, a daemon's state), and purges
# and removes all of it on exit.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh

[ "$(id -u)" = 0 ] || it_skip_all "needs root (dpkg)"
for c in dpkg-buildpackage dh lintian apt-get systemd-analyze python3 bpftool man; do
	command -v "$c" >/dev/null || it_skip_all "$c missing (make deps)"
done
[ -x "$IT_OUT/cpusetd" ] || it_skip_all "$IT_OUT/cpusetd not built"

W=$(mktemp -d /tmp/cpusetd-deb.XXXXXX)
STATE=/run/cpusetd
CPUSET=$IT_CPUSET
HOSTCG=/cpusetd-debtest-$$	# a host cgroup the release gives back (isolate_host_skip: none)
PINS=/sys/fs/bpf/cpusetd
PROMDIR=/var/lib/prometheus/node-exporter
PROM=$PROMDIR/cpusetd.prom
WANTS=/etc/systemd/system/multi-user.target.wants/cpusetd.service
OURS=			# set once we installed the package
MADE_PROMDIR=
HOLDER=
DEBS=()

apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q \
		-o DPkg::Lock::Timeout=300 "$@" </dev/null
}

pkg_status() { dpkg-query -W -f='${db:Status-Abbrev}' cpusetd 2>/dev/null | tr -d ' '; }

cleanup() {
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
	if [ -n "$OURS" ] && [ -n "$(pkg_status)" ] && [ "$(pkg_status)" != un ]; then
		apt_get purge cpusetd >/dev/null 2>&1 || dpkg --purge cpusetd >/dev/null 2>&1
	fi
	if [ -n "$OURS" ]; then
		rm -rf "$STATE" "$PINS"
		rm -f "$PROM"
	fi
	[ -n "$MADE_PROMDIR" ] && rmdir "$PROMDIR" 2>/dev/null
	rmdir "$CPUSET$HOSTCG" 2>/dev/null
	rm -f "${DEBS[@]}"
	rm -rf "$W"
}
trap cleanup EXIT

# --- make install / make uninstall into a staging root ---

D=$W/dest
make -s OUT="$IT_OUT" install DESTDIR="$D" >"$W/install.log" 2>&1
check "make install: exit 0" test $? -eq 0
for f in usr/local/sbin/cpusetd usr/local/sbin/cpusetctl; do
	check "make install: $f" test -x "$D/$f"
done
for f in usr/local/lib/systemd/system/cpusetd.service usr/local/share/man/man8/cpusetd.8 \
	usr/local/share/man/man8/cpusetctl.8 usr/local/share/man/man5/cpusetd.conf.5 \
	etc/cpusetd/cpusetd.conf; do
	check "make install: $f" test -f "$D/$f"
done
check "make install: nothing in /etc/systemd (the admin's directory)" test ! -e "$D/etc/systemd"
UNIT=$D/usr/local/lib/systemd/system/cpusetd.service
check "make install: ExecStart is the installed daemon" \
	grep -q '^ExecStart=/usr/local/sbin/cpusetd --config /etc/cpusetd/cpusetd.conf$' "$UNIT"
check "make install: the installed unit passes systemd-analyze verify" \
	bash -c "tools/verify-unit.sh '$UNIT' >/dev/null"
echo "# edited by test_deb" >>"$D/etc/cpusetd/cpusetd.conf"
make -s OUT="$IT_OUT" install DESTDIR="$D" >/dev/null 2>&1
check "make install again: the edited config is kept" \
	grep -q '^# edited by test_deb$' "$D/etc/cpusetd/cpusetd.conf"
make -s OUT="$IT_OUT" uninstall DESTDIR="$D" >"$W/uninstall.log" 2>&1
check "make uninstall: exit 0" test $? -eq 0
check "make uninstall: says it kept the edited config" grep -q "kept .*cpusetd.conf" "$W/uninstall.log"
check "make uninstall: only the edited config is left" \
	test "$(find "$D" ! -type d | sed "s|^$D||")" = /etc/cpusetd/cpusetd.conf
cp systemd/cpusetd.conf "$D/etc/cpusetd/cpusetd.conf"
make -s OUT="$IT_OUT" uninstall DESTDIR="$D" >/dev/null 2>&1
left=$(find "$D" ! -type d)
check "make uninstall: an unedited config goes too, nothing is left" test -z "$left"
[ -z "$left" ] || printf '#   left: %s\n' "$left"
check "make uninstall: /etc/cpusetd is gone" test ! -e "$D/etc/cpusetd"
make -s OUT="$IT_OUT" install DESTDIR="$W/usr" PREFIX=/usr >/dev/null 2>&1
check "make install PREFIX=/usr: unit in /usr/lib/systemd/system, ExecStart /usr/sbin/cpusetd" \
	grep -q '^ExecStart=/usr/sbin/cpusetd ' "$W/usr/usr/lib/systemd/system/cpusetd.service"

# --- the Debian package ---

# Never touch what this test did not make.
st=$(pkg_status)
if [ -n "$st" ] && [ "$st" != un ]; then
	not_ok "a cpusetd package is already on this machine (dpkg status $st): not touching it"
	exit 1
fi
for p in /usr/sbin/cpusetd /usr/sbin/cpusetctl /lib/systemd/system/cpusetd.service \
	/etc/cpusetd "$WANTS" "$STATE" "$PINS" "$PROM"; do
	if [ -e "$p" ] || [ -L "$p" ]; then
		not_ok "$p already exists (not from a package of this test): not touching it"
		exit 1
	fi
done

VERSION=$(sed -n 's/^#define CPUSETD_VERSION[[:space:]]*"\(.*\)"/\1/p' user/config/config.h)
ARCH=$(dpkg --print-architecture)
V1=$VERSION+debtest1
V2=$VERSION+debtest2
DEB1=$IT_OUT/cpusetd_${V1}_$ARCH.deb
DEB2=$IT_OUT/cpusetd_${V2}_$ARCH.deb
DEBS=("$DEB1" "$DEB2")

make -s OUT="$IT_OUT" deb REVISION=debtest1 >"$W/deb1.log" 2>&1
check "make deb: builds $(basename "$DEB1")" test -s "$DEB1"
[ -s "$DEB1" ] || { sed 's/^/#   /' "$W/deb1.log" | tail -30; exit 1; }
make -s OUT="$IT_OUT" deb REVISION=debtest2 >"$W/deb2.log" 2>&1
check "make deb REVISION=debtest2: builds $(basename "$DEB2")" test -s "$DEB2"
check "the second revision is a newer version" dpkg --compare-versions "$V2" gt "$V1"

# lintian: no error, no warning (tools/packaging/deploy/README.md "Install on a node" lists the
# info tags accepted). --pedantic shows the P: tags as well.
lintian --fail-on error,warning --info --pedantic "$DEB1" >"$W/lintian.out" 2>&1
rc=$?
grep -v '^N: .*root privileges' "$W/lintian.out" | sed 's/^/#   lintian: /'
check "lintian: no errors or warnings" test "$rc" -eq 0
check "lintian: no E: or W: tag" bash -c "! grep -q '^[EW]: ' '$W/lintian.out'"

# control: runtime libraries only, found by dpkg-shlibdeps
deps=$(dpkg-deb -f "$DEB1" Depends)
echo "# Depends: $deps"
for lib in libbpf1 libsystemd0 libjson-c5 libinih1 libc6 procps; do
	check "Depends: $lib" bash -c "printf '%s' '$deps' | grep -q '\\b$lib\\b'"
done
check "Depends: no -dev package" bash -c "! printf '%s' '$deps' | grep -q -- '-dev'"

# --- install ---
OURS=1
apt_get install "$(realpath "$DEB1")" >"$W/install1.log" 2>&1
check "apt-get install ./$(basename "$DEB1"): exit 0" test $? -eq 0
check "dpkg -s: install ok installed" \
	bash -c "dpkg -s cpusetd | grep -qx 'Status: install ok installed'"
check "dpkg -s: Version $V1" bash -c "dpkg -s cpusetd | grep -qx 'Version: $V1'"
check "dpkg -s: Architecture $ARCH" bash -c "dpkg -s cpusetd | grep -qx 'Architecture: $ARCH'"
dpkg -L cpusetd >"$W/files"
for f in /usr/sbin/cpusetd /usr/sbin/cpusetctl /lib/systemd/system/cpusetd.service \
	/etc/cpusetd/cpusetd.conf /usr/share/man/man8/cpusetd.8.gz /usr/share/man/man8/cpusetctl.8.gz \
	/usr/share/man/man5/cpusetd.conf.5.gz /usr/share/doc/cpusetd/copyright \
	/usr/share/doc/cpusetd/changelog.gz /usr/share/doc/cpusetd/README.md.gz; do
	check "dpkg -L lists $f, and it is there" bash -c "grep -qx '$f' '$W/files' && test -f '$f'"
done
missing=0
while read -r f; do [ -e "$f" ] || missing=$((missing + 1)); done <"$W/files"
check "every file dpkg -L lists exists ($(wc -l <"$W/files") paths)" test "$missing" -eq 0
check "nothing outside /usr, /lib and /etc" \
	bash -c "! grep -qvE '^/\.$|^/(usr|lib|etc)(/|$)' '$W/files'"
check "conffile: /etc/cpusetd/cpusetd.conf" \
	bash -c "dpkg-query -W -f='\${Conffiles}\n' cpusetd | grep -q '^ /etc/cpusetd/cpusetd.conf [0-9a-f]\{32\}$'"
check "the conffile is the shipped config" cmp -s /etc/cpusetd/cpusetd.conf systemd/cpusetd.conf
check "/usr/sbin/cpusetd --version: revision debtest1" \
	bash -c "/usr/sbin/cpusetd --version | grep -qx 'cpusetd $VERSION (revision debtest1)'"
check "/usr/sbin/cpusetctl --version: revision debtest1" \
	bash -c "/usr/sbin/cpusetctl --version | grep -qx 'cpusetctl $VERSION (revision debtest1)'"
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' /lib/systemd/system/cpusetd.service)
check "the unit's ExecStart is the installed daemon ($exec_start)" \
	test "$exec_start" = /usr/sbin/cpusetd -a -x "$exec_start"
systemd-analyze verify --man=no /lib/systemd/system/cpusetd.service >"$W/verify" 2>&1
rc=$?
sed 's/^/#   verify: /' "$W/verify"
check "systemd-analyze verify: the installed unit" \
	bash -c "[ $rc -eq 0 ] && ! grep -q cpusetd.service '$W/verify'"
check "man finds cpusetd(8), cpusetctl(8), cpusetd.conf(5)" \
	bash -c "man -w 8 cpusetd && man -w 8 cpusetctl && man -w 5 cpusetd.conf" >/dev/null
check "the unit is enabled (multi-user.target.wants)" \
	test "$(readlink "$WANTS")" = /lib/systemd/system/cpusetd.service
check "the install said nothing failed" bash -c "! grep -qiE 'error|fail' '$W/install1.log'"
# No systemd runs here: the postinst must skip the start, not fail. The
# file itself, not its name: a cpusetd in a container (the image's test)
# has /usr/sbin/cpusetd of its own root.
running() {
	local p
	for p in /proc/[0-9]*; do
		[ "$p/exe" -ef /usr/sbin/cpusetd ] && return 0
	done
	return 1
}
if running; then
	not_ok "not started without systemd (a /usr/sbin/cpusetd process runs)"
else
	ok "not started without systemd (no /usr/sbin/cpusetd process)"
fi

# --- upgrade, with a locally edited conffile ---
echo "# local edit by test_deb" >>/etc/cpusetd/cpusetd.conf
apt_get install "$(realpath "$DEB2")" >"$W/install2.log" 2>&1
check "upgrade to $V2: exit 0" test $? -eq 0
check "dpkg -s: Version $V2" bash -c "dpkg -s cpusetd | grep -qx 'Version: $V2'"
check "upgrade: the new daemon is installed (revision debtest2)" \
	bash -c "/usr/sbin/cpusetd --version | grep -qx 'cpusetd $VERSION (revision debtest2)'"
check "upgrade: the local edit of the conffile is kept" \
	grep -qx '# local edit by test_deb' /etc/cpusetd/cpusetd.conf
check "upgrade: no .dpkg-new/.dpkg-dist/.dpkg-old beside it" \
	test "$(find /etc/cpusetd -mindepth 1)" = /etc/cpusetd/cpusetd.conf
check "upgrade: still enabled" test -L "$WANTS"

# --- remove: prerm runs cpusetd --release ---
# What a crashed daemon with host isolation left: a host cgroup narrowed
# to CPU 0, its original (0-1) in isolation.state, and a pinned map.
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
crashed_state() {
	mkdir -p "$STATE" "$PINS/v3"
	mkdir -p "$CPUSET$HOSTCG"
	echo 0-1 >"$CPUSET$HOSTCG/cpuset.cpus"
	cat "$CPUSET/cpuset.mems" >"$CPUSET$HOSTCG/cpuset.mems"
	echo 0 >"$CPUSET$HOSTCG/cpuset.cpus"
	printf 'cgroup 0-1 0 %s\n' "$HOSTCG" >"$STATE/isolation.state"
	chmod 0600 "$STATE/isolation.state"
	[ -e "$PINS/v3/test_map" ] ||
		bpftool map create "$PINS/v3/test_map" type array key 4 value 4 entries 1 name test_deb
}
# A cpusetd started by hand holds the lock: prerm gives nothing back and
# says so; the remove goes on.
crashed_state
check "remove setup: isolation.state, the narrowed host cgroup, a pinned map" \
	bash -c "test -s $STATE/isolation.state && [ \$(cat $CPUSET$HOSTCG/cpuset.cpus) = 0 ] && test -e $PINS/v3/test_map"
python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(600)' "$STATE/cpusetd.lock" "$W/held-state" &
HOLDER=$!
check "remove setup: the instance lock is held" wait_for 10 test -e "$W/held-state"
apt_get remove cpusetd >"$W/remove-held.log" 2>&1
check "remove with a cpusetd running by hand: exit 0" test $? -eq 0
check "... prerm says nothing was given back" grep -q "still runs: nothing was given back" "$W/remove-held.log"
check "... and gave nothing back" \
	bash -c "test -s $STATE/isolation.state && [ \$(cat $CPUSET$HOSTCG/cpuset.cpus) = 0 ] && test -e $PINS/v3/test_map"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
apt_get install "$(realpath "$DEB2")" >"$W/install3.log" 2>&1
check "installed again ($V2): exit 0" test $? -eq 0
apt_get remove cpusetd >"$W/remove.log" 2>&1
check "remove: exit 0" test $? -eq 0
sed -n 's/^.*cpusetd: \(notice\|error\): /#   /p' "$W/remove.log"
check "remove: prerm's cpusetd --release gave host isolation back (host cgroup 0-1)" \
	test "$(cat "$CPUSET$HOSTCG/cpuset.cpus")" = 0-1
check "remove: ... and removed isolation.state" test ! -e "$STATE/isolation.state"
check "remove: ... and the pinned maps" test ! -e "$PINS"
check "remove: ... and said so" grep -q "release: .*host isolation: given back, its state file removed" "$W/remove.log"
check "remove: dpkg says config-files (rc)" test "$(pkg_status)" = rc
for f in /usr/sbin/cpusetd /usr/sbin/cpusetctl /lib/systemd/system/cpusetd.service \
	/usr/share/man/man8/cpusetd.8.gz; do
	check "remove: $f gone" test ! -e "$f"
done
check "remove: the conffile is kept, with the local edit" \
	grep -qx '# local edit by test_deb' /etc/cpusetd/cpusetd.conf

# --- purge ---
# The daemon's state as a run leaves it: the state directory, a pinned
# map, the metrics file. A process holds the pin directory's lock as a
# running cpusetd does: the purge must leave that one.
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mkdir -p "$STATE" "$PINS/v3"
echo '{"daemon":{"state":"stopped"}}' >"$STATE/status.json"
: >"$STATE/cpusetd.lock"
bpftool map create "$PINS/v3/test_map" type array key 4 value 4 entries 1 name test_deb
check "purge setup: a pinned map" test -e "$PINS/v3/test_map"
[ -d "$PROMDIR" ] || { mkdir -p "$PROMDIR" && MADE_PROMDIR=1; }
echo 'cpusetd_up 1' >"$PROM"
python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(600)' "$PINS" "$W/held" &
HOLDER=$!
check "purge setup: the pin directory is locked" wait_for 10 test -e "$W/held"
apt_get purge cpusetd >"$W/purge.log" 2>&1
check "purge: exit 0" test $? -eq 0
check "purge: dpkg no longer knows the package" bash -c "st=\$(dpkg-query -W -f='\${db:Status-Abbrev}' cpusetd 2>/dev/null | tr -d ' '); [ -z \"\$st\" ] || [ \"\$st\" = un ]"
check "purge: the conffile and /etc/cpusetd are gone" test ! -e /etc/cpusetd
check "purge: the state directory is gone" test ! -e "$STATE"
check "purge: the metrics file is gone" test ! -e "$PROM"
check "purge: the enable link is gone" test ! -L "$WANTS"
check "purge: the pins a running cpusetd locks are left" test -e "$PINS/v3/test_map"
check "purge: and it says so" grep -q "holds $PINS: left in place" "$W/purge.log"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
rm -rf "$PINS"

# --- purge of an installed package whose release cannot give back ---
# prerm's release refuses an isolation.state that is not its own (here
# group-writable); postrm purge must then keep it, and say where.
apt_get install "$(realpath "$DEB2")" >"$W/install4.log" 2>&1
check "installed again ($V2): exit 0" test $? -eq 0
crashed_state
chmod 0660 "$STATE/isolation.state"
echo '{"daemon":{"state":"stopped"}}' >"$STATE/status.json"
apt_get purge cpusetd >"$W/purge2.log" 2>&1
check "purge, release refused: exit 0" test $? -eq 0
sed -n 's/^.*cpusetd: \(notice\|error\): /#   /p' "$W/purge2.log"
check "... prerm's release said it could not give back everything" \
	grep -q "could not give back everything" "$W/purge2.log"
check "... isolation.state is kept, and nothing was restored from it" \
	bash -c "test -s $STATE/isolation.state && [ \$(cat $CPUSET$HOSTCG/cpuset.cpus) = 0 ]"
check "... the rest of the state directory is gone" \
	test "$(find "$STATE" -mindepth 1)" = "$STATE/isolation.state"
check "... and purge says where it is" grep -q "$STATE/isolation.state was never given back: kept" "$W/purge2.log"
check "... the package is gone" bash -c "st=\$(dpkg-query -W -f='\${db:Status-Abbrev}' cpusetd 2>/dev/null | tr -d ' '); [ -z \"\$st\" ] || [ \"\$st\" = un ]"
rm -rf "$STATE" "$PINS"
OURS=

it_done
