#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The container recipes, without a container engine (none runs here) and
# without a Dockerfile linter (Debian packages none): a structural check of
# each recipe. Every instruction is one Docker knows; the first is ARG or
# FROM and the ARGs a FROM uses come before it; COPY --from names an earlier
# stage; every apt-get install runs after an apt-get update in the same RUN,
# without recommends, and removes the lists; every RUN parses as sh and
# passes shellcheck. Each builds the .deb in its build stage (make deb, only
# what ships, on every core; no make of the tests, no make install) and its
# final stage installs that package with apt-get, with ibv_devinfo
# (ibverbs-utils) and lstopo (hwloc-nox); both stages' bases are ARGs
# (BUILD_IMAGE, BASE_IMAGE), which tests/check/images.sh points at a Debian
# base to build them. The NGC recipe builds on plain Ubuntu (no CUDA image),
# lands on an NGC PyTorch image and carries perftest too. The .dockerignore
# at the context root keeps build outputs and .git out, as matched here.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/containers.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh

# The build stage's one make: the package, every core.
# shellcheck disable=SC2016 # the recipe's line, $(nproc) as written there
build_cmd='RUN make deb JOBS="$(nproc)" && mkdir /debs && cp build/libnccl-net-gdx_*.deb /debs/'

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
			if [ "$seen_from" = 0 ]; then
				# shellcheck disable=SC2016 # the pattern matches a literal ${NAME}
				for v in $(grep -oE '\$\{?[A-Za-z_]+' <<<"${rest#*=}" | tr -d '${'); do
					[[ "$args" == *" $v "* ]] || bad+="ARG ${rest%%=*} uses $v, declared by no ARG before it; "
				done
				args+="${rest%%=*} "
			fi
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
	# Both stages' bases are ARGs, so that another base stands in for each
	# (tests/check/images.sh builds the recipe over a Debian one).
	froms=$(awk '$1 == "FROM" { print $2 }' "$tmp/ins" | tr '\n' ' ')
	# shellcheck disable=SC2016 # literal ${NAME}s
	if [ "$froms" = '${BUILD_IMAGE} ${BASE_IMAGE} ' ]; then
		ok "$f: two stages, FROM \${BUILD_IMAGE} AS build and FROM \${BASE_IMAGE}"
	else
		not_ok "$f: two stages from the ARGs BUILD_IMAGE and BASE_IMAGE" "FROMs: $froms"
	fi
	stage1=$(awk '$1 == "FROM" { n++ } n == 1' "$tmp/ins")
	final=$(awk '$1 == "FROM" { n++ } n == 2' "$tmp/ins")
	if grep -qxF "$build_cmd" <<<"$stage1"; then
		ok "$f: the build stage makes the .deb alone, on every core (make deb JOBS=\"\$(nproc)\")"
	else
		not_ok "$f: the build stage makes the .deb on every core" "no line '$build_cmd'"
	fi
	# No make but that one: no make of the whole test suite, no make install.
	others=$(grep -E '^RUN (.*(&&|;|\|\|) *)?make( |$)' "$tmp/ins" | grep -vxF "$build_cmd")
	if [ -z "$others" ] && ! grep -q 'make install' "$tmp/ins"; then
		ok "$f: no other make (no tests built, no make install)"
	else
		not_ok "$f: no other make" "$(head -c 300 <<<"$others")"
	fi
	if grep -qxF 'COPY --from=build /debs/ /tmp/debs/' <<<"$final" &&
		grep -qE '^RUN apt-get update .*apt-get install .*/tmp/debs/libnccl-net-gdx_\*\.deb .*rm -rf /var/lib/apt/lists/\* /tmp/debs .*gdx-doctor --version$' <<<"$final"; then
		ok "$f: the final stage installs the build stage's .deb with apt-get, then runs gdx-doctor"
	else
		not_ok "$f: the final stage installs the build stage's .deb with apt-get" \
			"no COPY --from=build /debs/ and apt-get install /tmp/debs/libnccl-net-gdx_*.deb"
	fi
	want_pkgs="ibverbs-providers ibverbs-utils hwloc-nox"
	[ "$f" = scripts/Dockerfile.ngc ] && want_pkgs+=" perftest"
	for p in $want_pkgs; do
		if grep -qE "^RUN .*apt-get install .*\\b$p\\b" <<<"$final"; then
			ok "$f: the final image installs $p"
		else
			not_ok "$f: the final image installs $p" "not in its apt-get install"
		fi
	done
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

# What each recipe builds on and lands on by default: the ARGs' defaults.
# arg_default FILE NAME: NAME's default in FILE's ARG line.
arg_default() {
	instructions "$1" | sed -n "s/^ARG $2=//p"
}
for f in scripts/Dockerfile scripts/Dockerfile.ngc; do
	b=$(arg_default "$f" BUILD_IMAGE)
	if [[ "$b" == ubuntu:* ]]; then
		ok "$f builds on plain Ubuntu, no CUDA devel image ($b)"
	else
		not_ok "$f builds on plain Ubuntu" "BUILD_IMAGE=$b"
	fi
done
# shellcheck disable=SC2016 # literal ${NAME}s
for want in 'scripts/Dockerfile nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU}' \
	'scripts/Dockerfile.ngc nvcr.io/nvidia/pytorch:${NGC_TAG}-py3'; do
	f=${want%% *}
	if [ "$(arg_default "$f" BASE_IMAGE)" = "${want#* }" ]; then
		ok "$f lands on ${want#* }"
	else
		not_ok "$f lands on ${want#* }" "BASE_IMAGE=$(arg_default "$f" BASE_IMAGE)"
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
