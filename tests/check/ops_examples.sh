#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The operator's examples of scripts/ops/, each run as a site runs it: the
# Slurm prolog against a fake scontrol (a broken node drained with its first
# problem as the reason, a healthy or degraded one left alone), the
# Kubernetes probe's exit status for healthy, degraded and broken nodes,
# the DaemonSet naming that probe where the image installs it, and the bash
# completion of gdx-doctor and gdx-bench held to their --help both ways:
# every option listed is completed, and every option completed is taken.
#
#   tests/check/ops_examples.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
bench=${GDX_BENCH:-build/gdx-bench}
fx=tests/lib/fixtures/sysfs-gdr
ops=scripts/ops
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

if [ ! -x "$doctor" ] || [ ! -x "$bench" ]; then
	not_ok "gdx-doctor and gdx-bench are built" "make first"
	report_end tests/check/ops_examples.sh
	exit
fi
doctor=$(realpath "$doctor")
bench=$(realpath "$bench")

# A fake scontrol and logger on PATH: each records its arguments, one call a
# line.
mkdir "$tmp/bin"
for t in scontrol logger; do
	printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s/%s.calls"\n' "$tmp" "$t" >"$tmp/bin/$t"
	chmod +x "$tmp/bin/$t"
done

# prolog CASE [VAR=VALUE...]: the prolog on saved node CASE; its exit status
# in $rc, scontrol's and logger's calls in $tmp/*.calls.
prolog() {
	local case=$1
	shift
	rm -f "$tmp"/*.calls
	env PATH="$tmp/bin:$PATH" GDX_DOCTOR="$doctor" GDX_GDR_FACTS="$fx/$case/facts" \
		GDX_CHECK_ARGS="--sysfs-root $fx/$case" "$@" sh "$ops/gdx-slurm-prolog.sh" \
		>"$tmp/out" 2>&1
	rc=$?
}

node=$(hostname -s)
prolog port-down SLURMD_NODENAME=
if [ "$rc" -eq 1 ] && [ "$(cat "$tmp/scontrol.calls" 2>/dev/null)" = \
	"update nodename=$node state=drain reason=gdx-doctor: [broken] no active RDMA port; fix: check the cable and the subnet manager (InfiniBand) or the netdev's link (RoCE)" ]; then
	ok "prolog, broken node: drained (this host), the first problem the reason, the prolog fails"
else
	not_ok "prolog, broken node: drained (this host), the first problem the reason, the prolog fails" \
		"exit $rc; scontrol: $(cat "$tmp/scontrol.calls" 2>/dev/null); $(head -c 300 "$tmp/out")"
fi
if grep -q "broken, draining" "$tmp/logger.calls" 2>/dev/null; then
	ok "prolog, broken node: said to syslog"
else
	not_ok "prolog, broken node: said to syslog" "$(cat "$tmp/logger.calls" 2>/dev/null)"
fi
prolog port-down SLURMD_NODENAME=node17
if grep -q '^update nodename=node17 state=drain reason=gdx-doctor: ' "$tmp/scontrol.calls" 2>/dev/null; then
	ok "prolog: the node is slurmd's name for it (SLURMD_NODENAME)"
else
	not_ok "prolog: the node is slurmd's name for it (SLURMD_NODENAME)" "$(cat "$tmp/scontrol.calls" 2>/dev/null)"
fi
for c in healthy no-peermem; do
	prolog "$c"
	if [ "$rc" -eq 0 ] && [ ! -e "$tmp/scontrol.calls" ]; then
		ok "prolog, $c node: the job runs, nothing drained"
	else
		not_ok "prolog, $c node: the job runs, nothing drained" "exit $rc; scontrol: $(cat "$tmp/scontrol.calls" 2>/dev/null)"
	fi
done
if grep -qE 'degraded: gdx-doctor check: ([^ :]*: )?\[degraded\]' "$tmp/logger.calls" 2>/dev/null; then
	ok "prolog, degraded node: its problems to syslog"
else
	not_ok "prolog, degraded node: its problems to syslog" "$(cat "$tmp/logger.calls" 2>/dev/null)"
fi
prolog healthy GDX_DOCTOR=/nonexistent/gdx-doctor
if [ "$rc" -eq 0 ] && [ ! -e "$tmp/scontrol.calls" ] && grep -q 'not judged' "$tmp/out"; then
	ok "prolog: a check that cannot run drains nothing, and says so"
else
	not_ok "prolog: a check that cannot run drains nothing, and says so" "exit $rc: $(head -c 300 "$tmp/out")"
fi

# probe WANT NAME CASE [VAR=VALUE...]: the Kubernetes probe's exit status.
probe() {
	local want=$1 name=$2 case=$3 rc
	shift 3
	env GDX_DOCTOR="$doctor" GDX_GDR_FACTS="$fx/$case/facts" GDX_CHECK_ARGS="--sysfs-root $fx/$case" \
		"$@" sh "$ops/gdx-k8s-probe.sh" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "exit $rc, want $want: $(head -c 300 "$tmp/out")"
	fi
}
probe 0 "probe: healthy node, ready (0)" healthy
probe 0 "probe: degraded node, ready (0): it works, slower" no-peermem
probe 1 "probe: degraded node, GDX_PROBE_STRICT=1: not ready (1)" no-peermem GDX_PROBE_STRICT=1
probe 1 "probe: broken node, not ready (1)" port-down
probe 1 "probe: a check that cannot run, not ready (1)" healthy GDX_DOCTOR=/nonexistent/gdx-doctor
mkdir -p "$tmp/tf dir"
probe 1 "probe: GDX_TEXTFILE (a path with a space), broken node" port-down GDX_TEXTFILE="$tmp/tf dir/gdx.prom"
if grep -q '^gdx_check_status 2$' "$tmp/tf dir/gdx.prom" 2>/dev/null; then
	ok "probe: the verdict in GDX_TEXTFILE"
else
	not_ok "probe: the verdict in GDX_TEXTFILE" "$(ls "$tmp/tf dir")"
fi

# The DaemonSet: well-formed, its probes the probe script where make install
# PREFIX=/usr/local (scripts/Dockerfile's) puts it, one image, scripts/
# Dockerfile's tag, the textfile on a host directory.
dest=$(make --no-print-directory -n install PREFIX=/usr/local DESTDIR= 2>/dev/null |
	grep -o "'[^']*/gdx-k8s-probe\.sh'" | tr -d "'")
tag=$(sed -n 's/^#   docker build -f scripts\/Dockerfile -t \([^ ]*\) \.$/\1/p' scripts/Dockerfile)
if [ -z "$dest" ]; then
	not_ok "make install puts the probe script somewhere" "no gdx-k8s-probe.sh in make -n install"
elif python3 -c 'import yaml' 2>/dev/null; then
	if python3 - "$ops/gdx-doctor-daemonset.yaml" "$dest" "$tag" 2>"$tmp/py-err" <<'PY'; then
import os, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
assert len(docs) == 1 and docs[0]["kind"] == "DaemonSet", docs
spec = docs[0]["spec"]["template"]["spec"]
cs = spec.get("initContainers", []) + spec["containers"]
images = {c["image"] for c in cs}
assert len(images) == 1 and images.pop().split(":")[0] == sys.argv[3], (cs, sys.argv[3])
c = spec["containers"][0]
for p in ("startupProbe", "readinessProbe"):
    cmd = c[p]["exec"]["command"]
    assert cmd == [sys.argv[2]], (p, cmd, sys.argv[2])
    assert os.path.exists("scripts/ops/" + os.path.basename(cmd[0])), cmd
env = {e["name"]: e["value"] for e in c["env"]}
assert env["GDX_DOCTOR"] == "/usr/local/bin/gdx-doctor", env
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in spec["volumes"]}
tf = os.path.dirname(env["GDX_TEXTFILE"])
assert tf in mounts and "hostPath" in vols[mounts[tf]], (tf, mounts, vols)
assert docs[0]["spec"]["selector"]["matchLabels"].items() <= docs[0]["spec"]["template"]["metadata"]["labels"].items()
PY
		ok "DaemonSet: parses; probes name the installed probe script; one image, the Dockerfile's; textfile on the host"
	else
		not_ok "DaemonSet: parses; probes name the installed probe script; one image, the Dockerfile's; textfile on the host" "$(tail -2 "$tmp/py-err")"
	fi
else
	# no yaml module: the names at least
	if [ "$(grep -c "command: \[\"$dest\"\]" "$ops/gdx-doctor-daemonset.yaml")" -eq 2 ] &&
		[ "$(grep -o 'image: [^ ]*' "$ops/gdx-doctor-daemonset.yaml" | sort -u | wc -l)" -eq 1 ]; then
		ok "DaemonSet: both probes name the installed probe script; one image (no python3-yaml)"
	else
		not_ok "DaemonSet: both probes name the installed probe script; one image (no python3-yaml)" "$dest"
	fi
fi

# ---- bash completion, held to --help ----

# help_opts: the options a --help on stdin lists, one a line, and "=" after
# one that takes a value.
help_opts() {
	python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r" {2,6}(?:(-[A-Za-z0-9]), )?(--[a-z][-a-z0-9]*)(?: ([A-Z]+(?:\.svg)?)(?:  | *$))?", line)
    if m:
        for o in (m.group(1), m.group(2)):
            if o:
                print(o + ("=" if m.group(3) else ""))'
}

# completes FILE FUNC LINE: what FUNC completes at the end of LINE.
completes() {
	bash -c '
. "$1"
read -ra COMP_WORDS <<<"$3"
[[ $3 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
"$2"
printf "%s\n" "${COMPREPLY[@]}"' _ "$1" "$2" "$3" | sort -u
}

# held NAME COMPLETED LISTED TOOL ARGS...: the completion and --help agree,
# and the tool takes every option completed (with a value where it wants
# one, then --help: a refused value is not a refused option).
held() {
	local name=$1 completed=$2 listed=$3 o bad=
	shift 3
	sed 's/=$//' "$listed" | sort -u >"$tmp/listed"
	if ! diff <(cat "$completed") "$tmp/listed" >"$tmp/diff"; then
		not_ok "$name: completes what --help lists" "$(grep '^[<>]' "$tmp/diff" | tr '\n' ' ')"
	else
		ok "$name: completes what --help lists"
	fi
	while read -r o; do
		local args=("$o")
		grep -qx -- "$o=" "$listed" && args+=(x)
		"$@" "${args[@]}" --help </dev/null >"$tmp/took" 2>&1
		if grep -q 'unknown option\|unrecognized option\|invalid option' "$tmp/took"; then
			bad="$bad $o"
		fi
	done <"$completed"
	if [ -z "$bad" ]; then
		ok "$name: every option completed is taken"
	else
		not_ok "$name: every option completed is taken" "refused:$bad"
	fi
}

comp=$ops/bash-completion
cmds=$("$doctor" --help | sed -n '/^commands:/,/^$/p' | grep -oE '^  [a-z]+' | tr -d ' ' | sort)
if [ "$(completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor ")" = "$cmds" ] && [ -n "$cmds" ]; then
	ok "completion: gdx-doctor's commands, as --help lists them"
else
	not_ok "completion: gdx-doctor's commands, as --help lists them" "$(completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor " | tr '\n' ' ') vs $cmds"
fi
for c in $cmds; do
	[ "$c" = help ] && continue
	"$doctor" "$c" --help | help_opts >"$tmp/listed-$c"
	completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor $c -" >"$tmp/completed-$c"
	held "completion: gdx-doctor $c" "$tmp/completed-$c" "$tmp/listed-$c" "$doctor" "$c"
done
# no command is check: its options, and the program's own
{
	cat "$tmp/listed-check"
	"$doctor" --help | help_opts
} >"$tmp/listed-none"
completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor -" >"$tmp/completed-none"
held "completion: gdx-doctor (check's options, and -V)" "$tmp/completed-none" "$tmp/listed-none" "$doctor"
if [ "$(completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor help t")" = "$(printf 'top\ntopo')" ]; then
	ok "completion: gdx-doctor help COMMAND"
else
	not_ok "completion: gdx-doctor help COMMAND" "$(completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor help t")"
fi
if completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor topo --xml tests/lib/fixtures/topo/dgx-h1" | grep -qx 'tests/lib/fixtures/topo/dgx-h100.xml'; then
	ok "completion: gdx-doctor topo --xml completes a file"
else
	not_ok "completion: gdx-doctor topo --xml completes a file" "$(completes "$comp/gdx-doctor" _gdx_doctor "gdx-doctor topo --xml tests/lib/fixtures/topo/dgx-h1")"
fi
"$bench" --help 2>&1 | help_opts >"$tmp/listed-bench"
completes "$comp/gdx-bench" _gdx_bench "gdx-bench -" >"$tmp/completed-bench"
held "completion: gdx-bench" "$tmp/completed-bench" "$tmp/listed-bench" "$bench"
if [ "$(completes "$comp/gdx-bench" _gdx_bench "gdx-bench --mode ")" = "$(printf 'bw\nconn\nlat\nrate')" ]; then
	ok "completion: gdx-bench --mode's values"
else
	not_ok "completion: gdx-bench --mode's values" "$(completes "$comp/gdx-bench" _gdx_bench "gdx-bench --mode ")"
fi
report_end tests/check/ops_examples.sh
