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
#include "rmsg_channel.h"
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

/**
 * struct rmsg_rndv_tx - a SEND_RNDV
 * @user_data: the SQE's
 * @addr: first byte, a program address
 * @len: bytes
 * @region: the region, busy until the transfer is over
 * @cookie: assigned when the RTS is written
 * @nseg: segments (registrations)
 * @sgt: the pages of each segment, mapped for the device
 * @mrs: the registration of each segment
 * @reg_posted: REG_MRs posted
 * @inv_posted: LOCAL_INVs posted
 * @fin: the FIN came: its errno (0 for success) is in @status
 * @status: what the CQE will say
 * @inv_done: the last LOCAL_INV completed (softirq)
 * @rts: the RTS payload, rmsg_rts_size(@nseg) bytes, mapped at @rts_dma
 * @rts_dma: its bus address
 */
struct rmsg_rndv_tx {
	u64 user_data;
	u64 addr;
	u32 len;
	struct rmsg_region *region;
	u32 cookie;
	u32 nseg;
	struct sg_table *sgt;
	struct ib_mr **mrs;
	u32 reg_posted;
	u32 inv_posted;
	bool fin;
	int status;
	atomic_t inv_done;
	struct rmsg_rts *rts;
	u64 rts_dma;
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
 * @sgt: the destination's pages, mapped for the device
 * @mapped: @sgt is mapped
 * @sg: the next scatter entry to read into, @sg_off bytes into it
 * @sg_off: see @sg
 * @pos: bytes of the message READs were posted for
 * @reads: READs posted
 * @reads_done: READs completed (softirq)
 * @status: the outcome, once known
 * @done: the CQE was posted; a FIN is owed
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
	struct sg_table sgt;
	bool mapped;
	struct scatterlist *sg;
	u32 sg_off;
	u64 pos;
	u32 reads;
	atomic_t reads_done;
	int status;
	bool done;
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
				      sizeof(*r->mr_free), GFP_KERNEL_ACCOUNT);
		if (!r->mr_free)
			return ERR_PTR(-ENOMEM);
	}
	mr = ib_alloc_mr(ch->rdev->pd, IB_MR_TYPE_MEM_REG,
			 1U << (r->seg_shift - PAGE_SHIFT));
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

/* log2 of what one registration covers on @ibdev. */
static u32 rmsg_rndv_seg_shift(struct ib_device *ibdev)
{
	u32 pages = min_t(u32, ibdev->attrs.max_fast_reg_page_list_len,
			  RMSG_RNDV_MR_PAGES);

	return PAGE_SHIFT + (pages ? ilog2(pages) : 0);
}

/* --- the sender --------------------------------------------------------- */

/* Undo what rmsg_rndv_tx_map() did; @valid: registrations may be valid. */
static void rmsg_rndv_tx_unmap(struct rmsg_channel *ch,
			       struct rmsg_rndv_tx *t, bool valid)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	u32 i;

	for (i = 0; t->mrs && i < t->nseg; i++) {
		if (!t->mrs[i])
			continue;
		if (valid)
			rmsg_mr_destroy(ch, t->mrs[i]);
		else
			rmsg_mr_put(ch, t->mrs[i]);
		t->mrs[i] = NULL;
	}
	for (i = 0; t->sgt && i < t->nseg; i++) {
		if (!t->sgt[i].sgl)
			continue;
		if (t->sgt[i].nents)
			ib_dma_unmap_sgtable_attrs(ibdev, &t->sgt[i],
						   DMA_TO_DEVICE, 0);
		sg_free_table(&t->sgt[i]);
		t->sgt[i].sgl = NULL;
	}
	if (t->rts_dma)
		ib_dma_unmap_single(ibdev, t->rts_dma, rmsg_rts_size(t->nseg),
				    DMA_TO_DEVICE);
	t->rts_dma = 0;
}

void rmsg_rndv_tx_free(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	if (ch->rdev)
		rmsg_rndv_tx_unmap(ch, t, t->reg_posted > t->inv_posted);
	if (t->region)
		rmsg_region_put(t->region);
	kvfree(t->sgt);
	kvfree(t->mrs);
	kfree(t->rts);
	kfree(t);
}

/* Map the segments and register each (not yet posted). */
static int rmsg_rndv_tx_map(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	u32 shift = ch->rndv.seg_shift;
	struct rmsg_rts_info info = {
		.len		= t->len,
		.addr		= t->addr,
		.seg_shift	= shift,
	};
	struct rmsg_span s;
	struct ib_mr *mr;
	u32 i;
	int n, ret;

	t->sgt = kvcalloc(t->nseg, sizeof(*t->sgt), GFP_KERNEL_ACCOUNT);
	t->mrs = kvcalloc(t->nseg, sizeof(*t->mrs), GFP_KERNEL_ACCOUNT);
	t->rts = kzalloc(rmsg_rts_size(t->nseg), GFP_KERNEL_ACCOUNT);
	if (!t->sgt || !t->mrs || !t->rts)
		return -ENOMEM;
	for (i = 0; i < t->nseg; i++) {
		s = rmsg_rts_seg(t->addr, t->len, shift, i);
		ret = rmsg_region_sgt(t->region, s.addr, s.len, &t->sgt[i]);
		if (ret)
			return ret;
		ret = ib_dma_map_sgtable_attrs(ibdev, &t->sgt[i],
					       DMA_TO_DEVICE, 0);
		if (ret) {
			t->sgt[i].nents = 0;
			return ret;
		}
		mr = rmsg_mr_get(ch);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		t->mrs[i] = mr;
		n = ib_map_mr_sg(mr, t->sgt[i].sgl, t->sgt[i].nents, NULL,
				 PAGE_SIZE);
		if (n != t->sgt[i].nents)
			return n < 0 ? n : -EINVAL;
		/*
		 * The peer addresses the bytes by their program address; the
		 * offset in the page is the same, which is all the device
		 * takes from the mapping's own address.
		 */
		mr->iova = s.addr;
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		t->rts->rkey[i] = cpu_to_le32(mr->rkey);
	}
	info.nseg = t->nseg;
	rmsg_rts_encode(t->rts, &info);
	t->rts_dma = ib_dma_map_single(ibdev, t->rts, rmsg_rts_size(t->nseg),
				       DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, t->rts_dma)) {
		t->rts_dma = 0;
		return -ENOMEM;
	}
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
	struct rmsg_rndv_tx *t;
	struct rmsg_region *region;
	u32 nseg;
	int ret;

	if (!sqe->len || sqe->len > RMSG_RNDV_MAX_LEN || sqe->aux || sqe->flags)
		return -EINVAL;
	if (sqe->addr + sqe->len < sqe->addr)
		return -EFAULT;
	nseg = rmsg_rts_nseg(sqe->addr, sqe->len, ch->rndv.seg_shift);
	if (rmsg_rts_size(nseg) > ch->max_msg || nseg > rndv_mrs_max)
		return -EMSGSIZE;
	region = rmsg_region_get(ep, sqe->region, sqe->addr, sqe->len);
	if (IS_ERR(region))
		return PTR_ERR(region);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t) {
		rmsg_region_put(region);
		return -ENOMEM;
	}
	t->region = region;
	t->user_data = sqe->user_data;
	t->addr = sqe->addr;
	t->len = sqe->len;
	t->nseg = nseg;
	atomic_set(&t->inv_done, 0);
	ret = rmsg_rndv_tx_map(ch, t);
	if (ret) {
		rmsg_rndv_tx_free(ch, t);
		return ret;
	}
	e->user_data = sqe->user_data;
	e->off = 0;
	e->len = rmsg_rts_size(nseg);
	e->rndv = t;
	return 0;
}

/* Post what a transfer may still post of @op's WRs, as room allows. */
static int rmsg_rndv_post_mrs(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
			      bool inv)
{
	u32 *posted = inv ? &t->inv_posted : &t->reg_posted;
	struct ib_reg_wr reg;
	struct ib_send_wr lwr;
	struct ib_send_wr *wr;
	bool last;
	int ret;

	while (*posted < t->nseg && rmsg_data_room(ch, 1)) {
		last = *posted + 1 == t->nseg;
		if (inv) {
			memset(&lwr, 0, sizeof(lwr));
			lwr.opcode = IB_WR_LOCAL_INV;
			lwr.ex.invalidate_rkey = t->mrs[*posted]->rkey;
			wr = &lwr;
		} else {
			memset(&reg, 0, sizeof(reg));
			reg.wr.opcode = IB_WR_REG_MR;
			reg.mr = t->mrs[*posted];
			reg.key = reg.mr->rkey;
			reg.access = IB_ACCESS_REMOTE_READ;
			wr = &reg.wr;
		}
		/* The last invalidation ends the transfer: it is signalled. */
		rmsg_data_slot(ch, wr, inv && last ? &t->inv_done : NULL,
			       false);
		ret = ib_post_send(ch->qp, wr, NULL);
		if (ret)
			return ret;
		(*posted)++;
	}
	return *posted == t->nseg ? 0 : -EAGAIN;
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
	ret = rmsg_rndv_post_mrs(ch, t, false);
	if (ret)
		return ret;
	/* The rest of the RTS was filled when the segments were mapped. */
	t->cookie = r->tx_next;
	t->rts->cookie = cpu_to_le32(t->cookie);
	ib_dma_sync_single_for_device(ch->rdev->ibdev, t->rts_dma,
				      rmsg_rts_size(t->nseg), DMA_TO_DEVICE);
	*buf = t->rts;
	*dma = t->rts_dma;
	*len = rmsg_rts_size(t->nseg);
	return 0;
}

/* The RTS of @t is posted: the transfer waits for its FIN in tx[]. */
void rmsg_rndv_written(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	struct rmsg_rndv *r = &ch->rndv;

	r->tx[t->cookie & RMSG_RNDV_MASK] = t;
	r->tx_next++;
}

/**
 * rmsg_rndv_fin_in() - a FIN arrived (softirq)
 * @ch: the channel
 * @arg: its validated argument
 */
void rmsg_rndv_fin_in(struct rmsg_channel *ch, u64 arg)
{
	atomic64_t *slot = &ch->rndv.fin[RMSG_FIN_COOKIE(arg) & RMSG_RNDV_MASK];

	/* One FIN per transfer, and no transfer reuses a slot before it. */
	if (atomic64_cmpxchg(slot, 0, arg + 1)) {
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	queue_work(rmsg_wq, &ch->data_work);
}

/* FINs, invalidations and CQEs of our transfers. */
static void rmsg_rndv_tx_progress(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_tx *t;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
	};
	u32 c;
	u64 fin;
	int ret;

	for (c = r->tx_oldest; c != r->tx_next; c++) {
		t = r->tx[c & RMSG_RNDV_MASK];
		if (!t)
			continue;
		if (!t->fin) {
			fin = atomic64_read(&r->fin[c & RMSG_RNDV_MASK]);
			if (!fin)
				continue;
			fin--;
			if (RMSG_FIN_COOKIE(fin) != c) {
				rmsg_chan_kill_soft(ch, -EPROTO);
				return;
			}
			t->fin = true;
			t->status = -RMSG_FIN_ERR(fin);
		}
		if (atomic_read(&t->inv_done)) {
			/* No key of it is valid: let the program have it. */
			rmsg_rndv_tx_unmap(ch, t, false);
			cqe.user_data = t->user_data;
			cqe.res = t->status;
			cqe.len = t->len;
			cqe.aux = t->addr;
			rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
			r->tx[c & RMSG_RNDV_MASK] = NULL;
			atomic64_set(&r->fin[c & RMSG_RNDV_MASK], 0);
			rmsg_rndv_tx_free(ch, t);
			continue;
		}
		if (!ch->tx_live)
			continue;
		ret = rmsg_rndv_post_mrs(ch, t, true);
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
		*slot = kzalloc(sizeof(**slot), GFP_KERNEL_ACCOUNT);
		if (!*slot)
			return ERR_PTR(-ENOMEM);
		(*slot)->cookie = cookie;
		atomic_set(&(*slot)->reads_done, 0);
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

	rts = kmemdup(r->block_va + off, len, GFP_KERNEL_ACCOUNT);
	if (!rts)
		return -ENOMEM;
	x = rmsg_rndv_rx_slot(ch, r->rx_next);
	ret = IS_ERR(x) ? PTR_ERR(x) : x->have_rts ? -EPROTO : 0;
	if (!ret)
		ret = rmsg_rts_decode(rts, len, &x->info);
	if (!ret && x->info.cookie != r->rx_next)
		ret = -EPROTO;
	if (ret) {
		kfree(rts);
		return ret;
	}
	x->rts = rts;
	x->have_rts = true;
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
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_vb_msg m;
	int ret;

	if (!ch->tx_live || !r->seg_shift)
		return;
	if (!r->block_va) {
		r->block_va = vmap(ch->block->pages, ch->block->npages, VM_MAP,
				   PAGE_KERNEL);
		if (!r->block_va) {
			rmsg_chan_kill_soft(ch, -ENOMEM);
			return;
		}
		rmsg_vb_rx_init(&r->krx, ch->block_size, 0, 0);
	}
	/* What the peer may have written is what it was allowed to. */
	r->krx.advertised = ch->credit;
	while ((ret = rmsg_vb_rx_poll(&r->krx, r->block_va, &m)) > 0) {
		if (m.type != RMSG_VB_RTS)
			continue;
		ret = rmsg_rndv_collect_one(ch, m.off, m.len);
		if (ret)
			break;
	}
	if (ret)
		rmsg_chan_kill_soft(ch, ret);
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
	int ret;

	if (x->discard) {
		x->status = -ECANCELED;
		return 0;
	}
	if (x->room < x->info.len) {
		x->status = -EMSGSIZE;
		return 0;
	}
	ret = rmsg_region_sgt(x->region, x->addr, x->info.len, &x->sgt);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(ch->rdev->ibdev, &x->sgt,
				       DMA_FROM_DEVICE, 0);
	if (ret) {
		sg_free_table(&x->sgt);
		return ret;
	}
	x->mapped = true;
	x->sg = x->sgt.sgl;
	x->sg_off = 0;
	return 0;
}

/* Post the READs @x may still post, as room and the READ depth allow. */
static int rmsg_rndv_read(struct rmsg_channel *ch, struct rmsg_rndv_rx *x)
{
	struct rmsg_rndv *r = &ch->rndv;
	u32 max_sge = min3(ch->max_sge, (u32)RMSG_DATA_SGE_MAX,
			   (u32)ch->rdev->ibdev->attrs.max_sge_rd);
	struct ib_sge sge[RMSG_DATA_SGE_MAX];
	struct ib_rdma_wr wr;
	struct rmsg_span seg;
	u64 want, got;
	u32 i, n, nsge;
	int ret;

	while (x->pos < x->info.len && rmsg_data_room(ch, 1) &&
	       r->rd_posted - READ_ONCE(r->rd_done) < r->rd_depth) {
		i = rmsg_rts_nseg(x->info.addr, x->pos + 1,
				  x->info.seg_shift) - 1;
		seg = rmsg_rts_seg(x->info.addr, x->info.len,
				   x->info.seg_shift, i);
		want = min_t(u64, seg.addr + seg.len -
			     (x->info.addr + x->pos), RMSG_RNDV_READ_MAX);
		for (nsge = 0, got = 0; nsge < max_sge && got < want; nsge++) {
			n = min_t(u64, sg_dma_len(x->sg) - x->sg_off,
				  want - got);
			sge[nsge].addr = sg_dma_address(x->sg) + x->sg_off;
			sge[nsge].length = n;
			sge[nsge].lkey = ch->rdev->pd->local_dma_lkey;
			got += n;
			x->sg_off += n;
			if (x->sg_off == sg_dma_len(x->sg)) {
				x->sg = sg_next(x->sg);
				x->sg_off = 0;
			}
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.sg_list = sge;
		wr.wr.num_sge = nsge;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		wr.remote_addr = x->info.addr + x->pos;
		wr.rkey = le32_to_cpu(x->info.rkey[i]);
		rmsg_data_slot(ch, &wr.wr, &x->reads_done, true);
		ret = ib_post_send(ch->qp, &wr.wr, NULL);
		if (ret)
			return ret;
		x->pos += got;
		x->reads++;
		r->rd_posted++;
	}
	return 0;
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

	if (x->mapped)
		ib_dma_unmap_sgtable_attrs(ch->rdev->ibdev, &x->sgt,
					   DMA_FROM_DEVICE, 0);
	x->mapped = false;
	sg_free_table(&x->sgt);
	if (x->region)
		rmsg_region_put(x->region);
	x->region = NULL;
	rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
	x->done = true;
}

static void rmsg_rndv_rx_free(struct rmsg_rndv_rx *x)
{
	kfree(x->rts);
	kfree(x);
}

/* Start, read, end and FIN the peer's transfers, oldest first. */
static void rmsg_rndv_rx_progress(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	unsigned int buf, bit;
	u32 c;
	int ret;

	for (c = r->rx_oldest; c != r->rx_answer; c++) {
		x = r->rx[c & RMSG_RNDV_MASK];
		if (!x->have_rts)
			break;	/* its immediate has not been seen yet */
		if (!x->done && !x->mapped && !x->status) {
			ret = rmsg_rndv_rx_start(ch, x);
			if (ret)
				x->status = ret;
		}
		if (!x->done && x->mapped) {
			ret = rmsg_rndv_read(ch, x);
			if (ret) {
				rmsg_chan_kill_soft(ch, -ECONNRESET);
				return;
			}
			if (x->pos < x->info.len ||
			    atomic_read(&x->reads_done) != x->reads)
				continue;
		}
		if (!x->done)
			rmsg_rndv_rx_end(ch, x);
	}
	/* FINs go in order, each when its buffer is free. */
	while (r->rx_oldest != r->rx_answer) {
		x = r->rx[r->rx_oldest & RMSG_RNDV_MASK];
		if (!x->done || !ch->tx_live)
			break;
		buf = RMSG_CTRL_FIN_BUF + (x->cookie & RMSG_RNDV_MASK);
		bit = RMSG_CHAN_CTRL_BUSY + buf - RMSG_CTRL_RECVS;
		if (test_and_set_bit(bit, &ch->flags))
			break;
		if (rmsg_ctrl_send(ch, buf, RMSG_CTRL_FIN,
				   RMSG_FIN_ARG(x->cookie, -x->status))) {
			clear_bit(bit, &ch->flags);
			rmsg_chan_kill_soft(ch, -ECONNRESET);
			return;
		}
		r->rx[r->rx_oldest & RMSG_RNDV_MASK] = NULL;
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
	if (!ch->rndv.seg_shift)
		return;
	rmsg_rndv_tx_progress(ch);
	if (ch->tx_live)
		rmsg_rndv_rx_progress(ch);
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
 * @ch: the channel; its QP is drained, so no WR runs any more
 *
 * Registrations that may be valid are destroyed, not pooled: another QP
 * of the protection domain could still use their keys.
 */
void rmsg_rndv_release(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	struct rmsg_rndv_rx *x;
	u32 i;

	mutex_lock(&ch->ep->lock);
	for (i = 0; i < RMSG_RNDV_WINDOW; i++) {
		if (r->tx[i])
			rmsg_rndv_tx_unmap(ch, r->tx[i], true);
		x = r->rx[i];
		if (x && x->mapped) {
			ib_dma_unmap_sgtable_attrs(ch->rdev->ibdev, &x->sgt,
						   DMA_FROM_DEVICE, 0);
			x->mapped = false;
		}
	}
	while (r->mr_nfree)
		rmsg_mr_destroy(ch, r->mr_free[--r->mr_nfree]);
	if (r->block_va)
		vunmap(r->block_va);
	r->block_va = NULL;
	mutex_unlock(&ch->ep->lock);
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
		rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
		r->tx[c & RMSG_RNDV_MASK] = NULL;
		rmsg_rndv_tx_free(ch, t);
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
}

/* A transfer still in the pending ring loses its device resources. */
void rmsg_rndv_tx_release(struct rmsg_channel *ch, struct rmsg_rndv_tx *t)
{
	rmsg_rndv_tx_unmap(ch, t, t->reg_posted);
}

/* What a SEND_RNDV's CQE says of its bytes. */
void rmsg_rndv_tx_cqe(const struct rmsg_rndv_tx *t, struct rmsg_cqe *cqe)
{
	cqe->len = t->len;
	cqe->aux = t->addr;
}
