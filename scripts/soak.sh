#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long stress run: boots the VM with two rxe pairs and runs
# build/tests/vm/stress for a million messages over six comms (both pairs,
# both directions), every byte verified. Sizes still span 0 to 8 MiB, but
# mostly small, so that it ends in minutes under the emulator. Prints
# messages, bytes, corrupted bytes and time; exits non-zero on any failure.
#
#   scripts/soak.sh [MESSAGES]        # default 1000000
#
# Environment: GDX_STRESS_SEED (default: from the clock, printed),
# GDX_STRESS_LARGE / GDX_STRESS_MEDIUM (per mille of sizes from 0-8 MiB and
# 0-256 KiB; default 1 and 10), GDX_SOAK_BUILD (build directory, default
# build), GDX_STRESS_TIMEOUT_S (default 7200).
set -euo pipefail

cd "$(dirname "$0")/.."
messages=${1:-1000000}
build=${GDX_SOAK_BUILD:-build}
large=${GDX_STRESS_LARGE:-1}
medium=${GDX_STRESS_MEDIUM:-10}
limit=${GDX_STRESS_TIMEOUT_S:-7200}
seed=${GDX_STRESS_SEED:-0}

for v in "$messages" "$large" "$medium" "$limit" "$seed"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "soak: \"$v\" is not a number" >&2; exit 2; }
done
if [ ! -x "$build/tests/vm/stress" ]; then
	echo "soak: $build/tests/vm/stress is missing; run make first" >&2
	exit 2
fi

start=$(date +%s)
rc=0
scripts/vm-run.sh --pairs 2 --timeout $((limit + 300)) -- \
	"GDX_PLUGIN=$build/libnccl-net-gdx.so GDX_STRESS_MESSAGES=$messages" \
	"GDX_STRESS_LARGE=$large GDX_STRESS_MEDIUM=$medium GDX_STRESS_TIMEOUT_S=$limit" \
	"GDX_STRESS_SEED=$seed $build/tests/vm/stress" || rc=$?
echo "soak: exit status $rc, $(($(date +%s) - start)) s of wall time including the VM boot"
exit "$rc"
