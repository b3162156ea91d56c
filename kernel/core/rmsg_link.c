// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: a link's receive credits.
 *
 * Many channels share a link's receive queue, so a message can no longer
 * count on a receive of its own channel: the link posts its receives and
 * lends them to whoever sends. The peer never meets receiver-not-ready,
 * whatever its channels do, because it sends only what the receives
 * announced allow. All counters are free-running 32-bit: compare
 * distances.
 */
#include "rmsg_link.h"

/**
 * rmsg_link_credit_init() - credits of a new connection of a link
 * @c: the link's credits, set whole
 * @recvs: receives this side posted (at least 2: one is the LCREDIT's)
 * @peer_recvs: the peer's (both RMSG_LINK_RECVS on a link)
 *
 * Every connection starts anew: a repaired link's receives are new ones.
 */
void rmsg_link_credit_init(struct rmsg_link_credit *c, u32 recvs,
			   u32 peer_recvs)
{
	c->recvs = recvs;
	c->peer_recvs = peer_recvs;
	c->sent = 0;
	c->peer_posted = peer_recvs;
	c->received = 0;
	c->posted = recvs;
	c->announced = recvs;
}

/* Receives of the peer's this side has not used yet. */
static u32 rmsg_link_budget(const struct rmsg_link_credit *c)
{
	return c->peer_posted - c->sent;
}

/**
 * rmsg_link_may_send() - may a channel's message go now?
 * @c: the link's credits
 *
 * Return: true while two of the peer's receives are left: the last is the
 * LCREDIT's.
 */
bool rmsg_link_may_send(const struct rmsg_link_credit *c)
{
	return rmsg_link_budget(c) >= 2;
}

/**
 * rmsg_link_may_announce() - may an LCREDIT go now?
 * @c: the link's credits
 *
 * Return: true while one of the peer's receives is left.
 */
bool rmsg_link_may_announce(const struct rmsg_link_credit *c)
{
	return rmsg_link_budget(c) >= 1;
}

/**
 * rmsg_link_sent() - a message was posted on the link
 * @c: the link's credits
 *
 * The caller asked rmsg_link_may_send() (or, for an LCREDIT,
 * rmsg_link_may_announce()) first.
 */
void rmsg_link_sent(struct rmsg_link_credit *c)
{
	c->sent++;
}

/**
 * rmsg_link_credit_in() - the peer's LCREDIT arrived
 * @c: the link's credits
 * @value: its argument: the receives the peer has posted in all
 *
 * The value never goes back, and the peer cannot have posted more than its
 * first receives and one for each message it could have had from us.
 *
 * Return: 0, or -EPROTO when @value breaks those rules.
 */
int rmsg_link_credit_in(struct rmsg_link_credit *c, u32 value)
{
	u32 most = c->peer_recvs + c->sent;

	if (value - c->peer_posted > most - c->peer_posted)
		return -EPROTO;
	c->peer_posted = value;
	return 0;
}

/**
 * rmsg_link_arrived() - a message came into one of this side's receives
 * @c: the link's credits
 *
 * Return: 0, or -EPROTO when the peer sent more than this side announced
 * (on RC the device would have refused it first; a peer's bug all the
 * same).
 */
int rmsg_link_arrived(struct rmsg_link_credit *c)
{
	if (c->received == c->announced)
		return -EPROTO;
	c->received++;
	return 0;
}

/**
 * rmsg_link_reposted() - a received message's buffer is posted again
 * @c: the link's credits
 */
void rmsg_link_reposted(struct rmsg_link_credit *c)
{
	c->posted++;
}

/**
 * rmsg_link_announce_due() - should an LCREDIT go?
 * @c: the link's credits
 *
 * Due once half the receives were posted again since the peer last heard.
 * That is enough: the peer stops only when it has used every receive
 * announced, and then all of this side's receives have been read since
 * the last announcement, so once half of them are posted again one goes;
 * it can, because the LCREDIT has the peer's last receive to itself.
 *
 * Return: true when an LCREDIT is due.
 */
bool rmsg_link_announce_due(const struct rmsg_link_credit *c)
{
	return c->posted - c->announced >= (c->recvs + 1) / 2;
}

/**
 * rmsg_link_announce() - an LCREDIT is about to go
 * @c: the link's credits
 *
 * Return: its argument, the receives posted in all.
 */
u32 rmsg_link_announce(struct rmsg_link_credit *c)
{
	c->announced = c->posted;
	return c->posted;
}

/**
 * rmsg_link_ctrlq_init() - an empty queue
 * @q: set whole
 */
void rmsg_link_ctrlq_init(struct rmsg_link_ctrlq *q)
{
	memset(q, 0, sizeof(*q));
}

/**
 * rmsg_link_ctrlq_put() - a channel's control message for the link
 * @q: the channel's queue
 * @kind: which of its kinds, below RMSG_LINK_CTRLQ_KINDS (the caller's
 *	constant; others are ignored)
 * @type: enum rmsg_ctrl_type
 * @arg: its argument
 *
 * Return: true when the kind was not waiting and now is, at the end;
 * false when it was and takes the new type and value in its place (or
 * @kind is out of range).
 */
bool rmsg_link_ctrlq_put(struct rmsg_link_ctrlq *q, u32 kind, u8 type,
			 u64 arg)
{
	if (kind >= RMSG_LINK_CTRLQ_KINDS)
		return false;
	q->type[kind] = type;
	q->arg[kind] = arg;
	if (q->queued & (1U << kind))
		return false;
	q->queued |= 1U << kind;
	q->order[(q->head + q->len) % RMSG_LINK_CTRLQ_KINDS] = kind;
	q->len++;
	return true;
}

/**
 * rmsg_link_ctrlq_queued() - is a message of @kind waiting?
 * @q: the channel's queue
 * @kind: the kind
 *
 * Return: whether it is.
 */
bool rmsg_link_ctrlq_queued(const struct rmsg_link_ctrlq *q, u32 kind)
{
	return kind < RMSG_LINK_CTRLQ_KINDS && (q->queued & (1U << kind));
}

/**
 * rmsg_link_ctrlq_pop() - the oldest kind waiting, taken out
 * @q: the channel's queue
 * @kind: set to its kind
 * @type: set to its type
 * @arg: set to its newest argument
 *
 * Return: false when nothing waits (the outputs untouched).
 */
bool rmsg_link_ctrlq_pop(struct rmsg_link_ctrlq *q, u32 *kind, u8 *type,
			 u64 *arg)
{
	u32 k;

	if (!q->len)
		return false;
	k = q->order[q->head];
	q->head = (q->head + 1) % RMSG_LINK_CTRLQ_KINDS;
	q->len--;
	q->queued &= ~(1U << k);
	*kind = k;
	*type = q->type[k];
	*arg = q->arg[k];
	return true;
}

/**
 * rmsg_link_ctrlq_drop() - drop everything waiting
 * @q: the channel's queue, empty afterwards
 *
 * Return: the kinds that were waiting, a bit each.
 */
u32 rmsg_link_ctrlq_drop(struct rmsg_link_ctrlq *q)
{
	u32 was = q->queued;

	q->queued = 0;
	q->head = 0;
	q->len = 0;
	return was;
}
