# SPDX-License-Identifier: MIT
# libnccl-net-gdx: one Makefile, no autotools.

VERSION  := 0.1.0
BUILD    ?= build
PKGS     := libibverbs
CC       ?= cc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -fPIC -fvisibility=hidden -Wall -Wextra -Wshadow -Wformat=2 \
            -Wmissing-prototypes -Wstrict-prototypes -Wno-missing-field-initializers
CPPFLAGS += -D_GNU_SOURCE -Iinclude -MMD -MP -DGDX_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS))
LDLIBS   += $(shell pkg-config --libs $(PKGS)) -lpthread -ldl

SRCS     := $(wildcard plugin/*.c)
TOOL_SRCS := $(wildcard plugin/tools/*.c)
OBJS     := $(patsubst %.c,$(BUILD)/%.o,$(SRCS))
LIB      := $(BUILD)/libnccl-net-gdx.so
ARCHIVE  := $(BUILD)/libgdx.a

UNIT_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit_*.c))
VM_TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/vm_*.c))
TOOLS      := $(BUILD)/gdx-bench
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

# The README's two commands: a demo transfer over Soft-RoCE, and every test.
# Each installs what it needs first, then builds in a fresh make (so that
# pkg-config sees the packages just installed).
BUILD_DEPS := gcc make pkg-config libibverbs-dev binutils clang-format

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
