#!/bin/sh
# SPDX-License-Identifier: MIT
# A Kubernetes startup and readiness probe (exec) that judges the node with
# gdx-doctor check, as gdx-doctor-daemonset.yaml runs it on each GPU node:
# exit 0 for a healthy node and, unless GDX_PROBE_STRICT=1, a degraded one
# (it works, slower); 1 for a broken one, and for a check that could not
# judge. With GDX_TEXTFILE set, the verdict also goes to that file for
# node_exporter's textfile collector (gdx-doctor check --textfile).
#
#   GDX_DOCTOR        the gdx-doctor to run (default: gdx-doctor on PATH)
#   GDX_CHECK_ARGS    more arguments for check
#   GDX_TEXTFILE      the metrics file to write
#   GDX_PROBE_STRICT  1: a degraded node is not ready either
set -u
doctor=${GDX_DOCTOR:-gdx-doctor}
# shellcheck disable=SC2086 # GDX_CHECK_ARGS is words
"$doctor" check --quiet ${GDX_CHECK_ARGS:-} ${GDX_TEXTFILE:+--textfile "$GDX_TEXTFILE"}
rc=$?
case $rc in
0) exit 0 ;;
1) [ "${GDX_PROBE_STRICT:-0}" = 1 ] && exit 1 || exit 0 ;;
2) exit 1 ;;
*)
	echo "gdx-k8s-probe: $doctor check exited $rc: the node is not judged" >&2
	exit 1
	;;
esac
