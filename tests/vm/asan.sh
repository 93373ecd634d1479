#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: the transfer, stress and lifecycle tests again, from the
# build made with AddressSanitizer and UBSan (make SANITIZE=address,undefined,
# in build-san); any report fails the test it comes from. Shorter runs of
# stress and lifecycle than the plain ones: ASan costs time, not coverage.
# And the burst of 65 connects at one listener, one past the handshakes it
# holds (tests/vm/listen_burst.c): where the 65th was once stored; and the
# RMA tables given back stale and foreign handles (tests/vm/rma_handles.c):
# where a second destroyContext once read freed memory.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

san=${GDX_SAN_BUILD:-build-san}
export GDX_PLUGIN=$san/libnccl-net-gdx.so
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# A binary that dies before its summary line (a report outside a test's own
# process) still counts as a failure.
# shellcheck source=tests/lib/summary.sh
. tests/lib/summary.sh
run() {
	local out rc
	out=$(env "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	summary_ok "${*: -1}" "$rc" <<<"$out" || :
}

if [ ! -x "$san/tests/vm/transfer" ]; then
	echo "not ok $san/tests/vm/transfer is missing: make SANITIZE=address,undefined all"
	echo "# tests/vm/asan.sh: 0 passed, 1 failed"
	exit 1
fi
run "$san/tests/vm/transfer"
run GDX_STRESS_MESSAGES=1000 "$san/tests/vm/stress"
run GDX_LIFECYCLE_CYCLES=100 GDX_LIFECYCLE_RELOADS=10 "$san/tests/vm/lifecycle"
run "$san/tests/vm/listen_burst"
run "$san/tests/vm/rma_handles"
