# SPDX-License-Identifier: MIT
# libnccl-net-gdx: one Makefile, no autotools.

VERSION  := 0.1.0
BUILD    ?= $(if $(SANITIZE),build-san,build)
PKGS     := libibverbs hwloc
CC       ?= cc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -fPIC -fvisibility=hidden -Wall -Wextra -Wshadow -Wformat=2 \
            -Wmissing-prototypes -Wstrict-prototypes -Wno-missing-field-initializers
CPPFLAGS += -D_GNU_SOURCE -Iinclude -MMD -MP -DGDX_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS))
LDLIBS   += $(shell pkg-config --libs $(PKGS)) -lpthread -ldl

# make SANITIZE=address,undefined: plugin, archive, tools and tests all built
# with the sanitizers (the tests dlopen the .so, so they need the runtime too),
# into build-san so that nothing mixes with the plain build.
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

SRCS     := $(wildcard plugin/*.c)
TOOL_SRCS := $(wildcard plugin/tools/*.c)
OBJS     := $(patsubst %.c,$(BUILD)/%.o,$(SRCS))
LIB      := $(BUILD)/libnccl-net-gdx.so
ARCHIVE  := $(BUILD)/libgdx.a

UNIT_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit_*.c))
VM_TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/vm_*.c))
TOOLS      := $(BUILD)/gdx-bench $(BUILD)/gdx-doctor
TEST_LIB   := $(BUILD)/tests/gdx_test.o $(BUILD)/tests/gdx_plugin_loader.o $(BUILD)/tests/gdx_pair.o

.PHONY: all deps test demo clean
all: $(LIB) $(ARCHIVE) $(TOOLS) $(UNIT_TESTS) $(VM_TESTS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(ARCHIVE): $(OBJS)
	$(AR) rcs $@ $^

$(LIB): $(OBJS) plugin/exports.map
	$(CC) -shared -Wl,--version-script=plugin/exports.map -Wl,--no-undefined \
	      -Wl,-soname,libnccl-net-gdx.so $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB) $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gdx-bench: $(BUILD)/plugin/tools/gdx_bench.o
	$(CC) $(LDFLAGS) -o $@ $^ -ldl

$(BUILD)/gdx-doctor: $(BUILD)/plugin/tools/gdx_doctor.o $(ARCHIVE)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# make fuzz: $(BUILD)/fuzz_wire, a libFuzzer target over every parser of bytes
# from the network and the acceptor's handshake (tests/fuzz_wire.c). clang
# builds its own copy of the plugin objects, with coverage and the sanitizers.
FUZZ_CC   ?= clang
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_OBJS := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(SRCS) tests/fuzz_wire.c)

.PHONY: fuzz
fuzz: $(BUILD)/fuzz_wire

$(BUILD)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c -o $@ $<

$(BUILD)/fuzz_wire: $(FUZZ_OBJS)
	$(FUZZ_CC) $(LDFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

-include $(FUZZ_OBJS:.o=.d)

# The README's two commands: a demo transfer over Soft-RoCE, and every test.
# Each installs what it needs first, then builds in a fresh make (so that
# pkg-config sees the packages just installed).
BUILD_DEPS := gcc make pkg-config libibverbs-dev libhwloc-dev binutils clang-format python3

deps:
	scripts/ensure-packages.sh $(BUILD_DEPS)

demo: deps
	$(MAKE) all
	scripts/demo.sh

test: deps
	$(MAKE) all
	scripts/run-tests.sh

clean:
	rm -rf $(BUILD)/plugin $(BUILD)/tests $(LIB) $(ARCHIVE) $(TOOLS)

-include $(OBJS:.o=.d) $(TOOL_SRCS:%.c=$(BUILD)/%.d) $(wildcard $(BUILD)/tests/*.d)
