#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make soak` (Documentation/resilience.rst, "Soak"):
# FAULTS faults of each class into channels carrying byte-checked message
# streams, with the counts: the module's injected QP errors, dropped
# connections and fatal device errors, and rxe0 deleted and made again.
# Run by rmsg-vm (loopback topology):
#
#   tools/testing/soak.sh [FAULTS]        (default 1000 per class)
#
# SOAK_KINDS picks the classes, comma-separated (default
# qp-error,disconnect,device-fatal,hca-readd); KIND:N gives one class its
# own count, KIND:N:R (or KIND::R) also its rendezvous period (below).
# hca-readd takes about 1.5 s a fault under emulation: 1000 of them are 25
# minutes.
#
# Each class is one run of `rmsg-perf recover`: SOAK_CHANNELS channels
# (default 4), each with SOAK_WINDOW messages of SOAK_SIZE bytes out at
# once (16 of 1024), every byte checked (--full-check), echoed by the
# server; the client injects the faults into its channels in turn,
# SOAK_INTERVAL_MS (20) after the previous repair. A message lost,
# repeated, reordered or damaged, a channel that ends, a fault that is not
# repaired, or a kernel warning fails the soak (rmsg-vm fails the run on a
# kernel warning too).
#
# SOAK_RNDV_EVERY=N sends every Nth message of each channel's streams, both
# ways, by rendezvous (rmsg-perf --rndv-every: RGet and RPut in turn, 1 B
# to 192 KiB, every byte checked); 0 turns it off. The default is 7 for
# every class (transfers under way when a channel moves to another device
# get new keys: resilience.rst, "Moving to another device").
#
# SOAK_LINK=PORT puts the channels on a link (Documentation/design.rst,
# "Links"): the module's link_port is PORT (below 1024) for the soak and 0
# after. A warm-up channel brings the link up first, so that every soak
# channel opens on the link's connection; a QP error forced on any of them
# breaks that connection, and every fault repairs all the channels at
# once, each of them resumed exactly once. Only qp-error applies there,
# and is the default class: a channel on a link has no connection of its
# own to disconnect, and ends when its link leaves the device (following
# it to another device is not built). After each class the links are
# listed (OUT/KIND.links, rmsgctl -j links); a class whose channels did
# not all go on the link fails.
#
# SOAK_LEASE=1 has the channels lease their receive blocks (the module's
# lease_blocks, 1 for the soak and as it was after; design.rst, "Memory
# in proportion to traffic"): each repair then also settles where both
# leases of every channel stand, from the READYs of the new connection.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

faults=${1:-1000}
channels=${SOAK_CHANNELS:-4}
window=${SOAK_WINDOW:-16}
size=${SOAK_SIZE:-1024}
interval=${SOAK_INTERVAL_MS:-20}
perf=tools/rmsg-perf/rmsg-perf
addr=${RMSG_LOCAL_ADDR:?not in an rmsg-vm guest}
out=${SOAK_OUT:-/tmp/soak}
bad='WARNING:|BUG[: ]|Oops|general protection|Call Trace|Redzone|Poison overwritten|refcount_t:|list_(add|del) corruption|UBSAN'

mkdir -p "$out"
start=$(date +%s)
# On a link a repair step that sleeps is over in seconds, and a
# channel's repair gives up in tens: a task blocked for SOAK_HUNG_TASK_S
# (15 with SOAK_LINK, else rmsg-vm's 60) ends the soak red with its
# stack (rmsg-vm's hung-task watch), rather than a class failing later
# on its channels' deadlines with no trace of where the repair waited.
# Three link soaks of 1,000 faults passed with 15.
hung=/proc/sys/kernel/hung_task_timeout_secs
hung_was=$(cat "$hung" 2>/dev/null)
hung_s=${SOAK_HUNG_TASK_S:-${SOAK_LINK:+15}}
[ -z "$hung_was" ] || [ -z "$hung_s" ] || echo "$hung_s" >"$hung"
# What the soak changed goes back however it ends.
restore() {
	[ -z "$hung_was" ] || echo "$hung_was" >"$hung"
	[ -z "${link_set:-}" ] || echo 0 >"$link_param"
	[ -z "${lease_was:-}" ] || echo "$lease_was" >"$lease_param"
}
trap restore EXIT
# The kernel log is judged from here on: what a test before the soak
# logged in the same boot (an OOM report of rmsg_exhaust_test's memory
# cgroup, with its Call Trace) is that test's to judge.
mark="soak: begins, $$ $start $RANDOM"
echo "$mark" >/dev/kmsg
since_mark() { dmesg | sed -n "/$mark/,\$p"; }
log() { printf '# soak: %4ss %s\n' "$(($(date +%s) - start))" "$*" >&2; }

# field NAME JSON: a number of rmsg-perf's JSON line.
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<<"$2"; }

status=0
declare -A sum
kinds=${SOAK_KINDS:-qp-error,disconnect,device-fatal,hca-readd}
link=${SOAK_LINK:-}
link_param=/sys/module/rmsg/parameters/link_port
if [ -n "$link" ]; then
	if [ ! -w "$link_param" ]; then
		log "FAILED: SOAK_LINK: the module has no link_port parameter"
		exit 1
	fi
	kinds=${SOAK_KINDS:-qp-error}
	echo "$link" >"$link_param" || exit 1
	link_set=1
fi
lease_param=/sys/module/rmsg/parameters/lease_blocks
if [ -n "${SOAK_LEASE:-}" ]; then
	if [ ! -w "$lease_param" ]; then
		log "FAILED: SOAK_LEASE: the module has no lease_blocks parameter"
		exit 1
	fi
	lease_was=$(cat "$lease_param")
	echo 1 >"$lease_param" || exit 1
fi

# The channels that went on links so far (every link's channels_total).
link_channels() {
	tools/rmsgctl/rmsgctl -j links | tee "$1" |
		sed -n 's/.*"channels_total": *\([0-9]*\).*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}

# A channel to this node with nothing on it, until the link is up: the
# first channel to a node brings its link and is a connection of its own.
link_warm() {
	local i
	for i in 1 2 3; do
		"$perf" -T 60 -n 10 -s 64 lat >"$out/warm.server.log" 2>&1 &
		"$perf" -T 60 -n 10 -s 64 lat "$addr" >"$out/warm.log" 2>&1
		wait
		[ "$(link_channels "$out/warm.links")" -gt "$1" ] && return 0
	done
	return 1
}
for spec in ${kinds//,/ }; do
	IFS=: read -r kind n every <<<"$spec"
	n=${n:-$faults}
	if [ -z "$every" ]; then
		every=${SOAK_RNDV_EVERY:-7}
	fi
	mix=
	[ "$every" = 0 ] || mix=", every $every by rendezvous"
	log "$n $kind faults, $channels channels x $window messages of $size bytes$mix${link:+, on a link}${SOAK_LEASE:+, blocks leased}"
	if [ -n "$link" ]; then
		before=$(link_channels "$out/$kind.links-before")
		if ! link_warm "$before"; then
			log "FAILED: $kind: no link came up (rxe0 may place out of order here: Documentation/testbed.rst)"
			status=1
			continue
		fi
		before=$(link_channels "$out/$kind.links-before")
	fi
	taskset -c 0 "$perf" -T 120 recover >"$out/$kind.server.log" 2>&1 &
	spid=$!
	taskset -c 1 "$perf" --json -T 120 -s "$size" -c "$channels" \
		-W "$window" --full-check --fault="$kind" -n "$n" \
		--rndv-every="$every" \
		-i "$interval" recover "$addr" >"$out/$kind.json" \
		2>"$out/$kind.log"
	st=$?
	wait "$spid" || st=1
	json=$(grep '^{' "$out/$kind.json")
	# Every soak channel (a link counts each channel once).
	if [ -n "$link" ] &&
	   [ "$(link_channels "$out/$kind.links")" -lt $((before + channels)) ]; then
		log "FAILED: $kind: not every channel went on the link ($out/$kind.links)"
		st=1
	fi
	if [ "$st" != 0 ] || [ -z "$json" ]; then
		log "FAILED: $kind (status $st)"
		cat "$out/$kind.log" "$out/$kind.server.log" >&2
		# A carrier's repair that waited for channels to let go of
		# its QP names them (rmsg_carrier_quiesce()).
		since_mark | grep -E 'still on the QP' | head -n 20 >&2
		status=1
		continue
	fi
	printf '%-10s faults %s, repairs %s (server %s), written again %s msgs/%s bytes (server %s/%s), messages %s sent %s back (rendezvous %s/%s), lost %s, duplicated %s, failures %s, recovery p50 %s ms p99 %s ms max %s ms, channels recovering %s ms, %s s\n' \
		"$kind" "$(field faults "$json")" "$(field repairs "$json")" \
		"$(field peer_repairs "$json")" "$(field retx_msgs "$json")" \
		"$(field retx_bytes "$json")" "$(field peer_retx_msgs "$json")" \
		"$(field peer_retx_bytes "$json")" \
		"$(field msgs_sent "$json")" "$(field msgs_received "$json")" \
		"$(field rndv_sent "$json")" "$(field rndv_received "$json")" \
		"$(field lost "$json")" "$(field dups "$json")" \
		"$(field failures "$json")" "$(field recovery_ms_p50 "$json")" \
		"$(field recovery_ms_p99 "$json")" \
		"$(field recovery_ms_max "$json")" \
		"$(field recovering_ms "$json")" "$(field seconds "$json")"
	for k in faults repairs peer_repairs retx_msgs retx_bytes \
		 peer_retx_msgs peer_retx_bytes msgs_sent rndv_sent lost dups \
		 failures; do
		sum[$k]=$((${sum[$k]:-0} + $(field "$k" "$json")))
	done
	if [ "$(field faults "$json")" -lt "$n" ] ||
	   [ "$(field lost "$json")" != 0 ] ||
	   [ "$(field failures "$json")" != 0 ]; then
		log "FAILED: $kind: faults, losses or failures not as they must be"
		status=1
	fi
done

if since_mark | grep -Eq "$bad"; then
	log "FAILED: the kernel log has warnings:"
	since_mark | grep -E -A20 "$bad" | head -n 60 >&2
	status=1
fi

printf 'total      faults %s, repairs %s (server %s), written again %s msgs/%s bytes (server %s/%s), messages %s (rendezvous %s), lost %s, duplicated %s, failures %s, %s s\n' \
	"${sum[faults]:-0}" "${sum[repairs]:-0}" "${sum[peer_repairs]:-0}" \
	"${sum[retx_msgs]:-0}" "${sum[retx_bytes]:-0}" \
	"${sum[peer_retx_msgs]:-0}" "${sum[peer_retx_bytes]:-0}" \
	"${sum[msgs_sent]:-0}" "${sum[rndv_sent]:-0}" "${sum[lost]:-0}" "${sum[dups]:-0}" \
	"${sum[failures]:-0}" "$(($(date +%s) - start))"
[ "$status" = 0 ] && log "passed" || log "FAILED"
exit "$status"
