#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the VM: gdx-doctor check's fabric part on the real rxe devices says
# what the plugin's own init says of them (relaxed ordering taken, no ECE,
# no adaptive routing on RoCE unless asked), and follows the variables.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/report.sh

# holds NAME PYTHON-ASSERTION-OVER-j [VAR=VALUE...]: check --json's fabric
holds() {
	local name=$1 cond=$2 out
	shift 2
	out=$(env "$@" build/gdx-doctor check --json 2>/dev/null)
	if python3 -c "import json,sys; j=json.loads(sys.argv[1])['fabric']; assert $cond, j" \
		"$out" 2>"$tmp/err"; then
		ok "$name"
	else
		not_ok "$name" "$(tail -1 "$tmp/err")"
	fi
}

rxe0='[p for p in j["ports"] if p["device"] == "rxe0" and p["port"] == 1][0]'
holds "rxe0 port 1 is listed" "len([p for p in j['ports'] if p['device'] == 'rxe0']) == 1"
holds "relaxed ordering: rxe takes it" "${rxe0}['relaxed_ordering'] == 'on (the provider takes it)'"
holds "ECE: rxe has none" "${rxe0}['ece'].startswith('off (the provider has none')"
holds "no adaptive routing on RoCE by default" "${rxe0}['adaptive_routing'] is False"
holds "adaptive routing when asked" "${rxe0}['adaptive_routing'] is True" NCCL_GDX_ADAPTIVE_ROUTING=1
holds "one QP per rail by default, failover off (net_ib's default)" \
	"j['qps_per_connection'] == 1 and j['failover'] is False and j['split_data_on_qps'] is False"
holds "NCCL's QPs per connection taken" "j['qps_per_connection'] == 4" NCCL_IB_QPS_PER_CONNECTION=4
holds "relaxed ordering off when asked" \
	"${rxe0}['relaxed_ordering'] == 'off (NCCL_GDX_PCI_RELAXED_ORDERING=0)'" \
	NCCL_GDX_PCI_RELAXED_ORDERING=0
holds "ECE off when asked" "${rxe0}['ece'] == 'off (NCCL_GDX_ECE_ENABLE=0)'" NCCL_GDX_ECE_ENABLE=0

# the plugin's own init line on rxe0 says the same
line=$(NCCL_DEBUG=INFO build/gdx-bench -m lat -n 10 -w 2 2>&1 | grep -m1 'device [0-9]*: rxe0 port 1')
case "$line" in
*"adaptive routing off, relaxed ordering on (the provider takes it)"*) ok "the plugin's init agrees" ;;
*) not_ok "the plugin's init agrees" "'$line'" ;;
esac
out=$(build/gdx-doctor check 2>/dev/null)
case "$out" in
*"Fabric (what each connection gets)"*"rxe0       1    off  on (the provider takes it)"*)
	ok "the human report has the section" ;;
*) not_ok "the human report has the section" "$(printf '%s' "$out" | sed -n '/Fabric/,$p' | head -8)" ;;
esac
report_end tests/vm/doctor_fabric.sh
