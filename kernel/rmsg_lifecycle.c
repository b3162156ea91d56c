// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: a channel's life cycle: its states and a repair's phases, each
 * change checked against the diagrams below, and what moves them: ends,
 * faults, the heartbeat, the stall report.
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
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_cq.c, rmsg_leases.c, rmsg_node.c
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
#include "rmsg_cq.h"
#include "rmsg_chan.h"
#include "rmsg_conn.h"
#include "rmsg_wr.h"
#include "rmsg_lifecycle.h"
#include "rmsg_node.h"
#include "rmsg_trace.h"

static unsigned int repair_timeout_ms = 30000;
module_param(repair_timeout_ms, uint, 0644);
MODULE_PARM_DESC(repair_timeout_ms,
		 "How long a broken channel is repaired before it fails with ETIMEDOUT (0: channels are not repaired)");

static unsigned int repair_quiet_ms = 5000;
module_param(repair_quiet_ms, uint, 0644);
MODULE_PARM_DESC(repair_quiet_ms,
		 "How long a repair stays quiet before endpoints that asked for it (RMSG_EP_F_STALL_EVENTS) get RMSG_CQE_STALLED");

unsigned int repair_backoff_ms = 20;
module_param(repair_backoff_ms, uint, 0644);
MODULE_PARM_DESC(repair_backoff_ms,
		 "Back-off before the second connection attempt of a repair; it doubles, with jitter, per attempt");

unsigned int repair_backoff_max_ms = 2000;
module_param(repair_backoff_max_ms, uint, 0644);
MODULE_PARM_DESC(repair_backoff_max_ms, "Longest back-off between attempts");

static unsigned int connect_timeout_ms;
module_param(connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "A channel not open this long after its connect, or after its accept began, ends with ETIMEDOUT (0: no bound but the rdma_cm's; default 0)");

static void rmsg_repair_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, repair.timer);

	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_hb_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, repair.hb_timer);

	set_bit(RMSG_CHAN_HEARTBEAT_DUE, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

static void rmsg_stall_timer(struct timer_list *t)
{
	struct rmsg_channel *ch = from_timer(ch, t, repair.stall_timer);

	set_bit(RMSG_CHAN_STALL_DUE, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

/* The timers of a channel that is being born. */
void rmsg_chan_timers_init(struct rmsg_channel *ch)
{
	timer_setup(&ch->repair.timer, rmsg_repair_timer, 0);
	timer_setup(&ch->repair.hb_timer, rmsg_hb_timer, 0);
	timer_setup(&ch->repair.stall_timer, rmsg_stall_timer, 0);
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

/**
 * rmsg_chan_open_by() - bound the time a channel may take to open
 * @ch: a channel connecting, or whose accept begins; in its work, or not
 *	published yet
 *
 * Its connect timeout (struct rmsg_chan_opts) from now: rmsg_chan_late()
 * says when it is past.
 */
void rmsg_chan_open_by(struct rmsg_channel *ch)
{
	unsigned int ms = rmsg_opt(READ_ONCE(ch->opts.connect_timeout_ms),
				   READ_ONCE(connect_timeout_ms));

	if (!ms)
		return;
	/* Never 0, which means none. */
	ch->repair.open_by = (jiffies + msecs_to_jiffies(ms)) | 1;
	mod_timer(&ch->repair.timer, ch->repair.open_by);
}

/* Is @ch not open yet and past its connect timeout? In its work. */
bool rmsg_chan_late(const struct rmsg_channel *ch)
{
	enum rmsg_chan_state state = READ_ONCE(ch->state);

	return (state == RMSG_CHAN_CONNECTING ||
		state == RMSG_CHAN_ACCEPTING) && ch->repair.open_by &&
	       time_after_eq(jiffies, ch->repair.open_by);
}

/**
 * rmsg_hb_arm() - the heartbeat of a channel that is open (again)
 * @ch: the channel; caller holds its endpoint's chan_lock
 *
 * A channel that keeps the module's heartbeat shares its peer node's
 * (rmsg_node.c) and has no timer of its own; one with a heartbeat
 * option of its own, or whose node could not be made, keeps its own
 * timer, whose next period starts now.
 */
void rmsg_hb_arm(struct rmsg_channel *ch)
{
	unsigned int ms;

	/*
	 * On a link: neither a node's member nor a timer of its own. The
	 * carrier keeps the heartbeat for the link, and its end is every
	 * channel's on it (rmsg_carrier.c).
	 */
	if (ch->lchan)
		return;
	if (!READ_ONCE(ch->opts.heartbeat_ms) &&
	    !READ_ONCE(ch->opts.heartbeat_misses) && !rmsg_node_join(ch)) {
		del_timer(&ch->repair.hb_timer);
		return;
	}
	rmsg_node_leave(ch);
	ms = rmsg_chan_hb_ms(ch);
	if (ms)
		mod_timer(&ch->repair.hb_timer, jiffies + msecs_to_jiffies(ms));
	else
		del_timer(&ch->repair.hb_timer);
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
		/* Set before, in the same work (rmsg_chan_window_enter()). */
		if (ch->in_window)
			cqe.flags |= RMSG_CQE_F_WINDOW;
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
bool rmsg_chan_set_state(struct rmsg_channel *ch,
				enum rmsg_chan_state state, int error)
{
	lockdep_assert_held(&ch->ep->chan_lock);
	if (WARN_ON_ONCE(!(rmsg_chan_next[ch->state] & BIT(state))))
		return false;
	trace_rmsg_chan_state(ch->ep->id, ch->id, ch->state, state, error);
	/* Only open channels share their node's heartbeat. */
	if (state != RMSG_CHAN_OPEN)
		rmsg_node_leave(ch);
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
void rmsg_repair_set_phase(struct rmsg_channel *ch,
				  enum rmsg_repair_phase phase)
{
	if (WARN_ON_ONCE(!(rmsg_repair_next[ch->repair.phase] & BIT(phase))))
		return;
	trace_rmsg_repair_phase(ch->ep->id, ch->id, ch->repair.phase, phase,
				ch->resil.epoch, ch->resil.attempts);
	ch->repair.phase = phase;
}

/*
 * Ask for the channel to end with @error (0: orderly). Only the first
 * reason counts. Caller holds ep->chan_lock.
 */
void rmsg_chan_kill_locked(struct rmsg_channel *ch, int error)
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
	/*
	 * A carrier's end waits for its channels' teardowns, which wait for
	 * it: never behind them on one queue (rmsg_link_wq says why).
	 */
	queue_work(rmsg_chan_is_carrier(ch) ? rmsg_link_wq : rmsg_teardown_wq,
		   &ch->teardown);
}

/*
 * The call that made @ch (RMSG_IOC_CONNECT, the connection request's
 * handler) is done with it: an end asked for meanwhile goes now.
 */
void rmsg_chan_setup_done(struct rmsg_channel *ch)
{
	mutex_lock(&ch->ep->chan_lock);
	ch->setting_up = false;
	if (ch->kill_pending)
		rmsg_chan_kill_locked(ch, ch->kill_error);
	mutex_unlock(&ch->ep->chan_lock);
}

void rmsg_chan_kill(struct rmsg_channel *ch, int error)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_kill_locked(ch, error);
	mutex_unlock(&ch->ep->chan_lock);
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
unsigned int rmsg_stall_quiet_ms(const struct rmsg_channel *ch)
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
		mod_timer(&ch->repair.stall_timer, rmsg_jiffies_after_ms(ms));
}

/*
 * The quiet period ended: RMSG_CQE_STALLED if the channel is still being
 * repaired. In the channel's work, like RESUMED, so that the two come in
 * order, and before the teardown's CLOSED (it waits for the work).
 */
void rmsg_chan_stalled(struct rmsg_channel *ch)
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
	/* A leased channel's shadow comes with its first send. */
	if (!ch->retain.on || !rmsg_chan_repair_ms(ch) ||
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
void rmsg_chan_fault_locked(struct rmsg_channel *ch, int error)
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
	/*
	 * From the moment the channel is RECOVERING (the channel list shows
	 * it once chan_lock is dropped) a send waits for the repair, as the
	 * pages promise, instead of going to the broken QP until DOWN runs:
	 * copied into the shadow there, it would complete with 0 even if the
	 * repair then gave up. chan_lock comes before ep->lock.
	 */
	mutex_lock(&ch->ep->lock);
	ch->tx_live = false;
	mutex_unlock(&ch->ep->lock);
	ch->resil.last_error = error;
	ch->resil.attempts = 0;
	ch->repair.backoff_from = 0;
	ch->resil.max_attempts =
		rmsg_backoff_attempts(repair_backoff_ms, repair_backoff_max_ms,
				      rmsg_chan_repair_ms(ch));
	ch->resil.recover_start = ktime_get_ns();
	ch->repair.deadline = rmsg_jiffies_after_ms(rmsg_chan_repair_ms(ch));
	rmsg_stall_arm(ch);
	queue_work(rmsg_wq, &ch->work);
}

void rmsg_chan_fault(struct rmsg_channel *ch, int error)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_chan_fault_locked(ch, error);
	mutex_unlock(&ch->ep->chan_lock);
}

/*
 * A heartbeat period of a channel with a timer of its own ended. Both
 * sides send a HEARTBEAT every period, whatever else they send: eager
 * data arrives by RDMA WRITE, which the receiving side never hears of.
 * Any send, WRITE or READ of ours that the peer acknowledged says the
 * connection works our way: a HEARTBEAT queued behind megabytes of
 * rendezvous WRITEs may take seconds, but those WRITEs complete
 * meanwhile. What arrives does not count: it shows the other way works,
 * which the peer checks for itself, and a QP whose sending half is stuck
 * (rxe has left one so) still receives. A period with none of this is a
 * miss; heartbeat_misses in a row break the connection (ETIMEDOUT), and
 * the channel is repaired. A HEARTBEAT to a peer that is gone fails by
 * itself once the QP's retries run out. Channels that keep the module's
 * heartbeat leave all this to their node (rmsg_node.c).
 */
static void rmsg_chan_heartbeat(struct rmsg_channel *ch)
{
	if (test_and_clear_bit(RMSG_CHAN_HEARD, &ch->flags)) {
		ch->repair.hb_misses = 0;
	} else if (++ch->repair.hb_misses >=
		   (READ_ONCE(ch->opts.heartbeat_misses) ?:
			    READ_ONCE(heartbeat_misses))) {
		rmsg_chan_fault(ch, -ETIMEDOUT);
		return;
	}
	/* One in flight at most: a slow one is a miss for the peer anyway. */
	if (rmsg_ctrl_try_send(ch, RMSG_CTRL_HEARTBEAT_BUF, RMSG_CTRL_HEARTBEAT,
			       0) == -ECONNRESET) {
		rmsg_chan_fault(ch, -ECONNRESET);
		return;
	}
	mutex_lock(&ch->ep->chan_lock);
	if (ch->state == RMSG_CHAN_OPEN && !ch->node)
		rmsg_hb_arm(ch);
	mutex_unlock(&ch->ep->chan_lock);
}

/**
 * rmsg_chan_liveness() - what the heartbeats asked of an open channel
 * @ch: the channel, in its work
 *
 * Its own timer's period (RMSG_CHAN_HEARTBEAT_DUE), or its node's
 * requests: a HEARTBEAT (RMSG_CHAN_BEACON_DUE), or a repair because the
 * channel or the whole node stayed silent (RMSG_CHAN_SILENT). A request
 * that finds the channel no longer open is dropped: a repaired channel
 * starts afresh.
 */
void rmsg_chan_liveness(struct rmsg_channel *ch)
{
	bool open = READ_ONCE(ch->state) == RMSG_CHAN_OPEN;

	if (test_and_clear_bit(RMSG_CHAN_SILENT, &ch->flags) && open) {
		rmsg_chan_fault(ch, -ETIMEDOUT);
		return;
	}
	if (test_and_clear_bit(RMSG_CHAN_BEACON_DUE, &ch->flags) && open &&
	    rmsg_ctrl_try_send(ch, RMSG_CTRL_HEARTBEAT_BUF,
			       RMSG_CTRL_HEARTBEAT, 0) == -ECONNRESET) {
		rmsg_chan_fault(ch, -ECONNRESET);
		return;
	}
	if (test_and_clear_bit(RMSG_CHAN_HEARTBEAT_DUE, &ch->flags) && open)
		rmsg_chan_heartbeat(ch);
}

/**
 * rmsg_chan_peer_ready() - the peer's READY came, or the hello that stood
 *	for it (RMSG_HELLO_F_READY)
 * @ch: the channel
 * @arg: the READY's argument: its lease resume point, checked by
 *	rmsg_ctrl_decode(); 0 for a hello's
 *
 * Softirq, or bottom halves off: the lease machines take it in order
 * with the lease messages after it, which therefore must not have come
 * yet (the link's order gives that for a hello).
 */
void rmsg_chan_peer_ready(struct rmsg_channel *ch, u64 arg)
{
	if (ch->lease.on)
		rmsg_lease_in(ch, RMSG_CTRL_READY, arg);
	set_bit(RMSG_CHAN_PEER_READY, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

/* What arrives for the life cycle: READY, CLOSE, RESET (softirq). */
static void rmsg_chan_ctrl_in(struct rmsg_channel *ch, u8 type, u64 arg)
{
	switch (type) {
	case RMSG_CTRL_READY:
		rmsg_chan_peer_ready(ch, arg);
		break;
	case RMSG_CTRL_CLOSE:
		set_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags);
		rmsg_chan_kill_soft(ch, 0);
		break;
	case RMSG_CTRL_RESET:
		set_bit(RMSG_CHAN_PEER_RESET, &ch->flags);
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		break;
	}
}

/* Our CLOSE or RESET left, or could not (softirq): teardown waits. */
static void rmsg_chan_close_sent(struct rmsg_channel *ch, unsigned int idx,
				 bool ok)
{
	/* In order: every write before the CLOSE went through too. */
	if (ok)
		set_bit(RMSG_CHAN_CLOSE_OK, &ch->flags);
	complete(&ch->close_sent);
}

/*
 * At module load: the control messages of the life cycle. HEARTBEAT is
 * not among them: arriving is all it has to do.
 */
void __init rmsg_lifecycle_init_module(void)
{
	rmsg_ctrl_on_recv(RMSG_CTRL_READY, rmsg_chan_ctrl_in, false);
	rmsg_ctrl_on_recv(RMSG_CTRL_CLOSE, rmsg_chan_ctrl_in, true);
	rmsg_ctrl_on_recv(RMSG_CTRL_RESET, rmsg_chan_ctrl_in, true);
	rmsg_ctrl_on_sent(RMSG_CTRL_CLOSE_BUF, 1, rmsg_chan_close_sent);
}
