// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: block leases (rmsg_lease.c) and the decoding of their
 * messages. The input plays a peer of both of this side's machines: its
 * control messages (16 bytes through rmsg_ctrl_decode(), or built near
 * the machines' own lease numbers and counters so that they get far), and
 * this side's own events: data to send, a block made or not, an idle
 * period, a connection lost and a new one.
 *
 * Invariants: a message the control decoder takes, the lease decoder
 * takes too; an event that fails (-EPROTO, -EINVAL) changes nothing; the
 * receiver asks for a block only with none made or being made, frees only
 * the one it has, and grants it at the channel's size; a lease number
 * moves only by one, when a lease starts; the sender writes only under a
 * lease, starts one only after asking and frees its shadow only when it
 * held one; every message the machines send decodes.
 */
#include "fuzz.h"
#include "rmsg_lease.h"

#define SIZE	32768U

struct fl {
	struct rmsg_lease_rx rx;
	struct rmsg_lease_tx tx;
	bool block, allocating, shadow;
};

static void check_send(const struct rmsg_lease_act *a, bool from_rx)
{
	struct rmsg_lease_msg m;

	if (!(a->todo & RMSG_LEASE_SEND))
		return;
	FUZZ_CHECK(!rmsg_lease_msg_decode(a->type, a->arg, &m));
	if (from_rx) {
		FUZZ_CHECK(a->type == RMSG_CTRL_GRANT ||
			   a->type == RMSG_CTRL_REVOKE);
		if (a->type == RMSG_CTRL_GRANT)
			FUZZ_CHECK(m.size == SIZE);
	} else {
		FUZZ_CHECK(a->type == RMSG_CTRL_ASK ||
			   a->type == RMSG_CTRL_RETURN);
	}
}

/* What the receiver's machine asked for, against what exists. */
static void rx_did(struct fl *f, const struct rmsg_lease_rx *before, int ret,
		   const struct rmsg_lease_act *a)
{
	if (ret) {
		FUZZ_CHECK(!memcmp(before, &f->rx, sizeof(*before)));
		return;
	}
	FUZZ_CHECK(!(a->todo & (RMSG_LEASE_KEY)));
	if (a->todo & RMSG_LEASE_ALLOC) {
		FUZZ_CHECK(!f->block && !f->allocating);
		f->allocating = true;
	}
	if (a->todo & RMSG_LEASE_FREE) {
		FUZZ_CHECK(f->block);
		f->block = false;
	}
	if (f->rx.lease != before->lease)
		FUZZ_CHECK((u16)(before->lease + 1) == f->rx.lease &&
			   (a->todo & RMSG_LEASE_START));
	check_send(a, true);
	FUZZ_CHECK(rmsg_lease_rx_has_block(&f->rx) == f->block);
	FUZZ_CHECK((f->rx.state == RMSG_LEASE_RX_ALLOCATING) == f->allocating);
}

static void tx_did(struct fl *f, const struct rmsg_lease_tx *before, int ret,
		   const struct rmsg_lease_act *a)
{
	if (ret) {
		FUZZ_CHECK(!memcmp(before, &f->tx, sizeof(*before)));
		return;
	}
	FUZZ_CHECK(!(a->todo & RMSG_LEASE_ALLOC));
	if (a->todo & RMSG_LEASE_START) {
		FUZZ_CHECK(before->state == RMSG_LEASE_TX_ASKED && f->shadow);
		FUZZ_CHECK((u16)(before->lease + 1) == f->tx.lease);
	} else {
		FUZZ_CHECK(f->tx.lease == before->lease);
	}
	if (a->todo & RMSG_LEASE_FREE) {
		FUZZ_CHECK(before->state == RMSG_LEASE_TX_HELD && f->shadow);
		f->shadow = false;
	}
	if (rmsg_lease_tx_may_write(&f->tx))
		FUZZ_CHECK(f->tx.state == RMSG_LEASE_TX_HELD);
	check_send(a, false);
}

/* A message of the peer's, near the machines' own numbers. */
static u64 near_arg(struct fuzz_in *in, struct fl *f, u8 type)
{
	/* The machine's lease, 2 behind to 2 ahead. */
	u16 lease = (type == RMSG_CTRL_GRANT || type == RMSG_CTRL_REVOKE ?
		     f->tx.lease : f->rx.lease) + fuzz_u8(in) % 5 - 2;
	u32 counter = (type == RMSG_CTRL_REVOKE ? f->tx.bytes : f->rx.bytes) +
		      (fuzz_u8(in) & 3) * 16;
	u8 bits = fuzz_u8(in);

	switch (type) {
	case RMSG_CTRL_ASK:
		return RMSG_ASK_ARG(lease);
	case RMSG_CTRL_GRANT:
		return RMSG_GRANT_ARG(fuzz_u8(in), lease,
				      bits & 1 ? SIZE * 2 : SIZE);
	case RMSG_CTRL_REVOKE:
		return RMSG_REVOKE_ARG(lease, counter);
	case RMSG_CTRL_RETURN:
		return RMSG_RETURN_ARG(lease, counter, bits & 1);
	default:
		return RMSG_READY_ARG(f->tx.lease + (bits >> 4) % 3 - 1,
				      bits & 2,
				      f->rx.lease + fuzz_u8(in) % 3 - 1, bits & 4);
	}
}

static void peer_msg(struct fl *f, u8 type, u64 arg, u32 arrived, bool busy,
		     u32 written)
{
	struct rmsg_lease_rx rb = f->rx;
	struct rmsg_lease_tx tb = f->tx;
	struct rmsg_lease_msg m;
	struct rmsg_lease_act a;
	int ret;

	if (rmsg_lease_msg_decode(type, arg, &m))
		return;
	switch (type) {
	case RMSG_CTRL_READY:
		/* Its rx part is the sender's, its tx part the receiver's. */
		ret = rmsg_lease_tx_peer_ready(&f->tx, &m);
		memset(&a, 0, sizeof(a));
		tx_did(f, &tb, ret, &a);
		ret = rmsg_lease_rx_peer_ready(&f->rx, &m, arrived, &a);
		rx_did(f, &rb, ret, &a);
		return;
	case RMSG_CTRL_ASK:
		ret = rmsg_lease_rx_ask(&f->rx, &m, &a);
		rx_did(f, &rb, ret, &a);
		return;
	case RMSG_CTRL_RETURN:
		ret = rmsg_lease_rx_return(&f->rx, &m, arrived, &a);
		rx_did(f, &rb, ret, &a);
		return;
	case RMSG_CTRL_GRANT:
		ret = rmsg_lease_tx_grant(&f->tx, &m, &a);
		tx_did(f, &tb, ret, &a);
		return;
	case RMSG_CTRL_REVOKE:
		ret = rmsg_lease_tx_revoke(&f->tx, &m, busy, written,
					   f->tx.seq + 1, &a);
		tx_did(f, &tb, ret, &a);
		return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const u8 types[] = {
		RMSG_CTRL_READY, RMSG_CTRL_ASK, RMSG_CTRL_GRANT,
		RMSG_CTRL_REVOKE, RMSG_CTRL_RETURN,
	};
	struct fuzz_in in = { data, size };
	struct rmsg_lease_act a, ra, ta;
	struct rmsg_lease_rx rb;
	struct rmsg_lease_tx tb;
	struct fl f = { 0 };
	u32 steps = 0;

	FUZZ_CHECK(!rmsg_lease_rx_init(&f.rx, SIZE, 0, 0));
	FUZZ_CHECK(!rmsg_lease_tx_init(&f.tx, SIZE, 0, 0));
	rmsg_lease_rx_connected(&f.rx, 0, &ra);
	rmsg_lease_tx_connected(&f.tx, &ta);
	while (fuzz_more(&in) && steps++ < 4096) {
		u8 op = fuzz_u8(&in), wire[RMSG_WIRE_CTRL_SIZE], type;
		u32 arrived = f.rx.bytes + (fuzz_u8(&in) & 3) * 16;
		u64 arg;

		rb = f.rx;
		tb = f.tx;
		switch (op % 10) {
		case 0: {
			/* Any 16 bytes: the decoders must agree. */
			struct rmsg_lease_msg m;

			fuzz_bytes(&in, wire, sizeof(wire));
			if (rmsg_ctrl_decode(wire, sizeof(wire), &type, &arg))
				break;
			if (type == RMSG_CTRL_READY || type >= RMSG_CTRL_ASK)
				FUZZ_CHECK(!rmsg_lease_msg_decode(type, arg,
								  &m));
			peer_msg(&f, type, arg, arrived, op & 0x10,
				 f.tx.bytes + (op >> 5) * 16);
			break;
		}
		case 1:
		case 2:
			type = types[fuzz_u8(&in) % 5];
			peer_msg(&f, type, near_arg(&in, &f, type), arrived,
				 op & 0x10, f.tx.bytes + (op >> 5) * 16);
			break;
		case 3:
			f.shadow = true;
			rmsg_lease_tx_want(&f.tx, &a);
			tx_did(&f, &tb, 0, &a);
			break;
		case 4: {
			int ret = rmsg_lease_rx_allocated(&f.rx, fuzz_u32(&in),
							  &a);

			if (!ret) {
				f.allocating = false;
				f.block = true;
			}
			rx_did(&f, &rb, ret, &a);
			break;
		}
		case 5:
			if (!rmsg_lease_rx_alloc_failed(&f.rx))
				f.allocating = false;
			memset(&a, 0, sizeof(a));
			rx_did(&f, &rb, 0, &a);
			break;
		case 6:
			rmsg_lease_rx_retry(&f.rx, &a);
			rx_did(&f, &rb, 0, &a);
			break;
		case 7:
			rmsg_lease_rx_idle(&f.rx, arrived,
					   arrived - (op >> 7) * 16, 5, &a);
			rx_did(&f, &rb, 0, &a);
			break;
		case 8:
			rmsg_lease_rx_down(&f.rx);
			rmsg_lease_tx_down(&f.tx);
			FUZZ_CHECK(!rmsg_lease_tx_may_write(&f.tx));
			break;
		default:
			rmsg_lease_rx_connected(&f.rx, fuzz_u32(&in), &a);
			rx_did(&f, &rb, 0, &a);
			rmsg_lease_tx_connected(&f.tx, &a);
			tx_did(&f, &tb, 0, &a);
			FUZZ_CHECK(!rmsg_lease_tx_may_write(&f.tx));
			break;
		}
	}
	return 0;
}
