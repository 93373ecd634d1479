#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh --pairs 2 -- scripts/bench-fabric.sh):
#  1. 1 MiB bandwidth through the plugin with 1, 2 and 4 QPs per connection
#     (rxe1 -> rxe0, one thread driving both ends as in side-by-side.sh),
#     next to ib_write_bw with -q 1 and -q 4 on the same pair, interleaved
#     ROUNDS times; under the emulator more QPs add flows, not speed: the
#     figures show what they cost.
#  2. A fused connection (rxe1+rxe3 -> rxe0+rxe2), each rail shaped to 80
#     Mbit/s, its throughput every second while rail 0's wire goes down at
#     DOWN_AT s and comes back at UP_AT s.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DOWN_AT=${DOWN_AT:-4} UP_AT=${UP_AT:-9} RUN_S=${RUN_S:-16}
export NCCL_GDX_TIMEOUT=${NCCL_GDX_TIMEOUT:-14} # as side-by-side.sh: perftest's ack timeout

[ "${GDX_VM_PAIRS:-0}" -ge 2 ] || { echo "bench-fabric.sh needs scripts/vm-run.sh --pairs 2" >&2; exit 2; }
# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

run_gdx_qps() {
	NCCL_GDX_QPS_PER_CONNECTION=$1 timeout 300 build/gdx-bench -d "$SERVER_DEV" \
		--peer-dev "$CLIENT_DEV" -s 1048576 -n 300 -w 50 -t 32 -P 1 | awk '!/^#/ { print $4 }'
}

# unshaped, whatever ran before in this boot
for dev in veth1 veth3; do
	tc qdisc del dev "$dev" root 2>/dev/null || true
done
declare -A gdx perf
for round in $(seq 1 "$ROUNDS"); do
	line="round $round:"
	for q in 1 2 4; do
		g=$(run_gdx_qps "$q")
		gdx[$q]+="$g "
		line+=" $q QP(s) $g Gb/s,"
	done
	for q in 1 4; do
		p=$(run_perftest 1048576 -q "$q")
		perf[$q]+="$p "
		line+=" ib_write_bw -q $q $p Gb/s,"
	done
	echo "${line%,}"
done
m() { tr ' ' '\n' <<<"$1" | grep . | median; }
echo
echo "1 MiB messages, rxe1 -> rxe0, medians of $ROUNDS interleaved rounds (Gb/s)"
printf '%16s  %10s  %10s  %10s  %18s  %18s\n' "" "1 QP" "2 QPs" "4 QPs" "ib_write_bw -q 1" "ib_write_bw -q 4"
printf '%16s  %10.3f  %10.3f  %10.3f  %18.3f  %18.3f\n' gdx-bench "$(m "${gdx[1]}")" \
	"$(m "${gdx[2]}")" "$(m "${gdx[4]}")" "$(m "${perf[1]}")" "$(m "${perf[4]}")"
printf '4 QPs: gdx-bench / ib_write_bw -q 4 = %.3f\n' \
	"$(awk -v g="$(m "${gdx[4]}")" -v p="$(m "${perf[4]}")" 'BEGIN { print (p > 0) ? g / p : 0 }')"

echo
for dev in veth1 veth3; do
	tc qdisc replace dev "$dev" root tbf rate 80mbit burst 64kb limit 32mb
done
(
	sleep "$DOWN_AT"
	ip link set veth1 down
	sleep $((UP_AT - DOWN_AT))
	ip link set veth1 up
) &
echo "A fused connection with NCCL_GDX_FAILOVER=1 (off by default), rails shaped to 80 Mbit/s each; rail 0's wire (veth1) down at ${DOWN_AT} s, up at ${UP_AT} s"
printf '%8s  %12s\n' "second" "Mbit/s"
NCCL_GDX_FAILOVER=1 NCCL_GDX_RAILS=rxe0+rxe2,rxe1+rxe3 timeout $((RUN_S + 60)) build/gdx-bench -d rxe0+rxe2 \
	--peer-dev rxe1+rxe3 -s 1048576 -n $((RUN_S * 19)) -w 0 -t 8 -P 1 --interval 1 2>&1 |
	awk -v d="$DOWN_AT" -v u="$UP_AT" '/^# +[0-9.]+ s/ { t = $2; printf "%8.0f  %12.1f%s\n", t, $4 * 1000, (t > d && t <= d + 1) ? "   <- down" : (t > u && t <= u + 1) ? "   <- up" : "" }'
wait
for dev in veth1 veth3; do
	tc qdisc del dev "$dev" root
done
