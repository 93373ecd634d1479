#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh --pairs 2 -- scripts/bench-flows.sh):
# what NCCL's setNetAttr hints could steer, measured. NCCL tells a plugin
# the flows per peer (its channels) of what comes; with several, each flow
# is a connection of its own, and the plugin could send each message whole
# on one rail instead of splitting it over all, or spread a connection over
# more QPs. This runs FLOWS connections over the fused pair (rxe1+rxe3 ->
# rxe0+rxe2), one proxy-like thread a side (tests/ref/net_cost -F, with the
# hints, -H), for each setting:
#   split  today's: messages of STRIPE_MIN (64 KiB) and more split over both rails
#   whole  every message whole on the rail that would deliver it first
#   qps2   split, and two QPs per rail (NCCL_GDX_QPS_PER_CONNECTION=2)
#   peer   NCCL's own IB transport (PEER=path/to/libnccl-net-ib.so), which
#          splits every message over its QPs
# in ABBA order, ROUNDS rounds; prints the receiver's medians side by side.
# RATE=80mbit shapes each rail's sending veth (wire-bound, as a real NIC is);
# unset, the emulated NICs run as fast as the CPUs let them (CPU-bound: the
# work of each message shows).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1048576}
FLOWS=${FLOWS:-1 4}
MIB=${MIB:-64} # MiB each run moves, over all its flows
RATE=${RATE:-}
client=build/tests/ref/net_cost

[ "${GDX_VM_PAIRS:-0}" -ge 2 ] || { echo "bench-flows.sh needs scripts/vm-run.sh --pairs 2" >&2; exit 2; }
if [ -n "$RATE" ]; then
	for dev in veth1 veth3; do
		# A deep queue: a drop would cost an RC retransmit timeout, not a rate.
		tc qdisc replace dev "$dev" root tbf rate "$RATE" burst 64kb limit 32mb
	done
fi
# The default ack timeouts (4 s): with a short one (14, 67 ms) the emulated
# wire's late acks are taken as lost and packets retransmitted, and the
# kernel's rxe then refuses some retried writes (remote invalid request),
# NCCL's own IB transport alike.
export NCCL_SOCKET_IFNAME=veth0
settings="split whole qps2"
[ -n "${PEER:-}" ] && settings+=" peer"

# run SETTING FLOWS: the receiver's Gb/s
run() {
	local plugin=build/libnccl-net-gdx.so msgs=$((MIB * 1048576 / SIZE / $2)) e=()
	case $1 in
	whole) e=(NCCL_GDX_STRIPE_MIN=2147483647) ;;
	qps2) e=(NCCL_GDX_QPS_PER_CONNECTION=2) ;;
	peer) plugin=$PEER e=(NCCL_IB_HCA=rxe) ;;
	esac
	env "${e[@]}" timeout 600 "$client" -p "$plugin" -r rxe0+rxe2 -t rxe1+rxe3 -s "$SIZE" \
		-n "$msgs" -w 4 -d 8 -F "$2" -H 2>&1 |
		awk '$2 == "receiver:" && $3 == "flows" { print $14 }'
}
# shellcheck source=scripts/stats-lib.sh
. "$(dirname "$0")/stats-lib.sh"

declare -A got
for f in $FLOWS; do
	for round in $(seq 1 "$ROUNDS"); do
		order=$settings
		((round % 2)) || order=$(tr ' ' '\n' <<<"$settings" | tac | tr '\n' ' ')
		line="flows $f round $round:"
		for s in $order; do
			g=$(run "$s" "$f") || true
			[ -n "$g" ] || g=failed # an emulated wire's drops past the retries
			got[$s,$f]+="$g"$'\n'
			line+=" $s $g"
		done
		echo "$line"
	done
done
echo
echo "$SIZE-byte messages, depth 8 per flow, ${RATE:-unshaped} rails, receiver's Gb/s, medians of $ROUNDS (ABBA)"
printf '%-6s' flows
for s in $settings; do printf ' %8s' "$s"; done
echo
for f in $FLOWS; do
	printf '%-6s' "$f"
	for s in $settings; do printf ' %8s' "$(grep . <<<"${got[$s,$f]}" | median_low_of_runs)"; done
	echo
done
