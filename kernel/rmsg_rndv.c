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

static unsigned int rndv_mrs_max = 1024;
module_param(rndv_mrs_max, uint, 0444);
MODULE_PARM_DESC(rndv_mrs_max,
		 "Memory registrations a channel may hold for rendezvous sends");

#define RMSG_RNDV_MASK		(RMSG_RNDV_WINDOW - 1)
static_assert(!(RMSG_RNDV_WINDOW & RMSG_RNDV_MASK));
/* Bytes one READ moves at most, so that a transfer shares the wire. */
#define RMSG_RNDV_READ_MAX	(1U << 20)
/* Registrations hold at most this many pages: 2 MiB with 4 KiB pages. */
#define RMSG_RNDV_MR_PAGES	512

/* An RPut's CTS mailbox: a CTS of 2040 keys, 4 GiB at 2 MiB a segment. */
#define RMSG_RNDV_MBOX_SHIFT	13
#define RMSG_RNDV_MBOX		(1U << RMSG_RNDV_MBOX_SHIFT)
static_assert(RMSG_RNDV_MBOX_SHIFT <= RMSG_RTS_MBOX_MAX_SHIFT);

/**
 * struct rmsg_rndv_segs - memory registered for the peer, in segments
 * @nseg: segments, one registration each
 * @dir: what the device does with the pages
 * @access: what the peer may do with them
 * @sgt: the pages of each segment, mapped for the device
 * @mrs: the registration of each segment
 * @reg_posted: REG_MRs posted
 * @inv_posted: LOCAL_INVs posted
 * @inv_done: the last LOCAL_INV completed (softirq)
 * @rts: the record that names them for the peer (an RTS or a CTS),
 *	rmsg_rts_size(@nseg) bytes, mapped at @rts_dma
 * @rts_dma: its bus address
 */
struct rmsg_rndv_segs {
	u32 nseg;
	enum dma_data_direction dir;
	int access;
	struct sg_table *sgt;
	struct ib_mr **mrs;
	u32 reg_posted;
	u32 inv_posted;
	atomic_t inv_done;
	struct rmsg_rts *rts;
	u64 rts_dma;
};

/**
 * struct rmsg_rndv_move - bytes this side moves itself, by RDMA READ into
 *	them (RGet) or RDMA WRITE from them (RPut)
 * @sgt: the local bytes, addressed with the local DMA key
 * @dir: how they are mapped
 * @mapped: @sgt is mapped
 * @sg: the next scatter entry to move, @sg_off bytes into it
 * @sg_off: see @sg
 * @pos: bytes of the message WRs were posted for
 * @ops: WRs posted
 * @ops_done: WRs completed (softirq)
 */
struct rmsg_rndv_move {
	struct sg_table sgt;
	enum dma_data_direction dir;
	bool mapped;
	struct scatterlist *sg;
	u32 sg_off;
	u64 pos;
	u32 ops;
	atomic_t ops_done;
};

/**
 * struct rmsg_rndv_tx - a SEND_RNDV
 * @user_data: the SQE's
 * @addr: first byte, a program address
 * @len: bytes
 * @region: the region, busy until the transfer is over
 * @cookie: assigned when the RTS is written
 * @put: RPut
 * @segs: RGet: the message, registered for remote reading; RPut: the
 *	mailbox, registered for remote writing. @segs.rts is the RTS.
 * @mbox: RPut: the mailbox, RMSG_RNDV_MBOX bytes
 * @mv: RPut: the message, written to the peer
 * @cts: RPut: the decoded CTS; @cts.rkey points into @mbox
 * @have_cts: RPut: @cts is valid
 * @done_sent: RPut: every WRITE and the DONE after them are posted
 * @done_ever: RPut: a DONE was posted on some connection, so a FIN may
 *	report success (a repair clears @done_sent, not this)
 * @fin: the FIN came: its errno (0 for success) is in @status
 * @status: what the CQE will say
 * @rts_off: block offset of the RTS record's payload, once written
 * @rts_end: the stream's byte counter just past that record: the peer
 *	has the RTS when its resume point is there or beyond
 */
struct rmsg_rndv_tx {
	u64 user_data;
	u64 addr;
	u32 len;
	struct rmsg_region *region;
	u32 cookie;
	bool put;
	struct rmsg_rndv_segs segs;
	void *mbox;
	struct rmsg_rndv_move mv;
	struct rmsg_rts_info cts;
	bool have_cts;
	bool done_sent;
	bool done_ever;
	bool fin;
	int status;
	u32 rts_off;
	u32 rts_end;
};

/**
 * struct rmsg_rndv_rx - a transfer from the peer
 * @cookie: its cookie
 * @have_rts: the RTS was collected: @info and @rts hold it
 * @answered: the program answered: the fields below hold the answer
 * @info: the decoded RTS; @info.rkey points into @rts
 * @rts: the copy of the record's payload
 * @user_data: the RECV_RNDV's
 * @region: the destination's region, busy until the transfer is over
 * @addr: the destination
 * @room: bytes there
 * @discard: the program does not want the message
 * @started: the destination is mapped (@mv or @segs)
 * @mv: RGet: the destination, read into
 * @segs: RPut: the destination, registered for remote writing; @segs.rts
 *	is the CTS
 * @cts_written: RPut: the CTS's WRITE into the mailbox is posted
 * @cts_sent: RPut: and the CTS message after it
 * @put_done: RPut: the peer's DONE came
 * @status: the outcome, once known
 * @done: the CQE was posted; a FIN is owed
 * @stale: the peer left its device: @info's keys are dead until its REKEY
 *	names new ones
 */
struct rmsg_rndv_rx {
	u32 cookie;
	bool have_rts;
	bool answered;
	struct rmsg_rts_info info;
	void *rts;
	u64 user_data;
	struct rmsg_region *region;
	u64 addr;
	u32 room;
	bool discard;
	bool started;
	struct rmsg_rndv_move mv;
	struct rmsg_rndv_segs segs;
	bool cts_written;
	bool cts_sent;
	bool put_done;
	int status;
	bool done;
	bool stale;
};

/* --- registrations ----------------------------------------------------- */

/* An invalid registration for one segment, from the pool or new. */
static struct ib_mr *rmsg_mr_get(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct ib_mr *mr;

	if (r->mr_nfree)
		return r->mr_free[--r->mr_nfree];
	if (r->mr_total >= READ_ONCE(rndv_mrs_max))
		return ERR_PTR(-ENOBUFS);
	if (!r->mr_free) {
		r->mr_free = kvcalloc(READ_ONCE(rndv_mrs_max),
				      sizeof(*r->mr_free), RMSG_GFP_CHARGED);
		if (!r->mr_free)
			return ERR_PTR(-ENOMEM);
	}
	mr = rmsg_alloc_mr(ch->pd, 1U << (r->seg_shift - PAGE_SHIFT));
	if (!IS_ERR(mr))
		r->mr_total++;
	return mr;
}

/* Back to the pool: @mr is invalid (LOCAL_INV completed, or never valid). */
static void rmsg_mr_put(struct rmsg_channel *ch, struct ib_mr *mr)
{
	struct rmsg_rndv *r = &ch->rndv;

	if (r->mr_free && r->mr_nfree < READ_ONCE(rndv_mrs_max) &&
	    r->mr_nfree < r->mr_total) {
		r->mr_free[r->mr_nfree++] = mr;
		return;
	}
	r->mr_total--;
	ib_dereg_mr(mr);
}

/* Gone for good, in whatever state: no QP can use its key any more. */
static void rmsg_mr_destroy(struct rmsg_channel *ch, struct ib_mr *mr)
{
	ch->rndv.mr_total--;
	ib_dereg_mr(mr);
}

/*
 * May transfers map, register and post on ch->rdev? Not between devices,
 * nor once rmsg_rndv_release() dropped what they held there: the device
 * may be on its way out, and the move maps them anew on the next one.
 * The caller holds ep->lock.
 */
static bool rmsg_rndv_on_device(const struct rmsg_channel *ch)
{
	return ch->rdev && !ch->rndv.released;
}

/* log2 of what one registration covers on @ibdev. */
static u32 rmsg_rndv_seg_shift(struct ib_device *ibdev)
{
	u32 pages = min_t(u32, ibdev->attrs.max_fast_reg_page_list_len,
			  RMSG_RNDV_MR_PAGES);

	return PAGE_SHIFT + (pages ? ilog2(pages) : 0);
}

/* --- registered segments and moved bytes --------------------------------- */

/* Undo rmsg_segs_map(); @valid: registrations may be valid. */
static void rmsg_segs_unmap(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
			    bool valid)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	u32 i;

	for (i = 0; s->mrs && i < s->nseg; i++) {
		if (!s->mrs[i])
			continue;
		if (valid)
			rmsg_mr_destroy(ch, s->mrs[i]);
		else
			rmsg_mr_put(ch, s->mrs[i]);
		s->mrs[i] = NULL;
	}
	for (i = 0; s->sgt && i < s->nseg; i++) {
		if (!s->sgt[i].sgl)
			continue;
		if (s->sgt[i].nents)
			ib_dma_unmap_sgtable_attrs(ibdev, &s->sgt[i], s->dir, 0);
		sg_free_table(&s->sgt[i]);
		s->sgt[i].sgl = NULL;
	}
	if (s->rts_dma)
		ib_dma_unmap_single(ibdev, s->rts_dma, rmsg_rts_size(s->nseg),
				    DMA_TO_DEVICE);
	s->rts_dma = 0;
}

/* Whether the registrations of @s may still be valid on the device. */
static bool rmsg_segs_valid(struct rmsg_rndv_segs *s)
{
	return s->reg_posted && !atomic_read(&s->inv_done);
}

static void rmsg_segs_free(struct rmsg_rndv_segs *s)
{
	kvfree(s->sgt);
	kvfree(s->mrs);
	kfree(s->rts);
	s->sgt = NULL;
	s->mrs = NULL;
	s->rts = NULL;
}

/**
 * rmsg_segs_map() - map bytes for the device and register them in segments
 * @ch: the channel
 * @s: zeroed, with @dir and @access set
 * @region: the bytes' region, with @iova a program address in it; or NULL
 *	for the kernel buffer @kbuf, page-aligned, one segment
 * @kbuf: see @region
 * @iova: the address the peer names the first byte by
 * @len: bytes
 * @shift: log2 of the segment size
 *
 * Each registration gets a fresh key, written into @s->rts, and is posted
 * later (rmsg_segs_post()). The caller writes @s->rts's header.
 *
 * Return: 0 or a negative errno; rmsg_segs_unmap() and rmsg_segs_free()
 * undo what was done either way.
 */
static int rmsg_segs_map(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
			 struct rmsg_region *region, void *kbuf, u64 iova,
			 u64 len, u32 shift)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	struct rmsg_span span;
	struct ib_mr *mr;
	u32 i;
	int n, ret;

	s->nseg = rmsg_rts_nseg(iova, len, shift);
	atomic_set(&s->inv_done, 0);
	s->sgt = kvcalloc(s->nseg, sizeof(*s->sgt), RMSG_GFP_CHARGED);
	s->mrs = kvcalloc(s->nseg, sizeof(*s->mrs), RMSG_GFP_CHARGED);
	s->rts = kzalloc(rmsg_rts_size(s->nseg), RMSG_GFP_CHARGED);
	if (!s->sgt || !s->mrs || !s->rts)
		return -ENOMEM;
	for (i = 0; i < s->nseg; i++) {
		span = rmsg_rts_seg(iova, len, shift, i);
		if (region) {
			ret = rmsg_region_sgt(region, span.addr, span.len,
					      &s->sgt[i],
					      ib_dma_max_seg_size(ibdev));
		} else {
			ret = sg_alloc_table(&s->sgt[i], 1, RMSG_GFP_CHARGED);
			if (!ret)
				sg_set_buf(s->sgt[i].sgl, kbuf, span.len);
		}
		if (ret)
			return ret;
		ret = ib_dma_map_sgtable_attrs(ibdev, &s->sgt[i], s->dir, 0);
		if (ret) {
			s->sgt[i].nents = 0;
			return ret;
		}
		mr = rmsg_mr_get(ch);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		s->mrs[i] = mr;
		n = ib_map_mr_sg(mr, s->sgt[i].sgl, s->sgt[i].nents, NULL,
				 PAGE_SIZE);
		if (n != s->sgt[i].nents)
			return n < 0 ? n : -EINVAL;
		/*
		 * The peer addresses the bytes by @iova's addresses; the
		 * offset in the page is the same, which is all the device
		 * takes from the mapping's own address.
		 */
		mr->iova = span.addr;
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		s->rts->rkey[i] = cpu_to_le32(mr->rkey);
	}
	s->rts_dma = ib_dma_map_single(ibdev, s->rts, rmsg_rts_size(s->nseg),
				       DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, s->rts_dma)) {
		s->rts_dma = 0;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Fences. rxe (as of 6.1) runs a REG_MR again when a retry rewinds its
 * send queue to an earlier WR still unacknowledged (a lost packet, an RNR
 * NAK): the registration is valid by then, the second run fails, and the
 * QP goes to the error state with no fault of ours. rxe runs a LOCAL_INV
 * only once every WR before it has completed, and nothing after a
 * registration can rewind to it: its completion comes before that of any
 * later WR. So on rxe each batch of REG_MRs follows a LOCAL_INV of the
 * device's fence_mr (never valid, so invalidating it is harmless), and no
 * other WR may be posted between the two: ch->post_lock.
 */
static int rmsg_segs_fence(struct rmsg_channel *ch)
{
	struct ib_send_wr wr = {
		.opcode			= IB_WR_LOCAL_INV,
		.ex.invalidate_rkey	= ch->fence_mr->rkey,
	};

	rmsg_wr_slot(ch, &wr, NULL, false);
	return ib_post_send(ch->qp, &wr, NULL);
}

/* Post what @s may still post of its REG_MRs (@inv: LOCAL_INVs), as room
 * allows. Return: 0 when all are posted, -EAGAIN, or the QP's error.
 */
static int rmsg_segs_post_unfenced(struct rmsg_channel *ch,
				   struct rmsg_rndv_segs *s, bool inv)
{
	u32 *posted = inv ? &s->inv_posted : &s->reg_posted;
	struct ib_reg_wr reg;
	struct ib_send_wr lwr;
	struct ib_send_wr *wr;
	bool last;
	int ret;

	while (*posted < s->nseg && rmsg_wr_room(ch, 1)) {
		last = *posted + 1 == s->nseg;
		if (inv) {
			memset(&lwr, 0, sizeof(lwr));
			lwr.opcode = IB_WR_LOCAL_INV;
			lwr.ex.invalidate_rkey = s->mrs[*posted]->rkey;
			wr = &lwr;
		} else {
			memset(&reg, 0, sizeof(reg));
			reg.wr.opcode = IB_WR_REG_MR;
			reg.mr = s->mrs[*posted];
			reg.key = reg.mr->rkey;
			reg.access = s->access;
			wr = &reg.wr;
		}
		/* The last invalidation ends the transfer: it is signalled. */
		rmsg_wr_slot(ch, wr, inv && last ? &s->inv_done : NULL,
			       false);
		ret = ib_post_send(ch->qp, wr, NULL);
		if (ret)
			return ret;
		(*posted)++;
	}
	return *posted == s->nseg ? 0 : -EAGAIN;
}

/* rmsg_segs_post_unfenced(), with a fence before REG_MRs where needed. */
static int rmsg_segs_post(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
			  bool inv)
{
	int ret;

	if (inv || !ch->fence_mr)
		return rmsg_segs_post_unfenced(ch, s, inv);
	if (s->reg_posted == s->nseg)
		return 0;
	if (!rmsg_wr_room(ch, 2))
		return -EAGAIN;
	spin_lock_bh(&ch->post_lock);
	ret = rmsg_segs_fence(ch);
	if (!ret)
		ret = rmsg_segs_post_unfenced(ch, s, false);
	spin_unlock_bh(&ch->post_lock);
	return ret;
}

/* Map @mv->sgt, filled, for the device; the move starts at its first byte. */
static int rmsg_move_map_sgt(struct rmsg_channel *ch,
			     struct rmsg_rndv_move *mv,
			     enum dma_data_direction dir)
{
	int ret;

	atomic_set(&mv->ops_done, 0);
	mv->pos = 0;
	mv->ops = 0;
	ret = ib_dma_map_sgtable_attrs(ch->rdev->ibdev, &mv->sgt, dir, 0);
	if (ret) {
		sg_free_table(&mv->sgt);
		return ret;
	}
	mv->dir = dir;
	mv->mapped = true;
	mv->sg = mv->sgt.sgl;
	mv->sg_off = 0;
	return 0;
}

/* Map the local bytes of a transfer for READs into them or WRITEs. */
static int rmsg_move_map(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
			 struct rmsg_region *region, u64 addr, u64 len,
			 enum dma_data_direction dir)
{
	int ret;

	ret = rmsg_region_sgt(region, addr, len, &mv->sgt,
			      ib_dma_max_seg_size(ch->rdev->ibdev));
	if (ret)
		return ret;
	return rmsg_move_map_sgt(ch, mv, dir);
}

/* Map @len bytes of kernel memory at @buf for READs into them. */
static int rmsg_move_map_kbuf(struct rmsg_channel *ch,
			      struct rmsg_rndv_move *mv, void *buf, u32 len)
{
	int ret;

	ret = sg_alloc_table(&mv->sgt, 1, RMSG_GFP_CHARGED);
	if (ret)
		return ret;
	sg_set_buf(mv->sgt.sgl, buf, len);
	return rmsg_move_map_sgt(ch, mv, DMA_FROM_DEVICE);
}

static void rmsg_move_unmap(struct rmsg_channel *ch, struct rmsg_rndv_move *mv)
{
	if (!mv->mapped)
		return;
	ib_dma_unmap_sgtable_attrs(ch->rdev->ibdev, &mv->sgt, mv->dir, 0);
	sg_free_table(&mv->sgt);
	mv->mapped = false;
}

/* Every WR of @mv posted and completed. */
static bool rmsg_move_done(struct rmsg_rndv_move *mv, u64 len)
{
	return mv->pos == len && atomic_read(&mv->ops_done) == mv->ops;
}

/**
 * rmsg_move() - post the READs or WRITEs a transfer may still post
 * @ch: the channel
 * @mv: the local bytes
 * @remote: the peer's segments (an RTS for READs, a CTS for WRITEs)
 * @read: READ from the peer, else WRITE to it
 *
 * A WR moves at most RMSG_RNDV_READ_MAX bytes and stays in one remote
 * segment; as many are posted as the send queue and, for READs, the
 * connection's READ depth allow.
 *
 * Return: 0, or the QP's error.
 */
static int rmsg_move(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
		     const struct rmsg_rts_info *remote, bool read)
{
	struct rmsg_rndv *r = &ch->rndv;
	u32 max_sge = min_t(u32, ch->max_sge, RMSG_DATA_SGE_MAX);
	struct ib_sge sge[RMSG_DATA_SGE_MAX];
	struct ib_rdma_wr wr;
	struct rmsg_span seg;
	u64 want, got;
	u32 i, n, nsge;
	int ret;

	if (read)
		max_sge = min_t(u32, max_sge,
				ch->rdev->ibdev->attrs.max_sge_rd);
	while (mv->pos < remote->len && rmsg_wr_room(ch, 1) &&
	       (!read || r->rd_posted - READ_ONCE(r->rd_done) < r->rd_depth)) {
		i = rmsg_rts_nseg(remote->addr, mv->pos + 1,
				  remote->seg_shift) - 1;
		seg = rmsg_rts_seg(remote->addr, remote->len,
				   remote->seg_shift, i);
		want = min_t(u64, seg.addr + seg.len -
			     (remote->addr + mv->pos), RMSG_RNDV_READ_MAX);
		for (nsge = 0, got = 0; nsge < max_sge && got < want; nsge++) {
			n = min_t(u64, sg_dma_len(mv->sg) - mv->sg_off,
				  want - got);
			sge[nsge].addr = sg_dma_address(mv->sg) + mv->sg_off;
			sge[nsge].length = n;
			sge[nsge].lkey = ch->pd->local_dma_lkey;
			got += n;
			mv->sg_off += n;
			if (mv->sg_off == sg_dma_len(mv->sg)) {
				mv->sg = sg_next(mv->sg);
				mv->sg_off = 0;
			}
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr.wr.sg_list = sge;
		wr.wr.num_sge = nsge;
		wr.remote_addr = remote->addr + mv->pos;
		wr.rkey = le32_to_cpu(remote->rkey[i]);
		rmsg_wr_slot(ch, &wr.wr, &mv->ops_done, read);
		ret = ib_post_send(ch->qp, &wr.wr, NULL);
		if (ret)
			return ret;
		mv->pos += got;
		mv->ops++;
		if (read)
			r->rd_posted++;
	}
	return 0;
}

/* Send control message @type for a transfer from buffer @buf, if free. */
static int rmsg_rndv_ctrl(struct rmsg_channel *ch, unsigned int buf, u8 type,
			  u64 arg)
{
	/* -EAGAIN: its send completing will requeue us. */
	return rmsg_ctrl_try_send(ch, buf, type, arg);
}

/* --- the sender --------------------------------------------------------- */

/* Undo what rmsg_rndv_tx_map() did; @valid: registrations may be valid. */
static void rmsg_rndv_tx_unmap(struct rmsg_channel *ch,
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
		free_pages((unsigned long)t->mbox, get_order(RMSG_RNDV_MBOX));
	kfree(t);
}

/*
 * Map and register (not yet post) what the peer needs: RGet, the message
 * for reading; RPut, a mailbox for its CTS, and the message for our own
 * WRITEs. Write the RTS but for its cookie.
 */
static int rmsg_rndv_tx_map(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct rmsg_rndv_segs *s = &t->segs;
	struct rmsg_rts_info info = {
		.len		= t->len,
	};
	int ret;

	if (!t->put) {
		s->dir = DMA_TO_DEVICE;
		s->access = IB_ACCESS_REMOTE_READ;
		info.addr = t->addr;
		info.seg_shift = ch->rndv.seg_shift;
		ret = rmsg_segs_map(ch, s, t->region, NULL, t->addr, t->len,
				    info.seg_shift);
	} else {
		/* Kept when a repair maps the transfer again. */
		if (!t->mbox)
			t->mbox = (void *)__get_free_pages(RMSG_GFP_CHARGED |
							   __GFP_ZERO,
							   get_order(RMSG_RNDV_MBOX));
		if (!t->mbox)
			return -ENOMEM;
		s->dir = DMA_FROM_DEVICE;
		s->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		info.addr = 0;
		info.seg_shift = RMSG_RNDV_MBOX_SHIFT;
		info.flags = RMSG_RTS_F_PUT;
		ret = rmsg_segs_map(ch, s, NULL, t->mbox, 0, RMSG_RNDV_MBOX,
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
	nseg = put ? 1 : rmsg_rts_nseg(sqe->addr, sqe->len,
				       ch->rndv.seg_shift);
	if (rmsg_rts_size(nseg) > ch->max_msg || nseg > rndv_mrs_max)
		return -EMSGSIZE;
	region = rmsg_region_get(ep, sqe->region, sqe->addr, sqe->len);
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
	ib_dma_sync_single_for_device(ch->rdev->ibdev, t->segs.rts_dma,
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

/* At module load: the control messages of rendezvous transfers. */
void __init rmsg_rndv_init_module(void)
{
	rmsg_ctrl_on_recv(RMSG_CTRL_FIN, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_CTS, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_DONE, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_REKEY, rmsg_rndv_ctrl_in, false);
	rmsg_ctrl_on_sent(RMSG_CTRL_FIN_BUF, RMSG_RNDV_WINDOW,
			  rmsg_rndv_fin_sent);
}

/* RPut: take the CTS the peer wrote into @t's mailbox. */
static int rmsg_rndv_cts_take(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	const struct rmsg_rts *cts = t->mbox;
	u32 nseg;

	/* The ib_dma_*() family has no sgtable sync; do what it would. */
	if (!ib_uses_virt_dma(ibdev))
		dma_sync_sgtable_for_cpu(ibdev->dma_device, &t->segs.sgt[0],
					 DMA_FROM_DEVICE);
	nseg = le32_to_cpu(READ_ONCE(cts->nseg));
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
		r->block_va = vmap(ch->block->pages, ch->block->npages, VM_MAP,
				   PAGE_KERNEL);
		if (!r->block_va)
			return -ENOMEM;
		rmsg_vb_rx_init(&r->krx, ch->block_size, 0, 0);
	}
	/* What the peer may have written is what it was allowed to. */
	r->krx.advertised = ch->credit;
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
		region = rmsg_region_get(ep, sqe->region, sqe->addr, sqe->len);
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
		.addr		= x->addr,
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
	cts.nseg = rmsg_rts_nseg(x->addr, x->info.len, shift);
	if (cts.nseg > rndv_mrs_max ||
	    rmsg_rts_size(cts.nseg) > 1ULL << x->info.seg_shift) {
		x->status = -ENOBUFS;
		return 0;
	}
	x->started = true;
	s->dir = DMA_FROM_DEVICE;
	s->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	ret = rmsg_segs_map(ch, s, x->region, NULL, x->addr, x->info.len,
			    shift);
	if (ret)
		return ret;
	rmsg_rts_encode(s->rts, &cts);
	ib_dma_sync_single_for_device(ch->rdev->ibdev, s->rts_dma,
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
		sge.lkey = ch->pd->local_dma_lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.remote_addr = x->info.addr;
		wr.rkey = le32_to_cpu(x->info.rkey[0]);
		rmsg_wr_slot(ch, &wr.wr, NULL, false);
		ret = ib_post_send(ch->qp, &wr.wr, NULL);
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
static void rmsg_rndv_rx_end(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
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

static void rmsg_rndv_rx_free(struct rmsg_rndv_rx *x)
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
	 * Between devices (ep->lock guards ch->rdev) nothing can move, and
	 * nothing is mapped to undo: the next device takes it up.
	 */
	if (!ch->rndv.seg_shift || !rmsg_rndv_on_device(ch))
		return;
	rmsg_rndv_tx_progress(ch);
	if (ch->tx_live)
		rmsg_rndv_rx_progress(ch);
}

/* --- repairs ------------------------------------------------------------ */

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
	ib_dma_sync_single_for_device(ch->rdev->ibdev, t->segs.rts_dma,
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
 * peer holds stays valid: its REG_MR ran before the record naming it was
 * written.
 */
void rmsg_rndv_suspend(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	struct rmsg_rndv_rx *x;
	u64 fin;
	u32 i;

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
	return rmsg_segs_map(ch, r->rekey, NULL, r->rekey_buf, 0,
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
 *	again: they get the new keys
 *
 * Sends whose RTS the peer lacks are registered afresh. When the channel
 * came to another device, every registration went with the old one: all
 * transfers under way are registered afresh, those whose RTS the peer has
 * go into the rekey area, and the peer's transfers map their destinations
 * again. The new REG_MRs, and the REKEY after them, go before anything is
 * written again (rmsg_rndv_rereg()).
 *
 * Return: 0, or the errno of mapping a transfer again (-ENOSPC: the rekey
 * area cannot hold the records, -EPROTO: a record the peer lacks would
 * change size on the new device).
 */
int rmsg_rndv_resume(struct rmsg_channel *ch, u32 arrived, void *shadow)
{
	struct rmsg_rndv *r = &ch->rndv;
	bool moved = r->moved;
	struct rmsg_rndv_tx *t;
	bool peer_has;
	u32 c, i, nseg;
	int ret;

	if (moved) {
		r->rekey_bytes = 0;
		r->rekey_end = r->tx_next;
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
		if (peer_has && !moved)
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
		if (t->segs.nseg != nseg)
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
	u32 c;
	int ret;

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
	ch->rndv.seg_shift = rmsg_rndv_seg_shift(ch->rdev->ibdev);
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
