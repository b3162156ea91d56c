// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: endpoints. An endpoint is one open file of /dev/rmsg; it owns a
 * submission ring (SQ) and a completion ring (CQ) that the program maps
 * with mmap(). <rdma/rmsg.h> and Documentation/rings.rst describe the ABI
 * and the barrier pairing (A to D) the comments below refer to.
 *
 * Everything in the shared regions is written by the program and therefore
 * untrusted: the kernel keeps its own copy of each index it owns (SQ
 * consumer, CQ producer) and of the last index of the program's it accepted
 * (SQ producer, CQ consumer), checks every index the program wrote against
 * them with the rmsg_ring_*_ok() helpers, and copies each SQE once into a
 * local struct before looking at it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/memcontrol.h>
#include <linux/vmalloc.h>

#include "rmsg.h"
#include "rmsg_region.h"
#include "rmsg_ring.h"

/* Start of each ring region: producer, consumer, flags on their own lines. */
#define RMSG_RING_LINE		64
#define RMSG_RING_OFF_PROD	(0 * RMSG_RING_LINE)
#define RMSG_RING_OFF_CONS	(1 * RMSG_RING_LINE)
#define RMSG_RING_OFF_FLAGS	(2 * RMSG_RING_LINE)
#define RMSG_RING_OFF_DESCS	(3 * RMSG_RING_LINE)

/* The sizes the UAPI header promises. */
static_assert(sizeof(struct rmsg_ring_offsets) == 64);
static_assert(sizeof(struct rmsg_ep_setup) == 200);
static_assert(sizeof(struct rmsg_sqe) == 64);
static_assert(sizeof(struct rmsg_cqe) == 32);
static_assert(sizeof(struct rmsg_enter) == 40);
static_assert(RMSG_MAX_CQ_ENTRIES <= RMSG_RING_MAX_SIZE);
static_assert(RMSG_OFF_CQ_RING % PAGE_SIZE == 0);

/* An event that found the completion ring full. */
struct rmsg_event {
	struct list_head node;
	struct rmsg_cqe cqe;
};

static bool rmsg_ep_flush_locked(struct rmsg_endpoint *ep);

/* Pages of both rings, as charged at setup. */
static unsigned long rmsg_ep_ring_pages(struct rmsg_endpoint *ep)
{
	return (ep->sq.mmap_size + ep->cq.mmap_size) >> PAGE_SHIFT;
}

/**
 * rmsg_ep_create() - a new endpoint, for the file being opened
 *
 * Return: the endpoint, ERR_PTR(-ENOMEM), or ERR_PTR(-EMFILE) when its
 * user has max_endpoints_per_user already (rmsg_user.c).
 */
struct rmsg_endpoint *rmsg_ep_create(void)
{
	struct rmsg_endpoint *ep = kzalloc(sizeof(*ep), RMSG_GFP_CHARGED);
	int ret;

	if (!ep)
		return ERR_PTR(-ENOMEM);
	/* Who opened it, and what they may hold: fixed from here on. */
	ret = rmsg_user_open(ep);
	if (ret) {
		kfree(ep);
		return ERR_PTR(ret);
	}
	mutex_init(&ep->lock);
	init_waitqueue_head(&ep->wq);
	mutex_init(&ep->chan_lock);
	xa_init_flags(&ep->channels, XA_FLAGS_ALLOC);
	init_waitqueue_head(&ep->chan_wq);
	INIT_LIST_HEAD(&ep->overflow);
	INIT_LIST_HEAD(&ep->area_maps);
	INIT_LIST_HEAD(&ep->sig_owed);
	rmsg_regions_init(ep);
	do {
		ep->incarnation = get_random_u64();
	} while (!ep->incarnation);
	ep->tgid = get_pid(task_tgid(current));
	ep->memcg = get_mem_cgroup_from_mm(current->mm);
	/* Last: once registered, RMSG_IOC_CHAN_LIST of others may see it. */
	if (rmsg_ctl_register(ep)) {
		/* Nothing else was allocated yet. */
		mem_cgroup_put(ep->memcg);
		put_pid(ep->tgid);
		rmsg_user_close(ep);
		kfree(ep);
		return ERR_PTR(-ENOMEM);
	}
	return ep;
}

/*
 * Called from the file's release. Every VMA mapping a ring holds a
 * reference to the file (vma->vm_file), so release, and with it this
 * function, only runs once the last mapping is gone: closing the fd while
 * the rings are mapped leaves the memory in place until munmap() or exit.
 */
void rmsg_ep_destroy(struct rmsg_endpoint *ep)
{
	struct rmsg_event *ev, *next;

	/*
	 * Out of the registry before anything is torn down: other
	 * endpoints' ioctls find this one there only (rmsg_ctl.c).
	 */
	rmsg_ctl_unregister(ep);
	/* The poller runs SQEs, which will act on channels: it goes first. */
	rmsg_sqpoll_stop(ep);
	/*
	 * Channels post events into the rings: they go before the rings.
	 * The listener goes first, so that no new channel comes meanwhile.
	 */
	rmsg_chan_unlisten(ep);
	rmsg_chan_release_all(ep);
	/* Transfers still holding a region keep it; the table lets go. */
	rmsg_regions_release(ep);
	list_for_each_entry_safe(ev, next, &ep->overflow, node)
		kfree(ev);
	xa_destroy(&ep->channels);
	mutex_destroy(&ep->chan_lock);
	if (ep->sq.mem)
		rmsg_mlock_uncharge(ep->ring_user, rmsg_ep_ring_pages(ep));
	vfree(ep->sq.mem);
	vfree(ep->cq.mem);
	/* The program's mappings keep their own references to the pages. */
	if (ep->area)
		rmsg_pages_put(ep->area);
	mutex_destroy(&ep->lock);
	mem_cgroup_put(ep->memcg);
	put_pid(ep->tgid);
	rmsg_user_close(ep);
	kfree(ep);
}

static int rmsg_ep_ring_alloc(struct rmsg_ep_ring *ring, u32 entries,
			      size_t desc_size, struct rmsg_ring_offsets *off)
{
	size_t size = PAGE_ALIGN(RMSG_RING_OFF_DESCS + entries * desc_size);

	ring->mem = vmalloc_user(size);
	if (!ring->mem)
		return -ENOMEM;
	ring->mmap_size = size;
	ring->entries = entries;
	ring->producer = ring->mem + RMSG_RING_OFF_PROD;
	ring->consumer = ring->mem + RMSG_RING_OFF_CONS;
	ring->flags = ring->mem + RMSG_RING_OFF_FLAGS;
	ring->descs = ring->mem + RMSG_RING_OFF_DESCS;

	memset(off, 0, sizeof(*off));
	off->producer = RMSG_RING_OFF_PROD;
	off->consumer = RMSG_RING_OFF_CONS;
	off->flags = RMSG_RING_OFF_FLAGS;
	off->descs = RMSG_RING_OFF_DESCS;
	return 0;
}


long rmsg_ep_setup(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_ep_setup p;
	u32 sq_n, cq_n;
	int ret;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if ((p.flags & ~(RMSG_EP_F_SQPOLL | RMSG_EP_F_STALL_EVENTS)) ||
	    !rmsg_all_zero(p.resv, sizeof(p.resv)))
		return -EINVAL;
	if (!(p.flags & RMSG_EP_F_STALL_EVENTS) && p.stall_ms)
		return -EINVAL;
	if (p.send_area_size > RMSG_SEND_AREA_MAX)
		return -EINVAL;
	if (p.flags & RMSG_EP_F_SQPOLL ?
	    p.sqpoll_idle_ms > RMSG_SQPOLL_IDLE_MAX_MS : p.sqpoll_idle_ms)
		return -EINVAL;
	if (!p.sq_entries || p.sq_entries > RMSG_MAX_RING_ENTRIES)
		return -EINVAL;
	if (p.cq_entries > RMSG_MAX_CQ_ENTRIES)
		return -EINVAL;
	/*
	 * The poller is a kernel thread: the CPU it spins on is charged to
	 * no cgroup of the caller's, so only who may raise priorities gets
	 * one.
	 */
	if (p.flags & RMSG_EP_F_SQPOLL && !capable(CAP_SYS_NICE))
		return -EPERM;
	sq_n = roundup_pow_of_two(p.sq_entries);
	cq_n = p.cq_entries ? roundup_pow_of_two(p.cq_entries) : 2 * sq_n;
	if (cq_n < sq_n)
		return -EINVAL;

	mutex_lock(&ep->lock);
	if (ep->ready) {
		/* Not through out: the send area there is the endpoint's. */
		mutex_unlock(&ep->lock);
		return -EBUSY;
	}
	if (p.send_area_size) {
		ep->area = rmsg_pages_new(ep, p.send_area_size,
					  RMSG_AREA_CHUNK_ORDER);
		if (!ep->area) {
			ret = -ENOMEM;
			goto out;
		}
		ep->area_size = ep->area->npages << PAGE_SHIFT;
	}
	ret = rmsg_ep_ring_alloc(&ep->sq, sq_n, sizeof(struct rmsg_sqe),
				 &p.sq_off);
	if (ret)
		goto out;
	ret = rmsg_ep_ring_alloc(&ep->cq, cq_n, sizeof(struct rmsg_cqe),
				 &p.cq_off);
	if (!ret)
		ret = rmsg_mlock_charge(ep, rmsg_ep_ring_pages(ep),
					&ep->ring_user);
	if (ret) {
		vfree(ep->sq.mem);
		vfree(ep->cq.mem);
		memset(&ep->sq, 0, sizeof(ep->sq));
		memset(&ep->cq, 0, sizeof(ep->cq));
		goto out;
	}
	/* Without a kernel poller the program must always call ENTER. */
	WRITE_ONCE(*ep->sq.flags, RMSG_SQ_NEED_WAKEUP);
	if (p.flags & RMSG_EP_F_SQPOLL) {
		ret = rmsg_sqpoll_start(ep, p.sqpoll_idle_ms);
		if (ret) {
			rmsg_mlock_uncharge(ep->ring_user,
					    rmsg_ep_ring_pages(ep));
			ep->ring_user = NULL;
			vfree(ep->sq.mem);
			vfree(ep->cq.mem);
			memset(&ep->sq, 0, sizeof(ep->sq));
			memset(&ep->cq, 0, sizeof(ep->cq));
			goto out;
		}
	}
	/* Channels come later: they find these set. */
	ep->stall_events = p.flags & RMSG_EP_F_STALL_EVENTS;
	ep->stall_ms = p.stall_ms;
	/* mmap, poll and ENTER look at the rings only after this. */
	smp_store_release(&ep->ready, true);
out:
	if (ret && ep->area) {
		rmsg_pages_put(ep->area);
		ep->area = NULL;
		ep->area_size = 0;
	}
	mutex_unlock(&ep->lock);
	if (ret)
		return ret;

	p.sq_entries = sq_n;
	p.send_area_size = ep->area_size;
	p.cq_entries = cq_n;
	p.features = RMSG_FEATURES;
	p.sq_mmap_size = ep->sq.mmap_size;
	p.cq_mmap_size = ep->cq.mmap_size;
	if (copy_to_user(uarg, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

/*
 * Only the exact start of a region may be mapped, MAP_SHARED (read-only
 * too), for at most the region's size: anything else is EINVAL, as is
 * mapping before the rings exist.
 */
int rmsg_ep_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct rmsg_ep_ring *ring;

	if (!rmsg_ep_ready(ep))
		return -EINVAL;
	if (off >= RMSG_OFF_BLOCK_BASE)
		return rmsg_chan_mmap(ep, vma);
	if (off == RMSG_OFF_SEND_AREA)
		return ep->area ? rmsg_pages_mmap(ep->area, vma, true) :
				  -EINVAL;
	if (off == RMSG_OFF_SQ_RING)
		ring = &ep->sq;
	else if (off == RMSG_OFF_CQ_RING)
		ring = &ep->cq;
	else
		return -EINVAL;
	if (len > ring->mmap_size || !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* Sets VM_DONTEXPAND: mremap() cannot grow the mapping past it. */
	return remap_vmalloc_range(vma, ring->mem, 0);
}

/*
 * Run one SQE (the kernel's own copy; @next is a copy of the SQE after it,
 * or NULL). Returns whether *@cqe was filled in: a SEND may owe its CQE
 * until its write completes, and CREDIT and ARM post none unless they fail.
 */
static bool rmsg_ep_exec(struct rmsg_endpoint *ep, const struct rmsg_sqe *sqe,
			 const struct rmsg_sqe *next, struct rmsg_cqe *cqe)
{
	int res = -EINVAL;

	memset(cqe, 0, sizeof(*cqe));
	cqe->user_data = sqe->user_data;
	cqe->channel = sqe->channel;
	if (sqe->resv0 || !rmsg_all_zero(sqe->resv, sizeof(sqe->resv)))
		goto done;
	/* Only rendezvous operations take a region, a cookie or flags. */
	if (sqe->opcode != RMSG_OP_SEND_RNDV &&
	    sqe->opcode != RMSG_OP_RECV_RNDV &&
	    (sqe->flags || sqe->region || sqe->aux))
		goto done;
	switch (sqe->opcode) {
	case RMSG_OP_NOP:
		if (!sqe->channel && !sqe->addr && !sqe->len)
			res = 0;
		break;
	case RMSG_OP_SEND:
	case RMSG_OP_CREDIT:
	case RMSG_OP_ARM:
	case RMSG_OP_SEND_RNDV:
	case RMSG_OP_RECV_RNDV:
		return rmsg_data_exec(ep, sqe, next, cqe);
	default:
		break;
	}
done:
	if (res == -EINVAL)
		atomic_long_inc(&ep->bad_desc);
	cqe->res = res;
	return true;
}

/*
 * Take up to @to_submit SQEs, stopping early when the CQ is full: a CQE the
 * program has not consumed is never overwritten. Returns the number taken,
 * -EBUSY when SQEs were waiting but the CQ had no room for any, -EINVAL
 * (taking nothing) when the program wrote an impossible index. Called by
 * ENTER, or by the endpoint's kernel poller (rmsg_sqpoll.c) instead.
 */
int rmsg_ep_submit(struct rmsg_endpoint *ep, u32 to_submit)
{
	struct rmsg_ep_ring *sq = &ep->sq, *cq = &ep->cq;
	const struct rmsg_sqe *sqes = sq->descs;
	struct rmsg_cqe *cqes = cq->descs;
	u32 prod, cons, sq_cons, cq_prod, n, done;
	struct rmsg_sqe sqe, next;
	struct rmsg_cqe cqe;
	int ret;

	mutex_lock(&ep->lock);
	/* A: the SQEs before prod were written before prod. */
	prod = smp_load_acquire(sq->producer);
	/* D: the program finished reading the CQEs before cons. */
	cons = smp_load_acquire(cq->consumer);
	if (!rmsg_ring_prod_ok(sq->entries, ep->sq_cons, ep->sq_prod, prod) ||
	    !rmsg_ring_cons_ok(ep->cq_prod, ep->cq_cons, cons)) {
		atomic_long_inc(&ep->bad_index);
		ret = -EINVAL;
		goto out;
	}
	ep->sq_prod = prod;
	ep->cq_cons = cons;
	/* Kept events are older than what this call completes. */
	rmsg_ep_flush_locked(ep);
	/* The program may have overwritten it; the poller owns it, if any. */
	if (!ep->sqpoll)
		WRITE_ONCE(*sq->flags, RMSG_SQ_NEED_WAKEUP);

	sq_cons = ep->sq_cons;
	cq_prod = ep->cq_prod;
	n = min(to_submit, rmsg_ring_used(prod, sq_cons));
	/*
	 * One copy of each SQE, then only the copy is looked at: the program
	 * may rewrite a slot at any time (no double fetch). The next one is
	 * copied ahead, for a SEND to see whether more follow on its channel.
	 */
	if (n)
		memcpy(&sqe, &sqes[rmsg_ring_slot(sq->entries, sq_cons)],
		       sizeof(sqe));
	for (done = 0; done < n; done++) {
		/* Room for this SQE's CQE beside those owed to SENDs. */
		if (rmsg_ring_free(cq->entries, cq_prod, cons) <=
		    ep->cq_reserved)
			break;
		if (done + 1 < n)
			memcpy(&next, &sqes[rmsg_ring_slot(sq->entries,
							   sq_cons + 1)],
			       sizeof(next));
		barrier();
		if (rmsg_ep_exec(ep, &sqe, done + 1 < n ? &next : NULL, &cqe))
			cqes[rmsg_ring_slot(cq->entries, cq_prod++)] = cqe;
		sq_cons++;
		sqe = next;
	}
	rmsg_data_batch_end(ep);
	if (done) {
		ep->sq_cons = sq_cons;
		WRITE_ONCE(ep->cq_prod, cq_prod);
		/* D: the SQEs are read before their slots are handed back. */
		smp_store_release(sq->consumer, sq_cons);
		/* C: the CQEs are written before the producer publishes them. */
		smp_store_release(cq->producer, cq_prod);
		wake_up_interruptible_poll(&ep->wq, EPOLLIN | EPOLLRDNORM);
	}
	ret = done ? done : n ? -EBUSY : 0;
out:
	mutex_unlock(&ep->lock);
	return ret;
}

/* CQEs ready for the program: kernel producer minus program's consumer. */
static u32 rmsg_ep_cq_ready(struct rmsg_endpoint *ep)
{
	return rmsg_ring_used(READ_ONCE(ep->cq_prod),
			      READ_ONCE(*ep->cq.consumer));
}

/*
 * Wait until @min CQEs are ready. A consumer index that leaves more than
 * the CQ's size ready is impossible: the wait ends with -EINVAL. (One that
 * went backwards within range is caught by the next submission.)
 */
/* Enough entries, or kept events that now have room to be posted. */
static bool rmsg_ep_wait_done(struct rmsg_endpoint *ep, u32 min, u32 *ready)
{
	*ready = rmsg_ep_cq_ready(ep);
	return *ready >= min ||
	       (*ready < ep->cq.entries && !list_empty_careful(&ep->overflow));
}

static int rmsg_ep_wait(struct rmsg_endpoint *ep, u32 min)
{
	u32 ready;

	for (;;) {
		rmsg_ep_flush_events(ep);
		if (wait_event_interruptible(ep->wq,
					     rmsg_ep_wait_done(ep, min, &ready)))
			return -EINTR;
		if (ready > ep->cq.entries) {
			atomic_long_inc(&ep->bad_index);
			return -EINVAL;
		}
		if (ready >= min)
			return 0;
	}
}

long rmsg_ep_enter(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_enter e;
	long ret = 0;

	if (copy_from_user(&e, uarg, sizeof(e)))
		return -EFAULT;
	if ((e.flags & ~RMSG_ENTER_GETEVENTS) || e.resv0 || e.resv1 ||
	    !rmsg_all_zero(e.resv, sizeof(e.resv)))
		return -EINVAL;
	if (!rmsg_ep_ready(ep))
		return -EINVAL;
	if ((e.flags & RMSG_ENTER_GETEVENTS) && e.min_complete > ep->cq.entries)
		return -EINVAL;

	rmsg_ep_count(ep, RMSG_STAT_ENTERS);
	e.submitted = 0;
	/*
	 * With a poller, the SQEs are taken here as well as the poller being
	 * woken for those to come: the caller is in the kernel already, and
	 * a woken thread may wait for a CPU for a while, during which the
	 * program would see its SQEs untaken and enter again. The submit
	 * mutex orders this with the poller, so when ENTER returns the SQEs
	 * have been taken by one of the two (@submitted counts this call's).
	 */
	if (e.to_submit) {
		ret = rmsg_ep_submit(ep, e.to_submit);
		if (ret > 0) {
			e.submitted = ret;
			ret = 0;
		}
	}
	if (ep->sqpoll)
		rmsg_sqpoll_wake(ep);
	if (!ret && (e.flags & RMSG_ENTER_GETEVENTS) && e.min_complete)
		ret = rmsg_ep_wait(ep, e.min_complete);
	/* As io_uring_enter(): what was taken counts more than the wait. */
	if (e.submitted)
		ret = 0;
	if (copy_to_user(uarg, &e, sizeof(e)))
		return -EFAULT;
	return ret;
}

__poll_t rmsg_ep_poll(struct rmsg_endpoint *ep, struct file *file,
		      poll_table *wait)
{
	poll_wait(file, &ep->wq, wait);
	if (!rmsg_ep_ready(ep))
		return 0;
	rmsg_ep_flush_events(ep);
	return rmsg_ep_cq_ready(ep) ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * Move kept events into the completion ring while it has room. The
 * consumer index is the program's: an impossible one leaves the events
 * kept. Caller holds ep->lock.
 */
static bool rmsg_ep_flush_locked(struct rmsg_endpoint *ep)
{
	struct rmsg_cqe *cqes = ep->cq.descs;
	struct rmsg_event *ev;
	u32 cons, prod = ep->cq_prod;
	bool posted = false;

	/* D: the program finished reading the CQEs before cons. */
	cons = smp_load_acquire(ep->cq.consumer);
	if (!rmsg_ring_cons_ok(prod, ep->cq_cons, cons))
		return false;
	ep->cq_cons = cons;
	while (!list_empty(&ep->overflow) &&
	       rmsg_ring_free(ep->cq.entries, prod, cons)) {
		ev = list_first_entry(&ep->overflow, struct rmsg_event, node);
		list_del(&ev->node);
		ep->overflow_len--;
		cqes[rmsg_ring_slot(ep->cq.entries, prod)] = ev->cqe;
		kfree(ev);
		prod++;
		posted = true;
	}
	if (posted) {
		WRITE_ONCE(ep->cq_prod, prod);
		/* C: the CQEs are written before the producer publishes them. */
		smp_store_release(ep->cq.producer, prod);
	}
	return posted;
}

/**
 * rmsg_ep_flush_events() - post kept events the completion ring has room for
 * @ep: the endpoint
 */
void rmsg_ep_flush_events(struct rmsg_endpoint *ep)
{
	bool posted;

	if (!rmsg_ep_ready(ep) || list_empty_careful(&ep->overflow))
		return;
	mutex_lock(&ep->lock);
	posted = rmsg_ep_flush_locked(ep);
	mutex_unlock(&ep->lock);
	if (posted)
		wake_up_interruptible_poll(&ep->wq, EPOLLIN | EPOLLRDNORM);
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
 * without end. Past the bound the entry is dropped and counted
 * (rmsg_ep_stats.events_dropped). Within it the allocation does not fail,
 * even at the cgroup's limit (which it may pass by the bound's small
 * entries), and calls no OOM killer: an event such as the CONNECTED
 * that reports a failure for want of memory must not be lost to it.
 */
static void rmsg_ep_keep_locked(struct rmsg_endpoint *ep,
				const struct rmsg_cqe *cqe)
{
	u32 max = ep->cq.entries + RMSG_EP_KEPT_PER_CHANNEL *
		  (atomic_read(&ep->nr_channels) + 1);
	struct rmsg_event *ev = NULL;

	lockdep_assert_held(&ep->lock);
	if (ep->overflow_len < max)
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
	mutex_lock(&ep->lock);
	rmsg_ep_keep_locked(ep, cqe);
	rmsg_ep_flush_locked(ep);
	mutex_unlock(&ep->lock);
	/* Also wakes a waiter whose ring was full: it may flush later. */
	wake_up_interruptible_poll(&ep->wq, EPOLLIN | EPOLLRDNORM);
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
	rmsg_ep_flush_locked(ep);
	prod = ep->cq_prod;
	if (list_empty(&ep->overflow) &&
	    rmsg_ring_free(ep->cq.entries, prod, ep->cq_cons)) {
		((struct rmsg_cqe *)ep->cq.descs)[rmsg_ring_slot(ep->cq.entries,
								 prod)] = *cqe;
		WRITE_ONCE(ep->cq_prod, prod + 1);
		/* C: the CQE is written before the producer publishes it. */
		smp_store_release(ep->cq.producer, prod + 1);
	} else {
		rmsg_ep_keep_locked(ep, cqe);
	}
	wake_up_interruptible_poll(&ep->wq, EPOLLIN | EPOLLRDNORM);
}

/**
 * rmsg_ep_get_stats() - RMSG_IOC_EP_STATS
 * @ep: the endpoint
 * @uarg: struct rmsg_ep_stats to fill in
 *
 * Return: 0 or -EFAULT.
 */
long rmsg_ep_get_stats(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_ep_stats st = {};
	u64 *c = &st.sends;
	int i;

	static_assert(offsetof(struct rmsg_ep_stats, enters) ==
		      offsetof(struct rmsg_ep_stats, sends) +
		      (RMSG_STAT_ENTERS - RMSG_STAT_SENDS) * sizeof(u64));
	static_assert(sizeof(st) == offsetof(struct rmsg_ep_stats, sends) +
		      (RMSG_STAT_NR - RMSG_STAT_SENDS) * sizeof(u64));
	st.bad_index = atomic_long_read(&ep->bad_index);
	st.bad_desc = atomic_long_read(&ep->bad_desc);
	for (i = 0; i < RMSG_STAT_NR; i++)
		c[i] = atomic64_read(&ep->stats[i]);
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}
