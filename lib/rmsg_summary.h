/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg internal: reading the group bytes of an arrival summary
 * (RMSG_OFF_SUMMARY, include/uapi/rdma/rmsg.h) without a walk whose cost
 * grows word by word with the channels. Plain C on the mapped bytes, so
 * that the host's unit tests check it (tools/testing/unit/test_summary.c).
 */
#ifndef RMSG_SUMMARY_H
#define RMSG_SUMMARY_H

#include <stdbool.h>
#include <linux/types.h>

/* The group bytes of groups [8 @w, 8 @w + 8) of @summary as one word. */
static inline __u64 rmsg_summary_group_word(const __u8 *summary, __u32 w)
{
	return __atomic_load_n((const __u64 *)summary + w, __ATOMIC_RELAXED);
}

/**
 * rmsg_summary_any() - whether any of the first @ngroups group bytes is set
 * @summary: the summary's mapping, page-aligned (group bytes from 0)
 * @ngroups: the groups of the channel table as it is
 *
 * Bytes past @ngroups (a channel the library has not seen open yet) do
 * not count: its open marks it, and nothing would clear them. Whole
 * 64-byte lines (64 groups) are ORed together as they are, four 16-byte
 * accumulators and no branch per word: an empty search at 16,384 channels
 * reads its 256 bytes in about 30 instructions, under a third of what the
 * rest of an empty rmsg_msg_peek_any() costs. The bytes are set by the peers'
 * RDMA WRITEs and by the kernel, at any time: each is read once, after a
 * compiler barrier, and one set after its read is seen by the next call.
 *
 * Return: true if one is set.
 */
static inline bool rmsg_summary_any(const __u8 *summary, __u32 ngroups)
{
	typedef __u64 rmsg_v2 __attribute__((vector_size(16)));
	const rmsg_v2 *v = (const rmsg_v2 *)summary;
	__u32 nlines = ngroups >> 6, w, i;
	__u64 any = 0;

	__asm__ __volatile__("" ::: "memory");
	if (nlines) {
		rmsg_v2 a = v[0], b = v[1], c = v[2], e = v[3];

		for (i = 1; i < nlines; i++) {
			a |= v[4 * i];
			b |= v[4 * i + 1];
			c |= v[4 * i + 2];
			e |= v[4 * i + 3];
		}
		a |= b | c | e;
		any = a[0] | a[1];
	}
	/* The words after the whole lines, the last one masked. */
	for (w = nlines << 3; w < ngroups >> 3; w++)
		any |= rmsg_summary_group_word(summary, w);
	if (ngroups & 7)
		any |= rmsg_summary_group_word(summary, w) &
		       ((1ULL << (8 * (ngroups & 7))) - 1);
	return any;
}

#endif /* RMSG_SUMMARY_H */
