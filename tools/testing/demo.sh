#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo `make run` shows inside the guest: what rmsg sees of the RDMA
# devices, and how it follows one that goes away and comes back.

cd "$(dirname "$0")/../.." || exit 1
ctl=tools/rmsgctl/rmsgctl

step() { printf '\n== %s\n' "$*"; }

step "rmsg.ko loaded; the module and library agree on the ABI"
$ctl version || exit 1

step "RDMA devices as rmsg sees them (Soft-RoCE on $RMSG_NETDEV, $RMSG_LOCAL_ADDR)"
$ctl dev || exit 1

step "the link goes down: rmsg sees the port event"
ip link set "$RMSG_NETDEV" down
sleep 1
$ctl dev
ip link set "$RMSG_NETDEV" up
sleep 1

step "the device is removed (as a hot-unplugged or reset HCA would be)"
rdma link delete rxe0
$ctl dev

step "and added back"
rdma link add rxe0 type rxe netdev "$RMSG_NETDEV"
for _ in $(seq 50); do
	$ctl dev | grep -q '^rxe0 .* ACTIVE' && break
	sleep 0.1
done
$ctl dev
$ctl --json dev
