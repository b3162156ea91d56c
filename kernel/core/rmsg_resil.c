// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: repairing a channel.
 *
 * Retention. The sender keeps a shadow of the peer's receive block: the
 * same S bytes, the same layout. Every record goes into the shadow at the
 * offsets rmsg_vb_tx_place() chose (rmsg_vb_shadow_put() for the clear
 * zone, padding and trailers, the caller for the payload) and is written
 * to the peer from there. The peer's release counter is the
 * acknowledgement: a byte below freed may be overwritten, and the credit
 * rule (R4 in rmsg_vb.c) keeps every byte of [freed, written) intact in
 * the shadow, so retention costs S bytes and nothing more.
 *
 * Resuming. After a failure, the receiver walks its block to the end of
 * the complete records and reports where that is (rx_arrived, rx_seq) with
 * what it released (rx_freed). The sender checks these against its own
 * state and shadow, takes rx_freed as credit, and writes again, in order
 * and one write each, every record and WRAP from rx_arrived to written.
 *
 * The clear-zone rule. A rewritten record's clear zone is written as zeros,
 * never copied from the shadow: there the shadow may already hold the next
 * record's trailer, flag included, and landing it before that record's
 * payload would make the receiver take stale bytes for a message.
 *
 * Positions. Every lap adds exactly S to the byte counters, so going back
 * d <= S bytes from the sender's (lap, pos) finds the position of counter
 * written - d. A lap is never computed as counter / S: the counters wrap
 * at 2^32, which S need not divide.
 */

#include "rmsg_core_types.h"
#include "rmsg_resil.h"

/**
 * rmsg_vb_shadow_put() - put a placed record's framing into the shadow
 * @shadow: the shadow of the peer's block, &rmsg_vb_tx.size bytes
 * @pl: the placement, from rmsg_vb_tx_place()
 * @t: the record's trailer (rmsg_vb_trailer_fill()), flag included
 * @wrap: the WRAP trailer before it; read only when @pl->wrap_skip is set
 *
 * Writes the clear zone and padding as zeros and the trailers, all where
 * the peer's block gets them. The caller copies the @pl->plen payload
 * bytes to @shadow + @pl->off + @pl->payload itself, before the record is
 * written to the peer from the shadow. Call before rmsg_vb_tx_commit().
 */
void rmsg_vb_shadow_put(void *shadow, const struct rmsg_vb_place *pl,
			const struct rmsg_vb_trailer *t,
			const struct rmsg_vb_trailer *wrap)
{
	u8 *rec = (u8 *)shadow + pl->off;

	if (pl->wrap_skip)
		memcpy((u8 *)shadow + pl->wrap_off, wrap, sizeof(*wrap));
	memset(rec, 0, pl->payload);
	memset(rec + pl->payload + pl->plen, 0,
	       pl->trailer - pl->payload - pl->plen);
	memcpy(rec + pl->trailer, t, sizeof(*t));
}

/**
 * rmsg_vb_retx_next() - the next write of a resume
 * @rt: the cursor, from rmsg_vb_tx_resume(); advanced on success only
 * @shadow: the shadow of the peer's block, @rt->size bytes
 * @w: out: the write, on success
 *
 * Reads the trailer at the cursor from the shadow and checks that it
 * chains: the current lap's flag, the expected sequence number, a known
 * type, a length that fits both the lap and what is left to rewrite, and a
 * WRAP only inside a lap with a record after it. The last write must end
 * exactly at @rt->end with @rt->end_seq. Reads only inside the shadow,
 * whatever it holds. Records the sender places meanwhile do not disturb
 * the rewriting: they overwrite only released bytes (and a clear zone,
 * which is rewritten as zeros anyway), but must be written to the peer
 * after the rewrites.
 *
 * Return: 1 and *@w filled; 0 when everything has been rewritten; -EPROTO
 * when the shadow does not chain to the end (a bug: the channel must fail).
 */
int rmsg_vb_retx_next(struct rmsg_vb_retx *rt, const void *shadow,
		      struct rmsg_vb_rewrite *w)
{
	const u8 *blk = shadow;
	struct rmsg_vb_trailer t;
	u32 end, left, len, rec, clear;

	if (rt->counter == rt->end)
		return rt->seq == rt->end_seq ? 0 : -EPROTO;
	left = rt->end - rt->counter;
	if (left > rt->size || rt->pos >= rt->size ||
	    rt->pos % RMSG_VB_ALIGN || rmsg_vb_check_block(rt->size))
		return -EPROTO;

	end = rt->size - rt->pos;
	memcpy(&t, blk + end - RMSG_VB_TRAILER_SIZE, sizeof(t));
	if (t.flag != rmsg_vb_flag(rt->lap) || le32_to_cpu(t.seq) != rt->seq)
		return -EPROTO;
	switch (t.type) {
	case RMSG_VB_WRAP:
		/*
		 * A record always follows a WRAP, so a WRAP never ends what
		 * is to be rewritten (nor starts a lap, where end == size).
		 */
		if (!rt->pos || t.len || end >= left)
			return -EPROTO;
		w->off = end - RMSG_VB_TRAILER_SIZE;
		w->len = RMSG_VB_TRAILER_SIZE;
		w->clear = 0;
		w->bytes = end;
		break;
	case RMSG_VB_DATA:
	case RMSG_VB_RTS:
		len = le16_to_cpu(t.len);
		rec = rmsg_vb_record_size(len);
		if (len > rt->max_payload || rec > end || rec > left)
			return -EPROTO;
		/*
		 * As in rmsg_vb_tx_place(): a clear zone unless the record
		 * ends the lap; rec and end are multiples of RMSG_VB_ALIGN,
		 * so a record that does not end the lap leaves room for it.
		 */
		clear = rec == end ? 0 : RMSG_VB_CLEAR;
		w->off = end - rec - clear;
		w->len = rec + clear;
		w->clear = clear;
		w->bytes = rec;
		break;
	default:
		return -EPROTO;
	}
	w->type = t.type;
	w->flag = t.flag;
	w->flag_off = end - 1;
	w->seq = rt->seq;

	rt->counter += w->bytes;
	rt->pos += w->bytes;
	if (t.type == RMSG_VB_WRAP || rt->pos == rt->size) {
		rt->pos = 0;
		rt->lap++;
	}
	if (t.type != RMSG_VB_WRAP)
		rt->seq++;
	return 1;
}

/**
 * rmsg_vb_tx_resume() - check where the peer's block stands and rewind
 * @tx: sender state
 * @shadow: the shadow of the peer's block, @tx->size bytes
 * @rx_freed: the peer's release counter from its hello, untrusted
 * @rx_arrived: where the peer's complete records end, untrusted
 * @rx_seq: the sequence number the peer expects next, untrusted
 * @rt: out: the cursor for rmsg_vb_retx_next(), on success
 *
 * @rx_freed is checked as rmsg_vb_tx_credit() checks a credit: never
 * backwards, never past @tx->written. @rx_arrived must lie between it and
 * @tx->written, and the shadow must hold, from there, records that chain
 * exactly to @tx->written and @tx->seq, the first carrying @rx_seq. The
 * whole chain is walked here (trailers only), so a resume either fails
 * before anything is rewritten or its rewrites cannot fail on a shadow
 * left alone. On success the credit is applied; @tx is otherwise
 * unchanged: new records follow the rewrites.
 *
 * A peer that lies about @rx_arrived can at worst have parts of records
 * it was sent written again into its own block; nothing is read outside
 * the shadow or written beyond the credit it gave.
 *
 * Return: 0, or -EPROTO with @tx and *@rt unchanged.
 */
int rmsg_vb_tx_resume(struct rmsg_vb_tx *tx, const void *shadow,
		      u32 rx_freed, u32 rx_arrived, u32 rx_seq,
		      struct rmsg_vb_retx *rt)
{
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx c, walk;
	u32 back;
	int ret;

	if (rx_freed - tx->freed > tx->written - tx->freed ||
	    rx_arrived - rx_freed > tx->written - rx_freed)
		return -EPROTO;

	/* At most written - freed <= size bytes back from where tx stands. */
	back = tx->written - rx_arrived;
	c.size = tx->size;
	c.max_payload = tx->max_payload;
	if (back <= tx->pos) {
		c.pos = tx->pos - back;
		c.lap = tx->lap;
	} else {
		c.pos = tx->pos + tx->size - back;
		c.lap = tx->lap - 1;
	}
	c.seq = rx_seq;
	c.counter = rx_arrived;
	c.end = tx->written;
	c.end_seq = tx->seq;

	walk = c;
	do {
		ret = rmsg_vb_retx_next(&walk, shadow, &w);
	} while (ret > 0);
	if (ret)
		return ret;
	tx->freed = rx_freed;
	*rt = c;
	return 0;
}

/* The longest delay of attempt @attempt: min(cap, base << attempt). */
static u32 rmsg_backoff_max(u32 attempt, u32 base_ms, u32 cap_ms)
{
	if (!base_ms)
		base_ms = 1;
	if (cap_ms < base_ms)
		cap_ms = base_ms;
	if (attempt >= 32 || base_ms > cap_ms >> attempt)
		return cap_ms;
	return base_ms << attempt;
}

/**
 * rmsg_backoff_ms() - how long to wait before a reconnection attempt
 * @attempt: attempts already made, from 0
 * @base_ms: delay before the first attempt at the longest (0 counts as 1)
 * @cap_ms: the longest delay (taken as @base_ms when below it)
 * @rnd: a random number
 *
 * Capped exponential back-off with jitter: with d = min(@cap_ms,
 * @base_ms << @attempt), the result lies in [d - d / 2, d], so peers that
 * lost their link together do not redial together. No overflow for any
 * input.
 *
 * Return: the delay in milliseconds, at least 1.
 */
u32 rmsg_backoff_ms(u32 attempt, u32 base_ms, u32 cap_ms, u32 rnd)
{
	u32 d = rmsg_backoff_max(attempt, base_ms, cap_ms);
	u32 span = d / 2 + 1;	/* d - d / 2 .. d: d / 2 + 1 values */

	return d - d / 2 + rnd % span;
}

/**
 * rmsg_backoff_attempts() - how many attempts a deadline allows
 * @base_ms: as for rmsg_backoff_ms()
 * @cap_ms: as for rmsg_backoff_ms()
 * @give_up_ms: time after which reconnecting stops
 *
 * For "attempt N of M": the number of attempts whose delays, each at its
 * longest, add up to at most @give_up_ms. Jitter only makes delays
 * shorter, so at least this many attempts are made.
 *
 * Return: the number of attempts (0 when even the first delay is longer).
 */
u32 rmsg_backoff_attempts(u32 base_ms, u32 cap_ms, u32 give_up_ms)
{
	u32 cap = rmsg_backoff_max(32, base_ms, cap_ms);
	u32 n, d, spent = 0;

	/* At most 33 rounds: from attempt 32 on, every delay is the cap. */
	for (n = 0;; n++) {
		d = rmsg_backoff_max(n, base_ms, cap_ms);
		if (d > give_up_ms - spent)
			return n;
		spent += d;
		/* Delays of at least 1 ms: the count stays below 2^32. */
		if (d == cap)
			return n + 1 + (give_up_ms - spent) / d;
	}
}

/**
 * rmsg_repair_match() - judge a RECONNECT that names an existing channel
 * @known_incarnation: the peer endpoint's incarnation, from its first hello
 * @known_peer_channel: the peer's id of the channel (its &rmsg_hello.channel)
 * @cur_epoch: epoch of the channel's current (or last) connection
 * @h: the decoded hello (rmsg_hello_decode())
 *
 * Epochs count the connecting side's attempts, one more per redial (a
 * RECONNECT never carries 0), and may skip values that never arrived. They
 * are compared wrap-safe: newer means ahead by less than 2^31. The caller
 * must still check that what cannot change did not: the block size (the
 * shadow's) and the arrival mode.
 *
 * Return: the verdict (enum rmsg_repair_verdict).
 */
enum rmsg_repair_verdict rmsg_repair_match(u64 known_incarnation,
					   u32 known_peer_channel,
					   u32 cur_epoch,
					   const struct rmsg_hello *h)
{
	if (h->kind != RMSG_HELLO_RECONNECT)
		return RMSG_REPAIR_INVALID;
	/*
	 * Another endpoint (a restarted peer has no channel to repair, so it
	 * never sends a RECONNECT), or another channel of the same one: a
	 * stranger, who may not end or touch the channel by naming it.
	 */
	if (h->incarnation != known_incarnation ||
	    h->channel != known_peer_channel)
		return RMSG_REPAIR_INVALID;
	if ((s32)(h->epoch - cur_epoch) <= 0)
		return RMSG_REPAIR_STALE;
	return RMSG_REPAIR_ACCEPT;
}
