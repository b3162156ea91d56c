// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: rendezvous transfers (Documentation/rendezvous.rst), RGet.
 *
 * Sender. RMSG_OP_SEND_RNDV names bytes of a region. The kernel maps them
 * for the channel's device in segments (rmsg_rts.c), one fast registration
 * each, with remote read access, and queues the send in the channel's
 * pending ring like an eager one. When its turn comes it posts the
 * REG_MRs, then writes an RTS record (struct rmsg_rts: length, cookie,
 * keys) into the peer's block, in order with eager records. When the
 * peer's FIN comes, it invalidates the registrations (LOCAL_INV), and only
 * then posts the SEND_RNDV's CQE and lets the region go: the peer can read
 * nothing after that.
 *
 *	queued --(REG_MRs, RTS write)--> in tx[] --(FIN)--> invalidating
 *	--(LOCAL_INV completes)--> CQE, freed
 *
 * Receiver. The kernel walks its own receive block, record by record, with
 * the protocol core's receiver (rmsg_rndv_collect()) and copies each RTS it
 * finds. The chain of trailers was written by the peer's kernel, so the
 * keys it uses never come from a program; and it walks before every CREDIT,
 * so a record is copied before the peer may overwrite it.
 * RMSG_OP_RECV_RNDV answers a cookie with a destination in a region; with
 * both, the kernel maps the destination and RDMA-READs the message segment
 * by segment, several READs in flight. When all completed it posts the
 * RECV_RNDV's CQE and sends FIN(cookie, 0). A destination too small gets
 * no READ: FIN(cookie, EMSGSIZE), and the CQE says -EMSGSIZE.
 *
 *	RTS collected + answered --(READs)--> CQE, FIN --> freed
 *
 * At most RMSG_RNDV_WINDOW transfers each way are between RTS and the end
 * of the FIN's invalidation; more wait in the pending ring (and hold up
 * later sends of the channel, whose order they keep).
 *
 * Everything here runs under ep->lock, but rmsg_rndv_fin_in() (softirq),
 * which stores a value and queues the work.
 *
 * The middle of rendezvous's three files (rmsg_rndv_types.h):
 * rmsg_rndv_move.c below it registers and moves bytes, and
 * rmsg_rndv_repair.c above it carries the transfers across repairs.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_cq.c, rmsg_region.c,
 * rmsg_rndv_move.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "rmsg.h"
#include "rmsg_cq.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"
#include "rmsg_region.h"
#include "rmsg_rts.h"
#include "rmsg_rndv_types.h"

/* --- the sender --------------------------------------------------------- */

/* Undo what rmsg_rndv_tx_map() did; @valid: registrations may be valid. */
void rmsg_rndv_tx_unmap(struct rmsg_channel *ch,
			struct rmsg_rndv_tx *t, bool valid)
{
	rmsg_segs_unmap(ch, &t->segs, valid);
	rmsg_move_unmap(ch, &t->mv);
}

void rmsg_rndv_tx_free(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	if (rmsg_rndv_on_device(ch))
		rmsg_rndv_tx_unmap(ch, t, rmsg_segs_valid(&t->segs));
	if (t->region)
		rmsg_region_put(t->region);
	rmsg_segs_free(&t->segs);
	if (t->mbox)
		free_pages((unsigned long)t->mbox,
			   get_order(2 * RMSG_RNDV_MBOX));
	kfree(t);
}

/*
 * Map and register (not yet post) what the peer needs: RGet, the message
 * for reading; RPut, a mailbox for its CTS, and the message for our own
 * WRITEs. Write the RTS but for its cookie.
 */
int rmsg_rndv_tx_map(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct rmsg_rndv_segs *s = &t->segs;
	struct rmsg_rts_info info = {
		.len		= t->len,
	};
	int ret;

	if (!t->put) {
		s->dir = DMA_TO_DEVICE;
		s->access = IB_ACCESS_REMOTE_READ;
		info.addr = rmsg_rndv_wire_addr(t->addr);
		info.seg_shift = ch->rndv.seg_shift;
		ret = rmsg_segs_map(ch, s, t->region, NULL, t->addr, info.addr,
				    t->len, info.seg_shift);
	} else {
		/*
		 * Kept when a repair maps the transfer again. Twice the
		 * mailbox: the second half, which only the first is
		 * registered beside, holds the CTS once taken.
		 */
		if (!t->mbox)
			t->mbox = (void *)__get_free_pages(RMSG_GFP_CHARGED |
							   __GFP_ZERO,
							   get_order(2 * RMSG_RNDV_MBOX));
		if (!t->mbox)
			return -ENOMEM;
		s->dir = DMA_FROM_DEVICE;
		s->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		info.addr = 0;
		info.seg_shift = RMSG_RNDV_MBOX_SHIFT;
		info.flags = RMSG_RTS_F_PUT;
		ret = rmsg_segs_map(ch, s, NULL, t->mbox, 0, 0, RMSG_RNDV_MBOX,
				    RMSG_RNDV_MBOX_SHIFT);
		if (!ret)
			ret = rmsg_move_map(ch, &t->mv, t->region, t->addr,
					    t->len, DMA_TO_DEVICE);
	}
	if (ret)
		return ret;
	info.nseg = s->nseg;
	rmsg_rts_encode(s->rts, &info);
	return 0;
}

/**
 * rmsg_rndv_send() - take an RMSG_OP_SEND_RNDV
 * @ep: the endpoint, locked
 * @ch: its channel, open for sending
 * @sqe: the SQE
 * @e: the pending entry to fill in; the caller queues it
 *
 * Return: 0, or a negative errno for the SQE's CQE.
 */
int rmsg_rndv_send(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
		   const struct rmsg_sqe *sqe, struct rmsg_pending *e)
{
	bool put = sqe->flags & RMSG_RNDV_F_PUT;
	struct rmsg_rndv_tx *t;
	struct rmsg_region *region;
	u32 nseg;
	int ret;

	if (!sqe->len || sqe->len > RMSG_RNDV_MAX_LEN || sqe->aux ||
	    sqe->flags & ~RMSG_RNDV_F_PUT)
		return -EINVAL;
	if (sqe->addr + sqe->len < sqe->addr)
		return -EFAULT;
	nseg = put ? 1 : rmsg_rts_nseg(rmsg_rndv_wire_addr(sqe->addr),
				       sqe->len, ch->rndv.seg_shift);
	if (rmsg_rts_size(nseg) > ch->max_msg || nseg > rmsg_rndv_mrs_max)
		return -EMSGSIZE;
	/* Region 0: memory in none, pinned for this transfer only. */
	region = sqe->region ?
		rmsg_region_get(ep, sqe->region, sqe->addr, sqe->len) :
		rmsg_region_take_pinned(ep, sqe->addr, sqe->len, false);
	if (IS_ERR(region))
		return PTR_ERR(region);
	t = kzalloc(sizeof(*t), RMSG_GFP_CHARGED);
	if (!t) {
		rmsg_region_put(region);
		return -ENOMEM;
	}
	t->region = region;
	t->user_data = sqe->user_data;
	t->addr = sqe->addr;
	t->len = sqe->len;
	t->put = put;
	/* Off any device (a repair between two): the next one maps it. */
	ret = rmsg_rndv_on_device(ch) ? rmsg_rndv_tx_map(ch, t) : 0;
	if (ret) {
		rmsg_rndv_tx_free(ch, t);
		return ret;
	}
	e->user_data = sqe->user_data;
	e->off = 0;
	e->len = rmsg_rts_size(t->segs.nseg);
	e->rndv = t;
	return 0;
}

/**
 * rmsg_rndv_ready() - may the RTS of @t be written now?
 * @ch: the channel
 * @t: the transfer, first in the pending ring
 * @buf: out: the RTS payload, in kernel memory
 * @dma: out: its bus address
 * @len: out: its length
 *
 * Posts the transfer's REG_MRs (those not yet posted) first.
 *
 * Return: 0 when the record can go, -EAGAIN without room (the window of
 * transfers, or the send queue), another negative errno when the QP
 * refused a WR.
 */
int rmsg_rndv_ready(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
		    void **buf, u64 *dma, u32 *len)
{
	struct rmsg_rndv *r = &ch->rndv;
	int ret;

	if (r->tx_next - r->tx_oldest >= RMSG_RNDV_WINDOW)
		return -EAGAIN;
	ret = rmsg_segs_post(ch, &t->segs, false);
	if (ret)
		return ret;
	/* The rest of the RTS was filled when the segments were mapped. */
	t->cookie = r->tx_next;
	t->segs.rts->cookie = cpu_to_le32(t->cookie);
	ib_dma_sync_single_for_device(ch->dev.rdev->ibdev, t->segs.rts_dma,
				      rmsg_rts_size(t->segs.nseg),
				      DMA_TO_DEVICE);
	*buf = t->segs.rts;
	*dma = t->segs.rts_dma;
	*len = rmsg_rts_size(t->segs.nseg);
	return 0;
}

/*
 * The RTS of @t is posted, its payload at block offset @payload_off: the
 * transfer waits for its FIN in tx[].
 */
void rmsg_rndv_written(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
		       u32 payload_off)
{
	struct rmsg_rndv *r = &ch->rndv;

	t->rts_off = payload_off;
	t->rts_end = ch->tx.written;
	r->tx[t->cookie & RMSG_RNDV_MASK] = t;
	r->tx_next++;
}

/**
 * rmsg_rndv_ctrl_in() - a FIN, CTS, DONE or REKEY arrived (softirq)
 * @ch: the channel
 * @type: which
 * @arg: its validated argument, which names a cookie
 */
static void rmsg_rndv_ctrl_in(struct rmsg_channel *ch, u8 type, u64 arg)
{
	struct rmsg_rndv *r = &ch->rndv;
	u32 i = RMSG_FIN_COOKIE(arg) & RMSG_RNDV_MASK;
	atomic64_t *slot = type == RMSG_CTRL_FIN ? &r->fin[i] :
			   type == RMSG_CTRL_CTS ? &r->cts[i] : &r->done[i];
	u64 old;

	/* The work reads the area, once per connection's REKEY. */
	if (type == RMSG_CTRL_REKEY) {
		atomic64_set(&r->rekey_in, arg + 1);
		queue_work(rmsg_wq, &ch->data_work);
		return;
	}

	/*
	 * After a repair the peer sends again the FINs it cannot know
	 * arrived: the newest cookie of a slot wins, and the work drops a
	 * FIN of a transfer that is over (rmsg_rndv_tx_progress()).
	 */
	if (type == RMSG_CTRL_FIN) {
		old = atomic64_read(slot);
		do {
			if (old && (s32)(RMSG_FIN_COOKIE(arg) -
					 RMSG_FIN_COOKIE(old - 1)) <= 0)
				return;
		} while (!atomic64_try_cmpxchg(slot, &old, arg + 1));
		queue_work(rmsg_wq, &ch->data_work);
		return;
	}
	/* One of each per transfer and connection (rmsg_rndv_suspend()). */
	if (atomic64_cmpxchg(slot, 0, arg + 1)) {
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	queue_work(rmsg_wq, &ch->data_work);
}

/**
 * rmsg_rndv_fin_sent() - a FIN buffer's send completed (softirq)
 * @ch: the channel
 * @idx: its buffer
 * @ok: it arrived
 *
 * A FIN buffer's send completing means the peer has that FIN: a repair
 * need not send it again. (The buffer's next message, a CTS or the next
 * FIN, waits for this completion.)
 */
static void rmsg_rndv_fin_sent(struct rmsg_channel *ch, unsigned int idx,
			       bool ok)
{
	if (ok)
		atomic64_set(&ch->rndv.fin_sent[idx - RMSG_CTRL_FIN_BUF], 0);
}

/*
 * Our REKEY left (softirq): the REG_MRs posted before it on the same
 * queue ran, so the keys its area names are registered
 * (rmsg_rndv_suspend()). A flushed one says nothing.
 */
static void rmsg_rndv_rekey_sent(struct rmsg_channel *ch, unsigned int idx,
				 bool ok)
{
	if (ok)
		WRITE_ONCE(ch->rndv.rekey_sure, true);
}

/* At module load: the control messages of rendezvous transfers. */
void __init rmsg_rndv_init_module(void)
{
	rmsg_ctrl_on_recv(RMSG_CTRL_FIN, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_CTS, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_DONE, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_REKEY, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_sent(RMSG_CTRL_FIN_BUF, RMSG_RNDV_WINDOW,
			  rmsg_rndv_fin_sent);
	rmsg_ctrl_on_sent(RMSG_CTRL_REKEY_BUF, 1, rmsg_rndv_rekey_sent);
}

/*
 * RPut: take the CTS the peer wrote into @t's mailbox. The peer can write
 * the mailbox again at any time, so the record is copied out once, to the
 * half of the allocation the device cannot reach, and only the copy is
 * decoded and used (@t->cts.rkey points into it).
 */
static int rmsg_rndv_cts_take(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_rts *cts = t->mbox + RMSG_RNDV_MBOX;
	u32 nseg;

	/* The ib_dma_*() family has no sgtable sync; do what it would. */
	if (!ib_uses_virt_dma(ibdev))
		dma_sync_sgtable_for_cpu(ibdev->dma_device, &t->segs.sgt[0],
					 DMA_FROM_DEVICE);
	memcpy(cts, t->mbox, RMSG_RNDV_MBOX);
	nseg = le32_to_cpu(cts->nseg);
	if (nseg > (RMSG_RNDV_MBOX - sizeof(*cts)) / sizeof(cts->rkey[0]) ||
	    rmsg_rts_decode(cts, rmsg_rts_size(nseg), &t->cts) ||
	    t->cts.flags != RMSG_RTS_F_CTS || t->cts.cookie != t->cookie ||
	    t->cts.len != t->len)
		return -EPROTO;
	t->have_cts = true;
	return 0;
}

/*
 * RPut, before the FIN: on the CTS, write the bytes, then say DONE.
 * Return: 0, or a negative errno that ends the channel.
 */
static int rmsg_rndv_put_tx(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	atomic64_t *cts = &ch->rndv.cts[t->cookie & RMSG_RNDV_MASK];
	u64 arg;
	int ret;

	if (!t->have_cts) {
		arg = atomic64_read(cts);
		if (!arg)
			return 0;
		if (arg - 1 != t->cookie)
			return -EPROTO;
		ret = rmsg_rndv_cts_take(ch, t);
		if (ret)
			return ret;
	}
	if (t->done_sent || !ch->tx_live)
		return 0;
	ret = rmsg_move(ch, &t->mv, &t->cts, false);
	if (ret)
		return -ECONNRESET;
	if (t->mv.pos < t->len)
		return 0;
	/* After the WRITEs on the same queue: they land before it does. */
	ret = rmsg_rndv_ctrl(ch, RMSG_CTRL_DONE_BUF, RMSG_CTRL_DONE,
			     RMSG_FIN_ARG(t->cookie, 0));
	if (ret == -EAGAIN)
		return 0;
	if (!ret) {
		t->done_sent = true;
		t->done_ever = true;
	}
	return ret;
}

/* FINs, invalidations and CQEs of our transfers. */
static void rmsg_rndv_tx_progress(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
	};
	u32 c, i;
	u64 fin;
	int ret;

	for (c = r->tx_oldest; c != r->tx_next; c++) {
		i = c & RMSG_RNDV_MASK;
		t = r->tx[i];
		if (!t)
			continue;
		if (!t->fin) {
			fin = atomic64_read(&r->fin[i]);
			if (t->put && !fin) {
				ret = rmsg_rndv_put_tx(ch, t);
				if (ret) {
					rmsg_chan_kill_soft(ch, ret);
					return;
				}
				continue;
			}
			if (!fin)
				continue;
			fin--;
			/* Sent again after a repair, of a transfer now over. */
			if ((s32)(RMSG_FIN_COOKIE(fin) - c) < 0) {
				atomic64_cmpxchg(&r->fin[i], fin + 1, 0);
				continue;
			}
			/* An RPut succeeds only after our DONE. */
			if (RMSG_FIN_COOKIE(fin) != c ||
			    (t->put && !t->done_ever && !RMSG_FIN_ERR(fin))) {
				rmsg_chan_kill_soft(ch, -EPROTO);
				return;
			}
			t->fin = true;
			t->status = -RMSG_FIN_ERR(fin);
		}
		/*
		 * Registered afresh after a move, and the FIN (sent again: the
		 * peer was done before) came before the REG_MRs went: a key
		 * never valid needs no LOCAL_INV, which would fail for it.
		 */
		if (!t->segs.reg_posted && !t->segs.inv_posted) {
			t->segs.inv_posted = t->segs.nseg;
			atomic_set(&t->segs.inv_done, 1);
		}
		if (atomic_read(&t->segs.inv_done) &&
		    atomic_read(&t->mv.ops_done) == t->mv.ops) {
			/* No key of it is valid: let the program have it. */
			rmsg_rndv_tx_unmap(ch, t, false);
			/* Before the CQE: the program may DEREG at once. */
			rmsg_region_put(t->region);
			t->region = NULL;
			cqe.user_data = t->user_data;
			cqe.res = t->status;
			cqe.len = t->len;
			cqe.aux = t->addr;
			rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
			r->tx[i] = NULL;
			atomic64_set(&r->fin[i], 0);
			atomic64_set(&r->cts[i], 0);
			rmsg_rndv_tx_free(ch, t);
			continue;
		}
		if (!ch->tx_live)
			continue;
		/* Some REG_MRs went: the rest go before the LOCAL_INVs. */
		ret = rmsg_segs_post(ch, &t->segs, false);
		if (!ret)
			ret = rmsg_segs_post(ch, &t->segs, true);
		if (ret && ret != -EAGAIN) {
			rmsg_chan_kill_soft(ch, -ECONNRESET);
			return;
		}
	}
	while (r->tx_oldest != r->tx_next && !r->tx[r->tx_oldest & RMSG_RNDV_MASK])
		r->tx_oldest++;
}

/* --- the receiver ------------------------------------------------------- */

static struct rmsg_rndv_rx *rmsg_rndv_rx_slot(struct rmsg_channel *ch,
					      u32 cookie)
{
	struct rmsg_rndv_rx **slot = &ch->rndv.rx[cookie & RMSG_RNDV_MASK];

	if (!*slot) {
		*slot = kzalloc(sizeof(**slot), RMSG_GFP_CHARGED);
		if (!*slot)
			return ERR_PTR(-ENOMEM);
		(*slot)->cookie = cookie;
	}
	/* Windows are kept: a slot still in use is a peer's mistake. */
	return (*slot)->cookie == cookie ? *slot : ERR_PTR(-EPROTO);
}

/* Keep a copy of the RTS record found at block offset @off. */
static int rmsg_rndv_collect_one(struct rmsg_channel *ch, u32 off, u32 len)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	void *rts;
	int ret;

	rts = kmemdup(r->block_va + off, len, RMSG_GFP_CHARGED);
	if (!rts)
		return -ENOMEM;
	x = rmsg_rndv_rx_slot(ch, r->rx_next);
	ret = IS_ERR(x) ? PTR_ERR(x) : x->have_rts ? -EPROTO : 0;
	if (!ret)
		ret = rmsg_rts_decode(rts, len, &x->info);
	/* A CTS never goes into a block. */
	if (!ret && (x->info.cookie != r->rx_next ||
		     x->info.flags & RMSG_RTS_F_CTS))
		ret = -EPROTO;
	if (ret) {
		kfree(rts);
		return ret;
	}
	x->rts = rts;
	x->have_rts = true;
	/* The peer reuses a slot only after it had the slot's last FIN. */
	atomic64_set(&r->fin_sent[r->rx_next & RMSG_RNDV_MASK], 0);
	r->fin_resend[r->rx_next & RMSG_RNDV_MASK] = 0;
	r->rx_next++;
	return 0;
}

/**
 * rmsg_rndv_collect() - copy out the RTS records that landed
 * @ch: the channel
 *
 * The kernel walks the receive block with its own receiver, from the
 * block's start and record by record, as the program does: the trailers
 * that chain the records were written by the peer's kernel, so no payload
 * a program wrote can pass for an RTS. It must have walked past a record
 * before the program's release counter goes to the peer, which may then
 * overwrite it: CREDIT calls this first.
 */
void rmsg_rndv_collect(struct rmsg_channel *ch)
{
	int ret;

	/*
	 * Also while a repair has stopped writing: the peer may be writing
	 * again (its side reopened first) and the program releasing, and the
	 * walk must stay ahead of what goes out as credit.
	 */
	ret = rmsg_rndv_walk(ch);
	if (ret) {
		pr_notice_ratelimited("channel %u: the receive block is not consistent (%d) after %u bytes\n",
				      ch->id, ret, ch->rndv.krx.consumed);
		rmsg_chan_kill_soft(ch, ret);
	}
}

/**
 * rmsg_rndv_walk() - walk the receive block to the end of what arrived
 * @ch: the channel; the caller holds ep->lock
 *
 * Also the resume point of a repair: the walk stops at the first record
 * that is not complete.
 *
 * Return: 0, or a negative errno for what the block or an RTS record got
 * wrong, or -ENOMEM.
 */
int rmsg_rndv_walk(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_vb_msg m;
	int ret;

	if (!r->block_va) {
		/* A leased block while no lease is out: nothing to walk. */
		if (!ch->block)
			return 0;
		r->block_va = vmap(ch->block->pages, ch->block->npages, VM_MAP,
				   PAGE_KERNEL);
		if (!r->block_va)
			return -ENOMEM;
		rmsg_vb_rx_init(&r->krx, ch->block_size, 0, 0);
	}
	/* What the peer may have written is what it was allowed to. */
	r->krx.advertised = ch->flow.credit;
	while ((ret = rmsg_vb_rx_poll(&r->krx, r->block_va, &m)) > 0) {
		if (m.type != RMSG_VB_RTS)
			continue;
		/* Without rendezvous on this device an RTS is an error. */
		ret = r->seg_shift ? rmsg_rndv_collect_one(ch, m.off, m.len) :
				     -EPROTO;
		if (ret)
			break;
	}
	return ret;
}

/**
 * rmsg_rndv_recv() - take an RMSG_OP_RECV_RNDV
 * @ep: the endpoint, locked
 * @ch: its channel, open
 * @sqe: the SQE
 *
 * Return: 0 when the CQE comes later, or a negative errno for the SQE's
 * CQE now (the RTS then still awaits an answer).
 */
int rmsg_rndv_recv(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
		   const struct rmsg_sqe *sqe)
{
	struct rmsg_rndv *r = &ch->rndv;
	bool discard = sqe->flags & RMSG_RNDV_F_DISCARD;
	struct rmsg_region *region = NULL;
	struct rmsg_rndv_rx *x;

	if (sqe->flags & ~RMSG_RNDV_F_DISCARD || sqe->aux >> 32)
		return -EINVAL;
	if (discard ? sqe->len || sqe->addr || sqe->region : !sqe->len)
		return -EINVAL;
	rmsg_rndv_collect(ch);
	/* In order, and only what the peer could have sent by now. */
	if ((u32)sqe->aux != r->rx_answer)
		return -EINVAL;
	if (r->rx_answer - r->rx_oldest >= RMSG_RNDV_WINDOW)
		return -EINVAL;
	if (!discard) {
		region = sqe->region ?
			rmsg_region_get(ep, sqe->region, sqe->addr,
					sqe->len) :
			rmsg_region_take_pinned(ep, sqe->addr,
						sqe->len, true);
		if (IS_ERR(region))
			return PTR_ERR(region);
	}
	x = rmsg_rndv_rx_slot(ch, r->rx_answer);
	if (IS_ERR(x) || x->answered) {
		if (region)
			rmsg_region_put(region);
		return IS_ERR(x) ? PTR_ERR(x) : -EINVAL;
	}
	x->answered = true;
	x->user_data = sqe->user_data;
	x->region = region;
	x->addr = sqe->addr;
	x->room = sqe->len;
	x->discard = discard;
	r->rx_answer++;
	ep->cq_reserved++;
	return 0;
}

/* Map the destination; decide what the transfer comes to. */
static int rmsg_rndv_rx_start(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	struct rmsg_rndv_segs *s = &x->segs;
	u32 shift = ch->rndv.seg_shift;
	struct rmsg_rts_info cts = {
		.len		= x->info.len,
		.addr		= rmsg_rndv_wire_addr(x->addr),
		.cookie		= x->cookie,
		.seg_shift	= shift,
		.flags		= RMSG_RTS_F_CTS,
	};
	int ret;

	if (x->discard) {
		x->status = -ECANCELED;
		return 0;
	}
	if (x->room < x->info.len) {
		x->status = -EMSGSIZE;
		return 0;
	}
	if (!(x->info.flags & RMSG_RTS_F_PUT)) {
		ret = rmsg_move_map(ch, &x->mv, x->region, x->addr,
				    x->info.len, DMA_FROM_DEVICE);
		if (!ret)
			x->started = true;
		return ret;
	}
	/* RPut: our keys must fit the sender's mailbox. */
	cts.nseg = rmsg_rts_nseg(cts.addr, x->info.len, shift);
	if (cts.nseg > rmsg_rndv_mrs_max ||
	    rmsg_rts_size(cts.nseg) > 1ULL << x->info.seg_shift) {
		x->status = -ENOBUFS;
		return 0;
	}
	x->started = true;
	s->dir = DMA_FROM_DEVICE;
	s->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	ret = rmsg_segs_map(ch, s, x->region, NULL, x->addr, cts.addr,
			    x->info.len, shift);
	if (ret)
		return ret;
	rmsg_rts_encode(s->rts, &cts);
	ib_dma_sync_single_for_device(ch->dev.rdev->ibdev, s->rts_dma,
				      rmsg_rts_size(s->nseg), DMA_TO_DEVICE);
	return 0;
}

/* RGet: read the bytes in. Return: as rmsg_rndv_put_rx(). */
static int rmsg_rndv_get_rx(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	int ret = rmsg_move(ch, &x->mv, &x->info, true);

	if (ret)
		return ret;
	return rmsg_move_done(&x->mv, x->info.len) ? 0 : -EAGAIN;
}

/*
 * RPut: register the destination, write the CTS into the sender's mailbox
 * and say so, wait for DONE, invalidate. Return: 0 when the bytes are in
 * place and no key of ours is valid, -EAGAIN to wait, or an errno that
 * ends the channel.
 */
static int rmsg_rndv_put_rx(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	struct rmsg_rndv_segs *s = &x->segs;
	u32 i = x->cookie & RMSG_RNDV_MASK;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	u64 done;
	int ret;

	if (!ch->tx_live)
		return -EAGAIN;
	ret = rmsg_segs_post(ch, s, false);
	if (ret)
		return ret;
	if (!x->cts_written) {
		if (!rmsg_wr_room(ch, 1))
			return -EAGAIN;
		sge.addr = s->rts_dma;
		sge.length = rmsg_rts_size(s->nseg);
		sge.lkey = ch->dev.pd->local_dma_lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.remote_addr = x->info.addr;
		wr.rkey = le32_to_cpu(x->info.rkey[0]);
		rmsg_wr_slot(ch, &wr.wr, NULL, false);
		ret = rmsg_wr_post(ch, &wr.wr);
		if (ret)
			return ret;
		x->cts_written = true;
	}
	if (!x->cts_sent) {
		/* After the REG_MRs and the WRITE: the sender sees both. */
		ret = rmsg_rndv_ctrl(ch, RMSG_CTRL_FIN_BUF + i, RMSG_CTRL_CTS,
				     x->cookie);
		if (ret)
			return ret;
		x->cts_sent = true;
	}
	if (!x->put_done) {
		done = atomic64_read(&ch->rndv.done[i]);
		if (!done)
			return -EAGAIN;
		if (RMSG_FIN_COOKIE(done - 1) != x->cookie)
			return -EPROTO;
		x->status = -RMSG_FIN_ERR(done - 1);
		x->put_done = true;
	}
	ret = rmsg_segs_post(ch, s, true);
	if (ret)
		return ret;
	return atomic_read(&s->inv_done) ? 0 : -EAGAIN;
}

/* The destination is written (or never will be): unmap it, post the CQE. */
void rmsg_rndv_rx_end(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	struct rmsg_cqe cqe = {
		.user_data	= x->user_data,
		.channel	= ch->id,
		.res		= x->status == -ECANCELED ? 0 : x->status,
		.len		= x->info.len,
		.aux		= x->cookie,
	};

	if (rmsg_rndv_on_device(ch)) {
		rmsg_move_unmap(ch, &x->mv);
		rmsg_segs_unmap(ch, &x->segs, rmsg_segs_valid(&x->segs));
	}
	/* Discarded or failed while it waited for new keys: it needs none. */
	if (x->stale) {
		x->stale = false;
		ch->rndv.stale--;
	}
	if (x->region)
		rmsg_region_put(x->region);
	x->region = NULL;
	rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
	x->done = true;
}

void rmsg_rndv_rx_free(struct rmsg_rndv_rx *x)
{
	rmsg_segs_free(&x->segs);
	kfree(x->rts);
	kfree(x);
}

/*
 * Send FIN @fin from buffer @i, and remember it until the send completes.
 * Marked first: the completion, in softirq, may come before the post
 * returns. Should a FIN marked so have arrived after all, a repair sends
 * it again, and the peer drops it.
 */
static int rmsg_rndv_fin(struct rmsg_channel *ch, u32 i, u64 fin)
{
	atomic64_t *sent = &ch->rndv.fin_sent[i];
	u64 old = atomic64_xchg(sent, fin + 1);
	int ret;

	ret = rmsg_rndv_ctrl(ch, RMSG_CTRL_FIN_BUF + i, RMSG_CTRL_FIN, fin);
	if (ret)
		atomic64_cmpxchg(sent, fin + 1, old);
	return ret;
}

/* A record of the peer's rekey area: @x's new keys, when it waits for them. */
static int rmsg_rndv_rx_rekey(struct rmsg_channel *ch,
			      const struct rmsg_rts_info *info)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x = r->rx[info->cookie & RMSG_RNDV_MASK];
	u32 size = rmsg_rts_size(info->nseg);
	void *rts;

	/* Over on this side, its FIN on the way: it needs nothing. */
	if (!x || x->cookie != info->cookie || !x->stale)
		return 0;
	if (info->len != x->info.len || info->flags != x->info.flags ||
	    (!(info->flags & RMSG_RTS_F_PUT) && info->addr != x->info.addr))
		return -EPROTO;
	rts = kmemdup((const u8 *)info->rkey - sizeof(struct rmsg_rts), size,
		      RMSG_GFP_CHARGED);
	if (!rts)
		return -ENOMEM;
	if (rmsg_rts_decode(rts, size, &x->info)) {
		kfree(rts);
		return -EPROTO;
	}
	kfree(x->rts);
	x->rts = rts;
	x->stale = false;
	r->stale--;
	rmsg_ep_count(ch->ep, RMSG_STAT_REKEYED_IN);
	return 0;
}

/*
 * The peer left its device (RMSG_HELLO_F_REKEY): once its REKEY of this
 * connection came, read its rekey area and take the new keys. Return: 0,
 * also while the READ runs, or an errno that ends the channel (-EPROTO:
 * the area lacks a transfer that waits, or lies).
 */
static int rmsg_rndv_rekey(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rts_info remote = {
		.seg_shift	= RMSG_RTS_MIN_SHIFT,
		.nseg		= 1,
		.rkey		= &r->rekey_key,
	};
	struct rmsg_rts_info info;
	u64 arg = atomic64_read(&r->rekey_in);
	u32 off = 0;
	int ret;

	if (!arg)
		return 0;
	arg--;
	/* An earlier connection's: its key may have died with its device. */
	if (RMSG_REKEY_EPOCH(arg) != (u16)ch->resil.epoch) {
		atomic64_cmpxchg(&r->rekey_in, arg + 1, 0);
		return 0;
	}
	remote.len = RMSG_REKEY_BYTES(arg);
	r->rekey_key = cpu_to_le32(RMSG_REKEY_RKEY(arg));
	if (!r->rekey_page)
		r->rekey_page = (void *)get_zeroed_page(RMSG_GFP_CHARGED);
	if (!r->rekey_mv)
		r->rekey_mv = kzalloc(sizeof(*r->rekey_mv), RMSG_GFP_CHARGED);
	if (!r->rekey_page || !r->rekey_mv)
		return -ENOMEM;
	if (!r->rekey_mv->mapped) {
		ret = rmsg_move_map_kbuf(ch, r->rekey_mv, r->rekey_page,
					 RMSG_REKEY_AREA);
		if (ret)
			return ret;
	}
	ret = rmsg_move(ch, r->rekey_mv, &remote, true);
	if (ret || !rmsg_move_done(r->rekey_mv, remote.len))
		return ret;
	/* Unmapping syncs the page for the CPU. */
	rmsg_move_unmap(ch, r->rekey_mv);
	memset(r->rekey_mv, 0, sizeof(*r->rekey_mv));
	atomic64_cmpxchg(&r->rekey_in, arg + 1, 0);
	while ((ret = rmsg_rts_next(r->rekey_page, remote.len, &off,
				    &info)) > 0) {
		ret = rmsg_rndv_rx_rekey(ch, &info);
		if (ret)
			return ret;
	}
	if (!ret && r->stale)
		ret = -EPROTO;
	return ret;
}

/* Start, move, end and FIN the peer's transfers, oldest first. */
static void rmsg_rndv_rx_progress(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	u32 c, i;
	u64 fin;
	int ret;

	if (r->stale) {
		ret = rmsg_rndv_rekey(ch);
		if (ret) {
			rmsg_chan_kill_soft(ch, ret == -EPROTO ? ret :
					    -ECONNRESET);
			return;
		}
	}
	for (c = r->rx_oldest; c != r->rx_answer; c++) {
		x = r->rx[c & RMSG_RNDV_MASK];
		if (!x->have_rts)
			break;	/* its immediate has not been seen yet */
		if (!x->done && !x->started && !x->status) {
			ret = rmsg_rndv_rx_start(ch, x);
			if (ret)
				x->status = ret;
		}
		/* Its keys went with the peer's device: wait for new ones. */
		if (!x->done && x->started && !x->status && x->stale)
			continue;
		if (!x->done && x->started && !x->status) {
			ret = x->info.flags & RMSG_RTS_F_PUT ?
			      rmsg_rndv_put_rx(ch, x) : rmsg_rndv_get_rx(ch, x);
			if (ret == -EAGAIN)
				continue;
			if (ret) {
				rmsg_chan_kill_soft(ch, ret == -EPROTO ?
						    ret : -ECONNRESET);
				return;
			}
		}
		if (!x->done)
			rmsg_rndv_rx_end(ch, x);
	}
	/* FINs a repair may have lost go again first. */
	for (i = 0; i < RMSG_RNDV_WINDOW; i++) {
		if (!r->fin_resend[i])
			continue;
		ret = rmsg_rndv_fin(ch, i, r->fin_resend[i] - 1);
		if (ret == -EAGAIN)
			continue;
		if (ret) {
			rmsg_chan_kill_soft(ch, ret);
			return;
		}
		r->fin_resend[i] = 0;
	}
	/* FINs go in order, each when its buffer is free. */
	while (r->rx_oldest != r->rx_answer && ch->tx_live) {
		x = r->rx[r->rx_oldest & RMSG_RNDV_MASK];
		if (!x->done)
			break;
		i = x->cookie & RMSG_RNDV_MASK;
		fin = RMSG_FIN_ARG(x->cookie, -x->status);
		ret = rmsg_rndv_fin(ch, i, fin);
		if (ret == -EAGAIN)
			break;
		if (ret) {
			rmsg_chan_kill_soft(ch, ret);
			return;
		}
		r->rx[r->rx_oldest & RMSG_RNDV_MASK] = NULL;
		atomic64_set(&r->done[r->rx_oldest & RMSG_RNDV_MASK], 0);
		r->rx_oldest++;
		rmsg_rndv_rx_free(x);
	}
}

/**
 * rmsg_rndv_progress() - everything rendezvous the work item may do
 * @ch: the channel
 */
void rmsg_rndv_progress(struct rmsg_channel *ch)
{
	/*
	 * Between devices (ep->lock guards ch->dev.rdev) nothing can move, and
	 * nothing is mapped to undo: the next device takes it up.
	 */
	if (!ch->rndv.seg_shift || !rmsg_rndv_on_device(ch))
		return;
	rmsg_rndv_tx_progress(ch);
	if (ch->tx_live)
		rmsg_rndv_rx_progress(ch);
}
