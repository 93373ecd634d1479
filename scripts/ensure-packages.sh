#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages named on the command line that are missing
# (apt-get update first, once). Does nothing when all are there, so the
# Makefile and the VM runner can call it on every run.
#   scripts/ensure-packages.sh PACKAGE...            # installs what is missing
#   scripts/ensure-packages.sh --missing PACKAGE...  # only names them
# --missing (make check's step, which needs neither root nor the network):
# prints the missing ones on one line, nothing when none is, and exits 0;
# it never runs apt-get. Without dpkg-query (not Debian) it cannot tell, says
# so on stderr and names none.
set -euo pipefail

only_name=false
if [ "${1:-}" = --missing ]; then
	only_name=true
	shift
fi
if $only_name && ! command -v dpkg-query >/dev/null; then
	echo "ensure-packages: no dpkg-query: the packages ($*) are not checked" >&2
	exit 0
fi
missing=()
# one dpkg-query for all: it lists those it knows, whatever their state
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null |
	awk '$2 == "installed" { print $1 }' || true)
for p in "$@"; do
	grep -qxF -- "$p" <<<"$installed" || missing+=("$p")
done
if $only_name; then
	[ ${#missing[@]} -eq 0 ] || echo "${missing[*]}"
	exit 0
fi
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
