#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make bench-ab`: two builds of rmsg, A (an older
# revision) and B (this tree), measured in one boot on one rxe device, the
# module swapped between them before every run of the pair, A and B taking
# turns at going first. Run by rmsg-vm (loopback topology):
#
#   tools/testing/bench-ab.sh OUT A_TREE [ROUNDS [PARTS]]
#
# A_TREE is a built tree (its kernel/rmsg.ko and tools/rmsg-perf/rmsg-perf);
# B is the tree this script is in. Two make bench runs cannot tell a change
# of a few per cent from the drift of the host's load between them (their
# spreads overlap, Documentation/bench.rst); back-to-back pairs in one boot
# can: bench-ab-report takes the median of the per-round ratios B/A.
# PARTS (default "eager,rndv,resil") picks what a round measures: eager
# latency, stream and rate; rendezvous streams and latency; repairs.
#
# Files in OUT, one JSON object a line (rmsg-perf's own), S = A or B:
#   lat-S.N          latency, sizes 2 .. largest eager message
#   bw-S.N           4096-byte stream
#   rate-S.N         64-byte stream (message rate)
#   rndv-bw-S.N      RGet streams of 1, 16, 64 MiB
#   rndv-lat-S.N     64 KiB RGet latency
#   recover-S.N      repair times after QP errors
#   order.N          which went first in round N
#   *.log            every program's own output, for when one fails

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

usage="usage: bench-ab.sh OUT A_TREE [ROUNDS [PARTS]]"
out=${1:?$usage}
a_tree=${2:?$usage}
rounds=${3:-5}
parts=,${4:-eager,rndv,resil},
want() { [[ $parts == *,$1,* ]]; }
addr=${RMSG_LOCAL_ADDR:?not in an rmsg-vm guest}
declare -A tree=([A]=$a_tree [B]=$PWD)
# Server and client pinned apart, as in make bench.
server_cpu=0
client_cpu=1
as_user=()
. tools/testing/bench-lib.sh

# The same numbers as make bench (tools/testing/bench.sh), so that a ratio
# here says what the same ratio there would.
lat_iters=300
stream_msgs=2000
window=64
rndv_bw_runs="1048576:64 16777216:5 67108864:5"
recover_faults=50

mkdir -p "$out"
start=$(date +%s)
log() { printf '# bench-ab: %4ss %s\n' "$(($(date +%s) - start))" "$*" >&2; }

for s in A B; do
	for f in kernel/rmsg.ko tools/rmsg-perf/rmsg-perf; do
		[ -e "${tree[$s]}/$f" ] || { log "no ${tree[$s]}/$f"; exit 1; }
	done
done
{
	echo "kernel $(uname -r)"
	echo "A $(cat "$a_tree/.bench-ab-rev" 2>/dev/null || echo "$a_tree")"
	echo "B $(git describe --always --dirty 2>/dev/null || echo "$PWD")"
	echo "rounds $rounds"
	echo "parts ${parts:1:-1}"
} >"$out/env"

mountpoint -q /sys/kernel/tracing ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# use S: the module of S loaded, and nothing else of rmsg's. rmmod waits
# for no one: every rmsg-perf of the previous run has exited.
use() {
	if [ -e /sys/module/rmsg ]; then
		rmmod rmsg || { log "rmmod rmsg failed"; return 1; }
	fi
	insmod "${tree[$1]}/kernel/rmsg.ko" ||
		{ log "insmod ${tree[$1]}/kernel/rmsg.ko failed"; return 1; }
}

# pair S NAME SERVER_ARGS -- CLIENT_ARGS: bench-lib.sh's perf_pair with
# S's rmsg-perf, as bench.sh's rmsg_pair runs it.
pair() {
	local s=$1
	shift
	perf_pair "${tree[$s]}/tools/rmsg-perf/rmsg-perf" "$@"
}

# side S R: every measurement of round R with S's module and rmsg-perf.
side() {
	local s=$1 r=$2 st=0 run size msgs
	use "$s" || return 1
	if want eager; then
		log "round $r: $s: eager latency, stream, rate"
		pair "$s" "lat-$s.$r" lat -- --json -a -n "$lat_iters" lat ||
			st=1
		pair "$s" "bw-$s.$r" bw -- --json -s 4096 \
			-n "$stream_msgs" -W "$window" bw || st=1
		pair "$s" "rate-$s.$r" rate -- --json -s 64 \
			-n "$stream_msgs" -W "$window" rate || st=1
	fi
	if want rndv; then
		log "round $r: $s: rendezvous"
		for run in $rndv_bw_runs; do
			size=${run%%:*} msgs=${run##*:}
			pair "$s" "rndv-bw-$s.$r" bw -T 120 -- --json \
				-T 120 -s "$size" -n "$msgs" -w 0 -W 16 bw ||
				st=1
		done
		pair "$s" "rndv-lat-$s.$r" lat -T 120 -- --json -T 120 \
			--zc -s 65536 -n 50 -w 2 lat || st=1
	fi
	if want resil; then
		log "round $r: $s: repairs after QP errors"
		pair "$s" "recover-$s.$r" recover -T 120 -- --json -T 120 \
			-s 64 -n "$recover_faults" recover || st=1
	fi
	return $st
}

status=0
for r in $(seq "$rounds"); do
	if ((r % 2)); then order="A B"; else order="B A"; fi
	echo "$order" >"$out/order.$r"
	for s in $order; do
		side "$s" "$r" || status=1
	done
done
# Leave B's module loaded, as the guest had it.
use B || status=1
log "done"
exit "$status"
