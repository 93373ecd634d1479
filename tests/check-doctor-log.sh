#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor log over NCCL INFO logs written in the plugin's own line format:
# per-NIC byte counts summed, verdicts picked up, a NIC that advertises
# GPUDirect RDMA yet moved bytes through host memory flagged with exit 1, and
# logs without the plugin (7) or without its byte counts (8) told apart; rails
# taken out of fused connections counted per NIC (exit 1).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
logs=tests/fixtures/nccl-logs
# shellcheck source=tests/report.sh
. tests/report.sh
exits "log: staged bytes on a direct NIC exit 1" 1 "NCCL staged them" "$doctor" log "$logs/staged-on-direct.log"
exits "log: sums the comms of a NIC" 1 "mlx5_0            2        12884901888         1073741824" "$doctor" log "$logs/staged-on-direct.log"
exits "log: keeps the staged verdict and its fix" 1 "fix: modprobe nvidia_peermem" "$doctor" log "$logs/staged-on-direct.log"
exits "log: healthy log exits 0" 0 "GPUDirect RDMA via nvidia_peermem" "$doctor" log "$logs/healthy.log"
exits "log: standard input" 0 "1000" sh -c "$doctor log - <$logs/healthy.log"
exits "log: a log without the plugin exits 7" 7 "was the plugin loaded" "$doctor" log /dev/null
# NCCL's default subsystems with a plugin that logged its data lines at NET
# only (0.1.0): the init lines are there, the byte counts are not.
exits "log: init lines only exit 8, saying how to rerun" 8 "no plugin data lines in this log: rerun with NCCL_DEBUG=INFO" "$doctor" log "$logs/init-only.log"
exits "log: connections without byte counts exit 8" 8 "(2 connection line(s) here, no byte counts)" "$doctor" log "$logs/connected-not-closed.log"
exits "log: this version's lines at NCCL's default subsystems are data" 0 "rxe0              1                  0            7864320" "$doctor" log "$logs/default-subsys.log"
exits "log: a rail taken out twice and back twice is counted, exit 1" 1 "rxe1              2      2      4.9  completion failed: local QP operation error" "$doctor" log "$logs/rail-flap.log"
exits "log: a rail's downs come with what to check" 1 "a rail that goes down again and again is a cable" "$doctor" log "$logs/rail-flap.log"
exits "log: no rail section without rail lines" 0 "" sh -c "! $doctor log $logs/healthy.log | grep -q 'rails taken out'"
exits "log: a missing file exits 3" 3 "No such file" "$doctor" log "$logs/nonexistent.log"
exits "log: no file is a usage error (64)" 64 "give one log file" "$doctor" log
exits "log: an unknown option is a usage error (64)" 64 "unknown option --bogus" "$doctor" log --bogus x.log
report_end doctor-log
