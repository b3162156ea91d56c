/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_carrier.c: a carrier's link messages (Documentation/design.rst,
 * "How the module will carry links (plan)"), for the connection code
 * below the life cycle (rmsg_conn.c), the fault injector and the links
 * above.
 */
#ifndef RMSG_CARRIER_H
#define RMSG_CARRIER_H

#include "rmsg_chan.h"

/*
 * A carrier's receive queue: the channel's own control receives and the
 * link's, all RMSG_WIRE_LMSG_MAX bytes, so that either kind of message can
 * land in any of them (a receive queue is consumed in order).
 */
#define RMSG_CARRIER_RECVS	(RMSG_CTRL_RECVS + RMSG_LINK_RECVS)
/* Link messages in flight from one side: send WRs on top of a channel's. */
#define RMSG_CARRIER_SENDS	32

/**
 * struct rmsg_carrier_stats - what a carrier's link carried, both ways
 * @sent: link messages posted (every type below included)
 * @received: link messages that arrived
 * @lcredit_sent: LCREDITs among @sent
 * @lcredit_received: LCREDITs among @received
 * @refused_sent: REFUSEs among @sent
 * @refused_received: REFUSEs among @received
 * @probes_left: probes (RMSG_FAULT_LINK_PROBE) not sent yet
 * @dropped: messages for a channel this side does not have
 *
 * Counted over the channel's life, across its connections.
 */
struct rmsg_carrier_stats {
	u64 sent;
	u64 received;
	u64 lcredit_sent;
	u64 lcredit_received;
	u64 refused_sent;
	u64 refused_received;
	u64 probes_left;
	u64 dropped;
};

int rmsg_carrier_dev_create(struct rmsg_channel *ch);
void rmsg_carrier_dev_release(struct rmsg_channel *ch);
void rmsg_carrier_free(struct rmsg_channel *ch);
int rmsg_carrier_post_recvs(struct rmsg_channel *ch);
int rmsg_carrier_probe(struct rmsg_channel *ch, u32 count);
void rmsg_carrier_stats(struct rmsg_channel *ch,
			struct rmsg_carrier_stats *stats);

#endif
