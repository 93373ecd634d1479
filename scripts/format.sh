#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clang-format over every C file of the tree; --check lists the files that
# differ and fails instead of rewriting them.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = --check ]; then
	# one process for the tree (a second a file otherwise); the files that
	# differ named once each
	# shellcheck disable=SC2086 # one word a file: git's names, no blanks
	if ! out=$(clang-format --dry-run --Werror $files 2>&1); then
		grep -oE '^[^:]+\.[ch]:[0-9]+:[0-9]+: (error|warning)' <<<"$out" | cut -d: -f1 |
			sort -u | sed 's/^/needs clang-format: /'
		exit 1
	fi
	exit 0
fi
# shellcheck disable=SC2086 # one word per file
clang-format -i $files
