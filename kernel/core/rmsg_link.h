/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: a link's receive credits (Documentation/protocol.rst,
 * "Links"). Nothing here allocates, sleeps or locks; the caller serialises
 * each struct rmsg_link_credit.
 */
#ifndef _RMSG_LINK_H
#define _RMSG_LINK_H

#include "rmsg_core_types.h"
#include "rmsg_wire.h"

/**
 * struct rmsg_link_credit - the SENDs a link may carry, both ways
 * @recvs: receives this side keeps posted for the link's messages
 *	(RMSG_LINK_RECVS on every connection of a link)
 * @peer_recvs: the peer's
 * @sent: messages this side posted on the link (free-running, as all
 *	the counters)
 * @peer_posted: receives the peer has announced in all: @peer_recvs,
 *	then each LCREDIT's value
 * @received: messages that arrived
 * @posted: receives this side has posted in all: @recvs, then one more
 *	each time a received message's buffer is posted again
 * @announced: @posted as the peer last heard it (@recvs, then LCREDITs)
 *
 * A message consumes one of the peer's receives; the peer reposts the
 * buffer once it has read it, and says so with an LCREDIT carrying its
 * @posted once half its receives are posted again. One receive is kept
 * for the LCREDIT itself: any other message needs two left, so a side can
 * always announce, and neither waits for the other's LCREDIT while both
 * wait (rmsg_link_announce_due()).
 */
struct rmsg_link_credit {
	u32 recvs;
	u32 peer_recvs;
	u32 sent;
	u32 peer_posted;
	u32 received;
	u32 posted;
	u32 announced;
};

void rmsg_link_credit_init(struct rmsg_link_credit *c, u32 recvs,
			   u32 peer_recvs);
bool rmsg_link_may_send(const struct rmsg_link_credit *c);
bool rmsg_link_may_announce(const struct rmsg_link_credit *c);
void rmsg_link_sent(struct rmsg_link_credit *c);
int rmsg_link_credit_in(struct rmsg_link_credit *c, u32 value);
int rmsg_link_arrived(struct rmsg_link_credit *c);
void rmsg_link_reposted(struct rmsg_link_credit *c);
bool rmsg_link_announce_due(const struct rmsg_link_credit *c);
u32 rmsg_link_announce(struct rmsg_link_credit *c);

/* Kinds of control message a channel on a link may have queued at once. */
#define RMSG_LINK_CTRLQ_KINDS	16

/**
 * struct rmsg_link_ctrlq - a channel's control messages waiting for the
 *	link, one per kind, in the order they were first asked for
 * @queued: a bit per kind waiting
 * @head: the oldest in @order
 * @len: how many are waiting
 * @order: the kinds waiting, a ring from @head
 * @type: each kind's type (enum rmsg_ctrl_type), by kind
 * @arg: each kind's newest argument, by kind
 *
 * A kind stands for one of the channel's send buffers on a direct
 * connection (a CREDIT, a NOTIFY, one rendezvous cookie's FIN, ...): a
 * newer message of a kind that is still waiting takes the older's place
 * and value, as a busy send buffer's kind is sent again with its newest
 * value. Kinds go in the order they were first asked for, so the peer
 * reads a channel's messages in the order the channel sent them, values
 * aside (a CLOSE is never overtaken by the CREDIT before it).
 */
struct rmsg_link_ctrlq {
	u32 queued;
	u8 head;
	u8 len;
	u8 order[RMSG_LINK_CTRLQ_KINDS];
	u8 type[RMSG_LINK_CTRLQ_KINDS];
	u64 arg[RMSG_LINK_CTRLQ_KINDS];
};

void rmsg_link_ctrlq_init(struct rmsg_link_ctrlq *q);
bool rmsg_link_ctrlq_put(struct rmsg_link_ctrlq *q, u32 kind, u8 type,
			 u64 arg);
bool rmsg_link_ctrlq_queued(const struct rmsg_link_ctrlq *q, u32 kind);
bool rmsg_link_ctrlq_pop(struct rmsg_link_ctrlq *q, u32 *kind, u8 *type,
			 u64 *arg);
u32 rmsg_link_ctrlq_drop(struct rmsg_link_ctrlq *q);

/*
 * A link id of a channel (the chan of a link message, a hello's channel or
 * peer_channel on the link): 1 to RMSG_LINK_CHAN_MAX; RMSG_LINK_SELF,
 * RMSG_LINK_NO_CHAN and RMSG_WIRE_NO_CHANNEL are none.
 */
static inline bool rmsg_link_chan_valid(u32 id)
{
	return id >= 1 && id <= RMSG_LINK_CHAN_MAX;
}

#endif /* _RMSG_LINK_H */
