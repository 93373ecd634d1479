#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM, PEER=path/to/other.so (e.g. a plugin built from NCCL's own
# IB transport): this plugin and the peer through the same client (gdx-bench,
# two processes, through each library's ncclNetPlugin_v7 table) on the same
# rxe pair in the same boot. 1 MiB bandwidth, ROUNDS runs each, alternating,
# and the medians; the 8-byte message rate in ABBA order (this, peer, peer,
# this), ROUNDS times, and the medians. The emulator's absolute figures mean
# nothing; the ratios do.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${GDX_VM:-}" = 1 ] || { echo "bench-peer.sh runs inside scripts/vm-run.sh" >&2; exit 2; }
[ -n "${PEER:-}" ] || { echo "bench-peer.sh: PEER=path/to/other.so is needed" >&2; exit 2; }
PLUGIN=${PLUGIN:-build/libnccl-net-gdx.so}
ROUNDS=${ROUNDS:-5}
# both plugins' out-of-band traffic on the first veth (NCCL's variable,
# which this plugin reads as its twin)
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-veth0}

# $1 plugin, then gdx-bench's options: the figure of the one size's row
# (Gb/s for bw, messages per second for rate).
one() {
	local plugin=$1
	shift
	timeout 300 build/gdx-bench --plugin "$plugin" -d rxe0 --peer-dev rxe1 "$@" -j |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["results"][0]; print(r.get("msg_rate") or r["Gbps"])'
}

# shellcheck source=scripts/stats-lib.sh
. "$(dirname "$0")/stats-lib.sh"

: >/tmp/bp.bw.a
: >/tmp/bp.bw.b
: >/tmp/bp.rate.a
: >/tmp/bp.rate.b
for _ in $(seq "$ROUNDS"); do
	one "$PLUGIN" -s 1M -n 200 -w 20 >>/tmp/bp.bw.a
	one "$PEER" -s 1M -n 200 -w 20 >>/tmp/bp.bw.b
	# ABBA: a drift over the run weighs on both alike
	one "$PLUGIN" -m rate -s 8 -t 32 -n 3000 -w 100 >>/tmp/bp.rate.a
	one "$PEER" -m rate -s 8 -t 32 -n 3000 -w 100 >>/tmp/bp.rate.b
	one "$PEER" -m rate -s 8 -t 32 -n 3000 -w 100 >>/tmp/bp.rate.b
	one "$PLUGIN" -m rate -s 8 -t 32 -n 3000 -w 100 >>/tmp/bp.rate.a
done
printf '%-26s %14s %14s %7s\n' "" "this plugin" "peer" "ratio"
a=$(median </tmp/bp.bw.a) b=$(median </tmp/bp.bw.b)
printf '%-26s %14s %14s %7s\n' "1 MiB, Gb/s (median of $ROUNDS)" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
a=$(median </tmp/bp.rate.a) b=$(median </tmp/bp.rate.b)
printf '%-26s %14s %14s %7s\n' "8 B, msg/s (ABBA, $((2 * ROUNDS)) each)" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
echo "runs: bandwidth this $(tr '\n' ' ' </tmp/bp.bw.a)| peer $(tr '\n' ' ' </tmp/bp.bw.b)"
echo "runs: rate this $(tr '\n' ' ' </tmp/bp.rate.a)| peer $(tr '\n' ' ' </tmp/bp.rate.b)"
rm -f /tmp/bp.*
