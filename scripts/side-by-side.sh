#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (see scripts/demo.sh): bandwidth through the plugin (gdx-bench,
# through the ncclNetPlugin_v7 table) and ib_write_bw (perftest) on the same
# rxe pair and the same message sizes, interleaved ROUNDS times, then one table
# of the medians and their ratio. The emulator's absolute figures mean
# nothing; the ratio does.
#
# Here the "NIC" is rxe in the guest kernel, on the same 2 vCPUs as the
# programs. ib_write_bw has one polling thread (its server never polls: the
# writes are one-sided), so gdx-bench is run the same way, one thread driving
# both ends (-P 1), for the ratio; its two-process figure (a polling receiver
# too, as on two real nodes) is printed beside it: there that second poller
# takes CPU from the emulated NIC, which real hardware does not have to share.
set -euo pipefail

SIZES=${SIZES:-"65536 1048576"}
ROUNDS=${ROUNDS:-3}
DEPTH=${DEPTH:-32}
LAT=${LAT:-0} # 1: also 8-byte latency, gdx-bench -m lat next to ib_write_lat
# perftest's default ack timeout (4.096 us * 2^14 = 67 ms): the emulated wire drops a
# packet now and then, and a 4 s timeout (the plugin's default) would then stall a run.
export NCCL_GDX_TIMEOUT=${NCCL_GDX_TIMEOUT:-14}

[ "${GDX_VM:-}" = 1 ] || { echo "side-by-side.sh runs inside scripts/vm-run.sh" >&2; exit 2; }
# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"


# Gb/s through the plugin; $2: 1 (one thread drives both ends) or 2 processes.
run_gdx() {
	timeout 300 build/gdx-bench -d "$SERVER_DEV" --peer-dev "$CLIENT_DEV" -s "$1" -n "$(iters_for "$1")" -w 50 \
		-t "$DEPTH" -P "$2" | awk '!/^#/ { print $4 }'
}

# Half round trip in us: gdx-bench's median, ib_write_lat's t_typical.
run_gdx_lat() {
	timeout 300 build/gdx-bench -m lat -d "$SERVER_DEV" --peer-dev "$CLIENT_DEV" -s 8 -n 2000 -w 100 -t 8 |
		awk '!/^#/ { print $2 }'
}

# The floor: the same ping-pong on the plugin's own QPs without its data path
# (WRITE_WITH_IMM, receive completions from the CQ, as the plugin does).
run_floor_lat() {
	timeout 120 build/tests/ref/verbs_pingpong -m imm -n 2000 "$SERVER_DEV" "$CLIENT_DEV" |
		awk '!/^#/ { print $2 }'
}

run_perftest_lat() {
	local out
	timeout 120 ib_write_lat -d "$SERVER_DEV" -x "$(gid_index "$SERVER_DEV")" -s 8 -n 2000 \
		>/dev/null 2>&1 &
	sleep 1
	out=$(timeout 120 ib_write_lat -d "$CLIENT_DEV" -x "$(gid_index "$CLIENT_DEV")" -s 8 -n 2000 \
		"$SERVER_ADDR" 2>&1)
	wait || true # a perftest run that timed out leaves its figure empty
	awk '$1 == 8 { print $5 }' <<<"$out"
}


# figures LABEL [JSON MEMBERS]: "bytes Gb/s" lines (the medians) as the JSON
# gdx-bench --plot-from reads; a stream's time per message is its size over
# its rate. A missing median (a run that timed out) is null: no point.
figures() {
	awk -v label="$1" -v more="${2:-}" 'BEGIN { printf "{\"label\": \"%s\", \"iters\": 1%s, \"results\": [", label, more }
		NF { printf "%s{\"bytes\": %d, \"Gbps\": %s, \"seconds\": %s}", n++ ? ", " : "", $1,
			($2 > 0) ? $2 : "null", ($2 > 0) ? $1 * 8 / ($2 * 1e9) : "null" }
		END { print "]}" }'
}

declare -A gdx gdx2 perf
lat_gdx="" lat_perf="" lat_floor="" plot_gdx="" plot_gdx2="" plot_perf=""
for round in $(seq 1 "$ROUNDS"); do
	if [ "$LAT" = 1 ]; then
		g=$(run_gdx_lat)
		p=$(run_perftest_lat)
		f=$(run_floor_lat)
		echo "round $round, 8 bytes: gdx-bench half round trip $g us, ib_write_lat $p us, floor $f us"
		lat_gdx+="$g"$'\n'
		lat_perf+="$p"$'\n'
		lat_floor+="$f"$'\n'
	fi
	for s in $SIZES; do
		g=$(run_gdx "$s" 1)
		g2=$(run_gdx "$s" 2)
		p=$(run_perftest "$s")
		echo "round $round, $s bytes: gdx-bench $g Gb/s (one thread), $g2 Gb/s (two processes), ib_write_bw $p Gb/s"
		gdx[$s]+="$g "
		gdx2[$s]+="$g2 "
		perf[$s]+="$p "
	done
done

echo
echo "Bandwidth over Soft-RoCE (rxe1 -> rxe0), medians of $ROUNDS interleaved rounds"
echo "gdx-bench: plugin through ncclNetPlugin_v7, $DEPTH in flight, one polling thread (-P 1);"
echo "  beside it, two processes (-P 2); ib_write_bw: perftest defaults"
printf '%10s  %16s  %16s  %7s  %14s\n' bytes "gdx-bench Gb/s" "ib_write_bw Gb/s" ratio "-P 2 Gb/s"
for s in $SIZES; do
	g=$(tr ' ' '\n' <<<"${gdx[$s]}" | grep . | median)
	g2=$(tr ' ' '\n' <<<"${gdx2[$s]}" | grep . | median)
	p=$(tr ' ' '\n' <<<"${perf[$s]}" | grep . | median)
	printf '%10s  %16.3f  %16.3f  %7.3f  %14.3f\n' "$s" "$g" "$p" \
		"$(awk -v g="$g" -v p="$p" 'BEGIN { print (p > 0) ? g / p : 0 }')" "$g2"
	plot_gdx+="$s $g"$'\n' plot_gdx2+="$s $g2"$'\n' plot_perf+="$s $p"$'\n'
done
# The same medians drawn, ib_write_bw's beside gdx-bench's, into $GDX_VM_OUT
# (make bench: build/bench/bandwidth.svg and the figures it is drawn from).
out=${GDX_VM_OUT:?is where side-by-side.sh draws (scripts/vm-run.sh sets it)}
figures "gdx-bench -P 1" ", \"mode\": \"bw\", \"title\": \"gdx-bench (-P 1, -P 2) next to ib_write_bw: $CLIENT_DEV -> $SERVER_DEV, medians of $ROUNDS rounds\"" \
	<<<"$plot_gdx" >"$out/bw-gdx-bench.json"
figures "gdx-bench -P 2" <<<"$plot_gdx2" >"$out/bw-gdx-bench-P2.json"
figures ib_write_bw <<<"$plot_perf" >"$out/bw-ib_write_bw.json"
if build/gdx-bench --plot-from "$out/bw-gdx-bench.json" --plot-ref "$out/bw-gdx-bench-P2.json" \
	--plot-ref "$out/bw-ib_write_bw.json" --plot "$out/bandwidth.svg"; then
	echo "(drawn: bandwidth.svg, with the figures bw-*.json, in the run's output directory)"
else
	echo "side-by-side.sh: no bandwidth.svg (gdx-bench said why above)" >&2
fi
if [ "$LAT" = 1 ]; then
	g=$(grep . <<<"$lat_gdx" | median)
	p=$(grep . <<<"$lat_perf" | median)
	f=$(grep . <<<"$lat_floor" | median)
	echo
	echo "Latency, 8-byte messages, half round trip, medians of $ROUNDS rounds"
	echo "gdx-bench -m lat: two processes, receives posted 8 ahead (as NCCL's steps); ib_write_lat: perftest defaults;"
	echo "  floor: build/tests/ref/verbs_pingpong, the plugin's QPs and protocol without its data path"
	printf '%10s  %16s  %16s  %7s  %10s  %9s\n' bytes "gdx-bench us" "ib_write_lat us" ratio "floor us" gdx/floor
	printf '%10s  %16.2f  %16.2f  %7.3f  %10.2f  %9.3f\n' 8 "$g" "$p" \
		"$(awk -v g="$g" -v p="$p" 'BEGIN { print (p > 0) ? g / p : 0 }')" "$f" \
		"$(awk -v g="$g" -v f="$f" 'BEGIN { print (f > 0) ? g / f : 0 }')"
fi
