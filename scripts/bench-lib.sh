# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the benchmark scripts that run inside the VM (side-by-side.sh,
# bench-fabric.sh): the same rxe pair, perftest and median for all of them.

SERVER_DEV=${SERVER_DEV:-rxe0} CLIENT_DEV=${CLIENT_DEV:-rxe1} SERVER_ADDR=${SERVER_ADDR:-198.18.0.1}

# The RoCE v2 IPv4 GID of a device, as perftest needs it by index.
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 i
	for i in $(seq 0 15); do
		[ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		case "$(cat "$d/gids/$i")" in 0000:0000:0000:0000:0000:ffff:*) echo "$i"; return ;; esac
	done
	echo 1
}

iters_for() { if [ "$1" -ge 1048576 ]; then echo 300; else echo 2000; fi; }

# Gb/s of ib_write_bw at size $1 (further arguments go to both ends, e.g.
# -q 4), from the client's "BW average" column in MB/sec (2^20 bytes/s, two
# decimals: finer than its Gb/s column's two decimals).
run_perftest() {
	local size=$1 out
	shift
	timeout 120 ib_write_bw -d "$SERVER_DEV" -x "$(gid_index "$SERVER_DEV")" -s "$size" \
		-n "$(iters_for "$size")" -F "$@" >/dev/null 2>&1 &
	sleep 1
	out=$(timeout 120 ib_write_bw -d "$CLIENT_DEV" -x "$(gid_index "$CLIENT_DEV")" -s "$size" \
		-n "$(iters_for "$size")" -F "$@" "$SERVER_ADDR" 2>&1)
	wait || true # a perftest run that timed out leaves its figure empty
	awk -v s="$size" '$1 == s { printf "%.4f\n", $4 * 1048576 * 8 / 1e9 }' <<<"$out"
}

# the medians (median)
# shellcheck source=scripts/stats-lib.sh
. "${BASH_SOURCE[0]%/*}/stats-lib.sh"
