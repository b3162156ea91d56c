#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gsi-deaf.sh: does rxe still hear connection replies after a CM message
# was sent while its port was down? Run in the guest without rmsg:
#
#   tools/testing/rmsg-vm -n -T 300 tools/testing/gsi-deaf.sh
#   RMSG_KVER=6.12 tools/testing/rmsg-vm -n -T 300 tools/testing/gsi-deaf.sh
#
# An rping connection on rxe0 (both ends in this guest), the link taken
# down, both ends killed while it is down (the kernel destroys their
# rdma_cm ids, which send a DREQ through the down port), the link up
# again, then a new rping connection, which must be made within 30 s.
# GSI_DEAF_CONTROL=1: the ends are killed before the link goes down (their
# DREQs go out on a live port), the control that shows a flap alone does
# not keep the new connection from coming.
# On Linux 6.1 rxe moves the GSI QP to the error state when such a send
# fails and its receive side never comes back (Documentation/
# resilience.rst, "A port that is down"): the new connection never gets
# its reply. Exit 0: connected (the node hears); 1: deaf; 2: the set-up
# failed, which says nothing.

set -u

addr=${RMSG_LOCAL_ADDR:-}
dev=${RMSG_NETDEV:-}
if [ -z "$addr" ] || [ -z "$dev" ]; then
	echo "gsi-deaf: no RMSG_LOCAL_ADDR or RMSG_NETDEV: run by rmsg-vm" >&2
	exit 2
fi

# Wait up to $2 seconds for rxe0's port to be in state $1.
port_state() {
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		rdma link show rxe0/1 | grep -q "state $1 " && return 0
		sleep 0.1
	done
	return 1
}

# The GSI QP's send and receive errors so far (rdma statistic, if any).
gsi_counters() {
	rdma statistic show link rxe0/1 2>/dev/null | tr ' ' '\n' |
		grep -A1 -i 'err\|retry' | paste -sd ' ' | head -c 300
}

echo "# kernel $(uname -r)"
port_state ACTIVE 20 || { echo "gsi-deaf: rxe0 not ACTIVE" >&2; exit 2; }
rping -s -a "$addr" -p 7174 -C 1000000 >/dev/null 2>&1 &
server=$!
sleep 1
rping -c -a "$addr" -p 7174 -C 1000000 -S 64 >/dev/null 2>&1 &
client=$!
sleep 3
if ! kill -0 "$client" 2>/dev/null; then
	echo "gsi-deaf: the first rping connection did not run" >&2
	kill -9 "$server" 2>/dev/null
	exit 2
fi
if [ "${GSI_DEAF_CONTROL:-0}" = 1 ]; then
	echo "# first connection up; both ends killed, then $dev down (control)"
	kill -9 "$client" "$server"
	wait "$client" "$server" 2>/dev/null
	sleep 2
	ip link set "$dev" down
	port_state DOWN 20 || echo "# rxe0 did not say DOWN in 20 s"
else
	echo "# first connection up; $dev down, both ends killed"
	ip link set "$dev" down
	port_state DOWN 20 || echo "# rxe0 did not say DOWN in 20 s"
	kill -9 "$client" "$server" 2>/dev/null
	wait "$client" "$server" 2>/dev/null
fi
sleep 3
ip link set "$dev" up
port_state ACTIVE 30 || { echo "gsi-deaf: rxe0 not ACTIVE again" >&2; exit 2; }
sleep 2
echo "# $dev up, rxe0 ACTIVE; a new connection"
rping -s -a "$addr" -p 7175 -C 3 >/dev/null 2>&1 &
server=$!
sleep 1
timeout 30 rping -c -a "$addr" -p 7175 -C 3 -S 64 -v >/tmp/gsi-deaf.out 2>&1
status=$?
kill -9 "$server" 2>/dev/null
wait "$server" 2>/dev/null
echo "# counters: $(gsi_counters)"
if [ "$status" = 0 ] && grep -q 'ping data' /tmp/gsi-deaf.out; then
	echo "ok: the new connection came"
	exit 0
fi
echo "deaf: no new connection (rping exited $status: $(tail -n 2 /tmp/gsi-deaf.out | tr '\n' ' '))"
exit 1
