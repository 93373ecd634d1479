#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM (scripts/vm-run.sh --pairs 2 -- scripts/cpu-cost.sh): the CPU
# work of a message through the plugin, beside another plugin's in the same
# boot (PEER=path/to/other.so, e.g. one built from NCCL's IB transport), in
# user-space instructions from callgrind, the verbs provider's included.
#
# The client is tests/ref/net_cost.c: NCCL's proxy loop through each plugin's
# ncclNetPlugin_v11 table, the same calls in the same order, receives DEPTH
# ahead, only the oldest request of each side tested, every call in a wrapper
# of its own. A run's totals mix the work with the spin (a cheaper poll makes
# more calls while it waits for the same wire), so per message is:
#   (instructions of every call of the side
#    - empty isends x an empty isend's - empty tests x an empty test's)
#   / messages
# where a call is empty when it finds nothing (isend: no clear-to-send, test:
# not done), and an empty call's cost is measured alone, in runs where every
# call is one (net_cost -m spin-test, spin-test-send, spin-isend): a test of a
# receive whose message the sender holds back, of a send while a 64 MiB
# message is on the wire, an isend before any receive is posted. After a call
# that finds nothing the client waits BACKOFF us outside the plugin, as a
# proxy serving other connections does, so that each message comes with few
# empty calls and an error in what they cost weighs little. Each side, each
# depth (8 and 1), each size of SIZES.
#
# What a waiting comm does on a clock, not per call (the liveness check's
# timed part, gdx_cq_check_timed, every 100 ms of waiting: events, a stall,
# the peer's socket, the NIC's counters once a second) is no call's work:
# under callgrind in an emulator a call takes hundreds of times longer than
# on a node, so the clock fires that much more often per call, and more in a
# slower run. It is taken out of every figure and shown on a line of its
# own, per check (the peer has no such function: nothing is taken out).
#
#   scripts/cpu-cost.sh                  # this plugin
#   PEER=build/peer/libnccl-net-ib.so scripts/cpu-cost.sh   # and another
#   scripts/cpu-cost.sh --profiler       # with a profiler taking the events
# PLUGIN=path/to/.so measures another build of this one. LIVE_OFF=path/to/.so
# (a build with CPPFLAGS=-DGDX_LIVE_OFF) adds what the live counters cost per
# message. RAILS=1 (two rxe pairs) adds a fused two-rail row with failover on.
# KEEP=DIR keeps the profiles.
set -euo pipefail
cd "$(dirname "$0")/.."

prof=()
case "${1:-}" in
	--profiler) prof=(-P) ;;
	"") ;;
	*) echo "usage: $0 [--profiler]" >&2; exit 2 ;;
esac

SIZES=${SIZES:-"8 65536 1048576"}
DEPTHS=${DEPTHS:-"8 1"}
ITERS=${ITERS:-400}
SPINS=${SPINS:-2000}
# after a call that finds nothing, the client waits this long (us) outside
# the plugin, as a proxy with other connections does (net_cost -b)
BACKOFF=${BACKOFF:-20}
PLUGIN=${PLUGIN:-build/libnccl-net-gdx.so}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
client=build/tests/ref/net_cost
# NCCL's IB transport reads the socket interface as NCCL does; this plugin
# takes the same twin: both ends' out-of-band traffic on the first veth
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-veth0}

# Calls and inclusive instructions of the functions whose name matches the
# regex, summed over every call site, from callgrind's raw profile (exact per
# call; no annotation). In that format a "cfn=" line names the callee of the
# next "calls=N ..." line, and the line after it holds the calls' inclusive
# cost; names are given once as "(id) name", then as "(id)".
callstats() {
	awk -v re="$2" '
		/^c?fn=/ {
			s = substr($0, index($0, "=") + 1)
			if (match(s, /^\([0-9]+\)/)) {
				id = substr(s, 2, RLENGTH - 2); rest = substr(s, RLENGTH + 2)
				if (rest != "") nm[id] = rest
				s = nm[id]
			}
			if ($0 ~ /^cfn=/) cfn = s
			next
		}
		/^calls=/ { split(substr($0, 7), a, " "); hit = cfn ~ re; if (hit) n += a[1]; next }
		hit { c += $NF; hit = 0 }
		END { print n + 0, c + 0 }' "$1"
}
incl() { callstats "$@" | cut -d' ' -f2; }
fn() { echo "^$1(\\.|'|\$)"; }

# One profiled run of the client; leaves the receiver's profile in $out/r,
# the sender's in $out/s, and the counts each printed in $out/log.
# $1: the plugin, then the client's arguments.
profiled() {
	local plugin=$1 f
	shift
	rm -f "$out"/cg.*
	# COLLECT=WRAPPER: only what runs inside that wrapper (a spin run's
	# other calls, such as the test that ends it, are left out)
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out/cg.%p" \
		${COLLECT:+--toggle-collect="$COLLECT"} \
		"$client" -p "$plugin" -n "$ITERS" "${prof[@]}" "$@" >/dev/null 2>"$out/log"
	# shellcheck disable=SC2012 # our own names, cg.PID
	f=$(ls "$out"/cg.* | sort -t. -k2 -n)
	cp "$(head -1 <<<"$f")" "$out/r" # the parent: the receiver
	cp "$(tail -1 <<<"$f")" "$out/s"
}

# The clock's checks in a profile: how many, their instructions.
TIMED=gdx_cq_check_timed
declare -A TIMED_N TIMED_C
timed() { callstats "$1" "$(fn "$TIMED")"; }
# a renamed function would take nothing out, silently
nm "$PLUGIN" | awk -v f="$TIMED" '$3 == f || index($3, f ".") == 1 { n++ } END { exit !n }' || {
	echo "cpu-cost.sh: $PLUGIN has no function $TIMED (renamed? a stripped build?)" >&2
	exit 1
}
# timed_add PLUGIN PROFILE: adds them to the plugin's sums; TIMED_LAST is
# the profile's instructions, for the figure to leave out
timed_add() {
	local n
	read -r n TIMED_LAST <<<"$(timed "$2")"
	TIMED_N[$1]=$((${TIMED_N[$1]:-0} + n)) TIMED_C[$1]=$((${TIMED_C[$1]:-0} + TIMED_LAST))
}

# counts SIDE FIELD: a count the client printed ("isend_ok", ...).
counts() {
	awk -v side="$1" -v f="$2" '$1 == "net_cost" && $2 == side ":" {
		k["messages"] = $4; k["isend_ok"] = $6; k["isend_empty"] = $7
		k["irecv_ok"] = $9; k["irecv_empty"] = $10; k["test_done"] = $12; k["test_empty"] = $13
		print k[f] }' "$out/log"
}

# What an empty call costs with plugin $1, each measured in a run of its
# own where every such call is one: E_TEST (a receive's test), E_TEST_SEND
# (a send's, while a 64 MiB message is on the wire) and E_ISEND.
each_call() { # plugin, profile, wrapper
	local n c
	timed_add "$1" "$2"
	read -r n c <<<"$(callstats "$2" "$(fn "$3")")"
	if ((n == 0)); then
		echo "cpu-cost.sh: no call of $3 in $2's profile (renamed? see $out/log)" >&2
		exit 1
	fi
	EACH=$(awk -v c="$c" -v t="$TIMED_LAST" -v n="$n" 'BEGIN { printf "%.1f", (c - t) / n }')
}
empties() {
	COLLECT="cc_spin_test*" profiled "$1" -m spin-test -n "$SPINS" -s 8
	each_call "$1" "$out/r" cc_spin_test
	E_TEST=$EACH
	COLLECT="cc_spin_test*" profiled "$1" -m spin-test-send -n "$SPINS" -s $((64 << 20)) -d 1
	each_call "$1" "$out/s" cc_spin_test
	E_TEST_SEND=$EACH
	COLLECT="cc_spin_isend*" profiled "$1" -m spin-isend -n "$SPINS" -s 8
	each_call "$1" "$out/s" cc_spin_isend
	E_ISEND=$EACH
}

# Per message, each side, at size $2 and depth $3 with plugin $1 (after
# empties for it): SENDER, RECEIVER, and the empty calls per message.
per_message() {
	local plugin=$1 size=$2 depth=$3
	shift 3
	profiled "$plugin" -s "$size" -d "$depth" -b "$BACKOFF" "$@"
	[ -n "${KEEP:-}" ] && cp "$out/s" "$KEEP/$(basename "$plugin").$size.$depth.sender.cg" &&
		cp "$out/r" "$KEEP/$(basename "$plugin").$size.$depth.receiver.cg"
	local m ie te re rte ts tr
	m=$(counts sender messages)
	# every call of the stream is in a wrapper: the clock's checks in the
	# profile are the wrappers' (none runs in connect, accept or close)
	timed_add "$plugin" "$out/s"
	ts=$TIMED_LAST
	timed_add "$plugin" "$out/r"
	tr=$TIMED_LAST
	ie=$(counts sender isend_empty) te=$(counts sender test_empty)
	re=$(counts receiver irecv_empty) rte=$(counts receiver test_empty)
	SENDER=$(awk -v i="$(incl "$out/s" "$(fn cc_isend)")" -v t="$(incl "$out/s" "$(fn cc_test_send)")" \
		-v ie="$ie" -v te="$te" -v ei="$E_ISEND" -v et="$E_TEST_SEND" -v m="$m" -v x="$ts" \
		'BEGIN { printf "%d", (i + t - ie * ei - te * et - x) / m + 0.5 }')
	# an irecv that gives no request is charged an empty isend's (none at
	# these depths)
	RECEIVER=$(awk -v i="$(incl "$out/r" "$(fn cc_irecv)")" -v t="$(incl "$out/r" "$(fn cc_test_recv)")" \
		-v re="$re" -v te="$rte" -v ei="$E_ISEND" -v et="$E_TEST" -v m="$m" -v x="$tr" \
		'BEGIN { printf "%d", (i + t - re * ei - te * et - x) / m + 0.5 }')
	EMPTY=$(awk -v a=$((ie + te)) -v b=$((re + rte)) -v m="$m" 'BEGIN { printf "%.0f+%.0f", a / m, b / m }')
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-" }'; }
row() { printf '%-12s %10s %10s %7s %10s %10s %7s   %s\n' "$@"; }

echo "CPU work per message, user-space instructions (verbs provider included), net_cost"
echo "through each plugin's v11 table, $ITERS messages after 10 of warm-up, less the empty calls"
echo "(each charged what it costs alone: empty test, empty isend)${prof[*]:+; a profiler takes the events}"
empties "$PLUGIN"
ours=("$E_TEST" "$E_TEST_SEND" "$E_ISEND")
echo "this plugin ($PLUGIN): empty test $E_TEST (of a send: $E_TEST_SEND), empty isend $E_ISEND"
if [ -n "${PEER:-}" ]; then
	empties "$PEER"
	peer=("$E_TEST" "$E_TEST_SEND" "$E_ISEND")
	echo "peer ($PEER): empty test $E_TEST (of a send: $E_TEST_SEND), empty isend $E_ISEND"
fi
row "size/depth" "sender" "peer" "" "receiver" "peer" "" "empty calls per message (sender+receiver): this, peer"
for size in $SIZES; do
	for depth in $DEPTHS; do
		E_TEST=${ours[0]} E_TEST_SEND=${ours[1]} E_ISEND=${ours[2]}
		per_message "$PLUGIN" "$size" "$depth"
		s=$SENDER r=$RECEIVER e=$EMPTY
		if [ -n "${PEER:-}" ]; then
			E_TEST=${peer[0]} E_TEST_SEND=${peer[1]} E_ISEND=${peer[2]}
			per_message "$PEER" "$size" "$depth"
			row "$size/$depth" "$s" "$SENDER" "$(ratio "$s" "$SENDER")" "$r" "$RECEIVER" \
				"$(ratio "$r" "$RECEIVER")" "$e, $EMPTY"
		else
			row "$size/$depth" "$s" - - "$r" - - "$e"
		fi
	done
done

# what was taken out above as the clock's, not any call's
clock_line() { # who, plugin
	local n=${TIMED_N[$2]:-0} c=${TIMED_C[$2]:-0}
	if ((n)); then
		echo "$1: the liveness check's timed part ($TIMED, each 100 ms of waiting) ran $n times in these runs, $((c / n)) instructions each, not counted above"
	else
		echo "$1: no $TIMED ran, nothing taken out"
	fi
}
clock_line "this plugin" "$PLUGIN"
if [ -n "${PEER:-}" ]; then clock_line peer "$PEER"; fi

first=${SIZES%% *}
if [ -n "${LIVE_OFF:-}" ]; then
	E_TEST=${ours[0]} E_TEST_SEND=${ours[1]} E_ISEND=${ours[2]}
	per_message "$PLUGIN" "$first" 8
	with=$((SENDER + RECEIVER))
	empties "$LIVE_OFF"
	per_message "$LIVE_OFF" "$first" 8
	echo "live counters: $((with - SENDER - RECEIVER)) instructions per $first-byte message, both sides ($with with, $((SENDER + RECEIVER)) without)"
fi
if [ -n "${RAILS:-}" ] && [ -e /sys/class/infiniband/rxe3 ]; then
	E_TEST=${ours[0]} E_TEST_SEND=${ours[1]} E_ISEND=${ours[2]}
	NCCL_GDX_FAILOVER=1 per_message "$PLUGIN" "$first" 8 -r rxe0+rxe2 -t rxe1+rxe3
	echo "two rails (rxe0+rxe2 <- rxe1+rxe3, failover on), $first B, depth 8: sender $SENDER, receiver $RECEIVER per message"
fi

# System calls per message: the difference of two runs that differ only in
# length, so start-up (hwloc reading sysfs, connecting) cancels out.
syscalls() {
	strace -f -qq -c -o "$out/st.$1" "$client" -p "$PLUGIN" -s "$first" -n "$1" >/dev/null 2>&1
}
syscalls "$ITERS"
syscalls $((3 * ITERS))
n=$((2 * ITERS))
per_call() {
	for k in "$ITERS" $((3 * ITERS)); do
		awk 'NF >= 5 && $NF != "total" && $NF != "syscall" { print $NF, $4 }' "$out/st.$k" |
			sort >"$out/calls.$k"
	done
	join "$out/calls.$ITERS" "$out/calls.$((3 * ITERS))" |
		awk -v n="$n" '$1 != "accept4" && $1 != "recvfrom" && ($3 - $2) / n >= 0.01 { printf "%s %.2f, ", $1, ($3 - $2) / n }'
}
echo "system calls per $first-byte message, both sides: $(per_call)"
