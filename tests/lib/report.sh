# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the tests/check/*.sh scripts: the "ok ..." / "not ok ..." lines,
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

# json_holds NAME FILE PYTHON_EXPR: FILE is JSON and the expression over
# it, d (which may span lines), is true.
json_holds() {
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$2" "$3" 2>"$tmp/json-err"; then
		ok "$1"
	else
		not_ok "$1" "JSON does not satisfy: $3 $(head -c 300 "$tmp/json-err") $(head -c 300 "$2")"
	fi
}

report_end() {
	echo "# $1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# printable NAME FILE: FILE is UTF-8 and holds no control byte but the
# newline (C0, DEL, the C1 controls, the bidirectional controls): what a
# terminal shows of it, or a script reads line by line, is what it holds.
printable() {
	local why
	if why=$(python3 - "$2" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("not UTF-8 at byte %d" % e.start)
m = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]", text)
if m:
    sys.exit("U+%04X at character %d" % (ord(m.group()), m.start()))
PY
	); then
		ok "$1"
	else
		not_ok "$1" "$why"
	fi
}

# measured OUT ERR COMMAND...: runs COMMAND (standard input /dev/null, its
# output in OUT and ERR) and prints its exit status and the largest resident
# set it had, in KiB: "STATUS KIB". GNU time measures it: a child of python
# or of the shell would count its parent's pages from before the exec.
measured() {
	local out=$1 err=$2
	shift 2
	/usr/bin/time -f '%x %M' -o "$tmp/measured" "$@" </dev/null >"$out" 2>"$err"
	tail -n 1 "$tmp/measured" # after "Command exited with non-zero status N"
}

# run NAME WANT_STATUS ARGS...: runs $doctor (the script's gdx-doctor), output
# in $tmp/out and $tmp/err; returns non-zero (after a "not ok") when the exit
# status is not WANT_STATUS.
run() {
	local name=$1 want=$2 rc
	shift 2
	"${doctor:?the script sets doctor}" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		# a doctor's report: its problems say why
		not_ok "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err"); out: $(if grep -q '^Problems' "$tmp/out"; then sed -n '/^Problems/,$p' "$tmp/out"; else cat "$tmp/out"; fi | head -c 600)"
		return 1
	fi
}

# json NAME PYTHON_EXPR: json_holds on $tmp/out, what run left.
json() {
	json_holds "$1" "$tmp/out" "$2"
}

# has NAME FILE REGEX: FILE has a line that matches REGEX (extended).
has() {
	if grep -Eq -- "$3" "$2"; then
		ok "$1"
	else
		not_ok "$1" "no line matches '$3' in: $(head -c 900 "$2")"
	fi
}

# has_text NAME FILE TEXT: FILE has a line that holds TEXT (a fixed string).
has_text() {
	if grep -Fq -- "$3" "$2"; then
		ok "$1"
	else
		not_ok "$1" "no line holds '$3' in: $(head -c 900 "$2")"
	fi
}
