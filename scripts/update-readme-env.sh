#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rewrites README.md's NCCL_GDX_* reference, the lines between the gdx-env
# marker comments, with `gdx-doctor env --markdown`: the table the plugin's
# parser reads. tests/check-package.sh fails while the two disagree, so run
# this after adding or changing a variable in include/gdx/gdx_param.h.
#
#   scripts/update-readme-env.sh           # with build/gdx-doctor (make first)
#   GDX_DOCTOR=path/to/gdx-doctor scripts/update-readme-env.sh
set -euo pipefail

cd "$(dirname "$0")/.."
doctor=${GDX_DOCTOR:-build/gdx-doctor}
begin='<!-- gdx-env begin'
end='<!-- gdx-env end'

if [ ! -x "$doctor" ]; then
	echo "update-readme-env: $doctor is missing (make first)" >&2
	exit 1
fi
if [ "$(grep -c "^$begin" README.md)" -ne 1 ] || [ "$(grep -c "^$end" README.md)" -ne 1 ]; then
	echo "update-readme-env: README.md needs one '$begin ... -->' and one '$end -->' line" >&2
	exit 1
fi

table=$(mktemp)
out=$(mktemp)
trap 'rm -f "$table" "$out"' EXIT
# Blank lines around the table keep it a block of its own in Markdown.
{
	echo
	"$doctor" env --markdown
	echo
} >"$table"
awk -v table="$table" -v b="$begin" -v e="$end" '
	index($0, e) == 1 { skip = 0 }
	!skip { print }
	index($0, b) == 1 { while ((getline line < table) > 0) print line; skip = 1 }
' README.md >"$out"
# cat, not mv: README.md keeps its inode and mode.
cat "$out" >README.md
