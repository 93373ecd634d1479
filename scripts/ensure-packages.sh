#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages named on the command line that are missing
# (apt-get update first, once). Does nothing when all are there, so the
# Makefile and the VM runner can call it on every run.
set -euo pipefail

missing=()
for p in "$@"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "ensure-packages: missing packages; as root run: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "ensure-packages: apt-get install ${missing[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The lock timeout: parallel first runs take turns instead of failing.
if ! { apt-get -o DPkg::Lock::Timeout=300 update -q &&
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
		--no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "ensure-packages: installing ${missing[*]} failed" >&2
	exit 1
fi
