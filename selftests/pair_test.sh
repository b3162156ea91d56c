#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The two-node topology: each guest sees its own rxe device through rmsg, and
# RDMA traffic (rdma_cm connection, RDMA WRITE ping-pong) crosses between the
# guests. Run on both nodes by `rmsg-vm -t pair`; node 0 prints KTAP.

cd "$(dirname "$0")/.." || exit 1
node=${RMSG_NODE:?}
peer=${RMSG_PEER_ADDR:?}
ctl=tools/rmsgctl/rmsgctl

if [ "$node" = 1 ]; then
	# The server side of the cross-node test, for as long as node 0 needs:
	# a client that dies half-way (perftest's client has been seen to
	# crash when it connects too early on a loaded host) ends one server
	# run, so serve again until one run succeeds or time is up.
	end=$((SECONDS + 240))
	while ((SECONDS < end)); do
		timeout $((end - SECONDS)) ib_write_lat -R -x 1 -s 64 -n 50 \
			>/tmp/lat.log 2>&1 && break
		sleep 1
	done
	exit 0
fi

echo "TAP version 13"
echo "1..3"
n=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

$ctl dev | grep -Eq '^rxe0 +1 ACTIVE'
result $? "pair.rmsg_sees_local_rxe_active"

# The peer is reachable over the guests' network.
ok=1
for _ in $(seq 1 60); do
	if ping -c 1 -W 1 "$peer" >/dev/null 2>&1; then ok=0; break; fi
done
result $ok "pair.peer_reachable"

# rdma_cm connects across the guests and RDMA WRITEs flow both ways. The
# peer's server may not be listening yet: retry.
ok=1
for _ in $(seq 1 60); do
	if timeout 60 ib_write_lat -R -x 1 -s 64 -n 50 "$peer" \
			>/tmp/lat.log 2>&1; then
		ok=0
		break
	fi
	sleep 1
done
[ $ok = 0 ] || sed 's/^/# /' /tmp/lat.log
result $ok "pair.rdma_write_across_nodes"
grep -E '^ *64 ' /tmp/lat.log | sed 's/^/# ib_write_lat: /'
