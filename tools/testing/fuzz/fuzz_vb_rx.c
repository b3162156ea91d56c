// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the Veloblock receiver (rmsg_vb_rx_*) walking a receive
 * block, with the byte credits going back to the sender (rmsg_vb_tx_*).
 *
 * The input is a program of operations on one channel direction: an honest
 * sender places records into the block by the rules, the receiver polls,
 * releases (good and bad counters) and advertises, credits travel back
 * (late, repeated or made up), and the peer writes whatever it likes into
 * the block: raw bytes, or a forged trailer at the place the receiver
 * polls next.
 *
 * Invariants, whatever the block holds: the receiver reads nothing outside
 * the block (it is allocated to its exact size, for ASan), never returns a
 * record that breaks a rule of rmsg_vb.c (lap, parity, sequence, size,
 * credit), its quick look (rmsg_vb_rx_idle()) never says "nothing" where
 * polling finds something, and its counters stay in their bounds. While
 * only the honest sender has written, more: every record arrives once, in
 * order, with its bytes; a record the program has not released is never
 * overwritten; and a sender that has been given all the credit can always
 * send a largest record, or the receiver says an update is due (R5, R8).
 */
#include "fuzz.h"
#include "rmsg_vb.h"

#define MAX_RECS	1024	/* more than a block can hold (16 bytes each) */

struct rec {
	u32 seq, off, len, end;
	u8 type, salt;
};

struct vb_fuzz {
	u32 size;
	u8 *blk;
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	/* Sent and not yet polled (honest mode only). */
	struct rec sent[MAX_RECS];
	u32 sent_head, sent_n;
	/* Polled and not yet released: their bytes must stay. */
	struct rec held[MAX_RECS];
	u32 held_head, held_n;
	bool honest;
	bool dead;
};

static u8 payload_byte(u32 seq, u8 salt, u32 i)
{
	return (u8)(seq * 131 + i * 7 + salt);
}

/*
 * The payload bytes of polled records that the program has not released
 * are as they were sent. The program may release part of a record: a byte
 * is released when its byte counter is behind rx->freed. Counters grow
 * towards lower addresses: the record's last byte has its first counter.
 */
static void check_held(const struct vb_fuzz *f)
{
	u32 k, i, first, c;

	if (!f->honest)
		return;
	for (k = 0; k < f->held_n; k++) {
		const struct rec *r = &f->held[(f->held_head + k) % MAX_RECS];

		first = r->end - rmsg_vb_record_size(r->len);
		for (i = 0; i < r->len; i++) {
			c = first + rmsg_vb_record_size(r->len) - 1 - i;
			if (c - f->rx.freed >= f->rx.consumed - f->rx.freed)
				continue;
			FUZZ_CHECK(f->blk[r->off + i] ==
				   payload_byte(r->seq, r->salt, i));
		}
	}
}

/* The rx counters' bounds (struct rmsg_vb_rx, R4). */
static void check_rx(const struct vb_fuzz *f)
{
	const struct rmsg_vb_rx *rx = &f->rx;

	FUZZ_CHECK(rx->pos < rx->size && rx->pos % RMSG_VB_ALIGN == 0);
	FUZZ_CHECK(rx->freed - rx->advertised <=
		   rx->consumed - rx->advertised);
	FUZZ_CHECK(rx->consumed - rx->advertised <= rx->size);
	FUZZ_CHECK(rx->consumed - rx->freed <= rx->size);
}

static void check_tx(const struct vb_fuzz *f)
{
	const struct rmsg_vb_tx *tx = &f->tx;

	FUZZ_CHECK(tx->pos < tx->size && tx->pos % RMSG_VB_ALIGN == 0);
	FUZZ_CHECK(tx->written - tx->freed <= tx->size);
}

/* The honest sender: place, write the record as one RDMA WRITE would. */
static void op_send(struct vb_fuzz *f, struct fuzz_in *in)
{
	struct rmsg_vb_trailer t;
	struct rmsg_vb_place pl;
	struct rmsg_vb_tx old = f->tx;
	u32 len = fuzz_u16(in) % (f->tx.max_payload + 2), i, rec, skip;
	u8 type = fuzz_u8(in) & 1 ? RMSG_VB_RTS : RMSG_VB_DATA;
	u8 salt = fuzz_u8(in);
	u32 ack = fuzz_u32(in);
	struct rec *r;
	int ret;

	ret = rmsg_vb_tx_place(&f->tx, len, &pl);
	FUZZ_CHECK(!memcmp(&old, &f->tx, sizeof(old)));
	if (len > f->tx.max_payload) {
		FUZZ_CHECK(ret == -EMSGSIZE);
		return;
	}
	if (ret) {
		FUZZ_CHECK(ret == -ENOSPC);
		return;
	}

	/* The placement: inside the block, aligned, and paid for (R2, R4). */
	rec = rmsg_vb_record_size(len);
	skip = pl.wrap_skip;
	FUZZ_CHECK(pl.off % RMSG_VB_ALIGN == 0 && pl.len % RMSG_VB_ALIGN == 0);
	FUZZ_CHECK(pl.off + pl.len <= f->size && pl.len == pl.payload + rec);
	FUZZ_CHECK(pl.payload == 0 || pl.payload == RMSG_VB_CLEAR);
	FUZZ_CHECK(pl.trailer == pl.len - RMSG_VB_TRAILER_SIZE);
	FUZZ_CHECK(pl.plen == len && pl.seq == f->tx.seq);
	FUZZ_CHECK(pl.off + pl.len == (skip ? f->size : f->size - f->tx.pos));
	FUZZ_CHECK(f->tx.written + skip + rec + pl.payload - f->tx.freed <=
		   f->size);
	if (skip) {
		FUZZ_CHECK(skip == f->size - f->tx.pos && f->tx.pos);
		FUZZ_CHECK(skip >= RMSG_VB_TRAILER_SIZE);
		FUZZ_CHECK(pl.wrap_off == f->size - f->tx.pos -
					  RMSG_VB_TRAILER_SIZE);
		/* It did not fit: R5 says the lap was more than half full. */
		FUZZ_CHECK(f->tx.pos > f->size / 2);
	}

	if (skip) {
		rmsg_vb_trailer_fill(&t, &pl, RMSG_VB_WRAP, ack, 0);
		memcpy(f->blk + pl.wrap_off, &t, sizeof(t));
	}
	memset(f->blk + pl.off, 0, pl.payload);
	for (i = 0; i < len; i++)
		f->blk[pl.off + pl.payload + i] = payload_byte(pl.seq, salt, i);
	memset(f->blk + pl.off + pl.payload + len, 0xcc,
	       pl.trailer - pl.payload - len);
	rmsg_vb_trailer_fill(&t, &pl, type, ack, ~ack);
	memcpy(f->blk + pl.off + pl.trailer, &t, sizeof(t));
	rmsg_vb_tx_commit(&f->tx, &pl);
	FUZZ_CHECK(f->tx.written - old.written == skip + rec);
	FUZZ_CHECK(f->tx.seq == old.seq + 1);
	check_tx(f);

	if (f->honest) {
		FUZZ_CHECK(f->sent_n < MAX_RECS);
		r = &f->sent[(f->sent_head + f->sent_n++) % MAX_RECS];
		r->seq = pl.seq;
		r->off = pl.off + pl.payload;
		r->len = len;
		r->type = type;
		r->salt = salt;
		r->end = f->tx.written;
		check_held(f);
	}
}

static void op_poll(struct vb_fuzz *f)
{
	struct rmsg_vb_rx old = f->rx;
	struct rmsg_vb_msg m;
	u32 end, lap, rec, clear;
	struct rec *r;
	bool idle;
	int ret;

	/* The quick look never hides what polling would find. */
	idle = rmsg_vb_rx_idle(&f->rx, f->blk);
	ret = rmsg_vb_rx_poll(&f->rx, f->blk, &m);
	FUZZ_CHECK(!idle || ret == 0);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EPROTO && !f->honest);
		f->dead = true;		/* the channel is torn down */
		return;
	}
	check_rx(f);
	if (!ret) {
		/* Nothing, or a WRAP and nothing after it. */
		FUZZ_CHECK(f->rx.seq == old.seq);
		FUZZ_CHECK(!memcmp(&f->rx, &old, sizeof(old)) ||
			   (!f->rx.pos && f->rx.lap == old.lap + 1 &&
			    f->rx.consumed - old.consumed ==
			    old.size - old.pos));
		/* Every write of the honest sender landed whole. */
		FUZZ_CHECK(!f->honest || !f->sent_n);
		if (f->honest && f->sent_n == 0)
			FUZZ_CHECK(f->rx.consumed == f->tx.written);
		return;
	}

	/* Where it was found: after a WRAP at the block end, else at pos. */
	FUZZ_CHECK(ret == 1);
	if (m.seq == old.seq && f->rx.consumed - old.consumed <=
	    old.size - old.pos && old.lap == f->rx.lap - (f->rx.pos == 0)) {
		end = old.size - old.pos;
		lap = old.lap;
	} else {
		end = old.size;
		lap = old.lap + 1;
		FUZZ_CHECK(old.pos != 0);
	}
	rec = rmsg_vb_record_size(m.len);
	FUZZ_CHECK(m.type == RMSG_VB_DATA || m.type == RMSG_VB_RTS);
	FUZZ_CHECK(m.len <= old.max_payload && m.seq == old.seq);
	FUZZ_CHECK(m.off % RMSG_VB_ALIGN == 0 && m.off + rec == end);
	FUZZ_CHECK(f->blk[end - 1] == rmsg_vb_flag(lap));
	FUZZ_CHECK(f->rx.seq == old.seq + 1 && m.end == f->rx.consumed);
	FUZZ_CHECK(f->rx.consumed - old.consumed ==
		   rec + (end == old.size - old.pos ? 0 : old.size - old.pos));
	/* Paid for, clear zone included unless it ends the lap (R4). */
	clear = m.off ? RMSG_VB_CLEAR : 0;
	FUZZ_CHECK(m.off == 0 || m.off >= RMSG_VB_CLEAR);
	FUZZ_CHECK(f->rx.consumed + clear - f->rx.advertised <= f->size);

	if (f->honest) {
		u32 i;

		FUZZ_CHECK(f->sent_n > 0);
		r = &f->sent[f->sent_head];
		f->sent_head = (f->sent_head + 1) % MAX_RECS;
		f->sent_n--;
		FUZZ_CHECK(m.seq == r->seq && m.len == r->len &&
			   m.type == r->type && m.off == r->off &&
			   m.end == r->end);
		for (i = 0; i < m.len; i++)
			FUZZ_CHECK(f->blk[m.off + i] ==
				   payload_byte(r->seq, r->salt, i));
		FUZZ_CHECK(f->held_n < MAX_RECS);
		f->held[(f->held_head + f->held_n++) % MAX_RECS] = *r;
	}
}

static void op_release(struct vb_fuzz *f, struct fuzz_in *in)
{
	u8 how = fuzz_u8(in);
	u32 end, old = f->rx.freed, k;
	bool ok;
	int ret;

	if (how & 1 && f->held_n)
		end = f->held[(f->held_head + how / 2 % f->held_n) %
			      MAX_RECS].end;
	else if (how & 2)
		end = f->rx.consumed;
	else
		end = fuzz_u32(in);
	ok = end - old <= f->rx.consumed - old;
	ret = rmsg_vb_rx_release(&f->rx, end);
	FUZZ_CHECK(ret == (ok ? 0 : -EINVAL));
	FUZZ_CHECK(f->rx.freed == (ok ? end : old));
	check_rx(f);
	/* What was released may be overwritten from now on. */
	while (f->held_n) {
		struct rec *r = &f->held[f->held_head];

		if (r->end - old > f->rx.freed - old)
			break;
		f->held_head = (f->held_head + 1) % MAX_RECS;
		f->held_n--;
	}
	k = f->held_n;
	FUZZ_CHECK(k <= MAX_RECS);
}

/* The honest sender's largest record: can it go, given what it knows? */
static int tx_can_send_max(const struct vb_fuzz *f)
{
	struct rmsg_vb_place pl;

	return rmsg_vb_tx_place(&f->tx, f->tx.max_payload, &pl);
}

static void op_advertise(struct vb_fuzz *f)
{
	bool due = rmsg_vb_rx_credit_due(&f->rx);
	struct rmsg_vb_tx old = f->tx;
	u32 v;
	int ret;

	if (f->rx.freed == f->rx.advertised)
		FUZZ_CHECK(!due);
	/*
	 * R8: with everything released and the sender up to date, either an
	 * update is due or the sender has room for a largest record.
	 */
	if (f->honest && !f->sent_n && f->rx.freed == f->rx.consumed &&
	    f->tx.freed == f->rx.advertised && tx_can_send_max(f))
		FUZZ_CHECK(due);

	v = rmsg_vb_rx_advertise(&f->rx);
	FUZZ_CHECK(v == f->rx.freed && f->rx.advertised == v);
	ret = rmsg_vb_tx_credit(&f->tx, v);
	if (f->honest)
		FUZZ_CHECK(!ret);
	if (ret)
		FUZZ_CHECK(!memcmp(&old, &f->tx, sizeof(old)));
	check_tx(f);
	/* R5: all released and told, a largest record always fits. */
	if (f->honest && !f->sent_n && v == f->tx.written)
		FUZZ_CHECK(!tx_can_send_max(f));
}

/* A credit update from the wire: late, repeated, or made up. */
static void op_credit(struct vb_fuzz *f, struct fuzz_in *in)
{
	struct rmsg_vb_tx old = f->tx;
	u32 v, base = fuzz_u8(in) & 1 ? f->rx.advertised : f->tx.freed;
	bool ok;
	int ret;

	v = base + (int32_t)(int16_t)fuzz_u16(in) * RMSG_VB_ALIGN;
	if (fuzz_u8(in) == 0xff)
		v = fuzz_u32(in);
	ok = v - old.freed <= old.written - old.freed;
	ret = rmsg_vb_tx_credit(&f->tx, v);
	FUZZ_CHECK(ret == (ok ? 0 : -EPROTO));
	FUZZ_CHECK(f->tx.freed == (ok ? v : old.freed));
	check_tx(f);
	/* A late credit keeps the sender honest; more than given does not. */
	if (ok && v - old.freed > f->rx.advertised - old.freed)
		f->honest = false;
}

/* The peer writes raw bytes anywhere in the block. */
static void op_scribble(struct vb_fuzz *f, struct fuzz_in *in)
{
	u32 off = fuzz_u16(in) % f->size;
	u32 n = fuzz_u8(in) % 32 + 1;

	if (n > f->size - off)
		n = f->size - off;
	fuzz_bytes(in, f->blk + off, n);
	f->honest = false;
}

/*
 * The peer forges a trailer where the receiver polls next (or at the block
 * end), with a flag that gets past the first check, and fields that are
 * near what the receiver expects, so the fuzzer reaches the deep checks.
 */
static void op_forge(struct vb_fuzz *f, struct fuzz_in *in)
{
	struct rmsg_vb_trailer t;
	u8 how = fuzz_u8(in);
	u32 end = how & 1 ? f->size : f->size - f->rx.pos;
	u32 lap = f->rx.lap + (how & 1 && f->rx.pos ? 1 : 0);

	t.ack = cpu_to_le32(fuzz_u32(in));
	t.freed = cpu_to_le32(fuzz_u32(in));
	t.seq = cpu_to_le32(f->rx.seq + (int8_t)fuzz_u8(in) % 3);
	t.len = cpu_to_le16(how & 2 ? fuzz_u16(in) :
			    fuzz_u16(in) % (f->rx.max_payload + 1));
	t.type = fuzz_u8(in) % 5;
	switch (how >> 2 & 3) {
	case 0:
	case 1:
		t.flag = rmsg_vb_flag(lap);
		break;
	case 2:
		t.flag = rmsg_vb_flag(lap + 1);
		break;
	default:
		t.flag = fuzz_u8(in);
	}
	memcpy(f->blk + end - sizeof(t), &t, sizeof(t));
	f->honest = false;
}

/* Block sizes from the peer: valid ones and their largest payload (R5). */
static void check_size(u32 raw)
{
	bool valid = raw >= RMSG_VB_MIN_BLOCK && raw <= RMSG_VB_MAX_BLOCK &&
		     raw % RMSG_VB_ALIGN == 0;
	struct rmsg_vb_rx rx;
	struct rmsg_vb_tx tx;
	int max = rmsg_vb_max_payload(raw);

	FUZZ_CHECK(!rmsg_vb_check_block(raw) == valid);
	FUZZ_CHECK(!rmsg_vb_rx_init(&rx, raw, 0, 0) == valid);
	FUZZ_CHECK(!rmsg_vb_tx_init(&tx, raw, 0, 0) == valid);
	if (!valid) {
		FUZZ_CHECK(max == -EINVAL);
		return;
	}
	FUZZ_CHECK(max > 0 && max <= RMSG_VB_MAX_PAYLOAD);
	FUZZ_CHECK(rmsg_vb_record_size(max) + RMSG_VB_CLEAR <= raw / 2);
	FUZZ_CHECK(max == RMSG_VB_MAX_PAYLOAD ||
		   rmsg_vb_record_size(max + RMSG_VB_ALIGN) + RMSG_VB_CLEAR >
		   raw / 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct vb_fuzz *f;
	u32 seq, bytes, ops = 0;

	f = calloc(1, sizeof(*f));
	FUZZ_CHECK(f);
	f->size = RMSG_VB_MIN_BLOCK + RMSG_VB_ALIGN * (fuzz_u8(&in) % 128);
	seq = fuzz_u32(&in);
	bytes = fuzz_u32(&in);
	check_size(seq ^ bytes);
	check_size((seq ^ bytes) & (RMSG_VB_MAX_BLOCK * 2 - 1));
	f->blk = malloc(f->size);
	FUZZ_CHECK(f->blk);
	/* Only the last trailer needs to be zero (R6). */
	memset(f->blk, fuzz_u8(&in), f->size);
	rmsg_vb_block_init(f->blk, f->size);
	FUZZ_CHECK(!rmsg_vb_tx_init(&f->tx, f->size, seq, bytes));
	FUZZ_CHECK(!rmsg_vb_rx_init(&f->rx, f->size, seq, bytes));
	f->honest = true;

	while (fuzz_more(&in) && !f->dead && ops++ < 4096) {
		switch (fuzz_u8(&in) % 12) {
		case 0:
		case 1:
		case 2:
			op_send(f, &in);
			break;
		case 3:
		case 4:
		case 5:
			op_poll(f);
			break;
		case 6:
		case 7:
			op_release(f, &in);
			break;
		case 8:
			op_advertise(f);
			break;
		case 9:
			op_credit(f, &in);
			break;
		case 10:
			op_scribble(f, &in);
			break;
		default:
			op_forge(f, &in);
			break;
		}
	}
	free(f->blk);
	free(f);
	return 0;
}
