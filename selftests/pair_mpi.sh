#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An Open MPI job across the two guests of the pair topology, over rmsg's
# libfabric provider, with every byte checked (selftests/mpi_pair.c), and
# the same job while node 1's device goes and comes back under it. Run on
# both nodes by `rmsg-vm -t pair` (make check-mpi); node 0 prints KTAP.
#
# Node 0 runs mpirun with PAIR_MPI_RANKS ranks a node (default 8: 16 in
# all) on both nodes (--host with the guests' addresses); there is no ssh
# in the guests, so Open MPI's rsh launcher starts its daemon on node 1
# through tools/testing/mpi-rsh, whose server node 1 runs for as long as
# node 0 needs it. Every rank reaches the fabric through rmsg only: pml cm,
# mtl ofi, mtl_ofi_provider_include rmsg, btl self (no shared memory, no
# TCP between the ranks: ranks of one node talk over rxe0 too), and no
# uverbs device (a mount namespace with an empty /dev/infiniband, as
# tools/testing/mpirun-rxe -n), so that a device removal need not wait for
# the job (rxe cannot take a device from an open uverbs context). Each
# rank listens on its node's first address (FI_RMSG_ADDR).
#
#   pair_mpi.launcher       node 1's mpi-rsh server runs a command for
#                           node 0 (hostname) and returns its status
#   pair_mpi.alltoall       PAIR_MPI_ITERS (default 3) iterations of
#                           mpi_pair (PAIR_MPI_REPEAT jobs, default 1,
#                           one after the other, each of which must pass):
#                           MPI_Alltoall and MPI_Alltoallv of
#                           64 B and 64 KiB a peer (eager and rendezvous),
#                           MPI_Allreduce (sum of 4096 words, max), every
#                           byte and word checked; the ranks must have run
#                           PAIR_MPI_RANKS on each node; exit 0, nothing bad
#   pair_mpi.alltoall_peer_readd
#                           the same job for PAIR_MPI_READD_JOB_S seconds
#                           (default 150, scaled); once its first iteration
#                           is done, node 1 deletes its rxe0 (rdma link
#                           delete) and makes it again PAIR_READD_S seconds
#                           later (default 1, scaled). The removal must
#                           have been made while the job ran, and the job
#                           must go on past it (iterations after the
#                           re-add) and end with exit 0 and every byte
#                           right. Channels' repairs at both nodes, from
#                           rmsgctl samples taken while it ran, are
#                           printed (a removal the repairs did not see
#                           would be no test: at least one is required).
#
# Node 0 leaves the second network (its address there) for the whole
# script, as pair_test.sh does for its peer_readd: a repair must come back
# on the re-made rxe0, not fail over to rxe1. RMSG_TEST_SLOW=N scales the
# limits and the job's length as in pair_test.sh. Documentation/
# testbed.rst ("make check-mpi: an MPI job across the pair") describes the
# test and its status.

cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
ctl=$PWD/tools/rmsgctl/rmsgctl

# Every channel rmsg has on this node, sampled every 2 s into $1 (one
# rmsgctl --json line each) until killed: repairs are counted while the
# job runs, since its channels are gone once it ends.
sample_chans() {
	while :; do
		$ctl --json chan 2>/dev/null >>"$1"
		sleep 2
	done
}

# Summary of the samples in $1: channels seen, how many were repaired,
# repairs in all (the largest count each channel showed), states and
# devices last seen.
chan_summary() {
	python3 - "$1" <<-'EOF'
	import json, sys
	last = {}
	for line in open(sys.argv[1]):
	    try:
	        d = json.loads(line)
	    except ValueError:
	        continue
	    for c in d.get("channels", []):
	        k = (c["pid"], c["ep_id"], c["channel"])
	        o = last.get(k)
	        if o is None or c["repairs"] >= o["repairs"]:
	            last[k] = c
	rep = [c for c in last.values() if c["repairs"]]
	devs = sorted(set(c["dev"] for c in last.values()))
	print("channels %d repaired %d repairs %d devices %s" % (
	    len(last), len(rep), sum(c["repairs"] for c in rep),
	    ",".join(devs) or "-"))
	EOF
}

# What the job's processes and channels are doing on this node; each rank
# prints its provider's state too (SIGUSR2 with FI_RMSG_DUMP, lines
# "rmsg dump" in the job's output).
job_state() {
	for p in $(pgrep -x mpi_pair); do
		kill -USR2 "$p"
	done
	ps -eo pid,stat,etime,time,wchan:24,args |
		grep -E '[m]pi_pair|[o]rted|[m]pirun' | cut -c1-150
	for p in $(pgrep -x mpi_pair | head -n 2); do
		echo "kernel stack of rank process $p:"
		cat "/proc/$p/stack"
	done
	$ctl chan 2>/dev/null | awk 'NR > 1 { n[$4]++ }
		END { for (s in n) printf "channels %s: %d\n", s, n[s] }'
	# Which ranks lack channels: a full mesh gives each 2 x ranks - 1.
	$ctl chan 2>/dev/null | awk 'NR > 1 { n[$2]++ }
		END { for (p in n) printf "pid %s: %d channels\n", p, n[p] }'
	grep -E '^(MemAvailable|Committed_AS)' /proc/meminfo
}

# Node 0 asks node 1 for its summary so.
if [ "${1:-}" = --summary ]; then
	chan_summary "$2"
	exit
fi
if [ "${1:-}" = --state ]; then
	job_state
	exit
fi

node=${RMSG_NODE:?}
peer=${RMSG_PEER_ADDR:?}
here=${RMSG_LOCAL_ADDR:?}
net=${here%.*}
rsh=$PWD/tools/testing/mpi-rsh
prog=$PWD/build/mpi/mpi_pair

slow=${RMSG_TEST_SLOW:-1}
[[ "$slow" =~ ^[1-9][0-9]?$ ]] || slow=1
secs() { echo $(($1 * slow)); }
ranks=${PAIR_MPI_RANKS:-8}
# The ranks' nice value (19 leaves the kernel's work for the polling ranks
# the CPU).
nice=${PAIR_MPI_NICE:-0}
iters=${PAIR_MPI_ITERS:-3}
# The job alone runs this many times (a hang that comes only sometimes).
repeat=${PAIR_MPI_REPEAT:-1}
readd_job_s=${PAIR_MPI_READD_JOB_S:-$(secs 150)}
readd_s=${PAIR_READD_S:-$(secs 1)}

# What Open MPI needs in a guest (tools/testing/mpirun-rxe): a host name
# other than "(none)", a /dev/shm, root allowed; TMPDIR on tmpfs.
hostname "rmsg-n$node"
mountpoint -q /dev/shm ||
	{ mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TMPDIR=/tmp HOME=/tmp
# The ranks of each node inherit these from mpirun or from node 1's orted;
# FI_RMSG_DUMP lets job_state() ask them for their provider's state.
export FI_RMSG_ADDR=$here FI_PROVIDER_PATH=$PWD/build/prov FI_RMSG_DUMP=1

# Without uverbs: COMMAND... in a mount namespace whose /dev/infiniband
# is an empty tmpfs.
no_uverbs() {
	unshare -m bash -c \
		'mount -t tmpfs none /dev/infiniband && exec "$@"' _ "$@"
}

if [ "$node" = 1 ]; then
	# Node 1 serves node 0's launcher until node 0 says quit (or the
	# time a whole run may take is up), and samples its channels.
	: >/tmp/chans.1
	sample_chans /tmp/chans.1 &
	sampler=$!
	no_uverbs timeout "$(secs 2200)" "$rsh" --serve "$here" "$peer" \
		>/tmp/rsh.log 2>&1
	echo "mpi-rsh server: status $? (0: node 0 said quit)"
	kill "$sampler"
	wait "$sampler" 2>/dev/null
	sed 's/^/mpi-rsh: /' /tmp/rsh.log | cut -c1-200 | tail -n 20
	exit 0
fi

echo "TAP version 13"
echo "1..3"
n=0
failed=0
result_at=${EPOCHREALTIME/./}
result() {
	local now=${EPOCHREALTIME/./}

	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
	echo "# time: $(((now - result_at) / 1000)) ms"
	result_at=$now
}
diag() { sed 's/^/# /' "$@"; }

# Node 1's server must hear the end whatever happens here.
quit_peer() { timeout 30 "$rsh" "$peer" quit >/dev/null 2>&1; }
trap quit_peer EXIT

if [ ! -x "$prog" ] || [ ! -e build/prov/librmsg-fi.so ] ||
   ! command -v mpirun >/dev/null; then
	why="no $prog (make mpi: mpicc), build/prov/librmsg-fi.so or mpirun"
	for t in launcher alltoall alltoall_peer_readd; do
		n=$((n + 1))
		echo "ok $n pair_mpi.$t # SKIP $why"
	done
	exit 0
fi

# rmsg-vm's second network stays out (see the top).
ip addr del "${RMSG_LOCAL_ADDR2:?}/24" dev "${RMSG_NETDEV2:?}"

# (1) The launcher: node 1 boots up to tens of seconds after node 0.
ok=1
for ((i = 0; i < 60 * slow; i++)); do
	got=$(timeout 30 "$rsh" "$peer" hostname 2>/tmp/rsh.err) &&
		[ "$got" = rmsg-n1 ] && { ok=0; break; }
	sleep 1
done
[ $ok = 0 ] || diag /tmp/rsh.err
result $ok "pair_mpi.launcher"

# mpirun of mpi_pair ARGS... with PAIR_MPI_RANKS ranks on each node, for
# at most $1 seconds, output in /tmp/mpi.log and here (as diagnostics).
# A job still running at its limit shows what both nodes' processes and
# channels are doing before it is killed.
mpi() {
	local end=$((SECONDS + $1)) job status
	shift
	: >/tmp/mpi.log
	no_uverbs \
		mpirun --host "$here:$ranks,$peer:$ranks" -np $((2 * ranks)) \
		--bind-to none --mca mpi_yield_when_idle 1 \
		--mca plm_rsh_agent "$rsh" \
		--mca oob_tcp_if_include "$net.0/24" \
		--mca btl self --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include rmsg -x FI_PROVIDER_PATH \
		-x FI_RMSG_DUMP nice -n "$nice" "$prog" "$@" >/tmp/mpi.log 2>&1 &
	job=$!
	tail -n +1 -f --pid="$job" /tmp/mpi.log | sed -u 's/^/# mpi: /' &
	while ((SECONDS < end)) && kill -0 "$job" 2>/dev/null; do
		sleep 1
	done
	if kill -0 "$job" 2>/dev/null; then
		echo "# mpirun still runs at its limit: node 0:"
		job_state | diag
		echo "# node 1:"
		timeout 60 "$rsh" "$peer" \
			selftests/pair_mpi.sh --state 2>&1 | diag
		sleep 5		# for the ranks' dumps to reach the log
		pkill -TERM -P "$job"
		kill -TERM "$job"
		sleep 10
		kill -KILL "$job" 2>/dev/null
	fi
	wait "$job"
	status=$?
	wait
	return $status
}

# The job's summary in /tmp/mpi.log is right: 2 hosts with the ranks
# each, nothing bad. Prints it.
job_ok() {
	grep '^mpi_pair:' /tmp/mpi.log | diag
	grep -q "^mpi_pair: ranks $((2 * ranks)) hosts 2 (rmsg-n0:$ranks rmsg-n1:$ranks)" /tmp/mpi.log &&
	grep -q '^mpi_pair: bad 0 bytes 0 words: ok$' /tmp/mpi.log
}

# (2) The job alone.
ok=1
if [ "$failed" != 0 ]; then
	echo "# not run: node 1's launcher does not answer"
else
	for ((run = 1; run <= repeat; run++)); do
		t0=$SECONDS
		mpi "${PAIR_MPI_JOB_LIMIT:-$(secs 900)}" -i "$iters"
		status=$?
		echo "# mpirun: run $run of $repeat: status $status after $((SECONDS - t0)) s"
		if [ $status = 0 ] && job_ok; then
			ok=0
		else
			ok=1
			tail -n 40 /tmp/mpi.log | diag
			break
		fi
	done
fi
result $ok "pair_mpi.alltoall"

# (3) The job while node 1's rxe0 is deleted and made again.
ok=1
if [ "$failed" != 0 ]; then
	echo "# not run: the job alone failed"
else
	: >/tmp/chans.0
	sample_chans /tmp/chans.0 &
	sampler=$!
	t0=$SECONDS
	mpi $((readd_job_s + $(secs 900))) -i 0 -t "$readd_job_s" &
	job=$!
	# Its first iteration done: every channel is open and has carried.
	for ((i = 0; i < 600 * slow; i++)); do
		grep -q '^iteration 0 ' /tmp/mpi.log && break
		kill -0 "$job" 2>/dev/null || break
		sleep 1
	done
	removed=no
	if kill -0 "$job" 2>/dev/null; then
		before=$(grep -c '^iteration ' /tmp/mpi.log)
		echo "# readd: after $before iterations ($((SECONDS - t0)) s), node 1 deletes rxe0 and makes it again ${readd_s} s later"
		if timeout "$(secs 120)" "$rsh" "$peer" \
			"timeout $(secs 60) rdma link delete rxe0 && echo deleted &&
			 sleep $readd_s &&
			 rdma link add rxe0 type rxe netdev \$RMSG_NETDEV && echo made again" \
			>/tmp/readd.log 2>&1; then
			kill -0 "$job" 2>/dev/null && removed=yes
		fi
		at=$(grep -c '^iteration ' /tmp/mpi.log)
		echo "# readd: $(tr '\n' ' ' </tmp/readd.log)($((SECONDS - t0)) s, $at iterations done; job running: $removed)"
	fi
	wait "$job"
	status=$?
	kill "$sampler"
	wait "$sampler" 2>/dev/null
	total=$(grep -c '^iteration ' /tmp/mpi.log)
	echo "# mpirun: status $status after $((SECONDS - t0)) s, $total iterations, $((total - ${at:-0})) after the re-add"
	here_chans=$(chan_summary /tmp/chans.0)
	peer_chans=$(timeout 60 "$rsh" "$peer" \
		selftests/pair_mpi.sh --summary /tmp/chans.1 2>&1)
	echo "# node 0: $here_chans"
	echo "# node 1: $peer_chans"
	repairs=$(printf '%s\n%s\n' "$here_chans" "$peer_chans" |
		awk '$5 == "repairs" { n += $6 } END { print n + 0 }')
	if [ "$removed" != yes ]; then
		echo "# readd: the removal was not made while the job ran"
		tail -n 40 /tmp/mpi.log | diag
	elif [ $status != 0 ] || ! job_ok; then
		tail -n 40 /tmp/mpi.log | diag
	elif ((total - at < 2)); then
		echo "# readd: fewer than 2 iterations after the re-add: the job was too short to show it"
	elif ((repairs < 1)); then
		echo "# readd: no channel was repaired: the removal reached no channel"
	else
		ok=0
	fi
fi
result $ok "pair_mpi.alltoall_peer_readd"
exit $failed
