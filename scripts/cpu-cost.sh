#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh -- scripts/cpu-cost.sh): the plugin's CPU
# cost on each side of a gdx-bench stream (receives posted 8 ahead, as NCCL's
# proxy does), from callgrind, in user-space instructions including the verbs
# provider's work the plugin calls:
#   - per message: isend + test on the sender, irecv + test on the receiver;
#   - per test call, on both sides (a proxy spins on test);
#   - per isend call: over all calls, over the calls that found no
#     clear-to-send and returned no request (waiting), and over the ones that
#     posted;
#   - per irecv call;
# at each size of SIZES; then the system calls per message from strace.
#
#   scripts/cpu-cost.sh              # as NCCL up to 2.25, or with no profiler
#   scripts/cpu-cost.sh --profiler   # with a profiler that takes the plugin's
#                                    # events (gdx-bench --profiler)
# PLUGIN=path/to/.so measures another build (an earlier one, or one made with
# CPPFLAGS=-DGDX_LIVE_OFF). LIVE_OFF=path/to/.so also prints what the live
# counters cost per message at the first size: this build against that one.
# RAILS=1 (with two rxe pairs) adds a row for a fused two-rail connection
# with failover on, where the failover, striping and per-rail polls run.
set -euo pipefail
cd "$(dirname "$0")/.."

prof=()
case "${1:-}" in
	--profiler) prof=(--profiler) ;;
	"") ;;
	*) echo "usage: $0 [--profiler]" >&2; exit 2 ;;
esac

SIZES=${SIZES:-"8 65536 1048576"}
ITERS=${ITERS:-400}
WARMUP=10
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
msgs=$((ITERS + WARMUP))

# Calls and inclusive instructions, summed over every call site, of the
# functions whose name matches the regex, read from the raw callgrind profile
# (exact per call; no annotation needed). In that format a "cfn=" line names
# the callee of the next "calls=N ..." line, and the line after it holds the
# calls' inclusive cost; names are given once as "(id) name", then as "(id)".
# A static function GCC cloned keeps its name before the dot. A third regex
# counts only the calls made by the functions it matches.
callstats() {
	awk -v re="$2" -v caller="${3:-}" '
		/^c?fn=/ {
			s = substr($0, index($0, "=") + 1)
			if (match(s, /^\([0-9]+\)/)) {
				id = substr(s, 2, RLENGTH - 2); rest = substr(s, RLENGTH + 2)
				if (rest != "") nm[id] = rest
				s = nm[id]
			}
			if ($0 ~ /^cfn=/) cfn = s; else cur = s
			next
		}
		/^calls=/ {
			split(substr($0, 7), a, " ")
			hit = cfn ~ re && (caller == "" || cur ~ caller)
			if (hit) n += a[1]
			next
		}
		hit { c += $NF; hit = 0 }
		END { print n + 0, c + 0 }' "$1"
}
calls() { callstats "$@" | cut -d' ' -f1; }
incl() { callstats "$@" | cut -d' ' -f2; }
fn() { echo "^$1(\\.|'|\$)"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%d", a / b + 0.5; else printf "n/a" }'; }

row() { printf '%-8s %-9s %12s %16s %6s %10s %8s %8s %8s\n' "$@"; }

# A test call that finds nothing, the spin's: what every call runs (the
# entry, test's checks, one CQ poll with the provider's, all in gdx_test)
# without what only a call that found something runs (gdx_comm_poll_all:
# completions taken; gdx_test_end: a request done; a clear-to-send written;
# the liveness check). The average per call mixes both, in the proportion of
# that run's spin. The receiver's: every test of its pending receives polls
# (a small send is done at post, and its test polls nothing). A build
# without that shape (an earlier one), or two rails (every poll goes on to
# the second rail's CQ): n/a.
empty_test() {
	local t all busy
	busy=$(incl "$1" "$(fn 'gdx_(comm_poll_all|test_end|cts_flush|comm_check_peer)')" "$(fn gdx_test)")
	[ "$(calls "$1" "$(fn gdx_comm_poll_all)" "$(fn gdx_test)")" -gt 0 ] || { echo n/a; return; }
	read -r t all <<<"$(callstats "$1" "$(fn gdx_net_test)")"
	div $((all - busy)) "$t"
}

# One profiled stream; sets the per-call figures of both sides.
# $1: label, then gdx-bench's arguments.
stream() {
	local label=$1 f server client
	shift
	rm -f "$out"/cg.*
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out/cg.%p" \
		"${bench[@]}" "$@" -n "$ITERS" -w "$WARMUP" -t 8 "${prof[@]}" >/dev/null 2>"$out/vg.log"
	f=$(ls "$out"/cg.* | sort -t. -k2 -n)
	server=$(head -1 <<<"$f") # the parent: the receiver
	client=$(tail -1 <<<"$f")
	# KEEP=DIR (e.g. $GDX_VM_OUT): the profiles are kept there, to read
	# with callgrind_annotate
	[ -z "${KEEP:-}" ] || { cp "$server" "$KEEP/${label// /}.receiver.cg" && cp "$client" "$KEEP/${label// /}.sender.cg"; }
	local r_irecv r_test s_isend s_test s_post nc_test nc_isend r_nc_test
	r_irecv=$(incl "$server" "$(fn gdx_net_irecv)")
	read -r r_nc_test r_test <<<"$(callstats "$server" "$(fn gdx_net_test)")"
	read -r nc_isend s_isend <<<"$(callstats "$client" "$(fn gdx_net_isend)")"
	read -r nc_test s_test <<<"$(callstats "$client" "$(fn gdx_net_test)")"
	s_post=$(incl "$client" "$(fn gdx_isend_post)")
	# A waiting isend: every call's entry check is the same, E, measured in
	# the ping-pong where every isend posts. Too few waiting calls (under a
	# tenth of the messages) to divide by: n/a.
	local waiting posting
	if [ "$(calls "$client" "$(fn gdx_isend_post)")" -gt 0 ]; then
		waiting=$(awk -v i=$((s_isend - s_post)) -v m="$msgs" -v e="$entry" -v c="$nc_isend" \
			'BEGIN { w = c - m; if (w > m / 10) printf "%d", (i - m * e) / w + 0.5; else printf "n/a" }')
		posting=$(awk -v p="$s_post" -v m="$msgs" -v e="$entry" 'BEGIN { printf "%d", p / m + e + 0.5 }')
	else
		# a build without the posting function (an earlier one): each
		# posting call taken as the ping-pong's, so "~"
		waiting=$(awk -v i="$s_isend" -v m="$msgs" -v p="$pp_isend" -v c="$nc_isend" \
			'BEGIN { w = c - m; if (w > m / 10) printf "~%d", (i - m * p) / w + 0.5; else printf "n/a" }')
		posting="~$pp_isend"
	fi
	row "$label" sender \
		"$(div $((s_isend + s_test)) "$msgs")" \
		"$(div "$s_test" "$nc_test") ($(awk -v a="$nc_test" -v m="$msgs" 'BEGIN { printf "%.1f", a / m }'))" \
		- "$(div "$s_isend" "$nc_isend")" "$waiting" "$posting" -
	row "" receiver \
		"$(div $((r_irecv + r_test)) "$msgs")" \
		"$(div "$r_test" "$r_nc_test") ($(awk -v a="$r_nc_test" -v m="$msgs" 'BEGIN { printf "%.1f", a / m }'))" \
		"$(if [ "$label" = "2 rails" ]; then echo n/a; else empty_test "$server"; fi)" \
		- - - "$(div "$r_irecv" "$msgs")"
	if [ ${#prof[@]} -gt 0 ]; then
		# of those, what the events took (starting and stopping them, the
		# benchmark's counting callback included)
		echo "         events: sender $(div "$(incl "$client" "$(fn 'gdx_prof_(start_pieces|stop)')")" "$msgs"), receiver $(div "$(incl "$server" "$(fn 'gdx_prof_(start_bufs|stop)')")" "$msgs") per message ($(awk '/profiler events started/ { printf "%s%s %d started, %d stopped", sep, $2, $3, $7; sep = "; " }' "$out/vg.log"))"
	fi
}

# An 8-byte ping-pong: every isend finds its clear-to-send at the first
# call and every irecv returns a request, so their instructions per call
# are the posting cost alone, and the part of an isend outside the posting
# function is its entry (entry). done: what the test that finds a request
# done adds (gdx_test_end), per message.
pingpong() {
	local f a b nc=0 ic=0 pc=0 rc=0 ri=0 dc=0 di=0
	rm -f "$out"/lat.*
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out/lat.%p" \
		"${bench[@]}" -m lat -s 8 -n "$ITERS" -w "$WARMUP" "${prof[@]}" >/dev/null 2>"$out/vg-lat.log"
	for f in "$out"/lat.*; do
		read -r a b <<<"$(callstats "$f" "$(fn gdx_net_isend)")"
		nc=$((nc + a)) ic=$((ic + b))
		pc=$((pc + $(incl "$f" "$(fn gdx_isend_post)")))
		read -r a b <<<"$(callstats "$f" "$(fn gdx_net_irecv)")"
		rc=$((rc + a)) ri=$((ri + b))
		read -r a b <<<"$(callstats "$f" "$(fn gdx_test_end)")"
		dc=$((dc + a)) di=$((di + b))
	done
	entry=$(div $((ic - pc)) "$nc")
	[ "$entry" = n/a ] && entry=0
	pp_isend=$(div "$ic" "$nc") pp_irecv=$(div "$ri" "$rc") pp_done=$(div "$di" "$dc")
}

run_all() {
	bench=(build/gdx-bench ${1:+--plugin "$1"})
	pingpong
	echo "posting alone (8-byte ping-pong, both sides): isend $pp_isend, irecv $pp_irecv instructions per call"
	row size side "per message" "test (calls/msg)" empty "isend all" waiting posting irecv
	for s in $SIZES; do
		stream "$s B" -s "$s"
	done
	if [ -n "${RAILS:-}" ] && [ -e /sys/class/infiniband/rxe3 ]; then
		NCCL_GDX_FAILOVER=1 NCCL_GDX_RAILS=rxe0+rxe2,rxe1+rxe3 \
			stream "2 rails" -s "${SIZES%% *}" -d rxe0+rxe2 --peer-dev rxe1+rxe3
	fi
}

head="CPU cost per call, user-space instructions, gdx-bench stream of $msgs messages, depth 8"
[ ${#prof[@]} -gt 0 ] && head+=", with a profiler taking the net events"
echo "$head${PLUGIN:+ ($PLUGIN)}"
run_all "${PLUGIN:-}"
if [ -n "${LIVE_OFF:-}" ]; then
	# What a message's stores cost: its isend, its irecv and the tests that
	# find them done, in the ping-pong (a stream's figures move more with
	# the spin than the stores weigh).
	with=$((pp_isend + pp_irecv + 2 * pp_done))
	bench=(build/gdx-bench --plugin "$LIVE_OFF")
	pingpong
	without=$((pp_isend + pp_irecv + 2 * pp_done))
	echo "live counters: $((with - without)) instructions per 8-byte message, both sides (isend, irecv and the tests that find them done: $with with, $without without)"
fi

# System calls per message: the difference of two runs that differ only in
# length, so start-up (hwloc reading sysfs, connecting) cancels out; the
# benchmark's own sched_yield while idle is left out.
bench=(build/gdx-bench ${PLUGIN:+--plugin "$PLUGIN"})
SIZE=${SIZES%% *}
syscalls() {
	strace -f -qq -c -e 'trace=!sched_yield' -o "$out/st.$1" \
		"${bench[@]}" -s "$SIZE" -n "$1" -w "$WARMUP" -t 8 "${prof[@]}" >/dev/null
}
syscalls "$ITERS"
syscalls $((3 * ITERS))
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
echo "system calls per $SIZE-byte message, both sides (sched_yield of the benchmark aside): $(per_call)"
