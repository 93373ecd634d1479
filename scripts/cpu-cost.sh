#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh -- scripts/cpu-cost.sh): the plugin's CPU
# cost per message on each side of a gdx-bench stream, from callgrind: the
# user-space instructions spent inside the plugin's NCCL calls (isend and test
# on the sender, irecv and test on the receiver, including the verbs
# provider's work they call and any polling while they wait), divided by the
# messages; and the system calls per message from strace.
#
#   scripts/cpu-cost.sh              # as NCCL up to 2.25, or with no profiler
#   scripts/cpu-cost.sh --profiler   # with a profiler that takes the plugin's
#                                    # events (gdx-bench --profiler)
set -euo pipefail
cd "$(dirname "$0")/.."

prof=()
case "${1:-}" in
	--profiler) prof=(--profiler) ;;
	"") ;;
	*) echo "usage: $0 [--profiler]" >&2; exit 2 ;;
esac

SIZE=${SIZE:-65536}
# PLUGIN: another build of the plugin to measure, e.g. one made with
# CPPFLAGS=-DGDX_LIVE_OFF (no live-counter stores on the data path).
bench=(build/gdx-bench ${PLUGIN:+--plugin "$PLUGIN"})
ITERS=${ITERS:-400}
WARMUP=10
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
msgs=$((ITERS + WARMUP))

valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out/cg.%p" \
	"${bench[@]}" -s "$SIZE" -n "$ITERS" -w "$WARMUP" -t 8 "${prof[@]}" >/dev/null 2>"$out/vg.log"
# Inclusive instructions of the named plugin entry points in one profile
# (functions of plugin/gdx_net.c, or of the file given third): their own
# lines, not the "=> callee (Nx)" lines of the annotated callers.
inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v fns="$2" -v src="${3:-gdx_net.c}" 'BEGIN { n = split(fns, f, " ") }
			$0 !~ /=>/ { for (i = 1; i <= n; i++) if ($0 ~ (src ":" f[i] " ")) { gsub(",", "", $1); s += $1 } }
			END { print s + 0 }'
}
files=$(ls "$out"/cg.* | sort -t. -k2 -n)
server=$(head -1 <<<"$files") # the parent: the receiver
client=$(tail -1 <<<"$files")
recv_i=$(inclusive "$server" "gdx_net_irecv gdx_net_test")
send_i=$(inclusive "$client" "gdx_net_isend gdx_net_test")
# --profiler: of those, what the events took (starting and stopping them,
# the benchmark's counting callback included)
recv_p=$(inclusive "$server" "gdx_prof_start_bufs gdx_prof_stop" gdx_prof.c)
send_p=$(inclusive "$client" "gdx_prof_start_pieces gdx_prof_stop" gdx_prof.c)
# System calls per message: the difference of two runs that differ only in
# length, so start-up (hwloc reading sysfs, connecting) cancels out; the
# benchmark's own sched_yield while idle is left out.
syscalls() {
	strace -f -qq -c -e 'trace=!sched_yield' -o "$out/st.$1" \
		"${bench[@]}" -s "$SIZE" -n "$1" -w "$WARMUP" -t 8 "${prof[@]}" >/dev/null
	awk '$NF == "total" { print $(NF-2) }' "$out/st.$1"
}
low=$(syscalls "$ITERS")
high=$(syscalls $((3 * ITERS)))
n=$((2 * ITERS))
# Per call: the difference between the two runs, per extra message. Calls the
# connection set-up spins on (accept4, the handshake's recv) vary with timing
# and are left out: the data path does not make them.
per_call() {
	for k in "$ITERS" $((3 * ITERS)); do
		awk 'NF >= 5 && $NF != "total" && $NF != "syscall" { print $NF, $4 }' "$out/st.$k" |
			sort >"$out/calls.$k"
	done
	join "$out/calls.$ITERS" "$out/calls.$((3 * ITERS))" |
		awk -v n="$n" '$1 != "accept4" && $1 != "recvfrom" && ($3 - $2) / n >= 0.01 { printf "%s %.2f, ", $1, ($3 - $2) / n }'
}
# The posting cost alone, without polling: in a ping-pong every isend finds
# its clear-to-send and returns a request at the first call, and every irecv
# returns one, so their instructions per call are exact.
valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out/lat.%p" \
	"${bench[@]}" -m lat -s 8 -n "$ITERS" -w "$WARMUP" "${prof[@]}" >/dev/null 2>"$out/vg-lat.log"
lat_files=$(ls "$out"/lat.* | sort -t. -k2 -n)
isend_i=0 irecv_i=0
for f in $lat_files; do
	isend_i=$((isend_i + $(inclusive "$f" "gdx_net_isend")))
	irecv_i=$((irecv_i + $(inclusive "$f" "gdx_net_irecv")))
done
if [ ${#prof[@]} -gt 0 ]; then
	# what each end's plugin gave the benchmark's counting callback
	events=$(awk '/profiler events started/ { printf "%s%s %d started, %d stopped", sep, $2, $3, $7; sep = "; " }' "$out/vg.log")
	echo "CPU cost per $SIZE-byte message, gdx-bench stream of $msgs messages, depth 8${PLUGIN:+ ($PLUGIN)}, with a profiler taking the net events ($events)"
else
	echo "CPU cost per $SIZE-byte message, gdx-bench stream of $msgs messages, depth 8${PLUGIN:+ ($PLUGIN)}"
fi
if [ ${#prof[@]} -gt 0 ]; then
	echo "  receiver: $((recv_i / msgs)) user-space instructions in irecv + test, $((recv_p / msgs)) of them reporting the events"
	echo "  sender:   $((send_i / msgs)) user-space instructions in isend + test, $((send_p / msgs)) of them reporting the events"
else
	echo "  receiver: $((recv_i / msgs)) user-space instructions in irecv + test"
	echo "  sender:   $((send_i / msgs)) user-space instructions in isend + test"
fi
echo "  system calls per message, both sides (sched_yield of the benchmark aside): $(per_call)"
echo "  posting alone (8-byte ping-pong, both sides): isend $((isend_i / (2 * msgs))), irecv $((irecv_i / (2 * msgs))) instructions per call"
