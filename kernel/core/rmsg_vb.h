/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: Veloblock receive-block placement and byte credits.
 *
 * The layout is defined in <rdma/rmsg.h> ("Receive block layout"); the rules
 * and their reasons are at the top of rmsg_vb.c and in
 * Documentation/veloblock.rst. Callers own all structures; nothing here
 * allocates, sleeps or locks.
 */
#ifndef _RMSG_VB_H
#define _RMSG_VB_H

#include "rmsg_core_types.h"
#include <rdma/rmsg.h>

/**
 * struct rmsg_vb_tx - sender's view of the peer's receive block
 * @size: block size in bytes
 * @max_payload: rmsg_vb_max_payload(@size)
 * @pos: bytes of the current lap in use, counted from the block end;
 *	always below @size
 * @lap: passes over the block so far; its parity selects the flag
 * @seq: sequence number of the next DATA record
 * @written: bytes consumed in the block, free-running: records, plus what
 *	each WRAP skipped
 * @freed: the peer's latest accepted release counter; the sender may write
 *	up to @freed + @size
 */
struct rmsg_vb_tx {
	u32 size;
	u32 max_payload;
	u32 pos;
	u32 lap;
	u32 seq;
	u32 written;
	u32 freed;
};

/**
 * struct rmsg_vb_place - where one DATA record (and maybe a WRAP) goes
 * @off: block offset of the RDMA WRITE carrying the record
 * @len: bytes of that write: clear zone + padded payload + trailer
 * @payload: offset of the payload inside the write (the clear zone's size)
 * @trailer: offset of the trailer inside the write
 * @plen: payload bytes
 * @seq: sequence number of the record (the WRAP carries the same one)
 * @flag: flag byte of the DATA trailer
 * @wrap_flag: flag byte of the WRAP trailer (the old lap's parity)
 * @wrap_off: block offset of the WRAP trailer, when @wrap_skip is not 0
 * @wrap_skip: bytes the WRAP gives up at the bottom of the old lap; 0 when
 *	no WRAP precedes the record
 *
 * The bytes of the write are: @payload zeros, @plen payload bytes, padding
 * up to @trailer (any value), then the trailer. When @wrap_skip is set, the
 * WRAP trailer (RMSG_VB_TRAILER_SIZE bytes at @wrap_off) must be written
 * before the record, on the same ordered connection.
 */
struct rmsg_vb_place {
	u32 off;
	u32 len;
	u32 payload;
	u32 trailer;
	u32 plen;
	u32 seq;
	u8 flag;
	u8 wrap_flag;
	u32 wrap_off;
	u32 wrap_skip;
};

/**
 * struct rmsg_vb_rx - receiver's state for its own receive block
 * @size: block size in bytes
 * @max_payload: rmsg_vb_max_payload(@size)
 * @pos: bytes of the current lap consumed, from the block end; below @size
 * @lap: passes over the block so far
 * @seq: sequence number the next DATA record must carry
 * @consumed: bytes polled, free-running (the sender's @written as far as it
 *	has arrived)
 * @freed: bytes released by the program, free-running; never past @consumed
 * @advertised: the largest @freed value handed to the peer
 */
struct rmsg_vb_rx {
	u32 size;
	u32 max_payload;
	u32 pos;
	u32 lap;
	u32 seq;
	u32 consumed;
	u32 freed;
	u32 advertised;
};

/**
 * struct rmsg_vb_msg - one DATA or RTS record found by rmsg_vb_rx_poll()
 * @type: RMSG_VB_DATA, or RMSG_VB_RTS for a rendezvous message (the
 *	payload is a struct rmsg_rts, unchecked)
 * @off: block offset of the payload
 * @len: payload bytes
 * @seq: the record's sequence number
 * @ack: piggybacked acknowledgement, untrusted
 * @freed: piggybacked release counter for rmsg_vb_tx_credit(), untrusted
 * @end: byte counter to pass to rmsg_vb_rx_release() to release this record
 *	and everything before it
 */
struct rmsg_vb_msg {
	u8 type;
	u32 off;
	u32 len;
	u32 seq;
	u32 ack;
	u32 freed;
	u32 end;
};

/* Block bytes taken by a record of @len payload bytes (@len <= 65535). */
static inline u32 rmsg_vb_record_size(u32 len)
{
	return ((len + RMSG_VB_ALIGN - 1) & ~(u32)(RMSG_VB_ALIGN - 1)) +
	       RMSG_VB_TRAILER_SIZE;
}

/* The flag value of lap @lap. */
static inline u8 rmsg_vb_flag(u32 lap)
{
	return lap & 1 ? RMSG_VB_FLAG_ODD : RMSG_VB_FLAG_EVEN;
}

/**
 * rmsg_vb_rx_idle() - a quick look for busy polling: nothing has arrived
 * @rx: receiver state
 * @block: the receive block
 *
 * The flag byte that the next record's trailer would end with is still
 * clear (the record before cleared it, R1), so rmsg_vb_rx_poll() would
 * return 0. False means only that there is something to look at, which
 * rmsg_vb_rx_poll() checks.
 *
 * Return: true when nothing new is in @block.
 */
static inline bool rmsg_vb_rx_idle(const struct rmsg_vb_rx *rx,
				   const void *block)
{
	return !rmsg_load_acquire_u8((const u8 *)block + rx->size - rx->pos -
				     1);
}

int rmsg_vb_check_block(u32 size);
int rmsg_vb_max_payload(u32 size);
void rmsg_vb_block_init(void *block, u32 size);

int rmsg_vb_tx_init(struct rmsg_vb_tx *tx, u32 size, u32 seq, u32 bytes);
int rmsg_vb_tx_place(const struct rmsg_vb_tx *tx, u32 len,
		     struct rmsg_vb_place *pl);
void rmsg_vb_tx_commit(struct rmsg_vb_tx *tx, const struct rmsg_vb_place *pl);
int rmsg_vb_tx_credit(struct rmsg_vb_tx *tx, u32 freed);
void rmsg_vb_trailer_fill(struct rmsg_vb_trailer *t,
			  const struct rmsg_vb_place *pl,
			  enum rmsg_vb_type type, u32 ack, u32 freed);

int rmsg_vb_rx_init(struct rmsg_vb_rx *rx, u32 size, u32 seq, u32 bytes);
int rmsg_vb_rx_poll(struct rmsg_vb_rx *rx, const void *block,
		    struct rmsg_vb_msg *msg);
int rmsg_vb_rx_release(struct rmsg_vb_rx *rx, u32 end);
bool rmsg_vb_rx_credit_due(const struct rmsg_vb_rx *rx);
u32 rmsg_vb_rx_advertise(struct rmsg_vb_rx *rx);

#endif /* _RMSG_VB_H */
