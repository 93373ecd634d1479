#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's first command (make demo): boots the VM, moves bytes through
# the plugin over two Soft-RoCE devices, and prints the bandwidth next to
# ib_write_bw measured on the same devices in the same boot.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/vm-run.sh --timeout 1800 -- scripts/side-by-side.sh
