// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: rmsg_lmsg_decode(), the messages a peer kernel sends on a
 * link (a channel's control messages with its link id, the link's own,
 * and the HELLO that opens, repairs or answers a channel on it).
 *
 * Invariants: the decoder agrees with the rules of rmsg_wire.h restated
 * here from the bytes (the hello's own rules are fuzz_hello's, so the
 * model asks rmsg_hello_decode() for them), an accepted message encodes
 * back to the bytes received, and a failed decode leaves its output alone.
 */
#include "fuzz.h"
#include "rmsg_wire.h"

static bool chan_ok(u32 chan)
{
	return chan >= 1 && chan <= 0xfffffe;
}

static int model_hello(const u8 *b, size_t len, u32 chan, u64 arg)
{
	struct rmsg_hello h;
	int ret;

	if (len != 72)
		return -EPROTO;
	ret = rmsg_hello_decode(&h, b + 16, 56);
	if (ret)
		return ret;
	/* No immediates on a link, and a channel on one carries none. */
	if ((h.flags & (1U << 0 | 1U << 3)) || !chan_ok(h.channel))
		return -EPROTO;
	/* The endpoint's id of the channel, in the upper half: in a summary. */
	if ((arg >> 32) >= 65536)
		return -EPROTO;
	arg &= 0xffffffffULL;
	if (h.kind == RMSG_HELLO_CONNECT)
		return chan == 0xffffff && arg >= 1 && arg <= 65535 ?
		       0 : -EPROTO;
	return chan_ok(h.peer_channel) && chan == h.peer_channel && !arg ?
	       0 : -EPROTO;
}

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
	u32 magic, chan;
	u64 arg;
	u8 type;

	if (len < 16)
		return -EPROTO;
	magic = fuzz_u32(&in);
	type = fuzz_u8(&in);
	chan = fuzz_u8(&in);
	chan |= (u32)fuzz_u8(&in) << 8;
	chan |= (u32)fuzz_u8(&in) << 16;
	arg = fuzz_u64(&in);
	if (magic != RMSG_WIRE_MAGIC)
		return -EPROTO;
	if (type == RMSG_CTRL_HELLO)
		return model_hello(b, len, chan, arg);
	if (len != 16)
		return -EPROTO;
	switch (type) {
	case RMSG_CTRL_HEARTBEAT:
		return chan || arg ? -EPROTO : 0;
	case RMSG_CTRL_LCREDIT:
		return chan || arg > 0xffffffffULL ? -EPROTO : 0;
	case RMSG_CTRL_REFUSE:
		return chan_ok(chan) && arg >= 1 && arg <= 255 ? 0 : -EPROTO;
	case RMSG_CTRL_READY:
	case RMSG_CTRL_ASK:
	case RMSG_CTRL_GRANT:
	case RMSG_CTRL_REVOKE:
	case RMSG_CTRL_RETURN:
		return chan_ok(chan) && !model_lease_arg(type, arg) ? 0 :
		       -EPROTO;
	case RMSG_CTRL_CLOSE:
	case RMSG_CTRL_WAKE:
	case RMSG_CTRL_RESET:
		return chan_ok(chan) && !arg ? 0 : -EPROTO;
	case RMSG_CTRL_CREDIT:
	case RMSG_CTRL_NOTIFY:
	case RMSG_CTRL_CTS:
		return chan_ok(chan) && arg <= 0xffffffffULL ? 0 : -EPROTO;
	case RMSG_CTRL_FIN:
	case RMSG_CTRL_DONE:
		return chan_ok(chan) && !(arg >> 40) ? 0 : -EPROTO;
	case RMSG_CTRL_REKEY:
		return chan_ok(chan) && (arg & 0xffff) && (arg & 0xffff) <= 4096 &&
		       !(arg & 7) ? 0 : -EPROTO;
	}
	return -EPROTO;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char buf[RMSG_WIRE_LMSG_MAX];
	struct rmsg_lmsg m, before;
	u32 len = size > 0xffffffffU ? 0xffffffffU : (u32)size;
	int ret;

	memset(&m, 0xa5, sizeof(m));
	before = m;
	ret = rmsg_lmsg_decode(&m, data, len);
	FUZZ_CHECK(ret == model_decode(data, size));
	if (ret) {
		FUZZ_CHECK(!memcmp(&m, &before, sizeof(m)));
		return 0;
	}
	/* What was accepted is what was sent, byte for byte. */
	FUZZ_CHECK(rmsg_lmsg_encode(buf, &m) == len);
	FUZZ_CHECK(!memcmp(buf, data, len));
	FUZZ_CHECK(m.chan <= RMSG_LINK_NO_CHAN);
	return 0;
}
