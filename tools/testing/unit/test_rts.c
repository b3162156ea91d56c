// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_rts.c: how a rendezvous message is cut into
 * segments, and the checks on a received RTS, which comes from the peer.
 */
/* The harness's wrappers take parameters they do not use. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include <stdlib.h>
#include <string.h>

#include "rmsg_rts.h"
#include "rmsg_wire.h"

/* Segments cover the message exactly, in order, each inside its window. */
static void check_cover(struct __test_metadata *_metadata, u64 addr, u64 len,
			u32 shift)
{
	u32 n = rmsg_rts_nseg(addr, len, shift), i;
	u64 next = addr, size = 1ULL << shift;
	struct rmsg_span s;

	ASSERT_LE(1, n);
	for (i = 0; i < n; i++) {
		s = rmsg_rts_seg(addr, len, shift, i);
		ASSERT_EQ(next, s.addr);
		ASSERT_LE(1, s.len);
		ASSERT_GE(size, s.len);
		/* Never across a multiple of the segment size. */
		ASSERT_EQ(s.addr >> shift, (s.addr + s.len - 1) >> shift);
		next += s.len;
	}
	ASSERT_EQ(addr + len, next);
}

TEST(segments_cover_exactly)
{
	static const u64 addrs[] = { 0, 1, 4095, 4096, 0x7f0000001234ULL,
				     (2ULL << 20) - 1, 2ULL << 20 };
	static const u64 lens[] = { 1, 2, 4095, 4096, 4097, (2ULL << 20) - 1,
				    2ULL << 20, (2ULL << 20) + 1,
				    64ULL << 20, RMSG_RNDV_MAX_LEN };
	unsigned int a, l;

	for (a = 0; a < ARRAY_SIZE(addrs); a++)
		for (l = 0; l < ARRAY_SIZE(lens); l++) {
			check_cover(_metadata, addrs[a], lens[l], 21);
			check_cover(_metadata, addrs[a], lens[l], 12);
		}
}

TEST(segment_counts)
{
	EXPECT_EQ(1, rmsg_rts_nseg(0, 1, 21));
	EXPECT_EQ(1, rmsg_rts_nseg(0, 2 << 20, 21));
	EXPECT_EQ(2, rmsg_rts_nseg(1, 2 << 20, 21));
	EXPECT_EQ(2, rmsg_rts_nseg((2 << 20) - 1, 2, 21));
	EXPECT_EQ(33, rmsg_rts_nseg(100, 64 << 20, 21));
	EXPECT_EQ(32 + 4 * 33, rmsg_rts_size(33));
}

static void *encoded(u64 addr, u64 len, u32 shift, u32 cookie, u32 *size)
{
	struct rmsg_rts_info info = {
		.len = len, .addr = addr, .cookie = cookie, .seg_shift = shift,
		.nseg = rmsg_rts_nseg(addr, len, shift),
	};
	struct rmsg_rts *buf;
	u32 i;

	*size = rmsg_rts_size(info.nseg);
	buf = calloc(1, *size);
	rmsg_rts_encode(buf, &info);
	for (i = 0; i < info.nseg; i++)
		buf->rkey[i] = htole32(0x1000 + i);
	return buf;
}

TEST(round_trip)
{
	struct rmsg_rts_info info;
	u32 size, i;
	void *buf = encoded(0x7f0000000123ULL, 5 << 20, 21, 77, &size);

	ASSERT_EQ(0, rmsg_rts_decode(buf, size, &info));
	EXPECT_EQ(5 << 20, info.len);
	EXPECT_EQ(0x7f0000000123ULL, info.addr);
	EXPECT_EQ(77, info.cookie);
	EXPECT_EQ(21, info.seg_shift);
	ASSERT_EQ(3, info.nseg);
	for (i = 0; i < info.nseg; i++)
		EXPECT_EQ(0x1000 + i, le32toh(info.rkey[i]));
	free(buf);
}

/* Every field that disagrees with the others makes the RTS a lie. */
TEST(decode_rejects)
{
	struct rmsg_rts_info info;
	struct rmsg_rts *rts;
	u32 size;

	rts = encoded(4096, 100000, 21, 1, &size);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size - 1, &info));
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size + 4, &info));
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, 31, &info));
	rts->flags = htole32(4);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->flags = htole32(RMSG_RTS_F_PUT | RMSG_RTS_F_CTS);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	/* A CTS is cut into segments as an RTS is. */
	rts->flags = htole32(RMSG_RTS_F_CTS);
	EXPECT_EQ(0, rmsg_rts_decode(rts, size, &info));
	EXPECT_EQ(RMSG_RTS_F_CTS, info.flags);
	rts->flags = 0;
	rts->len = 0;
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->len = htole64((u64)RMSG_RNDV_MAX_LEN + 1);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->len = htole64(100000);
	rts->addr = htole64(~0ULL - 10);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->addr = htole64(4096);
	rts->seg_shift = htole32(11);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->seg_shift = htole32(31);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	/* A segment size that needs another number of keys. */
	rts->seg_shift = htole32(12);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->seg_shift = htole32(21);
	rts->nseg = htole32(2);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->nseg = htole32(1);
	EXPECT_EQ(0, rmsg_rts_decode(rts, size, &info));
	free(rts);
}

/*
 * An RPut's RTS names one mailbox of 2^seg_shift bytes, whatever the
 * message's length, and nothing else.
 */
TEST(decode_put)
{
	struct rmsg_rts_info info;
	struct rmsg_rts *rts;
	u32 size;

	rts = encoded(0, 64 << 20, 13, 1, &size);
	rts->nseg = htole32(1);
	size = rmsg_rts_size(1);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->flags = htole32(RMSG_RTS_F_PUT);
	ASSERT_EQ(0, rmsg_rts_decode(rts, size, &info));
	EXPECT_EQ(1, info.nseg);
	EXPECT_EQ(64 << 20, info.len);
	EXPECT_EQ(13, info.seg_shift);
	EXPECT_EQ(RMSG_RTS_F_PUT, info.flags);
	rts->nseg = htole32(2);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, rmsg_rts_size(2), &info));
	rts->nseg = htole32(1);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, rmsg_rts_size(2), &info));
	rts->seg_shift = htole32(RMSG_RTS_MBOX_MAX_SHIFT + 1);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->seg_shift = htole32(11);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->seg_shift = htole32(13);
	rts->addr = htole64(~0ULL - 4096);
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	rts->addr = 0;
	rts->len = 0;
	EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	free(rts);
}

/*
 * Found by fuzz_rts: a shift the peer chose was used before it was
 * checked, an undefined shift of a u64 by 64 or more (UBSan aborts here).
 */
TEST(decode_huge_shift)
{
	static const u32 shifts[] = { 64, 1536, 0xffffffffU };
	struct rmsg_rts_info info;
	struct rmsg_rts *rts;
	u32 size, i;

	rts = encoded(4096, 100000, 21, 1, &size);
	for (i = 0; i < ARRAY_SIZE(shifts); i++) {
		rts->flags = 0;
		rts->seg_shift = htole32(shifts[i]);
		EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
		rts->flags = htole32(RMSG_RTS_F_PUT);
		EXPECT_EQ(-EPROTO, rmsg_rts_decode(rts, size, &info));
	}
	free(rts);
}

/*
 * Found by fuzz_rts: a message in the last segment window of the address
 * space, whose end is 2^64; the segment's end wrapped to 0 and its span
 * came out 2^64 - start bytes long.
 */
TEST(segment_at_top_of_address_space)
{
	struct rmsg_rts_info info;
	struct rmsg_span s;
	u32 size;
	void *buf = encoded(0xffffffffffff0016ULL, 0x13f, 22, 1, &size);

	ASSERT_EQ(0, rmsg_rts_decode(buf, size, &info));
	ASSERT_EQ(1, info.nseg);
	s = rmsg_rts_seg(info.addr, info.len, info.seg_shift, 0);
	EXPECT_EQ(0xffffffffffff0016ULL, s.addr);
	EXPECT_EQ(0x13f, s.len);
	check_cover(_metadata, 0xfffffffffffff000ULL, 4095, 12);
	check_cover(_metadata, 0xffffffffff000001ULL, 0xffffff, 21);
	free(buf);
}

/* A rekey area: records packed at multiples of 8, walked one by one. */
TEST(rekey_area_walk)
{
	u64 words[RMSG_REKEY_AREA / 8] = { 0 };
	u8 *area = (u8 *)words;
	struct rmsg_rts_info info;
	u32 size1, size2, off = 0, end;
	void *a = encoded(0x10000, 5 << 20, 21, 40, &size1);
	void *b = encoded(0x20001, 100, 12, 41, &size2);

	/* 3 keys: 44 bytes, padded to 48; then 1 key: 36, padded to 40. */
	ASSERT_EQ(44, size1);
	ASSERT_EQ(36, size2);
	memcpy(area, a, size1);
	memcpy(area + 48, b, size2);
	end = 48 + 40;
	ASSERT_EQ(1, rmsg_rts_next(area, end, &off, &info));
	EXPECT_EQ(40, info.cookie);
	EXPECT_EQ(3, info.nseg);
	EXPECT_EQ(48, off);
	ASSERT_EQ(1, rmsg_rts_next(area, end, &off, &info));
	EXPECT_EQ(41, info.cookie);
	EXPECT_EQ(0x1000, le32toh(info.rkey[0]));
	EXPECT_EQ(end, off);
	EXPECT_EQ(0, rmsg_rts_next(area, end, &off, &info));

	/* Cut short: the second record does not fit. */
	off = 48;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, 80, &off, &info));
	off = 48;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, 72, &off, &info));
	/* Too short for a header; a count that would run past the end. */
	off = 0;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, 24, &off, &info));
	((struct rmsg_rts *)area)->nseg = htole32(0x40000000);
	off = 0;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, end, &off, &info));
	/* A record that is not valid in itself. */
	((struct rmsg_rts *)area)->nseg = htole32(2);
	off = 0;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, end, &off, &info));
	/* An offset off the 8-byte grid, or past the end. */
	off = 4;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, end, &off, &info));
	off = end + 8;
	EXPECT_EQ(-EPROTO, rmsg_rts_next(area, end, &off, &info));
	free(a);
	free(b);
}

TEST_HARNESS_MAIN
