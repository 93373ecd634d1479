#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test only: it builds the package (rpmbuild)
# make rpm (rpmbuild over scripts/libnccl-net-gdx.spec): the package's name,
# version and changelog from debian/changelog, exactly its files (NEWS among
# them), a debug package copied out where rpmbuild makes one, Requires
# from the ELF files (libibverbs with IBVERBS_1.12, libhwloc.so.15, nothing
# of CUDA), the source RPM beside it, and an install into a fresh root with
# rpm --root (an empty database; --nodeps, as nothing provides its libraries
# there) whose files and verification hold.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/rpm.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL
build=${GDX_BUILD:-build}
make=${MAKE:-make}
pkg=libnccl-net-gdx
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
finish() {
	report_end tests/check/rpm.sh
	exit
}

version=$("$make" --no-print-directory -s version)
arch=$(rpm --eval '%_arch')
rpmfile=$build/$pkg-$version-1.$arch.rpm
if ! "$make" --no-print-directory BUILD="$build" rpm >"$tmp/rpm.log" 2>&1 || [ ! -f "$rpmfile" ]; then
	not_ok "make rpm builds $rpmfile" "$(tail -c 600 "$tmp/rpm.log")"
	finish
fi
ok "make rpm builds $rpmfile"
q() { rpm -qp --qf "$1" "$rpmfile" 2>/dev/null; }
if [ "$(q '%{NAME} %{VERSION} %{LICENSE}')" = "$pkg $version MIT" ]; then
	ok "rpm: $pkg $version, MIT"
else
	not_ok "rpm: name, version, license" "$(q '%{NAME} %{VERSION} %{LICENSE}')"
fi
if [ -f "$build/$pkg-$version-1.src.rpm" ]; then
	ok "rpm: the source RPM is beside it (rpmbuild --rebuild on the target release)"
else
	not_ok "rpm: the source RPM is beside it" "no $build/$pkg-$version-1.src.rpm"
fi
# The newest changelog entry is debian/changelog's, with its first item.
first_item=$(sed -n '3s/^  \* //p' debian/changelog)
log=$(rpm -qp --changelog "$rpmfile" 2>/dev/null)
if head -1 <<<"$log" | grep -q -- "- $version-1\$" && grep -qF -- "- $first_item" <<<"$log"; then
	ok "rpm: %changelog comes from debian/changelog"
else
	not_ok "rpm: %changelog comes from debian/changelog" "$(head -3 <<<"$log")"
fi

libdir=$(rpm --eval '%_libdir')
cat >"$tmp/want" <<EOF
/usr/bin/gdx-bench
/usr/bin/gdx-doctor
$libdir/libnccl-net-gdx.so
/usr/share/bash-completion/completions/gdx-bench
/usr/share/bash-completion/completions/gdx-doctor
/usr/share/doc/$pkg/NEWS
/usr/share/doc/$pkg/README.md
/usr/share/doc/$pkg/examples/gdx-doctor-daemonset.yaml
/usr/share/doc/$pkg/examples/gdx-k8s-probe.sh
/usr/share/doc/$pkg/examples/gdx-slurm-prolog.sh
/usr/share/licenses/$pkg/LICENSE
$(rpm --eval '%_mandir')/man1/gdx-bench.1
$(rpm --eval '%_mandir')/man1/gdx-doctor.1
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-diagnostics.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-failover.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-gpudirect.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-nccl.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-performance.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-protocol.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-rma.7
$(rpm --eval '%_mandir')/man7/libnccl-net-gdx-security.7
EOF
# Files only (directories and the build-id links aside); man pages may be
# gzipped where the distribution's macros compress them.
rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms}\n]' "$rpmfile" 2>/dev/null |
	awk '$2 !~ /^d/ && $1 !~ /\/\.build-id\// { sub(/\.gz$/, "", $1); print $1 }' |
	LC_ALL=C sort >"$tmp/got"
LC_ALL=C sort -o "$tmp/want" "$tmp/want"
same_list "rpm: exactly these files" "$tmp/want" "$tmp/got"

if rpm -qlp "$rpmfile" 2>/dev/null | grep -qxF "/usr/share/doc/$pkg/NEWS"; then
	ok "rpm: rpm -qlp lists NEWS (the README's debian/NEWS)"
else
	not_ok "rpm: rpm -qlp lists NEWS" "no /usr/share/doc/$pkg/NEWS"
fi
# A -debuginfo (or -debugsource) package, where this rpmbuild makes one
# (Debian's has no find-debuginfo and makes none), is copied out beside it.
made=$(find "$build/rpm/RPMS" -name "$pkg-debug*-$version-*.rpm" -printf '%f\n' | LC_ALL=C sort)
copied=$(find "$build" -maxdepth 1 -name "$pkg-debug*-$version-*.rpm" -printf '%f\n' | LC_ALL=C sort)
if [ "$made" = "$copied" ]; then
	ok "rpm: every debug package rpmbuild made is beside it (${made:-none made here})"
else
	not_ok "rpm: every debug package rpmbuild made is beside it" "made: $made; copied: $copied"
fi

req=$(rpm -qpR "$rpmfile" 2>/dev/null)
for want in 'libibverbs.so.1(IBVERBS_1.12)(64bit)' 'libhwloc.so.15()(64bit)' 'libc.so.6()(64bit)'; do
	if grep -qxF "$want" <<<"$req"; then
		ok "rpm: Requires $want"
	else
		not_ok "rpm: Requires $want" "$(tr '\n' ' ' <<<"$req")"
	fi
done
if grep -qi cuda <<<"$req"; then
	not_ok "rpm: requires nothing of CUDA (loaded at run time)" "$(grep -i cuda <<<"$req")"
else
	ok "rpm: requires nothing of CUDA (loaded at run time)"
fi

# A fresh root: its own empty database.
root=$tmp/root
mkdir -p "$root"
if ! rpm --root "$root" --initdb >"$tmp/init" 2>&1; then
	not_ok "rpm --root --initdb" "$(head -c 300 "$tmp/init")"
	finish
fi
if rpm --root "$root" -i --nodeps "$rpmfile" >"$tmp/inst" 2>&1; then
	ok "rpm --root installs it into a fresh root"
else
	not_ok "rpm --root installs it into a fresh root" "$(head -c 600 "$tmp/inst")"
	finish
fi
if [ "$(rpm --root "$root" -q --qf '%{NAME}-%{VERSION}' "$pkg" 2>&1)" = "$pkg-$version" ]; then
	ok "rpm: the fresh root's database has $pkg-$version"
else
	not_ok "rpm: the fresh root's database has $pkg" "$(rpm --root "$root" -q "$pkg" 2>&1)"
fi
rpm --root "$root" -ql "$pkg" 2>/dev/null | while read -r f; do
	[ -f "$root$f" ] && [ "${f#*/.build-id/}" = "$f" ] && echo "${f%.gz}"
done | LC_ALL=C sort >"$tmp/got-root"
same_list "rpm: the files are in the fresh root" "$tmp/want" "$tmp/got-root"
if rpm --root "$root" -V --nodeps "$pkg" >"$tmp/verify" 2>&1; then
	ok "rpm -V: every installed file matches the package (size, digest, mode)"
else
	not_ok "rpm -V in the fresh root" "$(head -c 400 "$tmp/verify")"
fi
prints "rpm: gdx-doctor from the fresh root runs" "gdx-doctor $version" "$root/usr/bin/gdx-doctor" --version
finish
