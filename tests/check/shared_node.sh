#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The attacks on a shared node, as two real local users: an attacker and a
# victim made with useradd for this run (removed at its end), the commands
# run as each with setpriv, in a shared sticky directory as /tmp is, and
# root as the victim where root is (check --sysfs-root, top, hang):
#  - FIFOs planted where the victim's tools read (topo --xml, log, fleet,
#    hang --merge, gdx-bench --plot-from): refused at once, never waited on;
#  - a saved tree whose links lead to a file only root may read: root's
#    check --sysfs-root prints nothing of it;
#  - gdx-bench --plot onto a FIFO, a file anyone may write and a link to the
#    victim's own file, all the attacker's: never opened nor written, the
#    victim's file unchanged (the rename onto another user's name in a
#    sticky directory fails, exit 70);
#  - a live directory squatted under the victim's name: root's top names it
#    and its owner;
#  - a forged hang report that claims a process's connection: a conflict,
#    the forger no root cause;
#  - a silent client of the attacker's on the victim's gdx-bench -S, and one
#    with a wrong token: the victim's own client gets through, the attacker
#    reads the challenge alone;
#  - 200 full live files and 1,100 live files of the attacker, root's top
#    and hang (tests/unit/live_scale.c, run with the two users' uids).
# Needs root (useradd, setpriv): run as anyone else (make check as a user)
# it says it did not run and counts nothing; make test runs it as root.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/shared_node.sh: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=$(realpath "${GDX_DOCTOR:-build/gdx-doctor}")
bench=$(realpath "${GDX_BENCH:-build/gdx-bench}")
scale=$PWD/build/tests/unit/live_scale
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "# skipped: this test makes two users (useradd) and runs commands as each (setpriv): run it as root (make test does)"
	report_end tests/check/shared_node.sh
	exit 0
fi
for t in useradd userdel setpriv /usr/bin/python3; do
	if ! command -v "$t" >/dev/null; then
		not_ok "$t is installed" "the test needs it"
		report_end tests/check/shared_node.sh
		exit 1
	fi
done

attacker=gdxatk$$
victim=gdxvic$$
cleanup() {
	pkill -u "$attacker" 2>/dev/null
	pkill -u "$victim" 2>/dev/null
	userdel "$attacker" 2>/dev/null
	userdel "$victim" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! useradd -M -N -s /usr/sbin/nologin "$attacker" || ! useradd -M -N -s /usr/sbin/nologin "$victim"; then
	not_ok "two users are made" "useradd failed"
	report_end tests/check/shared_node.sh
	exit 1
fi
auid=$(id -u "$attacker")
vuid=$(id -u "$victim")
as_attacker=(setpriv --reuid="$attacker" --regid="$(id -g "$attacker")" --clear-groups)
as_victim=(setpriv --reuid="$victim" --regid="$(id -g "$victim")" --clear-groups)
# the system's python for the users (root's own may be under /root)
py=/usr/bin/python3
ok "two users: $attacker (uid $auid), the attacker; $victim (uid $vuid), the victim"

# The shared directory, as /tmp is; the test's own files readable by both.
chmod 755 "$tmp"
shared=$tmp/shared
mkdir -m 1777 "$shared"

# quick NAME STATUS NEEDLE COMMAND...: COMMAND ends within 10 s with STATUS
# and says NEEDLE.
quick() {
	local name=$1 want=$2 needle=$3 out rc
	shift 3
	out=$(timeout 10 "$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "$name" "still waiting after 10 s"
	elif [ "$rc" -eq "$want" ] && grep -qF -- "$needle" <<<"$out"; then
		ok "$name"
	else
		not_ok "$name" "exit $rc, want $want and '$needle': $(head -c 300 <<<"$out")"
	fi
}

# 1. FIFOs where the victim's tools read.
for f in topo.xml job.log report.json run.json; do
	"${as_attacker[@]}" mkfifo -m 666 "$shared/$f"
done
quick "victim's topo --xml on the attacker's FIFO: refused at once" 3 "is a FIFO, not a file" \
	"${as_victim[@]}" "$doctor" topo --xml "$shared/topo.xml"
quick "victim's log on the attacker's FIFO" 3 "is a FIFO, not a file" "${as_victim[@]}" "$doctor" log "$shared/job.log"
quick "victim's fleet on the attacker's FIFO" 3 "is a FIFO, not a file" "${as_victim[@]}" "$doctor" fleet "$shared/report.json"
quick "victim's hang --merge on the attacker's FIFO" 3 "is a FIFO, not a file" \
	"${as_victim[@]}" "$doctor" hang --merge "$shared/report.json"
quick "victim's gdx-bench --plot-from on the attacker's FIFO" 3 "is a FIFO, not a file" \
	"${as_victim[@]}" "$bench" --plot-from "$shared/run.json" --plot "$shared/v.svg"

# 2. A saved tree whose links lead to a file only root may read.
secret=$tmp/root-only
echo "ROOT-ONLY-FIRST-LINE-$$" >"$secret"
chmod 600 "$secret"
"${as_attacker[@]}" cp -r tests/lib/fixtures/sysfs-gdr/healthy "$shared/tree"
port=$shared/tree/class/infiniband/mlx5_0/ports/1
for f in state link_layer rate; do
	"${as_attacker[@]}" rm "$port/$f"
	"${as_attacker[@]}" ln -s "$secret" "$port/$f"
done
out=$(timeout 10 "$doctor" check --sysfs-root "$shared/tree" 2>&1)
rc=$?
if [ "$rc" -ne 124 ] && ! grep -q ROOT-ONLY <<<"$out" && grep -q '^  mlx5_0 ' <<<"$out"; then
	ok "root's check --sysfs-root on the attacker's tree: nothing of the root-only file (exit $rc)"
else
	not_ok "root's check --sysfs-root on the attacker's tree" "exit $rc: $(grep -m2 'ROOT-ONLY\|mlx5_0' <<<"$out")"
fi

# 3. gdx-bench --plot onto the attacker's planted names.
cat >"$tmp/figures.json" <<'EOF'
{"mode": "bw", "label": "run", "results": [{"bytes": 4096, "Gbps": 10.0}, {"bytes": 65536, "Gbps": 40.0}]}
EOF
chmod 644 "$tmp/figures.json"
echo "the victim's own file" | "${as_victim[@]}" tee "$shared/victim-notes" >/dev/null
"${as_attacker[@]}" mkfifo -m 666 "$shared/plot-fifo.svg"
"${as_attacker[@]}" sh -c "echo planted >'$shared/plot-666.svg' && chmod 666 '$shared/plot-666.svg'"
"${as_attacker[@]}" ln -s "$shared/victim-notes" "$shared/plot-link.svg"
for p in fifo 666 link; do
	quick "victim's --plot onto the attacker's $p: refused (a sticky directory keeps the name the attacker's), never opened" \
		70 "cannot put it in place: Operation not permitted" \
		"${as_victim[@]}" "$bench" --plot-from "$tmp/figures.json" --plot "$shared/plot-$p.svg"
done
if [ "$(cat "$shared/victim-notes")" = "the victim's own file" ] &&
	[ "$(cat "$shared/plot-666.svg")" = planted ] && [ -p "$shared/plot-fifo.svg" ]; then
	ok "the victim's file unchanged, the attacker's file and FIFO never written"
else
	not_ok "the victim's file unchanged, the attacker's never written" \
		"victim's: $(head -c 60 "$shared/victim-notes"); attacker's: $(head -c 60 "$shared/plot-666.svg")"
fi
quick "the victim's --plot to a name of its own still works" 0 "" \
	"${as_victim[@]}" "$bench" --plot-from "$tmp/figures.json" --plot "$shared/mine.svg"

# 4. A live directory squatted under the victim's name.
live=$tmp/live
mkdir -m 1777 "$live"
"${as_attacker[@]}" mkdir -m 777 "$live/nccl-net-gdx-$vuid"
quick "root's top names the squatted directory and its owner" 0 \
	"$live/nccl-net-gdx-$vuid is not uid $vuid's alone (owner uid $auid, mode 0777)" \
	"$doctor" top --once --interval 0.05 --dir "$live"

# 5. A forged hang report claiming a process's connection.
"${as_attacker[@]}" sh -c "cat >'$shared/evil.json'" <<'EOF'
{"command": "hang", "hostname": "evil", "format": 2, "processes": [{"pid": 666, "host": "evil", "stopped": true, "comms": [{"comm": "receive", "address": "10.0.0.3:5000", "peer": "10.0.0.2:40002", "wait": "idle", "stuck": false}]}]}
EOF
out=$("${as_victim[@]}" "$doctor" hang --merge "$shared/evil.json" tests/lib/fixtures/hang/chain/*.json 2>&1)
if grep -qF 'claimed by evil:666(?) and nodeC:4711(2)' <<<"$out" && ! grep -q '^  [0-9]*\. evil' <<<"$out"; then
	ok "victim's hang --merge: the attacker's forged claim a conflict, the forger no root cause"
else
	not_ok "victim's hang --merge with a forged report" "$(head -c 500 <<<"$out")"
fi

# 6. The victim's gdx-bench -S, the attacker's clients first.
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
	return ncclSuccess;
}
static ncclResult_t listen_fails(int d, void *h, void **c) { (void)d; (void)h; (void)c; return ncclSystemError; }
const ncclNet_v7_t ncclNetPlugin_v7 = {.name = "STUB", .init = init, .devices = devices,
				       .getProperties = props, .listen = listen_fails};
EOF
cc -shared -fPIC -Iinclude -o "$tmp/libstub.so" "$tmp/stub.c"
chmod 755 "$tmp/libstub.so"
bport=$((20000 + RANDOM % 20000))
: >"$tmp/server.err"
NCCL_GDX_SOCKET_IFNAME=lo "${as_victim[@]}" "$bench" -S -p "$bport" --plugin "$tmp/libstub.so" -n 1 -w 0 \
	>/dev/null 2>"$tmp/server.err" &
server=$!
token=
for _ in $(seq 1 100); do
	token=$(sed -n 's/.*this run.s token: \([0-9a-f]\{32\}\)$/\1/p' "$tmp/server.err")
	[ -n "$token" ] && break
	sleep 0.1
done
attack_client() { # HOW: silent or wrong; what it read, in $tmp/attacker-HOW.read
	"${as_attacker[@]}" "$py" - "$bport" "$1" "$shared/attacker-$1.connected" <<'EOF' >"$tmp/attacker-$1.read" &
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(30)
open(sys.argv[3], "w").close()
if sys.argv[2] == "wrong":
    s.sendall(struct.pack(">II", 0x47445842, 3) + b"n" * 16 + b"t" * 8)
got = b""
try:
    while True:
        c = s.recv(4096)
        if not c:
            break
        got += c
except OSError:
    pass
sys.stdout.write("%d\n" % len(got))
EOF
}
attack_client silent
attack_client wrong
for _ in $(seq 1 100); do
	[ -e "$shared/attacker-silent.connected" ] && grep -q "did not prove the token" "$tmp/server.err" && break
	sleep 0.1
done
echo "$token" | NCCL_GDX_SOCKET_IFNAME=lo timeout 30 "${as_victim[@]}" "$bench" -C 127.0.0.1 -p "$bport" --token - --plugin "$tmp/libstub.so" >/dev/null 2>"$tmp/client.err"
wait "$server"
wait
if grep -q "proved the token" "$tmp/server.err" && grep -q "did not prove the token" "$tmp/server.err" &&
	[ "$(cat "$tmp/attacker-silent.read")" = 24 ] && [ "$(cat "$tmp/attacker-wrong.read")" = 24 ]; then
	ok "victim's gdx-bench -S: its own client gets through the attacker's silent one; the attacker's clients read the challenge alone"
else
	not_ok "victim's gdx-bench -S against the attacker's clients" \
		"read $(cat "$tmp/attacker-silent.read" "$tmp/attacker-wrong.read" | tr '\n' ' '): $(head -c 400 "$tmp/server.err")"
fi

# 7. The live readers against the attacker's files: root's top and hang.
if [ -x "$scale" ]; then
	out=$(GDX_TEST_ATTACKER_UID=$auid GDX_TEST_VICTIM_UID=$vuid "$scale" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep '^  ' | sed 's/^/# /'
	if [ "$rc" -eq 0 ] && grep -q '3 passed, 0 failed' <<<"$out"; then
		ok "root's top and hang over the attacker's 200 full and 1,100 live files show the victim's processes (tests/unit/live_scale.c)"
	else
		not_ok "the live readers against the attacker's files" "$(tail -n 5 <<<"$out")"
	fi
else
	not_ok "build/tests/unit/live_scale is built" "make first"
fi

report_end tests/check/shared_node.sh
