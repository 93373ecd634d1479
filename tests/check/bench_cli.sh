#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-bench's command line, without an RDMA device: --version; every bad
# input refused on standard error, once, with exit status 64 (EX_USAGE,
# gdx-doctor's code for it: no verdict shares it) and nothing on standard
# output; numbers out of their range said so; sizes (K, M, G, KB, KiB,
# fractions, up to 1024G) parsed or refused alike; good command lines
# reaching the run (exit 3 here, where the plugin path given cannot load, once
# although two processes run); a server that cannot open its device failing
# before it waits for a client; a client whose server is not there saying so
# at once and giving up after --wait.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/bench_cli.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
bench=${GDX_BENCH:-build/gdx-bench}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# bench_run WANT_STATUS ARGS...: gdx-bench, its streams in $tmp/out and $tmp/err;
# 0 when the status is WANT_STATUS, standard output is empty (but for 0) and
# standard error has exactly one "gdx-bench: " error line (a client's
# "retrying" progress lines aside).
bench_run() {
	local want=$1 rc
	shift
	timeout 60 "$bench" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "exit $rc, expected $want: $(head -c 300 "$tmp/err")"
		return 1
	fi
	if [ "$want" -ne 0 ] && [ -s "$tmp/out" ]; then
		echo "standard output is not empty: $(head -c 200 "$tmp/out")"
		return 1
	fi
	if [ "$want" -ne 0 ] && [ "$(grep -v '; retrying, ' "$tmp/err" | grep -c '^gdx-bench: ')" -ne 1 ]; then
		echo "not one error line: $(tr '\n' '|' <"$tmp/err" | head -c 400)"
		return 1
	fi
}
# refused NAME MESSAGE ARGS...: a usage error (64) naming MESSAGE.
refused() {
	local name=$1 msg=$2 why
	shift 2
	if why=$(bench_run 64 "$@") && grep -qF -- "$msg" "$tmp/err" &&
		grep -qF "try 'gdx-bench --help'" "$tmp/err"; then
		ok "$name"
	else
		not_ok "$name" "${why:-no \"$msg\" in: $(head -c 300 "$tmp/err")}"
	fi
}
# accepted NAME ARGS...: the command line is taken; the run then fails at
# loading the plugin given (exit 3, the table's input file that cannot be
# read, said once).
accepted() {
	local name=$1 why
	shift
	if why=$(bench_run 3 --plugin /nonexistent/libnccl-net-gdx.so "$@") &&
		grep -q '^gdx-bench: cannot load /nonexistent/libnccl-net-gdx.so' "$tmp/err"; then
		ok "$name"
	else
		not_ok "$name" "${why:-$(head -c 300 "$tmp/err")}"
	fi
}

version=$(make --no-print-directory -s version)
for v in --version -V; do
	if bench_run 0 "$v" && [ "$(cat "$tmp/out")" = "gdx-bench $version" ]; then
		ok "gdx-bench $v prints gdx-bench $version"
	else
		not_ok "gdx-bench $v" "$(cat "$tmp/out" "$tmp/err")"
	fi
done
if bench_run 0 --help && grep -q -- '--gid-index' "$tmp/out" && grep -q '^exit status: ' "$tmp/out"; then
	ok "gdx-bench --help on standard output, with -x and the exit statuses"
else
	not_ok "gdx-bench --help" "$(head -c 300 "$tmp/out")"
fi

refused "an unknown long option" "unknown option --bogus" --bogus
refused "a mistyped long option: the one meant" "unknown option --itres; did you mean --iters?" --itres 5
refused "a mistyped --plot: the one meant" "unknown option --plto; did you mean --plot?" --plto x.svg
refused "an unknown letter" "unknown option -Q" -Q
refused "-D is no longer the peer device (perftest's -D is a duration)" "unknown option -D" -D rxe1
refused "-g is no longer the GPU (nccl-tests' -g is a GPU count)" "unknown option -g" -g 0
refused "a missing argument" "-t needs an argument" -t
refused "an operand" 'unexpected argument "extra"' extra
refused "a size that is not one" "-s 1KX: not a size" -s 1KX
refused "a size in hex" "-s 0x100: not a size" -s 0x100
refused "a negative size" "-e -1: not a size" -e -1
refused "a fraction of a byte" "-s 1.3K is not a whole number of bytes" -s 1.3K
refused "a size beyond 1024G" "-e 2048G is more than 1024G" -e 2048G
refused "-b above -e" "-b 64M is above -e 1M" -b 64M -e 1M
refused "lat above 1G" "lat takes sizes up to 1G" -m lat -e 2G
refused "a bad mode" '--mode must be bw, rate, lat or conn, not "fast"' -m fast
refused "depth out of range" "--depth 33 is out of range 1-32" -t 33
refused "a port out of range" "--port 70000 is out of range 1-65535" -p 70000
refused "a GID index out of range" "--gid-index 300 is out of range 0-255" -x 300
refused "a count that is not a number" '--iters must be a number, not "ten"' -n ten
refused "a count past a long is out of range, not \"not a number\"" \
	"--iters 99999999999999999999 is out of range 1-2147483647" -n 99999999999999999999
refused "no iterations" "--iters 0 is out of range 1-2147483647" -n 0
refused "a negative warm-up" "--warmup -1 is out of range 0-2147483647" -w -1
refused "a factor of 1" "--factor 1 is out of range 2-2147483647" -f 1
refused "three processes" "--procs 3 is out of range 1-2" -P 3
refused "a negative GPU" "--gpu -1 is out of range 0-2147483647" --gpu -1
refused "--plot x.png (it would be SVG)" "--plot x.png: gdx-bench draws SVG only; give a name ending in .svg" \
	--plot x.png
refused "--plot with no extension" "--plot plot: gdx-bench draws SVG only" --plot plot
refused "a memory kind" '--mem must be host or cuda, not "gpu"' -M gpu
refused "--profiler with --rails" "--profiler and --rails" --profiler -r mlx5_0+mlx5_1

accepted "-e 8G, as the README's nccl-tests runs go (sent as 1G messages)" -b 4K -e 8G
accepted "1KB and 1KiB are 1K" -s 1KB
accepted "1KiB" -b 1KiB -e 1M
accepted "1.5M" -s 1.5M
accepted "-p is the side channel's port, as perftest's" -p 18600 -s 4K
accepted "--peer-dev and -x" -d mlx5_0 --peer-dev mlx5_1 -x 3
accepted "-b equal to -e" -b 1M -e 1M
accepted "--profiler" --profiler -s 64K

# A server opens the plugin and its device before it waits for a client, as
# ib_write_bw does: one that cannot fails at once (it used to wait for a
# client and fail only once one had come).
port=$((20000 + RANDOM % 20000))
start=$(date +%s)
if why=$(bench_run 3 -S -p "$port" --plugin /nonexistent/libnccl-net-gdx.so) &&
	grep -q '^gdx-bench: cannot load /nonexistent/libnccl-net-gdx.so' "$tmp/err" &&
	! grep -q 'waiting for a client' "$tmp/err"; then
	ok "-S whose plugin cannot load fails before it listens ($(($(date +%s) - start)) s)"
else
	not_ok "-S whose plugin cannot load fails before it listens" "${why:-$(cat "$tmp/err")}"
fi
# The exit statuses of gdx_exit.h's table, one meaning each: a --plugin
# that is not there, is not a library, or has no ncclNetPlugin_v7 is an
# input that cannot be read (3), not a runtime failure (1); what fails
# once the plugin runs is 1 (below: no device, no server).
echo 'not a library' >"$tmp/notalib.so"
for p in /nonexistent/libnccl-net-gdx.so "$tmp/notalib.so" libm.so.6; do
	if why=$(bench_run 3 --plugin "$p" -s 4K) && grep -q "^gdx-bench: .*$p" "$tmp/err"; then
		ok "--plugin $p: exit 3, the file named"
	else
		not_ok "--plugin $p: exit 3" "${why:-$(head -c 300 "$tmp/err")}"
	fi
done
if grep -q "has no ncclNetPlugin_v7" "$tmp/err"; then
	ok "--plugin libm.so.6: says it has no ncclNetPlugin_v7"
else
	not_ok "--plugin libm.so.6: says it has no ncclNetPlugin_v7" "$(head -c 300 "$tmp/err")"
fi
# This machine's own devices, where it has none: the plugin's init fails at
# once, with no client ever coming.
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	timeout 20 "$bench" -S -p "$port" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && ! grep -q 'waiting for a client' "$tmp/err" &&
		grep -q 'no RDMA device' "$tmp/err"; then
		ok "-S on a node without an RDMA device fails at once, no client needed"
	else
		not_ok "-S on a node without an RDMA device fails at once" "exit $rc: $(head -c 300 "$tmp/err")"
	fi
fi

# A client whose server is not there: at once a line, then the give-up.
start=$(date +%s)
if why=$(bench_run 2 -C 127.0.0.1 -p 9 --wait 2 --token 00112233445566778899aabbccddeeff) &&
	head -1 "$tmp/err" | grep -q '^gdx-bench: cannot reach 127.0.0.1 port 9 yet (Connection refused); retrying, 2 s left$' &&
	tail -1 "$tmp/err" | grep -q 'cannot reach a gdx-bench server at 127.0.0.1 port 9: Connection refused (tried for 2 s)'; then
	ok "-C with no server: says so at once, retries, gives up after --wait (exit 2, $(($(date +%s) - start)) s)"
else
	not_ok "-C with no server" "${why:-$(cat "$tmp/err")}"
fi
if [ "$(grep -c 'yet (Connection refused)' "$tmp/err")" -ge 1 ]; then
	ok "-C with no server: a progress line while it retries"
else
	not_ok "-C with no server: a progress line" "$(cat "$tmp/err")"
fi
refused "--wait must not be negative" "--wait -1 is out of range 0-2147483647" -C 127.0.0.1 --wait -1
# The server's token: the client must give it, as the server printed it.
refused "--client without --token" "--client needs --token: the one the server printed" -C 127.0.0.1
refused "--token that is not 32 hex digits" "--token: not a token (32 hex digits" -C 127.0.0.1 --token 0011
refused "--token from an empty standard input" "--token -: nothing on standard input" -C 127.0.0.1 --token -
refused "--token on the server" "--token is the client's (-C): the server makes its own" -S --token 00112233445566778899aabbccddeeff

# No device at all (this machine, CI's: no RDMA in the kernel): the run
# says so in plain words, exit 2, and shows no C of the plugin's (no call,
# no ncclResult, no file:line), as gdx-bench -v would.
if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	timeout 60 "$bench" -m bw -n 2 >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] &&
		grep -q 'the plugin did not start: this machine has no RDMA device' "$tmp/err" &&
		! grep -qE 'ncclResult|net->|\(plugin/[a-z_/]*\.c:[0-9]+\)' "$tmp/err"; then
		ok "no RDMA device: plain words, exit 2, no C in them"
	else
		not_ok "no RDMA device: plain words, exit 2, no C in them" "exit $rc: $(head -c 400 "$tmp/err")"
	fi
else
	echo "# skipped: this machine has RDMA devices; the no-device case runs where there are none"
fi

report_end tests/check/bench_cli.sh
