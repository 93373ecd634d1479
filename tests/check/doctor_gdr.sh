#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor check on the GPUDirect RDMA fixtures (tests/lib/fixtures/sysfs-gdr,
# each a sysfs root with topo.xml and a facts file): the exit status (0
# healthy, 1 degraded, 2 broken), the reason and fix text, and the JSON
# (python3's json module) of every case; then the policies, usage errors, and
# one run on this machine that must not crash without RDMA or CUDA.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_gdr.sh: N passed, N failed".
#
#   tests/check/doctor_gdr.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_gdr.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
# The policy and GDR level come from the environment; the fixtures assume defaults.
unset NCCL_GDX_GDR NCCL_NET_GDR_LEVEL

# fixture CASE WANT_STATUS [ENV=VALUE...]: gdx-doctor check on a fixture.
fixture() {
	local c=$1 want=$2
	shift 2
	env GDX_GDR_FACTS="$fx/$c/facts" "$@" "$doctor" check --sysfs-root "$fx/$c" \
		--xml "$fx/$c/topo.xml" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "check $c exits $want" "exit status $rc; stderr: $(head -c 300 "$tmp/err"); problems: $(sed -n '/^Problems/,$p' "$tmp/out" | head -c 600)"
		return 1
	fi
	ok "check $c exits $want"
}

# fixture_json CASE: the same run with --json, into $tmp/out.
fixture_json() {
	env GDX_GDR_FACTS="$fx/$1/facts" "$doctor" check --json --sysfs-root "$fx/$1" \
		--xml "$fx/$1/topo.xml" >"$tmp/out" 2>"$tmp/err"
}

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	echo "# tests/check/doctor_gdr.sh: $passed passed, $failed failed"
	exit 1
fi
if ! command -v python3 >/dev/null; then
	not_ok "python3 is installed" "needed to check the JSON"
fi

# Healthy: every GPU direct to its own NIC; the cross pairs are NODE, which
# NCCL stages by its default level without that being a problem.
if fixture healthy 0; then
	has "check healthy: mlx5_0 direct" "$tmp/out" '^  mlx5_0 +0000:18:00\.0 +direct +HOST,CUDA,DMABUF +ok \(EBADF\) +GPUDirect RDMA via dma-buf and nvidia_peermem \(GPU 0000:1b:00\.0, PIX\)$'
	has "check healthy: RoCE v2 GIDs" "$tmp/out" '^  mlx5_1 +1 +ACTIVE +Ethernet +100 Gb/sec \(4X EDR\) +4 +2 +::ffff:10\.0\.0\.5$'
	has "check healthy: PIX pair direct, ACS off" "$tmp/out" '^  0000:1b:00\.0 +mlx5_0 +PIX +PIX +off +identity +direct$'
	has "check healthy: NODE pair staged by NCCL's level" "$tmp/out" '^  0000:1b:00\.0 +mlx5_1 +NODE +PHB +off +identity +staged \(beyond NCCL_NET_GDR_LEVEL\)$'
	has "check healthy: no problems" "$tmp/out" '^Result: healthy \(exit 0\)$'
fi
if fixture_json healthy; then
	json "check healthy --json" 'd["status"] == "healthy" and d["exit"] == 0 and [n["verdict"] for n in d["nics"]] == ["direct", "direct"] and d["nics"][0]["ptr_support"] == ["HOST", "CUDA", "DMABUF"] and len(d["pairs"]) == 4 and d["pairs"][0]["bridges"] == 3 and d["host"]["peermem"]["module"] == "nvidia_peermem" and d["nccl"] is None and d["problems"] == []'
fi

# What fleet compares: the node's name, each port's GID type and MTU (only a
# live device has one), and the NCCL_GDX_* and NCCL_IB_* values set.
GDX_GDR_FACTS="$fx/healthy/facts" NCCL_IB_HCA=mlx5_0 NCCL_GDX_RAILS=off NCCL_IB_TIMEOUT=22 \
	NCCL_SOCKET_IFNAME=eth0 "$doctor" check --json --sysfs-root "$fx/healthy" \
	--xml "$fx/healthy/topo.xml" >"$tmp/out" 2>"$tmp/err"
json "check --json of a saved tree names the command and the tree's node (its topo.xml's HostName)" \
	"d['command'] == 'check' and d['hostname'] == 'gdr-two' and list(d)[:2] == ['command', 'hostname']"
json "check --json: GID type and MTU of each port" \
	'[(p["device"], p["gid_type"], p["active_mtu"]) for p in d["ports"]] == [("mlx5_0", "IB", None), ("mlx5_1", "RoCE v2", None)]'
json "check --json: the NCCL_GDX_* and NCCL_IB_* values, by name, and no others" \
	'd["environment"] == {"NCCL_GDX_RAILS": "off", "NCCL_IB_HCA": "mlx5_0", "NCCL_IB_TIMEOUT": "22"} and list(d["environment"]) == sorted(d["environment"])'
if fixture_json roce-no-v2; then :; fi
json "check roce-no-v2 --json: the GID it would take is RoCE v1" \
	'd["ports"][0]["gid_type"] == "RoCE v1"'

# Each failure mode: exit status, then the sentence that explains it.
if fixture no-peermem 1; then
	has "check no-peermem: staged with the reason" "$tmp/out" 'mlx5_0 .* staged +HOST +refused \(EOPNOTSUPP\) +staged through host memory: nvidia_peermem not loaded and dma-buf unsupported \(kernel 5\.4\); fix: modprobe nvidia_peermem$'
	has "check no-peermem: the GPU is staged" "$tmp/out" '^  \[degraded\] GPU 0000:1b:00\.0 is staged through host memory on its nearest NIC mlx5_0 \(PIX\)'
fi
if fixture dmabuf-unsupported 0; then
	has "check dmabuf-unsupported: peer memory only" "$tmp/out" 'direct +HOST,CUDA +refused \(EOPNOTSUPP\) +GPUDirect RDMA via nvidia_peermem '
fi
if fixture dmabuf-only 0; then
	has "check dmabuf-only: dma-buf only" "$tmp/out" 'direct +HOST,DMABUF +ok \(EBADF\) +GPUDirect RDMA via dma-buf '
fi
if fixture legacy-peermem 0; then
	has "check legacy-peermem: nv_peer_mem" "$tmp/out" 'peer memory +nv_peer_mem loaded \(kernel/mm/memory_peers/nv_mem/version\)'
fi
if fixture acs 1; then
	has "check acs: the bridge and its bits" "$tmp/out" '^  \[degraded\] GPU 0000:1b:00\.0 and mlx5_0 \(PIX\): degraded: ACS on bridge 0000:17:01\.0 \(ReqRedir CmpltRedir\) sends peer-to-peer traffic up to the root complex; fix: disable it \(setpci -s 0000:17:01\.0 ECAP_ACS\+6\.w=0'
	has "check acs: the pair" "$tmp/out" '^  0000:1b:00\.0 +mlx5_0 +PIX +PIX +on +identity +direct, degraded: ACS$'
fi
if fixture acs-unreadable 0; then
	has "check acs-unreadable: unknown, as a note" "$tmp/out" '^  \[note\] ACS between GPU 0000:1b:00\.0 and mlx5_0 unknown: .*run as root$'
fi
if fixture iommu-translating 1; then
	has "check iommu-translating: why and fix" "$tmp/out" 'degraded: the IOMMU translates DMA addresses of 0000:1b:00\.0 and 0000:18:00\.0 \(DMA-FQ\); fix: boot with iommu=pt'
	has "check iommu-translating: the pair" "$tmp/out" '^  0000:1b:00\.0 +mlx5_0 +PIX +PIX +off +DMA-FQ +direct, degraded: IOMMU$'
fi
if fixture remote-nic 1; then
	has "check remote-nic: SYS staged" "$tmp/out" '^  0000:17:00\.0 +mlx5_0 +SYS +SYS +off +identity +staged \(beyond NCCL_NET_GDR_LEVEL\), degraded: SYS$'
	has "check remote-nic: across sockets" "$tmp/out" 'GPU and NIC are on different sockets \(SYS\): traffic crosses the CPU interconnect; fix: use a NIC on the GPU.s socket$'
fi
if fixture bar1-tiny 1; then
	has "check bar1-tiny: the BAR1" "$tmp/out" '^  \[degraded\] GPU 0000:1b:00\.0 has a tiny BAR1 \(128 MiB, under 256 MiB\)'
	has "check bar1-tiny: in the GPU table" "$tmp/out" '^  0000:1b:00\.0 +0 +yes +yes +128 MiB +identity$'
fi
# exit_is NAME WANT RC
exit_is() {
	if [ "$3" -eq "$2" ]; then ok "$1"; else not_ok "$1" "exit $3, want $2: $(head -c 600 "$tmp/out")"; fi
}
# memlock against what registering pins (ib_umem_get counts each
# registration's pages against RLIMIT_MEMLOCK): on a GPUDirect node 8 MiB
# holds the plugin's control regions for a first connection, and NCCL's
# buffers are mostly GPU memory: it bounds the connections (degraded), it
# does not make registering fail.
if fixture memlock-low 1; then
	has "check memlock-low: it bounds the connections, degraded" "$tmp/out" '^  \[degraded\] memlock limit 8 MiB bounds the memory registered at once: a send and a receive comm pin [0-9]+ KiB on each rail .*; at most [0-9]+ such pairs fit.*; fix: ulimit -l unlimited'
	has "check memlock-low: the host line says so" "$tmp/out" '^  memlock +8 MiB: bounds the connections'
	if grep -q 'will fail' "$tmp/out"; then not_ok "check memlock-low: no 'will fail'" "$(grep 'will fail' "$tmp/out")"; else ok "check memlock-low: no 'will fail'"; fi
fi
# Below one send comm's control region and staging: registering fails.
sed 's/^memlock .*/memlock 16K/' "$fx/memlock-low/facts" >"$tmp/memlock-16k"
env GDX_GDR_FACTS="$tmp/memlock-16k" "$doctor" check --sysfs-root "$fx/memlock-low" --xml "$fx/memlock-low/topo.xml" >"$tmp/out" 2>&1
exit_is "check memlock 16 KiB: broken (exit 2)" 2 $?
has "check memlock 16 KiB: the control regions will not register" "$tmp/out" '^  \[broken\] memlock limit 16 KiB is below the [0-9]+ KiB one send comm.s control region and staging pin on each rail: registering them will fail'
has "check memlock 16 KiB: the host line in KiB" "$tmp/out" '^  memlock +16 KiB: too low to register$'
# A staged NIC: NCCL registers a host buffer of NCCL_BUFFSIZE per
# connection; a limit below it fails, above it bounds.
sed 's/^memlock .*/memlock 1M/' "$fx/no-peermem/facts" >"$tmp/memlock-staged"
env GDX_GDR_FACTS="$tmp/memlock-staged" "$doctor" check --sysfs-root "$fx/no-peermem" --xml "$fx/no-peermem/topo.xml" >"$tmp/out" 2>&1
exit_is "check memlock 1 MiB on a staged node: broken (exit 2)" 2 $?
has "check memlock 1 MiB on a staged node: NCCL's host buffer will not register" "$tmp/out" '^  \[broken\] memlock limit 1 MiB is below NCCL_BUFFSIZE \(4 MiB\), the host buffer NCCL registers for each connection staged through host memory \(mlx5_0 is staged\): registering it will fail'
env GDX_GDR_FACTS="$tmp/memlock-staged" NCCL_BUFFSIZE=262144 "$doctor" check --sysfs-root "$fx/no-peermem" --xml "$fx/no-peermem/topo.xml" >"$tmp/out" 2>&1
has "check memlock 1 MiB, NCCL_BUFFSIZE 256 KiB: it bounds, with NCCL's host buffers" "$tmp/out" '^  \[degraded\] memlock limit 1 MiB bounds the memory registered at once: .*NCCL.s host buffers, NCCL_BUFFSIZE each, where a NIC is staged \(mlx5_0\)'
if grep -q '^  \[broken\] memlock' "$tmp/out"; then not_ok "check memlock 1 MiB, NCCL_BUFFSIZE 256 KiB: not broken" "$(grep memlock "$tmp/out")"; else ok "check memlock 1 MiB, NCCL_BUFFSIZE 256 KiB: not broken"; fi
if fixture roce-no-v2 2; then
	has "check roce-no-v2: broken" "$tmp/out" '^  \[broken\] mlx5_0 port 1: RoCE port without a RoCE v2 GID; fix: '
	has "check roce-no-v2: the port" "$tmp/out" '^  mlx5_0 +1 +ACTIVE +Ethernet +.* 2 +0 +'
fi
if fixture port-down 2; then
	has "check port-down: broken" "$tmp/out" '^  \[broken\] no active RDMA port; fix: '
	has "check port-down: the state" "$tmp/out" '^  mlx5_0 +1 +DOWN +InfiniBand '
fi
if fixture no-cuda 1; then
	has "check no-cuda: the reason" "$tmp/out" 'staged through host memory: the NVIDIA GPUs have no CUDA driver \(libcuda\.so\.1 cannot be loaded\); fix: install the NVIDIA driver'
fi
if fixture rxe-vm 0; then
	has "check rxe-vm: rxe0 staged" "$tmp/out" '^  rxe0 +\(none\) +staged +HOST +refused \(EOPNOTSUPP\) +staged through host memory: no NVIDIA GPU \(no CUDA driver\)$'
fi

# A saved tree is self-contained: every fact from the tree (its facts file
# when it has one), unknown otherwise, never this machine's; unknown is not
# broken. Here a copy of the healthy node without its facts file.
cp -r "$fx/healthy" "$tmp/tree"
rm "$tmp/tree/facts"
if run "check a saved tree without facts: healthy (exit 0), nothing of this machine" 0 \
	check --sysfs-root "$tmp/tree" --xml "$tmp/tree/topo.xml"; then
	has "check a saved tree without facts: memlock unknown" "$tmp/out" '^  memlock +unknown$'
	has "check a saved tree without facts: CUDA unknown, not \"no CUDA driver\"" "$tmp/out" '^  CUDA driver +unknown \(a saved tree without facts\)$'
	has "check a saved tree without facts: the kernel unknown" "$tmp/out" '^  dma-buf +kernel version unknown '
	has "check a saved tree without facts: NCCL not judged" "$tmp/out" '^  NCCL +not checked: a saved tree holds no NCCL or plugin files$'
	has "check a saved tree without facts: its GPUs reach their NICs by its peer memory" "$tmp/out" '^  0000:1b:00\.0 +mlx5_0 +PIX +PIX +off +identity +direct$'
	if grep -Eq 'no CUDA driver|memlock limit [0-9]' "$tmp/out"; then
		not_ok "check a saved tree without facts: no fact of this machine" "$(grep -E 'no CUDA driver|memlock limit' "$tmp/out")"
	else
		ok "check a saved tree without facts: no fact of this machine"
	fi
fi
run "check a saved tree without facts --json" 0 check --json --sysfs-root "$tmp/tree" &&
	json "check a saved tree without facts --json: unknowns as null, its topo.xml read, its name" \
		'd["host"]["kernel"] is None and d["host"]["memlock"] is None and d["host"]["cuda"]["state"] == "unknown" and d["nccl"] is None and d["hostname"] == "gdr-two" and len(d["pairs"]) == 4'
run "check a saved tree --hostname" 0 check --json --sysfs-root "$tmp/tree" --hostname node17 &&
	json "check --hostname names the node" 'd["hostname"] == "node17"'
if run "check a saved tree reads its own facts file: memlock-low is degraded" 1 check --sysfs-root "$fx/memlock-low"; then
	has "check a saved tree's facts: its memlock, not this machine's" "$tmp/out" '^  \[degraded\] memlock limit 8 MiB bounds'
fi
rm "$tmp/tree/topo.xml"
if run "check a saved tree without topo.xml: no topology, not this machine's" 0 check --sysfs-root "$tmp/tree"; then
	has "check a saved tree without topo.xml: said so" "$tmp/out" '^  \[note\] no topology \(a saved tree without topo\.xml; give its hwloc XML\): path classes unknown$'
fi

# Every fixture's JSON is valid and agrees with the exit status.
for dir in "$fx"/*/; do
	c=$(basename "$dir")
	fixture_json "$c"
	rc=$?
	json "check $c --json is valid, status $rc" \
		"d[\"exit\"] == $rc and d[\"status\"] == [\"healthy\", \"degraded\", \"broken\"][$rc] and all(n[\"line\"].startswith(n[\"name\"] + \": \") for n in d[\"nics\"])"
done

# Policies, from NCCL_GDX_GDR as the plugin reads it.
if fixture no-peermem 2 NCCL_GDX_GDR=on; then
	has "check NCCL_GDX_GDR=on where it cannot" "$tmp/out" '^  \[broken\] mlx5_0: NCCL_GDX_GDR=on, but GPU memory cannot be registered: nvidia_peermem not loaded'
fi
if fixture healthy 0 NCCL_GDX_GDR=off; then
	has "check NCCL_GDX_GDR=off: host only" "$tmp/out" '^  mlx5_0 .* staged +HOST +ok \(EBADF\) +staged through host memory: NCCL_GDX_GDR=off$'
fi
if fixture healthy 2 NCCL_GDX_GDR=maybe; then
	has "check NCCL_GDX_GDR=maybe refused" "$tmp/out" 'NCCL_GDX_GDR="maybe" must be auto, on or off: the plugin.s init fails'
fi
fixture remote-nic 1 NCCL_NET_GDR_LEVEL=SYS &&
	has "check remote-nic, NCCL_NET_GDR_LEVEL=SYS: direct but degraded" "$tmp/out" '^  0000:17:00\.0 +mlx5_0 +SYS .* direct, degraded: SYS$'

# Usage errors keep their statuses.
if GDX_GDR_FACTS=$fx/healthy/facts run "check missing --xml exits 3" 3 check --xml "$fx/no-such.xml"; then
	has "check missing --xml exits 3" "$tmp/err" 'no-such\.xml: No such file'
fi
printf 'kernel 6.8\nwhatever 1\n' >"$tmp/bad-facts"
if GDX_GDR_FACTS=$tmp/bad-facts run "check bad facts file exits 3 (input)" 3 check --sysfs-root "$fx/healthy"; then
	has "check bad facts file exits 3 (input)" "$tmp/err" 'bad-facts:2: not a fact'
fi
if run "check --sysfs-root that does not exist exits 3" 3 check --sysfs-root "$fx/no-such-tree"; then
	has "check --sysfs-root that does not exist says so" "$tmp/err" 'no-such-tree: No such file or directory'
fi
if run "check --sysfs-root on a file exits 3" 3 check --sysfs-root "$fx/healthy/facts"; then
	has "check --sysfs-root on a file says so" "$tmp/err" 'facts: not a directory'
fi
run "check unknown option exits 64 (usage)" 64 check --no-such-option && ok "check unknown option exits 64 (usage)"
# gdx-doctor [options] is check, as the synopsis has it.
if GDX_GDR_FACTS=$fx/healthy/facts run "gdx-doctor --json (no command) is check --json" 0 \
	--json --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml"; then
	json "gdx-doctor --json (no command) is check --json" 'd["status"] == "healthy" and d["exit"] == 0'
fi

# check and env judge the environment alike: every value env refuses, check
# reports as broken with the same words, and each run reports all of them.
bad=(NCCL_GDX_GDR=maybe NCCL_GDX_RAILS=bogus+ "NCCL_GDX_RAILS=a,,b" NCCL_GDX_TIMEOUT=99
	NCCL_GDX_SL=abc NCCL_GDX_HCA=mlx5_0:x NCCL_GDX_ADDR_RANGE=10.0.0.0/99 NCCL_GDX_ADDR_FAMILY=7)
for a in "${bad[@]}"; do
	env "$a" "$doctor" env --json >"$tmp/out" 2>"$tmp/err"
	rc=$?
	msg=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["refused"][0]["message"] if len(d["refused"]) == 1 else "")' "$tmp/out" 2>/dev/null)
	if [ "$rc" -ne 6 ] || [ -z "$msg" ]; then
		not_ok "env refuses $a (exit 6, one refusal)" "exit $rc: $(head -c 300 "$tmp/out")"
		continue
	fi
	if GDX_GDR_FACTS=$fx/healthy/facts env "$a" "$doctor" check --sysfs-root "$fx/healthy" \
		--xml "$fx/healthy/topo.xml" >"$tmp/out" 2>&1; [ $? -eq 2 ] &&
		grep -qF "[broken] $msg: the plugin's init fails" "$tmp/out"; then
		ok "env and check both refuse $a: $msg"
	else
		not_ok "check refuses $a as env does" "no '[broken] $msg' in: $(grep -A4 '^Problems' "$tmp/out" | head -c 400)"
	fi
done
env "${bad[@]:1}" "$doctor" env --json >"$tmp/out" 2>/dev/null
json "env --json reports every refused value, not only the first" \
	'len(d["refused"]) == 6 and d["exit"] == 6 and {r["variable"] for r in d["refused"]} == {"NCCL_GDX_RAILS", "NCCL_GDX_TIMEOUT", "NCCL_GDX_SL", "NCCL_GDX_HCA", "NCCL_GDX_ADDR_RANGE", "NCCL_GDX_ADDR_FAMILY"}'
GDX_GDR_FACTS=$fx/healthy/facts env "${bad[@]}" "$doctor" check --json --sysfs-root "$fx/healthy" \
	--xml "$fx/healthy/topo.xml" >"$tmp/out" 2>/dev/null
json "check --json reports every refused value too" \
	'd["exit"] == 2 and sum(p["text"].endswith("the plugin\x27s init fails") for p in d["problems"]) == 7'
env NCCL_GDX_RAILS=mlx5_0+mlx5_1,mlx5_2 NCCL_GDX_GDR=off NCCL_IB_SL=99 "$doctor" env >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'note: NCCL_IB_SL=99 is outside' "$tmp/err"; then
	ok "env: good values and a twin NCCL keeps exit 0 (the twin as a note)"
else
	not_ok "env: good values and a twin NCCL keeps exit 0" "exit $rc: $(head -c 300 "$tmp/err")"
fi
# A value is the environment's bytes: env prints it escaped (a newline would
# add a line, ESC act on the terminal), and the plugin's INFO line that env
# shows as a refusal or note likewise.
env "NCCL_GDX_HCA=$(printf 'rxe0\nforged line\033[2J')" "NCCL_IB_TIMEOUT=$(printf '14\r')" \
	"NCCL_GDX_TIMOUT$(printf '\033')=1" "$doctor" env >"$tmp/out" 2>"$tmp/err"
# (a value too long for its line goes on in the next ones, indented 8)
# (grep without -q: one that stops at its match leaves sed a broken pipe,
# which pipefail takes for a failure)
if sed -z 's/\n        //g' "$tmp/out" | grep -F 'set to "rxe0\x0aforged line\x1b[2J"' >/dev/null &&
	grep -qF 'NCCL_IB_TIMEOUT="14\x0d" is taken' "$tmp/out" &&
	grep -qF 'NCCL_GDX_TIMOUT\x1b is set' "$tmp/err" &&
	! grep -q '^forged line' "$tmp/out" && ! grep -q "$(printf '\033')" "$tmp/out" "$tmp/err"; then
	ok "env: values and names from the environment printed escaped"
else
	not_ok "env: values and names from the environment printed escaped" \
		"$(head -c 600 "$tmp/out" | cat -v) / $(head -c 300 "$tmp/err" | cat -v)"
fi
# A misspelt name: env says so (exit 6 for an NCCL_GDX_ name), and check
# too: an NCCL_GDX_ name the plugin does not have is degraded (the setting
# meant is ignored), a near miss of an NCCL_IB_ twin a note (NCCL_IB_ is
# NCCL's, and the name a guess); NCCL's own names and others far from every
# twin are nobody's business here.
if GDX_GDR_FACTS=$fx/healthy/facts NCCL_GDX_TIMOUT=3 run "check NCCL_GDX_TIMOUT=3: degraded (exit 1)" 1 \
	check --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml"; then
	has "check NCCL_GDX_TIMOUT=3: the name, and the one meant" "$tmp/out" \
		'^  \[degraded\] NCCL_GDX_TIMOUT is set, but the plugin has no such variable: the setting is ignored \(misspelt NCCL_GDX_TIMEOUT\?\); fix: correct the name, or unset it$'
fi
GDX_GDR_FACTS=$fx/healthy/facts NCCL_GDX_TIMOUT=3 run "check NCCL_GDX_TIMOUT=3 --allow-degraded: exit 0" 0 \
	check --allow-degraded --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml" &&
	ok "check NCCL_GDX_TIMOUT=3 --allow-degraded: exit 0"
if GDX_GDR_FACTS=$fx/healthy/facts NCCL_IB_TIMOUT=22 NCCL_IB_DISABLE=0 NCCL_IB_MERGE_NICS=0 NCCL_IB_FOO=1 \
	run "check NCCL_IB_TIMOUT=22: a note, healthy" 0 check --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml"; then
	has "check NCCL_IB_TIMOUT=22: the twin meant" "$tmp/out" \
		'^  \[note\] NCCL_IB_TIMOUT is set, but the plugin reads no such variable, .*\(misspelt NCCL_IB_TIMEOUT\?\)'
	prints "check: NCCL's own NCCL_IB_DISABLE, _MERGE_NICS and a name near no twin are not reported" 1 \
		grep -c 'NCCL_IB_.* is set' "$tmp/out"
fi
env NCCL_GDX_TIMOUT=3 NCCL_IB_TIMOUT=22 NCCL_IB_HCAS=mlx5_0 "$doctor" env --json >"$tmp/out" 2>/dev/null
json "env --json: the unknown NCCL_GDX_ name, and what each misspelt name meant" \
	'd["exit"] == 6 and d["unknown"] == ["NCCL_GDX_TIMOUT"] and d["did_you_mean"] == {"NCCL_GDX_TIMOUT": "NCCL_GDX_TIMEOUT", "NCCL_IB_TIMOUT": "NCCL_IB_TIMEOUT", "NCCL_IB_HCAS": "NCCL_IB_HCA"}'
env NCCL_IB_TIMOUT=22 "$doctor" env >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^gdx-doctor env: note: NCCL_IB_TIMOUT is set, .*(misspelt NCCL_IB_TIMEOUT?)$' "$tmp/err"; then
	ok "env: a misspelt NCCL_IB_ twin is a note, exit 0"
else
	not_ok "env: a misspelt NCCL_IB_ twin is a note, exit 0" "exit $rc: $(head -c 300 "$tmp/err")"
fi

if run "check --help exits 0" 0 check --help; then
	has "check --help lists --sysfs-root" "$tmp/out" '--sysfs-root DIR'
	has "check --help says where the one table of statuses is" "$tmp/out" '^exit status: one table for every command, in gdx-doctor --help$'
fi
if run "--help exits 0" 0 --help; then
	has "--help lists the one table of statuses" "$tmp/out" '^  1   degraded \(check, log\): '
	has "--help lists usage as 64" "$tmp/out" '^  64  bad command line$'
fi

# This machine, as it is: no crash, whatever it has (no RDMA or CUDA here).
# hwloc's live discovery leaks inside its plugins (gdx-doctor topo does too):
# in a SANITIZE build, leak reports would turn the exit status into 1.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
"$doctor" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -le 2 ] && grep -qF "gdx-doctor check: $(hostname): this machine" "$tmp/out"; then
	ok "gdx-doctor with no command checks this machine (exit $rc)"
else
	not_ok "gdx-doctor with no command checks this machine" "exit $rc: $(head -c 300 "$tmp/err")"
fi
"$doctor" check --json >"$tmp/out" 2>"$tmp/err"
rc=$?
json "check --json on this machine (exit $rc)" "d[\"exit\"] == $rc and d[\"nccl\"] is not None"
# The version and wire protocol of the plugin NCCL would load, read from its file.
version=$(make --no-print-directory -s version)
wire=$(sed -n 's/^#define GDX_WIRE_VERSION[[:space:]]*\([0-9]*\).*/\1/p' plugin/wire/gdx_wire.h)
NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx.so "$doctor" check --json >"$tmp/out" 2>"$tmp/err"
json "check names the version ($version) and wire protocol ($wire) of the plugin it would load" \
	"d['nccl']['plugin_path'] == '$PWD/build/libnccl-net-gdx.so' and d['nccl']['plugin_version'] == '$version' and d['nccl']['plugin_wire'] == $wire"
NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx.so "$doctor" check >"$tmp/out" 2>"$tmp/err"
has "check's table has the plugin's version" "$tmp/out" "^  plugin version +libnccl-net-gdx $version, wire protocol $wire "
# A plugin of 0.3.2 and earlier: its INIT line began "NET/GDX : " (the built
# one's text rewritten in place, the same length, so the file still loads).
old_line="NET/GDX : libnccl-net-gdx 0.3.9, wire protocol 3,"
perl -0777 -pe 's{NET/GDX plugin: libnccl-net-gdx \Q'"$version"'\E, wire protocol \d+,}{my $o = "'"$old_line"'"; $o . (" " x (length($&) - length($o)))}e' \
	build/libnccl-net-gdx.so >"$tmp/libnccl-net-gdx.so"
NCCL_NET_PLUGIN=$tmp/libnccl-net-gdx.so "$doctor" check --json >"$tmp/out" 2>"$tmp/err"
json "check reads the version of a plugin whose lines began NET/GDX : (0.3.2 and earlier)" \
	"d['nccl']['plugin_version'] == '0.3.9' and d['nccl']['plugin_wire'] == 3"
NCCL_NET_PLUGIN=/nonexistent/libnccl-net-gdx.so "$doctor" check --json >"$tmp/out" 2>"$tmp/err"
# (the problem's words on a node with devices: tests/check/doctor_nccl.sh;
# a machine with neither a GPU nor an RDMA device says only that)
json "check: no plugin there, no version" \
	"d['nccl']['plugin_path'] is None and d['nccl']['plugin_version'] is None and not d['nccl']['loads_plugin'] and d['exit'] == 2"
for lib in /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2; do
	if [ -e "$lib" ]; then
		NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx.so "$doctor" check --json >"$tmp/out" 2>"$tmp/err"
		json "check finds NCCL ($lib), its version and the table it loads" \
			'd["nccl"]["found"] and d["nccl"]["version_code"] > 20000 and d["nccl"]["net_api"] >= 7'
		break
	fi
done

echo "# tests/check/doctor_gdr.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
