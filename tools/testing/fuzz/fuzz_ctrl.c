// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: rmsg_ctrl_decode(), the control messages (READY, CREDIT,
 * FIN, ...) a peer sends into the channel's receive buffers.
 *
 * Invariants: the decoder agrees with the rules of struct rmsg_wire_ctrl
 * restated here, an accepted message encodes back to the bytes received,
 * and a failed decode leaves its outputs alone.
 */
#include "fuzz.h"
#include "rmsg_wire.h"

/* The rules of struct rmsg_wire_ctrl: 16 bytes, magic, resv0, arg's width. */
/* The lease messages' arguments (rmsg_wire.h, RMSG_ASK_ARG() ...). */
static int model_lease_arg(u8 type, u64 arg)
{
	u64 units = arg >> 48;

	switch (type) {
	case RMSG_CTRL_READY:
		return arg & ~0x0001ffff0001ffffULL ? -EPROTO : 0;
	case RMSG_CTRL_ASK:
		return arg > 0xffff ? -EPROTO : 0;
	case RMSG_CTRL_GRANT:
		/* 4 KiB units, 1 to 64 MiB. */
		return !units || units > 16384 ? -EPROTO : 0;
	case RMSG_CTRL_REVOKE:
		return units ? -EPROTO : 0;
	case RMSG_CTRL_RETURN:
		return units > 1 ? -EPROTO : 0;
	}
	return -EPROTO;
}

static int model_decode(const u8 *b, size_t len)
{
	struct fuzz_in in = { b, len };
	u32 magic;
	u8 type, r0, r1, r2;
	u64 arg;

	if (len != RMSG_WIRE_CTRL_SIZE)
		return -EPROTO;
	magic = fuzz_u32(&in);
	type = fuzz_u8(&in);
	r0 = fuzz_u8(&in);
	r1 = fuzz_u8(&in);
	r2 = fuzz_u8(&in);
	arg = fuzz_u64(&in);
	if (magic != RMSG_WIRE_MAGIC || r0 || r1 || r2)
		return -EPROTO;
	switch (type) {
	case RMSG_CTRL_READY:
	case RMSG_CTRL_ASK:
	case RMSG_CTRL_GRANT:
	case RMSG_CTRL_REVOKE:
	case RMSG_CTRL_RETURN:
		return model_lease_arg(type, arg);
	case RMSG_CTRL_CLOSE:
	case RMSG_CTRL_WAKE:
	case RMSG_CTRL_RESET:
	case RMSG_CTRL_HEARTBEAT:
		return arg ? -EPROTO : 0;
	case RMSG_CTRL_CREDIT:
	case RMSG_CTRL_NOTIFY:
	case RMSG_CTRL_CTS:
		return arg > 0xffffffffULL ? -EPROTO : 0;
	case RMSG_CTRL_FIN:
	case RMSG_CTRL_DONE:
		return arg >> 40 ? -EPROTO : 0;
	case RMSG_CTRL_REKEY:
		/* Bytes in the low 16 bits: 8 to a page, in 8-byte steps. */
		return (arg & 0xffff) == 0 || (arg & 0xffff) > 4096 ||
		       (arg & 7) ? -EPROTO : 0;
	}
	return -EPROTO;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rmsg_wire_ctrl wire;
	u32 len = size > 0xffffffffU ? 0xffffffffU : (u32)size;
	u64 arg = 0x1122334455667788ULL;
	u8 type = 0xee;
	int ret;

	ret = rmsg_ctrl_decode(data, len, &type, &arg);
	FUZZ_CHECK(ret == model_decode(data, size));
	if (ret) {
		FUZZ_CHECK(type == 0xee && arg == 0x1122334455667788ULL);
		return 0;
	}
	rmsg_ctrl_encode(&wire, type, arg);
	FUZZ_CHECK(!memcmp(&wire, data, sizeof(wire)));
	if (type == RMSG_CTRL_FIN || type == RMSG_CTRL_DONE)
		FUZZ_CHECK(RMSG_FIN_ARG(RMSG_FIN_COOKIE(arg),
					RMSG_FIN_ERR(arg)) == arg);
	if (type == RMSG_CTRL_REKEY)
		FUZZ_CHECK(RMSG_REKEY_ARG(RMSG_REKEY_RKEY(arg),
					  RMSG_REKEY_EPOCH(arg),
					  RMSG_REKEY_BYTES(arg)) == arg);
	return 0;
}
