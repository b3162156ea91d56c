// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: rmsg_rts_decode(), the rendezvous record (RTS) and the
 * clear-to-send (CTS) a peer writes, and the segments cut from them.
 *
 * Invariants: the decoder agrees with the rules restated here from
 * rmsg_rts.h and <rdma/rmsg.h>; an accepted record's segments cover its
 * bytes exactly, in order, each inside one segment window; its header
 * encodes back to the bytes received. The same bytes walked as a rekey
 * area (rmsg_rts_next()): every record it returns is one the decoder
 * accepts at that offset, offsets only grow, on the 8-byte grid, within
 * the area, and the walk ends.
 */
#include "fuzz.h"
#include "rmsg_rts.h"
#include "rmsg_wire.h"

static int model_decode(const u8 *b, size_t size)
{
	struct fuzz_in in = { b, size };
	u64 len, addr, nseg;
	u32 shift, n, flags, max_shift = RMSG_RTS_MAX_SHIFT;

	if (size < sizeof(struct rmsg_rts))
		return -EPROTO;
	len = fuzz_u64(&in);
	addr = fuzz_u64(&in);
	fuzz_u32(&in);			/* cookie: any value */
	shift = fuzz_u32(&in);
	n = fuzz_u32(&in);
	flags = fuzz_u32(&in);

	if (flags == RMSG_RTS_F_PUT)
		max_shift = RMSG_RTS_MBOX_MAX_SHIFT;
	else if (flags && flags != RMSG_RTS_F_CTS)
		return -EPROTO;
	if (!len || len > RMSG_RNDV_MAX_LEN || addr + len < addr)
		return -EPROTO;
	if (shift < RMSG_RTS_MIN_SHIFT || shift > max_shift)
		return -EPROTO;
	if (flags == RMSG_RTS_F_PUT) {
		/* The mailbox's bytes must not wrap either. */
		if (addr + (1ULL << shift) < addr)
			return -EPROTO;
		nseg = 1;
	} else {
		nseg = ((addr + len - 1) >> shift) - (addr >> shift) + 1;
	}
	if (n != nseg || size != sizeof(struct rmsg_rts) + 4 * nseg)
		return -EPROTO;
	return 0;
}

static void check_segments(const struct rmsg_rts_info *info)
{
	u64 next = info->addr, win = 1ULL << info->seg_shift;
	struct rmsg_span s;
	u32 i;

	FUZZ_CHECK(rmsg_rts_nseg(info->addr, info->len, info->seg_shift) ==
		   info->nseg);
	for (i = 0; i < info->nseg; i++) {
		s = rmsg_rts_seg(info->addr, info->len, info->seg_shift, i);
		FUZZ_CHECK(s.addr == next);
		FUZZ_CHECK(s.len >= 1 && s.len <= win);
		FUZZ_CHECK(s.addr >> info->seg_shift ==
			   (s.addr + s.len - 1) >> info->seg_shift);
		next += s.len;
	}
	FUZZ_CHECK(next == info->addr + info->len);
}

static void check_area_walk(const u8 *area, size_t size)
{
	u32 bytes = (size > RMSG_REKEY_AREA ? RMSG_REKEY_AREA : size) & ~7U;
	struct rmsg_rts_info info, again;
	u32 off = 0, prev, n = 0;
	int ret;

	for (;;) {
		prev = off;
		ret = rmsg_rts_next(area, bytes, &off, &info);
		if (ret <= 0) {
			FUZZ_CHECK(ret == 0 ? off == bytes : ret == -EPROTO);
			FUZZ_CHECK(off == prev);
			break;
		}
		FUZZ_CHECK(off > prev && off <= bytes && !(off % 8));
		FUZZ_CHECK(!rmsg_rts_decode(area + prev,
					    rmsg_rts_size(info.nseg), &again));
		FUZZ_CHECK(again.cookie == info.cookie &&
			   again.nseg == info.nseg);
		FUZZ_CHECK(++n <= RMSG_REKEY_AREA / 8);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rmsg_rts_info info;
	struct rmsg_rts rts;
	u32 len = size > 0xffffffffU ? 0xffffffffU : (u32)size;
	int ret;

	/* The kernel decodes its own copy, which may sit anywhere. */
	uint8_t *copy = malloc(size ? size : 1);

	FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	ret = rmsg_rts_decode(copy, len, &info);
	FUZZ_CHECK(ret == model_decode(data, size));
	if (!ret) {
		FUZZ_CHECK(info.rkey == (const __le32 *)(copy + sizeof(rts)));
		FUZZ_CHECK(rmsg_rts_size(info.nseg) == size);
		if (info.flags != RMSG_RTS_F_PUT)
			check_segments(&info);
		rmsg_rts_encode(&rts, &info);
		FUZZ_CHECK(!memcmp(&rts, data, sizeof(rts)));
	}
	check_area_walk(copy, size);
	free(copy);
	return 0;
}
