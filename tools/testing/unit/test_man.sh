#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every function librmsg exports (lib/librmsg.map) has a man page made
# from its kernel-doc (tools/mkman.sh), with a name line that says what it
# does, and the tools have theirs. KTAP; run from the top of the tree.
man=${1:-build/man}
mapfile -t syms < <(sed -n 's/^[[:space:]]*\(rmsg_[a-z0-9_]*\);/\1/p' lib/librmsg.map)
pages=("${syms[@]/#/man3/}")
pages=("${pages[@]/%/.3}" man8/rmsgctl.8 man1/rmsg-perf.1)

echo "TAP version 13"
echo "1..${#pages[@]}"
n=0 status=0
for p in "${pages[@]}"; do
	n=$((n + 1))
	f="$man/$p"
	name=$(basename "$p")
	name=${name%.*}
	# .TH first (after comments), then .SH NAME and "name \- what it does".
	if [ -s "$f" ] && grep -m 1 -v '^\.\\"' "$f" | grep -q '^\.TH ' &&
	   grep -A1 '^\.SH NAME' "$f" | grep -q "^$name \\\\- ..."; then
		echo "ok $n man.$name"
	else
		echo "not ok $n man.$name # no page at $f, or no NAME line"
		status=1
	fi
done
exit $status
