// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: repairing a channel (rmsg_resil.c). A sender keeps a shadow
 * of the peer's receive block and writes through a link that the input
 * breaks at will, a write then landing only in part and later ones not at
 * all; the receiving program polls, releases and advertises meanwhile.
 * A repair resumes the sender from what the receiver reports
 * (rmsg_vb_tx_resume()) and writes again what it lacks
 * (rmsg_vb_retx_next()), and may itself be cut short by another failure.
 * Peers that lie in their hello, and RECONNECT hellos for
 * rmsg_repair_match(), come from the input as well.
 *
 * Invariants: with an honest receiver, a resume always succeeds; its
 * rewrites start where the receiver's complete records end, follow each
 * other without a gap or an overlap, stay inside the block and inside the
 * credit, and end exactly at what was written; after them every message
 * arrives once, in order, byte for byte, and no byte the program holds is
 * overwritten. With a lying peer, a resume either fails and changes
 * nothing, or its rewrites still stay inside the block, the credit and
 * what was written.
 */
#include "fuzz.h"
#include "rmsg_resil.h"

#define MAX_RECS	1024

struct rec {
	u32 seq, off, len, end;
	u8 type, salt;
};

struct rs {
	u32 size;
	u8 *shadow, *blk;
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	bool up;		/* writes land; false from a failure to a repair */
	/* Sent and not yet polled, from rx.seq on. */
	struct rec sent[MAX_RECS];
	u32 sent_head, sent_n;
	/* Polled and not released. */
	struct rec held[MAX_RECS];
	u32 held_head, held_n;
};

static u8 payload_byte(u32 seq, u8 salt, u32 i)
{
	return (u8)(seq * 131 + i * 7 + salt);
}

static const struct rec *sent_at(const struct rs *s, u32 k)
{
	return &s->sent[(s->sent_head + k) % MAX_RECS];
}

/* Unreleased payload bytes of polled records stay (see fuzz_vb_rx.c). */
static void check_held(const struct rs *s)
{
	u32 k, i, rec, c;

	for (k = 0; k < s->held_n; k++) {
		const struct rec *r = &s->held[(s->held_head + k) % MAX_RECS];

		rec = rmsg_vb_record_size(r->len);
		for (i = 0; i < r->len; i++) {
			c = r->end - 1 - i;
			if (c - s->rx.freed >= s->rx.consumed - s->rx.freed)
				continue;
			FUZZ_CHECK(s->blk[r->off + i] ==
				   payload_byte(r->seq, r->salt, i));
		}
		FUZZ_CHECK(rec <= s->size);
	}
}

/*
 * The first @n bytes of a write of @len bytes at @off, landed in the
 * receiver's block: @clear zeros, then the shadow's bytes.
 */
static void land(struct rs *s, u32 off, u32 len, u32 clear, u32 n)
{
	u32 z = n < clear ? n : clear;

	FUZZ_CHECK(off + len <= s->size && n <= len && clear <= len);
	memset(s->blk + off, 0, z);
	if (n > clear)
		memcpy(s->blk + off + clear, s->shadow + off + clear,
		       n - clear);
}

/* Land a write whole, or break the link in its middle (@fate). */
static void send_write(struct rs *s, u32 off, u32 len, u32 clear, u8 fate,
		       u8 cut)
{
	if (!s->up)
		return;
	if (fate % 8) {
		land(s, off, len, clear, len);
		return;
	}
	/* Never the last byte, the flag: that would be the whole write. */
	land(s, off, len, clear, cut % len);
	s->up = false;
}

static void op_send(struct rs *s, struct fuzz_in *in)
{
	struct rmsg_vb_trailer t, wt;
	struct rmsg_vb_place pl;
	u32 len = fuzz_u16(in) % (s->tx.max_payload + 2), i;
	u8 type = fuzz_u8(in) & 1 ? RMSG_VB_RTS : RMSG_VB_DATA;
	u8 salt = fuzz_u8(in), fate = fuzz_u8(in), cut = fuzz_u8(in);
	struct rec *r;
	int ret;

	ret = rmsg_vb_tx_place(&s->tx, len, &pl);
	if (ret) {
		FUZZ_CHECK(ret == (len > s->tx.max_payload ? -EMSGSIZE :
				   -ENOSPC));
		return;
	}
	rmsg_vb_trailer_fill(&t, &pl, type, pl.seq, 0);
	rmsg_vb_trailer_fill(&wt, &pl, RMSG_VB_WRAP, pl.seq, 0);
	rmsg_vb_shadow_put(s->shadow, &pl, &t, &wt);
	for (i = 0; i < len; i++)
		s->shadow[pl.off + pl.payload + i] =
			payload_byte(pl.seq, salt, i);
	if (pl.wrap_skip)
		send_write(s, pl.wrap_off, RMSG_VB_TRAILER_SIZE, 0,
			   fate & 0x80 ? 1 : fate, cut);
	send_write(s, pl.off, pl.len, pl.payload, fate, cut);
	rmsg_vb_tx_commit(&s->tx, &pl);

	FUZZ_CHECK(s->sent_n < MAX_RECS);
	r = &s->sent[(s->sent_head + s->sent_n++) % MAX_RECS];
	r->seq = pl.seq;
	r->off = pl.off + pl.payload;
	r->len = len;
	r->type = type;
	r->salt = salt;
	r->end = s->tx.written;
	check_held(s);
}

static void op_poll(struct rs *s)
{
	struct rmsg_vb_msg m;
	const struct rec *r;
	u32 i;
	int ret;

	ret = rmsg_vb_rx_poll(&s->rx, s->blk, &m);
	FUZZ_CHECK(ret >= 0);
	if (!ret) {
		/* A link that is up has delivered everything sent. */
		FUZZ_CHECK(!s->up || !s->sent_n);
		return;
	}
	FUZZ_CHECK(s->sent_n);
	r = sent_at(s, 0);
	FUZZ_CHECK(m.seq == r->seq && m.len == r->len && m.type == r->type &&
		   m.off == r->off && m.end == r->end);
	for (i = 0; i < m.len; i++)
		FUZZ_CHECK(s->blk[m.off + i] == payload_byte(r->seq, r->salt, i));
	FUZZ_CHECK(s->held_n < MAX_RECS);
	s->held[(s->held_head + s->held_n++) % MAX_RECS] = *r;
	s->sent_head = (s->sent_head + 1) % MAX_RECS;
	s->sent_n--;
}

static void op_release(struct rs *s, struct fuzz_in *in)
{
	u8 how = fuzz_u8(in);
	u32 end, old = s->rx.freed;

	if (how & 1 && s->held_n)
		end = s->held[(s->held_head + how / 2 % s->held_n) %
			      MAX_RECS].end;
	else
		end = s->rx.consumed - (how & 2 ? 0 : fuzz_u16(in) % 64 * 16);
	if (rmsg_vb_rx_release(&s->rx, end))
		return;
	while (s->held_n) {
		struct rec *r = &s->held[s->held_head];

		if (r->end - old > s->rx.freed - old)
			break;
		s->held_head = (s->held_head + 1) % MAX_RECS;
		s->held_n--;
	}
}

static void op_advertise(struct rs *s)
{
	u32 v = rmsg_vb_rx_advertise(&s->rx);

	/* A credit update goes by SEND: it arrives while the link is up. */
	if (s->up)
		FUZZ_CHECK(!rmsg_vb_tx_credit(&s->tx, v));
}

/* Where the receiving kernel finds the end of its complete records. */
static void rx_walk(const struct rs *s, struct rmsg_vb_rx *krx)
{
	struct rmsg_vb_msg m;
	u32 k = 0;
	int ret;

	*krx = s->rx;
	while ((ret = rmsg_vb_rx_poll(krx, s->blk, &m)) > 0) {
		FUZZ_CHECK(k < s->sent_n);
		FUZZ_CHECK(m.seq == sent_at(s, k)->seq);
		k++;
	}
	FUZZ_CHECK(ret == 0);
}

/*
 * Check one rewrite against the cursor before it (@c, @seq) and the
 * sender's state, whoever told where to resume.
 */
static void check_rewrite(const struct rs *s, const u8 *shadow,
			  const struct rmsg_vb_tx *tx,
			  const struct rmsg_vb_rewrite *w, u32 c, u32 freed)
{
	FUZZ_CHECK(w->off % RMSG_VB_ALIGN == 0 && w->len % RMSG_VB_ALIGN == 0);
	FUZZ_CHECK(w->off + w->len <= s->size && w->len >= w->clear);
	FUZZ_CHECK(w->flag_off == w->off + w->len - 1);
	FUZZ_CHECK(shadow[w->flag_off] == w->flag);
	FUZZ_CHECK(w->clear == 0 || w->clear == RMSG_VB_CLEAR);
	if (w->type == RMSG_VB_WRAP)
		FUZZ_CHECK(w->len == RMSG_VB_TRAILER_SIZE && !w->clear);
	else
		FUZZ_CHECK(w->bytes == w->len - w->clear);
	/* Never past what was written, never beyond the credit (R4). */
	FUZZ_CHECK(w->bytes && w->bytes <= tx->written - c);
	FUZZ_CHECK(c - freed <= tx->written - freed);
	FUZZ_CHECK(c + w->len - freed <= s->size);
}

static void op_resume(struct rs *s, struct fuzz_in *in)
{
	struct rmsg_vb_tx before = s->tx;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rmsg_vb_rx krx;
	u32 freed, c, seq, n = 0;
	u8 fate;
	int ret;

	rx_walk(s, &krx);
	/* The receiver's hello gives its release counter: now advertised. */
	freed = rmsg_vb_rx_advertise(&s->rx);
	ret = rmsg_vb_tx_resume(&s->tx, s->shadow, freed, krx.consumed,
				krx.seq, &rt);
	FUZZ_CHECK(ret == 0);
	before.freed = freed;
	FUZZ_CHECK(!memcmp(&before, &s->tx, sizeof(before)));
	FUZZ_CHECK(rt.counter == krx.consumed && rt.seq == krx.seq);

	s->up = true;
	c = krx.consumed;
	seq = krx.seq;
	while ((ret = rmsg_vb_retx_next(&rt, s->shadow, &w)) > 0) {
		check_rewrite(s, s->shadow, &s->tx, &w, c, freed);
		/* Exactly the records the receiver lacks, in order. */
		FUZZ_CHECK(w.seq == seq);
		FUZZ_CHECK(seq - s->rx.seq < s->sent_n);
		if (w.type != RMSG_VB_WRAP) {
			const struct rec *r = sent_at(s, seq - s->rx.seq);

			FUZZ_CHECK(w.type == r->type);
			FUZZ_CHECK(w.bytes == rmsg_vb_record_size(r->len));
			FUZZ_CHECK(c + w.bytes == r->end);
			FUZZ_CHECK(w.off + w.clear == r->off);
			seq++;
		}
		c += w.bytes;
		FUZZ_CHECK(rt.counter == c && rt.seq == seq);
		FUZZ_CHECK(++n <= 2 * MAX_RECS);
		fate = fuzz_u8(in);
		send_write(s, w.off, w.len, w.clear, fate, fuzz_u8(in));
		check_held(s);
		if (!s->up)
			return;		/* failed again: repair again later */
	}
	FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(c == s->tx.written && seq == s->tx.seq);
	FUZZ_CHECK(rmsg_vb_retx_next(&rt, s->shadow, &w) == 0);
}

/* A peer that lies in its RECONNECT: a resume on a copy of the sender. */
static void op_resume_lie(struct rs *s, struct fuzz_in *in)
{
	struct rmsg_vb_tx tx = s->tx;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rmsg_vb_rx krx;
	u32 freed, arrived, seq, c, n = 0;
	u8 how = fuzz_u8(in);
	int ret;

	rx_walk(s, &krx);
	freed = s->rx.freed + (how & 1 ? (int16_t)fuzz_u16(in) * 16 : 0);
	arrived = krx.consumed + (how & 2 ? (int16_t)fuzz_u16(in) * 16 : 0);
	seq = krx.seq + (how & 4 ? (int8_t)fuzz_u8(in) : 0);
	if (how & 8) {
		freed = fuzz_u32(in);
		arrived = fuzz_u32(in);
	}
	ret = rmsg_vb_tx_resume(&tx, s->shadow, freed, arrived, seq, &rt);
	if (ret) {
		FUZZ_CHECK(ret == -EPROTO);
		FUZZ_CHECK(!memcmp(&tx, &s->tx, sizeof(tx)));
		return;
	}
	/* Credit as a credit update would be checked; arrived within it. */
	FUZZ_CHECK(freed - s->tx.freed <= s->tx.written - s->tx.freed);
	FUZZ_CHECK(arrived - freed <= s->tx.written - freed);
	FUZZ_CHECK(tx.freed == freed);
	c = arrived;
	while ((ret = rmsg_vb_retx_next(&rt, s->shadow, &w)) > 0) {
		check_rewrite(s, s->shadow, &tx, &w, c, freed);
		c += w.bytes;
		FUZZ_CHECK(rt.counter == c);
		FUZZ_CHECK(++n <= s->size / RMSG_VB_ALIGN);
	}
	/* A resume that succeeded promised rewrites that cannot fail. */
	FUZZ_CHECK(ret == 0 && c == tx.written && rt.seq == tx.seq);
}

/*
 * A shadow that rotted (a bug elsewhere, or memory corruption): resume
 * from the honest counters on copies of the sender and the shadow, with
 * bytes of the shadow changed or a trailer forged where the rewrites
 * start. The resume and its rewrites read only inside the shadow, whatever
 * it holds; a resume that succeeds still rewrites only inside the block,
 * the credit and what was written, and then cannot fail.
 */
static void op_shadow_rot(struct rs *s, struct fuzz_in *in)
{
	struct rmsg_vb_tx tx = s->tx;
	struct rmsg_vb_trailer t;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rmsg_vb_rx krx;
	u8 how = fuzz_u8(in), *shadow = malloc(s->size);
	u32 off, n = 0, c, end;
	int ret;

	FUZZ_CHECK(shadow);
	memcpy(shadow, s->shadow, s->size);
	rx_walk(s, &krx);
	if (how & 1) {
		off = fuzz_u16(in) % s->size;
		n = fuzz_u8(in) % 32 + 1;
		if (n > s->size - off)
			n = s->size - off;
		fuzz_bytes(in, shadow + off, n);
	} else {
		/* Where the first rewrite's trailer is, or further on. */
		end = s->size - (krx.pos + fuzz_u8(in) % 8 * 16) % s->size;
		t.ack = 0;
		t.freed = 0;
		t.seq = cpu_to_le32(krx.seq + (int8_t)fuzz_u8(in) % 3);
		t.len = cpu_to_le16(fuzz_u16(in));
		t.type = fuzz_u8(in) % 5;
		t.flag = how & 2 ? rmsg_vb_flag(krx.lap) : fuzz_u8(in);
		memcpy(shadow + end - sizeof(t), &t, sizeof(t));
	}
	ret = rmsg_vb_tx_resume(&tx, shadow, s->rx.freed, krx.consumed,
				krx.seq, &rt);
	if (ret) {
		FUZZ_CHECK(ret == -EPROTO);
		FUZZ_CHECK(!memcmp(&tx, &s->tx, sizeof(tx)));
	} else {
		c = krx.consumed;
		n = 0;
		while ((ret = rmsg_vb_retx_next(&rt, shadow, &w)) > 0) {
			check_rewrite(s, shadow, &tx, &w, c, s->rx.freed);
			c += w.bytes;
			FUZZ_CHECK(++n <= s->size / RMSG_VB_ALIGN);
		}
		FUZZ_CHECK(ret == 0 && c == tx.written && rt.seq == tx.seq);
	}
	free(shadow);
}

/* min(cap, base * 2^attempt), in 64 bits */
static u64 backoff_max(u32 attempt, u32 base, u32 cap)
{
	u64 d = attempt >= 32 ? cap : (u64)base << attempt;

	return d < cap ? d : cap;
}

/* The reconnection back-off against its kernel-doc. */
static void op_backoff(struct fuzz_in *in)
{
	u32 attempt, base, cap, rnd, give_up, b, cp, v, k;
	u64 spent = 0, want;

	/* Values of all sizes: a word shifted right by a fuzzed amount. */
	attempt = fuzz_u8(in);
	base = fuzz_u32(in);
	base >>= fuzz_u8(in) % 32;
	cap = fuzz_u32(in);
	cap >>= fuzz_u8(in) % 32;
	rnd = fuzz_u32(in);
	give_up = fuzz_u32(in);
	give_up >>= fuzz_u8(in) % 32;
	b = base ? base : 1;
	cp = cap < b ? b : cap;

	v = rmsg_backoff_ms(attempt, base, cap, rnd);
	FUZZ_CHECK(v >= 1 && v <= backoff_max(attempt, b, cp) &&
		   v >= backoff_max(attempt, b, cp) -
			backoff_max(attempt, b, cp) / 2);
	/* Attempts at their longest while they fit; from 32 on, the cap. */
	for (k = 0; k < 40; k++) {
		if (spent + backoff_max(k, b, cp) > give_up)
			break;
		spent += backoff_max(k, b, cp);
	}
	want = k < 40 ? k : 40 + (give_up - spent) / cp;
	FUZZ_CHECK(rmsg_backoff_attempts(base, cap, give_up) == want);
}

/* rmsg_repair_match() against its kernel-doc. */
static void op_match(struct fuzz_in *in)
{
	struct rmsg_hello h = { 0 };
	u64 inc = fuzz_u8(in) & 1 ? 7 : fuzz_u64(in);
	u32 chan = fuzz_u8(in) & 1 ? 3 : fuzz_u32(in);
	u32 epoch = fuzz_u32(in);
	enum rmsg_repair_verdict v, want;

	h.kind = fuzz_u8(in) % 4;
	h.incarnation = fuzz_u8(in) & 1 ? 7 : fuzz_u64(in);
	h.channel = fuzz_u8(in) & 1 ? 3 : fuzz_u32(in);
	h.epoch = epoch + (int8_t)fuzz_u8(in);
	v = rmsg_repair_match(inc, chan, epoch, &h);
	if (h.kind != RMSG_HELLO_RECONNECT)
		want = RMSG_REPAIR_INVALID;
	else if (h.incarnation != inc || h.channel != chan)
		want = RMSG_REPAIR_INVALID;
	else if (h.epoch - epoch == 0 || h.epoch - epoch >= 0x80000000U)
		want = RMSG_REPAIR_STALE;
	else
		want = RMSG_REPAIR_ACCEPT;
	FUZZ_CHECK(v == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct rs *s = calloc(1, sizeof(*s));
	u32 seq, bytes, ops = 0;

	FUZZ_CHECK(s);
	s->size = RMSG_VB_MIN_BLOCK + RMSG_VB_ALIGN * (fuzz_u8(&in) % 128);
	seq = fuzz_u32(&in);
	bytes = fuzz_u32(&in);
	s->shadow = malloc(s->size);
	s->blk = malloc(s->size);
	FUZZ_CHECK(s->shadow && s->blk);
	/* Neither needs initialising but for the block's last trailer. */
	memset(s->shadow, 0xee, s->size);
	memset(s->blk, 0xdd, s->size);
	rmsg_vb_block_init(s->blk, s->size);
	FUZZ_CHECK(!rmsg_vb_tx_init(&s->tx, s->size, seq, bytes));
	FUZZ_CHECK(!rmsg_vb_rx_init(&s->rx, s->size, seq, bytes));
	s->up = true;

	while (fuzz_more(&in) && ops++ < 4096) {
		switch (fuzz_u8(&in) % 13) {
		case 0:
		case 1:
		case 2:
			op_send(s, &in);
			break;
		case 3:
		case 4:
			op_poll(s);
			break;
		case 5:
			op_release(s, &in);
			break;
		case 6:
			op_advertise(s);
			break;
		case 7:
			s->up = false;
			break;
		case 8:
			op_resume(s, &in);
			break;
		case 9:
			op_resume_lie(s, &in);
			break;
		case 10:
			op_shadow_rot(s, &in);
			break;
		case 11:
			op_backoff(&in);
			break;
		default:
			op_match(&in);
			break;
		}
	}
	free(s->shadow);
	free(s->blk);
	free(s);
	return 0;
}
