#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs rmsg's selftests inside the test guest (see tools/testing/rmsg-vm):
# each test program prints KTAP; the exit status is non-zero if any failed.
# Arguments: test program names (default: all built ones).

cd "$(dirname "$0")/.." || exit 1
tests=("$@")
if ((${#tests[@]} == 0)); then
	for t in selftests/*_test; do
		[ -x "$t" ] && tests+=("$(basename "$t")")
	done
fi

status=0
for t in "${tests[@]}"; do
	echo "# selftest: $t"
	"selftests/$t" || status=1
done
exit "$status"
