#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clang-format over every C file of the tree; --check lists the files that
# differ and fails instead of rewriting them.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = --check ]; then
	bad=0
	for f in $files; do
		clang-format "$f" | cmp -s - "$f" || { echo "needs clang-format: $f"; bad=1; }
	done
	exit $bad
fi
# shellcheck disable=SC2086 # one word per file
clang-format -i $files
