#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README, the man pages and the programs' --help name the same options,
# variables and defaults:
#  - every NCCL_GDX_* variable of the parameter table (plugin/sys/gdx_param.h,
#    read through the C preprocessor) has its entry in libnccl-net-gdx(7),
#    with its type, default and NCCL twin, and the page names no other; the
#    page's reference is what scripts/update-env-docs.sh makes of it (and
#    of the compatibility table, libnccl-net-gdx-nccl(7)'s);
#  - libnccl-net-gdx-nccl(7)'s NCCL compatibility table has a row for every NCCL_IB_*
#    variable NCCL 2.31 reads (tests/lib/fixtures/nccl-ib-vars), and no
#    other, with NCCL's default, and for each twin the NCCL_GDX_* variable
#    the parameter table reads it for: the twins of the two tables are the
#    same, both ways;
#  - every option of `gdx-doctor --help` and of each `gdx-doctor COMMAND
#    --help` has an entry under that command in gdx-doctor(1), and every
#    entry there is an option of its command; likewise `gdx-bench --help` and
#    gdx-bench(1)'s OPTIONS; each synopsis names only options its command
#    has; a default --help states is the one the man page states;
#  - the README's first two commands are `make demo` and `make test`; every
#    NCCL_GDX_* name the README or a man page mentions is in the table, with
#    its default where the README's tables give one; every gdx-doctor
#    command, and every gdx-doctor or gdx-bench option, in the README's code
#    and in tests/README.md's is one the program has; tests/README.md names
#    every C file under tests/ (the tiers' and tests/lib/'s);
#  - each section-7 page, plugin/*.7 (libnccl-net-gdx(7), the page a user
#    reads, and a page per subject), formats with groff -ww without a
#    warning, has a .TH and a NAME of its own name, is installed and
#    uninstalled by the Makefile, is in the packages' lists (the rpm spec's
#    %files, tests/check/package.sh's make install and .deb lists,
#    tests/check/rpm.sh's), and libnccl-net-gdx(7)'s SEE ALSO names every
#    other, each of which names it back; every page of the plugin's the
#    README, the man pages, the scripts and the sources name (with a
#    heading, "libnccl-net-gdx-rma(7), SECTION") is there, with that heading;
#  - the README and libnccl-net-gdx(7) say NCCL "A through B" loads the
#    plugin where A is the first release gdx-doctor check's loader table
#    has take a table the built library exports, and B its newest;
#  - each table of figures of libnccl-net-gdx-performance(7) opens with a
#    paragraph naming the tree it was measured on and its command;
#  - no man page renders a word glued to a possessive ("X'sY", a font
#    change's third argument with no space before it).
# Then each check again on a copy made to drift by one change, which it must
# refuse: a default, a variable, an option in --help or in a man page, a
# README mention, the README's NCCL releases, the README's first command, a
# page's warning, a glued possessive, a table of figures without its tree,
# install or package entry or SEE ALSO entry, a reference to a page or
# heading that is not there, a test file or gdx-doctor command
# tests/README.md names wrongly.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/docs.sh: N passed, N failed".
#
#   tests/check/docs.sh                 # with build/ (make first)
#   GDX_BUILD=build-x tests/check/docs.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
build=${GDX_BUILD:-build}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# parse COMMAND FILE [ARG...]: tests/check/docs_parse.py, memoized by FILE's content
# and the arguments (the drift checks parse many copies of the same files).
# The interpreter is looked up once: a version manager's shim costs more than
# the parse.
py=$(python3 -c 'import sys; print(sys.executable)')
cache=$tmp/parse-cache
mkdir -p "$cache"
parse() {
	local key
	key=$(cat "$2" <(printf '%s\n' "$@") | md5sum | cut -c1-32)
	[ -f "$cache/$key" ] || "$py" tests/check/docs_parse.py "$@" >"$cache/$key" || return
	cat "$cache/$key"
}
man7=plugin/libnccl-net-gdx.7
man7_nccl=plugin/libnccl-net-gdx-nccl.7
# Every section-7 page: the main one and a page per subject.
mapfile -t man7s < <(LC_ALL=C ls plugin/*.7)
man_doctor=plugin/tools/doctor/gdx-doctor.1
man_bench=plugin/tools/bench/gdx-bench.1
# Names the docs misspell on purpose, to show what gdx-doctor env says of them.
misspelt="NCCL_GDX_TIMOUT NCCL_GDX_TIMEOUTS"

# check NAME FUNCTION ARGS...: one line on whether FUNCTION succeeds; what it
# prints is the reason it fails.
check() {
	local name=$1 why
	shift
	if why=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name" "$(head -c 600 <<<"$why" | tr '\n' ' ')"
	fi
}

# differ WHAT WANT GOT: fails, saying what is only on one side, when the two
# lists (sorted here) differ.
differ() {
	local what=$1 only_want only_got
	only_want=$(comm -23 <(sort -u "$2") <(sort -u "$3") | tr '\n' ' ')
	only_got=$(comm -13 <(sort -u "$2") <(sort -u "$3") | tr '\n' ' ')
	[ -z "$only_want$only_got" ] && return 0
	echo "$what:${only_want:+ missing: $only_want}${only_got:+ extra: $only_got}"
	return 1
}

# The README is for users: the reference lives in the man pages.
lines=$(wc -l <README.md)
if [ "$lines" -le 500 ]; then
	ok "the README is a user's guide: $lines lines, at most 500"
else
	not_ok "the README is a user's guide, at most 500 lines" \
		"$lines lines: move reference material to plugin/libnccl-net-gdx.7"
fi

# ---- what the sources and programs say ----

# The parameter table through the preprocessor: one row a variable.
params=$tmp/params
printf '%s\n' '#include "sys/gdx_param.h"' \
	'#define GDX_DOC_ROW(type, field, name, def, twin, lo, hi, help) @row type name def twin @end' \
	'GDX_PARAM_TABLE(GDX_DOC_ROW)' | ${CC:-cc} -E -P -Iplugin -Iinclude -x c - >"$tmp/cpp" 2>&1
parse param-rows "$tmp/cpp" >"$params"
if [ -s "$params" ]; then
	ok "the parameter table reads through the preprocessor: $(wc -l <"$params") variables"
else
	not_ok "the parameter table reads through the preprocessor" "$(head -c 300 "$tmp/cpp")"
fi

helps=$tmp/help
mkdir -p "$helps"
"$build/gdx-doctor" --help >"$helps/doctor" 2>&1
"$build/gdx-bench" --help >"$helps/bench" 2>&1
# The commands gdx-doctor --help lists; "help" has no options of its own.
doctor_cmds=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
	on && /^  [a-z]/ && $1 != "help" { print $1 }' "$helps/doctor")
for c in $doctor_cmds; do
	"$build/gdx-doctor" "$c" --help >"$helps/doctor-$c" 2>&1
done
if [ -n "$doctor_cmds" ] && [ -s "$helps/bench" ]; then
	ok "gdx-doctor --help lists its commands: $(echo "$doctor_cmds" | tr '\n' ' ')"
else
	not_ok "gdx-doctor and gdx-bench print their --help" "make first"
fi

# ---- libnccl-net-gdx(7): the variables ----

# man7_vars PARAMS PAGE: the page's entry of every variable has the table's
# type, default and twin, and the page has no other entry.
man7_vars() {
	parse man7-vars "$2" >"$tmp/man7-vars"
	differ "NCCL_GDX_* entries (name, type, default, twin) against the table" \
		"$1" "$tmp/man7-vars"
}
check "libnccl-net-gdx.7 has every NCCL_GDX_* variable with its type, default and twin" \
	man7_vars "$params" "$man7"
check "libnccl-net-gdx.7's and libnccl-net-gdx-nccl.7's references are what scripts/update-env-docs.sh makes" \
	env GDX_DOCTOR="$build/gdx-doctor" scripts/update-env-docs.sh --check

# ---- libnccl-net-gdx(7): the NCCL compatibility table ----

# NCCL's NCCL_IB_* variables through the preprocessor: name, default, kind.
compat=$tmp/compat
printf '%s\n' '#include "sys/gdx_param.h"' \
	'#define GDX_DOC_CROW(name, def, kind, what) @crow name def kind @end' \
	'GDX_NCCL_IB_TABLE(GDX_DOC_CROW)' | ${CC:-cc} -E -P -Iplugin -Iinclude -x c - >"$tmp/cpp-compat" 2>&1
parse compat-rows "$tmp/cpp-compat" >"$compat"
nccl_list=tests/lib/fixtures/nccl-ib-vars/2.31.0
# compat_twins PARAMS COMPAT: the parameter table's NCCL_IB_* twins are the
# compatibility table's twin rows, both ways.
compat_twins() {
	differ "NCCL_IB_* twins of the parameter table against the compatibility table's" \
		<(awk -F '\t' '$4 ~ /^NCCL_IB_/ { print $4 }' "$1") \
		<(awk -F '\t' '$3 == "twin" { print $1 }' "$2")
}
# compat_nccl LIST COMPAT: the table has a row for every NCCL_IB_* variable
# of NCCL's list, and none other.
compat_nccl() {
	differ "NCCL 2.31's NCCL_IB_* variables against the compatibility table" \
		<(grep -v '^#' "$1") <(cut -f1 "$2")
}
# man7_compat PARAMS COMPAT PAGE: the page's compatibility entries have the
# table's defaults and kinds, and each twin names the variable it is read
# as; the page has no other entry.
man7_compat() {
	awk -F '\t' 'NR == FNR { if ($4 != "") twin[$4] = $1; next }
		{ print $1 "\t" $2 "\t" $3 "\t" ($3 == "twin" ? twin[$1] : "") }' "$1" "$2" >"$tmp/want-compat"
	parse man7-compat "$3" >"$tmp/man7-compat"
	differ "NCCL_IB_* entries (name, default, kind, twin) against the table" \
		"$tmp/want-compat" "$tmp/man7-compat"
}
if [ "$(wc -l <"$compat")" -ge 40 ]; then
	ok "the compatibility table reads through the preprocessor: $(wc -l <"$compat") variables"
else
	not_ok "the compatibility table reads through the preprocessor" "$(head -c 300 "$tmp/cpp-compat")"
fi
check "every NCCL_IB_* twin of the parameter table has its row in the compatibility table, both ways" \
	compat_twins "$params" "$compat"
check "the compatibility table lists every NCCL_IB_* variable of NCCL 2.31 ($nccl_list)" \
	compat_nccl "$nccl_list" "$compat"
check "libnccl-net-gdx-nccl.7's compatibility table has every row with its default, kind and twin" \
	man7_compat "$params" "$compat" "$man7_nccl"

# The NCCL releases that load this plugin, as gdx-doctor check's loader
# table (plugin/tools/doctor/gdx_doctor_nccl.c) knows them: the first row
# that takes one of the ncclNetPlugin_vN tables the built library exports,
# and the newest row, which check judges every later release as.
cat >"$tmp/nccl-range.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"

int main(int argc, char **argv)
{
	unsigned exported = 0;

	for (int i = 1; i < argc; i++)
		exported |= 1u << atoi(argv[i]);
	const struct nccl_loader *lo = nccl_loader_at(nccl_loader_first_taking(exported));
	if (!lo)
		return 1;
	printf("%.*s %s\n", (int)strcspn(lo->releases, "-"), lo->releases,
	       nccl_loader_newest()->releases);
	return 0;
}
EOF
mapfile -t net_versions < <(nm -D --defined-only "$build/libnccl-net-gdx.so" |
	sed -n 's/.* ncclNetPlugin_v\([0-9]*\)$/\1/p')
nccl_known=$(${CC:-cc} -D_GNU_SOURCE -Iplugin -Iinclude -o "$tmp/nccl-range" "$tmp/nccl-range.c" \
	plugin/tools/doctor/gdx_doctor_nccl.c -ldl 2>&1 && "$tmp/nccl-range" "${net_versions[@]}")
# nccl_range "LO HI" FILE...: each "NCCL X through Y" the files say is "NCCL
# LO through HI", and the first file says it.
nccl_range() {
	local want="NCCL ${1% *} through ${1#* }" f said bad=""
	shift
	grep -qF "$want" "$1" || bad+=" $1 does not say \"$want\";"
	for f in "$@"; do
		while read -r said; do
			[ "$said" = "$want" ] || bad+=" $f: \"$said\";"
		done < <(grep -oE 'NCCL [0-9]+\.[0-9]+ through [0-9]+\.[0-9]+' "$f")
	done
	[ -z "$bad" ] || {
		echo "gdx-doctor check knows $want:$bad"
		return 1
	}
}
if [[ "$nccl_known" =~ ^2\.[0-9]+\ 2\.[0-9]+$ ]]; then
	ok "gdx-doctor check's loader table knows the plugin's tables in NCCL $nccl_known"
else
	not_ok "gdx-doctor check's loader table reads" "$(head -c 300 <<<"$nccl_known")"
fi
check "the README and libnccl-net-gdx.7 name the NCCL releases check knows (NCCL ${nccl_known% *} through ${nccl_known#* })" \
	nccl_range "$nccl_known" README.md "$man7"

# mentions PARAMS FILE: every NCCL_GDX_* name FILE mentions is in the table.
mentions() {
	parse mentions "$2" | grep -vxF -f <(tr ' ' '\n' <<<"$misspelt") >"$tmp/mentioned"
	local unknown
	unknown=$(comm -23 "$tmp/mentioned" <(cut -f1 "$1" | sort -u) | tr '\n' ' ')
	[ -z "$unknown" ] || {
		echo "not in the parameter table: $unknown"
		return 1
	}
}
for f in README.md "${man7s[@]}" "$man_doctor" "$man_bench"; do
	check "$f names only NCCL_GDX_* variables of the table" mentions "$params" "$f"
done

# ---- gdx-doctor(1) against gdx-doctor --help ----

# doctor_cmd_opts HELPS PAGE CMD: CMD's options in its --help and its
# entries in the page are the same (-h and --help are the page's global
# entries), and its synopsis names no option it lacks.
doctor_cmd_opts() {
	local helps=$1 page=$2 cmd=$3
	parse help-opts "$helps/doctor-$cmd" | grep -vxE -- '-h|--help' >"$tmp/want"
	parse man-cmd-opts "$page" | awk -F '\t' -v c="$cmd" '$1 == c { print $2 }' >"$tmp/got"
	differ "$cmd: --help against the page's entries" "$tmp/want" "$tmp/got" || return 1
	parse man-synopsis "$page" "$(echo "$doctor_cmds" | tr '\n' ,)help" |
		awk -F '\t' -v c="$cmd" '$1 == c { print $2 }' >"$tmp/syn"
	local extra
	extra=$(comm -13 <(sort -u "$tmp/want") <(sort -u "$tmp/syn") | tr '\n' ' ')
	[ -z "$extra" ] || {
		echo "$cmd: the synopsis names options it does not have: $extra"
		return 1
	}
}
# doctor_global HELPS PAGE: the page's entries outside any command are
# gdx-doctor --help's options and the -h, --help every command takes.
doctor_global() {
	{
		parse help-opts "$1/doctor"
		printf '%s\n' -h --help
	} >"$tmp/want"
	parse man-cmd-opts "$2" | awk -F '\t' '$1 == "" { print $2 }' >"$tmp/got"
	differ "global options against the page's entries" "$tmp/want" "$tmp/got"
}
# doctor_cmds_described PAGE: every command has its entry.
doctor_cmds_described() {
	differ "commands of gdx-doctor --help against the page's" \
		<(echo "$doctor_cmds") <(parse man-cmds "$1")
}
# defaults HELP PAGE SECTION [CMD]: each default HELP states is the one the
# page's entry for that option states ("default N" or "default: N").
defaults() {
	local opt value text bad=""
	while IFS=$'\t' read -r opt value; do
		text=$(parse man-entries "$2" "$3" |
			awk -v k="${4:-}|$opt|" 'index($0, k) == 1 { print substr($0, length(k) + 1) }')
		grep -qE -- "default:? $value([^0-9A-Za-z]|\$)" <<<"$text" ||
			bad="$bad $opt (--help: default $value; page: ${text:0:80})"
	done < <(parse help-defaults "$1")
	[ -z "$bad" ] || {
		echo "defaults differ:$bad"
		return 1
	}
}

check "gdx-doctor.1 describes every command of gdx-doctor --help" \
	doctor_cmds_described "$man_doctor"
check "gdx-doctor.1's global options are gdx-doctor --help's" doctor_global "$helps" "$man_doctor"
for c in $doctor_cmds; do
	check "gdx-doctor.1's '$c' options are 'gdx-doctor $c --help''s, both ways" \
		doctor_cmd_opts "$helps" "$man_doctor" "$c"
	check "gdx-doctor.1 states the defaults 'gdx-doctor $c --help' states" \
		defaults "$helps/doctor-$c" "$man_doctor" COMMANDS "$c"
done

# ---- gdx-bench(1) against gdx-bench --help ----

# bench_opts HELP PAGE: the options of --help and the OPTIONS entries are the
# same, and the synopsis names no other.
bench_opts() {
	parse help-opts "$1" >"$tmp/want"
	parse man-opts "$2" OPTIONS >"$tmp/got"
	differ "--help against the OPTIONS entries" "$tmp/want" "$tmp/got" || return 1
	parse man-synopsis "$2" "" | cut -f2 >"$tmp/syn"
	local extra
	extra=$(comm -13 <(sort -u "$tmp/want") <(sort -u "$tmp/syn") | tr '\n' ' ')
	[ -z "$extra" ] || {
		echo "the synopsis names options gdx-bench does not have: $extra"
		return 1
	}
}
check "gdx-bench.1's options are gdx-bench --help's, both ways" bench_opts "$helps/bench" "$man_bench"
check "gdx-bench.1 states the defaults gdx-bench --help states" \
	defaults "$helps/bench" "$man_bench" OPTIONS

# ---- the pages' version ----

# man_version VERSION PAGE...: each page's .TH footer is "libnccl-net-gdx
# VERSION" (debian/changelog's), as man -l shows the source page itself.
man_version() {
	local version=$1 page footer bad=
	shift
	for page in "$@"; do
		footer=$(sed -n '1,5s/^\.TH [^ ]* [0-9] "[^"]*" "\([^"]*\)".*/\1/p' "$page")
		[ "$footer" = "libnccl-net-gdx $version" ] || bad="$bad $page (\"$footer\")"
	done
	[ -z "$bad" ] && return 0
	echo "footer is not \"libnccl-net-gdx $version\":$bad"
	return 1
}
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
check "each man page's footer names debian/changelog's version, $version" \
	man_version "$version" "${man7s[@]}" "$man_doctor" "$man_bench"

# ---- the section-7 pages: well-formed, installed, packaged, linked ----

# man_wellformed PAGE...: each formats with groff -ww without a warning, and
# its .TH and NAME are its file's name.
man_wellformed() {
	local page name bad="" out head
	for page in "$@"; do
		name=$(basename "$page" .7)
		out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$out" ] || bad+=" $page: groff -ww: $(head -c 200 <<<"$out" | tr '\n' ' ');"
		head=$(parse man-head "$page" | tr '\n' ' ')
		[ "$head" = "${name^^}	7 $name " ] ||
			bad+=" $page: .TH and NAME are not ${name^^} 7 and $name: $head;"
	done
	[ -z "$bad" ] || {
		echo "not well-formed:$bad"
		return 1
	}
}
# man_glued PAGE...: no page renders a word glued to a possessive, as
# .BR X 's Y does when Y is a third argument: the font changes back to bold
# without a space, and "X'sY" is printed.
man_glued() {
	local page hits bad=""
	for page in "$@"; do
		hits=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou "$page" 2>/dev/null |
			grep -oE "[[:alnum:]_)]+['’]s[[:alpha:]]+" | sort -u | tr '\n' ' ')
		[ -z "$hits" ] || bad+=" $page: $hits;"
	done
	[ -z "$bad" ] || {
		echo "a possessive glued to the next word:$bad"
		return 1
	}
}
# man_installed MAKEFILE PAGE...: make install (dry run) puts each page in
# MANDIR/man7 from the build's man/, and make uninstall removes it.
man_installed() {
	local mk=$1 page name bad=""
	shift
	make --no-print-directory -s -f "$mk" -n install BUILD="$build" PREFIX=/usr DESTDIR=/dest \
		>"$tmp/install-n" 2>&1
	make --no-print-directory -s -f "$mk" -n uninstall BUILD="$build" PREFIX=/usr DESTDIR=/dest \
		>"$tmp/uninstall-n" 2>&1
	for page in "$@"; do
		name=$(basename "$page")
		grep -qF -- " $build/man/$name '/dest/usr/share/man/man7/$name'" "$tmp/install-n" ||
			bad+=" $name (not installed);"
		grep -q "^rm -f .*'/dest/usr/share/man/man7/$name'" "$tmp/uninstall-n" ||
			bad+=" $name (not uninstalled);"
	done
	[ -z "$bad" ] || {
		echo "$mk:$bad"
		return 1
	}
}
# man_packaged SPEC PACKAGE_SH RPM_SH PAGE...: the spec's %files, package.sh's
# make install and .deb lists and rpm.sh's list name each page, and the
# spec no other.
man_packaged() {
	local spec=$1 pkg_sh=$2 rpm_sh=$3 page name bad=""
	shift 3
	for page in "$@"; do
		name=$(basename "$page")
		grep -qxF "%{_mandir}/man7/$name*" "$spec" || bad+=" $name (not in $spec's %files);"
		grep -qxF "usr/local/share/man/man7/$name 644" "$pkg_sh" ||
			bad+=" $name (not in $pkg_sh's make install list);"
		grep -qxF "usr/share/man/man7/$name.gz" "$pkg_sh" || bad+=" $name (not in $pkg_sh's .deb list);"
		grep -qxF "\$(rpm --eval '%_mandir')/man7/$name" "$rpm_sh" || bad+=" $name (not in $rpm_sh's list);"
	done
	differ "$spec's section-7 pages against plugin/*.7" \
		<(for page in "$@"; do basename "$page"; done) \
		<(sed -n 's#^%{_mandir}/man7/\(.*\)\*$#\1#p' "$spec") || bad+=" (see above)"
	[ -z "$bad" ] || {
		echo "not packaged:$bad"
		return 1
	}
}
# man_see_also MAIN PAGE...: MAIN's SEE ALSO names each other page, and each
# names MAIN back.
man_see_also() {
	local main=$1 page bad=""
	shift
	differ "the pages $main's SEE ALSO names against plugin/*.7" \
		<(for page in "$@"; do [ "$page" = "$main" ] || basename "$page" .7; done) \
		<(parse man-see-also "$main" | awk -F '\t' '$2 == 7 { print $1 }') || return 1
	for page in "$@"; do
		[ "$page" = "$main" ] ||
			parse man-see-also "$page" | grep -qxF "$(basename "$main" .7)	7" ||
			bad+=" $page"
	done
	[ -z "$bad" ] || {
		echo "SEE ALSO does not name $(basename "$main" .7)(7):$bad"
		return 1
	}
}
# page_refs PAGES -- FILE...: every page of the plugin's the files name is one
# of PAGES, and a heading named with it one of its .SH headings.
page_refs() {
	local pages=() file page heading bad="" p
	while [ "$1" != -- ]; do
		pages+=("$1")
		shift
	done
	shift
	while IFS=$'\t' read -r file page heading; do
		p=""
		for f in "${pages[@]}"; do [ "$(basename "$f" .7)" = "$page" ] && p=$f; done
		if [ -z "$p" ]; then
			bad+=" $file: $page(7) (no such page);"
		elif [ -n "$heading" ] && ! grep -qxE "\.SH \"?$heading\"?" "$p"; then
			bad+=" $file: $page(7), $heading (no such heading there);"
		fi
	done < <("$py" tests/check/docs_parse.py page-refs "$@")
	[ -z "$bad" ] || {
		echo "not there:$bad"
		return 1
	}
}
# The files that may name the pages: the docs, the build and packaging, the
# scripts and the sources (git's list: a new file counts once added), not
# this script, whose drifts name pages that are not there.
mapfile -t ref_files < <(printf '%s\n' "${man7s[@]}"
	git ls-files README.md tests/README.md Makefile debian scripts \
		'plugin/*.[ch]' 'plugin/*.1' 'tests/*.sh' 'tests/*.py' 'tests/*.[ch]' |
		grep -vxF tests/check/docs.sh)

check "each section-7 page formats without a warning, its .TH and NAME its own (${#man7s[@]} pages)" \
	man_wellformed "${man7s[@]}"
check "no man page renders a word glued to a possessive (X'sY)" \
	man_glued "${man7s[@]}" "$man_doctor" "$man_bench"
check "make install and make uninstall take each section-7 page" \
	man_installed Makefile "${man7s[@]}"
check "the rpm spec, package.sh and rpm.sh list each section-7 page" \
	man_packaged scripts/libnccl-net-gdx.spec tests/check/package.sh tests/check/rpm.sh "${man7s[@]}"
check "libnccl-net-gdx.7's SEE ALSO names every other section-7 page, and each names it back" \
	man_see_also "$man7" "${man7s[@]}"
check "every libnccl-net-gdx*(7) page and heading the docs, scripts and sources name is there (${#ref_files[@]} files)" \
	page_refs "${man7s[@]}" -- "${ref_files[@]}"

# figures_sourced PAGE: each table of figures the page gives opens with a
# paragraph that names the tree it was measured on (a commit, or a release
# X.Y.Z) and the command that measured it (make bench, a scripts/ script or
# gdx-bench), so that a reader can tell an old figure and rerun it.
figures_sourced() {
	local line text bad="" n=0
	while IFS=$'\t' read -r line text; do
		n=$((n + 1))
		grep -qE '(commit [0-9a-f]{7}|[0-9]+\.[0-9]+\.[0-9]+)' <<<"$text" ||
			bad+=" line $line: no commit or release;"
		grep -qE '(make bench|scripts/[a-z-]+\.sh|gdx-bench)' <<<"$text" ||
			bad+=" line $line: no command;"
	done < <(parse figure-intros "$1")
	[ "$n" -gt 0 ] || bad+=" no table of figures found"
	[ -z "$bad" ] || {
		echo "$1: a table of figures without its source:$bad"
		return 1
	}
}
check "libnccl-net-gdx-performance.7's tables of figures name their tree and command" \
	figures_sourced plugin/libnccl-net-gdx-performance.7

# ---- the README ----

# readme_first README: its first commands are make demo, then make test.
readme_first() {
	local first
	first=$(parse readme-first "$1" | head -n 2 | tr '\n' ';')
	[ "$first" = "make demo;make test;" ] || {
		echo "the first two commands are: $first"
		return 1
	}
}
# readme_calls HELPS README: every gdx-doctor command and every option of a
# gdx-doctor or gdx-bench command line in the README's code is the program's.
# With no command gdx-doctor runs check; an upper-case word stands for any
# command (gdx-doctor COMMAND --help).
readme_calls() {
	local tool cmd opt bad="" f
	for f in "$1"/*; do
		case "$f" in *.opts) continue ;; esac
		parse help-opts "$f" >"$f.opts"
	done
	cat "$1"/doctor*.opts >"$tmp/doctor-all.opts"
	while IFS='|' read -r tool cmd opt; do
		if [ "$tool" = gdx-bench ]; then
			[ -z "$opt" ] || grep -qxF -- "$opt" "$1/bench.opts" || bad="$bad gdx-bench $opt;"
		elif [[ "$cmd" =~ ^[A-Z]+$ ]]; then
			[ -z "$opt" ] || grep -qxF -- "$opt" "$tmp/doctor-all.opts" ||
				bad="$bad gdx-doctor $cmd $opt;"
		elif [ -n "$cmd" ] && [ "$cmd" != help ] && [ ! -f "$1/doctor-$cmd" ]; then
			bad="$bad gdx-doctor $cmd (no such command);"
		elif [ -n "$opt" ] && [ "$cmd" != help ]; then
			cat "$1/doctor-${cmd:-check}.opts" "$1/doctor.opts" >"$tmp/cmd.opts"
			grep -qxF -- "$opt" "$tmp/cmd.opts" || bad="$bad gdx-doctor ${cmd:-check} $opt;"
		fi
	done < <(parse readme-calls "$2")
	[ -z "$bad" ] || {
		echo "not the programs':$bad"
		return 1
	}
}
# readme_defaults PARAMS README: each default the README's tables give a
# variable is the table's.
readme_defaults() {
	local name value want bad=""
	while IFS=$'\t' read -r name value; do
		want=$(awk -F '\t' -v n="$name" '$1 == n { print $3 }' "$1")
		[ "$value" = "$want" ] || bad="$bad $name (README: $value; table: ${want:-empty})"
	done < <(parse readme-defaults "$2")
	[ -z "$bad" ] || {
		echo "defaults differ:$bad"
		return 1
	}
}
check "README's first two commands are make demo and make test" readme_first README.md
check "README's NCCL_GDX_* defaults are the table's ($(parse readme-defaults README.md | wc -l) given)" \
	readme_defaults "$params" README.md
check "README's gdx-doctor and gdx-bench command lines use their commands and options" \
	readme_calls "$helps" README.md
check "tests/README.md's gdx-doctor and gdx-bench command lines use their commands and options" \
	readme_calls "$helps" tests/README.md
n=$(parse readme-calls README.md | wc -l)
if [ "$n" -ge 10 ]; then
	ok "README's code has gdx-doctor and gdx-bench command lines to check ($n)"
else
	not_ok "README's code has gdx-doctor and gdx-bench command lines to check" "only $n"
fi

# test_paths FILE...: every path under tests/ the files name is there (the
# tests sit in a folder per tier, tests/README.md). A name X stands for any
# (tests/unit/X.c), and a * is a glob; a path must match a file or folder.
test_paths() {
	local p glob missing=""
	while read -r p; do
		glob=$(sed -E 's#/X(\.[a-z]+)?(/|$)#/*\1\2#g' <<<"$p")
		compgen -G "$glob" >/dev/null || missing+=" $p"
	done < <(sed 's/\\-/-/g' "$@" | grep -oE '(^|[^A-Za-z0-9_./-])tests/[A-Za-z0-9_./*-]*[A-Za-z0-9_*/]' |
		sed -E 's/^[^a-z]//' | sort -u)
	[ -z "$missing" ] || {
		echo "not there:$missing"
		return 1
	}
}
check "README, tests/README.md and the man pages name only tests/ paths that are there" \
	test_paths README.md tests/README.md "${man7s[@]}" "$man_doctor" "$man_bench"

# tests_named README FILE...: README names each C file of the tiers and of
# tests/lib/: its path, or `X.c` (a tier table's list); one of tests/lib/ or
# tests/fuzz/ may be named `X` too, as the harness's and fuzzers' lists do.
tests_named() {
	local readme=$1 f b bad=""
	shift
	for f in "$@"; do
		b=$(basename "$f" .c)
		grep -qF -e "\`$f\`" -e "\`$b.c\`" "$readme" && continue
		[[ "$f" == tests/lib/* || "$f" == tests/fuzz/* ]] && grep -qF "\`$b\`" "$readme" && continue
		bad+=" $f"
	done
	[ -z "$bad" ] || {
		echo "$readme does not name:$bad"
		return 1
	}
}
mapfile -t test_sources < <(LC_ALL=C ls tests/*/*.c)
check "tests/README.md names every C file of the tiers and tests/lib/ (${#test_sources[@]} files)" \
	tests_named tests/README.md "${test_sources[@]}"

# map_folders README: tests/README.md's "Where things are" lists plugin/'s
# folders in the order tests/check/layers.sh declares (LAYERS, then the
# tools'), and those are the folders on disk.
map_folders() {
	local listed declared on_disk
	listed=$(awk '/^## / { on = ($0 == "## Where things are"); next }
		on && /^- `plugin\/[a-z\/]*\/`:/ { f = $2; gsub(/`|:$/, "", f); sub(/^plugin\//, "", f); sub(/\/$/, "", f); print f }' "$1")
	declared=$(sed -n 's/^LAYERS="\(.*\)"$/\1/p' tests/check/layers.sh | tr ' ' '\n'
		sed -n 's/^TOOLS="\(.*\)"$/\1/p' tests/check/layers.sh | tr ' ' '\n' | sed 's#^#tools/#')
	on_disk=$(find plugin -mindepth 1 -maxdepth 2 -type d | sed 's#^plugin/##' | grep -vx tools | sort)
	[ "$listed" = "$declared" ] || {
		echo "the map lists $(echo $listed), layers.sh declares $(echo $declared)"
		return 1
	}
	[ "$(sort <<<"$listed")" = "$on_disk" ] || {
		echo "the map lists $(echo $listed), plugin/ has $(echo $on_disk)"
		return 1
	}
}
check "tests/README.md's map lists plugin/'s folders on disk in the declared layer order" \
	map_folders tests/README.md

# ---- the same checks on copies made to drift: each must fail ----

drift=$tmp/drift
mkdir -p "$drift"
# caught NAME NEEDLE FUNCTION ARGS...: FUNCTION fails on the drifted copy,
# and its reason names NEEDLE (a fixed string): the drift, not something else.
caught() {
	local name=$1 needle=$2 why
	shift 2
	if why=$("$@" 2>&1); then
		not_ok "drift caught: $name" "the check passed"
	elif grep -qF -- "$needle" <<<"$why"; then
		ok "drift caught: $name"
	else
		not_ok "drift caught: $name" "it failed, but not naming '$needle': $(head -c 300 <<<"$why")"
	fi
}
fresh() { rm -rf "$drift" && mkdir -p "$drift" && cp -r "$helps" "$drift/help"; }

fresh
sed 's/^\(NCCL_GDX_TIMEOUT\t[a-z]*\t\)20\t/\121\t/' "$params" >"$drift/params"
caught "a default changed in the table (NCCL_GDX_TIMEOUT 20 to 21)" "NCCL_GDX_TIMEOUT" \
	man7_vars "$drift/params" "$man7"
printf 'NCCL_GDX_NEW_KNOB\tint\t0\t\n' | cat "$params" - >"$drift/params"
caught "a variable added to the table only" "NCCL_GDX_NEW_KNOB" man7_vars "$drift/params" "$man7"
sed 's/^\(NCCL_GDX_HCA\t[a-z]*\t\t\)NCCL_IB_HCA$/\1/' "$params" >"$drift/params"
caught "a twin dropped from the table" "NCCL_GDX_HCA" man7_vars "$drift/params" "$man7"
sed '/^\.BR NCCL_GDX_LIVE_DIR /,/^\.TP/d' "$man7" >"$drift/man7"
caught "a variable's entry gone from the page" "NCCL_GDX_LIVE_DIR" man7_vars "$params" "$drift/man7"
sed 's/^\(\.BR NCCL_GDX_CTS_BATCH " (int, default " \)8 )$/\116 )/' "$man7" >"$drift/man7"
caught "a default changed on the page only (NCCL_GDX_CTS_BATCH 8 to 16)" "NCCL_GDX_CTS_BATCH" \
	man7_vars "$params" "$drift/man7"
sed 's/^\(NCCL_GDX_TIMEOUT\t[a-z]*\t20\t\)NCCL_IB_TIMEOUT$/\1NCCL_IB_TIMEOUT_MS/' "$params" >"$drift/params"
caught "a twin renamed in the parameter table only" "NCCL_IB_TIMEOUT_MS" \
	compat_twins "$drift/params" "$compat"
printf 'NCCL_IB_NEW_IN_2_32\n' | cat "$nccl_list" - >"$drift/nccl-list"
caught "a variable NCCL reads that the compatibility table lacks" "NCCL_IB_NEW_IN_2_32" \
	compat_nccl "$drift/nccl-list" "$compat"
sed '/^\.BR NCCL_IB_OOO_RQ /,/^\.TP/d' "$man7_nccl" >"$drift/man7"
caught "an entry gone from the page's compatibility table" "NCCL_IB_OOO_RQ" \
	man7_compat "$params" "$compat" "$drift/man7"
sed '/^\.B NCCL_GDX_RETRY_CNT$/s/RETRY_CNT/TIMEOUT/' "$man7_nccl" >"$drift/man7"
caught "a twin on the page read as another variable" "NCCL_IB_RETRY_CNT" \
	man7_compat "$params" "$compat" "$drift/man7"
sed '2s/libnccl-net-gdx [^"]*"/libnccl-net-gdx 0.0.1"/' "$man_bench" >"$drift/man_bench"
caught "a page's footer names another version" "$drift/man_bench" \
	man_version "$version" "$man7" "$drift/man_bench"
sed '0,/NCCL 2\.[0-9]* through 2\.[0-9]*/s//NCCL 2.13 through 2.30/' README.md >"$drift/README.md"
caught "the README names an older newest NCCL than check knows (2.30)" "README.md: \"NCCL 2.13 through 2.30\"" \
	nccl_range "$nccl_known" "$drift/README.md"
caught "check knows a newer NCCL than the README says (2.99)" "does not say \"NCCL 2.13 through 2.99\"" \
	nccl_range "2.13 2.99" README.md
printf 'Set NCCL_GDX_NO_SUCH_THING=1.\n' | cat README.md - >"$drift/README.md"
caught "the README names a variable the table lacks" "NCCL_GDX_NO_SUCH_THING" \
	mentions "$params" "$drift/README.md"

fresh
sed 's/^  -h, --help /  -q, --quiet            say less\n&/' "$helps/doctor-topo" >"$drift/help/doctor-topo"
caught "an option added to 'gdx-doctor topo --help' only" "missing: --quiet -q" \
	doctor_cmd_opts "$drift/help" "$man_doctor" topo
sed '/^\.BR \\-o ", " \\-\\-once$/,+1d' "$man_doctor" >"$drift/man1"
caught "an option's entry gone from gdx-doctor.1 (top --once)" "missing: --once -o" \
	doctor_cmd_opts "$helps" "$drift/man1" top
sed 's/^\.BR \\-m ", " \\-\\-markdown$/&", " \\-\\-md/' "$man_doctor" >"$drift/man1"
caught "an option gdx-doctor env lacks added to gdx-doctor.1" "extra: --md" \
	doctor_cmd_opts "$helps" "$drift/man1" env
sed 's/^\.B gdx-doctor env$/&\n.RB [ \\-q ]/' "$man_doctor" >"$drift/man1"
caught "an option gdx-doctor env lacks added to its synopsis" "does not have: -q" \
	doctor_cmd_opts "$helps" "$drift/man1" env
sed 's/(default 1)$/(default 2)/' "$man_doctor" >"$drift/man1"
caught "a default changed in gdx-doctor.1 (top --interval 1 to 2)" "--interval" \
	defaults "$helps/doctor-top" "$drift/man1" COMMANDS top

fresh
sed 's/(default 1000)/(default 500)/' "$helps/bench" >"$drift/help/bench"
caught "a default changed in gdx-bench --help (--iters 1000 to 500)" "--iters" \
	defaults "$drift/help/bench" "$man_bench" OPTIONS
sed 's/^  -j, --json /      --jason          one JSON object\n&/' "$helps/bench" >"$drift/help/bench"
caught "an option added to gdx-bench --help only" "missing: --jason" \
	bench_opts "$drift/help/bench" "$man_bench"
sed 's/^\.BR \\-\\-wait " \\fISECONDS\\fR"$/.BR \\-W ", " \\-\\-wait " \\fISECONDS\\fR"/' \
	"$man_bench" >"$drift/man1"
caught "a letter gdx-bench lacks added to gdx-bench.1" " -W" bench_opts "$helps/bench" "$drift/man1"

# shellcheck disable=SC2016 # Markdown's backquotes
sed 's/^| `NCCL_GDX_QPS_PER_CONNECTION` | `1` |/| `NCCL_GDX_QPS_PER_CONNECTION` | `2` |/' README.md \
	>"$drift/README.md"
caught "a default changed in the README's table (QPS_PER_CONNECTION 1 to 2)" \
	"NCCL_GDX_QPS_PER_CONNECTION (README: 2" readme_defaults "$params" "$drift/README.md"
sed '0,/^make demo/s/^make demo/make all /' README.md >"$drift/README.md"
caught "the README's first command is not make demo" "make all" readme_first "$drift/README.md"
# shellcheck disable=SC2016 # Markdown's backquotes
printf '```sh\ngdx-doctor check --allow-degradd\n```\n' | cat README.md - >"$drift/README.md"
caught "the README uses an option gdx-doctor check lacks" "check --allow-degradd" \
	readme_calls "$helps" "$drift/README.md"
# shellcheck disable=SC2016
printf '```sh\ngdx-bench -d mlx5_0 --iterations 10\n```\n' | cat README.md - >"$drift/README.md"
caught "the README uses an option gdx-bench lacks" "gdx-bench --iterations" \
	readme_calls "$helps" "$drift/README.md"
# shellcheck disable=SC2016
printf 'Run `gdx-doctor doctor` first.\n' | cat README.md - >"$drift/README.md"
caught "the README names a gdx-doctor command that is not there" "doctor (no such command)" \
	readme_calls "$helps" "$drift/README.md"

# shellcheck disable=SC2016
printf 'Run `tests/unit_regcache.c` first.\n' | cat README.md - >"$drift/README.md"
caught "the README names a test where it no longer is" "tests/unit_regcache.c" \
	test_paths "$drift/README.md"

# shellcheck disable=SC2016 # Markdown's backquotes
sed 's/`rma\.c`, NCCL/the RMA test, NCCL/' tests/README.md >"$drift/README.md"
caught "tests/README.md without a test it had named (tests/gpu/rma.c)" "does not name: tests/gpu/rma.c" \
	tests_named "$drift/README.md" "${test_sources[@]}"
: >"$drift/new_test.c"
caught "a new test file tests/README.md does not name" "does not name: $drift/new_test.c" \
	tests_named tests/README.md "${test_sources[@]}" "$drift/new_test.c"
# shellcheck disable=SC2016
printf 'ECE is asked of a device by `gdx-doctor fabric`.\n' | cat tests/README.md - >"$drift/README.md"
caught "tests/README.md names a gdx-doctor command that is not there" "fabric (no such command)" \
	readme_calls "$helps" "$drift/README.md"
awk '/^- `plugin\/data\/`/ { held = $0; next } { print } /^- `plugin\/conn\/`/ { print held }' \
	tests/README.md >"$drift/README.md"
caught "the map with two layers swapped (data after conn)" "the map lists" map_folders "$drift/README.md"

sed 's/ at commit 02847c9, 0\.1\.0.s tree,//' plugin/libnccl-net-gdx-performance.7 >"$drift/perf.7"
caught "a table of figures whose paragraph names no tree" "no commit or release" \
	figures_sourced "$drift/perf.7"

fresh
cp plugin/libnccl-net-gdx-protocol.7 "$drift/libnccl-net-gdx-protocol.7"
printf '.foo bar\n' >>"$drift/libnccl-net-gdx-protocol.7"
caught "a page with a groff warning (an unknown macro)" "libnccl-net-gdx-protocol.7: groff -ww" \
	man_wellformed "$drift/libnccl-net-gdx-protocol.7"
printf '%s\n' ".BR \"gdx\\-doctor check\" \": and \" NCCL_NET_PLUGIN 's library" >>"$drift/libnccl-net-gdx-protocol.7"
caught "a page with a possessive glued to the next word by a font change" "NCCL_NET_PLUGIN'slibrary" \
	man_glued "$drift/libnccl-net-gdx-protocol.7"
sed '2s/^\.TH LIBNCCL-NET-GDX-RMA /.TH LIBNCCL-NET-GDX /' plugin/libnccl-net-gdx-rma.7 >"$drift/libnccl-net-gdx-rma.7"
caught "a page whose .TH names another page" "are not LIBNCCL-NET-GDX-RMA 7" \
	man_wellformed "$drift/libnccl-net-gdx-rma.7"
sed 's/ libnccl-net-gdx-rma / /' Makefile >"$drift/Makefile"
caught "a page left out of the Makefile's list" "libnccl-net-gdx-rma.7 (not installed)" \
	man_installed "$drift/Makefile" "${man7s[@]}"
grep -vxF '%{_mandir}/man7/libnccl-net-gdx-security.7*' scripts/libnccl-net-gdx.spec >"$drift/spec"
caught "a page left out of the rpm spec's %files" "libnccl-net-gdx-security.7 (not in" \
	man_packaged "$drift/spec" tests/check/package.sh tests/check/rpm.sh "${man7s[@]}"
grep -vxF 'usr/share/man/man7/libnccl-net-gdx-nccl.7.gz' tests/check/package.sh >"$drift/package.sh"
caught "a page left out of package.sh's .deb list" "libnccl-net-gdx-nccl.7 (not in $drift/package.sh's .deb list)" \
	man_packaged scripts/libnccl-net-gdx.spec "$drift/package.sh" tests/check/rpm.sh "${man7s[@]}"
subjects=()
for p in "${man7s[@]}"; do [ "$p" = "$man7" ] || subjects+=("$p"); done
sed '/^\.SH SEE ALSO$/,$ { /^\.BR libnccl\\-net\\-gdx\\-failover (7)$/d }' "$man7" >"$drift/libnccl-net-gdx.7"
caught "a page gone from libnccl-net-gdx.7's SEE ALSO" "missing: libnccl-net-gdx-failover" \
	man_see_also "$drift/libnccl-net-gdx.7" "$drift/libnccl-net-gdx.7" \
	"${subjects[@]}"
printf 'See `libnccl-net-gdx-tuning(7)`, and `libnccl-net-gdx(7)`, PERFORMANCE.\n' |
	cat README.md - >"$drift/README.md"
caught "the README names a page that is not there" "libnccl-net-gdx-tuning(7) (no such page)" \
	page_refs "${man7s[@]}" -- "$drift/README.md"
caught "the README names a heading the page does not have" "libnccl-net-gdx(7), PERFORMANCE (no such" \
	page_refs "${man7s[@]}" -- "$drift/README.md"
sed '/^\.BR NCCL_IB_HCA " (NCCL/,+1s/^Read as$/Read as ever/' "$man7_nccl" >"$drift/nccl.7"
caught "a stale compatibility table (scripts/update-env-docs.sh --check)" "$drift/nccl.7 is not the tables'" \
	env GDX_DOCTOR="$build/gdx-doctor" GDX_MAN7_NCCL="$drift/nccl.7" scripts/update-env-docs.sh --check

report_end tests/check/docs.sh
