#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What only a machine with a real GPU shows, in one run (the project's own
# machines have none; CI only checks that this parses and that its program
# builds). As root, from the repository root, after `make`:
#
#   scripts/gpu-check.sh [--no-rxe]
#
#   1. the GPU, driver and CUDA as gdx-doctor check sees them: the CUDA
#      driver probe, GPUDirect RDMA and DMA-BUF attributes, BAR1, the
#      peer-memory module, each GPU-NIC verdict (build/gdx-doctor check --json);
#   2. gdx-bench with CUDA buffers (-M cuda): the GPU path of the benchmark,
#      or the refusal that names the device when the NIC cannot reach GPU
#      memory (rxe cannot);
#   3. with rdma_rxe (unless --no-rxe): two rxe devices over a veth pair, made
#      as the test VM makes them (scripts/vm-init.sh wires), then a real NCCL
#      all-reduce through the plugin between two processes on the one GPU,
#      each told it is a host of its own (NCCL_HOSTID), so that NCCL's net
#      transport carries it (build/tests/gpu/allreduce, every element
#      checked), NCCL_DEBUG=INFO lines of the plugin shown.
# Everything it prints is the report; it exits non-zero when a step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

rxe=1
case ${1:-} in
--no-rxe) rxe=0 ;;
"") ;;
*)
	echo "usage: scripts/gpu-check.sh [--no-rxe]" >&2
	exit 2
	;;
esac

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# The report's files, in a directory of our own (mode 700, a name no one
# guessed): a neighbour on a shared node cannot place or read them.
out=$(mktemp -d -t gdx-gpu-check.XXXXXX) || exit 2
failed=0
step() { printf '\n=== %s\n' "$*"; }
bad() {
	echo "FAILED: $*"
	failed=$((failed + 1))
}

step "machine"
uname -r
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total --format=csv || bad "nvidia-smi"
for m in nvidia_peermem nv_peer_mem rdma_rxe ib_uverbs; do
	printf '%-16s %s\n' "$m" "$(lsmod | awk -v m="$m" '$1 == m { print "loaded"; f = 1 } END { if (!f) print "not loaded" }')"
done
ls "$CUDA_HOME"/lib64/libnccl.so* "$CUDA_HOME"/lib64/libcudart.so* 2>/dev/null

step "gdx-doctor check (CUDA driver probe, GPUDirect RDMA, DMA-BUF, BAR1)"
[ -x build/gdx-doctor ] || make build/gdx-doctor >/dev/null || bad "make build/gdx-doctor"
# The plugin as the all-reduce below loads it (check judges NCCL_NET_PLUGIN
# as $CUDA_HOME's NCCL would open it).
export NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx.so
LD_LIBRARY_PATH=$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} build/gdx-doctor check
echo "(exit $?: 0 healthy, 1 degraded, 2 broken)"
LD_LIBRARY_PATH=$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} build/gdx-doctor check --json \
	>"$out/check.json"
echo "JSON report: $out/check.json"

step "allreduce (NCCL's all-reduce through the plugin)"
mkdir -p build/tests/gpu
if ! gcc -std=gnu11 -O2 -Wall -I"$CUDA_HOME/include" -o build/tests/gpu/allreduce \
	tests/gpu/allreduce.c -L"$CUDA_HOME/lib64" -lcudart -lnccl; then
	bad "building tests/gpu/allreduce.c"
	rxe=0
fi

cleanup_wires() {
	ip link del veth0 2>/dev/null
	while ip rule del pref 10 2>/dev/null; do :; done
	while ip rule del pref 20 2>/dev/null; do :; done
	ip route flush table 100 2>/dev/null
	if ! ip rule show | grep -q '^0:.*lookup local'; then
		ip rule add pref 0 lookup local
		ip rule del pref 1000 lookup local 2>/dev/null
	fi
}

if [ "$rxe" -eq 1 ]; then
	step "rxe0 <-> rxe1 over veth0/veth1"
	if [ "$(id -u)" -ne 0 ]; then
		bad "making rxe devices needs root (or run with --no-rxe)"
		rxe=0
	elif ! modprobe rdma_rxe; then
		bad "modprobe rdma_rxe: this kernel has no Soft-RoCE"
		rxe=0
	elif ! scripts/vm-init.sh wires 1 1500; then
		bad "making the veth pair and rxe devices"
		cleanup_wires
		rxe=0
	else
		trap 'rdma link delete rxe0 2>/dev/null; rdma link delete rxe1 2>/dev/null; cleanup_wires' EXIT
		ulimit -l unlimited
		ibv_devinfo -d rxe0 | grep -E 'hca_id|state|link_layer'
	fi
fi

if [ "$rxe" -eq 1 ]; then
	step "gdx-bench -M cuda over rxe (host <-> GPU buffers)"
	build/gdx-bench -M cuda -d rxe0 --peer-dev rxe1 -s 1M -n 20 -w 2
	echo "(exit $?; rxe has no path to GPU memory: a refusal that names rxe is the expected answer)"

	step "NCCL all-reduce, 2 ranks on one GPU seen as two hosts, NET/GDX over rxe"
	id=$out/nccl-id
	export LD_LIBRARY_PATH=$CUDA_HOME/lib64:$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	common=(NCCL_NET_PLUGIN="$PWD/build/libnccl-net-gdx.so" NCCL_NET=GDX NCCL_DEBUG=INFO
		NCCL_DEBUG_SUBSYS=INIT$',NET' NCCL_GDX_SOCKET_IFNAME=veth NCCL_SOCKET_IFNAME=veth)
	env "${common[@]}" NCCL_HOSTID=gdx-host-a NCCL_GDX_HCA==rxe0 \
		build/tests/gpu/allreduce 0 "$id" >"$out/rank0.log" 2>&1 &
	r0=$!
	env "${common[@]}" NCCL_HOSTID=gdx-host-b NCCL_GDX_HCA==rxe1 \
		timeout 600 build/tests/gpu/allreduce 1 "$id" >"$out/rank1.log" 2>&1
	rc1=$?
	wait "$r0"
	rc0=$?
	rm -f "$id"
	for r in 0 1; do
		echo "--- rank $r ($out/rank$r.log)"
		grep -E 'NET/Plugin|Using network|NET/GDX|via NET|rank [01]:|WARN' "$out/rank$r.log"
	done
	if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
		bad "the all-reduce (rank 0 exit $rc0, rank 1 exit $rc1)"
	fi
	grep -q 'Using network GDX' "$out/rank0.log" || bad "NCCL did not use NET/GDX"
fi

step "summary"
echo "the report's files: $out"
if [ "$failed" -eq 0 ]; then
	echo "every step ran"
else
	echo "$failed step(s) failed"
fi
[ "$failed" -eq 0 ]
