#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor top and hang on the host, where no process has the plugin
# loaded: their arguments checked, an unreadable directory told (3), an empty
# one reported as such, the JSON and Prometheus forms well formed, what is not
# a live file left out without blocking on it. What they read from running
# processes is tested over rxe in the VM (tests/vm/live.c), and files other
# users control in tests/unit/live.c.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
empty=$tmp/empty
mkdir "$empty"
exits "hang: no live file, nothing stuck, exit 0" 0 "no comm has waited 1.0 s or more (0 process(es)" "$doctor" hang --dir "$empty"
# A live directory not yet made (NCCL_GDX_LIVE_DIR before the first job):
# no process has the plugin loaded, which a gate reads as "go"; said so.
exits "hang: a live directory not yet made: 0 processes, exit 0" 0 "no comm has waited 1.0 s or more (0 process(es)" "$doctor" hang --dir "$empty/none"
exits "hang: and it says the directory is not there yet" 0 "note: $empty/none does not exist yet: no process has loaded the plugin with it" "$doctor" hang --dir "$empty/none"
exits "hang: NCCL_GDX_LIVE_DIR not yet made, likewise" 0 "(0 process(es)" env NCCL_GDX_LIVE_DIR="$empty/none" "$doctor" hang
exits "hang --json: a live directory not yet made is no process" 0 "stuck [] missing True" sh -c "$doctor hang --json --dir $empty/none | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"stuck\", j[\"stuck\"], \"missing\", j[\"live_notes\"][\"dir_missing\"])'"
: >"$empty/file"
exits "hang: a directory that cannot be read (a file) exits 3" 3 "cannot read the live files in $empty/file" "$doctor" hang --dir "$empty/file"
exits "hang: a threshold that is not a number is a usage error" 64 "--threshold 'soon' is not a number" "$doctor" hang --threshold soon
exits "hang --json: well formed, nothing stuck" 0 "stuck []" sh -c "$doctor hang --json --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"stuck\", j[\"stuck\"])'"
exits "top: an interval below 50 ms is a usage error" 64 "--interval '0' is not a number of seconds" "$doctor" top --interval 0
exits "top: a count of 0 is a usage error" 64 "--count '0' is not a positive integer" "$doctor" top --count 0
exits "top: two formats at once is a usage error" 64 "give one" "$doctor" top --json --prometheus
exits "top: a directory that cannot be read (a file) exits 3" 3 "cannot read the live files in $empty/file" "$doctor" top --once --dir "$empty/file"
exits "top: a live directory not yet made: 0 processes" 0 "0 process(es) with the plugin loaded" "$doctor" top --once --interval 0.05 --dir "$empty/none"
rm "$empty/file"
exits "top --once: no process" 0 "0 process(es) with the plugin loaded" "$doctor" top --once --interval 0.05 --dir "$empty"
exits "top --json: well formed, no process" 0 "processes []" sh -c "$doctor top --json --interval 0.05 --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"processes\", j[\"processes\"])'"
exits "top --count 2 --json: two reports" 0 "2" sh -c "$doctor top --json --count 2 --interval 0.05 --dir $empty | grep -c '\"command\": \"top\"'"
exits "top --prometheus: no sample without a process, the types still said" 0 "# TYPE gdx_bytes_total counter" "$doctor" top --prometheus --interval 0.05 --dir "$empty"
# fifos named like live files, in the directory and in this user's: never
# opened (the old place) or opened without blocking and left out (timeout:
# a reader that blocks on one fails here instead of hanging the suite)
mkfifo "$empty/nccl-net-gdx.x"
exits "hang: a fifo in the directory does not block it" 0 "(0 process(es)" timeout 10 "$doctor" hang --dir "$empty"
udir=$empty/nccl-net-gdx-$(id -u)
mkdir -m 700 "$udir"
mkfifo "$udir/nccl-net-gdx.$$.$(stat -L -c %i /proc/self/ns/pid).0000000000000001"
exits "hang: a fifo named like a live file in the user's directory does not block it" 0 "(0 process(es)" timeout 10 "$doctor" hang --dir "$empty"
exits "top: nor top, which says it left it out" 0 "some live files left out" timeout 10 "$doctor" top --once --interval 0.05 --dir "$empty"
exits "top --prometheus: nor the Prometheus text" 0 "# TYPE gdx_rail_up gauge" timeout 10 "$doctor" top --prometheus --interval 0.05 --dir "$empty"
rm -r "$udir" "$empty/nccl-net-gdx.x"
# a file that is not a live file of this layout is left out, not read: in
# this user's directory, and in the old place (not even opened)
mkdir -m 700 "$udir"
head -c 100 /dev/zero >"$udir/nccl-net-gdx.$$.$(stat -L -c %i /proc/self/ns/pid).0000000000000002"
exits "top: a file of another layout is left out and said" 0 "some live files left out" "$doctor" top --once --interval 0.05 --dir "$empty"
rm -r "$udir"
head -c 100 /dev/zero >"$empty/nccl-net-gdx.1"
exits "top: a live file of an older plugin, in the directory itself, is left out and said" 0 "some live files left out" "$doctor" top --once --interval 0.05 --dir "$empty"
rm "$empty/nccl-net-gdx.1"
# a user's directory that is not that user's (this one made it for another
# uid, squatting it): its files are nobody's word, and it is said whose it
# is (the plugin of the user it is named for makes no live file while it is
# there)
other=$(($(id -u) + 1))
mkdir -m 700 "$empty/nccl-net-gdx-$other"
if [ "$(id -u)" -eq 0 ]; then
	exits "top: root leaves out a user's directory that user does not own, and names it and its owner" 0 \
		"note: $empty/nccl-net-gdx-$other is not uid $other's alone (owner uid 0, mode 0700): none of its files is read" \
		"$doctor" top --once --interval 0.05 --dir "$empty"
	exits "hang: names it and its owner too" 0 "nccl-net-gdx-$other is not uid $other's alone (owner uid 0" \
		"$doctor" hang --dir "$empty"
	exits "hang --json: and in its live_notes" 0 "[{'uid': $other, 'foreign': True, 'owner': 0, 'mode': '0700', 'files_left': 0, 'processes_cut': 0}]" \
		sh -c "$doctor hang --json --dir $empty | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"live_notes\"][\"users\"])'"
elif out=$("$doctor" top --once --interval 0.05 --dir "$empty" 2>&1) && ! grep -q "left out" <<<"$out"; then
	ok "top: a user does not even look at another user's directory"
else
	not_ok "top: a user does not even look at another user's directory" "$out"
fi
report_end tests/check/doctor_live.sh
