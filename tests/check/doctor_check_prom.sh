#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor check --prometheus and --textfile: the verdict of a healthy, a
# degraded and a broken saved node as metrics (the status, one series per
# verdict, the problems counted and each one a gauge, as check --json lists
# them), the file written whole in one step, never through what was at its
# path; and the text as node_exporter's textfile collector reads it: served
# on a loopback port with node_textfile_scrape_error 0 (promtool check
# metrics where node_exporter is not installed).
#
#   tests/check/doctor_check_prom.sh
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_check_prom.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
exporter=
trap '[ -n "$exporter" ] && kill "$exporter" 2>/dev/null; rm -rf "$tmp"' EXIT

# check_of CASE ARGS...: check on the saved node CASE, its facts file.
check_of() {
	local case=$1
	shift
	GDX_GDR_FACTS=$fx/$case/facts "$doctor" check --sysfs-root "$fx/$case" "$@"
}

# metrics NAME FILE CASE: FILE says what check --json says of CASE: the
# status, the verdict series, the problems by level and each degraded or
# broken problem once.
metrics() {
	local name=$1 file=$2 case=$3
	check_of "$case" --json >"$tmp/$case.json" 2>/dev/null
	if python3 - "$file" "$tmp/$case.json" 2>"$tmp/py-err" <<'PY'; then
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
samples = {}
for line in text.splitlines():
    if line.startswith("#"):
        continue
    m = re.fullmatch(r'([a-z_]+)(\{.*\})? (\S+)', line)
    assert m, "not a sample line: %r" % line
    key = m.group(1) + (m.group(2) or "")
    assert key not in samples, "series twice: " + key
    samples[key] = float(m.group(3))
level = {"healthy": 0, "degraded": 1, "broken": 2}[d["status"]]
assert samples["gdx_check_status"] == level, (samples["gdx_check_status"], d["status"])
for v in ("healthy", "degraded", "broken"):
    assert samples['gdx_check_verdict{verdict="%s"}' % v] == (v == d["status"]), v
by = {"note": 0, "degraded": 0, "broken": 0}
for p in d["problems"]:
    by[p["level"]] += 1
for lv, n in by.items():
    assert samples['gdx_check_problems{level="%s"}' % lv] == n, (lv, n)
want = sorted({(p["level"], p["text"]) for p in d["problems"] if p["level"] != "note"})
def unlabel(s):
    return s.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
got = sorted((m.group(1), unlabel(m.group(2))) for k in samples
             for m in [re.fullmatch(r'gdx_check_problem\{level="(\w+)",problem="(.*)"\}', k)] if m)
assert got == want, (got, want)
for fam in ("gdx_check_status", "gdx_check_verdict", "gdx_check_problems", "gdx_check_problem",
            "gdx_check_timestamp_seconds"):
    assert "# HELP %s " % fam in text and "# TYPE %s gauge\n" % fam in text, fam
PY
		ok "$name"
	else
		not_ok "$name" "$(tail -3 "$tmp/py-err")"
	fi
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	report_end tests/check/doctor_check_prom.sh
	exit
fi

for c in healthy:0 no-peermem:1 port-down:2; do
	case=${c%:*} want=${c#*:}
	check_of "$case" --prometheus >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "check --prometheus $case: exit $want, as check's"
	else
		not_ok "check --prometheus $case: exit $want, as check's" "exit $rc: $(head -c 300 "$tmp/err")"
	fi
	metrics "check --prometheus $case: the verdict and each problem, as --json says" "$tmp/out" "$case"
done
if grep -q '^gdx_check_problem{level="broken",problem="no active RDMA port; fix: ' "$tmp/out"; then
	ok "check --prometheus port-down: the port problem is a gauge"
else
	not_ok "check --prometheus port-down: the port problem is a gauge" "$(grep problem "$tmp/out")"
fi

# --textfile: the report as ever, and the metrics in the file.
mkdir "$tmp/tf"
check_of port-down >"$tmp/plain" 2>/dev/null
check_of port-down --textfile "$tmp/tf/gdx.prom" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/plain"; then
	ok "check --textfile: exit 2 (broken), the report on standard output as without it"
else
	not_ok "check --textfile: exit 2 (broken), the report on standard output as without it" "exit $rc: $(head -c 300 "$tmp/err")"
fi
metrics "check --textfile: the file holds the metrics" "$tmp/tf/gdx.prom" port-down
if [ "$(ls -A "$tmp/tf")" = gdx.prom ]; then
	ok "check --textfile: no temporary file left beside it"
else
	not_ok "check --textfile: no temporary file left beside it" "$(ls -A "$tmp/tf")"
fi
if check_of healthy --quiet --textfile "$tmp/tf/gdx.prom" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ] && grep -q '^gdx_check_status 0$' "$tmp/tf/gdx.prom"; then
	ok "check --quiet --textfile: silent, the file replaced with the healthy verdict"
else
	not_ok "check --quiet --textfile: silent, the file replaced with the healthy verdict" "$(head -c 300 "$tmp/out")"
fi
# What was at the path is replaced, never written through: a link to
# another file leaves that file as it was.
echo precious >"$tmp/victim"
ln -sf "$tmp/victim" "$tmp/tf/gdx.prom"
check_of healthy --quiet --textfile "$tmp/tf/gdx.prom" >/dev/null 2>&1
if [ "$(cat "$tmp/victim")" = precious ] && [ ! -L "$tmp/tf/gdx.prom" ] &&
	grep -q '^gdx_check_status 0$' "$tmp/tf/gdx.prom"; then
	ok "check --textfile: a link at the path is replaced, its target untouched"
else
	not_ok "check --textfile: a link at the path is replaced, its target untouched" "$(cat "$tmp/victim")"
fi
exits "check --textfile in a directory that is not there: exit 70, the path named" 70 \
	"--textfile $tmp/none/gdx.prom: cannot make a file beside it" \
	env GDX_GDR_FACTS="$fx/healthy/facts" "$doctor" check --sysfs-root "$fx/healthy" --quiet --textfile "$tmp/none/gdx.prom"
exits "check --prometheus --json: a usage error" 64 "give one" "$doctor" check --prometheus --json

# As node_exporter's textfile collector reads it: served, scrape error 0.
check_of port-down --textfile "$tmp/tf/gdx.prom" >/dev/null 2>&1
ne=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -n "$ne" ]; then
	served=
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
			--collector.textfile --collector.textfile.directory="$tmp/tf" >"$tmp/ne.log" 2>&1 &
		exporter=$!
		for _ in $(seq 50); do
			if curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" 2>/dev/null; then
				served=1
				break
			fi
			kill -0 "$exporter" 2>/dev/null || break
			sleep 0.1
		done
		[ -n "$served" ] && break
		kill "$exporter" 2>/dev/null
		wait "$exporter" 2>/dev/null
		exporter=
	done
	if [ -z "$served" ]; then
		not_ok "node_exporter serves the textfile on 127.0.0.1" "$(tail -3 "$tmp/ne.log")"
	else
		if grep -q '^node_textfile_scrape_error 0$' "$tmp/metrics"; then
			ok "node_exporter reads the textfile: node_textfile_scrape_error 0"
		else
			not_ok "node_exporter reads the textfile: node_textfile_scrape_error 0" "$(grep -i 'textfile\|error' "$tmp/metrics" "$tmp/ne.log" | head -5)"
		fi
		if grep -q '^gdx_check_status 2$' "$tmp/metrics" &&
			grep -q '^gdx_check_verdict{verdict="broken"} 1$' "$tmp/metrics" &&
			grep -q '^gdx_check_problem{level="broken",problem="no active RDMA port' "$tmp/metrics"; then
			ok "node_exporter serves the verdict and the problem"
		else
			not_ok "node_exporter serves the verdict and the problem" "$(grep gdx_ "$tmp/metrics" | head -5)"
		fi
		kill "$exporter" 2>/dev/null
		wait "$exporter" 2>/dev/null
		exporter=
	fi
elif command -v promtool >/dev/null; then
	if promtool check metrics <"$tmp/tf/gdx.prom" >"$tmp/pt" 2>&1; then
		ok "promtool check metrics: the textfile"
	else
		not_ok "promtool check metrics: the textfile" "$(head -5 "$tmp/pt")"
	fi
else
	not_ok "node_exporter or promtool is installed" "apt-get install prometheus-node-exporter (make deps)"
fi
report_end tests/check/doctor_check_prom.sh
