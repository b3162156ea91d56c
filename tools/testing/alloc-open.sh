#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Who allocates kernel memory for a channel's open and close on a link,
# blocks leased, and how much: the kmem tracepoints around rmsg-perf mem,
# summed by call site (Documentation/bench.rst, "Per open and close").
# Debian's kernels zero every allocation (init_on_alloc), and under TCG
# zeroing costs an instruction a byte, so these bytes are much of what an
# open costs. In an rmsg-vm guest (-b, RMSG_VM_MEM=2048 or more):
#
#   tools/testing/alloc-open.sh OUT [N]
#
# A run of 16 channels first brings the link up; then the traced run of N
# channels (256), rmsg-perf mem's four rounds. OUT/alloc-open has a line
# per call site: bytes and allocations per open+close (both ends), most
# first; OUT/pages the pages allocated per open+close by order; the raw
# trace in OUT/trace.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

out=${1:?usage: alloc-open.sh OUT [N]}
n=${2:-256}
rounds=4	# rmsg-perf mem's MEM_ROUNDS
addr=${RMSG_LOCAL_ADDR:?not in an rmsg-vm guest}
perf=tools/rmsg-perf/rmsg-perf
params=/sys/module/rmsg/parameters
t=/sys/kernel/tracing
[ -w "$params/link_port" ] && [ -w "$params/lease_blocks" ] ||
	{ echo "alloc-open: rmsg is not loaded, or has no links" >&2; exit 1; }
[ -d "$t/events" ] || mount -t tracefs nodev "$t" || exit 1
mkdir -p "$out"
link_was=$(cat "$params/link_port")
lease_was=$(cat "$params/lease_blocks")
echo 1021 >"$params/link_port" && echo 1 >"$params/lease_blocks" || exit 1
status=0
"$perf" --json -c 16 mem "$addr" >/dev/null 2>"$out/mem.log" || status=1
buffer_was=$(cat "$t/buffer_size_kb")
echo 0 >"$t/tracing_on"
echo >"$t/trace"
echo 16384 >"$t/buffer_size_kb"
events=(kmem/kmalloc kmem/kmalloc_node kmem/kmem_cache_alloc
	kmem/kmem_cache_alloc_node kmem/mm_page_alloc)
for e in "${events[@]}"; do
	[ ! -e "$t/events/$e/enable" ] || echo 1 >"$t/events/$e/enable"
done
echo 1 >"$t/tracing_on"
"$perf" --json -c "$n" mem "$addr" >"$out/mem.json" 2>>"$out/mem.log" ||
	status=1
echo 0 >"$t/tracing_on"
for e in "${events[@]}"; do
	[ ! -e "$t/events/$e/enable" ] || echo 0 >"$t/events/$e/enable"
done
cp "$t/trace" "$out/trace"
if grep -h '^overrun' "$t"/per_cpu/cpu*/stats | grep -q '[1-9]'; then
	echo "alloc-open: the trace buffer overran: fewer channels (N)" >&2
	status=1
fi
# The buffer back as it was: its pages are not the module's to leak.
echo >"$t/trace"
echo "${buffer_was%% *}" >"$t/buffer_size_kb"
echo "$link_was" >"$params/link_port"
echo "$lease_was" >"$params/lease_blocks"
opens=$((rounds * n))
awk -v opens="$opens" '
	/ (kmalloc|kmalloc_node|kmem_cache_alloc|kmem_cache_alloc_node): / {
		site = $0; sub(/.*call_site=/, "", site); sub(/[+ ].*/, "", site)
		b = $0; sub(/.*bytes_alloc=/, "", b); sub(/ .*/, "", b)
		bytes[site] += b; allocs[site]++; total += b; next
	}
	/ mm_page_alloc: / {
		o = $0; sub(/.*order=/, "", o); sub(/ .*/, "", o); pages[o]++
	}
	END {
		printf "%.0f bytes per open+close in all\n", total / opens
		for (s in bytes)
			printf "%8.0f B %6.2f allocs  %s\n", bytes[s] / opens,
			       allocs[s] / opens, s | "sort -rn"
		close("sort -rn")
		for (o in pages)
			printf "order %d: %.3f pages per open+close\n", o,
			       pages[o] / opens > "/dev/stderr"
	}' "$out/trace" >"$out/alloc-open" 2>"$out/pages"
head -n 16 "$out/alloc-open"
cat "$out/pages"
exit $status
