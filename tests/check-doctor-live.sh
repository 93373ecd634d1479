#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor top and hang on the host, where no process has the plugin
# loaded: their arguments checked, an unreadable directory told (3), an empty
# one reported as such, the JSON and Prometheus forms well formed. What they
# read from running processes is tested over rxe in the VM (tests/vm_live.c).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
# shellcheck source=tests/report.sh
. tests/report.sh
empty=$tmp/empty
mkdir "$empty"
exits "hang: no live file, nothing stuck, exit 0" 0 "no comm has waited 1.0 s or more (0 process(es)" "$doctor" hang --dir "$empty"
exits "hang: a directory that cannot be read exits 3" 3 "cannot read $empty/none" "$doctor" hang --dir "$empty/none"
exits "hang: a threshold that is not a number is a usage error" 64 "--threshold 'soon' is not a number" "$doctor" hang --threshold soon
exits "hang --json: well formed, nothing stuck" 0 "stuck []" sh -c "$doctor hang --json --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"stuck\", j[\"stuck\"])'"
exits "top: an interval below 50 ms is a usage error" 64 "--interval '0' is not a number of seconds" "$doctor" top --interval 0
exits "top: a count of 0 is a usage error" 64 "--count '0' is not a positive integer" "$doctor" top --count 0
exits "top: two formats at once is a usage error" 64 "give one" "$doctor" top --json --prometheus
exits "top: a directory that cannot be read exits 3" 3 "cannot read $empty/none" "$doctor" top --once --dir "$empty/none"
exits "top --once: no process" 0 "0 process(es) with the plugin loaded" "$doctor" top --once --interval 0.05 --dir "$empty"
exits "top --json: well formed, no process" 0 "processes []" sh -c "$doctor top --json --interval 0.05 --dir $empty | python3 -c 'import json,sys; j=json.load(sys.stdin); print(\"processes\", j[\"processes\"])'"
exits "top --count 2 --json: two reports" 0 "2" sh -c "$doctor top --json --count 2 --interval 0.05 --dir $empty | grep -c '\"command\": \"top\"'"
exits "top --prometheus: no sample without a process, the types still said" 0 "# TYPE gdx_bytes_total counter" "$doctor" top --prometheus --interval 0.05 --dir "$empty"
# a file that is not a live file of this layout is left out, not read
head -c 100 /dev/zero >"$empty/nccl-net-gdx.1"
exits "top: a file of another layout is left out and said" 0 "some live files left out" "$doctor" top --once --interval 0.05 --dir "$empty"
report_end doctor-live
