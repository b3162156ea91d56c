/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: tracepoints of the channel life cycle, of repairs and of the peer
 * nodes' heartbeats, in the "rmsg" trace system
 * (/sys/kernel/tracing/events/rmsg/). Every change of a channel's state
 * and of a repair's phase goes through one helper in rmsg_lifecycle.c,
 * which fires these (rmsg_repair.c the repair's end, rmsg_node.c a node's
 * period);
 * Documentation/resilience.rst, "Tracepoints", says what each field means.
 *
 * rmsg is built out of tree: rmsg_trace.c defines the events, and finds
 * this header again through TRACE_INCLUDE_PATH "." and its -I$(src).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rmsg

#if !defined(_RMSG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RMSG_TRACE_H

#include <linux/tracepoint.h>

#include "rmsg_chan.h"

TRACE_DEFINE_ENUM(RMSG_CHAN_CONNECTING);
TRACE_DEFINE_ENUM(RMSG_CHAN_REQUESTED);
TRACE_DEFINE_ENUM(RMSG_CHAN_ACCEPTING);
TRACE_DEFINE_ENUM(RMSG_CHAN_OPEN);
TRACE_DEFINE_ENUM(RMSG_CHAN_RECOVERING);
TRACE_DEFINE_ENUM(RMSG_CHAN_DYING);

#define rmsg_show_state(s)					\
	__print_symbolic(s,					\
		{ RMSG_CHAN_CONNECTING,	"CONNECTING" },		\
		{ RMSG_CHAN_REQUESTED,	"REQUESTED" },		\
		{ RMSG_CHAN_ACCEPTING,	"ACCEPTING" },		\
		{ RMSG_CHAN_OPEN,	"OPEN" },		\
		{ RMSG_CHAN_RECOVERING,	"RECOVERING" },		\
		{ RMSG_CHAN_DYING,	"DYING" })

TRACE_DEFINE_ENUM(RMSG_REPAIR_NONE);
TRACE_DEFINE_ENUM(RMSG_REPAIR_DOWN);
TRACE_DEFINE_ENUM(RMSG_REPAIR_BACKOFF);
TRACE_DEFINE_ENUM(RMSG_REPAIR_DIALING);
TRACE_DEFINE_ENUM(RMSG_REPAIR_WAITING);
TRACE_DEFINE_ENUM(RMSG_REPAIR_ACCEPTING);

#define rmsg_show_phase(p)					\
	__print_symbolic(p,					\
		{ RMSG_REPAIR_NONE,	"NONE" },		\
		{ RMSG_REPAIR_DOWN,	"DOWN" },		\
		{ RMSG_REPAIR_BACKOFF,	"BACKOFF" },		\
		{ RMSG_REPAIR_DIALING,	"DIALING" },		\
		{ RMSG_REPAIR_WAITING,	"WAITING" },		\
		{ RMSG_REPAIR_ACCEPTING, "ACCEPTING" })

/* A channel changed state; @error: why it is repaired or ends, else 0. */
TRACE_EVENT(rmsg_chan_state,
	TP_PROTO(u32 ep_id, u32 chan, int from, int to, int error),
	TP_ARGS(ep_id, chan, from, to, error),
	TP_STRUCT__entry(
		__field(u32, ep_id)
		__field(u32, chan)
		__field(int, from)
		__field(int, to)
		__field(int, error)
	),
	TP_fast_assign(
		__entry->ep_id = ep_id;
		__entry->chan = chan;
		__entry->from = from;
		__entry->to = to;
		__entry->error = error;
	),
	TP_printk("ep=%u ch=%u %s -> %s error=%d",
		  __entry->ep_id, __entry->chan, rmsg_show_state(__entry->from),
		  rmsg_show_state(__entry->to), __entry->error)
);

/* A repair moved to another phase, on connection attempt @epoch. */
TRACE_EVENT(rmsg_repair_phase,
	TP_PROTO(u32 ep_id, u32 chan, int from, int to, u32 epoch,
		 u32 attempt),
	TP_ARGS(ep_id, chan, from, to, epoch, attempt),
	TP_STRUCT__entry(
		__field(u32, ep_id)
		__field(u32, chan)
		__field(int, from)
		__field(int, to)
		__field(u32, epoch)
		__field(u32, attempt)
	),
	TP_fast_assign(
		__entry->ep_id = ep_id;
		__entry->chan = chan;
		__entry->from = from;
		__entry->to = to;
		__entry->epoch = epoch;
		__entry->attempt = attempt;
	),
	TP_printk("ep=%u ch=%u %s -> %s epoch=%u attempt=%u",
		  __entry->ep_id, __entry->chan, rmsg_show_phase(__entry->from),
		  rmsg_show_phase(__entry->to), __entry->epoch,
		  __entry->attempt)
);

/*
 * A repair succeeded after @duration_ns and @attempts connection
 * attempts; the peer's block lacked @records records (@bytes bytes),
 * which are written again now.
 */
TRACE_EVENT(rmsg_repair_done,
	TP_PROTO(u32 ep_id, u32 chan, u32 epoch, u32 attempts,
		 u64 duration_ns, u32 records, u32 bytes),
	TP_ARGS(ep_id, chan, epoch, attempts, duration_ns, records, bytes),
	TP_STRUCT__entry(
		__field(u32, ep_id)
		__field(u32, chan)
		__field(u32, epoch)
		__field(u32, attempts)
		__field(u64, duration_ns)
		__field(u32, records)
		__field(u32, bytes)
	),
	TP_fast_assign(
		__entry->ep_id = ep_id;
		__entry->chan = chan;
		__entry->epoch = epoch;
		__entry->attempts = attempts;
		__entry->duration_ns = duration_ns;
		__entry->records = records;
		__entry->bytes = bytes;
	),
	TP_printk("ep=%u ch=%u epoch=%u attempts=%u duration_us=%llu records=%u bytes=%u",
		  __entry->ep_id, __entry->chan, __entry->epoch,
		  __entry->attempts, __entry->duration_ns / 1000,
		  __entry->records, __entry->bytes)
);

/*
 * A fault of a channel's connection was detected (@cause, a negative
 * errno) while the channel was in @state: an OPEN one is repaired or
 * ends, a RECOVERING one loses the attempt under way.
 */
TRACE_EVENT(rmsg_chan_fault,
	TP_PROTO(u32 ep_id, u32 chan, int state, int cause),
	TP_ARGS(ep_id, chan, state, cause),
	TP_STRUCT__entry(
		__field(u32, ep_id)
		__field(u32, chan)
		__field(int, state)
		__field(int, cause)
	),
	TP_fast_assign(
		__entry->ep_id = ep_id;
		__entry->chan = chan;
		__entry->state = state;
		__entry->cause = cause;
	),
	TP_printk("ep=%u ch=%u state=%s cause=%d",
		  __entry->ep_id, __entry->chan,
		  rmsg_show_state(__entry->state), __entry->cause)
);

/* RMSG_CQE_STALLED (@resumed false) or RESUMED was posted, @ms in. */
TRACE_EVENT(rmsg_chan_stall,
	TP_PROTO(u32 ep_id, u32 chan, bool resumed, u32 ms),
	TP_ARGS(ep_id, chan, resumed, ms),
	TP_STRUCT__entry(
		__field(u32, ep_id)
		__field(u32, chan)
		__field(bool, resumed)
		__field(u32, ms)
	),
	TP_fast_assign(
		__entry->ep_id = ep_id;
		__entry->chan = chan;
		__entry->resumed = resumed;
		__entry->ms = ms;
	),
	TP_printk("ep=%u ch=%u %s ms=%u", __entry->ep_id, __entry->chan,
		  __entry->resumed ? "RESUMED" : "STALLED", __entry->ms)
);

/*
 * A node's heartbeat period ended (rmsg_node.c): its @members, whether
 * any of them @heard from the peer, whether a HEARTBEAT of ours was out
 * unanswered at the period's start or end (@unanswered), the node's
 * @misses in a row after it, and the member asked for the next HEARTBEAT
 * (@beacon_ep/@beacon_ch; ~0 for none).
 */
TRACE_EVENT(rmsg_node_beat,
	TP_PROTO(u32 members, bool heard, bool unanswered, u32 misses,
		 u32 beacon_ep, u32 beacon_ch),
	TP_ARGS(members, heard, unanswered, misses, beacon_ep, beacon_ch),
	TP_STRUCT__entry(
		__field(u32, members)
		__field(bool, heard)
		__field(bool, unanswered)
		__field(u32, misses)
		__field(u32, beacon_ep)
		__field(u32, beacon_ch)
	),
	TP_fast_assign(
		__entry->members = members;
		__entry->heard = heard;
		__entry->unanswered = unanswered;
		__entry->misses = misses;
		__entry->beacon_ep = beacon_ep;
		__entry->beacon_ch = beacon_ch;
	),
	TP_printk("members=%u heard=%d unanswered=%d misses=%u beacon=%d:%d",
		  __entry->members, __entry->heard, __entry->unanswered,
		  __entry->misses, (int)__entry->beacon_ep,
		  (int)__entry->beacon_ch)
);

#endif /* _RMSG_TRACE_H */

/* The rest is for rmsg_trace.c, which defines the events. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rmsg_trace
#include <trace/define_trace.h>
