#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor log over NCCL INFO logs written in the plugin's own line format:
# per-NIC byte counts summed, verdicts picked up, and a NIC that advertises
# GPUDirect RDMA yet moved bytes through host memory flagged with exit 1.
set -uo pipefail
cd "$(dirname "$0")/.."
doctor=${GDX_DOCTOR:-build/gdx-doctor}
logs=tests/fixtures/nccl-logs
passed=0 failed=0
check() { # name, expected exit, needle, command...
	local out rc
	out=$("${@:4}" 2>&1)
	rc=$?
	if [ "$rc" -eq "$2" ] && grep -qF -- "$3" <<<"$out"; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1 (exit $rc): $out"
		failed=$((failed + 1))
	fi
}
check "log: staged bytes on a direct NIC exit 1" 1 "NCCL staged them" "$doctor" log "$logs/staged-on-direct.log"
check "log: sums the comms of a NIC" 1 "mlx5_0            2        12884901888         1073741824" "$doctor" log "$logs/staged-on-direct.log"
check "log: keeps the staged verdict and its fix" 1 "fix: modprobe nvidia_peermem" "$doctor" log "$logs/staged-on-direct.log"
check "log: healthy log exits 0" 0 "GPUDirect RDMA via nvidia_peermem" "$doctor" log "$logs/healthy.log"
check "log: standard input" 0 "1000" sh -c "$doctor log - <$logs/healthy.log"
check "log: a log without the plugin exits 5" 5 "was the plugin loaded" "$doctor" log /dev/null
check "log: a missing file exits 3" 3 "No such file" "$doctor" log "$logs/nonexistent.log"
check "log: no file is a usage error" 2 "give one log file" "$doctor" log
echo "# doctor-log: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
