#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs rmsg's selftests inside the test guest (see tools/testing/rmsg-vm):
# each test program prints KTAP; the exit status is non-zero if any failed.
# Arguments: test program names (default: all built ones, then
# examples_test.sh, which runs the programs of examples/, and
# libfabric_test.sh, Debian's libfabric programs over the provider;
# pair_test.sh is for the two-node guests, not for this one).

cd "$(dirname "$0")/.." || exit 1
tests=("$@")
all=0
if ((${#tests[@]} == 0)); then
	all=1
	for t in selftests/*_test selftests/examples_test.sh \
		 selftests/libfabric_test.sh; do
		[ -x "$t" ] && tests+=("$(basename "$t")")
	done
fi

# Each result line followed by the time since the previous one: where
# make check's time goes (it must stay under 20 minutes).
timed() {
	local line now last=${EPOCHREALTIME/./}

	while IFS= read -r line; do
		printf '%s\n' "$line"
		if [[ $line =~ ^(not\ )?ok\ [0-9]+ ]]; then
			now=${EPOCHREALTIME/./}
			printf '# time: %d ms\n' $(((now - last) / 1000))
			last=$now
		fi
	done
}

status=0
for t in "${tests[@]}"; do
	echo "# selftest: $t"
	start=$SECONDS
	stdbuf -oL -eL "selftests/$t" 2>&1 | timed
	[ "${PIPESTATUS[0]}" = 0 ] || status=1
	echo "# selftest: $t took $((SECONDS - start)) s"
	# A program killed by its harness mid-test (a timeout) may leave the
	# guest without rxe0: every later program would fail for that. Its
	# own KTAP result says so, and rxe0 is made again.
	if [ -n "${RMSG_NETDEV:-}" ] && [ ! -e /sys/class/infiniband/rxe0 ]; then
		echo "TAP version 13"
		echo "1..1"
		if rdma link add rxe0 type rxe netdev "$RMSG_NETDEV"; then
			echo "not ok 1 testbed.rxe0_left_by_$t # made again"
		else
			echo "not ok 1 testbed.rxe0_left_by_$t # could not make it again"
		fi
		status=1
	fi
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
