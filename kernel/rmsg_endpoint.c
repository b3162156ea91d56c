// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: endpoints. An endpoint is one open file of /dev/rmsg; it owns a
 * submission ring (SQ) and a completion ring (CQ) that the program maps
 * with mmap(). <rdma/rmsg.h> and Documentation/rings.rst describe the ABI
 * and the barrier pairing (A to D) the comments below refer to.
 *
 * This file makes and tears down the endpoint and its rings and answers
 * its file operations (ENTER, poll(), mmap, statistics). What moves
 * through the rings is elsewhere: rmsg_sq.c takes and runs SQEs, rmsg_cq.c
 * posts CQEs and keeps the events that find the ring full.
 *
 * Everything in the shared regions is written by the program and therefore
 * untrusted: the kernel keeps its own copy of each index it owns (SQ
 * consumer, CQ producer) and of the last index of the program's it accepted
 * (SQ producer, CQ consumer), checks every index the program wrote against
 * them with the rmsg_ring_*_ok() helpers, and copies each SQE once into a
 * local struct before looking at it.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_channel.c, rmsg_cq.c, rmsg_ctl.c,
 * rmsg_listen.c, rmsg_pages.c, rmsg_region.c, rmsg_sq.c, rmsg_sqpoll.c,
 * rmsg_user.c and rmsg_window.c.
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
#include "rmsg_cq.h"
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

/* A program's mapping keeps its own references to the pages. */
static void rmsg_ep_ring_free(struct rmsg_ep_ring *ring)
{
	if (ring->mem)
		vunmap(ring->mem);
	if (ring->pages)
		rmsg_pages_put(ring->pages);
	memset(ring, 0, sizeof(*ring));
}

/* What every endpoint starts with. */
static void rmsg_ep_init(struct rmsg_endpoint *ep)
{
	mutex_init(&ep->submit_lock);
	mutex_init(&ep->lock);
	init_waitqueue_head(&ep->wq);
	mutex_init(&ep->chan_lock);
	xa_init_flags(&ep->channels, XA_FLAGS_ALLOC);
	init_waitqueue_head(&ep->chan_wq);
	INIT_LIST_HEAD(&ep->overflow);
	INIT_LIST_HEAD(&ep->area_maps);
	INIT_LIST_HEAD(&ep->sig_owed);
	INIT_LIST_HEAD(&ep->room_held);
	rmsg_regions_init(ep);
	address_space_init_once(&ep->block_mapping);
	init_rwsem(&ep->block_map_lock);
	do {
		ep->incarnation = get_random_u64();
	} while (!ep->incarnation);
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
	rmsg_ep_init(ep);
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

/**
 * rmsg_ep_create_kernel() - an endpoint of the module's own
 * @kops: where its channels' events go, instead of a completion ring
 * @priv: for @kops (rmsg_ep_kernel_priv())
 *
 * No file, no rings, no send area, no owner: its channels count against
 * no user's limits, its memory is charged to no program's cgroup (make
 * its channels from a work item), and only root (or CAP_NET_ADMIN) sees
 * them in the channel list, with process id 0. Links are carried by such
 * endpoints' channels (rmsg_link.c). rmsg_ep_destroy() ends it.
 *
 * Return: the endpoint, or ERR_PTR(-ENOMEM).
 */
struct rmsg_endpoint *rmsg_ep_create_kernel(const struct rmsg_ep_kops *kops,
					    void *priv)
{
	struct rmsg_endpoint *ep = kzalloc(sizeof(*ep), GFP_KERNEL);

	if (!ep)
		return ERR_PTR(-ENOMEM);
	rmsg_ep_init(ep);
	ep->kops = kops;
	ep->kpriv = priv;
	ep->uid = GLOBAL_ROOT_UID;
	ep->unlimited = true;
	if (rmsg_ctl_register(ep)) {
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
	rmsg_cq_drop_kept(ep);
	/* After the channels, whose ends may leave blocks in their slots. */
	rmsg_window_free(ep);
	xa_destroy(&ep->channels);
	mutex_destroy(&ep->chan_lock);
	rmsg_ep_ring_free(&ep->sq);
	rmsg_ep_ring_free(&ep->cq);
	/* The program's mappings keep their own references to the pages. */
	if (ep->area)
		rmsg_pages_put(ep->area);
	if (ep->summary)
		rmsg_pages_put(ep->summary);
	mutex_destroy(&ep->lock);
	mutex_destroy(&ep->submit_lock);
	mem_cgroup_put(ep->memcg);
	put_pid(ep->tgid);
	rmsg_user_close(ep);
	kfree(ep);
}

static int rmsg_ep_ring_alloc(struct rmsg_ep_ring *ring, u32 entries,
			      size_t desc_size, struct rmsg_ring_offsets *off)
{
	size_t size = PAGE_ALIGN(RMSG_RING_OFF_DESCS + entries * desc_size);

	ring->pages = rmsg_pages_new(size, 0);
	if (!ring->pages)
		return -ENOMEM;
	/* Where the kernel reads and writes them; the program maps the pages. */
	ring->mem = vmap(ring->pages->pages, ring->pages->npages, VM_MAP,
			 PAGE_KERNEL);
	if (!ring->mem) {
		rmsg_ep_ring_free(ring);
		return -ENOMEM;
	}
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
	if ((p.flags & ~(RMSG_EP_F_SQPOLL | RMSG_EP_F_STALL_EVENTS |
			  RMSG_EP_F_SUMMARY)) ||
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
		ep->area = rmsg_pages_new(p.send_area_size,
					  RMSG_AREA_CHUNK_ORDER);
		if (!ep->area) {
			ret = -ENOMEM;
			goto out;
		}
		ep->area_size = ep->area->npages << PAGE_SHIFT;
	}
	if (p.flags & RMSG_EP_F_SUMMARY) {
		ep->summary = rmsg_pages_new(RMSG_SUMMARY_SIZE, 0);
		if (!ep->summary) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = rmsg_ep_ring_alloc(&ep->sq, sq_n, sizeof(struct rmsg_sqe),
				 &p.sq_off);
	if (ret)
		goto out;
	ret = rmsg_ep_ring_alloc(&ep->cq, cq_n, sizeof(struct rmsg_cqe),
				 &p.cq_off);
	if (ret) {
		rmsg_ep_ring_free(&ep->sq);
		rmsg_ep_ring_free(&ep->cq);
		goto out;
	}
	/* Without a kernel poller the program must always call ENTER. */
	WRITE_ONCE(*ep->sq.flags, RMSG_SQ_NEED_WAKEUP);
	if (p.flags & RMSG_EP_F_SQPOLL) {
		ret = rmsg_sqpoll_start(ep, p.sqpoll_idle_ms);
		if (ret) {
			rmsg_ep_ring_free(&ep->sq);
			rmsg_ep_ring_free(&ep->cq);
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
	if (ret && ep->summary) {
		rmsg_pages_put(ep->summary);
		ep->summary = NULL;
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
	if (off >= RMSG_OFF_WINDOW_BASE)
		return rmsg_window_mmap(ep, vma);
	if (off >= RMSG_OFF_BLOCK_BASE)
		return rmsg_chan_mmap(ep, vma);
	if (off == RMSG_OFF_SEND_AREA)
		return ep->area ? rmsg_pages_mmap(ep->area, vma, true) :
				  -EINVAL;
	if (off == RMSG_OFF_SUMMARY)
		return ep->summary ? rmsg_pages_mmap(ep->summary, vma, true) :
				     -EINVAL;
	if (off == RMSG_OFF_SQ_RING)
		ring = &ep->sq;
	else if (off == RMSG_OFF_CQ_RING)
		ring = &ep->cq;
	else
		return -EINVAL;
	if (len > ring->mmap_size)
		return -EINVAL;
	return rmsg_pages_mmap(ring->pages, vma, true);
}

long rmsg_ep_enter(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_enter e;
	long ret = 0;

	if (copy_from_user(&e, uarg, sizeof(e)))
		return -EFAULT;
	if ((e.flags & ~(RMSG_ENTER_GETEVENTS | RMSG_ENTER_LEND)) ||
	    e.resv0 || e.resv1 ||
	    !rmsg_all_zero(e.resv, sizeof(e.resv)))
		return -EINVAL;
	if (!rmsg_ep_ready(ep))
		return -EINVAL;
	if ((e.flags & RMSG_ENTER_GETEVENTS) && e.min_complete > ep->cq.entries)
		return -EINVAL;

	rmsg_ep_count(ep, RMSG_STAT_ENTERS);
	/*
	 * Pending tasklets run as bottom halves come back on, here, whether
	 * or not ksoftirqd was woken for them (SOFTIRQ_NOW_MASK).
	 */
	if (e.flags & RMSG_ENTER_LEND) {
		local_bh_disable();
		local_bh_enable();
	}
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
		ret = rmsg_cq_wait(ep, e.min_complete);
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
	/* Pairs with rmsg_ep_wake(): queued before the ring is read. */
	smp_mb();
	if (!rmsg_ep_ready(ep))
		return 0;
	rmsg_ep_flush_events(ep);
	return rmsg_cq_ready(ep) ? EPOLLIN | EPOLLRDNORM : 0;
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
