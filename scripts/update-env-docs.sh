#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NCCL_GDX_* reference of libnccl-net-gdx(7), made from the table the
# plugin's parser reads (plugin/sys/gdx_param.h), as `gdx-doctor env
# --markdown` prints it: one .TP entry per variable, with its type, default
# and NCCL twin; and the NCCL compatibility table of libnccl-net-gdx-nccl(7),
# from the table of NCCL's NCCL_IB_* variables beside it: one .TP entry per
# variable, with NCCL's default and what the plugin does with it. Each
# replaces the lines between its marker comments on its page (gdx-env,
# gdx-compat). Run it after adding or changing a variable;
# tests/check/docs.sh fails while the pages and the tables disagree.
#
#   scripts/update-env-docs.sh           # rewrite the two pages
#   scripts/update-env-docs.sh --check   # exit 1, with a diff, when a page is stale
#   scripts/update-env-docs.sh --print   # the blocks alone, on standard output
#   GDX_DOCTOR=path/to/gdx-doctor scripts/update-env-docs.sh
#   GDX_MAN7=main.7 GDX_MAN7_NCCL=nccl.7 scripts/update-env-docs.sh --check
set -euo pipefail

cd "$(dirname "$0")/.."
doctor=${GDX_DOCTOR:-build/gdx-doctor}
page=${GDX_MAN7:-plugin/libnccl-net-gdx.7}
compat_page=${GDX_MAN7_NCCL:-plugin/libnccl-net-gdx-nccl.7}
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
for pm in "$page:gdx-env" "$compat_page:gdx-compat"; do
	p=${pm%:*} m=${pm##*:}
	if [ "$(grep -cF ".\\\" $m begin" "$p")" -ne 1 ] ||
		[ "$(grep -cF ".\\\" $m end" "$p")" -ne 1 ]; then
		echo "update-env-docs: $p needs one '.\\\" $m begin' and one '.\\\" $m end' line" >&2
		exit 1
	fi
done

md=$(mktemp)
block=$(mktemp)
compat=$(mktemp)
out=$(mktemp)
out_compat=$(mktemp)
trap 'rm -f "$md" "$block" "$compat" "$out" "$out_compat"' EXIT
"$doctor" env --markdown >"$md"

# Markdown rows to roff. A cell escapes | * ` < and \ with a backslash
# (gdx_doctor_env.c, md_cell); roff wants \e for a backslash, \- for a
# minus, and \& before a leading dot or quote. The first table's rows are
# the NCCL_GDX_* variables; the second's, NCCL's NCCL_IB_* ones.
# shellcheck disable=SC2016 # a Python program, not shell
python3 -c '
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

def sentence(s):
    return roff(s) + ("" if s.endswith(".") else ".")

env, compat = open(sys.argv[1], "w"), open(sys.argv[2], "w")
for line in sys.stdin:
    cells = [cell(c) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
    if line.startswith("| `NCCL_GDX_"):
        name, twin, typ, default, meaning = cells
        print(".TP", file=env)
        if default:
            print(".BR %s \" (%s, default \" %s )" % (name, typ, arg(roff(default))), file=env)
        else:
            print(".BR %s \" (%s, default empty)\"" % (name, typ), file=env)
        print(sentence(meaning[0].upper() + meaning[1:]), file=env)
        if twin:
            print("When unset, the plugin reads", file=env)
            print(".BR %s ," % twin, file=env)
            print("as NCCL reads it.", file=env)
    elif line.startswith("| `NCCL_IB_"):
        name, default, kind, twin, what = cells
        print(".TP", file=compat)
        if default:
            print(".BR %s \" (NCCL\x27s default \" %s )" % (name, arg(roff(default))), file=compat)
        else:
            print(".BR %s \" (NCCL\x27s default empty)\"" % name, file=compat)
        if kind == "twin":
            print("Read as", file=compat)
            print(".B %s" % twin, file=compat)
            print("where that is unset: " + sentence(what), file=compat)
        elif kind == "noted":
            print("Not applied; set, it gets one INFO line saying so: " + sentence(what),
                  file=compat)
        else:
            print("NCCL\x27s own, not read by the plugin: " + sentence(what), file=compat)
' "$block" "$compat" <"$md"

if [ "$mode" = --print ]; then
	cat "$block" "$compat"
	exit 0
fi
# replace MARKER BLOCK IN OUT: IN with the lines between MARKER's comments
# replaced by BLOCK. The markers go through the environment: awk -v would
# take their backslash for an escape.
replace() {
	B=".\\\" $1 begin" E=".\\\" $1 end" BLOCK=$2 awk '
		index($0, ENVIRON["E"]) == 1 { skip = 0 }
		!skip { print }
		index($0, ENVIRON["B"]) == 1 { while ((getline line < ENVIRON["BLOCK"]) > 0) print line; skip = 1 }
	' "$3" >"$4"
}
replace gdx-env "$block" "$page" "$out"
replace gdx-compat "$compat" "$compat_page" "$out_compat"
if [ "$mode" = --check ]; then
	stale=0
	for po in "$page:$out" "$compat_page:$out_compat"; do
		if ! diff -u "${po%%:*}" "${po#*:}"; then
			echo "update-env-docs: ${po%%:*} is not the tables'; run scripts/update-env-docs.sh" >&2
			stale=1
		fi
	done
	exit "$stale"
fi
# cat, not mv: each page keeps its inode and mode.
cat "$out" >"$page"
cat "$out_compat" >"$compat_page"
