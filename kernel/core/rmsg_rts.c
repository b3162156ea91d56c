// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: the rendezvous message.
 *
 * The sender registers a message for remote reading in segments of
 * 2^seg_shift bytes of address space, one memory registration each, so
 * that no registration holds more pages than its device allows. Segment
 * boundaries are multiples of the segment size, which both kernels compute
 * from (addr, len, seg_shift) alone: the message names only its keys.
 *
 * The receiver's kernel decodes the record from its own copy and checks
 * that every field agrees with the others before it reads anything with
 * the keys. An RPut turns this around: the RTS names a mailbox of the
 * sender's, the receiver registers the destination the same way and
 * writes its keys there as a CTS, and the sender writes the bytes.
 */
#include "rmsg_core_types.h"
#include "rmsg_rts.h"

static_assert(sizeof(struct rmsg_rts) == 32, "rts header size");

/**
 * rmsg_rts_nseg() - segments a message covers
 * @addr: its first byte
 * @len: its length, at least 1, with @addr + @len not wrapping
 * @seg_shift: log2 of the segment size
 *
 * Return: the number of segments.
 */
u32 rmsg_rts_nseg(u64 addr, u64 len, u32 seg_shift)
{
	u64 first = addr >> seg_shift;
	u64 last = (addr + len - 1) >> seg_shift;

	return (u32)(last - first + 1);
}

/* Bytes of a struct rmsg_rts with @nseg keys. */
u32 rmsg_rts_size(u32 nseg)
{
	return (u32)sizeof(struct rmsg_rts) + nseg * (u32)sizeof(__le32);
}

/**
 * rmsg_rts_seg() - the bytes of a message in one segment
 * @addr: the message's first byte
 * @len: its length
 * @seg_shift: log2 of the segment size
 * @i: the segment, below rmsg_rts_nseg()
 *
 * Return: the span of the message's bytes that segment @i holds.
 */
struct rmsg_span rmsg_rts_seg(u64 addr, u64 len, u32 seg_shift, u32 i)
{
	u64 start = ((addr >> seg_shift) + i) << seg_shift;
	/*
	 * Last bytes, not ends: the window at the top of the address space
	 * ends at 2^64, which a u64 does not hold.
	 */
	u64 last = start + (((u64)1 << seg_shift) - 1);
	struct rmsg_span s;

	if (start < addr)
		start = addr;
	if (last > addr + len - 1)
		last = addr + len - 1;
	s.addr = start;
	s.len = last - start + 1;
	return s;
}

/**
 * rmsg_rts_encode() - fill the header of a struct rmsg_rts
 * @rts: room for rmsg_rts_size(@info->nseg) bytes; the caller writes the
 *	@info->nseg keys (little-endian) in @rts->rkey as it registers them
 * @info: the fields; @info->rkey is not used
 */
void rmsg_rts_encode(struct rmsg_rts *rts, const struct rmsg_rts_info *info)
{
	rts->len = cpu_to_le64(info->len);
	rts->addr = cpu_to_le64(info->addr);
	rts->cookie = cpu_to_le32(info->cookie);
	rts->seg_shift = cpu_to_le32(info->seg_shift);
	rts->nseg = cpu_to_le32(info->nseg);
	rts->flags = cpu_to_le32(info->flags);
}

/**
 * rmsg_rts_decode() - check and decode a struct rmsg_rts
 * @buf: the record's payload, a copy the peer can no longer change
 * @size: its length in bytes
 * @info: out: the fields; @info->rkey points into @buf
 *
 * Return: 0, or -EPROTO when the payload is not a rendezvous message an
 * rmsg kernel could have sent.
 */
int rmsg_rts_decode(const void *buf, u32 size, struct rmsg_rts_info *info)
{
	const struct rmsg_rts *rts = buf;
	u32 max_shift = RMSG_RTS_MAX_SHIFT, nseg;

	if (size < sizeof(*rts))
		return -EPROTO;
	info->len = le64_to_cpu(rts->len);
	info->addr = le64_to_cpu(rts->addr);
	info->cookie = le32_to_cpu(rts->cookie);
	info->seg_shift = le32_to_cpu(rts->seg_shift);
	info->nseg = le32_to_cpu(rts->nseg);
	info->flags = le32_to_cpu(rts->flags);
	info->rkey = rts->rkey;
	if (info->flags != 0 && info->flags != RMSG_RTS_F_PUT &&
	    info->flags != RMSG_RTS_F_CTS)
		return -EPROTO;
	if (info->flags == RMSG_RTS_F_PUT)
		max_shift = RMSG_RTS_MBOX_MAX_SHIFT;
	/* The peer chose the shift: check it before shifting by it. */
	if (info->seg_shift < RMSG_RTS_MIN_SHIFT || info->seg_shift > max_shift)
		return -EPROTO;
	if (info->flags == RMSG_RTS_F_PUT) {
		/* The mailbox: one segment of 2^seg_shift bytes at addr. */
		nseg = 1;
		if (info->addr + ((u64)1 << info->seg_shift) < info->addr)
			return -EPROTO;
	} else {
		nseg = rmsg_rts_nseg(info->addr, info->len, info->seg_shift);
	}
	if (!info->len || info->len > RMSG_RNDV_MAX_LEN ||
	    info->addr + info->len < info->addr ||
	    info->nseg != nseg || size != rmsg_rts_size(info->nseg))
		return -EPROTO;
	return 0;
}

/**
 * rmsg_rts_next() - the next RTS in a packed run of them (a rekey area)
 * @area: the bytes, a copy the peer can no longer change
 * @bytes: how many; a multiple of 8
 * @off: in: where the next record starts; out: past it (rounded up to 8)
 * @info: out: the record, as rmsg_rts_decode() gives it
 *
 * Return: 1 with @info, 0 at the end of @area, or -EPROTO when what is
 * there is not a whole, valid record.
 */
int rmsg_rts_next(const void *area, u32 bytes, u32 *off,
		  struct rmsg_rts_info *info)
{
	const struct rmsg_rts *rts;
	u32 left, nseg, size;
	int ret;

	if (*off == bytes)
		return 0;
	if (*off > bytes || *off % 8)
		return -EPROTO;
	left = bytes - *off;
	if (left < sizeof(*rts))
		return -EPROTO;
	rts = (const struct rmsg_rts *)((const u8 *)area + *off);
	nseg = le32_to_cpu(rts->nseg);
	/* Bound the count before it sizes anything. */
	if (nseg > (left - sizeof(*rts)) / sizeof(__le32))
		return -EPROTO;
	size = rmsg_rts_size(nseg);
	ret = rmsg_rts_decode(rts, size, info);
	if (ret)
		return ret;
	/* Within @bytes: @left and @bytes are multiples of 8. */
	*off += (size + 7) & ~7U;
	return 1;
}
