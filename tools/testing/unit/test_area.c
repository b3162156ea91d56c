// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for librmsg's send-area allocator (lib/rmsg_area.c):
 * records freed in and out of order, the skip at the end of the area,
 * shrinking and cancelling the newest record, bad frees, scribbled headers,
 * and a randomized run checked against what the ring must look like.
 */
#include <stdlib.h>
#include <string.h>

/* The harness's wrappers take parameters they do not use (see test_vb.c). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_area.h"

#define HDR	RMSG_AREA_HDR

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rng_next(s) % n) : 0;
}

static uint64_t test_seed(uint64_t dflt)
{
	const char *e = getenv("RMSG_TEST_SEED");

	return e ? strtoull(e, NULL, 0) : dflt;
}

/* Bytes a record of @len payload bytes takes. */
static uint32_t rec_size(uint32_t len)
{
	return HDR + ((len ? len : 1) + 15) / 16 * 16;
}

FIXTURE(area) {
	struct rmsg_area a;
	unsigned char *mem;
	uint32_t size;
};

FIXTURE_SETUP(area)
{
	self->size = 4096;
	self->mem = aligned_alloc(64, self->size);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 0xee, self->size);
	ASSERT_EQ(0, rmsg_area_init(&self->a, self->mem, self->size));
}

FIXTURE_TEARDOWN(area)
{
	free(self->mem);
}

TEST(init_rejects_what_cannot_hold_a_record)
{
	unsigned char *mem = aligned_alloc(16, 64);
	struct rmsg_area a;

	ASSERT_NE(NULL, mem);

	EXPECT_EQ(-EINVAL, rmsg_area_init(&a, mem, 0));
	EXPECT_EQ(-EINVAL, rmsg_area_init(&a, mem, 31));
	EXPECT_EQ(-EINVAL, rmsg_area_init(&a, mem + 1, 64));
	EXPECT_EQ(0, rmsg_area_init(&a, mem, 32));
	EXPECT_EQ(16U, rmsg_area_max(&a));
	/* The size is rounded down to whole records. */
	EXPECT_EQ(0, rmsg_area_init(&a, mem, 63));
	EXPECT_EQ(48U, a.size);
	free(mem);
}

TEST_F(area, sizes_and_offsets)
{
	uint32_t off[5];

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 0, &off[0]));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 1, &off[1]));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 16, &off[2]));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 17, &off[3]));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &off[4]));
	/* Payloads follow their headers, 16-byte aligned, back to back. */
	EXPECT_EQ(HDR, off[0]);
	EXPECT_EQ(off[0] + 16 + HDR, off[1]);	/* 0 bytes still take 16 */
	EXPECT_EQ(off[1] + 16 + HDR, off[2]);
	EXPECT_EQ(off[2] + 16 + HDR, off[3]);
	EXPECT_EQ(off[3] + 32 + HDR, off[4]);
	EXPECT_EQ(off[4] + 112, self->a.head);
	EXPECT_EQ(self->a.head, self->a.used);
	EXPECT_EQ(5U, self->a.live);
	EXPECT_EQ(-EMSGSIZE, rmsg_area_alloc(&self->a, self->size, &off[0]));
	EXPECT_EQ(-EMSGSIZE, rmsg_area_alloc(&self->a, self->size - HDR + 1,
					     &off[0]));
}

TEST_F(area, largest_fits_only_an_idle_area)
{
	uint32_t off, small;

	ASSERT_EQ(self->size - HDR, rmsg_area_max(&self->a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, rmsg_area_max(&self->a), &off));
	EXPECT_EQ(HDR, off);
	EXPECT_EQ(-EAGAIN, rmsg_area_alloc(&self->a, 0, &small));
	ASSERT_EQ(0, rmsg_area_free(&self->a, off, NULL));
	EXPECT_EQ(0U, self->a.used);
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 0, &small));
	EXPECT_EQ(-EAGAIN, rmsg_area_alloc(&self->a, rmsg_area_max(&self->a),
					   &off));
	ASSERT_EQ(0, rmsg_area_free(&self->a, small, NULL));
	/* Idle again: back at the start, whole area in one piece. */
	EXPECT_EQ(0U, self->a.head);
	EXPECT_EQ(0U, self->a.tail);
	EXPECT_EQ(0, rmsg_area_alloc(&self->a, rmsg_area_max(&self->a), &off));
}

TEST_F(area, out_of_order_frees)
{
	uint32_t a, b, c, d;
	uint64_t cookie;

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 200, &b));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 300, &c));
	rmsg_area_hdr(&self->a, a)->cookie = 0xa;
	rmsg_area_hdr(&self->a, b)->cookie = 0xb;
	rmsg_area_hdr(&self->a, c)->cookie = 0xc;
	/* A later record freed first: its room waits for the earlier ones. */
	ASSERT_EQ(0, rmsg_area_free(&self->a, b, &cookie));
	EXPECT_EQ(0xbU, cookie);
	EXPECT_EQ(0U, self->a.tail);
	EXPECT_EQ(rec_size(100) + rec_size(200) + rec_size(300), self->a.used);
	EXPECT_EQ(2U, self->a.live);
	/* Freeing the oldest passes the tail over both. */
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, &cookie));
	EXPECT_EQ(0xaU, cookie);
	EXPECT_EQ(c - HDR, self->a.tail);
	EXPECT_EQ(rec_size(300), self->a.used);
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 10, &d));
	ASSERT_EQ(0, rmsg_area_free(&self->a, d, NULL));
	EXPECT_EQ(c - HDR, self->a.tail) TH_LOG("the newest before the oldest");
	ASSERT_EQ(0, rmsg_area_free(&self->a, c, &cookie));
	EXPECT_EQ(0xcU, cookie);
	EXPECT_EQ(0U, self->a.used);
	EXPECT_EQ(0U, self->a.live);
	EXPECT_EQ(0U, self->a.head);
}

TEST_F(area, skip_at_the_end)
{
	uint32_t a, b, c, d, e, left, gap;

	/* a and b leave less than a record of 600 at the end. */
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 2000, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 1500, &b));
	left = self->size - rec_size(2000) - rec_size(1500);
	ASSERT_EQ(left, self->size - self->a.head);
	ASSERT_LT(left, rec_size(600));
	/* 600 does not fit at the end, and the start is still a's. */
	EXPECT_EQ(-EAGAIN, rmsg_area_alloc(&self->a, 600, &c));
	EXPECT_EQ(rec_size(2000) + rec_size(1500), self->a.used)
		TH_LOG("a refused allocation changes nothing");
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, NULL));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 600, &c));
	EXPECT_EQ(HDR, c) TH_LOG("went to the start");
	EXPECT_EQ(rec_size(1500) + left + rec_size(600), self->a.used);
	/* What lies between the new head and b, exactly, and no more. */
	gap = rec_size(2000) - rec_size(600);
	EXPECT_EQ(-EAGAIN, rmsg_area_alloc(&self->a, gap - HDR + 1, &d));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, gap - HDR, &d));
	EXPECT_EQ(self->a.size, self->a.used);
	EXPECT_EQ(-EAGAIN, rmsg_area_alloc(&self->a, 0, &e));
	/* Freeing b passes the tail over the skip, to the start. */
	ASSERT_EQ(0, rmsg_area_free(&self->a, b, NULL));
	EXPECT_EQ(0U, self->a.tail);
	EXPECT_EQ(rec_size(600) + gap, self->a.used);
	ASSERT_EQ(0, rmsg_area_free(&self->a, d, NULL));
	ASSERT_EQ(0, rmsg_area_free(&self->a, c, NULL));
	EXPECT_EQ(0U, self->a.used);
}

TEST_F(area, record_ending_at_the_area_end)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 2048 - HDR, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 2048 - HDR, &b));
	EXPECT_EQ(self->size, self->a.head);
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, NULL));
	/* No skip needed: the next record simply starts over. */
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 5, &c));
	EXPECT_EQ(HDR, c);
	EXPECT_EQ(2048 + rec_size(5), self->a.used);
	ASSERT_EQ(0, rmsg_area_free(&self->a, b, NULL));
	EXPECT_EQ(0U, self->a.tail);
	ASSERT_EQ(0, rmsg_area_free(&self->a, c, NULL));
	EXPECT_EQ(0U, self->a.used);
}

TEST_F(area, shrink_and_cancel_the_newest)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 1000, &b));
	EXPECT_EQ(-EINVAL, rmsg_area_shrink(&self->a, a, 10))
		TH_LOG("only the newest record can shrink");
	EXPECT_EQ(-EINVAL, rmsg_area_cancel(&self->a, a));
	/* The room is the padded size: 1008 bytes. */
	EXPECT_EQ(-EINVAL, rmsg_area_shrink(&self->a, b, 1009));
	ASSERT_EQ(0, rmsg_area_shrink(&self->a, b, 17));
	EXPECT_EQ(rec_size(100) + rec_size(17), self->a.used);
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 0, &c));
	EXPECT_EQ(b + 32 + HDR, c);
	ASSERT_EQ(0, rmsg_area_cancel(&self->a, c));
	EXPECT_EQ(rec_size(100) + rec_size(17), self->a.used);
	EXPECT_EQ(2U, self->a.live);
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, c, NULL))
		TH_LOG("a cancelled record is not live");
	ASSERT_EQ(0, rmsg_area_cancel(&self->a, b));
	ASSERT_EQ(0, rmsg_area_cancel(&self->a, a));
	EXPECT_EQ(0U, self->a.used);
	EXPECT_EQ(0U, self->a.live);
	EXPECT_EQ(0U, self->a.head);
}

TEST_F(area, cancel_after_a_skip)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 2000, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 1500, &b));
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, NULL));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 600, &c));
	ASSERT_EQ(HDR, c);
	ASSERT_EQ(0, rmsg_area_cancel(&self->a, c));
	/* The skip stays until the tail passes it; the start is free. */
	EXPECT_EQ(self->size - rec_size(2000), self->a.used);
	EXPECT_EQ(0U, self->a.head);
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 2000, &c));
	EXPECT_EQ(HDR, c);
	ASSERT_EQ(0, rmsg_area_free(&self->a, b, NULL));
	ASSERT_EQ(0, rmsg_area_free(&self->a, c, NULL));
	EXPECT_EQ(0U, self->a.used);
}

TEST_F(area, bad_frees)
{
	uint32_t a, b;

	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, HDR, NULL))
		TH_LOG("nothing allocated yet");
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &b));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, 0, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, 8, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, a + 1, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, a + 16, NULL))
		TH_LOG("inside a payload");
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, b + 128, NULL))
		TH_LOG("beyond the head");
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, self->size, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, 0xfffffff0U, NULL));
	ASSERT_EQ(0, rmsg_area_free(&self->a, b, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, b, NULL))
		TH_LOG("double free");
	EXPECT_EQ(1U, self->a.live);
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, NULL));
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, a, NULL));
	EXPECT_EQ(0U, self->a.used);
}

/* The headers are the program's memory: garbage there stops, never harms. */
TEST_F(area, scribbled_headers)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &a));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &b));
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 100, &c));
	/* b's header claims to be huge: b is no longer a record. */
	rmsg_area_hdr(&self->a, b)->size = 0x10000000;
	EXPECT_EQ(-EINVAL, rmsg_area_free(&self->a, b, NULL));
	/* b's header says free but its size is garbage: the walk stops. */
	rmsg_area_hdr(&self->a, b)->state = RMSG_AREA_FREE;
	EXPECT_EQ(-EIO, rmsg_area_free(&self->a, a, NULL));
	EXPECT_LE(self->a.used, self->a.size);
	EXPECT_LT(self->a.tail, self->a.size);
	rmsg_area_hdr(&self->a, b)->size = 0;
	EXPECT_EQ(-EIO, rmsg_area_free(&self->a, c, NULL));
	/* Put right, the walk goes on. */
	rmsg_area_hdr(&self->a, b)->size = rec_size(100);
	ASSERT_EQ(0, rmsg_area_alloc(&self->a, 0, &a));
	ASSERT_EQ(0, rmsg_area_free(&self->a, a, NULL));
	EXPECT_EQ(0U, self->a.used);
}

/* ------------------------------------------------------------------ */
/* Randomized: sends completing out of order across "channels". */

struct live_rec {
	uint32_t off;
	uint32_t len;
	uint64_t id;
};

static unsigned char pattern(uint64_t id, uint32_t i)
{
	return (unsigned char)(id * 131 + i * 7 + (i >> 8));
}

/*
 * pattern(id, 0..) of every id, as 256 rows of @len bytes: the bytes
 * depend on id * 131 only modulo 256 (row (id * 131) & 255). A record is
 * written and checked with memcpy() and memcmp() from its row: a loop of
 * pattern() a byte, each access checked by ASan, took 9 of send_area's
 * 10 s (1.6 GB written and read again).
 */
static unsigned char *pattern_rows(uint32_t len)
{
	unsigned char *rows = malloc(256 * (size_t)len);
	uint32_t c, i;

	if (!rows)
		return NULL;
	for (c = 0; c < 256; c++)
		for (i = 0; i < len; i++)
			rows[c * (size_t)len + i] =
				(unsigned char)(pattern(0, i) + c);
	return rows;
}

static const unsigned char *pattern_of(const unsigned char *rows,
				       uint32_t len, uint64_t id)
{
	return rows + (size_t)((id * 131) & 255) * len;
}

/* The largest record that fits in one piece at the head right now. */
static uint32_t contiguous_room(const struct rmsg_area *a)
{
	uint32_t end = a->size - a->head;

	if (!a->used)
		return a->size;
	if (a->head > a->tail || a->head == a->size)
		return end > a->tail ? end : a->tail;
	return a->tail - a->head;
}

FIXTURE(random) {
	struct rmsg_area a;
	unsigned char *mem;
	struct live_rec *recs;	/* in allocation order */
	unsigned int nrecs;
	uint64_t rng;
	unsigned char *rows;	/* pattern_rows(row_len) */
	uint32_t row_len;	/* longer than any record */
};

FIXTURE_VARIANT(random) {
	uint32_t size;
	uint32_t maxlen;
	unsigned int steps;
};

FIXTURE_VARIANT_ADD(random, small_area) {
	.size = 4096, .maxlen = 1500, .steps = 200000,
};

FIXTURE_VARIANT_ADD(random, send_area) {
	.size = 1 << 20, .maxlen = 65535, .steps = 200000,
};

FIXTURE_VARIANT_ADD(random, tiny_messages) {
	.size = 8192, .maxlen = 40, .steps = 200000,
};

FIXTURE_SETUP(random)
{
	self->rng = test_seed(0x5eed0a7ea);
	TH_LOG("seed 0x%llx (RMSG_TEST_SEED repeats it)",
	       (unsigned long long)self->rng);
	self->mem = aligned_alloc(64, variant->size);
	ASSERT_NE(NULL, self->mem);
	ASSERT_EQ(0, rmsg_area_init(&self->a, self->mem, variant->size));
	self->recs = calloc(variant->size / 32 + 1, sizeof(*self->recs));
	ASSERT_NE(NULL, self->recs);
	self->nrecs = 0;
	/* random_len() gives up to 63 bytes whatever maxlen is. */
	self->row_len = (variant->maxlen > 63 ? variant->maxlen : 63) + 1;
	self->rows = pattern_rows(self->row_len);
	ASSERT_NE(NULL, self->rows);
}

FIXTURE_TEARDOWN(random)
{
	free(self->rows);
	free(self->recs);
	free(self->mem);
}

static uint32_t random_len(uint64_t *rng, uint32_t maxlen)
{
	switch (rng_below(rng, 8)) {
	case 0:
		return maxlen - rng_below(rng, 16);
	case 1:
	case 2:
		return rng_below(rng, maxlen + 1);
	default:
		return rng_below(rng, 64);
	}
}

TEST_F_TIMEOUT(random, out_of_order_completions, 120)
{
	struct rmsg_area *a = &self->a;
	unsigned long allocs = 0, refused = 0, wraps = 0, ooo = 0;
	uint64_t next_id = 1, cookie;
	unsigned int step, i = 0, k;
	uint32_t off, len;
	int ret;

	for (step = 0; step < variant->steps; step++) {
		if (rng_below(&self->rng, 2)) {
			len = random_len(&self->rng, variant->maxlen);
			ret = rmsg_area_alloc(a, len, &off);

			if (ret == -EAGAIN) {
				/* Refused only when it really does not fit. */
				ASSERT_NE(0U, a->live);
				ASSERT_LT(contiguous_room(a), rec_size(len));
				refused++;
				continue;
			}
			ASSERT_EQ(0, ret);
			ASSERT_LE(off + len, a->size);
			ASSERT_EQ(0U, off % 16);
			if (self->nrecs && off < self->recs[self->nrecs - 1].off)
				wraps++;
			rmsg_area_hdr(a, off)->cookie = next_id;
			memcpy(&a->base[off],
			       pattern_of(self->rows, self->row_len,
					  next_id), len);
			self->recs[self->nrecs++] = (struct live_rec){
				off, len, next_id++ };
			allocs++;
			/* Shrink now and then, as rmsg_msg_commit() does. */
			if (len && !rng_below(&self->rng, 16)) {
				len = rng_below(&self->rng, len);
				ASSERT_EQ(0, rmsg_area_shrink(a, off, len));
				self->recs[self->nrecs - 1].len = len;
			}
		} else if (self->nrecs) {
			/* Mostly the oldest few, as channels complete. */
			k = rng_below(&self->rng, 4) ?
				rng_below(&self->rng,
					  self->nrecs < 8 ? self->nrecs : 8) :
				rng_below(&self->rng, self->nrecs);
			if (k)
				ooo++;
			off = self->recs[k].off;
			len = self->recs[k].len;
			/* On a difference, the first byte that differs. */
			if (memcmp(&a->base[off],
				   pattern_of(self->rows, self->row_len,
					      self->recs[k].id), len))
				for (i = 0; i < len; i++)
					ASSERT_EQ(pattern(self->recs[k].id, i),
						  a->base[off + i])
						TH_LOG("record %llu byte %u overwritten",
						       (unsigned long long)self->recs[k].id,
						       i);
			ASSERT_EQ(0, rmsg_area_free(a, off, &cookie));
			ASSERT_EQ(self->recs[k].id, cookie);
			memmove(&self->recs[k], &self->recs[k + 1],
				(self->nrecs - k - 1) * sizeof(*self->recs));
			self->nrecs--;
		}
		/* The tail sits exactly on the oldest live record. */
		ASSERT_EQ(self->nrecs, a->live);
		ASSERT_EQ(self->nrecs ? self->recs[0].off - HDR : 0U, a->tail);
		ASSERT_TRUE(self->nrecs || !a->used);
		ASSERT_LE(a->used, a->size);
	}
	while (self->nrecs) {
		ASSERT_EQ(0, rmsg_area_free(a, self->recs[self->nrecs - 1].off,
					    NULL));
		self->nrecs--;
	}
	ASSERT_EQ(0U, a->used);
	ASSERT_EQ(0U, a->live);
	TH_LOG("%lu allocations, %lu refused, %lu wraps, %lu out of order",
	       allocs, refused, wraps, ooo);
	ASSERT_LT(10000UL, allocs);
	ASSERT_LT(100UL, refused);
	ASSERT_LT(10UL, wraps);
	ASSERT_LT(1000UL, ooo);
}

TEST_HARNESS_MAIN
