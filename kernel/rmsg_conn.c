// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: a channel's connection on one device: its verbs resources (PD,
 * CQ, QP, the receive block's mapping and registration, control buffers),
 * and the hello its connection request carries. The control messages
 * themselves are rmsg_wr.c's.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_data.c,
 * rmsg_devices.c, rmsg_leases.c, rmsg_lifecycle.c, rmsg_pages.c,
 * rmsg_rndv_repair.c, rmsg_window.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "rmsg.h"
#include "rmsg_compat.h"
#include "rmsg_carrier.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_trace.h"

/*
 * The rdma_cm's own choice on RoCE is 2^19 x 4.096 us, 2.1 s for each lost
 * packet at the end of a burst (nothing after it to be NAKed): a stream
 * over a lossy link crawls, and four heartbeat periods pass with nothing
 * acknowledged. 2^16 (268 ms) retries sooner; retry_count 6 then also
 * finds a dead peer in about 2 s.
 */
static unsigned int ack_timeout = 16;
module_param(ack_timeout, uint, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "Local ACK timeout of the channels' QPs, 4.096 us x 2^ack_timeout (default 16: 268 ms; 0: the rdma_cm's default)");

/*
 * What a channel's QP asks its peer to wait after a receiver-not-ready NAK
 * (the 5-bit code of enum ib_rnr_timeout). The rdma_cm leaves 0, which
 * means the longest wait, 655 ms: on the immediate path, where every
 * record takes a receive, one completion handler running late stopped the
 * writer for that long. 20 (10.24 ms) keeps six retries at 61 ms, longer
 * than a late handler under emulation, before the QP gives up.
 */
static unsigned int rnr_timer = IB_RNR_TIMER_010_24;
module_param(rnr_timer, uint, 0644);
MODULE_PARM_DESC(rnr_timer,
		 "RNR NAK timer the channels' QPs ask for, IB encoding 1-31 (default 20: 10.24 ms; 0: the rdma_cm's default, 655 ms)");

/* --- the block's registration --------------------------------------- */

static void rmsg_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_channel *ch =
		container_of(wc->wr_cqe, struct rmsg_channel, dev.reg_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			rmsg_chan_kill_soft(ch, -EIO);
	} else {
		set_bit(RMSG_CHAN_REGISTERED, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
	}
	/* On a link, last: the channel's end may go on once it is counted. */
	rmsg_wr_link_done(ch);
}

/* --- the connection ------------------------------------------------------ */

/**
 * rmsg_conn_new() - a new connection for a channel
 * @id: its rdma_cm id, or NULL to be set before the channel is published
 *
 * Return: the connection, with no QP yet, or NULL without memory.
 */
struct rmsg_conn *rmsg_conn_new(struct rdma_cm_id *id)
{
	struct rmsg_conn *conn = kzalloc(sizeof(*conn), RMSG_GFP_CHARGED);

	if (conn)
		conn->cm_id = id;
	return conn;
}

/**
 * rmsg_chan_set_conn() - make @conn the channel's connection
 * @ch: the channel, published; the caller is its work and holds chan_lock
 * @conn: a new connection, or NULL once the old one is let go of
 *
 * Frees the connection it replaces, whose QP must be destroyed and whose
 * id let go of (rmsg_repair_drop()): a repair never builds on the last
 * connection, only on the channel and, when it stays on the same device,
 * on struct rmsg_chan_dev.
 */
void rmsg_chan_set_conn(struct rmsg_channel *ch, struct rmsg_conn *conn)
{
	struct rmsg_conn *old;

	lockdep_assert_held(&ch->ep->chan_lock);
	/* Readers hold either lock (struct rmsg_conn). */
	mutex_lock(&ch->ep->lock);
	old = ch->conn;
	ch->conn = conn;
	mutex_unlock(&ch->ep->lock);
	if (old) {
		WARN_ON_ONCE(old->qp || old->cm_id);
		kfree(old);
	}
}

/* --- verbs resources -------------------------------------------------- */

/**
 * rmsg_block_publish() - the channel's receive block is @block from now on
 * @ch: the channel; in the call that makes it, or in its work
 * @block: its pages, zeroed
 *
 * Under the table's lock, which rmsg_chan_mmap() and the fault handler of
 * a leased block take. A leased block is mapped by faults
 * (rmsg_chan_block_fault(), rmsg_channel.c): what the program's page
 * tables hold of the time before (the zero page) goes, under
 * ep->block_map_lock for writing, so that a fault that read the old
 * state has put its page in before the zap takes it away, and every
 * later one finds @block. The caller holds no rmsg lock: faults take
 * ep->block_map_lock under mmap_lock.
 *
 * A leased channel in the block window (ch->in_window, which only
 * changes under the same lock) has its slot there changed beside its
 * view, and zapped the same way (rmsg_window_set()). A block that is not
 * leased is published before the channel opens, so before it can enter
 * the window.
 */
static void rmsg_block_publish(struct rmsg_channel *ch,
			       struct rmsg_pages *block)
{
	struct rmsg_block_view *view = ch->lease.view;
	struct rmsg_endpoint *ep = ch->ep;
	struct rmsg_pages *old = NULL, *old_slot = NULL;

	if (ch->lease.on) {
		down_write(&ep->block_map_lock);
		old = view->block;
		if (block)
			kref_get(&block->ref);
		view->block = block;
		if (ch->in_window)
			old_slot = rmsg_window_set(ep, ch->id, block);
	}
	xa_lock(&ep->channels);
	ch->block = block;
	xa_unlock(&ep->channels);
	if (ch->lease.on) {
		unmap_mapping_range(&ep->block_mapping, RMSG_OFF_BLOCK(ch->id),
				    PAGE_ALIGN(ch->block_size), 1);
		up_write(&ep->block_map_lock);
		/* Mapped pages have references of their page tables' own. */
		if (old)
			rmsg_pages_put(old);
		if (old_slot)
			rmsg_pages_put(old_slot);
	}
}

/*
 * The receive block's pages: the channel's own, mapped by the program.
 * The device sees the endpoint's arrival summary first, then the block
 * (rmsg_block_map()): one MR, through which the peer sets this channel's
 * bytes of the summary after writing records.
 */
static int rmsg_block_alloc(struct rmsg_channel *ch)
{
	struct rmsg_pages *summary = ch->ep->summary, *block;
	u32 nsum = summary ? summary->npages : 0;
	struct scatterlist *sg;
	int i, ret;

	block = rmsg_pages_new(ch->block_size, 0);
	if (!block)
		return -ENOMEM;
	rmsg_block_publish(ch, block);
	ret = sg_alloc_table(&ch->dev.block_sgt, nsum + block->npages,
			     RMSG_GFP_CHARGED);
	if (ret)
		return ret;
	for_each_sgtable_sg(&ch->dev.block_sgt, sg, i)
		sg_set_page(sg, i < nsum ? summary->pages[i] :
				block->pages[i - nsum], PAGE_SIZE, 0);
	return 0;
}

/* The block, mapped for the channel's device and under a new MR. */
static int rmsg_block_map(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	int nents, ret;

	ret = ib_dma_map_sgtable_attrs(ibdev, &ch->dev.block_sgt,
				       DMA_BIDIRECTIONAL, 0);
	if (ret)
		return ret;
	ch->dev.block_mapped = true;
	/*
	 * The program polls the block while the device writes it: a device
	 * whose mappings need syncs (not DMA-coherent, or bounced through
	 * swiotlb) would never show it what arrived.
	 */
	if (!ib_uses_virt_dma(ibdev) &&
	    dma_need_sync(ibdev->dma_device,
			  sg_dma_address(ch->dev.block_sgt.sgl))) {
		dev_warn_once(&ibdev->dev,
			      "rmsg: DMA to this device needs syncs (not coherent, or bounce buffers): receive blocks cannot be polled, rmsg does not use it\n");
		return -EOPNOTSUPP;
	}

	ch->dev.mr = rmsg_alloc_mr(ch->dev.pd, ch->dev.block_sgt.orig_nents);
	if (IS_ERR(ch->dev.mr)) {
		ret = PTR_ERR(ch->dev.mr);
		ch->dev.mr = NULL;
		return ret;
	}
	nents = ib_map_mr_sg(ch->dev.mr, ch->dev.block_sgt.sgl,
			     ch->dev.block_sgt.nents, NULL, PAGE_SIZE);
	if (nents != ch->dev.block_sgt.nents)
		return nents < 0 ? nents : -EINVAL;
	/*
	 * The peer addresses the summary, if any, from 0 and the block from
	 * rmsg_block_addr(): the hello must not carry the bus address
	 * ib_map_mr_sg() starts from (the pages are whole, so the offset
	 * in the first page stays 0 too).
	 */
	ch->dev.mr->iova = 0;
	ib_update_fast_reg_key(ch->dev.mr, ib_inc_rkey(ch->dev.mr->rkey));
	return 0;
}

int rmsg_block_register(struct rmsg_channel *ch)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode		= IB_WR_REG_MR,
			.wr_cqe		= &ch->dev.reg_cqe,
			.send_flags	= IB_SEND_SIGNALED,
		},
		/* Not relaxed ordering: arrival is seen by the last byte. */
		.access	= IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	/*
	 * A leased channel without a lease out has nothing to register: it
	 * is as if the REG_MR completed (rmsg_reg_done()), and its work
	 * looks again, since the peer's READY may have come first (the
	 * channel then waited for this, and nothing else queues the work).
	 */
	if (ch->lease.on && !ch->dev.mr) {
		set_bit(RMSG_CHAN_REGISTERED, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	}
	wr.mr = ch->dev.mr;
	wr.key = ch->dev.mr->rkey;
	ch->dev.reg_cqe.done = rmsg_reg_done;
	return rmsg_wr_post(ch, &wr.wr);
}

/* RDMA READs in flight each way: enough to keep a rendezvous going. */
static u8 rmsg_rd_depth(struct ib_device *ibdev)
{
	return min3(ibdev->attrs.max_qp_rd_atom,
		    ibdev->attrs.max_qp_init_rd_atom, 16);
}

/*
 * A connection's send queue: the data WRs, a control send per kind, the
 * drain's; a carrier's link messages and its channels' work requests on
 * top.
 */
static u32 rmsg_chan_send_wrs(const struct rmsg_channel *ch)
{
	return RMSG_QP_SEND_WRS +
	       (rmsg_chan_is_carrier(ch) ?
		RMSG_CARRIER_SENDS + RMSG_CARRIER_CHAN_WRS +
		RMSG_CARRIER_SQ_SLACK : 0);
}

/* Its receive queue: the control receives (a carrier's all take links'). */
static u32 rmsg_chan_recv_wrs(const struct rmsg_channel *ch)
{
	if (rmsg_chan_is_carrier(ch))
		return RMSG_CARRIER_RECVS + RMSG_DRAIN_WRS;
	return RMSG_CTRL_RECVS + RMSG_DRAIN_WRS +
	       (ch->rx_imm ? RMSG_IMM_RECVS : 0);
}

/*
 * The QP of one connection, on @cm_id's device, with the channel's CQ, and
 * its receives posted; it is in INIT.
 */
static int rmsg_chan_new_qp(struct rmsg_channel *ch, struct rdma_cm_id *id)
{
	struct ib_device *ibdev = id->device;
	struct ib_qp_init_attr attr = {};
	int i, ret;

	attr.qp_context = ch;
	attr.send_cq = ch->dev.cq;
	attr.recv_cq = ch->dev.cq;
	attr.cap.max_send_wr = rmsg_chan_send_wrs(ch);
	attr.cap.max_recv_wr = rmsg_chan_recv_wrs(ch);
	attr.cap.max_send_sge = min_t(int, ibdev->attrs.max_send_sge,
				      RMSG_RNDV_SGE_MAX);
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = RMSG_MAX_INLINE;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	if (attr.cap.max_send_sge < RMSG_DATA_SGE_MAX)
		return -EOPNOTSUPP;
	ret = rdma_create_qp(id, ch->dev.pd, &attr);
	if (ret) {
		/* A device without inline data still does the job. */
		attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(id, ch->dev.pd, &attr);
	}
	if (ret)
		return ret;
	ch->conn->qp = id->qp;
	rmsg_rndv_init(ch, rmsg_rd_depth(ibdev));
	ch->conn->max_inline = attr.cap.max_inline_data;
	ch->conn->max_sge = attr.cap.max_send_sge;

	/* Receives may be posted in INIT: the peer's READY can come early. */
	if (rmsg_chan_is_carrier(ch))
		return rmsg_carrier_post_recvs(ch);
	for (i = 0; i < RMSG_CTRL_RECVS; i++) {
		ret = rmsg_ctrl_post_recv(&ch->dev.ctrl[i]);
		if (ret)
			return ret;
	}
	return rmsg_data_post_recvs(ch);
}

/**
 * rmsg_chan_dev_release() - take a channel off its device
 * @ch: the channel, on a device; its QP is gone, so no device touches its
 *	memory any more
 *
 * Drops everything the channel has on the device (struct rmsg_channel
 * lists it), not the memory: the block, the shadow and the rings stay, as
 * do the program's mappings. A REG_MR is due on the next device.
 *
 * Return: whether the device is being removed.
 */
bool rmsg_chan_dev_release(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_device *rdev = ch->dev.rdev;
	int i;

	WARN_ON_ONCE(rmsg_chan_qp(ch));
	rmsg_carrier_dev_release(ch);
	rmsg_data_dev_release(ch);
	if (ch->dev.cq)
		ib_cq_pool_put(ch->dev.cq, ch->dev.cq_size);
	ch->dev.cq = NULL;
	for (i = 0; ch->dev.ctrl && i < RMSG_CTRL_BUFS; i++)
		rmsg_ctrl_buf_exit(ch, &ch->dev.ctrl[i], i < RMSG_CTRL_RECVS);
	if (ch->dev.mr)
		ib_dereg_mr(ch->dev.mr);
	ch->dev.mr = NULL;
	if (ch->dev.block_mapped)
		ib_dma_unmap_sgtable_attrs(ibdev, &ch->dev.block_sgt,
					   DMA_BIDIRECTIONAL, 0);
	ch->dev.block_mapped = false;
	clear_bit(RMSG_CHAN_REGISTERED, &ch->flags);
	/* Rendezvous submissions look at it under ep->lock. */
	mutex_lock(&ch->ep->lock);
	ch->dev.rdev = NULL;
	mutex_unlock(&ch->ep->lock);
	/* Every MR in it is gone: the block's and rendezvous' above. */
	if (ch->dev.fence_mr && !ch->dev.borrowed)
		ib_dereg_mr(ch->dev.fence_mr);
	ch->dev.fence_mr = NULL;
	/* On a link the PD is the carrier's, which frees it after we left. */
	if (ch->dev.pd && !ch->dev.borrowed)
		ib_dealloc_pd(ch->dev.pd);
	ch->dev.pd = NULL;
	ch->dev.borrowed = false;
	WRITE_ONCE(ch->dev.dev_id, 0);
	return rmsg_device_detach(rdev, &ch->dev.dev_node);
}

/*
 * The channel's own protection domain on @ibdev: a QP of the device can
 * reach only the memory registered in its own PD, so another channel's
 * QP (another user's, one a stranger got by connecting to a listener)
 * cannot use this one's keys, even if it learns them.
 */
static int rmsg_chan_pd_alloc(struct rmsg_channel *ch,
			      struct ib_device *ibdev)
{
	ch->dev.pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ch->dev.pd)) {
		int ret = PTR_ERR(ch->dev.pd);

		ch->dev.pd = NULL;
		return ret;
	}
	if (ibdev->ops.driver_id != RDMA_DRIVER_RXE)
		return 0;
	ch->dev.fence_mr = ib_alloc_mr(ch->dev.pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(ch->dev.fence_mr)) {
		int ret = PTR_ERR(ch->dev.fence_mr);

		ch->dev.fence_mr = NULL;
		ib_dealloc_pd(ch->dev.pd);
		ch->dev.pd = NULL;
		return ret;
	}
	return 0;
}

/*
 * @ch is on @rdev from now on, for the endpoint's readers (under ep->lock)
 * and for rmsgctl (dev_id). A software device: the program may lend it
 * CPU (RMSG_ENTER_LEND).
 */
static void rmsg_chan_dev_publish(struct rmsg_channel *ch,
				  struct rmsg_device *rdev)
{
	struct ib_device *ibdev = rdev->ibdev;

	mutex_lock(&ch->ep->lock);
	ch->dev.rdev = rdev;
	ch->rndv.released = false;
	if (ib_uses_virt_dma(ibdev) && ch->ep->cq.flags)
		WRITE_ONCE(*ch->ep->cq.flags,
			   READ_ONCE(*ch->ep->cq.flags) | RMSG_CQ_SOFT_DEVICE);
	mutex_unlock(&ch->ep->lock);
	WRITE_ONCE(ch->dev.dev_id, ibdev->index + 1);
}

/**
 * rmsg_chan_dev_create() - put a channel on a device
 * @ch: the channel, on no device, with its own memory
 * @ibdev: the device of its next connection
 *
 * Makes all rmsg_chan_dev_release() drops: the CQ, the block's mapping
 * and a new MR (its REG_MR goes once connected; the hello carries its
 * key), the control buffers' and the data path's mappings. Used when the
 * channel opens, and when a repair lands on a device after the channel
 * left one (removed, failed, or another device reaches the peer).
 *
 * Return: 0, or -ENODEV when rmsg does not (or no longer) use @ibdev,
 * -ENOMEM, -EOPNOTSUPP; the channel is then on no device.
 */
static int rmsg_chan_dev_create(struct rmsg_channel *ch,
				struct ib_device *ibdev)
{
	struct rmsg_device *rdev;
	int i, ret;

	/*
	 * iWARP wants the sink of an RDMA READ registered for remote write
	 * (rdma_rw_ctx does that); rendezvous reads into the local DMA key.
	 */
	if (rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev))) {
		dev_warn_once(&ibdev->dev,
			      "rmsg: iWARP is not supported (rendezvous reads need registered sinks there)\n");
		return -EOPNOTSUPP;
	}
	rdev = rmsg_device_attach(ibdev, &ch->dev.dev_node);
	if (!rdev)
		return -ENODEV;
	ret = rmsg_chan_pd_alloc(ch, ibdev);
	if (ret) {
		rmsg_device_detach(rdev, &ch->dev.dev_node);
		return ret;
	}
	rmsg_chan_dev_publish(ch, rdev);

	/* A leased channel has a block only while a lease is out. */
	ret = ch->block ? rmsg_block_map(ch) : 0;
	if (!ret)
		ret = rmsg_data_dev_create(ch);
	if (!ret && rmsg_chan_is_carrier(ch))
		ret = rmsg_carrier_dev_create(ch);
	if (ret)
		goto fail;
	/* Both queues, the drain's WR of each included. */
	ch->dev.cq_size = rmsg_chan_send_wrs(ch) + rmsg_chan_recv_wrs(ch);
	ch->dev.cq =
		ib_cq_pool_get(ibdev, ch->dev.cq_size, -1, IB_POLL_SOFTIRQ);
	if (IS_ERR(ch->dev.cq)) {
		ret = PTR_ERR(ch->dev.cq);
		ch->dev.cq = NULL;
		goto fail;
	}
	if (!ch->dev.ctrl)
		ch->dev.ctrl = kcalloc(RMSG_CTRL_BUFS, sizeof(*ch->dev.ctrl),
				       RMSG_GFP_CHARGED);
	if (!ch->dev.ctrl) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < RMSG_CTRL_BUFS; i++) {
		ret = rmsg_ctrl_buf_init(ch, &ch->dev.ctrl[i],
					 i < RMSG_CTRL_RECVS);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	rmsg_chan_dev_release(ch);
	return ret;
}

/*
 * The QP of one connection, on @id's device: the channel moves there
 * first if it is on no device, or on another.
 */
int rmsg_chan_connection(struct rmsg_channel *ch,
				struct rdma_cm_id *id)
{
	int ret;

	/* Rendezvous keys the peer holds are sent again (REKEY). */
	if (ch->dev.rdev && ch->dev.rdev->ibdev != id->device)
		rmsg_chan_dev_release(ch);
	if (!ch->dev.rdev) {
		ret = rmsg_chan_dev_create(ch, id->device);
		if (ret)
			return ret;
	}
	return rmsg_chan_new_qp(ch, id);
}

/*
 * What the channel keeps for its life (the data path's memory, the
 * block's pages unless the block is leased), then its first connection's
 * device and QP.
 */
int rmsg_chan_create_qp(struct rmsg_channel *ch)
{
	int ret;

	/* Whether the peer writes with immediates is fixed first. */
	ret = rmsg_data_create(ch, ch->conn->cm_id->device);
	if (!ret)
		ret = rmsg_lease_setup(ch);
	if (!ret && !ch->lease.on)
		ret = rmsg_block_alloc(ch);
	if (!ret)
		ret = rmsg_chan_connection(ch, ch->conn->cm_id);
	return ret;
}

/**
 * rmsg_block_lease_make() - make the block the peer's ASK asked for
 * @ch: a leased channel, in its work (which owns ch->dev), between
 *	rmsg_ep_charge_begin() and _end(): the pages and the tables are
 *	charged to the endpoint's opener
 *
 * The block is made only from the receiver's IDLE (rmsg_lease_rx_ask()),
 * once per channel in this slice: the ASK of a peer costs at most what
 * every channel cost before leases. Pages (zeroed: lap 0 holds nothing),
 * the DMA mapping and MR on the channel's device, the block published to
 * the program's mapping, its REG_MR posted; then the machine queues the
 * GRANT behind it on the same send queue (rmsg_lease_made()).
 *
 * A channel being repaired makes it once open again: its machine stays
 * ALLOCATING across the repair, so the peer's ASK sent again is ignored
 * and our GRANT goes on the new connection. An ending channel makes
 * nothing (it frees what it has). On failure the
 * channel ends with the error (ENOMEM, EOPNOTSUPP for a device whose DMA
 * needs syncs, the post's); what was made is freed with the channel
 * (rmsg_chan_release_verbs()). A back-off and retry instead
 * (rmsg_lease_rx_alloc_failed()) is still to come.
 */
void rmsg_block_lease_make(struct rmsg_channel *ch)
{
	enum rmsg_chan_state state = READ_ONCE(ch->state);
	int ret;

	if (state == RMSG_CHAN_DYING)
		return;
	/* The repair's end runs the work again (rmsg_repair_done()). */
	if (state == RMSG_CHAN_RECOVERING || !ch->dev.rdev ||
	    !rmsg_chan_qp(ch)) {
		set_bit(RMSG_CHAN_LEASE_ALLOC, &ch->flags);
		return;
	}
	if (WARN_ON_ONCE(ch->block || ch->dev.mr))
		return;
	ret = rmsg_block_alloc(ch);
	if (!ret)
		ret = rmsg_block_map(ch);
	if (!ret)
		ret = rmsg_block_register(ch);
	if (!ret)
		ret = rmsg_lease_made(ch, ch->dev.mr->rkey);
	if (ret)
		rmsg_chan_kill(ch, ret);
}

/**
 * rmsg_qp_drain() - stop a QP for good and wait for all its completions
 * @id: the rdma_cm id the QP was made on
 * @qp: the QP
 * @handler_held: the caller is @id's event handler (holds its lock)
 *
 * While a connection is being made the rdma_cm moves the QP to RTR and RTS
 * itself, from its handler of the peer's REP (cma_rep_recv()), under the
 * id's handler lock, and rxe checks and writes a QP's state without a lock
 * of its own. ib_drain_qp()'s move to ERR, unserialised, can be overwritten
 * by RTR: the drain's WRITE then goes out to a peer QP that may be gone and
 * is never flushed. Under the handler lock the ERR comes after the
 * rdma_cm's last move, or before its next one, which then fails (ERR leads
 * only to RESET) and turns into a reject. Then the drain is finite: a QP in
 * ERR flushes everything posted on it, and the QP's retry count is finite
 * (rmsg_conn_param()) in any case.
 *
 * The caller holds no rmsg lock that an rdma_cm handler takes.
 */
void rmsg_qp_drain(struct rdma_cm_id *id, struct ib_qp *qp,
			  bool handler_held)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!handler_held)
		rdma_lock_handler(id);
	/* A failure leaves the state to ib_drain_qp(), which warns. */
	ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (!handler_held)
		rdma_unlock_handler(id);
	ib_drain_qp(qp);
}

/*
 * Everything the channel holds of RDMA. @in_handler: called from the
 * connection request's handler, which holds its id's handler lock.
 */
void rmsg_chan_release_verbs(struct rmsg_channel *ch, bool in_handler)
{
	struct rmsg_conn *conn = ch->conn;
	struct rmsg_block_view *view;
	struct rmsg_pages *block;

	if (conn && conn->qp && ch->dev.borrowed) {
		/*
		 * On a link: the QP is the carrier's. The channel's end waited
		 * for its work requests (rmsg_carrier_leave()).
		 */
		rmsg_chan_link_let_go(ch);
	} else if (conn && conn->qp) {
		/* Afterwards no completion can touch the channel. */
		rmsg_qp_drain(conn->cm_id, conn->qp, in_handler);
		/* A carrier's channels leave the QP before it goes. */
		rmsg_carrier_quiesce(ch);
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
	}
	if (ch->dev.rdev)
		ch->dev_gone = rmsg_chan_dev_release(ch);
	sg_free_table(&ch->dev.block_sgt);
	/*
	 * A leased block's view keeps the last block for the mappings left:
	 * what arrived before the end can still be read there.
	 */
	xa_lock(&ch->ep->channels);
	block = ch->block;
	ch->block = NULL;
	view = ch->lease.view;
	ch->lease.view = NULL;
	xa_unlock(&ch->ep->channels);
	if (block)
		rmsg_pages_put(block);
	if (view)
		rmsg_block_view_put(view);
}

/* The channel's hello of @kind, as a REQ, a REP or a link carries it. */
static void rmsg_chan_hello_make(struct rmsg_channel *ch, u8 kind,
				 struct rmsg_hello *h)
{
	struct rmsg_hello hello = {
		.kind = kind,
		.incarnation = ch->ep->incarnation,
		/* The MR's iova is 0 (rmsg_block_map()); no MR without a lease. */
		.block_addr = rmsg_block_addr(ch->ep),
		.channel = ch->id,
		.peer_channel = kind == RMSG_HELLO_CONNECT ?
					RMSG_WIRE_NO_CHANNEL :
					ch->peer.channel,
		.block_rkey = ch->dev.mr ? ch->dev.mr->rkey : 0,
		.block_size = ch->block_size,
		.flags = ch->rx_imm ? RMSG_HELLO_F_IMM_ARRIVAL :
			 ch->ep->summary ? RMSG_HELLO_F_SUMMARY : 0,
		.epoch = ch->resil.epoch,
	};

	if (ch->rndv.rekey_hello)
		hello.flags |= RMSG_HELLO_F_REKEY;
	if (rmsg_chan_is_carrier(ch))
		hello.flags |= RMSG_HELLO_F_LINK;
	if (ch->lease.on)
		hello.flags |= RMSG_HELLO_F_LEASE;

	/* A repair says where our stream stands: the peer resumes there. */
	if (ch->state == RMSG_CHAN_RECOVERING) {
		hello.rx_seq = ch->repair.resume_seq;
		hello.rx_arrived = ch->repair.resume_arrived;
		hello.rx_freed = ch->flow.credit;
	}
	*h = hello;
}

/*
 * The hello of a REQ or REP in @data; an ACCEPT lists the addresses the
 * peer's repairs may dial after it. Return: the bytes of @data to send.
 */
u32 rmsg_chan_hello(struct rmsg_channel *ch, u8 kind,
			   struct rmsg_conn_data *data)
{
	struct rmsg_hello hello;
	struct rmsg_addrs addrs;

	rmsg_chan_hello_make(ch, kind, &hello);
	rmsg_hello_encode(&data->hello, &hello);
	if (kind != RMSG_HELLO_ACCEPT)
		return sizeof(data->hello);
	/*
	 * Where the peer finds us again: every address a listener on a
	 * wildcard address hears, on a device that can carry the channel.
	 * A listener bound to one address hears only that one, which the
	 * peer dialled already: the list is empty.
	 */
	addrs.count = 0;
	if (ch->repair.adv_family && rmsg_chan_cm_id(ch))
		rmsg_local_addrs(rmsg_chan_cm_id(ch)->route.addr.dev_addr.net,
				 ch->repair.adv_family == AF_INET6, &addrs);
	return sizeof(data->hello) + rmsg_addrs_encode(&data->addrs, &addrs);
}

/* --- a channel on a link ---------------------------------------------- */

/*
 * @ch uses the link's connection @cc from here: its QP, and what the
 * channel shows of its addresses.
 */
static void rmsg_chan_link_conn_set(struct rmsg_channel *ch,
				    const struct rmsg_carrier_conn *cc)
{
	mutex_lock(&ch->ep->chan_lock);
	ch->conn_local = cc->local;
	ch->conn_peer = cc->peer;
	/* Readers of the connection hold either lock (struct rmsg_conn). */
	mutex_lock(&ch->ep->lock);
	ch->conn->qp = cc->qp;
	ch->conn->max_inline = cc->max_inline;
	ch->conn->max_sge = cc->max_sge;
	mutex_unlock(&ch->ep->lock);
	mutex_unlock(&ch->ep->chan_lock);
}

/**
 * rmsg_chan_link_setup() - put a channel on a link's connection
 * @ch: a channel attached to the link (rmsg_carrier_attach()), on no
 *	device, with no QP, in the call that makes it
 * @cc: the connection, as the attach found it
 *
 * What rmsg_chan_create_qp() does for a channel of its own, on the
 * carrier's device: the block's pages, the data path's memory, the block
 * mapped and under a new MR (its key goes in the HELLO, its REG_MR once
 * connected), or for a leased block none of it until the peer's ASK
 * (rmsg_block_lease_make()), all in the carrier's PD (borrowed: rmsg_chan_dev_release()
 * leaves it). No CQ (the channel's work requests complete on the
 * carrier's) and no control buffers (its control messages go in the
 * carrier's). The QP is the carrier's, the channel's until it ends
 * (struct rmsg_carrier_conn says why it stays). A device that places out
 * of order would need receives of the channel's own for writes with
 * immediate, which a shared QP has not: such a channel cannot go on a link.
 *
 * Return: 0; -EOPNOTSUPP (out of order placement, iWARP); -ENODEV;
 * -ENOMEM. On failure the channel is on no device.
 */
int rmsg_chan_link_setup(struct rmsg_channel *ch,
			 const struct rmsg_carrier_conn *cc)
{
	struct ib_device *ibdev = cc->rdev->ibdev;
	struct rmsg_device *rdev;
	int ret;

	ret = rmsg_data_create(ch, ibdev);
	if (ret)
		return ret;
	if (ch->rx_imm)
		return -EOPNOTSUPP;
	/* As on a connection of its own: a leased block comes with an ASK. */
	ret = rmsg_lease_setup(ch);
	if (!ret && !ch->lease.on)
		ret = rmsg_block_alloc(ch);
	if (ret)
		return ret;
	rdev = rmsg_device_attach(ibdev, &ch->dev.dev_node);
	if (!rdev)
		return -ENODEV;
	ch->dev.borrowed = true;
	ch->dev.pd = cc->pd;
	/* The carrier's fence (rxe only), borrowed with its PD. */
	ch->dev.fence_mr = cc->fence_mr;
	rmsg_chan_dev_publish(ch, rdev);
	if (!ret && ch->block)
		ret = rmsg_block_map(ch);
	if (!ret)
		ret = rmsg_data_dev_create(ch);
	if (ret) {
		rmsg_chan_dev_release(ch);
		return ret;
	}
	rmsg_rndv_init(ch, rmsg_rd_depth(ibdev));
	rmsg_wr_link_set(ch, cc->share);
	rmsg_chan_link_conn_set(ch, cc);
	return 0;
}

/**
 * rmsg_chan_link_let_go() - a channel on a link leaves the carrier's QP
 * @ch: a channel on a link, posting no more: faulted (a repair's first
 *	step) or ending
 *
 * Its connection has no QP from here (under both locks, as its readers
 * hold either), and the carrier no longer waits for it before the QP
 * goes (rmsg_carrier_qp_release()). The block, its MR and the carrier's
 * PD stay: a repair on the same device keeps them.
 */
void rmsg_chan_link_let_go(struct rmsg_channel *ch)
{
	mutex_lock(&ch->ep->chan_lock);
	mutex_lock(&ch->ep->lock);
	if (ch->conn)
		ch->conn->qp = NULL;
	mutex_unlock(&ch->ep->lock);
	mutex_unlock(&ch->ep->chan_lock);
	rmsg_carrier_qp_release(ch);
}

/**
 * rmsg_chan_link_rejoin() - a channel being repaired goes on the link's
 *	new connection
 * @ch: a channel on a link that let go of the QP, in its work
 * @answer: for the accepting side, the peer's RECONNECT, taken here; NULL
 *	for the dialling side
 *
 * The carrier is on the device the channel's memory is registered on:
 * a carrier that leaves its device ends the channels on its link first.
 *
 * Return: what rmsg_carrier_rejoin() returns.
 */
int rmsg_chan_link_rejoin(struct rmsg_channel *ch, struct rmsg_hello *answer)
{
	struct rmsg_carrier_conn cc;
	int ret;

	ret = rmsg_carrier_rejoin(ch, &cc, answer);
	if (ret)
		return ret;
	if (WARN_ON_ONCE(cc.pd != ch->dev.pd))
		return -ENODEV;
	rmsg_chan_link_conn_set(ch, &cc);
	return 0;
}

/**
 * rmsg_chan_link_hello() - send a channel's HELLO on its link
 * @ch: a channel on a link, set up (rmsg_chan_link_setup())
 * @kind: RMSG_HELLO_CONNECT (the dialling side) or RMSG_HELLO_ACCEPT
 * @port: a CONNECT's service port; 0 for an ACCEPT
 *
 * The hello a REQ or REP would carry; the carrier names the channel on
 * the wire by link ids and carries its endpoint id (the hello's channel)
 * beside them, for the peer's summary hints (rmsg_carrier_hello()). An
 * ACCEPT goes to the peer's end, which rmsg_carrier_set_peer() named.
 *
 * Return: what rmsg_carrier_hello() returns.
 */
int rmsg_chan_link_hello(struct rmsg_channel *ch, u8 kind, u16 port)
{
	struct rmsg_hello h;

	rmsg_chan_hello_make(ch, kind, &h);
	/*
	 * A leased channel's hello stands for its READY: a CONNECT offers
	 * it, an ACCEPT takes the offer (rmsg_link_chan.c set the bit).
	 */
	if (ch->lease.on &&
	    (kind == RMSG_HELLO_CONNECT ||
	     test_bit(RMSG_CHAN_HELLO_READY, &ch->flags)))
		h.flags |= RMSG_HELLO_F_READY;
	return rmsg_carrier_hello(ch, &h, port);
}

/**
 * rmsg_chan_link_up() - a channel on a link is connected
 * @ch: the channel, in its work: the dialling side once the peer's ACCEPT
 *	arrived (in @ch->peer), the accepting side once its ACCEPT left
 *
 * What the rdma_cm's ESTABLISHED starts on a connection of the channel's
 * own: the block's REG_MR on the (carrier's) QP, then READY, which the
 * send queue runs after it; the channel opens by the same steps
 * (rmsg_lifecycle.c) once both are done and the peer's READY came. When
 * the hellos stood for the READYs (RMSG_CHAN_HELLO_READY: a leased
 * channel, which registers nothing at open), none goes: the peer's came
 * with its hello (rmsg_link_chan.c), ours went with ours.
 *
 * A repair (the channel RECOVERING, the peer's hello of the repair taken
 * by rmsg_data_resume()) goes the same way, but keeps the block's
 * registration: on the same device, in the same PD, its MR stays valid.
 *
 * Return: 0, -EPROTO for an ACCEPT that is not one, or the post's error.
 */
int rmsg_chan_link_up(struct rmsg_channel *ch)
{
	bool ready = !test_bit(RMSG_CHAN_HELLO_READY, &ch->flags);
	bool repair = READ_ONCE(ch->state) == RMSG_CHAN_RECOVERING;
	u64 arg;
	int ret;

	if (ch->active && ch->peer.kind != RMSG_HELLO_ACCEPT)
		return -EPROTO;
	/* Leases both ways or none (rmsg_lease_setup()). */
	if (ch->active && !repair) {
		ret = rmsg_lease_peer(ch);
		if (ret)
			return ret;
	}
	set_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	ret = test_bit(RMSG_CHAN_REGISTERED, &ch->flags) ? 0 :
	      rmsg_block_register(ch);
	if (ret)
		return ret;
	/* On a leased channel the lease messages follow the READY. */
	arg = rmsg_lease_connected(ch, ready);
	if (ready)
		return rmsg_ctrl_send(ch, RMSG_CTRL_READY_BUF,
				      RMSG_CTRL_READY, arg);
	/* A first connection's: what the hello said. */
	return arg ? -EPROTO : 0;
}

/**
 * rmsg_conn_hello_decode() - the hello of a REQ or REP, for a channel
 * @hello: filled in on success
 * @event: the rdma_cm's CONNECT_REQUEST or ESTABLISHED event (its private
 *	data comes from the network)
 * @ep: the endpoint of the channel the hello is for
 *
 * rmsg_hello_decode()'s checks, and the module's: a carrier's hello
 * (RMSG_HELLO_F_LINK) is for the module's own endpoint and no other, and
 * that endpoint takes nothing else: a program's channel never carries a
 * link, and a carrier's peer is a carrier; and only a hello on a link
 * stands for a READY (RMSG_HELLO_F_READY).
 *
 * Return: 0, -EPROTONOSUPPORT or -EPROTO.
 */
int rmsg_conn_hello_decode(struct rmsg_hello *hello,
			   const struct rdma_cm_event *event,
			   const struct rmsg_endpoint *ep)
{
	struct rmsg_hello h;
	int ret;

	ret = rmsg_hello_decode(&h, event->param.conn.private_data,
				event->param.conn.private_data_len);
	if (ret)
		return ret;
	if (!(h.flags & RMSG_HELLO_F_LINK) != !rmsg_ep_is_module(ep))
		return -EPROTO;
	/* Only a hello on a link stands for a READY. */
	if (h.flags & RMSG_HELLO_F_READY)
		return -EPROTO;
	*hello = h;
	return 0;
}

void rmsg_conn_param(struct rmsg_channel *ch, struct rdma_cm_id *id,
			    struct rdma_conn_param *param,
			    struct rmsg_conn_data *data, u32 len)
{
	unsigned int timeout = READ_ONCE(ack_timeout);
	unsigned int rnr = READ_ONCE(rnr_timer);

	/* Both fail only for a QP type that is not RC; ours is. */
	if (timeout)
		rdma_set_ack_timeout(id, min(timeout, 31U));
	if (rnr)
		rdma_set_min_rnr_timer(id, min(rnr, 31U));
	memset(param, 0, sizeof(*param));
	param->private_data = data;
	param->private_data_len = len;
	/* Room for rendezvous reads from the start. */
	param->responder_resources = rmsg_rd_depth(ch->dev.rdev->ibdev);
	param->initiator_depth = param->responder_resources;
	/*
	 * 7 would retry for ever on rxe (and means so for RNR everywhere):
	 * a QP whose peer is gone, or never posts receives, must fail in
	 * bounded time, and a repair takes it from there.
	 */
	param->retry_count = 6;
	param->rnr_retry_count = 6;
}
