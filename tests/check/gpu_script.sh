#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU machine's check (scripts/gpu-check.sh) cannot run here, there is no
# GPU: it must parse, pass shellcheck where that is installed, and its NCCL
# program must build against the CUDA and NCCL under $CUDA_HOME.
set -uo pipefail
cd "$(dirname "$0")/../.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
passed=0 failed=0
check() { # name, command...
	local out
	if out=$("${@:2}" 2>&1); then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1: $out"
		failed=$((failed + 1))
	fi
}
check "gpu-check.sh parses" bash -n scripts/gpu-check.sh
check "vm-init.sh parses (its wires mode is what gpu-check.sh runs)" sh -n scripts/vm-init.sh
# A shared node: the report goes to a private directory of its own, not to
# fixed names in /tmp another user could have placed first.
check "gpu-check.sh writes no fixed name under /tmp" sh -c \
	"! grep -nE '/tmp/|mktemp -u' scripts/gpu-check.sh"
check "gpu-check.sh makes its files in a private mktemp -d directory" \
	grep -q 'mktemp -d' scripts/gpu-check.sh
if command -v shellcheck >/dev/null; then
	check "gpu-check.sh passes shellcheck" shellcheck -s bash scripts/gpu-check.sh
fi
if [ -r "$CUDA_HOME/include/nccl.h" ] && [ -r "$CUDA_HOME/include/cuda_runtime.h" ]; then
	out=$(mktemp)
	check "tests/gpu/allreduce.c builds and links against $CUDA_HOME's NCCL" \
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$CUDA_HOME/include" -o "$out" \
		tests/gpu/allreduce.c -L"$CUDA_HOME/lib64" -lcudart -lnccl
	check "allreduce refuses bad usage with exit 2" sh -c \
		"LD_LIBRARY_PATH=$CUDA_HOME/lib64 $out 7 /nonexistent; [ \$? -eq 2 ]"
	check "tests/gpu/rma.c builds and links against $CUDA_HOME's NCCL" \
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$CUDA_HOME/include" -o "$out" \
		tests/gpu/rma.c -L"$CUDA_HOME/lib64" -lcudart -lnccl -ldl
	check "rma refuses bad usage with exit 2" sh -c \
		"LD_LIBRARY_PATH=$CUDA_HOME/lib64 $out 0 /nonexistent 0; [ \$? -eq 2 ]"
	# before it needs a GPU: an NCCL without the one-sided API is "not run"
	# (3), and one with it goes on to the GPU, which is not here (1)
	check "rma says not run (3) without ncclPutSignal, or needs the GPU (1)" sh -c \
		"LD_LIBRARY_PATH=$CUDA_HOME/lib64 $out 0 $out.id 1 1; r=\$?; rm -f $out.id*; [ \$r -eq 3 ] || [ \$r -eq 1 ]"
	rm -f "$out"
else
	echo "# skip: tests/gpu/allreduce.c not built, no CUDA/NCCL headers under $CUDA_HOME"
fi
echo "# tests/check/gpu_script.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
