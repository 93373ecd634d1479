#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor and NCCL's own inputs: its configuration files (read and
# applied as NCCL does; env and check say where each setting came from)
# and its topology file (NCCL_TOPO_FILE): on the ND H100 v5 fixtures
# (tests/lib/fixtures/sysfs-gdr/ndv5, nccl-conf/ndv5.conf naming
# nccl-topo/ndv5-topo.xml) check reports eight direct pairs (PIX) with the
# file, and two rails of four NODE NICs without it; a file NCCL cannot read
# or parse, a FIFO, a rail the file disagrees with; topo --xml on NCCL's
# format. HOME and the system file (GDX_NCCL_CONF_SYSTEM) are the test's own.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_nccl_conf.sh: N passed, N failed".
#
#   tests/check/doctor_nccl_conf.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_nccl_conf.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/sysfs-gdr/ndv5
conf=tests/lib/fixtures/nccl-conf/ndv5.conf
ncclxml=tests/lib/fixtures/nccl-topo/ndv5-topo.xml
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
unset NCCL_GDX_GDR NCCL_NET_GDR_LEVEL NCCL_TOPO_FILE NCCL_CONF_FILE NCCL_GDX_RAILS NCCL_GDX_TOPO_FILE
# nothing of this machine's: an empty home, no system file unless given
mkdir -p "$tmp/home"
export HOME=$tmp/home GDX_NCCL_CONF_SYSTEM=$tmp/no-nccl.conf

# run_env NAME WANT_STATUS [ENV=VALUE...] -- ARGS...: the doctor, under a
# timeout (a FIFO must not hang it), output in $tmp/out and $tmp/err.
run_env() {
	local name=$1 want=$2 rc envs=()
	shift 2
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	env "${envs[@]}" timeout 20 "$doctor" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err"); problems: $(sed -n '/^Problems/,$p' "$tmp/out" | head -c 600)"
		return 1
	fi
	ok "$name"
}

# check NAME WANT_STATUS [ENV=VALUE...] [-- EXTRA ARGS]: check on the ND v5 case.
check() {
	local name=$1 want=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	run_env "$name" "$want" GDX_GDR_FACTS="$fx/facts" "${envs[@]}" -- check --sysfs-root "$fx" \
		--xml "$fx/topo.xml" "$@"
}

# lacks NAME FILE REGEX: no line of FILE matches REGEX (report.sh has has).
lacks() {
	if grep -Eq -- "$3" "$2"; then
		not_ok "$1" "a line matches '$3': $(grep -E -- "$3" "$2" | head -c 300)"
	else
		ok "$1"
	fi
}

# count NAME FILE REGEX N: exactly N lines match
count() {
	local n
	n=$(grep -Ec -- "$3" "$2")
	if [ "$n" -eq "$4" ]; then
		ok "$1"
	else
		not_ok "$1" "$n lines match '$3', want $4"
	fi
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	echo "# tests/check/doctor_nccl_conf.sh: $passed passed, $failed failed"
	exit 1
fi

# ---- without NCCL's file: as hwloc sees it, two rails of four NODE NICs
if check "ND v5 without NCCL_TOPO_FILE: degraded" 1; then
	count "  every GPU's nearest NIC is NODE, on one of two NICs" "$tmp/out" \
		'nearest NIC mlx5_[04] \(NODE\)' 8
	lacks "  no NCCL topology section" "$tmp/out" "^NCCL's topology file"
fi

# ---- the system file names it: eight direct pairs
if check "ND v5 with /etc/nccl.conf naming NCCL_TOPO_FILE: healthy" 0 GDX_NCCL_CONF_SYSTEM="$conf"; then
	has "  NCCL_TOPO_FILE shown with its source" "$tmp/out" \
		"^  NCCL_TOPO_FILE=$ncclxml \(from $conf:5\)"
	has "  NCCL takes its topology from it, the plugin follows" "$tmp/out" \
		'NCCL takes its topology from it: 8 GPU\(s\), 8 NIC\(s\); the plugin follows it'
	for i in 0 1 2 3 4 5 6 7; do
		has "  GPU $((i + 1)) pairs with mlx5_$i, PIX" "$tmp/out" \
			"^  000$((i + 1)):00:00.0  mlx5_$i +PIX +PIX +off +identity +direct"
	done
	count "  eight direct pairs, no other" "$tmp/out" ' direct$' 8
	lacks "  no GPU staged on a NODE NIC" "$tmp/out" 'nearest NIC .* \(NODE\)'
fi
if check "ND v5 with the file, --json" 0 GDX_NCCL_CONF_SYSTEM="$conf" -- --json; then
	json "  nccl_topo: the file, its source, 8 PIX pairs" \
		"d['nccl_topo']['file'] == '$ncclxml' and d['nccl_topo']['from'] == '$conf:5' and d['nccl_topo']['plugin_follows'] and len(d['nccl_topo']['pairs']) == 8 and all(p['path'] == 'PIX' for p in d['nccl_topo']['pairs'])"
	json "  nccl_conf: the system file read, its variable" \
		"any(f['kind'] == 'system' and f['state'] == 'read' for f in d['nccl_conf']['files']) and d['nccl_conf']['variables'][0]['name'] == 'NCCL_TOPO_FILE'"
	json "  the pairs' paths are the file's" \
		"sum(1 for p in d['pairs'] if p['path'] == 'PIX') == 8"
fi

# ---- precedence: the environment over the user's file over the system's
printf 'NCCL_TOPO_FILE=%s/none.xml\nNCCL_GDX_QPS_PER_CONNECTION=2\n' "$tmp" >"$tmp/home/.nccl.conf"
if check "the user's file over the system's: its missing topology file, degraded" 1 \
	GDX_NCCL_CONF_SYSTEM="$conf"; then
	has "  the user's file named" "$tmp/out" "NCCL_TOPO_FILE=$tmp/none.xml \(from $tmp/home/.nccl.conf:1\) cannot be read"
	has "  NCCL only says so at INFO" "$tmp/out" 'NCCL says so at INFO only and detects the topology itself'
fi
check "the environment over both" 0 GDX_NCCL_CONF_SYSTEM="$conf" NCCL_TOPO_FILE="$ncclxml" &&
	has "  from the environment" "$tmp/out" "NCCL_TOPO_FILE=$ncclxml \(from the environment\)"
if run_env "env: each setting with its file" 0 GDX_NCCL_CONF_SYSTEM="$conf" NCCL_TOPO_FILE="$ncclxml" -- env; then
	has "  a plugin variable from the user's file" "$tmp/out" \
		"set to \"2\" \(from $tmp/home/.nccl.conf:2\)"
	has "  the system file's line the environment shadows" "$tmp/out" \
		"NCCL_TOPO_FILE=\"$ncclxml\" \(from $conf:5\): not applied"
	has "  NCCL_TOPO_FILE itself, from the environment" "$tmp/out" \
		"^  NCCL_TOPO_FILE=\"$ncclxml\" \(from environment\)"
fi
if run_env "env: NCCL_TOPO_FILE from the user's file, over the system's" 0 GDX_NCCL_CONF_SYSTEM="$conf" -- env; then
	count "  once, with its file and line" "$tmp/out" "NCCL_TOPO_FILE=\"$tmp/none.xml\" \(from $tmp/home/.nccl.conf:1\)$" 1
	has "  the system's line shadowed" "$tmp/out" "NCCL_TOPO_FILE=\"$ncclxml\" \(from $conf:5\): not applied"
fi
if run_env "env --json: from" 0 GDX_NCCL_CONF_SYSTEM="$conf" -- env --json; then
	json "  the variable's from is the user's file" \
		"[v['from'] for v in d['variables'] if v['name'] == 'NCCL_GDX_QPS_PER_CONNECTION'] == ['$tmp/home/.nccl.conf:2']"
fi
# NCCL_CONF_FILE replaces ~/.nccl.conf
printf 'NCCL_GDX_QPS_PER_CONNECTION=3\nno equals sign here\n' >"$tmp/named.conf"
if run_env "NCCL_CONF_FILE replaces the user's file" 0 NCCL_CONF_FILE="$tmp/named.conf" -- env; then
	has "  its value" "$tmp/out" "set to \"3\" \(from $tmp/named.conf:1\)"
	has "  a line without '=' noted" "$tmp/out" "note: $tmp/named.conf:2: no '=' .*NCCL skips the line"
	lacks "  the user's file not read" "$tmp/out" "home/.nccl.conf"
fi
check "check notes the line without '='" 1 NCCL_CONF_FILE="$tmp/named.conf" &&
	has "  as a note" "$tmp/out" "\[note\] NCCL's configuration: $tmp/named.conf:2: no '='"
printf 'NCCL_TOPO_FILE=%s\r\n' "$ncclxml" >"$tmp/home/.nccl.conf"
check "a CRLF line: the CR stays in the value, as NCCL 2.29 keeps it" 1 &&
	has "  said" "$tmp/out" "ends in a CR"
rm -f "$tmp/home/.nccl.conf"

# ---- files NCCL cannot use
printf '<system version="1"><cpu numaid="0">\n' >"$tmp/truncated.xml"
check "a truncated NCCL_TOPO_FILE: broken (NCCL's init fails)" 2 NCCL_TOPO_FILE="$tmp/truncated.xml" &&
	has "  why" "$tmp/out" "cannot be read: .*unterminated.*NCCL's init fails"
check "hwloc's XML as NCCL_TOPO_FILE: broken" 2 NCCL_TOPO_FILE="$fx/topo.xml" &&
	has "  said to be hwloc's" "$tmp/out" "hwloc's XML, not NCCL's topology format"
mkfifo "$tmp/fifo.xml"
check "a FIFO as NCCL_TOPO_FILE: broken, at once" 2 NCCL_TOPO_FILE="$tmp/fifo.xml" &&
	has "  said" "$tmp/out" "FIFO.*NCCL opens it as it is"
check "a FIFO as the system file: not read, no hang" 1 GDX_NCCL_CONF_SYSTEM="$tmp/fifo.xml" &&
	has "  noted" "$tmp/out" "\[note\] NCCL's configuration: .*fifo.xml is a FIFO"

# ---- the plugin's rails against the file
check "NCCL_GDX_RAILS fusing NICs the file pairs with two GPUs: degraded" 1 \
	NCCL_TOPO_FILE="$ncclxml" NCCL_GDX_RAILS=mlx5_0+mlx5_1 &&
	has "  said" "$tmp/out" "NCCL_GDX_RAILS=mlx5_0\+mlx5_1 fuses mlx5_0 and mlx5_1, which NCCL's topology file pairs with GPU 0001:00:00.0 and GPU 0002:00:00.0"
check "NCCL_GDX_RAILS=off agrees" 0 NCCL_TOPO_FILE="$ncclxml" NCCL_GDX_RAILS=off

# ---- topo
if run_env "topo --xml on NCCL's format: read as NCCL's" 0 -- topo --xml "$ncclxml"; then
	has "  says what it is and what to give" "$tmp/out" "is NCCL's topology format .*lstopo --of xml"
	has "  NCCL's classes" "$tmp/out" '^  0001:00:00.0  PIX +PHB +PHB +PHB +SYS'
fi
run_env "topo --json --xml on NCCL's format" 0 -- topo --json --xml "$ncclxml" &&
	json "  8 GPUs, 8 NICs, the first PIX to the first" \
		"d['format'] == 'nccl' and len(d['gpus']) == 8 and len(d['nics']) == 8 and d['gpus'][0]['paths'][0] == 'PIX'"
if run_env "topo with NCCL_TOPO_FILE: eight rails of one" 0 NCCL_TOPO_FILE="$ncclxml" -- topo --xml tests/lib/fixtures/topo/ndv5.xml; then
	count "  each NIC the rail of one GPU" "$tmp/out" 'rail of 1 GPU' 8
	has "  NCCL's file named" "$tmp/out" "NCCL_TOPO_FILE=$ncclxml \(from the environment\)"
fi
run_env "topo without it: two rails of four" 0 -- topo --xml tests/lib/fixtures/topo/ndv5.xml &&
	count "  each NIC shared by four GPUs" "$tmp/out" "shared by 4 GPUs" 8

report_end tests/check/doctor_nccl_conf.sh
