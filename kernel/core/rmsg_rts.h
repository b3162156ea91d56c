/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: the rendezvous message (struct rmsg_rts in
 * <rdma/rmsg.h>), its segments, and how a transfer's bytes are cut into
 * RDMA READs. Nothing here allocates, sleeps or locks.
 */
#ifndef _RMSG_RTS_H
#define _RMSG_RTS_H

#include "rmsg_core_types.h"
#include <rdma/rmsg.h>

/* Segments are 4 KiB (one page) to 1 GiB of address space. */
#define RMSG_RTS_MIN_SHIFT	12
#define RMSG_RTS_MAX_SHIFT	30
/* An RPut's CTS mailbox: 4 KiB to 64 KiB. */
#define RMSG_RTS_MBOX_MAX_SHIFT	16

/*
 * A clear-to-send: the rmsg_rts layout, sent between kernels only (into
 * the sender's mailbox), so the bit is not in the UAPI beside
 * RMSG_RTS_F_PUT, though it is taken there.
 */
#define RMSG_RTS_F_CTS		(1U << 1)

/**
 * struct rmsg_rts_info - a decoded, validated struct rmsg_rts
 * @len: bytes of the message, 1 to RMSG_RNDV_MAX_LEN
 * @addr: the sender's address of the first byte
 * @cookie: the transfer's name
 * @seg_shift: log2 of the segment size
 * @nseg: segments, as many as @addr, @len and @seg_shift make; with
 *	RMSG_RTS_F_PUT, 1 (the mailbox)
 * @flags: RMSG_RTS_F_PUT, RMSG_RTS_F_CTS or 0
 * @rkey: @nseg keys, little-endian, in the buffer that was decoded
 */
struct rmsg_rts_info {
	u64 len;
	u64 addr;
	u32 cookie;
	u32 seg_shift;
	u32 nseg;
	u32 flags;
	const __le32 *rkey;
};

/**
 * struct rmsg_span - a run of bytes
 * @addr: the first
 * @len: how many
 */
struct rmsg_span {
	u64 addr;
	u64 len;
};

u32 rmsg_rts_nseg(u64 addr, u64 len, u32 seg_shift);
u32 rmsg_rts_size(u32 nseg);
struct rmsg_span rmsg_rts_seg(u64 addr, u64 len, u32 seg_shift, u32 i);
void rmsg_rts_encode(struct rmsg_rts *rts, const struct rmsg_rts_info *info);
int rmsg_rts_decode(const void *buf, u32 size, struct rmsg_rts_info *info);
int rmsg_rts_next(const void *area, u32 bytes, u32 *off,
		  struct rmsg_rts_info *info);

#endif /* _RMSG_RTS_H */
