// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_lease.c: block leases. First every transition
 * of the receiver's and the sender's machine, each crossing and each
 * repair a lost message can leave, and what a lying peer gets (-EPROTO,
 * never a block); then the test that matters, a randomized run of two
 * peers: a sender that writes real records (rmsg_vb.c) from a shadow into
 * blocks the receiver makes on ASK and frees on RETURN, over a connection
 * that carries writes and control messages in order and breaks at
 * random, losing what was in flight, after which both resume as the
 * kernels will. It checks that no write lands outside a current lease's
 * block, that no block is freed while the sender may write, at most one
 * block, sequence numbers and byte counters that go on from lease to
 * lease, and that every message arrives, once, in order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The harness's wrappers take parameters they do not use. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "rmsg_lease.h"
#include "rmsg_resil.h"
#include "unit_rng.h"

#define SZ	32768U

/* A message as the peer would send it: encoded, decoded, checked. */
static struct rmsg_lease_msg lm(u8 type, u64 arg)
{
	struct rmsg_lease_msg m;

	memset(&m, 0, sizeof(m));
	if (rmsg_lease_msg_decode(type, arg, &m))
		m.lease = 0xdead;	/* fails the test that uses it */
	return m;
}

/* ------------------------------------------------------------------ */
/* One direction, by hand: R the receiver's machine, S the sender's    */

struct pair {
	struct rmsg_lease_rx r;
	struct rmsg_lease_tx s;
	struct rmsg_lease_act ra, sa;	/* the connection's first sends */
};

/*
 * A new connection: both sides' READY (the receiver's rx part to the
 * sender, the sender's tx part to the receiver), each checked by the
 * other. What each connected() asked to send after its READY is left in
 * @p->ra and @p->sa.
 */
static int pair_connect(struct pair *p, u32 rkey, u32 arrived,
			struct rmsg_lease_act *ract)
{
	struct rmsg_lease_msg rm, sm;
	int ret;

	rmsg_lease_rx_connected(&p->r, rkey, &p->ra);
	rmsg_lease_tx_connected(&p->s, &p->sa);
	rm = lm(RMSG_CTRL_READY, rmsg_lease_ready_arg(&p->r, NULL));
	sm = lm(RMSG_CTRL_READY, rmsg_lease_ready_arg(NULL, &p->s));
	ret = rmsg_lease_tx_peer_ready(&p->s, &rm);
	if (ret)
		return ret;
	return rmsg_lease_rx_peer_ready(&p->r, &sm, arrived, ract);
}

static void pair_init(struct __test_metadata *_metadata, struct pair *p,
		      u32 seq, u32 bytes)
{
	struct rmsg_lease_act a;

	ASSERT_EQ(0, rmsg_lease_rx_init(&p->r, SZ, seq, bytes));
	ASSERT_EQ(0, rmsg_lease_tx_init(&p->s, SZ, seq, bytes));
	ASSERT_EQ(0, pair_connect(p, 0, bytes, &a));
	ASSERT_EQ(0, a.todo);
	ASSERT_EQ(0, p->ra.todo);
	ASSERT_EQ(0, p->sa.todo);
}

static void pair_down(struct pair *p)
{
	rmsg_lease_rx_down(&p->r);
	rmsg_lease_tx_down(&p->s);
}

/* S wants to write: ASK, R makes a block with @rkey, GRANT, S holds it. */
static void pair_lease(struct __test_metadata *_metadata, struct pair *p,
		       u32 rkey)
{
	struct rmsg_lease_act a, b;
	struct rmsg_lease_msg m;
	u16 n = p->r.lease;

	rmsg_lease_tx_want(&p->s, &a);
	ASSERT_EQ(RMSG_LEASE_SEND, a.todo);
	ASSERT_EQ(RMSG_CTRL_ASK, a.type);
	ASSERT_EQ(RMSG_ASK_ARG(n), a.arg);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p->r, &m, &b));
	ASSERT_EQ(RMSG_LEASE_ALLOC, b.todo);
	ASSERT_EQ(RMSG_LEASE_RX_ALLOCATING, p->r.state);
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p->r, rkey, &b));
	ASSERT_EQ(RMSG_LEASE_START | RMSG_LEASE_SEND, b.todo);
	ASSERT_EQ(RMSG_CTRL_GRANT, b.type);
	ASSERT_EQ(RMSG_GRANT_ARG(rkey, (u16)(n + 1), SZ), b.arg);
	ASSERT_EQ(p->r.seq, b.seq);
	ASSERT_EQ(p->r.bytes, b.bytes);
	m = lm(b.type, b.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p->s, &m, &a));
	ASSERT_EQ(RMSG_LEASE_START, a.todo);
	/* Both ends start the lease at the same place. */
	ASSERT_EQ(b.seq, a.seq);
	ASSERT_EQ(b.bytes, a.bytes);
	ASSERT_EQ(rkey, a.rkey);
	ASSERT_TRUE(rmsg_lease_tx_may_write(&p->s));
	ASSERT_EQ((u16)(n + 1), p->s.lease);
}

/* R revokes at counter @c, S answers with what it wrote: the RETURN. */
static void pair_revoke(struct __test_metadata *_metadata, struct pair *p,
			u32 c, u32 seq, bool busy, u32 written,
			struct rmsg_lease_act *sa)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;

	rmsg_lease_rx_idle(&p->r, c, c, seq, &a);
	ASSERT_EQ(RMSG_LEASE_SEND, a.todo);
	ASSERT_EQ(RMSG_CTRL_REVOKE, a.type);
	ASSERT_EQ(RMSG_REVOKE_ARG(p->r.lease, c), a.arg);
	ASSERT_EQ(RMSG_LEASE_RX_REVOKING, p->r.state);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_tx_revoke(&p->s, &m, busy, written, seq, sa));
	ASSERT_TRUE(sa->todo & RMSG_LEASE_SEND);
	ASSERT_EQ(RMSG_CTRL_RETURN, sa->type);
}

TEST(sizes)
{
	struct rmsg_lease_rx r;
	struct rmsg_lease_tx s;

	EXPECT_EQ(0, rmsg_lease_rx_init(&r, 4096, 0, 0));
	EXPECT_EQ(0, rmsg_lease_rx_init(&r, RMSG_VB_MAX_BLOCK, 0, 0));
	/* A valid block, but not in whole units: a lease cannot say it. */
	EXPECT_EQ(-EINVAL, rmsg_lease_rx_init(&r, 4096 + 16, 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_lease_rx_init(&r, 0, 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_lease_rx_init(&r, 2 * RMSG_VB_MAX_BLOCK, 0, 0));
	EXPECT_EQ(0, rmsg_lease_tx_init(&s, 8192, 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_lease_tx_init(&s, 8192 - 16, 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_lease_tx_init(&s, 2048, 0, 0));
}

/* The whole life of two leases, and the counters that run across them. */
TEST(life)
{
	struct rmsg_lease_act a, b;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0xfffffff0, 0xffffff00);
	EXPECT_EQ(0, rmsg_lease_ready_arg(&p.r, &p.s));
	EXPECT_FALSE(rmsg_lease_tx_may_write(&p.s));
	EXPECT_FALSE(rmsg_lease_rx_has_block(&p.r));
	pair_lease(_metadata, &p, 0x1111);
	EXPECT_EQ(RMSG_READY_ARG(1, true, 1, true),
		  rmsg_lease_ready_arg(&p.r, &p.s));
	/* Wanting more while holding asks nothing. */
	rmsg_lease_tx_want(&p.s, &a);
	EXPECT_EQ(0, a.todo);

	/* Not idle while records wait for the program. */
	rmsg_lease_rx_idle(&p.r, 0x100, 0x80, 9, &a);
	EXPECT_EQ(0, a.todo);
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);

	/* Sends wait: KEEP, and the lease stays granted. */
	pair_revoke(_metadata, &p, 0x100, 9, true, 0x100, &a);
	EXPECT_EQ(RMSG_LEASE_SEND, a.todo);
	EXPECT_EQ(RMSG_RETURN_ARG(1, 0x100, true), a.arg);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 0x100, &b));
	EXPECT_EQ(0, b.todo);
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);
	EXPECT_TRUE(rmsg_lease_tx_may_write(&p.s));

	/* Written more than the receiver saw: KEEP too. */
	pair_revoke(_metadata, &p, 0x200, 11, false, 0x240, &a);
	EXPECT_EQ(RMSG_RETURN_ARG(1, 0x240, true), a.arg);
	m = lm(a.type, a.arg);
	/* Behind what arrived before it, or more than a block ahead: lies. */
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0x250, &b));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0x240 - SZ - 16,
						&b));
	EXPECT_EQ(RMSG_LEASE_RX_REVOKING, p.r.state);
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 0x200, &b));
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);

	/* Everything arrived and was released: yes. */
	pair_revoke(_metadata, &p, 0x240, 12, false, 0x240, &a);
	EXPECT_EQ(RMSG_LEASE_SEND | RMSG_LEASE_FREE, a.todo);
	EXPECT_EQ(RMSG_RETURN_ARG(1, 0x240, false), a.arg);
	EXPECT_EQ(RMSG_LEASE_TX_NONE, p.s.state);
	EXPECT_FALSE(rmsg_lease_tx_may_write(&p.s));
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 0x240, &b));
	EXPECT_EQ(RMSG_LEASE_FREE, b.todo);
	EXPECT_EQ(RMSG_LEASE_RX_IDLE, p.r.state);
	EXPECT_EQ(RMSG_READY_ARG(1, false, 1, false),
		  rmsg_lease_ready_arg(&p.r, &p.s));

	/* The next lease starts where this one ended, on both sides. */
	EXPECT_EQ(0x240, p.r.bytes);
	EXPECT_EQ(12, p.r.seq);
	EXPECT_EQ(0x240, p.s.bytes);
	EXPECT_EQ(12, p.s.seq);
	pair_lease(_metadata, &p, 0x2222);
	EXPECT_EQ(2, p.r.lease);
	EXPECT_EQ(0x2222, p.s.rkey);
}

/* A receiver that cannot make the block owes it, and tries again. */
TEST(alloc_failure)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	rmsg_lease_tx_want(&p.s, &a);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	ASSERT_EQ(RMSG_LEASE_ALLOC, a.todo);
	EXPECT_EQ(0, rmsg_lease_rx_alloc_failed(&p.r));
	EXPECT_EQ(RMSG_LEASE_RX_IDLE, p.r.state);
	EXPECT_EQ(-EINVAL, rmsg_lease_rx_alloc_failed(&p.r));
	EXPECT_EQ(-EINVAL, rmsg_lease_rx_allocated(&p.r, 1, &a));
	rmsg_lease_rx_retry(&p.r, &a);
	EXPECT_EQ(RMSG_LEASE_ALLOC, a.todo);
	/* One allocation at a time: a second retry does nothing. */
	rmsg_lease_rx_retry(&p.r, &a);
	EXPECT_EQ(0, a.todo);
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 5, &a));
	EXPECT_EQ(RMSG_LEASE_START | RMSG_LEASE_SEND, a.todo);
	/* Nothing owed any more. */
	rmsg_lease_rx_retry(&p.r, &a);
	EXPECT_EQ(0, a.todo);
}

/* Asks again and again cost nothing; lies about the lease are -EPROTO. */
TEST(asks)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	/* From the future: the peer cannot know lease 1 yet. */
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(1));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_ask(&p.r, &m, &a));
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(0x7fff));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_ask(&p.r, &m, &a));
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(0));
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(RMSG_LEASE_ALLOC, a.todo);
	/* Allocating: a repeat is nothing. */
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(0, a.todo);
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 7, &a));
	/* Granted: a repeat of the ask that got it is nothing. */
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(0, a.todo);
	/* Asking for lease 2 says lease 1 ended, which no RETURN said. */
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(1));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);
	/* Older than that: stale, nothing. */
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(0xfff0));
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(0, a.todo);

	/* Before the peer's READY on a connection, nothing is taken. */
	pair_down(&p);
	rmsg_lease_rx_connected(&p.r, 7, &a);
	m = lm(RMSG_CTRL_ASK, RMSG_ASK_ARG(0));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_ask(&p.r, &m, &a));
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0, &a));
}

/* A GRANT must be for the lease asked for, at the channel's size. */
TEST(grants)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	/* Not asked for. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 1, SZ));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	rmsg_lease_tx_want(&p.s, &a);
	EXPECT_EQ(RMSG_LEASE_TX_ASKED, p.s.state);
	/* Another size than the hello's, even a valid one. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 1, SZ * 2));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 1, 4096));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	/* From the future. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 2, SZ));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 0x7fff, SZ));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	/* Of a lease that ended (0: none yet): late, ignored. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 0, SZ));
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(0, a.todo);
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 0x8001, SZ));
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_EQ(RMSG_LEASE_TX_ASKED, p.s.state);
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(3, 1, SZ));
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_START, a.todo);
	/* The held lease again: its key (after a repair, or a repeat). */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(4, 1, SZ));
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_KEY, a.todo);
	EXPECT_EQ(4, a.rkey);
	/* A second block while one is held: never. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(5, 2, SZ));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(1, p.s.lease);
	EXPECT_EQ(4, p.s.rkey);
}

/* A REVOKE names the held lease and a counter this lease can have. */
TEST(revokes)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 1000);
	/* Nothing held: stale (lease 0), or from the future. */
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(0, 1000));
	ASSERT_EQ(0, rmsg_lease_tx_revoke(&p.s, &m, false, 1000, 0, &a));
	EXPECT_EQ(0, a.todo);
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(1, 1000));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_revoke(&p.s, &m, false, 1000, 0, &a));
	pair_lease(_metadata, &p, 1);
	/* More than was written, or before the lease began. */
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(1, 1100));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_revoke(&p.s, &m, false, 1050, 0, &a));
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(1, 999));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_revoke(&p.s, &m, false, 1050, 0, &a));
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(2, 1050));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_revoke(&p.s, &m, false, 1050, 0, &a));
	EXPECT_EQ(RMSG_LEASE_TX_HELD, p.s.state);
	/* Stale: an older lease's. */
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(0, 1050));
	ASSERT_EQ(0, rmsg_lease_tx_revoke(&p.s, &m, false, 1050, 0, &a));
	EXPECT_EQ(0, a.todo);
	/* At the lease's start, nothing written: yes. */
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(1, 1000));
	ASSERT_EQ(0, rmsg_lease_tx_revoke(&p.s, &m, false, 1000, 0, &a));
	EXPECT_EQ(RMSG_LEASE_SEND | RMSG_LEASE_FREE, a.todo);
	EXPECT_EQ(RMSG_RETURN_ARG(1, 1000, false), a.arg);
}

/* RETURN only answers the REVOKE out, with its counter. */
TEST(returns)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0, &a));
	pair_lease(_metadata, &p, 1);
	/* Granted, no REVOKE out. */
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 0, true));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 0, &a));
	rmsg_lease_rx_idle(&p.r, 64, 64, 2, &a);
	EXPECT_EQ(RMSG_LEASE_SEND, a.todo);
	/* One REVOKE at a time. */
	rmsg_lease_rx_idle(&p.r, 64, 64, 2, &a);
	EXPECT_EQ(0, a.todo);
	/* Another counter than the REVOKE's. */
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 80, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 64, &a));
	/* The REVOKE's, but records arrived since: the peer wrote after. */
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 64, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 96, &a));
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(2, 64, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_return(&p.r, &m, 64, &a));
	EXPECT_EQ(RMSG_LEASE_RX_REVOKING, p.r.state);
	m = lm(RMSG_CTRL_RETURN, RMSG_RETURN_ARG(1, 64, false));
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 64, &a));
	EXPECT_EQ(RMSG_LEASE_FREE, a.todo);
	/* The same again is an ended lease's: nothing. */
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 64, &a));
	EXPECT_EQ(0, a.todo);
}

/* A peer that never answers a REVOKE keeps the block, and nothing more. */
TEST(revoke_unanswered)
{
	struct rmsg_lease_act a;
	struct pair p;
	int i;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
	EXPECT_EQ(RMSG_LEASE_SEND, a.todo);
	for (i = 0; i < 100; i++) {
		rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
		EXPECT_EQ(0, a.todo);
	}
	EXPECT_TRUE(rmsg_lease_rx_has_block(&p.r));
}

/* The ask that crosses a REVOKE comes after the RETURN: a new lease. */
TEST(ask_after_return)
{
	struct rmsg_lease_act a, b;
	struct rmsg_lease_msg m, ask;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	pair_revoke(_metadata, &p, 0, 0, false, 0, &a);
	/* Data came right after the yes: ASK(1) follows RETURN(1). */
	rmsg_lease_tx_want(&p.s, &b);
	ASSERT_EQ(RMSG_LEASE_SEND, b.todo);
	ASSERT_EQ(RMSG_ASK_ARG(1), b.arg);
	ask = lm(b.type, b.arg);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 0, &a));
	EXPECT_EQ(RMSG_LEASE_FREE, a.todo);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &ask, &a));
	EXPECT_EQ(RMSG_LEASE_ALLOC, a.todo);
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 2, &a));
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &b));
	EXPECT_EQ(RMSG_LEASE_START, b.todo);
	EXPECT_EQ(2, p.s.lease);
}

/* --- repairs: every state a lost message can leave -------------------- */

/* The ASK was lost: sent again after the READY. */
TEST(repair_ask_lost)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	rmsg_lease_tx_want(&p.s, &a);
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 0, 0, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_EQ(0, p.ra.todo);
	ASSERT_EQ(RMSG_LEASE_SEND, p.sa.todo);
	m = lm(p.sa.type, p.sa.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(RMSG_LEASE_ALLOC, a.todo);
}

/* The block was being made across the repair: the GRANT goes after. */
TEST(repair_while_allocating)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	rmsg_lease_tx_want(&p.s, &a);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	pair_down(&p);
	/* Made with no connection: nothing to send now. */
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 9, &a));
	EXPECT_EQ(RMSG_LEASE_START, a.todo);
	ASSERT_EQ(0, pair_connect(&p, 10, 0, &a));
	EXPECT_EQ(0, a.todo);
	ASSERT_EQ(RMSG_LEASE_SEND, p.ra.todo);
	EXPECT_EQ(RMSG_GRANT_ARG(10, 1, SZ), p.ra.arg);
	/* The ASK again, which the GRANT already answers. */
	ASSERT_EQ(RMSG_LEASE_SEND, p.sa.todo);
	m = lm(p.sa.type, p.sa.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(0, a.todo);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_START, a.todo);
	EXPECT_EQ(10, a.rkey);
}

/* The GRANT was lost: sent again; the repeated ASK is nothing. */
TEST(repair_grant_lost)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	rmsg_lease_tx_want(&p.s, &a);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 9, &a));
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 9, 0, &a));
	ASSERT_EQ(RMSG_LEASE_SEND, p.ra.todo);
	ASSERT_EQ(RMSG_LEASE_SEND, p.sa.todo);
	m = lm(p.sa.type, p.sa.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(0, a.todo);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_START, a.todo);
	EXPECT_TRUE(rmsg_lease_tx_may_write(&p.s));
}

/* A held lease over a repair: no writes until the new key comes. */
TEST(repair_held)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	pair_down(&p);
	EXPECT_FALSE(rmsg_lease_tx_may_write(&p.s));
	ASSERT_EQ(0, pair_connect(&p, 2, 0, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_FALSE(rmsg_lease_tx_may_write(&p.s));
	EXPECT_EQ(0, p.sa.todo);
	ASSERT_EQ(RMSG_LEASE_SEND, p.ra.todo);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_KEY, a.todo);
	EXPECT_EQ(2, a.rkey);
	EXPECT_TRUE(rmsg_lease_tx_may_write(&p.s));
}

/* The REVOKE (or its KEEP) was lost: the lease stays; ask again later. */
TEST(repair_revoke_lost)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
	pair_down(&p);
	/* No REVOKE while the peer's view is unknown. */
	rmsg_lease_rx_connected(&p.r, 1, &p.ra);
	rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
	EXPECT_EQ(0, a.todo);
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 1, 0, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_KEY, a.todo);
	rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
	EXPECT_EQ(RMSG_LEASE_SEND, a.todo);
}

/* The yes was lost: the sender's READY says so, and the block goes. */
TEST(repair_return_lost)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	pair_revoke(_metadata, &p, 0x40, 3, false, 0x40, &a);
	EXPECT_TRUE(a.todo & RMSG_LEASE_FREE);
	pair_down(&p);
	/* Records arrived after the revoke's counter: a lie, -EPROTO. */
	EXPECT_EQ(-EPROTO, pair_connect(&p, 1, 0x50, &a));
	EXPECT_EQ(RMSG_LEASE_RX_REVOKING, p.r.state);
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 1, 0x40, &a));
	EXPECT_EQ(RMSG_LEASE_FREE, a.todo);
	EXPECT_EQ(RMSG_LEASE_RX_IDLE, p.r.state);
	/* The GRANT sent again before the READY arrived is late: ignored. */
	ASSERT_EQ(RMSG_LEASE_SEND, p.ra.todo);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_FALSE(rmsg_lease_tx_may_write(&p.s));
	/* And the next lease follows. */
	pair_lease(_metadata, &p, 3);
	EXPECT_EQ(2, p.s.lease);
	EXPECT_EQ(0x40, p.r.bytes);
}

/* The yes and the next ASK were both lost. */
TEST(repair_return_and_ask_lost)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	pair_lease(_metadata, &p, 1);
	pair_revoke(_metadata, &p, 0, 0, false, 0, &a);
	rmsg_lease_tx_want(&p.s, &a);
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 1, 0, &a));
	EXPECT_EQ(RMSG_LEASE_FREE, a.todo);
	ASSERT_EQ(RMSG_LEASE_SEND, p.sa.todo);
	m = lm(p.sa.type, p.sa.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	EXPECT_EQ(RMSG_LEASE_ALLOC, a.todo);
}

/* A REVOKE whose GRANT the sender never saw: the lease stays granted. */
TEST(repair_revoke_before_grant_seen)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	rmsg_lease_tx_want(&p.s, &a);
	m = lm(a.type, a.arg);
	ASSERT_EQ(0, rmsg_lease_rx_ask(&p.r, &m, &a));
	ASSERT_EQ(0, rmsg_lease_rx_allocated(&p.r, 9, &a));
	rmsg_lease_rx_idle(&p.r, 0, 0, 0, &a);
	EXPECT_EQ(RMSG_LEASE_RX_REVOKING, p.r.state);
	pair_down(&p);
	ASSERT_EQ(0, pair_connect(&p, 9, 0, &a));
	EXPECT_EQ(0, a.todo);
	EXPECT_EQ(RMSG_LEASE_RX_GRANTED, p.r.state);
	m = lm(p.ra.type, p.ra.arg);
	ASSERT_EQ(0, rmsg_lease_tx_grant(&p.s, &m, &a));
	EXPECT_EQ(RMSG_LEASE_START, a.todo);
}

/* Resume points that no lost message explains. */
TEST(repair_bad_resume_points)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	struct pair p;

	pair_init(_metadata, &p, 0, 0);
	/* Idle receiver: the sender holds nothing, knows lease 0. */
	pair_down(&p);
	rmsg_lease_rx_connected(&p.r, 0, &a);
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 0, true));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 1, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 0xffff, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 0, false));
	ASSERT_EQ(0, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	/* Once per connection. */
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));

	/* Sender without a lease: the receiver cannot have granted one. */
	rmsg_lease_tx_connected(&p.s, &a);
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(1, true, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(1, false, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 0, false));
	ASSERT_EQ(0, rmsg_lease_tx_peer_ready(&p.s, &m));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));

	/* Granted and held: neither may say the other ended it. */
	pair_lease(_metadata, &p, 1);
	pair_down(&p);
	rmsg_lease_rx_connected(&p.r, 0, &a);
	rmsg_lease_tx_connected(&p.s, &a);
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 1, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(0, false, 2, true));
	EXPECT_EQ(-EPROTO, rmsg_lease_rx_peer_ready(&p.r, &m, 0, &a));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(1, false, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(2, true, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));
	/* Messages before the READY are -EPROTO too. */
	m = lm(RMSG_CTRL_GRANT, RMSG_GRANT_ARG(1, 1, SZ));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_grant(&p.s, &m, &a));
	m = lm(RMSG_CTRL_REVOKE, RMSG_REVOKE_ARG(1, 0));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_revoke(&p.s, &m, false, 0, 0, &a));
	/* And with no connection at all. */
	pair_down(&p);
	m = lm(RMSG_CTRL_READY, RMSG_READY_ARG(1, true, 0, false));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_peer_ready(&p.s, &m));
}

/* Without a lease the peer's block stands exactly where the last ended. */
TEST(resume_without_lease)
{
	struct pair p;

	pair_init(_metadata, &p, 40, 4000);
	EXPECT_EQ(0, rmsg_lease_tx_resume_check(&p.s, 4000, 4000, 40));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_resume_check(&p.s, 4000, 4016, 40));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_resume_check(&p.s, 3984, 4000, 40));
	EXPECT_EQ(-EPROTO, rmsg_lease_tx_resume_check(&p.s, 4000, 4000, 41));
	pair_lease(_metadata, &p, 1);
	/* Held: the shadow's resume (rmsg_vb_tx_resume()) checks it. */
	EXPECT_EQ(0, rmsg_lease_tx_resume_check(&p.s, 4000, 4016, 41));
}

/* Lease numbers are 16 bits and wrap. */
TEST(lease_wrap)
{
	struct rmsg_lease_act a;
	struct pair p;
	int i;

	pair_init(_metadata, &p, 0, 0);
	p.r.lease = 0xfffd;
	p.s.lease = 0xfffd;
	for (i = 0; i < 6; i++) {
		pair_lease(_metadata, &p, i);
		pair_revoke(_metadata, &p, 0, 0, false, 0, &a);
		ASSERT_EQ(RMSG_LEASE_SEND | RMSG_LEASE_FREE, a.todo);
		struct rmsg_lease_msg m = lm(a.type, a.arg);

		ASSERT_EQ(0, rmsg_lease_rx_return(&p.r, &m, 0, &a));
		ASSERT_EQ(RMSG_LEASE_FREE, a.todo);
	}
	EXPECT_EQ(3, p.r.lease);
	EXPECT_EQ(3, p.s.lease);
}

/* ------------------------------------------------------------------ */
/* Two peers, real records, a connection that breaks                  */

enum { E_CTRL, E_WRITE };

/* What travels on the connection, in order. */
struct ent {
	u8 kind;
	u8 type;
	u64 arg;
	u32 off, len, clear;	/* a write */
	u32 rkey;
	u16 lease;
};

#define QCAP	8192

struct queue {
	struct ent e[QCAP];
	u32 head, tail;
};

struct sim {
	u32 size, seq0;
	u64 rng;
	bool up;
	/* the receiver */
	struct rmsg_lease_rx lr;
	u8 *blk;
	u32 rkey;
	bool allocating;
	struct rmsg_vb_rx prx;		/* the program's cursor */
	u32 r_seq, r_bytes;		/* where the program stands */
	u32 blocks;			/* blocks in existence */
	/* the sender */
	struct rmsg_lease_tx ls;
	struct rmsg_vb_tx tx;
	u8 *shadow;
	u32 pending;			/* messages the program gave */
	u32 next_seq;			/* sequence number of the next one */
	u32 s_seq, s_bytes;		/* where the last lease ended */
	struct rmsg_vb_retx rt;
	bool rewrite_owed;
	u32 s_inflight;			/* writes on the connection */
	/* the connection, each way */
	struct queue ab, ba;
	/* what happened */
	u32 leases, revokes, keeps, returns, repairs, implied, allocfail;
	u32 rewrites, stale_grants, held_repairs;
	bool traffic, faults, break_soon;
	u8 buf[65536];
	char err[256];
};

static int sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void payload_fill(u32 seq, u8 *buf, u32 len)
{
	u32 x = seq * 0x9e3779b9U ^ 0x2545f491U, i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (u8)(x >> 11);
	}
}

static int q_push(struct sim *s, struct queue *q, const struct ent *e)
{
	if (q->tail - q->head >= QCAP)
		return sim_fail(s, "queue full");
	q->e[q->tail++ % QCAP] = *e;
	return 0;
}

static int send_ctrl(struct sim *s, struct queue *q, u8 type, u64 arg)
{
	struct ent e = { .kind = E_CTRL, .type = type, .arg = arg };

	/* With no connection a message is lost, as a kernel's would be. */
	if (!s->up)
		return 0;
	/* Break the connection soon after a lease message, at times. */
	if (type != RMSG_CTRL_CREDIT && type != RMSG_CTRL_READY &&
	    s->faults && !rng_below(&s->rng, 6))
		s->break_soon = true;
	return q_push(s, q, &e);
}

/* The receiver's walk: the end of the complete records in its block. */
static int r_walk(struct sim *s, u32 *arrived, u32 *seq)
{
	struct rmsg_vb_rx k = s->prx;
	struct rmsg_vb_msg m;
	int ret;

	if (!s->blk) {
		*arrived = s->r_bytes;
		*seq = s->r_seq;
		return 0;
	}
	while ((ret = rmsg_vb_rx_poll(&k, s->blk, &m)) > 0)
		;
	if (ret)
		return sim_fail(s, "walk: %d", ret);
	*arrived = k.consumed;
	*seq = k.seq;
	return 0;
}

static int r_act(struct sim *s, const struct rmsg_lease_act *a)
{
	if (a->todo & RMSG_LEASE_ALLOC) {
		if (s->blk || s->allocating)
			return sim_fail(s, "second block asked for");
		s->allocating = true;
	}
	if (a->todo & RMSG_LEASE_START) {
		if (!s->blk)
			return sim_fail(s, "lease started without block");
		if (a->seq != s->r_seq || a->bytes != s->r_bytes)
			return sim_fail(s, "rx lease starts at %u/%u, not %u/%u",
					a->seq, a->bytes, s->r_seq, s->r_bytes);
		if (rmsg_vb_rx_init(&s->prx, s->size, a->seq, a->bytes))
			return sim_fail(s, "rx init");
	}
	if (a->todo & RMSG_LEASE_FREE) {
		if (!s->blk)
			return sim_fail(s, "free without block");
		if (s->prx.consumed != s->prx.freed ||
		    s->prx.consumed != s->r_bytes)
			return sim_fail(s, "block freed with records unreleased");
		/* ASan catches any write that lands after this. */
		free(s->blk);
		s->blk = NULL;
		s->blocks--;
		s->returns++;
	}
	if (a->todo & RMSG_LEASE_SEND)
		return send_ctrl(s, &s->ba, a->type, a->arg);
	return 0;
}

/* Queue every rewrite the resume asked for, after this connection's key. */
static int s_rewrite(struct sim *s)
{
	struct rmsg_vb_rewrite w;
	int ret;

	while ((ret = rmsg_vb_retx_next(&s->rt, s->shadow, &w)) > 0) {
		struct ent e = {
			.kind = E_WRITE, .off = w.off, .len = w.len,
			.clear = w.clear, .rkey = s->ls.rkey,
			.lease = s->ls.lease,
		};

		if (q_push(s, &s->ab, &e))
			return -1;
		s->s_inflight++;
		s->rewrites++;
	}
	if (ret)
		return sim_fail(s, "retx %d", ret);
	s->rewrite_owed = false;
	return 0;
}

static int s_act(struct sim *s, const struct rmsg_lease_act *a)
{
	if (a->todo & RMSG_LEASE_START) {
		if (!s->shadow)
			return sim_fail(s, "lease started without shadow");
		if (a->seq != s->s_seq || a->bytes != s->s_bytes ||
		    a->seq != s->next_seq - s->pending)
			return sim_fail(s, "tx lease starts at %u/%u",
					a->seq, a->bytes);
		if (rmsg_vb_tx_init(&s->tx, s->size, a->seq, a->bytes))
			return sim_fail(s, "tx init");
		/* Any garbage: the credit rule keeps old bytes unread. */
		memset(s->shadow, 0xee, s->size);
		s->leases++;
	}
	if (a->todo & RMSG_LEASE_FREE) {
		/* The glue waits for the data WRs; here all must have landed. */
		if (s->s_inflight)
			return sim_fail(s, "shadow freed, %u writes in flight",
					s->s_inflight);
		s->s_seq = s->tx.seq;
		s->s_bytes = s->tx.written;
		free(s->shadow);
		s->shadow = NULL;
	}
	if (a->todo & RMSG_LEASE_SEND)
		return send_ctrl(s, &s->ab, a->type, a->arg);
	return 0;
}

/* The sender's program gives a message; a lease is asked for if need be. */
static int s_give(struct sim *s)
{
	struct rmsg_lease_act a;

	s->pending++;
	s->next_seq++;
	if (s->ls.state != RMSG_LEASE_TX_NONE)
		return 0;
	if (!s->shadow)
		s->shadow = malloc(s->size);
	if (!s->shadow)
		return sim_fail(s, "no memory");
	rmsg_lease_tx_want(&s->ls, &a);
	return s_act(s, &a);
}

/* The length of message @seq, a function of it (up to the largest). */
static u32 msg_len(struct sim *s, u32 seq)
{
	u32 x = seq * 2654435761U;

	return x % 61 == 0 ? s->tx.max_payload : (x >> 8) % 300;
}

/* Write what waits, while the lease and the credit allow. */
static int s_pump(struct sim *s)
{
	struct rmsg_vb_trailer t, wt;
	struct rmsg_vb_place pl;
	u32 n = 1 + rng_below(&s->rng, 4);

	/* After a repair, what the peer lacks first, under the new key. */
	if (!rmsg_lease_tx_may_write(&s->ls))
		return 0;
	if (s->rewrite_owed && s_rewrite(s))
		return -1;
	while (n-- && s->pending) {
		u32 seq = s->next_seq - s->pending, len = msg_len(s, seq);
		struct ent e = {
			.kind = E_WRITE, .rkey = s->ls.rkey,
			.lease = s->ls.lease,
		};

		if (rmsg_vb_tx_place(&s->tx, len, &pl))
			return 0;	/* no credit yet */
		if (pl.seq != seq)
			return sim_fail(s, "placed seq %u, not %u", pl.seq, seq);
		rmsg_vb_trailer_fill(&t, &pl, RMSG_VB_DATA, 0, 0);
		rmsg_vb_trailer_fill(&wt, &pl, RMSG_VB_WRAP, 0, 0);
		rmsg_vb_shadow_put(s->shadow, &pl, &t, &wt);
		payload_fill(seq, s->shadow + pl.off + pl.payload, len);
		rmsg_vb_tx_commit(&s->tx, &pl);
		if (pl.wrap_skip) {
			e.off = pl.wrap_off;
			e.len = RMSG_VB_TRAILER_SIZE;
			e.clear = 0;
			if (q_push(s, &s->ab, &e))
				return -1;
			s->s_inflight++;
		}
		e.off = pl.off;
		e.len = pl.len;
		e.clear = pl.payload;
		if (q_push(s, &s->ab, &e))
			return -1;
		s->s_inflight++;
		s->pending--;
	}
	return 0;
}

/* A write lands: only into the block of the lease it was written under. */
static int r_land(struct sim *s, const struct ent *e)
{
	if (!s->blk || !rmsg_lease_rx_has_block(&s->lr))
		return sim_fail(s, "write lands with no block");
	if (e->lease != s->lr.lease || e->rkey != s->rkey)
		return sim_fail(s, "write of lease %u key %x into lease %u key %x",
				e->lease, e->rkey, s->lr.lease, s->rkey);
	if (e->off + e->len > s->size || !s->shadow)
		return sim_fail(s, "write outside the block or shadow");
	memset(s->blk + e->off, 0, e->clear);
	memcpy(s->blk + e->off + e->clear, s->shadow + e->off + e->clear,
	       e->len - e->clear);
	s->s_inflight--;
	return 0;
}

/* The receiver reads a control message from the sender. */
static int r_ctrl(struct sim *s, const struct ent *e)
{
	struct rmsg_lease_act a;
	struct rmsg_lease_msg m;
	u32 arrived, seq;
	int ret;

	if (rmsg_lease_msg_decode(e->type, e->arg, &m))
		return sim_fail(s, "bad message %u %llx", e->type,
				(unsigned long long)e->arg);
	if (r_walk(s, &arrived, &seq))
		return -1;
	switch (e->type) {
	case RMSG_CTRL_READY:
		ret = rmsg_lease_rx_peer_ready(&s->lr, &m, arrived, &a);
		if (a.todo & RMSG_LEASE_FREE)
			s->implied++;
		break;
	case RMSG_CTRL_ASK:
		ret = rmsg_lease_rx_ask(&s->lr, &m, &a);
		break;
	case RMSG_CTRL_RETURN:
		ret = rmsg_lease_rx_return(&s->lr, &m, arrived, &a);
		if (m.flag)
			s->keeps++;
		break;
	default:
		return sim_fail(s, "rx type %u", e->type);
	}
	if (ret)
		return sim_fail(s, "rx type %u arg %llx: %d (state %u lease %u)",
				e->type, (unsigned long long)e->arg, ret,
				s->lr.state, s->lr.lease);
	return r_act(s, &a);
}

/* The sender reads a control message from the receiver. */
static int s_ctrl(struct sim *s, const struct ent *e)
{
	struct rmsg_lease_act a = { 0 };
	struct rmsg_lease_msg m;
	int ret = 0;

	if (e->type == RMSG_CTRL_CREDIT) {
		/* A credit of a lease given back is nothing. */
		if (s->ls.state == RMSG_LEASE_TX_HELD &&
		    rmsg_vb_tx_credit(&s->tx, (u32)e->arg))
			return sim_fail(s, "credit %llx refused",
					(unsigned long long)e->arg);
		return 0;
	}
	if (rmsg_lease_msg_decode(e->type, e->arg, &m))
		return sim_fail(s, "bad message %u", e->type);
	switch (e->type) {
	case RMSG_CTRL_READY:
		ret = rmsg_lease_tx_peer_ready(&s->ls, &m);
		break;
	case RMSG_CTRL_GRANT:
		ret = rmsg_lease_tx_grant(&s->ls, &m, &a);
		if (!ret && !a.todo)
			s->stale_grants++;
		break;
	case RMSG_CTRL_REVOKE:
		s->revokes++;
		ret = rmsg_lease_tx_revoke(&s->ls, &m,
					   s->pending || s->rewrite_owed,
					   s->tx.written, s->tx.seq, &a);
		break;
	default:
		return sim_fail(s, "tx type %u", e->type);
	}
	if (ret)
		return sim_fail(s, "tx type %u arg %llx: %d (state %u lease %u)",
				e->type, (unsigned long long)e->arg, ret,
				s->ls.state, s->ls.lease);
	return s_act(s, &a);
}

static int deliver_ab(struct sim *s)
{
	struct ent e;

	if (!s->up || s->ab.head == s->ab.tail)
		return 0;
	e = s->ab.e[s->ab.head++ % QCAP];
	return e.kind == E_WRITE ? r_land(s, &e) : r_ctrl(s, &e);
}

static int deliver_ba(struct sim *s)
{
	struct ent e;

	if (!s->up || s->ba.head == s->ba.tail)
		return 0;
	e = s->ba.e[s->ba.head++ % QCAP];
	return s_ctrl(s, &e);
}

/* The receiving program: read what arrived; release some of it. */
static int r_program(struct sim *s, bool all)
{
	struct rmsg_vb_msg m;
	int ret;

	if (!s->blk || !rmsg_lease_rx_has_block(&s->lr))
		return 0;
	while ((ret = rmsg_vb_rx_poll(&s->prx, s->blk, &m)) > 0) {
		if (m.seq != s->r_seq)
			return sim_fail(s, "got seq %u, want %u", m.seq,
					s->r_seq);
		payload_fill(m.seq, s->buf, m.len);
		if (m.len != msg_len(s, m.seq) ||
		    memcmp(s->buf, s->blk + m.off, m.len))
			return sim_fail(s, "message %u corrupt", m.seq);
		s->r_seq++;
		if (!all && !rng_below(&s->rng, 3))
			break;
	}
	if (ret < 0)
		return sim_fail(s, "poll %d", ret);
	s->r_bytes = s->prx.consumed;
	if (all || rng_below(&s->rng, 2)) {
		if (rmsg_vb_rx_release(&s->prx, s->prx.consumed))
			return sim_fail(s, "release");
	}
	if (s->up && rmsg_vb_rx_credit_due(&s->prx))
		return send_ctrl(s, &s->ba, RMSG_CTRL_CREDIT,
				 rmsg_vb_rx_advertise(&s->prx));
	return 0;
}

/* The receiver's block is made (or not: memory is short at times). */
static int r_alloc_done(struct sim *s, bool may_fail)
{
	struct rmsg_lease_act a;

	if (!s->allocating)
		return 0;
	s->allocating = false;
	if (may_fail && !rng_below(&s->rng, 8)) {
		s->allocfail++;
		if (rmsg_lease_rx_alloc_failed(&s->lr))
			return sim_fail(s, "alloc_failed");
		return 0;
	}
	s->blk = malloc(s->size);
	if (!s->blk)
		return sim_fail(s, "no memory");
	/* Garbage, stale flags of both parities, but the last trailer. */
	for (u32 i = 0; i < s->size; i++)
		s->blk[i] = (u8)rng_next(&s->rng);
	rmsg_vb_block_init(s->blk, s->size);
	s->blocks++;
	if (s->blocks > 1)
		return sim_fail(s, "two blocks");
	s->rkey = (u32)rng_next(&s->rng);
	if (rmsg_lease_rx_allocated(&s->lr, s->rkey, &a))
		return sim_fail(s, "allocated");
	return r_act(s, &a);
}

static int r_idle(struct sim *s)
{
	struct rmsg_lease_act a;
	u32 arrived, seq;

	if (r_walk(s, &arrived, &seq))
		return -1;
	rmsg_lease_rx_idle(&s->lr, arrived,
			   s->blk ? s->prx.freed : arrived, seq, &a);
	return r_act(s, &a);
}

/* The connection breaks: everything in flight is lost. */
static void sim_break(struct sim *s)
{
	s->up = false;
	s->ab.head = s->ab.tail;
	s->ba.head = s->ba.tail;
	s->s_inflight = 0;
	rmsg_lease_rx_down(&s->lr);
	rmsg_lease_tx_down(&s->ls);
	s->repairs++;
}

/*
 * A new connection: the resume points (the hello's counters, and the
 * READYs' leases), as the kernels exchange them.
 */
static int sim_connect(struct sim *s)
{
	struct rmsg_lease_act ra, sa;
	u32 arrived, seq, freed;
	struct ent e = { .kind = E_CTRL, .type = RMSG_CTRL_READY };

	if (r_walk(s, &arrived, &seq))
		return -1;
	/* The hello's rx_freed is a credit: advertised with it. */
	freed = s->blk ? rmsg_vb_rx_advertise(&s->prx) : arrived;
	if (s->ls.state == RMSG_LEASE_TX_HELD) {
		if (rmsg_vb_tx_resume(&s->tx, s->shadow, freed, arrived, seq,
				      &s->rt))
			return sim_fail(s, "resume refused");
		s->rewrite_owed = true;
		s->held_repairs++;
	} else if (rmsg_lease_tx_resume_check(&s->ls, freed, arrived, seq)) {
		return sim_fail(s, "resume without lease refused: %u %u %u",
				freed, arrived, seq);
	}
	s->up = true;
	/* Half the repairs land on another device: a new key. */
	if (s->blk && rng_below(&s->rng, 2))
		s->rkey = (u32)rng_next(&s->rng);
	rmsg_lease_rx_connected(&s->lr, s->rkey, &ra);
	rmsg_lease_tx_connected(&s->ls, &sa);
	/* Each side's READY first, then what its machines asked for. */
	e.arg = rmsg_lease_ready_arg(&s->lr, NULL);
	if (q_push(s, &s->ba, &e))
		return -1;
	e.arg = rmsg_lease_ready_arg(NULL, &s->ls);
	if (q_push(s, &s->ab, &e))
		return -1;
	if (r_act(s, &ra) || s_act(s, &sa))
		return -1;
	return 0;
}

static int sim_init(struct sim *s, u32 size, u64 seed, u16 lease0)
{
	u32 seq0, bytes0;

	memset(s, 0, sizeof(*s));
	s->size = size;
	s->rng = seed;
	/* Counters and sequence numbers start close to 2^32. */
	bytes0 = 0xffffffffU - rng_below(&s->rng, 3 * size);
	seq0 = 0xffffffffU - rng_below(&s->rng, 1000);
	if (rmsg_lease_rx_init(&s->lr, size, seq0, bytes0) ||
	    rmsg_lease_tx_init(&s->ls, size, seq0, bytes0))
		return -EINVAL;
	s->lr.lease = lease0;
	s->ls.lease = lease0;
	s->r_seq = s->s_seq = s->next_seq = s->seq0 = seq0;
	s->r_bytes = s->s_bytes = bytes0;
	s->tx.max_payload = rmsg_vb_max_payload(size);
	s->traffic = true;
	return sim_connect(s);
}

static void sim_free(struct sim *s)
{
	free(s->blk);
	free(s->shadow);
}

static int sim_step(struct sim *s, bool faults)
{
	s->faults = faults;
	if (s->break_soon && rng_below(&s->rng, 2)) {
		s->break_soon = false;
		if (s->up)
			sim_break(s);
		return 0;
	}
	switch (rng_below(&s->rng, 16)) {
	case 0:
	case 1:
		/* Below what the receiver reads, so that bursts end. */
		if (s->traffic && rng_below(&s->rng, 3))
			return s_give(s);
		return 0;
	case 2:
	case 3:
		return s_pump(s);
	case 4:
	case 5:
	case 6:
		return deliver_ab(s);
	case 7:
	case 8:
	case 9:
		return deliver_ba(s);
	case 10:
	case 11:
		return r_program(s, false);
	case 12:
		/* The idle timer: a block idle for a while is taken back. */
		return rng_below(&s->rng, 4) ? 0 : r_idle(s);
	case 13:
		if (!s->allocating && s->lr.ask_waiting &&
		    !rng_below(&s->rng, 4)) {
			struct rmsg_lease_act a;

			rmsg_lease_rx_retry(&s->lr, &a);
			return r_act(s, &a);
		}
		return rng_below(&s->rng, 2) ? 0 : r_alloc_done(s, faults);
	case 14:
		/* Traffic comes in bursts, with idle periods between. */
		if (!rng_below(&s->rng, 40))
			s->traffic = !s->traffic;
		return 0;
	default:
		if (!faults)
			return 0;
		if (s->up && !rng_below(&s->rng, 80)) {
			sim_break(s);
			return 0;
		}
		if (!s->up && !rng_below(&s->rng, 3))
			return sim_connect(s);
		return 0;
	}
}

/*
 * No more faults or new messages: everything given must arrive within a
 * bounded number of steps (no deadlock), the idle receiver revoking all
 * the while.
 */
static int sim_settle(struct sim *s)
{
	u32 i;

	s->faults = false;
	s->break_soon = false;
	if (!s->up && sim_connect(s))
		return -1;
	for (i = 0; i < 100000; i++) {
		struct rmsg_lease_act a;

		if (s->lr.ask_waiting && !s->allocating) {
			rmsg_lease_rx_retry(&s->lr, &a);
			if (r_act(s, &a))
				return -1;
		}
		if (r_alloc_done(s, false) || s_pump(s) || deliver_ab(s) ||
		    deliver_ba(s) || r_program(s, true))
			return -1;
		if (!(i % 64) && r_idle(s))
			return -1;
		if (!s->pending && !s->rewrite_owed &&
		    s->ab.head == s->ab.tail && s->ba.head == s->ba.tail &&
		    s->r_seq == s->next_seq && !s->allocating)
			return 0;
	}
	return sim_fail(s, "stuck: %u pending, lease states %u/%u, %u/%u",
			s->pending, s->lr.state, s->ls.state, s->r_seq,
			s->next_seq);
}

static int sim_run(struct sim *s, u32 steps)
{
	u32 i;

	for (i = 0; i < steps; i++) {
		if (sim_step(s, true))
			return -1;
		/* Now and then, quiet: every message must get through. */
		if (i % 50000 == 49999 && sim_settle(s))
			return -1;
	}
	if (sim_settle(s))
		return -1;
	/* Then idle: the block goes back, and nothing is held. */
	s->traffic = false;
	for (i = 0; i < 64 && s->blk; i++)
		if (r_idle(s) || deliver_ba(s) || deliver_ab(s) ||
		    deliver_ba(s) || deliver_ab(s))
			return -1;
	if (s->blk || s->shadow || s->blocks)
		return sim_fail(s, "idle channel still holds a block or shadow");
	return 0;
}

static void sim_case(struct __test_metadata *_metadata, u32 size, u64 seed,
		     u16 lease0, u32 steps)
{
	struct sim *s = calloc(1, sizeof(*s));
	int ret;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, sim_init(s, size, seed, lease0));
	ret = sim_run(s, steps);
	EXPECT_EQ(0, ret) TH_LOG("seed %#llx: %s", (unsigned long long)seed,
				 s->err);
	TH_LOG("size %u: %u messages, %u leases, %u revokes (%u kept), %u returned, %u repairs (%u held, %u returns lost), %u rewrites, %u late grants, %u allocations failed",
	       size, s->next_seq - s->seq0, s->leases, s->revokes, s->keeps, s->returns,
	       s->repairs, s->held_repairs, s->implied, s->rewrites,
	       s->stale_grants, s->allocfail);
	/* The run went through every path it is there for. */
	if (!ret) {
		EXPECT_LT(100, s->leases);
		EXPECT_LT(10, s->keeps);
		EXPECT_LT(10, s->held_repairs);
		EXPECT_LT(0, s->implied);
		EXPECT_LT(0, s->stale_grants);
		EXPECT_LT(0, s->allocfail);
		EXPECT_LT(0, s->rewrites);
	}
	sim_free(s);
	free(s);
}

TEST(random_peers)
{
	u64 seed = test_seed(0x1ea5e);

	sim_case(_metadata, SZ, seed, 0, 1000000);
	sim_case(_metadata, 4096, seed + 1, 0xfff0, 1000000);
	sim_case(_metadata, 8192, seed + 2, 0x7ff0, 1000000);
}

TEST_HARNESS_MAIN
