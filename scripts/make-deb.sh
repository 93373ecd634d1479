#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds BUILD_DIR/libnccl-net-gdx_VERSION_ARCH.deb from the Debian source
# package in debian/: a copy of the tree (without build outputs or .git) goes
# to BUILD_DIR/deb/, where `dpkg-buildpackage -us -uc -b` runs, as it would in
# any Debian or Ubuntu release's build of its own. The .deb, the debug
# symbols' -dbgsym .deb and the .changes are copied back to BUILD_DIR for
# tests/check/package.sh and lintian.
# Run it through `make deb`, which passes the build directory.
#
#   scripts/make-deb.sh BUILD_DIR
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR (or: make deb)" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
umask 022 # dpkg-deb refuses group- or world-writable control files

build=$1
pkg=libnccl-net-gdx
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
work=$build/deb
src=$work/$pkg-$version

rm -rf "$work" "$build/${pkg}"_*.deb "$build/${pkg}"-dbgsym_*.*deb "$build/${pkg}"_*.changes
mkdir -p "$src"
# What git would hand out: no build trees, objects or repository data, so the
# package is built from sources alone, as a builder of the source package would.
tar --exclude='./build*' --exclude='./.git' --exclude='*.o' --exclude='*.d' -cf - . |
	tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -us -uc -b -J"${GDX_JOBS:-auto}") >"$work/build.log" 2>&1 || {
	tail -n 40 "$work/build.log" >&2
	echo "make-deb: dpkg-buildpackage failed; the whole log is $work/build.log" >&2
	exit 1
}
cp "$work/${pkg}_${version}_${arch}.deb" "$work/${pkg}_${version}_${arch}.changes" "$build/"
dpkg-deb --info "$build/${pkg}_${version}_${arch}.deb"
dpkg-deb --contents "$build/${pkg}_${version}_${arch}.deb"
echo "make-deb: $build/${pkg}_${version}_${arch}.deb"
# The debug symbols dh_strip moved out of the programs and the plugin, by
# build ID (/usr/lib/debug/.build-id/): what gdb and a core dump's stack need.
# Debian names it .deb, Ubuntu .ddeb.
for dbg in "$work/${pkg}-dbgsym_${version}_${arch}".deb "$work/${pkg}-dbgsym_${version}_${arch}".ddeb; do
	[ -f "$dbg" ] || continue
	cp "$dbg" "$build/"
	echo "make-deb: $build/${dbg##*/} (debug symbols)"
done
