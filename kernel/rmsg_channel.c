// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: channels, their RDMA connections and their life cycle.
 *
 * A channel is one RC connection made with the kernel rdma_cm, plus the
 * channel's receive block (registered for remote write with a fast
 * registration) and a few receive buffers for control messages.
 *
 * Life cycle (the only place it is written down; the code follows it):
 *
 *   connect:  CONNECTING --rdma_cm ESTABLISHED, own REG_MR done and the
 *             peer's READY received--> OPEN  [event CONNECTED, res 0]
 *   accept:   ACCEPTING  --the same--> OPEN  [event ACCEPTED]
 *   a listener with RMSG_LISTEN_F_ACCEPT: REQUESTED [event REQUEST]
 *             --RMSG_IOC_ACCEPT--> ACCEPTING; --a reject, RMSG_IOC_CLOSE,
 *             an error--> DYING (the request is rejected)
 *   OPEN      --RMSG_IOC_CLOSE, the peer's CLOSE, an error that cannot
 *               be repaired, device removal, endpoint release--> DYING
 *   OPEN      --a fault of the connection (a failed completion, the
 *               peer's disconnect without CLOSE, an injected fault)
 *               --> RECOVERING  [nothing: the program sees a delay;
 *               event STALLED once the quiet period is over, if the
 *               endpoint asked (RMSG_EP_F_STALL_EVENTS)]
 *   RECOVERING --connected again, and the peer's READY--> OPEN
 *               [event RESUMED if STALLED was posted]
 *   RECOVERING --the give-up timeout [ETIMEDOUT], a peer that does not
 *               know the channel any more (restarted or closed)
 *               [ECONNRESET], a close, device removal--> DYING
 *   CONNECTING/ACCEPTING/REQUESTED --an error or a close--> DYING
 *   DYING     --teardown work: disconnect, drain, free--> gone
 *             [event CLOSED if it had been OPEN, CONNECTED with an error if
 *              it was CONNECTING, nothing if it was ACCEPTING or REQUESTED]
 *
 * Why the READY message: REG_MR can only be posted once the QP is ready to
 * send, so the peer, who may write as soon as it is connected, must wait
 * until it hears that the registration went through; the send queue runs
 * REG_MR before the READY that follows it.
 *
 * Repair (RECOVERING), in the channel's work, step by step (phases are
 * enum rmsg_repair_phase):
 *
 *   DOWN       drop the broken connection: stop writing, disconnect, drain
 *              and destroy the QP and the rdma_cm id (the receive block,
 *              its MR, the CQ, the shadow and the rings stay), forget what
 *              was in flight, walk the receive block to the end of the
 *              records that arrived (where the peer resumes)
 *   connecting side:
 *   BACKOFF    wait: nothing the first time, then a capped exponential
 *              back-off with jitter
 *   DIALING    a new rdma_cm id (epoch + 1) resolves the peer's address
 *              and route, makes a QP and sends a RECONNECT hello with our
 *              resume point; the ACCEPT hello carries the peer's, from
 *              which rmsg_data_resume() sets what to write again
 *   accepting side:
 *   WAITING    until the listener hands over a RECONNECT for this channel
 *              (same peer incarnation, same channel, a newer epoch)
 *   ACCEPTING  a QP for it, the peer's resume point taken, rdma_accept()
 *              with ours
 *   both: once connected, READY goes out (the block's MR is still valid),
 *   and the peer's READY reopens the channel. A failed or slow attempt
 *   goes back to DOWN; the give-up deadline ends the channel. Events of an
 *   rdma_cm id that is not the channel's current one are ignored.
 *
 * Every state change goes through rmsg_chan_set_state(), every phase
 * change through rmsg_repair_set_phase(); they allow only what the tables
 * rmsg_chan_next[] and rmsg_repair_next[] (the two diagrams above) allow,
 * and the tracepoints of rmsg_trace.h see them all.
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
#include <asm/unaligned.h>
#include <rdma/rdma_cm.h>

#include "rmsg.h"
#include "rmsg_channel.h"
#include "rmsg_trace.h"

static unsigned int block_size = 32768;
module_param(block_size, uint, 0644);
MODULE_PARM_DESC(block_size,
		 "Default receive block per channel in bytes (default 32768)");

/*
 * An accepting side mirrors the connecting peer's block in memory of its
 * own (the shadow, up to RMSG_VB_MAX_BLOCK): a stranger who reaches a
 * listener must not size that beyond what the listener allows.
 */
static unsigned int peer_block_max = 1 << 20;
module_param(peer_block_max, uint, 0644);
MODULE_PARM_DESC(peer_block_max,
		 "Largest receive block a connecting peer may announce to a listener that sets no limit of its own, in bytes (default 1 MiB; at least the listener's own block)");

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

static unsigned int resolve_timeout_ms = 2000;
module_param(resolve_timeout_ms, uint, 0644);
MODULE_PARM_DESC(resolve_timeout_ms,
		 "Default address and route resolution timeout");

static unsigned int repair_timeout_ms = 30000;
module_param(repair_timeout_ms, uint, 0644);
MODULE_PARM_DESC(repair_timeout_ms,
		 "How long a broken channel is repaired before it fails with ETIMEDOUT (0: channels are not repaired)");

static unsigned int repair_quiet_ms = 5000;
module_param(repair_quiet_ms, uint, 0644);
MODULE_PARM_DESC(repair_quiet_ms,
		 "How long a repair stays quiet before endpoints that asked for it (RMSG_EP_F_STALL_EVENTS) get RMSG_CQE_STALLED");

static unsigned int repair_backoff_ms = 20;
module_param(repair_backoff_ms, uint, 0644);
MODULE_PARM_DESC(repair_backoff_ms,
		 "Back-off before the second connection attempt of a repair; it doubles, with jitter, per attempt");

static unsigned int repair_backoff_max_ms = 2000;
module_param(repair_backoff_max_ms, uint, 0644);
MODULE_PARM_DESC(repair_backoff_max_ms, "Longest back-off between attempts");

static unsigned int repair_attempt_ms = 5000;
module_param(repair_attempt_ms, uint, 0644);
MODULE_PARM_DESC(repair_attempt_ms,
		 "How long one connection attempt of a repair may take");

static unsigned int heartbeat_ms = 1000;
module_param(heartbeat_ms, uint, 0644);
MODULE_PARM_DESC(heartbeat_ms,
		 "Each open channel sends a HEARTBEAT this often, and checks that the peer acknowledged something of its own (0: no heartbeats)");

static unsigned int heartbeat_misses = 4;
module_param(heartbeat_misses, uint, 0644);
MODULE_PARM_DESC(heartbeat_misses,
		 "Heartbeat periods in a row with nothing of ours acknowledged before the connection counts as broken");

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

struct workqueue_struct *rmsg_wq;
/*
 * Teardowns sleep (a CLOSE's send, up to close_drain_ms of data, the
 * drain): a mass close must not hold back the data and repair work of every
 * other endpoint, so they have a queue of their own.
 */
static struct workqueue_struct *rmsg_teardown_wq;

static int rmsg_cm_handler(struct rdma_cm_id *cm_id,
			   struct rdma_cm_event *event);

static void rmsg_chan_progress(struct work_struct *work);
static void rmsg_chan_teardown(struct work_struct *work);

static void rmsg_repair_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, repair_timer);

	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_hb_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, hb_timer);

	set_bit(RMSG_CHAN_HEARTBEAT_DUE, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_stall_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, stall_timer);

	set_bit(RMSG_CHAN_STALL_DUE, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

/*
 * A channel's own setting (struct rmsg_chan_opts) where it has one, else
 * the module's parameter; 0 for a setting that is off. The settings are
 * written under chan_lock and read anywhere.
 */
static unsigned int rmsg_opt(u32 own, unsigned int param)
{
	if (own == RMSG_OPT_OFF)
		return 0;
	return own ?: param;
}

static unsigned int rmsg_chan_hb_ms(const struct rmsg_channel *ch)
{
	return rmsg_opt(READ_ONCE(ch->opts.heartbeat_ms),
			READ_ONCE(heartbeat_ms));
}

static unsigned int rmsg_chan_repair_ms(const struct rmsg_channel *ch)
{
	return rmsg_opt(READ_ONCE(ch->opts.repair_timeout_ms),
			READ_ONCE(repair_timeout_ms));
}

/* The next heartbeat of a channel that is open (again). */
static void rmsg_hb_arm(struct rmsg_channel *ch)
{
	unsigned int ms = rmsg_chan_hb_ms(ch);

	if (ms)
		mod_timer(&ch->hb_timer, jiffies + msecs_to_jiffies(ms));
}

static void rmsg_chan_init(struct rmsg_channel *ch, struct rmsg_endpoint *ep,
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
	INIT_LIST_HEAD(&ch->dev_node);
	init_completion(&ch->close_sent);
	spin_lock_init(&ch->post_lock);
	INIT_WORK(&ch->work, rmsg_chan_progress);
	INIT_WORK(&ch->teardown, rmsg_chan_teardown);
	INIT_WORK(&ch->data_work, rmsg_data_work);
	timer_setup(&ch->repair_timer, rmsg_repair_timer, 0);
	timer_setup(&ch->hb_timer, rmsg_hb_timer, 0);
	timer_setup(&ch->stall_timer, rmsg_stall_timer, 0);
	init_waitqueue_head(&ch->tx_wq);
	init_waitqueue_head(&ch->cm_wq);
	INIT_LIST_HEAD(&ch->sig_node);
}

/*
 * Give the channel its id; refused once the endpoint is being released,
 * when the endpoint has max_channels (-ENOSPC) or its user
 * max_channels_per_user (-EDQUOT). From here on rmsg_chan_free() undoes it.
 */
static int rmsg_chan_publish(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	int ret;

	mutex_lock(&ep->chan_lock);
	if (ep->dying) {
		ret = -ESHUTDOWN;
	} else if (!rmsg_user_chan_add(ep)) {
		ret = -EDQUOT;
	} else {
		ret = xa_alloc(&ep->channels, &ch->id, ch,
			       XA_LIMIT(0, max_channels - 1), GFP_KERNEL);
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

/* --- events and state changes ---------------------------------------- */

void rmsg_chan_event(struct rmsg_channel *ch, u32 kind, int res)
{
	struct rmsg_cqe cqe = {
		.user_data	= ch->user_data,
		.res		= res,
		.flags		= kind,
		.channel	= ch->id,
	};

	if ((kind == RMSG_CQE_CONNECTED || kind == RMSG_CQE_ACCEPTED) && !res) {
		cqe.len = ch->block_size;
		cqe.aux = ch->max_msg;
	} else if (kind == RMSG_CQE_REQUEST) {
		cqe.len = ch->peer.block_size;
	}

	rmsg_ep_post_event(ch->ep, &cqe);
}

/*
 * The life cycle at the top of this file as a table: the states each state
 * may go to. A channel is born CONNECTING, REQUESTED or ACCEPTING
 * (rmsg_chan_init()) and leaves DYING only by being freed.
 */
static const u8 rmsg_chan_next[] = {
	[RMSG_CHAN_CONNECTING]	= BIT(RMSG_CHAN_OPEN) | BIT(RMSG_CHAN_DYING),
	[RMSG_CHAN_REQUESTED]	= BIT(RMSG_CHAN_ACCEPTING) |
				  BIT(RMSG_CHAN_DYING),
	[RMSG_CHAN_ACCEPTING]	= BIT(RMSG_CHAN_OPEN) | BIT(RMSG_CHAN_DYING),
	[RMSG_CHAN_OPEN]	= BIT(RMSG_CHAN_RECOVERING) |
				  BIT(RMSG_CHAN_DYING),
	[RMSG_CHAN_RECOVERING]	= BIT(RMSG_CHAN_OPEN) | BIT(RMSG_CHAN_DYING),
	[RMSG_CHAN_DYING]	= 0,
};
static_assert(ARRAY_SIZE(rmsg_chan_next) == RMSG_CHAN_DYING + 1);

/**
 * rmsg_chan_set_state() - the one place a channel changes state
 * @ch: the channel
 * @state: its new state
 * @error: why it is repaired (RECOVERING) or ends (DYING), else 0; for
 *	the tracepoint only
 *
 * A change that rmsg_chan_next[] does not allow is a bug of rmsg: it
 * warns once and leaves the state as it was. Callers check the state
 * they come from first, so that never happens.
 *
 * Caller holds ep->chan_lock.
 *
 * Return: true if the channel is now in @state.
 */
static bool rmsg_chan_set_state(struct rmsg_channel *ch,
				enum rmsg_chan_state state, int error)
{
	lockdep_assert_held(&ch->ep->chan_lock);
	if (WARN_ON_ONCE(!(rmsg_chan_next[ch->state] & BIT(state))))
		return false;
	trace_rmsg_chan_state(ch->ep->id, ch->id, ch->state, state, error);
	ch->state = state;
	return true;
}

/*
 * The repair's phases ("Repair" at the top of this file) as a table. A
 * failed attempt, or a device lost in any phase, goes back through DOWN's
 * step (rmsg_repair_drop()) to BACKOFF or WAITING without passing DOWN
 * itself; a channel that dies keeps the phase it died in.
 */
static const u8 rmsg_repair_next[] = {
	[RMSG_REPAIR_NONE]	= BIT(RMSG_REPAIR_DOWN),
	[RMSG_REPAIR_DOWN]	= BIT(RMSG_REPAIR_BACKOFF) |
				  BIT(RMSG_REPAIR_WAITING),
	[RMSG_REPAIR_BACKOFF]	= BIT(RMSG_REPAIR_BACKOFF) |
				  BIT(RMSG_REPAIR_DIALING),
	[RMSG_REPAIR_DIALING]	= BIT(RMSG_REPAIR_BACKOFF) |
				  BIT(RMSG_REPAIR_NONE),
	[RMSG_REPAIR_WAITING]	= BIT(RMSG_REPAIR_WAITING) |
				  BIT(RMSG_REPAIR_ACCEPTING),
	[RMSG_REPAIR_ACCEPTING]	= BIT(RMSG_REPAIR_WAITING) |
				  BIT(RMSG_REPAIR_NONE),
};
static_assert(ARRAY_SIZE(rmsg_repair_next) == RMSG_REPAIR_ACCEPTING + 1);

/*
 * The one place a repair changes phase: in the channel's work, so without
 * a lock. Like rmsg_chan_set_state(), it refuses what the table does not
 * allow.
 */
static void rmsg_repair_set_phase(struct rmsg_channel *ch,
				  enum rmsg_repair_phase phase)
{
	if (WARN_ON_ONCE(!(rmsg_repair_next[ch->phase] & BIT(phase))))
		return;
	trace_rmsg_repair_phase(ch->ep->id, ch->id, ch->phase, phase,
				ch->resil.epoch, ch->resil.attempts);
	ch->phase = phase;
}

/*
 * Ask for the channel to end with @error (0: orderly). Only the first
 * reason counts. Caller holds ep->chan_lock.
 */
static void rmsg_chan_kill_locked(struct rmsg_channel *ch, int error)
{
	lockdep_assert_held(&ch->ep->chan_lock);
	if (ch->state == RMSG_CHAN_DYING)
		return;
	/* The call that made it still uses it (rmsg_chan_setup_done()). */
	if (ch->setting_up) {
		if (!ch->kill_pending)
			ch->kill_error = error;
		ch->kill_pending = true;
		return;
	}
	/* The program sees only the errno; the log says the repair failed. */
	if (ch->state == RMSG_CHAN_RECOVERING && error)
		pr_notice_ratelimited("channel %u: repair ends with %d after %u attempts\n",
				      ch->id, error, ch->resil.attempts);
	else if (ch->state == RMSG_CHAN_OPEN && error && error != -ESHUTDOWN)
		pr_notice_ratelimited("channel %u: ends with %d, not repaired\n",
				      ch->id, error);
	/* Nobody accepted it: the peer hears a reject. */
	ch->reject = ch->state == RMSG_CHAN_REQUESTED;
	ch->error = error;
	rmsg_chan_set_state(ch, RMSG_CHAN_DYING, error);
	queue_work(rmsg_teardown_wq, &ch->teardown);
}

/*
 * The call that made @ch (RMSG_IOC_CONNECT, the connection request's
 * handler) is done with it: an end asked for meanwhile goes now.
 */
static void rmsg_chan_setup_done(struct rmsg_channel *ch)
{
	mutex_lock(&ch->ep->chan_lock);
	ch->setting_up = false;
	if (ch->kill_pending)
		rmsg_chan_kill_locked(ch, ch->kill_error);
	mutex_unlock(&ch->ep->chan_lock);
}

static void rmsg_chan_kill(struct rmsg_channel *ch, int error)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_kill_locked(ch, error);
	mutex_unlock(&ch->ep->chan_lock);
}

/*
 * rmsg_chan_kill() for completion handlers: they run in softirq and may not
 * take chan_lock (a mutex), so they record the first reason and leave the
 * rest to the channel's work.
 */
void rmsg_chan_kill_soft(struct rmsg_channel *ch, int error)
{
	cmpxchg(&ch->soft_error, 1, error);
	queue_work(rmsg_wq, &ch->work);
}

/**
 * rmsg_chan_inject() - inject a fault into a channel (RMSG_IOC_FAULT)
 * @ch: the channel
 * @kind: enum rmsg_fault_kind
 *
 * Caller holds ep->chan_lock, so nothing here may wait for an rdma_cm
 * handler.
 *
 * Return: 0, -ENOTCONN when the channel is not open, -EINVAL for an
 * unknown kind, or what ib_modify_qp() returns for a QP error or a
 * disconnect (which take effect before this returns).
 */
int rmsg_chan_inject(struct rmsg_channel *ch, u32 kind)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_ERR,
	};
	int ret;

	lockdep_assert_held(&ch->ep->chan_lock);
	switch (kind) {
	case RMSG_FAULT_QP_ERROR:
		if (ch->state != RMSG_CHAN_OPEN || !ch->qp)
			return -ENOTCONN;
		return ib_modify_qp(ch->qp, &attr, IB_QP_STATE);
	case RMSG_FAULT_DISCONNECT:
		if (ch->state != RMSG_CHAN_OPEN || !ch->qp)
			return -ENOTCONN;
		/*
		 * The connection carries nothing more once this returns, as
		 * rdma_disconnect() would leave it: its QP is in error first.
		 * The DREQ, which may not be sent under chan_lock, follows
		 * from the work, or from the repair's first step if that
		 * comes first.
		 */
		ret = ib_modify_qp(ch->qp, &attr, IB_QP_STATE);
		if (ret)
			return ret;
		set_bit(RMSG_CHAN_DISCONNECT_DUE, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	case RMSG_FAULT_DEVICE_FATAL:
		if (ch->state != RMSG_CHAN_OPEN || !ch->rdev)
			return -ENOTCONN;
		/* An open channel is on its device: it cannot go meanwhile. */
		rmsg_device_fatal(ch->rdev);
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The jiffy at which at least @ms have passed. A timer for jiffies + n
 * fires once n ticks have begun, which is up to a tick less than n
 * ticks of time (the current one has partly gone): the periods users
 * are promised (quiet, give-up) take one more.
 */
static unsigned long rmsg_jiffies_after_ms(unsigned int ms)
{
	return jiffies + msecs_to_jiffies(ms) + 1;
}

/* The channel's quiet period, or the endpoint's, or the module's. */
static unsigned int rmsg_stall_quiet_ms(const struct rmsg_channel *ch)
{
	return READ_ONCE(ch->opts.stall_ms) ?: ch->ep->stall_ms ?:
	       READ_ONCE(repair_quiet_ms);
}

/*
 * A repair begins quietly; an endpoint that wants to hear of long ones
 * (RMSG_EP_F_STALL_EVENTS) is told when the quiet period ends. Caller
 * holds ep->chan_lock.
 */
static void rmsg_stall_arm(struct rmsg_channel *ch)
{
	unsigned int ms = rmsg_stall_quiet_ms(ch);

	clear_bit(RMSG_CHAN_STALL_DUE, &ch->flags);
	if (ch->ep->stall_events)
		mod_timer(&ch->stall_timer, rmsg_jiffies_after_ms(ms));
}

/*
 * The quiet period ended: RMSG_CQE_STALLED if the channel is still being
 * repaired. In the channel's work, like RESUMED, so that the two come in
 * order, and before the teardown's CLOSED (it waits for the work).
 */
static void rmsg_chan_stalled(struct rmsg_channel *ch)
{
	struct rmsg_cqe cqe = {
		.user_data	= ch->user_data,
		.flags		= RMSG_CQE_STALLED,
		.channel	= ch->id,
	};
	bool post;

	mutex_lock(&ch->ep->chan_lock);
	post = ch->state == RMSG_CHAN_RECOVERING && !ch->resil.stalled;
	if (post) {
		ch->resil.stalled = true;
		cqe.res = ch->resil.last_error;
		cqe.len = div_u64(ktime_get_ns() - ch->resil.recover_start,
				  NSEC_PER_MSEC);
	}
	mutex_unlock(&ch->ep->chan_lock);
	if (!post)
		return;
	trace_rmsg_chan_stall(ch->ep->id, ch->id, false, cqe.len);
	rmsg_ep_post_event(ch->ep, &cqe);
}

/* Can a connection fault with @error be repaired on this channel? */
static bool rmsg_chan_repairable(struct rmsg_channel *ch, int error)
{
	if (!ch->shadow || !rmsg_chan_repair_ms(ch) ||
	    test_bit(RMSG_CHAN_PEER_RESET, &ch->flags))
		return false;
	switch (error) {
	case 0:			/* orderly */
	case -EPROTO:		/* a peer that breaks the protocol */
	case -ENOMEM:
		return false;
	default:
		return true;
	}
}

/*
 * A fault of the channel's connection: repair an open channel, give up
 * the attempt under way of one being repaired, end any other. Caller
 * holds ep->chan_lock.
 */
static void rmsg_chan_fault_locked(struct rmsg_channel *ch, int error)
{
	lockdep_assert_held(&ch->ep->chan_lock);
	trace_rmsg_chan_fault(ch->ep->id, ch->id, ch->state, error);
	if (ch->state == RMSG_CHAN_RECOVERING) {
		set_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
		return;
	}
	if (ch->state != RMSG_CHAN_OPEN || !rmsg_chan_repairable(ch, error)) {
		rmsg_chan_kill_locked(ch, error);
		return;
	}
	rmsg_chan_set_state(ch, RMSG_CHAN_RECOVERING, error);
	rmsg_repair_set_phase(ch, RMSG_REPAIR_DOWN);
	ch->resil.last_error = error;
	ch->resil.attempts = 0;
	ch->backoff_from = 0;
	ch->resil.max_attempts =
		rmsg_backoff_attempts(repair_backoff_ms, repair_backoff_max_ms,
				      rmsg_chan_repair_ms(ch));
	ch->resil.recover_start = ktime_get_ns();
	ch->deadline = rmsg_jiffies_after_ms(rmsg_chan_repair_ms(ch));
	rmsg_stall_arm(ch);
	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_chan_fault(struct rmsg_channel *ch, int error)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_fault_locked(ch, error);
	mutex_unlock(&ch->ep->chan_lock);
}

/*
 * What a REQ or REP carries: the hello, and after an ACCEPT the accepting
 * side's addresses (the REP has room for them, the REQ has not).
 */
struct rmsg_conn_data {
	struct rmsg_wire_hello hello;
	struct rmsg_wire_addrs addrs;
};
static_assert(offsetof(struct rmsg_conn_data, addrs) == RMSG_WIRE_HELLO_SIZE);
static_assert(sizeof(struct rmsg_conn_data) <= RMSG_WIRE_REP_SIZE);

static u32 rmsg_chan_hello(struct rmsg_channel *ch, u8 kind,
			   struct rmsg_conn_data *data);
static void rmsg_conn_param(struct rmsg_channel *ch, struct rdma_cm_id *id,
			    struct rdma_conn_param *param,
			    struct rmsg_conn_data *data, u32 len);

/*
 * A request is accepted (RMSG_IOC_ACCEPT, or at once by a listener without
 * RMSG_LISTEN_F_ACCEPT): the shadow of the peer's block is made, and the
 * REP goes. Not in the request's handler: that runs in ib_cm's only
 * thread, which every connection of the node waits for. rdma_accept() needs
 * the id's handler lock when called outside a handler; teardown waits for
 * this work before it destroys the id, and the state, checked under the
 * handler lock, says whether a teardown has begun.
 */
static void rmsg_chan_do_accept(struct rmsg_channel *ch)
{
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	bool go;
	u32 len;
	int ret;

	rdma_lock_handler(ch->cm_id);
	mutex_lock(&ch->ep->chan_lock);
	go = ch->state == RMSG_CHAN_ACCEPTING;
	mutex_unlock(&ch->ep->chan_lock);
	ret = 0;
	if (go) {
		/* Sized by the peer: made only once the request is accepted. */
		ret = rmsg_data_shadow_create(ch);
		if (!ret) {
			len = rmsg_chan_hello(ch, RMSG_HELLO_ACCEPT, &data);
			rmsg_conn_param(ch, ch->cm_id, &param, &data, len);
			ret = rdma_accept(ch->cm_id, &param);
		}
	}
	rdma_unlock_handler(ch->cm_id);
	if (ret)
		rmsg_chan_kill(ch, ret);
}

static void rmsg_chan_repair(struct rmsg_channel *ch);

/*
 * A heartbeat period of an open channel ended. Both sides send a HEARTBEAT
 * every period, whatever else they send: eager data arrives by RDMA WRITE,
 * which the receiving side never hears of. Any send, WRITE or READ of
 * ours that the peer acknowledged says the connection works our way: a
 * HEARTBEAT queued behind megabytes of rendezvous WRITEs may take seconds,
 * but those WRITEs complete meanwhile. What arrives does not count: it
 * shows the other way works, which the peer checks for itself, and a QP
 * whose sending half is stuck (rxe has left one so) still receives. A
 * period with none of this is a miss; heartbeat_misses in a row break the connection (ETIMEDOUT),
 * and the channel is repaired. A HEARTBEAT to a peer that is gone fails by
 * itself once the QP's retries run out.
 */
static void rmsg_chan_heartbeat(struct rmsg_channel *ch)
{
	unsigned int bit = RMSG_CHAN_CTRL_BUSY + RMSG_CTRL_HEARTBEAT_BUF -
			   RMSG_CTRL_RECVS;

	if (test_and_clear_bit(RMSG_CHAN_HEARD, &ch->flags)) {
		ch->hb_misses = 0;
	} else if (++ch->hb_misses >=
		   (READ_ONCE(ch->opts.heartbeat_misses) ?:
		    READ_ONCE(heartbeat_misses))) {
		rmsg_chan_fault(ch, -ETIMEDOUT);
		return;
	}
	/* One in flight at most: a slow one is a miss for the peer anyway. */
	if (!test_and_set_bit(bit, &ch->flags) &&
	    rmsg_ctrl_send(ch, RMSG_CTRL_HEARTBEAT_BUF, RMSG_CTRL_HEARTBEAT,
			   0)) {
		clear_bit(bit, &ch->flags);
		rmsg_chan_fault(ch, -ECONNRESET);
		return;
	}
	rmsg_hb_arm(ch);
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

	if (!soft_error) {
		rmsg_chan_kill(ch, 0);
		return;
	}
	if (soft_error < 0)
		rmsg_chan_fault(ch, soft_error);
	if (test_and_clear_bit(RMSG_CHAN_DISCONNECT_DUE, &ch->flags) &&
	    READ_ONCE(ch->state) == RMSG_CHAN_OPEN &&
	    test_bit(RMSG_CHAN_CONNECTED, &ch->flags))
		rdma_disconnect(ch->cm_id);
	if (test_and_clear_bit(RMSG_CHAN_ACCEPT_DUE, &ch->flags))
		rmsg_chan_do_accept(ch);
	if (test_and_clear_bit(RMSG_CHAN_STALL_DUE, &ch->flags))
		rmsg_chan_stalled(ch);
	if (READ_ONCE(ch->state) == RMSG_CHAN_RECOVERING) {
		rmsg_chan_repair(ch);
		return;
	}
	if (test_and_clear_bit(RMSG_CHAN_HEARTBEAT_DUE, &ch->flags) &&
	    READ_ONCE(ch->state) == RMSG_CHAN_OPEN)
		rmsg_chan_heartbeat(ch);

	if (!test_bit(RMSG_CHAN_CONNECTED, &ch->flags) ||
	    !test_bit(RMSG_CHAN_REGISTERED, &ch->flags) ||
	    !test_bit(RMSG_CHAN_PEER_READY, &ch->flags))
		return;
	mutex_lock(&ep->chan_lock);
	was = ch->state;
	if (was == RMSG_CHAN_CONNECTING || was == RMSG_CHAN_ACCEPTING) {
		rmsg_chan_set_state(ch, RMSG_CHAN_OPEN, 0);
		ch->reported = true;
		/* Under chan_lock: teardown cannot have stopped it yet. */
		rmsg_data_open(ch);
		ch->hb_misses = 0;
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

/* --- control messages and registration ------------------------------- */

static u32 rmsg_ctrl_lkey(struct rmsg_channel *ch)
{
	return ch->pd->local_dma_lkey;
}

int rmsg_ctrl_post_recv(struct rmsg_ctrl_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= sizeof(buf->msg),
		.lkey	= rmsg_ctrl_lkey(buf->ch),
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(buf->ch->qp, &wr, NULL);
}

int rmsg_ctrl_send(struct rmsg_channel *ch, unsigned int idx, u8 type, u64 arg)
{
	struct rmsg_ctrl_buf *buf = &ch->ctrl[idx];
	struct ib_device *ibdev = ch->rdev->ibdev;
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= sizeof(buf->msg),
		.lkey	= rmsg_ctrl_lkey(ch),
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	int ret;

	/* The buffer is free: its last message completed (or none left). */
	rmsg_ctrl_encode(&buf->msg, type, arg);
	ib_dma_sync_single_for_device(ibdev, buf->dma, sizeof(buf->msg),
				      DMA_TO_DEVICE);
	spin_lock_bh(&ch->post_lock);
	ret = ib_post_send(ch->qp, &wr, NULL);
	spin_unlock_bh(&ch->post_lock);
	return ret;
}

static void rmsg_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_channel *ch =
		container_of(wc->wr_cqe, struct rmsg_channel, reg_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			rmsg_chan_kill_soft(ch, -EIO);
		return;
	}
	set_bit(RMSG_CHAN_REGISTERED, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_ctrl_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_ctrl_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_ctrl_buf, cqe);
	struct rmsg_channel *ch = buf->ch;

	if (buf == &ch->ctrl[RMSG_CTRL_CLOSE_BUF]) {
		/* In order: every write before the CLOSE went through too. */
		if (wc->status == IB_WC_SUCCESS)
			set_bit(RMSG_CHAN_CLOSE_OK, &ch->flags);
		complete(&ch->close_sent);
	}
	if (wc->status == IB_WC_SUCCESS) {
		/* The peer acknowledged it: it is there. */
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
		rmsg_data_ctrl_sent(ch, buf - ch->ctrl);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
	}
}

static void rmsg_ctrl_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_ctrl_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_ctrl_buf, cqe);
	struct rmsg_channel *ch = buf->ch;
	struct ib_device *ibdev = ch->rdev->ibdev;
	u8 type;
	u64 arg;

	/*
	 * A flush too: receives are always posted, so this is how the QP's
	 * move to the error state shows (whatever moved it), and the channel
	 * is repaired. During a repair or a teardown only the first reason
	 * counts, and those drain the QP on purpose.
	 */
	if (wc->status != IB_WC_SUCCESS) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		if (rmsg_data_imm_in(ch, wc))
			return;
		goto repost;
	}
	ib_dma_sync_single_for_cpu(ibdev, buf->dma, sizeof(buf->msg),
				   DMA_FROM_DEVICE);
	if (rmsg_ctrl_decode(&buf->msg, wc->byte_len, &type, &arg)) {
		/* A peer that sends garbage is not one to keep talking to. */
		pr_notice_ratelimited("channel %u: a control message that is not one (%u bytes)\n",
				      ch->id, wc->byte_len);
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	if (type == RMSG_CTRL_CLOSE) {
		set_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags);
		rmsg_chan_kill_soft(ch, 0);
		return;
	}
	if (type == RMSG_CTRL_RESET) {
		set_bit(RMSG_CHAN_PEER_RESET, &ch->flags);
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	/*
	 * The buffer is free again before the message is acted on: a FIN
	 * lets the peer start another transfer, whose RTS and FIN need
	 * receives too.
	 */
	if (rmsg_ctrl_post_recv(buf)) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	if (type == RMSG_CTRL_READY) {
		set_bit(RMSG_CHAN_PEER_READY, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
	} else if (type == RMSG_CTRL_HEARTBEAT) {
		/* Arriving was all it had to do. */
	} else {
		rmsg_data_ctrl_in(ch, type, arg);
	}
	return;
repost:
	if (rmsg_ctrl_post_recv(buf))
		rmsg_chan_kill_soft(ch, -ECONNRESET);
}

/* --- verbs resources -------------------------------------------------- */

/* A control buffer, mapped for the channel's device. */
int rmsg_ctrl_buf_init(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
		       bool recv)
{
	struct ib_device *ibdev = ch->rdev->ibdev;

	buf->ch = ch;
	buf->cqe.done = recv ? rmsg_ctrl_recv_done : rmsg_ctrl_send_done;
	buf->dma = ib_dma_map_single(ibdev, &buf->msg, sizeof(buf->msg),
				     recv ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, buf->dma)) {
		buf->dma = 0;
		return -ENOMEM;
	}
	return 0;
}

void rmsg_ctrl_buf_exit(struct rmsg_channel *ch, struct rmsg_ctrl_buf *buf,
			bool recv)
{
	if (buf->dma)
		ib_dma_unmap_single(ch->rdev->ibdev, buf->dma,
				    sizeof(buf->msg),
				    recv ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	buf->dma = 0;
}

/* The receive block's pages: the channel's own, mapped by the program. */
static int rmsg_block_alloc(struct rmsg_channel *ch)
{
	struct rmsg_pages *block;
	struct scatterlist *sg;
	int i, ret;

	block = rmsg_pages_new(ch->ep, ch->block_size, 0);
	if (!block)
		return -ENOMEM;
	mutex_lock(&ch->ep->chan_lock);
	ch->block = block;	/* rmsg_chan_mmap() looks at it */
	mutex_unlock(&ch->ep->chan_lock);
	ret = sg_alloc_table(&ch->block_sgt, block->npages, GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(&ch->block_sgt, sg, i)
		sg_set_page(sg, block->pages[i], PAGE_SIZE, 0);
	return 0;
}

/* The block, mapped for the channel's device and under a new MR. */
static int rmsg_block_map(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	int nents, ret;

	ret = ib_dma_map_sgtable_attrs(ibdev, &ch->block_sgt,
				       DMA_BIDIRECTIONAL, 0);
	if (ret)
		return ret;
	ch->block_mapped = true;
	/*
	 * The program polls the block while the device writes it: a device
	 * whose mappings need syncs (not DMA-coherent, or bounced through
	 * swiotlb) would never show it what arrived.
	 */
	if (!ib_uses_virt_dma(ibdev) &&
	    dma_need_sync(ibdev->dma_device,
			  sg_dma_address(ch->block_sgt.sgl))) {
		dev_warn_once(&ibdev->dev,
			      "rmsg: DMA to this device needs syncs (not coherent, or bounce buffers): receive blocks cannot be polled, rmsg does not use it\n");
		return -EOPNOTSUPP;
	}

	ch->mr = rmsg_alloc_mr(ch->pd, ch->block->npages);
	if (IS_ERR(ch->mr)) {
		ret = PTR_ERR(ch->mr);
		ch->mr = NULL;
		return ret;
	}
	nents = ib_map_mr_sg(ch->mr, ch->block_sgt.sgl, ch->block_sgt.nents,
			     NULL, PAGE_SIZE);
	if (nents != ch->block_sgt.nents)
		return nents < 0 ? nents : -EINVAL;
	/*
	 * The peer addresses the block from 0: the hello must not carry
	 * the bus address ib_map_mr_sg() starts from (the pages are whole,
	 * so the offset in the first page stays 0 too).
	 */
	ch->mr->iova = 0;
	ib_update_fast_reg_key(ch->mr, ib_inc_rkey(ch->mr->rkey));
	return 0;
}

static int rmsg_block_register(struct rmsg_channel *ch)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode		= IB_WR_REG_MR,
			.wr_cqe		= &ch->reg_cqe,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.mr	= ch->mr,
		.key	= ch->mr->rkey,
		/* Not relaxed ordering: arrival is seen by the last byte. */
		.access	= IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	ch->reg_cqe.done = rmsg_reg_done;
	return ib_post_send(ch->qp, &wr.wr, NULL);
}

/* RDMA READs in flight each way: enough to keep a rendezvous going. */
static u8 rmsg_rd_depth(struct ib_device *ibdev)
{
	return min3(ibdev->attrs.max_qp_rd_atom,
		    ibdev->attrs.max_qp_init_rd_atom, 16);
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
	attr.send_cq = ch->cq;
	attr.recv_cq = ch->cq;
	attr.cap.max_send_wr = RMSG_QP_SEND_WRS;
	attr.cap.max_recv_wr = RMSG_CTRL_RECVS + RMSG_DRAIN_WRS +
			       (ch->rx_imm ? RMSG_IMM_RECVS : 0);
	attr.cap.max_send_sge = min_t(int, ibdev->attrs.max_send_sge,
				      RMSG_DATA_SGE_MAX);
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = RMSG_MAX_INLINE;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	if (attr.cap.max_send_sge < RMSG_DATA_SGE_MAX)
		return -EOPNOTSUPP;
	ret = rdma_create_qp(id, ch->pd, &attr);
	if (ret) {
		/* A device without inline data still does the job. */
		attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(id, ch->pd, &attr);
	}
	if (ret)
		return ret;
	ch->qp = id->qp;
	rmsg_rndv_init(ch, rmsg_rd_depth(ibdev));
	ch->max_inline = attr.cap.max_inline_data;
	ch->max_sge = attr.cap.max_send_sge;

	/* Receives may be posted in INIT: the peer's READY can come early. */
	for (i = 0; i < RMSG_CTRL_RECVS; i++) {
		ret = rmsg_ctrl_post_recv(&ch->ctrl[i]);
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
static bool rmsg_chan_dev_release(struct rmsg_channel *ch)
{
	struct ib_device *ibdev = ch->rdev->ibdev;
	struct rmsg_device *rdev = ch->rdev;
	int i;

	WARN_ON_ONCE(ch->qp);
	rmsg_data_dev_release(ch);
	if (ch->cq)
		ib_cq_pool_put(ch->cq, ch->cq_size);
	ch->cq = NULL;
	for (i = 0; i < ARRAY_SIZE(ch->ctrl); i++)
		rmsg_ctrl_buf_exit(ch, &ch->ctrl[i], i < RMSG_CTRL_RECVS);
	if (ch->mr)
		ib_dereg_mr(ch->mr);
	ch->mr = NULL;
	if (ch->block_mapped)
		ib_dma_unmap_sgtable_attrs(ibdev, &ch->block_sgt,
					   DMA_BIDIRECTIONAL, 0);
	ch->block_mapped = false;
	clear_bit(RMSG_CHAN_REGISTERED, &ch->flags);
	/* Rendezvous submissions look at it under ep->lock. */
	mutex_lock(&ch->ep->lock);
	ch->rdev = NULL;
	mutex_unlock(&ch->ep->lock);
	/* Every MR in it is gone: the block's and rendezvous' above. */
	if (ch->fence_mr)
		ib_dereg_mr(ch->fence_mr);
	ch->fence_mr = NULL;
	if (ch->pd)
		ib_dealloc_pd(ch->pd);
	ch->pd = NULL;
	WRITE_ONCE(ch->dev_id, 0);
	return rmsg_device_detach(rdev, &ch->dev_node);
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
	ch->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ch->pd)) {
		int ret = PTR_ERR(ch->pd);

		ch->pd = NULL;
		return ret;
	}
	if (ibdev->ops.driver_id != RDMA_DRIVER_RXE)
		return 0;
	ch->fence_mr = ib_alloc_mr(ch->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(ch->fence_mr)) {
		int ret = PTR_ERR(ch->fence_mr);

		ch->fence_mr = NULL;
		ib_dealloc_pd(ch->pd);
		ch->pd = NULL;
		return ret;
	}
	return 0;
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
	rdev = rmsg_device_attach(ibdev, &ch->dev_node);
	if (!rdev)
		return -ENODEV;
	ret = rmsg_chan_pd_alloc(ch, ibdev);
	if (ret) {
		rmsg_device_detach(rdev, &ch->dev_node);
		return ret;
	}
	mutex_lock(&ch->ep->lock);
	ch->rdev = rdev;
	ch->rndv.released = false;
	mutex_unlock(&ch->ep->lock);
	WRITE_ONCE(ch->dev_id, ibdev->index + 1);

	ret = rmsg_block_map(ch);
	if (!ret)
		ret = rmsg_data_dev_create(ch);
	if (ret)
		goto fail;
	/* Both queues, the drain's WR of each included. */
	ch->cq_size = RMSG_QP_SEND_WRS + RMSG_CTRL_RECVS + RMSG_DRAIN_WRS +
		      (ch->rx_imm ? RMSG_IMM_RECVS : 0);
	ch->cq = ib_cq_pool_get(ibdev, ch->cq_size, -1, IB_POLL_SOFTIRQ);
	if (IS_ERR(ch->cq)) {
		ret = PTR_ERR(ch->cq);
		ch->cq = NULL;
		goto fail;
	}
	for (i = 0; i < ARRAY_SIZE(ch->ctrl); i++) {
		ret = rmsg_ctrl_buf_init(ch, &ch->ctrl[i],
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
static int rmsg_chan_connection(struct rmsg_channel *ch,
				struct rdma_cm_id *id)
{
	int ret;

	/* Rendezvous keys the peer holds are sent again (REKEY). */
	if (ch->rdev && ch->rdev->ibdev != id->device)
		rmsg_chan_dev_release(ch);
	if (!ch->rdev) {
		ret = rmsg_chan_dev_create(ch, id->device);
		if (ret)
			return ret;
	}
	return rmsg_chan_new_qp(ch, id);
}

/*
 * What the channel keeps for its life (the block's pages, the data
 * path's memory), then its first connection's device and QP.
 */
static int rmsg_chan_create_qp(struct rmsg_channel *ch)
{
	int ret;

	ret = rmsg_block_alloc(ch);
	if (!ret)
		ret = rmsg_data_create(ch, ch->cm_id->device);
	if (!ret)
		ret = rmsg_chan_connection(ch, ch->cm_id);
	return ret;
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
static void rmsg_qp_drain(struct rdma_cm_id *id, struct ib_qp *qp,
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
static void rmsg_chan_release_verbs(struct rmsg_channel *ch, bool in_handler)
{
	struct rmsg_pages *block;

	if (ch->qp) {
		/* Afterwards no completion can touch the channel. */
		rmsg_qp_drain(ch->cm_id, ch->qp, in_handler);
		rdma_destroy_qp(ch->cm_id);
		ch->qp = NULL;
	}
	if (ch->rdev)
		ch->dev_gone = rmsg_chan_dev_release(ch);
	sg_free_table(&ch->block_sgt);
	mutex_lock(&ch->ep->chan_lock);
	block = ch->block;
	ch->block = NULL;
	mutex_unlock(&ch->ep->chan_lock);
	if (block)
		rmsg_pages_put(block);
}

/*
 * The hello of a REQ or REP in @data; an ACCEPT lists the addresses the
 * peer's repairs may dial after it. Return: the bytes of @data to send.
 */
static u32 rmsg_chan_hello(struct rmsg_channel *ch, u8 kind,
			   struct rmsg_conn_data *data)
{
	struct rmsg_hello hello = {
		.kind		= kind,
		.incarnation	= ch->ep->incarnation,
		.block_addr	= ch->mr->iova,
		.channel	= ch->id,
		.peer_channel	= kind == RMSG_HELLO_CONNECT ?
				  RMSG_WIRE_NO_CHANNEL : ch->peer.channel,
		.block_rkey	= ch->mr->rkey,
		.block_size	= ch->block_size,
		.flags		= ch->rx_imm ? RMSG_HELLO_F_IMM_ARRIVAL : 0,
		.epoch		= ch->resil.epoch,
	};
	struct rmsg_addrs addrs;

	if (ch->rndv.rekey_hello)
		hello.flags |= RMSG_HELLO_F_REKEY;

	/* A repair says where our stream stands: the peer resumes there. */
	if (ch->state == RMSG_CHAN_RECOVERING) {
		hello.rx_seq = ch->resume_seq;
		hello.rx_arrived = ch->resume_arrived;
		hello.rx_freed = ch->credit;
	}

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
	if (ch->adv_family && ch->cm_id)
		rmsg_local_addrs(ch->cm_id->route.addr.dev_addr.net,
				 ch->adv_family == AF_INET6, &addrs);
	return sizeof(data->hello) + rmsg_addrs_encode(&data->addrs, &addrs);
}

static void rmsg_conn_param(struct rmsg_channel *ch, struct rdma_cm_id *id,
			    struct rdma_conn_param *param,
			    struct rmsg_conn_data *data, u32 len)
{
	unsigned int timeout = READ_ONCE(ack_timeout);

	/* Only fails for a QP type that is not RC; ours is. */
	if (timeout)
		rdma_set_ack_timeout(id, min(timeout, 31U));
	memset(param, 0, sizeof(*param));
	param->private_data = data;
	param->private_data_len = len;
	/* Room for rendezvous reads from the start. */
	param->responder_resources = rmsg_rd_depth(ch->rdev->ibdev);
	param->initiator_depth = param->responder_resources;
	/*
	 * 7 would retry for ever on rxe (and means so for RNR everywhere):
	 * a QP whose peer is gone must fail in bounded time.
	 */
	param->retry_count = 6;
	param->rnr_retry_count = 7;
}

/* --- repair ------------------------------------------------------------ */

/*
 * Failover: the connecting side dials the address the channel was opened
 * with, or another of the peer's (rmsg_cm_peer_addrs()); each failed
 * attempt moves to the next, round-robin.
 */

/* The address family of a wildcard address @ss, else 0. */
static sa_family_t rmsg_wildcard_family(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET && sin->sin_addr.s_addr == INADDR_ANY)
		return AF_INET;
	if (ss->ss_family == AF_INET6 && ipv6_addr_any(&sin6->sin6_addr))
		return AF_INET6;
	return 0;
}

static __be16 rmsg_sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

/* @a as a socket address with @port. */
static void rmsg_addr_sockaddr(const struct rmsg_addr *a, __be16 port,
			       struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (a->family == RMSG_ADDR_IPV4) {
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, a->addr, sizeof(sin->sin_addr));
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, a->addr, sizeof(sin6->sin6_addr));
	}
}

/* The same host address (the port aside)? */
static bool rmsg_sockaddr_same_ip(const struct sockaddr_storage *a,
				  const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return false;
}

/* Where the next attempt dials. Caller holds ep->chan_lock. */
static void rmsg_dial_addr(struct rmsg_channel *ch,
			   struct sockaddr_storage *ss)
{
	u32 i = ch->dial_idx;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (!i || i > ch->alt_addrs.count)
		*ss = ch->peer_addr;
	else
		rmsg_addr_sockaddr(&ch->alt_addrs.addr[i - 1],
				   rmsg_sockaddr_port(&ch->peer_addr), ss);
}

/* Run the work at @when, or at the give-up deadline if that comes first. */
static void rmsg_repair_wake_at(struct rmsg_channel *ch, unsigned long when)
{
	if (time_after(when, ch->deadline))
		when = ch->deadline;
	mod_timer(&ch->repair_timer, when);
}

/**
 * rmsg_cm_settle() - wait until an id the channel let go of is the caller's
 * @ch: the channel
 * @id: an id it dropped (rmsg_repair_drop()), or its id when it is DYING
 *	(teardown: ch->cm_id is cleared if the rdma_cm took it back; NULL
 *	waits for the handlers only)
 *
 * Handlers that start after the channel let go of @id ignore it; one that
 * found it the channel's (it may be making a QP) is waited for here, and
 * so is the end of @id's route query if one is under way. Until then the
 * caller must not touch @id: a route query that the device's removal ends
 * makes its handler give @id back to the rdma_cm (rmsg_cm_give_back()),
 * which destroys it at once.
 *
 * Return: @id, or NULL when the rdma_cm took it back.
 */
static struct rdma_cm_id *rmsg_cm_settle(struct rmsg_channel *ch,
					 struct rdma_cm_id *id)
{
	bool routing = id && READ_ONCE(ch->route_id) == id;

	wait_event(ch->cm_wq, !READ_ONCE(ch->cm_busy) &&
			      (!id || READ_ONCE(ch->route_id) != id));
	mutex_lock(&ch->ep->chan_lock);
	if (id && ch->given_id == id) {
		ch->given_id = NULL;
		if (ch->cm_id == id)	/* teardown's */
			ch->cm_id = NULL;
		id = NULL;
	}
	mutex_unlock(&ch->ep->chan_lock);
	if (routing)
		pr_debug("channel %u: waited for a route query's end: id %s\n",
			 ch->id, id ? "ours to destroy" : "given back");
	return id;
}

/*
 * DOWN: drop the broken connection (or a failed attempt), keeping
 * everything that outlives connections.
 */
static int rmsg_repair_drop(struct rmsg_channel *ch)
{
	struct rdma_cm_id *id;

	mutex_lock(&ch->ep->lock);
	ch->tx_live = false;
	mutex_unlock(&ch->ep->lock);
	/*
	 * Handlers that start from now on ignore the id; one that is running
	 * (it may be making a QP) finishes in rmsg_cm_settle().
	 */
	mutex_lock(&ch->ep->chan_lock);
	id = ch->cm_id;
	ch->cm_id = NULL;
	mutex_unlock(&ch->ep->chan_lock);
	id = rmsg_cm_settle(ch, id);
	if (id && test_bit(RMSG_CHAN_CONNECTED, &ch->flags))
		rmsg_cm_id_disconnect(id);
	if (ch->qp) {
		/* Afterwards no completion of it can touch the channel. */
		rmsg_qp_drain(id, ch->qp, false);
		rdma_destroy_qp(id);
		ch->qp = NULL;
	}
	if (id)
		rmsg_cm_id_retire(id);
	clear_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	clear_bit(RMSG_CHAN_PEER_READY, &ch->flags);
	clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
	/* Errors from here on are the next attempt's. */
	WRITE_ONCE(ch->soft_error, 1);
	return rmsg_data_suspend(ch);
}

/* DIALING: a new rdma_cm id for the next attempt, resolving the peer. */
static int rmsg_repair_dial(struct rmsg_channel *ch)
{
	struct sockaddr_storage dst;
	struct rdma_cm_id *id;

	id = rdma_create_id(ch->net, rmsg_cm_handler, &ch->cm, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	mutex_lock(&ch->ep->chan_lock);
	ch->cm_id = id;
	ch->resil.epoch++;
	ch->resil.attempts++;
	rmsg_dial_addr(ch, &dst);
	mutex_unlock(&ch->ep->chan_lock);
	rmsg_repair_set_phase(ch, RMSG_REPAIR_DIALING);
	pr_debug("channel %u: attempt %u dials %pISp (address %u)\n", ch->id,
		 ch->resil.attempts, &dst, ch->dial_idx);
	ch->attempt_end = jiffies + msecs_to_jiffies(repair_attempt_ms);
	rmsg_repair_wake_at(ch, ch->attempt_end);
	return rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
				 ch->resolve_ms);
}

/*
 * Refuse a RECONNECT: @gone says the channel is not coming back, and the
 * dialling side ends it; otherwise it only fails that attempt.
 */
static void rmsg_repair_reject(struct rdma_cm_id *id, bool gone)
{
	__le32 why = cpu_to_le32(RMSG_WIRE_REJ_GONE);

	if (gone)
		rdma_reject(id, &why, sizeof(why), IB_CM_REJ_CONSUMER_DEFINED);
	else
		rdma_reject(id, NULL, 0, IB_CM_REJ_NO_RESOURCES);
}

/* Reject and destroy an attempt the accepting side will not take. */
static void rmsg_repair_refuse(struct rdma_cm_id *id, bool gone)
{
	rdma_lock_handler(id);
	rmsg_repair_reject(id, gone);
	rdma_unlock_handler(id);
	rdma_destroy_id(id);
}

/* Does a REJ say the channel is gone (rmsg_repair_reject())? */
static bool rmsg_repair_rejected_gone(const struct rdma_cm_event *event)
{
	const u8 *p = event->param.conn.private_data;

	return event->status == IB_CM_REJ_CONSUMER_DEFINED && p &&
	       event->param.conn.private_data_len >= RMSG_WIRE_REJ_SIZE &&
	       get_unaligned_le32(p) == RMSG_WIRE_REJ_GONE;
}

/* ACCEPTING: take the newest attempt the listener handed over. */
static int rmsg_repair_adopt(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	struct rdma_cm_id *id, *stale;
	struct rmsg_hello peer;
	u32 len;
	int ret;

	mutex_lock(&ep->chan_lock);
	id = ch->repair_id;
	stale = ch->stale_id;
	peer = ch->repair_hello;
	ch->repair_id = NULL;
	ch->stale_id = NULL;
	if (id) {
		ch->cm_id = id;
		ch->resil.attempts++;
	}
	mutex_unlock(&ep->chan_lock);
	if (stale)
		rmsg_repair_refuse(stale, false);
	if (!id)
		return 0;
	rmsg_repair_set_phase(ch, RMSG_REPAIR_ACCEPTING);
	ch->attempt_end = jiffies + msecs_to_jiffies(repair_attempt_ms);
	rmsg_repair_wake_at(ch, ch->attempt_end);

	rdma_lock_handler(id);
	ret = rmsg_chan_connection(ch, id);
	if (!ret)
		ret = rmsg_data_resume(ch, &peer);
	if (!ret) {
		len = rmsg_chan_hello(ch, RMSG_HELLO_ACCEPT, &data);
		rmsg_conn_param(ch, id, &param, &data, len);
		ret = rdma_accept(id, &param);
	}
	rdma_unlock_handler(id);
	return ret;
}

/* Connected again, and the peer is ready: the channel is open again. */
static void rmsg_repair_done(struct rmsg_channel *ch)
{
	struct rmsg_cqe cqe = {
		.user_data	= ch->user_data,
		.flags		= RMSG_CQE_RESUMED,
		.channel	= ch->id,
	};
	struct rmsg_cqe stalled = {
		.user_data	= ch->user_data,
		.flags		= RMSG_CQE_STALLED,
		.channel	= ch->id,
	};
	bool opened = false, resumed = false, late = false;
	u64 took;

	mutex_lock(&ch->ep->chan_lock);
	/* A device lost meanwhile: the next run of the work leaves it. */
	if (ch->state == RMSG_CHAN_RECOVERING &&
	    !test_bit(RMSG_CHAN_DEV_LOST, &ch->flags)) {
		rmsg_chan_set_state(ch, RMSG_CHAN_OPEN, 0);
		/*
		 * With the state, under chan_lock: a fault that comes as soon
		 * as the lock is dropped starts the next repair from NONE.
		 */
		rmsg_repair_set_phase(ch, RMSG_REPAIR_NONE);
		opened = true;
		took = ktime_get_ns() - ch->resil.recover_start;
		/* Nothing is written yet: the rewrite ahead is still whole. */
		trace_rmsg_repair_done(ch->ep->id, ch->id, ch->resil.epoch,
				       ch->resil.attempts, took,
				       ch->retx.end_seq - ch->retx.seq,
				       ch->retx.end - ch->retx.counter);
		resumed = ch->resil.stalled;
		ch->resil.stalled = false;
		cqe.len = div_u64(took, NSEC_PER_MSEC);
		/*
		 * Longer than the quiet period, but the timer's work came
		 * after this one: the repair is reported all the same, late.
		 */
		if (!resumed && ch->ep->stall_events &&
		    took > (u64)rmsg_stall_quiet_ms(ch) * NSEC_PER_MSEC) {
			late = true;
			resumed = true;
			stalled.res = ch->resil.last_error;
			stalled.len = cqe.len;
		}
		ch->resil.repairs++;
		ch->resil.recover_ns += took;
		ch->resil.attempts = 0;
		/* Under chan_lock: teardown cannot have stopped it yet. */
		rmsg_data_reopen(ch);
		ch->hb_misses = 0;
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
		rmsg_hb_arm(ch);
		/* Under chan_lock too: the next fault's rmsg_stall_arm() stays. */
		del_timer(&ch->stall_timer);
	}
	mutex_unlock(&ch->ep->chan_lock);
	del_timer(&ch->repair_timer);
	if (!opened)
		return;
	if (late) {
		trace_rmsg_chan_stall(ch->ep->id, ch->id, false, stalled.len);
		rmsg_ep_post_event(ch->ep, &stalled);
	}
	if (resumed) {
		trace_rmsg_chan_stall(ch->ep->id, ch->id, true, cqe.len);
		rmsg_ep_post_event(ch->ep, &cqe);
	}
}

/*
 * One step of a repair (the life cycle at the top of this file). Runs in
 * the channel's work, so steps never overlap; rdma_cm handlers, the timer
 * and completions only set bits and queue the work.
 */
static void rmsg_chan_repair(struct rmsg_channel *ch)
{
	unsigned long now = jiffies;
	bool failed;
	u32 delay;
	int ret;

	if (time_after_eq(now, ch->deadline)) {
		rmsg_chan_kill(ch, -ETIMEDOUT);
		return;
	}
	failed = test_and_clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags) ||
		 test_bit(RMSG_CHAN_DEV_LOST, &ch->flags) ||
		 ((ch->phase == RMSG_REPAIR_DIALING ||
		   ch->phase == RMSG_REPAIR_ACCEPTING) &&
		  time_after_eq(now, ch->attempt_end));
	if (ch->phase == RMSG_REPAIR_DOWN || failed) {
		/* An attempt failed: the next one tries the next address. */
		if (failed && ch->phase == RMSG_REPAIR_DIALING) {
			mutex_lock(&ch->ep->chan_lock);
			ch->dial_idx = (ch->dial_idx + 1) %
				       (ch->alt_addrs.count + 1);
			mutex_unlock(&ch->ep->chan_lock);
		}
		ret = rmsg_repair_drop(ch);
		if (ret) {
			rmsg_chan_kill(ch, ret == -EBUSY ? ch->resil.last_error :
					   ret);
			return;
		}
		/*
		 * Its device is going, or failed: leave it now (removal waits
		 * for that). The next attempt brings the channel to whatever
		 * device then reaches the peer.
		 */
		if (test_and_clear_bit(RMSG_CHAN_DEV_LOST, &ch->flags) &&
		    ch->rdev)
			rmsg_chan_dev_release(ch);
		/*
		 * The drain may have brought the peer's CLOSE (its DREQ can
		 * overtake it) or RESET: then the peer ended the channel.
		 */
		if (test_bit(RMSG_CHAN_PEER_RESET, &ch->flags)) {
			rmsg_chan_kill(ch, -ECONNRESET);
			return;
		}
		if (test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags)) {
			rmsg_chan_kill(ch, 0);
			return;
		}
		if (!ch->active) {
			rmsg_repair_set_phase(ch, RMSG_REPAIR_WAITING);
			rmsg_repair_wake_at(ch, ch->deadline);
		} else {
			/* The first attempt goes at once. */
			delay = ch->resil.attempts == ch->backoff_from ? 0 :
				rmsg_backoff_ms(ch->resil.attempts - 1 -
						ch->backoff_from,
						repair_backoff_ms,
						repair_backoff_max_ms,
						get_random_u32());
			rmsg_repair_set_phase(ch, RMSG_REPAIR_BACKOFF);
			ch->attempt_end = now + msecs_to_jiffies(delay);
			if (delay) {
				rmsg_repair_wake_at(ch, ch->attempt_end);
				return;
			}
		}
	}

	switch (ch->phase) {
	case RMSG_REPAIR_BACKOFF:
		/* A device came: dial now, and back off from the start. */
		if (test_and_clear_bit(RMSG_CHAN_DIAL_NOW, &ch->flags))
			ch->backoff_from = ch->resil.attempts;
		else if (time_before(now, ch->attempt_end))
			return;
		ret = rmsg_repair_dial(ch);
		if (ret)
			rmsg_chan_fault(ch, ret);
		return;
	case RMSG_REPAIR_WAITING:
		ret = rmsg_repair_adopt(ch);
		if (ret == -EPROTO)
			rmsg_chan_kill(ch, ret);
		else if (ret)
			rmsg_chan_fault(ch, ret);
		return;
	case RMSG_REPAIR_DIALING:
	case RMSG_REPAIR_ACCEPTING:
		if (test_bit(RMSG_CHAN_CONNECTED, &ch->flags) &&
		    test_bit(RMSG_CHAN_REGISTERED, &ch->flags) &&
		    test_bit(RMSG_CHAN_PEER_READY, &ch->flags))
			rmsg_repair_done(ch);
		return;
	default:
		return;
	}
}

/*
 * The listener hears a RECONNECT: hand it to the channel it names, if that
 * channel is this peer's and the attempt is newer than any seen. Called in
 * the listener's handler for the new @cm_id; a non-zero return has the
 * rdma_cm destroy it.
 */
static int rmsg_cm_repair_request(struct rmsg_endpoint *ep,
				  struct rdma_cm_id *cm_id,
				  const struct rmsg_hello *h)
{
	enum rmsg_repair_verdict verdict = RMSG_REPAIR_INVALID;
	struct rmsg_channel *ch;
	int ret = -ECONNRESET;

	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, h->peer_channel);
	if (ch && !ch->active && ch->shadow &&
	    (ch->state == RMSG_CHAN_OPEN || ch->state == RMSG_CHAN_RECOVERING))
		verdict = rmsg_repair_match(ch->peer.incarnation,
					    ch->peer.channel, ch->resil.epoch,
					    h);
	if (verdict == RMSG_REPAIR_RESTARTED)
		rmsg_chan_kill_locked(ch, -ECONNRESET);
	if (verdict == RMSG_REPAIR_ACCEPT && ch->repair_id && ch->stale_id)
		verdict = RMSG_REPAIR_STALE;	/* come again later */
	if (verdict == RMSG_REPAIR_ACCEPT) {
		/*
		 * An attempt taken before and not finished is one the peer
		 * gave up (it may never have heard our answer, on a path
		 * that fails one way): drop it now, take this one.
		 */
		if (ch->state == RMSG_CHAN_RECOVERING && ch->cm_id)
			set_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
		/* The peer saw the fault first. */
		if (ch->state == RMSG_CHAN_OPEN)
			rmsg_chan_fault_locked(ch, -ECONNRESET);
		if (ch->repair_id)
			ch->stale_id = ch->repair_id;
		ch->repair_id = cm_id;
		ch->repair_hello = *h;
		ch->resil.epoch = h->epoch;
		cm_id->context = &ch->cm;
		queue_work(rmsg_wq, &ch->work);
		ret = 0;
	}
	mutex_unlock(&ep->chan_lock);
	/*
	 * A stale attempt, or one that must come again later, is refused as
	 * a busy peer would (the dialling side tries again); anything else
	 * tells the peer the channel is not coming back (it gives up at
	 * once).
	 */
	if (ret)
		rmsg_repair_reject(cm_id, verdict != RMSG_REPAIR_STALE);
	return ret;
}

/* --- the end of a channel --------------------------------------------- */

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
	mutex_unlock(&ep->lock);
	cancel_work_sync(&ch->data_work);
	/*
	 * A setup that failed after its QP existed: the drain's flushed
	 * receives queued the work (which only notes an end, deferred
	 * while setting up). Another channel's run of the same work takes
	 * a cm handler lock, so this wait is never under one.
	 */
	cancel_work_sync(&ch->work);
	rmsg_data_free(ch);
	if (ch->net)
		put_net(ch->net);
	kfree(ch);
	if (counted)
		rmsg_user_chan_del(ep);
	if (atomic_dec_and_test(&ep->nr_channels))
		wake_up_all(&ep->chan_wq);
}

/* A channel whose setup failed in the connection request's handler. */
static void rmsg_chan_free_work(struct work_struct *work)
{
	rmsg_chan_free(container_of(work, struct rmsg_channel, teardown),
		       true);
}

static void rmsg_chan_teardown(struct work_struct *work)
{
	struct rmsg_channel *ch =
		container_of(work, struct rmsg_channel, teardown);
	struct rmsg_endpoint *ep = ch->ep;
	struct rdma_cm_id *repair_id, *stale_id;
	bool connected, orderly;
	u32 kind = 0;
	int res;

	/*
	 * A repair step under way finishes first; later runs of the work and
	 * of the timer see the channel DYING and do nothing.
	 */
	cancel_work_sync(&ch->work);
	del_timer_sync(&ch->repair_timer);
	del_timer_sync(&ch->hb_timer);
	del_timer_sync(&ch->stall_timer);
	mutex_lock(&ep->chan_lock);
	repair_id = ch->repair_id;
	stale_id = ch->stale_id;
	ch->repair_id = NULL;
	ch->stale_id = NULL;
	mutex_unlock(&ep->chan_lock);
	if (repair_id)
		rmsg_repair_refuse(repair_id, true);
	if (stale_id)
		rmsg_repair_refuse(stale_id, true);
	/*
	 * Handlers ignore a dying channel; wait for one already running (a
	 * handler that gave the id back to the rdma_cm may be one).
	 */
	rmsg_cm_settle(ch, ch->cm_id);
	connected = ch->cm_id && test_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	orderly = connected && ch->qp && !ch->error && !ch->abort &&
		  !test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags);

	/* Sends taken before the close are written first, if it is orderly. */
	rmsg_data_close(ch, orderly);
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
	else if (connected && ch->qp && (ch->abort || ch->error == -ESHUTDOWN) &&
		 !test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags) &&
		 !rmsg_ctrl_send(ch, RMSG_CTRL_CLOSE_BUF, RMSG_CTRL_RESET, 0))
		rmsg_data_close_sent(ch);
	if (connected)
		rmsg_cm_id_disconnect(ch->cm_id);
	if (ch->reject) {
		rdma_lock_handler(ch->cm_id);
		rdma_reject(ch->cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		rdma_unlock_handler(ch->cm_id);
	}
	rmsg_chan_release_verbs(ch, false);
	cancel_work_sync(&ch->data_work);
	/* An accept in progress uses the id: it finishes first. */
	cancel_work_sync(&ch->work);
	rmsg_data_finish(ch, ch->error ?: -ECONNRESET,
			 test_bit(RMSG_CHAN_CLOSE_OK, &ch->flags));
	/* Waits out a handler still running on this id; none can follow. */
	if (ch->cm_id)
		rmsg_cm_id_retire(ch->cm_id);
	cancel_work_sync(&ch->work);
	del_timer_sync(&ch->repair_timer);
	del_timer_sync(&ch->hb_timer);
	del_timer_sync(&ch->stall_timer);

	mutex_lock(&ep->chan_lock);
	xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);

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
	 * A program that hears of the end may open another channel at once:
	 * its room under max_channels_per_user is free before it does, as
	 * its id is.
	 */
	rmsg_user_chan_del(ep);
	if (kind)
		rmsg_chan_event(ch, kind, res);
	rmsg_chan_free(ch, false);
}

/* --- rdma_cm events ---------------------------------------------------- */

static int rmsg_cm_error(const struct rdma_cm_event *event, int fallback)
{
	return event->status < 0 ? event->status : fallback;
}

/* A connection request on the listener; @cm_id is the new connection's. */
static int rmsg_cm_request(struct rmsg_listener *l, struct rdma_cm_id *cm_id,
			   const struct rdma_cm_event *event)
{
	struct rmsg_endpoint *ep = l->ep;
	struct rmsg_channel *ch;
	int ret;

	ch = kzalloc(sizeof(*ch), RMSG_GFP_CHARGED);
	if (!ch)
		return -ENOMEM;
	ret = rmsg_hello_decode(&ch->peer, event->param.conn.private_data,
				event->param.conn.private_data_len);
	if (!ret && ch->peer.kind == RMSG_HELLO_RECONNECT) {
		ret = rmsg_cm_repair_request(ep, cm_id, &ch->peer);
		kfree(ch);
		return ret;
	}
	if (!ret && ch->peer.kind != RMSG_HELLO_CONNECT)
		ret = -EPROTO;
	if (!ret && ch->peer.block_size > l->peer_block_max)
		ret = -EMSGSIZE;
	if (ret) {
		kfree(ch);
		return ret;
	}
	rmsg_chan_init(ch, ep, l->manual ? RMSG_CHAN_REQUESTED :
					   RMSG_CHAN_ACCEPTING,
		       l->user_data, l->block_size);
	ch->cm_id = cm_id;
	ch->opts = l->opts;
	ch->adv_family = rmsg_wildcard_family(&l->addr);

	/*
	 * Published, the program may close it at once (its id is easy to
	 * guess): the end waits until this handler is done with it.
	 */
	ch->setting_up = true;
	ret = rmsg_chan_publish(ch);
	if (ret) {
		kfree(ch);
		return ret;
	}
	cm_id->context = &ch->cm;

	ret = rmsg_chan_create_qp(ch);
	if (!ret && l->manual) {
		rmsg_chan_setup_done(ch);
		/* Its teardown rejects it if nobody accepts it first. */
		rmsg_chan_event(ch, RMSG_CQE_REQUEST, 0);
		return 0;
	}
	if (!ret) {
		/* The channel's work accepts it, once this handler is done. */
		set_bit(RMSG_CHAN_ACCEPT_DUE, &ch->flags);
		rmsg_chan_setup_done(ch);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	}
	/* Returning an error makes the rdma_cm destroy cm_id. */
	rmsg_chan_release_verbs(ch, true);
	mutex_lock(&ep->chan_lock);
	xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);
	/*
	 * Not freed here: rmsg_chan_free() waits for the channel's work,
	 * whose accept step takes a cm handler lock, and this handler holds
	 * two (lockdep's report, Documentation/design.rst "Lock order").
	 * Still setting up, the work never touches cm_id, which the rdma_cm
	 * destroys on return; the endpoint's end waits for nr_channels.
	 */
	INIT_WORK(&ch->teardown, rmsg_chan_free_work);
	queue_work(rmsg_teardown_wq, &ch->teardown);
	return ret;
}

/*
 * The peer's addresses after its ACCEPT hello (connecting side): kept for
 * the repairs, less those equal to the address the channel was opened
 * with; the next repair starts at the address this connection is on.
 */
static int rmsg_cm_peer_addrs(struct rmsg_channel *ch,
			      struct rdma_cm_id *cm_id,
			      const struct rdma_cm_event *event)
{
	const u8 *p = event->param.conn.private_data;
	u32 len = event->param.conn.private_data_len;
	struct sockaddr_storage *dst = &cm_id->route.addr.dst_addr;
	struct sockaddr_storage ss;
	struct rmsg_addrs addrs;
	u32 i, j, n = 0, idx = 0;
	int ret;

	addrs.count = 0;
	if (p && len > RMSG_WIRE_HELLO_SIZE) {
		ret = rmsg_addrs_decode(&addrs, p + RMSG_WIRE_HELLO_SIZE,
					len - RMSG_WIRE_HELLO_SIZE);
		if (ret)
			return ret;
	}
	for (i = 0; i < addrs.count; i++) {
		rmsg_addr_sockaddr(&addrs.addr[i],
				   rmsg_sockaddr_port(&ch->peer_addr), &ss);
		if (rmsg_sockaddr_same_ip(&ss, &ch->peer_addr))
			continue;
		for (j = 0; j < n; j++)
			if (!memcmp(&addrs.addr[j], &addrs.addr[i],
				    sizeof(addrs.addr[i])))
				break;
		if (j < n)
			continue;
		if (rmsg_sockaddr_same_ip(&ss, dst))
			idx = n + 1;
		addrs.addr[n++] = addrs.addr[i];
	}
	addrs.count = n;
	mutex_lock(&ch->ep->chan_lock);
	ch->alt_addrs = addrs;
	ch->dial_idx = idx;
	mutex_unlock(&ch->ep->chan_lock);
	return 0;
}

/* A repair's ACCEPT hello: the same peer, and where it wants us to go on. */
static int rmsg_cm_repair_accepted(struct rmsg_channel *ch,
				   const struct rdma_cm_event *event)
{
	struct rmsg_hello h;
	int ret;

	ret = rmsg_hello_decode(&h, event->param.conn.private_data,
				event->param.conn.private_data_len);
	if (ret || h.kind != RMSG_HELLO_ACCEPT || h.channel != ch->peer.channel)
		return -EPROTO;
	if (h.incarnation != ch->peer.incarnation)
		return -ECONNRESET;	/* a stranger now: it restarted */
	ret = rmsg_cm_peer_addrs(ch, ch->cm_id, event);
	if (ret)
		return ret;
	return rmsg_data_resume(ch, &h);
}

/*
 * Route queries and device removal: after a DEVICE_REMOVAL handler returns
 * 0, Linux 6.1's rdma_cm cancels the id's route query, if it was in one,
 * through the id's device, and a concurrent rdma_destroy_id() clears that
 * device (a NULL dereference in cma_cancel_operation(), seen in a soak of
 * 1000 device removals). So an id whose route query is under way is not
 * destroyed by rmsg until the query has ended (rmsg_cm_settle() waits),
 * and at a device's removal the rdma_cm is given back, to destroy itself
 * (the handler returns 1):
 *  - the channel's own attempt that has no QP yet (@owned): the channel
 *    forgets it, and its repair dials again;
 *  - an id the channel let go of whose route query the removal ends: it
 *    is marked @ch->given_id for the waiter, which no longer touches it.
 * Decided here, in one hold of ep->chan_lock (the caller's), so that the
 * repair cannot take an id between the decision and the forgetting.
 *
 * Return: 1 when the rdma_cm is to destroy @cm_id, else 0.
 */
static int rmsg_cm_give_back(struct rmsg_channel *ch,
			     struct rdma_cm_id *cm_id,
			     enum rdma_cm_event_type event, bool owned)
{
	bool routing = cm_id == ch->route_id;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (routing && (event == RDMA_CM_EVENT_ROUTE_RESOLVED ||
			event == RDMA_CM_EVENT_ROUTE_ERROR ||
			event == RDMA_CM_EVENT_DEVICE_REMOVAL)) {
		ch->route_id = NULL;
		wake_up_all(&ch->cm_wq);
	}
	if (event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	if (owned && ch->active && !cm_id->qp && !ch->qp)
		ch->cm_id = NULL;
	else if (!owned && routing)
		ch->given_id = cm_id;
	else
		return 0;
	pr_debug("channel %u: %s id given back at device removal%s\n", ch->id,
		 owned ? "its attempt's" : "a dropped",
		 routing ? ", its route query ended" : "");
	return 1;
}

static void rmsg_sockaddr_copy(union rmsg_sockaddr *to,
			       const struct sockaddr_storage *from)
{
	memset(to, 0, sizeof(*to));
	if (from->ss_family == AF_INET)
		to->in = *(const struct sockaddr_in *)from;
	else if (from->ss_family == AF_INET6)
		to->in6 = *(const struct sockaddr_in6 *)from;
}

/* The newest connection's addresses, for RMSG_IOC_CHAN_ADDR. */
static void rmsg_chan_note_addrs(struct rmsg_channel *ch,
				 const struct rdma_cm_id *id)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_sockaddr_copy(&ch->conn_local, &id->route.addr.src_addr);
	rmsg_sockaddr_copy(&ch->conn_peer, &id->route.addr.dst_addr);
	mutex_unlock(&ch->ep->chan_lock);
}

static int rmsg_cm_owned_event(struct rmsg_channel *ch,
			       struct rdma_cm_id *cm_id,
			       const struct rdma_cm_event *event, bool repair)
{
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	u32 len;
	int ret;

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, resolve_timeout_ms);
		if (ret) {
			rmsg_chan_fault(ch, ret);
			break;
		}
		/* Its end is this id's next event: we hold its handler. */
		mutex_lock(&ch->ep->chan_lock);
		ch->route_id = cm_id;
		mutex_unlock(&ch->ep->chan_lock);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* A REQ would fail, and harm: rmsg_cm_id_retire(). */
		if (rmsg_cm_id_port_down(cm_id))
			ret = -ENETDOWN;
		else if (repair)
			ret = rmsg_chan_connection(ch, cm_id);
		else
			ret = rmsg_chan_create_qp(ch);
		if (!ret) {
			len = rmsg_chan_hello(ch, repair ?
					      RMSG_HELLO_RECONNECT :
					      RMSG_HELLO_CONNECT, &data);
			rmsg_conn_param(ch, cm_id, &param, &data, len);
			ret = rdma_connect_locked(cm_id, &param);
		}
		if (ret)
			rmsg_chan_fault(ch, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ch->active && repair) {
			ret = rmsg_cm_repair_accepted(ch, event);
			if (ret) {
				rmsg_chan_kill(ch, ret);
				break;
			}
		} else if (ch->active) {
			ret = rmsg_hello_decode(&ch->peer,
						event->param.conn.private_data,
						event->param.conn.private_data_len);
			if (!ret && ch->peer.kind != RMSG_HELLO_ACCEPT)
				ret = -EPROTO;
			if (!ret)
				ret = rmsg_cm_peer_addrs(ch, cm_id, event);
			if (!ret)
				ret = rmsg_data_shadow_create(ch);
			if (ret) {
				rmsg_chan_kill(ch, ret);
				break;
			}
		}
		set_bit(RMSG_CHAN_CONNECTED, &ch->flags);
		rmsg_chan_note_addrs(ch, cm_id);
		/*
		 * The send queue runs REG_MR before the READY that follows. A
		 * repair keeps the block's registration, unless the channel
		 * came to a device again.
		 */
		ret = test_bit(RMSG_CHAN_REGISTERED, &ch->flags) ? 0 :
		      rmsg_block_register(ch);
		if (!ret)
			ret = rmsg_ctrl_send(ch, RMSG_CTRL_READY_BUF,
					     RMSG_CTRL_READY, 0);
		if (ret)
			rmsg_chan_fault(ch, -ECONNRESET);
		else if (repair)
			queue_work(rmsg_wq, &ch->work);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* A repair the peer refuses: it no longer knows the channel. */
		if (repair && rmsg_repair_rejected_gone(event))
			rmsg_chan_kill(ch, -ECONNRESET);
		else
			rmsg_chan_fault(ch, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rmsg_chan_fault(ch, rmsg_cm_error(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rmsg_chan_fault(ch, rmsg_cm_error(event, -ECONNABORTED));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags))
			rmsg_chan_kill(ch, 0);
		else
			rmsg_chan_fault(ch, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * rmsg_ib_remove() moved the channels on the device already;
		 * this is an attempt whose id was on it, with a QP (else
		 * rmsg_cm_give_back() took it). Its repair drops the id,
		 * which the rdma_cm waits for.
		 */
		rmsg_chan_fault(ch, -ENODEV);
		break;
	default:
		break;
	}
	/* Channels destroy their cm_id themselves, in teardown. */
	return 0;
}

static int rmsg_cm_channel_event(struct rmsg_channel *ch,
				 struct rdma_cm_id *cm_id,
				 const struct rdma_cm_event *event)
{
	bool owned, repair;
	int ret;

	/*
	 * An id the channel let go of, or an attempt not adopted yet, says
	 * nothing about the connection the channel is on.
	 */
	mutex_lock(&ch->ep->chan_lock);
	owned = cm_id == ch->cm_id && ch->state != RMSG_CHAN_DYING;
	repair = ch->state == RMSG_CHAN_RECOVERING;
	ret = rmsg_cm_give_back(ch, cm_id, event->event, owned);
	if (owned)
		ch->cm_busy++;
	mutex_unlock(&ch->ep->chan_lock);
	if (!owned)
		return ret;

	if (ret)	/* the device under the attempt goes: dial again */
		rmsg_chan_fault(ch, -ENODEV);
	else
		ret = rmsg_cm_owned_event(ch, cm_id, event, repair);

	mutex_lock(&ch->ep->chan_lock);
	if (!--ch->cm_busy)
		wake_up_all(&ch->cm_wq);
	mutex_unlock(&ch->ep->chan_lock);
	return ret;
}

/* How often a deaf listener tries to listen again (a device's return). */
#define RMSG_REBIND_MS		100

/*
 * The device under a listener goes away. The rdma_cm does not finish
 * removing it while the id lives, so the id is handed to the rdma_cm to
 * destroy (a non-zero return) unless rmsg_chan_unlisten() already took it
 * and is destroying it itself (it waits for this handler). The listener
 * stays, deaf, and tries to listen again on its address until a device
 * has it: the peers of its channels dial back there. (A listener on a
 * wildcard address never hears of this: the rdma_cm keeps it listening on
 * every device, those to come included.)
 */
static int rmsg_cm_listener_removed(struct rmsg_listener *l)
{
	struct rmsg_endpoint *ep = l->ep;
	int ret = 0;

	mutex_lock(&ep->chan_lock);
	if (ep->listener == l && l->cm_id) {
		l->cm_id = NULL;
		ret = 1;
		queue_delayed_work(rmsg_wq, &l->rebind,
				   msecs_to_jiffies(RMSG_REBIND_MS));
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/* A new listening id on the listener's address. */
static struct rdma_cm_id *rmsg_listen_id(struct rmsg_listener *l,
					 struct sockaddr *addr)
{
	struct rdma_cm_id *cm_id;
	int ret;

	cm_id = rdma_create_id(l->net, rmsg_cm_handler, &l->cm, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return cm_id;
	ret = rdma_bind_addr(cm_id, addr);
	if (!ret)
		ret = rdma_listen(cm_id, l->backlog);
	if (ret) {
		rdma_destroy_id(cm_id);
		return ERR_PTR(ret);
	}
	return cm_id;
}

/* A deaf listener tries to listen again; rmsg_chan_unlisten() cancels. */
static void rmsg_listener_rebind(struct work_struct *work)
{
	struct rmsg_listener *l = container_of(to_delayed_work(work),
					       struct rmsg_listener, rebind);
	struct rmsg_endpoint *ep = l->ep;
	struct rdma_cm_id *cm_id;

	cm_id = rmsg_listen_id(l, (struct sockaddr *)&l->addr);
	mutex_lock(&ep->chan_lock);
	if (!IS_ERR(cm_id) && ep->listener == l && !l->cm_id) {
		l->cm_id = cm_id;
		cm_id = NULL;
	} else if (IS_ERR(cm_id) && ep->listener == l && !l->cm_id) {
		queue_delayed_work(rmsg_wq, &l->rebind,
				   msecs_to_jiffies(RMSG_REBIND_MS));
	}
	mutex_unlock(&ep->chan_lock);
	if (!IS_ERR_OR_NULL(cm_id))
		rdma_destroy_id(cm_id);
}

static int rmsg_cm_handler(struct rdma_cm_id *cm_id,
			   struct rdma_cm_event *event)
{
	struct rmsg_cm_ctx *ctx = cm_id->context;
	struct rmsg_listener *l = NULL;
	struct rmsg_channel *ch = NULL;
	struct mem_cgroup *old;
	int ret = 0;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	    ctx->kind != RMSG_CM_CHANNEL)
		l = container_of(ctx, struct rmsg_listener, cm);
	else
		ch = container_of(ctx, struct rmsg_channel, cm);
	old = rmsg_ep_charge_begin(ch ? ch->ep : l->ep);
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = rmsg_cm_request(l, cm_id, event);
		/*
		 * ib_cm answers a request whose handler failed with -ENOMEM
		 * with nothing at all, for the peer to try again: at a
		 * memory cgroup's limit it would try for a minute and more.
		 * Any other error is a reject, which the peer hears at once.
		 */
		if (ret == -ENOMEM)
			ret = -ECONNREFUSED;
	} else if (ch) {
		ret = rmsg_cm_channel_event(ch, cm_id, event);
	} else if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		ret = rmsg_cm_listener_removed(l);
	}
	rmsg_ep_charge_end(old);
	return ret;
}

/* --- the program's requests ------------------------------------------- */

/* The ranges of struct rmsg_chan_opts: 0 or -EINVAL. */
static int rmsg_opts_check(const struct rmsg_chan_opts *o)
{
	if (!rmsg_all_zero(o->resv, sizeof(o->resv)) ||
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
static int rmsg_opts_copy(struct rmsg_chan_opts *o, u64 uptr)
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
static int rmsg_chan_args(struct rmsg_endpoint *ep, u32 *size,
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

/**
 * rmsg_chan_listen() - RMSG_IOC_LISTEN: accept channels on an address
 * @ep: the endpoint, with rings
 * @uarg: struct rmsg_listen
 *
 * Return: 0, or -EINVAL, -EFAULT, -EAFNOSUPPORT, -EBUSY (already
 * listening), -EADDRINUSE, -EADDRNOTAVAIL, -ENOMEM.
 */
long rmsg_chan_listen(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_chan_opts opts;
	struct sockaddr_storage ss;
	struct rmsg_listen req;
	struct rmsg_listener *l;
	struct rdma_cm_id *cm_id;
	u32 len;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~RMSG_LISTEN_F_ACCEPT) || req.resv32)
		return -EINVAL;
	ret = rmsg_opts_copy(&opts, req.opts);
	if (ret)
		return ret;
	ret = rmsg_chan_args(ep, &req.block_size, &ss, req.addr, req.addr_len);
	if (ret)
		return ret;
	if (req.peer_block_max && rmsg_vb_check_block(req.peer_block_max))
		return -EINVAL;

	l = kzalloc(sizeof(*l), RMSG_GFP_CHARGED);
	if (!l)
		return -ENOMEM;
	l->cm.kind = RMSG_CM_LISTENER;
	l->ep = ep;
	l->manual = req.flags & RMSG_LISTEN_F_ACCEPT;
	l->user_data = req.user_data;
	l->block_size = req.block_size;
	l->opts = opts;
	l->peer_block_max = req.peer_block_max ?:
			    max(READ_ONCE(peer_block_max), req.block_size);
	/*
	 * As ucma's max_backlog: iWARP's listen allocates per entry, and the
	 * program's u32 must not become a negative int.
	 */
	l->backlog = clamp_t(u32, req.backlog ?: 128, 1, RMSG_LISTEN_BACKLOG_MAX);
	l->net = get_net(current->nsproxy->net_ns);
	INIT_DELAYED_WORK(&l->rebind, rmsg_listener_rebind);

	mutex_lock(&ep->chan_lock);
	if (ep->listener || ep->dying) {
		mutex_unlock(&ep->chan_lock);
		put_net(l->net);
		kfree(l);
		return -EBUSY;
	}
	ep->listener = l;
	mutex_unlock(&ep->chan_lock);

	cm_id = rmsg_listen_id(l, (struct sockaddr *)&ss);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto fail;
	}
	/* Listening again after a device's return: the same port. */
	memcpy(&l->addr, &cm_id->route.addr.src_addr, sizeof(l->addr));
	mutex_lock(&ep->chan_lock);
	l->cm_id = cm_id;
	mutex_unlock(&ep->chan_lock);

	/* Tell the program which port it got when it asked for any. */
	len = min_t(u32, req.addr_len, sizeof(ss));
	if (copy_to_user(u64_to_user_ptr(req.addr),
			 &cm_id->route.addr.src_addr, len)) {
		rmsg_chan_unlisten(ep);
		return -EFAULT;
	}
	return 0;
fail:
	mutex_lock(&ep->chan_lock);
	ep->listener = NULL;
	mutex_unlock(&ep->chan_lock);
	put_net(l->net);
	kfree(l);
	return ret;
}

/* Stop listening; waits for a connection request being handled. */
void rmsg_chan_unlisten(struct rmsg_endpoint *ep)
{
	struct rmsg_listener *l;
	struct rdma_cm_id *cm_id;

	mutex_lock(&ep->chan_lock);
	l = ep->listener;
	ep->listener = NULL;
	/* NULL when the rdma_cm destroyed it on device removal. */
	cm_id = l ? l->cm_id : NULL;
	mutex_unlock(&ep->chan_lock);
	if (!l)
		return;
	if (cm_id)
		rdma_destroy_id(cm_id);
	/* It sees the listener gone, and destroys any id it made itself. */
	cancel_delayed_work_sync(&l->rebind);
	put_net(l->net);
	kfree(l);
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
 * A heartbeat switched on for an open channel starts now; one switched off
 * stops. Timers already running keep their length.
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
		if (ch->state == RMSG_CHAN_OPEN && !rmsg_chan_hb_ms(ch))
			del_timer(&ch->hb_timer);
		else if (ch->state == RMSG_CHAN_OPEN && opts->heartbeat_ms)
			/* The new period from now, not after the old one. */
			rmsg_hb_arm(ch);
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/**
 * rmsg_chan_connect() - RMSG_IOC_CONNECT: start connecting a channel
 * @ep: the endpoint, with rings
 * @uarg: struct rmsg_connect; its channel is filled in
 *
 * The outcome arrives as an RMSG_CQE_CONNECTED event.
 *
 * Return: 0, or -EINVAL, -EFAULT, -EAFNOSUPPORT, -ENOSPC (too many
 * channels in the endpoint), -EDQUOT (too many of the user's), -ENOMEM,
 * or what rdma_resolve_addr() refuses at once (-EADDRNOTAVAIL for a
 * source address that is not the node's).
 */
long rmsg_chan_connect(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct sockaddr_storage ss, src;
	struct rmsg_chan_opts opts;
	struct rmsg_connect req;
	struct rmsg_channel *ch;
	struct rdma_cm_id *cm_id;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.channel)
		return -EINVAL;
	ret = rmsg_opts_copy(&opts, req.opts);
	if (ret)
		return ret;
	ret = rmsg_chan_args(ep, &req.block_size, &ss, req.addr, req.addr_len);
	if (ret)
		return ret;
	if (req.src_addr_len) {
		ret = rmsg_copy_addr(&src, req.src_addr, req.src_addr_len);
		if (ret)
			return ret;
		if (src.ss_family != ss.ss_family)
			return -EINVAL;
	}

	ch = kzalloc(sizeof(*ch), RMSG_GFP_CHARGED);
	if (!ch)
		return -ENOMEM;
	rmsg_chan_init(ch, ep, RMSG_CHAN_CONNECTING, req.user_data,
		       req.block_size);
	ch->opts = opts;
	/* Kept for the repairs, which dial again from a work item. */
	ch->peer_addr = ss;
	ch->resolve_ms = req.timeout_ms ?: resolve_timeout_ms;
	ch->net = get_net(current->nsproxy->net_ns);
	cm_id = rdma_create_id(ch->net, rmsg_cm_handler, &ch->cm, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		put_net(ch->net);
		kfree(ch);
		return PTR_ERR(cm_id);
	}
	ch->cm_id = cm_id;
	/*
	 * Published, the id may be closed by another thread at once: the
	 * end waits until this call is done with the channel (a teardown
	 * would free it under us, or after the failure path below did).
	 */
	ch->setting_up = true;
	ret = rmsg_chan_publish(ch);
	if (ret) {
		rdma_destroy_id(cm_id);
		put_net(ch->net);
		kfree(ch);
		return ret;
	}

	req.channel = ch->id;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto fail;
	}
	/* From here on the handler may run; the channel is complete. */
	ret = rdma_resolve_addr(cm_id, req.src_addr_len ?
				(struct sockaddr *)&src : NULL,
				(struct sockaddr *)&ss, ch->resolve_ms);
	if (ret)
		goto fail;
	rmsg_chan_setup_done(ch);
	return 0;
fail:
	/* Nobody else ends it while setting up: this call does, at once. */
	mutex_lock(&ep->chan_lock);
	xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);
	rdma_destroy_id(cm_id);
	rmsg_chan_free(ch, true);
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

	rmsg_chan_unlisten(ep);
	mutex_lock(&ep->chan_lock);
	ep->dying = true;
	xa_for_each(&ep->channels, id, ch)
		rmsg_chan_kill_locked(ch, -ESHUTDOWN);
	mutex_unlock(&ep->chan_lock);
	wait_event(ep->chan_wq, !atomic_read(&ep->nr_channels));
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
	list_for_each_entry(ch, &rdev->channels, dev_node)
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
	list_for_each_entry(ch, &rdev->channels, dev_node)
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

int rmsg_chan_init_module(void)
{
	rmsg_wq = alloc_workqueue("rmsg", WQ_MEM_RECLAIM, 0);
	if (!rmsg_wq)
		return -ENOMEM;
	rmsg_teardown_wq = alloc_workqueue("rmsg_teardown", WQ_MEM_RECLAIM, 0);
	if (!rmsg_teardown_wq) {
		destroy_workqueue(rmsg_wq);
		return -ENOMEM;
	}
	return 0;
}

void rmsg_chan_exit_module(void)
{
	destroy_workqueue(rmsg_teardown_wq);
	destroy_workqueue(rmsg_wq);
}

/**
 * rmsg_chan_mmap() - map a channel's receive block into the program
 * @ep: the endpoint
 * @vma: at RMSG_OFF_BLOCK(channel), read-only and shared
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
	int ret;

	if (off < RMSG_OFF_BLOCK_BASE ||
	    rel & ((1ULL << RMSG_OFF_BLOCK_SHIFT) - 1) ||
	    (rel >> RMSG_OFF_BLOCK_SHIFT) >= RMSG_MAX_CHANNELS ||
	    !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* The peer writes the block; the program only ever reads it. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;

	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, rel >> RMSG_OFF_BLOCK_SHIFT);
	if (ch && (ch->state == RMSG_CHAN_OPEN ||
		   ch->state == RMSG_CHAN_RECOVERING) && ch->block) {
		block = ch->block;
		kref_get(&block->ref);
	}
	mutex_unlock(&ep->chan_lock);
	if (!block)
		return -ENOENT;
	ret = rmsg_pages_mmap(block, vma, false);
	rmsg_pages_put(block);
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
