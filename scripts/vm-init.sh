#!/bin/sh
# In-guest init for scripts/vm-run.sh. Not meant to be run on the host,
# except as "vm-init.sh wires N [MTU]": the N veth pairs with rxe devices of
# the VM, made on a real host that has rdma_rxe (scripts/gpu-check.sh).
#
# Stage 1 runs as /init of the initramfs under busybox: load the modules,
# build the root (host / over 9p, read-only, under an overlay with a tmpfs
# upper layer) and switch_root into it. Stage 2 runs there under the host's
# /bin/sh: veth pairs + rxe devices, then the command.
#
# Host <-> guest protocol, all files in the read-write 9p share "gdxrun":
#   cwd, cmd, pairs, mtu, moddir   written by the host before boot
#   ready                          written here when the command starts
#   exit-code                      the command's exit status
#   error                          why setup failed (no exit-code then)
#   out/                           $GDX_VM_OUT of the command
# POSIX sh only: it must run under both busybox ash and dash.

FINAL_RUN=/run/gdx-vm # where the rw share ends up in the final root
RUN=                  # where it is now; empty until mounted
BB=/bin/busybox       # static; in stage 2 a copy in RAM (see stage1)
WIRES=                # set when run on a real host for its wires only

# reboot(2) from PID 1 itself, from a binary in RAM. sysrq o would power off
# asynchronously while PID 1 keeps running from 9p, whose device is shut
# down first: PID 1 dies of SIGBUS and the kernel panics.
power_off() {
	sync
	# shellcheck disable=SC2093 # the fallback runs only if the exec fails
	exec "$BB" poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 60
}

fail() {
	echo "vm-init: $*" >&2
	# on a real host (wires), never power off: just fail
	[ -n "$WIRES" ] && exit 1
	[ -n "$RUN" ] && echo "$*" >"$RUN/error"
	power_off
}

stage1() {
	/bin/busybox --install -s /bin
	export PATH=/bin
	mkdir -p /proc /sys /dev
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev

	while read -r m; do
		insmod "/modules/$m" || fail "insmod $m failed"
	done </modules/order

	mkdir -p /mnt/host /mnt/rw /mnt/run /newroot
	opts=trans=virtio,version=9p2000.L,msize=262144
	mount -t 9p -o "$opts" gdxrun /mnt/run || fail "cannot mount run share"
	RUN=/mnt/run
	mount -t 9p -o "$opts,ro" gdxroot /mnt/host || fail "cannot mount host root"

	# Writes land in RAM and vanish at power-off.
	mount -t tmpfs -o mode=0755 tmpfs /mnt/rw
	mkdir -p /mnt/rw/upper /mnt/rw/work
	mount -t overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work \
		overlay /newroot || fail "cannot mount overlay root"

	cwd=$(cat $RUN/cwd)
	moddir=$(cat $RUN/moddir)

	# The guest's /proc, /sys, /dev replace the host's (visible through 9p).
	mount --move /proc /newroot/proc
	mount --move /sys /newroot/sys
	mount --move /dev /newroot/dev
	mkdir -p /newroot/dev/pts /newroot/dev/shm
	mount -t devpts -o mode=0620,ptmxmode=0666 devpts /newroot/dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm

	# Modules of the guest kernel, so that modprobe works on demand.
	mkdir -p /newroot/lib/modules
	mount --bind "/newroot$moddir" /newroot/lib/modules || fail "cannot bind $moddir"

	# A clean /tmp and /run, unless the command's directory is in there
	# (the overlay keeps them writable anyway).
	case $cwd in
	/tmp | /tmp/*) ;;
	*) mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp ;;
	esac
	case $cwd in
	/run | /run/*) ;;
	*) mount -t tmpfs -o mode=0755 tmpfs /newroot/run ;;
	esac
	mkdir -p /newroot$FINAL_RUN
	mount --move $RUN /newroot$FINAL_RUN
	RUN=/newroot$FINAL_RUN
	cp /init /newroot/run/gdx-vm-init.sh
	mkdir -p /newroot/run/gdx-vm-bin
	cp /bin/busybox /newroot/run/gdx-vm-bin/busybox

	# shellcheck disable=SC2093 # fail runs only if the exec itself fails
	exec switch_root /newroot /bin/sh /run/gdx-vm-init.sh stage2
	fail "switch_root failed"
}

# $1: the file, $2: the value, quietly (a missing knob is not fatal).
put() {
	echo "$2" 2>/dev/null >"$1" || true
}

# A wire keeps the order of a flow, as a real link does: a veth hands each
# packet to the receive queue of the CPU that sent it, and rxe sends a QP's
# packets from whichever vCPU posted or ran its task, so two vCPUs reordered
# them (each reordering costs a retransmission and one of the QP's retries:
# a 16 MiB WRITE could exhaust them). Every receive goes to vCPU 0 instead.
keep_order() {
	for q in /sys/class/net/veth*/queues/rx-* /sys/class/net/sw*/queues/rx-*; do
		if [ -e "$q/rps_cpus" ]; then put "$q/rps_cpus" 1; fi
	done
}

# Two wires per pair; traffic between the pair's own addresses must cross the
# veth instead of the kernel's local shortcut, so that rxe sees real packets.
setup_network() {
	pairs=$1
	mtu=$2
	batch=/run/gdx-vm-ip.batch
	rbatch=/run/gdx-vm-rdma.batch
	: >"$batch"
	: >"$rbatch"
	for c in all default; do
		put /proc/sys/net/ipv4/conf/$c/rp_filter 0
		put /proc/sys/net/ipv4/conf/$c/accept_local 1
	done
	# No IPv6 on the new wires (lo keeps it): each rxe GID table stays
	# [0] link-local, [1] IPv4-mapped.
	put /proc/sys/net/ipv6/conf/default/disable_ipv6 1
	echo "link set lo up" >>"$batch"
	i=0
	while [ "$i" -lt "$pairs" ]; do
		a=veth$((2 * i))
		b=veth$((2 * i + 1))
		ia=198.18.$i.1
		ib=198.18.$i.2
		cat >>"$batch" <<-EOF
			link add $a mtu $mtu type veth peer name $b mtu $mtu
			addr add $ia/24 dev $a
			addr add $ib/24 dev $b
			link set $a up
			link set $b up
			rule add pref 10 iif $a lookup local
			rule add pref 10 iif $b lookup local
			rule add pref 20 from $ia to $ib lookup 100
			rule add pref 20 from $ib to $ia lookup 100
			route add $ib/32 dev $a src $ia table 100
			route add $ia/32 dev $b src $ib table 100
		EOF
		echo "link add rxe$((2 * i)) type rxe netdev $a" >>"$rbatch"
		echo "link add rxe$((2 * i + 1)) type rxe netdev $b" >>"$rbatch"
		i=$((i + 1))
	done
	# The local table goes after the rules above.
	cat >>"$batch" <<-EOF
		rule add pref 1000 lookup local
		rule del pref 0 lookup local
	EOF
	ip -batch "$batch" >&2 || fail "network setup failed (ip -batch)"
	# The interfaces exist only now; the "all"/"default" knobs do not cover them.
	for d in /proc/sys/net/ipv4/conf/veth*; do
		put "$d/rp_filter" 0
		put "$d/accept_local" 1
	done
	keep_order
	rdma -b "$rbatch" >&2 || fail "rxe setup failed (rdma -b)"
}

# One switch: vethK (rxeK) to bridge port swK, for K < 2 * pairs. Each
# device's traffic leaves by its own veth (a policy table per source
# address), arrives by its peer's, and only the owner answers ARP for an
# address (arp_ignore), so that rxe sees real packets on the right device.
setup_switch() {
	n=$((2 * $1))
	mtu=$2
	batch=/run/gdx-vm-ip.batch
	rbatch=/run/gdx-vm-rdma.batch
	: >"$batch"
	: >"$rbatch"
	for c in all default; do
		put /proc/sys/net/ipv4/conf/$c/rp_filter 0
		put /proc/sys/net/ipv4/conf/$c/accept_local 1
		put /proc/sys/net/ipv4/conf/$c/arp_ignore 1
		put /proc/sys/net/ipv4/conf/$c/arp_announce 2
	done
	put /proc/sys/net/ipv6/conf/default/disable_ipv6 1
	cat >>"$batch" <<-EOF
		link set lo up
		link add br0 type bridge
		link set br0 up
	EOF
	k=0
	while [ "$k" -lt "$n" ]; do
		a=198.19.0.$((k + 1))
		cat >>"$batch" <<-EOF
			link add veth$k mtu $mtu type veth peer name sw$k mtu $mtu
			link set sw$k master br0
			link set sw$k up
			addr add $a/24 dev veth$k
			link set veth$k up
			rule add pref 10 iif veth$k lookup local
			rule add pref 15 from $a to $a lookup local
			rule add pref 20 from $a to 198.19.0.0/24 lookup $((100 + k))
			route add 198.19.0.0/24 dev veth$k src $a table $((100 + k))
		EOF
		echo "link add rxe$k type rxe netdev veth$k" >>"$rbatch"
		k=$((k + 1))
	done
	cat >>"$batch" <<-EOF
		rule add pref 1000 lookup local
		rule del pref 0 lookup local
	EOF
	ip -batch "$batch" >&2 || fail "switch setup failed (ip -batch)"
	for d in /proc/sys/net/ipv4/conf/veth*; do
		put "$d/rp_filter" 0
		put "$d/accept_local" 1
		put "$d/arp_ignore" 1
		put "$d/arp_announce" 2
	done
	keep_order
	rdma -b "$rbatch" >&2 || fail "rxe setup failed (rdma -b)"
}

# GID index 1 is the RoCE v2 IPv4-mapped GID; it appears asynchronously.
wait_gids() {
	n=$1
	tries=0
	k=0
	while [ "$k" -lt "$n" ]; do
		gid=
		f=/sys/class/infiniband/rxe$k/ports/1/gids/1
		[ -r "$f" ] && read -r gid <"$f"
		case $gid in
		0000:0000:0000:0000:0000:ffff:*) k=$((k + 1)) ;;
		*)
			tries=$((tries + 1))
			[ "$tries" -gt 300 ] && fail "rxe$k: no IPv4 GID at index 1 after 30 s"
			sleep 0.1
			;;
		esac
	done
}

stage2() {
	BB=/run/gdx-vm-bin/busybox
	RUN=$FINAL_RUN
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	# TERM=dumb: the output ends up in logs, keep escape sequences out.
	export HOME=/root LANG=C.UTF-8 TERM=dumb
	cd / || fail "no /"
	cwd=$(cat "$RUN/cwd")
	pairs=$(cat "$RUN/pairs")
	wiring=$(cat "$RUN/wiring")
	mtu=$(cat "$RUN/mtu")
	# shellcheck disable=SC3045 # dash and busybox ash both have ulimit -l
	ulimit -l unlimited || fail "ulimit -l unlimited failed"
	# The host's name, so that it resolves through the host's /etc/hosts.
	[ -r /etc/hostname ] && put /proc/sys/kernel/hostname "$(cat /etc/hostname)"

	if [ "$wiring" = switch ]; then
		setup_switch "$pairs" "$mtu"
	else
		setup_network "$pairs" "$mtu"
	fi
	rxe=
	k=0
	while [ "$k" -lt $((2 * pairs)) ]; do
		rxe="$rxe${rxe:+ }rxe$k"
		k=$((k + 1))
	done
	wait_gids $((2 * pairs))

	mkdir -p "$RUN/out"
	export GDX_VM=1 GDX_VM_PAIRS="$pairs" GDX_VM_WIRING="$wiring" GDX_VM_RXE="$rxe"
	export GDX_VM_OUT="$RUN/out"
	# A QP with no completion for NCCL_GDX_STALL_MS (2 s) logs a stall: on a
	# real link no message of NCCL's takes that long, but the emulated guest
	# moves ~100 Mb/s, and a 64 MiB write takes seconds here. A command that
	# tests the stall sets its own.
	export NCCL_GDX_STALL_MS="${NCCL_GDX_STALL_MS:-120000}"
	cd "$cwd" || fail "cannot cd to $cwd in the guest"
	cmd=$(cat "$RUN/cmd")
	read -r up _ </proc/uptime
	echo "$up" >"$RUN/ready"

	# hvc0 is opened by the forked subshell, so PID 1 never takes it as its
	# controlling terminal. hvc resets its termios at the last close, hence
	# stty while the subshell holds it open: raw = no \n -> \r\n. The second
	# stty (tcsetattr TCSADRAIN) waits until the host has all the output;
	# the last close alone would wait 100 ms at most.
	(
		stty raw -echo <&1 2>/dev/null
		sh -c "$cmd"
		rc=$?
		stty raw -echo <&1 2>/dev/null
		exit "$rc"
	) </dev/null >/dev/hvc0 2>&1
	echo "$?" >"$RUN/exit-code"
	power_off
}

# On a real host with rdma_rxe (scripts/gpu-check.sh): only the wires.
wires() {
	WIRES=1
	[ "$(id -u)" -eq 0 ] || fail "wires: needs root"
	setup_network "$1" "${2:-1500}"
	wait_gids $((2 * $1))
}

case ${1:-} in
stage2) stage2 ;;
wires) wires "${2:-1}" "${3:-1500}" ;;
*) stage1 ;;
esac
