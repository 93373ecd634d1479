#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor check's verdict on the NCCL that would load the plugin: stub
# libnccl.so.2 libraries report chosen versions (each boundary of the
# loaders' table: 2.12, 2.13, 2.18, 2.19, 2.20, 2.21, and newer), on a node
# that is otherwise healthy (the healthy fixture, whose facts file here
# says "nccl this-machine": its NCCL and plugin are this machine's files).
# NCCL that will not load the plugin (a wrong name, a path before 2.21, a
# release that tries none of its tables, NCCL_NET naming another network,
# another plugin, a file that does not load) is broken, exit 2, whatever
# --allow-degraded says; --allow-degraded turns only degraded into 0.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_nccl.sh: N passed, N failed".
#
#   tests/check/doctor_nccl.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_nccl.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
plugin=$PWD/build/libnccl-net-gdx.so
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
unset NCCL_GDX_GDR NCCL_NET_GDR_LEVEL NCCL_NET_PLUGIN NCCL_NET

if [ ! -x "$doctor" ] || [ ! -f "$plugin" ]; then
	not_ok "gdx-doctor and the plugin are built" "$doctor or $plugin is missing (make first)"
	report_end tests/check/doctor_nccl.sh
	exit 1
fi

# stub_nccl DIR CODE: DIR/libnccl.so.2 whose ncclGetVersion says CODE.
stub_nccl() {
	mkdir -p "$1"
	printf 'int ncclGetVersion(int *v) { *v = %d; return 0; }\n' "$2" |
		cc -shared -fPIC -o "$1/libnccl.so.2" -x c -
}
for v in 2.12.7:21207 2.13.4:21304 2.18.5:21805 2.19.3:21903 2.20.3:22003 2.21.5:22105 \
	2.24.3:22403 2.26.2:22602 2.27.3:22703 2.28.9:22809 2.30.3:23003 2.30.7:23007 \
	2.31.1:23101 2.32.3:23203 2.33.1:23301; do
	stub_nccl "$tmp/nccl-${v%%:*}" "${v#*:}" || {
		not_ok "a stub libnccl.so.2 ${v%%:*} builds" "cc failed"
		report_end tests/check/doctor_nccl.sh
		exit 1
	}
done
# Another plugin, with a v8 table of its own network, and a file that is
# no library at all.
mkdir -p "$tmp/plugins"
printf 'struct { const char *name; void *calls[24]; } ncclNetPlugin_v8 = {"OTHER"};\n' |
	cc -shared -fPIC -o "$tmp/plugins/libnccl-net-other.so" -x c -
echo "not an ELF object" >"$tmp/plugins/libnccl-net-bad.so"
# This plugin as libnccl-net.so, NCCL's name when NCCL_NET_PLUGIN is unset.
mkdir -p "$tmp/default"
ln -s "$plugin" "$tmp/default/libnccl-net.so"

# The node: healthy, with this machine's NCCL (the stub) and plugin judged.
cat "$fx/healthy/facts" >"$tmp/facts"
echo "nccl this-machine" >>"$tmp/facts"
cp "$fx/no-peermem/facts" "$tmp/degraded-facts"
echo "nccl this-machine" >>"$tmp/degraded-facts"

# node NCCL [--facts FILE] [--tree CASE] [ENV=VALUE...] [-- CHECK-ARGS...]:
# gdx-doctor check on the node with the stub NCCL (a version, or "none"),
# the plugin's build directory and the stub plugins in the library path;
# output in $tmp/out (JSON with --json), status in $rc.
node() {
	local ver=$1 facts=$tmp/facts tree=healthy envs=()
	shift
	[ "${1:-}" = --facts ] && facts=$2 && shift 2
	[ "${1:-}" = --tree ] && tree=$2 && shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	env LD_LIBRARY_PATH="$tmp/nccl-$ver:$PWD/build:$tmp/plugins" GDX_GDR_FACTS="$facts" \
		"${envs[@]}" "$doctor" check --sysfs-root "$fx/$tree" --xml "$fx/$tree/topo.xml" \
		"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# status NAME WANT: the last node's exit status is WANT.
status() {
	if [ "$rc" -eq "$2" ]; then
		ok "$1"
	else
		not_ok "$1" "exit $rc, want $2: $(grep -A6 '^Problems' "$tmp/out" | head -c 900)$(head -c 300 "$tmp/err")"
	fi
}

# out_has NAME REGEX: a line of the last output ($tmp/out) matches; a miss
# shows its report from the Host line on.
out_has() {
	if grep -Eq -- "$2" "$tmp/out"; then
		ok "$1"
	else
		not_ok "$1" "no line matches '$2' in: $(sed -n '/^Host/,$p' "$tmp/out" | head -c 1200)"
	fi
}

# loads VERSION N: with NCCL_NET_PLUGIN=gdx, NCCL VERSION loads ncclNetPlugin_vN: healthy.
loads() {
	node "$1" NCCL_NET_PLUGIN=gdx
	status "NCCL $1, NCCL_NET_PLUGIN=gdx: healthy (exit 0)" 0
	out_has "NCCL $1 loads ncclNetPlugin_v$2 of this plugin" "^ +$plugin \\(ncclNetPlugin_v6 to v12\\): NCCL loads ncclNetPlugin_v$2\$"
	node "$1" NCCL_NET_PLUGIN=gdx -- --json
	json "NCCL $1 --json: net_api $2, the plugin loaded, nothing but notes" \
		"d['nccl']['net_api'] == $2 and d['nccl']['loads_plugin'] and d['nccl']['plugin_path'] == '$plugin' and all(p['level'] == 'note' for p in d['problems']) and d['exit'] == 0"
}

# Each boundary of the table, by the tables the plugin exports (v6 to v12).
node 2.12.7 NCCL_NET_PLUGIN=gdx
status "NCCL 2.12.7 tries only v5 and v4: broken (exit 2)" 2
out_has "NCCL 2.12.7: why, and the release that would" "^  \\[broken\\] NCCL 2\\.12\\.7 \\([^)]*\\) tries ncclNetPlugin_v5, v4, and this plugin \\($plugin\\) exports ncclNetPlugin_v6 to v12: NCCL will not load it; fix: NCCL 2\\.13 or later\$"
out_has "NCCL 2.12.7: the table says it loads none" "NCCL loads none of them\$"
loads 2.13.4 6
loads 2.18.5 6
node 2.18.5 NCCL_NET_PLUGIN=gdx
if grep -q "too old" "$tmp/out"; then not_ok "NCCL 2.18.5 is not called too old" "$(grep 'too old' "$tmp/out")"; else ok "NCCL 2.18.5 is not called too old"; fi
out_has "NCCL 2.18.5: what it tries" "^  NCCL +2\\.18\\.5 \\([^)]*\\): tries ncclNetPlugin_v6, v5, v4\$"
loads 2.19.3 7
loads 2.20.3 8
loads 2.21.5 8
loads 2.24.3 9
loads 2.26.2 10
loads 2.28.9 11
loads 2.30.3 12
loads 2.30.7 12
loads 2.31.1 12
loads 2.32.3 12
node 2.33.1 NCCL_NET_PLUGIN=gdx
out_has "NCCL 2.33.1 is newer than the table: a note, judged as 2.32" "^  \\[note\\] NCCL 2\\.33\\.1 .* is newer than this gdx-doctor knows: judged as NCCL 2\\.32 loads plugins\$"

# One-sided RMA: the table each release takes from this plugin (2.30.7 v14,
# 2.31 v15, 2.32.3 v16, none before), whether it is on, and why NCCL would
# not use it; notes, never problems.
node 2.30.3 NCCL_NET_PLUGIN=gdx
out_has "NCCL 2.30.3: RMA unused is one line, with the loader's want" "^  RMA +off \\(NCCL_GDX_RMA is not 1; NCCL 2\\.30\\.0-2\\.30\\.6 looks for no RMA plugin at all\\): NCCL keeps its own RMA proxy; [0-9]+ other reason\\(s\\) it would not be used in --json\$"
if grep -A1 '^  RMA ' "$tmp/out" | tail -1 | grep -q '^    '; then
	not_ok "NCCL 2.30.3: nothing of RMA after its line" "$(grep -A3 '^  RMA ' "$tmp/out")"
else
	ok "NCCL 2.30.3: nothing of RMA after its line"
fi
node 2.30.3 NCCL_NET_PLUGIN=gdx -- --json
json "NCCL 2.30.3: --json says why" "any('NCCL 2.30.0-2.30.6 loads no RMA plugin (the loader came with 2.30.7)' in w for w in d['nccl']['rma']['why_not'])"
for v in 2.30.7:14 2.31.1:15 2.32.3:16; do
	node "${v%%:*}" NCCL_NET_PLUGIN=gdx NCCL_GDX_RMA=1 -- --json
	json "NCCL ${v%%:*}, NCCL_GDX_RMA=1: takes ncclRmaPlugin_v${v#*:}, healthy" \
		"d['nccl']['rma']['rma_api'] == ${v#*:} and d['nccl']['rma']['enabled'] and d['exit'] == 0 and not any('NCCL_GDX_RMA' in w for w in d['nccl']['rma']['why_not'])"
done
node 2.32.3 NCCL_NET_PLUGIN=gdx NCCL_GDX_RMA=1
out_has "NCCL 2.32.3, NCCL_GDX_RMA=1: the table taken" "^  RMA +on \\(NCCL_GDX_RMA=1\\); NCCL 2\\.32 looks for ncclRmaPlugin_v16, v15, v14, v13: takes ncclRmaPlugin_v16 of this plugin\$"
out_has "the GPUs' cuMem GPUDirect RDMA, not probed from a facts file, said" "cuMem GPUDirect RDMA not probed on"
node 2.32.3 NCCL_NET_PLUGIN=gdx NCCL_CROSS_NIC=0 -- --json
json "NCCL_GDX_RMA unset and NCCL_CROSS_NIC=0: both said, still healthy" \
	"d['exit'] == 0 and not d['nccl']['rma']['used'] and any('NCCL_GDX_RMA is not 1' in w for w in d['nccl']['rma']['why_not']) and any('NCCL_CROSS_NIC=0: NCCL uses no RMA at all' in w for w in d['nccl']['rma']['why_not'])"
node 2.32.3 NCCL_NET_PLUGIN=other NCCL_GDX_RMA=1 -- --json
json "another net plugin: NCCL never looks for these RMA tables" \
	"d['nccl']['rma']['rma_api'] is None and any('never looks for its RMA tables' in w for w in d['nccl']['rma']['why_not'])"

# A full path: NCCL 2.21 and later open it as given; 2.20 opens
# libnccl-net-<path>.so and never this plugin.
node 2.20.3 NCCL_NET_PLUGIN="$plugin"
status "NCCL 2.20.3 with a full path: broken (exit 2)" 2
out_has "NCCL 2.20.3 with a full path: it takes no path there" "^  \\[broken\\] NCCL_NET_PLUGIN=$plugin: NCCL 2\\.20\\.3 .* takes no path there \\(NCCL 2\\.21 and later do\\): it opens libnccl-net-$plugin\\.so, so it will not load this plugin; fix: "
for v in 2.21.5:8 2.28.9:11; do
	node "${v%%:*}" NCCL_NET_PLUGIN="$plugin" -- --json
	json "NCCL ${v%%:*} with a full path: loads ncclNetPlugin_v${v#*:}, healthy" \
		"d['exit'] == 0 and d['nccl']['net_api'] == ${v#*:} and d['nccl']['opens'] == '$plugin'"
done

# A name that leads nowhere: NCCL will not load the plugin: broken, not
# degraded, and --allow-degraded does not pass it.
node 2.28.9 NCCL_NET_PLUGIN=gdxx
status "NCCL_NET_PLUGIN=gdxx: broken (exit 2), not degraded" 2
out_has "NCCL_NET_PLUGIN=gdxx: why and the fix, the name meant" "^  \\[broken\\] NCCL_NET_PLUGIN=gdxx does not lead to this plugin: NCCL 2\\.28\\.9 .* opens gdxx, then libnccl-net-gdxx\\.so and finds no such file in the library path; fix: NCCL_NET_PLUGIN=gdx \\(did you mean it\\?"
node 2.28.9 NCCL_NET_PLUGIN=nope
out_has "NCCL_NET_PLUGIN=nope, the plugin in the library path: the fix is the name" "^  \\[broken\\] NCCL_NET_PLUGIN=nope does not lead to this plugin: .* finds no such file in the library path; fix: NCCL_NET_PLUGIN=gdx \\(libnccl-net-gdx\\.so is in $PWD/build, in LD_LIBRARY_PATH\\)\$"
node 2.28.9 NCCL_NET_PLUGIN=gdxx -- --allow-degraded
status "NCCL_NET_PLUGIN=gdxx --allow-degraded: still broken (exit 2)" 2
# The network's name is GDX (NCCL_NET=GDX), the plugin's file name is
# lowercase: NCCL opens libnccl-net-<value>.so, and file names have a case.
node 2.28.9 NCCL_NET_PLUGIN=GDX
status "NCCL_NET_PLUGIN=GDX: broken (exit 2)" 2
out_has "NCCL_NET_PLUGIN=GDX: did you mean gdx" "^  \\[broken\\] NCCL_NET_PLUGIN=GDX does not lead to this plugin: NCCL 2\\.28\\.9 .* opens GDX, then libnccl-net-GDX\\.so and finds no such file in the library path; fix: NCCL_NET_PLUGIN=gdx \\(did you mean it\\? NCCL opens libnccl-net-<value>\\.so, and file names have a case\\)\$"
# A value with a '/' is a path: one that is not there is said so, with
# where the plugin is (beside this gdx-doctor, in build/).
node 2.28.9 NCCL_NET_PLUGIN=/no/such/libnccl-net-gdx.so
status "NCCL_NET_PLUGIN=/no/such/libnccl-net-gdx.so: broken (exit 2)" 2
out_has "a path that is not there: that file does not exist, and the plugin's own path" "^  \\[broken\\] NCCL_NET_PLUGIN=/no/such/libnccl-net-gdx\\.so does not lead to this plugin: NCCL 2\\.28\\.9 .* opens /no/such/libnccl-net-gdx\\.so: that file does not exist; fix: NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx\\.so, the plugin beside this gdx-doctor\$"
# What NCCL_NET_PLUGIN holds is printed escaped.
node 2.28.9 NCCL_NET_PLUGIN=$'gd\e[2Jx'
printable "NCCL_NET_PLUGIN's bytes printed escaped" "$tmp/out"
# Installed as make install lays it out (bin/, lib/), the plugin's lib/ not
# in the library path: the fix names that directory.
mkdir -p "$tmp/inst/bin" "$tmp/inst/lib"
cp "$doctor" "$tmp/inst/bin/gdx-doctor"
cp "$plugin" "$tmp/inst/lib/libnccl-net-gdx.so"
env LD_LIBRARY_PATH="$tmp/nccl-2.28.9" GDX_GDR_FACTS="$tmp/facts" NCCL_NET_PLUGIN=gdx \
	"$tmp/inst/bin/gdx-doctor" check --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
status "installed, its lib/ not in LD_LIBRARY_PATH: broken (exit 2)" 2
out_has "installed: the fix names the plugin's directory" "; fix: add the plugin's directory, $(realpath "$tmp/inst/lib"), to LD_LIBRARY_PATH \\(or give its full path, NCCL 2\\.21 or later\\)\$"
node 2.28.9
status "NCCL_NET_PLUGIN unset: NCCL opens libnccl-net.so, not this plugin: broken" 2
out_has "NCCL_NET_PLUGIN unset: why and the fix" "^  \\[broken\\] NCCL_NET_PLUGIN is not set: NCCL 2\\.28\\.9 .* opens libnccl-net\\.so and finds no such file in the library path: it will not load this plugin; fix: export NCCL_NET_PLUGIN=gdx\$"
env LD_LIBRARY_PATH="$tmp/nccl-2.28.9:$tmp/default" GDX_GDR_FACTS="$tmp/facts" "$doctor" check \
	--json --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml" >"$tmp/out" 2>"$tmp/err"
json "NCCL_NET_PLUGIN unset, libnccl-net.so is this plugin: healthy" \
	"d['exit'] == 0 and d['nccl']['net_api'] == 11 and d['nccl']['opens'] == 'libnccl-net.so'"
node 2.28.9 NCCL_NET_PLUGIN=other
status "NCCL_NET_PLUGIN=other, another plugin: broken" 2
out_has "another plugin: named, with its network" "^  \\[broken\\] NCCL_NET_PLUGIN=other does not lead to this plugin: .* opens other, then libnccl-net-other\\.so $tmp/plugins/libnccl-net-other\\.so, another plugin \\(its network is OTHER\\); fix: "
node 2.28.9 NCCL_NET_PLUGIN=bad
status "a plugin file that does not load: broken" 2
out_has "a plugin file that does not load: dlopen's words" "^  \\[broken\\] NCCL_NET_PLUGIN=bad does not lead to this plugin: .* a file there does not load: .*libnccl-net-bad\\.so: .*; fix: install what it needs"

# NCCL_NET selects a network by name: another one is never this plugin.
node 2.28.9 NCCL_NET_PLUGIN=gdx NCCL_NET=IB
status "NCCL_NET=IB: NCCL uses its own transport, never this plugin: broken" 2
out_has "NCCL_NET=IB: why and the fix" "^  \\[broken\\] NCCL_NET=IB: NCCL uses the network of that name and no other, and this plugin's is GDX: it will not use it; fix: NCCL_NET=GDX, or unset NCCL_NET\$"
node 2.28.9 NCCL_NET_PLUGIN=gdx NCCL_NET=gdx
status "NCCL_NET=gdx (any case) is this plugin's network: healthy" 0

# 2.28 and later: "none" turns external plugins off; from 2.27, a list.
node 2.28.9 NCCL_NET_PLUGIN=none
status "NCCL 2.28.9, NCCL_NET_PLUGIN=none: broken" 2
out_has "NCCL_NET_PLUGIN=none: no external plugin" "^  \\[broken\\] NCCL_NET_PLUGIN=none: NCCL 2\\.28\\.9 .* loads no external plugin"
node 2.28.9 NCCL_NET_PLUGIN=other,gdx
status "NCCL 2.28.9, NCCL_NET_PLUGIN=other,gdx: this plugin is in the list: healthy" 0
out_has "a list with another plugin first: a note" "^  \\[note\\] NCCL_NET_PLUGIN lists another plugin first, $tmp/plugins/libnccl-net-other\\.so \\(OTHER\\)"
node 2.26.2 NCCL_NET_PLUGIN=other,gdx
status "NCCL 2.26.2 takes no list: libnccl-net-other,gdx.so is nowhere: broken" 2

# --allow-degraded: a degraded node (GPUs staged, peer memory missing) exits
# 0 with it and 1 without; the verdict itself stays degraded.
node 2.28.9 --facts "$tmp/degraded-facts" --tree no-peermem NCCL_NET_PLUGIN=gdx
status "a degraded node: exit 1" 1
node 2.28.9 --facts "$tmp/degraded-facts" --tree no-peermem NCCL_NET_PLUGIN=gdx -- --allow-degraded
status "a degraded node with --allow-degraded: exit 0" 0
out_has "--allow-degraded says so in the result" "^Result: degraded \\(exit 0, --allow-degraded\\)\$"
node 2.28.9 --facts "$tmp/degraded-facts" --tree no-peermem NCCL_NET_PLUGIN=gdx -- --allow-degraded --json
json "--allow-degraded --json: status degraded, exit 0" "d['status'] == 'degraded' and d['exit'] == 0"
# The gate the man page gives: healthy passes, degraded and broken do not.
for c in "2.28.9 NCCL_NET_PLUGIN=gdx:0" "2.28.9 NCCL_NET_PLUGIN=gdxx:1"; do
	read -r ver envset <<<"${c%:*}"
	# shellcheck disable=SC2016 # expanded by that sh
	env LD_LIBRARY_PATH="$tmp/nccl-$ver:$PWD/build" GDX_GDR_FACTS="$tmp/facts" "$envset" \
		sh -c '"$1" check --sysfs-root "$2" --xml "$2/topo.xml" >/dev/null; [ $? -eq 0 ] || exit 1' \
		sh "$doctor" "$fx/healthy"
	gate=$?
	if [ "$gate" -eq "${c##*:}" ]; then
		ok "the gate 'gdx-doctor check; [ \$? -eq 0 ] || exit' with $envset: $gate"
	else
		not_ok "the gate with $envset" "exit $gate, want ${c##*:}"
	fi
done

# What check loads runs: the library NCCL_NET_PLUGIN names is opened as
# NCCL opens it (dlopen), its constructor with it. --help and the man page
# say so, for whoever points NCCL_NET_PLUGIN at a library (root above all).
printf '#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { fclose(fopen("%s", "w")); }\n' \
	"$tmp/constructor-ran" | cc -shared -fPIC -o "$tmp/plugins/libnccl-net-ctor.so" -x c -
node 2.28.9 NCCL_NET_PLUGIN=ctor
if [ -e "$tmp/constructor-ran" ]; then
	ok "check loads the library NCCL_NET_PLUGIN names: its constructor runs"
else
	not_ok "check loads the library NCCL_NET_PLUGIN names: its constructor runs" "no marker"
fi
if "$doctor" check --help | grep "their constructors, and their dependencies', run in this process" >/dev/null &&
	grep -q 'constructors' plugin/tools/doctor/gdx-doctor.1; then
	ok "check --help and gdx-doctor(1) say that the libraries' constructors run"
else
	not_ok "check --help and gdx-doctor(1) say that the libraries' constructors run" \
		"$("$doctor" check --help | sed -n '/options:/,/exit status/p')"
fi

# --nccl FILE: the NCCL a pip wheel brings, which no library path names,
# judged instead of the one the loader finds (here the 2.28.9 stub). The
# real library where this machine has one, copied where nothing finds it.
wheel=$tmp/site-packages/nvidia/nccl/lib
mkdir -p "$wheel"
real=/usr/local/cuda/lib64/libnccl.so.2
if [ -f "$real" ]; then
	cp "$real" "$wheel/libnccl.so.2"
	want=$(python3 -c 'import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); v = ctypes.c_int(); l.ncclGetVersion(ctypes.byref(v)); print(v.value)' "$wheel/libnccl.so.2")
	what="a copy of $real"
else
	cp "$tmp/nccl-2.30.7/libnccl.so.2" "$wheel/libnccl.so.2"
	want=23007
	what="a stub 2.30.7 ($real is not here)"
fi
node 2.28.9 NCCL_NET_PLUGIN=gdx -- --json --nccl "$wheel/libnccl.so.2"
json "check --nccl judges the file given, $what, not the library path's" \
	"d['nccl']['path'] == '$wheel/libnccl.so.2' and d['nccl']['version_code'] == $want and d['nccl']['in_library_path'] is False"
node 2.28.9 NCCL_NET_PLUGIN=gdx -- --json
json "check without --nccl judges the library path's" "d['nccl']['version_code'] == 22809 and d['nccl']['in_library_path'] is True"
rm -f "$wheel/libnccl.so.2"
node 2.28.9 -- --nccl "$tmp/nowhere/libnccl.so.2"
status "check --nccl naming no file: exit 3" 3
has_err() { if grep -qF -- "$2" "$tmp/err"; then ok "$1"; else not_ok "$1" "stderr: $(head -c 300 "$tmp/err")"; fi; }
has_err "check --nccl naming no file: says which" "gdx-doctor check: --nccl $tmp/nowhere/libnccl.so.2: No such file or directory"
node 2.28.9 -- --nccl "$tmp/plugins/libnccl-net-bad.so"
status "check --nccl naming no library: exit 3" 3
has_err "check --nccl naming no library: it does not load" "--nccl $tmp/plugins/libnccl-net-bad.so does not load: "
node 2.28.9 -- --nccl "$tmp/plugins/libnccl-net-other.so"
status "check --nccl naming a library that is no NCCL: exit 3" 3
has_err "check --nccl naming a library that is no NCCL: why" "is no NCCL library: it has no ncclGetVersion"

report_end tests/check/doctor_nccl.sh
