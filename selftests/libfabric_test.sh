#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The libfabric provider (build/prov/librmsg-fi.so, Documentation/
# libfabric.rst) under Debian's own libfabric and its own programs,
# unmodified:
#
#   fi_info             fi_info -p rmsg lists the provider: an RDM
#                       endpoint with FI_MSG and FI_TAGGED, 64 tag bits
#   params              fi_info -e lists FI_RMSG_ADDR, FI_RMSG_BLOCK_SIZE,
#                       FI_RMSG_RNDV_THRESHOLD and FI_RMSG_SUMMARY;
#                       fi_pingpong (data checked) with blocks of 8 KiB
#                       carries less than 8 KiB eager, and with a
#                       threshold of 1000 bytes exactly 1000 (the
#                       provider's log says so per channel) with arrival
#                       summaries on; a block size the module
#                       refuses fails the endpoint, saying why
#   pingpong_msg        fi_pingpong -p rmsg -e rdm, every size of -S all
#                       (0 B to 6 MiB: eager and rendezvous), data checked
#                       by fi_pingpong itself (-c), two iterations a size
#                       (its default ten took 86 s for the same sizes);
#                       both sides exit 0
#   pingpong_tagged     the same with tagged messages (-m tagged),
#                       fi_pingpong's default sizes (64 B to 1 MiB), -I 2
#   wait_fd             the CQ's wait object (FI_WAIT_FD): build/prov/
#                       fi_wait sleeps in epoll_wait() on it after
#                       fi_trywait() and is woken by a message, then
#                       fi_cq_sread() with and without one coming
#   unexpected_rndv     build/prov/fi_unexp: rendezvous messages that
#                       arrive before their receives wait at the sender
#                       and go straight into the receive posted late,
#                       unless the channel needs them answered first
#                       (another one behind them, or the block held
#                       back); FI_PEEK, FI_CLAIM and FI_DISCARD of such
#                       messages; what a peer sent before it closed its
#                       endpoint is received whole (or fails, for bytes
#                       that went with it), and its leaving fails no
#                       receive from any source; one peer's injects, sends
#                       and large messages land in their order; every
#                       byte checked, and the receiver's counters
#                       (FI_LOG_LEVEL=info) must say 7 straight in, 2
#                       through the provider's memory
#   crossed_connect     build/prov/fi_cross: an endpoint that sends to a
#                       peer whose channel to it is open takes that
#                       channel and opens none (it reads the peer's hello
#                       first); two that both send first at once share
#                       one channel if the hello of one comes while the
#                       other's still connects (at most one gives its
#                       channel up); two that both opened and greeted a
#                       channel end on one (exactly one moves its sends
#                       to the other's behind a LAST, a burst each way
#                       across the move whole and in order); one that
#                       heard from a peer not yet in its AV answers, once
#                       the peer is in, on the peer's channel; four
#                       endpoints that all send to each other at once,
#                       eight in the steps of a barrier (each pair dials
#                       at once, channels given up in one step close as
#                       the next dials), and four processes doing both,
#                       as an MPI job's ranks, every message whole from
#                       the right peer; no receive fails, and a ping-pong
#                       of eager and rendezvous messages goes on each,
#                       every byte checked; the counters at close must
#                       say so
#   av_semantics        build/prov/fi_av: the address vector as fi_av(3)
#                       and MPI want it: a duplicate insert returns the
#                       entry there (FI_MORE too), and a receive directed
#                       to it matches; after a remove and an insert
#                       again, a receive directed to the new entry
#                       matches; a sender inserted after its messages
#                       came is their source, directed or not;
#                       FI_SYNC_ERR's statuses; FI_EVENT refused with
#                       -FI_ENOSYS; 5000 addresses inserted twice give
#                       the same entries; FI_SOURCE_ERR: a message from
#                       a sender not in the AV completes as
#                       FI_EADDRNOTAVAIL with its name as err_data, and
#                       once that is inserted the next has its entry;
#                       every byte checked
#   conformance         build/prov/fi_conform: fi_getinfo() answers
#                       -FI_ENODATA to hints it cannot give (FI_SHARED_AV,
#                       an inject size of 16 KiB, FI_RMA,
#                       FI_DELIVERY_COMPLETE by default, ...); fi_send()
#                       and fi_tsend() of an endpoint with FI_INJECT in
#                       its op_flags write their completions (only
#                       fi_inject*() write none), every byte checked; a
#                       send asking FI_DELIVERY_COMPLETE: -FI_EBADFLAGS
#   calls               build/prov/fi_calls: FI_PEEK | FI_DISCARD
#                       discards (eager and rendezvous); fi_cq_signal()
#                       wakes a thread in fi_cq_sread(); one CQ serves
#                       six endpoints; fi_getinfo()'s node and service
#                       are the source with FI_SOURCE (the endpoint
#                       listens there) and the destination without; a
#                       connect refused at once (max_channels_per_user,
#                       which it sets to 1 and puts back) fails the send
#                       with FI_ENOSPC in its completion; FI_MULTI_RECV
#                       refused (no info, -FI_EBADFLAGS); an endpoint
#                       without an AV -FI_ENOAV; fi_av_insertsvc() of a
#                       service that is no port -FI_EINVAL; every byte
#                       checked
#   msg_endpoint        build/prov/fi_msg_ep (selftests/fi_msg_ep.c),
#                       connected endpoints (FI_EP_MSG), server and
#                       client in two processes: fi_info -p rmsg -t FI_EP_MSG
#                       lists them; a connect, FI_CONNREQ and FI_CONNECTED;
#                       every size of 0 B, each power of two to 4 MiB and
#                       one either side of it, both ways, with fi_send()/
#                       fi_recv() and with fi_sendmsg()/fi_recvmsg() (two
#                       pieces, remote CQ data); fi_reject() is an EQ
#                       error entry with FI_ECONNREFUSED at the client;
#                       fi_shutdown() cancels the server's posted receive
#                       and is FI_SHUTDOWN at the client, whose posted
#                       receive fails; eight endpoints accepted from one
#                       passive endpoint at once, each with its own
#                       client's messages, four closed before the passive
#                       endpoint and four carrying messages after it;
#                       fi_reject() of a request accepted is refused;
#                       fi_getopt(), fi_setopt(), fi_cancel() of the
#                       passive endpoint answer; every byte checked,
#                       20 checks
#   pingpong_msg_ep_qp_errors
#                       fi_pingpong -p rmsg -e msg (a passive endpoint,
#                       fi_accept(), fi_connect(), the EQ), every size of
#                       -S all (0 B to 6 MiB), data checked (-c), two
#                       iterations a size (as pingpong_msg) while a QP
#                       error is forced into its channel every second
#                       (tools/testing/qp-error-loop), the pair run again
#                       until at least 3 were forced (8 runs at most):
#                       both sides exit 0 each time, every size's data
#                       checked: an FI_EP_MSG connection's repairs are
#                       invisible
#   intercomm_openmpi   build/prov/mpi_intercomm (selftests/
#                       mpi_intercomm.c) as two ranks over the provider
#                       (pml cm, mtl ofi): MPI_Intercomm_create(), whose
#                       second insert of the peers' addresses used to
#                       leave every rank waiting, messages both ways over
#                       the intercommunicator (1 MiB too), every byte
#                       checked, MPI_Intercomm_merge() and an allreduce
#   netpipe_openmpi     Open MPI's NetPIPE (NPopenmpi) over the provider
#                       (pml cm, mtl ofi, provider_include rmsg), two
#                       ranks, in its integrity mode (-i: every byte of
#                       every size up to 1 MiB checked), exit 0; and the
#                       same without the provider fails (nothing else
#                       could have carried it)
#   netpipe_device_readd  NetPIPE (-i) over the provider while rxe0 is
#                       deleted and made again LIBFABRIC_READDS times
#                       under it (2 in make check, 10 in make check-mpi; in as
#                       many jobs as that takes: NetPIPE ends early once
#                       a trial takes over a second, as under a repair):
#                       each job ends with exit 0 and every size passes
#                       its integrity check. The ranks run in
#                       a mount namespace without /dev/infiniband, so
#                       that libfabric's own verbs provider, which opens
#                       uverbs0 at fi_getinfo() whatever FI_PROVIDER says,
#                       holds no context that rxe (it cannot disassociate
#                       one) would wait for at removal
#   hpcc_openmpi        HPC Challenge (hpcc) over the same settings, two
#                       ranks (1 x 2 grid, N 400): every part runs, and
#                       every result it checks itself passes (HPL's
#                       residuals, RandomAccess's errors, STREAM's and
#                       FFT's validations). Two minutes under emulation:
#                       only with LIBFABRIC_HPCC=1 (make check-mpi), a
#                       skip that says so in make check
#   hpcc_qp_errors      the same while a QP error is forced into one of
#                       the job's channels every second (rmsgctl fault):
#                       at least 10 forced, exit 0, every check passed;
#                       LIBFABRIC_HPCC=1 only, likewise
#
# Run in the test guest by selftests/run.sh; prints KTAP. A guest or a
# build without libfabric skips, saying so. RMSG_TEST_FILTER (comma-
# separated, "libfabric.name" or "name") keeps only the tests it names;
# the others skip, saying so.

# libfabric's verbs provider, at every fi_getinfo() whatever FI_PROVIDER
# says, reads all of /proc/kallsyms (to learn whether the kernel has
# ib_umem_dmabuf_get) and asks uverbs0 for each of its 1,024 GID entries:
# 1.0 and 0.4 of the 1.7 s a libfabric program took to start in the
# emulated guest. The provider under test uses neither, so the suite runs
# in a mount namespace where both are empty: a program starts in 0.6 s,
# and no uverbs context is left open for rxe's removal to wait on.
if [ -z "${LIBFABRIC_TEST_NS:-}" ]; then
	exec env LIBFABRIC_TEST_NS=1 unshare -m bash -c \
		'mount --bind /dev/null /proc/kallsyms &&
		 mount -t tmpfs none /dev/infiniband &&
		 exec "$@"' _ "$0" "$@"
fi

# The t_* functions are called by name.
# shellcheck disable=SC2317
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
slow=${RMSG_TEST_SLOW:-1}
[[ "$slow" =~ ^[1-9][0-9]?$ ]] || slow=1
limit=$((300 * slow))
readds=${LIBFABRIC_READDS:-2}
[[ "$readds" =~ ^[1-9][0-9]?$ ]] || readds=2
addr=${RMSG_LOCAL_ADDR:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FI_PROVIDER_PATH=$PWD/build/prov
mpirun_rxe=$PWD/tools/testing/mpirun-rxe

tests=(fi_info params pingpong_msg pingpong_tagged wait_fd unexpected_rndv
       crossed_connect av_semantics conformance calls msg_endpoint
       pingpong_msg_ep_qp_errors intercomm_openmpi
       netpipe_openmpi netpipe_device_readd hpcc_openmpi hpcc_qp_errors)
echo "TAP version 13"
echo "1..${#tests[@]}"

skip=
if [ -z "$addr" ]; then
	skip="no RMSG_LOCAL_ADDR: not in the test guest"
elif [ ! -e /dev/rmsg ]; then
	skip="no /dev/rmsg: rmsg.ko is not loaded"
elif [ ! -e build/prov/librmsg-fi.so ]; then
	skip="build/prov/librmsg-fi.so not built (no libfabric-dev: make deps)"
elif ! command -v fi_info >/dev/null || ! command -v fi_pingpong >/dev/null; then
	skip="no fi_info or fi_pingpong (libfabric-bin: make deps)"
fi

# Is test $1 among RMSG_TEST_FILTER's names? Unset: every test is.
wanted() {
	local f

	[ -z "${RMSG_TEST_FILTER:-}" ] && return 0
	for f in ${RMSG_TEST_FILTER//,/ }; do
		[ "$f" = "$1" ] || [ "$f" = "libfabric.$1" ] && return 0
	done
	return 1
}

why=
fail() { why+="${*//$'\n'/ | }; "; }

t_fi_info() {
	local out=$tmp/fi_info.out

	timeout -k 5 60 fi_info -p rmsg -v >"$out" 2>&1 ||
		fail "fi_info -p rmsg exited $?: $(tail -n 2 "$out")"
	grep -q 'prov_name: rmsg$' "$out" || fail "no provider rmsg listed"
	grep -q 'type: FI_EP_RDM' "$out" || fail "no FI_EP_RDM"
	grep -q 'caps: \[ FI_MSG, FI_TAGGED' "$out" ||
		fail "no FI_MSG and FI_TAGGED"
	grep -q 'mem_tag_format: 0xffffffffffffffff' "$out" ||
		fail "not 64 tag bits"
}

# Wait until fi_pingpong's server, pid $1, listens on its control port
# (47592, which its pp_ctrl_init() opens first of all, before libfabric
# is asked for anything), at most 3 s (scaled); then its client may
# connect. The client does not retry a refused connect: this stands for
# the second the tests slept before each client (most of it waiting on a
# server that listened within a few tenths).
pp_server_listens() {
	local i

	for ((i = 0; i < 30 * slow; i++)); do
		grep -Eq ':B9E8 [0-9A-F]+:0000 0A ' /proc/net/tcp \
			/proc/net/tcp6 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# fi_pingpong with its own data check, server and client: mode $1, the
# largest size as it prints it $2, then more of its options. The endpoint
# type is $pp_ep's (rdm unless the caller sets it: msg).
pingpong() {
	local mode=$1 last=$2 ep=${pp_ep:-rdm} s c

	shift 2
	timeout -k 5 "$limit" fi_pingpong -p rmsg -e "$ep" -m "$mode" -c "$@" \
		>"$tmp/server.$mode" 2>&1 &
	s=$!
	pp_server_listens "$s"
	timeout -k 5 "$limit" fi_pingpong -p rmsg -e "$ep" -m "$mode" -c "$@" \
		"$addr" >"$tmp/client.$mode" 2>&1
	c=$?
	wait "$s"
	s=$?
	[ "$c" = 0 ] || fail "the client exited $c: $(tail -n 2 "$tmp/client.$mode")"
	[ "$s" = 0 ] || fail "the server exited $s: $(tail -n 2 "$tmp/server.$mode")"
	# Every size ran its iterations, the largest too.
	grep -q "^$last " "$tmp/client.$mode" ||
		fail "no $last line: $(tail -n 2 "$tmp/client.$mode")"
	# What fi_pingpong printed, not the provider's log (FI_LOG_LEVEL).
	cat "$tmp/client.$mode" "$tmp/server.$mode" | grep -v '^libfabric:' |
		grep -q -i 'error\|fail' &&
		fail "an error was printed: $(cat "$tmp/client.$mode" "$tmp/server.$mode" | grep -v '^libfabric:' | grep -i -m 1 'error\|fail')"
	echo "# $mode: $(grep -c '^[0-9]' "$tmp/client.$mode") sizes; 1 KiB: $(awk '$1 == "1k" { print $7 " us" }' "$tmp/client.$mode")"
}

t_params() {
	local out=$tmp/fi_info_e.out eager s

	timeout -k 5 60 fi_info -e >"$out" 2>&1 ||
		fail "fi_info -e exited $?: $(tail -n 2 "$out")"
	for p in FI_RMSG_ADDR FI_RMSG_BLOCK_SIZE FI_RMSG_RNDV_THRESHOLD \
		FI_RMSG_SUMMARY; do
		grep -q "$p" "$out" || fail "fi_info -e does not list $p"
	done
	FI_LOG_LEVEL=info FI_LOG_PROV=rmsg FI_RMSG_BLOCK_SIZE=8192 \
		pingpong msg 1m -I 2
	eager=$(sed -n 's/.*channel [0-9]* open: eager payloads up to \([0-9]*\) bytes.*/\1/p' \
		"$tmp/client.msg" | head -n 1)
	echo "# FI_RMSG_BLOCK_SIZE=8192: eager up to ${eager:-?} bytes"
	# Half a block at most (Documentation/veloblock.rst); 32 KiB gives 16 K.
	[ -n "$eager" ] && ((eager <= 4096 && eager > 2048)) ||
		fail "with 8 KiB blocks, eager up to '${eager}' bytes"
	# Endpoints with arrival summaries carry it all the same.
	FI_LOG_LEVEL=info FI_LOG_PROV=rmsg FI_RMSG_RNDV_THRESHOLD=1000 \
		FI_RMSG_SUMMARY=1 pingpong msg 1m -I 2
	eager=$(sed -n 's/.*channel [0-9]* open: eager payloads up to \([0-9]*\) bytes.*/\1/p' \
		"$tmp/client.msg" | head -n 1)
	echo "# FI_RMSG_RNDV_THRESHOLD=1000: eager up to ${eager:-?} bytes"
	[ "$eager" = 1000 ] ||
		fail "with a threshold of 1000, eager up to '${eager}' bytes"
	# The server makes its endpoint once the client's socket is there.
	FI_LOG_LEVEL=warn FI_RMSG_BLOCK_SIZE=100 timeout -k 5 60 \
		fi_pingpong -p rmsg -e rdm -m msg >"$tmp/bad_server" 2>&1 &
	s=$!
	pp_server_listens "$s"
	FI_LOG_LEVEL=warn FI_RMSG_BLOCK_SIZE=100 timeout -k 5 60 \
		fi_pingpong -p rmsg -e rdm -m msg "$addr" >"$tmp/bad_client" 2>&1 &&
		fail "fi_pingpong with FI_RMSG_BLOCK_SIZE=100 exited 0"
	wait "$s" && fail "its server exited 0"
	# Whichever made its endpoint first says why, and the other goes too.
	cat "$tmp/bad_server" "$tmp/bad_client" |
		grep -q 'FI_RMSG_BLOCK_SIZE=100: a multiple of 16' ||
		fail "no word of FI_RMSG_BLOCK_SIZE=100: $(tail -n 2 "$tmp/bad_server")"
}

t_pingpong_msg() { pingpong msg 6m -S all -I 2; }
t_pingpong_tagged() { pingpong tagged 1m -I 2; }

# The faults qp-error-loop forced so far (its COUNT_FILE), 0 before any.
qp_forced() {
	local n

	n=$(cat "$tmp/qp-loop.count" 2>/dev/null)
	echo "${n:-0}"
}

t_pingpong_msg_ep_qp_errors() {
	local alive loop forced runs=0

	# The loop forces faults while $alive lives: as long as the pairs run.
	sleep "$limit" &
	alive=$!
	: >"$tmp/qp-loop.count"
	tools/testing/qp-error-loop "$alive" "$tmp/qp-loop.count" \
		>"$tmp/qp-loop.out" &
	loop=$!
	# Two iterations a size, as pingpong_msg, every size checked; the pair
	# runs again until at least 3 faults landed under the runs, however
	# fast a run goes (one took under 3 s in a guest without slub_debug's
	# cost), 8 runs at the most.
	while ((runs < 8)) && (($(qp_forced) < 3)); do
		pp_ep=msg pingpong msg 6m -S all -I 2
		runs=$((runs + 1))
		[ -z "$why" ] || break
	done
	kill "$alive" 2>/dev/null
	wait "$alive" "$loop" 2>/dev/null
	forced=$(cat "$tmp/qp-loop.out")
	((${forced:-0} >= 3)) ||
		fail "only ${forced:-0} QP errors forced under fi_pingpong -e msg"
	echo "# ${forced:-0} QP errors forced, one a second, under $runs runs"
}

t_wait_fd() {
	local out=$tmp/fi_wait.out

	if [ ! -x build/prov/fi_wait ]; then
		fail "build/prov/fi_wait not built"
		return
	fi
	timeout -k 5 "$limit" build/prov/fi_wait >"$out" 2>&1 ||
		fail "fi_wait exited $?: $(grep -v '^ok' "$out" | head -n 3)"
	[ "$(grep -c '^ok ' "$out")" = 5 ] ||
		fail "$(grep -c '^ok ' "$out") of 5 checks passed"
	sed 's/^/# /' "$out"
}

# Run build/prov/$1 into $out, the provider's counters at close in its
# log (FI_LOG_LEVEL=info): it must exit 0 with $2 checks passed. A
# failure quotes the program's own first lines, not libfabric's log.
# Fails (1) without running it when it was not built.
fi_program() {
	if [ ! -x "build/prov/$1" ]; then
		fail "build/prov/$1 not built"
		return 1
	fi
	FI_LOG_LEVEL=info FI_LOG_PROV=rmsg timeout -k 5 "$limit" \
		"build/prov/$1" >"$out" 2>&1 ||
		fail "$1 exited $?: $(grep -v '^ok\|^libfabric:' "$out" | head -n 3)"
	[ "$(grep -c '^ok ' "$out")" = "$2" ] ||
		fail "$(grep -c '^ok ' "$out") of $2 checks passed"
	grep '^ok \|^FAILED ' "$out" | sed 's/^/# /'
}

t_unexpected_rndv() {
	local out=$tmp/fi_unexp.out stats

	fi_program fi_unexp 22 || return
	# b closes second: its counters are the last ones logged.
	stats=$(grep 'rendezvous receives' "$out" | tail -n 1 |
		sed 's/.*rendezvous receives //')
	echo "# receiver: rendezvous receives $stats"
	[[ "$stats" == "7 into the posted buffer, 2 ("* ]] ||
		fail "not 7 straight into the posted buffer and 2 through the provider's: $stats"
}

t_crossed_connect() {
	local out=$tmp/fi_cross.out opened closes

	fi_program fi_cross 12 || return
	# The closes: c, d, e, f, g, h, those of 5 and 6, then a, b. Each
	# line: opened, given up.
	closes=$(grep 'channels opened' "$out")
	opened=$({ head -n 6 <<<"$closes"; tail -n 2 <<<"$closes"; } |
		sed 's/.*channels opened \([0-9]*\), of which closed for the peer.s \([0-9]*\)/\1 \2/' |
		tr '\n' ' ')
	echo "# channels opened and given up, c d e f g h a b: $opened"
	sed 's/.*channels opened \([0-9]*\), of which closed for the peer.s \([0-9]*\)/\1 \2/' <<<"$closes" |
		awk -v n="$(wc -l <<<"$closes")" 'NR > 6 && NR <= n - 2 {
			o += $1; g += $2; e++ }
			END { printf "# 5 and 6: %d endpoints opened %d channels, gave %d up\n", e, o, g }'
	set -- $opened
	[ $# = 16 ] &&
		[ "$1 $3 $5 $7 $9 ${10} ${11} ${12} ${13} ${14} ${15} ${16}" = "1 1 1 1 1 0 0 0 1 0 0 0" ] &&
		(($2 + $4 <= 1)) && (($6 + $8 == 1)) ||
		fail "not one channel opened by each of c, d, e, f, g and a, none by h and b, at most one of c's and d's given up, one of e's and f's, none of g's and h's: $opened"
}

t_av_semantics() {
	local out=$tmp/fi_av.out

	fi_program fi_av 21
}

t_conformance() {
	local out=$tmp/fi_conform.out

	fi_program fi_conform 15
}

t_calls() {
	local out=$tmp/fi_calls.out

	fi_program fi_calls 22
}

t_msg_endpoint() {
	local out=$tmp/fi_msg_ep.out

	timeout -k 5 60 fi_info -p rmsg -t FI_EP_MSG >"$tmp/fi_info_msg.out" 2>&1 &&
		grep -q 'FI_EP_MSG' "$tmp/fi_info_msg.out" ||
		fail "fi_info -p rmsg -t FI_EP_MSG lists none: $(tail -n 2 "$tmp/fi_info_msg.out")"
	fi_program fi_msg_ep 20
}

# Two ranks over the provider, in $tmp (tools/testing/mpirun-rxe).
mpi() {
	(cd "$tmp" && "$mpirun_rxe" -t "$limit" "$@")
}

t_intercomm_openmpi() {
	local out=$tmp/intercomm.log

	if ! command -v mpirun >/dev/null || [ ! -x build/prov/mpi_intercomm ]; then
		fail "no mpirun or build/prov/mpi_intercomm (openmpi-bin, libopenmpi-dev: make deps)"
		return
	fi
	mpi "$PWD/build/prov/mpi_intercomm" >"$out" 2>&1 ||
		fail "mpi_intercomm exited $?: $(grep -v '^ok' "$out" | tail -n 3)"
	[ "$(grep -c '^ok ' "$out")" = 3 ] ||
		fail "$(grep -c '^ok ' "$out") of 3 checks passed"
	grep '^ok \|^FAILED ' "$out" | sed 's/^/# /'
}

t_netpipe_openmpi() {
	local out=$tmp/np.log n

	if ! command -v mpirun >/dev/null || ! command -v NPopenmpi >/dev/null; then
		fail "no mpirun or NPopenmpi (openmpi-bin, netpipe-openmpi: make deps)"
		return
	fi
	mpi NPopenmpi -i -u 1048576 -o "$tmp/np.out" >"$out" 2>&1 ||
		fail "NPopenmpi -i exited $?: $(tail -n 3 "$out")"
	grep -q -i 'integrity check failed\|error' "$out" &&
		fail "$(grep -i -m 1 'integrity check failed\|error' "$out")"
	# Each size says so; the last ones are over 512 KiB. NetPIPE stops
	# once a trial takes over a second: on a slower kernel
	# (RMSG_TEST_SLOW, the debug kernel) that is before 768 KiB, and
	# 512 KiB (many times the eager limit) is what it reaches.
	n=$(grep -c 'Integrity check passed' "$out")
	[ "$n" -ge 30 ] || fail "$n sizes passed the integrity check"
	if [ "$slow" = 1 ]; then
		grep -q '  7864[0-9][0-9] bytes.*Integrity check passed' "$out" ||
			fail "no size near 768 KiB passed: $(tail -n 2 "$out")"
	else
		grep -q '  5242[0-9][0-9] bytes.*Integrity check passed' "$out" ||
			fail "no size near 512 KiB passed: $(tail -n 2 "$out")"
	fi
	FI_PROVIDER_PATH=/nonexistent mpi NPopenmpi -u 64 \
		>"$tmp/np-none.log" 2>&1 &&
		fail "NetPIPE ran without the rmsg provider: another one carried it"
	echo "# NetPIPE -i: $n sizes, every byte checked"
}

t_netpipe_device_readd() {
	local out np i removed=0 jobs=0 n=0 p fds=0

	if ! command -v NPopenmpi >/dev/null || ! command -v unshare >/dev/null; then
		fail "no NPopenmpi or unshare"
		return
	fi
	# NetPIPE ends early once a trial takes over a second, as one under
	# a repair does: jobs follow each other until $readds removals were
	# made under them, each while a job is past its start.
	while ((removed < readds && jobs < 10)); do
		jobs=$((jobs + 1))
		out=$tmp/np-readd.$jobs.log
		mpi -n NPopenmpi -i -u 4194304 -o "$tmp/np-readd.out" \
			>"$out" 2>&1 &
		np=$!
		for ((i = 0; i < 120 * slow; i++)); do
			grep -q 'Integrity check passed' "$out" && break
			kill -0 "$np" 2>/dev/null || break
			sleep 1
		done
		if [ "$jobs" = 1 ]; then
			for p in $(pgrep -x NPopenmpi); do
				fds=$((fds + $(find "/proc/$p/fd" \
					-lname '*uverbs*' 2>/dev/null | wc -l)))
			done
			[ "$fds" = 0 ] ||
				fail "the ranks hold $fds uverbs descriptors"
		fi
		while ((removed < readds)) && kill -0 "$np" 2>/dev/null; do
			timeout 60 rdma link delete rxe0 ||
				{ fail "removal $((removed + 1)): rdma link delete failed or hung"; break 2; }
			sleep 1
			rdma link add rxe0 type rxe netdev "$RMSG_NETDEV" ||
				{ fail "removal $((removed + 1)): rdma link add failed"; break 2; }
			removed=$((removed + 1))
			sleep 2
		done
		wait "$np" ||
			{ fail "job $jobs: NPopenmpi exited $?: $(tail -n 3 "$out")"; break; }
		grep -q -i 'integrity check failed\|error' "$out" &&
			{ fail "job $jobs: $(grep -i -m 1 'integrity check failed\|error' "$out")"; break; }
		n=$((n + $(grep -c 'Integrity check passed' "$out")))
	done
	wait
	[ "$removed" = "$readds" ] || fail "$removed of $readds removals made"
	echo "# NetPIPE -i: rxe0 deleted and made again $removed times under $jobs jobs, $n sizes passed, every one"
}

# HPCC's own verdicts in hpccoutf.txt (tools/testing/hpcc-check): a
# failure for each thing that went wrong.
hpcc_check() {
	local verdict line

	verdict=$(tools/testing/hpcc-check verdict "$tmp") && return
	while IFS= read -r line; do
		fail "$line"
	done <<<"$verdict"
}

hpcc_ready() {
	if ! command -v mpirun >/dev/null || ! command -v hpcc >/dev/null ||
	   [ ! -r /usr/share/doc/hpcc/examples/_hpccinf.txt ]; then
		fail "no mpirun, hpcc or its example input (openmpi-bin, hpcc: make deps)"
		return 1
	fi
	tools/testing/hpcc-check input "$tmp" || { fail "no HPCC input"; return 1; }
	rm -f "$tmp/hpccoutf.txt"
}

t_hpcc_openmpi() {
	hpcc_ready || return
	mpi hpcc >"$tmp/hpcc.log" 2>&1 ||
		fail "hpcc exited $?: $(tail -n 3 "$tmp/hpcc.log")"
	hpcc_check
	echo "# HPCC: $(grep -c PASSED "$tmp/hpccoutf.txt") checks passed; $(grep -m 1 '^MPIRandomAccess_GUPs=' "$tmp/hpccoutf.txt"), $(grep -m 1 '^MPIFFT_Gflops=' "$tmp/hpccoutf.txt")"
}

# HPCC while a QP error is forced (rmsgctl fault qp-error) every second
# into one of the channels under the job, each open one in turn: the job
# ends with exit 0 and every check of its own passed (a fault that was not
# repaired would leave a rank waiting, or its completions in error).
t_hpcc_qp_errors() {
	local hp forced

	hpcc_ready || return
	mpi hpcc >"$tmp/hpcc-qp.log" 2>&1 &
	hp=$!
	forced=$(tools/testing/qp-error-loop "$hp")
	wait "$hp" || fail "hpcc exited $?: $(tail -n 3 "$tmp/hpcc-qp.log")"
	hpcc_check
	((forced >= 10)) || fail "only $forced QP errors forced under the job"
	echo "# HPCC: $forced QP errors forced, one a second; $(grep -c PASSED "$tmp/hpccoutf.txt") checks passed"
}

n=0
status=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	if [ -n "$skip" ]; then
		echo "ok $n libfabric.$t # SKIP $skip"
		continue
	fi
	if ! wanted "$t"; then
		echo "ok $n libfabric.$t # SKIP not in RMSG_TEST_FILTER"
		continue
	fi
	if [[ "$t" == hpcc_* ]] && [ "${LIBFABRIC_HPCC:-0}" != 1 ]; then
		echo "ok $n libfabric.$t # SKIP two minutes under emulation: make check-mpi runs it (LIBFABRIC_HPCC=1)"
		continue
	fi
	why=
	start=$SECONDS
	"t_$t"
	echo "# time: $((SECONDS - start)) s"
	if [ -z "$why" ]; then
		echo "ok $n libfabric.$t"
	else
		echo "not ok $n libfabric.$t # $why"
		status=1
	fi
done
exit $status
