#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds BUILD_DIR/libnccl-net-gdx_VERSION_ARCH.deb with dpkg-deb alone (no
# debian/ directory in the tree, no debhelper). The files are those of
# `make install PREFIX=/usr` into a staging root, the install that
# tests/check-package.sh checks, then adjusted as Debian policy asks of a
# binary package: stripped binaries, gzipped man pages and README, the license
# as the copyright file. Depends comes from dpkg-shlibdeps on the binaries.
# Run it through `make deb`, which passes the build directory and VERSION.
#
#   scripts/make-deb.sh BUILD_DIR VERSION
#   DEB_MAINTAINER='Name <address>' make deb     # another Maintainer field
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR VERSION (or: make deb)" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
umask 022 # dpkg-deb refuses group- or world-writable control files

build=$1
version=$2
pkg=libnccl-net-gdx
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-"libnccl-net-gdx maintainers <maintainers@users.noreply.a-seed-3afd2de1.example>"}
# dpkg-shlibdeps reads debian/control and wants the files under
# debian/<package>/: a throw-away one in the build directory does.
work=$build/deb
root=$PWD/$work/debian/$pkg
doc=$root/usr/share/doc/$pkg
deb=$build/${pkg}_${version}_${arch}.deb

rm -rf "$work" "$build/${pkg}"_*.deb
mkdir -p "$work/debian"
"${MAKE:-make}" --no-print-directory BUILD="$build" install DESTDIR="$root" PREFIX=/usr

# The debug info stays in the build tree; the package ships what runs.
strip --strip-unneeded "$root/usr/lib/libnccl-net-gdx.so" "$root"/usr/bin/*
gzip -9n "$root"/usr/share/man/man1/*.1 "$doc/README.md"

# LICENSE becomes the machine-readable copyright file (MIT is "Expat" there).
{
	echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	echo "Upstream-Name: $pkg"
	echo
	echo "Files: *"
	sed -n 's/^Copyright (c) /Copyright: /p' LICENSE
	echo "License: Expat"
	sed -n '/^Permission is hereby granted/,$p' LICENSE | sed 's/^$/./; s/^/ /'
} >"$doc/copyright"
rm "$doc/LICENSE"

# dpkg-shlibdeps finds the package root by its DEBIAN directory.
mkdir -p "$root/DEBIAN"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$pkg" "$pkg" >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "debian/$pkg/usr/lib/libnccl-net-gdx.so" \
	"debian/$pkg"/usr/bin/* | sed -n 's/^shlibs:Depends=//p')
if [ -z "$depends" ]; then
	echo "make-deb: dpkg-shlibdeps found no dependencies" >&2
	exit 1
fi

cat >"$root/DEBIAN/control" <<EOF
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: ibverbs-providers
Section: libs
Priority: optional
Description: NCCL network plugin over libibverbs (InfiniBand and RoCE v2)
 libnccl-net-gdx is an NCCL network plugin: RC queue pairs, a
 receiver-driven clear-to-send protocol and RDMA WRITE with immediate, on
 InfiniBand and RoCE v2. NCCL 2.19 and later load it with
 NCCL_NET_PLUGIN=gdx.
 .
 The package also holds gdx-doctor, which checks the GPU-NIC topology and the
 NCCL_GDX_* environment before a job, and gdx-bench, which measures bandwidth
 through the plugin's NCCL API between two local devices. The verbs providers
 (ibverbs-providers: mlx5, rxe and others) are what makes a NIC usable.
EOF
# The library sits in /usr/lib, where NCCL's dlopen by name finds it; the
# trigger refreshes the loader cache as for any shared library.
echo "activate-noawait ldconfig" >"$root/DEBIAN/triggers"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort |
	xargs md5sum) >"$root/DEBIAN/md5sums"

dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
dpkg-deb --info "$deb"
dpkg-deb --contents "$deb"
echo "make-deb: $deb"
