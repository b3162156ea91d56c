// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the eager data path of a channel (Documentation/channels.rst,
 * "The eager data path"; the receive block is Documentation/veloblock.rst).
 *
 * Sending. RMSG_OP_SEND names bytes of the endpoint's send area. The kernel
 * places the record with rmsg_vb_tx_place() and writes it into the peer's
 * receive block with one RDMA WRITE whose parts are the clear zone and the
 * padding (zeros kept with the trailers), the payload (the area's pages)
 * and the trailer (built here, in kernel memory, so the program cannot
 * change what the kernel vouches for). A WRAP goes as its own small write
 * just before. Writes go inline when small, and are signalled only when a
 * CQE waits for them or the send queue needs reclaiming.
 *
 * A SEND's CQE means the device no longer reads its bytes: at once for an
 * inline write with nothing older owed, else when a signalled completion
 * covers the write. Sends without credit (or without send-queue room) wait
 * in the channel's pending ring, in order, and are written as credit comes.
 *
 * State of a pending send, by its index in the ring:
 *
 *   [head, done)      written; CQE owed (posted by the work item)
 *   [done, posted)    posted, write not yet known complete
 *   [posted, tail)    waiting for credit or send-queue room
 *
 * Credit and wake-ups travel as control messages the kernels exchange:
 *  - CREDIT (arg: the receiver's release counter) when the program asks
 *    (RMSG_OP_CREDIT). The sending kernel never takes credit from the
 *    trailers it finds in a block, since a program could have written
 *    something that looks like one.
 *  - NOTIFY (arg: the receiver's consumed counter) for RMSG_OP_ARM. The
 *    sender answers with WAKE at once if it has written more than that,
 *    else with the next record. Either way the WAKE follows the data on the
 *    same connection, so the READABLE event cannot overtake the message,
 *    and no write can slip between the program's last look and the arming.
 *
 * Locking: everything here that is not a completion handler runs under
 * ep->lock (submission, the poller, the work item), which orders the
 * data path of all the endpoint's channels. Completion handlers (softirq)
 * only store counters, set bits and queue the work item. A channel found
 * with xa_load() under ep->lock stays valid until ep->lock is dropped:
 * teardown takes ep->lock after removing it from the table and before
 * freeing it.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_cq.c, rmsg_data_write.c,
 * rmsg_devices.c, rmsg_leases.c, rmsg_pages.c, rmsg_rndv.c,
 * rmsg_rndv_repair.c and rmsg_wr.c.
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
#include "rmsg_data_write.h"

/* A channel's pending ring, and its WR slots with the trailers after them. */
#define RMSG_TX_MEM_SIZE	(RMSG_TX_SLOTS * sizeof(struct rmsg_tx_slot) + \
				 RMSG_TRAILER_ENTRIES * \
				 sizeof(struct rmsg_vb_trailer))
static struct kmem_cache *rmsg_pending_cache __ro_after_init;
static struct kmem_cache *rmsg_tx_cache __ro_after_init;

static bool force_imm_arrival;
module_param(force_imm_arrival, bool, 0644);
MODULE_PARM_DESC(force_imm_arrival,
		 "Receive blocks of new channels get arrival flags from the kernel (write with immediate), whatever the device");

static bool retain = true;
module_param(retain, bool, 0644);
MODULE_PARM_DESC(retain,
		 "New channels keep what they sent until the peer releases it, so that a broken connection can be repaired (off: any fault ends a channel; for measuring what retention costs)");

static unsigned int close_drain_ms = 5000;
module_param(close_drain_ms, uint, 0644);
MODULE_PARM_DESC(close_drain_ms,
		 "How long an orderly close waits for pending sends to be written");

static void rmsg_data_shadow_free(struct rmsg_channel *ch);
static void rmsg_data_shadow_unmap(struct rmsg_shadow *sh);

static u32 rmsg_area_chunks(struct rmsg_endpoint *ep)
{
	return ep->area_size / RMSG_AREA_CHUNK;
}

static void rmsg_area_unmap(struct rmsg_area_map *map, u32 chunks)
{
	u32 i;

	for (i = 0; i < chunks; i++)
		ib_dma_unmap_page(map->ibdev, map->dma[i], RMSG_AREA_CHUNK,
				  DMA_TO_DEVICE);
	kvfree(map);
}

static struct rmsg_area_map *rmsg_area_map_get(struct rmsg_endpoint *ep,
					       struct ib_device *ibdev)
{
	struct rmsg_pages *area = ep->area;
	struct rmsg_area_map *map;
	u32 i;

	mutex_lock(&ep->chan_lock);
	list_for_each_entry(map, &ep->area_maps, node) {
		if (map->ibdev == ibdev) {
			map->users++;
			goto out;
		}
	}
	map = kvzalloc(struct_size(map, dma, rmsg_area_chunks(ep)),
		       RMSG_GFP_CHARGED);
	if (!map)
		goto out;
	map->ibdev = ibdev;
	map->users = 1;
	for (i = 0; i < rmsg_area_chunks(ep); i++) {
		/* A chunk's pages are contiguous: one mapping for all. */
		map->dma[i] = ib_dma_map_page(ibdev,
					      area->pages[i * RMSG_AREA_CHUNK /
							  PAGE_SIZE], 0,
					      RMSG_AREA_CHUNK, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, map->dma[i])) {
			rmsg_area_unmap(map, i);
			map = NULL;
			goto out;
		}
	}
	list_add(&map->node, &ep->area_maps);
out:
	mutex_unlock(&ep->chan_lock);
	return map;
}

static void rmsg_area_map_put(struct rmsg_endpoint *ep,
			      struct rmsg_area_map *map)
{
	bool last;

	mutex_lock(&ep->chan_lock);
	last = !--map->users;
	if (last)
		list_del(&map->node);
	mutex_unlock(&ep->chan_lock);
	if (last)
		rmsg_area_unmap(map, rmsg_area_chunks(ep));
}


/* --- receiving with immediates (devices that may place out of order) --- */

/**
 * rmsg_data_imm_in() - a write with immediate completed (softirq)
 * @ch: the channel
 * @wc: its receive completion
 *
 * The completion means all the record's bytes are in the block; only now
 * does its flag, which the write left out, go in.
 *
 * Return: 0, or -EPROTO for an immediate the peer had no business sending
 * (the channel is then being killed).
 */
static int rmsg_data_imm_in(struct rmsg_channel *ch, const struct ib_wc *wc)
{
	u32 imm = be32_to_cpu(wc->ex.imm_data);
	u32 off = imm >> RMSG_IMM_OFF_SHIFT;
	u8 *flag;

	if (!ch->rx_imm || !(wc->wc_flags & IB_WC_WITH_IMM) ||
	    off >= ch->block_size) {
		rmsg_chan_kill_soft(ch, -EPROTO);
		return -EPROTO;
	}
	flag = page_address(ch->block->pages[off >> PAGE_SHIFT]) +
	       offset_in_page(off);
	/* The record's bytes before its flag, as on a device in order. */
	smp_wmb();
	WRITE_ONCE(*flag, imm & RMSG_IMM_ODD ? RMSG_VB_FLAG_ODD :
					       RMSG_VB_FLAG_EVEN);
	/* The flag, then the summary's bytes, as the peer's hint would be. */
	if (ch->ep->summary)
		rmsg_summary_mark(ch->ep->summary, ch->id);
	rmsg_ep_count(ch->ep, RMSG_STAT_IMM_ARRIVALS);
	return 0;
}

/* --- set-up and the end ------------------------------------------------ */

/**
 * rmsg_data_create() - the data path's own memory, before the first QP
 * @ch: the channel
 * @ibdev: the device of its first connection: whether the peer writes
 *	with immediates is fixed here, for the channel's life
 *
 * Return: 0 or -ENOMEM.
 */
int rmsg_data_create(struct rmsg_channel *ch, struct ib_device *ibdev)
{
	size_t tsize = RMSG_TRAILER_ENTRIES * sizeof(*ch->wrs.trailers);

	ch->rx_imm = READ_ONCE(force_imm_arrival) ||
		     !rmsg_device_ordered(ibdev);
	/*
	 * Writes with immediate and control messages take receives from the
	 * same queue, in any mix: every receive needs a buffer.
	 */
	if (ch->rx_imm) {
		ch->dev.imm_bufs = kcalloc(RMSG_IMM_RECVS,
					    sizeof(*ch->dev.imm_bufs),
					    RMSG_GFP_CHARGED);
		if (!ch->dev.imm_bufs)
			return -ENOMEM;
	}

	/* The pending ring comes with the first send: rmsg_data_pending_make(). */
	ch->wrs.slots = kmem_cache_zalloc(rmsg_tx_cache, RMSG_GFP_CHARGED);
	if (!ch->wrs.slots)
		return -ENOMEM;
	/*
	 * The trailers, then RMSG_VB_TRAILER_SIZE zeros, then as many ones,
	 * after the slots in the same object: only the device reads them.
	 */
	ch->wrs.trailers = (void *)&ch->wrs.slots[RMSG_TX_SLOTS];
	BUILD_BUG_ON(RMSG_TX_MEM_SIZE - RMSG_TX_SLOTS *
		     sizeof(struct rmsg_tx_slot) < tsize);
	memset(&ch->wrs.trailers[RMSG_ONES], 0xff,
	       sizeof(*ch->wrs.trailers));
	rmsg_wr_slots_init(ch);
	return 0;
}

static int rmsg_data_shadow_map(struct rmsg_channel *ch);

/**
 * rmsg_data_dev_create() - the data path on the channel's device
 * @ch: the channel, just attached to a device (ch->dev.rdev)
 *
 * Maps the trailers, the shadow, the receive buffers of immediates and
 * the endpoint's send area for the device. rmsg_data_dev_release() undoes
 * it, also when this fails half-way.
 *
 * Return: 0, -ENOMEM, or -EOPNOTSUPP for a device that may place data out
 * of order when the peer was told it need not write with immediates.
 */
int rmsg_data_dev_create(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_endpoint *ep = ch->ep;
	int i, ret;

	if (!ch->rx_imm && !rmsg_device_ordered(ibdev))
		return -EOPNOTSUPP;
	ch->dev.trailers_dma = ib_dma_map_single(
		ibdev, ch->wrs.trailers,
		RMSG_TRAILER_ENTRIES * sizeof(*ch->wrs.trailers), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, ch->dev.trailers_dma)) {
		ch->dev.trailers_dma = 0;
		return -ENOMEM;
	}
	if (ep->area) {
		ch->dev.area_map = rmsg_area_map_get(ep, ibdev);
		if (!ch->dev.area_map)
			return -ENOMEM;
	}
	for (i = 0; ch->dev.imm_bufs && i < RMSG_IMM_RECVS; i++) {
		ret = rmsg_ctrl_buf_init(ch, &ch->dev.imm_bufs[i], true);
		if (ret)
			return ret;
	}
	return rmsg_data_shadow_map(ch);
}

/* More receives, for the peer's immediates, once the QP exists. */
int rmsg_data_post_recvs(struct rmsg_channel *ch)
{
	int i, ret;

	for (i = 0; ch->dev.imm_bufs && i < RMSG_IMM_RECVS; i++) {
		ret = rmsg_ctrl_post_recv(&ch->dev.imm_bufs[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The shadow itself. Chunks are as large as the block, up to
 * RMSG_AREA_CHUNK, so that a record crosses at most two chunk boundaries.
 * No shadow when the retain parameter is off. 0 or -ENOMEM.
 */
static int rmsg_data_shadow_make(struct rmsg_channel *ch)
{
	u32 size = ch->peer.block_size;
	unsigned int order = min_t(unsigned int, get_order(size),
				   RMSG_AREA_CHUNK_ORDER);
	struct rmsg_shadow *sh;
	int ret;

	if (ch->retain.shadow || !ch->retain.on)
		return 0;
	sh = kzalloc(struct_size(sh, dma, DIV_ROUND_UP(size,
						       PAGE_SIZE << order)),
		     RMSG_GFP_CHARGED);
	if (!sh)
		return -ENOMEM;
	ch->retain.shadow = sh;
	sh->size = size;
	sh->chunk_shift = PAGE_SHIFT + order;
	sh->pages = rmsg_pages_new(size, order);
	if (!sh->pages)
		goto fail;
	sh->va = vmap(sh->pages->pages, sh->pages->npages, VM_MAP,
		      PAGE_KERNEL);
	if (!sh->va)
		goto fail;
	ret = rmsg_data_shadow_map(ch);
	if (!ret)
		return 0;
fail:
	rmsg_data_shadow_free(ch);
	return -ENOMEM;
}

/**
 * rmsg_data_shadow_create() - the copy of the peer's block, once its size
 *	is known
 * @ch: the channel, attached to its device, with the peer's hello
 *
 * On a leased channel nothing: its shadow is made with the first send
 * that finds no lease (rmsg_data_push()), so that an idle channel holds
 * none.
 *
 * Return: 0 (also when the retain parameter is off: no shadow), or
 * -ENOMEM.
 */
int rmsg_data_shadow_create(struct rmsg_channel *ch)
{
	ch->retain.on = READ_ONCE(retain);
	return ch->lease.on ? 0 : rmsg_data_shadow_make(ch);
}

/* The shadow's chunks, for the device to read; all or none. */
static int rmsg_data_shadow_map(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_shadow *sh = ch->retain.shadow;
	struct page *page;
	u32 i, n;

	if (!sh || sh->ibdev)
		return 0;
	n = DIV_ROUND_UP(sh->size, 1U << sh->chunk_shift);
	sh->ibdev = ibdev;
	for (i = 0; i < n; i++) {
		page = sh->pages->pages[i << (sh->chunk_shift - PAGE_SHIFT)];
		sh->dma[i] = ib_dma_map_page(ibdev, page, 0,
					     1U << sh->chunk_shift,
					     DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, sh->dma[i]))
			break;
		sh->nchunks = i + 1;
	}
	if (sh->nchunks == n)
		return 0;
	rmsg_data_shadow_unmap(sh);
	return -ENOMEM;
}

/* Once no device reads it any more. */
static void rmsg_data_shadow_unmap(struct rmsg_shadow *sh)
{
	u32 i;

	if (!sh || !sh->ibdev)
		return;
	for (i = 0; i < sh->nchunks; i++)
		ib_dma_unmap_page(sh->ibdev, sh->dma[i], 1U << sh->chunk_shift,
				  DMA_TO_DEVICE);
	sh->nchunks = 0;
	sh->ibdev = NULL;
}

static void rmsg_data_shadow_free(struct rmsg_channel *ch)
{
	struct rmsg_shadow *sh = ch->retain.shadow;

	if (!sh)
		return;
	rmsg_data_shadow_unmap(sh);
	if (sh->va)
		vunmap(sh->va);
	if (sh->pages)
		rmsg_pages_put(sh->pages);
	kfree(sh);
	ch->retain.shadow = NULL;
}

/**
 * rmsg_data_open() - start the data path of a channel that just opened
 * @ch: the channel; the caller holds ep->chan_lock and saw it become OPEN
 */
void rmsg_data_open(struct rmsg_channel *ch)
{
	u32 max = rmsg_vb_max_payload(ch->peer.block_size);

	mutex_lock(&ch->ep->lock);
	/* The hello was validated: the block size is good. */
	rmsg_vb_tx_init(&ch->tx, ch->peer.block_size, 0, 0);
	ch->max_msg = max;
	ch->tx_imm = ch->peer.flags & RMSG_HELLO_F_IMM_ARRIVAL;
	ch->tx_hint = ch->peer.flags & RMSG_HELLO_F_SUMMARY;
	/* A channel that ended first stays closed. */
	if (ch->tx_state == RMSG_TX_IDLE) {
		ch->tx_state = RMSG_TX_OPEN;
		ch->tx_live = true;
	}
	mutex_unlock(&ch->ep->lock);
}

/**
 * rmsg_data_suspend() - the data path between two connections
 * @ch: the channel, being repaired; its broken QP is drained and gone
 *
 * Sends are still taken and wait in the pending ring. What was in flight
 * on the old connection is forgotten: completions will not come for it,
 * control messages that were on their way are sent again after the
 * repair, and the peer says which records it lacks. The kernel's walk of
 * the receive block goes to the end of the records that arrived, which is
 * where the peer resumes writing.
 *
 * Rendezvous transfers are driven again too (rmsg_rndv_suspend()).
 *
 * Return: 0, or what the walk found wrong, or the errno of mapping a
 * rendezvous send again.
 */
int rmsg_data_suspend(struct rmsg_channel *ch)
{
	struct rmsg_rndv *r = &ch->rndv;
	u32 idx;
	int ret = 0;

	mutex_lock(&ch->ep->lock);
	ch->tx_live = false;
	list_del_init(&ch->wrs.sig_node);
	rmsg_wr_room_return(ch);
	ch->wrs.done = ch->wrs.posted;
	ch->wrs.signalled = ch->wrs.posted;
	ch->wrs.sig_owed = false;
	rmsg_ctrl_free_all(ch);
	rmsg_lease_down(ch);
	/*
	 * The hello of the next connection brings the peer's release counter;
	 * an older one from this connection would look like it went back.
	 * The peer sends its NOTIFY again if it still waits.
	 */
	clear_bit(RMSG_CHAN_CREDIT_IN, &ch->flags);
	clear_bit(RMSG_CHAN_NOTIFY_IN, &ch->flags);
	ch->flow.peer_armed = false;
	ch->flow.wake_due = false;
	ch->flow.credit_due = true;
	ch->flow.notify_due = ch->flow.armed;
	for (idx = ch->pending.posted;
	     !ret && idx != ch->pending.tail; idx++)
		if (ch->pending.ring[idx & RMSG_PEND_MASK].rndv)
			ret = rmsg_rndv_tx_rewind(
				ch,
				ch->pending.ring[idx & RMSG_PEND_MASK].rndv);
	if (!ret) {
		ret = rmsg_rndv_walk(ch);
		if (ret)
			pr_notice_ratelimited("channel %u: the receive block is not consistent (%d) after %u bytes\n",
					      ch->id, ret, r->krx.consumed);
	}
	if (!ret) {
		rmsg_rndv_suspend(ch);
		ch->repair.resume_arrived = r->krx.consumed;
		ch->repair.resume_seq = r->krx.seq;
	}
	mutex_unlock(&ch->ep->lock);
	return ret;
}

/**
 * rmsg_data_resume() - take the peer's view of our stream after a repair
 * @ch: the channel, suspended
 * @peer: the peer's hello on the new connection
 *
 * Return: 0, or -EPROTO when the peer's counters do not fit ours.
 */
int rmsg_data_resume(struct rmsg_channel *ch, const struct rmsg_hello *peer)
{
	struct rmsg_pending *e;
	u32 idx;
	int ret = 0;

	/*
	 * The first hellos on a link may have stood for the READYs; a
	 * repair's never do (a READY follows it).
	 */
	if (peer->block_size != ch->peer.block_size ||
	    (peer->flags ^ ch->peer.flags) &
		    ~(RMSG_HELLO_F_REKEY | RMSG_HELLO_F_READY) ||
	    peer->flags & RMSG_HELLO_F_READY) {
		pr_notice_ratelimited("channel %u: the peer's block changed across a repair\n",
				      ch->id);
		return -EPROTO;
	}
	mutex_lock(&ch->ep->lock);
	if (peer->flags & RMSG_HELLO_F_REKEY)
		rmsg_rndv_peer_moved(ch);
	/* After a move, sends not yet written register on the new device. */
	for (idx = ch->pending.posted;
	     !ret && idx != ch->pending.tail; idx++) {
		e = &ch->pending.ring[idx & RMSG_PEND_MASK];
		if (!e->rndv)
			continue;
		ret = rmsg_rndv_moved_send(ch, e->rndv);
		e->len = rmsg_rndv_tx_len(e->rndv);
	}
	if (ret) {
		mutex_unlock(&ch->ep->lock);
		return ret;
	}
	/* Leased: checked by the shadow only while a lease is held. */
	ret = ch->lease.on ? rmsg_lease_resume(ch, peer) : 1;
	if (!ret) {
		memset(&ch->retain.retx, 0, sizeof(ch->retain.retx));
	} else if (ret > 0) {
		ret = rmsg_vb_tx_resume(&ch->tx, ch->retain.shadow->va,
					peer->rx_freed, peer->rx_arrived,
					peer->rx_seq, &ch->retain.retx);
		if (ret)
			pr_notice_ratelimited("channel %u: the peer's resume point (released %u, arrived %u, seq %u) does not fit what was written (released %u, written %u, seq %u)\n",
					      ch->id, peer->rx_freed,
					      peer->rx_arrived, peer->rx_seq,
					      ch->tx.freed, ch->tx.written,
					      ch->tx.seq);
	}
	if (!ret) {
		pr_debug("channel %u: resumes at %u (seq %u), written %u (seq %u), released %u\n",
			 ch->id, peer->rx_arrived, peer->rx_seq, ch->tx.written,
			 ch->tx.seq, ch->tx.freed);
		/* No shadow: a leased end that never wrote has no RTS out. */
		ret = rmsg_rndv_resume(ch, peer->rx_arrived,
				       ch->retain.shadow ?
				       ch->retain.shadow->va : NULL);
	}
	if (!ret) {
		ch->retain.retx_due = ch->retain.retx.counter !=
				      ch->retain.retx.end;
		ch->peer.block_addr = peer->block_addr;
		/* A leased block's key comes with its GRANT, on every connection. */
		if (!ch->lease.on)
			ch->peer.block_rkey = peer->block_rkey;
		ch->peer.epoch = peer->epoch;
	}
	mutex_unlock(&ch->ep->lock);
	return ret;
}

/**
 * rmsg_data_reopen() - write again after a repair
 * @ch: the channel, resumed; the caller holds ep->chan_lock and saw it
 *	become OPEN again
 */
void rmsg_data_reopen(struct rmsg_channel *ch)
{
	mutex_lock(&ch->ep->lock);
	ch->tx_live = true;
	/* The peer took a hello that said so: it waits for our REKEY. */
	ch->rndv.rekey_hello = false;
	mutex_unlock(&ch->ep->lock);
	queue_work(rmsg_wq, &ch->data_work);
}

/**
 * rmsg_data_close() - stop taking sends, then stop writing
 * @ch: the channel, being torn down
 * @drain: orderly close: first write what is pending, for at most
 *	close_drain_ms
 */
void rmsg_data_close(struct rmsg_channel *ch, bool drain)
{
	struct rmsg_endpoint *ep = ch->ep;

	mutex_lock(&ep->lock);
	ch->tx_state = ch->tx_state == RMSG_TX_OPEN ? RMSG_TX_CLOSING :
						      RMSG_TX_CLOSED;
	ch->pending.close = ch->pending.tail;
	mutex_unlock(&ep->lock);
	if (drain)
		wait_event_timeout(ch->tx_wq,
				   (READ_ONCE(ch->pending.posted) ==
				    ch->pending.close &&
				    rmsg_rndv_idle(ch)) ||
				   !READ_ONCE(ch->tx_live) ||
				   READ_ONCE(ch->soft_error) <= 0,
				   msecs_to_jiffies(close_drain_ms));
	mutex_lock(&ep->lock);
	ch->tx_live = false;
	list_del_init(&ch->wrs.sig_node);
	/* It reserves no more (tx_live): what it holds goes back. */
	rmsg_wr_room_return(ch);
	mutex_unlock(&ep->lock);
}

/**
 * rmsg_data_close_sent() - wait until the CLOSE or RESET just posted left
 * @ch: the channel, being torn down
 *
 * Its send waits behind what the QP took before it: with rendezvous
 * READs in flight, megabytes that a slow device (rxe under emulation)
 * answers in seconds, and a peer that never gets a RESET repairs the
 * channel until it gives up. So while the sends ahead still complete it
 * waits on, up to close_drain_ms; a QP that completed nothing for a fifth
 * of that (a second by default) is given up on. The window scales with
 * the limit: a slower kernel (lockdep and KASAN under emulation took
 * over a second for a megabyte's READ) is given a longer drain, and each
 * work request ahead takes longer there too.
 */
void rmsg_data_close_sent(struct rmsg_channel *ch)
{
	unsigned long limit = msecs_to_jiffies(close_drain_ms);
	unsigned long end = jiffies + limit, window = max(limit / 5, 1UL);
	u32 done = READ_ONCE(ch->wrs.done), now;

	while (!wait_for_completion_timeout(&ch->close_sent, window)) {
		now = READ_ONCE(ch->wrs.done);
		if (now == done || time_after(jiffies, end))
			return;
		done = now;
	}
}

/**
 * rmsg_data_dev_release() - the data path leaves its device
 * @ch: the channel; its QP is drained and gone, so no device touches the
 *	memory any more
 *
 * Undoes rmsg_data_dev_create(), and drops what rendezvous transfers hold
 * on the device; the memory itself stays.
 */
void rmsg_data_dev_release(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_pending *e;
	u32 idx;
	int i;

	/* Rendezvous sends not yet written hold registrations too. */
	mutex_lock(&ch->ep->lock);
	for (idx = ch->pending.posted;
	     ch->pending.ring && idx != ch->pending.tail; idx++) {
		e = &ch->pending.ring[idx & RMSG_PEND_MASK];
		if (e->rndv)
			rmsg_rndv_tx_release(ch, e->rndv);
	}
	/* With no gap in which a new send could register on the device. */
	rmsg_rndv_release(ch);
	mutex_unlock(&ch->ep->lock);
	if (ch->dev.trailers_dma)
		ib_dma_unmap_single(ibdev, ch->dev.trailers_dma,
				    RMSG_TRAILER_ENTRIES *
				    sizeof(*ch->wrs.trailers), DMA_TO_DEVICE);
	ch->dev.trailers_dma = 0;
	if (ch->dev.area_map)
		rmsg_area_map_put(ch->ep, ch->dev.area_map);
	ch->dev.area_map = NULL;
	rmsg_data_shadow_unmap(ch->retain.shadow);
	for (i = 0; ch->dev.imm_bufs && i < RMSG_IMM_RECVS; i++)
		rmsg_ctrl_buf_exit(ch, &ch->dev.imm_bufs[i], true);
}

/**
 * rmsg_data_finish() - post the CQE of every send still owed one
 * @ch: the channel; drained, and its work item cancelled
 * @error: for sends that were not written
 * @all_written: every posted write is known to have completed (the CLOSE
 *	after them did), signalled or not
 */
void rmsg_data_finish(struct rmsg_channel *ch, int error, bool all_written)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rmsg_pending *e;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
	};
	u32 done;

	mutex_lock(&ep->lock);
	/* With a shadow, whatever was written had been copied. */
	done = all_written || ch->retain.shadow ?
		       ch->pending.posted :
		       READ_ONCE(ch->pending.done);
	for (; ch->pending.head != ch->pending.tail;
	     ch->pending.head++) {
		e = &ch->pending.ring[ch->pending.head & RMSG_PEND_MASK];
		/* Written RTS records: the transfer posts its CQE itself. */
		if (e->rndv &&
		    (s32)(ch->pending.head - ch->pending.posted) < 0)
			continue;
		cqe.user_data = e->user_data;
		cqe.res = (s32)(done - ch->pending.head) > 0 ? 0 : error;
		cqe.len = e->len;
		cqe.aux = e->off;
		if (e->rndv) {
			cqe.res = error;
			rmsg_rndv_tx_cqe(e->rndv, &cqe);
			rmsg_rndv_tx_free(ch, e->rndv);
			e->rndv = NULL;
		}
		rmsg_ep_post_cqe_locked(ep, &cqe, true);
	}
	rmsg_rndv_finish(ch, error);
	ch->tx_state = RMSG_TX_CLOSED;
	mutex_unlock(&ep->lock);
}

void rmsg_data_free(struct rmsg_channel *ch)
{
	rmsg_data_shadow_free(ch);
	kfree(ch->dev.imm_bufs);
	if (ch->pending.ring)
		kmem_cache_free(rmsg_pending_cache, ch->pending.ring);
	ch->pending.ring = NULL;
	/* The trailers are in the same object. */
	if (ch->wrs.slots)
		kmem_cache_free(rmsg_tx_cache, ch->wrs.slots);
	ch->wrs.slots = NULL;
	ch->wrs.trailers = NULL;
}

/* --- control messages --------------------------------------------------- */

/* Send what is due and whose buffer is free. Under ep->lock. */
static void rmsg_data_send_ctrls(struct rmsg_channel *ch)
{
	static const struct {
		unsigned int buf;
		u8 type;
	} kinds[] = {
		{ RMSG_CTRL_CREDIT_BUF, RMSG_CTRL_CREDIT },
		{ RMSG_CTRL_NOTIFY_BUF, RMSG_CTRL_NOTIFY },
		{ RMSG_CTRL_WAKE_BUF, RMSG_CTRL_WAKE },
	};
	bool *due[] = { &ch->flow.credit_due, &ch->flow.notify_due,
			&ch->flow.wake_due };
	u32 args[] = { ch->flow.credit, ch->flow.notify, 0 };
	unsigned int i;
	int ret;

	if (!ch->tx_live)
		return;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!*due[i])
			continue;
		ret = rmsg_ctrl_try_send(ch, kinds[i].buf, kinds[i].type,
					 args[i]);
		if (ret == -EAGAIN)
			continue;
		*due[i] = false;
		if (ret) {
			rmsg_chan_kill_soft(ch, ret);
			return;
		}
		if (kinds[i].type == RMSG_CTRL_CREDIT)
			rmsg_ep_count(ch->ep, RMSG_STAT_CREDITS_OUT);
		else if (kinds[i].type == RMSG_CTRL_WAKE)
			rmsg_ep_count(ch->ep, RMSG_STAT_WAKES_OUT);
	}
}

/* CREDIT, NOTIFY or WAKE arrived, with its validated @arg (softirq). */
static void rmsg_data_ctrl_in(struct rmsg_channel *ch, u8 type, u64 arg)
{
	switch (type) {
	case RMSG_CTRL_CREDIT:
		rmsg_ep_count(ch->ep, RMSG_STAT_CREDITS_IN);
		WRITE_ONCE(ch->flow.peer_freed, arg);
		/* Value, then bit; the work's test_and_clear_bit() pairs. */
		smp_mb__before_atomic();
		set_bit(RMSG_CHAN_CREDIT_IN, &ch->flags);
		break;
	case RMSG_CTRL_NOTIFY:
		WRITE_ONCE(ch->flow.peer_consumed, arg);
		/* Value, then bit, as for CREDIT. */
		smp_mb__before_atomic();
		set_bit(RMSG_CHAN_NOTIFY_IN, &ch->flags);
		break;
	case RMSG_CTRL_WAKE:
		rmsg_ep_count(ch->ep, RMSG_STAT_WAKES_IN);
		set_bit(RMSG_CHAN_WAKE_IN, &ch->flags);
		break;
	}
	queue_work(rmsg_wq, &ch->data_work);
}

/**
 * rmsg_data_init_module() - at module load: the control messages of the
 *	data path, and the caches of every channel's send-side memory
 *
 * The pending ring (6 KiB) and the WR slots with the trailers (3.5 KiB)
 * are each a cache of their own, sized to fit: as kmalloc()s they took
 * 8 KiB, and 4 plus 2 KiB, of the 16 KiB issue 37 gives an idle channel
 * end. Named, so that /proc/slabinfo says what the channels hold, and
 * charged to the opener's memory cgroup as GFP_KERNEL_ACCOUNT was.
 *
 * Return: 0 or -ENOMEM.
 */
int __init rmsg_data_init_module(void)
{
	rmsg_pending_cache = kmem_cache_create("rmsg_pending",
					       RMSG_CHAN_MAX_PENDING *
					       sizeof(struct rmsg_pending),
					       0, SLAB_ACCOUNT, NULL);
	rmsg_tx_cache = kmem_cache_create("rmsg_tx", RMSG_TX_MEM_SIZE, 0,
					  SLAB_ACCOUNT, NULL);
	if (!rmsg_pending_cache || !rmsg_tx_cache) {
		rmsg_data_exit_module();
		return -ENOMEM;
	}
	rmsg_ctrl_on_recv(RMSG_CTRL_CREDIT, rmsg_data_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_NOTIFY, rmsg_data_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_WAKE, rmsg_data_ctrl_in, false);
	rmsg_ctrl_on_imm(rmsg_data_imm_in);
	return 0;
}

/* At module unload, every channel gone (or at a failed load). */
void rmsg_data_exit_module(void)
{
	kmem_cache_destroy(rmsg_tx_cache);
	kmem_cache_destroy(rmsg_pending_cache);
}

static u32 rmsg_data_pend_end(const struct rmsg_channel *ch)
{
	return ch->tx_state >= RMSG_TX_CLOSING ? ch->pending.close :
						 ch->pending.tail;
}

/*
 * Write pending sends in order while credit and the send queue allow.
 * @more: the caller knows another send of the channel follows at once.
 * Returns what rmsg_data_write() returned for the last one tried.
 */
static int rmsg_data_push(struct rmsg_channel *ch, bool more, bool cqe_now)
{
	u32 written = ch->tx.written;
	bool rewritten = false;
	int ret = -EAGAIN;

	if (ch->tx_live && (ch->retain.retx_due || rmsg_rndv_rereg_due(ch))) {
		ret = rmsg_rndv_rereg(ch);
		/* A leased block: the new connection's GRANT gives its key. */
		if (!ret && ch->retain.retx_due)
			ret = rmsg_lease_may_write(ch) ? rmsg_data_rewrite(ch) :
							 -EAGAIN;
		if (ret && ret != -EAGAIN) {
			ch->tx_live = false;
			rmsg_chan_kill_soft(ch, ret);
		}
		if (ret)
			return -EAGAIN;
		rewritten = true;
	}

	while (ch->tx_live &&
	       ch->pending.posted != rmsg_data_pend_end(ch)) {
		/*
		 * A leased block: written only under a lease. The shadow
		 * first (no GRANT then waits for an allocation), then the ASK.
		 */
		if (!rmsg_lease_may_write(ch)) {
			ret = rmsg_data_shadow_make(ch);
			if (ret) {
				ch->tx_live = false;
				rmsg_chan_kill_soft(ch, ret);
				break;
			}
			rmsg_lease_want(ch);
			ret = -EAGAIN;
			break;
		}
		ret = rmsg_data_write(ch, ch->pending.posted,
				      more || ch->pending.posted + 1 !=
						      ch->pending.tail,
				      cqe_now && ch->pending.posted ==
							 ch->pending.head);
		if (ret == -EAGAIN)
			break;
		if (ret < 0) {
			ch->tx_live = false;
			rmsg_chan_kill_soft(ch, ret);
			break;
		}
		ch->pending.posted++;
		/* The write just made goes to a peer that asked to be woken. */
		if (ch->flow.peer_armed) {
			ch->flow.peer_armed = false;
			ch->flow.wake_due = true;
		}
	}
	/*
	 * Records went, new or written again after a repair (the peer may
	 * have cleared its bytes since): one hint behind them all.
	 */
	if (rewritten || ch->tx.written != written)
		rmsg_data_hint(ch);
	/*
	 * Only a draining close waits here; wq_has_sleeper()'s barrier
	 * orders the index above against its look after it queued.
	 */
	if (ch->pending.posted == rmsg_data_pend_end(ch) &&
	    wq_has_sleeper(&ch->tx_wq))
		wake_up(&ch->tx_wq);
	if (ch->flow.wake_due)
		rmsg_data_send_ctrls(ch);
	return ret;
}

static void rmsg_data_take_credit(struct rmsg_channel *ch)
{
	if (!test_and_clear_bit(RMSG_CHAN_CREDIT_IN, &ch->flags))
		return;
	if (rmsg_vb_tx_credit(&ch->tx, READ_ONCE(ch->flow.peer_freed))) {
		pr_notice_ratelimited(
			"channel %u: the peer released %u, but %u were released and %u written\n",
			ch->id, READ_ONCE(ch->flow.peer_freed), ch->tx.freed,
			ch->tx.written);
		rmsg_chan_kill_soft(ch, -EPROTO);
	}
}

/*
 * Post the CQEs of sends whose bytes are done with: copied into the
 * shadow, or else read by the device.
 */
static void rmsg_data_post_done(struct rmsg_channel *ch)
{
	struct rmsg_pending *e;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
	};
	u32 done;

	/*
	 * With a shadow, whatever was written had been copied; else the
	 * device is done with a send's bytes when its write completed.
	 */
	if (ch->retain.shadow)
		done = ch->pending.posted;
	else /* Pairs with the completion's release of pending.done. */
		done = smp_load_acquire(&ch->pending.done);
	for (; (s32)(done - ch->pending.head) > 0;
	     ch->pending.head++) {
		e = &ch->pending.ring[ch->pending.head & RMSG_PEND_MASK];
		/* An RTS is written; its transfer completes on the FIN. */
		if (e->rndv) {
			e->rndv = NULL;
			continue;
		}
		cqe.user_data = e->user_data;
		cqe.len = e->len;
		cqe.aux = e->off;
		rmsg_ep_post_cqe_locked(ch->ep, &cqe, true);
	}
}

/* Everything the completion handlers left for process context. */
static void rmsg_data_progress(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rmsg_cqe cqe = {
		.channel	= ch->id,
	};

	/* This run looks for room: a request made before it is answered. */
	WRITE_ONCE(ch->wrs.room_wanted, false);
	/* Before the push: a GRANT may let what waits be written. */
	rmsg_lease_progress(ch);
	rmsg_data_take_credit(ch);
	rmsg_data_post_done(ch);
	rmsg_rndv_progress(ch);
	if (test_and_clear_bit(RMSG_CHAN_NOTIFY_IN, &ch->flags)) {
		/* Written beyond what the peer had read: wake it now. */
		if (ch->tx.written != READ_ONCE(ch->flow.peer_consumed))
			ch->flow.wake_due = true;
		else
			ch->flow.peer_armed = true;
	}
	/* A WAKE the program did not arm for (a peer may send any) is dropped. */
	if (test_and_clear_bit(RMSG_CHAN_WAKE_IN, &ch->flags) &&
	    ch->flow.armed) {
		ch->flow.armed = false;
		memset(&cqe, 0, sizeof(cqe));
		cqe.user_data = ch->flow.arm_user_data;
		cqe.flags = RMSG_CQE_READABLE;
		cqe.channel = ch->id;
		rmsg_ep_post_cqe_locked(ep, &cqe, false);
	}
	rmsg_data_push(ch, false, false);
	/* Sends just copied into the shadow are done with. */
	if (ch->retain.shadow)
		rmsg_data_post_done(ch);
	rmsg_data_send_ctrls(ch);
	rmsg_data_flush_signal(ch);
}

/**
 * rmsg_data_batch_end() - signal what a batch of SQEs left unsignalled, and
 *	give back the link send queue room it reserved and did not post
 * @ep: the endpoint; the caller holds ep->lock
 */
void rmsg_data_batch_end(struct rmsg_endpoint *ep)
{
	struct rmsg_channel *ch, *tmp;

	list_for_each_entry_safe(ch, tmp, &ep->sig_owed, wrs.sig_node) {
		list_del_init(&ch->wrs.sig_node);
		rmsg_data_flush_signal(ch);
	}
	/* On a link: the room the batch reserved and did not post. */
	rmsg_wr_room_return_all(ep);
}

void rmsg_data_work(struct work_struct *work)
{
	struct rmsg_channel *ch =
		container_of(work, struct rmsg_channel, data_work);
	struct mem_cgroup *old = rmsg_ep_charge_begin(ch->ep);

	mutex_lock(&ch->ep->lock);
	rmsg_data_progress(ch);
	rmsg_wr_room_return(ch);
	mutex_unlock(&ch->ep->lock);
	rmsg_ep_charge_end(old);
}

/* --- the program's operations -------------------------------------------- */

/*
 * A channel's pending ring (6 KiB) is made by its first SEND or SEND_RNDV,
 * not at open: an idle end keeps that much less, and an open allocates,
 * so zeroes, that much less (Debian's kernels zero every allocation).
 * Until then head, posted, done and tail are equal, so no loop over the
 * ring reads it. Made and freed under ep->lock, which its readers hold;
 * charged to the opener's memory cgroup, as the channel is, whoever
 * submits (the kernel poller too).
 *
 * Return: 0 or -ENOMEM.
 */
static int rmsg_data_pending_make(struct rmsg_channel *ch)
{
	struct mem_cgroup *old;

	lockdep_assert_held(&ch->ep->lock);
	if (likely(ch->pending.ring))
		return 0;
	old = rmsg_ep_charge_begin(ch->ep);
	ch->pending.ring = kmem_cache_zalloc(rmsg_pending_cache,
					     RMSG_GFP_CHARGED);
	rmsg_ep_charge_end(old);
	return ch->pending.ring ? 0 : -ENOMEM;
}

static int rmsg_data_send(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
			  const struct rmsg_sqe *sqe,
			  const struct rmsg_sqe *next, struct rmsg_cqe *cqe)
{
	bool more = next && next->opcode == RMSG_OP_SEND &&
		    next->channel == sqe->channel;
	struct rmsg_pending *e;
	u32 idx;
	int ret;

	if (!ep->area || sqe->addr > ep->area_size ||
	    sqe->len > ep->area_size - sqe->addr)
		return -EFAULT;
	if (sqe->len > ch->max_msg)
		return -EMSGSIZE;
	if (ch->pending.tail - ch->pending.head >=
	    RMSG_CHAN_MAX_PENDING)
		return -ENOBUFS;
	rmsg_data_take_credit(ch);

	rmsg_ep_count(ep, RMSG_STAT_SENDS);
	idx = ch->pending.tail++;
	e = &ch->pending.ring[idx & RMSG_PEND_MASK];
	e->user_data = sqe->user_data;
	e->off = sqe->addr;
	e->len = sqe->len;
	e->rndv = NULL;
	ret = rmsg_data_push(ch, more, true);
	if (ch->pending.posted != ch->pending.tail)
		rmsg_ep_count(ep, RMSG_STAT_SEND_WAITS);
	/* If the next SQE does not write after all, the batch end signals. */
	if (ch->wrs.sig_owed && list_empty(&ch->wrs.sig_node))
		list_add_tail(&ch->wrs.sig_node, &ep->sig_owed);
	/* Inline, and nothing older owed: the device has the bytes already. */
	if (ret == 1 && ch->pending.head == idx &&
	    ch->pending.posted == idx + 1) {
		ch->pending.head++;
		cqe->len = sqe->len;
		cqe->aux = sqe->addr;
		return 1;
	}
	ep->cq_reserved++;
	/* Copied into the shadow with older ones: the work posts the CQEs. */
	if (ch->retain.shadow &&
	    ch->pending.head != ch->pending.posted)
		queue_work(rmsg_wq, &ch->data_work);
	return 0;
}

/* Queue a SEND_RNDV's RTS behind the channel's other sends. */
static int rmsg_data_send_rndv(struct rmsg_endpoint *ep,
			       struct rmsg_channel *ch,
			       const struct rmsg_sqe *sqe)
{
	struct rmsg_pending *e;
	int ret;

	if (ch->pending.tail - ch->pending.head >=
	    RMSG_CHAN_MAX_PENDING)
		return -ENOBUFS;
	e = &ch->pending.ring[ch->pending.tail & RMSG_PEND_MASK];
	ret = rmsg_rndv_send(ep, ch, sqe, e);
	if (ret)
		return ret;
	rmsg_ep_count(ep, RMSG_STAT_SENDS);
	ch->pending.tail++;
	ep->cq_reserved++;
	rmsg_data_take_credit(ch);
	rmsg_data_push(ch, false, false);
	return 0;
}

/**
 * rmsg_data_exec() - run a SEND, CREDIT or ARM
 * @ep: the endpoint; the caller holds ep->lock and has room in the
 *	completion ring for one more CQE than ep->cq_reserved
 * @sqe: the kernel's copy of the SQE; flags and reserved fields checked
 * @next: a copy of the SQE after it, or NULL
 * @cqe: filled in when the return value says so; user_data and channel
 *	are set already
 *
 * Return: whether *@cqe is to be posted now.
 */
bool rmsg_data_exec(struct rmsg_endpoint *ep, const struct rmsg_sqe *sqe,
		    const struct rmsg_sqe *next, struct rmsg_cqe *cqe)
{
	struct rmsg_channel *ch = xa_load(&ep->channels, sqe->channel);
	struct rmsg_pending *e;
	int ret = 0;

	lockdep_assert_held(&ep->lock);
	if (ch && ch->tx_state != RMSG_TX_CLOSED &&
	    (sqe->opcode == RMSG_OP_SEND ||
	     sqe->opcode == RMSG_OP_SEND_RNDV)) {
		ret = rmsg_data_pending_make(ch);
		if (ret)
			goto out;
	}
	/*
	 * A send, eager or rendezvous, on a channel that is ending completes,
	 * with the channel's error, behind the sends it took before: CQEs of
	 * a channel's sends stay in order. (Past a full pending ring, which
	 * librmsg never fills, it fails at once as on an open channel.)
	 */
	if (ch && ch->tx_state == RMSG_TX_CLOSING &&
	    (sqe->opcode == RMSG_OP_SEND ||
	     sqe->opcode == RMSG_OP_SEND_RNDV) &&
	    ch->pending.tail - ch->pending.head <
		    RMSG_CHAN_MAX_PENDING) {
		e = &ch->pending.ring[ch->pending.tail++ & RMSG_PEND_MASK];
		e->user_data = sqe->user_data;
		e->off = sqe->addr;
		e->len = sqe->len;
		e->rndv = NULL;
		ep->cq_reserved++;
		return false;
	}
	if (!ch || ch->tx_state != RMSG_TX_OPEN) {
		ret = -ENOTCONN;
		goto out;
	}
	switch (sqe->opcode) {
	case RMSG_OP_SEND:
		ret = rmsg_data_send(ep, ch, sqe, next, cqe);
		if (ret >= 0)
			return ret;
		break;
	case RMSG_OP_CREDIT:
		if (sqe->len || sqe->addr >> 32) {
			ret = -EINVAL;
			break;
		}
		/* RTS records go before the peer may overwrite them. */
		rmsg_rndv_collect(ch);
		/* Only a newer count means anything to the peer. */
		if ((s32)((u32)sqe->addr - ch->flow.credit) > 0) {
			ch->flow.credit = sqe->addr;
			ch->flow.credit_due = true;
			rmsg_data_send_ctrls(ch);
		}
		return false;
	case RMSG_OP_SEND_RNDV:
		/*
		 * Between devices it waits unregistered, as an eager send
		 * waits; the next device registers it. A channel that never
		 * had one that does rendezvous has nothing to go by.
		 */
		ret = ch->dev.rdev || ch->rndv.seg_shift ?
			      rmsg_data_send_rndv(ep, ch, sqe) :
			      -EAGAIN;
		if (!ret)
			return false;
		break;
	case RMSG_OP_RECV_RNDV:
		/* Answering needs no device: the reads wait for one. */
		ret = rmsg_rndv_recv(ep, ch, sqe);
		if (!ret) {
			/*
			 * The reads start in the work item: progress may post
			 * CQEs, which must not go in while this batch of
			 * SQEs is posting its own.
			 */
			queue_work(rmsg_wq, &ch->data_work);
			return false;
		}
		/* Its len and aux say which message it answered. */
		cqe->aux = sqe->aux;
		goto out_any;
	case RMSG_OP_ARM:
		if (sqe->len || sqe->addr >> 32) {
			ret = -EINVAL;
			break;
		}
		ch->flow.notify = sqe->addr;
		ch->flow.notify_due = true;
		ch->flow.arm_user_data = sqe->user_data;
		ch->flow.armed = true;
		rmsg_data_send_ctrls(ch);
		return false;
	}
out:
	if (ret == -EINVAL)
		atomic_long_inc(&ep->bad_desc);
	/* A failed SEND's CQE still tells which bytes it was given. */
	if (sqe->opcode == RMSG_OP_SEND || sqe->opcode == RMSG_OP_SEND_RNDV) {
		cqe->len = sqe->len;
		cqe->aux = sqe->addr;
	}
out_any:
	cqe->res = ret;
	return true;
}
