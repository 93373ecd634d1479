#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the switch VM (--switch --pairs 3): the three-rail reuse matrix
# (tests/vm/switch_reuse.c) again, against the debug build (make DEBUG=1,
# build-debug), whose plugin aborts, naming the mode, when a request
# completes while a work request still reads its buffer, or a piece is
# counted before its bytes are in the receive buffer.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

plugin=build-debug/libnccl-net-gdx.so
if [ ! -f "$plugin" ]; then
	echo "not ok $plugin is missing: make DEBUG=1 build-debug/libnccl-net-gdx.so"
	echo "# tests/vm/switch_reuse_debug.sh: 0 passed, 1 failed"
	exit 1
fi
GDX_PLUGIN=$plugin GDX_REUSE_DEBUG=1 build/tests/vm/switch_reuse
