#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: gdx-bench in each mode, a few iterations, on rxe0/rxe1 (and
# the latency floor beside it, tests/ref/verbs_pingpong.c); its
# JSON parses and carries plausible figures. The full run is `make bench`.
set -uo pipefail
cd "$(dirname "$0")/../.."

passed=0 failed=0
report() { # name, 0 when it held, what to show when it did not
	if [ "$2" -eq 0 ]; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1: $3"
		failed=$((failed + 1))
	fi
}
check() { # name, python assertion over j, command producing JSON
	local out
	if declare -F "$3" >/dev/null; then
		out=$("${@:3}" 2>&1)
	else
		out=$(timeout 120 "${@:3}" 2>&1)
	fi
	[ -n "$out" ] &&
		python3 -c "import json,sys; j=json.loads(sys.argv[1]); assert $2, j" "$out" 2>/dev/null
	report "$1" $? "$out"
}

check "gdx-bench bw sweep 4K-64K" \
	'len(j["results"]) == 5 and all(r["Gbps"] > 0 for r in j["results"])' \
	build/gdx-bench -b 4K -e 64K -n 30 -w 3 -j
check "gdx-bench rate, 8 B, depth 32" \
	'j["mode"] == "rate" and j["results"][0]["msg_rate"] > 0' \
	build/gdx-bench -m rate -t 32 -n 200 -w 10 -j
check "gdx-bench lat, 8 B" \
	'0 < j["results"][0]["min_us"] <= j["results"][0]["median_us"] <= j["results"][0]["p99_us"]' \
	build/gdx-bench -m lat -n 100 -w 10 -j
check "gdx-bench over a fused device" \
	'j["device"] == "rxe0+rxe2" and j["results"][0]["Gbps"] > 0' \
	env NCCL_GDX_RAILS=rxe0+rxe2,rxe1+rxe3 build/gdx-bench -d rxe0+rxe2 --peer-dev rxe1+rxe3 -s 1M -n 10 -w 2 -j
check "gdx-bench bw, one thread driving both ends" \
	'j["procs"] == 1 and j["results"][0]["Gbps"] > 0 and j["bytes_host"] == 12 * 65536' \
	build/gdx-bench -P 1 -s 64K -t 4 -n 10 -w 2 -j
check "gdx-bench lat, one thread, receives posted 4 ahead" \
	'j["procs"] == 1 and j["depth"] == 4 and 0 < j["results"][0]["median_us"]' \
	build/gdx-bench -P 1 -m lat -t 4 -n 50 -w 5 -j
# The latency floor make bench prints beside gdx-bench (the plugin's QPs, no
# data path), both ways of detecting the message.
floor_json() {
	timeout 120 build/tests/ref/verbs_pingpong "$@" |
		awk '!/^#/ { printf "{\"median\": %s, \"p99\": %s, \"min\": %s}", $2, $3, $4 }'
}
check "verbs_pingpong, WRITE_WITH_IMM and receive completions" \
	'0 < j["min"] <= j["median"] <= j["p99"]' floor_json -m imm -n 200 -w 10 rxe0 rxe1
check "verbs_pingpong, RDMA WRITE polled in memory" \
	'0 < j["min"] <= j["median"] <= j["p99"]' floor_json -m write -n 200 -w 10 rxe1 rxe0

# make bench's CPU cost (scripts/cpu-cost.sh) on a short stream: the work
# per message of both sides and what an empty test and an empty isend cost,
# each a number in a plausible range, and the line on what was taken out as
# the clock's, so that a renamed wrapper (the script reads them by name from
# callgrind's profile) fails here rather than printing nonsense in make bench.
cpu_cost() {
	local out
	out=$(ITERS=20 SPINS=200 SIZES=8 DEPTHS=8 timeout 900 scripts/cpu-cost.sh 2>&1) || {
		echo "$out"
		return 1
	}
	echo "$out" | sed 's/^/# /'
	awk '/^this plugin \(/ { sub(/^[^:]*:/, ""); n = split($0, a, /[^0-9.]+/); e = 1
			for (i = 1; i <= n; i++) if (a[i] != "") { k++; e = e && a[i] > 20 && a[i] < 1000 }
			e = e && k == 3 }
		$1 == "8/8" { r = $2 > 100 && $2 < 20000 && $5 > 100 && $5 < 20000 }
		/^this plugin: (the liveness check.s timed part|no gdx_cq_check_timed ran)/ { t = 1 }
		/^system calls per/ { c = 1 }
		END { exit !(e && r && t && c) }' <<<"$out"
}
if command -v valgrind >/dev/null && command -v strace >/dev/null; then
	out=$(cpu_cost)
	report "scripts/cpu-cost.sh: the work per message of both sides, an empty test and an empty isend, as numbers" $? "$out"
	grep '^# ' <<<"$out"
else
	echo "# skip: scripts/cpu-cost.sh not run, no valgrind or strace (make test installs them)"
fi

# Two machines' way: the server waits on a TCP port of veth0's address, the
# client proves the token it printed and runs what the server was given
# (here 20 x 256 KiB, depth 4), over the other rxe device.
server_client() { # server options...
	local token=
	NCCL_GDX_SOCKET_IFNAME=veth0 timeout 120 build/gdx-bench -S --port 18600 -d rxe0 "$@" -j \
		>"$GDX_VM_TMP/server.json" 2>"$GDX_VM_TMP/server.err" &
	for _ in $(seq 1 600); do
		token=$(sed -n 's/.*this run.s token: \([0-9a-f]\{32\}\)$/\1/p' "$GDX_VM_TMP/server.err")
		[ -n "$token" ] && break
		sleep 0.1
	done
	echo "$token" | timeout 120 build/gdx-bench -C 198.18.0.1 --port 18600 -d rxe1 -s 1 -n 1 \
		--token - >"$GDX_VM_TMP/client.out" 2>&1 || true
	wait
	cat "$GDX_VM_TMP/server.json"
}
GDX_VM_TMP=$(mktemp -d)
check "gdx-bench --server / --client over TCP: the client runs the server's options" \
	'j["results"][0]["bytes"] == 262144 and j["iters"] == 20 and j["bytes_host"] == 22 * 262144' \
	server_client -s 256K -n 20 -w 2 -t 4

# --plot on a real sweep: the SVG (on the guest's tmpfs, so read back here)
# parses as XML and holds the five sizes, each a label and a point with the
# figures -j printed (tests/lib/svg_figures.py).
plot_sweep() {
	local svg=$GDX_VM_TMP/sweep.svg json=$GDX_VM_TMP/sweep.json
	timeout 120 build/gdx-bench -b 4K -e 64K -n 30 -w 3 -j --plot "$svg" >"$json" || return 1
	python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["results"]) == 5' "$json" &&
		python3 tests/lib/svg_figures.py --title "gdx-bench bw: " "$svg" "$json" &&
		echo "# plot: $(grep -o 'class="size" data-size="[0-9]*"' "$svg" | grep -o '[0-9]*' | tr '\n' ' ')in $(wc -c <"$svg") bytes"
}
out=$(plot_sweep 2>&1)
report "gdx-bench --plot: a real 4K-64K sweep's SVG parses and holds its five sizes and figures" $? "$out"
grep '^# plot: ' <<<"$out"

refused() { # name, expected exit status, expected message, command...
	local out rc
	out=$(timeout 60 "${@:4}" 2>&1)
	rc=$?
	[ "$rc" -eq "$2" ] && grep -q "$3" <<<"$out"
	report "$1" $? "exit $rc: $out"
}
refused "gdx-bench --mem cuda on a device without GPUDirect is refused by name (runtime, 2)" 2 \
	"rxe0 does not take CUDA memory" build/gdx-bench -M cuda -d rxe0 --peer-dev rxe1 -n 1
refused "gdx-bench --depth out of range (usage, 64)" 64 "depth 33 is out of range 1-32" build/gdx-bench -t 33
refused "verbs_pingpong names a device that is not there" 2 "no device rxe9" \
	build/tests/ref/verbs_pingpong rxe0 rxe9
refused "verbs_pingpong refuses a bad option" 2 "usage:" \
	build/tests/ref/verbs_pingpong -m bogus rxe0 rxe1
# Both ends here, in two processes: whichever fails first says why, once;
# the other's failure is its consequence and stays quiet.
once() { # name, message, command...
	local out rc
	out=$(timeout 60 "${@:3}" 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "$2" <<<"$out" && [ "$(grep -c '^gdx-bench: ' <<<"$out")" -eq 1 ]
	report "$1" $? "exit $rc: $out"
}
once "gdx-bench: the client's unknown device is reported once" "no device named rxe9" \
	build/gdx-bench --peer-dev rxe9 -n 1
once "gdx-bench: the server's unknown device is reported once" "no device named rxe9" \
	build/gdx-bench -d rxe9 -n 1
# A device whose port is down (its netdev's link taken down): said in plain
# words, not "no device named rxe2", and no C of the plugin's; the link is
# brought back and its port waited for before anything else runs.
port_state() { cat /sys/class/infiniband/rxe2/ports/1/state 2>/dev/null; }
ip link set veth2 down
for _ in $(seq 50); do case "$(port_state)" in *DOWN*) break ;; esac; sleep 0.1; done
out=$(timeout 60 build/gdx-bench -d rxe2 -n 1 2>&1)
rc=$?
ip link set veth2 up
for _ in $(seq 200); do case "$(port_state)" in *ACTIVE*) break ;; esac; sleep 0.1; done
[ "$rc" -eq 2 ] && grep -q 'rxe2 port 1 is DOWN' <<<"$out" && ! grep -q 'no device named' <<<"$out" &&
	! grep -qE 'ncclResult|net->|\(plugin/[a-z_/]*\.c:[0-9]+\)' <<<"$out"
report "gdx-bench: a port that is down is said to be, in plain words" $? "exit $rc: $out"
case "$(port_state)" in *ACTIVE*) ;; *) echo "# rxe2's port did not come back: $(port_state)" ;; esac
# -x as perftest's: the GID index both ends use (rxe0's RoCE v2 IPv4 one).
gid=1
for i in $(seq 0 15); do
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/"$i" 2>/dev/null)" = "RoCE v2" ] || continue
	case "$(cat /sys/class/infiniband/rxe0/ports/1/gids/"$i")" in 0000:0000:0000:0000:0000:ffff:*) gid=$i; break ;; esac
done
check "gdx-bench -x $gid: the GID index as perftest takes it" \
	'j["results"][0]["Gbps"] > 0' build/gdx-bench -x "$gid" -s 64K -n 10 -w 2 -j
# A client that reaches something that is not a gdx-bench server says so.
python3 -c 'import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 18601)); s.listen(1)
c, _ = s.accept(); c.sendall(b"HTTP/1.0 200 OK\r\n" * 4); c.close()' &
sleep 1
refused "gdx-bench --client against a server that is not gdx-bench" 2 \
	"the server is not gdx-bench" build/gdx-bench -C 127.0.0.1 --port 18601 -d rxe1 \
	--token 00000000000000000000000000000000
wait
rm -rf "$GDX_VM_TMP"
echo "# tests/vm/bench_smoke.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
