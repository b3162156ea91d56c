#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo `make run` shows inside the guest: what rmsg sees of the RDMA
# devices and how it follows one that goes away and comes back, then two
# endpoints exchanging messages whose every byte count, order and stamp is
# checked, with the latency and bandwidth they got: eager messages, a
# rendezvous transfer, and a stream that goes on while its QP is forced
# into error and its device is removed under it, with the repair times;
# last, an unmodified MPI program (NetPIPE) over rmsg's libfabric provider
# while the device is removed and added back under it.

cd "$(dirname "$0")/../.." || exit 1
ctl=tools/rmsgctl/rmsgctl
perf=tools/rmsg-perf/rmsg-perf
addr=$RMSG_LOCAL_ADDR

step() { printf '\n== %s\n' "$*"; }

# rmsg-perf: a server in the background, the client in front.
pair() {
	local spid status
	"$perf" "$@" 2>/dev/null &
	spid=$!
	"$perf" -T 60 "$@" "$addr"
	status=$?
	wait "$spid" || status=1
	return $status
}

step "rmsg.ko loaded; the module and library agree on the ABI"
$ctl version || exit 1

step "RDMA devices as rmsg sees them (Soft-RoCE on $RMSG_NETDEV, $addr)"
$ctl dev || exit 1

step "the device is removed (as a reset HCA would be), then added back"
rdma link delete rxe0
$ctl dev
rdma link add rxe0 type rxe netdev "$RMSG_NETDEV"
for _ in $(seq 50); do
	$ctl dev | grep -q '^rxe0 .* ACTIVE' && break
	sleep 0.1
done
$ctl dev

# Counted by rmsg-perf with the raw_syscalls tracepoint.
mountpoint -q /sys/kernel/tracing ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

step "ping-pong between two endpoints over rxe0: 64-byte and 4 KiB messages"
echo "(every message checked; half round trip in microseconds, under emulation)"
pair -n 1000 -s 64 lat || exit 1
pair -n 300 -s 4096 lat || exit 1

step "a one-way stream of 4 KiB messages, measured at the receiver"
pair -n 2000 -s 4096 bw || exit 1

step "rendezvous: 4 MiB messages, read zero copy into the receiver's memory"
echo "(every byte of every message checked; bandwidth at the receiver)"
pair -n 8 -w 2 -s 4M --full-check bw || exit 1

step "repair: a checked ping-pong stream while faults are injected under it"
echo "(time from the fault to the stream's next echo; nothing lost or repeated)"
echo "-- the channel's QP is forced into the error state, 5 times"
pair -n 5 --fault=qp-error recover || exit 1
echo "-- the device is removed and added back (rdma link delete/add), twice"
pair -n 2 --fault=hca-readd recover || exit 1

step "an unmodified MPI program over rmsg while its device is reset"
echo "(Debian's NetPIPE under Open MPI, through rmsg's libfabric provider; every"
echo "byte of every size checked; rxe0 deleted and added back twice under it)"
np_dir=$(mktemp -d)
mpirun_rxe=$PWD/tools/testing/mpirun-rxe
(cd "$np_dir" && exec "$mpirun_rxe" -n -t 240 \
	NPopenmpi -i -u 4194304 -o np.out) >"$np_dir/np.log" 2>&1 &
np=$!
for _ in $(seq 120); do
	grep -q 'Integrity check passed' "$np_dir/np.log" && break
	kill -0 "$np" 2>/dev/null || break
	sleep 0.5
done
for k in 1 2; do
	kill -0 "$np" 2>/dev/null || break
	rdma link delete rxe0 || exit 1
	sleep 1
	rdma link add rxe0 type rxe netdev "$RMSG_NETDEV" || exit 1
	echo "-- rxe0 deleted and added back ($k) under the job"
	sleep 2
done
if ! wait "$np" || grep -q -i 'integrity check failed' "$np_dir/np.log"; then
	tail -n 5 "$np_dir/np.log"
	exit 1
fi
grep 'Integrity check passed' "$np_dir/np.log" | tail -n 3
echo "-- $(grep -c 'Integrity check passed' "$np_dir/np.log") sizes, every byte checked; the job ended with 0"
rm -rf "$np_dir"

cat <<'EOF'

The guest is emulated (TCG): absolute times say little. `make bench` runs
the same tests beside perftest on the same device and reports the ratios.
EOF
