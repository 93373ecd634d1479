#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor log over NCCL INFO logs written in the plugin's own line format:
# per-NIC byte counts summed, verdicts picked up, a NIC that advertises
# GPUDirect RDMA yet moved bytes through host memory flagged with exit 1, and
# logs without the plugin (7) or without its byte counts (8) told apart; rails
# taken out of fused connections counted per NIC (exit 1); hostile logs (ESC,
# BEL and injected lines in names, counts out of range, NUL and non-UTF-8
# bytes, a 50 MB line, 300,000 NICs, random bytes) printed escaped, in
# bounded memory.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
logs=tests/lib/fixtures/nccl-logs
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
exits "log: staged bytes on a direct NIC exit 1" 1 "NCCL staged them" "$doctor" log "$logs/staged-on-direct.log"
exits "log: sums the comms of a NIC" 1 "mlx5_0            2        12884901888         1073741824" "$doctor" log "$logs/staged-on-direct.log"
exits "log: keeps the staged verdict and its fix" 1 "fix: modprobe nvidia_peermem" "$doctor" log "$logs/staged-on-direct.log"
exits "log: healthy log exits 0" 0 "GPUDirect RDMA via nvidia_peermem" "$doctor" log "$logs/healthy.log"
exits "log: standard input" 0 "1000" sh -c "$doctor log - <$logs/healthy.log"
: >"$tmp/empty.log"
exits "log: a log without the plugin exits 7" 7 "was it loaded" "$doctor" log "$tmp/empty.log"
# A device, a FIFO or a directory is refused by its type, never read: a
# pipe comes as standard input (-).
exits "log: a device is no log (exit 3)" 3 "/dev/null is a character device, not a file" "$doctor" log /dev/null
# NCCL's default subsystems with a plugin that logged its data lines at NET
# only (0.1.0): the init lines are there, the byte counts are not.
exits "log: init lines only exit 8, saying how to rerun" 8 "no plugin data lines in this log: rerun with NCCL_DEBUG=INFO" "$doctor" log "$logs/init-only.log"
# The plugin's init failed (no RDMA device) and NCCL fell back to its own IB:
# the plugin's own lines say so, and NCCL's "Using network IB"; a problem
# found (2, broken), not a log that cannot tell (8).
exits "log: the plugin did not start, NCCL used IB: exit 2, said on one line" 2 \
	"the plugin did not start: no RDMA device found; NCCL used IB" "$doctor" log "$logs/no-device-ib.log"
exits "log: the plugin's own WARN, whole, and where to look" 2 \
	"the plugin said: no RDMA device found (ibv_get_device_list: empty); is a verbs provider installed and the kernel driver loaded?" \
	"$doctor" log "$logs/no-device-ib.log"
prints "log: nothing of it on standard error" "" sh -c "$doctor log $logs/no-device-ib.log 2>&1 >/dev/null"
# NCCL's default level (NCCL_DEBUG=WARN): the plugin's WARNs are all there
# is of it, and they say why it did not start: that, not "rerun with INFO".
exits "log: a log of the plugin's WARNs alone says them, exit 2" 2 \
	"node1:2001 and others, 2 lines: NCCL_IB_HCA=\"mlx5_9\" keeps none of the 2 port(s)" \
	"$doctor" log "$logs/warn-only.log"
exits "log: and that one at init is why it did not start" 2 \
	"one said at init is why the plugin did not start in that process" "$doctor" log "$logs/warn-only.log"
grep -v 'NCCL INFO NET/GDX plugin: plugin disabled' "$logs/no-device-ib.log" | grep -v 'NCCL INFO' >"$tmp/no-device-warn.log"
exits "log: the no-device log at WARN level names its cause" 2 \
	"no RDMA device found (ibv_get_device_list: empty)" "$doctor" log "$tmp/no-device-warn.log"
sed 's/no RDMA device found (ibv/no \x1b[2JRDMA device found (ibv/' "$tmp/no-device-warn.log" >"$tmp/warn-hostile.log"
"$doctor" log "$tmp/warn-hostile.log" >"$tmp/out" 2>&1
printable "log: a WARN-only log's lines escaped" "$tmp/out"
# A disabled plugin with NCCL_NET=GDX: no network used, the job failed.
grep -v 'Using network\|Init COMPLETE\|Channel' "$logs/no-device-ib.log" >"$tmp/no-net.log"
exits "log: the plugin did not start and no network was used" 2 \
	"the plugin did not start: no RDMA device found; NCCL used no network (no \"Using network\" line: the communicators' init failed?)" \
	"$doctor" log "$tmp/no-net.log"
# One process whose plugin did not start among others whose did: their
# table, then the one that did not, exit 2.
cat "$logs/healthy.log" "$logs/no-device-ib.log" >"$tmp/some-disabled.log"
exits "log: a plugin that did not start in one process of several: the table, then it, exit 2" 2 \
	"the plugin did not start: no RDMA device found; NCCL used IB" "$doctor" log "$tmp/some-disabled.log"
exits "log: and the table of the processes where it did" 2 "mlx5_0            1               1000                  0  GPUDirect RDMA via nvidia_peermem" "$doctor" log "$tmp/some-disabled.log"
# The cause line is someone's log: escaped.
sed 's/no RDMA device found (ibv/no \x1b[2JRDMA device found (ibv/; s/Using network IB/Using network I\x1b]0;B/' \
	"$logs/no-device-ib.log" >"$tmp/no-device-hostile.log"
"$doctor" log "$tmp/no-device-hostile.log" >"$tmp/out" 2>&1
printable "log: the disabled plugin's cause and the network escaped" "$tmp/out"
exits "log: connections without byte counts exit 8" 8 "(2 connection line(s) here, no byte counts)" "$doctor" log "$logs/connected-not-closed.log"
exits "log: this version's lines at NCCL's default subsystems are data" 0 "rxe0              1                  0            7864320" "$doctor" log "$logs/default-subsys.log"
# After 0.3.2: "NET/GDX plugin: " lines; at NCCL's default subsystems the INIT
# line (a word per device) and a summary per NIC port at finalize.
exits "log: summaries at the default subsystems are the data, exit 1 for staged bytes on a direct NIC" 1 \
	"mlx5_0            2        12884901888         1073741824  GPUDirect RDMA (INIT line; NET says how)" \
	"$doctor" log "$logs/summary-default-subsys.log"
exits "log: keeps the staged verdict that stays at INIT, with its fix" 1 \
	"mlx5_1            1                  0         2147483648  staged through host memory: nvidia_peermem not loaded" \
	"$doctor" log "$logs/summary-default-subsys.log"
# With NET the comms' close lines are there too: a process's summary
# replaces its comms' counts (each byte once, a fused device's split over
# its NICs), a process without one (it died) keeps them.
exits "log: with NET counts each byte once" 0 "rxe1              2                  0               2000" \
	"$doctor" log "$logs/summary-net-subsys.log"
exits "log: with NET, a process without a summary keeps its comms' counts" 0 \
	"rxe0              1                  0               3000  staged through host memory: no NVIDIA GPU" \
	"$doctor" log "$logs/summary-net-subsys.log"
exits "log: with NET, a fused device's comm is its NICs' summaries" 0 \
	"rxe3              1                  0               1000  staged through host memory (INIT line; NET says why)" \
	"$doctor" log "$logs/summary-net-subsys.log"
exits "log: with NET, no row for the fused device itself" 0 "" \
	sh -c "! $doctor log $logs/summary-net-subsys.log | grep -q 'rxe1+rxe3'"
# NCCL's own lines under the network's name were never the plugin's.
printf 'h:1:1 [0] NCCL INFO NET/GDX : GPU Direct RDMA Enabled for HCA 0 %s\n' "'mlx5_0'" >"$tmp/nccl-only.log"
exits "log: NCCL's own NET/GDX lines are not the plugin's (exit 7)" 7 "was it loaded" "$doctor" log "$tmp/nccl-only.log"
exits "log: a rail taken out twice and back twice is counted, exit 1" 1 "rxe1              2      2      4.9  completion failed: local QP operation error" "$doctor" log "$logs/rail-flap.log"
exits "log: a rail's downs come with what to check" 1 "a rail that goes down again and again is a cable" "$doctor" log "$logs/rail-flap.log"
exits "log: no rail section without rail lines" 0 "" sh -c "! $doctor log $logs/healthy.log | grep -q 'rails taken out'"
exits "log: a missing file exits 3" 3 "No such file" "$doctor" log "$logs/nonexistent.log"
exits "log: no file is a usage error (64)" 64 "give log files or directories" "$doctor" log
exits "log: an unknown option is a usage error (64)" 64 "unknown option --bogus" "$doctor" log --bogus x.log

# Hostile logs: a log is what other processes wrote. ESC, BEL, a C1 CSI, a
# right-to-left override and an injected line in NIC names, verdicts and
# causes come out escaped; counts that do not fit 64 bits are not counts,
# a line whose sum would not either is refused (and said), never saturated; NUL bytes and bytes that are not UTF-8 change nothing; a
# 50 MB line is skipped whole; the memory taken is the same whatever the
# log's size.
{
	printf 'h:1:1 [0] NCCL INFO NET/GDX : mlx5\e[31m_0: GPUDirect RDMA via nvidia_peermem\a\e]0;title\a\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX : mlx5\e[31m_0: send comm with 10.0.0.2:4000 closed: 18446744073709551615 bytes GPU-direct, 7 bytes through host memory\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX : mlx5\e[31m_0: send comm with 10.0.0.2:4000 closed: 5 bytes GPU-direct, 0 bytes through host memory\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX : mlx5\e[31m_0: send comm with 10.0.0.2:4000 closed: 99999999999999999999999 bytes GPU-direct, 1 bytes through host memory\n'
	printf 'h:1:1 [0] NCCL WARN NET/GDX : rxe1+rxe3: rail 0 (rxe\xc2\x9b1 port 1, peer x) taken out of the connection with 10.0.0.2:4000 at 11:13:18.209: down\xe2\x80\xae\r\e[2J# TYPE gdx_up gauge; 1 rail(s) carry its traffic\n'
	printf 'h:1:1 [0] NCCL WARN NET/GDX : rxe1+rxe3: rail 99999999999999999999 (rxe9 port 1, peer x) taken out of the connection with 10.0.0.2:4000 at 11:13:18.209: x; y\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX : rxe1+rxe3: rail 0 (rxe\xc2\x9b1) back in the connection with 10.0.0.2:4000 at 11:13:20.333 after nan s down (1 attempt(s))\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX : rxe1+rxe3: rail 0 (rxe\xc2\x9b1) back in the connection with 10.0.0.2:4000 at 11:13:20.333 after 2.5 s down (1 attempt(s))\n'
	printf '\xff\xfe\x00 NET/GDX : a\x00b: closed: 1 bytes GPU-direct, 2 bytes\n'
} >"$tmp/hostile.log"
"$doctor" log "$tmp/hostile.log" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then
	ok "log: a hostile log exits 1 (bytes staged on a direct NIC, a rail taken out)"
else
	not_ok "log: a hostile log exits 1" "exit $rc: $(head -c 600 "$tmp/out")"
fi
printable "log: no raw control byte in the report" "$tmp/out"
# holds NAME FILE TEXT: FILE has a line holding TEXT (a fixed string).
holds() {
	if grep -qF -- "$3" "$2"; then
		ok "$1"
	else
		not_ok "$1" "no line holds '$3' in: $(head -c 900 "$2")"
	fi
}
holds "log: the NIC's name and verdict escaped, the sum past 2^64-1 refused, the count past 2^64-1 not counted" "$tmp/out" \
	'mlx5\x1b[31m_0      1 18446744073709551615                  7  GPUDirect RDMA via nvidia_peermem\x07\x1b]0;title\x07'
holds "log: the refused line is said" "$tmp/out" "1 line(s) of byte counts refused: their sums would pass 2^64-1 bytes"
holds "log: the rail's NIC and cause escaped, nan seconds not added" "$tmp/out" \
	'rxe\xc2\x9b1      1      2      2.5  down\xe2\x80\xae\x0d\x1b[2J# TYPE gdx_up gauge'
prints "log: the rail past 2^64-1 not counted, the line after a NUL not either" 0 grep -c '^rxe9 \|^a  *[0-9]' "$tmp/out"
printf 'h:1:1 [0] NCCL INFO NET/GDX : mlx5_0: send comm with a closed: 18446744073709551616 bytes GPU-direct, 0 bytes through host memory\n' >"$tmp/range.log"
exits "log: a count past 2^64-1 is no count (exit 8)" 8 "no plugin data lines" "$doctor" log "$tmp/range.log"
printf 'h:1:1 [0] NCCL INFO NET/GDX plugin: mlx5_0 port 1: 18446744073709551616 comm(s) closed, 0 bytes GPU-direct, 0 bytes through host memory, 0 rail failover(s)\n' >"$tmp/range.log"
exits "log: a summary's count past 2^64-1 is no summary (exit 8)" 8 "no plugin data lines" "$doctor" log "$tmp/range.log"
# The INIT line and summary with hostile names: escaped, no row past them
{
	printf 'h:1:1 [0] NCCL INFO NET/GDX plugin: libnccl-net-gdx 9, x; using [0]m\e[2Jx:1+\a:2/IB/direct [1]:1/IB/staged [2]y:1/IB/bogus [9]; OOB\n'
	printf 'h:1:1 [0] NCCL INFO NET/GDX plugin: m\e[2Jx port 1: 1 comm(s) closed, 0 bytes GPU-direct, 5 bytes through host memory, 0 rail failover(s)\n'
} >"$tmp/hostile04.log"
"$doctor" log "$tmp/hostile04.log" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then
	ok "log: a hostile log of this version exits 1 (bytes staged on a direct NIC)"
else
	not_ok "log: a hostile log of this version exits 1" "exit $rc: $(head -c 600 "$tmp/out")"
fi
printable "log: no raw control byte in that report" "$tmp/out"
holds "log: a NIC name of the INIT line escaped" "$tmp/out" 'm\x1b[2Jx         1                  0                  5  GPUDirect RDMA (INIT line'
prints "log: an empty name or an unknown word makes no row" 0 grep -c '^y \|^  ' "$tmp/out"

# A peer chooses its device name, which the line that takes a rail out
# prints before " at <time>: <cause>": a name holding " at 0: " (or the whole
# rest of the line) must not become the table's last cause. 0.4.0 printed
# the name bare; the plugin now quotes it ("..." with \" and \\ inside).
# A bare name holding the line's own words after it cannot be told from the
# line: its cause is said to be unknown, never the forged one.
fwarn='h:1:1 [0] plugin/gdx_failover.c:340 NCCL WARN NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1 port 1, peer'
fdata='h:1:1 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: send comm with 198.18.0.2:41767 closed: 0 bytes GPU-direct, 1000 bytes through host memory'
{
	printf '%s x at 0: FORGED replace the NIC) taken out of the connection with 198.18.0.2:41767 at 11:13:18.209: rxe1 port 1 is down; 1 rail(s) carry its traffic until it is back (check the link: ibv_devinfo -d rxe1)\n' "$fwarn"
	echo "$fdata"
} >"$tmp/forged-bare.log"
{
	printf '%s "x at 0: FORGED replace the NIC") taken out of the connection with 198.18.0.2:41767 at 11:13:18.209: rxe1 port 1 is down; 1 rail(s) carry its traffic until it is back (check the link: ibv_devinfo -d rxe1)\n' "$fwarn"
	printf '%s "x\\\") taken out of the connection with 10.9.9.9:1 at 00:00:00.000: FORGED replace the NIC; \\\\") taken out of the connection with 198.18.0.2:41767 at 11:13:19.000: completion failed: retry exceeded; 1 rail(s) carry its traffic until it is back (check the link: ibv_devinfo -d rxe1)\n' "$fwarn"
	echo "$fdata"
} >"$tmp/forged-quoted.log"
{
	printf '%s x) taken out of the connection with 10.9.9.9:1 at 00:00:00.000: FORGED replace the NIC; ) taken out of the connection with 198.18.0.2:41767 at 11:13:18.209: rxe1 port 1 is down; 1 rail(s) carry its traffic until it is back (check the link: ibv_devinfo -d rxe1)\n' "$fwarn"
	echo "$fdata"
} >"$tmp/forged-ambiguous.log"
for f in forged-bare forged-quoted forged-ambiguous; do
	"$doctor" log "$tmp/$f.log" >"$tmp/$f.out" 2>&1
done
holds "log: a bare peer name holding ' at 0: ' (0.4.0's line) is not the cause" "$tmp/forged-bare.out" \
	"rxe1              1      0      0.0  rxe1 port 1 is down"
holds "log: a quoted peer name holding ' at 0: ' is not the cause" "$tmp/forged-quoted.out" \
	"rxe1              2      0      0.0  completion failed: retry exceeded"
holds "log: a bare peer name holding the line's own words: its cause unknown" "$tmp/forged-ambiguous.out" \
	"rxe1              1      0      0.0  unknown: the peer's device name in this line is not quoted"
prints "log: no forged cause in any of the three tables" 0 \
	sh -c "cat '$tmp/forged-bare.out' '$tmp/forged-quoted.out' '$tmp/forged-ambiguous.out' | grep -c FORGED"

# Issue 47 rows 4 and 4b, S1 and S2: a peer's words in the plugin's lines
# (its device name, its failover note's text, its refusal of a restore),
# each in the line's real shape, quoted as the plugin now writes them and
# bare as 0.4.3 and earlier did. gdx-doctor log reads each line by its
# shape from the start of its message: the words can add no byte count nor
# add or hide a rail's events, however they read. On a GPUDirect node's
# clean log (healthy.log, exit 0) a forged count of host bytes would make it
# "staged bytes on a GPUDirect NIC" (exit 1).
count='x closed: 0 bytes GPU-direct, 18446744073709551615 bytes'
hwarn='node1:1234:1299 [0] plugin/data/gdx_cq.c:535 NCCL WARN NET/GDX plugin: mlx5_0:'
for q in '"' ''; do
	{
		cat "$logs/healthy.log"
		printf '%s peer 10.0.0.6:43121 (%s%s%s) closed its connection with requests pending: the peer process exited or closed its comm\n' "$hwarn" "$q" "$count" "$q"
		printf '%s QP 0x11 on mlx5_0 port 1 (rail 0) to 10.0.0.6:43121 (%s%s%s) has had no completion for 600 ms with 1 work request(s) out (NCCL_GDX_STALL_MS=500): the path is congested or broken\n' "$hwarn" "$q" "$count" "$q"
		printf '%s async event local work queue catastrophic error on the comm with peer 10.0.0.6:43121 (%s%s%s): the QP is in error\n' "$hwarn" "$q" "$count" "$q"
		printf '%s rail 0 (mlx5_0), peer 10.0.0.6:43121 (%s%s%s): completion failed: transport retry counter exceeded (status 12)\n' "${hwarn%:}" "$q" "$count" "$q"
		# the prefix itself in a name: the line's first prefix is the plugin's
		printf '%s peer a (%sNET/GDX plugin: mlx5_0: send comm with a closed: 0 bytes GPU-direct, 5 bytes through host memory%s) closed its connection with requests pending\n' "$hwarn" "$q" "$q"
		printf 'node1:1234:1299 [0] NCCL WARN NET/GDX : mlx5_0: peer a (%sNET/GDX plugin: mlx5_0: send comm with a closed: 0 bytes GPU-direct, 5 bytes through host memory%s) closed its connection with requests pending\n' "$q" "$q"
	} >"$tmp/forged-name.log"
	form=${q:+quoted}
	form=${form:-bare}
	exits "log: a peer name holding byte counts ($form) in the peer-gone, stall, async-event and completion WARNs adds none, exit 0" 0 \
		"mlx5_0            1               1000                  0  GPUDirect RDMA via nvidia_peermem" "$doctor" log "$tmp/forged-name.log"
done
# Row 4b: with failover on and two rails, the receiver's DOWN note holding
# the count words is the cause of the rail taken out: the rail's failure is
# counted (exit 1), no bytes are added. S2: a refusal of a restore holding a
# rail's taken-out and back-in words is neither.
rwarn='vm:901:917 [0] plugin/data/gdx_failover.c:294 NCCL WARN NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1 port 1, peer "rxe0+rxe2") taken out of the connection with 198.18.0.2:41767 at 11:13:18.209: the receiver saw: '
rdata='vm:901:901 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: send comm with 198.18.0.2:41767 closed: 0 bytes GPU-direct, 1000 bytes through host memory'
rinfo='vm:901:917 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: rail 1 (rxe3): restore attempt 1 failed: '
refusal='x) taken out of the connection with 10.9.9.9:1 at 00:00:00.000: FORGED; ) back in the connection with 10.9.9.9:1 at 00:00:00.000 after 999 s down'
for q in '"' ''; do
	form=${q:+quoted}
	form=${form:-bare}
	{
		printf '%s%s%s%s; 1 rail(s) carry its traffic until it is back (check the link: ibv_devinfo -d rxe1)\n' "$rwarn" "$q" "$count" "$q"
		echo "$rdata"
	} >"$tmp/forged-note.log"
	exits "log: a DOWN note holding byte counts ($form): the rail taken out is counted, exit 1" 1 \
		"rxe1              1      0      0.0  the receiver saw: ${q}x closed: 0 bytes GPU-direct" "$doctor" log "$tmp/forged-note.log"
	exits "log: and its counts are not" 1 \
		"rxe1+rxe3         1                  0               1000" "$doctor" log "$tmp/forged-note.log"
	{
		printf '%sthe receiver refused: %s%s%s; next in 2 ms\n' "$rinfo" "$q" "$refusal" "$q"
		printf '%s%s%s%s; next in 2 ms\n' "$rinfo" "$q" "$refusal" "$q"
		echo "$rdata"
	} >"$tmp/forged-refusal.log"
	exits "log: a refusal holding a rail's taken-out and back-in words ($form) is no rail event, exit 0" 0 \
		"rxe1+rxe3         1                  0               1000" "$doctor" log "$tmp/forged-refusal.log"
	prints "log: no rail section for it ($form)" 0 sh -c "$doctor log $tmp/forged-refusal.log | grep -c 'rails taken out\|FORGED\|^rxe3 '"
done
# The real lines these forgeries stand for, as the plugin writes them
# (tests/unit/peer_strings.c, over scripted verbs with a hostile peer).
if [ -x build/tests/unit/peer_strings ]; then
	rm -f "$tmp/plugin-forged.log"
	GDX_TEST_NCCL_LOG="$tmp/plugin-forged.log" build/tests/unit/peer_strings >"$tmp/unit.out" 2>&1
	echo 'node1:1234:1300 [0] NCCL INFO NET/GDX plugin: fake0+fake1: send comm with 198.18.0.2:41767 closed: 0 bytes GPU-direct, 1000 bytes through host memory' >>"$tmp/plugin-forged.log"
	"$doctor" log "$tmp/plugin-forged.log" >"$tmp/plugin-forged.out" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ]; then
		ok "log: the plugin's own lines with a hostile peer's name and DOWN note exit 1 (a rail taken out)"
	else
		not_ok "log: the plugin's own lines with a hostile peer exit 1" "exit $rc: $(head -c 900 "$tmp/plugin-forged.out")"
	fi
	holds "log: their one count line is the bytes" "$tmp/plugin-forged.out" \
		"fake0+fake1       1                  0               1000  (no verdict line)"
	holds "log: their rail downs counted, the note's words the cause" "$tmp/plugin-forged.out" \
		'fake0             2      0      0.0  the sender saw: "x closed: 0 bytes GPU-direct, 18446744073709551615 bytes"'
	prints "log: no byte row from the peer-gone or stall WARN's name" 0 grep -cE '^fake0 +[0-9]+ +[0-9]+ +[0-9]+  ' "$tmp/plugin-forged.out"
else
	not_ok "log: the plugin's own lines with a hostile peer" "build/tests/unit/peer_strings is missing (make)"
fi

# log_within NAME WANT_STATUS ARGS...: the doctor run with ARGS exits
# WANT_STATUS within 8 MiB of resident memory, whatever the log's size.
log_within() {
	local name=$1 want=$2 rc rss
	shift 2
	read -r rc rss < <(measured "$tmp/out" "$tmp/err" "$doctor" "$@")
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit status $rc, expected $want: $(head -c 300 "$tmp/out" "$tmp/err")"
	elif [ "$rss" -gt 8192 ]; then
		not_ok "$name" "$rss KiB resident, more than 8 MiB"
	else
		ok "$name ($rss KiB resident)"
	fi
}
{
	cat "$logs/healthy.log"
	printf 'h:1:1 [0] NCCL INFO NET/GDX : '
	head -c $((50 << 20)) /dev/zero | tr '\0' 'A'
	printf ': closed: 1 bytes GPU-direct, 1 bytes through host memory\n'
} >"$tmp/long.log"
log_within "log: a 50 MB line is skipped in bounded memory, exit 0" 0 log "$tmp/long.log"
holds "log: the skipped line is said" "$tmp/out" "1 line(s) longer than 4096 bytes skipped: none of the plugin's is"
rm -f "$tmp/long.log"
seq 1 300000 | sed 's/.*/h:1:1 [0] NCCL INFO NET\/GDX : nic&: send comm with a closed: & bytes GPU-direct, 0 bytes through host memory/' >"$tmp/many.log"
log_within "log: 300,000 NICs in bounded memory, exit 0" 0 log "$tmp/many.log"
holds "log: the NICs past the table are said" "$tmp/out" "(295904 line(s) about host and NIC pairs past the first 4096, not counted)"
rm -f "$tmp/many.log"
head -c $((20 << 20)) /dev/urandom >"$tmp/random.log"
log_within "log: 20 MB of random bytes, no crash, exit 7" 7 log "$tmp/random.log"
rm -f "$tmp/random.log"
mkdir "$tmp/no-logs" "$tmp/no-logs/sub"
exits "log: a directory without a file in it exits 3" 3 "a directory with no log file in it" "$doctor" log "$tmp/no-logs"

# A job's output holds every node's lines (Slurm's one file): a row per
# host and NIC, each with its own verdict, never one row summing the hosts.
two=$logs/two-nodes.log
exits "log: two nodes' mlx5_0 are two rows, node1's direct" 1 \
	"node1 mlx5_0            2               1000                  0  GPUDirect RDMA via nvidia_peermem" "$doctor" log "$two"
exits "log: and node2's staged, with its own verdict" 1 \
	"node2 mlx5_0            2                  0               2000  staged through host memory: nvidia_peermem not loaded" "$doctor" log "$two"
prints "log: no row sums the two hosts" 0 sh -c "$doctor log $two | grep -c ' 3000 \| 4 '"
# A node that staged every byte with a fix the plugin names (nvidia_peermem
# not loaded): degraded (1), not clean, though no NIC advertises GPUDirect.
grep node2 "$two" >"$tmp/node2.log"
exits "log: a node that staged every byte for a fixable cause is degraded (1)" 1 \
	"1 NIC(s) moved bytes through host memory on a node that could send them direct" "$doctor" log "$tmp/node2.log"
exits "log: a node without a GPU that staged every byte is clean (0)" 0 \
	"rxe0              1                  0            7864320" "$doctor" log "$logs/default-subsys.log"
# Several files, a directory of them: one scan, the same rows.
grep node1 "$two" >"$tmp/node1.log"
"$doctor" log "$two" >"$tmp/one-file.out"
exits "log: two files give the same table as the one" 0 "" bash -c "$doctor log $tmp/node1.log $tmp/node2.log | sort | diff - <(sort $tmp/one-file.out)"
mkdir -p "$tmp/job" "$tmp/job/skipped-dir"
cp "$tmp/node1.log" "$tmp/node2.log" "$tmp/job/"
exits "log: a directory's files are read, a directory in it passed over" 0 "" bash -c "$doctor log $tmp/job | sort | diff - <(sort $tmp/one-file.out)"
exits "log: a missing second file exits 3, named" 3 "$tmp/none.log" "$doctor" log "$two" "$tmp/none.log"
exits "log: standard input given twice is a usage error" 64 "'-' given twice" sh -c "$doctor log - - <$two"
"$doctor" log --json "$two" >"$tmp/log.json"
echo "$?" >"$tmp/log.rc"
prints "log --json: the exit status of the table" 1 cat "$tmp/log.rc"
json_holds "log --json: a row per host and NIC" "$tmp/log.json" \
	'd["command"] == "log" and sorted((n["host"], n["nic"], n["gpu_direct_bytes"], n["host_bytes"]) for n in d["nics"]) == [("node1", "mlx5_0", 1000, 0), ("node2", "mlx5_0", 0, 2000)]'
json_holds "log --json: node2's staged bytes fixable, its verdict kept" "$tmp/log.json" \
	'[(n["direct"], n["staged"]) for n in d["nics"] if n["host"] == "node2"] == [(False, "fixable")] and d["exit"] == 1 and d["files"] == 1'
"$doctor" log --json "$logs/rail-flap.log" >"$tmp/rails.json"
json_holds "log --json: the rails, with their host" "$tmp/rails.json" \
	'[(r["host"], r["nic"], r["downs"], r["backs"]) for r in d["rails"]] == [("vm", "rxe1", 2, 2)]'
"$doctor" log --json "$logs/no-device-ib.log" >"$tmp/disabled.json"
json_holds "log --json: a plugin that did not start, and why" "$tmp/disabled.json" \
	'd["exit"] == 2 and d["disabled"]["why"].startswith("no RDMA device found") and "IB" in d["networks"]'

report_end tests/check/doctor_log.sh
