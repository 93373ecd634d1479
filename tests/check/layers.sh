#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The plugin's file map, checked, one line each:
#  - the folders keep their declared order (LAYERS below, lowest first): no
#    file of a layer includes a header of a higher layer, and no object of a
#    layer uses a symbol that an object of a higher layer defines;
#  - the tools sit above the plugin: tools/common uses only the plugin and
#    itself, tools/doctor and tools/bench each only those and themselves
#    (gdx-bench links nothing of gdx-doctor);
#  - the modules' include graph has no cycle. A module is a .c file with the
#    header beside it (or a header alone); plugin/L/gdx_X.c and
#    plugin/L/gdx_X.h including "M/gdx_Y.h" make X depend on Y. tsort finds
#    the loops;
#  - each plugin/L/gdx_X.c (and tools/common's) has its API in the
#    gdx_X.h beside it: every global symbol the object defines is declared
#    there;
#  - no .c file under plugin/ (the tools' too) is over 1,000 lines;
#  - every global symbol of those objects is used by another object, of the
#    plugin or of a tool (they link the plugin's archive), unless its header
#    marks it for the tests: declared after a comment saying "For the tests
#    only", which opens the header's last part (one form in every header).
#    The NCCL tables of plugin/exports.map are NCCL's to use;
#  - the objects' symbol graph has no cycle: object A using a symbol that
#    object B defines (nm -u, nm --defined-only) makes A depend on B. The
#    plugin's objects, then tools/common's, then each tool's own;
#  - the .so carries no tool's code: none of its objects defines a symbol
#    that a tools/common object defines, nor one that only the tools or the
#    tests use (every global symbol of its objects is used by the .so itself,
#    is an NCCL table, or is a test hook marked in its header that no tool
#    uses), and the linked .so's symbol table names none of tools/common's.
# Reads the objects of BUILD (default build): make first.
#
#   tests/check/layers.sh
#   GDX_LAYERS_ROOT=DIR tests/check/layers.sh   # another tree, laid out the same
set -uo pipefail

# The plugin's layers, lowest first: plugin/<layer>/. tests/README.md's
# "Where things are" lists them in this order (tests/check/docs.sh).
LAYERS="sys wire topo gdr dev rail comm stats data conn net rma"
# The tools' folders, plugin/tools/<tool>/: common is below the other two.
TOOLS="common doctor bench"

cd "${GDX_LAYERS_ROOT:-$(dirname "$0")/../..}" || exit 1
build=${BUILD:-build}
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1"; failed=$((failed + 1)); }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rank FOLDER: the folder's place (plugin/ relative: "data", "tools/doctor").
# Every layer is below every tool; doctor and bench share a rank, and may not
# use each other (checked apart).
{
	r=0
	for l in $LAYERS; do
		echo "$l $r"
		r=$((r + 1))
	done
	echo "tools/common $r"
	echo "tools/doctor $((r + 1))"
	echo "tools/bench $((r + 1))"
} >"$tmp/ranks"

# The folders on disk are the declared ones.
on_disk=$(find plugin -mindepth 1 -maxdepth 2 -type d | sed 's#^plugin/##' | grep -vx tools | sort)
declared=$(cut -d' ' -f1 "$tmp/ranks" | sort)
if [ "$on_disk" = "$declared" ]; then
	ok "layers: plugin/'s folders are the declared ones: $(echo $LAYERS) and tools/{$(echo $TOOLS | tr ' ' ,)}"
else
	bad "layers: plugin/'s folders differ from the declared ones: on disk $(echo $on_disk), declared $(echo $declared)"
fi

srcs=$(find plugin -mindepth 2 -name 'gdx_*.[ch]' | LC_ALL=C sort)
layer_srcs=$(grep -v '^plugin/tools/' <<<"$srcs")

# The includes: "FILE FOLDER MODULE" for each #include "FOLDER/gdx_MODULE.h",
# and <gdx/gdx_MODULE.h> (include/, shared by plugin and tools) as FOLDER
# "include".
# shellcheck disable=SC2086 # one word per file
awk '{
		f = FILENAME; sub(/^plugin\//, "", f); sub(/\/[^\/]*$/, "", f)
	}
	/^#include "[a-z\/]*\/gdx_[a-z0-9_]*\.h"/ {
		d = $0; sub(/^#include "/, "", d); sub(/\.h".*/, "", d)
		dir = d; sub(/\/gdx_[a-z0-9_]*$/, "", dir); sub(/.*\/gdx_/, "", d)
		print FILENAME, f, dir, d
	}
	/^#include <gdx\/gdx_[a-z0-9_]*\.h>/ {
		d = $0; sub(/^#include <gdx\/gdx_/, "", d); sub(/\.h>.*/, "", d)
		print FILENAME, f, "include", d
	}' $srcs >"$tmp/includes"

# Upward includes: a file including a header of a higher folder, or a tool
# another tool's.
up=$(awk 'FILENAME == ARGV[1] { rank[$1] = $2; next }
	$3 == "include" { next }
	!($3 in rank) { printf " %s includes %s/gdx_%s.h (no such folder);", $1, $3, $4; next }
	rank[$3] > rank[$2] || (rank[$3] == rank[$2] && $3 != $2) {
		printf " %s (%s) includes %s/gdx_%s.h;", $1, $2, $3, $4
	}' "$tmp/ranks" "$tmp/includes")
if [ -z "$up" ]; then
	ok "layers: no file includes a header of a higher folder ($(echo $LAYERS | tr ' ' '<') < tools)"
else
	bad "layers: includes that run up the layers:$up"
fi

# The include graph of the plugin's modules: no cycle.
edges=$tmp/edges-inc
# shellcheck disable=SC2086
{
	for f in $layer_srcs; do
		m=${f##*/gdx_}
		echo "${m%.[ch]} ${m%.[ch]}"
	done
	awk '$1 !~ /^plugin\/tools\// {
		m = $1; sub(/.*\/gdx_/, "", m); sub(/\.[ch]$/, "", m)
		if ($4 != m) print m, $4
	}' "$tmp/includes"
} >"$edges"
if loops=$(tsort "$edges" 2>&1 >/dev/null) && [ -z "$loops" ]; then
	ok "layers: the include graph of $(cut -d' ' -f1 "$edges" | sort -u | wc -l) modules has no cycle"
else
	bad "layers: the include graph has a cycle: $(grep -v 'input contains a loop' <<<"$loops" | sed 's/^tsort: //' | tr '\n' ' ')"
fi

# Files past 1,000 lines: split them by concern.
long=$(find plugin -name '*.c' -print0 | LC_ALL=C sort -z | xargs -0 -r wc -l |
	awk '$2 != "total" && $1 > 1000 { printf " %s (%d lines)", $2, $1 }')
if [ -z "$long" ]; then
	ok "layers: no .c file under plugin/ is over 1,000 lines"
else
	bad "layers: .c files over 1,000 lines:$long"
fi

# The symbol tables, one nm each: "OBJECT SYMBOL TYPE" for what an object
# defines (global: functions and objects), "OBJECT SYMBOL" for what it uses
# from elsewhere. The library objects: the plugin's layers and tools/common,
# which the checks of headers and uses cover.
mapfile -t plugin_objs < <(for f in $(grep '\.c$' <<<"$layer_srcs"); do echo "$build/${f%.c}.o"; done)
mapfile -t common_objs < <(ls "$build"/plugin/tools/common/gdx_*.o 2>/dev/null)
mapfile -t doctor_objs < <(ls "$build"/plugin/tools/doctor/gdx_*.o 2>/dev/null)
mapfile -t bench_objs < <(ls "$build"/plugin/tools/bench/gdx_*.o 2>/dev/null)
objs=()
for o in "${plugin_objs[@]}" "${common_objs[@]}" "${doctor_objs[@]}" "${bench_objs[@]}"; do
	[ -f "$o" ] && objs+=("$o")
done
if [ "${#objs[@]}" -eq 0 ]; then
	bad "layers: no object under $build/plugin (make first)"
	echo "# tests/check/layers.sh: $passed passed, $failed failed"
	exit 1
fi
nm -A --defined-only "${objs[@]}" 2>/dev/null |
	awk '{ split($1, f, ":"); if ($(NF-1) ~ /^[BCDGRSTVW]$/) print f[1], $NF, $(NF-1) }' >"$tmp/defs"
nm -A -u "${objs[@]}" 2>/dev/null | awk '{ split($1, f, ":"); print f[1], $NF }' >"$tmp/uses"

# Global symbols of each library object, looked up in the header beside it
# (a word of it). The tables (net and RMA) are NCCL's symbols (declared by
# NCCL's own headers, include/nccl/).
lib_srcs=$(grep '\.c$' <<<"$srcs" | grep -v '^plugin/tools/\(doctor\|bench\)/')
missing=""
for c in $lib_srcs; do
	[ -f "$build/${c%.c}.o" ] || missing+=" $build/${c%.c}.o(not built)"
done
# shellcheck disable=SC2046 # one word per header
missing+=$(awk -v b="$build/" '
	FILENAME == ARGV[1] {
		o = $1
		if (index(o, b "plugin/") != 1 || o ~ /\/tools\/(doctor|bench)\// || o ~ /gdx_(net|rma)_tables\.o$/)
			next
		if ($3 ~ /^[TDBR]$/) {
			m = substr(o, length(b) + 1); sub(/\.o$/, "", m)
			want[m " " $2] = 1
		}
		next
	}
	FNR == 1 { m = FILENAME; sub(/\.h$/, "", m) }
	{
		n = split($0, w, /[^A-Za-z0-9_]+/)
		for (i = 1; i <= n; i++)
			delete want[m " " w[i]]
	}
	END { for (k in want) { split(k, p, " "); print " " p[2] "(" p[1] ".c)" } }' \
	"$tmp/defs" $(grep '\.h$' <<<"$srcs") | sort | tr -d '\n')
if [ -z "$missing" ]; then
	ok "layers: every global function and object of plugin/L/gdx_X.c is declared in the gdx_X.h beside it"
else
	bad "layers: declared outside their file's header:$missing"
fi

# Unused: defined by a library object, used by no other object. The
# exemptions: the symbols exports.map makes global, and those the header marks.
exported=$(sed -n '/global:/,/local:/s/^[[:space:]]*\([A-Za-z0-9_*]*\);.*/\1/p' plugin/exports.map 2>/dev/null)
awk -v b="$build/" '
	FILENAME == ARGV[1] { users[$2] = users[$2] " " $1; next }
	{
		obj = $1
		if (obj ~ /\/tools\/(doctor|bench)\//)
			next # a tool'"'"'s own
		n = split(users[$2], u, " ")
		other = 0
		for (i = 1; i <= n; i++)
			if (u[i] != obj)
				other = 1
		if (!other)
			print obj, $2
	}' "$tmp/uses" "$tmp/defs" >"$tmp/unused"
: >"$tmp/candidates"
while read -r obj sym; do
	for pat in $exported; do
		# shellcheck disable=SC2053 # the map's entries are glob patterns
		[[ $sym == $pat ]] && continue 2
	done
	src=${obj#"$build"/}
	echo "${src%.o} $sym" >>"$tmp/candidates"
done <"$tmp/unused"
# The marked ones: a header line naming the symbol after the marker.
# shellcheck disable=SC2046
awk 'FILENAME == ARGV[1] { want[$1 " " $2] = 1; next }
	FNR == 1 { after = 0; m = FILENAME; sub(/\.h$/, "", m) }
	{
		if (index($0, "For the tests only"))
			after = 1
		if (after) {
			n = split($0, w, /[^A-Za-z0-9_]+/)
			for (i = 1; i <= n; i++)
				if ((m " " w[i]) in want)
					print m, w[i]
		}
	}' "$tmp/candidates" $(grep '\.h$' <<<"$srcs") | sort -u >"$tmp/marked"
unused=$(awk 'FILENAME == ARGV[1] { marked[$1 " " $2] = 1; next }
	!(($1 " " $2) in marked) { printf " %s (%s.c)", $2, $1 }' "$tmp/marked" "$tmp/candidates")
if [ -z "$unused" ]; then
	ok "layers: every global symbol of plugin/L/gdx_X.o is used by another object, or marked for the tests in its header"
else
	bad "layers: global symbols no other object uses, not marked \"For the tests only\" in their header:$unused"
fi

# Upward uses: an object using a symbol that an object of a higher folder
# defines, or a tool's object one of the other tool's.
up=$(awk -v b="$build/plugin/" '
	function folder(o) { o = substr(o, length(b) + 1); sub(/\/[^\/]*$/, "", o); return o }
	FILENAME == ARGV[1] { rank[$1] = $2; next }
	FILENAME == ARGV[2] { definer[$2] = $1; next }
	($2 in definer) {
		a = folder($1); d = folder(definer[$2])
		if (rank[d] > rank[a] || (rank[d] == rank[a] && d != a))
			printf " %s (%s) uses %s of %s;", substr($1, length(b) - 6), a, $2, substr(definer[$2], length(b) - 6)
	}' "$tmp/ranks" "$tmp/defs" "$tmp/uses")
if [ -z "$up" ]; then
	ok "layers: no object uses a symbol that an object of a higher folder defines"
else
	bad "layers: uses that run up the layers:$up"
fi

# symbol_loops NAME OBJECT...: one line on whether the objects' symbol graph
# (A uses what B defines: A -> B, among these objects only) has a cycle,
# naming each loop tsort finds.
symbol_loops() {
	local name=$1 loops
	shift
	if [ "$#" -eq 0 ] || [ ! -f "$1" ]; then
		bad "layers: $name: no objects (make first)"
		return
	fi
	printf '%s\n' "$@" >"$tmp/set"
	awk 'FILENAME == ARGV[1] { inset[$1] = 1; next }
		FILENAME == ARGV[2] { if ($1 in inset) definer[$2] = $1; next }
		($1 in inset) {
			a = $1; sub(/.*\//, "", a); sub(/\.o$/, "", a)
			print a, a
			if (($2 in definer) && definer[$2] != $1) {
				b = definer[$2]; sub(/.*\//, "", b); sub(/\.o$/, "", b)
				print a, b
			}
		}' "$tmp/set" "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
	for o in "$@"; do
		o=${o##*/}
		echo "${o%.o} ${o%.o}"
	done >>"$tmp/edges"
	loops=$(tsort "$tmp/edges" 2>&1 >/dev/null | awk '
		/input contains a loop/ { if (l != "") print l; l = "loop:"; next }
		{ sub(/^tsort: /, ""); l = l " " $0 }
		END { if (l != "") print l }' | paste -sd ';' | sed 's/;/; /g')
	if [ -z "$loops" ]; then
		ok "layers: $name: the symbol graph of $# objects has no cycle"
	else
		bad "layers: $name: the symbol graph has a cycle: $loops"
	fi
}
symbol_loops "the plugin's objects" "${plugin_objs[@]}"
symbol_loops "tools/common's objects" "${common_objs[@]}"
symbol_loops "gdx-bench's objects" "${bench_objs[@]}"
symbol_loops "gdx-doctor's objects" "${doctor_objs[@]}"

# The .so is linked from the plugin's objects (the Makefile's OBJS): none
# defines what tools/common defines (the tools' code moved there, not
# copied), and each global symbol they define is the .so's own use: used by
# another of its objects (nm -u), an NCCL table (exports.map), or used in its
# own file (a call the compiler resolved in place leaves no undefined symbol
# and no relocation: the source, comments and struct tags left out, names it
# past its definition). The one exception, the test hooks a header marks "For
# the tests only", holds only while no tool uses them: a function only the
# tools (or the tests) call is tools/common's.
nm --defined-only "${common_objs[@]}" 2>/dev/null | awk '$2 ~ /^[BDRT]$/ { print $3 }' | sort -u >"$tmp/common-defs"
awk -v b="$build/" '$1 !~ /\/tools\// && index($1, b "plugin/") == 1 && $3 ~ /^[BDRT]$/ {
		c = substr($1, length(b) + 1); sub(/\.o$/, ".c", c); print $2, c
	}' "$tmp/defs" >"$tmp/so-defs"
awk -v b="$build/" 'index($1, b "plugin/") == 1 && $1 !~ /\/tools\// { print $2 }' "$tmp/uses" | sort -u >"$tmp/so-used"
: >"$tmp/so-own"
while read -r sym c; do
	grep -qx -- "$sym" "$tmp/so-used" && continue
	for pat in $exported; do
		# shellcheck disable=SC2053 # the map's entries are glob patterns
		[[ $sym == $pat ]] && continue 2
	done
	n=$(${CC:-cc} -fpreprocessed -dD -E -P "$c" 2>/dev/null |
		sed -E 's/\<(struct|union|enum)[[:space:]]+[A-Za-z0-9_]+//g' | grep -ow -- "$sym" | wc -l)
	[ "$n" -ge 2 ] || echo "$sym ${c%.c}" >>"$tmp/so-own"
done <"$tmp/so-defs"
# shellcheck disable=SC2046 # one word per header
awk 'FILENAME == ARGV[1] { want[$2 " " $1] = 1; next }
	FNR == 1 { after = 0; m = FILENAME; sub(/\.h$/, "", m) }
	index($0, "For the tests only") { after = 1 }
	after {
		n = split($0, w, /[^A-Za-z0-9_]+/)
		for (i = 1; i <= n; i++)
			if ((m " " w[i]) in want)
				print w[i]
	}' "$tmp/so-own" $(grep '\.h$' <<<"$layer_srcs") | sort -u >"$tmp/so-hooks"
so_tools=$(awk -v b="$build/plugin/" '
	FILENAME == ARGV[1] { common[$1] = 1; next }
	FILENAME == ARGV[2] { own[$1] = $2; next }
	FILENAME == ARGV[3] { hook[$1] = 1; next }
	FILENAME == ARGV[4] { if ($1 ~ /\/tools\//) tool[$2] = tool[$2] " " substr($1, length(b) + 1); next }
	$1 !~ /\/tools\// && $3 ~ /^[BDRT]$/ {
		o = substr($1, length(b) + 1)
		if ($2 in common)
			printf " %s (%s) is also tools/common'"'"'s;", $2, o
		else if (($2 in own) && ($2 in tool))
			printf " %s (%s) is used only by%s;", $2, o, tool[$2]
		else if (($2 in own) && !($2 in hook))
			printf " %s (%s) is used by nothing of the .so;", $2, o
	}' "$tmp/common-defs" "$tmp/so-own" "$tmp/so-hooks" "$tmp/uses" "$tmp/defs")
if [ -z "$so_tools" ]; then
	ok "layers: the .so's objects define none of tools/common's symbols, and none that only the tools or the tests use (bar the marked test hooks)"
else
	bad "layers: the .so carries the tools' code:$so_tools"
fi

# The .so as linked: its symbol table (hidden ones too) names nothing
# tools/common defines.
if [ ! -f "$build/libnccl-net-gdx.so" ]; then
	bad "layers: $build/libnccl-net-gdx.so not built (make first)"
else
	in_so=$(nm "$build/libnccl-net-gdx.so" 2>/dev/null | awk '{ print $NF }' | sort -u |
		comm -12 - "$tmp/common-defs" | tr '\n' ' ')
	if [ -z "$in_so" ]; then
		ok "layers: $build/libnccl-net-gdx.so's symbol table names none of tools/common's $(wc -l <"$tmp/common-defs") symbols"
	else
		bad "layers: $build/libnccl-net-gdx.so carries tools/common's symbols: $in_so"
	fi
fi

# gdx-bench's link: its objects and archives, and nothing of gdx-doctor's.
bench_link=$(make -s -n -B BUILD="$build" "$build/gdx-bench" 2>/dev/null | grep -- "-o $build/gdx-bench " | tail -n 1)
if [ -z "$bench_link" ]; then
	bad "layers: gdx-bench's link line not found (make -n $build/gdx-bench)"
elif grep -q 'tools/doctor/' <<<"$bench_link"; then
	bad "layers: gdx-bench links gdx-doctor's objects: $bench_link"
else
	ok "layers: gdx-bench's link line names no object of gdx-doctor"
fi

echo "# tests/check/layers.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
