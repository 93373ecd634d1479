#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-bench --plot without an RDMA device: --plot-from re-plots JSON figures
# (as -j prints them) beside --plot-ref ones, and the SVG is read back
# (tests/lib/svg_figures.py): well-formed XML, every size of the sweep a label
# and a point of each series with its figures, a legend entry and a colour
# per series. Hostile names come out escaped; an empty sweep, malformed or
# unreadable files are refused with exit 3 (an input that cannot be read) and
# unwritable plots with 70 (the output), naming the file (and line), before
# anything runs, leaving no plot behind and an older one as it was; bad
# usage is 64, as gdx-doctor has it. Prints "ok ..." / "not ok ..." lines and
# "# tests/check/bench_plot.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
bench=${GDX_BENCH:-build/gdx-bench}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# plots NAME [--title TEXT] SVG RUN.json [REF.json...] -- GDX-BENCH-ARGS...:
# gdx-bench exits 0 quietly and the SVG holds the files' figures.
plots() {
	local name=$1 check=() why rc
	shift
	while [ "$1" != -- ]; do
		check+=("$1")
		shift
	done
	shift
	timeout 60 "$bench" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ] || [ -s "$tmp/out" ]; then
		not_ok "$name" "exit status $rc, output: $(head -c 300 "$tmp/out" "$tmp/err")"
	elif why=$(python3 tests/lib/svg_figures.py "${check[@]}"); then
		ok "$name"
	else
		not_ok "$name" "$why"
	fi
}
# refused NAME STATUS MESSAGE ARGS...: exit STATUS, nothing on standard output,
# one "gdx-bench: " line holding MESSAGE.
refused() {
	local name=$1 want=$2 msg=$3 rc
	shift 3
	timeout 60 "$bench" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ ! -s "$tmp/out" ] && grep -qF -- "$msg" "$tmp/err" &&
		[ "$(grep -c '^gdx-bench: ' "$tmp/err")" -eq 1 ]; then
		ok "$name"
	else
		not_ok "$name" "exit $rc (want $want), want \"$msg\" once in: $(tr '\n' '|' <"$tmp/err" | head -c 300)"
	fi
}

# A 4K-64K bw sweep as gdx-bench -j prints it, and figures to go beside it.
cat >"$tmp/sweep.json" <<'EOF'
{"device": "rxe0", "peer": "rxe1", "mode": "bw", "depth": 8, "iters": 30, "procs": 2, "memory": "host", "results": [{"bytes": 4096, "seconds": 0.002100, "GBps": 0.0585, "Gbps": 0.4681, "msg_rate": 14285.7}, {"bytes": 8192, "seconds": 0.003000, "GBps": 0.0819, "Gbps": 0.6554, "msg_rate": 10000.0}, {"bytes": 16384, "seconds": 0.004500, "GBps": 0.1092, "Gbps": 0.8738, "msg_rate": 6666.7}, {"bytes": 32768, "seconds": 0.008000, "GBps": 0.1229, "Gbps": 0.9830, "msg_rate": 3750.0}, {"bytes": 65536, "seconds": 0.015000, "GBps": 0.1311, "Gbps": 1.0486, "msg_rate": 2000.0}], "bytes_gpu_direct": 0, "bytes_host": 1081344}
EOF
cat >"$tmp/perftest.json" <<'EOF'
{"label": "ib_write_bw", "results": [{"bytes": 65536, "Gbps": 1.12}, {"bytes": 1048576, "Gbps": 1.27}]}
EOF
sed 's/"seconds": 0.0/"seconds": 0.1/g' "$tmp/sweep.json" >"$tmp/before.0.2.json"

plots "a bw sweep re-plotted: every size a label and a point, bandwidth and time per message" \
	--title "gdx-bench bw: rxe1 -> rxe0, host memory" "$tmp/a.svg" "$tmp/sweep.json" -- \
	--plot-from "$tmp/sweep.json" --plot "$tmp/a.svg"
plots "perftest's figures beside, their own colour and legend entry, their sizes labelled too" \
	"$tmp/b.svg" "$tmp/sweep.json" "$tmp/perftest.json" -- \
	--plot-from "$tmp/sweep.json" --plot-ref "$tmp/perftest.json" --plot "$tmp/b.svg"
plots "an earlier gdx-bench run beside as well, named after its file" \
	"$tmp/c.svg" "$tmp/sweep.json" "$tmp/perftest.json" "$tmp/before.0.2.json" -- \
	--plot-from "$tmp/sweep.json" --plot-ref "$tmp/perftest.json" \
	--plot-ref "$tmp/before.0.2.json" --plot "$tmp/c.svg"
if grep -q 'no figures' "$tmp/a.svg"; then
	not_ok "a bw sweep fills both panels" "$(grep 'no figures' "$tmp/a.svg")"
else
	ok "a bw sweep fills both panels"
fi

# A lat sweep of every size gdx-bench takes, 0 to 1G: 32 labels, turned.
python3 - "$tmp/lat.json" <<'EOF'
import json, sys
sizes = [0] + [1 << i for i in range(31)]
json.dump({"device": "rxe0", "peer": "rxe1", "mode": "lat", "depth": 8, "iters": 100, "memory": "host",
           "results": [{"bytes": s, "median_us": 20 + s / 1e3, "p99_us": 30 + s / 1e3, "min_us": 19}
                       for s in sizes]}, open(sys.argv[1], "w"))
EOF
plots "a lat sweep of 0 to 1G: 32 sizes labelled, medians in the time panel" \
	--title "gdx-bench lat: rxe0 <-> rxe1" "$tmp/lat.svg" "$tmp/lat.json" -- \
	--plot-from "$tmp/lat.json" --plot "$tmp/lat.svg"
# A latency figure: one panel of half round trips, the median and the p99
# of every size (svg_figures.py checks data-p99 against "p99_us"), no empty
# bandwidth panel (0.4.5 drew one, and the median alone).
if ! grep -q 'no figures' "$tmp/lat.svg" && grep -q 'half round trip (µs): median, and p99' "$tmp/lat.svg" &&
	! grep -q 'bandwidth (Gb/s)' "$tmp/lat.svg" && [ "$(grep -c 'data-p99=' "$tmp/lat.svg")" -eq 32 ]; then
	ok "a lat sweep: one panel, the median and the p99 of all 32 sizes, no bandwidth panel"
else
	not_ok "a lat sweep: one panel of median and p99" \
		"$(grep -c 'no figures' "$tmp/lat.svg") 'no figures', $(grep -c 'data-p99=' "$tmp/lat.svg") p99 points"
fi
# Every figure says the host, the version, the depth and the line rate it
# ran with, as -j writes them; a file without them says "?" and "unknown".
python3 - "$tmp/lat.json" "$tmp/lat-about.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
j.update(host="node7", version="0.9.1", depth=4, line_gbps=200, peer="rxe1", end="both")
json.dump(j, open(sys.argv[2], "w"))
EOF
plots "a lat sweep with -j's host, version, depth and line rate" \
	--title "gdx-bench lat: rxe0 <-> rxe1" "$tmp/lat-about.svg" "$tmp/lat-about.json" -- \
	--plot-from "$tmp/lat-about.json" --plot "$tmp/lat-about.svg"
for svg in lat-about:"host node7, gdx-bench 0.9.1, depth 4, line rate 200 Gb/s" \
	a:"host ?, gdx-bench ?, depth 8, line rate unknown"; do
	if grep -qF "class=\"about\" x=\"480\" y=\"44\" text-anchor=\"middle\">${svg#*:}<" "$tmp/${svg%%:*}.svg"; then
		ok "the figure says: ${svg#*:}"
	else
		not_ok "the figure says: ${svg#*:}" "$(grep -o 'class="about"[^<]*' "$tmp/${svg%%:*}.svg")"
	fi
done

# perftest's own --out_json, as ib_write_bw and ib_write_lat 4.5 wrote it in
# the VM (tests/lib/fixtures/bench/README.md): not JSON (bare keys and
# words, trailing commas, -nan), one size a file. Read as perftest writes
# it: 34.95 MB/s (2^20 B/s, its message rate says so) is 0.2932 Gb/s; the
# latency's t_typical and percentile_99 are its median and p99; files put
# together with cat are one series. 0.4.5 refused them as bad JSON.
fx=tests/lib/fixtures/bench
cat >"$tmp/perftest-bw.json" <<'EOF'
{"label": "ib_write_bw-64K", "results": [{"bytes": 65536, "Gbps": 0.2932}]}
EOF
plots "perftest 4.5's --out_json of ib_write_bw beside: 34.95 MB/s drawn as 0.2932 Gb/s" \
	"$tmp/pt.svg" "$tmp/sweep.json" "$tmp/perftest-bw.json" -- \
	--plot-from "$tmp/sweep.json" --plot-ref "$fx/ib_write_bw-64K.json" --plot "$tmp/pt.svg"
cat "$fx/ib_write_bw-64K.json" "$fx/ib_write_bw-a.json" >"$tmp/ib_write_bw.json"
cat >"$tmp/perftest-two.json" <<'EOF'
{"label": "ib_write_bw", "results": [{"bytes": 65536, "Gbps": 0.2932}, {"bytes": 8388608, "Gbps": 0.2355}]}
EOF
plots "two perftest runs put together with cat: one series of two sizes" \
	"$tmp/pt2.svg" "$tmp/sweep.json" "$tmp/perftest-two.json" -- \
	--plot-from "$tmp/sweep.json" --plot-ref "$tmp/ib_write_bw.json" --plot "$tmp/pt2.svg"
cat >"$tmp/lat8m.json" <<'EOF'
{"mode": "lat", "iters": 20, "results": [{"bytes": 8388608, "median_us": 650000.0, "p99_us": 990000.0, "min_us": 330000.0}]}
EOF
cat >"$tmp/perftest-lat.json" <<'EOF'
{"label": "ib_write_lat-8M", "results": [{"bytes": 8388608, "median_us": 675451.18, "p99_us": 1022750.68}]}
EOF
plots "perftest 4.5's ib_write_lat beside a latency: its t_typical and percentile_99" \
	"$tmp/ptl.svg" "$tmp/lat8m.json" "$tmp/perftest-lat.json" -- \
	--plot-from "$tmp/lat8m.json" --plot-ref "$fx/ib_write_lat-8M.json" --plot "$tmp/ptl.svg"
sed 's/^MsgRate: .*/MsgRate: 0.000000,/' "$fx/ib_write_bw-a.json" >"$tmp/rate0.json"
refused "a perftest run whose MB/s cannot be told from Gb/s: how to give the figure" 3 \
	'rate0.json: perftest run 1: its "MsgRate" is 0 at this precision, so its "BW_average" may be MB/s or Gb/s (--report_gbits); give the figure as {"results": [{"bytes": 8388608, "Gbps": ...}]}' \
	--plot-from "$tmp/sweep.json" --plot-ref "$tmp/rate0.json" --plot "$tmp/x.svg"
sed 's/^BW_average: .*/BW_average = 28.07,/' "$fx/ib_write_bw-a.json" >"$tmp/garbled.json"
refused "a perftest file with a line of none of its forms, by line" 3 \
	"garbled.json: line 25: not perftest's --out_json as perftest writes it" \
	--plot-from "$tmp/sweep.json" --plot-ref "$tmp/garbled.json" --plot "$tmp/x.svg"

# Hostile names: XML's specials, control characters, markup in a label.
# They come out as text, and the XML parses.
printf '{"device": "<&>\\"'"'"'", "peer": "b\xc3\xa9\\u0001\\u001b \\ud83d\\ude00", "mode": "rate", "iters": 10, "results": [{"bytes": 8, "seconds": 0.001, "Gbps": 0.001}]}\n' >"$tmp/hostile.json"
printf '{"label": "</text><script>alert(1)</script>&amp;", "results": [{"bytes": 8, "Gbps": 0.002}]}\n' >"$tmp/markup.json"
plots "hostile device names and labels come out escaped, the XML well-formed" \
	--title "gdx-bench rate: bé?? 😀 -> <&>\"'" "$tmp/h.svg" "$tmp/hostile.json" "$tmp/markup.json" -- \
	--plot-from "$tmp/hostile.json" --plot-ref "$tmp/markup.json" --plot "$tmp/h.svg"

# Bad files: exit 3 naming the file (and line), no plot left behind.
printf '{"mode": "bw", "iters": 1, "results": []}\n' >"$tmp/empty.json"
head -c 200 "$tmp/sweep.json" >"$tmp/truncated.json"
printf '\n4096 0.46\n' >"$tmp/text.txt"
printf '{"results": [{"bytes": 8, "Gbps": 1}, {"bytes": -4, "Gbps": 1}]}\n' >"$tmp/negative.json"
printf '{"results": [{"bytes": 8, "Gbps": 1}, {"bytes": 8, "Gbps": 2}]}\n' >"$tmp/twice.json"
printf '{"results": [{"bytes": 8, "Gbps": 1}]}\n{"results": []}\n' >"$tmp/two.json"
printf '{"mode": "conn", "results": [{"bytes": 8, "Gbps": 1}]}\n' >"$tmp/conn.json"
refused "an empty sweep" 3 "empty.json: no figures in it (an empty sweep?)" \
	--plot-from "$tmp/empty.json" --plot "$tmp/x.svg"
refused "a truncated file, by line and column" 3 "truncated.json: line 1, column 201: " \
	--plot-from "$tmp/truncated.json" --plot "$tmp/x.svg"
refused "a file that is not JSON, by line" 3 "text.txt: line 2: not a JSON object" \
	--plot "$tmp/x.svg" --plot-ref "$tmp/text.txt" --plot-from "$tmp/sweep.json"
printf '\nlabel ib_write_bw\n' >"$tmp/words.txt"
refused "words that are not JSON, by line and column" 3 "words.txt: line 2, column 1: expected a value" \
	--plot-from "$tmp/words.txt" --plot "$tmp/x.svg"
refused "a negative size, by its place" 3 'negative.json: results[1] has no "bytes" of 0 to 1024G' \
	--plot-from "$tmp/negative.json" --plot "$tmp/x.svg"
refused "a size twice" 3 "twice.json: results[1]: size 8 a second time" \
	--plot-from "$tmp/twice.json" --plot "$tmp/x.svg"
refused "two objects in one file, by line" 3 "two.json: line 2: more after the JSON object" \
	--plot-from "$tmp/two.json" --plot "$tmp/x.svg"
# Bytes that are not UTF-8 in a string: the JSON reader refuses them.
printf '{"device": "b\xff\xc3 ", "results": [{"bytes": 8, "Gbps": 1}]}\n' >"$tmp/utf8.json"
refused "a string that is not UTF-8, by line and column" 3 "utf8.json: line 1, column 14: invalid UTF-8 in a string: byte 0xff" \
	--plot-from "$tmp/utf8.json" --plot "$tmp/x.svg"
refused "a mode that is not a sweep" 3 "conn.json: no \"results\" list, or a \"mode\" other than" \
	--plot-from "$tmp/conn.json" --plot "$tmp/x.svg"
refused "a file that is not there" 3 "$tmp/missing.json: cannot read it: No such file or directory" \
	--plot-from "$tmp/missing.json" --plot "$tmp/x.svg"
refused "a directory to read" 3 "$tmp is a directory, not a file" \
	--plot-from "$tmp" --plot "$tmp/x.svg"
if [ -e "$tmp/x.svg" ]; then
	not_ok "refused files leave no plot behind" "$(ls -l "$tmp/x.svg")"
else
	ok "refused files leave no plot behind"
fi
refused "a plot in a directory that is not there" 70 \
	"--plot $tmp/nodir/x.svg: cannot write it: No such file or directory" \
	--plot-from "$tmp/sweep.json" --plot "$tmp/nodir/x.svg"
mkdir "$tmp/dir.svg"
refused "a plot onto a directory" 70 "--plot $tmp/dir.svg: cannot write it: Is a directory" \
	--plot-from "$tmp/sweep.json" --plot "$tmp/dir.svg"
refused "a plot named .png: gdx-bench writes SVG only (64)" 64 \
	"--plot $tmp/x.png: gdx-bench draws SVG only; give a name ending in .svg" \
	--plot-from "$tmp/sweep.json" --plot "$tmp/x.png"
if [ -e "$tmp/x.png" ]; then
	not_ok "a refused .png name leaves no file" "$(ls -l "$tmp/x.png")"
else
	ok "a refused .png name leaves no file"
fi
plots "a plot named .SVG is taken" "$tmp/upper.SVG" "$tmp/sweep.json" -- \
	--plot-from "$tmp/sweep.json" --plot "$tmp/upper.SVG"
refused "--plot-ref needs --plot" 64 "--plot-ref needs --plot FILE.svg" --plot-ref "$tmp/perftest.json"
refused "--plot-from needs --plot" 64 "--plot-from needs --plot FILE.svg" --plot-from "$tmp/sweep.json"
refused "--plot of --mode conn" 64 "not --mode conn" -m conn --plot "$tmp/x.svg"
refused "--plot on the client" 64 "--plot goes to the server" -C 127.0.0.1 --plot "$tmp/x.svg"
refs=()
for _ in 1 2 3 4 5; do refs+=(--plot-ref "$tmp/perftest.json"); done
refused "five --plot-ref" 64 "--plot-ref at most 4 times" "${refs[@]}" --plot "$tmp/x.svg"

# Before the run: a plot or reference that would fail is refused before the
# plugin loads; a run that fails leaves no plot, and an older one as it was.
refused "an unwritable plot, before the run" 70 "--plot $tmp/nodir/x.svg: cannot write it" \
	--plugin /nonexistent/libnccl-net-gdx.so -s 4K --plot "$tmp/nodir/x.svg"
refused "a malformed reference, before the run" 3 "truncated.json: line 1, column 201: " \
	--plugin /nonexistent/libnccl-net-gdx.so -s 4K --plot-ref "$tmp/truncated.json" --plot "$tmp/x.svg"
refused "a failed run (its plugin not there: 3)" 3 "cannot load /nonexistent/libnccl-net-gdx.so" \
	--plugin /nonexistent/libnccl-net-gdx.so -b 4K -e 64K --plot "$tmp/x.svg"
if [ -e "$tmp/x.svg" ]; then
	not_ok "a failed run leaves no plot behind" "$(ls -l "$tmp/x.svg")"
else
	ok "a failed run leaves no plot behind"
fi
cp "$tmp/a.svg" "$tmp/old.svg"
refused "a failed run with an older plot there" 3 "cannot load /nonexistent/libnccl-net-gdx.so" \
	--plugin /nonexistent/libnccl-net-gdx.so --plot "$tmp/old.svg"
if cmp -s "$tmp/a.svg" "$tmp/old.svg"; then
	ok "a failed run leaves an older plot as it was"
else
	not_ok "a failed run leaves an older plot as it was" "$(wc -c <"$tmp/old.svg") bytes now"
fi
plots "a plot replaces an older one" "$tmp/old.svg" "$tmp/lat.json" -- \
	--plot-from "$tmp/lat.json" --plot "$tmp/old.svg"

# Read once: "gdx-bench --help | grep -q" fails under pipefail when grep
# exits before gdx-bench has written all of it (SIGPIPE).
help=$("$bench" --help)
if grep -q -- '--plot-from FILE' <<<"$help" && grep -q -- '--plot-ref FILE' <<<"$help"; then
	ok "--help has --plot, --plot-ref and --plot-from"
else
	not_ok "--help has --plot, --plot-ref and --plot-from" "$(grep -- --plot <<<"$help")"
fi

report_end tests/check/bench_plot.sh
