#!/usr/bin/env bash
# Run a command inside a throw-away QEMU VM that has Soft-RoCE (rxe) devices.
#
# The host kernel has no RDMA; Debian's stock kernel has rdma_rxe as a module.
# The guest sees the host's / read-only over 9p (plus a tmpfs overlay), so the
# host's binaries, libraries and build outputs are used as they are.
# Why these choices (the kernel package unpacked into a cache, never
# installed; busybox's initramfs; the host's / over 9p under a tmpfs
# overlay): tests/README.md, "The test VM", and the comments below.
set -euo pipefail
export LC_ALL=C # decimal point of $EPOCHREALTIME, and apt's messages

readonly PROG=vm-run
readonly EXIT_TIMEOUT=124
readonly EXIT_VM_FAILED=125
readonly EXIT_USAGE=2

usage() {
	cat <<EOF
Usage: scripts/vm-run.sh [OPTIONS] [--] COMMAND...

Boot a throw-away QEMU VM (Debian's stock kernel, the host's / as a read-only
root with a tmpfs overlay on top), create veth pairs with an rxe (Soft-RoCE)
device on each end, and run COMMAND there with 'sh -c', in the current
directory. Several COMMAND words are joined with spaces.

Options:
  --pairs N        veth pairs / rxe device pairs (default 1, at most 64)
  --switch         the 2N rxe devices on one switch instead of wired in pairs:
                   every device reaches every other
  --mem MiB        guest memory (default 2048)
  --timeout SEC    kill the VM after SEC seconds (default 1200)
  --mtu BYTES      MTU of the veths (default 1500; rxe uses the IB MTU below it)
  --out DIR        copy what COMMAND leaves in \$GDX_VM_OUT to DIR on the host
  -h, --help       this text

In the guest, pair i is veth(2i) 198.18.i.1/24 <-> veth(2i+1) 198.18.i.2/24,
with rxe(2i) on veth(2i) and rxe(2i+1) on veth(2i+1); traffic between the two
addresses really crosses the veth. With --switch, vethK (198.19.0.K+1/24, rxeK)
is wired to port swK of a bridge, so that any two devices reach each other
across their veths. GID index 1 is the RoCE v2 IPv4 GID.
COMMAND sees GDX_VM=1, GDX_VM_PAIRS=N, GDX_VM_WIRING=pairs or switch,
GDX_VM_RXE="rxe0 rxe1 ...",
GDX_VM_OUT (a writable directory that comes back to the host, see --out).
Writes anywhere else vanish with the VM. COMMAND's stdin is /dev/null, its
stdout and stderr are a terminal (hvc0) streamed to this script's stdout.

Exit status: COMMAND's, or
  $EXIT_TIMEOUT    the VM timed out
  $EXIT_VM_FAILED    the VM failed to boot or to set up (console log printed)
  $EXIT_USAGE      bad usage

The first run installs missing host packages (apt-get, as root) and
downloads and unpacks the kernel into the cache (~450 MB, a few seconds).
Other modules of the guest kernel load on demand (modprobe, tc qdiscs).

Environment:
  GDX_VM_CACHE   kernel + initramfs cache (default <repo>/build/vm-cache)
  GDX_VM_KVER    use this kernel version (linux-image-KVER) instead of the one
                 linux-image-amd64 depends on
  GDX_VM_ACCEL   auto (default), tcg or kvm; auto picks kvm only with real
                 VT-x/AMD-V (vmx/svm in /proc/cpuinfo, not kvm_pvm)
  GDX_VM_KEEP=1  keep the run directory (console log, qemu log) afterwards
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit "$EXIT_VM_FAILED"
}

usage_error() {
	echo "$PROG: $*" >&2
	echo "Try 'scripts/vm-run.sh --help'." >&2
	exit "$EXIT_USAGE"
}

# --- arguments -------------------------------------------------------------

pairs=1
mem=2048
tmo=1200
mtu=1500
outdir=
wiring=pairs
while (($# > 0)); do
	case $1 in
	--switch)
		wiring=switch
		shift
		continue
		;;
	--pairs | --mem | --timeout | --mtu | --out)
		(($# >= 2)) || usage_error "$1 needs a value"
		opt=${1#--}
		val=$2
		shift 2
		;;
	--pairs=* | --mem=* | --timeout=* | --mtu=* | --out=*)
		opt=${1%%=*}
		opt=${opt#--}
		val=${1#*=}
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		break
		;;
	-*) usage_error "unknown option $1" ;;
	*) break ;;
	esac
	if [[ $opt == out ]]; then
		outdir=$val
		continue
	fi
	[[ $val =~ ^[1-9][0-9]{0,5}$ ]] || usage_error "--$opt wants a positive integer"
	case $opt in
	pairs) pairs=$val ;;
	mem) mem=$val ;;
	timeout) tmo=$val ;;
	mtu) mtu=$val ;;
	esac
done
(($# > 0)) || usage_error "no COMMAND"
cmd="$*"
((pairs <= 64)) || usage_error "--pairs: at most 64"
((mem >= 256)) || usage_error "--mem: at least 256 MiB"
((mtu >= 1280 && mtu <= 65535)) || usage_error "--mtu: 1280..65535"
tmo_kill=10 # grace between SIGTERM and SIGKILL of qemu

accel=${GDX_VM_ACCEL:-auto}
if [[ $accel == auto ]]; then
	accel=tcg
	# kvm_pvm (nested, no VT-x) cannot run a stock kernel.
	if [[ -w /dev/kvm && ! -d /sys/module/kvm_pvm ]] &&
		grep -qw -E 'vmx|svm' /proc/cpuinfo; then
		accel=kvm
	fi
fi
# shellcheck disable=SC2054 # the commas belong to qemu options
case $accel in
tcg) accel_args=(-accel tcg,thread=multi -cpu max) ;;
kvm) accel_args=(-accel kvm -cpu host) ;;
*) usage_error "GDX_VM_ACCEL must be auto, tcg or kvm" ;;
esac

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(dirname "$script_dir")
init_script=$script_dir/vm-init.sh
[[ -r $init_script ]] || die "missing $init_script"
cwd=$(pwd -P)

# --- host packages ---------------------------------------------------------

# What the runner, the initramfs and the guest (which runs the host's
# binaries) need. rdma-core is left out on purpose: it pulls in udev.
readonly PACKAGES=(qemu-system-x86 busybox-static kmod cpio iproute2 xz-utils
	ibverbs-providers ibverbs-utils perftest)

run_dir=
qemu_pid=
apt_updated=0

# shellcheck disable=SC2317 # called through the trap
cleanup() {
	if [[ -n $qemu_pid ]] && kill -0 "$qemu_pid" 2>/dev/null; then
		kill "$qemu_pid" 2>/dev/null || true # timeout(1) passes it on to qemu
		wait "$qemu_pid" 2>/dev/null || true
	fi
	if [[ -n $run_dir ]]; then
		if [[ ${GDX_VM_KEEP:-0} == 1 ]]; then
			echo "$PROG: run directory kept: $run_dir" >&2
		else
			rm -rf "$run_dir"
		fi
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")

# Run a noisy step quietly; show its output only if it fails.
quiet() {
	local log=$run_dir/step.log
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		die "failed: $*"
	fi
}

apt_update() {
	((apt_updated)) && return 0
	echo "$PROG: apt-get update" >&2
	quiet apt-get -o DPkg::Lock::Timeout=300 update
	apt_updated=1
}

ensure_packages() {
	"$script_dir/ensure-packages.sh" "${PACKAGES[@]}" || die "cannot install ${PACKAGES[*]}"
}

# --- kernel ----------------------------------------------------------------

cache=${GDX_VM_CACHE:-$repo/build/vm-cache}
kpkg=
kver=

# The versioned image package that the meta package points to right now.
resolve_kernel() {
	if [[ -n ${GDX_VM_KVER:-} ]]; then
		kver=$GDX_VM_KVER
	else
		kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }') || true
		kver=${kpkg#linux-image-}
	fi
	kpkg=${kver:+linux-image-$kver}
}

# Newest complete kernel in the cache, for when apt knows of none (no lists).
newest_cached() {
	local d best=
	for d in "$cache"/*/.complete; do
		[[ -e $d ]] || continue
		d=${d%/.complete}
		d=${d##*/}
		if [[ -z $best ]] || [[ $(printf '%s\n' "$best" "$d" | sort -V | tail -n1) == "$d" ]]; then
			best=$d
		fi
	done
	echo "$best"
}

# The uncompressed ELF inside the bzImage boots via PVH: under TCG that saves
# the guest ~6 s of decompression. Optional: on any doubt, use the bzImage.
extract_vmlinux() {
	local kdir=$1 bz=$2 off
	grep -qx 'CONFIG_PVH=y' "$kdir/boot/config-$kver" 2>/dev/null || return 0
	off=$(grep -abo $'\xfd7zXZ' "$bz" | awk -F: 'NR == 1 { print $1 }') || return 0
	[[ -n $off ]] || return 0
	# Not a pipe: xz stops at the end of the stream and tail would die of SIGPIPE.
	if xz -dc --single-stream <(tail -c +$((off + 1)) "$bz") >"$kdir/vmlinux.tmp" 2>/dev/null &&
		[[ $(head -c 4 "$kdir/vmlinux.tmp") == $'\x7fELF' ]]; then
		mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
	else
		rm -f "$kdir/vmlinux.tmp"
	fi
}

# Download and unpack the image package into $cache/$kver (never into /boot).
fetch_kernel() {
	local kdir=$cache/$kver tmp=$cache/$kver.tmp deb
	rm -rf "$tmp"
	mkdir -p "$tmp/deb"
	echo "$PROG: downloading $kpkg" >&2
	# As root, apt's _apt sandbox user could not write here; skip the sandbox.
	if ! (cd "$tmp/deb" && apt-get -q -o APT::Sandbox::User=root download "$kpkg") \
		>"$run_dir/step.log" 2>&1; then
		rm -rf "$tmp"
		return 1
	fi
	deb=$(echo "$tmp"/deb/*.deb)
	[[ -f $deb ]] || die "apt-get download left no .deb for $kpkg"
	quiet dpkg-deb -x "$deb" "$tmp"
	rm -rf "$tmp/deb"
	# Newer packages put modules under usr/lib; modprobe -d wants lib/modules.
	if [[ ! -d $tmp/lib/modules/$kver && -d $tmp/usr/lib/modules/$kver ]]; then
		mkdir -p "$tmp/lib/modules"
		mv "$tmp/usr/lib/modules/$kver" "$tmp/lib/modules/"
	fi
	[[ -f $tmp/boot/vmlinuz-$kver ]] || die "$kpkg has no boot/vmlinuz-$kver"
	[[ -d $tmp/lib/modules/$kver ]] || die "$kpkg has no modules for $kver"
	[[ -f $tmp/lib/modules/$kver/modules.dep ]] || quiet depmod -b "$tmp" "$kver"
	extract_vmlinux "$tmp" "$tmp/boot/vmlinuz-$kver"
	touch "$tmp/.complete"
	rm -rf "$kdir"
	mv "$tmp" "$kdir"
}

prepare_kernel() {
	resolve_kernel
	if [[ -z $kver ]]; then
		kver=$(newest_cached)
		if [[ -z $kver ]]; then
			apt_update
			resolve_kernel
			[[ -n $kver ]] || die "apt knows no linux-image-amd64 (not Debian?); set GDX_VM_KVER"
		fi
		kpkg=linux-image-$kver
	fi
	[[ -e $cache/$kver/.complete ]] && return 0
	fetch_kernel && return 0
	# Stale package lists point at a kernel the mirror has dropped.
	apt_update
	resolve_kernel
	[[ -e $cache/$kver/.complete ]] && return 0
	fetch_kernel || {
		cat "$run_dir/step.log" >&2
		die "cannot download $kpkg"
	}
}

# --- initramfs -------------------------------------------------------------

# Loaded in this order by the guest's stage 1; the rest load on demand.
readonly MODULES=(virtio_pci 9pnet_virtio 9p overlay veth crc32_generic
	virtio_console rdma_rxe ib_uverbs rdma_ucm)

# Uncompressed copy: busybox insmod may not read .ko.xz/.ko.zst.
copy_module() {
	local src=$1 dst=$2
	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
}

prepare_initramfs() {
	local kdir=$cache/$kver m f name key tmp
	local -a mods=()
	declare -A seen=()
	# modprobe takes one module per call (later words are parameters).
	for m in "${MODULES[@]}"; do
		while read -r f; do
			[[ -n ${seen[$f]:-} ]] && continue
			seen[$f]=1
			mods+=("$f")
		done < <(modprobe -d "$kdir" -S "$kver" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }')
	done
	((${#mods[@]} > 0)) || die "modprobe found no modules in $kdir"

	# Rebuild when the init script, the module list or busybox changed.
	key=$({
		echo "$kver"
		cat "$init_script"
		printf '%s\n' "${mods[@]#"$kdir"/}"
		stat -L -c '%s %Y' /bin/busybox
	} | sha256sum | cut -d' ' -f1)
	[[ -f $kdir/initramfs.img && $(cat "$kdir/initramfs.key" 2>/dev/null) == "$key" ]] &&
		return 0

	tmp=$(mktemp -d "$kdir/initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,modules,proc,sys,run,mnt,newroot}
	cp /bin/busybox "$tmp/bin/busybox"
	ln -s busybox "$tmp/bin/sh"
	cp "$init_script" "$tmp/init"
	chmod 0755 "$tmp/init"
	# The kernel opens it for init before devtmpfs exists.
	mknod -m 0600 "$tmp/dev/console" c 5 1 2>/dev/null || true
	for f in "${mods[@]}"; do
		name=${f##*/}
		name=${name%.xz}
		name=${name%.zst}
		name=${name%.gz}
		copy_module "$f" "$tmp/modules/$name" || die "cannot copy $f"
		echo "$name" >>"$tmp/modules/order"
	done
	(cd "$tmp" && find . -mindepth 1 | sort | cpio -o -H newc -R 0:0 --quiet) \
		>"$kdir/initramfs.img.tmp" || die "cpio failed"
	rm -rf "$tmp"
	mv "$kdir/initramfs.img.tmp" "$kdir/initramfs.img"
	echo "$key" >"$kdir/initramfs.key.tmp"
	mv "$kdir/initramfs.key.tmp" "$kdir/initramfs.key"
}

# --- main ------------------------------------------------------------------

ensure_packages
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)

# One preparer at a time; a finished kernel dir is never modified again and
# the initramfs is replaced by rename, so running VMs are not disturbed.
exec {lock_fd}>"$cache/.lock"
flock "$lock_fd"
prepare_kernel
prepare_initramfs
flock -u "$lock_fd"
exec {lock_fd}>&-

kdir=$cache/$kver
kernel=$kdir/boot/vmlinuz-$kver
[[ -f $kdir/vmlinux ]] && kernel=$kdir/vmlinux

# What the guest reads at boot (files: no quoting problems with any path).
echo "$cwd" >"$run_dir/cwd"
printf '%s\n' "$cmd" >"$run_dir/cmd"
echo "$pairs" >"$run_dir/pairs"
echo "$wiring" >"$run_dir/wiring"
echo "$mtu" >"$run_dir/mtu"
echo "$kdir/lib/modules" >"$run_dir/moddir"
mkdir -p "$run_dir/out"

# panic=-1 with -no-reboot: a guest that panics ends qemu at once.
append="console=ttyS0 rdinit=/init panic=-1 oops=panic mitigations=off"
append+=" loglevel=5 random.trust_cpu=on 8250.nr_uarts=1 i8042.noaux i8042.nokbd"

# shellcheck disable=SC2054 # the commas belong to qemu options
qemu_args=(
	-nodefaults -no-user-config -display none -no-reboot
	-machine pc "${accel_args[@]}" -smp 2 -m "$mem"
	-nic none
	-kernel "$kernel" -initrd "$kdir/initramfs.img" -append "$append"
	-serial "file:$run_dir/console.log"
	# COMMAND's output: hvc0 in the guest, straight to our stdout.
	-device virtio-serial-pci
	-chardev stdio,id=out,signal=off
	-device virtconsole,chardev=out
	-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=root,mount_tag=gdxroot
	-fsdev "local,id=run,path=$run_dir,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=run,mount_tag=gdxrun
)

t0=$EPOCHREALTIME
# stdin from /dev/null: qemu would otherwise make the terminal non-blocking.
timeout -k "$tmo_kill" "$tmo" qemu-system-x86_64 "${qemu_args[@]}" \
	</dev/null 2>"$run_dir/qemu.log" &
qemu_pid=$!

# Only during boot: report the boot time once the command starts.
kvm_failed=0
while [[ ! -e $run_dir/ready ]] && kill -0 "$qemu_pid" 2>/dev/null; do
	# A KVM that cannot run the kernel (kvm_pvm) leaves qemu paused forever.
	if [[ $accel == kvm && -s $run_dir/qemu.log ]] &&
		grep -q 'KVM internal error\|emulation failure' "$run_dir/qemu.log"; then
		kvm_failed=1
		kill "$qemu_pid" 2>/dev/null || true
		break
	fi
	sleep 0.1
done
if [[ -e $run_dir/ready ]]; then
	t1=$EPOCHREALTIME
	d=$(((${t1/./} - ${t0/./}) / 100000))
	echo "$PROG: kernel $kver ($accel), booted in $((d / 10)).$((d % 10)) s" >&2
fi

qemu_rc=0
wait "$qemu_pid" || qemu_rc=$?
qemu_pid=

console_tail() {
	if [[ -s $run_dir/qemu.log ]]; then
		echo "$PROG: qemu said:" >&2
		tail -n 20 "$run_dir/qemu.log" >&2
	fi
	echo "$PROG: last lines of the guest console:" >&2
	tail -n 40 "$run_dir/console.log" >&2 2>/dev/null || true
}

if [[ -n $outdir ]]; then
	mkdir -p "$outdir"
	cp -a "$run_dir/out/." "$outdir/"
fi

if [[ -f $run_dir/exit-code ]]; then
	rc=$(<"$run_dir/exit-code")
	[[ $rc =~ ^[0-9]+$ ]] || die "bad exit code from the guest: $rc"
	# A kernel splat is worth seeing even when the command passed.
	if grep -q -E 'BUG:|Oops|WARNING:|Call Trace:' "$run_dir/console.log"; then
		echo "$PROG: the guest kernel reported problems" >&2
		console_tail
	fi
	exit "$rc"
elif ((qemu_rc == 124 || qemu_rc == 137)); then
	if [[ -e $run_dir/ready ]]; then
		echo "$PROG: timed out after $tmo s (COMMAND was running)" >&2
	else
		echo "$PROG: timed out after $tmo s (while booting)" >&2
	fi
	console_tail
	exit "$EXIT_TIMEOUT"
else
	if ((kvm_failed)); then
		echo "$PROG: KVM cannot run this kernel here; use GDX_VM_ACCEL=tcg" >&2
	elif [[ -s $run_dir/error ]]; then
		echo "$PROG: guest setup failed: $(<"$run_dir/error")" >&2
	else
		echo "$PROG: the VM failed to boot (qemu exit status $qemu_rc)" >&2
	fi
	console_tail
	exit "$EXIT_VM_FAILED"
fi
