// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the optional kernel submission poller of an endpoint (SQPOLL).
 *
 * An endpoint set up with RMSG_EP_F_SQPOLL gets one kernel thread,
 * "rmsg-sqp/<pid>", that takes SQEs from the SQ by itself, through the same
 * rmsg_ep_submit() RMSG_IOC_ENTER uses (under the endpoint's submit mutex),
 * so a busy program makes no system call per message. While the thread
 * polls, RMSG_SQ_NEED_WAKEUP is clear and rmsg_sq_submit() returns 0.
 *
 * After sqpoll_idle_ms without anything new in the SQ it goes to sleep:
 *
 *	set NEED_WAKEUP;  smp_mb();  re-read the SQ producer (and CQ consumer)
 *
 * and only sleeps when nothing moved. The program does the mirror image
 * (barrier B in <rdma/rmsg.h>): store the producer, full fence, read the
 * flags. Of the two store-then-load sequences one must see the other's
 * store, so either the poller sees the new SQEs and stays awake, or the
 * program sees NEED_WAKEUP and calls RMSG_IOC_ENTER, which wakes the thread.
 *
 * It runs in the caller's cgroups at its nice level; callers without
 * CAP_SYS_NICE are bounded per user (rmsg_user_sqpoll_add()).
 *
 * The thread only uses the endpoint, never the file: release stops it
 * (kthread_stop()) before the rings are freed, and it does not keep the
 * file open.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_region.c, rmsg_sq.c and
 * rmsg_user.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "rmsg.h"
#include "rmsg_cq.h"
#include "rmsg_region.h"

/* SQEs taken per pass, so that the submit mutex is not held too long. */
#define RMSG_SQPOLL_BATCH	256

/**
 * struct rmsg_sqpoll - the poller of one endpoint
 * @ep: the endpoint; outlives the thread (release stops the thread first)
 * @task: the thread
 * @wq: the thread sleeps here with NEED_WAKEUP set
 * @wake: RMSG_IOC_ENTER asked the thread to look at the SQ again
 * @idle: jiffies without new SQEs after which the thread sleeps
 */
struct rmsg_sqpoll {
	struct rmsg_endpoint *ep;
	struct task_struct *task;
	wait_queue_head_t wq;
	atomic_t wake;
	unsigned long idle;
};

/* The flags word is the poller's: clear while it polls, set to sleep. */
static void rmsg_sqpoll_set_flags(struct rmsg_endpoint *ep, u32 flags)
{
	if (READ_ONCE(*ep->sq.flags) != flags)
		WRITE_ONCE(*ep->sq.flags, flags);
}

/*
 * Sleep until RMSG_IOC_ENTER or kthread_stop() wakes us, unless the
 * program published something after we last looked (@prod, @cons).
 */
static void rmsg_sqpoll_sleep(struct rmsg_sqpoll *sqp, u32 prod, u32 cons)
{
	struct rmsg_endpoint *ep = sqp->ep;
	DEFINE_WAIT(wait);

	rmsg_sqpoll_set_flags(ep, RMSG_SQ_NEED_WAKEUP);
	/*
	 * B: the flag store before the producer load; pairs with the
	 * program's full fence between its producer store and flags load.
	 */
	smp_mb();
	if (READ_ONCE(*ep->sq.producer) != prod ||
	    READ_ONCE(*ep->cq.consumer) != cons)
		goto awake;

	prepare_to_wait(&sqp->wq, &wait, TASK_INTERRUPTIBLE);
	if (!atomic_read(&sqp->wake) && !kthread_should_stop())
		schedule();
	finish_wait(&sqp->wq, &wait);
awake:
	rmsg_sqpoll_set_flags(ep, 0);
}

static int rmsg_sqpoll_thread(void *data)
{
	struct rmsg_sqpoll *sqp = data;
	struct rmsg_endpoint *ep = sqp->ep;
	unsigned long idle_end = jiffies + sqp->idle;
	bool retry = true;
	u32 prod, cons, last_prod = 0, last_cons = 0;
	struct mem_cgroup *old;
	int ret;

	/* It runs the program's SQEs: their allocations are the program's. */
	old = rmsg_ep_charge_begin(ep);
	while (!kthread_should_stop()) {
		if (atomic_read(&sqp->wake) && atomic_xchg(&sqp->wake, 0)) {
			retry = true;
			idle_end = jiffies + sqp->idle;
		}
		prod = READ_ONCE(*ep->sq.producer);
		cons = READ_ONCE(*ep->cq.consumer);
		/*
		 * Only submit when the program moved an index (or the last
		 * pass took a full batch): a bad index the program leaves in
		 * place is counted once, not once per spin, and a full CQ is
		 * not retried until the program consumes.
		 */
		if (retry || prod != last_prod || cons != last_cons) {
			last_prod = prod;
			last_cons = cons;
			ret = rmsg_ep_submit(ep, RMSG_SQPOLL_BATCH);
			retry = ret > 0;
			if (ret > 0)
				idle_end = jiffies + sqp->idle;
			cond_resched();
			continue;
		}
		if (time_after(jiffies, idle_end)) {
			rmsg_sqpoll_sleep(sqp, prod, cons);
			retry = true;
			idle_end = jiffies + sqp->idle;
			continue;
		}
		/* Nothing new: poll on, yielding the CPU when asked to. */
		cond_resched();
		cpu_relax();
	}
	rmsg_ep_charge_end(old);
	return 0;
}

/*
 * Start the poller of @ep, whose rings exist; called under ep->lock. A
 * spinning kernel thread costs a CPU: it runs in the caller's cgroups (its
 * cpu controller's share and limits apply, as to the vhost workers), at
 * the caller's nice level, and rmsg_user_sqpoll_add() bounds how many a
 * user without CAP_SYS_NICE may have and how long they spin idle.
 */
int rmsg_sqpoll_start(struct rmsg_endpoint *ep, u32 idle_ms)
{
	struct rmsg_sqpoll *sqp;
	struct task_struct *task;
	int ret;

	ret = rmsg_user_sqpoll_add(ep, &idle_ms);
	if (ret)
		return ret;
	sqp = kzalloc(sizeof(*sqp), RMSG_GFP_CHARGED);
	if (!sqp) {
		rmsg_user_sqpoll_del(ep);
		return -ENOMEM;
	}
	sqp->ep = ep;
	init_waitqueue_head(&sqp->wq);
	atomic_set(&sqp->wake, 0);
	sqp->idle = msecs_to_jiffies(idle_ms ?: RMSG_SQPOLL_IDLE_DEFAULT_MS);
	/* Transfers from memory in no region pin the starter's (rmsg_region.c). */
	mmgrab(current->mm);
	ep->pin_mm = current->mm;
	ep->pin_limit = rmsg_region_pin_limit();
	/* Awake from the start: the program need not enter. */
	WRITE_ONCE(*ep->sq.flags, 0);
	task = kthread_create(rmsg_sqpoll_thread, sqp, "rmsg-sqp/%d",
			      task_tgid_nr(current));
	ret = IS_ERR(task) ? PTR_ERR(task) : cgroup_attach_task_all(current,
								    task);
	if (ret) {
		/* Never woken, it stops without running its function. */
		if (!IS_ERR(task))
			kthread_stop(task);
		mmdrop(ep->pin_mm);
		ep->pin_mm = NULL;
		kfree(sqp);
		rmsg_user_sqpoll_del(ep);
		return ret;
	}
	set_user_nice(task, task_nice(current));
	wake_up_process(task);
	sqp->task = task;
	ep->sqpoll = sqp;
	return 0;
}

/* Stop the poller, if any; from release, before the rings are freed. */
void rmsg_sqpoll_stop(struct rmsg_endpoint *ep)
{
	struct rmsg_sqpoll *sqp = ep->sqpoll;

	if (!sqp)
		return;
	kthread_stop(sqp->task);
	ep->sqpoll = NULL;
	mmdrop(ep->pin_mm);
	ep->pin_mm = NULL;
	kfree(sqp);
	rmsg_user_sqpoll_del(ep);
}

/**
 * rmsg_sqpoll_wake() - make the poller look at the SQ (wake it if it sleeps)
 * @ep: an endpoint with a poller; from RMSG_IOC_ENTER
 *
 * NEED_WAKEUP is cleared here rather than left for the thread: a woken
 * thread may wait for a CPU for milliseconds, and while the flag stays set
 * a busy-polling program enters again at every rmsg_sq_submit() (hundreds
 * of system calls for one wakeup). Clearing it is safe because @wake is
 * set after it: the thread consumes @wake (a full barrier) and then polls
 * the producer again before it may sleep, so everything published after
 * this call is seen, and any later "set NEED_WAKEUP" of the thread comes
 * after this store and wins.
 */
void rmsg_sqpoll_wake(struct rmsg_endpoint *ep)
{
	struct rmsg_sqpoll *sqp = ep->sqpoll;

	rmsg_sqpoll_set_flags(ep, 0);
	/* The flag store before @wake; pairs with the thread's atomic_xchg(). */
	smp_wmb();
	/*
	 * wake_up() takes the queue's lock, as prepare_to_wait() does: the
	 * thread is either queued already (and woken) or sees @wake after.
	 */
	atomic_set(&sqp->wake, 1);
	wake_up(&sqp->wq);
}
