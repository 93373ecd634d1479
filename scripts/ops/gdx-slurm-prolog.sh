#!/bin/sh
# SPDX-License-Identifier: MIT
# A Slurm prolog (slurm.conf: Prolog=/path/to/gdx-slurm-prolog.sh) that
# judges the node with gdx-doctor check before each job. Broken (exit 2:
# NCCL would not load the plugin, no active port, memlock too low, ...):
# the node is drained with the first problem as the reason, and the prolog
# fails, so that Slurm requeues the job on another node. Degraded (1) and
# healthy (0): the job runs; the problems go to syslog. A check that could
# not judge (gdx-doctor missing, an error) drains nothing.
#
#   GDX_DOCTOR      the gdx-doctor to run (default: gdx-doctor on PATH)
#   GDX_CHECK_ARGS  more arguments for check, e.g. --textfile FILE
#   SCONTROL        the scontrol to run (default: scontrol on PATH)
set -u
doctor=${GDX_DOCTOR:-gdx-doctor}
node=${SLURMD_NODENAME:-$(hostname -s)}
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT

say() {
	printf 'gdx-slurm-prolog: %s\n' "$1" >&2
	command -v logger >/dev/null 2>&1 && logger -t gdx-slurm-prolog -- "$1"
	return 0
}

# shellcheck disable=SC2086 # GDX_CHECK_ARGS is words
"$doctor" check --quiet ${GDX_CHECK_ARGS:-} 2>"$err"
rc=$?
case $rc in
0) exit 0 ;;
1)
	while IFS= read -r line; do say "$node degraded: $line"; done <"$err"
	exit 0
	;;
2)
	# The first problem, one line, without the prefix and the node's name
	# (sinfo -R shows whose it is); no quote, for scontrol's parser; short.
	first=$(sed -n '1s/^gdx-doctor check: \([^ :]*: \)\{0,1\}//p' "$err" | tr -d '"\r' | cut -c1-200)
	reason="gdx-doctor: ${first:-broken}"
	say "$node broken, draining: $reason"
	"${SCONTROL:-scontrol}" update nodename="$node" state=drain reason="$reason"
	exit 1
	;;
*)
	say "$node not judged: $doctor check exited $rc: $(head -c 300 "$err")"
	exit 0
	;;
esac
