# SPDX-License-Identifier: MIT
# libnccl-net-gdx: one Makefile, no autotools.

# The version is the newest entry of debian/changelog, the project's changelog.
VERSION  := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
BUILD    ?= $(if $(SANITIZE),build-san,$(if $(DEBUG),build-debug,build))
PKGS     := libibverbs hwloc
PKG_CONFIG ?= pkg-config
CC       ?= cc
CFLAGS   ?= -O2 -g
# override: flags given on the command line (make CFLAGS=..., rpmbuild's
# optflags) are kept, and the ones the build needs are still added.
override CFLAGS   += -std=gnu11 -fPIC -fvisibility=hidden -Wall -Wextra -Wshadow -Wformat=2 \
            -Wmissing-prototypes -Wstrict-prototypes -Wno-missing-field-initializers
# -Iplugin: the plugin's and the tools' headers, named by their folder
# ("data/gdx_p2p.h"); -Iinclude: NCCL's ABI and what plugin and tools share.
override CPPFLAGS += -D_GNU_SOURCE -Iplugin -Iinclude -MMD -MP -DGDX_VERSION='"$(VERSION)"' $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
override LDLIBS   += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lpthread -ldl

# The build dependencies, checked before anything compiles: one line naming
# each missing .pc and the packages that give it, not an error per file that
# includes its header. Not for the goals that install them first (deps, and
# demo, test, check and bench through it, which build in a fresh make) or
# build nothing here.
PKG_apt_libibverbs := libibverbs-dev
PKG_dnf_libibverbs := rdma-core-devel
PKG_apt_hwloc      := libhwloc-dev
PKG_dnf_hwloc      := hwloc-devel
NO_BUILD_GOALS     := deps check-deps demo test check bench clean version deb rpm uninstall \
		      deb-deps rpm-deps package-deps
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
ifeq ($(shell command -v $(PKG_CONFIG)),)
$(error pkg-config ($(PKG_CONFIG)) not found: install pkg-config (apt: Debian, Ubuntu) or pkgconf (dnf: Fedora, RHEL))
endif
PKGS_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell $(PKG_CONFIG) --exists $p && echo y),,$p)))
ifneq ($(PKGS_MISSING),)
$(error $(subst $() ,$() and ,$(PKGS_MISSING:=.pc)) not found by pkg-config: install $(foreach p,$(PKGS_MISSING),$(PKG_apt_$p)) (apt: Debian, Ubuntu) or $(foreach p,$(PKGS_MISSING),$(PKG_dnf_$p)) (dnf: Fedora, RHEL))
endif
endif

# make SANITIZE=address,undefined: plugin, archive, tools and tests all built
# with the sanitizers (the tests dlopen the .so, so they need the runtime too),
# into build-san so that nothing mixes with the plain build. make
# SANITIZE=thread BUILD=build-tsan: the same with ThreadSanitizer (which no
# other sanitizer shares a process with), for the tests that run threads.
ifneq ($(SANITIZE),)
override CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override LDFLAGS  += -fsanitize=$(SANITIZE)
endif

# make DEBUG=1: the plugin with its debug invariants (GDX_DEBUG, gdx_req.h:
# a request that completes while a work request still reads its buffer
# aborts, naming the mode), into build-debug. The sanitizer builds have them
# too. make test runs the reuse matrix against it (scripts/run-tests.sh).
ifneq ($(DEBUG)$(SANITIZE),)
override CPPFLAGS += -DGDX_DEBUG
endif

# The plugin: one folder a layer (tests/README.md, "Where things are"); the
# tools under plugin/tools/, which the .so carries nothing of.
SRCS     := $(filter-out plugin/tools/%,$(wildcard plugin/*/*.c))
TOOL_SRCS := $(wildcard plugin/tools/*/*.c)
OBJS     := $(patsubst %.c,$(BUILD)/%.o,$(SRCS))
LIB      := $(BUILD)/libnccl-net-gdx.so
ARCHIVE  := $(BUILD)/libgdx.a
# What both tools (and the tests of it) share: the JSON reader and writers,
# the escaping, the live files' reader. An archive, so that each program
# takes only the objects it uses.
COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard plugin/tools/common/*.c))
TOOLS_ARCHIVE := $(BUILD)/libgdx-tools.a
BENCH_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard plugin/tools/bench/*.c))
DOCTOR_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard plugin/tools/doctor/*.c))

UNIT_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c))
# The data-path tests, run in the VM; those that need every NIC to reach
# every other (vm-run.sh --switch) are tests/vm/switch_*.c.
SW_TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/vm/switch_*.c))
VM_TESTS   := $(filter-out $(SW_TESTS),$(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/vm/*.c)))
TOOLS      := $(BUILD)/gdx-bench $(BUILD)/gdx-doctor
# The latency floor next to gdx-bench -m lat (scripts/side-by-side.sh).
REF_TOOLS  := $(BUILD)/tests/ref/verbs_pingpong
# The client scripts/cpu-cost.sh drives any plugin's v11 table with.
NET_COST   := $(BUILD)/tests/ref/net_cost
# The harness every test program links (tests/lib: the runner, the plugin
# loader, connected pairs, the driver of the entry points).
TEST_LIB   := $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(filter-out tests/lib/gdx_fake_nic.c,$(wildcard tests/lib/*.c)))
# Scripted verbs (tests/lib/gdx_fake_nic.h): the unit tests that include it
# link it. It replaces some of libibverbs' exported calls for the whole
# program, so no other program may.
FAKE_NIC   := $(BUILD)/tests/lib/gdx_fake_nic.o
FAKE_NIC_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(shell grep -l '"gdx_fake_nic.h"' tests/unit/*.c 2>/dev/null))

# The man pages as they are installed: the tools' (1) and the plugin's (7):
# libnccl-net-gdx(7), the page a user reads, and a page per subject, which
# its SEE ALSO names (tests/check/docs.sh holds this list to plugin/*.7).
# Their footers name the version themselves (tests/check/docs.sh holds them
# to debian/changelog's), so that man -l on the source page shows it too.
MAN7       := libnccl-net-gdx libnccl-net-gdx-protocol libnccl-net-gdx-failover \
	libnccl-net-gdx-gpudirect libnccl-net-gdx-nccl libnccl-net-gdx-rma \
	libnccl-net-gdx-diagnostics libnccl-net-gdx-security libnccl-net-gdx-performance
MANS       := $(BUILD)/man/gdx-doctor.1 $(BUILD)/man/gdx-bench.1 $(MAN7:%=$(BUILD)/man/%.7)

.PHONY: all programs version deps test check demo bench clean
all: $(LIB) $(ARCHIVE) $(TOOLS_ARCHIVE) $(TOOLS) $(UNIT_TESTS) $(VM_TESTS) $(SW_TESTS) $(REF_TOOLS) $(NET_COST)
# What the packages ship: the plugin, the tools and the man pages.
programs: $(LIB) $(TOOLS) $(MANS)

version:
	@echo $(VERSION)

# debian/changelog: the version (GDX_VERSION) the objects are built with.
$(BUILD)/%.o: %.c debian/changelog
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Made anew, not updated: a file moved or removed leaves no stale member.
$(ARCHIVE): $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(TOOLS_ARCHIVE): $(COMMON_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# No SONAME: the plugin is a module NCCL dlopens by its file name, never a
# library anything links against (Debian Policy 8, "dynamic modules"); the
# loader cache and the default directories find it by that name alone.
$(LIB): $(OBJS) plugin/exports.map
	$(CC) -shared -Wl,--version-script=plugin/exports.map -Wl,--no-undefined \
	      $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

# The tests include the harness's headers by name ("gdx_test.h").
$(BUILD)/tests/%.o: override CPPFLAGS += -Itests/lib

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB) $(TOOLS_ARCHIVE) $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(FAKE_NIC_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(FAKE_NIC) $(TEST_LIB) $(TOOLS_ARCHIVE) $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# A made-up NVML (tests/lib/fake/nvml.c), which the C2C probe's test loads.
FAKE_NVML := $(BUILD)/tests/lib/fake/libnvidia-ml.so
$(FAKE_NVML): tests/lib/fake/nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -fPIC -o $@ $<
$(BUILD)/tests/unit/gdr_c2c: $(FAKE_NVML)

$(REF_TOOLS): $(BUILD)/tests/ref/verbs_pingpong.o $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# It loads the plugin it measures; it links nothing of this one.
$(NET_COST): $(BUILD)/tests/ref/net_cost.o
	$(CC) $(LDFLAGS) -o $@ $^ -ldl

# The test objects are kept between builds: make would take them for
# intermediate files and delete them, and then compile every test again to
# relink it when one harness file changed.
.SECONDARY: $(TEST_LIB) $(FAKE_NIC) $(addsuffix .o,$(UNIT_TESTS) $(VM_TESTS) $(SW_TESTS) $(REF_TOOLS) $(NET_COST))

# --plot-from and --plot-ref read gdx-bench -j's JSON with the tools' reader
# (plugin/tools/common), nothing of gdx-doctor. The plugin's archive gives
# what it shares with the plugin (the files a user names, the out-of-band
# interface -S binds to): only those objects are taken from it, none that
# needs libibverbs or hwloc.
$(BUILD)/gdx-bench: $(BENCH_OBJS) $(TOOLS_ARCHIVE) $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl -lm

$(BUILD)/gdx-doctor: $(DOCTOR_OBJS) $(TOOLS_ARCHIVE) $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# make fuzz: the libFuzzer targets, each tests/fuzz/X.c built as
# $(BUILD)/tests/fuzz/X with its seeds in tests/fuzz/corpus/X
# (scripts/run-tests.sh runs each a short while; make fuzz FUZZ_SECONDS=3600
# builds them and runs each that long over its corpus):
#   wire     every parser of bytes from the network and the acceptor's
#            handshake (the plugin's objects)
#   connect  the connector against hostile answers
#   ring     the RMA ring's listen socket and its door against hostile
#            hellos (the plugin's objects)
#   ctrl     the control data a peer writes by RDMA (clear-to-sends, size
#            records, immediates, failover notes) into the plugin's comms
#            over the unit tests' made-up NIC (tests/lib/gdx_fake_nic.c)
#   json     gdx-doctor's JSON reader and fleet (the doctor's objects, built
#            without main, and the plugin's)
#   log      gdx-doctor log's NCCL log parser (likewise)
#   live     gdx-doctor top and hang, and the live files' reader, on a file
#            its owner wrote (likewise)
#   topo_xml the hwloc XML reader: deep nesting, huge files (the plugin's)
#   tree_walk the saved-tree walker against openat2 RESOLVE_IN_ROOT, with
#            links leading anywhere (the plugin's)
#   hang_scale hang --merge on large jobs' reports, forged ones among them
#            (the doctor's)
# clang builds its own copy of the objects, with coverage, the sanitizers and
# the debug invariants (GDX_DEBUG).
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_PLUGIN  := wire connect ring ctrl topo_xml tree_walk
FUZZ_DOCTOR  := json log live hang_scale
FUZZ_TARGETS := $(FUZZ_PLUGIN:%=$(BUILD)/tests/fuzz/%) $(FUZZ_DOCTOR:%=$(BUILD)/tests/fuzz/%)
FUZZ_LIB     := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(SRCS))
FUZZ_DOCTOR_OBJS := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(wildcard plugin/tools/doctor/*.c))
FUZZ_COMMON  := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(wildcard plugin/tools/common/*.c))
FUZZ_FAKE_NIC := $(BUILD)/fuzz/tests/lib/gdx_fake_nic.o
FUZZ_OBJS    := $(FUZZ_LIB) $(FUZZ_COMMON) $(FUZZ_DOCTOR_OBJS) $(FUZZ_FAKE_NIC) $(patsubst %.c,$(BUILD)/fuzz/%.o,$(wildcard tests/fuzz/*.c))
FUZZ_SECONDS ?=

.PHONY: fuzz
fuzz: $(FUZZ_TARGETS)
ifneq ($(FUZZ_SECONDS),)
	GDX_FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-tests.sh --fuzz
endif

$(BUILD)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -DGDX_DEBUG $(CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c -o $@ $<

$(FUZZ_DOCTOR_OBJS): override CPPFLAGS += -DGDX_DOCTOR_NO_MAIN
# ctrl drives the plugin's comms over the unit tests' made-up NIC, whose
# calls into the harness (a failed check, the logger) it defines itself.
$(BUILD)/fuzz/tests/%.o: override CPPFLAGS += -Itests/lib
$(BUILD)/tests/fuzz/ctrl: $(FUZZ_FAKE_NIC)

$(FUZZ_PLUGIN:%=$(BUILD)/tests/fuzz/%): $(BUILD)/tests/fuzz/%: $(BUILD)/fuzz/tests/fuzz/%.o $(FUZZ_COMMON) $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(LDFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

$(FUZZ_DOCTOR:%=$(BUILD)/tests/fuzz/%): $(BUILD)/tests/fuzz/%: $(BUILD)/fuzz/tests/fuzz/%.o $(FUZZ_DOCTOR_OBJS) $(FUZZ_COMMON) $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(LDFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

# kept between builds, not taken for make's intermediate files
.SECONDARY: $(FUZZ_OBJS)

-include $(FUZZ_OBJS:.o=.d)

# make install [PREFIX=/usr/local] [DESTDIR=staging]; make uninstall.
# INSTALL_MAP is the one list of what goes where, SOURCE:DIRECTORY:MODE, so
# uninstall removes exactly what install put there. No libnccl-net.so link:
# NCCL_NET_PLUGIN=gdx finds the plugin by its own name (README, Install).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/libnccl-net-gdx
# The operator's examples (scripts/ops/), and the tools' bash completion,
# which bash-completion loads by the command's name.
EXAMPLEDIR ?= $(DOCDIR)/examples
COMPLDIR   ?= $(PREFIX)/share/bash-completion/completions
INSTALL ?= install

INSTALL_MAP = $(LIB):$(LIBDIR):0644 \
	$(BUILD)/gdx-doctor:$(BINDIR):0755 $(BUILD)/gdx-bench:$(BINDIR):0755 \
	$(BUILD)/man/gdx-doctor.1:$(MANDIR)/man1:0644 $(BUILD)/man/gdx-bench.1:$(MANDIR)/man1:0644 \
	$(MAN7:%=$(BUILD)/man/%.7:$(MANDIR)/man7:0644) \
	README.md:$(DOCDIR):0644 LICENSE:$(DOCDIR):0644 debian/NEWS:$(DOCDIR):0644 \
	scripts/ops/gdx-slurm-prolog.sh:$(EXAMPLEDIR):0755 scripts/ops/gdx-k8s-probe.sh:$(EXAMPLEDIR):0755 \
	scripts/ops/gdx-doctor-daemonset.yaml:$(EXAMPLEDIR):0644 \
	scripts/ops/bash-completion/gdx-doctor:$(COMPLDIR):0644 \
	scripts/ops/bash-completion/gdx-bench:$(COMPLDIR):0644
inst_word = $(word $2,$(subst :, ,$1))
inst_dest = $(call inst_word,$1,2)/$(notdir $(call inst_word,$1,1))
INSTALLED = $(foreach e,$(INSTALL_MAP),$(call inst_dest,$e))
define inst_newline


endef
# A plain install as root refreshes the loader cache, so that NCCL's dlopen
# by name finds a library just put in /usr/local/lib.
inst_ldconfig = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; \
	then ldconfig; fi

# The directories install made (none of those that were there before it):
# INSTALL_DIRS_FILE lists them, one a line and without DESTDIR, and
# uninstall removes each that is empty once the files are gone, the deepest
# first. A second install over the first keeps the first's list. The
# packages (debian/rules, the spec) drop the list: dpkg and rpm own their
# directories.
INSTALL_DIRS      = $(sort $(foreach e,$(INSTALL_MAP),$(call inst_word,$e,2)))
INSTALL_DIRS_FILE = $(DOCDIR)/installed-dirs

.PHONY: install uninstall deb rpm
install: $(foreach e,$(INSTALL_MAP),$(call inst_word,$e,1))
	@for d in $(INSTALL_DIRS); do \
		while [ "$$d" != / ] && [ ! -d '$(DESTDIR)'"$$d" ]; do echo "$$d"; d=$$(dirname "$$d"); done; \
	done >$(BUILD)/install-dirs.new
	$(foreach e,$(INSTALL_MAP),$(INSTALL) -D -m $(call inst_word,$e,3) $(call inst_word,$e,1) \
		'$(DESTDIR)$(call inst_dest,$e)'$(inst_newline))
	@cat '$(DESTDIR)$(INSTALL_DIRS_FILE)' $(BUILD)/install-dirs.new 2>/dev/null | LC_ALL=C sort -u \
		>$(BUILD)/install-dirs && rm -f $(BUILD)/install-dirs.new
	$(INSTALL) -m 0644 $(BUILD)/install-dirs '$(DESTDIR)$(INSTALL_DIRS_FILE)'
	$(inst_ldconfig)

uninstall:
	rm -f $(foreach f,$(INSTALLED),'$(DESTDIR)$f')
	@if [ -f '$(DESTDIR)$(INSTALL_DIRS_FILE)' ]; then \
		dirs=$$(LC_ALL=C sort -r '$(DESTDIR)$(INSTALL_DIRS_FILE)') && rm -f '$(DESTDIR)$(INSTALL_DIRS_FILE)' && \
		for d in $$dirs; do \
			if [ -d '$(DESTDIR)'"$$d" ]; then rmdir --ignore-fail-on-non-empty '$(DESTDIR)'"$$d"; fi; \
		done; \
	fi
	@if [ -d '$(DESTDIR)$(EXAMPLEDIR)' ]; then rmdir --ignore-fail-on-non-empty '$(DESTDIR)$(EXAMPLEDIR)'; fi
	@if [ -d '$(DESTDIR)$(DOCDIR)' ]; then rmdir --ignore-fail-on-non-empty '$(DESTDIR)$(DOCDIR)'; fi
	$(inst_ldconfig)

# Each page beside what it documents: a tool's in its folder, the plugin's at
# the top of plugin/. Each names its version itself (tests/check/docs.sh).
$(BUILD)/man/gdx-doctor.1: plugin/tools/doctor/gdx-doctor.1
$(BUILD)/man/gdx-bench.1: plugin/tools/bench/gdx-bench.1
$(BUILD)/man/%.1:
	@mkdir -p $(dir $@)
	cp $^ $@

$(BUILD)/man/%.7: plugin/%.7
	@mkdir -p $(dir $@)
	cp $< $@

# The packaging dependencies, beyond the build's (gcc make pkg-config
# libibverbs-dev libhwloc-dev): the commands make deb and make rpm run,
# COMMAND:PACKAGE (Debian's). Their dependency steps (deb-deps, rpm-deps,
# which deb and rpm run first) only look for the commands in PATH and, when
# some are missing, stop with one line naming them and the packages that
# give them; sudo make package-deps installs PACKAGE_DEPS.
DEB_TOOLS := dpkg-parsechangelog:dpkg-dev dpkg-buildpackage:dpkg-dev dh:debhelper
RPM_TOOLS := dpkg-parsechangelog:dpkg-dev rpmbuild:rpm
# tests/check/images.sh (make test's tier) builds the container recipes with
# buildah over a Debian base mmdebstrap makes. make test installs
# PACKAGE_DEPS; make check needs none of them.
PACKAGE_DEPS := build-essential dpkg-dev debhelper rpm buildah mmdebstrap
tool_cmd = $(firstword $(subst :, ,$1))
tool_pkg = $(lastword $(subst :, ,$1))
# tools_missing GOAL,TOOLS: a one-line error naming each command of TOOLS
# not in PATH, when GOAL (or GOAL-deps) is asked for.
define tools_missing
$(if $(filter $1 $1-deps,$(MAKECMDGOALS)),$(foreach t,$2,$(if $(shell command -v $(call tool_cmd,$t)),,$t)))
endef
DEB_MISSING   := $(strip $(call tools_missing,deb,$(DEB_TOOLS)))
RPM_MISSING   := $(strip $(call tools_missing,rpm,$(RPM_TOOLS)))
TOOLS_MISSING := $(sort $(DEB_MISSING) $(RPM_MISSING))
ifneq ($(TOOLS_MISSING),)
PKGS_NEEDED := $(sort $(foreach t,$(TOOLS_MISSING),$(call tool_pkg,$t)))
$(error packaging commands not found: $(sort $(foreach t,$(TOOLS_MISSING),$(call tool_cmd,$t))): install $(PKGS_NEEDED) (sudo apt-get install $(PKGS_NEEDED), or sudo make package-deps))
endif

.PHONY: deb-deps rpm-deps package-deps
deb-deps:
	@echo "make deb: $(words $(DEB_TOOLS)) commands found ($(foreach t,$(DEB_TOOLS),$(call tool_cmd,$t)))"
rpm-deps:
	@echo "make rpm: $(words $(RPM_TOOLS)) commands found ($(foreach t,$(RPM_TOOLS),$(call tool_cmd,$t)))"
package-deps:
	scripts/ensure-packages.sh $(PACKAGE_DEPS)

# make deb: $(BUILD)/libnccl-net-gdx_$(VERSION)_<arch>.deb, built by
# dpkg-buildpackage from the source package in debian/ (scripts/make-deb.sh),
# and the debug symbols' package beside it (-dbgsym_..._<arch>.deb).
deb: deb-deps
	$(if $(SANITIZE),$(error make deb: not from a SANITIZE build))
	GDX_JOBS=$(JOBS) scripts/make-deb.sh $(BUILD)

# make rpm: $(BUILD)/libnccl-net-gdx-$(VERSION)-1.<arch>.rpm, built by rpmbuild
# from scripts/libnccl-net-gdx.spec (scripts/make-rpm.sh).
rpm: rpm-deps
	$(if $(SANITIZE),$(error make rpm: not from a SANITIZE build))
	scripts/make-rpm.sh $(BUILD)

# The README's two commands: a demo transfer over Soft-RoCE, and every test.
# Each installs what it needs first, then builds in a fresh make (so that
# pkg-config sees the packages just installed).
BUILD_DEPS := gcc make pkg-config libibverbs-dev libhwloc-dev binutils clang-format python3 shellcheck
# make deb and tests/check/package.sh: dpkg-buildpackage with debhelper,
# lintian, man page checks; make rpm: rpmbuild (Debian's rpm package).
BUILD_DEPS += dpkg-dev debhelper lintian groff-base rpm
# make fuzz: clang and its libFuzzer/sanitizer runtimes; llvm: llvm-symbolizer,
# so that sanitizer reports name functions and lines.
BUILD_DEPS += clang libclang-rt-14-dev llvm
# tests/check/doctor_topo.sh: dot renders gdx-doctor topo --dot.
BUILD_DEPS += graphviz
# tests/check/doctor_fleet.sh and doctor_log.sh: GNU time measures the memory
# gdx-doctor takes on hostile inputs.
BUILD_DEPS += time
# scripts/cpu-cost.sh (make bench, and its smoke check in the VM tier):
# callgrind counts the instructions, strace the system calls.
BUILD_DEPS += valgrind strace
# tests/check/doctor_check_prom.sh: node_exporter reads gdx-doctor check
# --textfile as its textfile collector does (served on a loopback port),
# curl fetches what it serves.
BUILD_DEPS += prometheus-node-exporter curl

deps:
	scripts/ensure-packages.sh $(BUILD_DEPS)

# make check installs nothing: it needs neither root nor the network. Its
# dependency step (check-deps, which it runs first) only asks dpkg which of
# BUILD_DEPS are missing and, when some are, stops with one line naming
# them and how to install them.
.PHONY: check-deps
ifneq ($(filter check check-deps,$(MAKECMDGOALS)),)
DEPS_MISSING := $(shell scripts/ensure-packages.sh --missing $(BUILD_DEPS))
ifneq ($(DEPS_MISSING),)
$(error missing build dependencies: $(DEPS_MISSING): install them with sudo make deps (or sudo apt-get install $(DEPS_MISSING)))
endif
endif
check-deps:
	@echo "build dependencies: all $(words $(BUILD_DEPS)) installed"

demo: deps
	$(MAKE) all
	scripts/demo.sh

# The full side-by-side run (libnccl-net-gdx-performance(7)): bandwidth, latency, rails,
# and the instructions per call.
# build-liveoff: the plugin without the live counters' stores, to price them.
bench: deps
	$(MAKE) all
	$(MAKE) CPPFLAGS=-DGDX_LIVE_OFF BUILD=build-liveoff build-liveoff/libnccl-net-gdx.so
	scripts/bench.sh

# make test's budget: 60 minutes on a clean clone of the 2-core machine CI
# has (tests/README.md); its builds use every core, and ThreadSanitizer's
# only what runs under it (scripts/run-tests.sh, TSAN_TESTS).
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
TSAN_RUNS := build-tsan/libnccl-net-gdx.so build-tsan/tests/unit/conn_race build-tsan/tests/unit/topo

test: deps package-deps
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) fuzz
	$(MAKE) -j$(JOBS) SANITIZE=address,undefined BUILD=build-san all
	$(MAKE) -j$(JOBS) SANITIZE=thread BUILD=build-tsan $(TSAN_RUNS)
	$(MAKE) -j$(JOBS) DEBUG=1 BUILD=build-debug build-debug/libnccl-net-gdx.so
	scripts/run-tests.sh

# The unit tier alone, no VM, no fuzzer, no sanitizer build: a
# contributor's loop, under a minute once built; make test is the full run.
# No root, no network: check-deps above only checks.
check: check-deps
	$(MAKE) -j$(JOBS) all
	scripts/run-tests.sh --check

clean:
	rm -rf $(BUILD)/plugin $(BUILD)/tests $(LIB) $(ARCHIVE) $(TOOLS_ARCHIVE) $(TOOLS) \
	       $(BUILD)/man $(BUILD)/deb $(BUILD)/libnccl-net-gdx_*.deb $(BUILD)/libnccl-net-gdx-dbgsym_*.*deb \
	       $(BUILD)/install-dirs $(BUILD)/install-dirs.new \
	       $(BUILD)/libnccl-net-gdx_*.changes \
	       $(BUILD)/rpm $(BUILD)/libnccl-net-gdx-*.rpm \
	       $(BUILD)/fuzz $(BUILD)/fuzz-artifacts

-include $(OBJS:.o=.d) $(TOOL_SRCS:%.c=$(BUILD)/%.d) $(wildcard $(BUILD)/tests/*.d $(BUILD)/tests/*/*.d)
