// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for the checked messages of rmsg-perf and the selftests'
 * streams (tools/common/rmsg_check.c). The byte layouts are written out
 * here on their own, not derived from the code under test: rmsg-perf
 * peers of another version check each other's bytes, so a layout may
 * change only on purpose, and then this test says so. Also: every byte a
 * pattern writes is checked, and the rendezvous mix's rule.
 */
#include <string.h>

/* The harness's wrappers take parameters they do not use (see test_vb.c). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_check.h"

#define SEQ	0x1122334455667788ULL

TEST(ends_layout)
{
	uint8_t p[40], want[40];
	uint64_t seq = SEQ;
	unsigned int i;

	memset(p, 0xee, sizeof(p));
	rmsg_check_fill(p, 32, RMSG_CHECK_ENDS, 7, seq);
	memset(want, 0xee, sizeof(want));
	memcpy(want, &seq, 8);
	memcpy(want + 24, &seq, 8);
	ASSERT_EQ(0, memcmp(p, want, sizeof(p)));
	ASSERT_TRUE(rmsg_check_ok(p, 32, RMSG_CHECK_ENDS, 0, seq));

	rmsg_check_fill(p, 32, RMSG_CHECK_ENDS_FULL, 7, seq);
	for (i = 8; i < 24; i++)
		want[i] = (uint8_t)(seq + i);
	ASSERT_EQ(0, memcmp(p, want, sizeof(p)));
	ASSERT_TRUE(rmsg_check_ok(p, 32, RMSG_CHECK_ENDS_FULL, 0, seq));
}

/* Under 16 bytes the sequence number fills every byte, in turn. */
TEST(short_layout)
{
	uint8_t p[16];
	unsigned int i;

	memset(p, 0xee, sizeof(p));
	rmsg_check_fill(p, 10, RMSG_CHECK_ENDS_FULL, 0, SEQ);
	for (i = 0; i < 10; i++)
		ASSERT_EQ((uint8_t)(SEQ >> (8 * (i & 7))), p[i]);
	ASSERT_EQ(0xee, p[10]);
	ASSERT_TRUE(rmsg_check_ok(p, 10, RMSG_CHECK_ENDS, 0, SEQ));
	ASSERT_FALSE(rmsg_check_ok(p, 10, RMSG_CHECK_ENDS, 0, SEQ + 1));
}

TEST(hdr_layout)
{
	uint8_t p[400];
	uint32_t st;
	uint64_t seq;

	rmsg_check_fill(p, sizeof(p), RMSG_CHECK_HDR, 3, 5);
	ASSERT_TRUE(rmsg_check_hdr(p, sizeof(p), &st, &seq));
	ASSERT_EQ(3U, st);
	ASSERT_EQ(5ULL, seq);
	/* (seq * 131 + stream * 29 + i * 7 + (i >> 8)) & 0xff */
	ASSERT_EQ(58, p[12]);
	ASSERT_EQ(27, p[300]);
	ASSERT_TRUE(rmsg_check_ok(p, sizeof(p), RMSG_CHECK_HDR, 3, 5));
	ASSERT_FALSE(rmsg_check_ok(p, sizeof(p), RMSG_CHECK_HDR, 4, 5));
	ASSERT_FALSE(rmsg_check_ok(p, sizeof(p), RMSG_CHECK_HDR, 3, 6));
	ASSERT_FALSE(rmsg_check_hdr(p, RMSG_CHECK_HDR_LEN - 1, &st, &seq));
	ASSERT_FALSE(rmsg_check_ok(p, RMSG_CHECK_HDR_LEN - 1,
				   RMSG_CHECK_HDR, 3, 5));
}

/*
 * A change to any byte a pattern writes fails the check; RMSG_CHECK_ENDS
 * leaves the bytes between its ends alone, and does not look at them.
 */
TEST(every_written_byte_checked)
{
	static const uint32_t lens[] = { 1, 7, 12, 15, 16, 17, 100, 4096 };
	static uint8_t p[4096];
	unsigned int f, l, i;
	uint32_t len;
	bool written;

	for (f = RMSG_CHECK_ENDS; f <= RMSG_CHECK_HDR; f++) {
		for (l = 0; l < ARRAY_SIZE(lens); l++) {
			len = lens[l];
			if (f == RMSG_CHECK_HDR && len < RMSG_CHECK_HDR_LEN)
				continue;
			rmsg_check_fill(p, len, f, 9, SEQ + l);
			for (i = 0; i < len; i++) {
				written = f != RMSG_CHECK_ENDS || len < 16 ||
					  i < 8 || i >= len - 8;
				p[i] ^= 0x40;
				ASSERT_EQ(!written,
					  rmsg_check_ok(p, len, f, 9, SEQ + l));
				p[i] ^= 0x40;
			}
			ASSERT_TRUE(rmsg_check_ok(p, len, f, 9, SEQ + l));
		}
	}
}

TEST(rndv_rule)
{
	uint64_t seq;
	uint32_t len;

	ASSERT_FALSE(rmsg_check_rndv(0, 3));
	ASSERT_FALSE(rmsg_check_rndv(4, 2));
	ASSERT_TRUE(rmsg_check_rndv(4, 3));
	ASSERT_TRUE(rmsg_check_rndv(4, 7));
	ASSERT_TRUE(rmsg_check_rndv(1, 0));
	/* In turn over the slots, RGet then RPut. */
	ASSERT_EQ(0U, rmsg_check_rndv_slot(4, 3));
	ASSERT_EQ(1U, rmsg_check_rndv_slot(4, 7));
	ASSERT_EQ(0U, rmsg_check_rndv_slot(4, 4 * RMSG_CHECK_RNDV_SLOTS + 3));
	ASSERT_FALSE(rmsg_check_rndv_put(4, 3));
	ASSERT_TRUE(rmsg_check_rndv_put(4, 7));
	/* Lengths: from the minimum up to RMSG_CHECK_RNDV_MAX. */
	ASSERT_EQ(1U, rmsg_check_rndv_len(0, 1));
	ASSERT_EQ(145274U, rmsg_check_rndv_len(1, 1));
	ASSERT_EQ(145857U, rmsg_check_rndv_len(1, RMSG_CHECK_HDR_LEN));
	ASSERT_EQ(176988U, rmsg_check_rndv_len(1000, 1));
	for (seq = 0; seq < 100000; seq++) {
		len = rmsg_check_rndv_len(seq, RMSG_CHECK_HDR_LEN);
		ASSERT_LE(RMSG_CHECK_HDR_LEN, len);
		ASSERT_GE(RMSG_CHECK_RNDV_MAX, len);
	}
}

TEST_HARNESS_MAIN
