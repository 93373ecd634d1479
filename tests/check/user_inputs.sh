#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a user names, as an attacker would name it, for every input and
# output of the tools (the plugin's own, NCCL_GDX_TOPO_FILE, in
# tests/unit/topo.c):
#  - a FIFO in place of each input (topo --xml, check --xml, a saved tree's
#    topo.xml, facts and a port's state, the log, fleet's and hang --merge's
#    reports, gdx-bench --plot-from and --plot-ref): refused at once by its
#    type, exit 3, never waited on (each run under a 10 s timeout);
#  - a saved tree (check --sysfs-root) whose links lead out of it, to a file
#    of this machine: an absolute link and one climbing out with "..", as a
#    port's state, link layer and rate, a NIC's device and the tree's
#    topo.xml and facts: nothing of that file is printed;
#  - hwloc XML nested 100,000 deep: refused with the bound before hwloc
#    reads it (it crashed the doctor, a stack overflow), from --xml and from
#    a saved tree;
#  - gdx-bench --plot onto a planted path: a FIFO, a link to a victim's
#    file, a file another name of which the planter keeps: each replaced by
#    a new file, the FIFO never opened, the victim's file and the planted
#    one unchanged.
# The same attacks as two real users are tests/check/shared_node.sh.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/user_inputs.sh: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
doctor=${GDX_DOCTOR:-build/gdx-doctor}
bench=${GDX_BENCH:-build/gdx-bench}
fx=tests/lib/fixtures/sysfs-gdr
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
unset NCCL_GDX_GDR GDX_GDR_FACTS GDX_SYSFS_ROOT

# refused NAME NEEDLE COMMAND...: COMMAND exits 3 within 10 s (a FIFO is
# never waited on) and says NEEDLE (a fixed string) on either stream.
refused() {
	local name=$1 needle=$2 out rc start=$SECONDS
	shift 2
	out=$(timeout 10 "$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "$name" "still waiting after 10 s"
	elif [ "$rc" -eq 3 ] && grep -qF -- "$needle" <<<"$out"; then
		ok "$name ($((SECONDS - start)) s)"
	else
		not_ok "$name" "exit $rc, want 3 and '$needle': $(head -c 400 <<<"$out")"
	fi
}

mkfifo "$tmp/fifo"
refused "topo --xml a FIFO" "$tmp/fifo is a FIFO, not a file" "$doctor" topo --xml "$tmp/fifo"
refused "check --xml a FIFO" "$tmp/fifo is a FIFO, not a file" "$doctor" check --xml "$tmp/fifo"
refused "log a FIFO" "$tmp/fifo is a FIFO, not a file" "$doctor" log "$tmp/fifo"
refused "fleet a FIFO" "$tmp/fifo is a FIFO, not a file" "$doctor" fleet "$tmp/fifo"
refused "hang --merge a FIFO" "$tmp/fifo is a FIFO, not a file" "$doctor" hang --merge "$tmp/fifo"
refused "gdx-bench --plot-from a FIFO" "$tmp/fifo is a FIFO, not a file" \
	"$bench" --plot-from "$tmp/fifo" --plot "$tmp/x.svg"
refused "gdx-bench --plot-ref a FIFO" "$tmp/fifo is a FIFO, not a file" \
	"$bench" --plot-ref "$tmp/fifo" --plot "$tmp/x.svg" --plugin /nonexistent
refused "--sysfs-root a FIFO" "$tmp/fifo: not a directory (a FIFO)" \
	"$doctor" check --sysfs-root "$tmp/fifo"

# A saved tree: the healthy node's, copied with its relative links.
tree() { # NAME: a fresh copy at $tmp/NAME
	rm -rf "${tmp:?}/$1"
	cp -a "$fx/healthy" "$tmp/$1"
}
port=class/infiniband/mlx5_0/ports/1
tree fifo-xml
rm "$tmp/fifo-xml/topo.xml" && mkfifo "$tmp/fifo-xml/topo.xml"
refused "check --sysfs-root, its topo.xml a FIFO" "fifo-xml/topo.xml is a FIFO, not a file" \
	"$doctor" check --sysfs-root "$tmp/fifo-xml"
tree fifo-facts
rm "$tmp/fifo-facts/facts" && mkfifo "$tmp/fifo-facts/facts"
refused "check --sysfs-root, its facts a FIFO" "fifo-facts/facts is a FIFO, not a file" \
	"$doctor" check --sysfs-root "$tmp/fifo-facts"
tree fifo-state
rm "$tmp/fifo-state/$port/state" && mkfifo "$tmp/fifo-state/$port/state"
out=$(timeout 10 "$doctor" check --sysfs-root "$tmp/fifo-state" 2>&1)
rc=$?
if [ "$rc" -ne 124 ] && grep -q '^  mlx5_0 *1 .*?' <<<"$out"; then
	ok "check --sysfs-root, a port's state a FIFO: not waited on, the state unknown (exit $rc)"
else
	not_ok "check --sysfs-root, a port's state a FIFO" "exit $rc: $(head -c 600 <<<"$out")"
fi

# Links out of the tree, to a file of this machine whose first line a
# reader must never see.
secret=$tmp/secret
echo "SECRET-FIRST-LINE-$$" >"$secret"
up=$(printf '../%.0s' $(seq 1 40))${secret#/}
tree escape
for f in state link_layer; do
	rm "$tmp/escape/$port/$f" && ln -s "$secret" "$tmp/escape/$port/$f"
done
rm "$tmp/escape/$port/rate" && ln -s "$up" "$tmp/escape/$port/rate"
for g in 0 1 2 3; do
	[ -e "$tmp/escape/$port/gids/$g" ] && rm "$tmp/escape/$port/gids/$g" &&
		ln -s "$secret" "$tmp/escape/$port/gids/$g"
done
rm "$tmp/escape/class/infiniband/mlx5_1/device" &&
	ln -s "$(dirname "$secret")" "$tmp/escape/class/infiniband/mlx5_1/device"
out=$(timeout 10 "$doctor" check --sysfs-root "$tmp/escape" 2>&1)
rc=$?
if [ "$rc" -ne 124 ] && ! grep -q SECRET-FIRST-LINE <<<"$out" &&
	grep -q '^  mlx5_0 ' <<<"$out"; then
	ok "check --sysfs-root: links out of the tree (absolute, and by ..) read nothing outside it (exit $rc)"
else
	not_ok "check --sysfs-root: links out of the tree read nothing outside it" \
		"exit $rc: $(grep -m3 'SECRET\|mlx5_0' <<<"$out")"
fi
out=$(timeout 10 "$doctor" check --json --sysfs-root "$tmp/escape" 2>&1)
if ! grep -q SECRET-FIRST-LINE <<<"$out"; then
	ok "check --json --sysfs-root: nothing of the file outside either"
else
	not_ok "check --json --sysfs-root: nothing of the file outside" "$(grep -m1 SECRET <<<"$out")"
fi
tree escape-files
rm "$tmp/escape-files/facts" "$tmp/escape-files/topo.xml"
ln -s "$secret" "$tmp/escape-files/facts"
ln -s "$up" "$tmp/escape-files/topo.xml"
out=$(timeout 10 "$doctor" check --sysfs-root "$tmp/escape-files" 2>&1)
rc=$?
# not read: the tree has none inside it (the file outside was read, and
# refused as no topology: exit 3)
if [ "$rc" -eq 0 ] && ! grep -q SECRET-FIRST-LINE <<<"$out" &&
	grep -qF 'a saved tree without topo.xml' <<<"$out" &&
	grep -qF 'CUDA driver   unknown (a saved tree without facts)' <<<"$out"; then
	ok "check --sysfs-root: topo.xml and facts linked out of the tree are not read (exit $rc)"
else
	not_ok "check --sysfs-root: topo.xml and facts linked out of the tree" "exit $rc: $(head -c 400 <<<"$out")"
fi

# hwloc XML nested 100,000 deep.
python3 - "$tmp/deep.xml" <<'PY'
import sys
attrs = 'cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1"'
with open(sys.argv[1], "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<topology version="2.0">\n')
    f.write('<object type="Machine" os_index="0" %s gp_index="1">\n' % attrs)
    for i in range(100000):
        f.write('<object type="Group" %s gp_index="%d">\n' % (attrs, i + 2))
    f.write('<object type="PU" os_index="0" %s gp_index="200000"/>\n' % attrs)
    f.write("</object>\n" * 100001 + "</topology>\n")
PY
refused "topo --xml nested 100,000 deep: refused with the bound, no crash" \
	"its elements nest deeper than 256 levels" "$doctor" topo --xml "$tmp/deep.xml"
refused "check --xml nested 100,000 deep" "nest deeper than 256 levels" \
	"$doctor" check --xml "$tmp/deep.xml"
tree deep
cp "$tmp/deep.xml" "$tmp/deep/topo.xml"
refused "check --sysfs-root, its topo.xml nested 100,000 deep" "nest deeper than 256 levels" \
	"$doctor" check --sysfs-root "$tmp/deep"

# gdx-bench --plot onto planted paths: figures to plot, read back.
cat >"$tmp/run.json" <<'EOF'
{"mode": "bw", "label": "run", "results": [{"bytes": 4096, "Gbps": 10.0, "us": 3.3}, {"bytes": 65536, "Gbps": 40.0, "us": 13.1}]}
EOF
plot() { # PATH: plots run.json there; its exit status
	timeout 10 "$bench" --plot-from "$tmp/run.json" --plot "$1" >"$tmp/plot.out" 2>&1
}
mkfifo "$tmp/planted-fifo.svg"
plot "$tmp/planted-fifo.svg"
rc=$?
if [ "$rc" -eq 0 ] && [ -f "$tmp/planted-fifo.svg" ] && [ ! -p "$tmp/planted-fifo.svg" ] &&
	grep -q '</svg>' "$tmp/planted-fifo.svg"; then
	ok "--plot onto a FIFO: the FIFO replaced by the plot, never opened"
else
	not_ok "--plot onto a FIFO" "exit $rc: $(head -c 300 "$tmp/plot.out")"
fi
echo "the victim's own file" >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/planted-link.svg"
plot "$tmp/planted-link.svg"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/victim")" = "the victim's own file" ] &&
	[ ! -L "$tmp/planted-link.svg" ] && grep -q '</svg>' "$tmp/planted-link.svg"; then
	ok "--plot onto a link to a victim's file: the victim's file unchanged, the link replaced"
else
	not_ok "--plot onto a link to a victim's file" "exit $rc: victim now $(head -c 100 "$tmp/victim")"
fi
echo "planted" >"$tmp/planted.svg"
chmod 666 "$tmp/planted.svg"
ln "$tmp/planted.svg" "$tmp/planter-keeps"
plot "$tmp/planted.svg"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/planter-keeps")" = "planted" ] &&
	grep -q '</svg>' "$tmp/planted.svg" && [ "$(stat -c %h "$tmp/planted.svg")" -eq 1 ]; then
	ok "--plot onto a planted file: a new file in its place, the planted one never written"
else
	not_ok "--plot onto a planted file" "exit $rc: the planter's name holds $(head -c 100 "$tmp/planter-keeps")"
fi
if [ -z "$(find "$tmp" -maxdepth 1 -name '.*.svg.*')" ]; then
	ok "--plot leaves no file of its own beside the plot"
else
	not_ok "--plot leaves no file of its own beside the plot" "$(find "$tmp" -maxdepth 1 -name '.*.svg.*')"
fi

report_end tests/check/user_inputs.sh
