#!/bin/bash
cd "$(dirname "$0")" || exit 1
perf=tools/rmsg-perf/rmsg-perf
trace=/sys/kernel/tracing
mountpoint -q "$trace" || mount -t tracefs nodev "$trace"
for e in ib_cma ib_cm rmsg; do
	[ -d "$trace/events/$e" ] && echo 1 >"$trace/events/$e/enable"
done
echo 8192 >"$trace/buffer_size_kb"
echo 'module rmsg +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
echo 'module rdma_cm +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
echo 'module ib_core +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
echo 250 >/sys/module/rmsg/parameters/heartbeat_ms
timeout 100 "$perf" -T 40 recover >/tmp/s.log 2>&1 &
spid=$!
"$perf" --json -T 40 -s 1024 -c 2 -W 8 --fault=none -D 25 recover "$RMSG_LOCAL_ADDR" >/tmp/c.json 2>/tmp/c.log &
pid=$!
sleep 5
echo >"$trace/trace"
dmesg -C
ip link set va down
sleep 3
ip link set va up
for t in 1 2 3 4 5 6 8 10; do sleep 1; echo "t+$t"; rdma link show; ip -br addr show va; ip route show table local | grep va; done
rdma res show cm_id 2>&1 | head
wait "$pid"; echo "client status $?"; wait $spid; echo "server status $?"
cat /tmp/c.log | tail -20
echo "=== kernel log"; dmesg | grep -v "speed is unknown" | head -150
echo "=== trace"; grep -v "^#" "$trace/trace" | head -400 | cut -c1-260
