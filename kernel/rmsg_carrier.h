/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_carrier.c: a carrier's link messages (Documentation/design.rst,
 * "How the module carries links"), for the connection code below the
 * life cycle (rmsg_conn.c, rmsg_cm.c), the fault injector, the links
 * above, and the channels on a link.
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
/*
 * Work requests the channels on a link may have on the carrier's QP in
 * all (struct rmsg_wr_share), on top of the carrier's own; the QP has room
 * for RMSG_CARRIER_SQ_SLACK more, for the posts that take their room only
 * as they post (a channel's block registration as it connects).
 */
#define RMSG_CARRIER_CHAN_WRS	512
#define RMSG_CARRIER_SQ_SLACK	128

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
 * @chans: channels on the link now (attached)
 * @chans_total: channels that were ever attached
 * @accepts_refused: HELLO CONNECTs refused because RMSG_CARRIER_ACCEPTS
 *	were still being set up
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
	u32 chans;
	u32 chans_total;
	u64 accepts_refused;
};

struct rmsg_carrier;
struct rmsg_lmsg;

/*
 * HELLO CONNECTs of the peer's a carrier has taken and not answered yet
 * (their channels being made, out of softirq): more are refused, EBUSY, so
 * that a flood of CONNECTs costs a bounded amount of memory and work.
 */
#define RMSG_CARRIER_ACCEPTS	64

/**
 * struct rmsg_carrier_conn - a link's connection, as a channel attached to
 *	it found it (rmsg_carrier_attach())
 * @qp: the carrier's QP
 * @pd: its PD, in which a channel on the link registers its memory
 * @fence_mr: on rxe, the carrier's never-valid MR in @pd, whose
 *	LOCAL_INV fences a channel's REG_MRs on @qp (rmsg_rndv_move.c) as
 *	the carrier's own would; NULL elsewhere. One for the link, not one
 *	per channel: an rxe MR is about 4 KiB of the driver's, uncharged
 * @rdev: its device
 * @share: the carrier's send queue room for the channels on the link
 * @max_inline: bytes @qp takes inline
 * @max_sge: SGEs per send WR of @qp
 * @local: the carrier's address of the connection
 * @peer: the peer's
 * @seq: which of the link's connections it is
 *
 * Lifetime: @qp is valid while the channel is on it: from
 * rmsg_carrier_attach() or rmsg_carrier_rejoin() until it lets go
 * (rmsg_carrier_qp_release(), or its detach), since the carrier destroys
 * a QP only once no channel is on it (rmsg_carrier_quiesce()), and a
 * channel goes on it only while the connection is up; the channel posts
 * nothing once the connection ended (it is faulted then, and stops). @pd,
 * @fence_mr and @rdev are valid while the channel stays attached: the
 * carrier leaves its device, freeing them, only after every channel on
 * the link detached (rmsg_carrier_evict()). So a channel uses these
 * without a lock or a reference of its own.
 */
struct rmsg_carrier_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_mr *fence_mr;
	struct rmsg_device *rdev;
	struct rmsg_wr_share *share;
	u32 max_inline;
	u32 max_sge;
	union rmsg_sockaddr local;
	union rmsg_sockaddr peer;
	u32 seq;
};

/**
 * struct rmsg_carrier_ops - what a higher layer does with a link's HELLOs
 *	and REFUSEs (rmsg_carrier_on_link(), at module load)
 * @hello: a HELLO arrived: @ch is the channel of ours it names (a
 *	RECONNECT's or an ACCEPT's, on the link), NULL for a CONNECT. Softirq,
 *	under the carrier's lock: copy what is needed and queue work; never
 *	send, attach or detach here. Return 0 when taken (the answer comes
 *	later: rmsg_carrier_hello() or rmsg_carrier_answer()), else the
 *	positive errno (1 to 255) the peer is refused with.
 * @refused: the peer says it refused a HELLO of @ch's, with @err (1 to
 *	255). Softirq, under the carrier's lock, as @hello.
 * @hello_sent: @ch's HELLO left (@ok), or will not (the connection
 *	ended, or the channel's HELLO was not sent on it). Softirq or bottom
 *	halves off, under the carrier's lock, as @hello.
 *
 * rmsg_lmsg_decode() checked the message's form, nothing more: the peer
 * names any channel on the link it likes (ids are taken in turn), in any
 * state. A RECONNECT or an ACCEPT for a channel that is not waiting for
 * one, or a REFUSE of a HELLO @ch never sent, is for the op to ignore or
 * to refuse; taking a CONNECT is the op's to bound (a listener's
 * backlog), since the link's credits bound only the HELLOs in flight,
 * not those taken.
 */
struct rmsg_carrier_ops {
	int (*hello)(struct rmsg_carrier *c, struct rmsg_channel *ch,
		     const struct rmsg_lmsg *m);
	void (*refused)(struct rmsg_channel *ch, int err);
	void (*hello_sent)(struct rmsg_channel *ch, bool ok);
};

int rmsg_carrier_dev_create(struct rmsg_channel *ch);
void rmsg_carrier_dev_release(struct rmsg_channel *ch);
void rmsg_carrier_free(struct rmsg_channel *ch);
int rmsg_carrier_post_recvs(struct rmsg_channel *ch);
int rmsg_carrier_probe(struct rmsg_channel *ch, u32 count);
void rmsg_carrier_stats(struct rmsg_channel *ch,
			struct rmsg_carrier_stats *stats);
void rmsg_carrier_established(struct rmsg_channel *ch);

struct rmsg_carrier *rmsg_carrier_of(struct rmsg_channel *ch);
struct rmsg_carrier *rmsg_carrier_get(struct rmsg_carrier *c);
void rmsg_carrier_put(struct rmsg_carrier *c);
bool rmsg_carrier_up(struct rmsg_carrier *c);
void rmsg_carrier_quiesce(struct rmsg_channel *ch);

int rmsg_carrier_attach(struct rmsg_carrier *c, struct rmsg_channel *ch,
			struct rmsg_carrier_conn *conn);
bool rmsg_carrier_leave(struct rmsg_channel *ch);
void rmsg_carrier_detach(struct rmsg_channel *ch);
bool rmsg_carrier_local(struct rmsg_carrier *c, union rmsg_sockaddr *local);
bool rmsg_carrier_accept_take(struct rmsg_carrier *c);
void rmsg_carrier_accept_done(struct rmsg_carrier *c);
void rmsg_carrier_set_peer(struct rmsg_channel *ch, u32 peer_id);
int rmsg_carrier_hello(struct rmsg_channel *ch, const struct rmsg_hello *h,
		       u16 port);
u32 rmsg_carrier_seq(struct rmsg_carrier *c);
int rmsg_carrier_answer(struct rmsg_carrier *c, u32 seq, u32 peer_chan,
			int err);

bool rmsg_carrier_may_repair(struct rmsg_channel *ch);
bool rmsg_carrier_drain_wait(struct rmsg_channel *ch);
void rmsg_carrier_qp_release(struct rmsg_channel *ch);
void rmsg_carrier_link_idle(struct rmsg_channel *ch);
int rmsg_carrier_rejoin(struct rmsg_channel *ch, struct rmsg_carrier_conn *conn,
			struct rmsg_hello *answer);
void rmsg_carrier_answer_put(struct rmsg_channel *ch,
			     const struct rmsg_lmsg *m);
bool rmsg_carrier_answer_take(struct rmsg_channel *ch,
			      struct rmsg_hello *answer);

void rmsg_carrier_on_link(const struct rmsg_carrier_ops *ops);
void rmsg_carrier_init_module(void);

#endif
