# cpusetd build. Everything goes to build/; quiet unless V=1.
#   make            build/cpusetd, build/cpusetctl, tests
#   make check      every test (unit, fuzzers 10 s each, integration, containerd, VM lane); as root
#   make check-stress  the same but the VM lane, while stress-ng loads every CPU (tests/stress.sh)
#   make vm-check   the VM lane only (qemu, Debian kernel, cgroup v2, NUMA, SMT);
#                   VM_TESTS="test_a test_b" runs a subset
#   make demo       the main job on real runc containers; run as root
#                   (check, demo and bench first install missing packages)
#   make bench      the resize, allocation, telemetry and write-hook benchmarks (tools/bench-*)
#   make bench-telemetry  the telemetry's cost alone; BENCH_LOADED=1 beside stress-ng
#   make fuzz       every libFuzzer harness (tests/fuzz), FUZZ_SECONDS each (default 60);
#                   FUZZ="cpulist meta" runs a subset
#   make install    binaries, unit, man pages and default config under $(DESTDIR)$(PREFIX)
#   make uninstall  removes what make install put there (the config only if unedited)
#   make man        the man pages cpusetd(8), cpusetctl(8), cpusetd.conf(5) into build/man
#   make deb        the Debian package build/cpusetd_<version>_<arch>.deb (tools/debian)
#   make image      the OCI image build/cpusetd-image.oci.tar: the .deb on a Debian base (tools/image)
#   make deps       install the Debian packages all of this needs; unpack containerd
#                   1.7 and 2.x under build/ for the containerd lane (tools/deps-containerd.sh)
#   make help       this text

.DELETE_ON_ERROR:
.SECONDARY:
.DEFAULT_GOAL := all

OUT       ?= build
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PREFIX    ?= /usr/local
VMLINUX_H ?=
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$(OUT) -I.
LDLIBS_D := -lbpf -lelf -lz -lsystemd -ljson-c -linih
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -I. -Wall -Werror

# One source list per folder; the folders are the pipeline (README "Code
# map"): base <- topo, meta <- alloc <- policy <- config <- daemon -> export.
BASE_SRCS      := $(wildcard user/base/*.c)
CGROUPFS_SRCS  := $(wildcard cgroupfs/*.c)
TOPO_SRCS      := $(wildcard user/topo/*.c)
META_SRCS      := $(wildcard user/meta/*.c)
ALLOC_SRCS     := $(wildcard user/alloc/*.c)
POLICY_SRCS    := $(wildcard user/policy/*.c)
CONFIG_SRCS    := $(wildcard user/config/*.c)
TELEMETRY_SRCS := $(wildcard user/telemetry/*.c)
HOST_SRCS      := $(wildcard user/host/*.c)
BPF_LOAD_SRCS  := $(wildcard user/bpf/*.c)
EXPORT_SRCS    := $(wildcard user/export/*.c)
DAEMON_SRCS    := $(filter-out user/daemon/main.c,$(wildcard user/daemon/*.c))
CTL_SRCS       := $(filter-out tools/bench-%.c,$(wildcard tools/*.c))

# Everything but main() is the library: the daemon, cpusetctl, the
# benchmarks and the unit tests link the same objects.
PURE_SRCS := $(BASE_SRCS) $(CGROUPFS_SRCS) $(TOPO_SRCS) $(META_SRCS) $(ALLOC_SRCS) \
	     $(POLICY_SRCS) $(CONFIG_SRCS) $(TELEMETRY_SRCS)
LIB_SRCS  := $(PURE_SRCS) $(HOST_SRCS) $(BPF_LOAD_SRCS) $(EXPORT_SRCS) $(DAEMON_SRCS)
TEST_SRCS := $(wildcard tests/unit/test_*.c)

LIB_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(LIB_SRCS))
CTL_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(CTL_SRCS))
TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(TEST_SRCS))

.PHONY: all check check-stress unit integration vm-check demo bench bench-telemetry install clean \
	help deps fuzz fuzz-build FORCE man uninstall deb
all: $(OUT)/cpusetd $(OUT)/cpusetctl $(OUT)/bench-resize $(OUT)/bench-alloc $(TESTS)

$(OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
ifeq ($(VMLINUX_H),)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@
else
	$(Q)cp $(VMLINUX_H) $@
endif

$(OUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h maps/cpusetd.h $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# Generated headers: -MMD cannot know them before the first build.
$(OUT)/obj/user/bpf/bpf_events.o: $(OUT)/cpusetd.skel.h
$(OUT)/obj/user/bpf/bpf_telemetry.o: $(OUT)/telemetry.skel.h

# The git revision in --version and cpusetd_build_info: git describe in a
# git tree; a tarball or .deb source has no .git, so then the first line
# of a REVISION file, else "unknown" (never a failure). REVISION=... on
# the command line wins. revision.h is rewritten only when the revision
# changes, so only config_version.c compiles again.
REVISION ?= $(shell { test -e .git && git describe --always --dirty 2>/dev/null; } || \
	      head -n1 REVISION 2>/dev/null || echo unknown)
$(OUT)/revision.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define CPUSETD_REVISION "%s"\n' \
		"$$(printf '%s' '$(subst ','',$(REVISION))' | tr -cd 'A-Za-z0-9._+~-' | cut -c1-64)" >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(OUT)/obj/user/config/config_version.o: $(OUT)/revision.h
FORCE:

# -MMD -MP: each object lists the headers it included (build/obj/**/*.d).
$(OUT)/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/libcpusetd.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)ar rcs $@ $^

$(OUT)/cpusetd: $(OUT)/obj/user/daemon/main.o $(OUT)/libcpusetd.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_D)

$(OUT)/cpusetctl: $(CTL_OBJS) $(OUT)/libcpusetd.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_D)

$(OUT)/bench-resize: $(OUT)/obj/tools/bench-resize.o $(OUT)/libcpusetd.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_D)

$(OUT)/bench-alloc: $(OUT)/obj/tools/bench-alloc.o $(OUT)/libcpusetd.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_D)

$(OUT)/tests/%: $(OUT)/obj/tests/unit/%.o $(OUT)/libcpusetd.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_D) -lcmocka

# A unit test of cpusetctl's own logic links that object too.
$(OUT)/tests/test_ctl_live: $(OUT)/obj/tools/ctl_live.o

deps:
	$(Q)tools/deps.sh $(OUT)

# libFuzzer harnesses (tests/fuzz/fuzz_<name>.c), one per parser. The
# library is compiled again with clang, coverage and ASan+UBSan into
# $(OUT)/fuzz, never mixed with the normal objects. Clang-only warnings
# in code under edit must not stop fuzzing, so -Werror is for the
# harnesses only.
FUZZ_SECONDS ?= 60
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ       ?= $(FUZZ_NAMES)
FUZZ_OUT   := $(OUT)/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -D_GNU_SOURCE \
	       -I$(OUT) -I. $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_OUT)/obj/%.o,$(PURE_SRCS))
FUZZ_BINS  := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_NAMES))

$(FUZZ_OUT)/obj/user/config/config_version.o: $(OUT)/revision.h
$(FUZZ_OUT)/obj/%.o: %.c
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_OUT)/libcpusetd.a: $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OUT)/libcpusetd.a
	$(call msg,FUZZLD,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -MF $@.d -Werror -fsanitize=fuzzer $< $(FUZZ_OUT)/libcpusetd.a \
		-o $@ $(LDLIBS_D)

fuzz-build: $(FUZZ_BINS)

# Each harness for FUZZ_SECONDS on a copy of its seed corpus; one TAP
# line each; fails when any finds a crash, leak, timeout or OOM.
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(OUT) $(FUZZ_SECONDS) $(FUZZ)

# Unit tests, then integration tests on the real kernel; one closing
# "N passed, M failed, K skipped" line over all of them.
check: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)tests/run-all.sh $(OUT)

# make check with every CPU busy: races hide under load too.
check-stress: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)tests/stress.sh $(OUT)

unit: $(TESTS)
	$(Q)tests/run-all.sh $(OUT) unit

integration: all
	$(Q)tests/run-all.sh $(OUT) integration

# The VM lane (tests/vm/README.md): needs root for apt and the initramfs.
vm-check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)VM_TESTS="$(VM_TESTS)" tests/run-all.sh $(OUT) vm

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh $(OUT)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUT)/bench-alloc
	$(Q)tools/bench-resize.sh $(OUT)
	$(Q)tools/bench-telemetry.sh $(OUT)
	$(Q)tools/bench-write-hook.sh $(OUT)

# BENCH_ROUNDS (default 9), BENCH_LOADED=1 and the rest: tools/bench-telemetry.sh.
bench-telemetry: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench-telemetry.sh $(OUT) $(BENCH_ROUNDS)

# Man pages (tools/man/gen-man.py): the option, command and key sections
# are rendered from the built programs' --help texts and the shipped
# config file, the prose from tools/man/*.in.
MAN_PAGES := $(OUT)/man/cpusetd.8 $(OUT)/man/cpusetctl.8 $(OUT)/man/cpusetd.conf.5
man: $(MAN_PAGES)
$(MAN_PAGES) &: $(OUT)/cpusetd $(OUT)/cpusetctl systemd/cpusetd.conf tools/man/gen-man.py \
		tools/man/helptext.py $(wildcard tools/man/*.in)
	$(call msg,MAN,$(OUT)/man)
	$(Q)tools/man/gen-man.py $(OUT)/cpusetd $(OUT)/cpusetctl systemd/cpusetd.conf $(OUT)/man

# The unit goes where systemd looks for installed packages' units
# ($(PREFIX)/lib/systemd/system; /usr/local/lib/... is on its search path),
# never /etc/systemd/system: that is the admin's, for overrides. Both
# programs are administration tools, in sbin as in the .deb.
SBINDIR ?= $(PREFIX)/sbin
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR  ?= $(PREFIX)/share/man
CONFDIR ?= /etc/cpusetd
INSTALLED := $(SBINDIR)/cpusetd $(SBINDIR)/cpusetctl $(UNITDIR)/cpusetd.service \
	     $(MANDIR)/man8/cpusetd.8 $(MANDIR)/man8/cpusetctl.8 $(MANDIR)/man5/cpusetd.conf.5

install: $(OUT)/cpusetd $(OUT)/cpusetctl $(MAN_PAGES)
	install -D -m 0755 $(OUT)/cpusetd $(DESTDIR)$(SBINDIR)/cpusetd
	install -D -m 0755 $(OUT)/cpusetctl $(DESTDIR)$(SBINDIR)/cpusetctl
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|^ExecStart=/usr/local/sbin/cpusetd |ExecStart=$(SBINDIR)/cpusetd |' \
		systemd/cpusetd.service >$(DESTDIR)$(UNITDIR)/cpusetd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/cpusetd.service
	install -D -m 0644 $(OUT)/man/cpusetd.8 $(DESTDIR)$(MANDIR)/man8/cpusetd.8
	install -D -m 0644 $(OUT)/man/cpusetctl.8 $(DESTDIR)$(MANDIR)/man8/cpusetctl.8
	install -D -m 0644 $(OUT)/man/cpusetd.conf.5 $(DESTDIR)$(MANDIR)/man5/cpusetd.conf.5
	test -e $(DESTDIR)$(CONFDIR)/cpusetd.conf || \
		install -D -m 0644 systemd/cpusetd.conf $(DESTDIR)$(CONFDIR)/cpusetd.conf

# The config goes only when it is still the shipped one: local settings
# stay, as dpkg keeps a conffile at remove. Stop and disable the unit
# first (README "Install on a node").
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	if cmp -s systemd/cpusetd.conf $(DESTDIR)$(CONFDIR)/cpusetd.conf; then \
		rm -f $(DESTDIR)$(CONFDIR)/cpusetd.conf; \
		rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(CONFDIR)/cpusetd.conf ]; then \
		echo "kept $(DESTDIR)$(CONFDIR)/cpusetd.conf: it has local changes"; \
	fi

# The Debian package (tools/debian/, built by tools/build-deb.sh with
# dpkg-buildpackage). Its version is CPUSETD_VERSION of user/config/config.h
# plus the git revision that --version prints (REVISION above; '-' and '_'
# become '.', as a Debian version needs): 0.1.0+f4540ed.dirty, or 0.1.0
# when the revision is unknown. DEB_FILE is the package's path, for
# targets that use it (the OCI image).
VERSION      = $(shell sed -n 's/^\#define CPUSETD_VERSION[[:space:]]*"\(.*\)"/\1/p' user/config/config.h)
DEB_REVISION = $(shell printf '%s' '$(subst ','',$(REVISION))' | tr -cd 'A-Za-z0-9._+~-' | cut -c1-64)
DEB_VERSION  = $(VERSION)$(if $(filter-out unknown,$(DEB_REVISION)),+$(subst _,.,$(subst -,.,$(DEB_REVISION))))
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null || echo unknown)
DEB_FILE     = $(OUT)/cpusetd_$(DEB_VERSION)_$(DEB_ARCH).deb

deb:
	$(call msg,DEB,$(DEB_FILE))
	$(Q)mkdir -p $(OUT)
	$(Q)tools/build-deb.sh $(OUT) '$(DEB_VERSION)' '$(DEB_REVISION)' $(if $(Q),>$(OUT)/deb.log 2>&1 || \
		{ cat $(OUT)/deb.log; exit 1; })

# The OCI image (tools/image/build-image.sh): the .deb installed with dpkg
# into a debootstrap --variant=minbase base of this host's Debian release
# (cached in $(OUT)/image/base), one gzip'd layer, an OCI layout tarball
# that `ctr -n k8s.io images import` takes; no registry. Tagged with the
# upstream version, as tools/deploy/kustomization.yaml names it. Needs root
# and apt's mirror (debootstrap). tests/containerd/test_image.sh runs it.
IMAGE_NAME ?= localhost/cpusetd:$(VERSION)
IMAGE_FILE  = $(OUT)/cpusetd-image.oci.tar
.PHONY: image
image: deb
	$(call msg,IMAGE,$(IMAGE_FILE))
	$(Q)tools/image/build-image.sh --work $(OUT)/image --deb $(DEB_FILE) --name '$(IMAGE_NAME)' \
		--out $(IMAGE_FILE)

clean:
	rm -rf $(OUT)

# $(OUT)/image holds the image's Debian root file system (etc/rc2.d, ...);
# $(OUT)/deb the package build's own tree and objects (tools/build-deb.sh).
-include $(shell find $(OUT) \( -path $(OUT)/image -o -path $(OUT)/deb \) -prune -o -name '*.d' -type f -print 2>/dev/null)

help:
	@sed -n '2,19s/^# //p' Makefile
