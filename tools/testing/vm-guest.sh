#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test guest, chrooted into the host's file system: loads
# Soft-RoCE, builds the topology's network and rxe device, loads rmsg.ko,
# runs the command and leaves its status and the kernel log in the run folder
# for rmsg-vm on the host. Arguments: RUN_DIR NODE.

run=$1
node=$2
# shellcheck source=/dev/null
. "$run/env"
cd "$RMSG_REPO" || exit 1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp RMSG_NODE=$node
# For tools/testing/vm-halt: where this node's status and log go.
export RMSG_VM_RUN=$run
# rmsg-vm -I: the instruction counter's file (tools/testing/insn/insn-mark).
[ -z "${RMSG_INSN:-}" ] || export RMSG_INSN_OUT=$run/insn.$node
# RMSG_VM_INSN_PROFILE=1: its per-block profile (tools/testing/insn-lat.sh).
[ -z "${RMSG_INSN_PROFILE:-}" ] ||
	export RMSG_INSN_PROFILE_OUT=$run/insn-profile.$node

finish() {
	dmesg >"$run/dmesg.$node" 2>&1
	echo "$1" >"$run/status.$node"
	sync
	exit 0
}

# The name of the network device with MAC address $1.
netdev_by_mac() {
	local d

	for d in /sys/class/net/*; do
		if [ "$(cat "$d/address")" = "$1" ]; then
			basename "$d"
			return 0
		fi
	done
	echo "no network device with MAC $1" >&2
	return 1
}

kmod() { modprobe -d "$RMSG_KROOT" -S "$RMSG_ABI" "$@"; }

# peer_answers ADDR DEV: the peer answers a ping on DEV within 120 s;
# otherwise say what the link saw and fail.
peer_answers() {
	local addr=$1 dev=$2 until=$((SECONDS + 120))

	while ((SECONDS < until)); do
		ping -c 1 -W 1 "$addr" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "the peer $addr does not answer on $dev after 120 s:"
	ip -s link show "$dev"
	ip neigh show dev "$dev"
	return 1
}

setup() {
	mount -t debugfs debugfs /sys/kernel/debug
	mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs nodev /sys/kernel/tracing
	# Under TCG, patching kernel text while another vCPU runs it can
	# leave that vCPU running the patch's int3 for good (an oops, or a
	# spin): hold the system-call counter rmsg-perf opens from boot, so
	# that no test turns its static keys on and off, and make that
	# patch, like the boot's, while this is the only CPU up (rmsg-vm
	# boots with maxcpus=1; Documentation/testbed.rst, "Text patching").
	if [ -x tools/rmsg-perf/rmsg-perf ]; then
		mkfifo /tmp/syscount-held
		setsid tools/rmsg-perf/rmsg-perf hold-syscount </dev/null \
			>/tmp/syscount-held 2>/dev/null &
		read -r -t 60 _ </tmp/syscount-held
		rm -f /tmp/syscount-held
	fi
	# A one-vCPU guest has no such file (the boot CPU has none).
	for cpu in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ -e "$cpu" ] || continue
		[ "$(cat "$cpu")" = 1 ] || echo 1 >"$cpu" || return 1
	done
	mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
	# rdma_rxe needs crc32_generic but does not declare it.
	for m in crc32_generic rdma_rxe rdma_ucm veth sch_netem; do
		kmod "$m" || return 1
	done
	# The pair's rxe devices send through virtio-net. With its transmit
	# NAPI (the default) a sent frame keeps a reference on its rxe QP
	# until the driver reclaims it, and rxe's destroy_qp waits up to 50 s
	# for those references: on Linux 6.1, a node whose transmit queue
	# stopped (NETDEV WATCHDOG, seen in the pair stage) held its
	# channels' repairs 50 s in the QP's destruction, then warned
	# (rxe_pool.c, __rxe_cleanup). Without transmit NAPI the driver
	# orphans each frame as it takes it: a stopped queue still loses
	# that node's traffic, but no longer holds the QPs (testbed.rst,
	# "The pair's transmit stall").
	virtio_net_args=
	[ "$RMSG_TOPOLOGY" = pair ] && virtio_net_args=napi_tx=0
	kmod virtio_net $virtio_net_args || return 1
	ip link set lo up
	case "$RMSG_TOPOLOGY" in
	loopback)
		ip link add va type veth peer name vb &&
		ip addr add "$RMSG_NET.1/24" dev va &&
		sysctl -qw net.ipv6.conf.va.keep_addr_on_down=1 &&
		ip -6 addr add "$RMSG_NET6::1/64" dev va nodad &&
		ip link set va up && ip link set vb up &&
		rdma link add rxe0 type rxe netdev va || return 1
		export RMSG_NETDEV=va RMSG_LOCAL_ADDR=$RMSG_NET.1 \
		       RMSG_PEER_ADDR=$RMSG_NET.1
		;;
	pair)
		# Two networks: rxe0 on the first, rxe1 on the second (the
		# netdevs found by the MACs rmsg-vm gave them).
		local me=$((node + 1)) peer=$((2 - node)) dev0 dev1
		dev0=$(netdev_by_mac "52:54:00:77:00:0$me") &&
		dev1=$(netdev_by_mac "52:54:00:78:00:0$me") &&
		ip addr add "$RMSG_NET.$me/24" dev "$dev0" &&
		ip link set "$dev0" up &&
		rdma link add rxe0 type rxe netdev "$dev0" &&
		ip addr add "$RMSG_NET2.$me/24" dev "$dev1" &&
		ip link set "$dev1" up &&
		rdma link add rxe1 type rxe netdev "$dev1" || return 1
		export RMSG_NETDEV=$dev0 RMSG_LOCAL_ADDR=$RMSG_NET.$me \
		       RMSG_PEER_ADDR=$RMSG_NET.$peer
		export RMSG_NETDEV2=$dev1 RMSG_LOCAL_ADDR2=$RMSG_NET2.$me \
		       RMSG_PEER_ADDR2=$RMSG_NET2.$peer
		# A pair whose networks carry nothing (a QEMU socket netdev
		# that never connected) stops here with a reason, rather
		# than in every test after minutes of timeouts. The peer
		# boots up to tens of seconds later under TCG.
		peer_answers "$RMSG_PEER_ADDR" "$dev0" &&
		peer_answers "$RMSG_PEER_ADDR2" "$dev1" || return 1
		;;
	esac
	# Host names for the addresses (rmsg_chan_dial() is tested with
	# them): the root is the host's, read-only, so the guest's own
	# /etc/hosts is a copy in its /tmp mounted over the host's. The
	# loopback guest's rmsg-two has two: an on-link IPv6 address that
	# no one holds, which getaddrinfo() puts first (IPv6 before IPv4)
	# while va has its IPv6 address (kept when tests take va down),
	# then the guest's own.
	{ cat /etc/hosts
	  echo "$RMSG_LOCAL_ADDR rmsg-local"
	  if [ "$RMSG_PEER_ADDR" != "$RMSG_LOCAL_ADDR" ]; then
		echo "$RMSG_PEER_ADDR rmsg-peer"
	  else
		echo "$RMSG_NET6::99 rmsg-two"
		echo "$RMSG_LOCAL_ADDR rmsg-two"
	  fi
	} >/tmp/hosts && mount --bind /tmp/hosts /etc/hosts || return 1
	if [ "$RMSG_LOAD" = 1 ]; then
		# The leak check's baseline: everything but rmsg is up.
		tools/testing/leak-check snapshot "$run/leak-base.$node" &&
		insmod "$RMSG_KO" || return 1
	fi
}

if ! setup >"$run/setup.$node" 2>&1; then
	cat "$run/setup.$node"
	finish "setup-failed"
fi
# For rmsg-vm's boot watch: this guest booted, set up, and reaches its
# command now.
echo "$SECONDS" >"$run/booted.$node"

# What every task is doing, for a command that hangs: the host's hard
# limit would otherwise kill the guest with nothing to show.
dump_tasks() {
	local p t line

	echo "rmsg-vm: the command still runs after ${RMSG_DEADLINE} s: tasks"
	ps -eo pid,ppid,stat,wchan:32,comm | awk '$3 !~ /^I/'
	for p in /proc/[0-9]*; do
		# Kernel threads have no command line (procfs sizes are 0).
		line=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-80)
		[ -n "$line" ] || continue
		for t in "$p"/task/*; do
			echo "rmsg-vm: $line(${p#/proc/}, thread ${t##*/}):"
			sed 's/^/    /' "$t/stack" 2>/dev/null
		done
	done
	echo w >/proc/sysrq-trigger
	echo l >/proc/sysrq-trigger
}

bash -c "$RMSG_CMD" </dev/null &
cmd=$!
watchdog=
if [ "${RMSG_DEADLINE:-0}" -gt 0 ]; then
	(sleep $((RMSG_DEADLINE - SECONDS)) && kill -0 "$cmd" 2>/dev/null &&
	 dump_tasks) &
	watchdog=$!
fi
# A task blocked for hung_task_timeout_secs ends the run at once, red, with
# every blocked task's stack in the saved log: the kernel prints those at
# KERN_INFO, below the console's level, and a hang left alone only turns
# every later test red. (Soft lockups panic: softlockup_panic=1, rmsg-vm.)
echo 60 >/proc/sys/kernel/hung_task_timeout_secs
(
	while sleep 5; do
		dmesg | grep -q 'blocked for more than' || continue
		echo "rmsg-vm: a task is blocked (hung_task_timeout_secs): stacks in the kernel log"
		echo w >/proc/sysrq-trigger
		dmesg | grep -A 40 'blocked for more than' | head -n 120
		dmesg >"$run/dmesg.$node" 2>&1
		echo hung-task >"$run/status.$node"
		sync
		poweroff -f
	done
) &
hangwatch=$!
wait "$cmd"
status=$?
[ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
kill "$hangwatch" 2>/dev/null

# rmsg's own objects all gone, then the module unloads, and the kernel's
# memory is back where it was before it was loaded (tools/testing/leak-check).
if [ -d /sys/module/rmsg ] && ! tools/testing/leak-check objects; then
	[ "$status" = 0 ] && status=leaked-objects
fi
# A module that cannot be unloaded after its tests is a failure of its own.
if [ -d /sys/module/rmsg ] && ! rmmod rmsg; then
	echo "rmsg-vm: rmmod rmsg failed after the command"
	[ "$status" = 0 ] && status=unload-failed
fi
# The devices are made again first: the RDMA core's CQ pool is theirs
# (tools/testing/leak-check).
if [ -e "$run/leak-base.$node" ] && [ ! -d /sys/module/rmsg ] &&
   ! { tools/testing/leak-check devices-again &&
       tools/testing/leak-check compare "$run/leak-base.$node"; }; then
	[ "$status" = 0 ] && status=leaked-memory
fi
finish "$status"
