// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for lib/rmsg_summary.h: an empty search's look at the
 * arrival summary's group bytes sees every byte of the channel table and
 * none past it, at every table size, in whole lines and in the words
 * after them.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include <stdlib.h>
#include <string.h>

#include <rdma/rmsg.h>
#include "rmsg_summary.h"

#define GROUPS	(RMSG_MAX_CHANNELS >> RMSG_SUMMARY_SHIFT)

FIXTURE(summary) {
	__u8 *bytes;
};

FIXTURE_SETUP(summary)
{
	self->bytes = aligned_alloc(4096, RMSG_SUMMARY_SIZE);
	ASSERT_NE(NULL, self->bytes);
	memset(self->bytes, 0, RMSG_SUMMARY_SIZE);
}

FIXTURE_TEARDOWN(summary)
{
	free(self->bytes);
}

/* Every table size against every single set byte: set iff inside. */
TEST_F(summary, one_byte_at_every_size)
{
	__u32 ngroups, g;
	unsigned long wrong = 0;

	for (ngroups = 0; ngroups <= GROUPS; ngroups++) {
		EXPECT_FALSE(rmsg_summary_any(self->bytes, ngroups));
		for (g = 0; g < GROUPS; g++) {
			self->bytes[g] = 0x01 << (g % 8);
			if (rmsg_summary_any(self->bytes, ngroups) !=
			    (g < ngroups))
				wrong++;
			self->bytes[g] = 0;
		}
	}
	EXPECT_EQ(0, wrong);
}

/* A channel byte (past the group bytes) is not a group byte. */
TEST_F(summary, channel_bytes_do_not_count)
{
	memset(self->bytes + RMSG_SUMMARY_CHANNELS, 0xff,
	       RMSG_SUMMARY_SIZE - RMSG_SUMMARY_CHANNELS);
	EXPECT_FALSE(rmsg_summary_any(self->bytes, GROUPS));
	self->bytes[GROUPS - 1] = 1;
	EXPECT_TRUE(rmsg_summary_any(self->bytes, GROUPS));
}

TEST_HARNESS_MAIN
