// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: rmsg_hello_decode(), the connection handshake a peer sends
 * in the rdma_cm private data, or in a HELLO on a link.
 *
 * Invariants: the decoder agrees with an independent statement of the
 * rules in rmsg_wire.h (a second, plainer reading of them), a decoded hello
 * encodes back to the very bytes received, and encode then decode is the
 * identity for every valid hello.
 */
#include "fuzz.h"
#include "rmsg_wire.h"
#include "rmsg_vb.h"

/* The rules of rmsg_hello_decode()'s kernel-doc, read from the bytes. */
static int model_decode(const u8 *b, size_t len)
{
	struct fuzz_in in = { b, len };
	u32 magic, channel, peer, epoch, rkey, size, seq, freed, arrived;
	u8 version, kind;
	u16 flags;
	u64 inc, addr;

	if (len < RMSG_WIRE_HELLO_SIZE)
		return -EPROTO;
	magic = fuzz_u32(&in);
	version = fuzz_u8(&in);
	kind = fuzz_u8(&in);
	flags = fuzz_u16(&in);
	inc = fuzz_u64(&in);
	addr = fuzz_u64(&in);
	channel = fuzz_u32(&in);
	peer = fuzz_u32(&in);
	epoch = fuzz_u32(&in);
	rkey = fuzz_u32(&in);
	size = fuzz_u32(&in);
	seq = fuzz_u32(&in);
	freed = fuzz_u32(&in);
	arrived = fuzz_u32(&in);

	if (magic != RMSG_WIRE_MAGIC)
		return -EPROTO;
	if (version != RMSG_WIRE_VERSION)
		return -EPROTONOSUPPORT;
	if (flags & ~RMSG_HELLO_F_ALL || !inc)
		return -EPROTO;
	if (channel == RMSG_WIRE_NO_CHANNEL)
		return -EPROTO;
	/* Block addresses, keys and rx_seq: any value. */
	(void)addr;
	(void)rkey;
	(void)seq;
	if (size < RMSG_VB_MIN_BLOCK || size > RMSG_VB_MAX_BLOCK || size % 16)
		return -EPROTO;
	if ((u32)(arrived - freed) > size)
		return -EPROTO;
	switch (kind) {
	case RMSG_HELLO_CONNECT:
		return epoch || peer != RMSG_WIRE_NO_CHANNEL ||
		       arrived != freed ? -EPROTO : 0;
	case RMSG_HELLO_RECONNECT:
		return !epoch || peer == RMSG_WIRE_NO_CHANNEL ? -EPROTO : 0;
	case RMSG_HELLO_ACCEPT:
		return peer == RMSG_WIRE_NO_CHANNEL ? -EPROTO : 0;
	}
	return -EPROTO;
}

static void check_roundtrip(const struct rmsg_hello *h)
{
	struct rmsg_wire_hello wire;
	struct rmsg_hello back;

	rmsg_hello_encode(&wire, h);
	memset(&back, 0x5a, sizeof(back));
	FUZZ_CHECK(rmsg_hello_decode(&back, &wire, sizeof(wire)) == 0);
	FUZZ_CHECK(back.kind == h->kind && back.flags == h->flags &&
		   back.incarnation == h->incarnation &&
		   back.block_addr == h->block_addr &&
		   back.channel == h->channel &&
		   back.peer_channel == h->peer_channel &&
		   back.epoch == h->epoch && back.block_rkey == h->block_rkey &&
		   back.block_size == h->block_size &&
		   back.rx_seq == h->rx_seq && back.rx_freed == h->rx_freed &&
		   back.rx_arrived == h->rx_arrived);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rmsg_wire_hello wire;
	struct rmsg_hello h, before;
	u32 len = size > 0xffffffffU ? 0xffffffffU : (u32)size;
	int ret, want;

	/* A failed decode must leave the result alone. */
	memset(&h, 0xa5, sizeof(h));
	before = h;
	ret = rmsg_hello_decode(&h, data, len);
	want = model_decode(data, size);
	FUZZ_CHECK(ret == want);
	if (ret) {
		FUZZ_CHECK(!memcmp(&h, &before, sizeof(h)));
		return 0;
	}

	/* What was accepted is what was sent, byte for byte. */
	rmsg_hello_encode(&wire, &h);
	FUZZ_CHECK(!memcmp(&wire, data, sizeof(wire)));
	FUZZ_CHECK(h.block_size >= RMSG_VB_MIN_BLOCK &&
		   h.block_size <= RMSG_VB_MAX_BLOCK);
	FUZZ_CHECK(h.rx_arrived - h.rx_freed <= h.block_size);
	check_roundtrip(&h);

	/* Shorter than a hello never decodes, however valid the prefix. */
	FUZZ_CHECK(rmsg_hello_decode(&h, data, RMSG_WIRE_HELLO_SIZE - 1) ==
		   -EPROTO);
	return 0;
}
