#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM lane, host side: boots Debian's own kernel under qemu (TCG) on a
# 2-socket, 4-NUMA-node, SMT machine with pure cgroup v2, runs the guest
# tests (tests/vm/test_*.sh) there, and reports them here.
#   tests/vm/run.sh BUILD_DIR [test_a test_b ...]
# Prints one TAP line per guest check ("ok - vm/test_x: ...") and ends with
# "N passed, M failed, K skipped", like tests/run-all.sh (a skip, "ok - #
# SKIP why", is never counted as passed). Exits non-zero on any
# failure, a guest test that exits non-zero, a guest that never reports
# back, or the watchdog (VM_TIMEOUT seconds, default 1500) killing qemu.
# VM_STRESS=N: N busy loops in the guest during each test (guest.sh), to
# look for races with the guest's vCPUs loaded; not for CI.
#
# Steps (each cached under BUILD_DIR/vm/):
#   1. kernel: `apt-get download` of the linux-image-*-amd64 package that
#      linux-image-amd64 depends on; vmlinuz extracted with dpkg-deb.
#   2. initramfs: busybox-static, bash and a few host tools with their
#      libraries (ldd), runc, bpftool, jq, the cpusetd binaries, and the
#      project's tests/ and tools/ (newc cpio, uncompressed: unpacking
#      gzip under TCG costs seconds).
#   3. qemu: -smp 16,sockets=2,cores=4,threads=2, 4 NUMA nodes of 512 MiB
#      (CPUs 0-3, 4-7, 8-11, 12-15), serial console on stdout.
# The guest side is tests/vm/init (PID 1) and tests/vm/guest.sh (runner);
# the guest test interface is in tests/vm/README.md.
set -u
out=${1:-build}
shift || true
tests="${*:-${VM_TESTS:-}}"
cd "$(dirname "$0")/../.." || exit 1
vm=$out/vm
timeout_s=${VM_TIMEOUT:-1500}
mkdir -p "$vm"

die() { echo "not ok - vm: $*"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
now() { date +%s.%N; }
# secs FROM TO: whole seconds between two now() stamps.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
t0=$(now)

# --- 1. the kernel -------------------------------------------------------

# kernel_pkg: the versioned image package the metapackage points at
# (e.g. linux-image-6.1.0-56-amd64), from the local apt cache.
kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1
}

fetch_kernel() {
	local pkg deb
	# A cached package is used as it is: no network needed once fetched.
	deb=$(ls "$vm"/linux-image-[0-9]*-amd64_*.deb 2>/dev/null | head -n1)
	if [ -z "$deb" ]; then
		pkg=$(kernel_pkg)
		if [ -z "$pkg" ]; then
			apt-get update -qq || return 1
			pkg=$(kernel_pkg)
		fi
		[ -n "$pkg" ] || { echo "# vm: apt knows no linux-image-amd64"; return 1; }
		echo "# vm: fetching $pkg"
		# apt's sandbox user cannot write into our tree: it downloads as root.
		(cd "$vm" && apt-get download -q "$pkg" 2>&1 | grep -v unsandboxed) >&2
		deb=$(ls "$vm"/"$pkg"_*.deb 2>/dev/null | head -n1)
		[ -n "$deb" ] || return 1
	fi
	if [ ! -s "$vm/vmlinuz" ] || [ "$deb" -nt "$vm/vmlinuz" ]; then
		rm -rf "$vm/kpkg"
		mkdir -p "$vm/kpkg"
		# Only /boot: the modules are not needed (everything the lane
		# uses is built in, see tests/vm/README.md) and are 400 MB.
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$vm/kpkg" --wildcards './boot/*' ||
			return 1
		cp "$vm"/kpkg/boot/vmlinuz-* "$vm/vmlinuz.tmp" && mv "$vm/vmlinuz.tmp" "$vm/vmlinuz"
		cp "$vm"/kpkg/boot/config-* "$vm/kernel.config"
	fi
	# Features the lane relies on, built in (no module loading in the guest).
	local c
	for c in CPUSETS NUMA HOTPLUG_CPU SCHED_SMT BPF_SYSCALL DEBUG_INFO_BTF \
		SERIAL_8250_CONSOLE BLK_DEV_INITRD DEVTMPFS PID_NS TRACEPOINTS; do
		grep -qx "CONFIG_$c=y" "$vm/kernel.config" ||
			{ echo "# vm: kernel lacks CONFIG_$c=y"; return 1; }
	done
}

# --- 2. the initramfs ----------------------------------------------------

# Host programs the guest gets besides busybox's applets (which stand in
# for everything else). GNU date for %N (lib.sh's wait_for), bash for the
# tests, the rest for exact GNU behaviour the integration lib relies on.
HOST_PROGS="bash jq runc bpftool date stat timeout mktemp sha256sum md5sum
sort find xargs sed grep cut tr head tail wc seq nproc taskset mountpoint"

# copy_prog ROOT PATH: the program and every library ldd names, at the
# same paths (Debian's multiarch layout, /lib64/ld-linux-x86-64.so.2).
copy_prog() {
	local root=$1 p=$2 lib
	mkdir -p "$root$(dirname "$p")"
	cp -L "$p" "$root$p"
	for lib in $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

build_initramfs() {
	local root=$vm/root p a path
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root,newroot,cpusetd/build}
	cp /bin/busybox "$root/bin/busybox" || return 1
	for a in $(/bin/busybox --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	# copy_prog keeps ldd's paths (/lib/x86_64-linux-gnu/..., or /usr/lib
	# for some), so both are plain directories in the guest.
	for p in $HOST_PROGS; do
		path=$(command -v "$p") || { echo "# vm: $p missing (make deps)"; return 1; }
		rm -f "$root/bin/$p"
		copy_prog "$root" "$(readlink -f "$path")"
		[ -e "$root/bin/$p" ] || ln -s "$(readlink -f "$path")" "$root/bin/$p"
	done
	for p in cpusetd cpusetctl bench-resize bench-alloc; do
		[ -x "$out/$p" ] || continue
		copy_prog "$root" "$(readlink -f "$out/$p")"
		cp "$out/$p" "$root/cpusetd/build/$p"
	done
	# The project's scripts; the guest runs them from /cpusetd.
	mkdir -p "$root/cpusetd/tests"
	cp -r tests/integration tests/vm "$root/cpusetd/tests/"
	# lib.sh reads the pinned maps' layout version from the ABI header.
	mkdir -p "$root/cpusetd/maps"
	cp maps/cpusetd.h "$root/cpusetd/maps/"
	cp -r tools "$root/cpusetd/tools"
	cp tests/vm/init "$root/init"
	chmod 0755 "$root/init"
	# The kernel opens /dev/console for PID 1 before anything is mounted.
	mknod -m 0600 "$root/dev/console" c 5 1 || return 1
	echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$vm/initramfs.cpio.tmp" &&
		mv "$vm/initramfs.cpio.tmp" "$vm/initramfs.cpio"
}

# --- 3. boot -------------------------------------------------------------

# One memory backend per NUMA node; CPU index = socket*8 + core*2 + thread,
# so each node holds two whole cores of one socket.
QEMU_NUMA=()
for n in 0 1 2 3; do
	QEMU_NUMA+=(-object "memory-backend-ram,id=mem$n,size=512M"
		-numa "node,nodeid=$n,memdev=mem$n,cpus=$((n * 4))-$((n * 4 + 3))")
done

boot() {
	local log=$1 ci=${CI:-false}
	# no_timer_check: on a loaded host TCG can be too slow for the
	# kernel's IO-APIC timer check, which then panics at boot.
	# -cpu max under TCG is an AMD family whose topology leaf (topoext,
	# CPUID 0x8000001e) TCG lacks, so the guest would see no thread
	# siblings; as GenuineIntel the guest reads CPUID 0xb, which TCG fills
	# from -smp.
	# loglevel=5 and softlockup_all_cpu_backtrace: a lockup's backtraces
	# (printed at the default level) of every CPU reach the console log.
	# -overcommit mem-lock=on: qemu mlockall()s its text, libraries and
	# the guest's RAM. A host that reclaims cold memory on its own (this
	# one runs a DAMON "pageout" scheme, /sys/kernel/mm/damon) would
	# otherwise page the emulator's own code out while a vCPU idles, and
	# the whole guest then stalls on the refaults (soft lockups of 40-100 s
	# seen in the VM lane under load).
	# mitigations=off: -cpu max,vendor=GenuineIntel claims no immunity,
	# so the guest turns on page table isolation (two CR3 writes per
	# syscall and interrupt, each a full flush of TCG's software TLB),
	# retpolines and the rest: costs every fork, exec and syscall pays
	# under emulation, for attacks on a guest that runs only our tests.
	# The BPF verifier checks the same either way (root loads bypass its
	# Spectre sanitation, bpf_bypass_spec_v1(), mitigations or not).
	rm -f "$vm/lockup"
	watch_lockup "$log" &
	local watcher=$!
	timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg,thread=${VM_TCG_THREAD:-multi} \
		-machine q35 -cpu max,vendor=GenuineIntel -m 2048 -overcommit mem-lock=on \
		-smp 16,sockets=2,cores=4,threads=2 "${QEMU_NUMA[@]}" \
		-kernel "$vm/vmlinuz" -initrd "$vm/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 loglevel=${VM_LOGLEVEL:-5} ${VM_KERNEL_ARGS:-softlockup_all_cpu_backtrace=1} no_timer_check mitigations=off cgroup_no_v1=all cpusetd.ci=$ci cpusetd.tests=${tests// /,} cpusetd.test_timeout=${VM_TEST_TIMEOUT:-420} cpusetd.stress=${VM_STRESS:-0}" \
		-display none -monitor none -serial stdio -no-reboot -nodefaults \
		</dev/null >"$log" 2>&1
	local rc=$?
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	return $rc
}

# watch_lockup LOG: a guest whose kernel reports a CPU stuck for a minute
# or more never recovers (the per-test timeout needs that kernel too):
# stops qemu then instead of at the watchdog, minutes later.
watch_lockup() {
	while sleep 5; do
		grep -Eq 'soft lockup - CPU#[0-9]+ stuck for ([6-9][0-9]|[0-9]{3,})s' "$1" 2>/dev/null || continue
		grep -Em1 'soft lockup - CPU#' "$1" >"$vm/lockup"
		pkill -f "qemu-system-x86_64 .*-initrd $vm/initramfs.cpio"
		return
	done
}

echo "# vm: kernel"
fetch_kernel || die "cannot fetch the kernel package (apt)"
echo "# vm: initramfs"
build_initramfs || die "cannot build the initramfs"
t1=$(now)
echo "# vm: booting qemu (16 vCPUs, 4 NUMA nodes, TCG), watchdog ${timeout_s}s"
log=$vm/console.log
boot "$log"
rc=$?
# A guest that never got to run anything (a boot hiccup on a loaded host)
# is booted once more; one that did run tests is reported as it is.
if ! grep -q '^vm: booted' "$log"; then
	echo "# vm: the guest did not come up (qemu exited $rc); booting again"
	tail -n 5 "$log" | tr -d '\r' | sed 's/^/#   /'
	boot "$log"
	rc=$?
fi
t2=$(now)
tr -d '\r' <"$log" >"$log.txt"

# --- 4. results ----------------------------------------------------------

# The guest prints "vm: begin TEST", the test's own lines, "vm: end TEST RC",
# and finally "vm: done". Everything else (kernel messages, "# ..." notes)
# is kept in the console log.
passed=0
failed=0
awk -v out=/dev/stdout '
	/^vm: begin / { t = $3; sub(/\.sh$/, "", t); next }
	/^vm: end / {
		if ($4 != 0) print "# vm: " $3 " exited " $4
		next
	}
	/^vm: took / {
		n = $3; sub(/^test_/, "", n); sub(/\.sh$/, "", n)
		took = took (took == "" ? "" : ", ") n " " $4 " s"
		next
	}
	END { if (took != "") print "# vm: per test (guest clock): " took }
	/^(not )?ok - / {
		line = $0
		sub(/^ok - /, "ok - vm/" t ": ", line)
		sub(/^not ok - /, "not ok - vm/" t ": ", line)
		print line; next
	}
	/^#t / { next }
	/^# / && t != "" { print; next }
	/^vm: / { print "# " $0 }
' "$log.txt" >"$vm/results.txt"
cat "$vm/results.txt"
skipped=$(grep -cE '^ok - vm/[^ ]*: (# )?SKIP( |$)' "$vm/results.txt")
passed=$(($(grep -c '^ok - ' "$vm/results.txt") - skipped))
failed=$(grep -c '^not ok - ' "$vm/results.txt")
# A test that exited non-zero without a "not ok" line still fails.
while read -r name code; do
	[ "$code" = 0 ] && continue
	grep -q "^not ok - vm/${name%.sh}: " "$vm/results.txt" && continue
	echo "not ok - vm/${name%.sh} exited $code"
	failed=$((failed + 1))
done < <(sed -n 's/^vm: end \([^ ]*\) \([0-9]*\)$/\1 \2/p' "$log.txt")
if ! grep -q '^vm: done$' "$log.txt"; then
	if [ -s "$vm/lockup" ]; then
		echo "not ok - vm: the guest kernel locked up, qemu stopped: $(tr -d '\r' <"$vm/lockup")"
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "not ok - vm: watchdog: the guest did not finish within ${timeout_s}s"
	else
		echo "not ok - vm: the guest did not finish (qemu exited $rc)"
	fi
	echo "# vm: last console lines:"
	tail -n 25 "$log.txt" | sed 's/^/#   /'
	failed=$((failed + 1))
fi
boot_s=$(sed -n 's/^vm: booted in \([0-9.]*\)s$/\1/p' "$log.txt")
printf '# vm: image %ss, guest up after %ss, qemu %ss, lane %ss; console log %s\n' \
	"$(secs "$t0" "$t1")" "${boot_s:-?}" "$(secs "$t1" "$t2")" "$(secs "$t0" "$(now)")" "$log.txt"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
