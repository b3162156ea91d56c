#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest instructions per channel open and close on a link, blocks leased
# (issue 37's chan_open_rate, counted rather than timed), in one boot of
# rmsg-vm -b -I (Documentation/bench.rst, "Per open and close"):
#
#   tools/testing/insn-open.sh OUT [PAIRS [N1 N2]]
#
# rmsg-perf mem opens N channels between two endpoints of its own, both
# ends in this guest, measures and closes them, four rounds (MEM_ROUNDS);
# it runs with N1 and then N2 channels, PAIRS times, each run in a window
# of the instruction counter (build/qemu/insn-mark) around the whole
# program. (count(N2) - count(N1)) / (4 (N2 - N1)) is then one open and
# close, both ends, without the program's start and end. The windows'
# lines go to OUT/insn-lat labelled rmsg.OPENS.PAIR, OPENS the run's
# opens, so that tools/testing/insn-lat-report OUT divides by them; the
# wall time of each run to OUT/insn-lat.time. The link and the leases are
# set as make bench sets them for its figures on a link (link_port,
# lease_blocks) and put back after.
#
# With the plugin's profile (rmsg-vm with RMSG_VM_INSN_PROFILE=1): each
# window's profile to OUT/profile/LABEL.gz, the kernel's symbols to
# OUT/kallsyms, rmsg-perf to OUT/bin and its maps to OUT/maps, as
# insn-lat.sh does, for tools/testing/insn-profile --base.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

out=${1:?usage: insn-open.sh OUT [PAIRS [N1 N2]]}
pairs=${2:-2}
n1=${3:-512}
n2=${4:-1536}
rounds=4	# rmsg-perf mem's MEM_ROUNDS
addr=${RMSG_LOCAL_ADDR:?not in an rmsg-vm guest}
perf=tools/rmsg-perf/rmsg-perf
# rmsg-perf counts its system calls with the raw_syscalls tracepoint,
# which would add the perf event's work to each of its calls and to none
# of perftest's: not here.
export RMSG_PERF_SYSCOUNT=none
mark=build/qemu/insn-mark
params=/sys/module/rmsg/parameters
[ -n "${RMSG_INSN_OUT:-}" ] ||
	{ echo "insn-open: no instruction counter (rmsg-vm -I)" >&2; exit 1; }
[ -w "$params/link_port" ] && [ -w "$params/lease_blocks" ] ||
	{ echo "insn-open: rmsg is not loaded, or has no links" >&2; exit 1; }
mkdir -p "$out"
prof=${RMSG_INSN_PROFILE_OUT:-}
. tools/testing/insn-lib.sh
[ -z "$prof" ] || insn_profile_setup "$out" "$perf" || exit 1
echo "open+close" >"$out/insn-lat.what"

# one N LABEL: rmsg-perf mem with N channels in a window.
one() {
	local n=$1 label=$2 st=0 t0 t1 line psize=0 w=()

	# One program, and insn-profile reads a server's maps and a
	# client's: the server's are empty.
	[ -z "$prof" ] || {
		w=(setarch -R "$mark" maps "$out/maps/$label.client" --)
		: >"$out/maps/$label.server"
		psize=$(stat -c %s "$prof")
	}
	t0=$(date +%s%N)
	"$mark" start
	timeout 900 "${w[@]}" "$perf" --json -c "$n" mem "$addr" \
		>>"$out/mem.json" 2>>"$out/mem.log" || st=1
	line=$("$mark" stop "$label") || st=1
	t1=$(date +%s%N)
	[ -z "$prof" ] || insn_profile_keep "$out" "$label" "$psize" || st=1
	[ "$st" = 0 ] || echo "insn-open: $label failed" >&2
	[ -z "$line" ] || echo "$line" >>"$out/insn-lat"
	echo "$label $(((t1 - t0) / 1000000))" >>"$out/insn-lat.time"
	return $st
}

link_was=$(cat "$params/link_port")
lease_was=$(cat "$params/lease_blocks")
echo 1021 >"$params/link_port" && echo 1 >"$params/lease_blocks" || exit 1
status=0
for p in $(seq "$pairs"); do
	for n in "$n1" "$n2"; do
		one "$n" "rmsg.$((rounds * n)).$p" || status=1
	done
done
tools/rmsgctl/rmsgctl -j links >"$out/links" 2>&1
echo "$link_was" >"$params/link_port"
echo "$lease_was" >"$params/lease_blocks"
exit $status
