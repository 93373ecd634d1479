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

# check's account of the plugin's start-up, run on this node: what NCCL is
# given (the INIT line's devices), the interface, and each port's device
out=$(build/gdx-doctor check --json 2>/dev/null)
if python3 -c "
import json, sys
j = json.loads(sys.argv[1])
s = j['start']
assert s['started'] is True and s['step'] is None and s['warns'] == [], s
assert all('rxe%d:1/RoCE/' % i in s['using'] for i in range(4)), s['using']
assert s['oob'] and s['oob'].split()[0] in ('lo', 'veth0', 'veth1', 'veth2', 'veth3'), s['oob']
devs = sorted(p['plugin'] for p in j['ports'])
assert devs == ['device 0', 'device 1', 'device 2', 'device 3'], devs
assert all(p['active_mtu'] == 1024 for p in j['ports']), [p['active_mtu'] for p in j['ports']]
" "$out" 2>"$tmp/err"; then
	ok "check --json: the plugin's start-up, every port a device of it, their MTU"
else
	not_ok "check --json: the plugin's start-up, every port a device of it, their MTU" "$(tail -1 "$tmp/err")"
fi
out=$(NCCL_IB_HCA=mlx5 build/gdx-doctor check --json 2>/dev/null)
if python3 -c "
import json, sys
s = json.loads(sys.argv[1])['start']
assert s['started'] is False and s['step'] == 'the RDMA devices', s
assert s['warns'][0].startswith('NCCL_IB_HCA=\"mlx5\" keeps none of the 4 port(s)'), s
" "$out" 2>"$tmp/err"; then
	ok "check --json: a start-up refused, its step and WARN"
else
	not_ok "check --json: a start-up refused, its step and WARN" "$(tail -1 "$tmp/err")"
fi

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
