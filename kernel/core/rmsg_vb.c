// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: Veloblock receive-block placement and byte credits.
 *
 * Words: a block of S bytes is filled from its end towards its start. A
 * "lap" is one such pass; "pos" is how many bytes of the current lap are
 * used, so the next record ends at block offset S - pos. "Bytes" counters
 * (tx->written, rx->consumed, rx->freed, ...) are free-running modulo 2^32
 * and advance by each record's size and by each WRAP's skip, so every lap
 * adds exactly S to them and counter c sits at lap position c mod S.
 *
 * Rules, and why each exists:
 *
 * R1 Record: clear zone (RMSG_VB_CLEAR zeros) + payload padded to
 *    RMSG_VB_ALIGN + trailer, sent as one RDMA WRITE in ascending address
 *    order, so the trailer's last byte, the flag, lands last. The clear zone
 *    covers the next record's trailer, so the next flag reads 0 until that
 *    record lands. All sizes and positions are multiples of RMSG_VB_ALIGN.
 *
 * R2 Fit: a record of rec bytes fits in the rest of the lap, left = S - pos,
 *    when rec == left (exact fill: the next record starts a new lap at the
 *    block end and needs no clear zone here) or rec + RMSG_VB_CLEAR <= left.
 *    Hence the invariant: what a lap has left is 0 or at least
 *    RMSG_VB_CLEAR >= RMSG_VB_TRAILER_SIZE bytes, and in the second case the
 *    last record's clear zone lies exactly where a WRAP trailer goes. A WRAP
 *    needs no clear zone of its own: the record after it starts the next
 *    lap, whose first flag is protected by parity (R3). So a WRAP always
 *    fits, is always written over zeros, and never touches a byte the
 *    receiver has not released (that clear zone was paid for, R4).
 *
 * R3 Parity: the first record of lap n ends at the block end, where lap
 *    n - 1's first record left its flag. Flags carry the lap's parity, so
 *    at pos 0 the other parity means "not yet"; at any other pos the flag
 *    byte was cleared by the previous record of the same lap, so only 0 or
 *    this lap's flag can be there and anything else is a protocol error.
 *    A lap never starts with a WRAP (every record fits an empty lap), so
 *    the flag at the block end is always a DATA flag of the previous lap.
 *
 * R4 Credit: the sender may write byte counter c only when the receiver has
 *    released c - S, i.e. when c < freed + S. A placement writes up to
 *    written + skip + rec + clear, so it needs that sum - freed <= S. The
 *    clear zone is the next record's space and is paid for now; an exact
 *    fill writes no clear zone and pays none. A WRAP and its record are
 *    checked as one: the WRAP trailer lies in already paid bytes.
 *    Invariant: 0 <= written - freed <= S on the sender, and the receiver
 *    checks the same bound against what it advertised, so a peer that
 *    overruns its credit is caught.
 *
 * R5 Half block: a record and its clear zone take at most S / 2 bytes
 *    (rmsg_vb_max_payload()). When a record does not fit in what is left
 *    of the lap, that part is under S / 2, so pos > S / 2 and the record's
 *    bytes at the top of the next lap overlay bytes the receiver released
 *    in this lap. Without this bound a WRAP followed by a large record
 *    could need bytes that are released only after the WRAP itself has
 *    been read, which the sender cannot send first: a deadlock.
 *
 * R6 First lap: at lap 0, pos 0 the receiver reads the block's last byte
 *    before anything was written. It must not be RMSG_VB_FLAG_EVEN, so the
 *    block must start with a zero last trailer (rmsg_vb_block_init(), or a
 *    zeroed allocation). Nothing else of the block needs initialising.
 *
 * R7 Sequence: DATA records carry consecutive sequence numbers; a WRAP
 *    carries the number of the record after it and consumes none.
 *
 * R8 Credit updates: released bytes travel back in explicit updates (CREDIT
 *    messages; rmsg's kernels take no credit from a trailer's freed, which
 *    a payload could imitate). rmsg_vb_rx_credit_due() asks for one when
 *    half the block is released but unadvertised, or when the sender, as
 *    the receiver sees it, may lack room for a largest record; the second
 *    condition is what keeps a blocked sender from waiting for ever on a
 *    receiver that has released everything.
 */

#include "rmsg_core_types.h"
#include "rmsg_vb.h"

static_assert(sizeof(struct rmsg_vb_trailer) == RMSG_VB_TRAILER_SIZE,
	      "trailer size");
static_assert(RMSG_VB_CLEAR >= RMSG_VB_TRAILER_SIZE,
	      "a WRAP trailer must fit where a clear zone was");
static_assert(RMSG_VB_CLEAR % RMSG_VB_ALIGN == 0 &&
	      RMSG_VB_TRAILER_SIZE % RMSG_VB_ALIGN == 0 &&
	      RMSG_VB_MIN_BLOCK % RMSG_VB_ALIGN == 0,
	      "sizes are multiples of the alignment");
static_assert(RMSG_VB_MAX_BLOCK < (1U << 30),
	      "two block sizes added to a counter distance must not wrap");

/**
 * rmsg_vb_check_block() - check a receive block size
 * @size: block size in bytes, untrusted
 *
 * Return: 0 when @size is a multiple of RMSG_VB_ALIGN within
 * [RMSG_VB_MIN_BLOCK, RMSG_VB_MAX_BLOCK], else -EINVAL.
 */
int rmsg_vb_check_block(u32 size)
{
	if (size < RMSG_VB_MIN_BLOCK || size > RMSG_VB_MAX_BLOCK ||
	    size % RMSG_VB_ALIGN)
		return -EINVAL;
	return 0;
}

/**
 * rmsg_vb_max_payload() - the largest DATA payload a block can carry
 * @size: block size in bytes, untrusted
 *
 * A record plus its clear zone may take at most half the block (R5 above),
 * and a payload never exceeds RMSG_VB_MAX_PAYLOAD.
 *
 * Return: the payload limit in bytes, or -EINVAL for a bad @size.
 */
int rmsg_vb_max_payload(u32 size)
{
	u32 max;

	if (rmsg_vb_check_block(size))
		return -EINVAL;
	max = (size / 2 - RMSG_VB_CLEAR - RMSG_VB_TRAILER_SIZE) &
	      ~(u32)(RMSG_VB_ALIGN - 1);
	return max < RMSG_VB_MAX_PAYLOAD ? max : RMSG_VB_MAX_PAYLOAD;
}

/**
 * rmsg_vb_block_init() - make a block ready for lap 0
 * @block: the receive block
 * @size: its size, valid per rmsg_vb_check_block()
 *
 * Only the block's last trailer matters (R6): the first flag is read there
 * before anything has been written. A zeroed allocation needs no call.
 */
void rmsg_vb_block_init(void *block, u32 size)
{
	memset((u8 *)block + size - RMSG_VB_TRAILER_SIZE, 0,
	       RMSG_VB_TRAILER_SIZE);
}

/*
 * Where a record of @rec bytes goes from lap position @pos: sets *skip to
 * the bytes a WRAP gives up (0 when the record fits) and returns the bytes
 * the placement consumes or overwrites beyond the current counter: skip,
 * record and, unless it ends the lap exactly, the clear zone (R2, R4).
 */
static u32 rmsg_vb_need(u32 size, u32 pos, u32 rec, u32 *skip)
{
	u32 left = size - pos;

	*skip = 0;
	if (rec != left && rec + RMSG_VB_CLEAR > left) {
		*skip = left;
		left = size;
	}
	return *skip + rec + (rec == left ? 0 : RMSG_VB_CLEAR);
}

/**
 * rmsg_vb_tx_init() - set up the sender's view of a peer's block
 * @tx: state to initialise
 * @size: the peer's block size, untrusted (from the connection setup)
 * @seq: sequence number of the first record, agreed with the peer
 * @bytes: initial value of the byte counters, agreed with the peer
 *
 * The whole block is free at the start.
 *
 * Return: 0, or -EINVAL for a bad @size.
 */
int rmsg_vb_tx_init(struct rmsg_vb_tx *tx, u32 size, u32 seq, u32 bytes)
{
	int max = rmsg_vb_max_payload(size);

	if (max < 0)
		return max;
	memset(tx, 0, sizeof(*tx));
	tx->size = size;
	tx->max_payload = max;
	tx->seq = seq;
	tx->written = bytes;
	tx->freed = bytes;
	return 0;
}

/**
 * rmsg_vb_tx_place() - find where the next DATA record goes
 * @tx: sender state; not changed
 * @len: payload bytes
 * @pl: out: the placement, for rmsg_vb_trailer_fill() and
 *	rmsg_vb_tx_commit()
 *
 * Return: 0 and *@pl filled; -EMSGSIZE when @len exceeds @tx->max_payload
 * and can never be sent; -ENOSPC when the receiver has not yet released
 * enough bytes (try again after rmsg_vb_tx_credit()).
 */
int rmsg_vb_tx_place(const struct rmsg_vb_tx *tx, u32 len,
		     struct rmsg_vb_place *pl)
{
	u32 rec, skip, need, end;

	if (len > tx->max_payload)
		return -EMSGSIZE;
	rec = rmsg_vb_record_size(len);
	need = rmsg_vb_need(tx->size, tx->pos, rec, &skip);
	if (need > tx->size - (tx->written - tx->freed))
		return -ENOSPC;

	/* The record ends at the block end after a WRAP, else below pos. */
	end = skip ? tx->size : tx->size - tx->pos;
	pl->payload = need - skip - rec;
	pl->off = end - rec - pl->payload;
	pl->len = rec + pl->payload;
	pl->trailer = pl->len - RMSG_VB_TRAILER_SIZE;
	pl->plen = len;
	pl->seq = tx->seq;
	pl->flag = rmsg_vb_flag(tx->lap + !!skip);
	pl->wrap_flag = rmsg_vb_flag(tx->lap);
	pl->wrap_off = tx->size - tx->pos - RMSG_VB_TRAILER_SIZE;
	pl->wrap_skip = skip;
	return 0;
}

/**
 * rmsg_vb_tx_commit() - account for a placed record
 * @tx: sender state
 * @pl: the result of the last rmsg_vb_tx_place() on @tx; no other record
 *	may have been committed since
 */
void rmsg_vb_tx_commit(struct rmsg_vb_tx *tx, const struct rmsg_vb_place *pl)
{
	u32 rec = pl->len - pl->payload;

	if (pl->wrap_skip) {
		tx->pos = 0;
		tx->lap++;
	}
	tx->written += pl->wrap_skip + rec;
	tx->pos += rec;
	if (tx->pos == tx->size) {
		tx->pos = 0;
		tx->lap++;
	}
	tx->seq++;
}

/**
 * rmsg_vb_tx_credit() - apply the peer's release counter
 * @tx: sender state
 * @freed: the peer's freed counter, untrusted (from a trailer or update)
 *
 * Counters may arrive late, so an equal value is fine; one that moves
 * backwards or releases bytes never written is a protocol violation.
 *
 * Return: 0, or -EPROTO with @tx unchanged.
 */
int rmsg_vb_tx_credit(struct rmsg_vb_tx *tx, u32 freed)
{
	if (freed - tx->freed > tx->written - tx->freed)
		return -EPROTO;
	tx->freed = freed;
	return 0;
}

/**
 * rmsg_vb_trailer_fill() - fill a trailer in wire byte order
 * @t: the trailer to fill
 * @pl: the placement it belongs to
 * @type: RMSG_VB_DATA or RMSG_VB_RTS for the record, RMSG_VB_WRAP for the
 *	WRAP before it
 * @ack: the trailer's ack field, reserved (rmsg's kernels pass 0)
 * @freed: release counter of the writer's own receive block, for the
 *	reader's information (rmsg's kernels pass the newest the program
 *	gave; no kernel takes credit from it)
 */
void rmsg_vb_trailer_fill(struct rmsg_vb_trailer *t,
			  const struct rmsg_vb_place *pl,
			  enum rmsg_vb_type type, u32 ack, u32 freed)
{
	bool data = type != RMSG_VB_WRAP;	/* a DATA or an RTS record */

	t->ack = cpu_to_le32(ack);
	t->freed = cpu_to_le32(freed);
	t->seq = cpu_to_le32(pl->seq);
	t->len = cpu_to_le16(data ? pl->plen : 0);
	t->type = type;
	t->flag = data ? pl->flag : pl->wrap_flag;
}

/**
 * rmsg_vb_rx_init() - set up the receiver's state for its block
 * @rx: state to initialise
 * @size: block size; the block's last trailer must be zero (R6)
 * @seq: sequence number of the first record, agreed with the peer
 * @bytes: initial value of the byte counters, agreed with the peer
 *
 * Return: 0, or -EINVAL for a bad @size.
 */
int rmsg_vb_rx_init(struct rmsg_vb_rx *rx, u32 size, u32 seq, u32 bytes)
{
	int max = rmsg_vb_max_payload(size);

	if (max < 0)
		return max;
	memset(rx, 0, sizeof(*rx));
	rx->size = size;
	rx->max_payload = max;
	rx->seq = seq;
	rx->consumed = bytes;
	rx->freed = bytes;
	rx->advertised = bytes;
	return 0;
}

/*
 * Look at the trailer that ends at block offset @end: 0 when no record is
 * there yet, 1 with a copy in *t, -EPROTO for a flag that cannot be there
 * (R3). The flag is read first, with acquire semantics, so the copy holds
 * what landed before it; the caller checks only the copy, never the block,
 * so a peer changing the bytes meanwhile cannot break the checks.
 */
static int rmsg_vb_rx_peek(const struct rmsg_vb_rx *rx, const u8 *block,
			   u32 end, struct rmsg_vb_trailer *t)
{
	u8 flag = rmsg_load_acquire_u8(block + end - 1);

	if (flag == rmsg_vb_flag(rx->lap)) {
		memcpy(t, block + end - RMSG_VB_TRAILER_SIZE, sizeof(*t));
		return 1;
	}
	if (!flag || (!rx->pos && flag == rmsg_vb_flag(rx->lap + 1)))
		return 0;
	return -EPROTO;
}

/* True when the peer wrote beyond the credit we gave it (R4). */
static bool rmsg_vb_rx_overrun(const struct rmsg_vb_rx *rx, u32 bytes)
{
	return rx->consumed + bytes - rx->advertised > rx->size;
}

/* Consume a WRAP trailer found at the current position. */
static int rmsg_vb_rx_wrap(struct rmsg_vb_rx *rx,
			   const struct rmsg_vb_trailer *t)
{
	u32 skip = rx->size - rx->pos;

	if (!rx->pos || le16_to_cpu(t->len) ||
	    le32_to_cpu(t->seq) != rx->seq || rmsg_vb_rx_overrun(rx, skip))
		return -EPROTO;
	rx->consumed += skip;
	rx->pos = 0;
	rx->lap++;
	return 0;
}

/* Consume a DATA trailer that ends at block offset @end. */
static int rmsg_vb_rx_data(struct rmsg_vb_rx *rx, u32 end,
			   const struct rmsg_vb_trailer *t,
			   struct rmsg_vb_msg *msg)
{
	u32 len = le16_to_cpu(t->len);
	u32 rec = rmsg_vb_record_size(len);

	/*
	 * The record must lie in what is left of the lap; as rec and end are
	 * multiples of RMSG_VB_ALIGN, it then ends the lap exactly or leaves
	 * room for its clear zone (R2), which the sender must have paid for
	 * together with the record (R4).
	 */
	if (len > rx->max_payload || rec > end ||
	    le32_to_cpu(t->seq) != rx->seq ||
	    rmsg_vb_rx_overrun(rx, rec + (rec == end ? 0 : RMSG_VB_CLEAR)))
		return -EPROTO;

	msg->type = t->type;
	msg->off = end - rec;
	msg->len = len;
	msg->seq = rx->seq;
	msg->ack = le32_to_cpu(t->ack);
	msg->freed = le32_to_cpu(t->freed);
	rx->consumed += rec;
	rx->pos += rec;
	if (rx->pos == rx->size) {
		rx->pos = 0;
		rx->lap++;
	}
	rx->seq++;
	msg->end = rx->consumed;
	return 1;
}

/**
 * rmsg_vb_rx_poll() - look for the next record in the receive block
 * @rx: receiver state
 * @block: the receive block, @rx->size bytes, written by the untrusted peer
 * @msg: out: the record found
 *
 * Reads only inside [@block, @block + @rx->size), whatever the block holds.
 * A WRAP is consumed here and polling continues at the block end. The
 * payload stays in the block until rmsg_vb_rx_release(); @msg->ack and
 * @msg->freed are the peer's word and must be checked by their users
 * (rmsg_vb_tx_credit() checks freed).
 *
 * Return: 1 and *@msg filled for a DATA or RTS record; 0 when nothing (more) has
 * arrived; -EPROTO when the block holds something the peer may not write:
 * the channel must then be torn down.
 */
int rmsg_vb_rx_poll(struct rmsg_vb_rx *rx, const void *block,
		    struct rmsg_vb_msg *msg)
{
	struct rmsg_vb_trailer t;
	u32 end;
	int ret;

	/* At most twice: after a WRAP pos is 0, where a WRAP is refused. */
	for (;;) {
		end = rx->size - rx->pos;
		ret = rmsg_vb_rx_peek(rx, block, end, &t);
		if (ret <= 0)
			return ret;
		if (t.type == RMSG_VB_DATA || t.type == RMSG_VB_RTS)
			return rmsg_vb_rx_data(rx, end, &t, msg);
		if (t.type != RMSG_VB_WRAP)
			return -EPROTO;
		ret = rmsg_vb_rx_wrap(rx, &t);
		if (ret)
			return ret;
	}
}

/**
 * rmsg_vb_rx_release() - give records back to the sender, in order
 * @rx: receiver state
 * @end: &rmsg_vb_msg.end of the last record released, untrusted
 *
 * Releases that record, every record before it and any WRAP skip before
 * it. The bytes go back to the sender with the next rmsg_vb_rx_advertise().
 *
 * Return: 0, or -EINVAL when @end is behind what was already released or
 * beyond what was polled.
 */
int rmsg_vb_rx_release(struct rmsg_vb_rx *rx, u32 end)
{
	if (end - rx->freed > rx->consumed - rx->freed)
		return -EINVAL;
	rx->freed = end;
	return 0;
}

/**
 * rmsg_vb_rx_credit_due() - whether an explicit credit update should go out
 * @rx: receiver state
 *
 * An update (a CREDIT message: no kernel takes credit from trailers) is
 * due when half the block is released but not advertised, or when the
 * sender, by what it has written and been told, might not have room for a
 * largest record; without the second case a sender blocked on a large
 * record could wait for ever on a receiver that has released all.
 *
 * Return: true when the caller should send rmsg_vb_rx_advertise()'s value.
 */
bool rmsg_vb_rx_credit_due(const struct rmsg_vb_rx *rx)
{
	u32 unadvertised = rx->freed - rx->advertised;
	u32 rec = rmsg_vb_record_size(rx->max_payload);
	u32 skip, room;

	if (!unadvertised)
		return false;
	if (unadvertised >= rx->size / 2)
		return true;
	room = rx->size - (rx->consumed - rx->advertised);
	return room < rmsg_vb_need(rx->size, rx->pos, rec, &skip);
}

/**
 * rmsg_vb_rx_advertise() - take the release counter to send to the peer
 * @rx: receiver state
 *
 * Call when putting the value in a trailer or an explicit update; the
 * receiver then holds the peer to it.
 *
 * Return: the freed counter for &rmsg_vb_trailer.freed.
 */
u32 rmsg_vb_rx_advertise(struct rmsg_vb_rx *rx)
{
	rx->advertised = rx->freed;
	return rx->freed;
}
