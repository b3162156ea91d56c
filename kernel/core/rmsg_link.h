/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: a link's receive credits (Documentation/protocol.rst,
 * "Links"). Nothing here allocates, sleeps or locks; the caller serialises
 * each struct rmsg_link_credit.
 */
#ifndef _RMSG_LINK_H
#define _RMSG_LINK_H

#include "rmsg_core_types.h"

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

#endif /* _RMSG_LINK_H */
