/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checked messages: the patterns rmsg's test programs write into the
 * messages they send and verify in those they receive, and the rule by
 * which a checked stream sends some of its messages by rendezvous. Shared
 * by rmsg-perf (tools/rmsg-perf) and the selftests' byte-checked streams
 * (selftests/rmsg_test.h), so that both check the same way and a change
 * to a pattern is made once.
 *
 * Two kinds of pattern, because the two check different things:
 *
 *  - RMSG_CHECK_ENDS (and _FULL): a benchmark's. The message's sequence
 *    number in its first and last 8 bytes (in every byte, under 16 bytes),
 *    which costs the same at any size; _FULL also writes every byte
 *    between, from the sequence number and the byte's place. The receiver
 *    knows which message it expects and stops at the first that is not
 *    it. rmsg-perf's peers of older versions check these very bytes, so
 *    the layout may not change.
 *  - RMSG_CHECK_HDR: a test's. The stream's index and the sequence number
 *    in a header of RMSG_CHECK_HDR_LEN bytes, then a pattern of both, so
 *    that a receiver that expects anything (lost, repeated, misrouted
 *    messages) can say what it got and count it rather than stop.
 *
 * Plain C with no system call and nothing of rmsg's but the message
 * bytes; not part of librmsg (lib/), which holds only what programs using
 * rmsg need.
 */
#ifndef _RMSG_CHECK_H
#define _RMSG_CHECK_H

#include <stdbool.h>
#include <stdint.h>

enum rmsg_check_fmt {
	RMSG_CHECK_ENDS,	/* sequence number at both ends */
	RMSG_CHECK_ENDS_FULL,	/* and every byte between */
	RMSG_CHECK_HDR,		/* stream, sequence number, pattern */
};

/* RMSG_CHECK_HDR: u32 stream index, u64 sequence number, host order. */
#define RMSG_CHECK_HDR_LEN	12

/*
 * The rendezvous mix of a checked stream: every @every-th message of it
 * (those with seq % every == every - 1) goes by rendezvous, sent with
 * rmsg_send_zc() from one of RMSG_CHECK_RNDV_SLOTS buffers (by turn: at
 * most that many in flight, the kernel's window is 8 too), by RGet and
 * RPut in turn, and of a length up to RMSG_CHECK_RNDV_MAX
 * (rmsg_check_rndv_len()). Both sides derive all of it from the sequence
 * number, so the receiver knows what to expect of each message.
 */
#define RMSG_CHECK_RNDV_SLOTS	8
#define RMSG_CHECK_RNDV_MAX	(192U << 10)

static inline bool rmsg_check_rndv(unsigned int every, uint64_t seq)
{
	return every && seq % every == every - 1;
}

/* The buffer slot of rendezvous message @seq (rmsg_check_rndv()). */
static inline unsigned int rmsg_check_rndv_slot(unsigned int every,
						uint64_t seq)
{
	return seq / every % RMSG_CHECK_RNDV_SLOTS;
}

/* Does rendezvous message @seq go by RPut (RMSG_ZC_PUT), not RGet? */
static inline bool rmsg_check_rndv_put(unsigned int every, uint64_t seq)
{
	return seq / every % 2;
}

uint32_t rmsg_check_rndv_len(uint64_t seq, uint32_t min);
void rmsg_check_fill(void *p, uint32_t len, enum rmsg_check_fmt fmt,
		     uint32_t stream, uint64_t seq);
bool rmsg_check_ok(const void *p, uint32_t len, enum rmsg_check_fmt fmt,
		   uint32_t stream, uint64_t seq);
bool rmsg_check_hdr(const void *p, uint32_t len, uint32_t *stream,
		    uint64_t *seq);

#endif /* _RMSG_CHECK_H */
