#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The container recipes, without a container engine (none runs here) and
# without a Dockerfile linter (Debian packages none): a structural check of
# each recipe. Every instruction is one Docker knows; the first is ARG or
# FROM and the ARGs a FROM uses come before it; COPY --from names an earlier
# stage; every apt-get install runs after an apt-get update in the same RUN,
# without recommends, and removes the lists; every RUN parses as sh and
# passes shellcheck; the install line is tests/check/package.sh's. The NGC
# recipe builds on plain Ubuntu (no CUDA image), lands on an NGC PyTorch
# image and carries ibv_devinfo, perftest and lstopo. The .dockerignore at
# the context root keeps build outputs and .git out, as matched here.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/containers.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

install_cmd='make && make install PREFIX=/usr/local DESTDIR=/staging'

# instructions FILE: one instruction per line, continuations joined, comments
# and blank lines dropped: "KEYWORD rest".
instructions() {
	awk '
	/^[[:space:]]*#/ && !cont { next }
	/^[[:space:]]*$/ && !cont { next }
	{
		line = $0
		sub(/^[[:space:]]+/, "", line)
		if (line ~ /\\$/) { sub(/\\$/, "", line); buf = buf line " "; cont = 1; next }
		print buf line
		buf = ""; cont = 0
	}' "$1"
}

# check_recipe FILE: the structure every recipe must have.
check_recipe() {
	local f=$1 bad="" n=0 kw rest stages=" " args=" " seen_from=0 v
	instructions "$f" >"$tmp/ins"
	while read -r kw rest; do
		n=$((n + 1))
		case "$kw" in
		FROM)
			seen_from=1
			# shellcheck disable=SC2016 # the pattern matches a literal ${NAME}
			for v in $(grep -oE '\$\{?[A-Za-z_]+' <<<"$rest" | tr -d '${'); do
				[[ "$args" == *" $v "* ]] || bad+="FROM uses $v, declared by no ARG before it; "
			done
			if [[ "$rest" =~ [[:space:]][Aa][Ss][[:space:]]+([A-Za-z0-9_-]+) ]]; then
				stages+="${BASH_REMATCH[1]} "
			fi
			;;
		ARG)
			[ "$seen_from" = 0 ] && args+="${rest%%=*} "
			;;
		RUN)
			printf '%s\n' "$rest" >"$tmp/run.sh"
			sh -n "$tmp/run.sh" 2>>"$tmp/sh-err" || bad+="RUN $n does not parse as sh; "
			shellcheck -s sh "$tmp/run.sh" >>"$tmp/sc-err" 2>&1 || bad+="RUN $n fails shellcheck; "
			if [[ "$rest" == *"apt-get install"* ]]; then
				[[ "$rest" == *"apt-get update"* ]] || bad+="RUN $n installs without apt-get update; "
				[[ "$rest" == *"--no-install-recommends"* ]] || bad+="RUN $n installs recommends; "
				[[ "$rest" == *"rm -rf /var/lib/apt/lists/*"* ]] || bad+="RUN $n keeps the apt lists; "
			fi
			;;
		COPY)
			if [[ "$rest" =~ --from=([A-Za-z0-9_-]+) ]] &&
				[[ "$stages" != *" ${BASH_REMATCH[1]} "* ]]; then
				bad+="COPY --from=${BASH_REMATCH[1]}: no such earlier stage; "
			fi
			;;
		ENV | WORKDIR | LABEL | ENTRYPOINT | CMD | USER | EXPOSE | VOLUME | SHELL | HEALTHCHECK | STOPSIGNAL | ONBUILD) ;;
		*) bad+="line $n: unknown instruction $kw; " ;;
		esac
		[ "$n" = 1 ] && [ "$kw" != FROM ] && [ "$kw" != ARG ] && bad+="the first instruction is $kw; "
	done <"$tmp/ins"
	[ "$seen_from" = 1 ] || bad+="no FROM; "
	if [ -z "$bad" ]; then
		ok "$f: $n instructions, known, stages and ARGs in order, RUNs pass sh -n and shellcheck, apt tidy"
	else
		not_ok "$f is well formed" "$bad $(head -c 300 "$tmp/sc-err")"
	fi
	if grep -qxF "RUN $install_cmd" "$f"; then
		ok "$f installs with the command tests/check/package.sh checks"
	else
		not_ok "$f installs with the command tests/check/package.sh checks" "no 'RUN $install_cmd'"
	fi
	if grep -qxF 'ENV NCCL_NET_PLUGIN=gdx' "$f"; then
		ok "$f sets NCCL_NET_PLUGIN=gdx"
	else
		not_ok "$f sets NCCL_NET_PLUGIN=gdx" "no such ENV line"
	fi
}

for f in scripts/Dockerfile scripts/Dockerfile.ngc; do
	if [ -f "$f" ]; then
		check_recipe "$f"
	else
		not_ok "$f exists" "missing"
	fi
done

# The NGC recipe: what it builds on and what it lands on and carries.
ngc=scripts/Dockerfile.ngc
froms=$(instructions "$ngc" | awk '$1 == "FROM" { print $2 }')
if [ "$(wc -l <<<"$froms")" -eq 2 ] && head -1 <<<"$froms" | grep -q '^ubuntu:' &&
	! grep -qiE 'cuda|devel' <<<"$(head -1 <<<"$froms")"; then
	ok "$ngc builds on plain Ubuntu, no CUDA devel image ($(head -1 <<<"$froms"))"
else
	not_ok "$ngc builds on plain Ubuntu" "$(tr '\n' ' ' <<<"$froms")"
fi
if tail -1 <<<"$froms" | grep -qE '^nvcr\.io/nvidia/pytorch:\$\{NGC_TAG\}-py3$'; then
	ok "$ngc lands on nvcr.io/nvidia/pytorch:\${NGC_TAG}-py3"
else
	not_ok "$ngc lands on an NGC PyTorch image" "$(tail -1 <<<"$froms")"
fi
final=$(instructions "$ngc" | awk '$1 == "FROM" { n++ } n == 2')
for p in ibverbs-utils perftest hwloc-nox ibverbs-providers libibverbs1 libhwloc15; do
	if grep -qE "^RUN .*apt-get install .*\\b$p\\b" <<<"$final"; then
		ok "$ngc: the final image installs $p"
	else
		not_ok "$ngc: the final image installs $p" "not in its apt-get install"
	fi
done

# .dockerignore at the context root, as Docker matches it (each pattern
# against the path and against every directory above it; ** any depth).
if [ ! -f .dockerignore ]; then
	not_ok ".dockerignore at the context root" "missing"
else
	ok ".dockerignore at the context root (read by every builder, BuildKit or not)"
	ignored() {
		python3 - "$@" <<'EOF'
import fnmatch, re, sys
pats = [l.strip() for l in open(".dockerignore") if l.strip() and not l.startswith("#")]
def match(pat, path):
	rx = re.escape(pat).replace(r"\*\*/", "(.*/)?").replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
	return re.fullmatch(rx, path) is not None
for path in sys.argv[1:]:
	parts = path.split("/")
	hit = any(match(p, "/".join(parts[:i])) for p in pats for i in range(1, len(parts) + 1))
	print(path, "ignored" if hit else "kept")
EOF
	}
	ignored build/libnccl-net-gdx.so build-san/tests/unit/dev build-deb/x.o .git/HEAD \
		plugin/net/gdx_net.o plugin/tools/bench/gdx_bench.d Makefile plugin/net/gdx_net.c debian/rules \
		scripts/Dockerfile.ngc >"$tmp/ign"
	want="build/libnccl-net-gdx.so ignored
build-san/tests/unit/dev ignored
build-deb/x.o ignored
.git/HEAD ignored
plugin/net/gdx_net.o ignored
plugin/tools/bench/gdx_bench.d ignored
Makefile kept
plugin/net/gdx_net.c kept
debian/rules kept
scripts/Dockerfile.ngc kept"
	if [ "$(cat "$tmp/ign")" = "$want" ]; then
		ok ".dockerignore keeps build outputs and .git out of the context, the sources in"
	else
		not_ok ".dockerignore keeps build outputs out" "$(diff <(echo "$want") "$tmp/ign" | tr '\n' ' ')"
	fi
fi
if [ -e scripts/Dockerfile.dockerignore ] || [ -e scripts/Dockerfile.ngc.dockerignore ]; then
	not_ok "no BuildKit-only ignore file beside a recipe" "it would override .dockerignore under BuildKit"
else
	ok "no BuildKit-only ignore file beside a recipe (one list, at the root)"
fi

# The README's run lines for the engines and schedulers users have.
for pat in '--gpus all' '--ulimit memlock=-1' '--container-image' 'enroot import' \
	'IPC_LOCK' 'rdma/' 'scripts/Dockerfile.ngc'; do
	if grep -qF -- "$pat" README.md; then
		ok "README has the run line part: $pat"
	else
		not_ok "README has the run line part: $pat" "not in README.md"
	fi
done

report_end tests/check/containers.sh
