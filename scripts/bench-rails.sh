#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh --pairs 2 -- scripts/bench-rails.sh):
# shapes each rail's sending veth to RATE with tc, well under the emulator's
# own ceiling, then measures 1 MiB messages through the plugin over one rail
# (rxe1 -> rxe0) and over the fused pair (rxe1+rxe3 -> rxe0+rxe2), interleaved
# ROUNDS times. Prints the medians and the two-rail/one-rail ratio.
set -euo pipefail

RATE=${RATE:-80mbit}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1048576}
ITERS=${ITERS:-60}

[ "${GDX_VM_PAIRS:-0}" -ge 2 ] || { echo "bench-rails.sh needs scripts/vm-run.sh --pairs 2" >&2; exit 2; }
for dev in veth1 veth3; do
	# A deep queue: a drop would cost an RC retransmit timeout, not a rate.
	tc qdisc replace dev "$dev" root tbf rate "$RATE" burst 64kb limit 32mb
done
# v7 fuses at init and hides the members: each run says which devices it wants
# perftest's default ack timeout (4.096 us * 2^14 = 67 ms): the emulated wire drops a
# packet now and then, and a 4 s timeout (the plugin's default) would then stall a run.
export NCCL_GDX_TIMEOUT=${NCCL_GDX_TIMEOUT:-14}

run() { NCCL_GDX_RAILS=$3 build/gdx-bench -d "$1" --peer-dev "$2" -s "$SIZE" -n "$ITERS" -w 10 -t 8 | awk '!/^#/ { print $4 }'; }
# shellcheck source=scripts/stats-lib.sh
. "$(dirname "$0")/stats-lib.sh"

one="" two=""
for round in $(seq 1 "$ROUNDS"); do
	a=$(run rxe0 rxe1 off)
	b=$(run rxe0+rxe2 rxe1+rxe3 rxe0+rxe2,rxe1+rxe3)
	echo "round $round: one rail $a Gb/s, two rails $b Gb/s"
	one+="$a "$'\n'
	two+="$b "$'\n'
done
a=$(grep . <<<"$one" | median_low)
b=$(grep . <<<"$two" | median_low)
echo
echo "$SIZE-byte messages, each rail shaped to $RATE, medians of $ROUNDS rounds"
printf '%-12s %10s\n' rails "Gb/s"
printf '%-12s %10.4f\n' 1 "$a" 2 "$b"
printf 'two rails / one rail = %.3f\n' "$(awk -v a="$a" -v b="$b" 'BEGIN { print (a > 0) ? b / a : 0 }')"
# the shaping ends with this run: what make bench runs next measures the wire as it is
for dev in veth1 veth3; do
	tc qdisc del dev "$dev" root 2>/dev/null || true
done
