#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-bench's two ends, a --server and a --client, moving real bytes without
# an RDMA device: through a stand-in plugin over TCP on loopback
# (tests/lib/fixtures/bench/tcp_net.c, built here), NCCL_GDX_SOCKET_IFNAME=lo.
#  - both ends print the table, the client the server's figures: the same
#    sizes and the same numbers, in bw and in lat, as a table and as -j's
#    JSON (0.4.5's client printed nothing and exited 0);
#  - each end's table names the other end's device and host, and a local
#    run's latency plot the client's device (0.4.5: "peer");
#  - the README's two-node recipe, taken from README.md and run as written
#    (its devices and node named for this machine, a short sweep), works:
#    the token the server prints, pasted into the client's --token -, lets
#    it in, and both print the figures (0.4.5's recipe had no --token and
#    failed: "--client needs --token", exit 64).
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/bench_ends.sh: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
bench=${GDX_BENCH:-build/gdx-bench}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
export NCCL_GDX_SOCKET_IFNAME=lo
unset NCCL_SOCKET_IFNAME NCCL_SOCKET_FAMILY

if ! cc -shared -fPIC -Iinclude -o "$tmp/libtcp.so" tests/lib/fixtures/bench/tcp_net.c 2>"$tmp/cc.err"; then
	not_ok "the TCP stand-in plugin builds" "$(head -c 300 "$tmp/cc.err")"
	report_end tests/check/bench_ends.sh
	exit 1
fi
plugin=$tmp/libtcp.so
port=$((20000 + RANDOM % 10000))

# server NAME ARGS...: a server in the background (its streams in
# $tmp/NAME.server.*), once it printed its token: sets server and token.
server() {
	local name=$1
	shift
	"$bench" -S -p "$port" "$@" >"$tmp/$name.server.out" 2>"$tmp/$name.server.err" &
	server=$!
	token=
	for _ in $(seq 1 100); do
		token=$(sed -n 's/.*this run.s token: \([0-9a-f]\{32\}\)$/\1/p' "$tmp/$name.server.err" 2>/dev/null)
		[ -n "$token" ] && return 0
		sleep 0.1
	done
	return 1
}
# rows FILE: the table's rows, bytes and figures (lines not starting with #).
rows() { grep -v '^#' "$1"; }

# ends NAME ARGS...: a server with ARGS, then a client with the token on
# standard input; both must exit 0. Sets client_rc and server_rc.
ends() {
	local name=$1
	shift
	if ! server "$name" --plugin "$plugin" -d tcp0 "$@"; then
		not_ok "$name: the server prints a token" "$(head -c 300 "$tmp/$name.server.err")"
		kill "$server" 2>/dev/null
		return 1
	fi
	echo "$token" | timeout 60 "$bench" -C 127.0.0.1 -p "$port" --plugin "$plugin" -d tcp1 \
		--token - $(printf '%s\n' "$@" | grep -x -- -j) \
		>"$tmp/$name.client.out" 2>"$tmp/$name.client.err"
	client_rc=$?
	wait "$server"
	server_rc=$?
	port=$((port + 1))
}

# A bw sweep: the client's table is the server's, row for row.
ends bw -b 4K -e 64K -n 20 -w 2
if [ "$client_rc" -eq 0 ] && [ "$server_rc" -eq 0 ] && [ "$(rows "$tmp/bw.client.out" | wc -l)" -eq 5 ] &&
	[ "$(rows "$tmp/bw.client.out")" = "$(rows "$tmp/bw.server.out")" ]; then
	ok "bw: the client prints the server's table, the same 5 rows"
else
	not_ok "bw: the client prints the server's table" \
		"client $client_rc, server $server_rc; client: $(head -c 400 "$tmp/bw.client.out" "$tmp/bw.client.err")"
fi
if grep -q '^# gdx-bench: bw tcp1 -> tcp0@[^ ]* (the server.s figures' "$tmp/bw.client.out" &&
	grep -q '^# gdx-bench: bw tcp1@[^ ]* -> tcp0 (client on another machine' "$tmp/bw.server.out"; then
	ok "bw: each end's header names the other end's device and host"
else
	not_ok "bw: each end's header names the other's device" "$(head -n 2 "$tmp/bw.client.out" "$tmp/bw.server.out")"
fi
if grep -q '^# host [^ ]*, gdx-bench [^ ]*, line rate 10 Gb/s$' "$tmp/bw.client.out"; then
	ok "bw: the client's table says the host, the version and the line rate"
else
	not_ok "bw: the client's table says the host, the version and the line rate" "$(head -n 3 "$tmp/bw.client.out")"
fi

# lat as JSON: the client's object holds the server's figures.
ends lat -m lat -b 8 -e 64 -n 50 -w 5 -j
if [ "$client_rc" -eq 0 ] && [ "$server_rc" -eq 0 ] &&
	python3 - "$tmp/lat.client.out" "$tmp/lat.server.out" 2>"$tmp/py.err" <<'EOF'; then
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:3])
assert c["end"] == "client" and s["end"] == "server", (c["end"], s["end"])
assert [r["bytes"] for r in c["results"]] == [8, 16, 32, 64], c["results"]
assert c["results"] == s["results"], (c["results"], s["results"])
assert all(0 < r["min_us"] <= r["median_us"] <= r["p99_us"] for r in c["results"])
assert c["device"] == "tcp1" and c["peer"] == "tcp0" and s["peer"] == "tcp1", (c, s)
EOF
	ok "lat -j: the client's JSON holds the server's medians and p99s, size for size"
else
	not_ok "lat -j: the client's JSON holds the server's figures" \
		"client $client_rc, server $server_rc: $(tail -n 1 "$tmp/py.err") $(head -c 300 "$tmp/lat.client.out" "$tmp/lat.client.err")"
fi

# Both ends here, in two processes: the latency plot's title names the
# client's device, not "peer" (0.4.5's did), from a real run.
if timeout 60 "$bench" --plugin "$plugin" -m lat -b 8 -e 32 -n 20 -w 2 -j --plot "$tmp/local.svg" \
	>"$tmp/local.json" 2>"$tmp/local.err" &&
	python3 tests/lib/svg_figures.py --title "gdx-bench lat: tcp0 <-> tcp1, host memory" \
		"$tmp/local.svg" "$tmp/local.json" >"$tmp/local.why"; then
	ok "a local lat run's plot: titled tcp0 <-> tcp1, its medians and p99s drawn"
else
	not_ok "a local lat run's plot is titled tcp0 <-> tcp1" "$(cat "$tmp/local.why" "$tmp/local.err" | head -c 300)"
fi

# The README's two-node recipe: its code block after "Between two nodes",
# the line "# on node1" the server's, "# on node2" the client's.
recipe=$(awk '/^Between two nodes/ { f = 1 } f && /^```sh/ { b = 1; next } b && /^```/ { exit } b' README.md)
srv=$(sed -n 's/ *# on node1.*//p' <<<"$recipe")
cli=$(sed -n 's/ *# on node2.*//p' <<<"$recipe")
if [ -z "$srv" ] || [ -z "$cli" ]; then
	not_ok "README.md has a two-node gdx-bench recipe" "$recipe"
else
	# here: node1 is this machine, mlx5_0 the stand-in's devices, the
	# sweep short (a later -e, -n, -w win), the plugin the stand-in
	# shellcheck disable=SC2206 # the recipe's words, as a shell splits them
	srv_args=(${srv//mlx5_0/tcp0} -e 128K -n 5 -w 1 --plugin "$plugin" -p "$port")
	# shellcheck disable=SC2206
	cli_args=(${cli//mlx5_0/tcp1})
	cli_args=("${cli_args[@]//node1/127.0.0.1}" --plugin "$plugin" -p "$port")
	"${srv_args[0]/gdx-bench/$bench}" "${srv_args[@]:1}" >"$tmp/readme.server.out" 2>"$tmp/readme.server.err" &
	server=$!
	token=
	for _ in $(seq 1 100); do
		token=$(sed -n 's/.*this run.s token: \([0-9a-f]\{32\}\)$/\1/p' "$tmp/readme.server.err" 2>/dev/null)
		[ -n "$token" ] && break
		sleep 0.1
	done
	# the token pasted where the client waits for it
	echo "$token" | timeout 60 "${cli_args[0]/gdx-bench/$bench}" "${cli_args[@]:1}" \
		>"$tmp/readme.client.out" 2>"$tmp/readme.client.err"
	rc=$?
	wait "$server"
	src=$?
	if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ] && [ "$(rows "$tmp/readme.client.out" | wc -l)" -eq 2 ] &&
		[ "$(rows "$tmp/readme.client.out")" = "$(rows "$tmp/readme.server.out")" ]; then
		ok "the README's two-node recipe, as written, runs: both ends print the figures"
	else
		not_ok "the README's two-node recipe runs as written" \
			"$cli / $srv: client $rc, server $src: $(head -c 300 "$tmp/readme.client.err" "$tmp/readme.server.err")"
	fi
fi

report_end tests/check/bench_ends.sh
