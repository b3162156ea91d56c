#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The link flap experiment (Documentation/resilience.rst, "Tests",
# pair.link_flap_stream): FLAPS flaps of node 0's link, one after another
# in one boot, each under a byte-checked stream of 4 channels with the
# rendezvous mix. Run on the pair:
#
#   tools/testing/rmsg-vm -t pair env FLAPS=20 tools/testing/flap.sh
#
# Node 1 serves one stream per flap; node 0 runs each stream, takes its
# link down for 2 s and up again, and counts the streams that did not
# survive. For a failed one it prints the kernel log, the trace of the
# CM and MAD layers (with the stack of every MAD send: which code sent
# what while the port was down) and the GSI QPs, then makes rxe0 again
# for the next flap. Heartbeats run at 250 ms, and node 0's second
# network is taken away, so that each outage is repaired on rxe0.
# Exits non-zero if any flap was not recovered.
#
# In the loopback guest (tools/testing/rmsg-vm env FLAPS=4
# tools/testing/flap.sh) the server runs beside the stream, and the link
# under both ends of every channel flaps, for 3 s: before rmsg asked the
# netdev whether the port was down, 3 of 4 such flaps broke QP1 for good
# (Documentation/resilience.rst, "rxe after a link flap").

set -u
cd "$(dirname "$0")/../.." || exit 1

perf=tools/rmsg-perf/rmsg-perf
flaps=${FLAPS:-5}
trace=/sys/kernel/tracing

mountpoint -q "$trace" || mount -t tracefs nodev "$trace"
for e in ib_mad ib_cma ib_cm rmsg; do
	[ -d "$trace/events/$e" ] && echo 1 >"$trace/events/$e/enable"
done
echo stacktrace >"$trace/events/ib_mad/ib_mad_ib_send_mad/trigger"
echo 4096 >"$trace/buffer_size_kb"
echo 'module rmsg +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
echo 250 >/sys/module/rmsg/parameters/heartbeat_ms
loopback=0
down_s=2
if [ "$RMSG_PEER_ADDR" = "$RMSG_LOCAL_ADDR" ]; then
	loopback=1
	down_s=3
else
	ip addr del "$RMSG_LOCAL_ADDR2/24" dev "$RMSG_NETDEV2"
fi

if [ "$RMSG_NODE" = 1 ]; then
	for i in $(seq 1 "$flaps"); do
		timeout 100 "$perf" -T 30 -p $((18620 + i)) recover \
			>/tmp/flap-server.log 2>&1
		echo "node 1: server $i: status $?"
		sed -n 's/^  ep /node 1:   ep /p' /tmp/flap-server.log
	done
	sleep 5
	exit 0
fi

fails=0
for i in $(seq 1 "$flaps"); do
	if [ "$loopback" = 1 ]; then
		timeout 100 "$perf" -T 30 -p $((18620 + i)) recover \
			>/tmp/flap-server.log 2>&1 &
		spid=$!
	fi
	"$perf" --json -T 20 -p $((18620 + i)) -s 1024 -c 4 -W 8 --full-check \
		--rndv-every=7 --fault=none -D 15 recover "$RMSG_PEER_ADDR" \
		>/tmp/flap-stream.json 2>/tmp/flap-stream.log &
	pid=$!
	sleep 4
	echo >"$trace/trace"
	dmesg -C
	ip link set "$RMSG_NETDEV" down
	sleep "$down_s"
	ip link set "$RMSG_NETDEV" up
	wait "$pid"
	st=$?
	if [ "$loopback" = 1 ] && ! wait "$spid"; then
		st=1
	fi
	echo "flap $i: stream status $st"
	grep "  ep " /tmp/flap-stream.log
	[ "$st" = 0 ] && continue
	fails=$((fails + 1))
	echo "=== kernel log"
	dmesg | grep -v "speed is unknown" | head -80
	echo "=== trace"
	grep -v "^#" "$trace/trace" |
		grep -vE "recv_done_agent|send_done_agent" | head -600 |
		cut -c1-300
	rdma res show qp | grep GSI
	rdma link delete rxe0
	rdma link add rxe0 type rxe netdev "$RMSG_NETDEV"
	sleep 3
done
echo "flaps: $flaps, not recovered: $fails"
[ "$fails" = 0 ]
