#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nothing leaks across a fault class: for each class of soak.sh (QP error,
# disconnect, device fatal error, rxe0 deleted and made again), a short
# soak (LEAK_FAULTS faults, default 5, on four channels carrying eager and
# rendezvous messages both ways, every byte checked), then rmsg's objects
# must be gone, rmsg must unload, and the kernel's pinned pages, vmalloc,
# unreclaimable slab and kmalloc objects must be back at the baseline
# taken before the first class (tools/testing/leak-check cycle). Run in
# the test guest by selftests/run.sh; prints KTAP.

cd "$(dirname "$0")/.." || exit 1
lc=tools/testing/leak-check
kinds=${LEAK_KINDS:-qp-error disconnect device-fatal hca-readd}
faults=${LEAK_FAULTS:-5}
base=$(mktemp)
trap 'rm -f "$base"' EXIT

echo "TAP version 13"
echo "1..$(wc -w <<<"$kinds")"
if ! out=$($lc rebase "$base" 2>&1); then
	sed 's/^/# /' <<<"$out"
	n=0
	for kind in $kinds; do
		n=$((n + 1))
		echo "not ok $n leak.after_$kind # no baseline: rmsg did not unload"
	done
	exit 1
fi

n=0
status=0
for kind in $kinds; do
	n=$((n + 1))
	soak=$(SOAK_KINDS="$kind:$faults" SOAK_OUT=/tmp/leak-soak \
		tools/testing/soak.sh 2>&1)
	st=$?
	grep -E "^$kind " <<<"$soak" | sed 's/^/# /'
	[ "$st" = 0 ] || sed 's/^/# /' <<<"$soak" | tail -n 30
	if ! cycle=$($lc cycle "$base" 2>&1); then
		st=1
	fi
	sed 's/^/# /' <<<"$cycle"
	if [ "$st" = 0 ]; then
		echo "ok $n leak.after_$kind"
	else
		echo "not ok $n leak.after_$kind"
		status=1
	fi
done
exit "$status"
