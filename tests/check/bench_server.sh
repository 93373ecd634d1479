#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-bench --server against clients that are not its own, without an RDMA
# device: a stub plugin (built here) whose one device opens, and whose
# listen fails, so that a server gets as far as its side channel and no
# further. On loopback (NCCL_GDX_SOCKET_IFNAME=lo):
#  - the server listens on the chosen interface's address alone (127.0.0.1),
#    not on every address of the machine (0.4.0 bound them all);
#  - it prints a token for the run; a client that says nothing is closed
#    after 10 s and the server goes on listening; clients with a wrong
#    token, or none (another program), are closed and said; none of them
#    reads anything but the server's challenge;
#  - a silent client connected first does not keep the real one out (0.4.0
#    blocked on it, and sent the first to connect the plugin's handles);
#  - the real client, with the token (given on its command line or on
#    standard input), proves it and gets the run's options;
#  - amid a flood of silent connections, the real client gets in every
#    time, five servers out of five (0.4.3 shed the wrong one: after its
#    first, each new connection closed the newest, and the real client was
#    told "a wrong --token" three times in five).
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/bench_server.sh: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
bench=${GDX_BENCH:-build/gdx-bench}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
export NCCL_GDX_SOCKET_IFNAME=lo
unset NCCL_SOCKET_IFNAME NCCL_SOCKET_FAMILY

# The stub: one device, "stub0"; its listen fails, which ends a server
# after its side channel (and a client too, once its server is gone).
cat >"$tmp/stub.c" <<'EOF'
#include <string.h>
#include <nccl/net.h>
static ncclResult_t init(ncclDebugLogger_t l) { (void)l; return ncclSuccess; }
static ncclResult_t devices(int *n) { *n = 1; return ncclSuccess; }
static ncclResult_t props(int d, ncclNetProperties_v7_t *p)
{
	(void)d;
	memset(p, 0, sizeof(*p));
	p->name = "stub0";
	p->ptrSupport = NCCL_PTR_HOST;
	p->maxComms = 1;
	p->maxRecvs = 1;
	return ncclSuccess;
}
static ncclResult_t listen_fails(int d, void *h, void **c) { (void)d; (void)h; (void)c; return ncclSystemError; }
const ncclNet_v7_t ncclNetPlugin_v7 = {.name = "STUB", .init = init, .devices = devices,
				       .getProperties = props, .listen = listen_fails};
EOF
if ! cc -shared -fPIC -Iinclude -o "$tmp/libstub.so" "$tmp/stub.c" 2>"$tmp/cc.err"; then
	not_ok "the stub plugin builds" "$(head -c 300 "$tmp/cc.err")"
	report_end tests/check/bench_server.sh
	exit 1
fi

# An interface list that matches nothing: the one line names the variable
# and lists what there is (lo, here), rather than asking to set it.
NCCL_GDX_SOCKET_IFNAME=nope timeout 20 "$bench" -S -p 9 --plugin "$tmp/libstub.so" >"$tmp/noif.out" 2>"$tmp/noif.err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(grep -c '^gdx-bench: ' "$tmp/noif.err")" -eq 1 ] &&
	grep -q '^gdx-bench: NCCL_GDX_SOCKET_IFNAME="nope" matches none of this host'"'"'s usable interfaces (up, with an address that is not link-local): .*\blo\b' "$tmp/noif.err" &&
	! grep -q 'set NCCL_GDX_SOCKET_IFNAME' "$tmp/noif.err"; then
	ok "-S with NCCL_GDX_SOCKET_IFNAME=nope lists the interfaces there are (exit 2)"
else
	not_ok "-S with NCCL_GDX_SOCKET_IFNAME=nope lists the interfaces there are" "exit $rc: $(head -c 300 "$tmp/noif.err")"
fi

# below the ephemeral range (32768 on): the flood's own connections never hold it
port=$((20000 + RANDOM % 10000))
# start_server NAME: a server in the background, its streams in $tmp/NAME.*;
# waits for its token line. Sets server (its pid) and token.
start_server() {
	"$bench" -S -p "$port" --plugin "$tmp/libstub.so" -n 1 -w 0 -s 4K >"$tmp/$1.out" 2>"$tmp/$1.err" &
	server=$!
	token=
	for _ in $(seq 1 100); do
		token=$(sed -n 's/.*this run.s token: \([0-9a-f]\{32\}\)$/\1/p' "$tmp/$1.err")
		[ -n "$token" ] && return 0
		sleep 0.1
	done
	return 1
}
# connects HOST: whether a TCP connection to HOST:port is taken.
connects() {
	python3 - "$1" "$port" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(2)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except OSError:
    sys.exit(1)
EOF
}
# client NAME SECONDS BEHAVIOUR: a hostile client in the background, what
# it read in $tmp/NAME.read: silent (holds the connection SECONDS),
# wrong (a proof under another token), garbage (bytes no gdx-bench sends).
client() {
	python3 - "$port" "$2" "$3" "$tmp/$1.read" <<'EOF' &
import socket, struct, sys, time
port, hold, how, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(hold + 15)
open(out + ".connected", "w").close()
got = b""
if how == "wrong":
    s.sendall(struct.pack(">II", 0x47445842, 3) + b"n" * 16 + b"t" * 8)
elif how == "garbage":
    s.sendall(b"GET / HTTP/1.0\r\n\r\n" * 2)
try:
    deadline = time.time() + hold
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
open(out, "wb").write(got)
EOF
}

if ! start_server first; then
	not_ok "the server prints a token" "$(head -c 300 "$tmp/first.err")"
	kill "$server" 2>/dev/null
	report_end tests/check/bench_server.sh
	exit 1
fi
ok "the server prints a 32-digit token for the run"
if grep -q "waiting for a client on 127.0.0.1:$port (lo)" "$tmp/first.err"; then
	ok "the server says where it listens: the chosen interface's address"
else
	not_ok "the server says where it listens" "$(head -c 300 "$tmp/first.err")"
fi
# Another address of this machine is not listened on (all of 127/8 is
# this host's, but only 127.0.0.1 is lo's address).
if connects 127.0.0.1 && ! connects 127.0.0.2; then
	ok "it listens on 127.0.0.1 alone, not on every address (127.0.0.2 is refused)"
else
	not_ok "it listens on the chosen address alone" "127.0.0.2 took the connection"
fi
# waits_for FILE [PATTERN]: until FILE is there, with a line matching
# PATTERN when one is given (10 s at most).
waits_for() {
	for _ in $(seq 1 100); do
		if [ -e "$1" ] && { [ -z "${2:-}" ] || grep -q "$2" "$1"; }; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}
# A silent client first, then one with a wrong token and one that is no
# gdx-bench, then the real client while the silent one still holds on.
client silent 14 silent
waits_for "$tmp/silent.read.connected"
client wrong 3 wrong
client garbage 3 garbage
waits_for "$tmp/first.err" "did not prove the token"
waits_for "$tmp/first.err" "not gdx-bench"
start=$SECONDS
timeout 30 "$bench" -C 127.0.0.1 -p "$port" --token "$token" --plugin "$tmp/libstub.so" \
	>"$tmp/real.out" 2>"$tmp/real.err"
real_rc=$?
wait "$server"
server_rc=$?
wait
if grep -q "the client at 127.0.0.1:[0-9]* proved the token" "$tmp/first.err" &&
	[ $((SECONDS - start)) -lt 8 ]; then
	ok "the real client is taken while a silent one holds its connection ($((SECONDS - start)) s)"
else
	not_ok "the real client is taken while a silent one holds on" \
		"client exit $real_rc, $((SECONDS - start)) s: $(head -c 400 "$tmp/first.err")"
fi
# the server went past the side channel to its plugin (the stub's listen
# fails there), and the client with it: the client ran the server's options
if [ "$server_rc" -eq 2 ] && grep -q 'the plugin could not listen for the other end' "$tmp/first.err" && [ "$real_rc" -eq 2 ] &&
	! grep -q 'token\|side channel version' "$tmp/real.err"; then
	ok "the client with the token got the run's options (both end at the stub's listen)"
else
	not_ok "the client with the token got the run's options" \
		"server $server_rc, client $real_rc: $(head -c 300 "$tmp/real.err")"
fi
for who in wrong garbage; do
	if grep -q "closed the connection from 127.0.0.1:[0-9]*: .*$([ $who = wrong ] && echo 'did not prove the token' || echo 'not gdx-bench')" "$tmp/first.err" &&
		[ "$(stat -c %s "$tmp/$who.read")" -eq 24 ]; then
		ok "a client with $([ $who = wrong ] && echo 'a wrong token' || echo 'no gdx-bench hello') is closed and said, having read the challenge alone"
	else
		not_ok "a client with a $who hello is closed" \
			"read $(stat -c %s "$tmp/$who.read" 2>/dev/null) bytes: $(head -c 400 "$tmp/first.err")"
	fi
done

# flood SECONDS: silent connections to the server from two processes, each
# connect started and never waited for, as fast as they go, for SECONDS at
# most, each process holding its newest 300; in the background (flooders:
# their pids).
flood() {
	flooders=
	for _ in 1 2; do
		python3 - "$port" "$1" <<'EOF' &
import collections, socket, struct, sys, time
port, until = int(sys.argv[1]), time.time() + float(sys.argv[2])
held = collections.deque()
while time.time() < until:
    s = socket.socket()
    # closed by a reset: no TIME_WAIT holds the port for a later test's bind
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    held.append(s)
    if len(held) > 300:
        held.popleft().close()
    time.sleep(0.0001)
EOF
		flooders+=" $!"
	done
}
got_in=0
for run in 1 2 3 4 5; do
	if ! start_server "flood$run"; then
		not_ok "a flooded server prints its token" "$(head -c 300 "$tmp/flood$run.err")"
		break
	fi
	flood 20
	sleep 0.3
	timeout 30 "$bench" -C 127.0.0.1 -p "$port" --token "$token" --plugin "$tmp/libstub.so" \
		>"$tmp/flood$run.cout" 2>"$tmp/flood$run.cerr"
	kill "$server" 2>/dev/null # one that never took its client
	wait "$server"
	# shellcheck disable=SC2086 # one pid a word
	kill $flooders 2>/dev/null
	# shellcheck disable=SC2086
	wait $flooders 2>/dev/null
	if grep -q "the client at 127.0.0.1:[0-9]* proved the token" "$tmp/flood$run.err" &&
		! grep -q 'token' "$tmp/flood$run.cerr"; then
		got_in=$((got_in + 1))
	else
		echo "# run $run: $(grep -v '^gdx-bench: closed' "$tmp/flood$run.err" | tail -n 3 | head -c 300) / $(head -c 300 "$tmp/flood$run.cerr")"
	fi
	port=$((port + 1))
done
if [ "$got_in" -eq 5 ]; then
	ok "amid a flood of silent connections the real client gets in, 5 servers of 5"
else
	not_ok "amid a flood of silent connections the real client gets in every time" "$got_in of 5"
fi
if [ "$(grep -c '^gdx-bench: closed' "$tmp/flood1.err")" -le 40 ]; then
	ok "a flood costs a line a second, not one a connection ($(grep -c '^gdx-bench: closed' "$tmp/flood1.err") lines)"
else
	not_ok "a flood costs a line a second" "$(grep -c '^gdx-bench: closed' "$tmp/flood1.err") lines"
fi

# A silent client alone: closed after 10 s, the server still listening; a
# real client then gets through, its token on standard input. Ten seconds of
# waiting: make test's, not make check's (GDX_TEST_TIER).
if [ "${GDX_TEST_TIER:-test}" = check ]; then
	echo "# a silent client's 10 s: make test only"
elif start_server second; then
	client alone 14 silent
	waits_for "$tmp/alone.read.connected"
	sleep 10.5
	if grep -q "closed the connection from 127.0.0.1:[0-9]*: no proof of the token within 10 s; still waiting" "$tmp/second.err"; then
		ok "a silent client is closed after 10 s, the server still waiting"
	else
		not_ok "a silent client is closed after 10 s" "$(head -c 400 "$tmp/second.err")"
	fi
	if [ "$(stat -c %s "$tmp/alone.read" 2>/dev/null || echo -1)" -eq 24 ]; then
		ok "the silent client read the challenge alone (no handle, no option)"
	else
		not_ok "the silent client read the challenge alone" "$(stat -c %s "$tmp/alone.read" 2>&1)"
	fi
	echo "$token" | timeout 30 "$bench" -C 127.0.0.1 -p "$port" --token - \
		--plugin "$tmp/libstub.so" >"$tmp/stdin.out" 2>"$tmp/stdin.err"
	wait "$server"
	if grep -q "proved the token" "$tmp/second.err"; then
		ok "then a client proves the token given on standard input"
	else
		not_ok "then a client proves the token given on standard input" "$(head -c 400 "$tmp/second.err")"
	fi
	wait
else
	not_ok "a second server prints its token" "$(head -c 300 "$tmp/second.err")"
fi
kill "$server" 2>/dev/null

report_end tests/check/bench_server.sh
