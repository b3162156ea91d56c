/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The random streams of the protocol core's randomized unit tests: one
 * generator (splitmix64) and one seed rule, so that RMSG_TEST_SEED repeats
 * any of them. Include after the core's headers (u32, u64).
 */
#ifndef _UNIT_RNG_H
#define _UNIT_RNG_H

#include <stdlib.h>

static inline u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform enough below @n for a test; 0 when @n is 0. */
static inline u32 rng_below(u64 *s, u32 n)
{
	return n ? (u32)(rng_next(s) % n) : 0;
}

/* Seed from RMSG_TEST_SEED when set, so a failing run can be repeated. */
static inline u64 test_seed(u64 dflt)
{
	const char *e = getenv("RMSG_TEST_SEED");

	return e ? strtoull(e, NULL, 0) : dflt;
}

#endif /* _UNIT_RNG_H */
