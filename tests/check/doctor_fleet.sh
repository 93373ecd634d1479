#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gdx-doctor fleet on allocations made here: four nodes' check --json and topo
# --json reports (the real output of the healthy fixture, each node given its
# own hostname, with the plugin and NCCL this machine has), then changed one
# field at a time. Identical nodes exit 0; a node that differs is named with
# the attribute, the majority value and its count, exit 9; reports in one
# file per node, one per report, one stream, srun -l output and a JSON list
# agree; a truncated, garbage, missing or empty input exits 3 naming the file;
# hostile inputs (deep nesting, numbers out of range, bytes that are not
# UTF-8, a name twice, ESC/BEL and injected lines in names and values, a
# 50 MB value, many keys) are refused by file, line and column or printed
# escaped, in bounded memory and time; a check run in an environment with a
# name twice is read (each variable once, getenv's); bad usage exits 64. Prints "ok ..." / "not ok ..." lines and
# "# tests/check/doctor_fleet.sh: N passed, N failed".
#
#   tests/check/doctor_fleet.sh            # runs build/gdx-doctor
#   GDX_DOCTOR=path/to/gdx-doctor tests/check/doctor_fleet.sh
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
unset NCCL_GDX_GDR NCCL_NET_GDR_LEVEL

if [ ! -x "$doctor" ]; then
	not_ok "gdx-doctor is built" "$doctor is missing (make first)"
	report_end tests/check/doctor_fleet.sh
	exit 1
fi
if ! command -v python3 >/dev/null; then
	not_ok "python3 is installed" "needed to make the nodes' reports"
fi

# One node's reports, as the doctor writes them: the healthy fixture with a
# job's environment, and the NCCL section of this machine with the built
# plugin (a fixture's check has none: it reads a facts file).
GDX_GDR_FACTS=$fx/healthy/facts NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_GDX_RAILS=auto \
	"$doctor" check --json --sysfs-root "$fx/healthy" --xml "$fx/healthy/topo.xml" \
	>"$tmp/base-check.json" 2>/dev/null
"$doctor" topo --json --xml "$fx/healthy/topo.xml" >"$tmp/base-topo.json" 2>/dev/null
NCCL_NET_PLUGIN=$PWD/build/libnccl-net-gdx.so "$doctor" check --json >"$tmp/live.json" 2>/dev/null

# fleet DIR [NODE:PYTHON...]: writes DIR/nodeN.json for N = 1..4, each its
# check report then its topo report; every NODE:PYTHON runs on node NODE's
# reports first, c (check) and t (topo). The live ports have no MTU to read
# here: every node gets 4096 unless told otherwise.
fleet() {
	local dir=$1
	shift
	mkdir -p "$dir"
	python3 - "$tmp" "$dir" "$@" <<'EOF'
import json, sys
tmp, out, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
base_c = json.load(open(tmp + "/base-check.json"))
base_t = json.load(open(tmp + "/base-topo.json"))
live = json.load(open(tmp + "/live.json"))
base_c["nccl"] = live["nccl"]
# Where this machine has no NCCL, the 2.28.9 that the test VM has.
if not base_c["nccl"]["found"]:
    base_c["nccl"].update(found=True, path="/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                          version_code=22809, net_api=11)
for p in base_c["ports"]:
    p["active_mtu"] = 4096
for k in range(1, 5):
    c, t = json.loads(json.dumps(base_c)), json.loads(json.dumps(base_t))
    c["hostname"] = t["hostname"] = "node%d" % k
    for e in edits:
        node, code = e.split(":", 1)
        if int(node) == k:
            exec(code)
    with open("%s/node%d.json" % (out, k), "w") as f:
        json.dump(c, f, indent=1)
        f.write("\n")
        json.dump(t, f, indent=1)
        f.write("\n")
EOF
}

# Identical nodes: consistent.
fleet "$tmp/same"
if run "fleet of 4 identical nodes exits 0" 0 fleet "$tmp"/same/node*.json; then
	has "fleet of 4 identical nodes: 4 nodes, their reports" "$tmp/out" '^gdx-doctor fleet: 4 node\(s\), 4 check and 4 topo report\(s\), [0-9]+ attributes compared$'
	has "fleet of 4 identical nodes: consistent" "$tmp/out" '^Result: consistent \(exit 0\)$'
fi
if run "fleet --json of 4 identical nodes exits 0" 0 fleet --json "$tmp"/same/node*.json; then
	json "fleet --json of 4 identical nodes: consistent, every node named by its hostname" \
		'd["consistent"] and d["exit"] == 0 and d["differ"] == [] and [n["name"] for n in d["nodes"]] == ["node1", "node2", "node3", "node4"] and d["attributes"] >= 25 and d["nodes"][1]["topo"].endswith("node2.json, report 2")'
fi

# The issue's case: one node's MTU, another's NCCL_IB_HCA.
fleet "$tmp/two" '2:c["ports"][1]["active_mtu"] = 1024' '3:c["environment"]["NCCL_IB_HCA"] = "mlx5_0"'
if run "fleet: an MTU and an NCCL_IB_HCA that differ exit 9" 9 fleet "$tmp"/two/node*.json; then
	has "fleet names node2's MTU, the majority and its count" "$tmp/out" '^  mlx5_1 port 1 MTU: 4096 on 3 of 4 nodes; node2: 1024$'
	has "fleet names node3's NCCL_IB_HCA, the majority and its count" "$tmp/out" '^  NCCL_IB_HCA: mlx5_0,mlx5_1 on 3 of 4 nodes; node3: mlx5_0$'
	prints "fleet names those two attributes and nothing else" 2 grep -c '^  [^ ].*: .* on [0-9]* of 4 nodes' "$tmp/out"
	has "fleet: inconsistent" "$tmp/out" '^Result: inconsistent, 2 attribute\(s\) differ \(exit 9\)$'
fi
if run "fleet --json: an MTU and an NCCL_IB_HCA exit 9" 9 fleet --json "$tmp"/two/node*.json; then
	json "fleet --json names exactly those two nodes and attributes" \
		'not d["consistent"] and d["exit"] == 9 and [(x["attribute"], x["majority"], x["majority_nodes"], x["nodes"], x["odd"]) for x in d["differ"]] == [("mlx5_1 port 1 MTU", "4096", 3, 4, [{"node": "node2", "value": "1024"}]), ("NCCL_IB_HCA", "mlx5_0,mlx5_1", 3, 4, [{"node": "node3", "value": "mlx5_0"}])]'
fi

# The same reports however they are gathered: one file per report, named
# anyhow (the hostname tells the nodes apart); all of them in one stream on
# standard input; a JSON list (jq -s); srun -l's interleaved lines.
mkdir -p "$tmp/split"
python3 - "$tmp/two" "$tmp/split" <<'EOF'
import json, random, sys
src, out = sys.argv[1], sys.argv[2]
dec = json.JSONDecoder()
reports, tasks = [], []
for k in range(1, 5):
    text = open("%s/node%d.json" % (src, k)).read()
    c, end = dec.raw_decode(text)
    t, _ = dec.raw_decode(text[end:].lstrip())
    reports += [c, t]
    json.dump(c, open("%s/%d-a.json" % (out, 9 - k), "w"), indent=1)
    json.dump(t, open("%s/%d-b.json" % (out, k), "w"), indent=1)
    tasks.append(["%d: %s" % (k - 1, line) for line in text.splitlines()])
json.dump(reports, open(out + "/list.json", "w"))
# srun -l: each task's lines in order, the tasks' lines shuffled together.
random.seed(17)
with open(out + "/srun.txt", "w") as f:
    while any(tasks):
        f.write(random.choice([t for t in tasks if t]).pop(0) + "\n")
EOF
want_two=$("$doctor" fleet --json "$tmp"/two/node*.json | python3 -c 'import json, sys; print(json.load(sys.stdin)["differ"])')
for how in "files per report:$tmp/split/[0-9]-[ab].json" "a JSON list:$tmp/split/list.json" "srun -l output:$tmp/split/srun.txt"; do
	# shellcheck disable=SC2086 # the glob is meant
	if run "fleet on ${how%%:*} exits 9" 9 fleet --json ${how#*:}; then
		json "fleet on ${how%%:*} finds the same two" "str(d['differ']) == '''$want_two''' and len(d['nodes']) == 4"
	fi
done
if cat "$tmp"/two/node*.json | "$doctor" fleet --json >"$tmp/out" 2>"$tmp/err"; then
	not_ok "fleet on standard input exits 9" "exit 0"
else
	json "fleet on standard input (no FILE) finds the same two" "str(d['differ']) == '''$want_two''' and d['nodes'][0]['check'].startswith('standard input')"
fi
if "$doctor" fleet --json - <"$tmp/split/srun.txt" >"$tmp/out" 2>"$tmp/err"; [ $? -eq 9 ]; then
	json "fleet - reads srun -l output from standard input" "str(d['differ']) == '''$want_two''' and d['nodes'][0]['check'].startswith('standard input (srun task 0)')"
else
	not_ok "fleet - reads srun -l output from standard input" "$(head -c 300 "$tmp/err")"
fi
sed '5s/^[0-9]*: //' "$tmp/split/srun.txt" >"$tmp/srun-bad.txt"
if run "fleet: srun -l output with a line not labelled exits 3" 3 fleet "$tmp/srun-bad.txt"; then
	has "fleet: the unlabelled line is named" "$tmp/err" 'srun-bad\.txt: line 5 has no srun task label'
fi

# Every field fleet compares, changed on one node: that node and that
# attribute are named with its value, and nothing else.
fields=(
	'rail groups|2|t["groups"][0]["nics"] = ["mlx5_1"]|mlx5_1 <- 0000:1b:00.0 NODE | mlx5_1 <- 0000:43:00.0 PIX'
	'plugin version|4|c["nccl"]["plugin_version"] = "0.1.9"|0.1.9'
	'wire protocol|1|c["nccl"]["plugin_wire"] = 1|1'
	'NCCL version|3|c["nccl"]["version_code"] = 22703|2.27.3'
	'NCCL_NET_PLUGIN|2|c["nccl"]["nccl_net_plugin"] = None|(unset)'
	'mlx5_1 port 1 GID type|2|c["ports"][1]["gid_type"] = "RoCE v1"|RoCE v1'
	'mlx5_0 port 1 MTU|4|c["ports"][0]["active_mtu"] = 2048|2048'
	'mlx5_0 port 1 state|1|c["ports"][0]["state"] = "DOWN"|DOWN'
	'memlock|3|c["host"]["memlock"] = 8388608|8 MiB'
	'peer memory|2|c["host"]["peermem"]["loaded"] = False|not loaded'
	'mlx5_1 DMA-BUF|4|c["nics"][1]["dmabuf_probe"] = False; c["nics"][1]["dmabuf_errno"] = "EOPNOTSUPP"|refused (EOPNOTSUPP)'
	'mlx5_0 GDR|3|c["nics"][0]["verdict"] = "staged"|staged'
	'mlx5_0 GDR|1|c["nics"][0]["degraded"] = ["ACS"]|direct, degraded: ACS'
	'CUDA driver|2|c["host"]["cuda"]["version"] = 12020|12.2'
	'kernel|4|c["host"]["kernel"] = "5.15.0-105-generic"|5.15.0-105-generic'
	'check status|2|c["status"] = "degraded"|degraded'
	'NCCL_GDX_RAILS|3|c["environment"]["NCCL_GDX_RAILS"] = "off"|off'
	'NCCL_IB_HCA|1|del c["environment"]["NCCL_IB_HCA"]|(unset)'
	'NCCL_IB_TC|4|c["environment"]["NCCL_IB_TC"] = "106"|106'
	'QPs per connection|2|c["fabric"]["qps_per_connection"] = 4|4'
	'mlx5_1 port 1 relaxed ordering|3|c["fabric"]["ports"][1]["relaxed_ordering"] = "off (the provider refuses it: Invalid argument)"|off (the provider refuses it: Invalid argument)'
	'mlx5_0 port 1 ECE|1|c["fabric"]["ports"][0]["ece"] = "off (the provider has none: Operation not supported)"|off (the provider has none: Operation not supported)'
	'mlx5_0 port 1 adaptive routing|4|c["fabric"]["ports"][0]["adaptive_routing"] = False|false'
)
for f in "${fields[@]}"; do
	IFS='|' read -r attr node edit value <<<"$f"
	fleet "$tmp/field" "$node:$edit"
	if run "fleet: $attr changed on node$node exits 9" 9 fleet --json "$tmp"/field/node*.json; then
		json "fleet: $attr changed on node$node is named, alone" \
			"len(d['differ']) == 1 and d['differ'][0]['attribute'] == '$attr' and d['differ'][0]['majority_nodes'] == 3 and [o['node'] for o in d['differ'][0]['odd']] == ['node$node'] and (d['differ'][0]['odd'][0]['value'] or '(unset)') == '$value'"
	fi
done
# An attribute only some nodes have at all: shown for what it is.
fleet "$tmp/field" '1:c["environment"]["NCCL_IB_GID_INDEX"] = "3"'
if run "fleet: a variable set on one node only exits 9" 9 fleet "$tmp"/field/node*.json; then
	has "fleet: the variable set on one node only" "$tmp/out" '^  NCCL_IB_GID_INDEX: \(unset\) on 3 of 4 nodes; node1: 3$'
fi
# A node without its topo report: "reports" names it; rail groups are compared
# between the three that have one.
fleet "$tmp/notopo"
python3 -c 'import json, sys; json.dump(json.JSONDecoder().raw_decode(open(sys.argv[1]).read())[0], open(sys.argv[1], "w"))' "$tmp/notopo/node4.json"
if run "fleet: a node without its topo report exits 9" 9 fleet "$tmp"/notopo/node*.json; then
	has "fleet: the node without its topo report" "$tmp/out" '^  reports: check and topo on 3 of 4 nodes; node4: check only$'
	prints "fleet: only that" 1 grep -c ' of [0-9] nodes' "$tmp/out"
fi
# Two nodes, one each way: a tie, said as one.
fleet "$tmp/tie" '1:c["host"]["kernel"] = "6.1.0"'
if run "fleet: two nodes that differ exit 9" 9 fleet "$tmp/tie/node1.json" "$tmp/tie/node2.json"; then
	has "fleet: two nodes that differ are a tie" "$tmp/out" '^  kernel: 6\.1\.0 on 1 of 2 nodes \(a tie: no majority\); node2: 6\.8\.0-45-generic$'
fi
# Reports of a gdx-doctor without "command" and "hostname": told apart by
# their shape, the files standing for the nodes.
mkdir -p "$tmp/old"
for k in 1 2 3; do
	python3 - "$tmp/same/node$k.json" "$tmp/old/n$k.json" <<'EOF'
import json, sys
text, dec = open(sys.argv[1]).read(), json.JSONDecoder()
c, end = dec.raw_decode(text)
t, _ = dec.raw_decode(text[end:].lstrip())
with open(sys.argv[2], "w") as f:
    for r in (c, t):
        del r["command"], r["hostname"]
        f.write(json.dumps(r, indent=1) + "\n")
EOF
done
if run "fleet on reports without hostname exits 0" 0 fleet --json "$tmp"/old/n*.json; then
	json "fleet on reports without hostname: the files stand for the nodes" \
		"[n['name'] for n in d['nodes']] == ['$tmp/old/n1.json', '$tmp/old/n2.json', '$tmp/old/n3.json'] and d['nodes'][0]['topo'] is not None"
fi

# Every fixture's real check --json and the topology fixtures' topo --json
# read back, alone: one node, consistent.
for dir in "$fx"/*/; do
	c=$(basename "$dir")
	GDX_GDR_FACTS="$fx/$c/facts" "$doctor" check --json --sysfs-root "$fx/$c" \
		--xml "$fx/$c/topo.xml" >"$tmp/one.json" 2>/dev/null
	"$doctor" topo --json --xml "$fx/$c/topo.xml" >>"$tmp/one.json" 2>/dev/null
	run "fleet reads check and topo of $c" 0 fleet "$tmp/one.json" && ok "fleet reads check and topo of $c"
done
for xml in tests/lib/fixtures/topo/*.xml; do
	"$doctor" topo --json --xml "$xml" >"$tmp/one.json" 2>/dev/null
	run "fleet reads topo of $(basename "$xml")" 0 fleet "$tmp/one.json" &&
		ok "fleet reads topo of $(basename "$xml")"
done
"$doctor" check --json >"$tmp/one.json" 2>/dev/null
run "fleet reads this machine's check" 0 fleet "$tmp/one.json" && ok "fleet reads this machine's check"

# A job's environment as a launcher may build it (execve takes any list): a
# name twice, names with bytes that are not UTF-8 (alike once escaped), a
# name that is not one. check --json names each variable once, with the
# value getenv returns (the first), so fleet reads the report.
python3 - "$doctor" >"$tmp/env.json" 2>"$tmp/err" <<'EOF'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
argv = [sys.argv[1].encode(), b"check", b"--json"]
envp = [b"NCCL_IB_HCA=first", b"NCCL_IB_HCA=second", b"NCCL_IB_X\xff=1",
        b"NCCL_IB_X\xfe=2", b"NCCL_GDX_A-B=3", b"NCCL_GDX_RAILS=auto", b"PATH=/usr/bin:/bin"]
a = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
e = (ctypes.c_char_p * (len(envp) + 1))(*envp, None)
libc.execve(argv[0], a, e)
sys.exit("execve: %d" % ctypes.get_errno())
EOF
if run "fleet reads a check run with a name twice in its environment" 0 fleet "$tmp/env.json"; then
	ok "fleet reads a check run with a name twice in its environment"
	cp "$tmp/env.json" "$tmp/out"
	json "check --json: each variable once, the first of a name, names only" \
		'd["environment"] == {"NCCL_GDX_RAILS": "auto", "NCCL_IB_HCA": "first"}'
fi

# Inputs that are not reports: exit 3, naming the file and what is wrong.
head -c 900 "$tmp/same/node1.json" >"$tmp/truncated.json"
if run "fleet: a truncated report exits 3" 3 fleet "$tmp/same/node1.json" "$tmp/truncated.json"; then
	has "fleet: the truncated report is named, and where" "$tmp/err" "^gdx-doctor fleet: $tmp/truncated\\.json: not a gdx-doctor report: line [0-9]+, column [0-9]+: .*truncated\\?\\)$"
fi
printf '{"command": "check", "hostname": "n1", "ports": [' >"$tmp/cut.json"
if run "fleet: a report cut after a bracket exits 3" 3 fleet "$tmp/cut.json"; then
	has "fleet: the cut report says truncated" "$tmp/err" 'cut\.json: not a gdx-doctor report: line 1, column [0-9]+: expected a value, found the end of the input \(truncated\?\)$'
fi
printf 'Segmentation fault (core dumped)\n' >"$tmp/garbage.json"
if run "fleet: garbage exits 3" 3 fleet "$tmp/same/node1.json" "$tmp/garbage.json"; then
	has "fleet: the garbage file is named" "$tmp/err" "garbage\\.json: not a gdx-doctor report: line 1, column 1: expected a value, found 'S'$"
fi
printf '{"command": "check", "hostname": "n1"}\n{"command": "check", "hostname": "n1",, }\n' >"$tmp/second.json"
if run "fleet: a bad second report exits 3" 3 fleet "$tmp/second.json"; then
	has "fleet: its line is the file's" "$tmp/err" "second\\.json: not a gdx-doctor report: line 2, column 39: expected a member name in quotes in an object, found ','$"
fi
if run "fleet: a missing file exits 3" 3 fleet "$tmp/same/node1.json" "$tmp/no-such-node.json"; then
	has "fleet: the missing file is named" "$tmp/err" 'no-such-node\.json: No such file or directory$'
fi
if run "fleet: a directory exits 3" 3 fleet "$tmp/same"; then
	has "fleet: the directory is named" "$tmp/err" "$tmp/same is a directory, not a file$"
fi
: >"$tmp/empty.json"
if run "fleet: an empty file exits 3" 3 fleet "$tmp/empty.json"; then
	has "fleet: the empty file is named" "$tmp/err" 'empty\.json: no report in it \(empty\)$'
fi
if run "fleet: no file and nothing on standard input exits 3" 3 fleet; then
	has "fleet: nothing on standard input" "$tmp/err" 'standard input: no report in it \(empty\)$'
fi
echo '[]' >"$tmp/list.json"
if run "fleet: an empty list exits 3" 3 fleet "$tmp/list.json"; then
	has "fleet: the empty list is named" "$tmp/err" 'list\.json: an empty list: no report in it$'
fi
if run "fleet: the same node twice exits 3" 3 fleet "$tmp/same/node1.json" "$tmp/split/8-a.json" "$tmp/same/node2.json"; then
	has "fleet: the second report and the first are named" "$tmp/err" "8-a\\.json, report 1: a second check report for node node1 \\(the first: $tmp/same/node1\\.json, report 1\\)$"
fi
"$doctor" env --json >"$tmp/env.json" 2>/dev/null
if run "fleet: env --json output exits 3" 3 fleet "$tmp/env.json"; then
	has "fleet: not a check or topo report" "$tmp/err" 'env\.json, report 1: neither gdx-doctor check --json nor topo --json output'
fi
echo '{"command": "log", "hostname": "n1"}' >"$tmp/log.json"
if run "fleet: another command's report exits 3" 3 fleet "$tmp/log.json"; then
	has "fleet: which command it is" "$tmp/err" 'log\.json, report 1: gdx-doctor log output; fleet reads check --json and topo --json$'
fi
echo '"node1"' >"$tmp/string.json"
if run "fleet: a JSON string exits 3" 3 fleet "$tmp/string.json"; then
	has "fleet: a string is not a report" "$tmp/err" 'string\.json, report 1: a string, not a report'
fi

# Hostile inputs: reports another user or another node wrote to do harm.
# Each refusal exits 3 naming the file, the line and the column; memory
# stays within 8 times the input and 8 MiB (fleet's budget is 6 bytes per
# byte read and 1 MiB, besides the input itself); nothing printed holds a
# raw control byte.

# within NAME WANT_STATUS INPUT ARGS...: the doctor run with ARGS exits
# WANT_STATUS within 8 x INPUT's size + 8 MiB of resident memory.
within() {
	local name=$1 want=$2 input=$3 rc rss limit
	shift 3
	read -r rc rss < <(measured "$tmp/out" "$tmp/err" "$doctor" "$@")
	limit=$(($(stat -c %s "$input") * 8 / 1024 + 8192))
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
		return 1
	elif [ "$rss" -gt "$limit" ]; then
		not_ok "$name" "$rss KiB resident, more than 8 x the input + 8 MiB ($limit KiB)"
		return 1
	fi
	ok "$name ($rss KiB resident, at most $limit)"
}

head -c 100000 /dev/zero | tr '\0' '[' >"$tmp/deep.json"
if within "fleet: 100,000 brackets exit 3" 3 "$tmp/deep.json" fleet "$tmp/deep.json"; then
	has "fleet: nesting refused where it passes 64 levels" "$tmp/err" 'deep\.json: not a gdx-doctor report: line 1, column 65: nested deeper than 64 levels$'
fi
{
	printf '{\n "command": "check",\n "host": '
	head -c 70 /dev/zero | tr '\0' '['
	head -c 70 /dev/zero | tr '\0' ']'
	printf '}\n'
} >"$tmp/deep2.json"
if run "fleet: a report nested 71 deep (the object, then 70 lists) exits 3" 3 fleet "$tmp/deep2.json"; then
	has "fleet: its line and column" "$tmp/err" 'deep2\.json: not a gdx-doctor report: line 3, column 73: nested deeper than 64 levels$'
fi

# Numbers: an integer from -2^63 to 2^64-1, a double's range, 64 characters.
for n in '1e999|the number 1e999 is out of range \(beyond the range of a double\)' \
	'-1e-400|the number -1e-400 is out of range \(beyond the range of a double\)' \
	'18446744073709551616|the number 18446744073709551616 is out of range \(an integer from -2\^63 to 2\^64-1\)' \
	'-9223372036854775809|the number -9223372036854775809 is out of range \(an integer from -2\^63 to 2\^64-1\)' \
	"1$(printf '%080d' 0)|a number longer than 64 characters"; do
	printf '{"command": "check", "hostname": "n1",\n "host": {"memlock": %s}}\n' "${n%%|*}" >"$tmp/number.json"
	if run "fleet: the number ${n%%|*} exits 3" 3 fleet "$tmp/number.json"; then
		has "fleet: the number ${n%%|*} refused by line and column" "$tmp/err" "number\\.json: not a gdx-doctor report: line 2, column 22: ${n#*|}\$"
	fi
done
printf '{"command": "check", "hostname": "n1", "ports": [], "host": {"memlock": 18446744073709551615}}\n' >"$tmp/number.json"
run "fleet: 2^64-1, the largest count, is read" 0 fleet "$tmp/number.json" && ok "fleet: 2^64-1, the largest count, is read"

# Bytes that are not UTF-8 in a string, each kind (a lone byte past 0x7f, an
# overlong form, a surrogate, past U+10FFFF, a sequence cut short, a stray
# continuation byte); the column counts characters (the é before is one).
for u in '\xff|byte 0xff' '\xc0\xaf|byte 0xc0' '\xed\xa0\x80|byte 0xed' '\xf4\x90\x80\x80|byte 0xf4' \
	'\xe2\x82|byte 0xe2' '\x80|byte 0x80'; do
	printf '{"command": "check",\n "hostname": "n\xc3\xa9%b"}\n' "${u%%|*}" >"$tmp/utf8.json"
	if run "fleet: a string with ${u%%|*} exits 3" 3 fleet "$tmp/utf8.json"; then
		has "fleet: ${u%%|*} refused by line and column" "$tmp/err" "utf8\\.json: not a gdx-doctor report: line 2, column 17: invalid UTF-8 in a string: ${u#*|}\$"
	fi
done

# One name twice in an object: which would a reader take?
printf '{"command": "check", "hostname": "n1", "hostname": "n2"}\n' >"$tmp/twice.json"
if run "fleet: a member name twice exits 3" 3 fleet "$tmp/twice.json"; then
	has "fleet: the object and the members named" "$tmp/err" 'twice\.json: not a gdx-doctor report: line 1, column 1: in the object that starts here, member 3 has the name of member 2$'
fi

# ESC, BEL, a C1 CSI, a right-to-left override and a Prometheus-like
# injection (a newline, then lines a scraper would take for metrics) in a
# node's name and in values, written as JSON escapes: fleet reads them, and
# prints them escaped.
fleet "$tmp/evil" '2:c["hostname"] = t["hostname"] = "node2\x1b[31m\x07"' \
	'2:c["environment"]["NCCL_IB_HCA"] = "mlx5_0\n# TYPE gdx_fleet_up gauge\ngdx_fleet_up{node=\"evil\"} 1"' \
	'2:c["host"]["kernel"] = "6.8\u009b2J\u202egnp."'
if run "fleet: hostile names and values exit 9" 9 fleet "$tmp"/evil/node*.json; then
	printable "fleet: no raw control byte in the lines" "$tmp/out"
	has "fleet: ESC and BEL in the node's name, newlines in a value, as \\xNN" "$tmp/out" '; node2\\x1b\[31m\\x07: mlx5_0\\x0a# TYPE gdx_fleet_up gauge\\x0agdx_fleet_up\{node="evil"\} 1$'
	has "fleet: C1 and the override in a value as \\xNN" "$tmp/out" '; node2\\x1b\[31m\\x07: 6\.8\\xc2\\x9b2J\\xe2\\x80\\xaegnp\.$'
	prints "fleet: the injection starts no line" 0 grep -cE '^(# TYPE|gdx_fleet_up)' "$tmp/out"
fi
if run "fleet --json: hostile names and values exit 9" 9 fleet --json "$tmp"/evil/node*.json; then
	printable "fleet --json: no raw control byte" "$tmp/out"
	json "fleet --json: the names and values read back as they were" \
		'[n["name"] for n in d["nodes"]][1] == "node2\x1b[31m\x07" and sorted(o["value"] for x in d["differ"] for o in x["odd"]) == ["6.8\u009b2J\u202egnp.", "mlx5_0\n# TYPE gdx_fleet_up gauge\ngdx_fleet_up{node=\"evil\"} 1"]'
fi
# A file whose name holds an ESC: said escaped.
cp "$tmp/garbage.json" "$tmp/evil"$'\e[2J'".json"
if run "fleet: a hostile file name exits 3" 3 fleet "$tmp/evil"$'\e[2J'".json"; then
	printable "fleet: the file's name said without its ESC" "$tmp/err"
	has "fleet: the file's name said escaped" "$tmp/err" 'evil\\x1b\[2J\.json: not a gdx-doctor report'
fi

# A 50 MB value: refused at its string, in memory bounded by the input.
{
	printf '{"command": "check", "hostname": "n1",\n "host": {"kernel": "'
	head -c $((50 << 20)) /dev/zero | tr '\0' 'A'
	printf '"}}\n'
} >"$tmp/big.json"
if within "fleet: a 50 MB value exits 3" 3 "$tmp/big.json" fleet "$tmp/big.json"; then
	has "fleet: the 50 MB string refused by line and column" "$tmp/err" 'big\.json: not a gdx-doctor report: line 2, column 21: a string longer than 65536 bytes$'
fi
rm -f "$tmp/big.json"

# Many keys: more members than an object may have; then 100,000 variables
# on each of two nodes, half of them different, read and compared in
# seconds (by hash and by sorting) within the memory bound; then values too
# many for the memory an input of that size may take.
python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
with open(tmp + "/keys.json", "w") as f:
    f.write('{"command": "check", "hostname": "n1", "environment": {')
    f.write(",".join('"K%d": 1' % i for i in range(1100000)))
    f.write("}}\n")
with open(tmp + "/vars.json", "w") as f:
    for n in (1, 2):
        env = {"NCCL_GDX_VAR_%06d" % i: "value-%06d-%d" % (i, n if i % 2 else 0) for i in range(100000)}
        f.write(json.dumps({"command": "check", "hostname": "node%d" % n, "ports": [], "host": {}, "environment": env}) + "\n")
with open(tmp + "/dense.json", "w") as f:
    f.write("[" + ",".join(["[" + ",".join(["0"] * 1000000) + "]"] * 8) + "]\n")
EOF
if within "fleet: an object of 1,100,000 members exits 3" 3 "$tmp/keys.json" fleet "$tmp/keys.json"; then
	has "fleet: the members refused where they pass 2^20" "$tmp/err" 'keys\.json: not a gdx-doctor report: line 1, column [0-9]+: more than 1048576 members in an object$'
fi
start=$(date +%s)
if within "fleet: 100,000 variables on two nodes exit 9" 9 "$tmp/vars.json" fleet "$tmp/vars.json"; then
	has "fleet: the 50,000 that differ" "$tmp/out" '^Result: inconsistent, 50000 attribute\(s\) differ \(exit 9\)$'
	has "fleet: each named with its node" "$tmp/out" '^  NCCL_GDX_VAR_099999: value-099999-1 on 1 of 2 nodes \(a tie: no majority\); node2: value-099999-2$'
	if [ $(($(date +%s) - start)) -le 20 ]; then
		ok "fleet: 100,000 variables on two nodes in $(($(date +%s) - start)) s"
	else
		not_ok "fleet: 100,000 variables on two nodes in 20 s" "$(($(date +%s) - start)) s"
	fi
fi
if within "fleet: 8 million numbers exit 3" 3 "$tmp/dense.json" fleet "$tmp/dense.json"; then
	has "fleet: refused where they pass the memory allowed" "$tmp/err" 'dense\.json: not a gdx-doctor report: line 1, column [0-9]+: the values up to here would take more than the [0-9]+ KiB of memory allowed for this input$'
fi
# srun -l output of a million tasks: bounded too.
seq 0 999999 | sed 's/$/: {}/' >"$tmp/tasks.txt"
within "fleet: srun -l output of a million tasks exits 3" 3 "$tmp/tasks.txt" fleet "$tmp/tasks.txt"
rm -f "$tmp/keys.json" "$tmp/vars.json" "$tmp/dense.json" "$tmp/tasks.txt"

# Usage.
run "fleet: an unknown option exits 64 (usage)" 64 fleet --no-such-option "$tmp/same/node1.json" &&
	ok "fleet: an unknown option exits 64 (usage)"
if run "fleet --help exits 0" 0 fleet --help; then
	has "fleet --help: its operands" "$tmp/out" '^usage: gdx-doctor fleet \[options\] \[FILE\.\.\.\]$'
	has "fleet --help: where the one table is" "$tmp/out" '^exit status: one table for every command, in gdx-doctor --help$'
fi
if run "--help lists fleet" 0 --help; then
	has "--help lists fleet" "$tmp/out" '^  fleet +the nodes that differ'
	has "--help: 9 in the one table" "$tmp/out" '^  9   fleet: the nodes differ'
fi

report_end tests/check/doctor_fleet.sh
