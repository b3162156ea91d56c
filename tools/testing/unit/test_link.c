// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rmsg_link.c: a link's receive credits. Two sides
 * exchange messages through queues in flight, in random order of events,
 * and the peer's receives are never overrun, nobody waits for ever, and
 * the LCREDITs stay few.
 */
/* The harness's wrappers take parameters they do not use. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include <stdlib.h>

#include "rmsg_link.h"
#include "rmsg_wire.h"

TEST(first_credits)
{
	struct rmsg_link_credit c;

	rmsg_link_credit_init(&c, 8, 3);
	/* Three of the peer's receives: two messages, the last for LCREDIT. */
	EXPECT_TRUE(rmsg_link_may_send(&c));
	rmsg_link_sent(&c);
	EXPECT_TRUE(rmsg_link_may_send(&c));
	rmsg_link_sent(&c);
	EXPECT_FALSE(rmsg_link_may_send(&c));
	EXPECT_TRUE(rmsg_link_may_announce(&c));
	rmsg_link_sent(&c);
	EXPECT_FALSE(rmsg_link_may_announce(&c));
	/* The peer reposted the three: its LCREDIT says 6 in all. */
	EXPECT_EQ(0, rmsg_link_credit_in(&c, 6));
	EXPECT_TRUE(rmsg_link_may_send(&c));
	EXPECT_FALSE(rmsg_link_announce_due(&c));
}

/* An LCREDIT can neither go back nor announce what the peer never had. */
TEST(credit_in_rules)
{
	struct rmsg_link_credit c;

	rmsg_link_credit_init(&c, 8, 4);
	EXPECT_EQ(-EPROTO, rmsg_link_credit_in(&c, 5));
	rmsg_link_sent(&c);
	rmsg_link_sent(&c);
	EXPECT_EQ(0, rmsg_link_credit_in(&c, 5));
	EXPECT_EQ(-EPROTO, rmsg_link_credit_in(&c, 4));
	EXPECT_EQ(0, rmsg_link_credit_in(&c, 5));	/* the same again */
	EXPECT_EQ(0, rmsg_link_credit_in(&c, 6));
	EXPECT_EQ(-EPROTO, rmsg_link_credit_in(&c, 7));
	/* Wrap-safe: counters near 2^32. */
	c.peer_recvs = 4;
	c.sent = 0xfffffffe;
	c.peer_posted = 0xffffffff;
	EXPECT_EQ(0, rmsg_link_credit_in(&c, 2));
	EXPECT_EQ(-EPROTO, rmsg_link_credit_in(&c, 3));
}

/* More than announced arrived: the peer broke the rules. */
TEST(overrun)
{
	struct rmsg_link_credit c;
	int i;

	rmsg_link_credit_init(&c, 4, 4);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, rmsg_link_arrived(&c));
	EXPECT_EQ(-EPROTO, rmsg_link_arrived(&c));
	rmsg_link_reposted(&c);
	EXPECT_FALSE(rmsg_link_announce_due(&c));
	rmsg_link_reposted(&c);
	EXPECT_TRUE(rmsg_link_announce_due(&c));	/* half of 4 */
	EXPECT_EQ(6, rmsg_link_announce(&c));
	EXPECT_FALSE(rmsg_link_announce_due(&c));
	EXPECT_EQ(0, rmsg_link_arrived(&c));
	EXPECT_EQ(0, rmsg_link_arrived(&c));
	EXPECT_EQ(-EPROTO, rmsg_link_arrived(&c));
}

#define INFLIGHT	8192
#define LCREDIT		0xffffffffU

/* One side of a simulated link. */
struct side {
	struct rmsg_link_credit c;
	unsigned int backlog;		/* channel messages waiting to go */
	unsigned int unposted;		/* read, buffer not yet reposted */
	unsigned long delivered;	/* channel messages that arrived */
	unsigned long lcredits;		/* LCREDITs sent */
	/* What it sent, in flight to the other side, in order (RC). */
	unsigned int q[INFLIGHT];
	unsigned int head, tail;
};

static void try_send(struct side *s)
{
	if (rmsg_link_announce_due(&s->c) && rmsg_link_may_announce(&s->c)) {
		s->q[s->tail++ % INFLIGHT] = rmsg_link_announce(&s->c);
		rmsg_link_sent(&s->c);
		s->lcredits++;
	}
	while (s->backlog && rmsg_link_may_send(&s->c)) {
		s->q[s->tail++ % INFLIGHT] = 0;
		rmsg_link_sent(&s->c);
		s->backlog--;
	}
}

/*
 * @from's oldest message arrives at @to; false when it overran @to's
 * receives or was an LCREDIT @to refused.
 */
static bool deliver(struct side *from, struct side *to)
{
	unsigned int m = from->q[from->head++ % INFLIGHT];

	if (rmsg_link_arrived(&to->c))
		return false;
	to->unposted++;
	if (!m) {
		to->delivered++;
		return true;
	}
	return !rmsg_link_credit_in(&to->c, m);
}

/* Everything @from has in flight arrives at @to; false as deliver(). */
static bool drain(struct side *from, struct side *to)
{
	while (from->head != from->tail)
		if (!deliver(from, to))
			return false;
	return true;
}

static void repost(struct side *s)
{
	while (s->unposted) {
		s->unposted--;
		rmsg_link_reposted(&s->c);
	}
}

/*
 * Random traffic both ways with random receive counts, reposts that lag,
 * and deliveries in any interleaving; then no new traffic until every
 * backlog has gone: a side stuck with messages and nothing in flight
 * would be a deadlock.
 */
TEST(random_traffic)
{
	unsigned int seed = 12345, round;
	unsigned long msgs = 0, lcredits = 0;

	for (round = 0; round < 300; round++) {
		static struct side sd[2];
		unsigned int recvs[2], i, step, idle = 0;

		memset(sd, 0, sizeof(sd));
		recvs[0] = 4 + rand_r(&seed) % 64;
		recvs[1] = round % 3 ? 4 +
			   rand_r(&seed) % 300 : 4;
		rmsg_link_credit_init(&sd[0].c, recvs[0], recvs[1]);
		rmsg_link_credit_init(&sd[1].c, recvs[1], recvs[0]);
		for (step = 0; step < 20000 || idle < 4; step++) {
			struct side *s = &sd[rand_r(&seed) & 1];
			struct side *o = s == sd ? &sd[1] : sd;
			unsigned int r = rand_r(&seed) % 8;
			bool ok = true;

			if (step < 20000 && r == 0)
				s->backlog += 1 + rand_r(&seed) % 40;
			else if (r <= 3 && o->head != o->tail)
				ok = deliver(o, s);
			else if (r <= 5)
				repost(s);
			ASSERT_TRUE(ok);
			try_send(s);
			if (step < 20000)
				continue;
			/* Draining: everything moves, or it is stuck. */
			ASSERT_TRUE(drain(&sd[0], &sd[1]));
			ASSERT_TRUE(drain(&sd[1], &sd[0]));
			repost(&sd[0]);
			repost(&sd[1]);
			try_send(&sd[0]);
			try_send(&sd[1]);
			if (sd[0].head == sd[0].tail &&
			    sd[1].head == sd[1].tail)
				idle++;
			ASSERT_LT(step, 200000);
		}
		EXPECT_EQ(0, sd[0].backlog);
		EXPECT_EQ(0, sd[1].backlog);
		for (i = 0; i < 2; i++) {
			msgs += sd[i].delivered;
			lcredits += sd[i].lcredits;
			/* What was announced was never more than posted. */
			EXPECT_LE(sd[i].c.received, sd[i].c.announced);
		}
	}
	TH_LOG("%lu messages, %lu LCREDITs", msgs, lcredits);
	EXPECT_LT(100000, msgs);
	/* The receives are shared, not spent on announcing them. */
	EXPECT_LT(lcredits * 4, msgs);
}

/*
 * Both sides send all they can at once, in lock step: each uses its last
 * receive of the other's for an LCREDIT before the other's comes.
 */
TEST(both_ran_low)
{
	struct side sd[2];
	int i;

	memset(sd, 0, sizeof(sd));
	rmsg_link_credit_init(&sd[0].c, 4, 4);
	rmsg_link_credit_init(&sd[1].c, 4, 4);
	sd[0].backlog = sd[1].backlog = 1000;
	for (i = 0; i < 10000 && (sd[0].backlog || sd[1].backlog); i++) {
		try_send(&sd[0]);
		try_send(&sd[1]);
		ASSERT_TRUE(drain(&sd[0], &sd[1]));
		ASSERT_TRUE(drain(&sd[1], &sd[0]));
		repost(&sd[0]);
		repost(&sd[1]);
	}
	EXPECT_EQ(0, sd[0].backlog);
	EXPECT_EQ(0, sd[1].backlog);
	EXPECT_EQ(1000, sd[1].delivered);
	EXPECT_EQ(1000, sd[0].delivered);
}

/* A channel's control messages: one per kind, newest value, first order. */
TEST(ctrlq_order_and_newest)
{
	struct rmsg_link_ctrlq q;
	u32 kind;
	u8 type;
	u64 arg;

	rmsg_link_ctrlq_init(&q);
	EXPECT_FALSE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_TRUE(rmsg_link_ctrlq_put(&q, 2, RMSG_CTRL_CREDIT, 100));
	EXPECT_TRUE(rmsg_link_ctrlq_put(&q, 0, RMSG_CTRL_READY, 0));
	EXPECT_TRUE(rmsg_link_ctrlq_put(&q, 5, RMSG_CTRL_NOTIFY, 7));
	/* A newer CREDIT takes the waiting one's value, not its place. */
	EXPECT_FALSE(rmsg_link_ctrlq_put(&q, 2, RMSG_CTRL_CREDIT, 300));
	EXPECT_TRUE(rmsg_link_ctrlq_queued(&q, 2));
	EXPECT_FALSE(rmsg_link_ctrlq_queued(&q, 3));
	EXPECT_FALSE(rmsg_link_ctrlq_queued(&q, RMSG_LINK_CTRLQ_KINDS));
	ASSERT_TRUE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_EQ(2, kind);
	EXPECT_EQ(RMSG_CTRL_CREDIT, type);
	EXPECT_EQ(300, arg);
	/* Out again, a kind queues anew at the end. */
	EXPECT_TRUE(rmsg_link_ctrlq_put(&q, 2, RMSG_CTRL_CREDIT, 400));
	ASSERT_TRUE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_EQ(0, kind);
	EXPECT_EQ(RMSG_CTRL_READY, type);
	ASSERT_TRUE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_EQ(5, kind);
	EXPECT_EQ(7, arg);
	ASSERT_TRUE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_EQ(2, kind);
	EXPECT_EQ(400, arg);
	EXPECT_FALSE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	/* Out of range: ignored. */
	EXPECT_FALSE(rmsg_link_ctrlq_put(&q, RMSG_LINK_CTRLQ_KINDS, 1, 1));
	EXPECT_FALSE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
}

TEST(ctrlq_drop)
{
	struct rmsg_link_ctrlq q;
	u32 kind;
	u8 type;
	u64 arg;

	rmsg_link_ctrlq_init(&q);
	rmsg_link_ctrlq_put(&q, 1, RMSG_CTRL_CLOSE, 0);
	rmsg_link_ctrlq_put(&q, 15, RMSG_CTRL_FIN, 9);
	EXPECT_EQ((1U << 1) | (1U << 15), rmsg_link_ctrlq_drop(&q));
	EXPECT_FALSE(rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
	EXPECT_EQ(0, rmsg_link_ctrlq_drop(&q));
}

/*
 * Random puts and pops against a model: every kind at most once, the
 * order of first puts kept, the newest value taken, the ring wrapping.
 */
TEST(ctrlq_random)
{
	struct rmsg_link_ctrlq q;
	u64 want_arg[RMSG_LINK_CTRLQ_KINDS];
	u32 model[RMSG_LINK_CTRLQ_KINDS], n = 0, i, j;

	srandom(37);
	rmsg_link_ctrlq_init(&q);
	for (i = 0; i < 200000; i++) {
		if (random() % 3) {
			u32 k = random() % RMSG_LINK_CTRLQ_KINDS;
			u64 a = ((u64)random() << 32) | (u32)random();
			bool there = false;

			for (j = 0; j < n; j++)
				there |= model[j] == k;
			ASSERT_EQ(!there, rmsg_link_ctrlq_put(&q, k, 3, a));
			if (!there)
				model[n++] = k;
			want_arg[k] = a;
		} else {
			u32 kind;
			u8 type;
			u64 arg;

			ASSERT_EQ(n != 0,
				  rmsg_link_ctrlq_pop(&q, &kind, &type, &arg));
			if (!n)
				continue;
			ASSERT_EQ(model[0], kind);
			ASSERT_EQ(want_arg[kind], arg);
			memmove(model, model + 1, --n * sizeof(model[0]));
		}
		ASSERT_EQ(n, q.len);
	}
}

/* Link ids a peer may name. */
TEST(chan_ids)
{
	EXPECT_FALSE(rmsg_link_chan_valid(RMSG_LINK_SELF));
	EXPECT_TRUE(rmsg_link_chan_valid(1));
	EXPECT_TRUE(rmsg_link_chan_valid(RMSG_LINK_CHAN_MAX));
	EXPECT_FALSE(rmsg_link_chan_valid(RMSG_LINK_NO_CHAN));
	EXPECT_FALSE(rmsg_link_chan_valid(0x1000000));
}

TEST_HARNESS_MAIN
