# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by scripts/run-tests.sh and tests/vm/asan.sh: whether a test
# program's run counts, from its output and exit status.
# summary_ok PROG RC, with PROG's output on stdin: the output must hold its
# summary line, and a clean summary must come with exit status 0 (a
# sanitizer reports at exit). Otherwise one failure more, named, and 1.
summary_ok() {
	local out
	out=$(cat)
	if ! grep -qE '^# .*: [0-9]+ passed, [0-9]+ failed$' <<<"$out"; then
		echo "not ok $1 exited with status $2 before its summary"
		echo "# $1: 0 passed, 1 failed"
	elif [ "$2" -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
		echo "not ok $1 passed its tests but exited with status $2"
		echo "# $1 (exit): 0 passed, 1 failed"
	else
		return 0
	fi
	return 1
}
