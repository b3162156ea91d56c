// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: rendezvous across a channel's connections, the top of its three
 * files (rmsg_rndv_types.h): when a connection breaks, transfers are
 * suspended, their registrations dropped and rewound; on the next
 * connection (perhaps another device, perhaps the peer's) they are
 * registered again, the peer told the new keys (REKEY), and resumed. Also
 * the channel's rendezvous state from set-up to the end.
 *
 * Everything here runs under ep->lock.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_cq.c, rmsg_region.c, rmsg_rndv.c
 * and rmsg_rndv_move.c.
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

/* --- repairs ------------------------------------------------------------ */

/*
 * Fault injection, for tests: the next REKEY's connection breaks after
 * the REG_MRs and the REKEY were posted and before they ran, as a QP error
 * can: none of them runs, and every one counts as posted.
 */
static unsigned int fault_rekey_flush;
module_param(fault_rekey_flush, uint, 0644);
MODULE_PARM_DESC(fault_rekey_flush,
		 "Test only: rekeys whose REG_MRs and REKEY are lost with their connection (counts down)");

/* Move @mv's bytes again from the first: its WRs went with the old QP. */
static void rmsg_move_rewind(struct rmsg_rndv_move *mv)
{
	mv->sg = mv->mapped ? mv->sgt.sgl : NULL;
	mv->sg_off = 0;
	mv->pos = 0;
	mv->ops = 0;
	atomic_set(&mv->ops_done, 0);
}

/*
 * Destroy @s's registrations, which are past use but whose LOCAL_INVs a
 * broken connection may or may not have run: a flushed completion does
 * not say a WR did not run. The segments are then as good as invalidated.
 */
static void rmsg_segs_drop(struct rmsg_channel *ch, struct rmsg_rndv_segs *s)
{
	u32 i;

	for (i = 0; s->mrs && i < s->nseg; i++) {
		if (s->mrs[i])
			rmsg_mr_destroy(ch, s->mrs[i]);
		s->mrs[i] = NULL;
	}
	s->reg_posted = s->nseg;
	s->inv_posted = s->nseg;
	atomic_set(&s->inv_done, 1);
}

/*
 * Map and register @t afresh, with new keys, none posted yet: for a send
 * whose REG_MRs may or may not have run, and whose RTS the peer does not
 * have, so nothing the peer holds names the old keys. @written: the RTS
 * was written before, so it keeps its cookie.
 */
static int rmsg_rndv_tx_remap(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
			      bool written)
{
	int ret;

	rmsg_rndv_tx_unmap(ch, t, true);
	rmsg_segs_free(&t->segs);
	memset(&t->segs, 0, sizeof(t->segs));
	memset(&t->mv, 0, sizeof(t->mv));
	ret = rmsg_rndv_tx_map(ch, t);
	if (ret || !written)
		return ret;
	t->segs.rts->cookie = cpu_to_le32(t->cookie);
	ib_dma_sync_single_for_device(ch->dev.rdev->ibdev, t->segs.rts_dma,
				      rmsg_rts_size(t->segs.nseg),
				      DMA_TO_DEVICE);
	return 0;
}

/**
 * rmsg_rndv_tx_rewind() - a send not yet written, after a repair
 * @ch: the channel, suspended; the caller holds ep->lock
 * @t: the transfer, in the pending ring
 *
 * Return: 0, or the errno of mapping it again.
 */
int rmsg_rndv_tx_rewind(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	/* Off any device, it has nothing there; the move maps it anew. */
	if (!rmsg_rndv_on_device(ch))
		return 0;
	return t->segs.reg_posted ? rmsg_rndv_tx_remap(ch, t, false) : 0;
}

/**
 * rmsg_rndv_suspend() - rendezvous between two connections
 * @ch: the channel, being repaired: its broken QP is drained and gone;
 *	the caller holds ep->lock and has walked the receive block
 *
 * What the old connection moved is forgotten, and each side does again
 * what the peer may lack (Documentation/resilience.rst, "Rendezvous"): a
 * receiver reads (RGet) from the first byte again; an RPut receiver that
 * had no DONE registers its destination afresh and sends a new CTS, and
 * its sender forgets the old CTS and waits; FINs whose sends did not
 * complete go again; and sends whose RTS the peer lacks are registered
 * afresh once its resume point is known (rmsg_rndv_resume()). A key the
 * peer holds from a record stays valid: its REG_MR ran before the record
 * naming it was written. A key it may hold from the rekey area is only
 * known to be valid once a REKEY naming it left: until then the REG_MR
 * may have been flushed with the connection, and a peer that reads with
 * the key would break every connection after it. Those transfers are
 * registered afresh again (@rekey_again), and the hellos say so.
 */
void rmsg_rndv_suspend(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	struct rmsg_rndv_rx *x;
	u64 fin;
	u32 i;

	if (r->rekey_bytes && (s32)(r->tx_oldest - r->rekey_end) < 0 &&
	    !READ_ONCE(r->rekey_sure)) {
		r->rekey_again = true;
		r->rekey_hello = true;
	}
	r->rd_posted = 0;
	r->rd_done = 0;
	/* A REKEY names an area of its connection: the next one sends its own. */
	atomic64_set(&r->rekey_in, 0);
	if (r->rekey_mv) {
		rmsg_move_unmap(ch, r->rekey_mv);
		memset(r->rekey_mv, 0, sizeof(*r->rekey_mv));
	}
	for (i = 0; i < RMSG_RNDV_WINDOW; i++) {
		/*
		 * A FIN an earlier repair left to send again stays owed, unless
		 * a newer one went from the same buffer since.
		 */
		fin = atomic64_xchg(&r->fin_sent[i], 0);
		if (fin)
			r->fin_resend[i] = fin;
		t = r->tx[i];
		if (t && t->fin) {
			if (t->segs.inv_posted &&
			    !atomic_read(&t->segs.inv_done))
				rmsg_segs_drop(ch, &t->segs);
			/* No WRITE of ours runs any more. */
			atomic_set(&t->mv.ops_done, t->mv.ops);
		} else if (t && t->put) {
			t->have_cts = false;
			t->done_sent = false;
			atomic64_set(&r->cts[i], 0);
			rmsg_move_rewind(&t->mv);
		}

		x = r->rx[i];
		if (!x || !x->answered || x->done || !x->started || x->status)
			continue;
		if (!(x->info.flags & RMSG_RTS_F_PUT)) {
			if (!rmsg_move_done(&x->mv, x->info.len))
				rmsg_move_rewind(&x->mv);
		} else if (!x->put_done && !atomic64_read(&r->done[i])) {
			/* Off any device it was unmapped when the channel left. */
			if (rmsg_rndv_on_device(ch))
				rmsg_segs_unmap(ch, &x->segs, true);
			rmsg_segs_free(&x->segs);
			memset(&x->segs, 0, sizeof(x->segs));
			x->started = false;
			x->cts_written = false;
			x->cts_sent = false;
		} else if (x->segs.inv_posted &&
			   !atomic_read(&x->segs.inv_done)) {
			rmsg_segs_drop(ch, &x->segs);
		}
	}
}

/* Add @t's RTS, with its new keys, to the rekey area. */
static int rmsg_rekey_add(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct rmsg_rndv *r = &ch->rndv;
	u32 size = rmsg_rts_size(t->segs.nseg);

	if (r->rekey_bytes + ALIGN(size, RMSG_REKEY_ALIGN) > RMSG_REKEY_AREA)
		return -ENOSPC;
	if (!r->rekey_buf)
		r->rekey_buf = (void *)get_zeroed_page(RMSG_GFP_CHARGED);
	if (!r->rekey_buf)
		return -ENOMEM;
	memcpy(r->rekey_buf + r->rekey_bytes, t->segs.rts, size);
	r->rekey_bytes += ALIGN(size, RMSG_REKEY_ALIGN);
	return 0;
}

/* Drop the rekey area's registration; @r->rekey_bytes says what is kept. */
static void rmsg_rekey_unmap(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;

	if (!r->rekey)
		return;
	rmsg_segs_unmap(ch, r->rekey, true);
	rmsg_segs_free(r->rekey);
	memset(r->rekey, 0, sizeof(*r->rekey));
}

/*
 * Register the rekey area for the peer's READ, with a new key each
 * connection: a REG_MR that a broken connection flushed may or may not
 * have run (as for the transfers).
 */
static int rmsg_rekey_map(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;

	rmsg_rekey_unmap(ch);
	if (!r->rekey)
		r->rekey = kzalloc(sizeof(*r->rekey), RMSG_GFP_CHARGED);
	if (!r->rekey)
		return -ENOMEM;
	r->rekey->dir = DMA_TO_DEVICE;
	r->rekey->access = IB_ACCESS_REMOTE_READ;
	return rmsg_segs_map(ch, r->rekey, NULL, r->rekey_buf, 0, 0,
			     RMSG_REKEY_AREA, RMSG_RTS_MIN_SHIFT);
}

/* The channel left the device under @x: its destination is mapped anew. */
static void rmsg_rndv_rx_moved(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	if (!x->answered || !x->started || x->done || x->status)
		return;
	if (!(x->info.flags & RMSG_RTS_F_PUT)) {
		if (!rmsg_move_done(&x->mv, x->info.len)) {
			memset(&x->mv, 0, sizeof(x->mv));
			x->started = false;
		}
	} else if (x->put_done ||
		   atomic64_read(&ch->rndv.done[x->cookie & RMSG_RNDV_MASK])) {
		/* The bytes are in; the registrations went with the device. */
		rmsg_segs_drop(ch, &x->segs);
	}
	/* An RPut without DONE starts again anyway (rmsg_rndv_suspend()). */
}

/**
 * rmsg_rndv_resume() - register afresh what the peer lacks or cannot use
 * @ch: the channel, suspended; the caller holds ep->lock
 * @arrived: the peer's resume point, checked against what was written
 * @shadow: the shadow of the peer's block, from which the RTS records go
 *	again: they get the new keys; NULL on a leased channel that never
 *	wrote (it has no RTS the peer lacks)
 *
 * Sends whose RTS the peer lacks are registered afresh. When the channel
 * came to another device, every registration went with the old one: all
 * transfers under way are registered afresh, those whose RTS the peer has
 * go into the rekey area, and the peer's transfers map their destinations
 * again. So too, without the move, when the last rekey's keys are not
 * known to be registered (@rekey_again, rmsg_rndv_suspend()). The new
 * REG_MRs, and the REKEY after them, go before anything is written again
 * (rmsg_rndv_rereg()).
 *
 * Return: 0, or the errno of mapping a transfer again (-ENOSPC: the rekey
 * area cannot hold the records, -EPROTO: a record the peer lacks would
 * change size on the new device).
 */
int rmsg_rndv_resume(struct rmsg_channel *ch, u32 arrived, void *shadow)
{
	struct rmsg_rndv *r = &ch->rndv;
	bool moved = r->moved;
	bool rekey = moved || r->rekey_again;
	struct rmsg_rndv_tx *t;
	bool peer_has;
	u32 c, i, nseg;
	int ret;

	if (rekey) {
		r->rekey_bytes = 0;
		r->rekey_end = r->tx_next;
		r->rekey_sure = false;
		r->rekey_again = false;
	}
	for (c = r->tx_oldest; c != r->tx_next; c++) {
		t = r->tx[c & RMSG_RNDV_MASK];
		if (!t)
			continue;
		if (t->fin) {
			/* Gone with the device: as good as invalidated. */
			if (moved)
				rmsg_segs_drop(ch, &t->segs);
			continue;
		}
		peer_has = (s32)(arrived - t->rts_end) >= 0;
		if (peer_has && !rekey)
			continue;
		nseg = t->segs.nseg;
		ret = rmsg_rndv_tx_remap(ch, t, true);
		if (!ret && peer_has)
			ret = rmsg_rekey_add(ch, t);
		if (ret)
			return ret;
		if (peer_has)
			continue;
		/* The record keeps its place and size in the stream. */
		if (t->segs.nseg != nseg || WARN_ON_ONCE(!shadow))
			return -EPROTO;
		memcpy(shadow + t->rts_off, t->segs.rts,
		       rmsg_rts_size(t->segs.nseg));
	}
	if (moved) {
		for (i = 0; i < RMSG_RNDV_WINDOW; i++)
			if (r->rx[i])
				rmsg_rndv_rx_moved(ch, r->rx[i]);
		r->moved = false;
	}
	/* Until its transfers are over, each connection gets the area. */
	r->rekey_due = r->rekey_bytes &&
		       (s32)(r->tx_oldest - r->rekey_end) < 0;
	if (r->rekey_due) {
		ret = rmsg_rekey_map(ch);
		if (ret)
			return ret;
	}
	r->rereg_due = true;
	return 0;
}

/**
 * rmsg_rndv_moved_send() - a send not yet written, after a move
 * @ch: the channel, suspended, on its new device; the caller holds ep->lock
 * @t: the transfer, in the pending ring
 *
 * Before rmsg_rndv_resume(): its registrations went with the old device.
 *
 * Return: 0, or the errno of mapping it again.
 */
int rmsg_rndv_moved_send(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	return ch->rndv.moved ? rmsg_rndv_tx_remap(ch, t, false) : 0;
}

/**
 * rmsg_rndv_tx_len() - the length of @t's RTS record
 * @t: a send
 *
 * Return: its length in bytes, which a move to another device may change.
 */
u32 rmsg_rndv_tx_len(const struct rmsg_rndv_tx *t)
{
	return rmsg_rts_size(t->segs.nseg);
}

/**
 * rmsg_rndv_peer_moved() - the peer left its device
 * @ch: the channel, suspended; the caller holds ep->lock
 *
 * The keys in every RTS collected so far are dead: those transfers wait,
 * moving nothing, until the peer's REKEY names new ones.
 */
void rmsg_rndv_peer_moved(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	u32 c;

	for (c = r->rx_oldest; c != r->rx_next; c++) {
		x = r->rx[c & RMSG_RNDV_MASK];
		if (x && x->have_rts && !x->done && !x->stale) {
			x->stale = true;
			r->stale++;
		}
	}
}

/**
 * rmsg_rndv_rereg() - post the REG_MRs a repair left to post
 * @ch: the channel, open again
 *
 * Before the records the peer lacks are written again: some are RTS
 * records naming these registrations. After a move, the rekey area's
 * REG_MR and the REKEY that names it follow.
 *
 * Return: 0 when none is left, -EAGAIN without send-queue room, or the
 * QP's error.
 */
int rmsg_rndv_rereg(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	u32 c, n;
	int ret;

	n = READ_ONCE(fault_rekey_flush);
	if (r->rekey_due && n && cmpxchg(&fault_rekey_flush, n, n - 1) == n) {
		for (c = r->tx_oldest; c != r->tx_next; c++) {
			t = r->tx[c & RMSG_RNDV_MASK];
			if (t && !t->fin)
				t->segs.reg_posted = t->segs.nseg;
		}
		r->rekey->reg_posted = r->rekey->nseg;
		r->rekey_due = false;
		r->rereg_due = false;
		return -ECONNRESET;
	}
	for (c = r->tx_oldest; c != r->tx_next; c++) {
		t = r->tx[c & RMSG_RNDV_MASK];
		if (!t || t->fin)
			continue;
		ret = rmsg_segs_post(ch, &t->segs, false);
		if (ret)
			return ret;
	}
	if (r->rekey_due) {
		/* On the same queue after the REG_MRs: they ran before. */
		ret = rmsg_segs_post(ch, r->rekey, false);
		if (!ret)
			ret = rmsg_rndv_ctrl(ch, RMSG_CTRL_REKEY_BUF,
					     RMSG_CTRL_REKEY,
					     RMSG_REKEY_ARG(r->rekey->mrs[0]->rkey,
							    ch->resil.epoch,
							    r->rekey_bytes));
		if (ret)
			return ret;
		r->rekey_due = false;
		rmsg_ep_count(ch->ep, RMSG_STAT_REKEYS_OUT);
	}
	r->rereg_due = false;
	return 0;
}

/* Whether rmsg_rndv_rereg() has work left since the last resume. */
bool rmsg_rndv_rereg_due(struct rmsg_channel *ch)
{
	return ch->rndv.rereg_due;
}

/* No transfer of ours awaits its FIN: an orderly close may go on. */
bool rmsg_rndv_idle(struct rmsg_channel *ch)
{
	return READ_ONCE(ch->rndv.tx_oldest) == READ_ONCE(ch->rndv.tx_next);
}

/**
 * rmsg_rndv_init() - set up a channel's rendezvous state
 * @ch: the channel, attached to its device
 * @rd_depth: READs the connection allows in flight
 */
void rmsg_rndv_init(struct rmsg_channel *ch, u32 rd_depth)
{
	ch->rndv.seg_shift = rmsg_rndv_seg_shift(ch->dev.rdev->ibdev);
	ch->rndv.rd_depth = max_t(u32, rd_depth, 1);
}

/**
 * rmsg_rndv_release() - drop the device resources of every transfer
 * @ch: the channel; its QP is drained, so no WR runs any more; the caller
 *	holds ep->lock, and has released the sends in the pending ring
 *	under the same hold
 *
 * Registrations that may be valid are destroyed, not pooled: another QP
 * of the protection domain could still use their keys. The pool goes too:
 * the channel may be leaving the device (a repair after its removal).
 * Until it is on a device again, nothing maps or registers on this one
 * (rmsg_rndv_on_device()): the device's removal waits for the channel to
 * leave it, and must find none of its registrations left.
 */
void rmsg_rndv_release(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	u32 i;

	lockdep_assert_held(&ch->ep->lock);
	for (i = 0; i < RMSG_RNDV_WINDOW; i++) {
		if (r->tx[i])
			rmsg_rndv_tx_unmap(ch, r->tx[i], true);
		x = r->rx[i];
		if (x) {
			rmsg_move_unmap(ch, &x->mv);
			rmsg_segs_unmap(ch, &x->segs, true);
		}
	}
	rmsg_rekey_unmap(ch);
	if (r->rekey_mv) {
		rmsg_move_unmap(ch, r->rekey_mv);
		memset(r->rekey_mv, 0, sizeof(*r->rekey_mv));
	}
	while (r->mr_nfree)
		rmsg_mr_destroy(ch, r->mr_free[--r->mr_nfree]);
	WARN_ON_ONCE(r->mr_total);
	r->released = true;
	/* Should the channel come to a device again, the peer must know. */
	r->moved = true;
	r->rekey_hello = true;
}

/**
 * rmsg_rndv_finish() - post the CQE of every transfer still owed one
 * @ch: the channel, released
 * @error: what they say
 */
void rmsg_rndv_finish(struct rmsg_channel *ch, int error)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	struct rmsg_rndv_rx *x;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
		.res		= error,
	};
	u32 c;

	for (c = r->tx_oldest; c != r->tx_next; c++) {
		t = r->tx[c & RMSG_RNDV_MASK];
		if (!t)
			continue;
		cqe.user_data = t->user_data;
		cqe.len = t->len;
		cqe.aux = t->addr;
		r->tx[c & RMSG_RNDV_MASK] = NULL;
		/* Unmapped and unpinned first: the program may DEREG at once. */
		rmsg_rndv_tx_free(ch, t);
		rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
	}
	for (c = r->rx_oldest; c != r->rx_oldest + RMSG_RNDV_WINDOW; c++) {
		x = r->rx[c & RMSG_RNDV_MASK];
		if (!x)
			continue;
		if (x->answered && !x->done) {
			x->status = error;
			rmsg_rndv_rx_end(ch, x);
		} else if (x->region) {
			rmsg_region_put(x->region);
		}
		r->rx[c & RMSG_RNDV_MASK] = NULL;
		rmsg_rndv_rx_free(x);
	}
	kvfree(r->mr_free);
	r->mr_free = NULL;
	if (r->rekey)
		rmsg_segs_free(r->rekey);
	kfree(r->rekey);
	r->rekey = NULL;
	kfree(r->rekey_mv);
	r->rekey_mv = NULL;
	free_page((unsigned long)r->rekey_buf);
	r->rekey_buf = NULL;
	free_page((unsigned long)r->rekey_page);
	r->rekey_page = NULL;
	if (r->block_va)
		vunmap(r->block_va);
	r->block_va = NULL;
}

/* A transfer still in the pending ring loses its device resources. */
void rmsg_rndv_tx_release(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	rmsg_rndv_tx_unmap(ch, t, rmsg_segs_valid(&t->segs));
}

/* What a SEND_RNDV's CQE says of its bytes. */
void rmsg_rndv_tx_cqe(const struct rmsg_rndv_tx *t, struct rmsg_cqe *cqe)
{
	cqe->len = t->len;
	cqe->aux = t->addr;
}
