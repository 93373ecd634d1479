#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every test: the unit tests on this machine, then the data-path tests
# inside a VM over two real Soft-RoCE (rxe) devices. Ends with one line
# "N passed, N failed" and exits non-zero when anything failed.
#
#   scripts/run-tests.sh            # everything
#   scripts/run-tests.sh --unit     # only what needs no VM
#   scripts/run-tests.sh --vm       # only the VM tests
set -uo pipefail

cd "$(dirname "$0")/.."
mode=all
case "${1:-}" in
	--unit) mode=unit ;;
	--vm) mode=vm ;;
	"") ;;
	*) echo "usage: $0 [--unit|--vm]" >&2; exit 2 ;;
esac

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Adds up the "# prog: N passed, N failed" lines each test binary prints.
tally() {
	read -r p f < <(awk '/^# .*: [0-9]+ passed, [0-9]+ failed$/ { p += $(NF-3); f += $(NF-1) }
		END { print p + 0, f + 0 }' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
}

check_exports() {
	local syms
	syms=$(nm -D --defined-only build/libnccl-net-gdx.so | awk '{print $3}' | sort | tr '\n' ' ')
	if [ "$syms" = "ncclNetPlugin_v10 ncclNetPlugin_v11 ncclNetPlugin_v12 ncclNetPlugin_v7 ncclNetPlugin_v8 ncclNetPlugin_v9 " ]; then
		echo "ok exported symbols are the plugin tables only: $syms"
		echo "# exports: 1 passed, 0 failed"
	else
		echo "not ok exported symbols: $syms"
		echo "# exports: 0 passed, 1 failed"
	fi
}

check_format() {
	if ! command -v clang-format >/dev/null; then
		echo "not ok clang-format is not installed"
		echo "# format: 0 passed, 1 failed"
	elif scripts/format.sh --check; then
		echo "ok every C file is clang-formatted"
		echo "# format: 1 passed, 0 failed"
	else
		echo "not ok some files need scripts/format.sh"
		echo "# format: 0 passed, 1 failed"
	fi
}

if [ "$mode" != vm ]; then
	{
		check_exports
		check_format
		tests/check-doctor-topo.sh
		tests/check-doctor-gdr.sh
		tests/check-package.sh
		for t in build/tests/unit_*; do
			case "$t" in *.o | *.d) continue ;; esac
			"$t"
		done
	} 2>&1 | tee -a "$log"
fi

if [ "$mode" != unit ]; then
	start=$(date +%s)
	scripts/vm-run.sh --pairs 2 -- 'for t in build/tests/vm_* tests/vm_*.sh; do case "$t" in *.o|*.d) continue;; esac; "$t"; done' \
		2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	echo "# vm: tests took $(($(date +%s) - start)) s including boot" | tee -a "$log"
	if ! grep -q '^# build/tests/vm_' "$log"; then
		echo "not ok the VM did not run the tests (vm-run exit $rc)"
		failed=$((failed + 1))
	fi
fi

tally
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
