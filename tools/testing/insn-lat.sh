#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest instructions per round trip, rmsg-perf lat against ib_write_lat,
# in one boot (rmsg-vm -b -I; Documentation/bench.rst, "Instructions per
# message"):
#
#   tools/testing/insn-lat.sh OUT [PAIRS [SIZE [KIND]]]
#
# KIND lat (the default) is that; rate is per message of a one-way
# stream, rmsg-perf rate (64 in flight) against ib_write_bw (-t 64), and
# rndv per message of a stream of rendezvous messages, rmsg-perf bw (RGet,
# 16 in flight) against ib_read_bw (-t 16): what make bench times as
# msg_rate_64 and rndv_bw_1m. INSN_N1 and INSN_N2 are the counts of
# round trips or messages (1,000 and 11,000; rate 2,000 and 12,000; rndv
# 16 and 80); OUT/insn-lat.what names the unit and OUT/insn-lat.base the
# baseline for insn-lat-report.
#
# Each tool runs twice per pair, with N1 and N2 round trips (after its own
# warm-up), the order of the tools alternating from pair to pair. The
# instruction counter's window (build/qemu/insn-mark) opens once the
# server listens, before the client starts, and closes when both have
# ended: it holds the client's whole life and the server's from the
# connection on, on every vCPU. (count(N2) - count(N1)) / (N2 - N1) is then
# the cost of one round trip, both sides, without start, connection and
# teardown. Both tools busy-poll while they wait for the peer: the plugin
# counts the further passes of short loops apart (user_loop, kernel_loop),
# and tools/testing/insn-lat-report takes them out. Each window's line, labelled TOOL.N.PAIR, goes to OUT/insn-lat;
# the wall time of each run to OUT/insn-lat.time. Without the plugin
# (RMSG_INSN_OUT unset) the same runs go without windows, for the
# plugin's overhead.
#
# With the plugin's profile (rmsg-vm with RMSG_VM_INSN_PROFILE=1, which
# sets RMSG_INSN_PROFILE_OUT here), for tools/testing/insn-profile: each
# window's profile goes to OUT/profile/LABEL.gz, the kernel's symbols
# (modules' included) once to OUT/kallsyms, a copy of rmsg-perf to
# OUT/bin, and both tools run at fixed addresses (setarch -R) under
# build/qemu/insn-mark maps, which writes the address space of each as
# it exits to OUT/maps/LABEL.server and .client. That costs each run the
# same fixed instructions (two ptrace stops and a copy of its maps),
# which the difference of the two windows takes out; without the
# profile nothing changes.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

out=${1:?usage: insn-lat.sh OUT [PAIRS [SIZE [KIND]]]}
pairs=${2:-3}
size=${3:-8}
kind=${4:-lat}
case $kind in
lat)	n1=${INSN_N1:-1000} n2=${INSN_N2:-11000} what="round trip"
	base=ib_write_lat ;;
rate)	n1=${INSN_N1:-2000} n2=${INSN_N2:-12000} what=message
	base=ib_write_bw ;;
rndv)	n1=${INSN_N1:-16} n2=${INSN_N2:-80} what=message base=ib_read_bw ;;
*)	echo "insn-lat: KIND is lat, rate or rndv" >&2; exit 2 ;;
esac
addr=${RMSG_LOCAL_ADDR:?not in an rmsg-vm guest}
perf=tools/rmsg-perf/rmsg-perf
# rmsg-perf counts its system calls with the raw_syscalls tracepoint,
# which would add the perf event's work to each of its calls and to none
# of perftest's: not here.
export RMSG_PERF_SYSCOUNT=none
# A rendezvous client's wait lends the CPU to rxe (librmsg's
# RMSG_ENTER_LEND): system calls whose number grows with the time waited,
# which the plugin counts as work. Off here (RMSG_LEND=0): the wait is a
# busy-poll, counted as a loop, and rxe's work runs in its kernel thread,
# as it does for perftest's reads, so the window holds the transfer's cost.
[ "$kind" != rndv ] || export RMSG_LEND=0
mark=build/qemu/insn-mark
mkdir -p "$out"
echo "$what" >"$out/insn-lat.what"
echo "$base" >"$out/insn-lat.base"
server_cpu=0
client_cpu=1
prof=${RMSG_INSN_PROFILE_OUT:-}
. tools/testing/insn-lib.sh
[ -z "$prof" ] || insn_profile_setup "$out" "$perf" || exit 1

insn() { [ -z "${RMSG_INSN_OUT:-}" ] || "$mark" "$@"; }

# wait_for FILE TEXT: until FILE shows TEXT (20 s at most).
wait_for() {
	local i
	for i in $(seq 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# one TOOL N LABEL: a server, then (window open) a client of N round
# trips. perftest's client can crash in librdmacm when it connects early
# (bench.sh's perftest_pair): up to three attempts, each in a window of its
# own, the last one's line kept.
one() {
	local tool=$1 n=$2 label=$3 spid st attempt t0 t1 line psize=0
	local slog=/tmp/insn.server cmd=() ws=() wc=() sargs=() cargs=() ib=()
	if [ -n "$prof" ]; then
		ws=(setarch -R "$mark" maps "$out/maps/$label.server" --)
		wc=(setarch -R "$mark" maps "$out/maps/$label.client" --)
	fi
	for attempt in 1 2 3; do
		st=0
		if [ "$tool" = rmsg ]; then
			case $kind in
			lat)	sargs=(--json -s "$size" -n "$n" lat)
				cargs=("${sargs[@]}") ;;
			rate)	sargs=(rate)
				cargs=(--json -s "$size" -n "$n" -W 64 rate) ;;
			rndv)	sargs=(bw -T 120)
				cargs=(--json -T 120 -s "$size" -n "$n" -w 0
				       -W 16 bw) ;;
			esac
			timeout 150 taskset -c "$server_cpu" "${ws[@]}" \
				"$perf" "${sargs[@]}" >"$slog" 2>&1 &
			spid=$!
			# rmsg-perf's server says nothing until a client
			# comes; its client would retry until it listens.
			sleep 2
			cmd=("$perf" "${cargs[@]}" "$addr")
		else
			case $kind in
			lat)	ib=(ib_write_lat) ;;
			rate)	ib=(ib_write_bw -t 64) ;;
			rndv)	ib=(ib_read_bw -t 16) ;;
			esac
			timeout 150 taskset -c "$server_cpu" stdbuf -oL \
				"${ws[@]}" "${ib[@]}" -R -d rxe0 -F \
				-s "$size" -n "$n" >"$slog" 2>&1 &
			spid=$!
			wait_for "$slog" 'Waiting for client' || st=1
			sleep 1
			cmd=("${ib[@]}" -R -d rxe0 -F -s "$size" -n "$n"
			     "$addr")
		fi
		[ -z "$prof" ] || psize=$(stat -c %s "$prof") || st=1
		t0=$(date +%s%N)
		insn start
		timeout 120 taskset -c "$client_cpu" "${wc[@]}" "${cmd[@]}" \
			>>"$out/$tool.log" 2>&1 || st=1
		wait "$spid" || st=1
		line=$(insn stop "$label") || st=1
		t1=$(date +%s%N)
		# This window's profile: what the plugin appended since.
		[ -z "$prof" ] || insn_profile_keep "$out" "$label" "$psize" ||
			st=1
		cat "$slog" >>"$out/$tool.server.log"
		[ "$st" = 0 ] && break
		echo "insn-lat: $label, attempt $attempt failed" >&2
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	done
	[ -z "$line" ] || echo "$line" >>"$out/insn-lat"
	echo "$label $(((t1 - t0) / 1000000))" >>"$out/insn-lat.time"
	return $st
}

status=0
for p in $(seq "$pairs"); do
	tools=(rmsg ib)
	((p % 2)) || tools=(ib rmsg)
	for t in "${tools[@]}"; do
		for n in "$n1" "$n2"; do
			one "$t" "$n" "$t.$n.$p" || status=1
		done
	done
done
exit $status
