// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: repairing a channel whose connection broke, step by step, in the
 * channel's work (the phases of rmsg_lifecycle.c).
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_cm.c,
 * rmsg_conn.c, rmsg_cq.c, rmsg_data.c, rmsg_devices.c, rmsg_lifecycle.c
 * and rmsg_wr.c.
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
#include "rmsg_cq.h"
#include "rmsg_chan.h"
#include "rmsg_cm.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_repair.h"
#include "rmsg_trace.h"
#include "rmsg_wr.h"

static unsigned int repair_attempt_ms = 5000;
module_param(repair_attempt_ms, uint, 0644);
MODULE_PARM_DESC(repair_attempt_ms,
		 "How long one connection attempt of a repair may take");

/* --- repair ------------------------------------------------------------ */

/* Run the work at @when, or at the give-up deadline if that comes first. */
static void rmsg_repair_wake_at(struct rmsg_channel *ch, unsigned long when)
{
	if (time_after(when, ch->repair.deadline))
		when = ch->repair.deadline;
	mod_timer(&ch->repair.timer, when);
}

/*
 * DOWN: drop the broken connection (or a failed attempt), keeping
 * everything that outlives connections.
 */
int rmsg_repair_drop(struct rmsg_channel *ch)
{
	struct rmsg_conn *conn;
	struct rdma_cm_id *id = NULL;

	/*
	 * The data path stopped posting (tx_live) when the fault made the
	 * channel RECOVERING (rmsg_chan_fault_locked()); only
	 * rmsg_data_reopen(), on an OPEN channel, starts it again.
	 *
	 * Handlers that start from now on ignore the id; one that is running
	 * (it may be making a QP) finishes in rmsg_cm_settle().
	 */
	mutex_lock(&ch->ep->chan_lock);
	conn = ch->conn;
	if (conn) {
		id = conn->cm_id;
		conn->cm_id = NULL;
	}
	mutex_unlock(&ch->ep->chan_lock);
	id = rmsg_cm_settle(ch, id);
	if (id && test_bit(RMSG_CHAN_CONNECTED, &ch->flags))
		rmsg_cm_id_disconnect(id);
	if (conn && conn->qp) {
		/* Afterwards no completion of it can touch the channel. */
		rmsg_qp_drain(id, conn->qp, false);
		/* A carrier's channels leave the QP before it goes. */
		rmsg_carrier_quiesce(ch);
		rdma_destroy_qp(id);
		conn->qp = NULL;
	}
	if (id)
		rmsg_cm_id_retire(id);
	/* The next attempt builds a connection of its own. */
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_set_conn(ch, NULL);
	mutex_unlock(&ch->ep->chan_lock);
	clear_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	clear_bit(RMSG_CHAN_PEER_READY, &ch->flags);
	/* Only a first connection's hellos stand for READYs. */
	clear_bit(RMSG_CHAN_HELLO_READY, &ch->flags);
	clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
	/* Errors from here on are the next attempt's. */
	WRITE_ONCE(ch->soft_error, 1);
	return rmsg_data_suspend(ch);
}

/* DIALING: a new rdma_cm id for the next attempt, resolving the peer. */
static int rmsg_repair_dial(struct rmsg_channel *ch)
{
	struct sockaddr_storage dst;
	struct rmsg_conn *conn;
	struct rdma_cm_id *id;

	conn = rmsg_conn_new(NULL);
	if (!conn)
		return -ENOMEM;
	id = rdma_create_id(ch->net, rmsg_cm_handler, &ch->cm, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(conn);
		return PTR_ERR(id);
	}
	conn->cm_id = id;
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_set_conn(ch, conn);
	ch->resil.epoch++;
	ch->resil.attempts++;
	rmsg_dial_addr(ch, &dst);
	mutex_unlock(&ch->ep->chan_lock);
	rmsg_repair_set_phase(ch, RMSG_REPAIR_DIALING);
	pr_debug("channel %u: attempt %u dials %pISp (address %u)\n", ch->id,
		 ch->resil.attempts, &dst, ch->repair.dial_idx);
	ch->repair.attempt_end = jiffies + msecs_to_jiffies(repair_attempt_ms);
	rmsg_repair_wake_at(ch, ch->repair.attempt_end);
	return rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
				 ch->repair.resolve_ms);
}

/* ACCEPTING: take the newest attempt the listener handed over. */
static int rmsg_repair_adopt(struct rmsg_channel *ch)
{
	struct rmsg_endpoint *ep = ch->ep;
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	struct rdma_cm_id *id, *stale;
	struct rmsg_conn *conn;
	struct rmsg_hello peer;
	u32 len;
	int ret;

	/* Before the attempt is taken: without memory it waits its turn. */
	conn = rmsg_conn_new(NULL);
	if (!conn)
		return -ENOMEM;
	mutex_lock(&ep->chan_lock);
	id = ch->repair.id;
	stale = ch->repair.stale_id;
	peer = ch->repair.hello;
	ch->repair.id = NULL;
	ch->repair.stale_id = NULL;
	if (id) {
		conn->cm_id = id;
		rmsg_chan_set_conn(ch, conn);
		conn = NULL;
		ch->resil.attempts++;
	}
	mutex_unlock(&ep->chan_lock);
	kfree(conn);
	if (stale)
		rmsg_repair_refuse(stale, false);
	if (!id)
		return 0;
	rmsg_repair_set_phase(ch, RMSG_REPAIR_ACCEPTING);
	ch->repair.attempt_end = jiffies + msecs_to_jiffies(repair_attempt_ms);
	rmsg_repair_wake_at(ch, ch->repair.attempt_end);

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
		trace_rmsg_repair_done(
			ch->ep->id, ch->id, ch->resil.epoch, ch->resil.attempts,
			took, ch->retain.retx.end_seq - ch->retain.retx.seq,
			ch->retain.retx.end - ch->retain.retx.counter);
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
		ch->repair.hb_misses = 0;
		set_bit(RMSG_CHAN_HEARD, &ch->flags);
		rmsg_hb_arm(ch);
		/* Under chan_lock too: the next fault's rmsg_stall_arm() stays. */
		del_timer(&ch->repair.stall_timer);
	}
	mutex_unlock(&ch->ep->chan_lock);
	del_timer(&ch->repair.timer);
	if (!opened)
		return;
	/* A block the peer asked for while the connection was down. */
	if (test_bit(RMSG_CHAN_LEASE_ALLOC, &ch->flags))
		queue_work(rmsg_wq, &ch->work);
	if (late) {
		trace_rmsg_chan_stall(ch->ep->id, ch->id, false, stalled.len);
		rmsg_ep_post_event(ch->ep, &stalled);
	}
	if (resumed) {
		trace_rmsg_chan_stall(ch->ep->id, ch->id, true, cqe.len);
		rmsg_ep_post_event(ch->ep, &cqe);
	}
}

/* --- repair on a link ------------------------------------------------- */

/*
 * DOWN on a link: off the carrier's QP, once nothing of ours is on it,
 * keeping everything that outlives connections; on a link that is the
 * device too (the block's MR in the carrier's PD). The connection the
 * channel was on is down (rmsg_carrier_drain_wait() said so).
 */
static int rmsg_repair_link_drop(struct rmsg_channel *ch)
{
	rmsg_chan_link_let_go(ch);
	/* Their completions, flushed or not, come before the next ones. */
	rmsg_wr_link_wait(ch);
	rmsg_carrier_link_idle(ch);
	clear_bit(RMSG_CHAN_CONNECTED, &ch->flags);
	clear_bit(RMSG_CHAN_PEER_READY, &ch->flags);
	clear_bit(RMSG_CHAN_HELLO_READY, &ch->flags);
	clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
	clear_bit(RMSG_CHAN_LINK_UP, &ch->flags);
	clear_bit(RMSG_CHAN_LINK_ANSWERED, &ch->flags);
	/* Errors from here on are the next attempt's. */
	WRITE_ONCE(ch->soft_error, 1);
	return rmsg_data_suspend(ch);
}

/*
 * DOWN on a link waits for the carrier's drain (rmsg_carrier_drain_wait()):
 * the step comes back when rmsg_carrier_quiesce() queues the work, or at
 * the deadline. The fault that brought the channel here is taken: one
 * still in soft_error would fault it again on every run of the work, and
 * each such fault queues the work anew (a busy loop until the drain).
 * @failed: the attempt under way failed, which the next run must see.
 */
static void rmsg_repair_link_hold(struct rmsg_channel *ch, bool failed)
{
	int err = READ_ONCE(ch->soft_error);

	if (err < 0)
		cmpxchg(&ch->soft_error, err, 1);
	if (failed)
		set_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
	rmsg_repair_wake_at(ch, ch->repair.deadline);
}

/*
 * BACKOFF on a link, the dialling side: as soon as the carrier has a new
 * connection, rejoin it and send the RECONNECT there (DIALING). Until
 * then the channel waits: rmsg_carrier_established() runs its work.
 */
static int rmsg_repair_link_dial(struct rmsg_channel *ch)
{
	int ret;

	ret = rmsg_chan_link_rejoin(ch, NULL);
	if (ret)
		return ret == -ENOTCONN ? 0 : ret;
	mutex_lock(&ch->ep->chan_lock);
	ch->resil.epoch++;
	ch->resil.attempts++;
	mutex_unlock(&ch->ep->chan_lock);
	rmsg_repair_set_phase(ch, RMSG_REPAIR_DIALING);
	return rmsg_chan_link_hello(ch, RMSG_HELLO_RECONNECT, 0);
}

/*
 * WAITING on a link, the accepting side: once the peer's RECONNECT came
 * on the carrier's new connection, rejoin it, resume where the peer's
 * stream stands and answer with our ACCEPT (ACCEPTING), which says where
 * ours stands. Until then the channel waits: the RECONNECT's arrival
 * runs its work (rmsg_link_chan.c).
 */
static int rmsg_repair_link_adopt(struct rmsg_channel *ch)
{
	struct rmsg_hello peer;
	int ret;

	ret = rmsg_chan_link_rejoin(ch, &peer);
	if (ret)
		return ret == -ENOTCONN || ret == -EAGAIN ? 0 : ret;
	mutex_lock(&ch->ep->chan_lock);
	/* The dialling side's attempt: the ACCEPT answers it. */
	ch->resil.epoch = peer.epoch;
	ch->resil.attempts++;
	mutex_unlock(&ch->ep->chan_lock);
	set_bit(RMSG_CHAN_LINK_ANSWERED, &ch->flags);
	rmsg_repair_set_phase(ch, RMSG_REPAIR_ACCEPTING);
	ret = rmsg_data_resume(ch, &peer);
	if (!ret)
		ret = rmsg_chan_link_hello(ch, RMSG_HELLO_ACCEPT, 0);
	return ret;
}

/*
 * DIALING on a link, the peer's ACCEPT arrived: resume where its stream
 * stands, then register and send READY as a first connection does.
 */
static int rmsg_repair_link_accepted(struct rmsg_channel *ch)
{
	struct rmsg_hello peer;
	int ret;

	/* It came on a connection that ended since: the next one. */
	if (!rmsg_carrier_answer_take(ch, &peer))
		return -ECONNRESET;
	ret = rmsg_data_resume(ch, &peer);
	if (!ret)
		ret = rmsg_chan_link_up(ch);
	return ret;
}

/*
 * Can the repair of a channel on a link not go on? Its device is lost (a
 * channel cannot follow its carrier to another: its memory is in the
 * carrier's PD), the carrier ends or leaves its device, the peer reset or
 * closed the channel. Return: true, with what the channel ends with in
 * @why.
 */
static bool rmsg_repair_link_over(struct rmsg_channel *ch, int *why)
{
	if (test_bit(RMSG_CHAN_DEV_LOST, &ch->flags))
		*why = -ENODEV;
	else if (test_bit(RMSG_CHAN_PEER_RESET, &ch->flags) ||
		 !rmsg_carrier_may_repair(ch))
		*why = -ECONNRESET;
	else if (test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags))
		*why = 0;
	else
		return false;
	return true;
}

/*
 * A step of the repair of a channel on a link. The link is repaired as a
 * whole by its carrier, a channel of its own with a connection of its
 * own (the steps below, rmsg_chan_repair()); each channel on it waits
 * for the carrier's next connection, rejoins it, and resumes by the
 * hellos a connection of its own would carry in its REQ and REP, sent on
 * the link: a RECONNECT from the dialling side, an ACCEPT back. Attempts
 * have no time of their own: an attempt ends with the carrier's
 * connection, or with the peer's refusal, and the repair's deadline is
 * the one bound.
 */
static void rmsg_repair_link(struct rmsg_channel *ch)
{
	bool failed = test_and_clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
	int ret;

	if (ch->repair.phase == RMSG_REPAIR_DOWN || failed) {
		/*
		 * Before the drop, which ends the connection the channel is
		 * on if it faulted alone: a channel that ends anyway leaves
		 * the link's other channels alone (its end says so to the
		 * peer's, rmsg_chan_link_end()).
		 */
		if (rmsg_repair_link_over(ch, &ret)) {
			rmsg_chan_kill(ch, ret);
			return;
		}
		/*
		 * A channel that faulted alone ends the connection it is on:
		 * only that stops the peer's writes into its block. Every
		 * channel on that connection hears it until the carrier
		 * drained it, and comes back here then (or at the deadline,
		 * should that never happen).
		 */
		if (rmsg_carrier_drain_wait(ch)) {
			rmsg_repair_link_hold(ch, failed);
			return;
		}
		ret = rmsg_repair_link_drop(ch);
		if (ret) {
			rmsg_chan_kill(ch, ret == -EBUSY ? ch->resil.last_error :
					   ret);
			return;
		}
		/* What came while it waited for the link. */
		if (rmsg_repair_link_over(ch, &ret)) {
			rmsg_chan_kill(ch, ret);
			return;
		}
		rmsg_repair_set_phase(ch, ch->active ? RMSG_REPAIR_BACKOFF :
						       RMSG_REPAIR_WAITING);
		rmsg_repair_wake_at(ch, ch->repair.deadline);
	}

	switch (ch->repair.phase) {
	case RMSG_REPAIR_BACKOFF:
		ret = rmsg_repair_link_dial(ch);
		break;
	case RMSG_REPAIR_WAITING:
		ret = rmsg_repair_link_adopt(ch);
		break;
	case RMSG_REPAIR_DIALING:
		ret = test_and_clear_bit(RMSG_CHAN_LINK_UP, &ch->flags) ?
		      rmsg_repair_link_accepted(ch) : 0;
		break;
	case RMSG_REPAIR_ACCEPTING:
		ret = test_and_clear_bit(RMSG_CHAN_LINK_UP, &ch->flags) ?
		      rmsg_chan_link_up(ch) : 0;
		break;
	default:
		return;
	}
	if (ret == -EPROTO) {
		rmsg_chan_kill(ch, ret);
		return;
	}
	if (ret) {
		rmsg_chan_fault(ch, ret);
		return;
	}
	if ((ch->repair.phase == RMSG_REPAIR_DIALING ||
	     ch->repair.phase == RMSG_REPAIR_ACCEPTING) &&
	    test_bit(RMSG_CHAN_CONNECTED, &ch->flags) &&
	    test_bit(RMSG_CHAN_REGISTERED, &ch->flags) &&
	    test_bit(RMSG_CHAN_PEER_READY, &ch->flags))
		rmsg_repair_done(ch);
}

/*
 * One step of a repair (the life cycle at the top of rmsg_lifecycle.c). Runs in
 * the channel's work, so steps never overlap; rdma_cm handlers, the timer
 * and completions only set bits and queue the work.
 */
void rmsg_chan_repair(struct rmsg_channel *ch)
{
	unsigned long now, deadline;
	bool failed;
	u32 delay;
	int ret;

	/*
	 * The state that sent us here was read without chan_lock, and
	 * rmsg_chan_fault_locked() makes a channel RECOVERING before it sets
	 * the repair's deadline and counters, in a section that can last
	 * (it waits for ep->lock), on the rdma_cm's thread while this work
	 * runs. Taking chan_lock once shows what it set whole: not the
	 * deadline of the channel's last repair (or 0), which ended a
	 * channel with ETIMEDOUT before its first attempt.
	 */
	mutex_lock(&ch->ep->chan_lock);
	deadline = ch->repair.deadline;
	mutex_unlock(&ch->ep->chan_lock);
	now = jiffies;
	if (time_after_eq(now, deadline)) {
		rmsg_chan_kill(ch, -ETIMEDOUT);
		return;
	}
	if (ch->lchan) {
		rmsg_repair_link(ch);
		return;
	}
	failed = test_and_clear_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags) ||
		 test_bit(RMSG_CHAN_DEV_LOST, &ch->flags) ||
		 ((ch->repair.phase == RMSG_REPAIR_DIALING ||
		   ch->repair.phase == RMSG_REPAIR_ACCEPTING) &&
		  time_after_eq(now, ch->repair.attempt_end));
	if (ch->repair.phase == RMSG_REPAIR_DOWN || failed) {
		/* An attempt failed: the next one tries the next address. */
		if (failed && ch->repair.phase == RMSG_REPAIR_DIALING) {
			mutex_lock(&ch->ep->chan_lock);
			ch->repair.dial_idx = (ch->repair.dial_idx + 1) %
					      (ch->repair.alt_addrs.count + 1);
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
		    ch->dev.rdev)
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
			rmsg_repair_wake_at(ch, ch->repair.deadline);
		} else {
			/* The first attempt goes at once. */
			delay = ch->resil.attempts == ch->repair.backoff_from ?
					0 :
					rmsg_backoff_ms(
						ch->resil.attempts - 1 -
							ch->repair.backoff_from,
						repair_backoff_ms,
						repair_backoff_max_ms,
						get_random_u32());
			rmsg_repair_set_phase(ch, RMSG_REPAIR_BACKOFF);
			ch->repair.attempt_end = now + msecs_to_jiffies(delay);
			if (delay) {
				rmsg_repair_wake_at(ch, ch->repair.attempt_end);
				return;
			}
		}
	}

	switch (ch->repair.phase) {
	case RMSG_REPAIR_BACKOFF:
		/* A device came: dial now, and back off from the start. */
		if (test_and_clear_bit(RMSG_CHAN_DIAL_NOW, &ch->flags))
			ch->repair.backoff_from = ch->resil.attempts;
		else if (time_before(now, ch->repair.attempt_end))
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
