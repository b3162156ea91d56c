// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the completion ring (CQ) from the kernel's side: entries posted by
 * the data path and by channel events, the events kept in order while the
 * ring is full, and waiting for entries (ENTER with GETEVENTS, poll()).
 * The SQ side, which posts the CQEs of SQEs it runs, is rmsg_sq.c; the
 * rings themselves are set up by rmsg_endpoint.c.
 *
 * The consumer index is the program's and untrusted: it is checked
 * (rmsg_ring_cons_ok()) before any slot is written. Barriers C and D are
 * those of Documentation/rings.rst.
 *
 * Layer (Documentation/design.rst, "Layers"): it calls no other file of
 * the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "rmsg.h"
#include "rmsg_cq.h"
#include "rmsg_ring.h"

/* An event that found the completion ring full. */
struct rmsg_event {
	struct list_head node;
	struct rmsg_cqe cqe;
};

/* CQEs ready for the program: kernel producer minus program's consumer. */
u32 rmsg_cq_ready(struct rmsg_endpoint *ep)
{
	return rmsg_ring_used(READ_ONCE(ep->cq_prod),
			      READ_ONCE(*ep->cq.consumer));
}

/* Enough entries, or kept events that now have room to be posted. */
static bool rmsg_ep_wait_done(struct rmsg_endpoint *ep, u32 min, u32 *ready)
{
	*ready = rmsg_cq_ready(ep);
	return *ready >= min ||
	       (*ready < ep->cq.entries && !list_empty_careful(&ep->overflow));
}

/**
 * rmsg_cq_wait() - wait until @min CQEs are ready (ENTER's GETEVENTS)
 * @ep: the endpoint, with rings
 * @min: entries to wait for, at most the ring's size
 *
 * A consumer index that leaves more than the CQ's size ready, or that the
 * kernel cannot accept when it moves kept events into the ring, is
 * impossible: the wait ends with -EINVAL instead of waking for events it
 * can never post. (One that went backwards within range is caught by the
 * next submission.) Every pass that does not sleep checks for signals, so
 * that no index the program writes keeps the task from being killed.
 *
 * Return: 0, -EINTR or -EINVAL.
 */
int rmsg_cq_wait(struct rmsg_endpoint *ep, u32 min)
{
	u32 ready;

	for (;;) {
		if (rmsg_ep_flush_events(ep) < 0) {
			atomic_long_inc(&ep->bad_index);
			return -EINVAL;
		}
		if (wait_event_interruptible(ep->wq,
					     rmsg_ep_wait_done(ep, min, &ready)))
			return -EINTR;
		if (ready > ep->cq.entries) {
			atomic_long_inc(&ep->bad_index);
			return -EINVAL;
		}
		if (ready >= min)
			return 0;
		if (signal_pending(current))
			return -EINTR;
		cond_resched();
	}
}

/**
 * rmsg_cq_flush_locked() - move kept events into the completion ring
 * @ep: the endpoint; the caller holds ep->lock
 *
 * While the ring has room. The consumer index is the program's: an
 * impossible one leaves the events kept.
 *
 * Return: 1 when anything was posted (the caller wakes the waiters), 0
 * when nothing was, -EINVAL for an impossible consumer index.
 */
int rmsg_cq_flush_locked(struct rmsg_endpoint *ep)
{
	struct rmsg_cqe *cqes = ep->cq.descs;
	struct rmsg_event *ev;
	u32 cons, prod = ep->cq_prod;
	int posted = 0;

	/* D: the program finished reading the CQEs before cons. */
	cons = smp_load_acquire(ep->cq.consumer);
	if (!rmsg_ring_cons_ok(prod, ep->cq_cons, cons))
		return -EINVAL;
	ep->cq_cons = cons;
	while (!list_empty(&ep->overflow) &&
	       rmsg_ring_free(ep->cq.entries, prod, cons)) {
		ev = list_first_entry(&ep->overflow, struct rmsg_event, node);
		list_del(&ev->node);
		ep->overflow_len--;
		cqes[rmsg_ring_slot(ep->cq.entries, prod)] = ev->cqe;
		kfree(ev);
		prod++;
		posted = 1;
	}
	if (posted) {
		WRITE_ONCE(ep->cq_prod, prod);
		/* C: the CQEs are written before the producer publishes them. */
		smp_store_release(ep->cq.producer, prod);
	}
	return posted;
}

/**
 * rmsg_ep_wake() - wake the endpoint's waiters after CQEs were published
 * @ep: the endpoint
 *
 * A busy-polling program never sleeps, and most completions find nobody
 * waiting: the wait queue's lock is then not taken at all. The full
 * barrier of wq_has_sleeper() orders the producer index, stored before,
 * against a waiter's look at it after it joined the queue: wait_event's
 * set_current_state(), and the barrier after poll_wait() in
 * rmsg_ep_poll().
 */
void rmsg_ep_wake(struct rmsg_endpoint *ep)
{
	if (wq_has_sleeper(&ep->wq))
		wake_up_interruptible_poll(&ep->wq, EPOLLIN | EPOLLRDNORM);
}

/**
 * rmsg_ep_flush_events() - post kept events the completion ring has room for
 * @ep: the endpoint
 *
 * Return: 0, or -EINVAL when events are kept and the program's consumer
 * index is impossible.
 */
int rmsg_ep_flush_events(struct rmsg_endpoint *ep)
{
	int posted;

	if (!rmsg_ep_ready(ep) || list_empty_careful(&ep->overflow))
		return 0;
	mutex_lock(&ep->lock);
	posted = rmsg_cq_flush_locked(ep);
	mutex_unlock(&ep->lock);
	if (posted > 0)
		rmsg_ep_wake(ep);
	return min(posted, 0);
}

/*
 * Entries kept while the completion ring is full, at most: a few events per
 * channel (opened, stalled, resumed, readable, closed) beyond the ring.
 */
#define RMSG_EP_KEPT_PER_CHANNEL	8

/*
 * Keep @cqe, in order, until the program makes room in the ring. The
 * memory is charged to the opener's cgroup, and bounded: a program that
 * reads no completions while its peers make events (a peer can force
 * repairs, each one STALLED and RESUMED) must not grow the kernel's memory
 * without end. Past the bound an event is dropped and counted
 * (rmsg_ep_stats.events_dropped); a @reserved CQE never is, since every
 * SQE completes exactly once, and those are bounded already: submission
 * reserved ring entries for them (ep->cq_reserved). Within the bound the
 * allocation does not fail, even at the cgroup's limit (which it may pass
 * by the bound's small entries), and calls no OOM killer: an event such
 * as the CONNECTED that reports a failure for want of memory must not be
 * lost to it.
 */
static void rmsg_ep_keep_locked(struct rmsg_endpoint *ep,
				const struct rmsg_cqe *cqe, bool reserved)
{
	u32 max = ep->cq.entries + RMSG_EP_KEPT_PER_CHANNEL *
		  (atomic_read(&ep->nr_channels) + 1);
	struct rmsg_event *ev = NULL;

	lockdep_assert_held(&ep->lock);
	if (reserved || ep->overflow_len < max)
		ev = kmalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT | __GFP_NORETRY |
			     __GFP_NOFAIL);
	if (!ev) {
		rmsg_ep_count(ep, RMSG_STAT_EVENTS_DROPPED);
		pr_notice_ratelimited("endpoint %u: completion ring full, %u entries waiting: an entry is dropped\n",
				      ep->id, ep->overflow_len);
		return;
	}
	ev->cqe = *cqe;
	list_add_tail(&ev->node, &ep->overflow);
	ep->overflow_len++;
}

/**
 * rmsg_ep_post_event() - report an event of a channel on the completion ring
 * @ep: the endpoint, with rings
 * @cqe: the entry
 *
 * When the ring is full the event is kept, in order, until the program
 * makes room (within a bound: rmsg_ep_keep_locked()). Process context.
 */
void rmsg_ep_post_event(struct rmsg_endpoint *ep, const struct rmsg_cqe *cqe)
{
	if (ep->kops) {
		ep->kops->event(ep, cqe);
		return;
	}
	mutex_lock(&ep->lock);
	rmsg_ep_keep_locked(ep, cqe, false);
	rmsg_cq_flush_locked(ep);
	mutex_unlock(&ep->lock);
	/* Also wakes a waiter whose ring was full: it may flush later. */
	rmsg_ep_wake(ep);
}

/**
 * rmsg_ep_post_cqe_locked() - post a CQE from the data path
 * @ep: the endpoint; the caller holds ep->lock
 * @cqe: the entry
 * @reserved: it is owed to an earlier SQE, for which submission kept a
 *	completion ring entry free (ep->cq_reserved)
 *
 * A reserved CQE goes straight in unless the program wrote an impossible
 * consumer index. Any CQE that does not fit waits, as an event would, on
 * the overflow list.
 */
void rmsg_ep_post_cqe_locked(struct rmsg_endpoint *ep,
			     const struct rmsg_cqe *cqe, bool reserved)
{
	u32 prod;

	lockdep_assert_held(&ep->lock);
	if (reserved && !WARN_ON_ONCE(!ep->cq_reserved))
		ep->cq_reserved--;
	/* Older kept events go first; this one may then fit behind them. */
	rmsg_cq_flush_locked(ep);
	prod = ep->cq_prod;
	if (list_empty(&ep->overflow) &&
	    rmsg_ring_free(ep->cq.entries, prod, ep->cq_cons)) {
		((struct rmsg_cqe *)ep->cq.descs)[rmsg_ring_slot(ep->cq.entries,
								 prod)] = *cqe;
		WRITE_ONCE(ep->cq_prod, prod + 1);
		/* C: the CQE is written before the producer publishes it. */
		smp_store_release(ep->cq.producer, prod + 1);
	} else {
		rmsg_ep_keep_locked(ep, cqe, reserved);
	}
	rmsg_ep_wake(ep);
}

/**
 * rmsg_cq_drop_kept() - free the events still kept, at endpoint teardown
 * @ep: the endpoint, which nothing posts into any more
 */
void rmsg_cq_drop_kept(struct rmsg_endpoint *ep)
{
	struct rmsg_event *ev, *next;

	list_for_each_entry_safe(ev, next, &ep->overflow, node)
		kfree(ev);
	INIT_LIST_HEAD(&ep->overflow);
	ep->overflow_len = 0;
}
