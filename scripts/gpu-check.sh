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
#      checked), NCCL_DEBUG=INFO lines of the plugin shown;
#   4. one-sided RMA through the plugin (NCCL_GDX_RMA=1): ncclPutSignal into
#      a symmetric window, each round waited on and checked by the other
#      rank (build/tests/gpu/rma; NCCL 2.29 and later, an older NCCL is
#      reported as not run), with NCCL's RMA/Plugin lines showing which table
#      it took; then, where nccl-tests' alltoall_perf and mpirun are on PATH,
#      alltoall_perf -R 2 (symmetric buffers, NCCL's RMA path) over the same
#      two "hosts".
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
if ! gcc -std=gnu11 -O2 -Wall -I"$CUDA_HOME/include" -o build/tests/gpu/rma \
	tests/gpu/rma.c -L"$CUDA_HOME/lib64" -lcudart -lnccl -ldl; then
	bad "building tests/gpu/rma.c"
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

	step "one-sided RMA: ncclPutSignal through the plugin's ncclRmaPlugin table (NCCL_GDX_RMA=1)"
	# NCCL's RMA proxy wants every rank's plugin, cross-NIC allowed, and
	# cuMem GPUDirect RDMA (gdx-doctor check above says whether it has it)
	rma=(NCCL_GDX_RMA=1 NCCL_CROSS_NIC=1 NCCL_DEBUG_SUBSYS=INIT$',NET,RMA')
	env "${common[@]}" "${rma[@]}" NCCL_HOSTID=gdx-host-a NCCL_GDX_HCA==rxe0 \
		build/tests/gpu/rma 0 "$id" >"$out/rma0.log" 2>&1 &
	r0=$!
	env "${common[@]}" "${rma[@]}" NCCL_HOSTID=gdx-host-b NCCL_GDX_HCA==rxe1 \
		timeout 600 build/tests/gpu/rma 1 "$id" >"$out/rma1.log" 2>&1
	rc1=$?
	wait "$r0"
	rc0=$?
	rm -f "$id"
	for r in 0 1; do
		echo "--- rank $r ($out/rma$r.log)"
		grep -E 'RMA/Plugin|NET/GDX.*RMA|rank [01]:|WARN' "$out/rma$r.log"
	done
	if [ "$rc0" -eq 3 ] && [ "$rc1" -eq 3 ]; then
		echo "NOT RUN: this NCCL has no one-sided host API (2.29 and later have it)"
	elif [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
		bad "the one-sided run (rank 0 exit $rc0, rank 1 exit $rc1)"
	elif ! grep -qE 'RMA/Plugin.*(gdx|GDX)' "$out/rma0.log"; then
		bad "the puts went right, but not through this plugin's RMA table (no RMA/Plugin line names it)"
	fi

	step "alltoall_perf -R 2 (symmetric buffers, NCCL's RMA path) over the two \"hosts\""
	if command -v alltoall_perf >/dev/null && command -v mpirun >/dev/null; then
		# each rank a host of its own, on its own rxe device
		cat >"$out/rank-env.sh" <<-'EOF'
			#!/bin/sh
			r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
			export NCCL_HOSTID=gdx-host-$r NCCL_GDX_HCA==rxe$r
			exec "$@"
		EOF
		chmod 700 "$out/rank-env.sh"
		envs=()
		for e in "${common[@]}" "${rma[@]}"; do envs+=(-x "$e"); done
		timeout 600 mpirun --allow-run-as-root -np 2 "${envs[@]}" "$out/rank-env.sh" \
			alltoall_perf -b 8 -e 64M -f 4 -g 1 -R 2 -c 1 >"$out/alltoall.log" 2>&1 ||
			bad "alltoall_perf (exit $?; $out/alltoall.log)"
		grep -E 'RMA/Plugin|Avg bus bandwidth|#wrong|Out of bounds' "$out/alltoall.log"
	else
		echo "NOT RUN: alltoall_perf (nccl-tests) or mpirun is not on PATH"
	fi
fi

step "summary"
echo "the report's files: $out"
if [ "$failed" -eq 0 ]; then
	echo "every step ran"
else
	echo "$failed step(s) failed"
fi
[ "$failed" -eq 0 ]
