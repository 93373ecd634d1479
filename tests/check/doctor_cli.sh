#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor's command line as a new user meets it in the first hour: -V
# prints the version as gdx-bench's does; a misspelt command or option is
# answered with the one meant (edit distance), a name far from all of them
# with none, what was typed escaped; every --help and `env` fit 80 columns
# (a long value wrapped, nothing of it lost), and the exit table is printed
# once, by gdx-doctor --help. Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_cli.sh: N passed, N failed".
#
#   tests/check/doctor_cli.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_cli.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
for v in $(env | grep -o '^NCCL_[A-Z0-9_]*'); do unset "$v"; done

# outputs NAME STATUS STDOUT STDERR ARGS...: gdx-doctor ARGS exits STATUS
# and prints exactly STDOUT on standard output and STDERR on standard error.
outputs() {
	local name=$1 want=$2 out=$3 err=$4 rc
	shift 4
	"$doctor" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(cat "$tmp/out")" = "$out" ] &&
		[ "$(cat "$tmp/err")" = "$err" ]; then
		ok "$name"
	else
		not_ok "$name" "exit $rc (want $want); stdout '$(head -c 300 "$tmp/out")' (want '$out'); stderr '$(head -c 300 "$tmp/err")' (want '$err')"
	fi
}

version=$("$doctor" --version)
outputs "-V prints the version, as --version does and gdx-bench -V" 0 "$version" "" -V
case $version in
"gdx-doctor $(build/gdx-bench -V 2>/dev/null | cut -d' ' -f2)") ok "-V's version is gdx-bench -V's" ;;
*) not_ok "-V's version is gdx-bench -V's" "$version; gdx-bench: $(build/gdx-bench -V 2>&1)" ;;
esac

# A misspelt command or option: the one meant, on standard error, exit 64.
outputs "a misspelt command: did you mean" 64 "" \
	"gdx-doctor: unknown command 'chek'; did you mean 'check'?
try 'gdx-doctor --help'" chek
outputs "a misspelt option: did you mean" 64 "" \
	"gdx-doctor check: unknown option --jsn; did you mean --json?
try 'gdx-doctor check --help'" check --jsn
outputs "a misspelt option without a command (check's): did you mean" 64 "" \
	"gdx-doctor check: unknown option --jsn; did you mean --json?
try 'gdx-doctor check --help'" --jsn
outputs "a misspelt option of another command: its own options" 64 "" \
	"gdx-doctor hang: unknown option --treshold; did you mean --threshold?
try 'gdx-doctor hang --help'" hang --treshold 2
outputs "a misspelt help: did you mean --help" 64 "" \
	"gdx-doctor topo: unknown option --hepl; did you mean --help?
try 'gdx-doctor topo --help'" topo --hepl
outputs "a name far from every command: no guess" 64 "" \
	"gdx-doctor: unknown command 'frobnicate'
try 'gdx-doctor --help'" frobnicate
outputs "help for a misspelt command: did you mean" 64 "" \
	"gdx-doctor: no command 'hnag'; did you mean 'hang'?
try 'gdx-doctor --help'" help hnag
"$doctor" $'ch\e[2Jek' >"$tmp/out" 2>"$tmp/err"
printable "an unknown command is printed escaped" "$tmp/err"
"$doctor" check $'--js\e]0;x\an' >"$tmp/out" 2>"$tmp/err"
printable "an unknown option is printed escaped" "$tmp/err"

# wide FILE: no line of FILE is wider than 80 characters.
wide() {
	local why
	if why=$(python3 - "$2" <<'PY'
import sys
for i, line in enumerate(open(sys.argv[1], encoding="utf-8").read().splitlines(), 1):
    if len(line) > 80:
        sys.exit("line %d is %d wide: %s" % (i, len(line), line))
PY
	); then
		ok "$1"
	else
		not_ok "$1" "$why"
	fi
}
"$doctor" --help >"$tmp/help" 2>&1
wide "gdx-doctor --help fits 80 columns" "$tmp/help"
if grep -q '^  64  bad command line$' "$tmp/help" && grep -q '^  1   degraded (check, log): ' "$tmp/help"; then
	ok "gdx-doctor --help has the exit table"
else
	not_ok "gdx-doctor --help has the exit table" "$(cat "$tmp/help")"
fi
cmds=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
	on && /^  [a-z]/ && $1 != "help" { print $1 }' "$tmp/help")
[ -n "$cmds" ] || not_ok "gdx-doctor --help lists its commands" "$(cat "$tmp/help")"
for c in $cmds; do
	"$doctor" "$c" --help >"$tmp/help-$c" 2>&1
	wide "gdx-doctor $c --help fits 80 columns" "$tmp/help-$c"
	if grep -q '^  64  bad command line$' "$tmp/help-$c"; then
		not_ok "gdx-doctor $c --help leaves the exit table to gdx-doctor --help" "$(cat "$tmp/help-$c")"
	elif grep -q "^exit status: .*gdx-doctor --help" "$tmp/help-$c"; then
		ok "gdx-doctor $c --help leaves the exit table to gdx-doctor --help"
	else
		not_ok "gdx-doctor $c --help says where the exit table is" "$(cat "$tmp/help-$c")"
	fi
done

# env, with values that cannot fit: wrapped, indented, nothing lost.
hca=$(printf 'mlx5_%d:1,' $(seq 0 40))
ifname="eth0 with spaces and a very long tail that goes on past the edge of the terminal"
NCCL_GDX_HCA=$hca NCCL_GDX_SOCKET_IFNAME=$ifname NCCL_IB_HCA=$hca \
	"$doctor" env >"$tmp/env" 2>"$tmp/env-err"
wide "gdx-doctor env fits 80 columns, long values and all" "$tmp/env"
# value FILE VAR: VAR's value as env printed it, its wrapped lines joined.
value() {
	python3 - "$1" "$2" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
for i, line in enumerate(lines):
    if line.startswith(sys.argv[2] + " ") and 'set to "' in line:
        text = line.split('set to "', 1)[1]
        j = i + 1
        # the value's closing quote, then where it came from
        end = re.compile(r'"( \((environment|from [^)]*)\))?$')
        while not end.search(text) and j < len(lines) and lines[j].startswith("        "):
            text += lines[j][8:]
            j += 1
        print(text[:end.search(text).start()] if end.search(text) else text)
        break
PY
}
prints "env: a long value without spaces, its lines joined, is the value" "$hca" value "$tmp/env" NCCL_GDX_HCA
prints "env: a long value with spaces, its lines joined, is the value" "$ifname" value "$tmp/env" NCCL_GDX_SOCKET_IFNAME

# A login node: no GPU and no RDMA device. What is about them (the ports,
# the memlock NCCL registers with, GPUDirect, the plugin's start-up) needs a
# compute node: one line says so, broken (2) for a gate; everything else is
# judged there as anywhere (the NCCL a job loads, NCCL_NET_PLUGIN, the
# environment's names), since job scripts are written there. A saved node
# whose facts say so (memlock 8M, which a compute node would be broken
# for), with a stub NCCL.
mkdir -p "$tmp/login" "$tmp/nccl"
printf 'kernel 6.8.0-45-generic\nmemlock 8M\ncuda none\nnccl this-machine\n' >"$tmp/login/facts"
printf 'int ncclGetVersion(int *v) { *v = 22809; return 0; }\n' |
	cc -shared -fPIC -o "$tmp/nccl/libnccl.so.2" -x c -
login_line="[broken] no GPU and no RDMA device here: not a compute node; judged: NCCL, the plugin file and the environment"
# login NAME NEEDLE... -- ARGS...: gdx-doctor check ARGS exits 2, its
# problems hold the login node's line and each NEEDLE, and none of memlock
# or the ports.
login() {
	local name=$1 rc problems miss=""
	shift
	local needles=("$login_line")
	while [ "$1" != -- ]; do
		needles+=("$1")
		shift
	done
	shift
	"$doctor" check "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	problems=$(sed -n '/^Problems$/,/^$/p' "$tmp/out" | sed '1d;/^$/d')
	for n in "${needles[@]}"; do
		case "$problems" in *"$n"*) ;; *) miss="$miss [$n]" ;; esac
	done
	case "$problems" in *"memlock limit"* | *"active RDMA port"* | *"no RDMA device in"*) miss="$miss (a compute node's problem)" ;; esac
	if [ "$rc" -eq 2 ] && [ -z "$miss" ]; then
		ok "$name"
	else
		not_ok "$name" "exit $rc; missing:$miss; problems: $problems"
	fi
}
LD_LIBRARY_PATH="$tmp/nccl" login "a login node: its line, and NCCL_NET_PLUGIN unset judged, exit 2" \
	"NCCL_NET_PLUGIN is not set" -- --sysfs-root "$tmp/login"
LD_LIBRARY_PATH="$tmp/nccl" NCCL_NET_PLUGIN=GDX NCCL_GDX_TIMOUT=3 login \
	"a login node: NCCL_NET_PLUGIN=GDX gets its did-you-mean, a misspelt NCCL_GDX_TIMOUT is named" \
	"NCCL_NET_PLUGIN=GDX does not lead to this plugin" "did you mean it?" \
	"NCCL_GDX_TIMOUT is set, but the plugin has no such variable" "misspelt NCCL_GDX_TIMEOUT?" \
	-- --sysfs-root "$tmp/login"
LD_LIBRARY_PATH="$tmp/nccl" NCCL_NET_PLUGIN=gdx NCCL_GDX_TIMEOUT=99 login \
	"a login node: a refused value is named" "NCCL_GDX_TIMEOUT=99 is out of range 0-31" \
	-- --sysfs-root "$tmp/login"
LD_LIBRARY_PATH="$tmp/nccl" "$doctor" check --json --sysfs-root "$tmp/login" >"$tmp/out" 2>"$tmp/err"
json "a login node --json: its line, broken, exit 2" \
	"[p['level'] for p in d['problems'] if p['text'].startswith('no GPU and no RDMA device here')] == ['broken'] and d['status'] == 'broken' and d['exit'] == 2"
# This machine, as it is, when it has neither (a build machine, a login node).
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
	NCCL_NET_PLUGIN=GDX NCCL_GDX_TIMOUT=3 login "this machine, without GPU or RDMA device: its line, and the rest judged, exit 2" \
		"did you mean it?" "misspelt NCCL_GDX_TIMEOUT?" --
else
	ok "this machine has a GPU or an RDMA device: the login node is the saved one above"
fi

# The README's Slurm gate, run as written (its sh -c command) with this
# gdx-doctor first on PATH, on a node it must stop (NCCL_NET_PLUGIN a path
# that is not there, which says nothing on standard error itself): it fails, and says why on standard error, which a gate with
# its standard output sent to /dev/null still shows.
gate=$(python3 - README.md <<'PY'
import re, sys
m = re.search(r"sh -c '(gdx-doctor check[^']*)'", open(sys.argv[1], encoding="utf-8").read())
print(m.group(1) if m else "")
PY
)
if [ -z "$gate" ]; then
	not_ok "the README's gate is there" "no sh -c 'gdx-doctor check ...' in README.md"
else
	mkdir -p "$tmp/bin"
	ln -sf "$PWD/$doctor" "$tmp/bin/gdx-doctor"
	PATH="$tmp/bin:$PATH" NCCL_NET_PLUGIN=/no/such/libnccl-net-gdx.so sh -c "$gate" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF "gdx-doctor check: $(hostname): [broken] " "$tmp/err" && [ ! -s "$tmp/out" ]; then
		ok "the README's gate stops a broken node and says why, naming the node, on standard error"
	else
		not_ok "the README's gate stops a broken node and says why, naming the node, on standard error" \
			"exit $rc; stderr '$(head -c 300 "$tmp/err")'; stdout '$(head -c 300 "$tmp/out")'; gate: $gate"
	fi
fi
# check --quiet: nothing on standard output; the problems, notes left out,
# one line each on standard error; a healthy node prints nothing.
LD_LIBRARY_PATH="$tmp/nccl" NCCL_NET_PLUGIN=gdx "$doctor" check --quiet --sysfs-root "$tmp/login" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -qF "gdx-doctor check: $login_line" "$tmp/err" &&
	! grep -qv '^gdx-doctor check: \[\(broken\|degraded\)\] ' "$tmp/err"; then
	ok "check --quiet: the problems on standard error, nothing on standard output, exit 2"
else
	not_ok "check --quiet: the problems on standard error, nothing on standard output, exit 2" \
		"exit $rc; stderr '$(head -c 300 "$tmp/err")'; stdout '$(head -c 300 "$tmp/out")'"
fi
# A job's output holds every node's gate: each problem line, and the
# header of the tables, names its node.
LD_LIBRARY_PATH="$tmp/nccl" NCCL_NET_PLUGIN=gdx "$doctor" check --quiet -H node17 --sysfs-root "$tmp/login" >"$tmp/out" 2>"$tmp/err"
if grep -qF "gdx-doctor check: node17: $login_line" "$tmp/err" && ! grep -qv '^gdx-doctor check: node17: \[\(broken\|degraded\)\] ' "$tmp/err"; then
	ok "check --quiet: every problem line names the node"
else
	not_ok "check --quiet: every problem line names the node" "stderr '$(head -c 300 "$tmp/err")'"
fi
exits "check: the header names the node" 2 "gdx-doctor check: node17: $tmp/login (kernel" \
	env LD_LIBRARY_PATH="$tmp/nccl" NCCL_NET_PLUGIN=gdx "$doctor" check -H node17 --sysfs-root "$tmp/login"
fx=tests/lib/fixtures/sysfs-gdr
GDX_GDR_FACTS=$fx/healthy/facts "$doctor" check --quiet --sysfs-root "$fx/healthy" \
	--xml "$fx/healthy/topo.xml" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then
	ok "check --quiet on a healthy node: nothing at all, exit 0"
else
	not_ok "check --quiet on a healthy node: nothing at all, exit 0" \
		"exit $rc; stderr '$(head -c 300 "$tmp/err")'; stdout '$(head -c 300 "$tmp/out")'"
fi

report_end tests/check/doctor_cli.sh
