// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: channels as the program sees them: its requests (listen, connect,
 * accept, close, settings, addresses), a channel's birth, its work, its
 * end, and what devices coming and going do to channels.
 *
 * The files of a channel, each calling only the ones below it:
 *
 *   rmsg_listen.c     listeners and the requests they hear
 *   rmsg_channel.c    this file
 *   rmsg_repair.c     the steps of a repair
 *   rmsg_cm.c         the rdma_cm events of a channel's ids
 *   rmsg_lifecycle.c  states, phases, ends and faults (the diagrams)
 *   rmsg_conn.c       the connection's verbs resources, control messages
 *   rmsg_data.c, rmsg_rndv*.c, rmsg_devices.c, core/
 *
 * Locking and lifetime:
 *  - ep->chan_lock guards the endpoint's channel table, its listener and
 *    every channel's state. It is never held across a call that waits for
 *    an rdma_cm handler (rdma_destroy_id, rdma_disconnect), since handlers
 *    take it.
 *  - rdma_cm handlers run in process context, one at a time per cm_id;
 *    completions run in softirq and only set bits and queue work (never
 *    rmsg_chan_kill(), which takes chan_lock: rmsg_chan_kill_soft()).
 *  - A channel is freed by its teardown work only, after rmsg_cm_settle()
 *    has waited out the handlers running for its own id (counted in
 *    cm_busy) and rdma_destroy_id() any other handler of its ids.
 *  - An id whose route query is under way is not destroyed by rmsg (the
 *    rdma_cm's device removal would race with it): rmsg_cm_give_back().
 *  - Device removal (rmsg_ib_remove) and endpoint release kill their
 *    channels and wait until the teardown of each is done.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_cm.c,
 * rmsg_conn.c, rmsg_data.c, rmsg_devices.c, rmsg_lifecycle.c,
 * rmsg_pages.c, rmsg_repair.c, rmsg_user.c, rmsg_window.c and
 * rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/pfn_t.h>
#include <linux/pgtable.h>
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
#include "rmsg_cm.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_repair.h"
#include "rmsg_trace.h"

static unsigned int block_size = 32768;
module_param(block_size, uint, 0644);
MODULE_PARM_DESC(block_size,
		 "Default receive block per channel in bytes (default 32768)");

/*
 * From 1 to RMSG_MAX_CHANNELS: 0 would make the id limit (max_channels - 1)
 * wrap to no limit at all, and ids past RMSG_MAX_CHANNELS have no receive
 * block offset (RMSG_OFF_BLOCK()).
 */
static int max_channels_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, RMSG_MAX_CHANNELS);
}

static const struct kernel_param_ops max_channels_ops = {
	.set	= max_channels_set,
	.get	= param_get_uint,
};

static unsigned int max_channels = RMSG_MAX_CHANNELS;
module_param_cb(max_channels, &max_channels_ops, &max_channels, 0644);
MODULE_PARM_DESC(max_channels,
		 "Channels per endpoint at most, 1 to 65536 (default 65536)");

static void rmsg_chan_progress(struct work_struct *work);
static void rmsg_chan_teardown(struct work_struct *work);

/*
 * Channels come from a cache of their own: an idle channel on a link is
 * mostly this structure, which kmalloc would round up to 4 KiB (and
 * Debian's kernels zero whole, init_on_alloc).
 */
static struct kmem_cache *rmsg_chan_cache;

/**
 * rmsg_chan_zalloc() - a channel, zeroed, without a connection
 *
 * Charged to the current memory cgroup. For an accept, whose connection
 * comes with its rdma_cm id once the request is read; rmsg_chan_alloc()
 * for the rest.
 *
 * Return: the channel, or NULL.
 */
struct rmsg_channel *rmsg_chan_zalloc(void)
{
	return kmem_cache_zalloc(rmsg_chan_cache, RMSG_GFP_CHARGED);
}

/**
 * rmsg_chan_alloc() - a channel and its first connection, zeroed
 *
 * For a dial and for an accept on a link, whose connection has no rdma_cm
 * id yet (or never has one). Charged to the current memory cgroup; the
 * caller goes on with rmsg_chan_init(), or gives both back with
 * rmsg_chan_alloc_undo() before it is published.
 *
 * Return: the channel, or NULL.
 */
struct rmsg_channel *rmsg_chan_alloc(void)
{
	struct rmsg_channel *ch = rmsg_chan_zalloc();

	if (!ch)
		return NULL;
	ch->conn = rmsg_conn_new(NULL);
	if (!ch->conn) {
		rmsg_chan_alloc_undo(ch);
		return NULL;
	}
	return ch;
}

/*
 * A channel never published, or at its end: its connection (if any), its
 * control buffers (if any) and itself go.
 */
void rmsg_chan_alloc_undo(struct rmsg_channel *ch)
{
	kfree(ch->dev.ctrl);
	kfree(ch->conn);
	kmem_cache_free(rmsg_chan_cache, ch);
}

int __init rmsg_chan_init_module(void)
{
	rmsg_chan_cache = KMEM_CACHE(rmsg_channel, SLAB_ACCOUNT);
	return rmsg_chan_cache ? 0 : -ENOMEM;
}

/* At module unload, every channel gone (or at a failed load). */
void rmsg_chan_exit_module(void)
{
	kmem_cache_destroy(rmsg_chan_cache);
}

void rmsg_chan_init(struct rmsg_channel *ch, struct rmsg_endpoint *ep,
			   enum rmsg_chan_state state, u64 user_data,
			   u32 size)
{
	ch->cm.kind = RMSG_CM_CHANNEL;
	ch->ep = ep;
	ch->state = state;
	ch->active = state == RMSG_CHAN_CONNECTING;
	ch->soft_error = 1;
	ch->user_data = user_data;
	ch->block_size = size;
	INIT_LIST_HEAD(&ch->dev.dev_node);
	init_completion(&ch->close_sent);
	spin_lock_init(&ch->dev.post_lock);
	INIT_WORK(&ch->work, rmsg_chan_progress);
	INIT_WORK(&ch->teardown, rmsg_chan_teardown);
	INIT_WORK(&ch->data_work, rmsg_data_work);
	rmsg_chan_timers_init(ch);
	init_waitqueue_head(&ch->tx_wq);
	init_waitqueue_head(&ch->cm_wq);
	INIT_LIST_HEAD(&ch->wrs.sig_node);
	INIT_LIST_HEAD(&ch->wrs.share_node);
	INIT_LIST_HEAD(&ch->wrs.held_node);
}

/*
 * The oldest id held back is free for a new channel, unless the block
 * window holds it (rmsg_window_held()): then it stays reserved until
 * RMSG_IOC_CHAN_DROP lets it go (rmsg_chan_drop_one()). Under chan_lock.
 */
static void rmsg_id_unquarantine(struct rmsg_endpoint *ep)
{
	u32 id = ep->quarantine[ep->quarantine_head];

	ep->quarantine_head = (ep->quarantine_head + 1) % RMSG_ID_QUARANTINE;
	ep->quarantine_len--;
	if (!rmsg_window_held(ep, id))
		xa_release(&ep->channels, id);
}

/* Is @id among those held back? Under chan_lock. */
static bool rmsg_id_quarantined(struct rmsg_endpoint *ep, u32 id)
{
	u32 i;

	for (i = 0; i < ep->quarantine_len; i++)
		if (ep->quarantine[(ep->quarantine_head + i) %
				   RMSG_ID_QUARANTINE] == id)
			return true;
	return false;
}

/*
 * rmsg_id_quarantine() - the id of a channel whose end the program is told
 * of stays reserved for RMSG_ID_QUARANTINE more such ends
 * @ep: the endpoint, chan_lock held
 * @id: the ended channel's id, still holding the channel
 *
 * The program may name the channel (close it, send on it) before it reads
 * the end: were the id free at once, a channel accepted or dialled
 * meanwhile would take it and the program would close or write to that
 * one instead. Storing NULL in an allocating xarray keeps the index
 * allocated, and no lookup finds it.
 */
static void rmsg_id_quarantine(struct rmsg_endpoint *ep, u32 id)
{
	if (ep->quarantine_len == RMSG_ID_QUARANTINE)
		rmsg_id_unquarantine(ep);
	/* Replacing an entry allocates nothing: it cannot fail. */
	xa_store(&ep->channels, id, NULL, GFP_KERNEL);
	ep->quarantine[(ep->quarantine_head + ep->quarantine_len) %
		       RMSG_ID_QUARANTINE] = id;
	ep->quarantine_len++;
}

/*
 * Give the channel its id; refused once the endpoint is being released,
 * when the endpoint has max_channels (-ENOSPC) or its user
 * max_channels_per_user (-EDQUOT). Ids held back (rmsg_id_quarantine())
 * are given again, oldest first, only when no other is free; ids the
 * block window holds never are (-ENOSPC when only those are left). From
 * here on rmsg_chan_free() undoes it.
 */
int rmsg_chan_publish(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	int ret;

	mutex_lock(&ep->chan_lock);
	if (ep->dying) {
		ret = -ESHUTDOWN;
	} else if (!rmsg_user_chan_add(ep)) {
		ret = -EDQUOT;
	} else {
		while ((ret = xa_alloc(&ep->channels, &ch->id, ch,
				       XA_LIMIT(0, max_channels - 1),
				       RMSG_GFP_CHARGED)) == -EBUSY &&
		       ep->quarantine_len)
			rmsg_id_unquarantine(ep);
		if (ret == -EBUSY)
			ret = -ENOSPC;
		if (ret)
			rmsg_user_chan_del(ep);
	}
	if (!ret)
		atomic_inc(&ep->nr_channels);
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/**
 * rmsg_chan_inject() - inject a fault into a channel (RMSG_IOC_FAULT)
 * @ch: the channel
 * @kind: enum rmsg_fault_kind
 * @arg: RMSG_FAULT_LINK_PROBE's count (checked by the caller)
 *
 * Caller holds ep->chan_lock, so nothing here may wait for an rdma_cm
 * handler.
 *
 * Return: 0, -ENOTCONN when the channel is not open, -EINVAL for an
 * unknown kind, -EPERM for a QP error on a link without CAP_NET_ADMIN,
 * -EOPNOTSUPP for a probe of a channel that is no carrier,
 * what rmsg_carrier_probe() returns, or what ib_modify_qp() returns for a
 * QP error or a disconnect (which take effect before this returns).
 */
int rmsg_chan_inject(struct rmsg_channel *ch, u32 kind, u64 arg)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_ERR,
	};
	int ret;

	lockdep_assert_held(&ch->ep->chan_lock);
	switch (kind) {
	case RMSG_FAULT_QP_ERROR:
		/*
		 * On a link the QP is the carrier's: its error breaks the
		 * connection of every channel on the link, of every user, as
		 * a device's fatal error does (rmsg_ctl_fault()); all are
		 * repaired with the link.
		 */
		if (ch->lchan && !capable(CAP_NET_ADMIN))
			return -EPERM;
		if (ch->state != RMSG_CHAN_OPEN || !rmsg_chan_qp(ch))
			return -ENOTCONN;
		return ib_modify_qp(ch->conn->qp, &attr, IB_QP_STATE);
	case RMSG_FAULT_DISCONNECT:
		/* On a link there is no connection of its own to drop. */
		if (ch->lchan)
			return -EOPNOTSUPP;
		if (ch->state != RMSG_CHAN_OPEN || !rmsg_chan_qp(ch))
			return -ENOTCONN;
		/*
		 * The connection carries nothing more once this returns, as
		 * rdma_disconnect() would leave it: its QP is in error first.
		 * The DREQ, which may not be sent under chan_lock, follows
		 * from the work, or from the repair's first step if that
		 * comes first.
		 */
		ret = ib_modify_qp(ch->conn->qp, &attr, IB_QP_STATE);
		if (ret)
			return ret;
		set_bit(RMSG_CHAN_DISCONNECT_DUE, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	case RMSG_FAULT_DEVICE_FATAL:
		if (ch->state != RMSG_CHAN_OPEN || !ch->dev.rdev)
			return -ENOTCONN;
		/* An open channel is on its device: it cannot go meanwhile. */
		rmsg_device_fatal(ch->dev.rdev);
		return 0;
	case RMSG_FAULT_LINK_PROBE:
		if (!rmsg_chan_is_carrier(ch))
			return -EOPNOTSUPP;
		if (ch->state != RMSG_CHAN_OPEN || !rmsg_chan_qp(ch))
			return -ENOTCONN;
		return rmsg_carrier_probe(ch, arg);
	default:
		return -EINVAL;
	}
}

/*
 * rmsg_chan_window_enter() - the opening channel's block goes into the
 * endpoint's block window, if the window is mapped and the block fits
 * @ch: the channel, about to be reported open; chan_lock held
 *
 * Before the open event, which then carries RMSG_CQE_F_WINDOW: from that
 * event on the program may read the block there, and the id is held at
 * the channel's end (rmsg_chan_window_leave()). A leased block not
 * granted yet enters as an empty slot; rmsg_block_publish() fills it. A
 * failed reservation leaves the channel out: the program maps its block
 * by itself, as without a window.
 */
static void rmsg_chan_window_enter(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rmsg_pages *old;

	lockdep_assert_held(&ep->chan_lock);
	if (!rmsg_window_fits(ep, ch->block_size) ||
	    rmsg_window_reserve(ep, ch->id))
		return;
	/* ch->block of a leased channel changes under this lock only. */
	down_write(&ep->block_map_lock);
	old = rmsg_window_set(ep, ch->id, ch->block);
	ch->in_window = true;
	up_write(&ep->block_map_lock);
	/* A held id's slot was emptied before the id came free. */
	if (WARN_ON_ONCE(old))
		rmsg_pages_put(old);
}

/*
 * rmsg_chan_window_leave() - the ending channel's slot of the window
 * @ch: the channel, at its end, before its id is held back or freed;
 *	chan_lock held
 *
 * A channel reported open into the window, that the program did not let
 * go of meanwhile (RMSG_IOC_CHAN_DROP), leaves its last block in its slot
 * and its id held: the program may still read what arrived, and no other
 * channel takes the id until it drops it. Else the slot is emptied (and
 * zapped) before the id can go to another channel.
 *
 * Return: the slot's block, for the caller to put once it dropped
 * chan_lock, or NULL.
 */
static struct rmsg_pages *rmsg_chan_window_leave(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;

	lockdep_assert_held(&ep->chan_lock);
	if (!ch->in_window)
		return NULL;
	if (ch->reported && !ch->drop_at_end) {
		rmsg_window_hold(ep, ch->id);
		return NULL;
	}
	return rmsg_window_clear(ep, ch->id);
}

/*
 * Act on a completion's rmsg_chan_kill_soft(), an injected fault, a
 * repair under way; else open once connected, registered, and told by
 * the peer that it is too.
 */
static void __rmsg_chan_progress(struct rmsg_channel *ch);

static void rmsg_chan_progress(struct work_struct *work)
{
	struct rmsg_channel *ch = container_of(work, struct rmsg_channel, work);
	struct mem_cgroup *old = rmsg_ep_charge_begin(ch->ep);

	__rmsg_chan_progress(ch);
	rmsg_ep_charge_end(old);
}

static void __rmsg_chan_progress(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	int soft_error = READ_ONCE(ch->soft_error);
	enum rmsg_chan_state was;
	int ret;

	if (!soft_error) {
		rmsg_chan_kill(ch, 0);
		return;
	}
	if (rmsg_chan_late(ch)) {
		rmsg_chan_kill(ch, -ETIMEDOUT);
		return;
	}
	if (soft_error < 0)
		rmsg_chan_fault(ch, soft_error);
	if (test_and_clear_bit(RMSG_CHAN_DISCONNECT_DUE, &ch->flags) &&
	    READ_ONCE(ch->state) == RMSG_CHAN_OPEN &&
	    test_bit(RMSG_CHAN_CONNECTED, &ch->flags) && rmsg_chan_cm_id(ch))
		rdma_disconnect(ch->conn->cm_id);
	if (test_and_clear_bit(RMSG_CHAN_ACCEPT_DUE, &ch->flags))
		rmsg_chan_do_accept(ch);
	if (test_and_clear_bit(RMSG_CHAN_STALL_DUE, &ch->flags))
		rmsg_chan_stalled(ch);
	if (READ_ONCE(ch->state) == RMSG_CHAN_RECOVERING) {
		rmsg_chan_repair(ch);
		return;
	}
	rmsg_chan_liveness(ch);
	/* The peer's ASK wants our block (rmsg_leases.c): made here. */
	if (test_and_clear_bit(RMSG_CHAN_LEASE_ALLOC, &ch->flags))
		rmsg_block_lease_make(ch);
	/* On a link: what the rdma_cm's ESTABLISHED is to a channel's own. */
	if (test_and_clear_bit(RMSG_CHAN_LINK_UP, &ch->flags) &&
	    READ_ONCE(ch->state) != RMSG_CHAN_DYING) {
		ret = rmsg_chan_link_up(ch);
		if (ret) {
			rmsg_chan_kill(ch, ret == -EPROTO ? ret : -ECONNRESET);
			return;
		}
	}

	if (!test_bit(RMSG_CHAN_CONNECTED, &ch->flags) ||
	    !test_bit(RMSG_CHAN_REGISTERED, &ch->flags) ||
	    !test_bit(RMSG_CHAN_PEER_READY, &ch->flags))
		return;
	/*
	 * The connecting side's copy of the peer's block (the accepting
	 * side's is made before it accepts): here, on rmsg's workqueue,
	 * where a failure costs one channel and no rdma_cm worker waits.
	 * Nothing is written to the peer before the channel opens.
	 */
	if (ch->active && READ_ONCE(ch->state) == RMSG_CHAN_CONNECTING) {
		ret = rmsg_data_shadow_create(ch);
		if (ret) {
			rmsg_chan_kill(ch, ret);
			return;
		}
	}
	mutex_lock(&ep->chan_lock);
	was = ch->state;
	if (was == RMSG_CHAN_CONNECTING || was == RMSG_CHAN_ACCEPTING) {
		rmsg_chan_set_state(ch, RMSG_CHAN_OPEN, 0);
		ch->reported = true;
		rmsg_chan_window_enter(ch);
		/* Under chan_lock: teardown cannot have stopped it yet. */
		rmsg_data_open(ch);
		ch->repair.hb_misses = 0;
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
		rmsg_hb_arm(ch);
	}
	mutex_unlock(&ep->chan_lock);

	/* Teardown waits for this work before it posts the last event. */
	if (was == RMSG_CHAN_CONNECTING)
		rmsg_chan_event(ch, RMSG_CQE_CONNECTED, 0);
	else if (was == RMSG_CHAN_ACCEPTING)
		rmsg_chan_event(ch, RMSG_CQE_ACCEPTED, 0);
}

/* --- the end of a channel --------------------------------------------- */

/*
 * A channel on a link, with nothing on its QP or in its PD any more
 * (rmsg_chan_release_verbs() came first), and nothing that may still send
 * (the data path's users waited for; its works, if the carrier queued
 * them again, find it DYING or not sending yet): off the link, before
 * the works are cancelled for the last time.
 */
static void rmsg_chan_link_leave(struct rmsg_channel *ch)
{
	if (ch->lchan)
		rmsg_carrier_detach(ch);
}

/*
 * The channel is out of the endpoint's table already. @counted: it still
 * counts against its owner's max_channels_per_user (teardown gives that
 * back before the last event).
 */
static void rmsg_chan_free(struct rmsg_channel *ch, bool counted)
{
	struct rmsg_endpoint *ep = ch->ep;

	/*
	 * The data path finds channels with xa_load() under ep->lock and
	 * uses them until it drops the lock: wait for any such user.
	 */
	mutex_lock(&ep->lock);
	/* Nothing was reserved after its data path closed; all the same. */
	rmsg_wr_room_return(ch);
	mutex_unlock(&ep->lock);
	/*
	 * Off the link's send queue first: another channel's completion
	 * runs the data work of those waiting for room there, and must not
	 * once the work is cancelled (it posts nothing any more: tx_live).
	 */
	rmsg_wr_link_set(ch, NULL);
	/*
	 * Off the link before the works are cancelled: until the detach the
	 * carrier's handlers (the link's end, a message or REFUSE of the
	 * peer's for the channel, a completion of a message of its) queue
	 * them, and a work queued after its cancel would run on a freed
	 * channel. A run already under way sees the channel DYING, or not
	 * yet sending (a dial taken back): it does not use the link.
	 */
	rmsg_chan_link_leave(ch);
	cancel_work_sync(&ch->data_work);
	/*
	 * A setup that failed after its QP existed: the drain's flushed
	 * receives queued the work (which only notes an end, deferred
	 * while setting up). Another channel's run of the same work takes
	 * a cm handler lock, so this wait is never under one.
	 */
	cancel_work_sync(&ch->work);
	rmsg_data_free(ch);
	rmsg_carrier_free(ch);
	if (ch->net)
		put_net(ch->net);
	/* Its last connection, whose id and QP are gone. */
	rmsg_chan_alloc_undo(ch);
	if (counted)
		rmsg_user_chan_del(ep);
	/*
	 * Under the wait queue's lock: the releaser, which frees @ep once
	 * it sees no channel left, takes that lock after its wait, so it
	 * cannot free @ep before this wake-up is over.
	 */
	spin_lock_irq(&ep->chan_wq.lock);
	if (atomic_dec_and_test(&ep->nr_channels))
		wake_up_locked(&ep->chan_wq);
	spin_unlock_irq(&ep->chan_wq.lock);
}

/* A channel whose setup failed in the connection request's handler. */
void rmsg_chan_free_work(struct work_struct *work)
{
	rmsg_chan_free(container_of(work, struct rmsg_channel, teardown),
		       true);
}

/*
 * The end of a channel on a link, its data path closed: a CLOSE (or a
 * RESET, for an end that is not orderly) tells the peer, whenever the
 * channel knows the peer's end, whatever it heard from it (its CLOSE or
 * its RESET too): on a link no DREQ follows, and the peer keeps its
 * block's MR until it hears from us. A channel that knows no peer end
 * (refused, or never answered) sends nothing: the carrier refuses to
 * (-ECONNRESET). Then may the channel's memory leave the carrier's PD?
 * Not before the CLOSE has gone and the peer's came
 * (rmsg_carrier_leave()), which takes no worker of the teardown queue:
 * false, and the teardown runs again when the link lets it go.
 */
static bool rmsg_chan_link_end(struct rmsg_channel *ch)
{
	u8 type = ch->error || ch->abort ? RMSG_CTRL_RESET : RMSG_CTRL_CLOSE;

	rmsg_ctrl_send(ch, RMSG_CTRL_CLOSE_BUF, type, 0);
	return rmsg_carrier_leave(ch);
}

static void rmsg_chan_teardown_end(struct rmsg_channel *ch,
				   struct rdma_cm_id *id, bool connected,
				   bool orderly);

static void rmsg_chan_teardown(struct work_struct *work)
{
	struct rmsg_channel *ch =
		container_of(work, struct rmsg_channel, teardown);
	struct rmsg_endpoint *ep = ch->ep;
	struct rdma_cm_id *repair_id, *stale_id, *id;
	bool connected, orderly;

	/* The link let it go: the rest of its end, as a link's channel's. */
	if (ch->link_leaving) {
		rmsg_chan_teardown_end(ch, rmsg_chan_cm_id(ch), false, false);
		return;
	}
	/*
	 * A repair step under way finishes first; later runs of the work and
	 * of the timer see the channel DYING and do nothing.
	 */
	cancel_work_sync(&ch->work);
	del_timer_sync(&ch->repair.timer);
	del_timer_sync(&ch->repair.hb_timer);
	del_timer_sync(&ch->repair.stall_timer);
	mutex_lock(&ep->chan_lock);
	repair_id = ch->repair.id;
	stale_id = ch->repair.stale_id;
	ch->repair.id = NULL;
	ch->repair.stale_id = NULL;
	mutex_unlock(&ep->chan_lock);
	if (repair_id)
		rmsg_repair_refuse(repair_id, true);
	if (stale_id)
		rmsg_repair_refuse(stale_id, true);
	/*
	 * Handlers ignore a dying channel; wait for one already running (a
	 * handler that gave the id back to the rdma_cm may be one).
	 */
	rmsg_cm_settle(ch, rmsg_chan_cm_id(ch));
	/* Nothing takes it from the channel from here on. */
	id = rmsg_chan_cm_id(ch);
	connected = (id || ch->lchan) &&
		    test_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	orderly = connected && rmsg_chan_qp(ch) && !ch->error && !ch->abort &&
		  !test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags);

	/* Sends taken before the close are written first, if it is orderly. */
	rmsg_data_close(ch, orderly);
	if (ch->lchan) {
		ch->link_leaving = true;
		if (!rmsg_chan_link_end(ch))
			return;
		connected = false;
		orderly = false;
	}
	rmsg_chan_teardown_end(ch, id, connected, orderly);
}

/*
 * The teardown from the CLOSE of a channel of its own on: what tells the
 * peer, the connection's and the verbs' end, the program's last events,
 * the free. @id, @connected, @orderly: rmsg_chan_teardown()'s findings.
 */
static void rmsg_chan_teardown_end(struct rmsg_channel *ch,
				   struct rdma_cm_id *id, bool connected,
				   bool orderly)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rmsg_pages *slot;
	u32 kind = 0;
	int res;

	/*
	 * An orderly close tells the peer, and waits until the CLOSE has
	 * left: the DREQ that follows travels another way and could
	 * overtake it.
	 */
	if (orderly &&
	    !rmsg_ctrl_send(ch, RMSG_CTRL_CLOSE_BUF, RMSG_CTRL_CLOSE, 0))
		rmsg_data_close_sent(ch);
	/*
	 * An abort, or the endpoint going away (its process may have been
	 * killed), must not look like a broken connection the peer should
	 * repair: RESET says so. A repaired peer would find nobody anyway.
	 */
	else if (connected && rmsg_chan_qp(ch) &&
		 (ch->abort || ch->error == -ESHUTDOWN) &&
		 !test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags) &&
		 !rmsg_ctrl_send(ch, RMSG_CTRL_CLOSE_BUF, RMSG_CTRL_RESET, 0))
		rmsg_data_close_sent(ch);
	if (connected)
		rmsg_cm_id_disconnect(id);
	if (ch->reject) {
		rdma_lock_handler(id);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		rdma_unlock_handler(id);
	}
	rmsg_chan_release_verbs(ch, false);
	cancel_work_sync(&ch->data_work);
	/* An accept in progress uses the id: it finishes first. */
	cancel_work_sync(&ch->work);
	rmsg_data_finish(ch, ch->error ?: -ECONNRESET,
			 test_bit(RMSG_CHAN_CLOSE_OK, &ch->flags));
	/* Waits out a handler still running on this id; none can follow. */
	if (id)
		rmsg_cm_id_retire(id);
	cancel_work_sync(&ch->work);
	del_timer_sync(&ch->repair.timer);
	del_timer_sync(&ch->repair.hb_timer);
	del_timer_sync(&ch->repair.stall_timer);

	/* The peer's CLOSE may have been drained after its DREQ arrived. */
	res = ch->error;
	if (res == -ECONNRESET && test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags))
		res = 0;
	/* Its peer on the same device may have hung up on it first. */
	if (res && ch->dev_gone)
		res = -ENODEV;
	if (ch->reported) {
		kind = RMSG_CQE_CLOSED;
	} else if (ch->active) {
		kind = RMSG_CQE_CONNECTED;
		if (!res)
			res = -ECONNABORTED;
	}

	/*
	 * An id the program knows is held back; one it never saw is free.
	 * Its window slot first: emptied before the id can go to another.
	 */
	mutex_lock(&ep->chan_lock);
	slot = rmsg_chan_window_leave(ch);
	if (kind || ch->requested)
		rmsg_id_quarantine(ep, ch->id);
	else
		xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);
	if (slot)
		rmsg_pages_put(slot);
	/*
	 * A program that hears of the end may open another channel at once:
	 * its room under max_channels_per_user is free before it does.
	 */
	rmsg_user_chan_del(ep);
	if (kind)
		rmsg_chan_event(ch, kind, res);
	rmsg_chan_free(ch, false);
}

/* --- the program's requests ------------------------------------------- */

/* The ranges of struct rmsg_chan_opts: 0 or -EINVAL. */
static_assert(sizeof(struct rmsg_chan_opts) == 32);

static int rmsg_opts_check(const struct rmsg_chan_opts *o)
{
	if (o->resv0 || o->resv ||
	    (o->connect_timeout_ms > RMSG_OPT_MS_MAX &&
	     o->connect_timeout_ms != RMSG_OPT_OFF) ||
	    (o->repair_timeout_ms > RMSG_OPT_MS_MAX &&
	     o->repair_timeout_ms != RMSG_OPT_OFF) ||
	    o->stall_ms > RMSG_OPT_MS_MAX ||
	    (o->heartbeat_ms > RMSG_OPT_MS_MAX &&
	     o->heartbeat_ms != RMSG_OPT_OFF) ||
	    (o->heartbeat_ms && o->heartbeat_ms < RMSG_OPT_HEARTBEAT_MIN_MS) ||
	    o->heartbeat_misses > RMSG_OPT_MISSES_MAX)
		return -EINVAL;
	return 0;
}

/* A program's struct rmsg_chan_opts at @uptr (0: none, all zero). */
int rmsg_opts_copy(struct rmsg_chan_opts *o, u64 uptr)
{
	memset(o, 0, sizeof(*o));
	if (!uptr)
		return 0;
	if (copy_from_user(o, u64_to_user_ptr(uptr), sizeof(*o)))
		return -EFAULT;
	return rmsg_opts_check(o);
}

/*
 * The non-zero settings of @from over a channel's: under chan_lock for a
 * channel others may see.
 */
static void rmsg_opts_merge(struct rmsg_chan_opts *to,
			    const struct rmsg_chan_opts *from)
{
	if (from->repair_timeout_ms)
		WRITE_ONCE(to->repair_timeout_ms, from->repair_timeout_ms);
	if (from->stall_ms)
		WRITE_ONCE(to->stall_ms, from->stall_ms);
	if (from->heartbeat_ms)
		WRITE_ONCE(to->heartbeat_ms, from->heartbeat_ms);
	if (from->heartbeat_misses)
		WRITE_ONCE(to->heartbeat_misses, from->heartbeat_misses);
	if (from->connect_timeout_ms)
		WRITE_ONCE(to->connect_timeout_ms, from->connect_timeout_ms);
}

static int rmsg_copy_addr(struct sockaddr_storage *ss, u64 uaddr, u32 len)
{
	if (len < sizeof(sa_family_t) || len > sizeof(*ss))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (copy_from_user(ss, u64_to_user_ptr(uaddr), len))
		return -EFAULT;
	switch (ss->ss_family) {
	case AF_INET:
		return len >= sizeof(struct sockaddr_in) ? 0 : -EINVAL;
	case AF_INET6:
		return len >= sizeof(struct sockaddr_in6) ? 0 : -EINVAL;
	default:
		return -EAFNOSUPPORT;
	}
}

/*
 * What LISTEN and CONNECT both take: an endpoint with rings, a receive
 * block size (0: the default, set in *@size) and an address.
 */
int rmsg_chan_args(struct rmsg_endpoint *ep, u32 *size,
			  struct sockaddr_storage *ss, u64 uaddr, u32 len)
{
	if (!rmsg_ep_ready(ep))
		return -EINVAL;
	if (!*size)
		*size = block_size;
	if (rmsg_vb_check_block(*size))
		return -EINVAL;
	return rmsg_copy_addr(ss, uaddr, len);
}

static_assert(sizeof(union rmsg_sockaddr) <=
	      sizeof(struct __kernel_sockaddr_storage));

/**
 * rmsg_chan_addr() - RMSG_IOC_CHAN_ADDR: a channel's local and peer address
 * @ep: the caller's endpoint
 * @uarg: struct rmsg_chan_addr
 *
 * Return: 0, -EFAULT, -EINVAL, -ENOENT (no such channel) or -ENOTCONN
 * (not connected yet).
 */
long rmsg_chan_addr(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_chan_addr req;
	struct rmsg_channel *ch;
	int ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.resv)
		return -EINVAL;
	memset(&req.local, 0, sizeof(req.local));
	memset(&req.peer, 0, sizeof(req.peer));
	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, req.channel);
	if (!ch) {
		ret = -ENOENT;
	} else if (ch->conn_local.sa.sa_family == AF_UNSPEC) {
		ret = -ENOTCONN;
	} else {
		memcpy(&req.local, &ch->conn_local, sizeof(ch->conn_local));
		memcpy(&req.peer, &ch->conn_peer, sizeof(ch->conn_peer));
	}
	mutex_unlock(&ep->chan_lock);
	if (!ret && copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/* Channel @id of @ep, unless it is ending: ERR_PTR -ENOENT or -EALREADY. */
static struct rmsg_channel *rmsg_chan_live(struct rmsg_endpoint *ep, u32 id)
{
	struct rmsg_channel *ch;

	lockdep_assert_held(&ep->chan_lock);
	ch = xa_load(&ep->channels, id);
	if (!ch)
		return ERR_PTR(-ENOENT);
	if (ch->state == RMSG_CHAN_DYING)
		return ERR_PTR(-EALREADY);
	return ch;
}

/**
 * rmsg_chan_set() - RMSG_IOC_CHAN_SET: change a channel's settings
 * @ep: the caller's endpoint
 * @uarg: struct rmsg_chan_set
 *
 * A heartbeat period given to an open channel takes effect at once: its
 * heartbeat timer restarts with the new period from now; one switched off
 * (RMSG_OPT_OFF) stops. The other timers already running (the quiet
 * period, a repair's deadline) keep their length.
 *
 * Return: 0, -EFAULT, -EINVAL, -ENOENT or -EALREADY (the channel is
 * ending).
 */
long rmsg_chan_set(struct rmsg_endpoint *ep, void __user *uarg)
{
	const struct rmsg_chan_opts *opts;
	struct rmsg_chan_set req;
	struct rmsg_channel *ch;
	int ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	opts = &req.opts;
	if (req.flags || rmsg_opts_check(opts))
		return -EINVAL;
	mutex_lock(&ep->chan_lock);
	ch = rmsg_chan_live(ep, req.channel);
	if (IS_ERR(ch)) {
		ret = PTR_ERR(ch);
	} else {
		rmsg_opts_merge(&ch->opts, opts);
		/*
		 * A heartbeat of its own, off or with a new period from now:
		 * the channel no longer shares its node's.
		 */
		if (ch->state == RMSG_CHAN_OPEN &&
		    (opts->heartbeat_ms || opts->heartbeat_misses))
			rmsg_hb_arm(ch);
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/**
 * rmsg_chan_dial() - make a channel that connects, and publish it
 * @ep: the endpoint
 * @d: where to, and with what (checked by the caller)
 *
 * The first half of a connect: the channel has its id and its rdma_cm id,
 * and it is still being set up (rmsg_chan_init()'s @setting_up), so no one
 * else ends it; nothing has gone to the network. rmsg_chan_dial_start()
 * starts the connection, or rmsg_chan_dial_abort() takes the channel back
 * as if it never was.
 *
 * Return: the channel, or ERR_PTR(-ENOSPC) (too many channels in the
 * endpoint), -EDQUOT (too many of the user's), -ESHUTDOWN, -ENOMEM, or what
 * rdma_create_id() returns.
 */
struct rmsg_channel *rmsg_chan_dial(struct rmsg_endpoint *ep,
				    const struct rmsg_dial *d)
{
	struct rmsg_channel *ch;
	struct rdma_cm_id *cm_id;
	int ret;

	ch = rmsg_chan_alloc();
	if (!ch)
		return ERR_PTR(-ENOMEM);
	rmsg_chan_init(ch, ep, RMSG_CHAN_CONNECTING, d->user_data,
		       d->block_size);
	ch->opts = d->opts;
	/* Kept for the repairs, which dial again from a work item. */
	ch->repair.peer_addr = d->dst;
	ch->repair.resolve_ms = d->timeout_ms ?: resolve_timeout_ms;
	ch->net = get_net(d->net);
	/* On a link the carrier's connection is the channel's: no id. */
	cm_id = d->carrier ? NULL :
		rdma_create_id(ch->net, rmsg_cm_handler, &ch->cm, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		put_net(ch->net);
		rmsg_chan_alloc_undo(ch);
		return ERR_CAST(cm_id);
	}
	ch->conn->cm_id = cm_id;
	/*
	 * Published, the id may be closed by another thread at once: the
	 * end waits until the caller is done with the channel (a teardown
	 * would free it under us, or after the failure path did).
	 */
	ch->setting_up = true;
	ret = rmsg_chan_publish(ch);
	if (ret) {
		if (cm_id)
			rdma_destroy_id(cm_id);
		put_net(ch->net);
		rmsg_chan_alloc_undo(ch);
		return ERR_PTR(ret);
	}
	return ch;
}

/**
 * rmsg_chan_dial_abort() - take back a channel rmsg_chan_dial() made
 * @ch: the channel, not started
 *
 * Nobody else ends it while it is set up: this does, at once.
 */
void rmsg_chan_dial_abort(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;

	mutex_lock(&ep->chan_lock);
	xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);
	if (ch->conn->cm_id)
		rdma_destroy_id(ch->conn->cm_id);
	else
		/*
		 * A channel that went on a link and sent nothing: it posted
		 * nothing on the carrier's QP, the peer knows nothing of it.
		 */
		rmsg_chan_release_verbs(ch, false);
	rmsg_chan_free(ch, true);
}

/* The service port of @ss, an IPv4 or IPv6 address. */
static u16 rmsg_sockaddr_port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/*
 * rmsg_chan_dial_start() for a channel on a link (@d->carrier): on the
 * carrier's device and QP, a link id of its own, then the HELLO CONNECT.
 * The ACCEPT, a REFUSE or the connect timeout decides the rest. On
 * failure the channel is taken back, and rmsg_dial_link_fallback() says
 * whether the caller dials a connection of its own instead.
 */
static int rmsg_chan_dial_link(struct rmsg_channel *ch,
			       struct rmsg_carrier *c)
{
	struct rmsg_carrier_conn cc;
	u16 port = rmsg_sockaddr_port_of(&ch->repair.peer_addr);
	/* Port 0 fails as it would on a connection of its own. */
	int ret = port ? 0 : -EOPNOTSUPP;

	if (!ret)
		ret = rmsg_carrier_attach(c, ch, &cc);
	if (!ret)
		ret = rmsg_chan_link_setup(ch, &cc);
	if (!ret)
		ret = rmsg_chan_link_hello(ch, RMSG_HELLO_CONNECT, port);
	if (ret) {
		rmsg_chan_dial_abort(ch);
		return ret;
	}
	rmsg_chan_open_by(ch);
	rmsg_chan_setup_done(ch);
	return 0;
}

/**
 * rmsg_dial_link_fallback() - does a channel the link could not take get
 *	a connection of its own?
 * @err: what rmsg_chan_dial_link() returned
 *
 * Yes when the failure is the link's, which a connection of its own does
 * not share: the link's connection went down meanwhile (-ENOTCONN, from
 * the attach or the HELLO), the carrier's device is going away (-ENODEV:
 * the dial resolves a route afresh, maybe to another device), the channel
 * cannot go on a link (-EOPNOTSUPP: its device places out of order, or
 * port 0, which then fails as it would on its own), or the link has no
 * link id left (-EBUSY: a limit of the link's, not of the program's).
 *
 * No for what a connection of its own would meet as well, or worse: the
 * program's memory (-ENOMEM: charged to its cgroup, and a connection of
 * its own needs more, a QP and CQ besides; dialling again would only add
 * to the pressure), its limits, and the other errors of the device the
 * route leads to. The connect fails with them, as a direct one would.
 *
 * Return: whether to dial a connection of its own.
 */
static bool rmsg_dial_link_fallback(int err)
{
	switch (err) {
	case -ENOTCONN:
	case -ENODEV:
	case -EOPNOTSUPP:
	case -EBUSY:
		return true;
	default:
		return false;
	}
}

/**
 * rmsg_chan_dial_start() - the second half: resolve the address, connect
 * @ch: a channel rmsg_chan_dial() made
 * @src: the source address, or NULL for any
 *
 * From here on the rdma_cm's handler may run. On failure the channel is
 * taken back (rmsg_chan_dial_abort()).
 *
 * Return: 0 (the outcome comes as the CONNECTED event), or what
 * rdma_resolve_addr() refuses at once (-EADDRNOTAVAIL for a source
 * address that is not the node's, -EADDRINUSE for a source port in use).
 */
int rmsg_chan_dial_start(struct rmsg_channel *ch,
			 const struct sockaddr_storage *src)
{
	int ret;

	ret = rdma_resolve_addr(ch->conn->cm_id, (struct sockaddr *)src,
				(struct sockaddr *)&ch->repair.peer_addr,
				ch->repair.resolve_ms);
	if (ret) {
		rmsg_chan_dial_abort(ch);
		return ret;
	}
	/* Before the end may come: teardown stops the timer. */
	rmsg_chan_open_by(ch);
	rmsg_chan_setup_done(ch);
	return 0;
}

/**
 * rmsg_chan_connect() - RMSG_IOC_CONNECT: start connecting a channel
 * @ep: the endpoint, with rings
 * @uarg: struct rmsg_connect; its channel is filled in
 * @dst: set to the peer's address on success
 * @find: finds a link to the peer whose connection is up
 *	(rmsg_link_carrier()), or NULL: the channel then has a connection of
 *	its own, as it has anyway when no link is up or it names a source
 *	address
 *
 * The outcome arrives as an RMSG_CQE_CONNECTED event.
 *
 * Return: 0, or -EINVAL, -EFAULT, -EAFNOSUPPORT, -ENOSPC (too many
 * channels in the endpoint), -EDQUOT (too many of the user's), -ENOMEM,
 * or what rdma_resolve_addr() refuses at once (-EADDRNOTAVAIL for a
 * source address that is not the node's).
 */
long rmsg_chan_connect(struct rmsg_endpoint *ep, void __user *uarg,
		       struct sockaddr_storage *dst, rmsg_link_find_fn find)
{
	struct sockaddr_storage src;
	struct rmsg_connect req;
	struct rmsg_channel *ch;
	struct rmsg_dial d;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.channel)
		return -EINVAL;
	ret = rmsg_opts_copy(&d.opts, req.opts);
	if (ret)
		return ret;
	ret = rmsg_chan_args(ep, &req.block_size, &d.dst, req.addr,
			     req.addr_len);
	if (ret)
		return ret;
	if (req.src_addr_len) {
		ret = rmsg_copy_addr(&src, req.src_addr, req.src_addr_len);
		if (ret)
			return ret;
		if (src.ss_family != d.dst.ss_family)
			return -EINVAL;
	}
	d.net = current->nsproxy->net_ns;
	d.block_size = req.block_size;
	d.timeout_ms = req.timeout_ms;
	d.user_data = req.user_data;
	/*
	 * On a link to the peer's node when one is up; a source address of
	 * the program's choosing asks for a connection of its own.
	 */
	d.carrier = find && !req.src_addr_len ? find(d.net, &d.dst) : NULL;
again:
	ch = rmsg_chan_dial(ep, &d);
	if (IS_ERR(ch)) {
		rmsg_carrier_put(d.carrier);
		return PTR_ERR(ch);
	}
	req.channel = ch->id;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		rmsg_chan_dial_abort(ch);
		rmsg_carrier_put(d.carrier);
		return -EFAULT;
	}
	if (d.carrier) {
		ret = rmsg_chan_dial_link(ch, d.carrier);
		rmsg_carrier_put(d.carrier);
		d.carrier = NULL;
		/* The link's failure, not the channel's: on its own, then. */
		if (ret && rmsg_dial_link_fallback(ret))
			goto again;
	} else {
		ret = rmsg_chan_dial_start(ch, req.src_addr_len ? &src : NULL);
	}
	if (!ret)
		*dst = d.dst;
	return ret;
}

/**
 * rmsg_chan_close() - RMSG_IOC_CLOSE: end a channel
 * @ep: the endpoint
 * @uarg: struct rmsg_close
 *
 * Return: 0 (the end is reported by an event), -ENOENT for no such
 * channel, -EALREADY when it is already ending, -EINVAL, -EFAULT.
 */
long rmsg_chan_close(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_channel *ch;
	struct rmsg_close req;
	int ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~RMSG_CLOSE_ABORT) ||
	    !rmsg_all_zero(req.resv, sizeof(req.resv)))
		return -EINVAL;

	mutex_lock(&ep->chan_lock);
	ch = rmsg_chan_live(ep, req.channel);
	if (IS_ERR(ch)) {
		ret = PTR_ERR(ch);
	} else {
		ch->abort = req.flags & RMSG_CLOSE_ABORT;
		rmsg_chan_kill_locked(ch, 0);
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/**
 * rmsg_chan_release_all() - end every channel of an endpoint being released
 * @ep: the endpoint; nothing else refers to it any more
 *
 * Returns once all of them are gone.
 */
void rmsg_chan_release_all(struct rmsg_endpoint *ep)
{
	struct rmsg_channel *ch;
	unsigned long id;

	mutex_lock(&ep->chan_lock);
	ep->dying = true;
	xa_for_each(&ep->channels, id, ch)
		rmsg_chan_kill_locked(ch, -ESHUTDOWN);
	mutex_unlock(&ep->chan_lock);
	wait_event(ep->chan_wq, !atomic_read(&ep->nr_channels));
	/* The last rmsg_chan_free() may still be waking us: let it leave. */
	spin_lock_irq(&ep->chan_wq.lock);
	spin_unlock_irq(&ep->chan_wq.lock);
}

/* The channel's device @rdev is going, or failed. */
static void rmsg_chan_dev_lost(struct rmsg_device *rdev,
			       struct rmsg_channel *ch, int error)
{
	lockdep_assert_held(&rdev->lock);
	mutex_lock(&ch->ep->chan_lock);
	/* Its repair leaves the device; a repair under way starts again. */
	set_bit(RMSG_CHAN_DEV_LOST, &ch->flags);
	rmsg_chan_fault_locked(ch, error);
	mutex_unlock(&ch->ep->chan_lock);
}

/**
 * rmsg_chan_device_removed() - take every channel off a device going away
 * @rdev: the device; its channel list is under rdev->lock
 *
 * Called from the ib_client's remove. Every channel on the device is
 * repaired, as after a fault of its connection, and leaves the device
 * (rmsg_chan_dev_release()) before a new connection is tried; one that
 * cannot be repaired ends with ENODEV. Returns once none is left on the
 * device, so that the device's resources can go.
 */
void rmsg_chan_device_removed(struct rmsg_device *rdev)
{
	struct rmsg_channel *ch;

	mutex_lock(&rdev->lock);
	rdev->dying = true;
	list_for_each_entry(ch, &rdev->channels, dev.dev_node)
		rmsg_chan_dev_lost(rdev, ch, -ENODEV);
	mutex_unlock(&rdev->lock);
	wait_event(rdev->wq, list_empty_careful(&rdev->channels));
	/* The last detach may still be waking us: let it leave first. */
	mutex_lock(&rdev->lock);
	mutex_unlock(&rdev->lock);
}

/**
 * rmsg_chan_device_fatal() - take every channel off a device that failed
 * @rdev: the device, which reported IB_EVENT_DEVICE_FATAL (or a fault
 *	injection said it did); it stays registered
 *
 * In process context. Each channel is repaired and leaves the device as
 * after its removal; the repair brings it back to a device, this one once
 * it works again, or another that reaches the peer. One that cannot be
 * repaired ends with EIO.
 */
void rmsg_chan_device_fatal(struct rmsg_device *rdev)
{
	struct rmsg_channel *ch;

	mutex_lock(&rdev->lock);
	list_for_each_entry(ch, &rdev->channels, dev.dev_node)
		rmsg_chan_dev_lost(rdev, ch, -EIO);
	mutex_unlock(&rdev->lock);
}

/* A device came: repairs dial at once, deaf listeners listen again. */
void rmsg_chan_device_added(struct rmsg_endpoint *ep)
{
	struct rmsg_channel *ch;
	unsigned long id;

	mutex_lock(&ep->chan_lock);
	xa_for_each(&ep->channels, id, ch) {
		if (ch->state != RMSG_CHAN_RECOVERING || !ch->active)
			continue;
		set_bit(RMSG_CHAN_DIAL_NOW, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
	}
	if (ep->listener && !ep->listener->cm_id)
		mod_delayed_work(rmsg_wq, &ep->listener->rebind, 0);
	mutex_unlock(&ep->chan_lock);
}

/*
 * A page of a leased block's mapping (rmsg_chan_mmap()): the page of the
 * block its view shows (struct rmsg_block_view: the lease's, or the last
 * one of a channel that ended), or while there is none the kernel's
 * shared zero page (a block where nothing arrived, at any lap). Under
 * ep->block_map_lock for reading, with the page table entry made before
 * it is dropped: rmsg_block_publish() changes the view's block and zaps
 * the range under it for writing, so no entry of the old state survives,
 * and the view's block cannot go while it is held.
 *
 * A block's page is mapped with a reference of the entry's own
 * (vm_insert_page()), so it stays while mapped whatever becomes of the
 * block. The zero page goes in as a special entry that counts no
 * reference (vmf_insert_mixed()): a page of the module's, shared by every
 * program, would have its count raised by each mapping, which enough
 * mappings could overflow.
 */
static vm_fault_t rmsg_chan_block_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct rmsg_endpoint *ep = vma->vm_file->private_data;
	struct rmsg_block_view *view = vma->vm_private_data;
	u64 rel = ((u64)vmf->pgoff << PAGE_SHIFT) - RMSG_OFF_BLOCK_BASE;
	u32 idx = (rel & ((1ULL << RMSG_OFF_BLOCK_SHIFT) - 1)) >> PAGE_SHIFT;
	vm_fault_t ret;

	down_read(&ep->block_map_lock);
	if (view->block && idx < view->block->npages)
		ret = vmf_insert_page(vma, vmf->address,
				      view->block->pages[idx]);
	else
		ret = vmf_insert_mixed(vma, vmf->address,
				       pfn_to_pfn_t(my_zero_pfn(vmf->address)));
	up_read(&ep->block_map_lock);
	return ret;
}

/* Each mapping holds the view (a split or a fork makes another). */
static void rmsg_chan_block_vm_open(struct vm_area_struct *vma)
{
	struct rmsg_block_view *view = vma->vm_private_data;

	kref_get(&view->ref);
}

static void rmsg_chan_block_vm_close(struct vm_area_struct *vma)
{
	rmsg_block_view_put(vma->vm_private_data);
}

static const struct vm_operations_struct rmsg_chan_block_vm_ops = {
	.open	= rmsg_chan_block_vm_open,
	.close	= rmsg_chan_block_vm_close,
	.fault	= rmsg_chan_block_fault,
};

/*
 * A leased block's mapping, of @npages at most, showing @view (whose
 * reference the caller took for it): no pages now, each comes at its
 * first touch (rmsg_chan_block_fault()), and goes when a lease starts.
 * VM_MIXEDMAP lets the fault handler insert pages while it holds
 * mmap_lock for reading, and the zero page without a reference.
 * Read-only for good (the zero page is only ever mapped so), fixed in
 * size.
 */
static int rmsg_chan_mmap_leased(struct vm_area_struct *vma,
				 struct rmsg_block_view *view, u32 npages)
{
	if ((vma->vm_end - vma->vm_start) >> PAGE_SHIFT > npages) {
		rmsg_block_view_put(view);
		return -EINVAL;
	}
	rmsg_vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
			  VM_MAYWRITE);
	/* Only now: a failed mmap() is torn down without ->close(). */
	vma->vm_private_data = view;
	vma->vm_ops = &rmsg_chan_block_vm_ops;
	return 0;
}

/**
 * rmsg_chan_mmap() - map a channel's receive block into the program
 * @ep: the endpoint
 * @vma: at RMSG_OFF_BLOCK(channel), read-only and shared
 *
 * Called with mmap_lock held for writing, so it takes no lock that is
 * held across anything that may fault or wait for one (chan_lock is held
 * across rdma_cm calls, ep->lock in rdma_cm handlers): only the channel
 * table's spinlock, under which ch->block is set and cleared, and a
 * channel in the table is not freed.
 *
 * A leased block (ch->lease.on) is mapped whether the channel has a block
 * now or not, through its view: rmsg_chan_mmap_leased().
 *
 * Return: 0, -EINVAL for a bad offset, size or sharing, -EPERM for a
 * writable mapping, -ENOENT when the channel is not open.
 */
int rmsg_chan_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct rmsg_pages *block = NULL;
	struct rmsg_channel *ch;
	u64 rel = off - RMSG_OFF_BLOCK_BASE;
	struct rmsg_block_view *view = NULL;
	enum rmsg_chan_state state;
	u32 npages = 0;
	int ret;

	if (off < RMSG_OFF_BLOCK_BASE ||
	    rel & ((1ULL << RMSG_OFF_BLOCK_SHIFT) - 1) ||
	    (rel >> RMSG_OFF_BLOCK_SHIFT) >= RMSG_MAX_CHANNELS ||
	    !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* The peer writes the block; the program only ever reads it. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;

	xa_lock(&ep->channels);
	ch = xa_load(&ep->channels, rel >> RMSG_OFF_BLOCK_SHIFT);
	state = ch ? READ_ONCE(ch->state) : RMSG_CHAN_DYING;
	if ((state == RMSG_CHAN_OPEN || state == RMSG_CHAN_RECOVERING) &&
	    ch->lease.view) {
		view = ch->lease.view;
		kref_get(&view->ref);
		npages = PAGE_ALIGN(ch->block_size) >> PAGE_SHIFT;
	} else if ((state == RMSG_CHAN_OPEN ||
		    state == RMSG_CHAN_RECOVERING) && ch->block) {
		block = ch->block;
		kref_get(&block->ref);
	}
	xa_unlock(&ep->channels);
	if (view)
		return rmsg_chan_mmap_leased(vma, view, npages);
	if (!block)
		return -ENOENT;
	ret = rmsg_pages_mmap(block, vma, false);
	rmsg_pages_put(block);
	return ret;
}

/*
 * RMSG_IOC_CHAN_DROP for one id, chan_lock held: a held id is let go of
 * (its slot emptied, then held back as any ended channel's id, or free
 * at once if its time there is over); a live channel in the window
 * holds nothing at its end. Returns whether it acted, and in *@old a
 * block for the caller to put once it dropped chan_lock.
 */
static bool rmsg_chan_drop_one(struct rmsg_endpoint *ep, u32 id,
			       struct rmsg_pages **old)
{
	struct rmsg_channel *ch;

	lockdep_assert_held(&ep->chan_lock);
	*old = NULL;
	if (id >= RMSG_MAX_CHANNELS)
		return false;
	if (rmsg_window_held(ep, id)) {
		rmsg_window_unhold(ep, id);
		*old = rmsg_window_clear(ep, id);
		if (!rmsg_id_quarantined(ep, id))
			xa_release(&ep->channels, id);
		return true;
	}
	ch = xa_load(&ep->channels, id);
	if (!ch || !ch->in_window || ch->drop_at_end)
		return false;
	ch->drop_at_end = true;
	return true;
}

/**
 * rmsg_chan_drop() - RMSG_IOC_CHAN_DROP: let go of channels' ids in the
 *	block window
 * @ep: the endpoint
 * @uarg: struct rmsg_chan_drop
 *
 * The ids are copied in first: no user memory is touched under chan_lock
 * (a fault there could wait on a fault of the window, which takes
 * block_map_lock, taken under chan_lock). The blocks let go of are put
 * after chan_lock is dropped.
 *
 * Return: 0 (done says how many ids acted), -EINVAL for nonzero flags or
 * resv or a count above RMSG_CHAN_DROP_MAX, -EFAULT, -ENOMEM.
 */
long rmsg_chan_drop(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_chan_drop req;
	struct rmsg_pages **old;
	u32 *ids, i, n = 0;
	long ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.resv || req.count > RMSG_CHAN_DROP_MAX)
		return -EINVAL;
	req.done = 0;
	if (req.count) {
		ids = memdup_user(u64_to_user_ptr(req.ids),
				  array_size(req.count, sizeof(*ids)));
		if (IS_ERR(ids))
			return PTR_ERR(ids);
		old = kcalloc(req.count, sizeof(*old), GFP_KERNEL);
		if (!old) {
			kfree(ids);
			return -ENOMEM;
		}
		mutex_lock(&ep->chan_lock);
		for (i = 0; i < req.count; i++)
			if (rmsg_chan_drop_one(ep, ids[i], &old[n]))
				n++;
		mutex_unlock(&ep->chan_lock);
		req.done = n;
		for (i = 0; i < n; i++)
			if (old[i])
				rmsg_pages_put(old[i]);
		kfree(old);
		kfree(ids);
	}
	if (copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/**
 * rmsg_chan_accept() - RMSG_IOC_ACCEPT: answer a connection request
 * @ep: the endpoint
 * @uarg: struct rmsg_accept
 *
 * Return: 0, -ENOENT for no such channel, -EINVAL for one not awaiting an
 * answer or bad flags, -EFAULT.
 */
long rmsg_chan_accept(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_chan_opts opts;
	struct rmsg_channel *ch;
	struct rmsg_accept req;
	int ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~RMSG_ACCEPT_REJECT) ||
	    !rmsg_all_zero(req.resv, sizeof(req.resv)))
		return -EINVAL;
	ret = rmsg_opts_copy(&opts, req.opts);
	if (ret)
		return ret;

	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, req.channel);
	if (!ch) {
		ret = -ENOENT;
	} else if (ch->state != RMSG_CHAN_REQUESTED || ch->setting_up) {
		/*
		 * Not before its REQUEST event: the request's handler still
		 * holds the id's handler lock, which the accept's work takes,
		 * and a setup that fails waits for that work under the lock.
		 */
		ret = -EINVAL;
	} else if (req.flags & RMSG_ACCEPT_REJECT) {
		rmsg_chan_kill_locked(ch, -ECONNREFUSED);
	} else {
		rmsg_chan_set_state(ch, RMSG_CHAN_ACCEPTING, 0);
		ch->user_data = req.user_data;
		rmsg_opts_merge(&ch->opts, &opts);
		set_bit(RMSG_CHAN_ACCEPT_DUE, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}
