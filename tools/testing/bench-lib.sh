# SPDX-License-Identifier: GPL-2.0
#
# What tools/testing/bench.sh and bench-ab.sh share: sourced by both, in
# an rmsg-vm guest. The caller sets out (where results go), addr (the
# address the server listens on), server_cpu and client_cpu, as_user (a
# command to run rmsg-perf under, as an array; empty for none) and log().

# perf_pair PERF NAME SERVER_ARGS -- CLIENT_ARGS: rmsg-perf PERF as the
# server in the background and as the client (which retries until the
# server listens) in front, each pinned to its CPU; the client's stdout
# goes to OUT/NAME, the rest to OUT/NAME.log and OUT/NAME.server.log.
# Fails when either side does.
perf_pair() {
	local perf=$1 name=$2 srv=() cli=() spid status
	shift 2
	while (($#)) && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout 300 taskset -c "$server_cpu" "${as_user[@]}" "$perf" \
		"${srv[@]}" >>"$out/$name.server.log" 2>&1 &
	spid=$!
	timeout 300 taskset -c "$client_cpu" "${as_user[@]}" "$perf" \
		"${cli[@]}" "$addr" >>"$out/$name" 2>>"$out/$name.log"
	status=$?
	wait "$spid" || status=1
	[ "$status" = 0 ] || log "rmsg-perf $name failed (status $status)"
	return "$status"
}
