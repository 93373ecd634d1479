#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: the reuse matrix (tests/vm/reuse.c) again, against the debug build
# (make DEBUG=1, build-debug), whose plugin aborts, naming the mode, when a
# request completes while a work request still reads its buffer; then that
# the invariant fires on the bug of 0.3.1, put back for the occasion.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

plugin=build-debug/libnccl-net-gdx.so
if [ ! -f "$plugin" ]; then
	echo "not ok $plugin is missing: make DEBUG=1 build-debug/libnccl-net-gdx.so"
	echo "# tests/vm/reuse_debug.sh: 0 passed, 1 failed"
	exit 1
fi
export GDX_PLUGIN=$plugin GDX_REUSE_DEBUG=1
build/tests/vm/reuse
build/tests/vm/reuse test_debug_invariant_catches_ar_done_at_post
