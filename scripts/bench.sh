#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench: one VM boot, then on the same rxe devices, interleaved five
# times (ROUNDS): gdx-bench next to ib_write_bw (64 KiB, 1 MiB) and gdx-bench -m lat
# next to ib_write_lat (8 B); then two tc-shaped rails against one; then what
# a connection costs, 256 pairs in one process (gdx-bench -m conn); then 1, 2
# and 4 QPs per connection next to ib_write_bw -q 1 and -q 4, and a fused
# connection's throughput while one rail's wire goes down and comes back
# (scripts/bench-fabric.sh); last, the instructions per call on both sides
# at 8 B, 64 KiB and 1 MiB, one rail and two, and what the live counters cost
# (scripts/cpu-cost.sh). PEER=path/to/other.so (a plugin built from NCCL's
# IB transport, say) adds its figures beside this one's: the work of a
# message, and bandwidth and message rate through the same client
# (scripts/bench-peer.sh). The emulator's absolute figures mean nothing;
# the ratios do. The bandwidth medians are drawn into build/bench/bandwidth.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/vm-run.sh --pairs 2 --mem 4096 --timeout 4800 --out build/bench -- \
	"LAT=1 ROUNDS=${ROUNDS:-5} scripts/side-by-side.sh && echo && scripts/bench-rails.sh && echo && build/gdx-bench -m conn -n 256 && echo && scripts/bench-fabric.sh && echo && PEER=${PEER:-} LIVE_OFF=build-liveoff/libnccl-net-gdx.so RAILS=1 scripts/cpu-cost.sh${PEER:+ && echo && PEER=$PEER scripts/bench-peer.sh}"
