#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor hang --merge on the nodes' hang --json reports of
# tests/lib/fixtures/hang (written by hand, one directory per hang): a chain
# of waits across three nodes ending at a stopped process, two chains
# converging on one, a cycle, a node missing from the input, a port down, a
# process busy elsewhere, the comms' own causes, and nothing stuck. Each
# names its root cause and chains, exit 10 (0 when nothing is stuck); the
# same reports as one srun -l stream on standard input say the same; --json
# parses and --dot is a digraph marking its roots; a ring of 2,000 processes
# is merged in well under the time allowed; hostile reports (bad JSON, a
# check report, no or another format, wrong types, huge numbers, escape
# sequences) exit 3 naming the file, or are printed escaped; a node, a
# process or an address pair claimed by two reports (forged) is a conflict,
# left out of the causes, the rest merged; and at 160,000 comms, roots found
# from one process that many comms wait for cost a walk, not one each
# (within 3 times the CPU time of a linear control of the same size). Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_hang_merge.sh: N passed, N failed".
#
#   tests/check/doctor_hang_merge.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_hang_merge.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/hang
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# merge NAME DIR: hang --merge of the fixture DIR's reports exits 10, its
# output in $tmp/out.
merge() {
	run "hang --merge: $1 exits 10" 10 hang --merge "$fx/$2"/*.json && ok "hang --merge: $1 exits 10"
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	report_end tests/check/doctor_hang_merge.sh
	exit 1
fi
if ! command -v python3 >/dev/null; then
	not_ok "python3 is installed" "needed to read the JSON and make the reports"
fi

# A chain of three processes on three nodes, the last stopped.
chain='nodeA:99(0) --data--> nodeB:123(1) --CTS--> nodeC:4711(2) [stopped]'
if merge "a chain of three" chain; then
	has_text "hang --merge: the stopped process is the root" "$tmp/out" \
		'1. nodeC:4711(2): stopped (SIGSTOP or a debugger)'
	has_text "hang --merge: the stopped process explains both stuck comms" "$tmp/out" \
		'explains 2 stuck comm(s), ends 1 chain(s)'
	has_text "hang --merge: the chain, from its head" "$tmp/out" "  $chain"
	has_text "hang --merge: the summary line" "$tmp/out" \
		'gdx-doctor hang --merge: 3 report(s), 3 process(es), 2 stuck comm(s)'
fi
if run "hang --merge --json: a chain of three exits 10" 10 hang --merge --json "$fx"/chain/*.json; then
	json "hang --merge --json: the root and its chain" \
		"d['command'] == 'hang-merge' and d['stuck'] == 2 and d['nodes'] == 3 and
		 [(r['kind'], r['host'], r['pid'], r['rank'], r['explains'], r['chains']) for r in d['roots']] == [('stopped', 'nodeC', 4711, 2, 2, 1)] and
		 [[p['pid'] for p in c['path']] for c in d['chains']] == [[99, 123, 4711]] and
		 d['chains'][0]['edges'] == ['data', 'CTS'] and d['chains'][0]['root'] == 0"
fi
if run "hang --merge --dot: a chain of three exits 10" 10 hang --merge --dot "$fx"/chain/*.json; then
	if head -n 1 "$tmp/out" | grep -q '^digraph' &&
		grep -Fq '  p2 [label="nodeC:4711(2)\nstopped", style=filled' "$tmp/out" &&
		grep -Fq 'p0 -> p1 [label="data"];' "$tmp/out" && [ "$(tail -n 1 "$tmp/out")" = "}" ]; then
		ok "hang --merge --dot: a digraph, the stopped root filled, the edges labelled"
	else
		not_ok "hang --merge --dot: a digraph, the stopped root filled, the edges labelled" "$(cat "$tmp/out")"
	fi
fi

# Two chains converging on one process, which waits for a stopped one.
if merge "two chains converging" converge; then
	has_text "hang --merge: one root for both chains" "$tmp/out" \
		'1. nodeD:40(3): stopped (SIGSTOP or a debugger): it drives none of its comms; cmd: python train.py; explains 3 stuck comm(s), ends 2 chain(s)'
	has_text "hang --merge: the first chain" "$tmp/out" \
		'  nodeA:10(0) --CTS--> nodeC:30(2) --CTS--> nodeD:40(3) [stopped]'
	has_text "hang --merge: the second chain" "$tmp/out" \
		'  nodeB:20(1) --data--> nodeC:30(2) --CTS--> nodeD:40(3) [stopped]'
	if [ "$(grep -c '^  [0-9]*\. ' "$tmp/out")" -eq 1 ]; then
		ok "hang --merge: converging chains have one root"
	else
		not_ok "hang --merge: converging chains have one root" "$(cat "$tmp/out")"
	fi
fi

# A cycle: each waits for the next.
if merge "a cycle" cycle; then
	has_text "hang --merge: the cycle is the root, its members named" "$tmp/out" \
		'1. cycle of 3 process(es): nodeA:1(0) nodeB:2(1) nodeC:3(2): each waits for the next'
	has_text "hang --merge: the chain around the cycle" "$tmp/out" \
		'  nodeA:1(0) --CTS--> nodeB:2(1) --data--> nodeC:3(2) --CTS--> nodeA:1(0) [cycle]'
fi
if run "hang --merge --json: a cycle exits 10" 10 hang --merge --json "$fx"/cycle/*.json; then
	json "hang --merge --json: the cycle's members" \
		"[r['kind'] for r in d['roots']] == ['cycle'] and d['roots'][0]['explains'] == 3 and
		 [m['pid'] for m in d['roots'][0]['members']] == [1, 2, 3]"
fi

# A peer no report has.
if merge "a node missing" missing; then
	has_text "hang --merge: the unknown peer is the root" "$tmp/out" \
		'1. unknown peer 10.0.3.9:5000 (a node missing from the input?)'
	has_text "hang --merge: the chain to the unknown peer" "$tmp/out" \
		'  nodeA:7(0) --CTS--> 10.0.3.9:5000 [unknown peer]'
fi

# A port down on the process waited for: the port, not the process.
if merge "a port down" port; then
	has_text "hang --merge: the port is the root, by host, NIC and port" "$tmp/out" \
		'1. port: nodeA mlx5_1 port 1 is down'
	has_text "hang --merge: the port explains both stuck comms" "$tmp/out" 'explains 2 stuck comm(s)'
	has_text "hang --merge: the chain to the port" "$tmp/out" \
		'  nodeB:6(1) --data--> nodeA:5(0) [port mlx5_1 1 down]'
fi
if run "hang --merge --json: a port down exits 10" 10 hang --merge --json "$fx"/port/*.json; then
	json "hang --merge --json: the port root" \
		"[(r['kind'], r['host'], r['nic'], r['port'], r['pid']) for r in d['roots']] == [('port', 'nodeA', 'mlx5_1', 1, None)]"
fi

# A process none of whose comms waits, its rank unknown.
if merge "a process busy elsewhere" busy; then
	has_text "hang --merge: the process that waits for nothing is the root" "$tmp/out" \
		'1. nodeB:12(?): none of its comms waits: busy elsewhere'
	has_text "hang --merge: the chain to it" "$tmp/out" '  nodeA:11(0) --CTS--> nodeB:12(?) [not waiting]'
fi

# The comms' own causes: no answer, the peer gone, a failure.
if run "hang --merge --json: the comms' own causes exit 10" 10 hang --merge --json "$fx"/causes/*.json; then
	json "hang --merge --json: path, gone (its owner known) and failed" \
		"sorted(r['kind'] for r in d['roots']) == ['failed', 'gone', 'path'] and
		 [(r['address'], r['host'], r['pid']) for r in d['roots'] if r['kind'] == 'gone'] == [('10.0.7.2:5001', 'nodeB', 32)] and
		 all(r['explains'] == 1 and r['chains'] == 1 for r in d['roots'])"
fi

# Nothing stuck.
if run "hang --merge: nothing stuck exits 0" 0 hang --merge "$fx"/idle/*.json; then
	has_text "hang --merge: nothing stuck is said" "$tmp/out" \
		'nothing is stuck: 2 process(es) on 2 node(s), none has waited past its threshold'
fi

# The chain's reports as srun -l collects them: lines interleaved, each under
# its task's label, on standard input.
python3 - "$fx/chain" "$tmp/srun.txt" <<'EOF'
import random, sys
tasks = []
for t, node in enumerate(["nodeA", "nodeB", "nodeC"]):
    tasks.append(["%d: %s" % (t, l) for l in open("%s/%s.json" % (sys.argv[1], node)).read().splitlines()])
random.seed(27)
with open(sys.argv[2], "w") as f:
    while any(tasks):
        f.write(random.choice([t for t in tasks if t]).pop(0) + "\n")
EOF
"$doctor" hang --merge "$fx"/chain/*.json >"$tmp/files.out" 2>&1
"$doctor" hang --merge - <"$tmp/srun.txt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 10 ] && grep -Fq "  $chain" "$tmp/out" && cmp -s "$tmp/files.out" "$tmp/out"; then
	ok "hang --merge -: srun -l output on standard input says what the files say"
else
	not_ok "hang --merge -: srun -l output on standard input says what the files say" "exit $rc: $(head -c 600 "$tmp/out") $(head -c 300 "$tmp/err")"
fi

# A ring of 2,000 processes on 20 nodes, each receiving from the one before,
# one stopped: one chain of 2,000, in well under the time allowed.
python3 - "$tmp/ring.json" <<'EOF'
import json, sys
n, nodes, stopped = 2000, 20, 1000
def addr(i, port): return "10.1.%d.%d:%d" % (i // 256, i % 256, port)
with open(sys.argv[1], "w") as f:
    for node in range(nodes):
        procs = [{"pid": 1000 + i, "host": "node%d" % node, "rank": i, "cmd": "train",
                  "stopped": i == stopped, "comms": [
            {"comm": "receive", "address": addr(i, 5000), "peer": addr((i - 1) % n, 40000),
             "wait": "data", "stuck": True, "rails": []},
            {"comm": "send", "address": addr(i, 40000), "peer": addr((i + 1) % n, 5000),
             "wait": "idle", "stuck": False, "rails": []}]}
            for i in range(node * n // nodes, (node + 1) * n // nodes)]
        f.write(json.dumps({"command": "hang", "hostname": "node%d" % node, "format": 2,
                            "processes": procs}) + "\n")
EOF
start=$(date +%s%N)
if run "hang --merge: a ring of 2,000 exits 10" 10 hang --merge "$tmp/ring.json"; then
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ "$ms" -lt 3000 ]; then
		ok "hang --merge: a ring of 2,000 processes in $ms ms"
	else
		not_ok "hang --merge: a ring of 2,000 processes in 3 s" "$ms ms"
	fi
	has_text "hang --merge: the ring's stopped process explains every stuck comm" "$tmp/out" \
		'1. node10:2000(1000): stopped (SIGSTOP or a debugger): it drives none of its comms; cmd: train; explains 2000 stuck comm(s), ends 1 chain(s)'
	has_text "hang --merge: the ring's chain, its middle left out" "$tmp/out" \
		'  node9:1999(999) --data--> node9:1998(998)'
	has_text "hang --merge: the ring's chain ends at the stopped one" "$tmp/out" \
		'(1980 more process(es)) ... --data--> node10:2009(1009)'
fi

# At scale: 160,000 comms. The attack: process P0 with 80,000 stuck comms to
# peers no report has (80,000 roots, each found from P0), and process Q with
# 80,000 stuck comms waiting on P0; each root's count walked up from P0
# anew cost 80,000 x 80,000 steps (0.4.0 counted its bound by process, not
# by comm met: 53 s on the reviewer's machine). The control: the same number
# of comms, each of a process of its own, waiting on one stopped process (a
# linear merge). The attack takes under 3 times the control's CPU time, and
# its counts are whole.
python3 - "$tmp/attack.json" "$tmp/control.json" <<'EOF'
import json, sys
n = 160000
def addr(i, port): return "10.%d.%d.%d:%d" % (i >> 16 & 255, i >> 8 & 255, i & 255, port)
listen = {"comm": "receive", "address": "10.254.0.1:5000", "peer": "10.254.0.2:1", "wait": "idle", "stuck": False}
def comm(i, port, peer): return {"comm": "send", "address": addr(i, port), "peer": peer, "wait": "cts", "stuck": True}
def report(out, host, procs): out.write(json.dumps({"command": "hang", "hostname": host, "format": 2, "processes": procs}) + "\n")
with open(sys.argv[1], "w") as out:
    report(out, "n0", [{"pid": 1, "host": "n0", "rank": 0, "stopped": False,
                        "comms": [comm(i, 40000, "10.255.%d.%d:%d" % (i >> 8 & 255, i & 255, 1 + (i >> 16))) for i in range(n // 2)] + [listen]}])
    report(out, "n1", [{"pid": 2, "host": "n1", "rank": 1, "stopped": False,
                        "comms": [comm(i, 41000, "10.254.0.1:5000") for i in range(n // 2)]}])
with open(sys.argv[2], "w") as out:
    report(out, "n0", [{"pid": 1, "host": "n0", "rank": 0, "stopped": True, "comms": [listen]}])
    for node in range(100):
        report(out, "m%d" % node, [{"pid": 2 + j, "host": "m%d" % node, "rank": 1 + j, "stopped": False,
                                    "comms": [comm(j, 41000, "10.254.0.1:5000")]} for j in range(node * n // 100, (node + 1) * n // 100)])
EOF
cpu() { # the CPU seconds of hang --merge FILE, its output in $tmp/out
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$doctor" hang --merge "$1" >"$tmp/out" 2>&1
	awk 'END { print $1 + $2 }' "$tmp/cpu"
}
control=$(cpu "$tmp/control.json")
has_text "hang --merge: the control's one root explains its 160,000 comms" "$tmp/out" \
	'explains 160000 stuck comm(s), ends 160000 chain(s)'
attack=$(cpu "$tmp/attack.json")
has_text "hang --merge: the attack's roots each explain 80,001 comms, whole" "$tmp/out" \
	'  1. unknown peer 10.255.0.0:1 (a node missing from the input?); explains 80001 stuck comm(s)'
if awk -v a="$attack" -v c="$control" 'BEGIN { exit !(a < 3 * c) }'; then
	ok "hang --merge at 160,000 comms: $attack s of CPU, the linear control $control s (under 3 times)"
else
	not_ok "hang --merge at 160,000 comms: under 3 times the linear control" "$attack s, the control $control s"
fi
rm -f "$tmp/attack.json" "$tmp/control.json"

# Hostile reports: each refused by file (and line), exit 3.
hang() { # hang FILE JSON: a report written to FILE
	printf '%s\n' "$2" >"$tmp/$1"
}
hang bad.json '{"command": "hang", "format": 2,
 "processes": [}'
if run "hang --merge: bad JSON exits 3" 3 hang --merge "$tmp/bad.json"; then
	has_text "hang --merge: bad JSON is named by file, line and column" "$tmp/err" \
		'gdx-doctor hang --merge: '"$tmp"'/bad.json: not a gdx-doctor report: line 2, column 16'
fi
hang check.json '{"command": "check", "hostname": "nodeA", "ports": []}'
if run "hang --merge: a check report exits 3" 3 hang --merge "$fx/chain/nodeA.json" "$tmp/check.json"; then
	has_text "hang --merge: a check report is named" "$tmp/err" \
		"$tmp/check.json, report 1: gdx-doctor check output; hang --merge reads hang --json"
fi
hang nofmt.json '{"command": "hang", "hostname": "nodeA", "processes": []}'
if run "hang --merge: a report without format exits 3" 3 hang --merge "$tmp/nofmt.json"; then
	has_text "hang --merge: the missing format is said" "$tmp/err" "$tmp/nofmt.json, report 1: no \"format\""
fi
hang fmt3.json '{"command": "hang", "hostname": "nodeA", "format": 3, "processes": []}'
if run "hang --merge: another format exits 3" 3 hang --merge "$tmp/fmt3.json"; then
	has_text "hang --merge: the other format is named" "$tmp/err" "report 1: hang report format 3; hang --merge reads format 2"
fi
# A node reported twice, a process (host:pid) twice: conflicts, said by
# both sources, what they claim left out of the causes and the rest merged
# (0.4.0 gave up on the whole merge, exit 3: one report decided for all).
if run "hang --merge: a node twice is a conflict, the rest merged (exit 10)" 10 \
	hang --merge "$fx/chain/nodeA.json" "$fx/chain/nodeB.json" "$fx/chain/nodeC.json" "$fx/cycle/nodeA.json"; then
	has_text "hang --merge: both sources of the node are named" "$tmp/out" \
		"  node nodeA reported twice: $fx/chain/nodeA.json, report 1 and $fx/cycle/nodeA.json, report 1"
	has_text "hang --merge: the rest merged: nodeB waits for the stopped nodeC" "$tmp/out" \
		'1. nodeC:4711(2): stopped (SIGSTOP or a debugger): it drives none of its comms; cmd: python train.py; explains 1 stuck comm(s)'
	has_text "hang --merge: nodeA's stuck comms left out" "$tmp/out" \
		"2 stuck comm(s) left out: their process, or the peer they wait for, is claimed twice"
fi
hang dup.json '{"command": "hang", "hostname": "n", "format": 2, "processes": [{"pid": 5, "host": "h"}, {"pid": 5, "host": "h"}]}'
if run "hang --merge: a process twice is a conflict, not the end of the merge (exit 0)" 0 hang --merge "$tmp/dup.json"; then
	has_text "hang --merge: the process twice is named" "$tmp/out" \
		"  process h:5 twice: $tmp/dup.json, report 1 and $tmp/dup.json, report 1"
fi

# Forged reports (0.4.0: the first to claim a connection's end was taken):
# a stopped process of a report read first that claims nodeC's address pair
# was the root cause of the chain, in place of nodeC. Now the pair claimed
# twice is a conflict naming both processes, neither is a cause through
# it, and a hang elsewhere (the cycle, its nodes and addresses renamed)
# still has its root.
python3 - "$fx/cycle" "$tmp/other.json" <<'EOF'
import json, sys
with open(sys.argv[2], "w") as out:
    for node in ("nodeA", "nodeB", "nodeC"):
        text = open("%s/%s.json" % (sys.argv[1], node)).read()
        text = text.replace('"node', '"cyc').replace('"10.0.', '"10.9.')
        out.write(json.dumps(json.loads(text)) + "\n")
EOF
hang evil.json '{"command": "hang", "hostname": "evil", "format": 2, "processes": [{"pid": 666, "host": "evil", "cmd": "forged", "stopped": true, "comms": [{"comm": "receive", "address": "10.0.0.3:5000", "peer": "10.0.0.2:40002", "wait": "idle", "stuck": false}]}]}'
if run "hang --merge: a forged stopped process claiming nodeC's pair (exit 10)" 10 \
	hang --merge "$tmp/evil.json" "$fx"/chain/*.json "$tmp/other.json"; then
	has_text "hang --merge: the pair claimed twice is a conflict naming both" "$tmp/out" \
		'  connection end 10.0.0.3:5000 (peer 10.0.0.2:40002) claimed by evil:666(?) and nodeC:4711(2)'
	prints "hang --merge: the forged process is no root cause" 0 grep -c '^  [0-9]*\. evil' "$tmp/out"
	has_text "hang --merge: the rest merged: the cycle elsewhere is a root" "$tmp/out" \
		'1. cycle of 3 process(es): cycA:1(0) cycB:2(1) cycC:3(2)'
fi
if run "hang --merge --json: the forged pair" 10 hang --merge --json "$tmp/evil.json" "$fx"/chain/*.json "$tmp/other.json"; then
	json "hang --merge --json: the conflict, the cycle root, no forged root" \
		"[r['kind'] for r in d['roots']] == ['cycle'] and d['left_out'] == 1 and
		 [(c['kind'], c['address'], c['peer'], [p['host'] for p in c['claimed_by']]) for c in d['conflicts']] ==
		 [('connection', '10.0.0.3:5000', '10.0.0.2:40002', ['evil', 'nodeC'])]"
fi
hang evil2.json '{"command": "hang", "hostname": "evil", "format": 2, "processes": [{"pid": 4711, "host": "nodeC", "cmd": "forged", "stopped": false, "comms": []}]}'
if run "hang --merge: a forged report of nodeC's process (exit 10)" 10 \
	hang --merge "$tmp/evil2.json" "$fx"/chain/*.json "$tmp/other.json"; then
	has_text "hang --merge: nodeC:4711 claimed twice is a conflict" "$tmp/out" "  process nodeC:4711 twice: $tmp/evil2.json, report 1 and $fx/chain/nodeC.json, report 1"
	prints "hang --merge: neither claimant of nodeC:4711 is a root cause" 0 grep -c '^  [0-9]*\. nodeC' "$tmp/out"
fi
hang pid.json '{"command": "hang", "hostname": "n", "format": 2, "processes": [{"pid": "12"}]}'
if run "hang --merge: a pid not a number exits 3" 3 hang --merge "$tmp/pid.json"; then
	has_text "hang --merge: the pid is refused, by process" "$tmp/err" 'report 1, process 1: "pid" is not a process id'
fi
hang bigpid.json '{"command": "hang", "hostname": "n", "format": 2, "processes": [{"pid": 18446744073709551615}]}'
run "hang --merge: a pid of 2^64-1 exits 3" 3 hang --merge "$tmp/bigpid.json" && ok "hang --merge: a pid of 2^64-1 exits 3"
hang huge.json '{"command": "hang", "hostname": "n", "format": 2, "processes": [{"pid": 1e400}]}'
if run "hang --merge: a number out of range exits 3" 3 hang --merge "$tmp/huge.json"; then
	has_text "hang --merge: the number is named with its line" "$tmp/err" 'line 1, column 73: the number 1e400 is out of range'
fi
hang types.json '{"command": "hang", "hostname": "n", "format": 2, "processes": [{"pid": 12, "rank": 1e300, "stopped": "yes", "cmd": 5, "comms": [{"stuck": true, "wait": "cts", "address": 5, "peer": ["a"], "rails": {"x": 1}}, 7, {"stuck": "yes", "wait": "data"}, {"stuck": true, "wait": "data", "address": "a", "peer": "b", "rails": [{"port_down": true, "port": 1e99, "nic": 3}]}]}]}'
if run "hang --merge: wrong types in fields are ignored" 10 hang --merge --json "$tmp/types.json"; then
	json "hang --merge: what the wrong types leave" \
		"d['stuck'] == 2 and sorted(r['kind'] for r in d['roots']) == ['port', 'unknown_peer'] and
		 all(p['rank'] is None for c in d['chains'] for p in c['path'])"
fi
hang empty.json ''
if run "hang --merge: an empty file exits 3" 3 hang --merge "$tmp/empty.json"; then
	has_text "hang --merge: the empty file is named" "$tmp/err" "$tmp/empty.json: no report in it"
fi
run "hang --merge: a missing file exits 3" 3 hang --merge "$tmp/nothing.json" && ok "hang --merge: a missing file exits 3"

# Names with escape sequences and new lines: printed escaped, one line each.
hang esc.json '{"command": "hang", "hostname": "n\u001b[31mred\nroot causes: none", "format": 2, "processes": [{"pid": 3, "cmd": "evil\u001b]0;title\u0007", "comms": [{"stuck": true, "wait": "cts", "address": "10.9.9.1:1", "peer": "x\u001b[2Jy"}]}, {"pid": 4, "stopped": true, "cmd": "evil\u001b]0;title\u0007\nchains:", "comms": [{"stuck": true, "wait": "data", "address": "10.9.9.2:1", "peer": "z"}]}]}'
if run "hang --merge: escape sequences in the names" 10 hang --merge "$tmp/esc.json"; then
	printable "hang --merge: the names are printed escaped" "$tmp/out"
	has_text "hang --merge: the escaped host" "$tmp/out" 'n\x1b[31mred\x0aroot causes: none:3(?)'
	has_text "hang --merge: the escaped command" "$tmp/out" 'cmd: evil\x1b]0;title\x07\x0achains:'
fi
if run "hang --merge --json: escape sequences in the names" 10 hang --merge --json "$tmp/esc.json"; then
	printable "hang --merge --json: the names are escaped" "$tmp/out"
	json "hang --merge --json: the names as they were" \
		"any(r['host'] == 'n\x1b[31mred\nroot causes: none' and r['kind'] == 'stopped' for r in d['roots']) and
		 any(r['address'] == 'x\x1b[2Jy' for r in d['roots'])"
fi
if run "hang --merge --dot: escape sequences in the names" 10 hang --merge --dot "$tmp/esc.json"; then
	printable "hang --merge --dot: the names are escaped" "$tmp/out"
fi

report_end tests/check/doctor_hang_merge.sh
