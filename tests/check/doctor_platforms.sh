#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The machines sites buy now, as gdx-doctor check judges them for the NCCL
# that will load the plugin: the Grace fixtures of tests/lib/fixtures/sysfs-gdr
# (gh200, gb200-tray, gb300, dgx-h100-bf3: constructed from the published shapes, see
# ../lib/fixtures/topo/gen_fixtures.py), each GPU's rail (its nearest NICs),
# the class this plugin's topology gives it, the path type NCCL computes and
# whether NCCL goes direct there, by NCCL version and setting (NCCL's
# ncclTopoCheckGdr in src/graph/paths.cc of each tag). The table below is the
# claim; every row is read back from check --json.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_platforms.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
unset NCCL_GDX_GDR NCCL_NET_GDR_LEVEL NCCL_NET_GDR_C2C

# gb300's facts name each ConnectX-8's Data Direct function, where the plugin
# and NCCL place the NIC by default (NCCL_IB_DATA_DIRECT=1; 0 and 2 leave it
# at its own function).
# fixture  NCCL    setting              GPU           rail           class NCCL   direct exit
table='
gh200      2.28.9  -                    0009:01:00.0  mlx5_0         NODE  P2C    true   0
gh200      2.27.7  -                    0009:01:00.0  mlx5_0         NODE  P2C    true   0
gh200      2.29.2  -                    0009:01:00.0  mlx5_0         NODE  P2C    true   0
gh200      2.26.6  -                    0009:01:00.0  mlx5_0         NODE  PHB    false  1
gh200      2.26.6  NCCL_NET_GDR_C2C=1   0009:01:00.0  mlx5_0         NODE  PHB    true   0
gh200      2.25.1  -                    0009:01:00.0  mlx5_0         NODE  PHB    false  1
gh200      2.28.9  NCCL_NET_GDR_C2C=0   0009:01:00.0  mlx5_0         NODE  P2C    false  1
gh200      2.28.9  NCCL_NET_GDR_LEVEL=PXB 0009:01:00.0 mlx5_0        NODE  P2C    true   0
gh200      2.29.2  NCCL_NET_GDR_LEVEL=PXB 0009:01:00.0 mlx5_0        NODE  P2C    false  1
gb200-tray 2.28.9  -                    0008:01:00.0  mlx5_0,mlx5_1,mlx5_4 NODE P2C true 0
gb200-tray 2.28.9  -                    0019:01:00.0  mlx5_2,mlx5_3,mlx5_5 NODE P2C true 0
gb200-tray 2.25.1  -                    0018:01:00.0  mlx5_2,mlx5_3,mlx5_5 NODE PHB false 1
gb200-tray 2.28.9  NCCL_NET_GDR_C2C=0   0008:01:00.0  mlx5_0,mlx5_1,mlx5_4 NODE P2C false 1
gb300      2.28.9  -                    0008:03:00.0  mlx5_0         PIX   PIX    true   0
gb300      2.25.1  -                    0018:03:00.0  mlx5_2         PIX   PIX    true   0
gb300      2.28.9  NCCL_IB_DATA_DIRECT=0 0008:03:00.0 mlx5_0,mlx5_1  NODE  P2C    true   0
gb300      2.25.1  NCCL_GDX_DATA_DIRECT=0 0018:03:00.0 mlx5_2,mlx5_3 NODE  PHB    false  1
gb300      2.28.9  NCCL_GDX_DATA_DIRECT=2 0009:03:00.0 mlx5_0,mlx5_1 NODE  P2C    true   0
dgx-h100-bf3 2.28.9 -                   0000:16:00.0  mlx5_0         PIX   PIX    true   0
dgx-h100-bf3 2.25.1 -                   0000:ba:00.0  mlx5_7         PIX   PIX    true   0
dgx-h100-bf3 2.28.9 NCCL_NET_GDR_LEVEL=PIX 0000:36:00.0 mlx5_2       PIX   PIX    true   0
'

# One row: check --json with that NCCL (the facts' "nccl" line) and setting,
# the GPU's rail from topo --json, and its nearest pair from check's pairs.
row() {
	local fixture=$1 nccl=$2 setting=$3 gpu=$4 rail=$5 cls=$6 type=$7 direct=$8 want=$9
	local name="$fixture, NCCL $nccl, $setting: GPU $gpu" rc env=()

	[ "$setting" != - ] && env=("$setting")
	sed "s/^nccl .*/nccl $nccl/" "$fx/$fixture/facts" >"$tmp/facts"
	env "${env[@]}" GDX_GDR_FACTS="$tmp/facts" "$doctor" check --json --sysfs-root \
		"$fx/$fixture" >"$tmp/check.json" 2>"$tmp/err"
	rc=$?
	if python3 - "$tmp/check.json" "$gpu" "$rail" "$cls" "$type" "$direct" \
		"$rc" "$want" >"$tmp/why" <<'PY'; then
import json, sys
check = json.load(open(sys.argv[1]))
gpu, rail, cls, typ, direct, rc, want = sys.argv[2:]
# The rail: the GPU's NICs at its best class, as the plugin's topology
# groups them (a Data Direct NIC placed at its DMA function).
order = ["PIX", "PXB", "PHB", "NODE", "NUMA-UNKNOWN", "SYS", "UNKNOWN"]
mine = [p for p in check["pairs"] if p["gpu"] == gpu]
best = min(order.index(p["path"]) for p in mine)
got_rail = sorted(p["nic"] for p in mine if order.index(p["path"]) == best)
pairs = [p for p in mine if p["nic"] == rail.split(",")[0]]
if got_rail != rail.split(","):
    sys.exit(print("rail %s, want %s" % (got_rail, rail)))
if len(pairs) != 1:
    sys.exit(print("no pair %s-%s" % (gpu, rail)))
p = pairs[0]
got = (p["path"], p["nccl_path"], str(p["nccl_direct"]).lower(), rc)
if got != (cls, typ, direct, want):
    sys.exit(print("class, NCCL, direct, exit %s, want %s; %s" % (got, (cls, typ, direct, want), p["verdict"]["line"] if isinstance(p.get("verdict"), dict) else p)))
PY
		ok "$name: $cls, NCCL's $type, direct $direct, exit $want"
	else
		not_ok "$name" "$(cat "$tmp/why") $(head -c 300 "$tmp/err")"
	fi
}

while read -r fixture nccl setting gpu rail cls type direct want; do
	[ -n "$fixture" ] && row "$fixture" "$nccl" "$setting" "$gpu" "$rail" "$cls" "$type" "$direct" "$want"
done <<<"$table"

# The text names what NCCL does, in its words, and says why a staged pair is.
sed "s/^nccl .*/nccl 2.25.1/" "$fx/gh200/facts" >"$tmp/facts"
exits "gh200 with NCCL 2.25: staged, with the version that takes the C2C path" 1 \
	"NCCL 2.27 and later use GPUDirect RDMA over NVLink-C2C here (P2C)" \
	env GDX_GDR_FACTS="$tmp/facts" "$doctor" check --quiet --sysfs-root "$fx/gh200"
exits "gh200 with NCCL_NET_GDR_C2C=0: staged, and the setting named" 1 \
	"P2C is beyond NCCL_NET_GDR_LEVEL=PXB (NCCL's default) (NCCL_NET_GDR_C2C=1 lets it use this C2C path)" \
	env NCCL_NET_GDR_C2C=0 "$doctor" check --quiet --sysfs-root "$fx/gh200"
exits "gh200 with NCCL 2.28.9: the pair's NCCL class is P2C, direct" 0 \
	"NCCL 2.28.9 uses it at P2C" "$doctor" check --sysfs-root "$fx/gh200"
# A saved hwloc file cannot show C2C: said, and not counted as degraded ...
exits "topo gh200: direct if C2C-attached, staged otherwise" 0 \
	"direct (P2C) if the GPU is on NVLink-C2C, as on Grace; staged otherwise" \
	"$doctor" topo --xml "$fx/gh200/topo.xml"
grep -v '^gpu ' "$fx/gh200/facts" >"$tmp/facts"
echo "gpu 0009:01:00.0 gdr=1 dmabuf=1" >>"$tmp/facts"
exits "check gh200, C2C unknown: direct if C2C-attached, healthy" 0 \
	"direct if C2C-attached, staged otherwise" \
	env GDX_GDR_FACTS="$tmp/facts" "$doctor" check --sysfs-root "$fx/gh200"
# ... but an x86 machine's GPUs are never C2C: there NODE is staged, plainly.
exits "topo dgx-h100 (x86): no C2C condition" 0 "" \
	"$doctor" topo --xml tests/lib/fixtures/topo/dgx-h100.xml
if "$doctor" topo --xml tests/lib/fixtures/topo/genoa-h100.xml | grep -q "NVLink-C2C"; then
	not_ok "topo genoa-h100 (x86): no C2C condition" "it names C2C"
else
	ok "topo genoa-h100 (x86): no C2C condition"
fi

report_end tests/check/doctor_platforms.sh
