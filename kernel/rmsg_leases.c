// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: block leases, the kernel's side of them (Documentation/design.rst,
 * "Memory in proportion to traffic"; the protocol and both machines are
 * the protocol core's, kernel/core/rmsg_lease.c). A channel whose hellos
 * both say RMSG_HELLO_F_LEASE holds no receive block until its peer asks
 * for one, and writes into the peer's only under a lease it holds.
 *
 * This file drives the two machines of a channel (struct rmsg_chan_lease)
 * with what arrives and does what they ask, but for the block itself:
 * the channel's work makes that (rmsg_conn.c, rmsg_block_lease_make())
 * and tells the machine here (rmsg_lease_made()).
 *
 * A block is made on the first ASK and kept for the channel's life; a
 * leased channel is repaired as any other, each side's READY on the new
 * connection saying where its leases stand (rmsg_lease_down(),
 * rmsg_lease_resume(), rmsg_lease_connected()). The REVOKE, the free and
 * the library's later leases are still to come.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_pages.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/vmalloc.h>

#include "rmsg.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"

static bool lease_blocks;
module_param(lease_blocks, bool, 0644);
MODULE_PARM_DESC(lease_blocks,
		 "New channels lease their receive blocks when the peer does too: no block until the peer has data (default off; blocks are not taken back yet)");

/**
 * rmsg_lease_setup() - does a new channel lease its block?
 * @ch: the channel, before its hello goes out, its rx_imm fixed
 *	(rmsg_data_create()); on the accepting side @ch->peer is the
 *	CONNECT
 *
 * Leases go both ways or not at all, on a channel of its own or on a
 * link (a carrier's block takes nothing), whose peer writes without immediates
 * (the kernel would have to mark flags in a block that may not be
 * there), with a block size a lease can carry. The accepting side leases
 * only when the CONNECT said so: an old module would refuse the flag in
 * our ACCEPT.
 *
 * Return: 0, -ENOMEM, or -EPROTO for a CONNECT that asks for leases this
 * channel cannot give (the request is refused, as an old module refuses
 * it).
 */
int rmsg_lease_setup(struct rmsg_channel *ch)
{
	bool want = READ_ONCE(lease_blocks) && !ch->rx_imm &&
		    !rmsg_chan_is_carrier(ch) &&
		    !(ch->block_size % RMSG_LEASE_UNIT);

	spin_lock_init(&ch->lease.in_lock);
	if (!ch->active) {
		if (!(ch->peer.flags & RMSG_HELLO_F_LEASE))
			return 0;
		if (!want)
			return -EPROTO;
	} else if (!want) {
		return 0;
	}
	if (rmsg_lease_rx_init(&ch->lease.rx, ch->block_size, 0, 0))
		return -EPROTO;
	/* Not published yet: the program cannot map it before it opens. */
	ch->lease.view = rmsg_block_view_new();
	if (!ch->lease.view)
		return -ENOMEM;
	ch->lease.on = true;
	return ch->active ? 0 : rmsg_lease_peer(ch);
}

/**
 * rmsg_lease_peer() - the peer's first hello, on a channel set up
 * @ch: the channel; @ch->peer is the peer's CONNECT or ACCEPT
 *
 * Return: 0, or -EPROTO when the peer's flag is not ours, or its block
 * size is one a lease cannot carry.
 */
int rmsg_lease_peer(struct rmsg_channel *ch)
{
	bool peer = ch->peer.flags & RMSG_HELLO_F_LEASE;

	if (peer != ch->lease.on)
		return -EPROTO;
	if (!peer)
		return 0;
	/* Before the channel opens: nothing else looks at it yet. */
	if (rmsg_lease_tx_init(&ch->lease.tx, ch->peer.block_size, 0, 0))
		return -EPROTO;
	return 0;
}

/*
 * Queue a message a machine asked for, behind those it asked for before.
 * Under ep->lock. Each machine has at most two messages that matter at a
 * time (the receiver a GRANT and a REVOKE, the sender a RETURN and an
 * ASK), so the ring never fills; if it did, the order could not be kept.
 */
static int rmsg_lease_queue(struct rmsg_channel *ch,
			    const struct rmsg_lease_act *act)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_lease_wire *w;

	lockdep_assert_held(&ch->ep->lock);
	if (!(act->todo & RMSG_LEASE_SEND))
		return 0;
	if (WARN_ON_ONCE(l->out_len == RMSG_LEASE_RING))
		return -EIO;
	w = &l->out[(u8)(l->out_head + l->out_len) % RMSG_LEASE_RING];
	w->type = act->type;
	w->arg = act->arg;
	l->out_len++;
	return 0;
}

/*
 * Post what the machines asked for, in order, while the READY's buffer
 * is free: one at a time, each after the last completed (its completion
 * queues the data work, which calls this again). Under ep->lock.
 */
static void rmsg_lease_send_owed(struct rmsg_channel *ch)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_lease_wire *w;
	int ret;

	lockdep_assert_held(&ch->ep->lock);
	while (l->out_len) {
		w = &l->out[l->out_head % RMSG_LEASE_RING];
		ret = rmsg_ctrl_try_send(ch, RMSG_CTRL_READY_BUF, w->type,
					 w->arg);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			rmsg_chan_kill_soft(ch, ret);
			return;
		}
		l->out_head = (l->out_head + 1) % RMSG_LEASE_RING;
		l->out_len--;
	}
}

/**
 * rmsg_lease_connected() - a connection is up: its READY goes now
 * @ch: the channel; in its id's ESTABLISHED handler, which holds no
 *	rmsg lock (ep->lock comes after the handler's), or in its work on
 *	a link
 * @ready: a READY goes; false when the hello was it (RMSG_HELLO_F_READY)
 *
 * Both machines learn of the connection, and the READY's send buffer is
 * taken until the READY completed, so that the lease messages the
 * machines ask for from now on go after it, from that buffer
 * (rmsg_lease_send_owed()). What they owe the connection (a GRANT or an
 * ASK again, after a repair) is queued behind the READY. Without a READY
 * the buffer is free at once: the hello, which stood for it, went first.
 *
 * Return: the READY's argument, RMSG_READY_ARG() of both machines; 0 on
 * a channel without leases, and at the first connection of one.
 */
u64 rmsg_lease_connected(struct rmsg_channel *ch, bool ready)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_lease_act act;
	u64 arg;
	int ret;

	if (!l->on)
		return 0;
	mutex_lock(&ch->ep->lock);
	if (ready)
		set_bit(rmsg_ctrl_busy_bit(RMSG_CTRL_READY_BUF), &ch->flags);
	rmsg_lease_rx_connected(&l->rx, ch->dev.mr ? ch->dev.mr->rkey : 0,
				&act);
	ret = rmsg_lease_queue(ch, &act);
	rmsg_lease_tx_connected(&l->tx, &act);
	if (!ret)
		ret = rmsg_lease_queue(ch, &act);
	arg = rmsg_lease_ready_arg(&l->rx, &l->tx);
	mutex_unlock(&ch->ep->lock);
	if (ret)
		rmsg_chan_kill_soft(ch, ret);
	/* The peer's READY may be waiting for the machines to be up. */
	queue_work(rmsg_wq, &ch->data_work);
	return arg;
}

/**
 * rmsg_lease_down() - the channel's connection is gone (a repair's DOWN)
 * @ch: the channel; in its work, under ep->lock, after the connection's
 *	last completion (the QP drained, or on a link the carrier's drain
 *	and this channel's work requests waited for): no receive of the old
 *	connection can push a message after this
 *
 * Both machines learn it, and the messages of the old connection go:
 * those that arrived and were not taken yet, and those asked for and not
 * posted. Either is as good as lost in flight, which the protocol
 * settles from the READYs of the next connection (a GRANT and an ASK are
 * asked for again by rmsg_lease_connected(); a REVOKE is forgotten).
 * Taken later, a message of the old connection would meet machines of
 * the new one that did not send it their READY yet.
 */
void rmsg_lease_down(struct rmsg_channel *ch)
{
	struct rmsg_chan_lease *l = &ch->lease;

	lockdep_assert_held(&ch->ep->lock);
	if (!l->on)
		return;
	rmsg_lease_rx_down(&l->rx);
	rmsg_lease_tx_down(&l->tx);
	l->out_head = 0;
	l->out_len = 0;
	spin_lock_bh(&l->in_lock);
	l->in_head = 0;
	l->in_len = 0;
	spin_unlock_bh(&l->in_lock);
}

/**
 * rmsg_lease_resume() - check the peer's resume point of our stream
 * @ch: the channel, leased, suspended; under ep->lock
 * @peer: the peer's hello on the new connection
 *
 * While we hold a lease the peer's block stands where our writes into it
 * left it, and the shadow tells what it lacks (rmsg_vb_tx_resume(), as on
 * any channel): rmsg_lease_tx_resume_check() lets it through. Without
 * one nothing is written, nothing is owed again and there may be no
 * shadow: the peer's point must be exactly where the last lease ended
 * (the first: 0, 0, 0).
 *
 * Return: 1 when the caller checks the point against the shadow, 0 when
 * it stands where it must (nothing to write again), or -EPROTO.
 */
int rmsg_lease_resume(struct rmsg_channel *ch, const struct rmsg_hello *peer)
{
	struct rmsg_lease_tx *tx = &ch->lease.tx;
	int ret;

	lockdep_assert_held(&ch->ep->lock);
	if (tx->state == RMSG_LEASE_TX_HELD)
		return 1;
	ret = rmsg_lease_tx_resume_check(tx, peer->rx_freed, peer->rx_arrived,
					 peer->rx_seq);
	if (ret)
		pr_notice_ratelimited("channel %u: the peer's resume point (released %u, arrived %u, seq %u) is not where lease %u ended (%u, seq %u)\n",
				      ch->id, peer->rx_freed, peer->rx_arrived,
				      peer->rx_seq, tx->lease, tx->bytes,
				      tx->seq);
	return ret;
}

/**
 * rmsg_lease_in() - a lease message, or the READY of a leased channel,
 *	arrived
 * @ch: the channel, @ch->lease.on
 * @type: RMSG_CTRL_READY or RMSG_CTRL_ASK to RMSG_CTRL_RETURN
 * @arg: its argument, its layout checked (rmsg_ctrl_decode())
 *
 * Softirq. Kept in order for the data work (rmsg_lease_progress()):
 * what the machines make of a message depends on those before it. A
 * peer has one lease message in flight at a time (they share its
 * READY's buffer), and every one needs an answer of ours before the
 * next that matters; more than the ring holds is a peer that breaks the
 * protocol.
 */
void rmsg_lease_in(struct rmsg_channel *ch, u8 type, u64 arg)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_lease_wire *w;
	bool full;

	spin_lock(&l->in_lock);
	full = l->in_len == RMSG_LEASE_RING;
	if (!full) {
		w = &l->in[(u8)(l->in_head + l->in_len) % RMSG_LEASE_RING];
		w->type = type;
		w->arg = arg;
		l->in_len++;
	}
	spin_unlock(&l->in_lock);
	if (full)
		rmsg_chan_kill_soft(ch, -EPROTO);
	else
		queue_work(rmsg_wq, &ch->data_work);
}

/* The lease messages of this file (softirq): the peer's machines'. */
static void rmsg_lease_ctrl_in(struct rmsg_channel *ch, u8 type, u64 arg)
{
	/* rmsg_ctrl_recv_take() let them through on a leased channel only. */
	rmsg_lease_in(ch, type, arg);
}

/* The sender's machine started a lease, or got its key again. */
static void rmsg_lease_tx_act(struct rmsg_channel *ch,
			      const struct rmsg_lease_act *act)
{
	if (act->todo & RMSG_LEASE_START) {
		/* A fresh block: lap 0, position 0, the counters go on. */
		rmsg_vb_tx_init(&ch->tx, ch->peer.block_size, act->seq,
				act->bytes);
		ch->peer.block_rkey = act->rkey;
	}
	if (act->todo & RMSG_LEASE_KEY)
		ch->peer.block_rkey = act->rkey;
	/*
	 * RMSG_LEASE_FREE: the shadow is no longer needed. It stays until
	 * the channel ends (freeing it once the data WRs that read it
	 * completed is still to come); a new lease writes it from lap 0.
	 */
}

/* One message that arrived, through the machine it is for. */
static int rmsg_lease_take(struct rmsg_channel *ch,
			   const struct rmsg_lease_wire *w)
{
	struct rmsg_chan_lease *l = &ch->lease;
	u32 arrived = ch->rndv.krx.consumed;
	struct rmsg_lease_act act;
	struct rmsg_lease_msg m;
	bool busy;
	int ret;

	ret = rmsg_lease_msg_decode(w->type, w->arg, &m);
	if (ret)
		return -EPROTO;
	switch (w->type) {
	case RMSG_CTRL_READY:
		ret = rmsg_lease_rx_peer_ready(&l->rx, &m, arrived, &act);
		if (!ret)
			ret = rmsg_lease_tx_peer_ready(&l->tx, &m);
		/* A RETURN lost: only after a REVOKE, which none sends yet. */
		if (!ret && (act.todo & RMSG_LEASE_FREE))
			ret = -EPROTO;
		break;
	case RMSG_CTRL_ASK:
		ret = rmsg_lease_rx_ask(&l->rx, &m, &act);
		if (!ret && (act.todo & RMSG_LEASE_ALLOC)) {
			/* The channel's work owns what the block needs. */
			set_bit(RMSG_CHAN_LEASE_ALLOC, &ch->flags);
			queue_work(rmsg_wq, &ch->work);
		}
		break;
	case RMSG_CTRL_GRANT:
		ret = rmsg_lease_tx_grant(&l->tx, &m, &act);
		if (!ret)
			rmsg_lease_tx_act(ch, &act);
		break;
	case RMSG_CTRL_REVOKE:
		/* Sends that wait, or records owed again, need the lease. */
		busy = ch->pending.posted != ch->pending.tail ||
		       ch->retain.retx_due;
		ret = rmsg_lease_tx_revoke(&l->tx, &m, busy, ch->tx.written,
					   ch->tx.seq, &act);
		if (!ret)
			rmsg_lease_tx_act(ch, &act);
		break;
	case RMSG_CTRL_RETURN:
		ret = rmsg_lease_rx_return(&l->rx, &m, arrived, &act);
		/* No REVOKE goes out yet: there is nothing to free. */
		if (!ret && (act.todo & RMSG_LEASE_FREE))
			ret = -EPROTO;
		break;
	default:
		return -EPROTO;
	}
	if (!ret)
		ret = rmsg_lease_queue(ch, &act);
	return ret;
}

/**
 * rmsg_lease_progress() - what arrived, through the machines; what they
 *	asked for, out
 * @ch: the channel; in its data work, under ep->lock
 *
 * Nothing is taken before this side's READY went (the machines learn of
 * the connection then): the peer's READY may arrive first.
 */
void rmsg_lease_progress(struct rmsg_channel *ch)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_lease_wire w;
	int ret = 0;

	lockdep_assert_held(&ch->ep->lock);
	if (!l->on)
		return;
	while (!ret && l->rx.conn) {
		spin_lock_bh(&l->in_lock);
		if (!l->in_len) {
			spin_unlock_bh(&l->in_lock);
			break;
		}
		w = l->in[l->in_head];
		l->in_head = (l->in_head + 1) % RMSG_LEASE_RING;
		l->in_len--;
		spin_unlock_bh(&l->in_lock);
		ret = rmsg_lease_take(ch, &w);
	}
	if (ret) {
		pr_notice_ratelimited("channel %u: a lease message that does not fit (%d)\n",
				      ch->id, ret);
		rmsg_chan_kill_soft(ch, ret);
		return;
	}
	rmsg_lease_send_owed(ch);
}

/**
 * rmsg_lease_want() - sends wait and the peer's block is not ours to write
 * @ch: the channel, leased; under ep->lock
 *
 * The shadow was made at open: the ASK goes at once (or with the next
 * connection), and a GRANT starts the writing.
 */
void rmsg_lease_want(struct rmsg_channel *ch)
{
	struct rmsg_lease_act act;

	lockdep_assert_held(&ch->ep->lock);
	rmsg_lease_tx_want(&ch->lease.tx, &act);
	if (rmsg_lease_queue(ch, &act)) {
		rmsg_chan_kill_soft(ch, -EIO);
		return;
	}
	rmsg_lease_send_owed(ch);
}

/**
 * rmsg_lease_made() - the block the peer asked for is made
 * @ch: the channel; in its work. ch->block is set and published to the
 *	program (zeroed: lap 0 has nothing), mapped for the device, and its
 *	REG_MR is posted
 * @rkey: the block's key
 *
 * The kernel's walk of the block starts where the lease starts, and the
 * GRANT is queued: it goes behind the REG_MR on the same send queue.
 *
 * Return: 0, or -ENOMEM (no kernel mapping for the walk).
 */
int rmsg_lease_made(struct rmsg_channel *ch, u32 rkey)
{
	struct rmsg_chan_lease *l = &ch->lease;
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_lease_act act;
	int ret;

	mutex_lock(&ch->ep->lock);
	if (!r->block_va)
		r->block_va = vmap(ch->block->pages, ch->block->npages,
				   VM_MAP, PAGE_KERNEL);
	ret = r->block_va ? 0 : -ENOMEM;
	if (!ret)
		ret = rmsg_lease_rx_allocated(&l->rx, rkey, &act);
	if (!ret && (act.todo & RMSG_LEASE_START))
		rmsg_vb_rx_init(&r->krx, ch->block_size, act.seq, act.bytes);
	if (!ret)
		ret = rmsg_lease_queue(ch, &act);
	if (!ret)
		rmsg_lease_send_owed(ch);
	mutex_unlock(&ch->ep->lock);
	return ret;
}

/* At module load: the four lease messages. */
void __init rmsg_leases_init_module(void)
{
	rmsg_ctrl_on_recv(RMSG_CTRL_ASK, rmsg_lease_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_GRANT, rmsg_lease_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_REVOKE, rmsg_lease_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_RETURN, rmsg_lease_ctrl_in, false);
}
