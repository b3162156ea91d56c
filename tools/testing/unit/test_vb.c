// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for the Veloblock receive-block core (rmsg_vb.c):
 * placement, WRAP, clear zones, lap parity, byte credits, the receiver's
 * validation of an untrusted block, and a randomized sender/receiver run
 * checked against a reference model.
 */
#include <stdlib.h>

/*
 * The harness's TEST() wrappers and timeout handler take parameters they do
 * not use; -Wextra would stop the build on its code, not ours.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_vb.h"
#include "unit_rng.h"

#define BLK	4096U
#define EVEN	RMSG_VB_FLAG_EVEN
#define ODD	RMSG_VB_FLAG_ODD
#define TRL	((u32)RMSG_VB_TRAILER_SIZE)
#define CLR	((u32)RMSG_VB_CLEAR)

static void rng_fill(u64 *s, void *buf, size_t len)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)rng_next(s);
}

static u32 pad16(u32 len)
{
	return (len + 15) & ~15U;
}

/* Place and commit one record, with every byte credited back at once. */
static void place_free(struct __test_metadata *_metadata,
		       struct rmsg_vb_tx *tx, u32 len, struct rmsg_vb_place *pl)
{
	ASSERT_EQ(0, rmsg_vb_tx_credit(tx, tx->written));
	ASSERT_EQ(0, rmsg_vb_tx_place(tx, len, pl));
	rmsg_vb_tx_commit(tx, pl);
	ASSERT_EQ(0, rmsg_vb_tx_credit(tx, tx->written));
}

/* ------------------------------------------------------------------ */
/* Geometry */

TEST(geometry_rejects_bad_sizes)
{
	static const u32 bad[] = {
		0, 16, 4080, 4095, 4097, 4104, 4100, RMSG_VB_MAX_BLOCK + 16,
		RMSG_VB_MAX_BLOCK - 8, 0xfffffff0U,
	};
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, rmsg_vb_check_block(bad[i]));
		EXPECT_EQ(-EINVAL, rmsg_vb_max_payload(bad[i]));
		EXPECT_EQ(-EINVAL, rmsg_vb_tx_init(&tx, bad[i], 0, 0));
		EXPECT_EQ(-EINVAL, rmsg_vb_rx_init(&rx, bad[i], 0, 0));
	}
	EXPECT_EQ(0, rmsg_vb_check_block(RMSG_VB_MIN_BLOCK));
	EXPECT_EQ(0, rmsg_vb_check_block(4112));
	EXPECT_EQ(0, rmsg_vb_check_block(RMSG_VB_MAX_BLOCK));
}

TEST(max_payload)
{
	/* A record and its clear zone take at most half the block. */
	EXPECT_EQ(2048 - 16 - 16, rmsg_vb_max_payload(4096));
	EXPECT_EQ(2016, rmsg_vb_max_payload(4112));	/* 2056 - 32, down */
	EXPECT_EQ(2032, rmsg_vb_max_payload(4128));
	EXPECT_EQ(32768 - 32, rmsg_vb_max_payload(65536));
	EXPECT_EQ(65535, rmsg_vb_max_payload(1U << 20));
	EXPECT_EQ(65535, rmsg_vb_max_payload(RMSG_VB_MAX_BLOCK));
	/* Where the half-block bound meets RMSG_VB_MAX_PAYLOAD. */
	EXPECT_EQ(65520, rmsg_vb_max_payload(2 * (65520 + 32)));
	EXPECT_EQ(65535, rmsg_vb_max_payload(2 * (65536 + 32)));
	EXPECT_LE(rmsg_vb_record_size(65535) + CLR, 2U * (65536 + 32) / 2);
}

TEST(record_size)
{
	EXPECT_EQ(16U, rmsg_vb_record_size(0));
	EXPECT_EQ(32U, rmsg_vb_record_size(1));
	EXPECT_EQ(32U, rmsg_vb_record_size(16));
	EXPECT_EQ(48U, rmsg_vb_record_size(17));
	EXPECT_EQ(65536U + 16, rmsg_vb_record_size(65535));
}

/* ------------------------------------------------------------------ */
/* Placement */

TEST(first_record_layout)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 100, 0));
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 5, &pl));
	/* clear (16) + payload 5 padded to 16 + trailer (16), at the end. */
	EXPECT_EQ(BLK - 48, pl.off);
	EXPECT_EQ(48U, pl.len);
	EXPECT_EQ(16U, pl.payload);
	EXPECT_EQ(32U, pl.trailer);
	EXPECT_EQ(5U, pl.plen);
	EXPECT_EQ(100U, pl.seq);
	EXPECT_EQ(EVEN, pl.flag);
	EXPECT_EQ(0U, pl.wrap_skip);
	rmsg_vb_tx_commit(&tx, &pl);
	EXPECT_EQ(32U, tx.pos);
	EXPECT_EQ(32U, tx.written);
	EXPECT_EQ(101U, tx.seq);
}

TEST(clear_zone_covers_next_trailer)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place a, b;
	u32 lens[] = { 0, 1, 15, 16, 17, 100, 1000, 2016 };
	unsigned int i;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, 65536, 0, 0));
	place_free(_metadata, &tx, 3, &a);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		ASSERT_EQ(0, rmsg_vb_tx_place(&tx, lens[i], &b));
		/* b's trailer ends where a's clear zone ends... */
		EXPECT_EQ(a.off + CLR, b.off + b.trailer + TRL);
		/* ...and b's own clear zone lies right below b's record. */
		EXPECT_EQ(CLR, b.payload);
		EXPECT_EQ(b.trailer, CLR + pad16(lens[i]));
		EXPECT_EQ(b.len, b.trailer + TRL);
		rmsg_vb_tx_commit(&tx, &b);
		ASSERT_EQ(0, rmsg_vb_tx_credit(&tx, tx.written));
		a = b;
	}
}

TEST(exact_fill_ends_lap_without_clear_zone)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0, 0));
	/* Three records of 1024 bytes leave exactly 1024. */
	place_free(_metadata, &tx, 1008, &pl);
	place_free(_metadata, &tx, 1008, &pl);
	place_free(_metadata, &tx, 1008, &pl);
	ASSERT_EQ(3072U, tx.pos);
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 1008, &pl));
	EXPECT_EQ(0U, pl.off);
	EXPECT_EQ(0U, pl.payload);
	EXPECT_EQ(1024U, pl.len);
	EXPECT_EQ(1008U, pl.trailer);
	EXPECT_EQ(0U, pl.wrap_skip);
	EXPECT_EQ(EVEN, pl.flag);
	rmsg_vb_tx_commit(&tx, &pl);
	EXPECT_EQ(0U, tx.pos);
	EXPECT_EQ(1U, tx.lap);
	EXPECT_EQ(BLK, tx.written);
	/* The next record starts lap 1 at the block end. */
	ASSERT_EQ(0, rmsg_vb_tx_credit(&tx, tx.written));
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 0, &pl));
	EXPECT_EQ(BLK - 32, pl.off);
	EXPECT_EQ(ODD, pl.flag);
	EXPECT_EQ(0U, pl.wrap_skip);
}

TEST(smallest_record_fills_last_16_bytes)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0, 0));
	tx.pos = BLK - 16;
	/* A 16-byte record (no payload) ends the lap exactly. */
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 0, &pl));
	EXPECT_EQ(0U, pl.off);
	EXPECT_EQ(16U, pl.len);
	EXPECT_EQ(0U, pl.payload);
	EXPECT_EQ(0U, pl.wrap_skip);
	/* Anything larger needs a WRAP there. */
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 1, &pl));
	EXPECT_EQ(16U, pl.wrap_skip);
	EXPECT_EQ(0U, pl.wrap_off);
}

TEST(wrap_when_record_does_not_fit)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;
	u32 seq;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 7, 0));
	/* Leave 48 bytes in lap 0. */
	while (tx.pos < BLK - 48 - 2048)
		place_free(_metadata, &tx, 2016, &pl);
	place_free(_metadata, &tx, BLK - 48 - tx.pos - 16, &pl);
	ASSERT_EQ(BLK - 48, tx.pos);
	ASSERT_EQ(0U, tx.lap);

	/* A 48-byte record fills exactly; a 32-byte one leaves its clear zone. */
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 32, &pl));
	EXPECT_EQ(0U, pl.wrap_skip);
	EXPECT_EQ(0U, pl.off);
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 16, &pl));
	EXPECT_EQ(0U, pl.wrap_skip);
	EXPECT_EQ(0U, pl.off);
	EXPECT_EQ(48U, pl.len);

	/* 64 bytes do not fit: a WRAP takes the last 48 bytes of lap 0. */
	seq = tx.seq;
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 48, &pl));
	EXPECT_EQ(48U, pl.wrap_skip);
	EXPECT_EQ(32U, pl.wrap_off);
	EXPECT_EQ(EVEN, pl.wrap_flag);
	EXPECT_EQ(ODD, pl.flag);
	EXPECT_EQ(BLK - 64 - CLR, pl.off);
	EXPECT_EQ(64U + CLR, pl.len);
	EXPECT_EQ(seq, pl.seq);
	rmsg_vb_tx_commit(&tx, &pl);
	EXPECT_EQ(64U, tx.pos);
	EXPECT_EQ(1U, tx.lap);
	EXPECT_EQ(BLK + 64, tx.written);
	EXPECT_EQ(seq + 1, tx.seq);
}

TEST(flag_parity_per_lap)
{
	static const u32 lens[] = { 1000, 0, 1000, 500, 0, 0, 1200 };
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;
	u32 lap = 0, i = 0, wraps = 0, fills = 0;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, 4112, 0, 0xfffff000U));
	while (lap < 8) {
		u32 left = tx.size - tx.pos, len = lens[i++ % 7];

		/* Odd laps end by an exact fill, even ones mostly by a WRAP. */
		if (lap & 1 && left <= tx.max_payload + TRL)
			len = left - TRL;
		ASSERT_EQ(0, rmsg_vb_tx_place(&tx, len, &pl));
		if (pl.wrap_skip) {
			/* The WRAP ends the old lap, with its parity. */
			EXPECT_EQ(lap & 1 ? ODD : EVEN, pl.wrap_flag);
			lap++;
			wraps++;
		}
		EXPECT_EQ(lap & 1 ? ODD : EVEN, pl.flag);
		rmsg_vb_tx_commit(&tx, &pl);
		ASSERT_EQ(0, rmsg_vb_tx_credit(&tx, tx.written));
		if (!pl.off && !pl.payload) {
			lap++;
			fills++;
		}
		ASSERT_EQ(lap, tx.lap);
	}
	EXPECT_LT(0U, wraps);
	EXPECT_LT(0U, fills);
}

TEST(largest_record_fits_from_every_position)
{
	static const u32 sizes[] = { 4096, 4112, 4208, 12336, 65536 };
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;
	unsigned int i;
	u32 pos;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ASSERT_EQ(0, rmsg_vb_tx_init(&tx, sizes[i], 0, 0));
		for (pos = 0; pos < sizes[i]; pos += 16) {
			tx.pos = pos;
			tx.written = pos;
			tx.freed = pos;
			/* All credit back: the largest record must go. */
			ASSERT_EQ(0, rmsg_vb_tx_place(&tx, tx.max_payload,
						      &pl));
			ASSERT_LE(pl.wrap_skip + pl.len - pl.payload + CLR,
				  sizes[i]);
		}
	}
}

TEST(emsgsize)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0, 0));
	EXPECT_EQ(-EMSGSIZE, rmsg_vb_tx_place(&tx, 2017, &pl));
	EXPECT_EQ(-EMSGSIZE, rmsg_vb_tx_place(&tx, 0xffffffffU, &pl));
	EXPECT_EQ(0, rmsg_vb_tx_place(&tx, 2016, &pl));
	/* Even without credit, a message that can never fit says so. */
	tx.written = BLK;
	EXPECT_EQ(-EMSGSIZE, rmsg_vb_tx_place(&tx, 2017, &pl));
	EXPECT_EQ(-ENOSPC, rmsg_vb_tx_place(&tx, 2016, &pl));

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, 1U << 20, 0, 0));
	EXPECT_EQ(-EMSGSIZE, rmsg_vb_tx_place(&tx, 65536, &pl));
	EXPECT_EQ(0, rmsg_vb_tx_place(&tx, 65535, &pl));
	EXPECT_EQ(65536U + TRL + CLR, pl.len);
}

/*
 * Leave the sender one byte short of a placement's need: -ENOSPC and no
 * change; then exactly the need: success. Sets the sender's freed counter
 * directly, as only rmsg_vb_tx_place()'s arithmetic is under test.
 */
static void credit_boundary(struct __test_metadata *_metadata,
			    struct rmsg_vb_tx *tx, u32 len, u32 need)
{
	struct rmsg_vb_tx before;
	struct rmsg_vb_place pl;

	/* Room is size - (written - freed). */
	tx->freed = tx->written - tx->size + need - 1;
	before = *tx;
	ASSERT_EQ(-ENOSPC, rmsg_vb_tx_place(tx, len, &pl));
	ASSERT_EQ(0, memcmp(&before, tx, sizeof(before)));
	tx->freed++;
	ASSERT_EQ(0, rmsg_vb_tx_place(tx, len, &pl));
	rmsg_vb_tx_commit(tx, &pl);
}

TEST(enospc_exactly_at_credit_boundary)
{
	const u32 base = 0xfffffc00U;	/* counters cross 2^32 on the way */
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0, base));
	/* A record needs itself plus its clear zone: 1024 + 16. */
	credit_boundary(_metadata, &tx, 1008, 1040);
	place_free(_metadata, &tx, 1008, &pl);
	place_free(_metadata, &tx, 1008, &pl);
	ASSERT_EQ(3072U, tx.pos);

	/* Exact fill of the last 1024 bytes: no clear zone to pay. */
	credit_boundary(_metadata, &tx, 1008, 1024);
	EXPECT_EQ(1U, tx.lap);
	EXPECT_EQ(0U, tx.pos);
	EXPECT_EQ(base + BLK, tx.written);

	credit_boundary(_metadata, &tx, 1008, 1040);
	credit_boundary(_metadata, &tx, 1008, 1040);
	credit_boundary(_metadata, &tx, 1968, 2000);
	ASSERT_EQ(BLK - 64, tx.pos);
	/* 64 left: a 96-byte record wraps; skip 64 + 96 + clear 16. */
	credit_boundary(_metadata, &tx, 80, 64 + 96 + 16);
	EXPECT_EQ(2U, tx.lap);
	EXPECT_EQ(96U, tx.pos);
	EXPECT_EQ(base + 2 * BLK + 96, tx.written);
	EXPECT_GT(base, tx.written);	/* wrapped past 2^32 */
}

TEST(credit_validation)
{
	struct rmsg_vb_tx tx, before;
	struct rmsg_vb_place pl;
	u32 base = 0xffffff00U, w;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0, base));
	/* Nothing written: only the same value is acceptable. */
	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, base));
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, base + 1));
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, base - 1));

	/* Write 512 bytes: written crosses 2^32. */
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 496, &pl));
	rmsg_vb_tx_commit(&tx, &pl);
	w = tx.written;
	ASSERT_EQ(0x100U, w);
	before = tx;
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, w + 1));
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, base - 1));
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, base + 0x80000000U));
	EXPECT_EQ(0, memcmp(&before, &tx, sizeof(tx)));

	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, 0xfffffff0U));
	EXPECT_EQ(0xfffffff0U, tx.freed);
	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, 0xfffffff0U));	/* late dup */
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, 0xffffffefU));
	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, 0x10));		/* across 0 */
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, 0xfffffff0U));
	EXPECT_EQ(-EPROTO, rmsg_vb_tx_credit(&tx, w + 16));
	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, w));
	EXPECT_EQ(w, tx.freed);
}

TEST(trailer_fill)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_place pl;
	struct rmsg_vb_trailer t;
	const u8 *b = (const u8 *)&t;

	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0x01020304U, 0));
	tx.pos = BLK - 32;
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, 0x123, &pl));
	ASSERT_NE(0U, pl.wrap_skip);
	rmsg_vb_trailer_fill(&t, &pl, RMSG_VB_DATA, 0xa1a2a3a4U, 0xb1b2b3b4U);
	/* Little-endian on the wire, flag last. */
	EXPECT_EQ(0xa4, b[0]);
	EXPECT_EQ(0xa1, b[3]);
	EXPECT_EQ(0xb4, b[4]);
	EXPECT_EQ(0x04, b[8]);
	EXPECT_EQ(0x01, b[11]);
	EXPECT_EQ(0x23, b[12]);
	EXPECT_EQ(0x01, b[13]);
	EXPECT_EQ(RMSG_VB_DATA, b[14]);
	EXPECT_EQ(ODD, b[15]);
	rmsg_vb_trailer_fill(&t, &pl, RMSG_VB_WRAP, 1, 2);
	EXPECT_EQ(0, b[12]);
	EXPECT_EQ(0, b[13]);
	EXPECT_EQ(0x04, b[8]);
	EXPECT_EQ(RMSG_VB_WRAP, b[14]);
	EXPECT_EQ(EVEN, b[15]);
}

/* ------------------------------------------------------------------ */
/* Receiver */

/*
 * Build the bytes of a placement's write(s): the WRAP trailer into *wrap
 * (when there is one) and clear + payload + garbage padding + trailer into
 * buf (pl->len bytes).
 */
static void build_write(u64 *rng, const struct rmsg_vb_place *pl,
			const u8 *payload, u32 ack, u32 freed, u8 *buf,
			struct rmsg_vb_trailer *wrap)
{
	struct rmsg_vb_trailer t;

	memset(buf, 0, pl->payload);
	memcpy(buf + pl->payload, payload, pl->plen);
	rng_fill(rng, buf + pl->payload + pl->plen,
		 pl->trailer - pl->payload - pl->plen);
	rmsg_vb_trailer_fill(&t, pl, RMSG_VB_DATA, ack, freed);
	memcpy(buf + pl->trailer, &t, sizeof(t));
	if (pl->wrap_skip)
		rmsg_vb_trailer_fill(wrap, pl, RMSG_VB_WRAP, ack, freed);
}

TEST(first_lap_needs_zero_last_trailer)
{
	struct rmsg_vb_rx rx;
	struct rmsg_vb_msg msg;
	u64 rng = 1;
	u8 *blk = malloc(BLK);

	ASSERT_NE(NULL, blk);
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, BLK, 0, 0));
	rng_fill(&rng, blk, BLK);
	blk[BLK - 1] = 0x33;
	EXPECT_EQ(-EPROTO, rmsg_vb_rx_poll(&rx, blk, &msg));
	/* Garbage elsewhere does not matter once the last trailer is 0. */
	rmsg_vb_block_init(blk, BLK);
	EXPECT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
	/* Lap 1's flag in lap 0's first place also reads as "not yet". */
	blk[BLK - 1] = ODD;
	EXPECT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
	free(blk);
}

TEST(poll_one_record)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	struct rmsg_vb_place pl;
	struct rmsg_vb_trailer w;
	struct rmsg_vb_msg msg;
	u64 rng = 2;
	u8 *blk = calloc(1, BLK), buf[64], data[20];

	ASSERT_NE(NULL, blk);
	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, BLK, 0xfffffffeU, 5));
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, BLK, 0xfffffffeU, 5));
	rng_fill(&rng, data, sizeof(data));
	ASSERT_EQ(0, rmsg_vb_tx_place(&tx, sizeof(data), &pl));
	build_write(&rng, &pl, data, 77, 88, buf, &w);
	memcpy(blk + pl.off, buf, pl.len);
	rmsg_vb_tx_commit(&tx, &pl);

	ASSERT_EQ(1, rmsg_vb_rx_poll(&rx, blk, &msg));
	EXPECT_EQ(pl.off + pl.payload, msg.off);
	EXPECT_EQ(sizeof(data), msg.len);
	EXPECT_EQ(0xfffffffeU, msg.seq);
	EXPECT_EQ(77U, msg.ack);
	EXPECT_EQ(88U, msg.freed);
	EXPECT_EQ(5U + 48, msg.end);
	EXPECT_EQ(0, memcmp(blk + msg.off, data, sizeof(data)));
	EXPECT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
	EXPECT_EQ(0xffffffffU, rx.seq);

	/* Release: not past what was polled, not backwards. */
	EXPECT_EQ(-EINVAL, rmsg_vb_rx_release(&rx, 5U + 48 + 16));
	EXPECT_EQ(-EINVAL, rmsg_vb_rx_release(&rx, 4));
	EXPECT_EQ(0, rmsg_vb_rx_release(&rx, 5U + 48));
	EXPECT_EQ(0, rmsg_vb_rx_release(&rx, 5U + 48));
	EXPECT_EQ(5U + 48, rmsg_vb_rx_advertise(&rx));
	EXPECT_EQ(0, rmsg_vb_tx_credit(&tx, 5U + 48));
	free(blk);
}

/*
 * Drive a sender and a receiver over several laps, landing each write one
 * byte at a time in ascending order (as an in-order RDMA device may), and
 * poll after every byte: nothing may show until the DATA flag lands.
 */
static void torn_run(struct __test_metadata *_metadata, u32 size, u32 chunk,
		     u64 seed)
{
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	struct rmsg_vb_place pl;
	struct rmsg_vb_trailer w;
	struct rmsg_vb_msg msg;
	u8 *blk = malloc(size), *buf, *data;
	u32 n, i, maxp, laps_wrapped = 0;

	ASSERT_NE(NULL, blk);
	rng_fill(&seed, blk, size);
	rmsg_vb_block_init(blk, size);
	ASSERT_EQ(0, rmsg_vb_tx_init(&tx, size, 9, 0xffffe000U));
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, size, 9, 0xffffe000U));
	maxp = tx.max_payload;
	buf = malloc(maxp + 64);
	data = malloc(maxp + 1);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, data);

	for (n = 0; tx.lap < 5; n++) {
		u32 len = rng_below(&seed, 4) ? rng_below(&seed, 200) :
						rng_below(&seed, maxp + 1);

		rng_fill(&seed, data, len);
		ASSERT_EQ(0, rmsg_vb_tx_place(&tx, len, &pl));
		build_write(&seed, &pl, data, n, ~n, buf, &w);
		rmsg_vb_tx_commit(&tx, &pl);
		if (pl.wrap_skip) {
			const u8 *wb = (const u8 *)&w;

			for (i = 0; i < TRL; i += chunk) {
				u32 k = TRL - i < chunk ? TRL - i : chunk;

				ASSERT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
				memcpy(blk + pl.wrap_off + i, wb + i, k);
			}
			/* The WRAP is consumed; the record is not there. */
			ASSERT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
			ASSERT_EQ(tx.lap, rx.lap);
			laps_wrapped++;
		}
		for (i = 0; i < pl.len; i += chunk) {
			u32 k = pl.len - i < chunk ? pl.len - i : chunk;

			ASSERT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
			memcpy(blk + pl.off + i, buf + i, k);
		}
		ASSERT_EQ(1, rmsg_vb_rx_poll(&rx, blk, &msg));
		ASSERT_EQ(len, msg.len);
		ASSERT_EQ(pl.seq, msg.seq);
		ASSERT_EQ(n, msg.ack);
		ASSERT_EQ(pl.off + pl.payload, msg.off);
		ASSERT_EQ(0, memcmp(blk + msg.off, data, len));
		ASSERT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
		ASSERT_EQ(0, rmsg_vb_rx_release(&rx, msg.end));
		ASSERT_EQ(0, rmsg_vb_tx_credit(&tx, rmsg_vb_rx_advertise(&rx)));
	}
	ASSERT_EQ(tx.written, rx.consumed);
	ASSERT_LT(0U, laps_wrapped);
	free(data);
	free(buf);
	free(blk);
}

TEST(torn_write_bytewise)
{
	torn_run(_metadata, BLK, 1, 0x746f726eULL);
}

TEST(torn_write_chunks)
{
	torn_run(_metadata, 4208, 7, 0x746f726fULL);
	torn_run(_metadata, 12336, 24, 0x746f7270ULL);
}

/* ------------------------------------------------------------------ */
/* Adversarial blocks */

struct craft {
	u32 len, seq, end;
	u8 type, flag;
};

/* Write a trailer ending at block offset c->end. */
static void craft(u8 *blk, const struct craft *c)
{
	struct rmsg_vb_trailer t = {
		.ack = cpu_to_le32(1),
		.freed = cpu_to_le32(2),
		.seq = cpu_to_le32(c->seq),
		.len = cpu_to_le16(c->len),
		.type = c->type,
		.flag = c->flag,
	};

	memcpy(blk + c->end - TRL, &t, TRL);
}

static int poll_crafted(u8 *blk, struct rmsg_vb_rx *rx, u32 pos, u32 lap,
			const struct craft *c)
{
	struct rmsg_vb_msg msg;

	rmsg_vb_rx_init(rx, BLK, 50, 0);
	rx->pos = pos;
	rx->lap = lap;
	rx->consumed = pos;
	rx->freed = pos;
	rx->advertised = pos;
	craft(blk, c);
	return rmsg_vb_rx_poll(rx, blk, &msg);
}

TEST(crafted_trailers)
{
	struct rmsg_vb_rx rx;
	u8 *blk = calloc(1, BLK);
	u32 e = BLK - 256;	/* a trailer at lap pos 256 */

	ASSERT_NE(NULL, blk);
	/* Baseline: a valid DATA record is accepted. */
	EXPECT_EQ(1, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, EVEN }));
	EXPECT_EQ(1, poll_crafted(blk, &rx, 256, 3,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, ODD }));
	/* Bad type. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, 0, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, RMSG_VB_RTS + 1, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, 0xff, EVEN }));
	/* Wrong sequence number. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 51, e, RMSG_VB_DATA, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 49, e, RMSG_VB_DATA, EVEN }));
	/* Huge len, and len past the block's start. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 65535, 50, e, RMSG_VB_DATA, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, BLK - 64, 0,
		  &(struct craft){ 64 - 16 + 1, 50, 64, RMSG_VB_DATA, EVEN }));
	EXPECT_EQ(1, poll_crafted(blk, &rx, BLK - 64, 0,
		  &(struct craft){ 64 - 16, 50, 64, RMSG_VB_DATA, EVEN }));
	/* More than the largest payload, though it would fit. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 2017, 50, e, RMSG_VB_DATA, EVEN }));
	/* Flags: the other parity inside a lap, garbage, 0. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, ODD }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 1,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, 0x5b }));
	EXPECT_EQ(0, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 100, 50, e, RMSG_VB_DATA, 0 }));
	/* At lap start the other parity is a stale flag: not yet. */
	EXPECT_EQ(0, poll_crafted(blk, &rx, 0, 2,
		  &(struct craft){ 100, 50, BLK, RMSG_VB_DATA, ODD }));
	/* WRAP: not at lap start, len 0, right seq. */
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 0, 0,
		  &(struct craft){ 0, 50, BLK, RMSG_VB_WRAP, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 1, 50, e, RMSG_VB_WRAP, EVEN }));
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 0, 51, e, RMSG_VB_WRAP, EVEN }));
	/* A valid WRAP, then lap 1 at the block end holds a WRAP too. */
	craft(blk, &(struct craft){ 0, 50, BLK, RMSG_VB_WRAP, ODD });
	EXPECT_EQ(-EPROTO, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 0, 50, e, RMSG_VB_WRAP, EVEN }));
	EXPECT_EQ(1U, rx.lap);
	/* A valid WRAP, then nothing yet at the block end. */
	craft(blk, &(struct craft){ 0, 50, BLK, RMSG_VB_DATA, EVEN });
	EXPECT_EQ(0, poll_crafted(blk, &rx, 256, 0,
		  &(struct craft){ 0, 50, e, RMSG_VB_WRAP, EVEN }));
	EXPECT_EQ(1U, rx.lap);
	EXPECT_EQ(0U, rx.pos);
	EXPECT_EQ(BLK, rx.consumed);
	free(blk);
}

TEST(overrun_of_advertised_credit)
{
	struct rmsg_vb_rx rx;
	struct rmsg_vb_msg msg;
	u8 *blk = calloc(1, BLK);

	ASSERT_NE(NULL, blk);
	/*
	 * Lap 1, pos 0; the peer has been told bytes up to 1000 + 64 of
	 * lap 0 are free. A 1024-byte record and its clear zone need 1040.
	 */
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, BLK, 0, 0));
	rx.lap = 1;
	rx.consumed = BLK;
	rx.freed = BLK;
	rx.advertised = 1039;
	craft(blk, &(struct craft){ 1008, 0, BLK, RMSG_VB_DATA, ODD });
	EXPECT_EQ(-EPROTO, rmsg_vb_rx_poll(&rx, blk, &msg));
	rx.advertised = 1040;
	EXPECT_EQ(1, rmsg_vb_rx_poll(&rx, blk, &msg));
	/* An exact fill needs no clear zone credit. */
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, BLK, 0, 0));
	rx.pos = rx.consumed = rx.freed = BLK - 1024;
	rx.advertised = rx.consumed + 1024 - BLK;
	craft(blk, &(struct craft){ 1008, 0, 1024, RMSG_VB_DATA, EVEN });
	EXPECT_EQ(1, rmsg_vb_rx_poll(&rx, blk, &msg));
	EXPECT_EQ(0U, msg.off);
	/* A WRAP may not skip bytes the peer was not given. */
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, BLK, 0, 0));
	rx.pos = rx.consumed = rx.freed = 256;
	rx.advertised = 0xffffffffU;	/* one byte short of lap 0's end */
	rmsg_vb_block_init(blk, BLK);
	craft(blk, &(struct craft){ 0, 0, BLK - 256, RMSG_VB_WRAP, EVEN });
	EXPECT_EQ(-EPROTO, rmsg_vb_rx_poll(&rx, blk, &msg));
	rx.advertised = 0;
	EXPECT_EQ(0, rmsg_vb_rx_poll(&rx, blk, &msg));
	EXPECT_EQ(1U, rx.lap);
	free(blk);
}

/*
 * Random bytes and random trailers at the polled place, from random but
 * consistent receiver states: poll must answer 0, 1 or -EPROTO, and a 1
 * must describe bytes inside the block. ASan checks every read.
 */
TEST(random_blocks)
{
	static const u32 sizes[] = { 4096, 4112, 4208, 12336 };
	u64 seed = test_seed(0x61647673ULL);
	unsigned int i, got[3] = { 0 };

	TH_LOG("seed %#llx", (unsigned long long)seed);
	for (i = 0; i < 40000; i++) {
		u32 size = sizes[rng_below(&seed, 4)];
		u8 *blk = malloc(size);
		struct rmsg_vb_rx rx;
		struct rmsg_vb_msg msg;
		struct craft c;
		u32 gap, maxlen;
		bool nice;
		int ret;

		ASSERT_NE(NULL, blk);
		rng_fill(&seed, blk, size);
		ASSERT_EQ(0, rmsg_vb_rx_init(&rx, size, (u32)rng_next(&seed),
					     (u32)rng_next(&seed)));
		rx.pos = rng_below(&seed, size / 16) * 16;
		rx.lap = (u32)rng_next(&seed);
		rx.consumed += rng_below(&seed, 1U << 31);
		gap = rng_below(&seed, rng_below(&seed, 4) ? size / 4 : size);
		rx.advertised = rx.consumed - gap;
		rx.freed = rx.advertised + rng_below(&seed, gap + 1);

		/* Half the time a trailer that is valid but for a field. */
		nice = rng_below(&seed, 2);
		c.end = size - rx.pos;
		maxlen = c.end - TRL < rx.max_payload ? c.end - TRL :
							rx.max_payload;
		c.len = nice && rng_below(&seed, 8) ?
			rng_below(&seed, maxlen + 1) : (u16)rng_next(&seed);
		c.seq = nice && rng_below(&seed, 8) ?
			rx.seq : (u32)rng_next(&seed);
		c.type = nice && rng_below(&seed, 8) ? RMSG_VB_DATA :
			 rng_below(&seed, 2) ? RMSG_VB_WRAP :
					       (u8)rng_next(&seed);
		switch (rng_below(&seed, 8)) {
		case 0:
			c.flag = 0;
			break;
		case 1:
			c.flag = rmsg_vb_flag(rx.lap + 1);
			break;
		case 2:
			c.flag = (u8)rng_next(&seed);
			break;
		default:
			c.flag = rmsg_vb_flag(rx.lap);
			break;
		}
		if (rng_below(&seed, 4))
			craft(blk, &c);
		if (!rng_below(&seed, 3)) {
			/* Something for after a WRAP, at the block end. */
			c.end = size;
			c.flag = rmsg_vb_flag(rx.lap + rng_below(&seed, 2));
			c.type = rng_below(&seed, 3);
			craft(blk, &c);
		}
		ret = rmsg_vb_rx_poll(&rx, blk, &msg);
		ASSERT_TRUE(ret == 0 || ret == 1 || ret == -EPROTO);
		got[ret < 0 ? 2 : ret]++;
		if (ret == 1) {
			ASSERT_LE(msg.off + rmsg_vb_record_size(msg.len), size);
			ASSERT_LE(msg.len, rx.max_payload);
			ASSERT_LT(rx.pos, size);
		}
		free(blk);
	}
	/* Each outcome must have been reached for the test to mean much. */
	EXPECT_LT(1000U, got[0]);
	EXPECT_LT(1000U, got[1]);
	EXPECT_LT(1000U, got[2]);
}

/* ------------------------------------------------------------------ */
/* Credit updates */

TEST(credit_due_half_block)
{
	const u32 size = 1U << 20, base = 0xfff00000U;
	struct rmsg_vb_rx rx;

	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, size, 0, base));
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));
	/*
	 * 600000 bytes polled; the sender was told of all but 524288 of them
	 * and has room for any record where it stands.
	 */
	rx.pos = 600000;
	rx.consumed = base + 600000;
	rx.advertised = rx.consumed - size / 2;
	rx.freed = rx.advertised + size / 2 - 1;
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));
	rx.freed++;
	EXPECT_TRUE(rmsg_vb_rx_credit_due(&rx));
	EXPECT_EQ(rx.freed, rmsg_vb_rx_advertise(&rx));
	EXPECT_EQ(rx.freed, rx.advertised);
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));
}

TEST(credit_due_when_sender_may_be_stuck)
{
	struct rmsg_vb_rx rx;

	/*
	 * 65536-byte block: a largest record and its clear zone take 32768.
	 * Lap 1, pos 0: the sender has room for one only if it was told of
	 * 32768 bytes of lap 0.
	 */
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, 65536, 0, 0));
	ASSERT_EQ(32768U, rmsg_vb_record_size(rx.max_payload) + CLR);
	rx.lap = 1;
	rx.consumed = 65536;
	rx.advertised = 32767;
	rx.freed = 32768;
	EXPECT_TRUE(rmsg_vb_rx_credit_due(&rx));
	rx.advertised = 32768;
	rx.freed = 32769;
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));
	/* Nothing released beyond what was advertised: nothing to say. */
	rx.advertised = 32767;
	rx.freed = 32767;
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));

	/*
	 * Lap 0, pos 40000: 25536 bytes left, so a largest record needs a
	 * WRAP: 25536 + 32768.
	 */
	ASSERT_EQ(0, rmsg_vb_rx_init(&rx, 65536, 0, 0));
	rx.pos = 40000;
	rx.consumed = 40000;
	rx.advertised = 40000 - (65536 - (25536 + 32768 - 1));
	rx.freed = rx.advertised + 1;
	EXPECT_TRUE(rmsg_vb_rx_credit_due(&rx));
	rx.advertised++;
	rx.freed++;
	EXPECT_FALSE(rmsg_vb_rx_credit_due(&rx));
}

/* ------------------------------------------------------------------ */
/* Randomized end-to-end run against a reference model */

struct e2e_rec {
	u32 seq, len, ack, freed;
	u8 *payload;
	u32 area, area_len;		/* block bytes of the record */
	u32 wrap_off;			/* WRAP trailer, when wrap */
	bool wrap, landed;
	u64 end;			/* bytes counter after it */
};

struct e2e_write {
	u32 off, len, done;
	u8 *data;
	int rec;			/* DATA record it completes, or -1 */
};

/* The model's own view, in 64-bit counters that never wrap. */
struct e2e_ref {
	u64 written, told, released;	/* told: freed the sender knows */
	u32 pos;
	u64 lap;
};

struct e2e {
	u32 size, maxp;
	u8 *blk;
	int *owner;			/* record index + 1, or 0 */
	struct rmsg_vb_tx tx;
	struct rmsg_vb_rx rx;
	struct e2e_ref ref;
	struct e2e_rec *recs;
	u32 nrecs, cap, polled, released;
	struct e2e_write *wq;
	u32 wq_head, wq_tail;
	u64 *cq;			/* credits in flight */
	u32 cq_head, cq_tail;
	u8 *buf;
	bool one_way;
	u64 rng;
	u32 enospc, wraps, fills, dues;
};

/* What the reference model expects rmsg_vb_tx_place() to produce. */
static int ref_place(const struct e2e *s, u32 len, struct rmsg_vb_place *want)
{
	u32 rec = pad16(len) + TRL, left = s->size - s->ref.pos, skip = 0;
	u32 start = s->ref.pos, clear;

	if (len > s->maxp)
		return -EMSGSIZE;
	if (rec != left && rec + CLR > left) {
		skip = left;
		start = 0;
	}
	clear = start + rec == s->size ? 0 : CLR;
	if (s->ref.written + skip + rec + clear > s->ref.told + s->size)
		return -ENOSPC;
	want->off = s->size - start - rec - clear;
	want->len = rec + clear;
	want->payload = clear;
	want->trailer = clear + pad16(len);
	want->plen = len;
	want->flag = (s->ref.lap + !!skip) & 1 ? ODD : EVEN;
	want->wrap_flag = s->ref.lap & 1 ? ODD : EVEN;
	want->wrap_skip = skip;
	want->wrap_off = s->size - s->ref.pos - TRL;
	return 0;
}

static void own(struct __test_metadata *_metadata, struct e2e *s, u32 off,
		u32 len, int who)
{
	u32 i;

	ASSERT_LE(off + len, s->size);
	/*
	 * Never write a byte of a record not yet released: a plain loop to
	 * the first byte owned, and the assertion on that one (an ASSERT_EQ
	 * a byte was a quarter of this program's time).
	 */
	for (i = off; i < off + len && !s->owner[i]; i++)
		;
	if (i < off + len)
		ASSERT_EQ(0, s->owner[i]);
	for (i = off; i < off + len; i++)
		s->owner[i] = who;
}

static void queue_write(struct e2e *s, u32 off, const void *data, u32 len,
			int rec)
{
	struct e2e_write *w = &s->wq[s->wq_tail++ % (2 * s->cap)];

	w->off = off;
	w->len = len;
	w->done = 0;
	w->data = malloc(len);
	memcpy(w->data, data, len);
	w->rec = rec;
}

static void e2e_send(struct __test_metadata *_metadata, struct e2e *s,
		     u32 len)
{
	struct rmsg_vb_place pl, want;
	struct rmsg_vb_trailer wt;
	struct e2e_rec *r;
	int ret, exp;

	exp = ref_place(s, len, &want);
	ret = rmsg_vb_tx_place(&s->tx, len, &pl);
	ASSERT_EQ(exp, ret);
	if (ret == -ENOSPC)
		s->enospc++;
	if (ret)
		return;
	ASSERT_EQ(want.off, pl.off);
	ASSERT_EQ(want.len, pl.len);
	ASSERT_EQ(want.payload, pl.payload);
	ASSERT_EQ(want.trailer, pl.trailer);
	ASSERT_EQ(want.plen, pl.plen);
	ASSERT_EQ(want.flag, pl.flag);
	ASSERT_EQ(want.wrap_skip, pl.wrap_skip);
	if (pl.wrap_skip) {
		ASSERT_EQ(want.wrap_off, pl.wrap_off);
		ASSERT_EQ(want.wrap_flag, pl.wrap_flag);
	}
	ASSERT_LT(s->nrecs, s->cap);

	r = &s->recs[s->nrecs];
	r->seq = pl.seq;
	r->len = len;
	r->ack = (u32)rng_next(&s->rng);
	r->freed = (u32)rng_next(&s->rng);
	r->payload = malloc(len + 1);
	rng_fill(&s->rng, r->payload, len);
	r->area = pl.off + pl.payload;
	r->area_len = pl.len - pl.payload;
	r->wrap = pl.wrap_skip;
	r->wrap_off = pl.wrap_off;
	r->landed = false;

	/* Ownership: the clear zone must be free but stays nobody's. */
	own(_metadata, s, pl.off, pl.payload, 0);
	own(_metadata, s, r->area, r->area_len, s->nrecs + 1);
	if (r->wrap)
		own(_metadata, s, r->wrap_off, TRL, s->nrecs + 1);

	build_write(&s->rng, &pl, r->payload, r->ack, r->freed, s->buf, &wt);
	if (pl.wrap_skip)
		queue_write(s, pl.wrap_off, &wt, TRL, -1);
	queue_write(s, pl.off, s->buf, pl.len, s->nrecs);

	rmsg_vb_tx_commit(&s->tx, &pl);
	if (pl.wrap_skip) {
		s->ref.lap++;
		s->ref.pos = 0;
		s->wraps++;
	}
	s->ref.written += pl.wrap_skip + r->area_len;
	s->ref.pos += r->area_len;
	if (s->ref.pos == s->size) {
		s->ref.pos = 0;
		s->ref.lap++;
		s->fills++;
	}
	r->end = s->ref.written;
	s->nrecs++;
	ASSERT_EQ((u32)s->ref.written, s->tx.written);
	ASSERT_EQ(s->ref.pos, s->tx.pos);
	ASSERT_EQ((u32)s->ref.lap, s->tx.lap);
}

/* Land up to @max bytes of in-flight writes, in order, ascending. */
static void e2e_land(struct e2e *s, u32 max)
{
	while (max && s->wq_head != s->wq_tail) {
		struct e2e_write *w = &s->wq[s->wq_head % (2 * s->cap)];
		u32 n = w->len - w->done < max ? w->len - w->done : max;

		memcpy(s->blk + w->off + w->done, w->data + w->done, n);
		w->done += n;
		max -= n;
		if (w->done < w->len)
			break;
		if (w->rec >= 0)
			s->recs[w->rec].landed = true;
		free(w->data);
		s->wq_head++;
	}
}

static void e2e_poll(struct __test_metadata *_metadata, struct e2e *s)
{
	struct rmsg_vb_msg msg;
	struct e2e_rec *r;
	int ret;

	for (;;) {
		ret = rmsg_vb_rx_poll(&s->rx, s->blk, &msg);
		ASSERT_LE(0, ret);
		r = s->polled < s->nrecs ? &s->recs[s->polled] : NULL;
		if (!ret) {
			/* A record that has fully landed must be seen. */
			ASSERT_TRUE(!r || !r->landed);
			return;
		}
		/* Never early, never out of order, byte-exact. */
		ASSERT_NE(NULL, r);
		ASSERT_TRUE(r->landed);
		ASSERT_EQ(r->seq, msg.seq);
		ASSERT_EQ(r->len, msg.len);
		ASSERT_EQ(r->area, msg.off);
		ASSERT_EQ(r->ack, msg.ack);
		ASSERT_EQ(r->freed, msg.freed);
		ASSERT_EQ((u32)r->end, msg.end);
		ASSERT_EQ(0, memcmp(s->blk + msg.off, r->payload, r->len));
		s->polled++;
	}
}

static void e2e_release(struct __test_metadata *_metadata, struct e2e *s,
			u32 n)
{
	u32 i, j;

	if (!n)
		return;
	ASSERT_LE(s->released + n, s->polled);
	ASSERT_EQ(-EINVAL, rmsg_vb_rx_release(&s->rx, s->rx.consumed + 16));
	ASSERT_EQ(0, rmsg_vb_rx_release(&s->rx,
				(u32)s->recs[s->released + n - 1].end));
	for (i = s->released; i < s->released + n; i++) {
		struct e2e_rec *r = &s->recs[i];

		for (j = 0; j < r->area_len; j++)
			s->owner[r->area + j] = 0;
		if (r->wrap)
			memset(&s->owner[r->wrap_off], 0, TRL * sizeof(int));
		free(r->payload);
		r->payload = NULL;
	}
	s->released += n;
	s->ref.released = s->recs[s->released - 1].end;
	ASSERT_EQ((u32)s->ref.released, s->rx.freed);
}

static void e2e_advertise(struct __test_metadata *_metadata, struct e2e *s)
{
	ASSERT_EQ((u32)s->ref.released, rmsg_vb_rx_advertise(&s->rx));
	ASSERT_LT(s->cq_tail - s->cq_head, s->cap);
	s->cq[s->cq_tail++ % s->cap] = s->ref.released;
}

static void e2e_deliver(struct __test_metadata *_metadata, struct e2e *s,
			u32 n)
{
	while (n-- && s->cq_head != s->cq_tail) {
		u64 v = s->cq[s->cq_head++ % s->cap];

		ASSERT_EQ(0, rmsg_vb_tx_credit(&s->tx, (u32)v));
		s->ref.told = v;
	}
}

/* Receiver side of one-way traffic: credits only when they are due. */
static void e2e_maybe_update(struct __test_metadata *_metadata, struct e2e *s)
{
	if (s->one_way) {
		if (rmsg_vb_rx_credit_due(&s->rx)) {
			e2e_advertise(_metadata, s);
			s->dues++;
		}
	} else if (rng_below(&s->rng, 2)) {
		e2e_advertise(_metadata, s);
	}
}

/*
 * Everything in flight lands, is polled and released, credits arrive: a
 * sender may then be short of room only if a credit update is due, and
 * once that is sent, must be able to place any record.
 */
static void e2e_quiesce(struct __test_metadata *_metadata, struct e2e *s,
			u32 len)
{
	struct rmsg_vb_place pl;

	e2e_land(s, ~0U);
	e2e_poll(_metadata, s);
	e2e_release(_metadata, s, s->polled - s->released);
	e2e_deliver(_metadata, s, ~0U);
	if (!s->one_way || rmsg_vb_rx_credit_due(&s->rx))
		e2e_advertise(_metadata, s);
	e2e_deliver(_metadata, s, ~0U);
	ASSERT_EQ(0, rmsg_vb_tx_place(&s->tx, len, &pl));
}

FIXTURE(e2e) {
	struct e2e s;
};

FIXTURE_VARIANT(e2e) {
	u32 size;
	bool one_way;
	u32 steps;
};

FIXTURE_VARIANT_ADD(e2e, b4096) { .size = 4096, .steps = 60000 };
FIXTURE_VARIANT_ADD(e2e, b4112) { .size = 4112, .steps = 60000 };
FIXTURE_VARIANT_ADD(e2e, b12336) { .size = 12336, .steps = 60000 };
FIXTURE_VARIANT_ADD(e2e, b65536) { .size = 65536, .steps = 30000 };
FIXTURE_VARIANT_ADD(e2e, b200016) { .size = 200016, .steps = 20000 };
FIXTURE_VARIANT_ADD(e2e, oneway_b4096) {
	.size = 4096, .one_way = true, .steps = 60000
};
FIXTURE_VARIANT_ADD(e2e, oneway_b4208) {
	.size = 4208, .one_way = true, .steps = 60000
};
FIXTURE_VARIANT_ADD(e2e, oneway_b65552) {
	.size = 65552, .one_way = true, .steps = 30000
};

FIXTURE_SETUP(e2e)
{
	struct e2e *s = &self->s;
	u32 bytes0;

	memset(s, 0, sizeof(*s));
	s->rng = test_seed(0x76626532ULL) ^ variant->size ^ variant->one_way;
	TH_LOG("seed %#llx (RMSG_TEST_SEED=%#llx)",
	       (unsigned long long)s->rng,
	       (unsigned long long)test_seed(0x76626532ULL));
	s->size = variant->size;
	s->one_way = variant->one_way;
	s->cap = variant->steps + 16;
	s->blk = malloc(s->size);
	s->owner = calloc(s->size, sizeof(int));
	s->recs = calloc(s->cap, sizeof(*s->recs));
	s->wq = calloc(2 * s->cap, sizeof(*s->wq));
	s->cq = calloc(s->cap, sizeof(*s->cq));
	s->buf = malloc(65536 + 64);
	ASSERT_TRUE(s->blk && s->owner && s->recs && s->wq && s->cq && s->buf);

	/* Garbage everywhere but the last trailer (R6). */
	rng_fill(&s->rng, s->blk, s->size);
	rmsg_vb_block_init(s->blk, s->size);
	/* Counters and sequence numbers start close to 2^32. */
	bytes0 = 0xffffffffU - rng_below(&s->rng, 4 * s->size);
	ASSERT_EQ(0, rmsg_vb_tx_init(&s->tx, s->size, 0xfffffff0U, bytes0));
	ASSERT_EQ(0, rmsg_vb_rx_init(&s->rx, s->size, 0xfffffff0U, bytes0));
	s->ref.written = s->ref.told = s->ref.released = bytes0;
	s->maxp = (s->size / 2 - 32) & ~15U;
	if (s->maxp > 65535)
		s->maxp = 65535;
	ASSERT_EQ(s->maxp, s->tx.max_payload);
}

FIXTURE_TEARDOWN(e2e)
{
	struct e2e *s = &self->s;
	u32 i;

	for (i = 0; s->recs && i < s->nrecs; i++)
		free(s->recs[i].payload);
	while (s->wq && s->wq_head != s->wq_tail)
		free(s->wq[s->wq_head++ % (2 * s->cap)].data);
	free(s->blk);
	free(s->owner);
	free(s->recs);
	free(s->wq);
	free(s->cq);
	free(s->buf);
}

static u32 e2e_len(struct e2e *s)
{
	switch (rng_below(&s->rng, 10)) {
	case 0:
	case 1:
		return s->maxp - rng_below(&s->rng, 48);
	case 2:
	case 3:
	case 4:
		return rng_below(&s->rng, s->maxp + 1);
	default:
		return rng_below(&s->rng, 100);
	}
}

TEST_F_TIMEOUT(e2e, random_traffic, 120)
{
	struct e2e *s = &self->s;
	u32 step, len = e2e_len(s);

	for (step = 0; step < variant->steps; step++) {
		u32 held = s->polled - s->released;

		switch (rng_below(&s->rng, 8)) {
		case 0:
		case 1: {
			u32 before = s->nrecs;

			e2e_send(_metadata, s, len);
			if (s->nrecs != before)
				len = e2e_len(s);
			else if (!rng_below(&s->rng, 8))
				e2e_quiesce(_metadata, s, len);
			break;
		}
		case 2:
		case 3:
			e2e_land(s, 1 + rng_below(&s->rng,
					rng_below(&s->rng, 2) ? 64 : 8192));
			break;
		case 4:
			e2e_poll(_metadata, s);
			break;
		case 5:
			e2e_release(_metadata, s, rng_below(&s->rng, held + 1));
			e2e_maybe_update(_metadata, s);
			break;
		case 6:
			e2e_deliver(_metadata, s, 1 + rng_below(&s->rng, 3));
			break;
		default:
			if (!s->one_way)
				e2e_advertise(_metadata, s);
			break;
		}
		ASSERT_LE(s->tx.written - s->tx.freed, s->size);
		ASSERT_LE(s->rx.consumed - s->rx.advertised, s->size);
		ASSERT_LT(s->tx.pos, s->size);
		ASSERT_EQ(0U, s->tx.pos % 16);
	}
	e2e_quiesce(_metadata, s, s->maxp);
	ASSERT_EQ(s->nrecs, s->polled);
	ASSERT_EQ(s->tx.written, s->rx.consumed);
	TH_LOG("%u records, %u laps, %u wraps, %u exact fills, %u ENOSPC, %u due updates",
	       s->nrecs, s->tx.lap, s->wraps, s->fills, s->enospc, s->dues);
	/* The run must have exercised what it claims to. */
	ASSERT_LT(1000U, s->nrecs);
	ASSERT_LT(3U, s->tx.lap);
	ASSERT_LT(0U, s->wraps);
	ASSERT_LT(10U, s->enospc);
	ASSERT_TRUE(s->tx.written < 0x80000000U);	/* crossed 2^32 */
}

TEST_HARNESS_MAIN
