#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The build on a machine that lacks a build dependency: make stops before it
# compiles anything, with one line naming each missing pkg-config file and
# the packages that provide it (Debian's and Fedora's names), instead of a
# compiler error per file that includes its header. pkg-config made to find
# nothing (an empty PKG_CONFIG_LIBDIR), one .pc hidden by a wrapper, and no
# pkg-config at all. Nothing is built: the build directory is a scratch one.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/build_deps.sh: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# stops NAME NEEDLE [VAR=VALUE...]: make all stops (not 0) with NEEDLE in one
# line of its output, and no compiler ran.
stops() {
	local name=$1 needle=$2 rc
	shift 2
	env "$@" timeout 300 make --no-print-directory BUILD="$tmp/build" all >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		not_ok "$name" "make succeeded"
	elif [ "$(grep -cF -- "$needle" "$tmp/out")" -ne 1 ]; then
		not_ok "$name" "exit $rc, no one line '$needle': $(head -c 400 "$tmp/out" | tr '\n' '|')"
	elif grep -q 'error:\|fatal error' "$tmp/out" || [ -e "$tmp/build/plugin" ]; then
		not_ok "$name" "the compiler ran: $(grep -c 'error:' "$tmp/out") errors"
	elif [ "$(wc -l <"$tmp/out")" -ne 1 ]; then
		not_ok "$name" "$(wc -l <"$tmp/out") lines: $(head -c 400 "$tmp/out" | tr '\n' '|')"
	else
		ok "$name ($(cat "$tmp/out"))"
	fi
}

mkdir -p "$tmp/empty"
stops "no .pc found: both named, with their packages, nothing compiled" \
	"libibverbs.pc and hwloc.pc not found by pkg-config: install libibverbs-dev libhwloc-dev (apt: Debian, Ubuntu) or rdma-core-devel hwloc-devel (dnf: Fedora, RHEL)" \
	PKG_CONFIG_LIBDIR="$tmp/empty" PKG_CONFIG_PATH="$tmp/empty"

# a pkg-config that has every .pc but hwloc's
cat >"$tmp/pkg-config" <<'SH'
#!/bin/sh
for a in "$@"; do [ "$a" = hwloc ] && exit 1; done
exec pkg-config "$@"
SH
chmod +x "$tmp/pkg-config"
stops "hwloc.pc alone missing: it alone named" \
	"hwloc.pc not found by pkg-config: install libhwloc-dev (apt: Debian, Ubuntu) or hwloc-devel (dnf: Fedora, RHEL)" \
	PKG_CONFIG="$tmp/pkg-config"
stops "no pkg-config: said, with its packages" \
	"pkg-config (/nonexistent/pkg-config) not found: install pkg-config (apt: Debian, Ubuntu) or pkgconf (dnf: Fedora, RHEL)" \
	PKG_CONFIG=/nonexistent/pkg-config

report_end tests/check/build_deps.sh
