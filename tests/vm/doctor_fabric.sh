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
# the MTU is the device's own (ibv_devinfo's active_mtu), also of a port
# the plugin's start-up did not take, and of every port when it takes none
for hca in rxe0 mlx5; do
	out=$(NCCL_IB_HCA=$hca build/gdx-doctor check --json 2>/dev/null)
	want=$(ibv_devinfo 2>/dev/null | awk '/active_mtu/ { print $2; exit }')
	if python3 -c "
import json, sys
j = json.loads(sys.argv[1])
mtus = [p['active_mtu'] for p in j['ports']]
assert len(mtus) == 4 and all(m == int(sys.argv[2]) for m in mtus), (mtus, sys.argv[2])
" "$out" "$want" 2>"$tmp/err"; then
		ok "check --json with NCCL_IB_HCA=$hca: every port's active_mtu is ibv_devinfo's ($want)"
	else
		not_ok "check --json with NCCL_IB_HCA=$hca: every port's active_mtu is ibv_devinfo's" "$(tail -1 "$tmp/err")"
	fi
done

# memlock: the kernel pins registered pages past RLIMIT_MEMLOCK for a
# process with CAP_IPC_LOCK (root here): a note, never "will fail"; a user
# without it, on these staged rxe ports (no GPU), registers NCCL's host
# buffers of NCCL_BUFFSIZE: that will fail below 4 MiB, and gdx-bench's own
# 1 MiB buffers fail to register too.
out=$(ulimit -l 1024 && build/gdx-doctor check 2>&1)
# (check's own lines: the start-up line quotes the plugin's init WARN,
# which gdx_gdr_memlock_check words as before)
if grep -q '^  \[\(broken\|degraded\)\] memlock' <<<"$out"; then
	not_ok "ulimit -l 1024 as root: no memlock problem" "$(grep memlock <<<"$out")"
elif grep -qF '[note] memlock limit 1 MiB binds no registration here: this process has CAP_IPC_LOCK' <<<"$out"; then
	ok "ulimit -l 1024 as root: a note, CAP_IPC_LOCK lifts it"
else
	not_ok "ulimit -l 1024 as root: a note, CAP_IPC_LOCK lifts it" "$(grep memlock <<<"$out")"
fi
if (ulimit -l 1024 && build/gdx-bench -m bw -b 1M -e 1M -n 4 -w 1 >/dev/null 2>&1); then
	ok "ulimit -l 1024 as root: 1 MiB messages run"
else
	not_ok "ulimit -l 1024 as root: 1 MiB messages run" "gdx-bench failed"
fi
if command -v setpriv >/dev/null; then
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	out=$(ulimit -l 1024 && "${as_user[@]}" build/gdx-doctor check 2>&1)
	case "$out" in
	*"[broken] memlock limit 1 MiB is below NCCL_BUFFSIZE (4 MiB)"*"will fail"*)
		ok "ulimit -l 1024 without CAP_IPC_LOCK, staged: registering will fail" ;;
	*) not_ok "ulimit -l 1024 without CAP_IPC_LOCK, staged: registering will fail" "$(grep memlock <<<"$out")" ;;
	esac
	if (ulimit -l 1024 && "${as_user[@]}" build/gdx-bench -m bw -b 1M -e 1M -n 4 -w 1 >/dev/null 2>&1); then
		not_ok "ulimit -l 1024 without CAP_IPC_LOCK: 1 MiB messages fail to register" "gdx-bench ran"
	else
		ok "ulimit -l 1024 without CAP_IPC_LOCK: 1 MiB messages fail to register"
	fi
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
