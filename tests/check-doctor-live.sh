#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor top and hang on the host, where no process has the plugin
# loaded: their arguments checked, an unreadable directory told (3), an empty
# one reported as such, the JSON and Prometheus forms well formed. What they
# read from running processes is tested over rxe in the VM (tests/vm_live.c).
set -uo pipefail
cd "$(dirname "$0")/.."
doctor=${GDX_DOCTOR:-build/gdx-doctor}
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
passed=0 failed=0
check() { # name, expected exit, needle, command...
	local out rc
	out=$("${@:4}" 2>&1)
	rc=$?
	if [ "$rc" -eq "$2" ] && grep -qF -- "$3" <<<"$out"; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1 (exit $rc): $out"
		failed=$((failed + 1))
	fi
}
check "hang: no live file, nothing stuck, exit 0" 0 "no comm has waited 1.0 s or more (0 process(es)" "$doctor" hang --dir "$empty"
check "hang: a directory that cannot be read exits 3" 3 "cannot read $empty/none" "$doctor" hang --dir "$empty/none"
check "hang: a threshold that is not a number is a usage error" 64 "--threshold 'soon' is not a number" "$doctor" hang --threshold soon
check "hang --json: well formed, nothing stuck" 0 "stuck []" sh -c "$doctor hang --json --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"stuck\", j[\"stuck\"])'"
check "top: an interval below 50 ms is a usage error" 64 "--interval '0' is not a number of seconds" "$doctor" top --interval 0
check "top: a count of 0 is a usage error" 64 "--count '0' is not a positive integer" "$doctor" top --count 0
check "top: two formats at once is a usage error" 64 "give one" "$doctor" top --json --prometheus
check "top: a directory that cannot be read exits 3" 3 "cannot read $empty/none" "$doctor" top --once --dir "$empty/none"
check "top --once: no process" 0 "0 process(es) with the plugin loaded" "$doctor" top --once --interval 0.05 --dir "$empty"
check "top --json: well formed, no process" 0 "processes []" sh -c "$doctor top --json --interval 0.05 --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"processes\", j[\"processes\"])'"
check "top --count 2 --json: two reports" 0 "2" sh -c "$doctor top --json --count 2 --interval 0.05 --dir $empty | grep -c '\"command\": \"top\"'"
check "top --prometheus: no sample without a process, the types still said" 0 "# TYPE gdx_bytes_total counter" "$doctor" top --prometheus --interval 0.05 --dir "$empty"
# a file that is not a live file of this layout is left out, not read
head -c 100 /dev/zero >"$empty/nccl-net-gdx.1"
check "top: a file of another layout is left out and said" 0 "some live files left out" "$doctor" top --once --interval 0.05 --dir "$empty"
echo "# tests/check-doctor-live.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
