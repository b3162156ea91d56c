// SPDX-License-Identifier: GPL-2.0
/*
 * Checked messages: writing and verifying the patterns of rmsg_check.h.
 * Calls nothing but libc.
 */
#include <string.h>

#include "rmsg_check.h"

/* RMSG_CHECK_HDR's byte @i of message @seq of stream @st. */
static uint8_t hdr_byte(uint32_t st, uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + st * 29 + i * 7 + (i >> 8));
}

/*
 * rmsg_check_rndv_len() - the length of rendezvous message @seq: from @min
 * (a pattern's header, or 1) to RMSG_CHECK_RNDV_MAX, spread by a
 * multiplicative hash so that most are above 16 KiB and few repeat.
 */
uint32_t rmsg_check_rndv_len(uint64_t seq, uint32_t min)
{
	uint32_t h = (uint32_t)seq * 2654435761U;

	return min + (h >> 8) % (RMSG_CHECK_RNDV_MAX - min + 1);
}

/**
 * rmsg_check_fill() - write message @seq of stream @stream into @p
 * @p: the message, @len bytes
 * @len: its length; RMSG_CHECK_HDR needs at least RMSG_CHECK_HDR_LEN
 * @fmt: the pattern
 * @stream: the stream's index (RMSG_CHECK_HDR only)
 * @seq: the message's sequence number in its stream
 */
void rmsg_check_fill(void *p, uint32_t len, enum rmsg_check_fmt fmt,
		     uint32_t stream, uint64_t seq)
{
	uint8_t *b = p;
	uint32_t i;

	if (fmt == RMSG_CHECK_HDR) {
		memcpy(b, &stream, 4);
		memcpy(b + 4, &seq, 8);
		for (i = RMSG_CHECK_HDR_LEN; i < len; i++)
			b[i] = hdr_byte(stream, seq, i);
		return;
	}
	if (len < 16) {
		for (i = 0; i < len; i++)
			b[i] = seq >> (8 * (i & 7));
		return;
	}
	memcpy(b, &seq, 8);
	memcpy(b + len - 8, &seq, 8);
	if (fmt == RMSG_CHECK_ENDS_FULL)
		for (i = 8; i < len - 8; i++)
			b[i] = seq + i;
}

/**
 * rmsg_check_ok() - is @p message @seq of stream @stream, as
 * rmsg_check_fill() wrote it?
 * @p: the message received
 * @len: its length, which the caller has checked against the one sent
 * @fmt: the pattern
 * @stream: the stream's index (RMSG_CHECK_HDR only)
 * @seq: the sequence number expected
 *
 * Return: true when every byte the pattern writes is as written.
 */
bool rmsg_check_ok(const void *p, uint32_t len, enum rmsg_check_fmt fmt,
		   uint32_t stream, uint64_t seq)
{
	const uint8_t *b = p;
	uint64_t a, z;
	uint32_t i;

	if (fmt == RMSG_CHECK_HDR) {
		if (len < RMSG_CHECK_HDR_LEN || memcmp(b, &stream, 4) ||
		    memcmp(b + 4, &seq, 8))
			return false;
		for (i = RMSG_CHECK_HDR_LEN; i < len; i++)
			if (b[i] != hdr_byte(stream, seq, i))
				return false;
		return true;
	}
	if (len < 16) {
		for (i = 0; i < len; i++)
			if (b[i] != (uint8_t)(seq >> (8 * (i & 7))))
				return false;
		return true;
	}
	memcpy(&a, b, 8);
	memcpy(&z, b + len - 8, 8);
	if (a != seq || z != seq)
		return false;
	if (fmt == RMSG_CHECK_ENDS_FULL)
		for (i = 8; i < len - 8; i++)
			if (b[i] != (uint8_t)(seq + i))
				return false;
	return true;
}

/*
 * rmsg_check_hdr() - what an RMSG_CHECK_HDR message says it is: false
 * when @len is too short to say, else its stream and sequence number.
 */
bool rmsg_check_hdr(const void *p, uint32_t len, uint32_t *stream,
		    uint64_t *seq)
{
	if (len < RMSG_CHECK_HDR_LEN)
		return false;
	memcpy(stream, p, 4);
	memcpy(seq, (const uint8_t *)p + 4, 8);
	return true;
}
