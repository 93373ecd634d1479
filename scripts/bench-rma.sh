#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One-sided RMA's figures, inside the switched VM, all in one boot:
#
#   scripts/vm-run.sh --switch --pairs 3 -- scripts/bench-rma.sh
#
# rxe0 -> rxe1 (rank 0's first NIC to rank 1's): ib_write_bw and
# ib_atomic_lat, then the plugin's RMA tables (v16, tests/vm/switch_rma.c
# test_bench): puts of 64 KiB to 4 MiB, 8 in flight, and the median half
# round trip of an 8-byte put with a strong signal, over one rail and over
# two (rxe0+rxe4 -> rxe1+rxe5). Then again with each sending veth shaped to
# RATE (veth0, veth4: well under the emulator's own ceiling), where striping
# over two rails shows. Prints one table.
set -euo pipefail

RATE=${RATE:-100mbit}
if [ "${GDX_VM_WIRING:-}" != switch ] || [ "${GDX_VM_PAIRS:-0}" -lt 3 ]; then
	echo "bench-rma.sh needs scripts/vm-run.sh --switch --pairs 3" >&2
	exit 2
fi
SERVER_DEV=rxe1 CLIENT_DEV=rxe0 SERVER_ADDR=198.19.0.2
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
export NCCL_GDX_TIMEOUT=${NCCL_GDX_TIMEOUT:-14} # perftest's ack timeout, as side-by-side.sh

# ib_atomic_lat's typical latency, us (fetch-and-add, 8 bytes).
atomic_lat() {
	local out
	timeout 120 ib_atomic_lat -d "$SERVER_DEV" -x "$(gid_index "$SERVER_DEV")" -A FETCH_AND_ADD \
		-n 1000 >/dev/null 2>&1 &
	sleep 1
	out=$(timeout 120 ib_atomic_lat -d "$CLIENT_DEV" -x "$(gid_index "$CLIENT_DEV")" \
		-A FETCH_AND_ADD -n 1000 "$SERVER_ADDR" 2>&1)
	wait || true
	awk '$1 == 8 { print $5 }' <<<"$out"
}

shape() {
	for dev in veth0 veth4; do
		tc qdisc replace dev "$dev" root tbf rate "$1" burst 64kb limit 32mb
	done
}

unshape() {
	for dev in veth0 veth4; do
		tc qdisc del dev "$dev" root 2>/dev/null || true
	done
}

measure() {
	local label=$1 out
	echo "== $label"
	for s in 65536 1048576 4194304; do
		echo "ib_write_bw size $s gbps $(run_perftest "$s")"
	done
	echo "ib_atomic_lat size 8 us $(atomic_lat)"
	out=$(build/tests/vm/switch_rma test_bench 2>&1) || { echo "$out" | tail -20; exit 1; }
	grep -E '^rma-' <<<"$out"
}

unshaped=$(measure "unshaped (the emulator's ceiling)")
echo "$unshaped"
shape "$RATE"
shaped=$(measure "each sending veth shaped to $RATE")
echo "$shaped"
unshape

table() {
	local t=$1
	printf '%-30s %12s %12s %12s %14s\n' "" "64 KiB" "1 MiB" "4 MiB" "8 B latency"
	printf '%-30s' "ib_write_bw / ib_atomic_lat"
	for s in 65536 1048576 4194304; do
		printf ' %7s Gb/s' "$(awk -v s="$s" '$1 == "ib_write_bw" && $3 == s { print $5 }' <<<"$t")"
	done
	printf ' %9s us\n' "$(awk '$1 == "ib_atomic_lat" { print $5 }' <<<"$t")"
	for r in 1 2; do
		printf '%-30s' "RMA put / put+signal, $r rail(s)"
		for s in 65536 1048576 4194304; do
			printf ' %7s Gb/s' "$(awk -v s="$s" -v r="$r" '$1 == "rma-put" && $3 == r && $5 == s { print $7 }' <<<"$t")"
		done
		printf ' %9s us\n' "$(awk -v r="$r" '$1 == "rma-put-signal-latency" && $3 == r { print $7 }' <<<"$t")"
	done
}

echo
echo "rxe0 -> rxe1 (and rxe4 -> rxe5 for the second rail), one boot"
echo "-- unshaped"
table "$unshaped"
echo "-- each sending veth shaped to $RATE"
table "$shaped"
