#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test only: it builds the package (dpkg-buildpackage) and installs it
# What users install: `make install` into a DESTDIR (every file, its mode and
# content, the programs running from there and gdx-bench finding the installed
# plugin, NEWS), `make uninstall` leaving the prefix as it was (its files and
# the directories install made gone, what was there kept), the man pages, `make deb`
# (dpkg-buildpackage from debian/: every file, the control fields, md5sums,
# Depends against the NEEDED libraries and the floors against Ubuntu 22.04's
# versions, hardening, lintian, dynamic dependencies resolving, only the
# plugin tables exported, an install into a fresh root with dpkg --root),
# the debug symbols' -dbgsym package beside it, and gdx-doctor env's checks.
# (The container recipes install this .deb: tests/check/images.sh.)
# tests/check/docs.sh checks what the man pages and the README say.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/package.sh: N passed, N failed".
#
#   tests/check/package.sh                 # with build/ (make first)
#   GDX_BUILD=build-x tests/check/package.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
# Run from `make test`, the sub-makes here must not inherit its variables.
unset MAKEFLAGS MFLAGS MAKELEVEL
build=${GDX_BUILD:-build}
make=${MAKE:-make}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# check NAME COMMAND...: one line on whether COMMAND succeeds.
check() {
	local name=$1
	shift
	if "$@" >"$tmp/check-out" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "$(head -c 600 "$tmp/check-out")"
	fi
}

# files ROOT: every file and link under ROOT, relative, sorted.
files() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%P\n' | LC_ALL=C sort)
}

version=$("$make" --no-print-directory -s version)
pkg=libnccl-net-gdx

# ---- make install / uninstall ----

inst=$tmp/inst
cat >"$tmp/want-install" <<EOF
usr/local/bin/gdx-bench 755
usr/local/bin/gdx-doctor 755
usr/local/lib/libnccl-net-gdx.so 644
usr/local/share/bash-completion/completions/gdx-bench 644
usr/local/share/bash-completion/completions/gdx-doctor 644
usr/local/share/doc/libnccl-net-gdx/LICENSE 644
usr/local/share/doc/libnccl-net-gdx/NEWS 644
usr/local/share/doc/libnccl-net-gdx/README.md 644
usr/local/share/doc/libnccl-net-gdx/examples/gdx-doctor-daemonset.yaml 644
usr/local/share/doc/libnccl-net-gdx/examples/gdx-k8s-probe.sh 755
usr/local/share/doc/libnccl-net-gdx/examples/gdx-slurm-prolog.sh 755
usr/local/share/doc/libnccl-net-gdx/installed-dirs 644
usr/local/share/man/man1/gdx-bench.1 644
usr/local/share/man/man1/gdx-doctor.1 644
usr/local/share/man/man7/libnccl-net-gdx-diagnostics.7 644
usr/local/share/man/man7/libnccl-net-gdx-failover.7 644
usr/local/share/man/man7/libnccl-net-gdx-gpudirect.7 644
usr/local/share/man/man7/libnccl-net-gdx-nccl.7 644
usr/local/share/man/man7/libnccl-net-gdx-performance.7 644
usr/local/share/man/man7/libnccl-net-gdx-protocol.7 644
usr/local/share/man/man7/libnccl-net-gdx-rma.7 644
usr/local/share/man/man7/libnccl-net-gdx-security.7 644
usr/local/share/man/man7/libnccl-net-gdx.7 644
EOF
# What was there before: a file in a directory install shares (bin), and
# an empty directory it shares (share/man). Both must outlive uninstall.
mkdir -p "$inst/usr/local/bin" "$inst/usr/local/share/man"
echo other >"$inst/usr/local/bin/other-program"
(cd "$inst" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) >"$tmp/want-left"
if ! "$make" --no-print-directory BUILD="$build" install PREFIX=/usr/local DESTDIR="$inst" \
	>"$tmp/install.log" 2>&1; then
	not_ok "make install" "$(tail -c 600 "$tmp/install.log")"
else
	ok "make install PREFIX=/usr/local DESTDIR=..."
	(cd "$inst" && find . \( -type f -o -type l \) ! -name other-program -printf '%P %m\n' |
		LC_ALL=C sort) >"$tmp/got-install"
	same_list "make install: exactly these files, with these modes" "$tmp/want-install" \
		"$tmp/got-install"
	check "make install: the plugin is the built one" \
		cmp "$build/libnccl-net-gdx.so" "$inst/usr/local/lib/libnccl-net-gdx.so"
	check "make install: README" cmp README.md "$inst/usr/local/share/doc/$pkg/README.md"
	check "make install: LICENSE" cmp LICENSE "$inst/usr/local/share/doc/$pkg/LICENSE"
	check "make install: NEWS (the README's debian/NEWS)" cmp debian/NEWS "$inst/usr/local/share/doc/$pkg/NEWS"
	# the directories install made, and none of those that were there
	cat >"$tmp/want-dirs" <<EOF
/usr/local/lib
/usr/local/share/bash-completion
/usr/local/share/bash-completion/completions
/usr/local/share/doc
/usr/local/share/doc/$pkg
/usr/local/share/doc/$pkg/examples
/usr/local/share/man/man1
/usr/local/share/man/man7
EOF
	same_list "make install: installed-dirs lists the directories it made, none that were there" \
		"$tmp/want-dirs" "$inst/usr/local/share/doc/$pkg/installed-dirs"
	prints "installed gdx-doctor --version prints the Makefile's VERSION ($version)" \
		"gdx-doctor $version" "$inst/usr/local/bin/gdx-doctor" --version
	# Every page of the list above: the tools' and the plugin's (7) pages.
	mapfile -t mans < <(sed -n 's#^usr/local/share/man/\(man[17]/[^ ]*\) .*#\1#p' "$tmp/want-install")
	for p in "${mans[@]}"; do
		m=$inst/usr/local/share/man/$p
		if grep -q '@VERSION@' "$m" || ! grep -q "^\.TH .*\"$pkg $version\"" "$m"; then
			not_ok "man page ${p#*/} carries the version" "$(grep '^\.TH' "$m")"
		elif LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$m" >"$tmp/groff" 2>&1 &&
			! [ -s "$tmp/groff" ]; then
			ok "man page ${p#*/} has the version and formats without a warning"
		else
			not_ok "man page ${p#*/} formats without a warning" "$(head -c 400 "$tmp/groff")"
		fi
	done

	# The bench loads the plugin beside it in the build tree, from ../lib
	# once installed (its path made absolute without the "..", as gdx-doctor
	# names it too). The loader's own log names the file; without a device
	# init fails right after, which is fine here.
	real_inst=$(cd "$inst" && pwd -P)
	for where in "$build/gdx-bench:$(pwd -P)/$build/libnccl-net-gdx.so" \
		"$inst/usr/local/bin/gdx-bench:$real_inst/usr/local/lib/libnccl-net-gdx.so"; do
		bench=${where%%:*}
		want=${where#*:}
		LD_DEBUG=files timeout 60 "$bench" -s 1 -n 1 -w 0 >/dev/null 2>"$tmp/bench" || true
		if grep -q "file=$want .*dynamically loaded by" "$tmp/bench"; then
			ok "$bench loads $want by default"
		else
			not_ok "$bench loads $want by default" \
				"$(grep -E 'libnccl-net-gdx|cannot load' "$tmp/bench" | head -3)"
		fi
	done

	# The prefix as it was: every file and directory install made gone,
	# what was there before kept, the other program and the empty share/man.
	if ! "$make" --no-print-directory BUILD="$build" uninstall PREFIX=/usr/local \
		DESTDIR="$inst" >"$tmp/uninstall.log" 2>&1; then
		not_ok "make uninstall" "$(tail -c 600 "$tmp/uninstall.log")"
	else
		(cd "$inst" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) >"$tmp/got-left"
		same_list "make uninstall leaves the prefix as it was: what install made gone, the rest kept" \
			"$tmp/want-left" "$tmp/got-left"
	fi
fi

# A prefix of its own in an empty staging root: empty again after
# install and uninstall.
inst2=$tmp/inst-opt
mkdir -p "$inst2"
if "$make" --no-print-directory BUILD="$build" install PREFIX=/opt/gdx DESTDIR="$inst2" \
	>"$tmp/install2.log" 2>&1 &&
	"$make" --no-print-directory BUILD="$build" uninstall PREFIX=/opt/gdx DESTDIR="$inst2" \
		>>"$tmp/install2.log" 2>&1; then
	left=$(cd "$inst2" && find . -mindepth 1 -printf '%P ' | head -c 400)
	if [ -z "$left" ]; then
		ok "make install then uninstall PREFIX=/opt/gdx: the staging root is empty again"
	else
		not_ok "make install then uninstall PREFIX=/opt/gdx leaves nothing" "left: $left"
	fi
else
	not_ok "make install and uninstall PREFIX=/opt/gdx" "$(tail -c 600 "$tmp/install2.log")"
fi


# ---- make deb: dpkg-buildpackage from debian/ ----

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb=$build/${pkg}_${version}_${arch}.deb
x=$tmp/deb-root
if [ "$(dpkg-parsechangelog -S Version)" = "$version" ]; then
	ok "the Makefile's VERSION is debian/changelog's newest entry ($version)"
else
	not_ok "the Makefile's VERSION is debian/changelog's" "make: '$version', changelog: $(dpkg-parsechangelog -S Version)"
fi
if ! "$make" --no-print-directory BUILD="$build" deb >"$tmp/deb.log" 2>&1 || [ ! -f "$deb" ]; then
	not_ok "make deb builds $deb" "$(tail -c 600 "$tmp/deb.log")"
else
	ok "make deb builds $deb with dpkg-buildpackage"
	field() { dpkg-deb --field "$deb" "$1"; }
	if [ "$(field Package)" = "$pkg" ] && [ "$(field Version)" = "$version" ] &&
		[ "$(field Architecture)" = "$arch" ]; then
		ok "deb: package $pkg, version $version (the Makefile's), architecture $arch"
	else
		not_ok "deb: package, version, architecture" \
			"$(field Package) $(field Version) $(field Architecture)"
	fi
	for f in Maintainer Section Priority Installed-Size Description; do
		if [ -n "$(field "$f")" ]; then
			ok "deb: has $f ($(field "$f" | head -1))"
		else
			not_ok "deb: has $f" "empty or missing"
		fi
	done
	if [ "$(field Recommends)" = ibverbs-providers ]; then
		ok "deb: Recommends ibverbs-providers"
	else
		not_ok "deb: Recommends ibverbs-providers" "Recommends: $(field Recommends)"
	fi

	mkdir -p "$x" "$tmp/control"
	dpkg-deb -x "$deb" "$x"
	dpkg-deb -e "$deb" "$tmp/control"
	cat >"$tmp/want-deb" <<EOF
usr/bin/gdx-bench
usr/bin/gdx-doctor
usr/lib/$multiarch/libnccl-net-gdx.so
usr/share/bash-completion/completions/gdx-bench
usr/share/bash-completion/completions/gdx-doctor
usr/share/doc/libnccl-net-gdx/NEWS.Debian.gz
usr/share/doc/libnccl-net-gdx/README.md.gz
usr/share/doc/libnccl-net-gdx/changelog.gz
usr/share/doc/libnccl-net-gdx/copyright
usr/share/doc/libnccl-net-gdx/examples/gdx-doctor-daemonset.yaml
usr/share/doc/libnccl-net-gdx/examples/gdx-k8s-probe.sh
usr/share/doc/libnccl-net-gdx/examples/gdx-slurm-prolog.sh
usr/share/lintian/overrides/libnccl-net-gdx
usr/share/man/man1/gdx-bench.1.gz
usr/share/man/man1/gdx-doctor.1.gz
usr/share/man/man7/libnccl-net-gdx-diagnostics.7.gz
usr/share/man/man7/libnccl-net-gdx-failover.7.gz
usr/share/man/man7/libnccl-net-gdx-gpudirect.7.gz
usr/share/man/man7/libnccl-net-gdx-nccl.7.gz
usr/share/man/man7/libnccl-net-gdx-performance.7.gz
usr/share/man/man7/libnccl-net-gdx-protocol.7.gz
usr/share/man/man7/libnccl-net-gdx-rma.7.gz
usr/share/man/man7/libnccl-net-gdx-security.7.gz
usr/share/man/man7/libnccl-net-gdx.7.gz
EOF
	files "$x" >"$tmp/got-deb"
	same_list "deb: exactly these files, the plugin in the multiarch directory" \
		"$tmp/want-deb" "$tmp/got-deb"
	cut -d' ' -f3- "$tmp/control/md5sums" | LC_ALL=C sort >"$tmp/md5-list"
	same_list "deb: md5sums lists every file" "$tmp/want-deb" "$tmp/md5-list"
	check "deb: md5sums match" sh -c "cd '$x' && md5sum --quiet -c '$tmp/control/md5sums'"
	check "deb: copyright is the MIT (Expat) license" \
		grep -q '^License: Expat$' "$x/usr/share/doc/$pkg/copyright"
	if zcat "$x/usr/share/doc/$pkg/changelog.gz" | cmp -s - debian/changelog; then
		ok "deb: its changelog is debian/changelog"
	else
		not_ok "deb: its changelog is debian/changelog" "changelog.gz differs"
	fi
	if zcat "$x/usr/share/doc/$pkg/NEWS.Debian.gz" | cmp -s - debian/NEWS; then
		ok "deb: its NEWS.Debian is debian/NEWS (the defects a user must know of)"
	else
		not_ok "deb: its NEWS.Debian is debian/NEWS" "NEWS.Debian.gz differs or is missing"
	fi
	if grep -qE " \./usr/share/doc/$pkg/NEWS\.Debian\.gz$" <<<"$(dpkg-deb -c "$deb")"; then
		ok "deb: dpkg-deb -c lists NEWS (NEWS.Debian.gz, the README's debian/NEWS)"
	else
		not_ok "deb: dpkg-deb -c lists NEWS" "no usr/share/doc/$pkg/NEWS.Debian.gz"
	fi
	# The debug symbols' package, copied out beside the .deb: one .debug
	# file per program and the plugin, by build ID, for gdb and core dumps.
	dbgsym=$build/${pkg}-dbgsym_${version}_${arch}.deb
	if [ ! -f "$dbgsym" ]; then
		not_ok "deb: make deb leaves the debug symbols' $dbgsym beside it" "no such file"
	else
		ok "deb: make deb leaves the debug symbols' $dbgsym beside it"
		dpkg-deb -c "$dbgsym" | awk '$1 !~ /^d/ { print $6 }' | grep '/\.build-id/.*\.debug$' |
			sed 's#^\./##' | LC_ALL=C sort >"$tmp/got-dbg"
		for f in "usr/lib/$multiarch/libnccl-net-gdx.so" usr/bin/gdx-doctor usr/bin/gdx-bench; do
			id=$(readelf -n "$x/$f" | awk '/Build ID:/ { print $3 }')
			echo "usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
		done | LC_ALL=C sort >"$tmp/want-dbg"
		same_list "deb: the -dbgsym package has the debug file of each ELF file, by build ID" \
			"$tmp/want-dbg" "$tmp/got-dbg"
	fi
	mapfile -t mans < <(sed -n "s#^usr/share/man/#$x/&#p" "$tmp/want-deb")
	check "deb: man pages are gzip (${#mans[@]})" gzip -t "${mans[@]}"
	prints "deb: gdx-doctor runs and prints $version" "gdx-doctor $version" \
		"$x/usr/bin/gdx-doctor" --version

	elfs="$x/usr/lib/$multiarch/libnccl-net-gdx.so $x/usr/bin/gdx-doctor $x/usr/bin/gdx-bench"
	for f in $elfs; do
		if ldd "$f" >"$tmp/ldd" 2>&1 && ! grep -q 'not found' "$tmp/ldd"; then
			ok "deb: dynamic dependencies of ${f#"$x"/} resolve"
		else
			not_ok "deb: dynamic dependencies of ${f#"$x"/} resolve" \
				"$(grep 'not found' "$tmp/ldd" | tr '\n' ' ')"
		fi
		# dpkg-buildflags' hardening reached the build: full RELRO
		# (relro and now) and the fortified libc calls; a plain make has
		# neither.
		# (Each output read whole: grep -q ending a pipe early fails it under pipefail.)
		elf=$(readelf -lW -dW "$f")
		if grep -q GNU_RELRO <<<"$elf" && grep -q BIND_NOW <<<"$elf" &&
			grep -qE ' U __[a-z]+_chk@' <<<"$(nm -D "$f")"; then
			ok "deb: ${f#"$x"/} is hardened (RELRO, BIND_NOW, fortified calls)"
		else
			not_ok "deb: ${f#"$x"/} is hardened" "$(readelf -dW "$f" | grep -E 'FLAGS' | tr -s ' ')"
		fi
	done

	syms=$(nm -D --defined-only "$x/usr/lib/$multiarch/libnccl-net-gdx.so" | awk '{ print $3 }' | sort)
	others=$(echo "$syms" | grep -vE '^ncclNetPlugin_v[0-9]+$|^ncclRmaPlugin_v1[4-6]$' | tr '\n' ' ')
	if [ -z "$others" ] && echo "$syms" | grep -qx ncclNetPlugin_v7; then
		ok "deb: the plugin exports only its tables: $(echo "$syms" | tr '\n' ' ')"
	else
		not_ok "deb: the plugin exports only its tables" "also exports: $others"
	fi

	# Each NEEDED library's package, as this system's dpkg knows it, must be
	# in Depends. The path comes from ldd; dpkg may list it with or
	# without /usr (merged /usr).
	depends=$(field Depends)
	deps_ok=1
	for f in $elfs; do
		for lib in $(objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'); do
			path=$(ldd "$f" | awk -v l="$lib" '$1 == l { print $3 }')
			owner=""
			for p in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
				owner=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1)
				[ -n "$owner" ] && break
			done
			if [ -z "$owner" ]; then
				not_ok "deb: Depends covers $lib" "no package owns $path"
				deps_ok=0
			elif ! echo ", $depends" | grep -qE ", $owner( |,|$)"; then
				not_ok "deb: Depends covers $lib" "$owner is not in: $depends"
				deps_ok=0
			fi
		done
	done
	[ "$deps_ok" = 1 ] && ok "deb: Depends ($depends) names the package of every NEEDED library"

	# The floors are what the code calls, not the build machine's versions:
	# ibv_reg_dmabuf_mr (IBVERBS_1.12, rdma-core 34), hwloc 2.1's
	# hwloc_topology_set_components, glibc 2.34's dlopen in libc.
	for want in "libibverbs1 (>= 34)" "libhwloc15 (>= 2.1.0)" "libc6 (>= 2.34)"; do
		if echo ", $depends," | grep -qF ", $want,"; then
			ok "deb: Depends has the floor $want"
		else
			not_ok "deb: Depends has the floor $want" "Depends: $depends"
		fi
	done
	# Every Depends and Recommends relation holds for Ubuntu 22.04's versions.
	rel_ok=1
	fixture=tests/lib/fixtures/distro/ubuntu-22.04.txt
	for rel in $(printf '%s, %s' "$depends" "$(field Recommends)" | tr -d ' ' | tr ',' '\n'); do
		name=${rel%%(*}
		have=$(awk -v p="$name" '$1 == p { print $2 }' "$fixture")
		if [ -z "$have" ]; then
			not_ok "deb: $name is in Ubuntu 22.04" "not in $fixture"
			rel_ok=0
			continue
		fi
		case "$rel" in
		*"("*)
			cond=${rel#*(}
			cond=${cond%)}
			op=$(sed -E 's/^([<>=]+).*/\1/' <<<"$cond")
			floor=${cond#"$op"}
			case "$op" in ">=") op=ge ;; ">>") op=gt ;; "=") op=eq ;; "<=") op=le ;; "<<") op=lt ;; esac
			if ! dpkg --compare-versions "$have" "$op" "$floor"; then
				not_ok "deb: $rel holds on Ubuntu 22.04" "it has $name $have"
				rel_ok=0
			fi
			;;
		esac
	done
	[ "$rel_ok" = 1 ] &&
		ok "deb: Depends and Recommends hold for Ubuntu 22.04's versions ($fixture)"

	# lintian, errors and warnings (and pedantic and informational tags shown);
	# the one override is explained in debian/libnccl-net-gdx.lintian-overrides.
	changes=$build/deb/${pkg}_${version}_${arch}.changes
	if lintian --fail-on error,warning -I --pedantic "$changes" >"$tmp/lintian" 2>&1; then
		ok "deb: lintian passes (errors and warnings): $(grep -cE '^[EWIP]:' "$tmp/lintian") tags"
	else
		not_ok "deb: lintian passes (errors and warnings)" "$(grep -E '^[EW]:' "$tmp/lintian" | head -5 | tr '\n' ' ')"
	fi

	# Installed into a fresh root with dpkg --root: an empty database, no
	# libraries there (hence --force-depends), the files and the database
	# entry as dpkg keeps them.
	root=$tmp/dpkg-root
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
	: >"$root/var/lib/dpkg/status"
	if dpkg --root="$root" --force-depends --no-triggers -i "$deb" >"$tmp/dpkg-i" 2>&1; then
		ok "deb: dpkg --root installs it into a fresh root"
		dpkg --root="$root" -L "$pkg" | while read -r f; do [ -f "$root$f" ] && echo "${f#/}"; done |
			LC_ALL=C sort >"$tmp/got-root"
		same_list "deb: dpkg --root -L lists the files installed there" "$tmp/want-deb" "$tmp/got-root"
		status=$(dpkg-query --root="$root" -W -f='${Status} ${Version}' "$pkg" 2>&1)
		if [ "$status" = "install ok installed $version" ]; then
			ok "deb: the fresh root's database has $pkg $version installed"
		else
			not_ok "deb: the fresh root's database has $pkg installed" "$status"
		fi
		prints "deb: gdx-doctor from the fresh root runs" "gdx-doctor $version" \
			"$root/usr/bin/gdx-doctor" --version
	else
		not_ok "deb: dpkg --root installs it into a fresh root" "$(tail -c 600 "$tmp/dpkg-i")"
	fi
fi

# ---- gdx-doctor env ----

doctor=$build/gdx-doctor
n=$("$doctor" env --markdown | grep -c '^| `NCCL_GDX_')
if [ "$n" -ge 1 ] && [ "$n" -eq "$("$doctor" env --all | grep -c '^NCCL_GDX_')" ]; then
	ok "gdx-doctor env and --markdown list the same $n variables"
else
	not_ok "gdx-doctor env and --markdown list the same variables" "$n in the table"
fi

# ---- gdx-doctor env: the environment checked as the plugin's init checks it ----

# env_run NAME WANT_STATUS REGEX [VAR=VALUE...] [OPTION...]: gdx-doctor env
# with the options, in a clean NCCL_GDX_* environment plus the assignments;
# REGEX must match its output.
env_run() {
	local name=$1 want=$2 re=$3 rc a
	local -a vars=() opts=()
	shift 3
	for a in "$@"; do
		case "$a" in
		NCCL_GDX_*=*) vars+=("$a") ;;
		*) opts+=("$a") ;;
		esac
	done
	# shellcheck disable=SC2046 # one -u and one name per word
	env $(env | sed -n 's/^\(NCCL_GDX_[^=]*\)=.*/-u \1/p') "${vars[@]}" "$doctor" env \
		"${opts[@]}" >"$tmp/env-out" 2>&1
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit status $rc, expected $want: $(head -c 300 "$tmp/env-out")"
	elif ! grep -Eq -- "$re" "$tmp/env-out"; then
		not_ok "$name" "no line matches '$re' in: $(head -c 300 "$tmp/env-out")"
	else
		ok "$name"
	fi
}
env_run "doctor env --all: defaults exit 0" 0 '^NCCL_GDX_TIMEOUT +int +default 20 +not set$' --all
env_run "doctor env: nothing set, one line for the defaults" 0 '^no NCCL_GDX_\* variable is set'
env_run "doctor env: shows a value set here, and where from" 0 '^ +set to "3" \(environment\)$' \
	NCCL_GDX_GID_INDEX=3
env_run "doctor env: a refused value exits 6, naming it" 6 'NCCL_GDX_TIMEOUT=32 is out of range' \
	NCCL_GDX_TIMEOUT=32
env_run "doctor env: a misspelt name exits 6" 6 'NCCL_GDX_TIMEOUTS is set, but the plugin has no' \
	NCCL_GDX_TIMEOUTS=5
# shellcheck disable=SC2016 # backquotes are Markdown here
env_run "doctor env --markdown ignores the environment" 0 '^\| `NCCL_GDX_TIMEOUT` \| `NCCL_IB_TIMEOUT` \| int \| `20` \|' \
	NCCL_GDX_TIMEOUT=32 NCCL_GDX_TIMEOUTS=5 --markdown
"$doctor" env stray >/dev/null 2>"$tmp/env-err"
rc=$?
if [ "$rc" -eq 64 ] && grep -q "unexpected argument 'stray'" "$tmp/env-err"; then
	ok "doctor env: an operand exits 64 (usage), on standard error"
else
	not_ok "doctor env: an operand exits 64 (usage)" "exit $rc: $(head -c 200 "$tmp/env-err")"
fi

report_end tests/check/package.sh
