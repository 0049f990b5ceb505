#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The man pages and the README say what the programs do (tools/man/):
# `make man` renders cpusetd(8), cpusetctl(8) and cpusetd.conf(5) from the
# built programs' --help texts and the shipped config, and
# tools/man/check-docs.py holds the pages, the shipped config and the
# README configuration table to the programs (every option, key, command;
# man --warnings clean). Then the checker is shown to fail on each kind of
# drift: a README row gone, a man page entry gone, a new option in
# --help, a key missing from or a default wrong in the shipped config.
# And the generator takes a new option from --help without being told.
# Needs no root: only files in a temporary directory.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh

command -v python3 >/dev/null || it_skip_all "python3 missing (make deps)"
command -v man >/dev/null || it_skip_all "man-db missing (make deps)"
{ [ -x "$IT_OUT/cpusetd" ] && [ -x "$IT_OUT/cpusetctl" ]; } || it_skip_all "$IT_OUT not built"

W=$(mktemp -d /tmp/cpusetd-man.XXXXXX)
trap 'rm -rf "$W"' EXIT
D=$IT_OUT/cpusetd
C=$IT_OUT/cpusetctl
M=$IT_OUT/man

check "make man builds the three pages" make -s OUT="$IT_OUT" man
for p in cpusetd.8 cpusetctl.8 cpusetd.conf.5; do
	check "make man: $p" test -s "$M/$p"
done

# The real documentation: every line of the checker must be ok.
tools/man/check-docs.py "$D" "$C" "$M" systemd/README.md systemd/cpusetd.conf >"$W/real.out" 2>&1
rc=$?
sed 's/^/# /' "$W/real.out"
check "check-docs: the docs agree with the programs" test "$rc" -eq 0
check "check-docs: checked at least 12 things" test "$(grep -c '^ok - ' "$W/real.out")" -ge 12

# expect_fail NAME PATTERN CHECKER-ARGS...: the checker exits 1 and its
# output names PATTERN on a "not ok" line or its detail.
expect_fail() {
	local name=$1 pat=$2 rc; shift 2
	tools/man/check-docs.py "$@" >"$W/out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -A3 '^not ok' "$W/out" | grep -q -e "$pat"; then
		ok "check-docs fails on $name"
	else
		not_ok "check-docs fails on $name (exit $rc)"
		sed 's/^/#   /' "$W/out"
	fi
}

# A README whose configuration table lost the --nice row.
grep -v '^| `--nice N`' systemd/README.md >"$W/README.md"
check "mutation: the --nice row is gone" bash -c "! grep -q '^| \`--nice' '$W/README.md'"
expect_fail "a README row missing" "--nice" "$D" "$C" "$M" "$W/README.md" systemd/cpusetd.conf

# A README row for an option that does not exist.
sed 's/^| `--nice N` |/| `--nicety N` |/' systemd/README.md >"$W/README2.md"
expect_fail "a README row for no option" "--nicety" "$D" "$C" "$M" "$W/README2.md" systemd/cpusetd.conf

# A cpusetd(8) whose --textfile entry lost its term.
mkdir -p "$W/man"
cp "$M"/* "$W/man/"
grep -v '^\\fB\\-\\-textfile\\fR' "$M/cpusetd.8" >"$W/man/cpusetd.8"
check "mutation: cpusetd.8 has one line less" \
	test "$(wc -l <"$W/man/cpusetd.8")" -eq $(($(wc -l <"$M/cpusetd.8") - 1))
expect_fail "an option missing from cpusetd(8)" "--textfile" "$D" "$C" "$W/man" systemd/README.md systemd/cpusetd.conf

# A cpusetctl(8) without the top command's --sort option.
cp "$M"/* "$W/man/"
grep -v '^\\fB\\-o\\fR, \\fB\\-\\-sort\\fR' "$M/cpusetctl.8" >"$W/man/cpusetctl.8"
expect_fail "a command option missing from cpusetctl(8)" "top -o" "$D" "$C" "$W/man" systemd/README.md systemd/cpusetd.conf

# A cpusetd whose --help has an option nobody documented yet.
real=$(realpath "$D")
cat >"$W/cpusetd" <<EOF
#!/bin/sh
if [ "\$1" = --help ]; then
	"$real" --help | sed 's/^  --version /  --new-knob N             a new setting\n&/'
else
	exec "$real" "\$@"
fi
EOF
chmod +x "$W/cpusetd"
check "mutation: the fake cpusetd --help has --new-knob" bash -c "'$W/cpusetd' --help | grep -q -- '--new-knob N'"
expect_fail "a new --help option" "--new-knob" "$W/cpusetd" "$C" "$M" systemd/README.md systemd/cpusetd.conf

# ... and the generator puts it into cpusetd(8) by itself.
mkdir -p "$W/gen"
tools/man/gen-man.py "$W/cpusetd" "$C" systemd/cpusetd.conf "$W/gen" >/dev/null 2>&1
check "gen-man: a new --help option reaches cpusetd(8)" grep -q '^\\fB\\-\\-new\\-knob\\fR' "$W/gen/cpusetd.8"

# A shipped config that lost a key, and one with a wrong default.
grep -v '^#nice = ' systemd/cpusetd.conf >"$W/nokey.conf"
expect_fail "a key missing from the shipped config" "nice" "$D" "$C" "$M" systemd/README.md "$W/nokey.conf"
sed 's/^#export_interval = 15$/#export_interval = 30/' systemd/cpusetd.conf >"$W/default.conf"
check "mutation: export_interval says 30" grep -q '^#export_interval = 30$' "$W/default.conf"
expect_fail "a wrong default in the shipped config" "export_interval" "$D" "$C" "$M" systemd/README.md "$W/default.conf"

# A page man warns about (an unknown request).
cp "$M"/* "$W/man/"
printf '.XYZZY\n' >>"$W/man/cpusetd.conf.5"
expect_fail "a page man --warnings complains about" "cpusetd.conf.5" "$D" "$C" "$W/man" systemd/README.md systemd/cpusetd.conf

[ "$IT_FAILED" -eq 0 ]
