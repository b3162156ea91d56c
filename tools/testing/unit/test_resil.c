// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_resil.c: the shadow of the peer's receive block,
 * resuming after a failure (what the receiver lacks is written again), the
 * reconnection back-off and the matching of a RECONNECT to its channel.
 *
 * The test that matters is the randomized run at the end: a sender with a
 * shadow writes through a link that fails at random, leaving a write half
 * landed and the rest lost, and after each failure the channel is resumed
 * as the kernels do it; every message must arrive once, in order, byte for
 * byte, in both arrival modes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The harness's wrappers take parameters they do not use. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_resil.h"
#include "unit_rng.h"

#define EVEN	RMSG_VB_FLAG_EVEN
#define ODD	RMSG_VB_FLAG_ODD
#define TRL	((u32)RMSG_VB_TRAILER_SIZE)
#define CLR	((u32)RMSG_VB_CLEAR)
#define ACK_KEY	0x5a5aa5a5U

/* The payload of message @seq: a function of @seq alone. */
static void payload_fill(u32 seq, u8 *buf, u32 len)
{
	u32 x = seq * 0x9e3779b9U ^ 0x2545f491U, i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (u8)(x >> 11);
	}
}

/* ------------------------------------------------------------------ */
/* A deterministic rig: a sender with a shadow, and the receiver's block */

struct rig {
	u32 size;
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	u8 *shadow, *blk;
	u32 seq0;
	u8 buf[65536 + 64];
};

static int rig_init(struct rig *r, u32 size, u32 seq, u32 bytes)
{
	memset(r, 0, sizeof(*r));
	r->size = size;
	r->seq0 = seq;
	r->shadow = malloc(size);
	r->blk = malloc(size);
	if (!r->shadow || !r->blk)
		return -ENOMEM;
	/* Neither needs initialising but for the block's last trailer. */
	memset(r->shadow, 0xee, size);
	memset(r->blk, 0xdd, size);
	rmsg_vb_block_init(r->blk, size);
	if (rmsg_vb_tx_init(&r->tx, size, seq, bytes))
		return -EINVAL;
	return rmsg_vb_rx_init(&r->rx, size, seq, bytes);
}

static void rig_exit(struct rig *r)
{
	free(r->shadow);
	free(r->blk);
}

/* One write, landed whole: @clear zeros, then the shadow's bytes. */
static void rig_land(struct rig *r, u32 off, u32 len, u32 clear)
{
	memset(r->blk + off, 0, clear);
	memcpy(r->blk + off + clear, r->shadow + off + clear, len - clear);
}

/*
 * Send a record of @len payload bytes as the kernel would: place, frame in
 * the shadow, payload into the shadow, commit. It lands in the receiver's
 * block when @land. Returns the placement's error, or 0.
 */
static int rig_send(struct rig *r, u32 len, u8 type, bool land,
		    struct rmsg_vb_place *pl)
{
	struct rmsg_vb_trailer t, wt;
	int ret;

	ret = rmsg_vb_tx_place(&r->tx, len, pl);
	if (ret)
		return ret;
	rmsg_vb_trailer_fill(&t, pl, type, pl->seq ^ ACK_KEY, 0);
	rmsg_vb_trailer_fill(&wt, pl, RMSG_VB_WRAP, pl->seq ^ ACK_KEY, 0);
	rmsg_vb_shadow_put(r->shadow, pl, &t, &wt);
	payload_fill(pl->seq, r->shadow + pl->off + pl->payload, len);
	if (land) {
		if (pl->wrap_skip)
			rig_land(r, pl->wrap_off, TRL, 0);
		rig_land(r, pl->off, pl->len, pl->payload);
	}
	rmsg_vb_tx_commit(&r->tx, pl);
	return 0;
}

/* Credit everything the receiver has: it polls and releases all. */
static void rig_drain(struct __test_metadata *_metadata, struct rig *r,
		      u32 *next)
{
	struct rmsg_vb_msg m;
	int ret;

	while ((ret = rmsg_vb_rx_poll(&r->rx, r->blk, &m)) > 0) {
		ASSERT_EQ(*next, m.seq);
		payload_fill(m.seq, r->buf, m.len);
		ASSERT_EQ(0, memcmp(r->buf, r->blk + m.off, m.len));
		ASSERT_EQ(m.seq ^ ACK_KEY, m.ack);
		(*next)++;
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rmsg_vb_rx_release(&r->rx, r->rx.consumed));
	ASSERT_EQ(0, rmsg_vb_tx_credit(&r->tx, rmsg_vb_rx_advertise(&r->rx)));
}

/*
 * Resume where the receiver's block stands, rewrite everything, check the
 * writes against @want (offset, length, clear, type; NULL: unchecked), and
 * check the receiver then reads every message up to the sender's, exactly.
 */
struct want {
	u32 off, len, clear;
	u8 type;
};

static void rig_resume(struct __test_metadata *_metadata, struct rig *r,
		       const struct want *want, u32 nwant, u32 *next)
{
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rmsg_vb_rx krx = r->rx;
	struct rmsg_vb_msg m;
	u32 n = 0, bytes = 0;
	int ret;

	/* The receiving kernel's walk to the end of the complete records. */
	while ((ret = rmsg_vb_rx_poll(&krx, r->blk, &m)) > 0)
		;
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rmsg_vb_tx_resume(&r->tx, r->shadow, r->rx.freed,
				       krx.consumed, krx.seq, &rt));
	ASSERT_EQ(krx.consumed, rt.counter);
	while ((ret = rmsg_vb_retx_next(&rt, r->shadow, &w)) > 0) {
		ASSERT_LE(w.off + w.len, r->size);
		ASSERT_EQ(w.off + w.len - 1, w.flag_off);
		ASSERT_EQ(r->shadow[w.flag_off], w.flag);
		if (want && n < nwant) {
			EXPECT_EQ(want[n].off, w.off) TH_LOG("write %u", n);
			EXPECT_EQ(want[n].len, w.len) TH_LOG("write %u", n);
			EXPECT_EQ(want[n].clear, w.clear) TH_LOG("write %u", n);
			EXPECT_EQ(want[n].type, w.type) TH_LOG("write %u", n);
		}
		rig_land(r, w.off, w.len, w.clear);
		bytes += w.bytes;
		n++;
	}
	ASSERT_EQ(0, ret);
	if (want)
		ASSERT_EQ(nwant, n);
	ASSERT_EQ(r->tx.written - krx.consumed, bytes);
	ASSERT_EQ(r->tx.seq, rt.seq);
	/* Nothing more once the end is reached. */
	ASSERT_EQ(0, rmsg_vb_retx_next(&rt, r->shadow, &w));
	rig_drain(_metadata, r, next);
	ASSERT_EQ(r->tx.seq, *next);
	ASSERT_EQ(r->tx.written, r->rx.consumed);
}

#define S1	4096U

/* Records of @plen payload bytes take pad16(plen) + 16 block bytes. */
TEST(resume_mid_lap)
{
	struct rmsg_vb_place pl;
	struct rig r;
	u32 next = 0xfffffffeU;
	struct want want[3];

	ASSERT_EQ(0, rig_init(&r, S1, next, 0xfffffc00U));
	/* Two landed, three not: the third landed only half. */
	ASSERT_EQ(0, rig_send(&r, 100, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 200, RMSG_VB_RTS, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 300, RMSG_VB_DATA, false, &pl));
	memcpy(r.blk + pl.off, r.shadow + pl.off, pl.len / 2);
	want[0] = (struct want){ pl.off, pl.len, CLR, RMSG_VB_DATA };
	ASSERT_EQ(0, rig_send(&r, 0, RMSG_VB_RTS, false, &pl));
	want[1] = (struct want){ pl.off, pl.len, CLR, RMSG_VB_RTS };
	ASSERT_EQ(0, rig_send(&r, 1000, RMSG_VB_DATA, false, &pl));
	want[2] = (struct want){ pl.off, pl.len, CLR, RMSG_VB_DATA };
	/* 128 + 224 + 320 + 16 + 1024 bytes, each with its clear zone. */
	EXPECT_EQ(S1 - 128 - 224 - 320 - CLR, want[0].off);
	EXPECT_EQ(S1 - 128 - 224 - 320 - 16 - 1024 - CLR, want[2].off);
	rig_resume(_metadata, &r, want, 3, &next);
	rig_exit(&r);
}

/* Exact fills end a lap; the record after one starts the next lap. */
TEST(resume_at_lap_start)
{
	struct rmsg_vb_place pl;
	struct rig r;
	u32 next = 0;
	struct want want[2];

	ASSERT_EQ(0, rig_init(&r, S1, 0, 0xfffff000U));
	/* 4 x 1024 bytes fill lap 0 exactly; the last needs no clear zone. */
	ASSERT_EQ(0, rig_send(&r, 1008, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 1008, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 1008, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 1008, RMSG_VB_DATA, true, &pl));
	EXPECT_EQ(0U, pl.off);
	EXPECT_EQ(0U, pl.payload);
	ASSERT_EQ(0U, r.tx.pos);
	ASSERT_EQ(1U, r.tx.lap);
	rig_drain(_metadata, &r, &next);
	/* Lap 1: two records, nothing landed. */
	ASSERT_EQ(0, rig_send(&r, 1, RMSG_VB_DATA, false, &pl));
	want[0] = (struct want){ S1 - 32 - CLR, 32 + CLR, CLR, RMSG_VB_DATA };
	ASSERT_EQ(0, rig_send(&r, 17, RMSG_VB_DATA, false, &pl));
	want[1] = (struct want){ S1 - 32 - 48 - CLR, 48 + CLR, CLR,
				 RMSG_VB_DATA };
	rig_resume(_metadata, &r, want, 2, &next);

	/* And a lap ended by an exact fill that did not land. */
	ASSERT_EQ(80U, r.tx.pos);
	ASSERT_EQ(0, rig_send(&r, 2000, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 2000 - 16, RMSG_VB_DATA, false, &pl));
	ASSERT_EQ(0U, pl.off);
	want[0] = (struct want){ 0, 2000, 0, RMSG_VB_DATA };
	ASSERT_EQ(0, rig_send(&r, 5, RMSG_VB_DATA, false, &pl));
	want[1] = (struct want){ S1 - 32 - CLR, 32 + CLR, CLR, RMSG_VB_DATA };
	rig_drain(_metadata, &r, &next);
	rig_resume(_metadata, &r, want, 2, &next);
	rig_exit(&r);
}

/* Fill lap 0 to @pos bytes with landed records; credit all of it. */
static void rig_fill_to(struct __test_metadata *_metadata, struct rig *r,
			u32 pos, u32 *next)
{
	struct rmsg_vb_place pl;

	while (r->tx.pos < pos) {
		u32 rec = pos - r->tx.pos < 1024 ? pos - r->tx.pos : 1024;

		ASSERT_EQ(0, rig_send(r, rec - 16, RMSG_VB_DATA, true, &pl));
		rig_drain(_metadata, r, next);
	}
	ASSERT_EQ(pos, r->tx.pos);
}

/*
 * Records to the end of the lap, the last an exact fill; each lands and is
 * credited when @land. Returns how many.
 */
static u32 rig_fill_lap(struct __test_metadata *_metadata, struct rig *r,
			bool land, u32 *next)
{
	struct rmsg_vb_place pl;
	u32 lap = r->tx.lap, n = 0;

	while (r->tx.lap == lap) {
		u32 left = r->size - r->tx.pos;
		u32 rec = left < 512 ? left : 512;

		if (left < rec + CLR)
			rec = left;
		if (rig_send(r, rec - 16, RMSG_VB_DATA, land, &pl))
			return 0;
		if (land)
			rig_drain(_metadata, r, next);
		n++;
	}
	return n;
}

/* A WRAP that landed, a WRAP that did not. */
TEST(resume_around_wrap)
{
	struct rmsg_vb_place pl;
	struct rig r;
	u32 next = 10;
	struct want want[2];

	ASSERT_EQ(0, rig_init(&r, S1 + 48, next, 0x7ffff000U));
	rig_fill_to(_metadata, &r, 3008, &next);
	/* 1200 + 16 does not fit the 1136 left: WRAP, then lap 1. */
	ASSERT_EQ(0, rig_send(&r, 1190, RMSG_VB_DATA, false, &pl));
	ASSERT_EQ(S1 + 48 - 3008U, pl.wrap_skip);
	/* The WRAP landed, the record did not. */
	rig_land(&r, pl.wrap_off, TRL, 0);
	want[0] = (struct want){ S1 + 48 - 1216 - CLR, 1216 + CLR, CLR,
				 RMSG_VB_DATA };
	rig_resume(_metadata, &r, want, 1, &next);
	ASSERT_EQ(1U, r.rx.lap);

	rig_fill_to(_metadata, &r, 3200, &next);
	ASSERT_EQ(0, rig_send(&r, 2000, RMSG_VB_RTS, false, &pl));
	ASSERT_EQ(S1 + 48 - 3200U, pl.wrap_skip);
	want[0] = (struct want){ pl.wrap_off, TRL, 0, RMSG_VB_WRAP };
	want[1] = (struct want){ pl.off, pl.len, CLR, RMSG_VB_RTS };
	rig_resume(_metadata, &r, want, 2, &next);
	ASSERT_EQ(2U, r.rx.lap);
	rig_exit(&r);
}

/* Everything arrived: nothing to write again, and the credit applies. */
TEST(resume_nothing_to_resend)
{
	struct rmsg_vb_place pl;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rig r;
	u32 next = 0;

	ASSERT_EQ(0, rig_init(&r, S1, 0, 0));
	rig_resume(_metadata, &r, NULL, 0, &next);
	ASSERT_EQ(0, rig_send(&r, 700, RMSG_VB_DATA, true, &pl));
	ASSERT_EQ(0, rig_send(&r, 70, RMSG_VB_DATA, true, &pl));
	/* Polled and released, the credit never sent: the hello has it. */
	ASSERT_EQ(0, rmsg_vb_tx_resume(&r.tx, r.shadow, r.tx.written,
				       r.tx.written, r.tx.seq, &rt));
	ASSERT_EQ(r.tx.written, r.tx.freed);
	ASSERT_EQ(0, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rig_drain(_metadata, &r, &next);
	ASSERT_EQ(2U, next);
	rig_exit(&r);
}

/* A whole block unacknowledged: written - freed == S, nothing landed. */
TEST(resume_whole_block)
{
	static const u32 sizes[] = { S1, S1 + 48, 12336 };
	struct rmsg_vb_place pl;
	unsigned int i;
	struct rig r;
	u32 next, n;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		next = 0xfffffff0U;
		ASSERT_EQ(0, rig_init(&r, sizes[i], next, 0xffffff00U));
		/*
		 * Only a lap's last record goes without a clear zone, so a
		 * whole block is unacknowledged only from a lap start to the
		 * next: lap 0 arrives, lap 1 does not.
		 */
		rig_fill_lap(_metadata, &r, true, &next);
		n = rig_fill_lap(_metadata, &r, false, &next);
		ASSERT_EQ(sizes[i], r.tx.written - r.tx.freed);
		ASSERT_EQ(0U, r.tx.pos);
		ASSERT_EQ(2U, r.tx.lap);
		ASSERT_EQ(-ENOSPC, rmsg_vb_tx_place(&r.tx, 0, &pl));
		rig_resume(_metadata, &r, NULL, 0, &next);
		ASSERT_LT(4U, n);
		rig_exit(&r);
	}
}

/*
 * The clear-zone rule: record A's clear zone is where record B's trailer
 * goes. After B is placed, the shadow holds B's trailer there, flag
 * included. A rewrite of A that took those bytes from the shadow would
 * show the receiver a valid flag for B over B's stale payload.
 */
TEST(clear_zone_must_be_zeros)
{
	struct rmsg_vb_place a, b;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	struct rmsg_vb_msg m;
	struct rig r;
	u32 next = 0;
	int ret;

	ASSERT_EQ(0, rig_init(&r, S1, 0, 0));
	rig_fill_to(_metadata, &r, 1024, &next);
	/* Stale payload where B goes: what an older lap left. */
	ASSERT_EQ(0, rig_send(&r, 64, RMSG_VB_DATA, false, &a));
	ASSERT_EQ(0, rig_send(&r, 64, RMSG_VB_DATA, false, &b));
	/* The shadow's clear zone of A is B's trailer, flag set. */
	ASSERT_EQ(b.off + b.trailer, a.off);
	ASSERT_EQ(EVEN, r.shadow[a.off + CLR - 1]);

	ASSERT_EQ(0, rmsg_vb_tx_resume(&r.tx, r.shadow, r.rx.freed,
				       r.rx.consumed, r.rx.seq, &rt));
	ASSERT_EQ(1, rmsg_vb_retx_next(&rt, r.shadow, &w));
	ASSERT_EQ(a.off, w.off);
	ASSERT_EQ(CLR, w.clear);

	/* Wrongly: the clear zone copied from the shadow. */
	memcpy(r.blk + w.off, r.shadow + w.off, w.len);
	ret = rmsg_vb_rx_poll(&r.rx, r.blk, &m);
	ASSERT_EQ(1, ret);
	ASSERT_EQ(a.seq, m.seq);
	/* B "arrives" though none of it was written: stale bytes. */
	ASSERT_EQ(1, rmsg_vb_rx_poll(&r.rx, r.blk, &m));
	ASSERT_EQ(b.seq, m.seq);
	payload_fill(b.seq, r.buf, 64);
	EXPECT_NE(0, memcmp(r.buf, r.blk + m.off, 64));

	/* Rightly: zeros there, and B waits for its own write. */
	r.rx.pos -= 2 * 80;
	r.rx.consumed -= 2 * 80;
	r.rx.seq -= 2;
	rig_land(&r, w.off, w.len, w.clear);
	ASSERT_EQ(1, rmsg_vb_rx_poll(&r.rx, r.blk, &m));
	ASSERT_EQ(a.seq, m.seq);
	ASSERT_EQ(0, rmsg_vb_rx_poll(&r.rx, r.blk, &m));
	ASSERT_EQ(1, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rig_land(&r, w.off, w.len, w.clear);
	ASSERT_EQ(1, rmsg_vb_rx_poll(&r.rx, r.blk, &m));
	ASSERT_EQ(b.seq, m.seq);
	payload_fill(b.seq, r.buf, 64);
	EXPECT_EQ(0, memcmp(r.buf, r.blk + m.off, 64));
	ASSERT_EQ(0, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rig_exit(&r);
}

/* The shadow gets exactly the bytes the peer's block gets. */
TEST(shadow_put_matches_block)
{
	struct rmsg_vb_place pl;
	struct rig r;
	u32 next = 0, i;

	ASSERT_EQ(0, rig_init(&r, S1 + 48, 0, 0));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, rig_send(&r, (i * 37) % 1700, i % 3 ?
				      RMSG_VB_DATA : RMSG_VB_RTS, true, &pl));
		/* Clear zone and padding are zeros, the trailer as filled. */
		ASSERT_EQ(0U, pl.payload % 16);
		for (u32 j = 0; j < pl.payload; j++)
			ASSERT_EQ(0, r.shadow[pl.off + j]);
		for (u32 j = pl.payload + pl.plen; j < pl.trailer; j++)
			ASSERT_EQ(0, r.shadow[pl.off + j]);
		ASSERT_EQ(pl.flag, r.shadow[pl.off + pl.len - 1]);
		ASSERT_EQ(i % 3 ? RMSG_VB_DATA : RMSG_VB_RTS,
			  r.shadow[pl.off + pl.len - 2]);
		if (pl.wrap_skip) {
			ASSERT_EQ(RMSG_VB_WRAP, r.shadow[pl.wrap_off + TRL - 2]);
			ASSERT_EQ(pl.wrap_flag,
				  r.shadow[pl.wrap_off + TRL - 1]);
		}
		rig_drain(_metadata, &r, &next);
	}
	ASSERT_EQ(200U, next);
	ASSERT_LT(5U, r.tx.lap);
	rig_exit(&r);
}

/* ------------------------------------------------------------------ */
/* Bad input to resume */

/* A rig with 5 records written, 2 of them landed and released. */
static void rig_bad(struct __test_metadata *_metadata, struct rig *r)
{
	struct rmsg_vb_place pl;
	u32 next = 100, i;

	ASSERT_EQ(0, rig_init(r, S1, next, 0xfffffff0U));
	rig_fill_to(_metadata, r, 3008, &next);
	rig_drain(_metadata, r, &next);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, rig_send(r, 200 + 16 * i, RMSG_VB_DATA, i < 2,
				      &pl));
	ASSERT_NE(0U, pl.wrap_skip);	/* the last one wrapped */
	rig_drain(_metadata, r, &next);
	ASSERT_EQ(0, rmsg_vb_rx_release(&r->rx, r->rx.freed));
}

static int resume_keeps(struct rig *r, u32 freed, u32 arrived, u32 seq)
{
	struct rmsg_vb_tx before = r->tx;
	struct rmsg_vb_retx rt, rt0;
	int ret;

	memset(&rt, 0x77, sizeof(rt));
	rt0 = rt;
	ret = rmsg_vb_tx_resume(&r->tx, r->shadow, freed, arrived, seq, &rt);
	if (ret && (memcmp(&before, &r->tx, sizeof(before)) ||
		    memcmp(&rt, &rt0, sizeof(rt))))
		return -1000;	/* failed, and changed something */
	r->tx = before;
	return ret;
}

TEST(resume_rejects_bad_counters)
{
	struct rig r;
	u32 fr, arr, seq, wr;

	rig_bad(_metadata, &r);
	fr = r.tx.freed;
	arr = r.rx.consumed;
	seq = r.rx.seq;
	wr = r.tx.written;
	ASSERT_EQ(fr, arr);
	ASSERT_LT(0U, wr - arr);

	EXPECT_EQ(0, resume_keeps(&r, fr, arr, seq));
	/* rx_arrived beyond written, or below freed. */
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, wr + 16, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, wr + S1, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr - 16, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr - 1, seq));
	/* rx_freed backwards, or past written, or past rx_arrived. */
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr - 16, arr, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr - 1, arr - 1, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, wr + 16, wr + 16, r.tx.seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, arr + 16, arr, seq));
	/* rx_seq not the record's at rx_arrived. */
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr, seq + 1));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr, seq - 1));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, wr, r.tx.seq - 1));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, wr, r.tx.seq + 1));
	EXPECT_EQ(0, resume_keeps(&r, fr, wr, r.tx.seq));
	/* rx_arrived inside a record, on no record boundary. */
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr + 16, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr + 1, seq));
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, wr - 16, r.tx.seq - 1));
	/* Credit moves on within the rules. */
	EXPECT_EQ(0, resume_keeps(&r, arr, arr, seq));
	rig_exit(&r);
}

TEST(resume_rejects_corrupt_shadow)
{
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt, rt0;
	struct rig r;
	u32 fr, arr, seq, at;

	rig_bad(_metadata, &r);
	fr = r.tx.freed;
	arr = r.rx.consumed;
	seq = r.rx.seq;
	/* The trailer of the first record to rewrite ends at S - pos. */
	at = S1 - r.rx.pos;

	/* Trailer bytes 12-13 are the length, 14 the type, 15 the flag. */
	struct {
		u32 off;	/* from the trailer's end */
		u32 n;
		u32 val;	/* little-endian */
	} bad[] = {
		{ 1, 1, 0 },		/* flag */
		{ 1, 1, ODD },		/* the other lap's */
		{ 2, 1, 0 },		/* type */
		{ 2, 1, 9 },
		{ 2, 1, RMSG_VB_WRAP },	/* a WRAP of length > 0 */
		{ 4, 2, 2017 },		/* beyond the payload limit */
		{ 4, 2, 1000 },		/* beyond what is left of the lap */
		{ 4, 2, 0 },		/* a record that does not chain */
		{ 8, 1, 0x12 },		/* seq */
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		u8 save[4];

		memcpy(save, &r.shadow[at - bad[i].off], bad[i].n);
		for (u32 j = 0; j < bad[i].n; j++)
			r.shadow[at - bad[i].off + j] = bad[i].val >> 8 * j;
		EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr, seq))
			TH_LOG("case %u", i);
		memcpy(&r.shadow[at - bad[i].off], save, bad[i].n);
	}
	ASSERT_EQ(0, resume_keeps(&r, fr, arr, seq));

	/* Corruption found later (the shadow changed after the resume). */
	ASSERT_EQ(0, rmsg_vb_tx_resume(&r.tx, r.shadow, fr, arr, seq, &rt));
	ASSERT_EQ(1, rmsg_vb_retx_next(&rt, r.shadow, &w));
	at = S1 - rt.pos;
	r.shadow[at - 8] ^= 1;
	rt0 = rt;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));
	EXPECT_EQ(0, memcmp(&rt, &rt0, sizeof(rt)));	/* unchanged */
	r.shadow[at - 8] ^= 1;
	EXPECT_EQ(1, rmsg_vb_retx_next(&rt, r.shadow, &w));
	/* A cursor gone bad is refused, not followed out of the shadow. */
	rt0 = rt;
	rt.pos = S1;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rt.pos = 8;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rt = rt0;
	rt.end = rt.counter + S1 + 16;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));
	rt = rt0;
	rt.end_seq++;
	while (rmsg_vb_retx_next(&rt, r.shadow, &w) > 0)
		;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));

	/* A WRAP (the cursor is at it) must have a record after it... */
	rt = rt0;
	ASSERT_EQ(RMSG_VB_WRAP, r.shadow[S1 - rt.pos - 2]);
	rt.end = rt.counter + S1 - rt.pos;
	rt.end_seq = rt.seq;
	rt0 = rt;
	EXPECT_EQ(-EPROTO, rmsg_vb_retx_next(&rt, r.shadow, &w));
	/* ...and never starts a lap. */
	struct rmsg_vb_trailer t, save;

	memcpy(&save, r.shadow + S1 - TRL, TRL);
	t = save;
	t.type = RMSG_VB_WRAP;
	t.len = 0;
	memcpy(r.shadow + S1 - TRL, &t, TRL);
	EXPECT_EQ(-EPROTO, resume_keeps(&r, fr, arr, seq));
	memcpy(r.shadow + S1 - TRL, &save, TRL);
	EXPECT_EQ(0, resume_keeps(&r, fr, arr, seq));
	rig_exit(&r);
}

/*
 * Random bytes in the shadow: resume and rewrite read only inside it
 * (ASan), and whatever they accept stays inside the block and adds up.
 */
TEST(random_shadow)
{
	u64 rng = test_seed(0x73686477ULL);
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx rt;
	u32 i, j, ok = 0, bad = 0, sum;
	struct rig r;
	int ret;

	rig_bad(_metadata, &r);
	for (i = 0; i < 20000; i++) {
		struct rmsg_vb_tx tx = r.tx;
		u32 arr = tx.freed + 16 * rng_below(&rng, 40);

		/* Flip a few bytes near the records to rewrite. */
		u8 *copy = malloc(S1);

		ASSERT_NE(NULL, copy);
		memcpy(copy, r.shadow, S1);
		for (j = 0; j < 1 + rng_below(&rng, 4); j++)
			copy[rng_below(&rng, S1)] = (u8)rng_next(&rng);
		if (rng_below(&rng, 2))
			copy[S1 - r.rx.pos - 1 - rng_below(&rng, 16)] =
				(u8)rng_next(&rng);
		ret = rmsg_vb_tx_resume(&tx, copy, tx.freed, arr,
					r.rx.seq + rng_below(&rng, 3), &rt);
		if (ret) {
			ASSERT_EQ(-EPROTO, ret);
			bad++;
		} else {
			sum = 0;
			while ((ret = rmsg_vb_retx_next(&rt, copy, &w)) > 0) {
				ASSERT_LE(w.off + w.len, S1);
				ASSERT_LE(w.clear, w.len);
				sum += w.bytes;
			}
			ASSERT_EQ(0, ret);
			ASSERT_EQ(tx.written - arr, sum);
			ok++;
		}
		free(copy);
	}
	TH_LOG("%u accepted, %u rejected", ok, bad);
	EXPECT_LT(100U, ok);
	EXPECT_LT(100U, bad);
	rig_exit(&r);
}

/* ------------------------------------------------------------------ */
/* Back-off and repair matching */

TEST(backoff_bounds)
{
	static const u32 base[] = { 0, 1, 3, 100, 1000, 0x40000000U,
				    0xffffffffU };
	static const u32 cap[] = { 0, 1, 50, 30000, 0x80000000U, 0xffffffffU };
	u64 rng = 0x626f6666ULL;
	unsigned int b, c;
	u32 a, d, prev, lo, hi, got;

	for (b = 0; b < ARRAY_SIZE(base); b++) {
		for (c = 0; c < ARRAY_SIZE(cap); c++) {
			u32 bb = base[b] ? base[b] : 1;
			u32 cc = cap[c] < bb ? bb : cap[c];

			prev = 0;
			for (a = 0; a < 70; a++) {
				/* The model, in 64 bits. */
				u64 m = a < 32 ? (u64)bb << a : ~0ULL;

				d = m < cc ? (u32)m : cc;
				lo = rmsg_backoff_ms(a, base[b], cap[c], 0);
				hi = rmsg_backoff_ms(a, base[b], cap[c],
						     d / 2);
				ASSERT_EQ(d, hi);
				ASSERT_EQ(d - d / 2, lo);
				ASSERT_LE(1U, lo);
				got = rmsg_backoff_ms(a, base[b], cap[c],
						      (u32)rng_next(&rng));
				ASSERT_LE(lo, got);
				ASSERT_LE(got, hi);
				/* Never above the cap, never decreasing. */
				ASSERT_LE(hi, cc);
				ASSERT_LE(prev, hi);
				prev = hi;
			}
			ASSERT_EQ(cc, prev);
		}
	}
	/* Huge attempt numbers and the largest random number. */
	EXPECT_EQ(30000U, rmsg_backoff_ms(0xffffffffU, 100, 30000, 15000));
	EXPECT_EQ(15000U, rmsg_backoff_ms(0xffffffffU, 100, 30000, 15001));
	EXPECT_EQ(0xffffffffU, rmsg_backoff_ms(40, 1, 0xffffffffU,
					       0x7fffffff));
	EXPECT_EQ(0x40000000U, rmsg_backoff_ms(31, 1, 0xffffffffU, 0));
	EXPECT_EQ(100U, rmsg_backoff_ms(0, 100, 30000, 50));
	EXPECT_EQ(200U, rmsg_backoff_ms(1, 100, 30000, 100));
	EXPECT_EQ(25600U, rmsg_backoff_ms(8, 100, 30000, 12800));
	EXPECT_EQ(30000U, rmsg_backoff_ms(9, 100, 30000, 15000));
}

/* The count a 64-bit loop finds, one attempt at a time. */
static u32 attempts_model(u32 base, u32 cap, u32 give_up)
{
	u64 spent = 0, d;
	u32 n = 0;

	for (;;) {
		d = n < 32 ? (u64)base << n : ~0ULL;
		if (d > cap)
			d = cap;
		if (spent + d > give_up)
			return n;
		spent += d;
		n++;
	}
}

TEST(backoff_attempts)
{
	u64 rng = 0x61747470ULL;
	u32 i, b, c, g;

	/* 100 200 400 ... 25600 (51100 ms), then 30000 ms each. */
	EXPECT_EQ(9U + 8U, rmsg_backoff_attempts(100, 30000, 300000));
	EXPECT_EQ(0U, rmsg_backoff_attempts(100, 30000, 99));
	EXPECT_EQ(1U, rmsg_backoff_attempts(100, 30000, 100));
	EXPECT_EQ(1U, rmsg_backoff_attempts(100, 30000, 299));
	EXPECT_EQ(2U, rmsg_backoff_attempts(100, 30000, 300));
	EXPECT_EQ(0xffffffffU, rmsg_backoff_attempts(1, 1, 0xffffffffU));
	EXPECT_EQ(0xffffffffU, rmsg_backoff_attempts(0, 0, 0xffffffffU));
	EXPECT_EQ(32U, rmsg_backoff_attempts(1, 0xffffffffU, 0xffffffffU));
	EXPECT_EQ(1U, rmsg_backoff_attempts(0xffffffffU, 0, 0xffffffffU));
	for (i = 0; i < 3000; i++) {
		b = 1 + rng_below(&rng, 500);
		c = b + rng_below(&rng, 20000);
		g = rng_below(&rng, 200000);
		ASSERT_EQ(attempts_model(b, c, g),
			  rmsg_backoff_attempts(b, c, g))
			TH_LOG("base %u cap %u give up %u", b, c, g);
	}
}

TEST(repair_match)
{
	const u64 inc = 0x1122334455667788ULL;
	struct rmsg_hello h = {
		.kind		= RMSG_HELLO_RECONNECT,
		.incarnation	= inc,
		.channel	= 42,
		.peer_channel	= 7,
		.epoch		= 3,
	};
	struct rmsg_hello x;

	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 2, &h));
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 0, &h));
	/* Attempts may be skipped: a redial that never arrived. */
	h.epoch = 1000;
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 2, &h));
	/* Old attempts, and the current one again. */
	h.epoch = 3;
	EXPECT_EQ(RMSG_REPAIR_STALE, rmsg_repair_match(inc, 42, 3, &h));
	EXPECT_EQ(RMSG_REPAIR_STALE, rmsg_repair_match(inc, 42, 4, &h));
	EXPECT_EQ(RMSG_REPAIR_STALE, rmsg_repair_match(inc, 42, 0x80000002U,
						       &h));
	/* Across 2^32. */
	h.epoch = 1;
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 0xffffffffU,
							&h));
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 0xfffffff0U,
							&h));
	h.epoch = 0xffffffffU;
	EXPECT_EQ(RMSG_REPAIR_STALE, rmsg_repair_match(inc, 42, 2, &h));
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 0xfffffffeU,
							&h));
	h.epoch = 0x80000001U;
	EXPECT_EQ(RMSG_REPAIR_ACCEPT, rmsg_repair_match(inc, 42, 2, &h));
	EXPECT_EQ(RMSG_REPAIR_STALE, rmsg_repair_match(inc, 42, 1, &h));

	/*
	 * Another endpoint, whatever the rest says: a stranger (a restarted
	 * peer has no channel to repair), who may not end the channel.
	 */
	h.epoch = 5;
	EXPECT_EQ(RMSG_REPAIR_INVALID, rmsg_repair_match(inc + 1, 42, 2, &h));
	EXPECT_EQ(RMSG_REPAIR_INVALID, rmsg_repair_match(inc + 1, 43, 9, &h));
	/* Another channel of the same peer, or not a RECONNECT. */
	EXPECT_EQ(RMSG_REPAIR_INVALID, rmsg_repair_match(inc, 41, 2, &h));
	x = h;
	x.kind = RMSG_HELLO_CONNECT;
	EXPECT_EQ(RMSG_REPAIR_INVALID, rmsg_repair_match(inc, 42, 2, &x));
	x.kind = RMSG_HELLO_ACCEPT;
	EXPECT_EQ(RMSG_REPAIR_INVALID, rmsg_repair_match(inc + 1, 42, 2, &x));
}

/* ------------------------------------------------------------------ */
/* Randomized run over a link that fails */

/* One RDMA WRITE on the link; its bytes are read when they land (DMA). */
struct lw {
	u32 off, len, clear, done;
	u32 flag_off;
	u8 flag;
	bool rewrite;
};

struct held {
	u32 seq, off, len, end;
};

struct sim {
	u32 size, maxp, nmsgs, seq0;
	bool imm, bad_clear;
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx, krx;
	u8 *shadow, *blk, *buf;
	u32 *len;
	u8 *type;
	u32 chosen, sent, received;
	/* the link: writes in flight, then (imm) flags not yet set */
	struct lw *link;
	u32 lhead, ltail, lcap;
	struct lw *flags;
	u32 fhead, ftail;
	/* writes placed during a rewrite, posted after it */
	struct lw *later;
	u32 nlater;
	struct rmsg_vb_retx rt;
	bool retx;
	u32 *credits;
	u32 chead, ctail, ccap;
	struct held *held;
	u32 hhead, htail, hcap;
	u64 rng;
	/* what happened */
	u32 faults, rewrites, rewrap, at_lap_start, nothing, whole_partial;
	u32 partial, flags_lost;
	u32 enospc, wraps, fills, rts, maxps, credits_lost;
	u32 max_resend, placed_during;
	char err[256];
};

/* Note why the run failed; returns -1 for the caller to return. */
static int sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void sim_free(struct sim *s)
{
	free(s->shadow);
	free(s->blk);
	free(s->buf);
	free(s->len);
	free(s->type);
	free(s->link);
	free(s->flags);
	free(s->later);
	free(s->credits);
	free(s->held);
}

static int sim_init(struct sim *s, u32 size, u32 nmsgs, bool imm,
		    bool bad_clear, u64 seed)
{
	u32 bytes0;

	memset(s, 0, sizeof(*s));
	s->size = size;
	s->nmsgs = nmsgs;
	s->imm = imm;
	s->bad_clear = bad_clear;
	s->rng = seed;
	s->lcap = size / 16 + 16;
	s->ccap = 1 << 16;
	s->hcap = size / 16 + 16;
	s->shadow = malloc(size);
	s->blk = malloc(size);
	s->buf = malloc(65536);
	s->len = calloc(nmsgs, sizeof(*s->len));
	s->type = calloc(nmsgs, 1);
	s->link = calloc(s->lcap, sizeof(*s->link));
	s->flags = calloc(s->lcap, sizeof(*s->flags));
	s->later = calloc(s->lcap, sizeof(*s->later));
	s->credits = calloc(s->ccap, sizeof(*s->credits));
	s->held = calloc(s->hcap, sizeof(*s->held));
	if (!s->shadow || !s->blk || !s->buf || !s->len || !s->type ||
	    !s->link || !s->flags || !s->later || !s->credits || !s->held)
		return -ENOMEM;
	/* Garbage but for the block's last trailer (R6). */
	for (u32 i = 0; i < size; i++) {
		s->shadow[i] = (u8)rng_next(&s->rng);
		s->blk[i] = (u8)rng_next(&s->rng);
	}
	rmsg_vb_block_init(s->blk, size);
	/* Counters and sequence numbers start close to 2^32. */
	bytes0 = 0xffffffffU - rng_below(&s->rng, 3 * size);
	s->seq0 = 0xffffffffU - rng_below(&s->rng, 1000);
	if (rmsg_vb_tx_init(&s->tx, size, s->seq0, bytes0) ||
	    rmsg_vb_rx_init(&s->rx, size, s->seq0, bytes0))
		return -EINVAL;
	s->krx = s->rx;
	s->maxp = s->tx.max_payload;
	return 0;
}

/* A write, onto the link or, during a rewrite, after it. */
static int sim_post(struct sim *s, u32 off, u32 len, u32 clear, u8 flag,
		    bool rewrite, bool later)
{
	struct lw w = {
		.off = off, .len = len, .clear = clear,
		.flag_off = off + len - 1, .flag = flag, .rewrite = rewrite,
	};

	/* With immediates the flag stays out: the receiving kernel sets it. */
	if (s->imm)
		w.len--;
	if (later) {
		if (s->nlater >= s->lcap)
			return sim_fail(s, "later overflow");
		s->later[s->nlater++] = w;
		return 0;
	}
	if (s->ltail - s->lhead >= s->lcap)
		return sim_fail(s, "link overflow");
	s->link[s->ltail++ % s->lcap] = w;
	return 0;
}

/* Land up to @max bytes of the head write. */
static u32 sim_land_bytes(struct sim *s, struct lw *w, u32 max)
{
	u32 n = w->len - w->done < max ? w->len - w->done : max;
	u32 i = w->done, end = w->done + n, z;

	/*
	 * Zeros for a clear zone, but in the broken variant; the shadow's
	 * bytes after it. Nothing reads the block within one call: a
	 * memset() and a memcpy() land the same bytes as a loop a byte
	 * (which, checked by ASan, was 43% of this program's 15 s).
	 */
	if (i < w->clear && !(w->rewrite && s->bad_clear)) {
		z = w->clear < end ? w->clear : end;
		memset(&s->blk[w->off + i], 0, z - i);
		i = z;
	}
	memcpy(&s->blk[w->off + i], &s->shadow[w->off + i], end - i);
	w->done += n;
	return n;
}

static void sim_set_flag(struct sim *s, const struct lw *w)
{
	/* The receiving kernel, on the write's completion. */
	rmsg_store_release_u8(&s->blk[w->flag_off], w->flag);
}

/* The link works for a while: up to @max bytes land, flags are set. */
static int sim_land(struct sim *s, u32 max)
{
	while (max) {
		if (s->fhead != s->ftail &&
		    (s->lhead == s->ltail || rng_below(&s->rng, 2))) {
			sim_set_flag(s, &s->flags[s->fhead++ % s->lcap]);
			continue;
		}
		if (s->lhead == s->ltail)
			return 0;
		struct lw *w = &s->link[s->lhead % s->lcap];

		max -= sim_land_bytes(s, w, max);
		if (w->done < w->len)
			return 0;
		if (s->imm) {
			if (s->ftail - s->fhead >= s->lcap)
				return sim_fail(s, "flags");
			s->flags[s->ftail++ % s->lcap] = *w;
		}
		s->lhead++;
	}
	return 0;
}

/* Choose message @i's length and type, as it is first tried. */
static void sim_choose(struct sim *s, u32 i)
{
	u32 left = s->size - s->tx.pos, r = rng_below(&s->rng, 20);
	u32 len, x = left - TRL;

	/* Any length that pads to x fills the lap exactly. */
	if (r < 3 && x <= s->maxp)
		len = x - rng_below(&s->rng, x < 16 ? x + 1 : 16);
	else if (r < 5)
		len = s->maxp - rng_below(&s->rng, 2);
	else if (r < 10)
		len = rng_below(&s->rng, s->maxp + 1);
	else
		len = rng_below(&s->rng, 100);
	s->len[i] = len;
	s->type[i] = rng_below(&s->rng, 8) ? RMSG_VB_DATA : RMSG_VB_RTS;
	s->chosen = i + 1;
}

static int sim_send(struct sim *s)
{
	struct rmsg_vb_trailer t, wt;
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_place pl;
	u32 i = s->sent;
	int ret;

	if (s->retx && rng_below(&s->rng, 4)) {
		ret = rmsg_vb_retx_next(&s->rt, s->shadow, &w);
		if (ret < 0)
			return sim_fail(s, "retx_next %d", ret);
		if (ret) {
			if (s->shadow[w.flag_off] != w.flag)
				return sim_fail(s, "rewrite flag");
			s->rewrites++;
			if (w.type == RMSG_VB_WRAP)
				s->rewrap++;
			return sim_post(s, w.off, w.len, w.clear, w.flag, true,
					false);
		}
		/* Done: what was placed meanwhile follows. */
		s->retx = false;
		for (u32 j = 0; j < s->nlater; j++) {
			if (s->ltail - s->lhead >= s->lcap)
				return sim_fail(s, "link");
			s->link[s->ltail++ % s->lcap] = s->later[j];
		}
		s->nlater = 0;
		return 0;
	}
	if (i == s->nmsgs)
		return 0;
	if (s->chosen == i)
		sim_choose(s, i);
	ret = rmsg_vb_tx_place(&s->tx, s->len[i], &pl);
	if (ret == -ENOSPC) {
		s->enospc++;
		return 0;
	}
	if (ret)
		return sim_fail(s, "place %d", ret);
	if (pl.seq != s->seq0 + i)
		return sim_fail(s, "place seq");
	rmsg_vb_trailer_fill(&t, &pl, s->type[i], pl.seq ^ ACK_KEY,
			     (u32)rng_next(&s->rng));
	rmsg_vb_trailer_fill(&wt, &pl, RMSG_VB_WRAP, 0, 0);
	rmsg_vb_shadow_put(s->shadow, &pl, &t, &wt);
	payload_fill(pl.seq, s->shadow + pl.off + pl.payload, pl.plen);
	if (pl.wrap_skip) {
		s->wraps++;
		if (sim_post(s, pl.wrap_off, TRL, 0, pl.wrap_flag, false,
			     s->retx))
			return -1;
	}
	if (sim_post(s, pl.off, pl.len, pl.payload, pl.flag, false, s->retx))
		return -1;
	rmsg_vb_tx_commit(&s->tx, &pl);
	if (!pl.payload)
		s->fills++;
	if (pl.plen == s->maxp)
		s->maxps++;
	if (s->type[i] == RMSG_VB_RTS)
		s->rts++;
	if (s->retx)
		s->placed_during++;
	s->sent++;
	return 0;
}

static int sim_check_msg(struct sim *s, u32 seq, u32 off, u32 len)
{
	payload_fill(seq, s->buf, len);
	if (memcmp(s->buf, s->blk + off, len))
		return sim_fail(s, "message %u: wrong bytes", seq - s->seq0);
	return 0;
}

/* The program polls its receive block. */
static int sim_poll(struct sim *s)
{
	struct rmsg_vb_msg m;
	u32 i;
	int ret;

	while ((ret = rmsg_vb_rx_poll(&s->rx, s->blk, &m)) > 0) {
		i = s->received;
		if (i >= s->sent || m.seq != s->seq0 + i)
			return sim_fail(s, "message %u out of order",
					m.seq - s->seq0);
		if (m.type != s->type[i] || m.len != s->len[i] ||
		    m.ack != (m.seq ^ ACK_KEY))
			return sim_fail(s, "message %u: wrong trailer", i);
		if (sim_check_msg(s, m.seq, m.off, m.len))
			return -1;
		if (s->htail - s->hhead >= s->hcap)
			return sim_fail(s, "held");
		s->held[s->htail++ % s->hcap] = (struct held){
			m.seq, m.off, m.len, m.end };
		s->received++;
	}
	if (ret)
		return sim_fail(s, "rx_poll %d after message %u", ret,
				s->received);
	return 0;
}

/* It releases some; what it held must not have changed meanwhile. */
static int sim_release(struct sim *s, u32 n)
{
	struct held *h = NULL;

	for (; n && s->hhead != s->htail; n--) {
		h = &s->held[s->hhead++ % s->hcap];
		if (sim_check_msg(s, h->seq, h->off, h->len))
			return -1;
	}
	if (h && rmsg_vb_rx_release(&s->rx, h->end))
		return sim_fail(s, "release");
	return 0;
}

/* The kernel walks the block before any release goes to the peer. */
static int sim_walk(struct sim *s)
{
	struct rmsg_vb_msg m;
	int ret;

	s->krx.advertised = s->rx.advertised;
	while ((ret = rmsg_vb_rx_poll(&s->krx, s->blk, &m)) > 0)
		;
	if (ret)
		return sim_fail(s, "kernel walk %d", ret);
	if (s->krx.consumed - s->rx.freed > s->size ||
	    s->rx.consumed - s->rx.freed > s->krx.consumed - s->rx.freed)
		return sim_fail(s, "walk behind");
	return 0;
}

static int sim_advertise(struct sim *s)
{
	if (sim_walk(s))
		return -1;
	if (s->ctail - s->chead >= s->ccap)
		return sim_fail(s, "credits");
	s->credits[s->ctail++ % s->ccap] = rmsg_vb_rx_advertise(&s->rx);
	return 0;
}

static int sim_deliver(struct sim *s, u32 n)
{
	for (; n && s->chead != s->ctail; n--)
		if (rmsg_vb_tx_credit(&s->tx,
				      s->credits[s->chead++ % s->ccap]))
			return sim_fail(s, "credit");
	return 0;
}

/*
 * The link fails: the write under way lands in part (or whole, or not at
 * all), nothing after it does; with immediates some completed writes'
 * flags are never set. Credit updates in flight arrive or are lost. Then
 * the repair: the receiver says where its block stands, the sender
 * resumes.
 */
static int sim_fault(struct sim *s)
{
	u32 cut, n, rx_freed, rx_arrived, rx_seq;
	int ret;

	if (s->lhead != s->ltail) {
		struct lw *w = &s->link[s->lhead % s->lcap];

		cut = rng_below(&s->rng, w->len - w->done + 1);
		sim_land_bytes(s, w, cut);
		if (w->done && w->done < w->len)
			s->partial++;
		if (w->done == w->len) {
			s->whole_partial++;
			if (s->imm)
				s->flags[s->ftail++ % s->lcap] = *w;
		}
	}
	s->lhead = s->ltail = 0;
	s->nlater = 0;
	n = rng_below(&s->rng, s->ftail - s->fhead + 1);
	while (n--)
		sim_set_flag(s, &s->flags[s->fhead++ % s->lcap]);
	s->flags_lost += s->ftail - s->fhead;
	s->fhead = s->ftail = 0;
	n = s->ctail - s->chead;
	if (sim_deliver(s, rng_below(&s->rng, n + 1)))
		return -1;
	s->credits_lost += s->ctail - s->chead;
	s->chead = s->ctail = 0;

	/* The receiving side: its walk, and the hello. */
	if (sim_walk(s))
		return -1;
	rx_freed = rmsg_vb_rx_advertise(&s->rx);
	rx_arrived = s->krx.consumed;
	rx_seq = s->krx.seq;

	/* The sending side. */
	ret = rmsg_vb_tx_resume(&s->tx, s->shadow, rx_freed, rx_arrived,
				rx_seq, &s->rt);
	if (ret)
		return sim_fail(s, "resume %d at fault %u", ret, s->faults);
	if (s->tx.freed != rx_freed)
		return sim_fail(s, "credit not applied");
	s->retx = true;
	s->faults++;
	if (rx_arrived == s->tx.written)
		s->nothing++;
	else if (!s->rt.pos)
		s->at_lap_start++;
	if (s->tx.written - rx_arrived > s->max_resend)
		s->max_resend = s->tx.written - rx_arrived;
	return 0;
}

/*
 * Run until every message arrived, with a fault every @fault_every steps
 * on average. Returns 0, or -1 with s->err.
 */
static int sim_run(struct sim *s, u32 fault_every)
{
	u64 step;
	u32 held;

	for (step = 0; s->received < s->nmsgs; step++) {
		if (step >= 400ULL * s->nmsgs + 1000000)
			return sim_fail(s, "stuck at message %u", s->received);
		held = s->htail - s->hhead;
		switch (rng_below(&s->rng, 12)) {
		case 0:
		case 1:
		case 2:
			if (sim_send(s))
				return -1;
			break;
		case 3:
		case 4:
			if (sim_land(s, 1 + rng_below(&s->rng,
					rng_below(&s->rng, 2) ? 64 : 2048)))
				return -1;
			break;
		case 5:
		case 6:
			if (sim_poll(s))
				return -1;
			break;
		case 7:
			if (sim_release(s, rng_below(&s->rng, held + 1)))
				return -1;
			if (rmsg_vb_rx_credit_due(&s->rx) && sim_advertise(s))
				return -1;
			break;
		case 8:
			if (rng_below(&s->rng, 3) == 0 && sim_advertise(s))
				return -1;
			break;
		case 9:
			if (sim_deliver(s, 1 + rng_below(&s->rng, 3)))
				return -1;
			break;
		case 10:
			if (!rng_below(&s->rng, fault_every / 12 + 1) &&
			    sim_fault(s))
				return -1;
			break;
		default:
			/* A reader that keeps up releases everything. */
			if (held > s->size / 256 &&
			    sim_release(s, held))
				return -1;
			break;
		}
		if (s->tx.written - s->tx.freed > s->size)
			return sim_fail(s, "over credit");
	}
	if (s->sent != s->nmsgs || s->retx)
		return sim_fail(s, "not all sent");
	if (sim_land(s, ~0U) || sim_poll(s))
		return -1;
	if (s->tx.written != s->rx.consumed)
		return sim_fail(s, "bytes left over");
	return 0;
}

FIXTURE(link) {
	struct sim s;
};

FIXTURE_VARIANT(link) {
	u32 size;
	u32 msgs;
	bool imm;
};

FIXTURE_VARIANT_ADD(link, b4096) { .size = 4096, .msgs = 100000 };
FIXTURE_VARIANT_ADD(link, b4144) { .size = 4096 + 48, .msgs = 100000 };
FIXTURE_VARIANT_ADD(link, b12336) { .size = 12336, .msgs = 60000 };
FIXTURE_VARIANT_ADD(link, b262160) { .size = 262160, .msgs = 15000 };
FIXTURE_VARIANT_ADD(link, imm_b4096) {
	.size = 4096, .msgs = 100000, .imm = true
};
FIXTURE_VARIANT_ADD(link, imm_b4144) {
	.size = 4096 + 48, .msgs = 100000, .imm = true
};
FIXTURE_VARIANT_ADD(link, imm_b65552) {
	.size = 65552, .msgs = 20000, .imm = true
};

FIXTURE_SETUP(link)
{
	u64 seed = test_seed(0x7265736cULL) ^ variant->size ^ variant->imm;

	TH_LOG("seed %#llx (RMSG_TEST_SEED=%#llx)", (unsigned long long)seed,
	       (unsigned long long)test_seed(0x7265736cULL));
	ASSERT_EQ(0, sim_init(&self->s, variant->size, variant->msgs,
			      variant->imm, false, seed));
}

FIXTURE_TEARDOWN(link)
{
	sim_free(&self->s);
}

TEST_F_TIMEOUT(link, faults, 300)
{
	struct sim *s = &self->s;
	int ret = sim_run(s, 1500);

	TH_LOG("%u msgs, %u laps, %u faults, %u rewrites (%u WRAP), %u at a lap start, %u with nothing to resend, %u writes whole at the fault, max %u bytes resent, %u placed during a rewrite",
	       s->received, s->tx.lap, s->faults, s->rewrites, s->rewrap,
	       s->at_lap_start, s->nothing, s->whole_partial, s->max_resend,
	       s->placed_during);
	TH_LOG("%u writes cut at the fault, %u flags lost; %u wraps, %u exact fills, %u max payloads, %u RTS, %u ENOSPC, %u credits lost",
	       s->partial, s->flags_lost, s->wraps, s->fills, s->maxps,
	       s->rts, s->enospc, s->credits_lost);
	ASSERT_EQ(0, ret) TH_LOG("%s", s->err);
	ASSERT_EQ(variant->msgs, s->received);
	/* The run must have exercised what it claims to. */
	ASSERT_LT(100U, s->faults);
	ASSERT_LT(0U, s->rewrap);
	ASSERT_LT(0U, s->at_lap_start);
	ASSERT_LT(100U, s->partial);
	if (s->imm)
		ASSERT_LT(0U, s->flags_lost);
	ASSERT_LT(0U, s->wraps);
	ASSERT_LT(0U, s->fills);
	ASSERT_LT(0U, s->maxps);
	ASSERT_LT(0U, s->placed_during);
	ASSERT_LT(0U, s->credits_lost);
	ASSERT_LT(s->size / 2, s->max_resend);
	ASSERT_TRUE(s->tx.written < 0x80000000U);	/* crossed 2^32 */
	ASSERT_TRUE(s->tx.seq < 0x80000000U);
}

/*
 * The same run with rewrites that copy the clear zone from the shadow
 * must fail: the run above would catch that mistake.
 */
TEST_F_TIMEOUT(link, clear_zone_trap_caught, 300)
{
	struct sim *s = &self->s;
	int ret;

	s->bad_clear = true;
	ret = sim_run(s, 1500);
	TH_LOG("after %u faults, %u msgs: %s", s->faults, s->received,
	       ret ? s->err : "not caught");
	ASSERT_EQ(-1, ret);
}

TEST_HARNESS_MAIN
