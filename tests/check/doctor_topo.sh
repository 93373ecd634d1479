#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor topo on the hwloc XML fixtures: the table and the JSON (checked
# with python3's json module) on two machines, --dot rendered by graphviz for
# every fixture (its nodes, edges and clusters read back from dot -Tjson), and
# the exit status of every failure: missing file, not hwloc XML, no GPU, no
# RDMA NIC, bad usage.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_topo.sh: N passed, N failed".
#
#   tests/check/doctor_topo.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_topo.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/topo
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

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

# picture NAME PYTHON_EXPR: $tmp/out rendered by dot -Tsvg, and the expression
# true over what the SVG's text positions say: legend (the texts of the graph's
# own label), labels (the edge labels), close (pairs of edge labels nearer than
# half a character: their boxes, each widened by a quarter of the font size on
# either side, meet), crossed (an edge's line passing through another edge's
# label), covered (an edge label on a node's or cluster's text), width and
# height (points). Text boxes: a monospace character is 0.6 of the font size
# wide, another 0.7 (Times capitals); 0.8 of it above the baseline, 0.2 below.
cat >"$tmp/picture.py" <<'PY'
import re, sys, xml.etree.ElementTree as E

S = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
width, height = (float(v) for v in root.get("viewBox").split()[2:])


def box(t, pad):
    x, y, size = float(t.get("x")), float(t.get("y")), float(t.get("font-size", "14"))
    w = len(t.text or "") * size * (0.6 if "mono" in t.get("font-family", "") else 0.7)
    x0 = {"middle": x - w / 2, "end": x - w}.get(t.get("text-anchor"), x)
    return (x0 - pad * size, y - 0.8 * size, x0 + w + pad * size, y + 0.2 * size)


def meet(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def points(d):
    """The points of a path of cubic Beziers (dot's M x,y C ...), 20 per curve."""
    xy = [float(v) for v in re.findall(r"-?[0-9.]+", d)]
    p = list(zip(xy[0::2], xy[1::2]))
    out = [p[0]]
    for k in range(1, len(p) - 2, 3):
        for i in range(1, 21):
            u = i / 20
            out.append(tuple((1 - u) ** 3 * p[k - 1][j] + 3 * (1 - u) ** 2 * u * p[k][j] +
                             3 * (1 - u) * u * u * p[k + 1][j] + u ** 3 * p[k + 2][j] for j in (0, 1)))
    return out


groups = {c: [g for g in root.iter(S + "g") if g.get("class") == c] for c in ("graph", "node", "cluster", "edge")}
legend = [t.text for t in groups["graph"][0].findall(S + "text")]
edge_labels = [(i, t) for i, g in enumerate(groups["edge"]) for t in g.iter(S + "text")]
labels = [t.text for _, t in edge_labels]
close = [(a.text, b.text) for k, (_, a) in enumerate(edge_labels) for _, b in edge_labels[k + 1:]
         if meet(box(a, 0.25), box(b, 0.25))]
crossed = [(t.text, g.findtext(S + "title")) for i, g in enumerate(groups["edge"])
           for p in g.iter(S + "path") for j, t in edge_labels if j != i and
           any(box(t, 0)[0] + 3 < x < box(t, 0)[2] - 3 and box(t, 0)[1] + 1 < y < box(t, 0)[3] - 1
               for x, y in points(p.get("d")))]
covered = [(a.text, b.text) for _, a in edge_labels for g in groups["node"] + groups["cluster"]
           for b in g.iter(S + "text") if meet(box(a, 0), box(b, 0))]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY

# picture NAME PYTHON_EXPR: see picture.py above.
picture() {
	if ! dot -Tsvg "$tmp/out" >"$tmp/svg" 2>"$tmp/dot-err"; then
		not_ok "$1" "dot -Tsvg: $(head -c 300 "$tmp/dot-err")"
	elif python3 "$tmp/picture.py" "$tmp/svg" "$2" 2>"$tmp/dot-err"; then
		ok "$1"
	else
		not_ok "$1" "the picture does not satisfy: $2 $(head -c 300 "$tmp/dot-err")"
	fi
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	echo "# tests/check/doctor_topo.sh: $passed passed, $failed failed"
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
	has "topo dgx-h100: GPU0 (1b) and NIC0 (mlx5_0) are PIX" "$tmp/out" '^GPU0 +PIX +NODE '
	has "topo dgx-h100: the table's columns are NIC0 to NIC9, as nvidia-smi's" "$tmp/out" '^ +NIC0 +NIC1 .* NIC9 +NUMA$'
	has "topo dgx-h100: GPU7 (df) is PIX only to NIC9 (mlx5_11)" "$tmp/out" '^GPU7 +(SYS +){6}(NODE +){3}PIX +1$'
	has "topo dgx-h100: the GPU legend names GPU0's address" "$tmp/out" '^  GPU0 +0000:1b:00\.0 +NUMA 0$'
	has "topo dgx-h100: the GPU legend names GPU7's address" "$tmp/out" '^  GPU7 +0000:df:00\.0 +NUMA 1$'
	has "topo dgx-h100: rail group of GPU0" "$tmp/out" 'group 0: mlx5_0 +<- GPU0 PIX$'
	has "topo dgx-h100: storage NIC stands alone" "$tmp/out" 'group 8: mlx5_1 +\(near no GPU: stands alone\)'
	has "topo dgx-h100: NIC legend: index, name, address, NUMA node" "$tmp/out" '^  NIC6 +mlx5_6 +0000:9a:00\.0 +NUMA 1 '
	has "topo dgx-h100: NIC legend: mlx5_11 is NIC9" "$tmp/out" '^  NIC9 +mlx5_11 +0000:dc:00\.0 '
fi
if run "topo dgx-h100 --json" 0 topo --xml "$fx/dgx-h100.xml" --json; then
	json "topo dgx-h100 --json: 8 GPUs, 10 NICs, one-NIC rails" \
		'len(d["gpus"]) == 8 and len(d["nics"]) == 10 and all(len(g["rail"]) == 1 for g in d["gpus"])'
	json "topo dgx-h100 --json: names the command and the XML's host (its HostName), not this one" \
		"d['command'] == 'topo' and d['hostname'] == 'dgx-h100'"
	json "topo dgx-h100 --json: GPU 1b nearest first" \
		'd["gpus"][0]["pci"] == "0000:1b:00.0" and [g["index"] for g in d["gpus"]] == list(range(8)) and [n["index"] for n in d["nics"]] == list(range(10)) and d["groups"][7]["gpu_index"] == [7] and d["gpus"][0]["numa"] == 0 and d["gpus"][0]["nics"][0] == {"name": "mlx5_0", "pci": "0000:18:00.0", "path": "PIX", "same_package": True, "nccl_path": "PIX", "nccl_direct": True} and d["gpus"][0]["nics"][-1]["path"] == "SYS"'
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
	has "topo dgx-a100: GPU0 (07) is PXB to mlx5_0 and mlx5_1, SYS* to NUMA 1 of its socket" "$tmp/out" '^GPU0 +PXB +PXB +SYS\* +SYS\* +SYS +SYS '
	has "topo dgx-a100: shared rail group" "$tmp/out" 'group 0: mlx5_0,mlx5_1 +<- GPU0 PXB, GPU1 PXB$'
	has "topo dgx-a100: GPU NUMA node" "$tmp/out" '^  GPU6 +0000:b7:00\.0 +NUMA 5$'
fi
if run "topo dgx-a100 --json" 0 topo --xml "$fx/dgx-a100.xml" --json; then
	json "topo dgx-a100 --json: rails and groups" \
		'd["gpus"][1]["rail"] == ["mlx5_0", "mlx5_1"] and d["gpus"][1]["numa"] == 3 and d["groups"][0] == {"nics": ["mlx5_0", "mlx5_1"], "gpus": ["0000:07:00.0", "0000:0f:00.0"], "gpu_index": [0, 1]}'
fi

# EPYC NPS4 and Sapphire Rapids SNC2: every GPU's NICs are SYS, NCCL's name
# for both, but the table marks SYS* the NIC on the GPU's own socket, the
# rail takes it alone, and JSON says same_package.
if run "topo epyc-nps4" 0 topo --xml "$fx/epyc-nps4.xml"; then
	has "topo epyc-nps4: GPU0 (21) is SYS* to its socket's NIC, SYS to the other" "$tmp/out" '^GPU0 +SYS\* +SYS +1$'
	has "topo epyc-nps4: GPU2 (a1) is SYS to socket 0's NIC, SYS* to its own" "$tmp/out" '^GPU2 +SYS +SYS\* +5$'
	has "topo epyc-nps4: GPU2 is a1" "$tmp/out" '^  GPU2 +0000:a1:00\.0 +NUMA 5$'
	has "topo epyc-nps4: SYS* in the legend" "$tmp/out" "^  SYS\* = SYS, but between NUMA nodes of the GPU's own socket"
	has "topo epyc-nps4: one rail group per socket" "$tmp/out" 'group 0: mlx5_0 +<- GPU0 SYS\*, GPU1 SYS\*$'
	has "topo epyc-nps4: socket 1's rail group" "$tmp/out" 'group 1: mlx5_1 +<- GPU2 SYS\*, GPU3 SYS\*$'
fi
if run "topo epyc-nps4 --json" 0 topo --xml "$fx/epyc-nps4.xml" --json; then
	json "topo epyc-nps4 --json: SYS both, the own socket's NIC first and alone in the rail" \
		'd["gpus"][2]["nics"] == [{"name": "mlx5_1", "pci": "0000:c1:00.0", "path": "SYS", "same_package": True, "nccl_path": "SYS", "nccl_direct": False}, {"name": "mlx5_0", "pci": "0000:41:00.0", "path": "SYS", "same_package": False, "nccl_path": "SYS", "nccl_direct": False}] and d["gpus"][2]["rail"] == ["mlx5_1"] and d["gpus"][2]["package"] == 1 and d["nics"][0]["package"] == 0 and len(d["groups"]) == 2'
fi
if run "topo spr-snc2" 0 topo --xml "$fx/spr-snc2.xml"; then
	has "topo spr-snc2: GPU1 (39, NUMA 1) is SYS* to NUMA 0's NIC" "$tmp/out" '^GPU1 +SYS\* +SYS +1$'
	has "topo spr-snc2: the rail groups pair a NODE GPU and a SYS* one" "$tmp/out" 'group 0: mlx5_0 +<- GPU0 NODE, GPU1 SYS\*$'
	has "topo spr-snc2: the rail groups say SYS* ranks first" "$tmp/out" '^Rail groups \(each GPU uses the NICs at its best path class, SYS\* before SYS\):$'
fi
# No SYS* line where there is none.
if run "topo dgx-h100 (no SYS*)" 0 topo --xml "$fx/dgx-h100.xml"; then
	if grep -q 'SYS\*' "$tmp/out"; then
		not_ok "topo dgx-h100: no SYS* (one NUMA node per socket)" "$(grep 'SYS\*' "$tmp/out")"
	else
		ok "topo dgx-h100: no SYS* (one NUMA node per socket)"
	fi
fi

# An old dump: host bridges without locality are NUMA-UNKNOWN to others, not
# NODE (neither recorded) or SYS (one recorded), and rank after NODE.
if run "topo no-locality" 0 topo --xml "$fx/no-locality.xml"; then
	has "topo no-locality: GPU0 (04) is NODE, SYS, NUMA-UNKNOWN" "$tmp/out" '^GPU0 +NODE +SYS +NUMA-UNKNOWN +0$'
	has "topo no-locality: GPU2 (c1) knows nothing" "$tmp/out" '^GPU2 +NUMA-UNKNOWN +NUMA-UNKNOWN +NUMA-UNKNOWN +\?$'
	has "topo no-locality: NUMA-UNKNOWN in the legend" "$tmp/out" '^  NUMA-UNKNOWN = between PCIe host bridges, one of which hwloc recorded$'
	has "topo no-locality: GPU2's rail is all its NICs, tied" "$tmp/out" 'group 2: mlx5_0,mlx5_1,mlx5_2 <- GPU2 NUMA-UNKNOWN$'
fi
if run "topo no-locality --json" 0 topo --xml "$fx/no-locality.xml" --json; then
	json "topo no-locality --json: unknown ranks after NODE, before SYS" \
		'[(n["name"], n["path"], n["same_package"]) for n in d["gpus"][0]["nics"]] == [("mlx5_0", "NODE", True), ("mlx5_2", "NUMA-UNKNOWN", None), ("mlx5_1", "SYS", False)] and d["gpus"][1]["numa"] is None and d["gpus"][1]["package"] is None'
fi

# A NIC without PCI device: UNKNOWN, null in JSON, never in a rail.
if run "topo rxe-only --json" 0 topo --xml "$fx/rxe-only.xml" --json; then
	json "topo rxe-only --json: rxe0 has no PCI device" \
		'd["nics"] == [{"index": 0, "name": "rxe0", "pci": None, "numa": None, "package": None, "rail_gpus": 0, "on_pcie": False, "netdev": None, "netdev_pci": None}] and d["gpus"][0]["nics"][0]["path"] == "UNKNOWN" and d["gpus"][0]["nics"][0]["same_package"] is None and d["gpus"][0]["rail"] == []'
fi

# --dot: graphviz renders every fixture, and the graph names every GPU and NIC
# that topo --json lists, each GPU in a rail group's cluster.
for xml in "$fx"/*.xml; do
	m=$(basename "$xml" .xml)
	"$doctor" topo --xml "$xml" --json >"$tmp/json" 2>/dev/null
	want=$?
	if run "topo $m --dot exits $want, as topo does" "$want" topo --xml "$xml" --dot; then
		graph "topo $m --dot: dot renders it, with every GPU and NIC" \
			"all('GPU%d %s' % (i, g['pci']) in nodes for i, g in enumerate(json.load(open('$tmp/json'))['gpus'])) and all(any(n.startswith(x['name'] + ' ') for n in nodes) for x in json.load(open('$tmp/json'))['nics']) and len(clusters) == len(json.load(open('$tmp/json'))['groups'])"
	fi
done
# DGX H100: the tree from the NUMA node down to each GPU and its PIX NIC.
if run "topo dgx-h100 --dot" 0 topo --xml "$fx/dgx-h100.xml" --dot; then
	graph "topo dgx-h100 --dot: NUMA 0, host bridge, root port, switch, GPU 1b and mlx5_0" \
		"{('NUMA 0', 'host bridge 0000:[15-1b]', ''), ('host bridge 0000:[15-1b]', 'root port 0000:15:01.0', ''), ('root port 0000:15:01.0', 'PCIe switch 0000:16:00.0', ''), ('PCIe switch 0000:16:00.0', 'GPU0 0000:1b:00.0', ''), ('PCIe switch 0000:16:00.0', 'mlx5_0 0000:18:00.0', '')} <= edges"
	graph "topo dgx-h100 --dot: the rail edge carries PIX" \
		"('GPU0 0000:1b:00.0', 'mlx5_0 0000:18:00.0', 'PIX') in edges and ('GPU7 0000:df:00.0', 'mlx5_11 0000:dc:00.0', 'PIX') in edges and len([e for e in edges if e[2]]) == 8"
	graph "topo dgx-h100 --dot: rail groups are clusters, the storage NICs stand alone" \
		"clusters['rail group 0'] == {'GPU0 0000:1b:00.0', 'mlx5_0 0000:18:00.0'} and clusters['rail group 8 (stands alone)'] == {'mlx5_1 0000:29:00.0'} and len(clusters) == 10"
	has "topo dgx-h100 --dot: NUMA 1 for the second socket" "$tmp/out" 'numa1 \[label="NUMA 1"'
fi
# DGX A100: two switch levels, two GPUs and two NICs per cluster, PXB edges.
if run "topo dgx-a100 --dot" 0 topo --xml "$fx/dgx-a100.xml" --dot; then
	graph "topo dgx-a100 --dot: a shared rail of two GPUs and two NICs, PXB" \
		"clusters['rail group 0'] == {'GPU0 0000:07:00.0', 'GPU1 0000:0f:00.0', 'mlx5_0 0000:0c:00.0', 'mlx5_1 0000:12:00.0'} and {('GPU0 0000:07:00.0', 'mlx5_0 0000:0c:00.0', 'PXB'), ('GPU0 0000:07:00.0', 'mlx5_1 0000:12:00.0', 'PXB')} <= edges and sum(1 for e in edges if e[0] == 'PCIe switch 0000:01:00.0') == 4"
fi
# NPS4: each GPU's one rail edge goes to its own socket's NIC, marked SYS*.
if run "topo epyc-nps4 --dot" 0 topo --xml "$fx/epyc-nps4.xml" --dot; then
	graph "topo epyc-nps4 --dot: one SYS* edge per GPU, to its own socket's NIC" \
		"sorted(e[2] for e in edges if e[2]) == ['SYS*'] * 4 and any(e[0].endswith('0000:21:00.0') and e[1] == 'mlx5_0 0000:41:00.0' for e in edges) and not any(e[0].endswith('0000:21:00.0') and e[1].startswith('mlx5_1') for e in edges)"
fi
# The 8-GPU nodes as a picture: GPUs named as nvidia-smi topo -m names them,
# in bus order, the address beside; a legend of the path classes; edge labels
# apart from each other, from the other edges and from the boxes' text.
for m in dgx-a100 dgx-h100; do
	run "topo $m --dot" 0 topo --xml "$fx/$m.xml" --dot || continue
	"$doctor" topo --xml "$fx/$m.xml" --json >"$tmp/json"
	graph "topo $m --dot: GPU0 to GPU7 in bus order, the address beside" \
		"sorted(n for n in nodes if n.startswith('GPU')) == ['GPU%d %s' % (i, g['pci']) for i, g in enumerate(json.load(open('$tmp/json'))['gpus'])] and len(json.load(open('$tmp/json'))['gpus']) == 8 and sorted(g['pci'] for g in json.load(open('$tmp/json'))['gpus']) == [g['pci'] for g in json.load(open('$tmp/json'))['gpus']]"
	picture "topo $m --dot: a legend of the path classes" \
		"all(c in legend for c in ('PIX', 'PXB', 'PHB', 'NODE', 'SYS')) and 'at most one PCIe switch between GPU and NIC' in legend and 'across the interconnect between NUMA nodes' in legend"
	picture "topo $m --dot: no two edge labels within half a character of each other" "labels and not close"
	picture "topo $m --dot: no edge runs through another edge's label" "not crossed"
	picture "topo $m --dot: no edge label on a box's text" "not covered"
	picture "topo $m --dot: about as tall as wide (left to right)" "0.5 < width / height < 2"
done
run "topo dgx-a100 --dot" 0 topo --xml "$fx/dgx-a100.xml" --dot &&
	picture "topo dgx-a100 --dot: SYS* in the legend (NPS4)" "'SYS*' in legend"
if run "topo no-locality --dot" 0 topo --xml "$fx/no-locality.xml" --dot; then
	picture "topo no-locality --dot: NUMA-UNKNOWN in the legend, labels apart" \
		"'NUMA-UNKNOWN' in legend and 'SYS*' not in legend and not close and not crossed and not covered"
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
# The text fits a terminal: no line over 80 columns, on every fixture.
for xml in "$fx"/*.xml; do
	m=$(basename "$xml" .xml)
	"$doctor" topo --xml "$xml" >"$tmp/out" 2>/dev/null
	long=$(awk 'length($0) > 80 { printf "line %d (%d columns): %s\n", NR, length($0), $0 }' "$tmp/out")
	if [ ! -s "$tmp/out" ]; then
		not_ok "topo $m: a report" "no output"
	elif [ -n "$long" ]; then
		not_ok "topo $m: no line over 80 columns" "$(head -c 300 <<<"$long")"
	else
		ok "topo $m: no line over 80 columns"
	fi
done

# A VM's rxe devices, which hwloc does not list (no PCI function of their
# own): topo lists what check lists, class/infiniband, by the netdev each
# sits on. The saved tree is the rxe-vm node's, its topo.xml as a hwloc
# without virtual OS devices writes it, rxe0 on the virtio NIC eth0 (rxe's
# "parent"), rxe1 on veth0 (its GID's netdev).
cp -a tests/lib/fixtures/sysfs-gdr/rxe-vm "$tmp/vm"
sed -i '/name="rxe0" osdev_type="3"/,/<\/object>/d' "$tmp/vm/topo.xml"
printf 'eth0\n' >"$tmp/vm/devices/virtual/infiniband/rxe0/parent"
mkdir -p "$tmp/vm/devices/virtual/infiniband/rxe1/ports/1/gid_attrs/ndevs" \
	"$tmp/vm/devices/pci0000:00/0000:00:03.0/net/eth0" "$tmp/vm/class/net"
printf 'veth0\n' >"$tmp/vm/devices/virtual/infiniband/rxe1/ports/1/gid_attrs/ndevs/0"
ln -s ../../devices/virtual/infiniband/rxe1 "$tmp/vm/class/infiniband/rxe1"
ln -s ../../../0000:00:03.0 "$tmp/vm/devices/pci0000:00/0000:00:03.0/net/eth0/device"
ln -s ../../devices/pci0000:00/0000:00:03.0/net/eth0 "$tmp/vm/class/net/eth0"
if run "topo --sysfs-root (rxe devices hwloc does not list) exits 4 (no GPU)" 4 topo --sysfs-root "$tmp/vm"; then
	has "topo rxe VM: counts the rxe devices, not on PCIe" "$tmp/out" ' 0 GPU\(s\), 2 RDMA NIC\(s\), 2 not on PCIe$'
	has "topo rxe VM: rxe0 on its netdev, at the netdev's PCI function" "$tmp/out" '^  NIC0 +rxe0 +on eth0 +netdev at 0000:00:03\.0, not on PCIe itself$'
	has "topo rxe VM: rxe1 on veth0, virtual" "$tmp/out" '^  NIC1 +rxe1 +on veth0 +not on PCIe: no path class, no rail$'
	has "topo rxe VM: no RDMA NIC missing" "$tmp/err" '^gdx-doctor topo: no NVIDIA GPU found'
fi
if run "topo --sysfs-root --json (rxe)" 4 topo --sysfs-root "$tmp/vm" --json; then
	json "topo rxe VM --json: both devices, off PCIe, by their netdev" \
		'd["nics"] == [{"index": 0, "name": "rxe0", "pci": None, "numa": None, "package": None, "rail_gpus": 0, "on_pcie": False, "netdev": "eth0", "netdev_pci": "0000:00:03.0"}, {"index": 1, "name": "rxe1", "pci": None, "numa": None, "package": None, "rail_gpus": 0, "on_pcie": False, "netdev": "veth0", "netdev_pci": None}] and d["groups"] == [] and d["hostname"] == "gdr-vm"'
fi
if run "topo --sysfs-root --dot (rxe)" 4 topo --sysfs-root "$tmp/vm" --dot; then
	graph "topo rxe VM --dot: the rxe devices in a box of their own, by their netdev" \
		"clusters == {'not on PCIe (no path class, no rail)': {'rxe0 on eth0 at 0000:00:03.0', 'rxe1 on veth0'}}"
fi
# check lists the same devices from the same tree.
"$doctor" topo --sysfs-root "$tmp/vm" --json >"$tmp/topo.json" 2>/dev/null
GDX_GDR_FACTS="$tmp/vm/facts" "$doctor" check --sysfs-root "$tmp/vm" --json >"$tmp/out" 2>/dev/null
json "check on the same tree lists the NICs topo lists" \
	"[n['name'] for n in d['nics']] == [n['name'] for n in json.load(open('$tmp/topo.json'))['nics']] == ['rxe0', 'rxe1']"
# A device hwloc lists without PCI (rxe-only.xml): its netdev from the tree.
cp -a "$tmp/vm" "$tmp/vm2"
cp "$fx/rxe-only.xml" "$tmp/vm2/topo.xml"
if run "topo --sysfs-root, rxe0 in hwloc's topology" 0 topo --sysfs-root "$tmp/vm2"; then
	has "topo: a NIC hwloc lists without PCI shows its netdev" "$tmp/out" '^  NIC0 +rxe0 +on eth0 +NUMA \? '
	has "topo: rxe1, which hwloc does not list, after it" "$tmp/out" '^  NIC1 +rxe1 +on veth0 '
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
# Published dumps carry XML comments, which hwloc's parser without libxml2
# refuses: topo reads them, as the same file without them.
if run "topo published-comments (XML comments)" 0 topo --xml "$fx/published-comments.xml"; then
	"$doctor" topo --xml "$fx/remote-nic.xml" | sed '0,/GPU(s)/d' >"$tmp/plain"
	if sed '0,/GPU(s)/d' "$tmp/out" | cmp -s - "$tmp/plain"; then
		ok "topo published-comments: the report of remote-nic, the same file without comments"
	else
		not_ok "topo published-comments: the report of remote-nic" "$(sed '0,/GPU(s)/d' "$tmp/out" | diff - "$tmp/plain" | head -c 300)"
	fi
fi
sed 's/$/\r/' "$fx/remote-nic.xml" >"$tmp/crlf.xml"
run "topo with CRLF line ends reads the file" 0 topo --xml "$tmp/crlf.xml" &&
	has "topo with CRLF line ends reads the file" "$tmp/out" '^GPU1 +SYS +0$'
sed '6i <!-- never closed' "$fx/remote-nic.xml" >"$tmp/open-comment.xml"
if run "topo with a comment never closed exits 3" 3 topo --xml "$tmp/open-comment.xml"; then
	has "topo with a comment never closed says where it starts" "$tmp/err" 'open-comment\.xml is not an hwloc XML topology: the XML comment that starts on line 6 is never closed'
fi
# hwloc 3.0's format: named, with the hwloc that reads it.
if run "topo hwloc3-format exits 3" 3 topo --xml "$fx/unreadable/hwloc3-format.xml"; then
	has "topo hwloc3-format: names the format and the hwloc it takes" "$tmp/err" 'hwloc3-format\.xml is an hwloc 3\.0 XML topology, a format this hwloc \([0-9.]+\) cannot read: use hwloc 3\.0 or later'
fi
# Well-formed XML that hwloc's built-in parser refuses (single quotes): read
# where hwloc has libxml2, else refused with the fix.
sed "s/\"/'/g" "$fx/remote-nic.xml" >"$tmp/quotes.xml"
"$doctor" topo --xml "$tmp/quotes.xml" >"$tmp/out" 2>"$tmp/err"
case $? in
0) ok "topo single-quoted XML: read (this hwloc has libxml2)" ;;
3) has "topo single-quoted XML: refused, naming libhwloc-plugins" "$tmp/err" "hwloc's built-in XML parser cannot read it .*libhwloc-plugins" ;;
*) not_ok "topo single-quoted XML: exit status 0 or 3" "$(head -c 300 "$tmp/err")" ;;
esac
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

echo "# tests/check/doctor_topo.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
