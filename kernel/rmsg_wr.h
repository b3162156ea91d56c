/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_wr.c: control messages as work requests, for every channel file
 * above it (the life cycle, the data path, rendezvous). They send through
 * it and register, once at module load, what to do with what arrives, so
 * that none of them calls another to dispatch a message. It also keeps
 * the send queue's slots of data WRs, which the data path and rendezvous
 * share. It calls nothing of theirs.
 */
#ifndef RMSG_WR_H
#define RMSG_WR_H

#include <linux/bottom_half.h>
#include <rdma/ib_verbs.h>

#include "rmsg_chan.h"

/* One more than the highest enum rmsg_ctrl_type. */
#define RMSG_CTRL_TYPES		(RMSG_CTRL_RETURN + 1)

/*
 * A control message of @type arrived on @ch, its @arg validated by
 * rmsg_ctrl_decode(). Softirq; its receive buffer is posted again first,
 * unless the type was registered as the connection's last.
 */
typedef void (*rmsg_ctrl_recv_fn)(struct rmsg_channel *ch, u8 type, u64 arg);

/*
 * The control send from buffer @idx of @ch completed; @ok: it arrived.
 * Softirq; called for flushed and failed sends too.
 */
typedef void (*rmsg_ctrl_sent_fn)(struct rmsg_channel *ch, unsigned int idx,
				  bool ok);

/*
 * An RDMA WRITE with immediate arrived on @ch (the peer's device may place
 * out of order). Softirq. Return 0 to have its buffer posted again, or a
 * negative errno when the channel is ending for it.
 */
typedef int (*rmsg_ctrl_imm_fn)(struct rmsg_channel *ch,
				const struct ib_wc *wc);

/*
 * A control message of a channel on a link (@ch->lchan set) goes to the
 * link instead of a send buffer of its own: queued on the carrier, which
 * sends it within the link's credits and reports its completion to the
 * send buffer's handler (rmsg_ctrl_sent()). @once: rmsg_ctrl_send()'s
 * (READY, CLOSE, RESET); else rmsg_ctrl_try_send()'s, and the same
 * returns: 0, -EAGAIN, -ECONNRESET.
 */
typedef int (*rmsg_ctrl_link_fn)(struct rmsg_channel *ch, unsigned int idx,
				 u8 type, u64 arg, bool once);

int rmsg_wr_post_link(struct rmsg_channel *ch, struct ib_send_wr *wr);

/*
 * Post a chain of @ch's work requests on its QP: on a carrier's shared QP
 * through rmsg_wr_post_link(), which serialises the posts and, for a
 * channel on the link, signals and counts them; the direct path's cost is
 * one test.
 */
static inline int rmsg_wr_post(struct rmsg_channel *ch, struct ib_send_wr *wr)
{
	if (likely(!ch->wrs.qp_lock))
		return ib_post_send(ch->conn->qp, wr, NULL);
	return rmsg_wr_post_link(ch, wr);
}

/*
 * The lock a fence and its REG_MRs hold (rmsg_rndv_move.c): the channel's
 * own post lock on its own QP; on a shared one the QP's, which every post
 * on it takes. Set @ch->wrs.fencing while holding it.
 */
static inline spinlock_t *rmsg_wr_fence_lock(struct rmsg_channel *ch)
{
	return ch->wrs.qp_lock ?: &ch->dev.post_lock;
}

/* The bit of @ch->flags that says send buffer @idx is in use. */
static inline unsigned int rmsg_ctrl_busy_bit(unsigned int idx)
{
	return RMSG_CHAN_CTRL_BUSY + idx - RMSG_CTRL_RECVS;
}

/**
 * rmsg_post_send() - post a small send with bottom halves off
 * @ch: the channel; its connection has a QP
 * @wr: the first of the chain
 *
 * For eager data writes and control sends, whose latency is the point.
 * A driver that hands a kernel QP's posts to a tasklet (rxe does, in
 * rxe_post_send_kernel()) then raises it without waking ksoftirqd, and it
 * runs as bottom halves come on again, here, as a user QP's post runs in
 * its system call. Raised from a system call with them on, the tasklet
 * ran in ksoftirqd after a switch away from the program, which polls for
 * the answer on that CPU: a switch to ksoftirqd and back per message on
 * each side of a ping-pong.
 *
 * Not for rendezvous moves (rmsg_rndv_move.c): run here, a bulk RDMA
 * READ or WRITE is processed whole on the posting CPU, and rendezvous
 * bandwidth measured half of what it is when ksoftirqd takes it.
 * Callable from process context and softirq, not with interrupts off.
 *
 * Return: what ib_post_send() returns.
 */
static inline int rmsg_post_send(struct rmsg_channel *ch,
				 struct ib_send_wr *wr)
{
	int ret;

	local_bh_disable();
	ret = rmsg_wr_post(ch, wr);
	local_bh_enable();
	return ret;
}

void rmsg_ctrl_on_recv(u8 type, rmsg_ctrl_recv_fn fn, bool last);
void rmsg_ctrl_on_sent(unsigned int first, unsigned int count,
		       rmsg_ctrl_sent_fn fn);
void rmsg_ctrl_on_imm(rmsg_ctrl_imm_fn fn);
void rmsg_ctrl_on_link(rmsg_ctrl_link_fn fn);

int rmsg_ctrl_buf_init(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
		       bool recv);
void rmsg_ctrl_buf_exit(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
			bool recv);
int rmsg_ctrl_post_recv(struct rmsg_ctrl_buf *buf);
void rmsg_ctrl_recv_failed(struct rmsg_channel *ch, const struct ib_wc *wc);
void rmsg_ctrl_recv_take(struct rmsg_channel *ch, u8 type, u64 arg,
			 int (*repost)(void *buf), void *buf);
void rmsg_ctrl_recv_handle(struct rmsg_channel *ch, u8 type, u64 arg);
void rmsg_ctrl_sent(struct rmsg_channel *ch, unsigned int idx, bool ok);
int rmsg_send_buf(struct rmsg_channel *ch, struct ib_cqe *cqe, u64 dma,
		  u32 len);
int rmsg_ctrl_send(struct rmsg_channel *ch, unsigned int idx, u8 type,
		   u64 arg);
bool rmsg_ctrl_unanswered(const struct rmsg_channel *ch, unsigned int idx);
int rmsg_ctrl_try_send(struct rmsg_channel *ch, unsigned int idx, u8 type,
		       u64 arg);
void rmsg_ctrl_free_all(struct rmsg_channel *ch);

void rmsg_wr_slots_init(struct rmsg_channel *ch);
struct rmsg_tx_slot *rmsg_wr_slot_fill(struct rmsg_channel *ch, u32 wr,
				       u32 pend_end, atomic_t *rndv_done,
				       bool read);
bool rmsg_wr_room(struct rmsg_channel *ch, u32 wrs);
void rmsg_wr_share_init(struct rmsg_wr_share *share, u32 wrs, u32 slack);
void rmsg_wr_room_return(struct rmsg_channel *ch);
void rmsg_wr_room_return_all(struct rmsg_endpoint *ep);
void rmsg_wr_link_set(struct rmsg_channel *ch, struct rmsg_wr_share *share);
void rmsg_wr_share_post(struct rmsg_channel *ch, struct rmsg_wr_share *share);
void rmsg_wr_link_wait(struct rmsg_channel *ch);
void rmsg_wr_link_done(struct rmsg_channel *ch);
void rmsg_wr_slot(struct rmsg_channel *ch, struct ib_send_wr *wr,
		  atomic_t *rndv_done, bool read);

int rmsg_wr_init_module(void);
void rmsg_wr_exit_module(void);

#endif
