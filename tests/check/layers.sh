#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The plugin's file map, checked: each plugin/gdx_X.c has its API in
# include/gdx/gdx_X.h (every global symbol the object defines is declared
# there), and the modules' include graph has no cycle. A module is a .c file
# with its header (or a header alone); plugin/gdx_X.c and include/gdx/gdx_X.h
# including <gdx/gdx_Y.h> make X depend on Y. tsort finds the loops.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1"; failed=$((failed + 1)); }

module_of() { # path -> X of gdx_X.c / gdx_X.h
	local b
	b=$(basename "$1")
	b=${b%.[ch]}
	echo "${b#gdx_}"
}

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in plugin/gdx_*.c include/gdx/gdx_*.h; do
	m=$(module_of "$f")
	echo "$m $m" >>"$edges" # every module is a node, even one with no edge
	for dep in $(sed -n 's/^#include <gdx\/gdx_\([a-z0-9_]*\)\.h>.*/\1/p' "$f"); do
		[ "$dep" = "$m" ] || echo "$m $dep" >>"$edges"
	done
done
if loops=$(tsort "$edges" 2>&1 >/dev/null) && [ -z "$loops" ]; then
	ok "layers: the include graph of $(cut -d' ' -f1 "$edges" | sort -u | wc -l) modules has no cycle"
else
	bad "layers: the include graph has a cycle: $(grep -v 'input contains a loop' <<<"$loops" | sed 's/^tsort: //' | tr '\n' ' ')"
fi

# Global symbols of each object, looked up in its own header. The tables are
# NCCL's symbols (declared by NCCL's own headers, include/nccl/).
missing=""
for c in plugin/gdx_*.c; do
	m=$(module_of "$c")
	o=$build/plugin/gdx_$m.o
	h=include/gdx/gdx_$m.h
	[ "$m" = net_tables ] && continue
	if [ ! -f "$o" ]; then
		missing+=" $o(not built)"
		continue
	fi
	for sym in $(nm --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ {print $3}'); do
		if [ ! -f "$h" ] || ! grep -qE "\\b$sym\\b" "$h"; then
			missing+=" $sym($c)"
		fi
	done
done
if [ -z "$missing" ]; then
	ok "layers: every global function and object of plugin/gdx_X.c is declared in include/gdx/gdx_X.h"
else
	bad "layers: declared outside their file's header:$missing"
fi

echo "# tests/check/layers.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
