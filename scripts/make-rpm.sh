#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds BUILD_DIR/libnccl-net-gdx-VERSION-1.ARCH.rpm and the source RPM with
# rpmbuild (Debian's rpm package) from scripts/libnccl-net-gdx.spec and a
# source tarball of the tree. The binary RPM links this machine's glibc; for a
# RHEL or Rocky release, `rpmbuild --rebuild` the source RPM there. The version and the %changelog come from debian/changelog. The build
# dependencies are Debian's packages here, which the RPM database does not
# know: rpmbuild runs with --nodeps (make rpm installs them through BUILD_DEPS).
#
#   scripts/make-rpm.sh BUILD_DIR
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR (or: make rpm)" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
build=$1
pkg=libnccl-net-gdx
version=$(dpkg-parsechangelog -S Version)
top=$(pwd -P)/$build/rpm
rm -rf "$top" "$build/$pkg"-*.rpm
mkdir -p "$top/SOURCES" "$top/SPECS"

tar --exclude='./build*' --exclude='./.git' --exclude='*.o' --exclude='*.d' \
	--transform "s,^\\.,$pkg-$version," -czf "$top/SOURCES/$pkg-$version.tar.gz" .

# debian/changelog's entries as RPM's: "* Tue Dec 01 2026 Name <mail> - 0.2.0-1",
# then one "- " line per item, newest first as both keep them.
rpm_changelog() {
	awk '
	/^[a-z0-9][^ ]* \(/ { v = $2; gsub(/[()]/, "", v); n = 0; next }
	/^  \* / { items[++n] = "- " substr($0, 5); next }
	/^    / && n { items[n] = items[n] "\n  " substr($0, 5); next }
	/^ -- / {
		line = substr($0, 5)
		split(line, parts, "  ")
		split(parts[2], d, /[ ,]+/) # Tue, 01 Dec 2026 09:00:00 +0000
		printf "* %s %s %s %s %s - %s-1\n", d[1], d[3], d[2], d[4], parts[1], v
		for (i = 1; i <= n; i++)
			print items[i]
		print ""
	}' debian/changelog
}
{
	sed "s/@VERSION@/$version/" scripts/$pkg.spec
	echo "%changelog"
	rpm_changelog
} >"$top/SPECS/$pkg.spec"

if ! rpmbuild -ba --nodeps --define "_topdir $top" "$top/SPECS/$pkg.spec" \
	>"$top/build.log" 2>&1; then
	tail -n 40 "$top/build.log" >&2
	echo "make-rpm: rpmbuild failed; the whole log is $top/build.log" >&2
	exit 1
fi
rpm=$(find "$top/RPMS" -name "$pkg-$version-*.rpm" ! -name '*debug*' | head -1)
cp "$rpm" "$top/SRPMS/$pkg-$version"-*.src.rpm "$build/"
rpm -qpil "$build/$(basename "$rpm")"
echo "make-rpm: $build/$(basename "$rpm")"
# The debug symbols, where this rpmbuild's macros make a -debuginfo package
# (and a -debugsource one): copied out beside the RPM.
find "$top/RPMS" -name "$pkg-debug*-$version-*.rpm" | while read -r dbg; do
	cp "$dbg" "$build/"
	echo "make-rpm: $build/${dbg##*/} (debug symbols)"
done
