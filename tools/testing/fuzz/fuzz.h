/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the fuzz targets of the protocol core.
 *
 * A target is one LLVMFuzzerTestOneInput(). Built with clang and
 * -fsanitize=fuzzer it is a libFuzzer program (`make fuzz`); built with any
 * compiler and replay.c it is a regression program that runs the committed
 * seed corpus (`make unit`). Either way a broken invariant aborts with a
 * message: a fuzz target that only waits for a crash finds little.
 */
#ifndef _RMSG_FUZZ_H
#define _RMSG_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#include "rmsg_core_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort, saying which invariant broke where; libFuzzer keeps the input. */
#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant broken: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

/*
 * A fuzz input read as a stream of values. Past its end every value reads
 * as zero, so any input is a complete program of operations.
 */
struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline bool fuzz_more(const struct fuzz_in *in)
{
	return in->left > 0;
}

static inline u8 fuzz_u8(struct fuzz_in *in)
{
	u8 v = 0;

	if (in->left) {
		v = *in->p++;
		in->left--;
	}
	return v;
}

static inline u16 fuzz_u16(struct fuzz_in *in)
{
	u16 v = fuzz_u8(in);

	return v | (u16)fuzz_u8(in) << 8;
}

static inline u32 fuzz_u32(struct fuzz_in *in)
{
	u32 v = fuzz_u16(in);

	return v | (u32)fuzz_u16(in) << 16;
}

static inline u64 fuzz_u64(struct fuzz_in *in)
{
	u64 v = fuzz_u32(in);

	return v | (u64)fuzz_u32(in) << 32;
}

/* Copy up to @len bytes of the input into @buf; the rest reads as zero. */
static inline void fuzz_bytes(struct fuzz_in *in, void *buf, size_t len)
{
	size_t n = len < in->left ? len : in->left;

	memcpy(buf, in->p, n);
	memset((u8 *)buf + n, 0, len - n);
	in->p += n;
	in->left -= n;
}

#endif /* _RMSG_FUZZ_H */
