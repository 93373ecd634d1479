#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The plugin's file map, checked, one line each:
#  - the modules' include graph has no cycle. A module is a .c file with its
#    header (or a header alone); plugin/gdx_X.c and include/gdx/gdx_X.h
#    including <gdx/gdx_Y.h> make X depend on Y. tsort finds the loops;
#  - each plugin/gdx_X.c has its API in include/gdx/gdx_X.h: every global
#    symbol the object defines is declared there;
#  - no .c file under plugin/ (the tools' too) is over 1,000 lines;
#  - every global symbol of plugin/gdx_X.o is used by another object, of the
#    plugin or of a tool (they link the plugin's archive), unless its header
#    marks it for the tests: declared after a comment saying "For the tests
#    only", which opens the header's last part (one form in every header).
#    The NCCL tables of plugin/exports.map are NCCL's to use;
#  - the objects' symbol graph has no cycle: object A using a symbol that
#    object B defines (nm -u, nm --defined-only) makes A depend on B. The
#    plugin's objects, then each tool's own (gdx-bench: gdx_bench*.o,
#    gdx-doctor: gdx_doctor*.o), leaving out their uses of the archive.
# Reads the objects of BUILD (default build): make first.
#
#   tests/check/layers.sh
#   GDX_LAYERS_ROOT=DIR tests/check/layers.sh   # another tree, laid out the same
set -uo pipefail
cd "${GDX_LAYERS_ROOT:-$(dirname "$0")/../..}" || exit 1
build=${BUILD:-build}
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1"; failed=$((failed + 1)); }

module_of() { # path -> X of gdx_X.c / gdx_X.h / gdx_X.o
	local b
	b=$(basename "$1")
	b=${b%.[cho]}
	echo "${b#gdx_}"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
edges=$tmp/includes
# every module is a node, even one with no edge
awk 'FNR == 1 { m = FILENAME; sub(/.*\/gdx_/, "", m); sub(/\.[ch]$/, "", m); print m, m }
	/^#include <gdx\/gdx_[a-z0-9_]*\.h>/ {
		d = $0; sub(/^#include <gdx\/gdx_/, "", d); sub(/\.h>.*/, "", d)
		if (d != m) print m, d
	}' plugin/gdx_*.c include/gdx/gdx_*.h >"$edges"
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
# from elsewhere.
plugin_objs=("$build"/plugin/gdx_*.o)
tool_objs=("$build"/plugin/tools/gdx_*.o)
objs=()
for o in "${plugin_objs[@]}" "${tool_objs[@]}"; do
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

# Global symbols of each object, looked up in its own header (a word of it).
# The tables (net and RMA) are NCCL's symbols (declared by NCCL's own
# headers, include/nccl/).
missing=""
for c in plugin/gdx_*.c; do
	[ -f "$build/${c%.c}.o" ] || missing+=" $build/${c%.c}.o(not built)"
done
missing+=$(awk -v dir="$build/plugin/gdx_" '
	FILENAME == ARGV[1] {
		m = substr($1, length(dir) + 1)
		sub(/\.o$/, "", m)
		if (index($1, dir) == 1 && m !~ /\// && m != "net_tables" && m != "rma_tables" && $3 ~ /^[TDBR]$/)
			want[m " " $2] = 1
		next
	}
	FNR == 1 { m = FILENAME; sub(/.*\/gdx_/, "", m); sub(/\.h$/, "", m) }
	{
		n = split($0, w, /[^A-Za-z0-9_]+/)
		for (i = 1; i <= n; i++)
			delete want[m " " w[i]]
	}
	END { for (k in want) { split(k, p, " "); print " " p[2] "(plugin/gdx_" p[1] ".c)" } }' \
	"$tmp/defs" include/gdx/gdx_*.h | sort | tr -d '\n')
if [ -z "$missing" ]; then
	ok "layers: every global function and object of plugin/gdx_X.c is declared in include/gdx/gdx_X.h"
else
	bad "layers: declared outside their file's header:$missing"
fi

# Unused: defined by a plugin object, used by no other object. The exemptions:
# the symbols exports.map makes global, and those the header marks.
exported=$(sed -n '/global:/,/local:/s/^[[:space:]]*\([A-Za-z0-9_*]*\);.*/\1/p' plugin/exports.map 2>/dev/null)
awk -v dir="$build/plugin/" '
	FILENAME == ARGV[1] { users[$2] = users[$2] " " $1; next }
	{
		obj = $1
		if (index(obj, dir) != 1 || substr(obj, length(dir) + 1) ~ /\//)
			next # an object of a tool
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
	echo "$(module_of "$obj") $sym $obj" >>"$tmp/candidates"
done <"$tmp/unused"
# The marked ones: a header line naming the symbol after the marker.
awk 'FILENAME == ARGV[1] { want[$1 " " $2] = 1; next }
	FNR == 1 { after = 0 }
	{
		if (index($0, "For the tests only"))
			after = 1
		if (after) {
			m = FILENAME
			sub(/.*\/gdx_/, "", m)
			sub(/\.h$/, "", m)
			n = split($0, w, /[^A-Za-z0-9_]+/)
			for (i = 1; i <= n; i++)
				if ((m " " w[i]) in want)
					print m, w[i]
		}
	}' "$tmp/candidates" include/gdx/gdx_*.h | sort -u >"$tmp/marked"
unused=$(awk 'FILENAME == ARGV[1] { marked[$1 " " $2] = 1; next }
	!(($1 " " $2) in marked) { o = $3; sub(/.*\//, "", o); sub(/\.o$/, ".c", o); printf " %s (plugin/%s)", $2, o }' \
	"$tmp/marked" "$tmp/candidates")
if [ -z "$unused" ]; then
	ok "layers: every global symbol of plugin/gdx_X.o is used by another object, or marked for the tests in its header"
else
	bad "layers: global symbols no other object uses, not marked \"For the tests only\" in their header:$unused"
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
symbol_loops "gdx-bench's objects" "$build"/plugin/tools/gdx_bench*.o
symbol_loops "gdx-doctor's objects" "$build"/plugin/tools/gdx_doctor*.o

echo "# tests/check/layers.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
