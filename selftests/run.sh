#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs rmsg's selftests inside the test guest (see tools/testing/rmsg-vm):
# each test program prints KTAP; the exit status is non-zero if any failed.
# Arguments: test program names (default: all built ones).

cd "$(dirname "$0")/.." || exit 1
tests=("$@")
all=0
if ((${#tests[@]} == 0)); then
	all=1
	for t in selftests/*_test; do
		[ -x "$t" ] && tests+=("$(basename "$t")")
	done
fi

status=0
for t in "${tests[@]}"; do
	echo "# selftest: $t"
	start=$SECONDS
	"selftests/$t" || status=1
	# Where make check's time goes (it must stay under 20 minutes).
	echo "# selftest: $t took $((SECONDS - start)) s"
	# Everything the program had is gone once it exited (after its
	# teardown work): one KTAP result of its own.
	if [ -r /sys/kernel/debug/rmsg/objects ]; then
		echo "# selftest: leak check after $t"
		echo "TAP version 13"
		echo "1..1"
		if out=$(tools/testing/leak-check objects 2>&1); then
			echo "ok 1 leak.objects_after_$t"
		else
			sed 's/^/# /' <<<"$out"
			echo "not ok 1 leak.objects_after_$t"
			status=1
		fi
	fi
done
# Then, with every program done: nothing leaks across a fault class.
if [ "$all" = 1 ] && [ -d /sys/module/rmsg ]; then
	echo "# selftest: leak_classes.sh"
	selftests/leak_classes.sh || status=1
fi
exit "$status"
