// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: rendezvous, the lowest of its three files (rmsg_rndv_types.h):
 * the channel's pool of fast registrations, memory registered for the
 * peer in segments (REG_MR, LOCAL_INV, the fences between them), and the
 * bytes a side moves itself by RDMA READ (RGet) or RDMA WRITE (RPut).
 * It posts through rmsg_wr.c and calls no other file of the channel.
 *
 * Everything here runs under ep->lock.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_devices.c, rmsg_region.c and
 * rmsg_wr.c.
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

unsigned int rmsg_rndv_mrs_max = 1024;
module_param_named(rndv_mrs_max, rmsg_rndv_mrs_max, uint, 0444);
MODULE_PARM_DESC(rndv_mrs_max,
		 "Memory registrations a channel may hold for rendezvous sends");

/* --- registrations ----------------------------------------------------- */

/* An invalid registration for one segment, from the pool or new. */
static struct ib_mr *rmsg_mr_get(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct ib_mr *mr;

	if (r->mr_nfree)
		return r->mr_free[--r->mr_nfree];
	if (r->mr_total >= READ_ONCE(rmsg_rndv_mrs_max))
		return ERR_PTR(-ENOBUFS);
	if (!r->mr_free) {
		r->mr_free = kvcalloc(READ_ONCE(rmsg_rndv_mrs_max),
				      sizeof(*r->mr_free), RMSG_GFP_CHARGED);
		if (!r->mr_free)
			return ERR_PTR(-ENOMEM);
	}
	mr = rmsg_alloc_mr(ch->dev.pd, 1U << (r->seg_shift - PAGE_SHIFT));
	if (!IS_ERR(mr))
		r->mr_total++;
	return mr;
}

/* Back to the pool: @mr is invalid (LOCAL_INV completed, or never valid). */
static void rmsg_mr_put(struct rmsg_channel *ch, struct ib_mr *mr)
{
	struct rmsg_rndv *r = &ch->rndv;

	if (r->mr_free && r->mr_nfree < READ_ONCE(rmsg_rndv_mrs_max) &&
	    r->mr_nfree < r->mr_total) {
		r->mr_free[r->mr_nfree++] = mr;
		return;
	}
	r->mr_total--;
	ib_dereg_mr(mr);
}

/* Gone for good, in whatever state: no QP can use its key any more. */
void rmsg_mr_destroy(struct rmsg_channel *ch, struct ib_mr *mr)
{
	ch->rndv.mr_total--;
	ib_dereg_mr(mr);
}

/*
 * May transfers map, register and post on ch->dev.rdev? Not between devices,
 * nor once rmsg_rndv_release() dropped what they held there: the device
 * may be on its way out, and the move maps them anew on the next one.
 * The caller holds ep->lock.
 */
bool rmsg_rndv_on_device(const struct rmsg_channel *ch)
{
	return ch->dev.rdev && !ch->rndv.released;
}

/* log2 of what one registration covers on @ibdev. */
u32 rmsg_rndv_seg_shift(struct ib_device *ibdev)
{
	u32 pages = min_t(u32, ibdev->attrs.max_fast_reg_page_list_len,
			  RMSG_RNDV_MR_PAGES);

	return PAGE_SHIFT + (pages ? ilog2(pages) : 0);
}

/* --- registered segments and moved bytes --------------------------------- */

/* Undo rmsg_segs_map(); @valid: registrations may be valid. */
void rmsg_segs_unmap(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		     bool valid)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
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
bool rmsg_segs_valid(struct rmsg_rndv_segs *s)
{
	return s->reg_posted && !atomic_read(&s->inv_done);
}

void rmsg_segs_free(struct rmsg_rndv_segs *s)
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
 * @region: the bytes' region, with @addr a program address in it; or
 *	NULL for the kernel buffer @kbuf, page-aligned, one segment
 * @kbuf: see @region
 * @addr: the first byte's program address in @region; 0 for @kbuf
 * @iova: the address the peer names the first byte by, in the same place
 *	of its page as @addr (rmsg_rndv_wire_addr()); segments are cut at
 *	multiples of 2^@shift of it
 * @len: bytes
 * @shift: log2 of the segment size
 *
 * Each registration gets a fresh key, written into @s->rts, and is posted
 * later (rmsg_segs_post()). The caller writes @s->rts's header.
 *
 * Return: 0 or a negative errno; rmsg_segs_unmap() and rmsg_segs_free()
 * undo what was done either way.
 */
int rmsg_segs_map(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		  struct rmsg_region *region, void *kbuf, u64 addr, u64 iova,
		  u64 len, u32 shift)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
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
			ret = rmsg_region_sgt(region,
					      addr + (span.addr - iova),
					      span.len,
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
		 * takes from the mapping's own address. Segment boundaries
		 * inside the span are page boundaries of both.
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
 * other WR may be posted between the two: ch->dev.post_lock, or on a link
 * the carrier's QP's (rmsg_wr_fence_lock()), which every post on it takes.
 */
static int rmsg_segs_fence(struct rmsg_channel *ch)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = ch->dev.fence_mr->rkey,
	};

	rmsg_wr_slot(ch, &wr, NULL, false);
	return rmsg_wr_post(ch, &wr);
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

	/*
	 * REG_MRs behind an rxe fence: nothing may come between, so the
	 * fence's lock is held, and rmsg_wr_room() takes the link's send
	 * queue room (its lock) inside it.
	 */
	if (!inv && ch->dev.fence_mr)
		lockdep_assert_held(rmsg_wr_fence_lock(ch));
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
		ret = rmsg_wr_post(ch, wr);
		if (ret)
			return ret;
		(*posted)++;
	}
	return *posted == s->nseg ? 0 : -EAGAIN;
}

/* rmsg_segs_post_unfenced(), with a fence before REG_MRs where needed. */
int rmsg_segs_post(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		   bool inv)
{
	int ret;

	if (inv || !ch->dev.fence_mr)
		return rmsg_segs_post_unfenced(ch, s, inv);
	if (s->reg_posted == s->nseg)
		return 0;
	if (!rmsg_wr_room(ch, 2))
		return -EAGAIN;
	spin_lock_bh(rmsg_wr_fence_lock(ch));
	ch->wrs.fencing = true;
	ret = rmsg_segs_fence(ch);
	if (!ret)
		ret = rmsg_segs_post_unfenced(ch, s, false);
	ch->wrs.fencing = false;
	spin_unlock_bh(rmsg_wr_fence_lock(ch));
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
	ret = ib_dma_map_sgtable_attrs(ch->dev.rdev->ibdev, &mv->sgt, dir, 0);
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
int rmsg_move_map(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
		  struct rmsg_region *region, u64 addr, u64 len,
		  enum dma_data_direction dir)
{
	int ret;

	ret = rmsg_region_sgt(region, addr, len, &mv->sgt,
			      ib_dma_max_seg_size(ch->dev.rdev->ibdev));
	if (ret)
		return ret;
	return rmsg_move_map_sgt(ch, mv, dir);
}

/* Map @len bytes of kernel memory at @buf for READs into them. */
int rmsg_move_map_kbuf(struct rmsg_channel *ch,
		       struct rmsg_rndv_move *mv, void *buf, u32 len)
{
	int ret;

	ret = sg_alloc_table(&mv->sgt, 1, RMSG_GFP_CHARGED);
	if (ret)
		return ret;
	sg_set_buf(mv->sgt.sgl, buf, len);
	return rmsg_move_map_sgt(ch, mv, DMA_FROM_DEVICE);
}

void rmsg_move_unmap(struct rmsg_channel *ch, struct rmsg_rndv_move *mv)
{
	if (!mv->mapped)
		return;
	ib_dma_unmap_sgtable_attrs(ch->dev.rdev->ibdev, &mv->sgt, mv->dir, 0);
	sg_free_table(&mv->sgt);
	mv->mapped = false;
}

/* Every WR of @mv posted and completed. */
bool rmsg_move_done(struct rmsg_rndv_move *mv, u64 len)
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
int rmsg_move(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
	      const struct rmsg_rts_info *remote, bool read)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct ib_sge sge[RMSG_RNDV_SGE_MAX];
	struct ib_rdma_wr wr;
	struct rmsg_span seg;
	u64 want, got;
	u32 i, n, nsge, max_sge;
	int ret;

	/* Nothing goes out between two connections, or on none. */
	if (!rmsg_wr_room(ch, 1))
		return 0;
	max_sge = min_t(u32, ch->conn->max_sge, RMSG_RNDV_SGE_MAX);
	if (read)
		max_sge = min_t(u32, max_sge,
				ch->dev.rdev->ibdev->attrs.max_sge_rd);
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
			sge[nsge].lkey = ch->dev.pd->local_dma_lkey;
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
		ret = rmsg_wr_post(ch, &wr.wr);
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
int rmsg_rndv_ctrl(struct rmsg_channel *ch, unsigned int buf, u8 type,
		   u64 arg)
{
	/* -EAGAIN: its send completing will requeue us. */
	return rmsg_ctrl_try_send(ch, buf, type, arg);
}
