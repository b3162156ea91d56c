// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_wire.c: the connection handshake that travels in
 * the rdma_cm private data, decoded from untrusted bytes.
 */
/* The harness's wrappers take parameters they do not use. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include <stdlib.h>

#include "rmsg_wire.h"

static const struct rmsg_hello good_connect = {
	.kind		= RMSG_HELLO_CONNECT,
	.incarnation	= 0x0123456789abcdefULL,
	.block_addr	= 0xffff888012345000ULL,
	.channel	= 7,
	.peer_channel	= RMSG_WIRE_NO_CHANNEL,
	.epoch		= 0,
	.block_rkey	= 0x1234,
	.block_size	= 32768,
	.rx_seq		= 0xfffffff0,
	.rx_freed	= 0x80000000,
	.rx_arrived	= 0x80000000,
};

static int decode(const struct rmsg_wire_hello *w, struct rmsg_hello *h)
{
	return rmsg_hello_decode(h, w, sizeof(*w));
}

/*
 * Field by field: struct rmsg_hello has padding, whose bytes a decoded
 * copy on the stack leaves as they were (memcmp() would read them).
 */
static bool hello_eq(const struct rmsg_hello *a, const struct rmsg_hello *b)
{
	return a->kind == b->kind && a->flags == b->flags &&
	       a->incarnation == b->incarnation &&
	       a->block_addr == b->block_addr && a->channel == b->channel &&
	       a->peer_channel == b->peer_channel && a->epoch == b->epoch &&
	       a->block_rkey == b->block_rkey &&
	       a->block_size == b->block_size && a->rx_seq == b->rx_seq &&
	       a->rx_freed == b->rx_freed && a->rx_arrived == b->rx_arrived;
}

TEST(size_fits_req_private_data)
{
	EXPECT_EQ(56, sizeof(struct rmsg_wire_hello));
}

TEST(round_trip)
{
	struct rmsg_wire_hello w;
	struct rmsg_hello h;

	rmsg_hello_encode(&w, &good_connect);
	ASSERT_EQ(0, decode(&w, &h));
	EXPECT_TRUE(hello_eq(&h, &good_connect));
}

/* Fields are little-endian at fixed offsets, whatever the host. */
TEST(wire_layout)
{
	struct rmsg_wire_hello w;
	const unsigned char *b = (const unsigned char *)&w;

	rmsg_hello_encode(&w, &good_connect);
	EXPECT_EQ('R', b[0]);
	EXPECT_EQ('M', b[1]);
	EXPECT_EQ('S', b[2]);
	EXPECT_EQ('G', b[3]);
	EXPECT_EQ(RMSG_WIRE_VERSION, b[4]);
	EXPECT_EQ(RMSG_HELLO_CONNECT, b[5]);
	EXPECT_EQ(0xef, b[8]);		/* incarnation, low byte first */
	EXPECT_EQ(0x01, b[15]);
	EXPECT_EQ(7, b[24]);		/* channel */
	EXPECT_EQ(0x34, b[36]);		/* block_rkey */
	EXPECT_EQ(0x12, b[37]);
	EXPECT_EQ(0x00, b[40]);		/* block_size 32768 = 0x8000 */
	EXPECT_EQ(0x80, b[41]);
	EXPECT_EQ(0xf0, b[44]);		/* rx_seq 0xfffffff0 */
	EXPECT_EQ(0xff, b[47]);
	EXPECT_EQ(0x80, b[51]);		/* rx_freed 0x80000000 */
	EXPECT_EQ(0, b[52] | b[53] | b[54]);	/* rx_arrived 0x80000000 */
	EXPECT_EQ(0x80, b[55]);
}

/* Transports pad private data; a short one is never read past its end. */
TEST(length)
{
	unsigned char buf[256];
	struct rmsg_hello h;
	u32 len;

	memset(buf, 0, sizeof(buf));
	rmsg_hello_encode((struct rmsg_wire_hello *)buf, &good_connect);
	EXPECT_EQ(0, rmsg_hello_decode(&h, buf, sizeof(buf)));
	for (len = 0; len < RMSG_WIRE_HELLO_SIZE; len++)
		EXPECT_EQ(-EPROTO, rmsg_hello_decode(&h, buf, len));
	EXPECT_EQ(-EPROTO, rmsg_hello_decode(&h, NULL, 56));
}

TEST(rejects_bad_fields)
{
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in;

	rmsg_hello_encode(&w, &good_connect);
	w.magic ^= 1;
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	rmsg_hello_encode(&w, &good_connect);
	w.version = RMSG_WIRE_VERSION + 1;
	EXPECT_EQ(-EPROTONOSUPPORT, decode(&w, &h));

	rmsg_hello_encode(&w, &good_connect);
	w.flags = cpu_to_le16(RMSG_HELLO_F_ALL + 1);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	/* Every known flag may come alone. */
	in = good_connect;
	in.flags = RMSG_HELLO_F_REKEY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
	in.flags = RMSG_HELLO_F_REKEY | RMSG_HELLO_F_SUMMARY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
	/* A leased block: decoded; whether to lease is the module's. */
	in.flags = RMSG_HELLO_F_LEASE | RMSG_HELLO_F_SUMMARY;
	rmsg_hello_encode(&w, &in);
	ASSERT_EQ(0, decode(&w, &h));
	EXPECT_EQ(RMSG_HELLO_F_LEASE | RMSG_HELLO_F_SUMMARY, h.flags);

	/* A new channel's block holds nothing yet. */
	rmsg_hello_encode(&w, &good_connect);
	w.rx_arrived = cpu_to_le32(0x80000010);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	/* A known flag survives the round trip. */
	in = good_connect;
	in.flags = RMSG_HELLO_F_IMM_ARRIVAL;
	rmsg_hello_encode(&w, &in);
	ASSERT_EQ(0, decode(&w, &h));
	EXPECT_EQ(RMSG_HELLO_F_IMM_ARRIVAL, h.flags);

	in = good_connect;
	in.incarnation = 0;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	in = good_connect;
	in.channel = RMSG_WIRE_NO_CHANNEL;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	/* Kinds outside the enum. */
	in = good_connect;
	in.kind = 0;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.kind = RMSG_HELLO_ACCEPT + 1;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
}

/*
 * A hello that stands for its sender's READY (RMSG_HELLO_F_READY): only a
 * leased channel's, and only a first connection's (a RECONNECT's READY
 * carries where the leases stand).
 */
TEST(ready_in_hello_needs_a_lease)
{
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in = good_connect;

	in.flags = RMSG_HELLO_F_LEASE | RMSG_HELLO_F_READY;
	rmsg_hello_encode(&w, &in);
	ASSERT_EQ(0, decode(&w, &h));
	EXPECT_EQ(RMSG_HELLO_F_LEASE | RMSG_HELLO_F_READY, h.flags);

	in.flags = RMSG_HELLO_F_READY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.flags = RMSG_HELLO_F_READY | RMSG_HELLO_F_SUMMARY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	in.kind = RMSG_HELLO_ACCEPT;
	in.peer_channel = 9;
	in.flags = RMSG_HELLO_F_LEASE | RMSG_HELLO_F_READY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));

	in.kind = RMSG_HELLO_RECONNECT;
	in.epoch = 1;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.flags = RMSG_HELLO_F_LEASE;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
}

/* The receive block a peer offers must be one rmsg could have made. */
TEST(rejects_bad_block_size)
{
	const u32 bad[] = { 0, 16, 4095, 4096 + 8, 1U << 31, 0xffffffffU };
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in = good_connect;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		in.block_size = bad[i];
		rmsg_hello_encode(&w, &in);
		EXPECT_EQ(-EPROTO, decode(&w, &h)) TH_LOG("size %u", bad[i]);
	}
	in.block_size = 4096;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
}

/* Each kind has its own rule for peer_channel and epoch. */
TEST(kind_rules)
{
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in = good_connect;

	in.epoch = 1;			/* a first attempt has epoch 0 */
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.epoch = 0;
	in.peer_channel = 3;		/* and names no channel of ours */
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	in = good_connect;
	in.kind = RMSG_HELLO_RECONNECT;
	in.peer_channel = 3;
	in.epoch = 0;			/* a repair comes after attempt 0 */
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.epoch = 5;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
	in.peer_channel = RMSG_WIRE_NO_CHANNEL;	/* it names the channel */
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));

	in = good_connect;
	in.kind = RMSG_HELLO_ACCEPT;
	rmsg_hello_encode(&w, &in);	/* an accept names the channel */
	EXPECT_EQ(-EPROTO, decode(&w, &h));
	in.peer_channel = 7;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
}

/*
 * Where the receive stream stands: complete records lie between what was
 * released and at most a block beyond it, in free-running counters.
 */
TEST(stream_counters)
{
	static const u32 freed[] = { 0, 0x80000000, 0xfffffff0, 0xffffffff };
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(freed); i++) {
		for (k = RMSG_HELLO_CONNECT; k <= RMSG_HELLO_ACCEPT; k++) {
			in = good_connect;
			in.kind = k;
			if (k != RMSG_HELLO_CONNECT) {
				in.peer_channel = 3;
				in.epoch = k == RMSG_HELLO_RECONNECT;
			}
			in.rx_seq = freed[i] * 7;
			in.rx_freed = freed[i];
			in.rx_arrived = freed[i];
			rmsg_hello_encode(&w, &in);
			ASSERT_EQ(0, decode(&w, &h));
			EXPECT_TRUE(hello_eq(&h, &in));

			/* Up to a whole block ahead, across 2^32 too. */
			in.rx_arrived = freed[i] + in.block_size;
			rmsg_hello_encode(&w, &in);
			EXPECT_EQ(k == RMSG_HELLO_CONNECT ? -EPROTO : 0,
				  decode(&w, &h)) TH_LOG("kind %u", k);
			if (k != RMSG_HELLO_CONNECT)
				EXPECT_EQ(in.rx_arrived, h.rx_arrived);
			in.rx_arrived = freed[i] + 16;
			rmsg_hello_encode(&w, &in);
			EXPECT_EQ(k == RMSG_HELLO_CONNECT ? -EPROTO : 0,
				  decode(&w, &h)) TH_LOG("kind %u", k);

			/* Not beyond a block, never behind freed. */
			in.rx_arrived = freed[i] + in.block_size + 16;
			rmsg_hello_encode(&w, &in);
			EXPECT_EQ(-EPROTO, decode(&w, &h)) TH_LOG("kind %u", k);
			in.rx_arrived = freed[i] - 16;
			rmsg_hello_encode(&w, &in);
			EXPECT_EQ(-EPROTO, decode(&w, &h)) TH_LOG("kind %u", k);
			in.rx_arrived = freed[i] - 1;
			rmsg_hello_encode(&w, &in);
			EXPECT_EQ(-EPROTO, decode(&w, &h)) TH_LOG("kind %u", k);
		}
	}
}

/*
 * Random bytes, and valid hellos with random bit flips: decoding never
 * reads out of bounds (ASan) and whatever it accepts encodes back to the
 * same 56 bytes.
 */
TEST(random_input)
{
	unsigned int seed = 0x68656c6f, i, j, accepted = 0, rejected = 0;
	struct rmsg_wire_hello w, again;
	struct rmsg_hello h, in;
	unsigned char *b = (unsigned char *)&w;

	for (i = 0; i < 200000; i++) {
		if (i & 1) {
			for (j = 0; j < sizeof(w); j++)
				b[j] = rand_r(&seed);
		} else {
			in = good_connect;
			in.kind = 1 + rand_r(&seed) % 3;
			if (in.kind != RMSG_HELLO_CONNECT) {
				in.peer_channel = rand_r(&seed) % 100;
				in.epoch = 1 + rand_r(&seed) % 100;
				in.rx_arrived = in.rx_freed +
						rand_r(&seed) % 32769;
			}
			rmsg_hello_encode(&w, &in);
			b[rand_r(&seed) % sizeof(w)] ^= 1 << (rand_r(&seed) % 8);
		}
		if (decode(&w, &h)) {
			rejected++;
			continue;
		}
		accepted++;
		rmsg_hello_encode(&again, &h);
		ASSERT_EQ(0, memcmp(&again, &w, sizeof(w)));
	}
	/* Both outcomes happened, or the test proves nothing. */
	EXPECT_LT(1000, accepted);
	EXPECT_LT(1000, rejected);
	TH_LOG("%u accepted, %u rejected", accepted, rejected);
}

/* Control messages: exactly 16 bytes, known type, zero where reserved. */
TEST(ctrl_messages)
{
	struct rmsg_wire_ctrl w;
	unsigned char buf[32];
	u8 type;
	u64 arg;

	EXPECT_EQ(16, sizeof(w));
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, 0);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_READY, type);
	EXPECT_EQ(0, arg);
	rmsg_ctrl_encode(&w, RMSG_CTRL_CLOSE, 0);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_CLOSE, type);

	/* A SEND of another length is not a control message. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &w, sizeof(w));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(buf, 15, &type, &arg));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(buf, 17, &type, &arg));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(NULL, 16, &type, &arg));

	rmsg_ctrl_encode(&w, 0, 0);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_REKEY + 1, 0);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* RESET, like CLOSE, carries nothing. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_RESET, 0);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_RESET, type);
	rmsg_ctrl_encode(&w, RMSG_CTRL_RESET, 1);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_HEARTBEAT, 0);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_HEARTBEAT, type);
	rmsg_ctrl_encode(&w, RMSG_CTRL_HEARTBEAT, 7);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* RPut: CTS names a cookie, DONE is shaped as FIN. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_CTS, 0xffffffffULL);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_CTS, type);
	rmsg_ctrl_encode(&w, RMSG_CTRL_CTS, 1ULL << 32);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_DONE, RMSG_FIN_ARG(7, EIO));
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_DONE, type);
	EXPECT_EQ(EIO, RMSG_FIN_ERR(arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_DONE, 1ULL << 40);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* FIN: a 32-bit cookie and an 8-bit errno, nothing above. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_FIN, RMSG_FIN_ARG(0xfffffffe, EMSGSIZE));
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_FIN, type);
	EXPECT_EQ(0xfffffffe, RMSG_FIN_COOKIE(arg));
	EXPECT_EQ(EMSGSIZE, RMSG_FIN_ERR(arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_FIN, 1ULL << 40);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* A rekey area is a whole number of 8-byte units, at most a page. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_REKEY,
			 RMSG_REKEY_ARG(0xdeadbeef, 0x12345, 4096));
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_REKEY, type);
	EXPECT_EQ(0xdeadbeef, RMSG_REKEY_RKEY(arg));
	EXPECT_EQ(0x2345, RMSG_REKEY_EPOCH(arg));
	EXPECT_EQ(4096, RMSG_REKEY_BYTES(arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_REKEY, RMSG_REKEY_ARG(1, 1, 0));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_REKEY, RMSG_REKEY_ARG(1, 1, 4104));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_REKEY, RMSG_REKEY_ARG(1, 1, 36));
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_WAKE, 1);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* Counters are 32-bit; a wider one is not from a sane peer. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_CREDIT, 0xffffffffULL);
	ASSERT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	EXPECT_EQ(RMSG_CTRL_CREDIT, type);
	EXPECT_EQ(0xffffffffULL, arg);
	rmsg_ctrl_encode(&w, RMSG_CTRL_NOTIFY, 1ULL << 32);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_CREDIT, 1ULL << 40);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	/* READY carries a lease resume point (RMSG_READY_ARG()) and no more. */
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, 1ULL << 17);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, 1ULL << 49);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, RMSG_READY_ARG(7, 1, 0xffff, 1));
	EXPECT_EQ(0, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, 0);
	w.chan[2] = 1;
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
	rmsg_ctrl_encode(&w, RMSG_CTRL_READY, 0);
	w.magic ^= cpu_to_le32(1U << 31);
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(&w, sizeof(w), &type, &arg));
}

/* --- block leases ------------------------------------------------------ */

static int lease_decode(u8 type, u64 arg, struct rmsg_lease_msg *m)
{
	struct rmsg_wire_ctrl w;
	u64 a;
	u8 t;
	int ret;

	rmsg_ctrl_encode(&w, type, arg);
	ret = rmsg_ctrl_decode(&w, sizeof(w), &t, &a);
	if (ret)
		return ret;
	if (t != type || a != arg)
		return -EINVAL;
	return rmsg_lease_msg_decode(type, arg, m);
}

/* Each lease message's argument, both ways, and its reserved bits. */
TEST(lease_args)
{
	struct rmsg_lease_msg m;

	ASSERT_EQ(0, lease_decode(RMSG_CTRL_ASK, RMSG_ASK_ARG(0xfffe), &m));
	EXPECT_EQ(0xfffe, m.lease);
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_ASK, 1ULL << 16, &m));

	ASSERT_EQ(0, lease_decode(RMSG_CTRL_GRANT,
				  RMSG_GRANT_ARG(0xdeadbeef, 3, 32768), &m));
	EXPECT_EQ(0xdeadbeef, m.rkey);
	EXPECT_EQ(3, m.lease);
	EXPECT_EQ(32768, m.size);
	ASSERT_EQ(0, lease_decode(RMSG_CTRL_GRANT,
				  RMSG_GRANT_ARG(1, 1, RMSG_VB_MAX_BLOCK), &m));
	EXPECT_EQ(RMSG_VB_MAX_BLOCK, m.size);
	/* Size 0, or beyond 64 MiB: never a block. */
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_GRANT,
					RMSG_GRANT_ARG(1, 1, 0), &m));
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_GRANT,
					RMSG_GRANT_ARG(1, 1, 0) |
					(u64)(RMSG_LEASE_UNITS_MAX + 1) << 48,
					&m));
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_GRANT, 0xffffULL << 48, &m));

	ASSERT_EQ(0, lease_decode(RMSG_CTRL_REVOKE,
				  RMSG_REVOKE_ARG(9, 0xfffffff0), &m));
	EXPECT_EQ(9, m.lease);
	EXPECT_EQ(0xfffffff0, m.counter);
	EXPECT_FALSE(m.flag);
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_REVOKE,
					RMSG_REVOKE_ARG(9, 0) | 1ULL << 48,
					&m));

	ASSERT_EQ(0, lease_decode(RMSG_CTRL_RETURN,
				  RMSG_RETURN_ARG(9, 77, true), &m));
	EXPECT_EQ(9, m.lease);
	EXPECT_EQ(77, m.counter);
	EXPECT_TRUE(m.flag);
	ASSERT_EQ(0, lease_decode(RMSG_CTRL_RETURN,
				  RMSG_RETURN_ARG(9, 77, false), &m));
	EXPECT_FALSE(m.flag);
	EXPECT_EQ(-EPROTO, lease_decode(RMSG_CTRL_RETURN, 1ULL << 49, &m));

	ASSERT_EQ(0, lease_decode(RMSG_CTRL_READY,
				  RMSG_READY_ARG(5, true, 0xffff, false), &m));
	EXPECT_EQ(5, m.lease);
	EXPECT_TRUE(m.flag);
	EXPECT_EQ(0xffff, m.peer_lease);
	EXPECT_FALSE(m.held);
	ASSERT_EQ(0, lease_decode(RMSG_CTRL_READY, 0, &m));
	EXPECT_EQ(0, m.lease);
	EXPECT_FALSE(m.flag || m.held);

	/* Other types have no lease argument. */
	EXPECT_EQ(-EPROTO, rmsg_lease_msg_decode(RMSG_CTRL_CREDIT, 0, &m));
}

/* --- links ------------------------------------------------------------- */

/* A carrier says so in its hellos; nothing else about them changes. */
TEST(carrier_hello)
{
	struct rmsg_wire_hello w;
	struct rmsg_hello h, in = good_connect;

	in.flags = RMSG_HELLO_F_LINK;
	rmsg_hello_encode(&w, &in);
	ASSERT_EQ(0, decode(&w, &h));
	EXPECT_TRUE(hello_eq(&h, &in));
	in.kind = RMSG_HELLO_ACCEPT;
	in.peer_channel = 7;
	in.flags |= RMSG_HELLO_F_SUMMARY;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(0, decode(&w, &h));
	in.flags = RMSG_HELLO_F_ALL + 1;
	rmsg_hello_encode(&w, &in);
	EXPECT_EQ(-EPROTO, decode(&w, &h));
}

static int lmsg_round_trip(const struct rmsg_lmsg *in, struct rmsg_lmsg *out)
{
	unsigned char buf[RMSG_WIRE_LMSG_MAX];
	u32 len = rmsg_lmsg_encode(buf, in);

	return rmsg_lmsg_decode(out, buf, len);
}

/* A link's control messages name the receiver's channel in 24 bits. */
TEST(link_ctrl)
{
	unsigned char buf[RMSG_WIRE_LMSG_MAX + 8];
	struct rmsg_lmsg in = {
		.type = RMSG_CTRL_CREDIT, .chan = 0x123456, .arg = 0xfffffff0,
	}, out;
	struct rmsg_wire_ctrl *w = (struct rmsg_wire_ctrl *)buf;
	u8 type;
	u64 arg;

	EXPECT_EQ(RMSG_WIRE_CTRL_SIZE, rmsg_lmsg_encode(buf, &in));
	EXPECT_EQ(0x56, w->chan[0]);
	EXPECT_EQ(0x34, w->chan[1]);
	EXPECT_EQ(0x12, w->chan[2]);
	ASSERT_EQ(0, rmsg_lmsg_decode(&out, buf, RMSG_WIRE_CTRL_SIZE));
	EXPECT_EQ(RMSG_CTRL_CREDIT, out.type);
	EXPECT_EQ(0x123456, out.chan);
	EXPECT_EQ(0xfffffff0, out.arg);
	/* A direct connection's decoder takes no channel id. */
	EXPECT_EQ(-EPROTO, rmsg_ctrl_decode(buf, RMSG_WIRE_CTRL_SIZE, &type,
					    &arg));
	/* The argument rules of a direct connection hold on a link. */
	in.arg = 1ULL << 32;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	/* A channel's message names a channel; the link's names none. */
	in.arg = 0;
	in.chan = RMSG_LINK_SELF;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.chan = RMSG_LINK_NO_CHAN;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.chan = RMSG_LINK_CHAN_MAX;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	in.type = RMSG_CTRL_HEARTBEAT;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.chan = RMSG_LINK_SELF;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	in.type = RMSG_CTRL_LCREDIT;
	in.arg = 0xffffffff;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	EXPECT_EQ(0xffffffff, out.arg);
	in.arg = 1ULL << 32;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 1;
	in.chan = 5;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));

	/* REFUSE: a channel, an errno of 1 to 255. */
	in.type = RMSG_CTRL_REFUSE;
	in.arg = 111;			/* ECONNREFUSED */
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	in.arg = 0;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 256;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 111;
	in.chan = RMSG_LINK_NO_CHAN;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));

	/* Only a HELLO is longer; unknown types are refused. */
	in.chan = 5;
	rmsg_lmsg_encode(buf, &in);
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, RMSG_WIRE_LMSG_MAX));
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, 15));
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, NULL, 16));
	in.type = RMSG_CTRL_RETURN + 1;
	in.arg = 0;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	/* A channel's lease messages name it, as its other messages do. */
	in.type = RMSG_CTRL_ASK;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	in.chan = RMSG_LINK_SELF;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.type = 0;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
}

/* A channel opens, repairs and answers with its hello in a HELLO. */
TEST(link_hello_msg)
{
	unsigned char buf[RMSG_WIRE_LMSG_MAX];
	struct rmsg_lmsg in = {
		.type = RMSG_CTRL_HELLO, .chan = RMSG_LINK_NO_CHAN,
		.arg = 7000, .hello = good_connect,
	}, out;

	EXPECT_EQ(72, RMSG_WIRE_LMSG_MAX);
	EXPECT_EQ(RMSG_WIRE_LMSG_MAX, rmsg_lmsg_encode(buf, &in));
	ASSERT_EQ(0, rmsg_lmsg_decode(&out, buf, sizeof(buf)));
	EXPECT_EQ(RMSG_CTRL_HELLO, out.type);
	EXPECT_EQ(RMSG_LINK_NO_CHAN, out.chan);
	EXPECT_EQ(7000, out.arg);
	EXPECT_TRUE(hello_eq(&out.hello, &good_connect));
	/* Exactly 72 bytes: not the 16 of the header alone, not more. */
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, RMSG_WIRE_CTRL_SIZE));
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, sizeof(buf) - 1));

	/* A CONNECT: to no channel yet, with a port. */
	in.arg = 0;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 65536;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 65535;
	in.chan = 7;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.chan = RMSG_LINK_NO_CHAN;
	/* Link ids are 24 bits. */
	in.hello.channel = RMSG_LINK_NO_CHAN;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.hello.channel = 0;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	/* No immediates on a link. */
	in.hello = good_connect;
	in.hello.flags = RMSG_HELLO_F_IMM_ARRIVAL;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.hello.flags = RMSG_HELLO_F_SUMMARY;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	/* A bad hello is refused as the rdma_cm's would be. */
	in.hello = good_connect;
	in.hello.block_size = 100;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	/* A channel on a link carries no link. */
	in.hello = good_connect;
	in.hello.flags = RMSG_HELLO_F_LINK;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));

	/* ACCEPT and RECONNECT: to the channel their hello names. */
	in.hello = good_connect;
	in.hello.kind = RMSG_HELLO_ACCEPT;
	in.hello.peer_channel = 42;
	in.chan = 42;
	in.arg = 0;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	in.chan = 43;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.chan = 42;
	in.arg = 7000;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.arg = 0;
	in.hello.kind = RMSG_HELLO_RECONNECT;
	in.hello.epoch = 3;
	EXPECT_EQ(0, lmsg_round_trip(&in, &out));
	EXPECT_EQ(3, out.hello.epoch);
	in.hello.peer_channel = RMSG_LINK_NO_CHAN;
	in.chan = RMSG_LINK_NO_CHAN;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
}

/*
 * A HELLO on a link carries the sender's endpoint id of the channel in
 * the upper half of its argument: the peer writes its summary hints there.
 */
TEST(link_hello_ep_chan)
{
	unsigned char buf[RMSG_WIRE_LMSG_MAX];
	struct rmsg_wire_ctrl *w = (struct rmsg_wire_ctrl *)buf;
	struct rmsg_lmsg in = {
		.type = RMSG_CTRL_HELLO, .chan = RMSG_LINK_NO_CHAN,
		.arg = 7000, .hello = good_connect, .ep_chan = 0x1234,
	}, out;

	EXPECT_EQ(RMSG_LINK_HELLO_ARG(7000, 0x1234), 0x0000123400001b58ULL);
	EXPECT_EQ(7000, RMSG_LINK_HELLO_PORT(0x0000123400001b58ULL));
	EXPECT_EQ(0x1234, RMSG_LINK_HELLO_EP_CHAN(0x0000123400001b58ULL));
	EXPECT_EQ(RMSG_WIRE_LMSG_MAX, rmsg_lmsg_encode(buf, &in));
	/* On the wire: little-endian, the port low, the id high. */
	EXPECT_EQ(0x58, buf[8]);
	EXPECT_EQ(0x1b, buf[9]);
	EXPECT_EQ(0, buf[10]);
	EXPECT_EQ(0, buf[11]);
	EXPECT_EQ(0x34, buf[12]);
	EXPECT_EQ(0x12, buf[13]);
	EXPECT_EQ(0, buf[14]);
	EXPECT_EQ(0, buf[15]);
	memset(&out, 0xa5, sizeof(out));
	ASSERT_EQ(0, rmsg_lmsg_decode(&out, buf, sizeof(buf)));
	EXPECT_EQ(7000, out.arg);
	EXPECT_EQ(0x1234, out.ep_chan);
	/* The link ids stay the hello's: the carriers name channels by them. */
	EXPECT_EQ(good_connect.channel, out.hello.channel);

	/* Every id an endpoint has fits a summary; none past it. */
	in.ep_chan = 0;
	ASSERT_EQ(0, lmsg_round_trip(&in, &out));
	EXPECT_EQ(0, out.ep_chan);
	in.ep_chan = RMSG_MAX_CHANNELS - 1;
	ASSERT_EQ(0, lmsg_round_trip(&in, &out));
	EXPECT_EQ(RMSG_MAX_CHANNELS - 1, out.ep_chan);
	in.ep_chan = RMSG_MAX_CHANNELS;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));
	in.ep_chan = 0xffffffff;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));

	/* The 16 bits between port and id are zero. */
	in.ep_chan = 5;
	rmsg_lmsg_encode(buf, &in);
	w->arg = cpu_to_le64(RMSG_LINK_HELLO_ARG(7000, 5) | 1ULL << 16);
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, sizeof(buf)));
	w->arg = cpu_to_le64(RMSG_LINK_HELLO_ARG(7000, 5) | 1ULL << 31);
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, sizeof(buf)));
	/* A CONNECT needs its port whatever the id. */
	w->arg = cpu_to_le64(RMSG_LINK_HELLO_ARG(0, 5));
	EXPECT_EQ(-EPROTO, rmsg_lmsg_decode(&out, buf, sizeof(buf)));

	/* An ACCEPT: no port, the id all the same. */
	in.hello.kind = RMSG_HELLO_ACCEPT;
	in.hello.peer_channel = 42;
	in.chan = 42;
	in.arg = 0;
	in.ep_chan = 300;
	ASSERT_EQ(0, lmsg_round_trip(&in, &out));
	EXPECT_EQ(300, out.ep_chan);
	EXPECT_EQ(0, out.arg);
	EXPECT_EQ(42, out.hello.peer_channel);
	in.arg = 1;
	EXPECT_EQ(-EPROTO, lmsg_round_trip(&in, &out));

	/* Other types keep their argument rules: no id rides on them. */
	in = (struct rmsg_lmsg){
		.type = RMSG_CTRL_CLOSE, .chan = 9, .ep_chan = 300,
	};
	EXPECT_EQ(RMSG_WIRE_CTRL_SIZE, rmsg_lmsg_encode(buf, &in));
	EXPECT_EQ(0, le64_to_cpu(w->arg));
	ASSERT_EQ(0, rmsg_lmsg_decode(&out, buf, RMSG_WIRE_CTRL_SIZE));
	EXPECT_EQ(0, out.ep_chan);
}

/* --- the accepting side's address list ---------------------------------- */

static void v4(struct rmsg_addr *a, u8 b0, u8 b1, u8 b2, u8 b3)
{
	memset(a, 0, sizeof(*a));
	a->family = RMSG_ADDR_IPV4;
	a->addr[0] = b0;
	a->addr[1] = b1;
	a->addr[2] = b2;
	a->addr[3] = b3;
}

static void v6(struct rmsg_addr *a, u8 b0, u8 b1, u8 last)
{
	memset(a, 0, sizeof(*a));
	a->family = RMSG_ADDR_IPV6;
	a->addr[0] = b0;
	a->addr[1] = b1;
	a->addr[15] = last;
}

TEST(addrs_fit_rep_private_data)
{
	EXPECT_EQ(128, sizeof(struct rmsg_wire_addrs));
	EXPECT_GE(RMSG_WIRE_REP_SIZE,
		  RMSG_WIRE_HELLO_SIZE + sizeof(struct rmsg_wire_addrs));
}

TEST(addrs_round_trip)
{
	struct rmsg_addrs in = { .count = 3 }, out;
	struct rmsg_wire_addrs w;
	const unsigned char *b = (const unsigned char *)&w;
	u32 len;

	v4(&in.addr[0], 169, 254, 78, 2);
	v6(&in.addr[1], 0x20, 0x01, 7);
	v4(&in.addr[2], 10, 0, 0, 1);
	len = rmsg_addrs_encode(&w, &in);
	EXPECT_EQ(8 + 3 * 20, len);
	/* "RMAD", the count, then family and address at fixed offsets. */
	EXPECT_EQ('R', b[0]);
	EXPECT_EQ('M', b[1]);
	EXPECT_EQ('A', b[2]);
	EXPECT_EQ('D', b[3]);
	EXPECT_EQ(3, b[4]);
	EXPECT_EQ(4, b[8]);
	EXPECT_EQ(169, b[12]);
	EXPECT_EQ(2, b[15]);
	EXPECT_EQ(6, b[28]);
	EXPECT_EQ(0x20, b[32]);
	memset(&out, 0x5a, sizeof(out));
	ASSERT_EQ(0, rmsg_addrs_decode(&out, &w, len));
	ASSERT_EQ(3, out.count);
	EXPECT_EQ(0, memcmp(in.addr, out.addr, 3 * sizeof(in.addr[0])));
	/* Padding after the entries (the REP's) is ignored. */
	ASSERT_EQ(0, rmsg_addrs_decode(&out, &w, sizeof(w)));
	EXPECT_EQ(3, out.count);
}

/* A peer that sends no list: nothing, or the transport's zero padding. */
TEST(addrs_none)
{
	struct rmsg_addrs out = { .count = 5 };
	unsigned char zeros[140] = { 0 };

	EXPECT_EQ(0, rmsg_addrs_decode(&out, NULL, 0));
	EXPECT_EQ(0, out.count);
	out.count = 5;
	EXPECT_EQ(0, rmsg_addrs_decode(&out, zeros, sizeof(zeros)));
	EXPECT_EQ(0, out.count);
	out.count = 5;
	EXPECT_EQ(0, rmsg_addrs_decode(&out, zeros, 3));
	EXPECT_EQ(0, out.count);
}

/* Addresses nobody else can dial are left out, and refused when sent. */
TEST(addrs_unusable)
{
	struct rmsg_addrs in = { .count = 6 }, out;
	struct rmsg_wire_addrs w;
	u32 len;

	v4(&in.addr[0], 127, 0, 0, 1);
	v4(&in.addr[1], 0, 0, 0, 0);
	v4(&in.addr[2], 224, 0, 0, 1);
	v6(&in.addr[3], 0xfe, 0x80, 1);		/* link-local */
	v6(&in.addr[4], 0, 0, 1);		/* ::1 */
	v4(&in.addr[5], 192, 168, 0, 1);
	len = rmsg_addrs_encode(&w, &in);
	EXPECT_EQ(8 + 20, len);
	ASSERT_EQ(0, rmsg_addrs_decode(&out, &w, len));
	ASSERT_EQ(1, out.count);
	EXPECT_EQ(192, out.addr[0].addr[0]);

	/* Each of them, put on the wire anyway, is a protocol error. */
	for (int i = 0; i < 5; i++) {
		rmsg_addrs_encode(&w, &out);	/* 192.168.0.1 */
		w.addr[0].family = in.addr[i].family;
		memcpy(w.addr[0].addr, in.addr[i].addr, 16);
		EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, sizeof(w)));
	}
}

TEST(addrs_malformed)
{
	struct rmsg_addrs in = { .count = 2 }, out, before;
	struct rmsg_wire_addrs w;
	u32 len;

	v4(&in.addr[0], 10, 1, 2, 3);
	v4(&in.addr[1], 10, 1, 2, 4);
	len = rmsg_addrs_encode(&w, &in);
	memset(&out, 0x77, sizeof(out));
	/* Padding too: the check below compares bytes. */
	memcpy(&before, &out, sizeof(out));

	/* Truncated: the header, or the last entry. */
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, 7));
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len - 1));
	/* Too many. */
	w.count = RMSG_WIRE_ADDRS_MAX + 1;
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, sizeof(w)));
	w.count = 2;
	/* Reserved bytes, a wrong magic, an unknown family, IPv4 tails. */
	w.resv0[1] = 1;
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len));
	w.resv0[1] = 0;
	w.addr[1].resv0[0] = 1;
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len));
	w.addr[1].resv0[0] = 0;
	w.magic = cpu_to_le32(RMSG_WIRE_MAGIC);
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len));
	w.magic = cpu_to_le32(RMSG_WIRE_ADDRS_MAGIC);
	w.addr[0].family = 5;
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len));
	w.addr[0].family = RMSG_ADDR_IPV4;
	w.addr[0].addr[15] = 1;
	EXPECT_EQ(-EPROTO, rmsg_addrs_decode(&out, &w, len));
	w.addr[0].addr[15] = 0;
	/* A failed decode leaves the result alone. */
	EXPECT_EQ(0, memcmp(&out, &before, sizeof(out)));
	ASSERT_EQ(0, rmsg_addrs_decode(&out, &w, len));
	EXPECT_EQ(2, out.count);
	/* The encoder takes RMSG_WIRE_ADDRS_MAX at most. */
	in.count = RMSG_WIRE_ADDRS_MAX;
	for (int i = 0; i < RMSG_WIRE_ADDRS_MAX; i++)
		v4(&in.addr[i], 10, 0, 0, i + 1);
	EXPECT_EQ(sizeof(w), rmsg_addrs_encode(&w, &in));
	ASSERT_EQ(0, rmsg_addrs_decode(&out, &w, sizeof(w)));
	EXPECT_EQ(RMSG_WIRE_ADDRS_MAX, out.count);
}

TEST_HARNESS_MAIN
