#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NCCL_GDX_* reference of libnccl-net-gdx(7), made from the table the
# plugin's parser reads (include/gdx/gdx_param.h), as `gdx-doctor env
# --markdown` prints it: one .TP entry per variable, with its type, default
# and NCCL twin. It replaces the lines between the page's gdx-env marker
# comments. Run it after adding or changing a variable; tests/check/docs.sh
# fails while the page and the table disagree.
#
#   scripts/update-env-docs.sh           # rewrite plugin/tools/libnccl-net-gdx.7
#   scripts/update-env-docs.sh --check   # exit 1, with a diff, when the page is stale
#   scripts/update-env-docs.sh --print   # the block alone, on standard output
#   GDX_DOCTOR=path/to/gdx-doctor scripts/update-env-docs.sh
set -euo pipefail

cd "$(dirname "$0")/.."
doctor=${GDX_DOCTOR:-build/gdx-doctor}
page=${GDX_MAN7:-plugin/tools/libnccl-net-gdx.7}
begin='.\" gdx-env begin'
end='.\" gdx-env end'
mode=${1:-write}
case "$mode" in
write | --check | --print) ;;
*)
	echo "usage: $0 [--check | --print]" >&2
	exit 2
	;;
esac

if [ ! -x "$doctor" ]; then
	echo "update-env-docs: $doctor is missing (make first)" >&2
	exit 1
fi
if [ "$(grep -cF "$begin" "$page")" -ne 1 ] || [ "$(grep -cF "$end" "$page")" -ne 1 ]; then
	echo "update-env-docs: $page needs one '$begin' and one '$end' line" >&2
	exit 1
fi

block=$(mktemp)
out=$(mktemp)
trap 'rm -f "$block" "$out"' EXIT

# Markdown rows to roff. A cell escapes | * ` < and \ with a backslash
# (gdx_doctor_env.c, md_cell); roff wants \e for a backslash, \- for a
# minus, and \& before a leading dot or quote.
# shellcheck disable=SC2016 # a Python program, not shell
"$doctor" env --markdown | python3 -c '
import re, sys

def cell(s):
    s = s.strip()
    if s == "*empty*":
        return ""
    if len(s) >= 2 and s[0] == "`" and s[-1] == "`":
        s = s[1:-1]
    return re.sub(r"\\(.)", r"\1", s)

def roff(s):
    s = s.replace("\\", "\\e").replace("-", "\\-").replace("\"", "\\(dq")
    return "\\&" + s if s[:1] in (".", "\x27") else s

def arg(s):
    return "\"" + s + "\"" if " " in s else s

for line in sys.stdin:
    if not line.startswith("| `NCCL_GDX_"):
        continue
    name, twin, typ, default, meaning = [cell(c) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
    print(".TP")
    if default:
        print(".BR %s \" (%s, default \" %s )" % (name, typ, arg(roff(default))))
    else:
        print(".BR %s \" (%s, default empty)\"" % (name, typ))
    print(roff(meaning[0].upper() + meaning[1:]) + ("" if meaning.endswith(".") else "."))
    if twin:
        print("When unset, the plugin reads")
        print(".BR %s ," % twin)
        print("as NCCL reads it.")
' >"$block"

if [ "$mode" = --print ]; then
	cat "$block"
	exit 0
fi
# The markers through the environment: awk -v would take their backslash
# for an escape.
B=$begin E=$end BLOCK=$block awk '
	index($0, ENVIRON["E"]) == 1 { skip = 0 }
	!skip { print }
	index($0, ENVIRON["B"]) == 1 { while ((getline line < ENVIRON["BLOCK"]) > 0) print line; skip = 1 }
' "$page" >"$out"
if [ "$mode" = --check ]; then
	if ! diff -u "$page" "$out"; then
		echo "update-env-docs: $page is not the table's; run scripts/update-env-docs.sh" >&2
		exit 1
	fi
	exit 0
fi
# cat, not mv: the page keeps its inode and mode.
cat "$out" >"$page"
