#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shows the test bed's limit "Text patching under TCG"
# (Documentation/testbed.rst): turns the sched_switch tracepoint, a static
# key in __schedule(), on and off for SECS seconds while both vCPUs keep
# scheduling. Run without rmsg: rmsg-vm -n tools/testing/text-patch.sh 60.
# Under QEMU 7.2's multi-threaded TCG the guest dies in seconds (an int3
# oops on 6.12, a soft lockup on 6.1); it prints how many times it
# patched and how many oopses the kernel logged when it does not.

secs=${1:-60}
tracing=/sys/kernel/tracing
event=$tracing/events/sched/sched_switch/enable
mountpoint -q $tracing || mount -t tracefs nodev $tracing || exit 1
for _ in 1 2 3; do
	(end=$((SECONDS + secs)); while ((SECONDS < end)); do sleep 0.001; done) &
done
end=$((SECONDS + secs))
n=0
while ((SECONDS < end)); do
	echo 1 >$event && echo 0 >$event || exit 1
	n=$((n + 1))
done
wait
oopses=$(dmesg | grep -c 'Oops')
echo "patched $((2 * n)) times, $oopses oopses"
[ "$oopses" = 0 ]
