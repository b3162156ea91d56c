// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: control messages as work requests. Every channel has one receive
 * buffer for each message the peer may have in flight and one send buffer
 * per kind (enum rmsg_ctrl_send_buf, rmsg_chan.h); a kind whose buffer
 * is busy is sent again, with its newest value, once the buffer is free
 * (rmsg_ctrl_try_send(), and the channel's data work its completion
 * queues).
 *
 * The files above register, once at module load, what to do with each
 * type that arrives, with each send buffer's completion and with an
 * immediate (rmsg_ctrl_on_recv(), _on_sent(), _on_imm()); the tables are
 * read-only from then on. This file calls none of them by name.
 *
 * Below the life cycle, the data path and rendezvous, which reach each
 * other's messages only through it; above the protocol core (rmsg_wire.c
 * decodes and validates what arrives).
 *
 * Layer (Documentation/design.rst, "Layers"): it calls no other file of
 * the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "rmsg.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"

/* Every file of a channel queues its work here. */
struct workqueue_struct *rmsg_wq;
/*
 * Teardowns sleep (a CLOSE's send, up to close_drain_ms of data, the
 * drain): a mass close must not hold back the data and repair work of every
 * other endpoint, so they have a queue of their own.
 */
struct workqueue_struct *rmsg_teardown_wq;
/*
 * A carrier's teardown has a queue of its own. Its end drains the link's
 * QP and waits for the channels on the link to detach
 * (rmsg_carrier_quiesce()), which their teardowns do; and their teardowns
 * may need the carrier's connection to end (rmsg_carrier_leave()).
 * Behind 256 of them on rmsg_teardown_wq (its max_active), or behind one
 * when only its rescuer runs, the carrier's end would never start. On
 * this queue it does not wait for any channel's teardown to finish first,
 * and the channels' waits for it are bounded besides.
 */
struct workqueue_struct *rmsg_link_wq;

static struct {
	rmsg_ctrl_recv_fn fn;
	bool last;
} rmsg_ctrl_recv_tab[RMSG_CTRL_TYPES] __ro_after_init;
static rmsg_ctrl_sent_fn rmsg_ctrl_sent_tab[RMSG_CTRL_BUFS] __ro_after_init;
static rmsg_ctrl_imm_fn rmsg_ctrl_imm __ro_after_init;
static rmsg_ctrl_link_fn rmsg_ctrl_link __ro_after_init;

/**
 * rmsg_ctrl_on_recv() - who acts on a control message type that arrives
 * @type: enum rmsg_ctrl_type
 * @fn: the handler
 * @last: nothing follows it on the connection (CLOSE, RESET): its
 *	receive buffer is not posted again
 *
 * At module load only. A type nobody registered is taken and ignored
 * (HEARTBEAT: arriving is all it has to do).
 */
void __init rmsg_ctrl_on_recv(u8 type, rmsg_ctrl_recv_fn fn, bool last)
{
	rmsg_ctrl_recv_tab[type].fn = fn;
	rmsg_ctrl_recv_tab[type].last = last;
}

/* Who hears of the completions of send buffers @first.. (module load). */
void __init rmsg_ctrl_on_sent(unsigned int first, unsigned int count,
			      rmsg_ctrl_sent_fn fn)
{
	unsigned int i;

	for (i = first; i < first + count; i++)
		rmsg_ctrl_sent_tab[i] = fn;
}

/* Who takes an RDMA WRITE with immediate (module load). */
void __init rmsg_ctrl_on_imm(rmsg_ctrl_imm_fn fn)
{
	rmsg_ctrl_imm = fn;
}

/* Who queues the control messages of channels on a link (module load). */
void __init rmsg_ctrl_on_link(rmsg_ctrl_link_fn fn)
{
	rmsg_ctrl_link = fn;
}

static u32 rmsg_ctrl_lkey(struct rmsg_channel *ch)
{
	return ch->dev.pd->local_dma_lkey;
}

int rmsg_ctrl_post_recv(struct rmsg_ctrl_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= sizeof(buf->msg),
		.lkey	= rmsg_ctrl_lkey(buf->ch),
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(buf->ch->conn->qp, &wr, NULL);
}

/**
 * rmsg_send_buf() - post a signalled SEND of one mapped buffer
 * @ch: the channel whose connection sends it (its QP, its PD's DMA key)
 * @cqe: where its completion goes
 * @dma: the buffer's bus address for @ch's device, synced for it
 * @len: its bytes
 *
 * Return: what ib_post_send() returns.
 */
int rmsg_send_buf(struct rmsg_channel *ch, struct ib_cqe *cqe, u64 dma,
		  u32 len)
{
	struct ib_sge sge = {
		.addr	= dma,
		.length	= len,
		.lkey	= rmsg_ctrl_lkey(ch),
	};
	struct ib_send_wr wr = {
		.wr_cqe		= cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	return rmsg_post_send(ch, &wr);
}

/*
 * Post a control message from send buffer @idx, which must be free (its
 * kind's last message completed, or it is READY, CLOSE or RESET, each
 * sent once per connection).
 */
int rmsg_ctrl_send(struct rmsg_channel *ch, unsigned int idx, u8 type, u64 arg)
{
	struct rmsg_ctrl_buf *buf;
	struct ib_device *ibdev;
	int ret;

	if (ch->lchan)
		return rmsg_ctrl_link(ch, idx, type, arg, true);
	/*
	 * A channel that left its link (or device) sends nothing more; one
	 * with a device has its buffers (rmsg_chan_dev_create()).
	 */
	if (unlikely(!ch->dev.rdev || !rmsg_chan_qp(ch)))
		return -ECONNRESET;
	buf = &ch->dev.ctrl[idx];
	ibdev = ch->dev.rdev->ibdev;
	/* The buffer is free: its last message completed (or none left). */
	rmsg_ctrl_encode(&buf->msg, type, arg);
	ib_dma_sync_single_for_device(ibdev, buf->dma, sizeof(buf->msg),
				      DMA_TO_DEVICE);
	spin_lock_bh(&ch->dev.post_lock);
	ret = rmsg_send_buf(ch, &buf->cqe, buf->dma, sizeof(buf->msg));
	spin_unlock_bh(&ch->dev.post_lock);
	return ret;
}

/**
 * rmsg_ctrl_try_send() - send a control message from its buffer, if free
 * @ch: the channel
 * @idx: the send buffer of the kind (enum rmsg_ctrl_send_buf)
 * @type: enum rmsg_ctrl_type
 * @arg: its argument
 *
 * On a link the message waits on the carrier for the link's credits; a
 * newer one of the kind takes its place while it waits.
 *
 * Return: 0; -EAGAIN while the buffer's last message is in flight (its
 * completion queues the channel's data work, which tries again); or
 * -ECONNRESET when the QP refused it (on a link: the carrier has no
 * connection).
 */
int rmsg_ctrl_try_send(struct rmsg_channel *ch, unsigned int idx, u8 type,
		       u64 arg)
{
	unsigned int bit = rmsg_ctrl_busy_bit(idx);

	if (ch->lchan)
		return rmsg_ctrl_link(ch, idx, type, arg, false);
	if (test_and_set_bit(bit, &ch->flags))
		return -EAGAIN;
	if (rmsg_ctrl_send(ch, idx, type, arg)) {
		clear_bit(bit, &ch->flags);
		return -ECONNRESET;
	}
	return 0;
}

/**
 * rmsg_ctrl_unanswered() - is a message from a send buffer still out?
 * @ch: the channel
 * @idx: the send buffer (enum rmsg_ctrl_send_buf) of a kind that
 *	rmsg_ctrl_try_send() sends
 *
 * True from the post until the peer acknowledged it; also after it failed,
 * until the channel drops the connection (rmsg_ctrl_free_all()). A
 * snapshot: the completion may clear it at any time.
 */
bool rmsg_ctrl_unanswered(const struct rmsg_channel *ch, unsigned int idx)
{
	return test_bit(rmsg_ctrl_busy_bit(idx), &ch->flags);
}

/*
 * Between two connections: every send buffer is free, since whatever
 * was in flight on the old QP will not complete.
 */
void rmsg_ctrl_free_all(struct rmsg_channel *ch)
{
	unsigned int i;

	for (i = RMSG_CTRL_RECVS; i < RMSG_CTRL_BUFS; i++)
		clear_bit(rmsg_ctrl_busy_bit(i), &ch->flags);
}

/**
 * rmsg_ctrl_sent() - a control message of @ch's left, or could not
 * @ch: the channel
 * @idx: its send buffer (enum rmsg_ctrl_send_buf)
 * @ok: the peer acknowledged it; false for a flush or a failure, which
 *	are the connection's to handle (the channel's, or on a link the
 *	carrier's)
 *
 * Softirq; for a channel on a link, whose messages its carrier sends
 * (rmsg_carrier.c), also with bottom halves off, under the carrier's lock
 * (what waited when the carrier's connection ended). The handler
 * registered for @idx hears of
 * it; after a success the kind's buffer is free, and the channel's data
 * work sends whatever newer value waits for it.
 */
void rmsg_ctrl_sent(struct rmsg_channel *ch, unsigned int idx, bool ok)
{
	/* The peer acknowledged it: it is there. */
	if (ok)
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
	if (rmsg_ctrl_sent_tab[idx])
		rmsg_ctrl_sent_tab[idx](ch, idx, ok);
	/*
	 * After the handler: a new send may take the buffer now, and a
	 * newer value of the kind may be waiting for it. READY and CLOSE
	 * never take the bit: nothing waits for them.
	 */
	if (ok && test_and_clear_bit(rmsg_ctrl_busy_bit(idx), &ch->flags))
		queue_work(rmsg_wq, &ch->data_work);
}

static void rmsg_ctrl_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_ctrl_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_ctrl_buf, cqe);
	struct rmsg_channel *ch = buf->ch;

	rmsg_ctrl_sent(ch, buf - ch->dev.ctrl, wc->status == IB_WC_SUCCESS);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		rmsg_chan_kill_soft(ch, -ECONNRESET);
}

/*
 * Did a receive fail because of what the peer sent, not of the link? A
 * SEND longer than a control message is a local length error on most
 * devices; rxe reports an invalid request (newer kernels) or, in 6.1,
 * a local QP operation error, which the receive side of an RC QP sees
 * for nothing else the link or a repair can do (those flush).
 */
static bool rmsg_ctrl_peer_broke(const struct ib_wc *wc)
{
	return wc->status == IB_WC_LOC_LEN_ERR ||
	       wc->status == IB_WC_REM_INV_REQ_ERR ||
	       wc->status == IB_WC_LOC_QP_OP_ERR;
}

/**
 * rmsg_ctrl_recv_failed() - a receive of @ch's connection did not complete
 * @ch: the channel
 * @wc: its completion, not IB_WC_SUCCESS
 *
 * A flush too: receives are always posted, so this is how the QP's move
 * to the error state shows (whatever moved it), and the channel is
 * repaired. During a repair or a teardown only the first reason counts,
 * and those drain the QP on purpose. A request our side found invalid is
 * no fault of the link but of the peer, which is not one to reconnect to:
 * the channel ends.
 *
 * Before the rdma_cm's ESTABLISHED, though, a flush is not the reason:
 * the rdma_cm moves the QP to the error state when the attempt ends (a
 * reject, a timeout) before it reports why, and every attempt ends with
 * an event of its (rmsg_cm.c), which may come after the flush. Taken as
 * a fault, the flush would end a refused dial with ECONNRESET instead of
 * ECONNREFUSED (seen once on 6.12, in msg.flag.explicit_accept).
 */
void rmsg_ctrl_recv_failed(struct rmsg_channel *ch, const struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    !test_bit(RMSG_CHAN_CONNECTED, &ch->flags))
		return;
	rmsg_chan_kill_soft(ch, rmsg_ctrl_peer_broke(wc) ? -EPROTO :
							  -ECONNRESET);
}

/*
 * Is @type one @ch takes? Block leases (RMSG_CTRL_ASK to _RETURN, and
 * READY's lease resume point) only on a channel whose hellos both said
 * RMSG_HELLO_F_LEASE (ch->lease.on, never on a link).
 */
static bool rmsg_ctrl_type_ok(const struct rmsg_channel *ch, u8 type, u64 arg)
{
	/* HELLO, REFUSE and LCREDIT are the carrier's own, never a channel's. */
	if (type >= RMSG_CTRL_TYPES ||
	    (type > RMSG_CTRL_REKEY && type < RMSG_CTRL_ASK))
		return false;
	if (type >= RMSG_CTRL_ASK || (type == RMSG_CTRL_READY && arg))
		return ch->lease.on;
	return true;
}

/**
 * rmsg_ctrl_recv_take() - a control message of @ch's own arrived
 * @ch: the channel
 * @type: decoded by rmsg_ctrl_decode()
 * @arg: likewise
 * @repost: posts the message's receive buffer again: 0 or an errno
 * @buf: its argument
 *
 * Softirq. The buffer is free again before the message is acted on: a
 * FIN lets the peer start another transfer, whose RTS and FIN need
 * receives too. The connection's last message (CLOSE, RESET) leaves its
 * buffer as it is.
 */
void rmsg_ctrl_recv_take(struct rmsg_channel *ch, u8 type, u64 arg,
			 int (*repost)(void *buf), void *buf)
{
	if (!rmsg_ctrl_type_ok(ch, type, arg)) {
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	if (!rmsg_ctrl_recv_tab[type].last && repost(buf)) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	if (rmsg_ctrl_recv_tab[type].fn)
		rmsg_ctrl_recv_tab[type].fn(ch, type, arg);
}

/**
 * rmsg_ctrl_recv_handle() - a control message of a channel on a link
 * @ch: the channel its link id named
 * @type: decoded and checked by rmsg_lmsg_decode()
 * @arg: likewise
 *
 * Softirq, under the carrier's lock (rmsg_carrier.c), which posted the
 * link's receive again already: the handler registered for @type acts on
 * it as on a direct connection. CLOSE and RESET are the channel's last
 * here too, but the link's receive is not theirs to keep. Unlike on a
 * direct connection, nothing orders these after the channel's handshake:
 * the peer may name the channel from its attach on, before its HELLO was
 * answered, and after a CLOSE; the handlers only set bits and queue work,
 * which checks the channel's state.
 */
void rmsg_ctrl_recv_handle(struct rmsg_channel *ch, u8 type, u64 arg)
{
	/* Lease messages only on a channel that leases, as on its own. */
	if (!rmsg_ctrl_type_ok(ch, type, arg)) {
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	if (rmsg_ctrl_recv_tab[type].fn)
		rmsg_ctrl_recv_tab[type].fn(ch, type, arg);
}

static int rmsg_ctrl_repost(void *buf)
{
	return rmsg_ctrl_post_recv(buf);
}

static void rmsg_ctrl_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_ctrl_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_ctrl_buf, cqe);
	struct rmsg_channel *ch = buf->ch;
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	u8 type;
	u64 arg;

	if (wc->status != IB_WC_SUCCESS) {
		rmsg_ctrl_recv_failed(ch, wc);
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		/*
		 * Posted again before the record's flag goes in: once the
		 * program can see the record, the receive its write took is
		 * back in the queue, and a release of the record means so.
		 */
		if (rmsg_ctrl_post_recv(buf)) {
			rmsg_chan_kill_soft(ch, -ECONNRESET);
			return;
		}
		if (rmsg_ctrl_imm)
			rmsg_ctrl_imm(ch, wc);
		return;
	}
	ib_dma_sync_single_for_cpu(ibdev, buf->dma, sizeof(buf->msg),
				   DMA_FROM_DEVICE);
	if (rmsg_ctrl_decode(&buf->msg, wc->byte_len, &type, &arg)) {
		/* A peer that sends garbage is not one to keep talking to. */
		pr_notice_ratelimited("channel %u: a control message that is not one (%u bytes)\n",
				      ch->id, wc->byte_len);
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	rmsg_ctrl_recv_take(ch, type, arg, rmsg_ctrl_repost, buf);
}

/* A control buffer, mapped for the channel's device. */
int rmsg_ctrl_buf_init(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
		       bool recv)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;

	buf->ch = ch;
	buf->cqe.done = recv ? rmsg_ctrl_recv_done : rmsg_ctrl_send_done;
	buf->dma = ib_dma_map_single(ibdev, &buf->msg, sizeof(buf->msg),
				     recv ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, buf->dma)) {
		buf->dma = 0;
		return -ENOMEM;
	}
	return 0;
}

void rmsg_ctrl_buf_exit(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
			bool recv)
{
	if (buf->dma)
		ib_dma_unmap_single(ch->dev.rdev->ibdev, buf->dma,
				    sizeof(buf->msg),
				    recv ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	buf->dma = 0;
}

int rmsg_wr_init_module(void)
{
	rmsg_wq = alloc_workqueue("rmsg", WQ_MEM_RECLAIM, 0);
	if (!rmsg_wq)
		return -ENOMEM;
	rmsg_teardown_wq = alloc_workqueue("rmsg_teardown", WQ_MEM_RECLAIM, 0);
	if (!rmsg_teardown_wq)
		goto fail;
	rmsg_link_wq = alloc_workqueue("rmsg_link", WQ_MEM_RECLAIM, 0);
	if (!rmsg_link_wq)
		goto fail_teardown;
	return 0;

fail_teardown:
	destroy_workqueue(rmsg_teardown_wq);
fail:
	destroy_workqueue(rmsg_wq);
	return -ENOMEM;
}

void rmsg_wr_exit_module(void)
{
	/* Carriers first: their ends may wait for channels' teardowns. */
	destroy_workqueue(rmsg_link_wq);
	destroy_workqueue(rmsg_teardown_wq);
	destroy_workqueue(rmsg_wq);
}

/* --- data work requests: send-queue slots ----------------------------- */

/*
 * Every data WR (record writes, rendezvous reads, writes and invalidations)
 * has a slot, by its number modulo RMSG_TX_SLOTS, that says what its
 * completion finishes. Completions come in order, so a signalled one
 * accounts for every WR before it. The data path and rendezvous both post
 * through these; neither calls the other for room.
 */
/* A signalled data WR completed (softirq). */
static void rmsg_wr_data_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_tx_slot *slot =
		container_of(wc->wr_cqe, struct rmsg_tx_slot, cqe);
	struct rmsg_channel *ch = slot->ch;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			rmsg_chan_kill_soft(ch, -ECONNRESET);
		rmsg_wr_link_done(ch);
		return;
	}
	/* The peer acknowledged it: it is there (see the heartbeat). */
	if (wc->opcode == IB_WC_RDMA_WRITE || wc->opcode == IB_WC_RDMA_READ)
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
	/* Completions come in order: everything up to this WR is done. */
	WRITE_ONCE(ch->wrs.done, slot->wr_end);
	if (slot->rndv_done) {
		if (slot->read)
			WRITE_ONCE(ch->rndv.rd_done, ch->rndv.rd_done + 1);
		/* The count after the WR's effects; the work reads it. */
		smp_mb__before_atomic();
		atomic_inc(slot->rndv_done);
	}
	/* Pairs with the work's acquire: the send's bytes are done with. */
	smp_store_release(&ch->pending.done, slot->pend_end);
	/*
	 * Most signalled writes only hand the queue back: their sends were
	 * inline and completed as they were taken. Waking the work for
	 * nothing preempts the program that polls on this CPU, at every
	 * RMSG_SIGNAL_EVERY-th message of a ping-pong. It runs for a
	 * rendezvous step, for sends still owed a CQE (pending.head only
	 * grows: a stale value errs towards running it), and for whoever
	 * found the queue full. The barrier orders the stores of done
	 * above before the load of room_wanted; rmsg_wr_room() pairs.
	 */
	smp_mb();
	if (slot->rndv_done || READ_ONCE(ch->wrs.room_wanted) ||
	    (s32)(slot->pend_end - READ_ONCE(ch->pending.head)) > 0)
		queue_work(rmsg_wq, &ch->data_work);
	/* The last look at @ch: its end may go on once this is counted. */
	rmsg_wr_link_done(ch);
}

/*
 * On a link: a work request that would have gone unsignalled on a QP of
 * the channel's own (softirq). It only counts.
 */
static void rmsg_wr_link_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_channel *ch =
		container_of(wc->wr_cqe, struct rmsg_channel, wrs.link_cqe);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		rmsg_chan_kill_soft(ch, -ECONNRESET);
	rmsg_wr_link_done(ch);
}

/*
 * @n work requests' room in the shared send queue comes back: the data
 * work of every channel that waited for room runs. Softirq, or bottom
 * halves off.
 */
static void rmsg_wr_share_give(struct rmsg_wr_share *share, int n)
{
	struct rmsg_channel *w, *next;

	atomic_add(n, &share->free);
	/*
	 * The room before the look at the list, as rmsg_wr_share_room()
	 * puts itself on the list before its second look at the room:
	 * atomic_add() orders nothing, and a waiter and this could each
	 * miss the other's store (the channel then waits for a completion
	 * that may never come).
	 */
	smp_mb__after_atomic();
	if (list_empty_careful(&share->waiting))
		return;
	spin_lock(&share->lock);
	list_for_each_entry_safe(w, next, &share->waiting, wrs.share_node) {
		list_del_init(&w->wrs.share_node);
		queue_work(rmsg_wq, &w->data_work);
	}
	spin_unlock(&share->lock);
}

/*
 * Take @n of @share's room, leaving at least @floor: a compare and
 * exchange, so that two channels that look at once never take more than
 * there is between them. Return: whether it was taken.
 */
static bool rmsg_wr_share_take(struct rmsg_wr_share *share, int n, int floor)
{
	int old = atomic_read(&share->free);

	do {
		if (old - n < floor)
			return false;
	} while (!atomic_try_cmpxchg(&share->free, &old, old - n));
	return true;
}

/*
 * The room of @n work requests @ch is about to post: what it reserved
 * first, then, for a post that reserved less, the share's, down into its
 * slack. Under ep->lock. Return: false when even the slack is used up.
 */
static bool rmsg_wr_share_use(struct rmsg_channel *ch,
			      struct rmsg_wr_share *share, int n)
{
	int mine = min_t(int, n, ch->wrs.share_held);

	if (n > mine && !rmsg_wr_share_take(share, n - mine, -share->slack))
		return false;
	ch->wrs.share_held -= mine;
	return true;
}

/**
 * rmsg_wr_post_link() - post a chain of work requests on a carrier's QP
 * @ch: a channel on a link (@ch->wrs.share set), or the carrier itself,
 *	with its QP
 * @wr: the chain; its unsignalled WRs are made signalled here, with a
 *	completion that only counts (@ch->wrs.link_cqe)
 *
 * For rmsg_wr_post(). Every post on a shared QP takes its lock (but the
 * fencing channel's, which holds it), so that another channel's WR cannot
 * come between an rxe fence and its REG_MRs; the carrier's own posts only
 * take the lock. On a link the QP is the carrier's: every WR is
 * signalled, so that the channel knows what it has in flight (its end
 * waits for none before its memory leaves the carrier's PD, since a WR
 * that outlived the channel would complete into freed memory), and so that
 * the room each takes in the shared send queue comes back with its own
 * completion, not with a later one of another channel's. Only what the
 * QP took is counted: a failed post stops at its bad WR.
 *
 * The room is what rmsg_wr_room() reserved for the channel; a post that
 * reserved none (or too little: a channel's block registration, which
 * has no work to wait for room in) takes it here, from the share's slack
 * if need be, and fails rather than go past the slack: the carrier's QP
 * is never overrun, whatever its channels do at once. Under ep->lock, as
 * rmsg_wr_room() is (or before the channel's data path opens: its block
 * registration).
 *
 * Return: what ib_post_send() returns; -ENOSPC when the carrier's QP has
 * no room even in its slack (nothing posted).
 */
int rmsg_wr_post_link(struct rmsg_channel *ch, struct ib_send_wr *wr)
{
	struct rmsg_wr_share *share = ch->wrs.share;
	const struct ib_send_wr *bad = NULL, *w;
	bool lock = !ch->wrs.fencing;
	struct ib_send_wr *m;
	int n = 0, left = 0, ret;

	/* A fencing channel holds the QP's lock across its REG_MRs. */
	if (!lock)
		lockdep_assert_held(ch->wrs.qp_lock);
	/* The carrier's own posts: serialised with its channels' only. */
	if (!share) {
		if (lock)
			spin_lock_bh(ch->wrs.qp_lock);
		ret = ib_post_send(ch->conn->qp, wr, NULL);
		if (lock)
			spin_unlock_bh(ch->wrs.qp_lock);
		return ret;
	}
	for (m = wr; m; m = m->next) {
		if (!(m->send_flags & IB_SEND_SIGNALED)) {
			m->send_flags |= IB_SEND_SIGNALED;
			m->wr_cqe = &ch->wrs.link_cqe;
		}
		n++;
	}
	if (!rmsg_wr_share_use(ch, share, n))
		return -ENOSPC;
	/* Counted before the post: a completion can come before it returns. */
	atomic_add(n, &ch->wrs.in_flight);
	if (lock)
		spin_lock_bh(ch->wrs.qp_lock);
	ret = ib_post_send(ch->conn->qp, wr, &bad);
	if (lock)
		spin_unlock_bh(ch->wrs.qp_lock);
	if (ret) {
		for (w = bad ?: wr; w; w = w->next)
			left++;
		/*
		 * Another channel may have found no room for ours meanwhile.
		 * A fencing channel still holds the QP's post lock here: the
		 * share's lock nests inside it (Documentation/hardening.rst).
		 */
		local_bh_disable();
		rmsg_wr_share_give(share, left);
		local_bh_enable();
		if (atomic_sub_and_test(left, &ch->wrs.in_flight))
			wake_up_all(&share->wq);
	}
	return ret;
}

/**
 * rmsg_wr_share_init() - a carrier's send queue room for its channels
 * @share: in the carrier
 * @wrs: how many work requests they may have in flight in all
 * @slack: how many more the carrier's QP has room for, for posts that
 *	take their room only as they post
 */
void rmsg_wr_share_init(struct rmsg_wr_share *share, u32 wrs, u32 slack)
{
	atomic_set(&share->free, wrs);
	share->slack = slack;
	spin_lock_init(&share->lock);
	INIT_LIST_HEAD(&share->waiting);
	init_waitqueue_head(&share->wq);
	spin_lock_init(&share->post_lock);
}

/**
 * rmsg_wr_share_post() - the carrier's own posts on its QP, serialised with
 *	its channels' (or no longer)
 * @ch: the carrier, posting nothing (before its first device, or at its
 *	end)
 * @share: its link's room, whose post lock it takes; NULL at its end
 */
void rmsg_wr_share_post(struct rmsg_channel *ch, struct rmsg_wr_share *share)
{
	ch->wrs.qp_lock = share ? &share->post_lock : NULL;
}

/**
 * rmsg_wr_link_set() - a channel goes on a link's send queue, or leaves it
 * @ch: the channel, in its work, posting nothing (before its first post on
 *	the link, or after rmsg_wr_link_wait())
 * @share: the carrier's room; NULL when the channel leaves
 */
void rmsg_wr_link_set(struct rmsg_channel *ch, struct rmsg_wr_share *share)
{
	struct rmsg_wr_share *old = ch->wrs.share;

	/* What it reserved went back as its data path closed. */
	WARN_ON_ONCE(ch->wrs.share_held);
	if (old) {
		spin_lock_bh(&old->lock);
		list_del_init(&ch->wrs.share_node);
		spin_unlock_bh(&old->lock);
	}
	ch->wrs.share = share;
	ch->wrs.qp_lock = share ? &share->post_lock : NULL;
}

/**
 * rmsg_wr_link_wait() - wait until no work request of @ch's is on the
 *	carrier's QP
 * @ch: a channel on a link that posts no more (its data path closed,
 *	tx_live false, its work cancelled)
 *
 * Finite: every WR completes, or the QP fails and flushes it.
 */
void rmsg_wr_link_wait(struct rmsg_channel *ch)
{
	struct rmsg_wr_share *share = ch->wrs.share;

	if (share)
		wait_event(share->wq, !atomic_read(&ch->wrs.in_flight));
}

/**
 * rmsg_wr_link_done() - a work request of @ch's on a link completed
 * @ch: the channel; not looked at once the count reaches 0, when its end
 *	may free it (the carrier's room and wait queue outlive every
 *	completion on the carrier's QP)
 *
 * Gives the room back, runs the data work of channels that waited for it.
 * Softirq. Nothing for a direct channel.
 */
void rmsg_wr_link_done(struct rmsg_channel *ch)
{
	struct rmsg_wr_share *share = ch->wrs.share;

	if (!share)
		return;
	rmsg_wr_share_give(share, 1);
	if (atomic_dec_and_test(&ch->wrs.in_flight))
		wake_up_all(&share->wq);
}

/*
 * @ch reserved @n more of its share's room: it goes on its endpoint's list
 * of channels holding some, which gives it back (rmsg_wr_room_return_all()).
 */
static void rmsg_wr_share_held(struct rmsg_channel *ch, u32 n)
{
	ch->wrs.share_held += n;
	if (list_empty(&ch->wrs.held_node))
		list_add_tail(&ch->wrs.held_node, &ch->ep->room_held);
}

/*
 * On a link: reserve room for @wrs more in the carrier's send queue (what
 * the channel holds already counts), taken from the share as it looks, so
 * that channels that look at once cannot overshoot it together. Without
 * room the channel waits on the share's list, and the next completion of
 * any channel on the link runs its data work. Under ep->lock; also under
 * the carrier's QP's post lock, from a fence's REG_MRs
 * (rmsg_segs_post()): then the share's lock nests inside it.
 */
static bool rmsg_wr_share_room(struct rmsg_channel *ch, u32 wrs)
{
	struct rmsg_wr_share *share = ch->wrs.share;
	u32 need;

	lockdep_assert_held(&ch->ep->lock);
	if (ch->wrs.share_held >= wrs)
		return true;
	need = wrs - ch->wrs.share_held;
	if (rmsg_wr_share_take(share, need, 0))
		goto held;
	spin_lock_bh(&share->lock);
	if (list_empty(&ch->wrs.share_node))
		list_add_tail(&ch->wrs.share_node, &share->waiting);
	spin_unlock_bh(&share->lock);
	/* On the list before the second look; rmsg_wr_share_give() pairs. */
	smp_mb();
	if (!rmsg_wr_share_take(share, need, 0))
		return false;
held:
	rmsg_wr_share_held(ch, need);
	return true;
}

/**
 * rmsg_wr_room_return() - give back the send queue room @ch reserved and
 *	did not post
 * @ch: a channel; under ep->lock, between two of its posting runs (a
 *	reservation never spans a drop of ep->lock: the hint's, made by the
 *	record writes of a burst, is used at its end, rmsg_data_push())
 *
 * On a link the share is the other channels' room too: a channel that
 * reserved more than it posted (its writes stopped for credit, a transfer
 * at its read depth) must not keep it while idle. Nothing for a direct
 * channel, which reserves nothing.
 */
void rmsg_wr_room_return(struct rmsg_channel *ch)
{
	u32 n = ch->wrs.share_held;

	lockdep_assert_held(&ch->ep->lock);
	list_del_init(&ch->wrs.held_node);
	if (!n)
		return;
	ch->wrs.share_held = 0;
	local_bh_disable();
	rmsg_wr_share_give(ch->wrs.share, n);
	local_bh_enable();
}

/**
 * rmsg_wr_room_return_all() - rmsg_wr_room_return() for every channel of
 *	an endpoint that holds room
 * @ep: the endpoint, its lock held: at the end of a batch of SQEs
 */
void rmsg_wr_room_return_all(struct rmsg_endpoint *ep)
{
	struct rmsg_channel *ch, *tmp;

	lockdep_assert_held(&ep->lock);
	list_for_each_entry_safe(ch, tmp, &ep->room_held, wrs.held_node)
		rmsg_wr_room_return(ch);
}

/**
 * rmsg_wr_slots_init() - point the slots of a new channel at it
 * @ch: the channel, its slots just allocated
 */
void rmsg_wr_slots_init(struct rmsg_channel *ch)
{
	unsigned int i;

	for (i = 0; i < RMSG_TX_SLOTS; i++) {
		ch->wrs.slots[i].ch = ch;
		ch->wrs.slots[i].cqe.done = rmsg_wr_data_done;
	}
	ch->wrs.link_cqe.done = rmsg_wr_link_cqe_done;
}

/**
 * rmsg_wr_slot_fill() - fill the bookkeeping of data WR @wr
 * @ch: the channel
 * @wr: the WR's number (ch->wrs.posted when it is the next)
 * @pend_end: the pending sends done with once it completes
 * @rndv_done: counted when it completes, or NULL
 * @read: an RDMA READ, counted in ch->rndv.rd_done too
 *
 * Return: its slot, whose cqe the WR carries.
 */
struct rmsg_tx_slot *rmsg_wr_slot_fill(struct rmsg_channel *ch, u32 wr,
				       u32 pend_end, atomic_t *rndv_done,
				       bool read)
{
	struct rmsg_tx_slot *slot = &ch->wrs.slots[wr % RMSG_TX_SLOTS];

	slot->wr_end = wr + 1;
	slot->pend_end = pend_end;
	slot->rndv_done = rndv_done;
	slot->read = read;
	return slot;
}

/**
 * rmsg_wr_room() - may @wrs more data WRs be posted?
 * @ch: the channel, under ep->lock
 * @wrs: how many
 *
 * On a link the room in the carrier's shared send queue is reserved here,
 * for the posts that follow under the same hold of ep->lock; what they do
 * not use goes back (rmsg_wr_room_return()).
 *
 * Return: whether the send queue has room for them beside what is posted.
 */
bool rmsg_wr_room(struct rmsg_channel *ch, u32 wrs)
{
	if (!ch->tx_live)
		return false;
	if (ch->wrs.posted - READ_ONCE(ch->wrs.done) + wrs > RMSG_SEND_WRS) {
		/*
		 * Full: ask the next completion for the work item, then
		 * look again. A completion stores done, then reads
		 * room_wanted (with a full barrier between, as here):
		 * either it sees the request, or this sees its room.
		 */
		WRITE_ONCE(ch->wrs.room_wanted, true);
		/* The request before the second look; rmsg_wr_data_done() pairs. */
		smp_mb();
		if (ch->wrs.posted - READ_ONCE(ch->wrs.done) + wrs >
		    RMSG_SEND_WRS)
			return false;
	}
	/* Its own room first: a reservation it cannot use would idle. */
	return !ch->wrs.share || rmsg_wr_share_room(ch, wrs);
}

/**
 * rmsg_wr_slot() - account for a rendezvous WR about to be posted
 * @ch: the channel, with rmsg_wr_room() for it
 * @wr: the WR; its wr_cqe is set here
 * @rndv_done: for a signalled WR, counted when it completes; with NULL
 *	the WR is signalled only as often as reclaiming the queue needs
 * @read: an RDMA READ, also counted in ch->rndv.rd_done
 */
void rmsg_wr_slot(struct rmsg_channel *ch, struct ib_send_wr *wr,
		  atomic_t *rndv_done, bool read)
{
	wr->wr_cqe = &rmsg_wr_slot_fill(ch, ch->wrs.posted,
					ch->pending.posted, rndv_done,
					read)
			      ->cqe;
	ch->wrs.posted++;
	/*
	 * Room comes back only with a signalled completion: with none in
	 * flight, a transfer that ran out of room would wait for ever.
	 */
	if (rndv_done ||
	    ch->wrs.posted - ch->wrs.signalled >= RMSG_SIGNAL_EVERY) {
		wr->send_flags |= IB_SEND_SIGNALED;
		ch->wrs.signalled = ch->wrs.posted;
	}
}
