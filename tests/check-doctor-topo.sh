#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor topo on the hwloc XML fixtures: the table and the JSON (checked
# with python3's json module) on two machines, --dot rendered by graphviz for
# every fixture (its nodes, edges and clusters read back from dot -Tjson), and
# the exit status of every failure: missing file, not hwloc XML, no GPU, no
# RDMA NIC, bad usage.
# Prints "ok ..." / "not ok ..." lines and "# doctor-topo: N passed, N failed".
#
#   tests/check-doctor-topo.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check-doctor-topo.sh
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/fixtures/topo
# shellcheck source=tests/report.sh
. tests/report.sh

# run NAME WANT_STATUS ARGS...: runs the doctor, output in $tmp/out and $tmp/err;
# returns non-zero (after a "not ok") when the exit status is not WANT_STATUS.
run() {
	local name=$1 want=$2 rc
	shift 2
	"$doctor" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
}

# has NAME FILE REGEX: one "ok"/"not ok" line on whether FILE matches REGEX.
has() {
	if grep -Eq -- "$3" "$2"; then
		ok "$1"
	else
		not_ok "$1" "no line matches '$3' in: $(head -c 600 "$2")"
	fi
}

# json NAME PYTHON_EXPR: the output is valid JSON (json.tool) and the
# expression over it, d, is true.
json() {
	if ! python3 -m json.tool "$tmp/out" >/dev/null 2>"$tmp/json-err"; then
		not_ok "$1" "invalid JSON: $(head -c 300 "$tmp/json-err")"
	elif python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$2" 2>"$tmp/json-err"; then
		ok "$1"
	else
		not_ok "$1" "JSON does not satisfy: $2 $(head -c 300 "$tmp/json-err")"
	fi
}

# graph NAME PYTHON_EXPR: $tmp/out is dot text that graphviz lays out without a
# word on stderr, into well-formed SVG; the expression is true over what dot
# -Tjson reads back: nodes (their labels, lines joined by a space), edges
# (tail label, head label, edge label) and clusters (label -> node labels).
graph() {
	if ! dot -Tsvg "$tmp/out" >"$tmp/svg" 2>"$tmp/dot-err" || [ -s "$tmp/dot-err" ]; then
		not_ok "$1" "dot -Tsvg: $(head -c 300 "$tmp/dot-err")"
	elif ! python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/svg" 2>"$tmp/dot-err"; then
		not_ok "$1" "the SVG is not well-formed XML: $(head -c 300 "$tmp/dot-err")"
	elif ! dot -Tjson "$tmp/out" >"$tmp/dot-json" 2>"$tmp/dot-err"; then
		not_ok "$1" "dot -Tjson: $(head -c 300 "$tmp/dot-err")"
	elif python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
label = lambda o: o.get("label", "").replace("\\n", " ")
objs = {o["_gvid"]: o for o in d.get("objects", []) if "nodes" not in o}
nodes = {label(o) for o in objs.values()}
edges = {(label(objs[e["tail"]]), label(objs[e["head"]]), e.get("label", "")) for e in d.get("edges", [])}
clusters = {label(o): {label(objs[i]) for i in o["nodes"]} for o in d.get("objects", []) if o.get("name", "").startswith("cluster")}
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/dot-json" "$2" 2>"$tmp/dot-err"; then
		ok "$1"
	else
		not_ok "$1" "the graph does not satisfy: $2 $(head -c 300 "$tmp/dot-err")"
	fi
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	echo "# doctor-topo: $passed passed, $failed failed"
	exit 1
fi
if ! command -v python3 >/dev/null; then
	not_ok "python3 is installed" "needed to check the JSON"
fi
if ! command -v dot >/dev/null; then
	not_ok "graphviz is installed" "dot is needed to check topo --dot (apt-get install graphviz)"
fi

# DGX H100: one PIX NIC per GPU; the storage NICs stand alone.
if run "topo dgx-h100" 0 topo --xml "$fx/dgx-h100.xml"; then
	has "topo dgx-h100: GPU 1b and mlx5_0 are PIX" "$tmp/out" '^0000:1b:00\.0 +PIX +NODE '
	has "topo dgx-h100: GPU df is PIX only to mlx5_11" "$tmp/out" '^0000:df:00\.0 +(SYS +){6}(NODE +){3}PIX +1$'
	has "topo dgx-h100: rail group of GPU 1b" "$tmp/out" 'group 0: mlx5_0 +<- 0000:1b:00\.0 PIX$'
	has "topo dgx-h100: storage NIC stands alone" "$tmp/out" 'group 8: mlx5_1 +\(near no GPU: stands alone\)'
	has "topo dgx-h100: NIC NUMA node" "$tmp/out" '^  mlx5_6 +0000:9a:00\.0 +NUMA 1 '
fi
if run "topo dgx-h100 --json" 0 topo --xml "$fx/dgx-h100.xml" --json; then
	json "topo dgx-h100 --json: 8 GPUs, 10 NICs, one-NIC rails" \
		'len(d["gpus"]) == 8 and len(d["nics"]) == 10 and all(len(g["rail"]) == 1 for g in d["gpus"])'
	json "topo dgx-h100 --json: names the command and the XML's host (its HostName), not this one" \
		"d['command'] == 'topo' and d['hostname'] == 'dgx-h100'"
	json "topo dgx-h100 --json: GPU 1b nearest first" \
		'd["gpus"][0]["pci"] == "0000:1b:00.0" and d["gpus"][0]["numa"] == 0 and d["gpus"][0]["nics"][0] == {"name": "mlx5_0", "pci": "0000:18:00.0", "path": "PIX"} and d["gpus"][0]["nics"][-1]["path"] == "SYS"'
fi

# The node a report is of: --hostname over the XML's HostName; this
# machine's only for its own topology; null for an XML without one.
run "topo --xml --hostname" 0 topo --xml "$fx/dgx-h100.xml" --json --hostname node17 &&
	json "topo --hostname names the node" "d['hostname'] == 'node17'"
sed '/name="HostName"/d' "$fx/dgx-h100.xml" >"$tmp/nohost.xml"
run "topo --xml without a HostName" 0 topo --xml "$tmp/nohost.xml" --json &&
	json "topo --xml without a HostName: hostname null, never this machine's" "d['hostname'] is None"
# Two saved nodes in one fleet: each report is its own node's (it used to
# say "a second topo report for node $(hostname)", both stamped here).
"$doctor" topo --json --xml "$fx/dgx-h100.xml" >"$tmp/two.json" 2>/dev/null
"$doctor" topo --json --xml "$fx/dgx-a100.xml" >>"$tmp/two.json" 2>/dev/null
"$doctor" fleet --json "$tmp/two.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 9 ]; then
	json "fleet of two saved topologies: two nodes, by their HostName" \
		"sorted(n['name'] for n in d['nodes']) == ['dgx-a100', 'dgx-h100']"
else
	not_ok "fleet of two saved topologies: exit 9 (they differ)" "exit $rc: $(head -c 300 "$tmp/err")"
fi

# DGX A100: two switch levels (PXB), two NICs shared by two GPUs.
if run "topo dgx-a100" 0 topo --xml "$fx/dgx-a100.xml"; then
	has "topo dgx-a100: GPU 07 is PXB to mlx5_0 and mlx5_1" "$tmp/out" '^0000:07:00\.0 +PXB +PXB +SYS '
	has "topo dgx-a100: shared rail group" "$tmp/out" 'group 0: mlx5_0,mlx5_1 +<- 0000:07:00\.0 PXB, 0000:0f:00\.0 PXB$'
	has "topo dgx-a100: GPU NUMA node" "$tmp/out" '^0000:b7:00\.0 .* 5$'
fi
if run "topo dgx-a100 --json" 0 topo --xml "$fx/dgx-a100.xml" --json; then
	json "topo dgx-a100 --json: rails and groups" \
		'd["gpus"][1]["rail"] == ["mlx5_0", "mlx5_1"] and d["gpus"][1]["numa"] == 3 and d["groups"][0] == {"nics": ["mlx5_0", "mlx5_1"], "gpus": ["0000:07:00.0", "0000:0f:00.0"]}'
fi

# A NIC without PCI device: UNKNOWN, null in JSON, never in a rail.
if run "topo rxe-only --json" 0 topo --xml "$fx/rxe-only.xml" --json; then
	json "topo rxe-only --json: rxe0 has no PCI device" \
		'd["nics"] == [{"name": "rxe0", "pci": None, "numa": None, "rail_gpus": 0}] and d["gpus"][0]["nics"][0]["path"] == "UNKNOWN" and d["gpus"][0]["rail"] == []'
fi

# --dot: graphviz renders every fixture, and the graph names every GPU and NIC
# that topo --json lists, each GPU in a rail group's cluster.
for xml in "$fx"/*.xml; do
	m=$(basename "$xml" .xml)
	"$doctor" topo --xml "$xml" --json >"$tmp/json" 2>/dev/null
	want=$?
	if run "topo $m --dot exits $want, as topo does" "$want" topo --xml "$xml" --dot; then
		graph "topo $m --dot: dot renders it, with every GPU and NIC" \
			"all(any(n.startswith('GPU ' + g['pci']) for n in nodes) for g in json.load(open('$tmp/json'))['gpus']) and all(any(n.startswith(x['name'] + ' ') for n in nodes) for x in json.load(open('$tmp/json'))['nics']) and len(clusters) == len(json.load(open('$tmp/json'))['groups'])"
	fi
done
# DGX H100: the tree from the NUMA node down to each GPU and its PIX NIC.
if run "topo dgx-h100 --dot" 0 topo --xml "$fx/dgx-h100.xml" --dot; then
	graph "topo dgx-h100 --dot: NUMA 0, host bridge, root port, switch, GPU 1b and mlx5_0" \
		"{('NUMA 0', 'host bridge 0000:[15-1b]', ''), ('host bridge 0000:[15-1b]', 'root port 0000:15:01.0', ''), ('root port 0000:15:01.0', 'PCIe switch 0000:16:00.0', ''), ('PCIe switch 0000:16:00.0', 'GPU 0000:1b:00.0', ''), ('PCIe switch 0000:16:00.0', 'mlx5_0 0000:18:00.0', '')} <= edges"
	graph "topo dgx-h100 --dot: the rail edge carries PIX" \
		"('GPU 0000:1b:00.0', 'mlx5_0 0000:18:00.0', 'PIX') in edges and ('GPU 0000:df:00.0', 'mlx5_11 0000:dc:00.0', 'PIX') in edges and len([e for e in edges if e[2]]) == 8"
	graph "topo dgx-h100 --dot: rail groups are clusters, the storage NICs stand alone" \
		"clusters['rail group 0'] == {'GPU 0000:1b:00.0', 'mlx5_0 0000:18:00.0'} and clusters['rail group 8 (stands alone)'] == {'mlx5_1 0000:29:00.0'} and len(clusters) == 10"
	has "topo dgx-h100 --dot: NUMA 1 for the second socket" "$tmp/out" 'numa1 \[label="NUMA 1"'
fi
# DGX A100: two switch levels, two GPUs and two NICs per cluster, PXB edges.
if run "topo dgx-a100 --dot" 0 topo --xml "$fx/dgx-a100.xml" --dot; then
	graph "topo dgx-a100 --dot: a shared rail of two GPUs and two NICs, PXB" \
		"clusters['rail group 0'] == {'GPU 0000:07:00.0', 'GPU 0000:0f:00.0', 'mlx5_0 0000:0c:00.0', 'mlx5_1 0000:12:00.0'} and {('GPU 0000:07:00.0', 'mlx5_0 0000:0c:00.0', 'PXB'), ('GPU 0000:07:00.0', 'mlx5_1 0000:12:00.0', 'PXB')} <= edges and sum(1 for e in edges if e[0] == 'PCIe switch 0000:01:00.0') == 4"
fi
# A GPU whose only NIC is across the socket: the edge says SYS, in red.
if run "topo remote-nic --dot" 0 topo --xml "$fx/remote-nic.xml" --dot; then
	graph "topo remote-nic --dot: the SYS edge" "any(e[2] == 'SYS' for e in edges)"
	has "topo remote-nic --dot: SYS is drawn red" "$tmp/out" 'label="SYS", style=dashed, color=red'
fi
# rxe: a NIC without a PCI device hangs off no bridge, in a cluster of its own.
if run "topo rxe-only --dot" 0 topo --xml "$fx/rxe-only.xml" --dot; then
	graph "topo rxe-only --dot: rxe0 alone, no rail edge" \
		"clusters == {'rail group 0 (stands alone)': {'rxe0 (no PCI device)'}} and not any(e[2] for e in edges) and not any('rxe0 (no PCI device)' in e[:2] for e in edges)"
fi
run "topo --dot --json exits 64 (usage)" 64 topo --dot --json --xml "$fx/dgx-h100.xml" &&
	has "topo --dot --json says to choose one" "$tmp/err" 'choose one'

# Failures and their exit statuses.
if run "topo missing file exits 3" 3 topo --xml "$fx/no-such-machine.xml"; then
	has "topo missing file exits 3" "$tmp/err" 'no-such-machine\.xml: No such file'
fi
printf 'GPU0 mlx5_0 PIX\n' >"$tmp/not-xml.xml"
if run "topo non-XML file exits 3" 3 topo --xml "$tmp/not-xml.xml"; then
	has "topo non-XML file exits 3" "$tmp/err" 'not an hwloc XML topology'
fi
if run "topo no GPU exits 4" 4 topo --xml "$fx/no-gpu.xml"; then
	has "topo no GPU exits 4" "$tmp/err" 'no NVIDIA GPU found'
fi
if run "topo no GPU --json exits 4" 4 topo --xml "$fx/no-gpu.xml" --json; then
	json "topo no GPU --json is still a report" 'd["gpus"] == [] and d["nics"][0]["name"] == "mlx5_0"'
fi
if run "topo no RDMA NIC exits 5" 5 topo --xml "$fx/no-nic.xml"; then
	has "topo no RDMA NIC exits 5" "$tmp/err" 'no RDMA NIC found'
fi
run "topo unknown option exits 64 (usage)" 64 topo --no-such-option && ok "topo unknown option exits 64 (usage)"
run "unknown command exits 64 (usage)" 64 no-such-command && ok "unknown command exits 64 (usage)"
run "help for an unknown command exits 64 (usage)" 64 help no-such-command &&
	ok "help for an unknown command exits 64 (usage)"
if run "--help exits 0" 0 --help; then
	has "--help lists topo and the exit statuses" "$tmp/out" '^  5   topo: no RDMA NIC found'
fi
if run "topo --help exits 0" 0 topo --help; then
	has "topo --help lists --xml" "$tmp/out" '--xml FILE'
	has "topo --help lists --dot" "$tmp/out" '--dot +print the PCIe tree'
fi

echo "# doctor-topo: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
