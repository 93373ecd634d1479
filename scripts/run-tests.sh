#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every test: the unit tests on this machine, then the data-path tests
# inside a VM over two real Soft-RoCE (rxe) devices. Ends with one line
# "N passed, N failed" and exits non-zero when anything failed.
#
#   scripts/run-tests.sh            # everything
#   scripts/run-tests.sh --unit     # only what needs no VM
#   scripts/run-tests.sh --check    # --unit without the fuzzer and the sanitizer
#                                   # rerun: make check, a contributor's loop
#   scripts/run-tests.sh --vm       # only the VM tests
#   scripts/run-tests.sh --fuzz     # only the fuzzers, GDX_FUZZ_SECONDS each
#                                   # (make fuzz FUZZ_SECONDS=N)
set -uo pipefail

cd "$(dirname "$0")/.." || exit 2
mode=all
case "${1:-}" in
	--unit) mode=unit ;;
	--check) mode=check ;;
	--vm) mode=vm ;;
	--fuzz) mode=fuzz ;;
	"") ;;
	*) echo "usage: $0 [--unit|--check|--vm|--fuzz]" >&2; exit 2 ;;
esac

# python3 as the interpreter itself, not a version manager's shim (pyenv's
# is a shell script a call): the check scripts call it hundreds of times.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	PATH="$(dirname "$py"):$PATH"
	export PATH
fi

# What a check script may leave to make test (tests/check/bench_server.sh's
# ten-second wait): check in make check, test otherwise.
export GDX_TEST_TIER=test
[ "$mode" = check ] && GDX_TEST_TIER=check

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

# timed NAME CMD...: runs CMD, then says how long it took ("# took NAME N
# ms"; the VM's loops print the same), for the slowest-tests list at the end.
timed() {
	local name=$1 start
	shift
	start=$(date +%s%N)
	"$@"
	echo "# took $name $((($(date +%s%N) - start) / 1000000)) ms"
}

check_exports() {
	local syms
	syms=$(nm -D --defined-only build/libnccl-net-gdx.so | awk '{print $3}' | sort | tr '\n' ' ')
	if [ "$syms" = "ncclNetPlugin_v10 ncclNetPlugin_v11 ncclNetPlugin_v12 ncclNetPlugin_v6 ncclNetPlugin_v7 ncclNetPlugin_v8 ncclNetPlugin_v9 ncclRmaPlugin_v14 ncclRmaPlugin_v15 ncclRmaPlugin_v16 " ]; then
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

# A fuzzer (make fuzz) for a bounded time over its kept corpus:
# run_fuzz NAME SECONDS [OPTION...] runs build/tests/fuzz/NAME over
# tests/fuzz/corpus/NAME, SECONDS unless GDX_FUZZ_SECONDS says. What it finds
# new goes to a scratch directory, a crashing input to
# build/fuzz-artifacts/NAME-*.
run_fuzz() {
	local name=$1 secs=${GDX_FUZZ_SECONDS:-$2} bin=build/tests/fuzz/$1 dir
	shift 2
	if [ ! -x "$bin" ]; then
		echo "not ok $bin is missing (make fuzz)"
		echo "# $bin: 0 passed, 1 failed"
		return
	fi
	dir=$(mktemp -d)
	mkdir -p build/fuzz-artifacts
	# -print_funcs=0: printing a newly covered function starts llvm-symbolizer,
	# whose pipes the harness would take for descriptors the plugin leaked.
	if "$bin" -max_total_time="$secs" -print_final_stats=1 -print_funcs=0 "$@" \
		-artifact_prefix="build/fuzz-artifacts/$name-" "$dir" "tests/fuzz/corpus/$name" >"$dir.log" 2>&1; then
		echo "ok $bin for $secs s: $(grep -oE '^Done [0-9]+ runs' "$dir.log"), $(grep -E 'DONE|INITED' "$dir.log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [^ ]+')"
		echo "# $bin: 1 passed, 0 failed"
	else
		tail -n 60 "$dir.log"
		echo "not ok $bin: the crashing input is in build/fuzz-artifacts/"
		echo "# $bin: 0 passed, 1 failed"
	fi
	rm -rf "$dir" "$dir.log"
}

# wire: the network's bytes and the acceptor; connect: the connector against
# hostile answers; ring: the RMA ring's listen socket and its door; ctrl: what a peer writes by RDMA; json and log:
# gdx-doctor's readers of other nodes' reports and of NCCL logs; live: top
# and hang on a live file its owner wrote; topo_xml: the hwloc XML reader
# (deep, huge); tree_walk: the saved-tree walker against openat2; hang_scale:
# hang --merge on large jobs' reports, forged ones among them. Two minutes
# in all, make test's share: mostly the kept corpus replayed, as a
# regression test; to search, make fuzz FUZZ_SECONDS=3600.
run_fuzzers() {
	timed fuzz:wire run_fuzz wire 25
	timed fuzz:connect run_fuzz connect 15
	timed fuzz:ring run_fuzz ring 5
	timed fuzz:ctrl run_fuzz ctrl 15
	timed fuzz:json run_fuzz json 10 -timeout=10
	timed fuzz:log run_fuzz log 10 -timeout=10
	timed fuzz:live run_fuzz live 10 -timeout=10
	timed fuzz:topo_xml run_fuzz topo_xml 10 -timeout=10
	timed fuzz:tree_walk run_fuzz tree_walk 10 -timeout=10
	timed fuzz:hang_scale run_fuzz hang_scale 10 -timeout=10
}

# summary_ok PROG RC (tests/lib/summary.sh)
# shellcheck source=tests/lib/summary.sh
. tests/lib/summary.sh

# The unit tests that run threads, again under ThreadSanitizer (make
# SANITIZE=thread BUILD=build-tsan): the many-thread connects and the
# topology readers. A race it reports stops the test (halt_on_error=1) and
# fails the run, and so does a report outside any test.
# The Makefile builds these alone under ThreadSanitizer (TSAN_RUNS).
TSAN_TESTS="conn_race topo"
run_tsan_units() {
	local name t out rc
	for name in $TSAN_TESTS; do
		t=build-tsan/tests/unit/$name
		if [ ! -x "$t" ]; then
			echo "not ok $t is missing (make SANITIZE=thread BUILD=build-tsan all)"
			echo "# $t: 0 passed, 1 failed"
			continue
		fi
		out=$(GDX_PLUGIN=build-tsan/libnccl-net-gdx.so \
			TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 timed "$t:tsan" "$t" 2>&1)
		rc=$?
		printf '%s\n' "$out"
		if summary_ok "$t" "$rc" <<<"$out" && grep -q 'ThreadSanitizer' <<<"$out" &&
			! grep -q '^not ok' <<<"$out"; then
			echo "not ok $t: ThreadSanitizer reported outside a test"
			echo "# $t (tsan): 0 passed, 1 failed"
		fi
	done
}

# The unit tests again, built with ASan and UBSan (make SANITIZE=address,undefined).
# A binary that dies before its summary line, or exits non-zero after a clean
# one (LeakSanitizer at exit), counts as a failure too.
run_sanitized_units() {
	local t out rc
	if ! ls build-san/tests/unit/* >/dev/null 2>&1; then
		echo "not ok build-san/tests is missing (make SANITIZE=address,undefined all)"
		echo "# sanitizers: 0 passed, 1 failed"
		return
	fi
	for t in build-san/tests/unit/*; do
		case "$t" in *.o | *.d) continue ;; esac
		out=$(GDX_PLUGIN=build-san/libnccl-net-gdx.so ASAN_OPTIONS=detect_leaks=1 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 timed "$t" "$t" 2>&1)
		rc=$?
		printf '%s\n' "$out"
		summary_ok "$t" "$rc" <<<"$out"
	done
}

# Every script of tests/check, found by its place there (a new one runs
# without being listed here), held to its summary as the programs are.
# make check leaves out those whose header says "make test only" (package
# builds: they take most of a minute).
run_checks() {
	local c out rc
	out=$(mktemp)
	for c in tests/check/*.sh; do
		if [ "$mode" = check ] && grep -q '^# make test only' "$c"; then
			echo "# $c: make test only ($(grep -m1 '^# make test only' "$c" | sed 's/^# make test only: //'))"
			continue
		fi
		timed "$c" "$c" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		summary_ok "$c" "$rc" <"$out"
	done
	rm -f "$out"
}

if [ "$mode" = fuzz ]; then
	run_fuzzers 2>&1 | tee -a "$log"
elif [ "$mode" != vm ]; then
	{
		check_exports
		check_format
		run_checks
		for t in build/tests/unit/*; do
			case "$t" in *.o | *.d) continue ;; esac
			timed "$t" "$t"
		done
		if [ "$mode" != check ]; then
			run_sanitized_units
			run_tsan_units
			run_fuzzers
		fi
	} 2>&1 | tee -a "$log"
fi

if [ "$mode" = all ] || [ "$mode" = vm ]; then
	start=$(date +%s)
	# --timeout: the whole loop, about 30 minutes on a quiet 2-core host
	# shellcheck disable=SC2016 # expanded in the guest
	scripts/vm-run.sh --pairs 2 --mem 4096 --timeout 3600 -- 'for t in build/tests/vm/* tests/vm/*.sh; do case "$t" in *.o|*.d|*/switch_*) continue;; esac; s=$(date +%s%N); "$t"; echo "# took $t $((($(date +%s%N) - s) / 1000000)) ms"; done' \
		2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	# The cases that need every NIC to reach every other, and three rails:
	# six devices on one switch.
	# shellcheck disable=SC2016
	scripts/vm-run.sh --switch --pairs 3 --mem 4096 --timeout 3600 -- 'for t in build/tests/vm/switch_* tests/vm/switch_*.sh; do case "$t" in *.o|*.d) continue;; esac; s=$(date +%s%N); "$t"; echo "# took $t $((($(date +%s%N) - s) / 1000000)) ms"; done' \
		2>&1 | tee -a "$log"
	echo "# vm: tests took $(($(date +%s) - start)) s including boot" | tee -a "$log"
	if ! grep '^# build/tests/vm/' "$log" | grep -qv '^# build/tests/vm/switch_' ||
		! grep -q '^# build/tests/vm/switch_' "$log"; then
		echo "not ok the VM did not run the tests (vm-run exit $rc)"
		failed=$((failed + 1))
	fi
fi

# What the run's time went to: the ten slowest programs and scripts.
if grep -q '^# took ' "$log"; then
	echo "# the slowest tests:"
	awk '/^# took / { printf "#   %7.1f s  %s\n", $(NF-1) / 1000, $3 }' "$log" | sort -k2,2 -rn |
		head -n 10
fi
tally
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
