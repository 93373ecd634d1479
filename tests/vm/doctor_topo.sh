#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: gdx-doctor topo on the real rxe devices, which hwloc does
# not list (they have no PCI function of their own): it lists the RDMA
# devices check lists, each on the veth it sits on, in the text, the JSON
# and the --dot graph. It used to say "0 RDMA NIC(s)" and draw only the
# legend.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

doctor=${GDX_DOCTOR:-build/gdx-doctor}
# The rxe devices vm-init.sh made, "rxe0 rxe1 rxe2 rxe3", and how many.
rxe=${GDX_VM_RXE:-$(cd /sys/class/infiniband 2>/dev/null && printf '%s ' *)}
read -ra devs <<<"$rxe"
n=${#devs[@]}
if [ "$n" -lt 1 ]; then
	not_ok "the VM has rxe devices" "/sys/class/infiniband is empty"
	report_end tests/vm/doctor_topo.sh
	exit
fi

# No GPU here: exit 4 (no NVIDIA GPU), never 5 (no RDMA NIC).
"$doctor" topo >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 4 ] && grep -q 'no NVIDIA GPU found' "$tmp/err" && ! grep -q 'no RDMA NIC' "$tmp/err"; then
	ok "topo: exit 4 (no GPU), the RDMA NICs found"
else
	not_ok "topo: exit 4 (no GPU), the RDMA NICs found" "exit $rc: $(head -c 300 "$tmp/err")"
fi
if grep -Eq "^Topology of this machine: 0 GPU\(s\), $n RDMA NIC\(s\), $n not on PCIe$" "$tmp/out"; then
	ok "topo: counts the $n rxe devices, not on PCIe"
else
	not_ok "topo: counts the $n rxe devices, not on PCIe" "$(head -3 "$tmp/out")"
fi
k=0
for d in "${devs[@]}"; do
	# Each one on the netdev its port's GID is on (vm-init.sh: rxeK on vethK).
	nd=$(cat "/sys/class/infiniband/$d/ports/1/gid_attrs/ndevs/0" 2>/dev/null ||
		cat "/sys/class/infiniband/$d/parent")
	if grep -Eq "^  NIC$k +$d +on $nd +not on PCIe: no path class, no rail$" "$tmp/out"; then
		ok "topo: NIC$k $d on $nd"
	else
		not_ok "topo: NIC$k $d on $nd" "$(sed -n '/^NICs:/,$p' "$tmp/out" | head -8)"
	fi
	k=$((k + 1))
done
if awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$tmp/out"; then
	ok "topo: no line over 80 columns"
else
	not_ok "topo: no line over 80 columns" "$(awk 'length($0) > 80' "$tmp/out" | head -3)"
fi

# JSON: the same devices as check's, each with its netdev, off PCIe.
"$doctor" topo --json >"$tmp/topo.json" 2>/dev/null
"$doctor" check --json >"$tmp/check.json" 2>/dev/null
if python3 - "$tmp/topo.json" "$tmp/check.json" "$rxe" 2>"$tmp/err" <<'PY'; then
import json, sys
t = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
want = sys.argv[3].split()
names = [n["name"] for n in t["nics"]]
assert names == want, (names, want)
assert names == [n["name"] for n in c["nics"]], (names, c["nics"])
for i, n in enumerate(t["nics"]):
    assert n["index"] == i and n["on_pcie"] is False and n["pci"] is None, n
    assert n["netdev"] and n["netdev"].startswith("veth"), n
    assert n["netdev_pci"] is None, n
PY
	ok "topo --json: the NICs check lists, each on its veth, not on PCIe"
else
	not_ok "topo --json: the NICs check lists, each on its veth, not on PCIe" "$(tail -2 "$tmp/err")"
fi

# --dot: the devices in a box of their own, not only the legend.
"$doctor" topo --dot >"$tmp/dot" 2>/dev/null
if ! command -v dot >/dev/null; then
	# The VM image may have no graphviz: the text of the graph, then.
	if [ "$(grep -c '^    nic[0-9]* \[label="rxe[0-9]*\\non veth[0-9]*"' "$tmp/dot")" -eq "$n" ] &&
		grep -q 'subgraph cluster_not_on_pcie' "$tmp/dot"; then
		ok "topo --dot: a node per rxe device, in the not-on-PCIe box"
	else
		not_ok "topo --dot: a node per rxe device, in the not-on-PCIe box" "$(head -c 600 "$tmp/dot")"
	fi
elif dot -Tjson "$tmp/dot" >"$tmp/dot.json" 2>"$tmp/err" &&
	python3 - "$tmp/dot.json" "$rxe" 2>"$tmp/err" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split()
labels = [o.get("label", "").replace("\\n", " ") for o in d.get("objects", []) if "nodes" not in o]
got = sorted(l.split()[0] for l in labels if l.startswith("rxe"))
assert got == sorted(want), (got, want)
assert all(" on veth" in l for l in labels if l.startswith("rxe")), labels
PY
	ok "topo --dot: a node per rxe device, on its veth"
else
	not_ok "topo --dot: a node per rxe device, on its veth" "$(tail -2 "$tmp/err")"
fi
report_end tests/vm/doctor_topo.sh
