/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: what repairing a channel needs. The sender keeps a
 * shadow of the peer's receive block and, after a repair, writes again
 * what the peer's block lacks; reconnection attempts back off; the
 * listening side matches a RECONNECT to the channel it repairs.
 *
 * Documentation/veloblock.rst ("Retention and resuming") has the rules.
 * Callers own all structures; nothing here allocates, sleeps or locks.
 */
#ifndef _RMSG_RESIL_H
#define _RMSG_RESIL_H

#include "rmsg_core_types.h"
#include "rmsg_vb.h"
#include "rmsg_wire.h"

/**
 * struct rmsg_vb_retx - where the rewriting of a peer's block stands
 * @size: block size in bytes
 * @max_payload: rmsg_vb_max_payload(@size)
 * @pos: bytes of lap @lap before the next write's record, from the block
 *	end, as &rmsg_vb_tx.pos
 * @lap: lap of the next write
 * @seq: sequence number the next record (or WRAP) carries
 * @counter: byte counter at @pos: what the peer's block holds so far
 * @end: the sender's &rmsg_vb_tx.written at the resume; rewriting ends here
 * @end_seq: the sender's &rmsg_vb_tx.seq at the resume
 *
 * A plain value: copy it to retry from the same point.
 */
struct rmsg_vb_retx {
	u32 size;
	u32 max_payload;
	u32 pos;
	u32 lap;
	u32 seq;
	u32 counter;
	u32 end;
	u32 end_seq;
};

/**
 * struct rmsg_vb_rewrite - one RDMA WRITE that writes a record again
 * @off: block offset where the write starts
 * @len: bytes of the write, @clear included
 * @clear: zero bytes at the start of the write: a record's clear zone, 0
 *	for a WRAP and for a record that ends its lap exactly. They must be
 *	zeros, not the shadow's bytes there (which may already hold the next
 *	record's trailer)
 * @type: RMSG_VB_DATA, RMSG_VB_RTS or RMSG_VB_WRAP
 * @flag: the flag byte, the write's last byte
 * @flag_off: block offset of @flag: @off + @len - 1
 * @seq: the record's sequence number (a WRAP: that of the record after it)
 * @bytes: byte counter advance of this write: the record's size, or what
 *	a WRAP skips
 *
 * The write is @clear zero bytes, then the @len - @clear bytes of the
 * shadow at @off + @clear. With write-with-immediate arrival, the write
 * leaves out its last byte and the immediate names @flag_off and @flag.
 */
struct rmsg_vb_rewrite {
	u32 off;
	u32 len;
	u32 clear;
	u8 type;
	u8 flag;
	u32 flag_off;
	u32 seq;
	u32 bytes;
};

void rmsg_vb_shadow_put(void *shadow, const struct rmsg_vb_place *pl,
			const struct rmsg_vb_trailer *t,
			const struct rmsg_vb_trailer *wrap);
int rmsg_vb_tx_resume(struct rmsg_vb_tx *tx, const void *shadow,
		      u32 rx_freed, u32 rx_arrived, u32 rx_seq,
		      struct rmsg_vb_retx *rt);
int rmsg_vb_retx_next(struct rmsg_vb_retx *rt, const void *shadow,
		      struct rmsg_vb_rewrite *w);

u32 rmsg_backoff_ms(u32 attempt, u32 base_ms, u32 cap_ms, u32 rnd);
u32 rmsg_backoff_attempts(u32 base_ms, u32 cap_ms, u32 give_up_ms);

/**
 * enum rmsg_repair_verdict - what to do with a RECONNECT for a channel
 * @RMSG_REPAIR_ACCEPT: the current peer's newer attempt: repair with it
 * @RMSG_REPAIR_STALE: an attempt no newer than the current connection's:
 *	reject it quietly, the channel stays as it is
 * @RMSG_REPAIR_INVALID: not a RECONNECT, or one from another endpoint or
 *	another channel than the channel's peer: reject it as gone, the
 *	channel stays as it is
 */
enum rmsg_repair_verdict {
	RMSG_REPAIR_ACCEPT,
	RMSG_REPAIR_STALE,
	RMSG_REPAIR_INVALID,
};

enum rmsg_repair_verdict rmsg_repair_match(u64 known_incarnation,
					   u32 known_peer_channel,
					   u32 cur_epoch,
					   const struct rmsg_hello *h);

#endif /* _RMSG_RESIL_H */
