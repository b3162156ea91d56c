// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: writing eager records into the peer's receive block, for the data
 * path (rmsg_data.c, which decides what to write and when). A record goes
 * as one RDMA WRITE of clear zone, payload and trailer, after a WRAP's
 * own small write when the block wraps (Documentation/veloblock.rst).
 *
 * rmsg_data_write() is the one writer of a pending send. A channel that
 * retains (the default) copies the record into its shadow, the copy of
 * what the peer's block should hold, and the device reads it from there,
 * so that after a repair rmsg_data_rewrite() can write again what the peer
 * lacks. Without retention (module parameter retain=0, a measurement mode)
 * the device reads the program's send area directly: a choice of byte
 * source inside the writer (rmsg_data_sges()), not a second path.
 * rmsg_data_flush_signal() signals what a batch left unsignalled.
 *
 * Everything here runs under ep->lock.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_rndv.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>

#include "rmsg.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"
#include "rmsg_data_write.h"

/* --- writing records ---------------------------------------------------- */

/* The trailer of data WR @wr, and where the device reads it. */
static struct rmsg_vb_trailer *rmsg_trailer(struct rmsg_channel *ch, u32 wr,
					    bool inl, struct ib_sge *sge)
{
	u32 i = wr % RMSG_TX_SLOTS;

	sge->addr = inl ? (u64)(uintptr_t)&ch->wrs.trailers[i] :
			  ch->dev.trailers_dma + i * sizeof(*ch->wrs.trailers);
	sge->length = RMSG_VB_TRAILER_SIZE;
	sge->lkey = ch->dev.pd->local_dma_lkey;
	return &ch->wrs.trailers[i];
}

static void rmsg_trailer_sync(struct rmsg_channel *ch, u32 wr)
{
	ib_dma_sync_single_for_device(ch->dev.rdev->ibdev,
				      ch->dev.trailers_dma +
					      wr % RMSG_TX_SLOTS *
						      sizeof(*ch->wrs.trailers),
				      sizeof(*ch->wrs.trailers), DMA_TO_DEVICE);
}

static void rmsg_zeros(struct rmsg_channel *ch, bool inl, u32 len,
		       struct ib_sge *sge)
{
	sge->addr = inl ? (u64)(uintptr_t)&ch->wrs.trailers[RMSG_ZEROS] :
			  ch->dev.trailers_dma +
				    RMSG_ZEROS * sizeof(*ch->wrs.trailers);
	sge->length = len;
	sge->lkey = ch->dev.pd->local_dma_lkey;
}

/* The first WR of a chain for the slot of data WR @wr. */
static void rmsg_data_wr(struct rmsg_channel *ch, struct ib_rdma_wr *wr,
			 u32 idx, u32 block_off, u32 flag_off, u8 flag)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_cqe = &ch->wrs.slots[idx % RMSG_TX_SLOTS].cqe;
	wr->remote_addr = ch->peer.block_addr + block_off;
	wr->rkey = ch->peer.block_rkey;
	if (ch->tx_imm) {
		wr->wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wr->wr.ex.imm_data = cpu_to_be32(flag_off << RMSG_IMM_OFF_SHIFT |
						 (flag == RMSG_VB_FLAG_ODD ?
						  RMSG_IMM_ODD : 0));
	} else {
		wr->wr.opcode = IB_WR_RDMA_WRITE;
	}
}

/* --- writing records from the shadow ------------------------------------ */

/* SGEs at @sge for the device to read shadow bytes [@off, @off + @len). */
static u32 rmsg_shadow_sges(struct rmsg_channel *ch, u32 off, u32 len,
			    bool inl, struct ib_sge *sge)
{
	struct rmsg_shadow *sh = ch->retain.shadow;
	u32 n, in, nsge = 0, chunk = 1U << sh->chunk_shift;

	if (inl) {
		sge->addr = (u64)(uintptr_t)sh->va + off;
		sge->length = len;
		sge->lkey = ch->dev.pd->local_dma_lkey;
		return 1;
	}
	/* At most three chunks (RMSG_AREA_CHUNK >= a record), and zeros. */
	for (; len; off += n, len -= n) {
		in = off & (chunk - 1);
		n = min_t(u32, len, chunk - in);
		sge[nsge].addr = sh->dma[off >> sh->chunk_shift] + in;
		sge[nsge].length = n;
		sge[nsge].lkey = ch->dev.pd->local_dma_lkey;
		ib_dma_sync_single_for_device(sh->ibdev, sge[nsge].addr, n,
					      DMA_TO_DEVICE);
		nsge++;
	}
	return nsge;
}

/* Copy @len bytes at send-area offset @off to @dst. */
static void rmsg_shadow_copy_area(struct rmsg_channel *ch, u8 *dst, u32 off,
				  u32 len)
{
	struct rmsg_pages *area = ch->ep->area;
	u32 n;

	for (; len; off += n, len -= n, dst += n) {
		n = min_t(u32, len, RMSG_AREA_CHUNK - off % RMSG_AREA_CHUNK);
		/* The chunk is contiguous in the direct map. */
		memcpy(dst, page_address(area->pages[off >> PAGE_SHIFT]) +
		       offset_in_page(off), n);
	}
}

/*
 * Where pending send @e's record goes, if it may be written now: its RTS
 * is ready (a rendezvous send), the peer left room and so does the send
 * queue. Returns 0, -EAGAIN (it stays pending) or another negative errno.
 */
static int rmsg_data_place(struct rmsg_channel *ch,
			   const struct rmsg_pending *e,
			   struct rmsg_vb_place *pl, enum rmsg_vb_type *type,
			   void **rts, u64 *rts_dma)
{
	u32 rts_len;
	int ret;

	*type = RMSG_VB_DATA;
	*rts = NULL;
	*rts_dma = 0;
	/* A rendezvous send writes its RTS, once its REG_MRs are posted. */
	if (e->rndv) {
		ret = rmsg_rndv_ready(ch, e->rndv, rts, rts_dma, &rts_len);
		if (ret)
			return ret;
		*type = RMSG_VB_RTS;
	}
	ret = rmsg_vb_tx_place(&ch->tx, e->len, pl);
	if (ret)
		return ret == -ENOSPC ? -EAGAIN : ret;
	/* WRs stay free for the summary hint after the burst. */
	return rmsg_wr_room(ch, (pl->wrap_skip ? 2 : 1) +
				(ch->tx_hint ? RMSG_HINT_WRS : 0)) ?
		       0 : -EAGAIN;
}

/* The WRs of pending send @e's record were posted: account for them. */
static void rmsg_data_posted(struct rmsg_channel *ch,
			     const struct rmsg_pending *e,
			     const struct rmsg_vb_place *pl, bool signal,
			     bool inl)
{
	rmsg_vb_tx_commit(&ch->tx, pl);
	ch->wrs.posted += pl->wrap_skip ? 2 : 1;
	if (e->rndv)
		rmsg_rndv_written(ch, e->rndv, pl->off + pl->payload);
	if (signal) {
		ch->wrs.signalled = ch->wrs.posted;
		rmsg_ep_count(ch->ep, RMSG_STAT_WRITES_SIGNALLED);
	}
	if (inl)
		rmsg_ep_count(ch->ep, RMSG_STAT_WRITES_INLINE);
	if (pl->wrap_skip)
		rmsg_ep_count(ch->ep, RMSG_STAT_WRAPS);
}

/*
 * A retaining channel's record goes into the shadow at its place in the
 * peer's block, trailers (and the WRAP's) included, before the device
 * reads it from there. The credit check let these bytes be overwritten:
 * the peer has released what the shadow held there.
 */
static void rmsg_data_keep(struct rmsg_channel *ch,
			   const struct rmsg_pending *e,
			   const struct rmsg_vb_place *pl,
			   enum rmsg_vb_type type, const void *rts)
{
	struct rmsg_shadow *sh = ch->retain.shadow;
	struct rmsg_vb_trailer t, wt;

	rmsg_vb_trailer_fill(&t, pl, type, 0, ch->flow.credit);
	if (pl->wrap_skip)
		rmsg_vb_trailer_fill(&wt, pl, RMSG_VB_WRAP, 0,
				     ch->flow.credit);
	rmsg_vb_shadow_put(sh->va, pl, &t, pl->wrap_skip ? &wt : NULL);
	if (rts)
		memcpy(sh->va + pl->off + pl->payload, rts, e->len);
	else
		rmsg_shadow_copy_area(ch, sh->va + pl->off + pl->payload,
				      e->off, e->len);
}

/*
 * The SGEs of the record's write, but for its clear zone: from the shadow
 * when the channel retains; else the RTS or the send area's bytes, the
 * padding's zeros and the trailer built in data WR @wr's slot. @bytes:
 * what the write carries past the clear zone (the arrival flag cut when
 * the peer wants immediates).
 */
static u32 rmsg_data_sges(struct rmsg_channel *ch,
			  const struct rmsg_pending *e,
			  const struct rmsg_vb_place *pl,
			  enum rmsg_vb_type type, void *rts, u64 rts_dma,
			  u32 wr, u32 bytes, bool inl, struct ib_sge *sge)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_pages *area = ch->ep->area;
	u32 off, rem, chunk, in, n, cut, nsge = 0;
	struct rmsg_vb_trailer *t;

	if (ch->retain.shadow)
		return rmsg_shadow_sges(ch, pl->off + pl->payload, bytes,
					inl, sge);
	if (rts) {
		sge[nsge].addr = inl ? (u64)(uintptr_t)rts : rts_dma;
		sge[nsge].length = e->len;
		sge[nsge].lkey = ch->dev.pd->local_dma_lkey;
		nsge++;
	}
	for (off = e->off, rem = rts ? 0 : e->len; rem; off += n, rem -= n) {
		chunk = off / RMSG_AREA_CHUNK;
		in = off % RMSG_AREA_CHUNK;
		n = min_t(u32, rem, RMSG_AREA_CHUNK - in);
		if (inl) {
			/* The chunk is contiguous in the direct map too. */
			sge[nsge].addr = (u64)(uintptr_t)
				page_address(area->pages[off >> PAGE_SHIFT]) +
				offset_in_page(off);
		} else {
			sge[nsge].addr = ch->dev.area_map->dma[chunk] + in;
			ib_dma_sync_single_for_device(ibdev, sge[nsge].addr, n,
						      DMA_TO_DEVICE);
		}
		sge[nsge].length = n;
		sge[nsge].lkey = ch->dev.pd->local_dma_lkey;
		nsge++;
	}
	if (pl->trailer > pl->payload + pl->plen)
		rmsg_zeros(ch, inl, pl->trailer - pl->payload - pl->plen,
			   &sge[nsge++]);
	t = rmsg_trailer(ch, wr, inl, &sge[nsge]);
	rmsg_vb_trailer_fill(t, pl, type, 0, ch->flow.credit);
	cut = pl->len - pl->payload - bytes;
	sge[nsge++].length -= cut;
	return nsge;
}

/**
 * rmsg_data_write() - write pending send @idx into the peer's block
 * @ch: the channel
 * @idx: the send's index in the pending ring
 * @more: another send of the channel follows at once
 * @cqe_now: the caller posts the CQE itself if the bytes are free when
 *	this returns, so no completion need be signalled for it
 *
 * One writer for both byte sources: a retaining channel's record goes
 * through the shadow (its bytes are free at once), another's is read by
 * the device from the send area (free once the write completes, at once
 * when it went inline).
 *
 * Return: 1 when the send's bytes are free now, 0 when the device reads
 * them later, -EAGAIN without credit or send-queue room (it stays
 * pending), another negative errno when the QP refused it.
 */
int rmsg_data_write(struct rmsg_channel *ch, u32 idx, bool more,
		    bool cqe_now)
{
	const struct rmsg_pending *e = &ch->pending.ring[idx & RMSG_PEND_MASK];
	struct ib_sge wrap_sge, sge[RMSG_DATA_SGE_MAX];
	bool keep = ch->retain.shadow, inl, wrap_inl, signal;
	struct ib_rdma_wr wrap_wr, data_wr;
	u32 need, bytes, cut, nsge = 0;
	struct rmsg_vb_trailer *t;
	enum rmsg_vb_type type;
	struct rmsg_vb_place pl;
	void *rts;
	u64 rts_dma;
	int ret;

	ret = rmsg_data_place(ch, e, &pl, &type, &rts, &rts_dma);
	if (ret)
		return ret;
	if (keep)
		rmsg_data_keep(ch, e, &pl, type, rts);
	/* An RTS's CQE waits for the FIN, not for this write. */
	if (rts)
		cqe_now = false;
	need = pl.wrap_skip ? 2 : 1;
	/* With immediates the flag stays out: the receiving kernel sets it. */
	cut = ch->tx_imm ? 1 : 0;

	wrap_inl = RMSG_VB_TRAILER_SIZE - cut <= ch->conn->max_inline;
	if (pl.wrap_skip) {
		rmsg_data_wr(ch, &wrap_wr, ch->wrs.posted, pl.wrap_off,
			     pl.wrap_off + RMSG_VB_TRAILER_SIZE - 1,
			     pl.wrap_flag);
		/*
		 * One SGE: a trailer, RMSG_VB_ALIGN-aligned and no larger,
		 * never spans two chunks of the shadow.
		 */
		if (keep) {
			wrap_wr.wr.num_sge =
				rmsg_shadow_sges(ch, pl.wrap_off,
						 RMSG_VB_TRAILER_SIZE - cut,
						 wrap_inl, &wrap_sge);
		} else {
			t = rmsg_trailer(ch, ch->wrs.posted, wrap_inl,
					 &wrap_sge);
			rmsg_vb_trailer_fill(t, &pl, RMSG_VB_WRAP, 0,
					     ch->flow.credit);
			wrap_sge.length -= cut;
			wrap_wr.wr.num_sge = 1;
		}
		wrap_wr.wr.sg_list = &wrap_sge;
		wrap_wr.wr.send_flags = wrap_inl ? IB_SEND_INLINE : 0;
		wrap_wr.wr.next = &data_wr.wr;
		rmsg_wr_slot_fill(ch, ch->wrs.posted, idx, NULL, false);
	}

	bytes = pl.len - cut;
	inl = bytes <= ch->conn->max_inline;
	rmsg_data_wr(ch, &data_wr, ch->wrs.posted + need - 1, pl.off,
		     pl.off + pl.len - 1, pl.flag);
	/*
	 * The clear zone from the zeros, not the shadow: the device may read
	 * the shadow after the next record's trailer went there.
	 */
	if (pl.payload)
		rmsg_zeros(ch, inl, pl.payload, &sge[nsge++]);
	nsge += rmsg_data_sges(ch, e, &pl, type, rts, rts_dma,
			       ch->wrs.posted + need - 1,
			       bytes - pl.payload, inl, &sge[nsge]);
	data_wr.wr.sg_list = sge;
	data_wr.wr.num_sge = nsge;
	data_wr.wr.send_flags = inl ? IB_SEND_INLINE : 0;

	/*
	 * Signal often enough to reclaim the send queue, and, for bytes the
	 * device still reads, when a CQE waits for this write and no later
	 * write of this burst will cover it.
	 */
	signal = ch->wrs.posted + need - ch->wrs.signalled >=
		 RMSG_SIGNAL_EVERY;
	if (!keep && !(inl && cqe_now)) {
		if (more)
			ch->wrs.sig_owed = true;
		else
			signal = true;
	}
	if (signal) {
		data_wr.wr.send_flags |= IB_SEND_SIGNALED;
		ch->wrs.sig_owed = false;
	}
	/*
	 * The send just submitted, its bytes free at once, is the caller's
	 * to complete (@cqe_now, and the last pending: rmsg_data_send()
	 * then posts its CQE): this write's completion leaves it out, and
	 * finds no CQE owed for the work to post. On rxe the completion
	 * may run before rmsg_post_send() returns, before the caller
	 * counts the send as completed.
	 */
	rmsg_wr_slot_fill(ch, ch->wrs.posted + need - 1,
			  (keep || inl) && cqe_now &&
				  idx + 1 == ch->pending.tail ? idx : idx + 1,
			  NULL, false);

	/* The device reads these trailers from memory, not from the WR. */
	if (!keep && pl.wrap_skip && !wrap_inl)
		rmsg_trailer_sync(ch, ch->wrs.posted);
	if (!keep && !inl)
		rmsg_trailer_sync(ch, ch->wrs.posted + need - 1);
	ret = rmsg_post_send(ch, pl.wrap_skip ? &wrap_wr.wr : &data_wr.wr);
	if (ret)
		return ret;
	rmsg_data_posted(ch, e, &pl, signal, inl);
	return keep ? 1 : inl;
}

/*
 * A zero-length signalled write, for when the write a CQE waits for was
 * left unsignalled because more were to follow, and none did.
 */
void rmsg_data_flush_signal(struct rmsg_channel *ch)
{
	struct ib_rdma_wr wr;

	if (!ch->wrs.sig_owed || !rmsg_wr_room(ch, 1))
		return;
	memset(&wr, 0, sizeof(wr));
	wr.wr.wr_cqe = &ch->wrs.slots[ch->wrs.posted % RMSG_TX_SLOTS].cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = ch->peer.block_addr;
	wr.rkey = ch->peer.block_rkey;
	rmsg_wr_slot_fill(ch, ch->wrs.posted, ch->pending.posted, NULL,
			  false);
	if (rmsg_post_send(ch, &wr.wr)) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	ch->wrs.posted++;
	ch->wrs.signalled = ch->wrs.posted;
	ch->wrs.sig_owed = false;
}

/* One inline (or DMA'd) byte of ones for rmsg_data_hint() to write. */
static void rmsg_hint_wr(struct rmsg_channel *ch, struct ib_rdma_wr *wr,
			 struct ib_sge *sge, u64 remote_addr)
{
	bool inl = ch->conn->max_inline;

	memset(wr, 0, sizeof(*wr));
	sge->addr = inl ? (u64)(uintptr_t)&ch->wrs.trailers[RMSG_ONES] :
			  ch->dev.trailers_dma +
				  RMSG_ONES * sizeof(*ch->wrs.trailers);
	sge->length = 1;
	sge->lkey = ch->dev.pd->local_dma_lkey;
	wr->wr.wr_cqe = &ch->wrs.slots[ch->wrs.posted % RMSG_TX_SLOTS].cqe;
	wr->wr.opcode = IB_WR_RDMA_WRITE;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->wr.send_flags = inl ? IB_SEND_INLINE : 0;
	wr->remote_addr = remote_addr;
	wr->rkey = ch->peer.block_rkey;
	rmsg_wr_slot_fill(ch, ch->wrs.posted, ch->pending.posted, NULL,
			  false);
	ch->wrs.posted++;
}

/**
 * rmsg_data_hint() - set the channel's bytes in the peer's arrival summary
 * @ch: the channel; records were just written to the peer's block
 *
 * Two bytes in the summary the peer's block MR maps at 0
 * (RMSG_HELLO_F_SUMMARY): the one of the peer's channel id, then the one
 * of its group, on the QP that wrote the records and after them, so that
 * the peer sees each byte only once it can see what the burst wrote. The
 * writers left the two WRs free (rmsg_data_place(), rmsg_data_rewrite()).
 * Bytes the peer never sees (the connection broke first) are written
 * again after the repair's rewrite.
 *
 * A leased block's MR exists only while we hold its lease, under the key
 * of this connection's GRANT: without that, no record of ours is there to
 * hint at (after a repair, the rewrite's hint of a channel that never
 * wrote), and a write would be a remote access error that breaks the
 * connection. Under ep->lock.
 */
void rmsg_data_hint(struct rmsg_channel *ch)
{
	struct ib_rdma_wr wr[RMSG_HINT_WRS];
	struct ib_sge sge[RMSG_HINT_WRS];

	if (!ch->tx_hint || !rmsg_lease_may_write(ch) ||
	    !rmsg_wr_room(ch, RMSG_HINT_WRS))
		return;
	rmsg_hint_wr(ch, &wr[0], &sge[0],
		     RMSG_SUMMARY_CHANNEL(ch->peer.channel));
	rmsg_hint_wr(ch, &wr[1], &sge[1],
		     RMSG_SUMMARY_GROUP(ch->peer.channel));
	wr[0].wr.next = &wr[1].wr;
	if (ch->wrs.posted - ch->wrs.signalled >= RMSG_SIGNAL_EVERY) {
		wr[1].wr.send_flags |= IB_SEND_SIGNALED;
		ch->wrs.signalled = ch->wrs.posted;
		rmsg_ep_count(ch->ep, RMSG_STAT_WRITES_SIGNALLED);
	}
	if (rmsg_post_send(ch, &wr[0].wr))
		rmsg_chan_kill_soft(ch, -ECONNRESET);
}

/*
 * After a repair: write again, record by record and before any new send,
 * what the peer's block lacks. Returns -EAGAIN while some remain (no
 * send-queue room yet), 0 when done, or a negative errno.
 */
int rmsg_data_rewrite(struct rmsg_channel *ch)
{
	struct ib_sge sge[RMSG_DATA_SGE_MAX];
	struct rmsg_vb_rewrite w;
	struct rmsg_vb_retx next;
	struct ib_rdma_wr wr;
	u32 bytes, nsge;
	bool inl, signal;
	int ret;

	while (ch->retain.retx_due) {
		if (!rmsg_wr_room(ch, 1 + (ch->tx_hint ? RMSG_HINT_WRS : 0)))
			return -EAGAIN;
		next = ch->retain.retx;
		ret = rmsg_vb_retx_next(&next, ch->retain.shadow->va, &w);
		if (ret < 0)
			pr_notice_ratelimited("channel %u: what the peer lacks cannot be written again (%d): at %u (seq %u, lap %u, pos %u), up to %u (seq %u)\n",
					      ch->id, ret, next.counter,
					      next.seq, next.lap, next.pos,
					      next.end, next.end_seq);
		if (ret <= 0) {
			ch->retain.retx_due = false;
			return ret;
		}
		/* With immediates the flag stays out, as the first time. */
		bytes = w.len - (ch->tx_imm ? 1 : 0);
		inl = bytes <= ch->conn->max_inline;
		rmsg_data_wr(ch, &wr, ch->wrs.posted, w.off, w.flag_off,
			     w.flag);
		nsge = 0;
		/* Zeros, not the shadow: it may hold the next trailer there. */
		if (w.clear)
			rmsg_zeros(ch, inl, w.clear, &sge[nsge++]);
		nsge += rmsg_shadow_sges(ch, w.off + w.clear, bytes - w.clear,
					 inl, &sge[nsge]);
		wr.wr.sg_list = sge;
		wr.wr.num_sge = nsge;
		wr.wr.send_flags = inl ? IB_SEND_INLINE : 0;
		/*
		 * Decided here, not read back from the WR after the post: on a
		 * link every WR goes signalled (rmsg_wr_post_link()), but only
		 * the slot's completion gives the queue back. Counting every
		 * rewritten record as signalled left the window to fill with
		 * WRs none of whose completions reclaimed it.
		 */
		signal = ch->wrs.posted + 1 - ch->wrs.signalled >=
			 RMSG_SIGNAL_EVERY;
		if (signal)
			wr.wr.send_flags |= IB_SEND_SIGNALED;
		rmsg_wr_slot_fill(ch, ch->wrs.posted,
				  ch->pending.posted, NULL, false);
		ret = rmsg_post_send(ch, &wr.wr);
		if (ret)
			return ret;
		ch->wrs.posted++;
		if (signal)
			ch->wrs.signalled = ch->wrs.posted;
		ch->retain.retx = next;
		if (w.type != RMSG_VB_WRAP)
			ch->resil.retx_msgs++;
		ch->resil.retx_bytes += w.bytes;
	}
	return 0;
}

/*
 * The end of what is to be written: sends taken once the channel began to
 * end are only completed with its error. Under ep->lock.
 */
