#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor env on NCCL's NCCL_IB_* variables: each one set is shown with
# what the plugin does with it. A twin read where its NCCL_GDX_* variable is
# unset shows the value taken, as NCCL's value domain maps it (any value but
# 0 turns a switch on; an attempts maximum up to 1 is 1); one not read for
# that reason says so; one NCCL's transport applies and this plugin does not
# says why (NCCL_IB_OOO_RQ: its out-of-order placement breaks an ordering
# the protocol relies on); NCCL_IB_DATA_DIRECT is a twin. None of
# them is refused, nor taken for a misspelling. --json says the same, and
# --markdown carries the NCCL compatibility table, one row per variable.
#
#   tests/check/doctor_env.sh            # with build/ (make first)
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
build=${GDX_BUILD:-build}
doctor=$build/gdx-doctor
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# exited0 NAME: the last env run ($rc) exited 0, as it does for NCCL's values.
exited0() {
	if [ "$rc" -eq 0 ]; then
		ok "$1 (exit 0)"
	else
		not_ok "$1" "exit $rc: $(tail -n 3 "$tmp/out")"
	fi
}

# shows NAME NEEDLE: the last env output holds NEEDLE (a fixed string).
shows() {
	# env wraps at 80 columns: the text compared with its lines joined and
	# its runs of spaces as one (grep without -q: stopping at the match
	# would leave tr a broken pipe, a failure under pipefail)
	if tr -s ' \n' '  ' <"$tmp/out" | grep -F -- "$(tr -s ' ' <<<"$2")" >/dev/null; then
		ok "$1"
	else
		not_ok "$1" "no '$2' in: $(head -c 400 "$tmp/out" | tr '\n' ' ')"
	fi
}

env -u NCCL_GDX_FAILOVER -u NCCL_GDX_RECOVERY_ATTEMPTS \
	NCCL_IB_RESILIENCY_PORT_FAILOVER=2 \
	NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX=0 \
	NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY=300 \
	NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY=20 \
	NCCL_IB_OOO_RQ=1 NCCL_IB_DATA_DIRECT=2 NCCL_IB_DISABLE=0 \
	NCCL_IB_TIMEOUT=22 NCCL_GDX_RETRY_CNT=5 NCCL_IB_RETRY_CNT=7 \
	"$doctor" env >"$tmp/out" 2>&1
rc=$?
exited0 "env accepts every NCCL_IB_* value of NCCL's"
shows "a switch twin is on for any value but 0, as NCCL reads it" \
	'NCCL_IB_RESILIENCY_PORT_FAILOVER="2"  taken: NCCL_GDX_FAILOVER=1'
shows "an attempts maximum of 0 is NCCL's 1, not this plugin's never" \
	'NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX="0"  taken: NCCL_GDX_RECOVERY_ATTEMPTS=1'
shows "the recovery start delay is the first wait" \
	'NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY="300"  taken: NCCL_GDX_RECOVERY_START_MS=300'
shows "a twin with its NCCL_GDX_* variable set is not read" \
	'NCCL_IB_RETRY_CNT="7"  not read: NCCL_GDX_RETRY_CNT is set'
shows "a twin's effect is shown with it" \
	'NCCL_IB_TIMEOUT="22"  taken: NCCL_GDX_TIMEOUT=22'
shows "NCCL_IB_OOO_RQ is not applied, and why" \
	'NCCL_IB_OOO_RQ="1"  not applied'
shows "NCCL_IB_OOO_RQ's reason: the ordering it would break" \
	'an out-of-order receive queue (mlx5'"'"'s OOO data placement) would break'
shows "NCCL_IB_DATA_DIRECT is applied, as NCCL reads it" \
	'NCCL_IB_DATA_DIRECT="2"  taken: NCCL_GDX_DATA_DIRECT=2'
shows "net_ib's failed-request probing is not applied, and why" \
	'NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY="20"  not applied'
shows "NCCL's own variables are NCCL's" 'NCCL_IB_DISABLE="0"  NCCL'"'"'s own'
if grep -q 'misspelt\|reads no such variable' "$tmp/out"; then
	not_ok "no NCCL_IB_* variable of NCCL's is taken for a misspelling" "$(grep 'misspelt\|no such' "$tmp/out")"
else
	ok "no NCCL_IB_* variable of NCCL's is taken for a misspelling"
fi

# A twin outside the range the plugin takes is refused, as init refuses it
# (a WARN, the default used): the variable's line, the NCCL line and the
# note all name the default, none says the value refused is taken.
NCCL_IB_TIMEOUT=99 "$doctor" env >"$tmp/out" 2>&1
rc=$?
exited0 "env: NCCL_IB_TIMEOUT=99 is NCCL's to set, not a refusal of init"
shows "env: NCCL_IB_TIMEOUT=99's note names the default used" \
	"note: NCCL_IB_TIMEOUT=99 is outside 0-31, which this plugin takes: using NCCL_GDX_TIMEOUT's default 20"
shows "env: NCCL_GDX_TIMEOUT's line says 99 is refused and 20 used" \
	'not set; NCCL_IB_TIMEOUT="99" is refused (outside 0-31): its default 20 is used'
shows "env: the NCCL line says 99 is refused and 20 kept" \
	'NCCL_IB_TIMEOUT="99"  refused: NCCL_GDX_TIMEOUT keeps its default 20 (outside 0-31)'
if grep -qF -e '"99" is taken' -e 'NCCL_GDX_TIMEOUT=99' "$tmp/out"; then
	not_ok "env: nothing says NCCL_IB_TIMEOUT=99 is taken" "$(grep -F -e '"99" is taken' -e 'NCCL_GDX_TIMEOUT=99' "$tmp/out")"
else
	ok "env: nothing says NCCL_IB_TIMEOUT=99 is taken"
fi
NCCL_IB_TIMEOUT=99 "$doctor" env --json >"$tmp/json" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = {v["name"]: v for v in d["nccl"]}
t = n["NCCL_IB_TIMEOUT"]
assert t["value"] == "99" and t["taken"] is None, t
assert t["refused"] == "NCCL_GDX_TIMEOUT keeps its default 20 (outside 0-31)", t
assert n["NCCL_IB_SL"]["refused"] is None, n["NCCL_IB_SL"]
assert d["refused"] == [] and d["exit"] == 0, d["refused"]
' "$tmp/json" 2>"$tmp/err"; then
	ok "env --json: NCCL_IB_TIMEOUT=99 refused, nothing taken from it"
else
	not_ok "env --json: NCCL_IB_TIMEOUT=99 refused, nothing taken from it" "$(tail -n 2 "$tmp/err")"
fi

NCCL_IB_RESILIENCY_PORT_RECOVERY=5 NCCL_IB_OOO_RQ=1 "$doctor" env --json >"$tmp/json" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = {v["name"]: v for v in d["nccl"]}
assert n["NCCL_IB_RESILIENCY_PORT_RECOVERY"]["taken"] == "1", n["NCCL_IB_RESILIENCY_PORT_RECOVERY"]
assert n["NCCL_IB_RESILIENCY_PORT_RECOVERY"]["twin_of"] == "NCCL_GDX_RECOVERY"
assert n["NCCL_IB_OOO_RQ"]["kind"] == "noted" and n["NCCL_IB_OOO_RQ"]["value"] == "1"
assert n["NCCL_IB_OOO_RQ"]["taken"] is None and "mlx5" in n["NCCL_IB_OOO_RQ"]["what"]
assert n["NCCL_IB_TIMEOUT"]["value"] is None and n["NCCL_IB_TIMEOUT"]["default"] == "20"
assert d["exit"] == 0
' "$tmp/json" 2>"$tmp/err"; then
	ok "env --json: each NCCL_IB_* variable, its kind, value, what is taken and why"
else
	not_ok "env --json: each NCCL_IB_* variable, its kind, value, what is taken and why" \
		"$(tail -n 2 "$tmp/err")"
fi

"$doctor" env --markdown >"$tmp/md"
rows=$(grep -c '^| `NCCL_IB_' "$tmp/md")
want=$(grep -vc '^#' tests/lib/fixtures/nccl-ib-vars/2.31.0)
if [ "$rows" -eq "$want" ]; then
	ok "env --markdown has the compatibility table: a row for each of NCCL 2.31's $want NCCL_IB_* variables"
else
	not_ok "env --markdown has the compatibility table" "$rows rows, NCCL 2.31 has $want variables"
fi

# Nothing set: a short form, what is set (nothing) and one line for the
# rest; --all the whole table, its columns in line whatever the type;
# --json every variable still.
clean=(env -i PATH="$PATH" HOME="$tmp/empty-home")
mkdir -p "$tmp/empty-home"
"${clean[@]}" "$doctor" env --json >"$tmp/json" 2>/dev/null
count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["variables"]))' "$tmp/json")
"${clean[@]}" "$doctor" env >"$tmp/out" 2>&1
rc=$?
exited0 "env with nothing set"
shows "env with nothing set: one line for all $count at their defaults" \
	"no NCCL_GDX_* variable is set, nor an NCCL_IB_* one the plugin reads: all $count at their defaults (gdx-doctor env --all lists each, with its meaning)"
lines=$(wc -l <"$tmp/out")
if [ "$lines" -le 8 ] && ! grep -q '^NCCL_GDX_' "$tmp/out"; then
	ok "env with nothing set: $lines lines, no variable's"
else
	not_ok "env with nothing set: a few lines, no variable's" "$lines lines: $(head -c 300 "$tmp/out")"
fi
"${clean[@]}" NCCL_GDX_TIMEOUT=14 NCCL_IB_RETRY_CNT=5 "$doctor" env >"$tmp/out" 2>&1
shows "env: a variable set, with its source" 'NCCL_GDX_TIMEOUT int default 20 set to "14" (environment)'
shows "env: one set through its twin" 'NCCL_GDX_RETRY_CNT int default 6 not set; NCCL_IB_RETRY_CNT="5" is taken'
shows "env: and how many others are at their defaults" "$((count - 2)) other NCCL_GDX_* variable(s) at their defaults"
if grep -q '^NCCL_GDX_HCA ' "$tmp/out"; then
	not_ok "env: no line of a variable not set" "$(grep '^NCCL_GDX_HCA' "$tmp/out")"
else
	ok "env: no line of a variable not set"
fi
"${clean[@]}" "$doctor" env --all >"$tmp/out" 2>&1
all=$(grep -c '^NCCL_GDX_' "$tmp/out")
cols=$(grep '^NCCL_GDX_' "$tmp/out" | awk '{ print index($0, " default ") }' | sort -u | wc -l)
if [ "$all" -eq "$count" ] && [ "$cols" -eq 1 ]; then
	ok "env --all: all $count variables, 'default' in one column whatever the type"
else
	not_ok "env --all: every variable, the columns in line" "$all of $count lines, 'default' at $cols columns: $(grep -E '^NCCL_GDX_[A-Z_]+ +(family|bool)' "$tmp/out" | head -3)"
fi

report_end tests/check/doctor_env.sh
