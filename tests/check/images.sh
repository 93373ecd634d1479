#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test only: it builds both container images (buildah)
# The container recipes, built: scripts/Dockerfile and scripts/Dockerfile.ngc
# with buildah (chroot isolation, as root), each over a Debian bookworm
# minbase root file system (mmdebstrap, from deb.debian.org) in place of the
# CUDA and NGC bases, which are not reachable here: BUILD_IMAGE and
# BASE_IMAGE point both stages at it. Each build makes the .deb in its build
# stage from this tree and installs that package in its final stage; in the
# image, checked with buildah run: the package is installed (dpkg owns
# gdx-doctor, nothing in /usr/local), gdx-doctor check --json exits with one
# of check's documented codes (0 healthy, 1 degraded, 2 broken) and prints
# valid JSON whose "exit" is that code, ibv_devinfo and lstopo are there
# (and ib_write_bw in the NGC image), NCCL_NET_PLUGIN is gdx, and the loader
# finds libnccl-net-gdx.so by name.
# Not covered: the CUDA and NGC bases themselves (their apt sources, their
# rdma-core, NCCL loading the plugin), a GPU, an RDMA device: gdx-doctor
# reports a node without them. The base file system and buildah's layers
# are kept in build/image-cache (GDX_IMAGE_CACHE) and reused, up to 4 GiB:
# cold, this fetches about 250 MB from the Debian mirror.
# Prints "ok ..." / "not ok ..." lines and
# "# tests/check/images.sh: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL
# shellcheck source=tests/lib/report.sh
. tests/lib/report.sh
finish() {
	report_end tests/check/images.sh
	exit
}

cache=${GDX_IMAGE_CACHE:-build/image-cache}
mirror=${GDX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
base_tar=$cache/$suite-minbase.tar
base_image=localhost/gdx-image-base:$suite
version=$(make --no-print-directory -s version)
pkg=libnccl-net-gdx

for cmd in buildah mmdebstrap; do
	if ! command -v "$cmd" >/dev/null; then
		not_ok "$cmd is installed" "install it (sudo make package-deps, or sudo apt-get install $cmd)"
		finish
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	not_ok "images.sh runs as root" "buildah's chroot isolation and mmdebstrap --mode=root need root"
	finish
fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
# buildah keeps its images and layers in the cache, apart from the host's
# own storage.
bh() { buildah --root "$cache/storage" --runroot "$cache/run" "$@"; }
export BUILDAH_ISOLATION=chroot
# No container outlives a run (each is removed, and the working containers
# of an interrupted one here): a container left mounted would keep
# rm -rf build from removing the cache.
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	bh rm --all >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
bh rm --all >/dev/null 2>&1

# secs_since START: whole seconds since START (date +%s).
secs_since() { echo $(($(date +%s) - $1)); }

# ---- the base: a Debian minbase root file system, made once ----

t=$(date +%s)
if [ -s "$base_tar" ]; then
	ok "base: $base_tar is there, reused"
elif mmdebstrap --variant=minbase --mode=root "$suite" "$base_tar.new" "$mirror" \
	>"$tmp/mmdebstrap.log" 2>&1 && mv "$base_tar.new" "$base_tar"; then
	ok "base: mmdebstrap made $base_tar ($suite minbase, $(secs_since "$t") s)"
else
	rm -f "$base_tar.new"
	not_ok "base: mmdebstrap $suite minbase from $mirror" "$(tail -c 600 "$tmp/mmdebstrap.log")"
	finish
fi
# imported as an image, again only when the file system is newer
stamp=$cache/base-imported
if [ -f "$stamp" ] && [ "$stamp" -nt "$base_tar" ] &&
	bh inspect --type image "$base_image" >/dev/null 2>&1; then
	ok "base: $base_image is there, reused"
else
	t=$(date +%s)
	if ctr=$(bh from scratch 2>"$tmp/import.log") &&
		bh add "$ctr" "$base_tar" / >>"$tmp/import.log" 2>&1 &&
		bh commit --rm "$ctr" "$base_image" >>"$tmp/import.log" 2>&1; then
		touch "$stamp"
		ok "base: $base_tar imported as $base_image ($(secs_since "$t") s)"
	else
		not_ok "base: import $base_tar as $base_image" "$(tail -c 600 "$tmp/import.log")"
		finish
	fi
fi

# ---- each recipe, built and run ----

# in_image CMD...: CMD run in the container of the image under test, $ctr.
# Its output and status travel through files in a directory bound into
# it, not through buildah run's own standard output, which came back empty
# now and then for a command that had printed.
in_image() {
	local out=$tmp/run rc
	rm -rf "$out" && mkdir -p "$out"
	# shellcheck disable=SC2016 # expanded in the image
	bh run -v "$out:/gdx-out" "$ctr" -- sh -c \
		'"$@" >/gdx-out/stdout 2>/gdx-out/stderr; echo $? >/gdx-out/status' sh "$@" \
		>"$tmp/run.log" 2>&1
	rc=$?
	if [ ! -s "$out/status" ]; then
		echo "buildah run failed (exit $rc): $(head -c 300 "$tmp/run.log")" >&2
		return 125
	fi
	cat "$out/stdout"
	cat "$out/stderr" >&2
	return "$(cat "$out/status")"
}

for recipe in scripts/Dockerfile scripts/Dockerfile.ngc; do
	name=${recipe##*/}
	image=localhost/gdx-test-$(tr 'A-Z.' 'a-z-' <<<"$name")
	t=$(date +%s)
	# --layers: each step's result is kept, so an unchanged step (the
	# package installs before COPY) is not run again next time.
	if ! bh build --layers --pull-never -f "$recipe" \
		--build-arg BUILD_IMAGE="$base_image" --build-arg BASE_IMAGE="$base_image" \
		-t "$image" . >"$tmp/build.log" 2>&1; then
		not_ok "$recipe builds over $base_image" "$(tail -c 1200 "$tmp/build.log")"
		continue
	fi
	ok "$recipe builds over $base_image ($(secs_since "$t") s)"
	if ! ctr=$(bh from --pull-never "$image" 2>"$tmp/from.log"); then
		not_ok "$recipe: a container of $image" "$(head -c 300 "$tmp/from.log")"
		continue
	fi

	# The package, installed as dpkg installs it.
	# shellcheck disable=SC2016 # dpkg-query's fields, not the shell's
	got=$(in_image dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>&1)
	if [ "$got" = "install ok installed $version" ]; then
		ok "$name: the image has the package $pkg $version installed"
	else
		not_ok "$name: the image has the package $pkg $version installed" "$got"
	fi
	# shellcheck disable=SC2016 # expanded in the image
	got=$(in_image sh -c 'dpkg -S "$(command -v gdx-doctor)"; find /usr/local -type f' 2>&1)
	if [ "$got" = "$pkg: /usr/bin/gdx-doctor" ]; then
		ok "$name: gdx-doctor is the package's (/usr/bin), nothing in /usr/local"
	else
		not_ok "$name: gdx-doctor is the package's, nothing in /usr/local" "$(head -c 300 <<<"$got")"
	fi

	# gdx-doctor check --json: a documented code, and JSON that says it.
	in_image gdx-doctor check --json >"$tmp/check.json" 2>"$tmp/check.err"
	rc=$?
	if [ "$rc" -gt 2 ]; then
		not_ok "$name: gdx-doctor check --json exits 0, 1 or 2 (healthy, degraded, broken)" \
			"exit $rc: $(head -c 400 "$tmp/check.err")"
	else
		json_holds "$name: gdx-doctor check --json exits $rc and prints valid JSON saying so" \
			"$tmp/check.json" "d['command'] == 'check' and d['exit'] == $rc and \
d['status'] == ['healthy', 'degraded', 'broken'][$rc]"
	fi

	tools="ibv_devinfo lstopo"
	[ "$name" = Dockerfile.ngc ] && tools+=" ib_write_bw"
	# shellcheck disable=SC2016 # expanded in the image
	# shellcheck disable=SC2086 # one name a word
	got=$(in_image sh -c 'for c in "$@"; do command -v "$c" || echo "no $c"; done' sh $tools 2>&1)
	if ! grep -q '^no ' <<<"$got" && [ "$(wc -l <<<"$got")" -eq "$(wc -w <<<"$tools")" ]; then
		ok "$name: the image has $tools ($(tr '\n' ' ' <<<"$got"))"
	else
		not_ok "$name: the image has $tools" "$(tr '\n' ' ' <<<"$got")"
	fi
	if in_image lstopo --version >"$tmp/lstopo" 2>&1 && grep -q '^lstopo [0-9]' "$tmp/lstopo"; then
		ok "$name: lstopo runs ($(head -1 "$tmp/lstopo"))"
	else
		not_ok "$name: lstopo runs" "$(head -c 300 "$tmp/lstopo")"
	fi
	# shellcheck disable=SC2016 # expanded in the image
	got=$(in_image sh -c 'echo "$NCCL_NET_PLUGIN"; ldconfig -p | grep -c "libnccl-net-gdx.so "' 2>&1)
	if [ "$got" = "gdx
1" ]; then
		ok "$name: NCCL_NET_PLUGIN=gdx, and the loader finds libnccl-net-gdx.so by name"
	else
		not_ok "$name: NCCL_NET_PLUGIN=gdx and the loader finds the plugin" "$(tr '\n' ' ' <<<"$got")"
	fi
	bh rm "$ctr" >/dev/null 2>&1
done

# The untagged images are the layer cache the next run reuses (an image
# prune would drop it); past 4 GiB, the cache starts again from the base's
# file system.
if [ "$(du -sk "$cache/storage" | cut -f1)" -gt $((4 * 1024 * 1024)) ]; then
	bh rm --all >/dev/null 2>&1
	bh rmi --all --force >/dev/null 2>&1
	rm -f "$stamp"
fi
finish
