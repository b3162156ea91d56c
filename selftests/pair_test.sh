#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The two-node topology: each guest sees its own rxe device through rmsg, and
# RDMA traffic (rdma_cm connection, RDMA WRITE ping-pong) crosses between the
# guests. Run on both nodes by `rmsg-vm -t pair`; node 0 prints KTAP.
#
# libfabric's fi_pingpong (Debian's, unmodified) then runs across the
# guests over the rmsg provider (build/prov/librmsg-fi.so), its own data
# check on (-c), fi_pingpong's default sizes: node 1 serves, node 0's
# client must exit 0 with every size done.
#
# Then faults the loopback topology cannot make, each under a byte-checked
# stream across the nodes (`rmsg-perf --fault=none recover`: node 0 connects
# PAIR_CHANNELS channels to node 1 and keeps PAIR_WINDOW messages out on
# each, every byte checked, node 1 checks each and answers with its own
# sequence; nothing may be lost, repeated or reordered either way):
#
#   netem_loss    PAIR_LOSS random loss on node 0's egress for
#                 PAIR_NETEM_S seconds (its data and its acknowledgements
#                 of node 1's data)
#   outage        every packet node 0 sends dropped (netem loss 100%) for
#                 PAIR_OUTAGE_S seconds: the fabric between the nodes
#                 fails and comes back while both links stay up; the
#                 QPs' retries run out or heartbeats find the silence,
#                 and repairs must get through once it is over
#   peer_readd    node 1 deletes its rxe0 mid-stream and makes it again
#                 PAIR_READD_S seconds later: both ends repair, node 1's
#                 channels on the new device
#   failover_local      node 0 deletes its rxe0 mid-stream: the repairs
#                       dial node 1's second address, the channels move to
#                       rxe1 (the second network) with nothing re-added
#   failover_peer       node 1 deletes its rxe0 mid-stream: the same
#   failover_link_down  node 0's link under rxe0 goes down mid-stream (and
#                       stays down): the same
#   link_flap     node 0's link down for PAIR_FLAP_S seconds, then up
#   peer_killed   node 1 resets itself (tools/testing/vm-halt) mid-stream:
#                 node 0's channels must end with ETIMEDOUT within a bound
#                 of the peer's going silent (heartbeats, then a repair
#                 that gives up after repair_timeout_ms, set to
#                 PAIR_GIVE_UP_MS), and rmsg.ko must unload afterwards.
#
# A slow guest kernel (make check-debug: lockdep and KASAN under emulation)
# sets RMSG_TEST_SLOW=N, as for the other selftests (selftests/rmsg_test.h):
# each fault and each stream lasts N times as long, so that the same number
# of messages and heartbeats happen in it, and every limit for something
# that has stopped is N times longer. The minimums a test asserts (messages,
# repairs) stay as they are.
#
# Each stream test has its own port, so that node 1's servers, which run
# one after the other, cannot serve the wrong test. Documentation/
# resilience.rst ("Tests") describes them.

cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
node=${RMSG_NODE:?}
peer=${RMSG_PEER_ADDR:?}
here=${RMSG_LOCAL_ADDR:?}
netdev=${RMSG_NETDEV:?}
netdev2=${RMSG_NETDEV2:?}
local2=${RMSG_LOCAL_ADDR2:?}
ctl=tools/rmsgctl/rmsgctl
perf=tools/rmsg-perf/rmsg-perf
params=/sys/module/rmsg/parameters

slow=${RMSG_TEST_SLOW:-1}
[[ "$slow" =~ ^[1-9][0-9]?$ ]] || slow=1
# $1 seconds scaled for this guest.
secs() { echo $(($1 * slow)); }
channels=${PAIR_CHANNELS:-4}
window=${PAIR_WINDOW:-8}
size=${PAIR_SIZE:-1024}
# Every Nth message of each direction by rendezvous (0: eager only).
rndv_every=${PAIR_RNDV_EVERY:-7}
# 0 leaves failover_link_down out (it skips and says so).
fo_link_down=${PAIR_FAILOVER_LINK_DOWN:-1}
flap_s=${PAIR_FLAP_S:-$(secs 2)}
outage_s=${PAIR_OUTAGE_S:-$(secs 4)}
readd_s=${PAIR_READD_S:-$(secs 1)}
loss=${PAIR_LOSS:-5%}
netem_s=${PAIR_NETEM_S:-$(secs 6)}
give_up_ms=${PAIR_GIVE_UP_MS:-$((5000 * slow))}
fo_down_s=${PAIR_FO_DOWN_S:-$(secs 4)}
port_flap=18620
port_netem=18621
port_kill=18622
port_outage=18623
port_readd=18624
port_fo_local=18625
port_fo_peer=18626
port_fo_link=18627

# The open channels of process $1 (all processes: no argument).
open_chans() {
	$ctl chan 2>/dev/null |
		awk -v pid="${1:-}" '$4 == "OPEN" && (pid == "" || $2 == pid)' |
		wc -l
}

# Wait up to $2 seconds (scaled) for $1 open channels (of process $3, if
# given).
wait_open() {
	local end=$((SECONDS + $(secs "$2")))

	while ((SECONDS < end)); do
		[ "$(open_chans "${3:-}")" -ge "$1" ] && return 0
		sleep 0.2
	done
	return 1
}

# One stream server (node 1); it ends after its client's BYE.
serve() {
	local status

	trace_clear
	timeout "$(secs 150)" $perf -T "$(secs 30)" -p "$1" recover 2>&1 | sed "s/^/$2: /"
	status=${PIPESTATUS[0]}
	echo "$2: server status $status"
	[ "$status" = 0 ] || trace_tail 60 | sed "s/^/$2: /"
}

# rmsg's tracepoints on both nodes: a stream that fails shows the history
# of its channels at both ends (faults, repair phases, states), cleared
# when the stream starts. Best effort: a kernel without tracefs has none.
tracing=/sys/kernel/tracing
mountpoint -q $tracing || mount -t tracefs nodev $tracing 2>/dev/null
echo 4096 >$tracing/buffer_size_kb 2>/dev/null
echo 1 >$tracing/events/rmsg/enable 2>/dev/null
trace_clear() { : >$tracing/trace 2>/dev/null; }
trace_tail() {
	[ -r $tracing/trace ] || return 0
	echo "rmsg's tracepoints since the stream began (last $1):"
	grep -v '^#' $tracing/trace | tail -n "$1"
}

# A connection takes seconds to make on a slow guest kernel: the time one
# repair attempt may take and the time a repair may take in all are scaled
# on both nodes as well (make check-debug's outage and link flap ran out of
# the 5 s per attempt, every attempt, until the channels gave up).
if [ "$slow" -gt 1 ]; then
	for p in repair_attempt_ms repair_timeout_ms; do
		echo $(($(cat $params/$p) * slow)) >$params/$p
	done
fi

# Why fi_pingpong over the provider cannot run here, or false.
fipp_unavailable() {
	if [ ! -e build/prov/librmsg-fi.so ]; then
		echo "build/prov/librmsg-fi.so not built (no libfabric-dev: make deps)"
	elif ! command -v fi_pingpong >/dev/null; then
		echo "no fi_pingpong (libfabric-bin: make deps)"
	else
		return 1
	fi
}

if [ "$node" = 1 ]; then
	# The server side of the cross-node test, for as long as node 0 needs:
	# a client that dies half-way (perftest's client has been seen to
	# crash when it connects too early on a loaded host) ends one server
	# run, so serve again until one run succeeds or time is up.
	end=$((SECONDS + $(secs 240)))
	while ((SECONDS < end)); do
		timeout $((end - SECONDS)) ib_write_lat -R -x 1 -s 64 -n 50 \
			>/tmp/lat.log 2>&1 && break
		sleep 1
	done
	# The provider's ping-pong, if node 0 can run one (it skips the
	# same way): one run, for as long as node 0 may take to come.
	if fipp_skip=$(fipp_unavailable); then
		echo "fi_pingpong: $fipp_skip"
	else
		FI_PROVIDER_PATH=$PWD/build/prov FI_RMSG_ADDR=$here \
			timeout "$(secs 180)" \
			fi_pingpong -p rmsg -e rdm -c -I 2 >/tmp/fipp.log 2>&1
		echo "fi_pingpong server: status $?"
		tail -n 3 /tmp/fipp.log | sed 's/^/fi_pingpong server: /'
	fi
	serve $port_netem netem_loss
	serve $port_outage outage
	# Its device goes and comes back under the stream it serves.
	serve $port_readd peer_readd &
	rpid=$!
	if wait_open "$channels" 150; then
		sleep "$(secs 2)"
		rdma link delete rxe0
		sleep "$readd_s"
		rdma link add rxe0 type rxe netdev "$netdev"
		echo "peer_readd: rxe0 deleted and made again"
	fi
	wait "$rpid"
	# Failover: node 0 loses its rxe0, then node 1 does (made again once
	# the stream is over), then node 0 loses its link.
	serve $port_fo_local failover_local
	serve $port_fo_peer failover_peer &
	rpid=$!
	if wait_open "$channels" 150; then
		sleep "$(secs 2)"
		rdma link delete rxe0
		echo "failover_peer: rxe0 deleted"
	fi
	wait "$rpid"
	rdma link add rxe0 type rxe netdev "$netdev"
	[ "$fo_link_down" = 1 ] && serve $port_fo_link failover_link_down
	serve $port_flap link_flap
	# The last one: die a few seconds into node 0's stream.
	$perf -T "$(secs 60)" -p $port_kill recover >/tmp/kill.log 2>&1 &
	spid=$!
	if wait_open "$channels" 150 "$spid"; then
		sleep "$(secs 3)"
		tools/testing/vm-halt "peer_killed, $(open_chans "$spid") channels open"
	fi
	echo "peer_killed: no client came"
	kill "$spid"
	exit 0
fi

echo "TAP version 13"
echo "1..13"
n=0
failed=0
# Each result followed by its time since the previous one, as run.sh
# does: where the stage's time goes.
result_at=${EPOCHREALTIME/./}
result() {
	local now=${EPOCHREALTIME/./}

	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
	echo "# time: $(((now - result_at) / 1000)) ms"
	result_at=$now
}
diag() { sed 's/^/# /' "$@"; }

# Node 0's egress goes through netem from the start, losing nothing until
# a test sets its loss with "tc qdisc change". Adding or deleting a root
# qdisc swaps it (dev_graft_qdisc()), and a packet sent meanwhile gets
# NET_XMIT_CN from the placeholder qdisc; rxe on Linux 6.12 takes that for
# a failed send and moves the sending QP to the error state, the GSI QP
# too, after which this node's connection manager hears nothing until its
# rxe device is made again (Documentation/testbed.rst). 6.1's rxe counts
# NET_XMIT_CN as sent. The limit is above what rxe can have queued, so the
# queue never refuses a packet either.
# On 6.1 the qdisc is added and deleted around each lossy stream, as the
# pair stage always passed that way there; with netem kept as the root
# qdisc the whole run, 6.1's peer_readd and failover streams failed (their
# channels stayed 50 s in the repair's DOWN step; not yet explained).
netem_limit=100000
netem_kept=1
netem_start=change
if [[ "$(uname -r)" == 6.1.* ]]; then
	netem_kept=0
	netem_start=add
fi
if [ "$netem_kept" = 1 ] &&
   ! tc qdisc replace dev "$netdev" root netem loss 0% limit $netem_limit; then
	echo "# tc qdisc replace ... netem failed: the loss tests will fail"
fi

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
	if timeout "$(secs 60)" ib_write_lat -R -x 1 -s 64 -n 50 "$peer" \
			>/tmp/lat.log 2>&1; then
		ok=0
		break
	fi
	sleep 1
done
[ $ok = 0 ] || diag /tmp/lat.log
result $ok "pair.rdma_write_across_nodes"
grep -E '^ *64 ' /tmp/lat.log | sed 's/^/# ib_write_lat: /'

# fi_pingpong over the provider across the guests. Node 1's server starts
# as its ib_write_lat server ends; a client that comes too early finds its
# out-of-band port closed (nothing reached the server), and tries again.
if fipp_skip=$(fipp_unavailable); then
	echo "ok $((n + 1)) pair.fi_pingpong_across_nodes # SKIP $fipp_skip"
	n=$((n + 1))
	result_at=${EPOCHREALTIME/./}
else
	ok=1
	for _ in $(seq 1 30); do
		sleep 1
		FI_PROVIDER_PATH=$PWD/build/prov FI_RMSG_ADDR=$here \
			timeout "$(secs 150)" \
			fi_pingpong -p rmsg -e rdm -c -I 2 "$peer" \
			>/tmp/fipp.log 2>&1 && { ok=0; break; }
		grep -qi 'refused' /tmp/fipp.log || break
	done
	# Every default size ran, up to 1 MiB, and nothing said error.
	if [ $ok = 0 ] && { ! grep -q '^1m ' /tmp/fipp.log ||
			   grep -qi 'error\|fail' /tmp/fipp.log; }; then
		ok=1
	fi
	[ $ok = 0 ] || diag /tmp/fipp.log
	result $ok "pair.fi_pingpong_across_nodes"
	grep -E '^(64|1k|1m) ' /tmp/fipp.log | sed 's/^/# fi_pingpong: /'
fi

# Node 0 leaves the second network (its address there) except for the
# failover tests: the tests before and after them are about what happens
# on one network (a re-add, an outage, a flap), which a failover would
# otherwise bypass. Node 1's ACCEPTs still list its second address; node
# 0's attempts there fail at once (no route) and cost a back-off step.
ip addr del "$local2/24" dev "$netdev2"

# field NAME: a number of the stream's JSON line.
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" /tmp/stream.json; }

# rxe's counters of the ports, DEV.NAME=VALUE, for what RC did about a
# fault (rxe1 is the second network's device, for failover).
# One grep per device: a cat and a basename per counter (two processes
# each, some 80 in all) took about 10 s in a guest under TCG, twice a test.
rxe_counters() {
	local d dir

	for d in rxe0 rxe1; do
		dir=/sys/class/infiniband/$d/ports/1/hw_counters
		[ -d "$dir" ] || continue
		grep -H . "$dir"/* | sed "s|^.*/\([^/:]*\):|$d.\1=|"
	done | sort
}

# What changed in rxe's counters since the snapshot in /tmp/counters.0.
counter_diff() {
	rxe_counters >/tmp/counters.1
	join -t= /tmp/counters.0 /tmp/counters.1 |
		awk -F= '$3 != $2 { printf " %s +%d", $1, $3 - $2 }'
}

# Start the checked stream to node 1 on port $1 for $2 seconds (scaled),
# in the background, and wait for its channels to open.
#
# A stream lasts its fault's time, the repairs' (as make check's logs
# show them under emulation), and a few seconds of traffic after them on
# the repaired channels, no more: the tests' minimums (messages, repairs)
# are met in that time, and what matters after a repair is that the
# stream goes on exact. A stream whose -D ends before its channels are
# back does not pass for that: rmsg-perf waits for every echo (up to its
# -T without one) before it ends and reports, so the repair must still
# come, and the counts are the same.
stream_start() {
	rxe_counters >/tmp/counters.0
	trace_clear
	$perf --json -T "$(secs 20)" -p "$1" -s "$size" -c "$channels" \
		-W "$window" --full-check --rndv-every="$rndv_every" \
		--fault=none -D "$(secs "$2")" \
		recover "$peer" \
		>/tmp/stream.json 2>/tmp/stream.log &
	stream_pid=$!
	stream_t0=$SECONDS
	wait_open "$channels" 60 "$stream_pid"
	stream_open=$SECONDS
	echo "# stream to port $1: channels open after $((stream_open - stream_t0)) s"
}

# Wait for the stream; 0 if it ended well, with nothing lost, repeated or
# reordered (rmsg-perf checks every message and fails otherwise), after
# more than $1 messages and with at least $2 repairs on either side.
stream_check() {
	local status lost sent repairs peer_repairs rndv

	wait "$stream_pid"
	status=$?
	sent=$(field msgs_sent)
	lost=$(field lost)
	repairs=$(field repairs)
	peer_repairs=$(field peer_repairs)
	rndv=$(field rndv_sent)
	echo "# messages ${sent:-?} each way (${rndv:-?} by rendezvous), lost ${lost:-?}, repairs ${repairs:-?} here, ${peer_repairs:-?} at node 1, written again $(field retx_msgs)/$(field peer_retx_msgs) msgs, $((SECONDS - stream_t0)) s"
	echo "# rxe counters:$(counter_diff)"
	grep -E '^  ep ' /tmp/stream.log | sed 's/^/# channel:/'
	if [ "$status" != 0 ] || [ -z "$sent" ] || [ "$lost" != 0 ] ||
	   [ "$sent" -le "$1" ] || [ $((repairs + peer_repairs)) -lt "$2" ] ||
	   { [ "$rndv_every" != 0 ] && [ "${rndv:-0}" -lt 1 ]; }; then
		echo "# stream failed (status $status) or not as it must be:"
		diag /tmp/stream.log
		trace_tail 100 | diag
		# A transmit queue of the testbed's that stopped (testbed.rst,
		# "The pair's transmit stall") fails a stream for reasons
		# of its own: say so.
		dmesg | grep -a 'NETDEV WATCHDOG' | tail -n 3 | diag
		ip -s link show "$netdev" | diag
		return 1
	fi
	return 0
}

# Under the stream to port $1 (running $2 seconds), from its third second:
# netem loss $3 on node 0's egress for $4 seconds; then at least $5
# repairs. Prints as test $6. 0 when the stream came through.
netem_stream() {
	local port=$1 secs=$2 loss=$3 for_s=$4 repairs=$5 name=$6

	if ! stream_start "$port" "$secs"; then
		echo "# $name: the stream's channels did not open"
		wait "$stream_pid"
		diag /tmp/stream.log
		return 1
	fi
	sleep "$(secs 2)"
	if ! tc qdisc "$netem_start" dev "$netdev" root netem loss "$loss" \
			limit $netem_limit; then
		echo "# $name: tc qdisc ... netem loss $loss failed"
		kill "$stream_pid"
		return 1
	fi
	rxe_counters >/tmp/counters.f
	sleep "$for_s"
	tc -s qdisc show dev "$netdev" | diag
	if [ "$netem_kept" = 1 ]; then
		tc qdisc change dev "$netdev" root netem loss 0% \
			limit $netem_limit
	else
		tc qdisc del dev "$netdev" root
	fi
	echo "# $name: $loss loss on $netdev for ${for_s} s; rxe0 meanwhile:$(
		rxe_counters | join -t= /tmp/counters.f - |
		awk -F= '$1 ~ /^rxe0.(sent|rcvd)_pkts$/ { printf " %s +%d", $1, $3 - $2 }')"
	stream_check 100 "$repairs"
}

# (a) Random loss on node 0's egress: RC retransmits; repairs allowed.
netem_stream $port_netem $((netem_s / slow + 6)) "$loss" "$netem_s" 0 netem_loss
result $? "pair.netem_loss_stream"

# (b) The fabric fails for a few seconds and comes back, links up: every
# packet node 0 sends is dropped. With heartbeats at a quarter of their
# period (4 x 250 ms) the outage is a repair at the latest after a second;
# its attempts fail until the packets flow again, and the stream must go
# on exact.
hb_ms=$(cat $params/heartbeat_ms)
echo 250 >$params/heartbeat_ms
netem_stream $port_outage $((outage_s / slow + 12)) 100% "$outage_s" 1 outage
ok=$?
echo "$hb_ms" >$params/heartbeat_ms
result $ok "pair.outage_stream"

# (c) Node 1's device goes away mid-stream and comes back (node 1 does it
# 2 s after the channels opened; it serves this stream alone). Node 1's
# channels repair onto the new rxe0, node 0's redial until it is there.
# The repairs end some 8 s into the stream (5 s in recovery): 11 s leave
# 3 s after them (14 s before).
ok=1
if stream_start $port_readd 11; then
	stream_check 100 1 && ok=0
else
	echo "# peer_readd: the stream's channels did not open"
	wait "$stream_pid"
	diag /tmp/stream.log
fi
result $ok "pair.peer_readd_stream"

# Failover (d to f): under the stream to port $1 ($2 seconds), two
# seconds in, run $3 (a fault that leaves the first network unusable to
# node 0's channels). The stream must stay exact, and every channel of
# node 0 must have been repaired and be on rxe1, the second network's
# device, at the end: the repairs dialled node 1's second address, which
# node 1 listed when it accepted (Documentation/resilience.rst,
# "Failover"). Prints as test $4.
failover_stream() {
	local port=$1 secs=$2 fault=$3 name=$4 moved

	if ! stream_start "$port" "$secs"; then
		echo "# $name: the stream's channels did not open"
		wait "$stream_pid"
		diag /tmp/stream.log
		return 1
	fi
	sleep "$(secs 2)"
	echo "# $name: $fault"
	if ! eval "$fault"; then
		echo "# $name: the fault failed"
		kill "$stream_pid"
		wait "$stream_pid"
		return 1
	fi
	stream_check 100 "$channels" || return 1
	moved=$(grep -Ec '^  ep .* OPEN .* repairs [1-9][0-9]* .* dev rxe1$' \
		/tmp/stream.log)
	echo "# $name: $moved of $channels channels repaired onto rxe1"
	[ "$moved" = "$channels" ]
}

# Make rxe0 on $netdev again (after a test took it away) and wait for it.
rxe0_again() {
	rdma link delete rxe0 2>/dev/null
	rdma link add rxe0 type rxe netdev "$netdev"
	for _ in $(seq 1 $((50 * slow))); do
		$ctl dev | grep -Eq '^rxe0 +1 ACTIVE' && break
		sleep 0.2
	done
	echo "# rxe0 made again: $($ctl dev | grep '^rxe0')"
}

# The second network is node 0's again.
ip addr add "$local2/24" dev "$netdev2"
hb_ms=$(cat $params/heartbeat_ms)
echo 250 >$params/heartbeat_ms
# (d) Node 0's rxe0 goes: its channels' repairs find no device on the
# first network and dial node 1's second address. They take well under a
# second: 10 s of stream leave 8 after them (16 s before).
failover_stream $port_fo_local 10 "rdma link delete rxe0" failover_local
result $? "pair.failover_local_stream"
rxe0_again
# (e) Node 1's rxe0 goes (node 1 deletes it 2 s after the channels
# opened): node 0's attempts on the first network go unanswered until
# one times out (repair_attempt_ms), and the next dials the second.
# That is some 8-9 s into the stream: 14 s leave 5 after it (20 before).
failover_stream $port_fo_peer 14 true failover_peer
result $? "pair.failover_peer_stream"
# (f) Node 0's link under rxe0 goes down for PAIR_FO_DOWN_S seconds, then
# up: the repairs find no route on the first network and go to rxe1. The
# broken connections' ids wait, parked, until the port is up again (no
# DREQ through a port that is down: resilience.rst, "A port that is
# down").
# The channels are on rxe1 within a second of the link going down; the
# link comes back 6 s into the stream and the parked ids go then: 12 s of
# stream leave 6 after that (18 s before).
if [ "$fo_link_down" = 1 ]; then
	failover_stream $port_fo_link 12 \
		"ip link set $netdev down && sleep $fo_down_s && ip link set $netdev up" \
		failover_link_down
	ok=$?
	ip link set "$netdev" up
	rxe0_again
	result $ok "pair.failover_link_down_stream"
else
	n=$((n + 1))
	echo "ok $n pair.failover_link_down_stream # SKIP PAIR_FAILOVER_LINK_DOWN=0"
fi
echo "$hb_ms" >$params/heartbeat_ms
# Back to one network for the tests after these.
ip addr del "$local2/24" dev "$netdev2"

# (g) The link under rxe0 down and up again, mid-stream. Heartbeats at a
# quarter of their period (4 x 250 ms) make the outage a repair, not only
# RC retransmissions. The repairs must come back on rxe0 once the link is
# up. rmsg sends no CM message through the port while it is down, since
# on the guest's 6.1 kernel one failed send leaves rxe0's GSI QP deaf
# (resilience.rst, "A port that is down"); a MAD layer retransmission
# can still be one. So when the stream fails and rxe0 cannot even connect
# to itself any more (selfprobe), the test skips and says so; when it
# fails with rxe0 healthy, it fails. rxe0 is made again after a failure.

# Can rxe0 make an rdma_cm connection to its own address? (A GSI QP that
# no longer receives cannot.)
selfprobe() {
	local addr rc spid

	addr=$(ip -4 -o addr show dev "$netdev" | awk '{ print $4 }' |
		cut -d/ -f1 | head -1)
	timeout "$(secs 20)" ib_write_lat -R -p 18990 -n 5 >/dev/null 2>&1 &
	spid=$!
	sleep "$(secs 1)"
	timeout "$(secs 15)" ib_write_lat -R -p 18990 -n 5 "$addr" >/dev/null 2>&1
	rc=$?
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	return $rc
}

ok=1
skip=
hb_ms=$(cat $params/heartbeat_ms)
echo 250 >$params/heartbeat_ms
klog0=$(dmesg | wc -l)
# The link is back 4 s into the stream and the repairs on rxe0 some 3 s
# after: 11 s of stream leave 4 after them (15 s before).
if stream_start $port_flap 11; then
	sleep "$(secs 2)"
	ip link set "$netdev" down
	sleep "$flap_s"
	ip link set "$netdev" up
	echo "# link_flap: $netdev down for ${flap_s} s; rxe0 port: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
	if stream_check 100 1; then
		on_rxe0=$(grep -Ec '^  ep .* OPEN .* dev rxe0$' /tmp/stream.log)
		echo "# link_flap: $on_rxe0 of $channels channels open on rxe0"
		[ "$on_rxe0" = "$channels" ] && ok=0
	elif ! selfprobe; then
		skip=" # SKIP rxe0's GSI QP went deaf (it cannot connect to itself): a CM message left while its port was down, which rxe on 6.1 does not survive (resilience.rst, A port that is down)"
		ok=0
	fi
	if [ $ok != 0 ] || [ -n "$skip" ]; then
		echo "# link_flap: kernel log since the stream began:"
		dmesg | tail -n +$((klog0 + 1)) | grep -v 'speed is unknown' |
			tail -60 | diag
	fi
else
	echo "# link_flap: the stream's channels did not open"
	wait "$stream_pid"
	diag /tmp/stream.log
fi
echo "$hb_ms" >$params/heartbeat_ms
result $ok "pair.link_flap_stream$skip"
if [ $ok != 0 ] || [ -n "$skip" ]; then
	rxe0_again
fi

# (h) Node 1 dies mid-stream. Nothing tells node 0: heartbeats find the
# silence (heartbeat_ms x heartbeat_misses), the repair's connection
# attempts go unanswered, and after repair_timeout_ms the channels end with
# ETIMEDOUT. The bound is counted from when node 1 stopped answering
# pings (three in a row lost), not from when the channels opened: node 1
# takes its 3 s and then saves its kernel log over 9p before it resets,
# which on a loaded host took 20 s more (a 6.12 run with a kernel build
# beside it). It allows the heartbeats, the give-up time and 10 s for a
# slow guest; the stream may last no longer than its own limit either.
ok=1
hb=$(($(cat $params/heartbeat_ms) * $(cat $params/heartbeat_misses) / 1000))
bound=$(((hb + give_up_ms / 1000 / slow + 10) * slow))
echo "$give_up_ms" >$params/repair_timeout_ms
rm -f /tmp/peer_gone
if stream_start $port_kill 120; then
	# When the peer stopped answering: the first of three lost pings.
	(lost=0
	 while ((lost < 3)); do
		if ping -c 1 -W 1 "$peer" >/dev/null 2>&1; then
			lost=0
		else
			((lost++ == 0)) && first=$SECONDS
		fi
		sleep 0.2
	 done
	 echo "$first" >/tmp/peer_gone) &
	gone_pid=$!
	# A hang fails the test, not the run.
	for ((i = 0; i < $(secs 60) + bound + 10; i++)); do
		sleep 1
		kill -0 "$stream_pid" 2>/dev/null || break
	done
	kill "$stream_pid" 2>/dev/null
	wait "$stream_pid"
	status=$?
	end=$SECONDS
	took=$((end - stream_open))
	kill "$gone_pid" 2>/dev/null
	wait "$gone_pid" 2>/dev/null
	gone=$(cat /tmp/peer_gone 2>/dev/null)
	if [ -n "$gone" ]; then
		after=$((end - gone))
		echo "# peer_killed: the stream ended with status $status $took s after its channels opened, $after s after the peer went silent (bound $bound s)"
	else
		after=$((bound + 1))
		echo "# peer_killed: the stream ended with status $status $took s after its channels opened; the peer still answered pings"
	fi
	grep -E 'ended|^  ep ' /tmp/stream.log | sed 's/^/# /'
	# The channel's end shows as the error of a wait, of a rendezvous, or
	# of a send that was in flight when it came (whichever rmsg-perf
	# reads first): all ETIMEDOUT.
	if [ "$status" = 1 ] && [ "$after" -le "$bound" ] &&
	   grep -qE '(ended while waiting|failed|send on channel [0-9]+).*Connection timed out' \
		/tmp/stream.log; then
		ok=0
	else
		diag /tmp/stream.log
	fi
else
	echo "# peer_killed: the stream's channels did not open"
	wait "$stream_pid"
	diag /tmp/stream.log
fi
result $ok "pair.peer_killed_stream_ends"

# Nothing of the dead peer's channels may keep rmsg.ko loaded.
ok=1
t0=$SECONDS
if rmmod rmsg; then
	ok=0
	echo "# rmsg.ko unloaded in $((SECONDS - t0)) s"
else
	$ctl chan 2>&1 | diag
fi
result $ok "pair.unload_after_peer_killed"

exit $failed
