// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_ring.h: free-running ring indices and sequence
 * number comparison, in particular across the 2^32 wrap.
 */
/*
 * The harness's TEST() wrappers and timeout handler take parameters they do
 * not use; -Wextra would stop the build on its code, not ours.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_ring.h"

TEST(size_ok)
{
	EXPECT_FALSE(rmsg_ring_size_ok(0));
	EXPECT_TRUE(rmsg_ring_size_ok(1));
	EXPECT_TRUE(rmsg_ring_size_ok(2));
	EXPECT_TRUE(rmsg_ring_size_ok(4096));
	EXPECT_TRUE(rmsg_ring_size_ok(1U << 31));
	EXPECT_FALSE(rmsg_ring_size_ok(3));
	EXPECT_FALSE(rmsg_ring_size_ok(4095));
	EXPECT_FALSE(rmsg_ring_size_ok(0xffffffffU));
	EXPECT_FALSE(rmsg_ring_size_ok((1U << 31) + 1));
}

TEST(used_and_free_across_wrap)
{
	/* Two entries before the wrap and five after it. */
	EXPECT_EQ(7U, rmsg_ring_used(5, 0xfffffffeU));
	EXPECT_EQ(57U, rmsg_ring_free(64, 5, 0xfffffffeU));
	EXPECT_EQ(0U, rmsg_ring_used(0, 0));
	EXPECT_EQ(0U, rmsg_ring_used(0xffffffffU, 0xffffffffU));
	EXPECT_EQ(1U, rmsg_ring_used(0, 0xffffffffU));
	EXPECT_EQ(64U, rmsg_ring_used(0x20, 0xffffffe0U));
	EXPECT_EQ(0U, rmsg_ring_free(64, 0x20, 0xffffffe0U));
}

TEST(slot_across_wrap)
{
	/* Consecutive indices take consecutive slots through the wrap. */
	EXPECT_EQ(15U, rmsg_ring_slot(16, 0xffffffffU));
	EXPECT_EQ(0U, rmsg_ring_slot(16, 0));
	EXPECT_EQ(14U, rmsg_ring_slot(16, 0xfffffffeU));
	EXPECT_EQ(1U, rmsg_ring_slot(16, 1));
	EXPECT_EQ(0U, rmsg_ring_slot(1, 0x12345678U));
	EXPECT_EQ(0x12345678U, rmsg_ring_slot(1U << 31, 0x92345678U));
}

TEST(prod_accepts_forward_moves)
{
	const u32 size = 8;
	u32 cons = 0xfffffffcU, old = 0xfffffffeU;

	EXPECT_TRUE(rmsg_ring_prod_ok(size, cons, old, old));
	EXPECT_TRUE(rmsg_ring_prod_ok(size, cons, old, old + 1));
	EXPECT_TRUE(rmsg_ring_prod_ok(size, cons, old, 0));
	/* Exactly full: cons + size, past the wrap. */
	EXPECT_TRUE(rmsg_ring_prod_ok(size, cons, old, cons + size));
	EXPECT_EQ(4U, cons + size);
}

TEST(prod_rejects_overrun)
{
	const u32 size = 8;
	u32 cons = 0xfffffffcU, old = 0xfffffffeU;

	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, cons + size + 1));
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, 0x7fffffffU));
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, cons + 0x80000000U));
}

TEST(prod_rejects_backwards)
{
	const u32 size = 8;
	u32 cons = 0xfffffffcU, old = 2;

	/* Still within size of cons, but behind what was accepted. */
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, old - 1));
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, 0xffffffffU));
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, cons));
	/* Behind the consumer as well. */
	EXPECT_FALSE(rmsg_ring_prod_ok(size, cons, old, cons - 1));
	EXPECT_TRUE(rmsg_ring_prod_ok(size, cons, old, old));
}

TEST(cons_checks)
{
	u32 prod = 3, old = 0xfffffffdU;

	EXPECT_TRUE(rmsg_ring_cons_ok(prod, old, old));
	EXPECT_TRUE(rmsg_ring_cons_ok(prod, old, 0));
	EXPECT_TRUE(rmsg_ring_cons_ok(prod, old, prod));
	EXPECT_FALSE(rmsg_ring_cons_ok(prod, old, prod + 1));
	EXPECT_FALSE(rmsg_ring_cons_ok(prod, old, old - 1));
	EXPECT_FALSE(rmsg_ring_cons_ok(prod, old, 0x80000000U));
	/* Nothing produced: only the same index is sane. */
	EXPECT_TRUE(rmsg_ring_cons_ok(old, old, old));
	EXPECT_FALSE(rmsg_ring_cons_ok(old, old, old + 1));
}

TEST(seq_compare_across_wrap)
{
	EXPECT_TRUE(rmsg_seq_before(0xffffffffU, 0));
	EXPECT_FALSE(rmsg_seq_before(0, 0xffffffffU));
	EXPECT_TRUE(rmsg_seq_after(0, 0xffffffffU));
	EXPECT_TRUE(rmsg_seq_after(5, 0xfffffff0U));
	EXPECT_FALSE(rmsg_seq_before(7, 7));
	EXPECT_FALSE(rmsg_seq_after(7, 7));
	EXPECT_TRUE(rmsg_seq_before(1, 2));
	EXPECT_TRUE(rmsg_seq_before(0x7fffffffU, 0xfffffffeU));
	/* 2^31 apart is the limit: it reads as "before" both ways. */
	EXPECT_TRUE(rmsg_seq_before(0x80000000U, 0));
	EXPECT_FALSE(rmsg_seq_before(0x7fffffffU, 0));
}

TEST(seq_between_across_wrap)
{
	u32 lo = 0xfffffff0U, hi = 0x10;

	EXPECT_TRUE(rmsg_seq_between(lo, lo, hi));
	EXPECT_TRUE(rmsg_seq_between(hi, lo, hi));
	EXPECT_TRUE(rmsg_seq_between(0, lo, hi));
	EXPECT_TRUE(rmsg_seq_between(0xffffffffU, lo, hi));
	EXPECT_FALSE(rmsg_seq_between(lo - 1, lo, hi));
	EXPECT_FALSE(rmsg_seq_between(hi + 1, lo, hi));
	EXPECT_FALSE(rmsg_seq_between(0x80000000U, lo, hi));
	EXPECT_TRUE(rmsg_seq_between(9, 9, 9));
	EXPECT_FALSE(rmsg_seq_between(10, 9, 9));
}

static u64 splitmix(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The u32 checks against the same rule on 64-bit indices that never wrap:
 * a producer run from near 2^32 through the wrap, with proposals up to a
 * few sizes backwards and forwards.
 */
TEST(prod_cons_match_64bit_model)
{
	const u64 base = 0xffffff00ULL;
	u64 seed = 0x72696e67ULL, prod = base, cons = base;
	unsigned int i;

	TH_LOG("seed %#llx", (unsigned long long)seed);
	for (i = 0; i < 200000; i++) {
		u32 size = 1U << (splitmix(&seed) % 12);
		u64 r = splitmix(&seed);
		int64_t delta = (int64_t)(r % (4 * size + 1)) - 2 * size;
		u64 np = prod + delta, nc = cons + delta;
		bool want_p, want_c;

		/* Keep the state consistent for this size. */
		if (prod - cons > size)
			cons = prod - size;
		want_p = np >= prod && np <= cons + size;
		want_c = nc >= cons && nc <= prod;
		ASSERT_EQ(want_p, rmsg_ring_prod_ok(size, (u32)cons,
						    (u32)prod, (u32)np));
		ASSERT_EQ(want_c, rmsg_ring_cons_ok((u32)prod, (u32)cons,
						    (u32)nc));
		if (r & (1ULL << 40)) {
			if (want_p)
				prod = np;
		} else if (want_c) {
			cons = nc;
		}
	}
	/* The run crossed the 2^32 wrap of the u32 indices. */
	EXPECT_GT(prod, 0x100000000ULL);
}

TEST_HARNESS_MAIN
