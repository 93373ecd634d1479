# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the tests/check-*.sh scripts: the "ok ..." / "not ok ..." lines,
# their counts, a scratch directory removed at exit, and the checks they all
# make. report_end NAME prints "# NAME: N passed, N failed" and fails when
# anything did.
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() {
	echo "ok $1"
	passed=$((passed + 1))
}

not_ok() {
	echo "not ok $1: $2"
	failed=$((failed + 1))
}

# same_list NAME WANT_FILE GOT_FILE: the two sorted lists are equal.
same_list() {
	if diff -u "$2" "$3" >"$tmp/diff"; then
		ok "$1"
	else
		not_ok "$1" "$(tail -n +3 "$tmp/diff" | grep '^[-+]' | tr '\n' ' ')"
	fi
}

# prints NAME WANT COMMAND...: COMMAND's output (both streams) is WANT.
prints() {
	local name=$1 want=$2 out
	shift 2
	out=$("$@" 2>&1)
	if [ "$out" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "'$out', want '$want'"
	fi
}

# exits NAME STATUS NEEDLE COMMAND...: COMMAND exits STATUS and its output
# (both streams) holds NEEDLE (a fixed string).
exits() {
	local name=$1 want=$2 needle=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" <<<"$out"; then
		ok "$name"
	else
		not_ok "$name" "exit $rc, want $want: $out"
	fi
}

report_end() {
	echo "# $1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
