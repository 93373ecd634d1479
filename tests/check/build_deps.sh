#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The build on a machine that lacks a build dependency: make stops before it
# compiles anything, with one line naming each missing pkg-config file and
# the packages that provide it (Debian's and Fedora's names), instead of a
# compiler error per file that includes its header. pkg-config made to find
# nothing (an empty PKG_CONFIG_LIBDIR), one .pc hidden by a wrapper, and no
# pkg-config at all. Nothing is built: the build directory is a scratch one.
# And make check's dependency step, which installs nothing, and make deb's
# and make rpm's, which name the packaging command missing (below).
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

# make check's dependency step (check-deps) needs neither root nor the
# network: it only asks dpkg. Run as a user who is not root where this runs
# as root (setpriv to nobody), with an apt-get and a sudo in PATH that fail
# loudly and leave a mark: with every package there it passes and calls
# neither; with one hidden from dpkg-query (a wrapper that drops its name)
# it stops with one line naming that package alone and sudo make deps, and
# again calls neither, as root too.
shim=$tmp/shim
mkdir -p "$shim" "$tmp/marks"
chmod 755 "$tmp" "$shim"
chmod 1777 "$tmp/marks"
for cmd in apt-get sudo; do
	cat >"$shim/$cmd" <<SH
#!/bin/sh
echo "$cmd \$*" >>"$tmp/marks/called"
echo "$cmd must not run here: \$*" >&2
exit 99
SH
	chmod 755 "$shim/$cmd"
done
# dpkg-query as if graphviz were not installed: asked about it, it knows
# nothing of it
cat >"$tmp/dpkg-query" <<SH
#!/usr/bin/env bash
args=() names=0
for a in "\$@"; do
	case \$a in
	graphviz) ;;
	-*) args+=("\$a") ;;
	*) args+=("\$a"); names=\$((names + 1)) ;;
	esac
done
[ "\$names" -gt 0 ] || { echo "dpkg-query: no packages found matching graphviz" >&2; exit 1; }
exec $(command -v dpkg-query) "\${args[@]}"
SH
chmod 755 "$tmp/dpkg-query"
mkdir -p "$tmp/hide" && chmod 755 "$tmp/hide" && mv "$tmp/dpkg-query" "$tmp/hide/"

# as_user CMD...: CMD as nobody when this runs as root, else as this user.
as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"
	else
		"$@"
	fi
}

# deps_step NAME WANT_RC PATH_FRONT [as_user]: make check-deps, PATH_FRONT
# first in PATH; its output in $tmp/out.
deps_step() {
	local name=$1 want=$2 front=$3 runner=${4:-} rc
	rm -f "$tmp/marks/called"
	$runner env PATH="$front:$PATH" timeout 60 make --no-print-directory check-deps \
		>"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ -e "$tmp/marks/called" ]; then
		not_ok "$name" "it ran $(tr '\n' '|' <"$tmp/marks/called")"
	elif [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit $rc, expected $want: $(head -c 400 "$tmp/out" | tr '\n' '|')"
	elif [ "$(wc -l <"$tmp/out")" -ne 1 ]; then
		not_ok "$name" "$(wc -l <"$tmp/out") lines: $(head -c 400 "$tmp/out" | tr '\n' '|')"
	else
		ok "$name ($(cat "$tmp/out"))"
	fi
}

if [ "$(id -u)" -eq 0 ] && ! command -v setpriv >/dev/null; then
	not_ok "make check-deps as a user" "no setpriv to run it as nobody"
elif ! command -v dpkg-query >/dev/null; then
	not_ok "make check-deps" "no dpkg-query: this check is for Debian's packages"
else
	deps_step "check-deps as $(as_user id -un), every package there: passes, no apt-get" \
		0 "$shim" as_user
	has "check-deps: says they are all there" "$tmp/out" '^build dependencies: all [0-9]+ installed$'
	deps_step "check-deps as $(as_user id -un), graphviz missing: stops in one line, no apt-get" \
		2 "$tmp/hide:$shim" as_user
	has "check-deps: names graphviz alone, and sudo make deps" "$tmp/out" \
		'missing build dependencies: graphviz: install them with sudo make deps \(or sudo apt-get install graphviz\)'
	deps_step "check-deps as $(id -un), graphviz missing: no apt-get either" 2 "$tmp/hide:$shim"
fi

# make deb's and make rpm's dependency steps (deb-deps, rpm-deps) on a
# machine with the build's packages alone: PATH is a directory of links to
# every command here but dpkg-parsechangelog (dpkg-dev's), so that the step
# sees what a bookworm chroot without dpkg-dev has. Each stops in one line
# naming the command and dpkg-dev, before anything is built; with the
# command there it passes.
nopc=$tmp/no-parsechangelog
mkdir -p "$nopc"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		n=${f##*/}
		# -n, and a name once: a link to a directory (/usr/bin/X11 is
		# one to ".") is never followed, so nothing is made outside $nopc.
		[ "$n" = dpkg-parsechangelog ] || [ -L "$nopc/$n" ] || [ -e "$nopc/$n" ] ||
			ln -sn "$f" "$nopc/$n"
	done
done
for goal in deb rpm; do
	PATH=$nopc timeout 60 make --no-print-directory BUILD="$tmp/pkg-build" "$goal" \
		>"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -eq 0 ]; then
		not_ok "make $goal without dpkg-parsechangelog stops" "it succeeded"
	elif [ "$(wc -l <"$tmp/out")" -ne 1 ] ||
		! grep -qF 'packaging commands not found: dpkg-parsechangelog: install dpkg-dev (sudo apt-get install dpkg-dev, or sudo make package-deps)' "$tmp/out"; then
		not_ok "make $goal without dpkg-parsechangelog names dpkg-dev in one line" \
			"exit $rc: $(head -c 400 "$tmp/out" | tr '\n' '|')"
	elif [ -e "$tmp/pkg-build" ]; then
		not_ok "make $goal without dpkg-parsechangelog stops before building" "$tmp/pkg-build was made"
	else
		ok "make $goal without dpkg-parsechangelog: one line naming dpkg-dev ($(cat "$tmp/out"))"
	fi
	step=$goal-deps
	if timeout 60 make --no-print-directory "$step" >"$tmp/out" 2>&1 </dev/null &&
		grep -qE "^make $goal: [0-9]+ commands found" "$tmp/out"; then
		ok "make $step with every command there passes ($(cat "$tmp/out"))"
	else
		not_ok "make $step with every command there passes" "$(head -c 400 "$tmp/out")"
	fi
done

report_end tests/check/build_deps.sh
