// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: memory regions. RMSG_IOC_REG pins a span of the program's memory
 * for rendezvous transfers and charges it to RLIMIT_MEMLOCK as the RDMA
 * core charges a user MR (ib_umem_get()); RMSG_IOC_DEREG gives it back.
 *
 * Lifetime. The endpoint's table (ep->regions) holds one reference to each
 * region; a transfer holds another from rmsg_region_get() to
 * rmsg_region_put(), and marks the region busy meanwhile. DEREG removes a
 * region from the table only when it is not busy; the endpoint's release
 * removes every one and drops the table's references, so a transfer that
 * outlives the endpoint still has its pages. The last reference unpins
 * the pages and uncharges the mm that was charged, which is not
 * necessarily current's: release may run in another task or a work item.
 *
 * A transfer from or to memory in no region (an SQE's region 0) pins its
 * span for its own life: rmsg_region_pin() makes a region that is in no
 * table, charged and counted as any other, whose transfer's
 * rmsg_region_put() drops the only reference and unpins it.
 *
 * Locking. The table's own lock (xa_lock) orders lookup-and-busy in
 * rmsg_region_get() against the busy check and removal in DEREG, so a
 * region is never removed between a transfer finding it and marking it
 * busy. Nothing else is done under it; pinning and unpinning happen
 * outside.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_user.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "rmsg.h"
#include "rmsg_compat.h"
#include "rmsg_region.h"

static_assert(sizeof(struct rmsg_reg) == 40);
static_assert(sizeof(struct rmsg_dereg) == 16);
/* Page counts of a region fit an unsigned int (scatter lists, GUP). */
static_assert((RMSG_REG_MAX_LEN >> PAGE_SHIFT) + 1 < INT_MAX);

/* Pages pinned per call of pin_user_pages_fast(). */
#define RMSG_REG_PIN_BATCH	512

/**
 * struct rmsg_region - pinned memory of a program
 * @ref: the endpoint table's reference and one per transfer holding it
 * @busy: transfers holding it (rmsg_region_get() to rmsg_region_put());
 *	raised only under the table's lock
 * @mm: the mm charged for the pages (pinned_vm), grabbed until release
 * @addr: the program address of the first byte
 * @len: bytes from @addr
 * @npages: pages in @pages: every page @addr to @addr + @len touches
 * @pages: the pinned pages; @pages[0] holds @addr
 * @writable: pinned for writing: a registered region, or the sink of one
 *	receive; the pages are dirtied when unpinned
 */
struct rmsg_region {
	struct kref ref;
	atomic_t busy;
	struct mm_struct *mm;
	u64 addr;
	u64 len;
	unsigned long npages;
	struct page **pages;
	bool writable;
};

/* Pages [addr, addr + len) touches; the span must not wrap. */
static unsigned long rmsg_span_pages(u64 addr, u64 len)
{
	return (PAGE_ALIGN(addr + len) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
}

/* Is [addr, addr + len) inside the region? */
static bool rmsg_region_holds(const struct rmsg_region *r, u64 addr, u64 len)
{
	return addr >= r->addr && len <= r->len && addr - r->addr <= r->len - len;
}

static void rmsg_region_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}

/*
 * The last reference: a transfer may have written the pages, so they are
 * dirtied as they are unpinned (which may sleep on the page lock).
 */
static void rmsg_region_release(struct kref *ref)
{
	struct rmsg_region *r = container_of(ref, struct rmsg_region, ref);

	unpin_user_pages_dirty_lock(r->pages, r->npages, r->writable);
	rmsg_region_uncharge(r->mm, r->npages);
	atomic_long_dec(&rmsg_live[RMSG_LIVE_REGIONS]);
	atomic_long_sub(r->npages, &rmsg_live[RMSG_LIVE_REGION_PAGES]);
	mmdrop(r->mm);
	kvfree(r->pages);
	kfree(r);
}

void rmsg_regions_init(struct rmsg_endpoint *ep)
{
	xa_init_flags(&ep->regions, XA_FLAGS_ALLOC1);
}

/*
 * Endpoint release, once its channels are gone: no new transfer can take a
 * region, and those still holding one keep it until rmsg_region_put().
 */
void rmsg_regions_release(struct rmsg_endpoint *ep)
{
	struct rmsg_region *r;
	unsigned long handle;

	xa_for_each(&ep->regions, handle, r) {
		xa_erase(&ep->regions, handle);
		kref_put(&r->ref, rmsg_region_release);
		cond_resched();
	}
	xa_destroy(&ep->regions);
}

/*
 * Charge @npages to @mm the way ib_umem_get() does: the counter goes up
 * first, and back down when it passes @limit (pages: the RLIMIT_MEMLOCK of
 * whoever pins, ULONG_MAX with CAP_IPC_LOCK), so concurrent pins never
 * exceed the limit together.
 */
static int rmsg_region_charge(struct mm_struct *mm, unsigned long npages,
			      unsigned long limit)
{
	u64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit) {
		rmsg_region_uncharge(mm, npages);
		return -ENOMEM;
	}
	return 0;
}

/* current's RLIMIT_MEMLOCK in pages, ULONG_MAX with CAP_IPC_LOCK. */
unsigned long rmsg_region_pin_limit(void)
{
	return capable(CAP_IPC_LOCK) ? ULONG_MAX :
				       rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
}

/*
 * Pin every page of the region, long-term, and writable when it is to be
 * written (@mm: current's, or the poller's pin_mm). Anything less than
 * all of them (a hole, a read-only or PROT_NONE mapping) fails the whole
 * registration with what was pinned given back.
 */
static int rmsg_region_pin_pages(struct rmsg_region *r, struct mm_struct *mm)
{
	unsigned int flags = FOLL_LONGTERM | (r->writable ? FOLL_WRITE : 0);
	unsigned long start = r->addr & PAGE_MASK;
	bool remote = mm != current->mm;
	unsigned long done = 0;
	int want, n, ret = 0;

	while (done < r->npages) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		want = min_t(unsigned long, r->npages - done,
			     RMSG_REG_PIN_BATCH);
		if (remote) {
			/* The poller's: another task's memory, locked. */
			mmap_read_lock(mm);
			n = rmsg_pin_user_pages_remote(mm,
						       start + done * PAGE_SIZE,
						       want, flags,
						       r->pages + done, NULL);
			mmap_read_unlock(mm);
		} else {
			n = pin_user_pages_fast(start + done * PAGE_SIZE, want,
						flags, r->pages + done);
		}
		if (n > 0)
			done += n;
		if (n != want) {
			ret = n < 0 ? n : -EFAULT;
			break;
		}
		cond_resched();
	}
	if (ret && done)
		unpin_user_pages(r->pages, done);
	return ret;
}

/* Can [addr, addr + len) be a program's memory? @len is 1 or more. */
static bool rmsg_span_ok(u64 addr, u64 len)
{
	return addr + len > addr && addr == (unsigned long)addr &&
	       PAGE_ALIGN(addr + len) >= addr + len &&
	       access_ok(u64_to_user_ptr(addr), len);
}

/*
 * A region of @mm's memory [addr, addr + len), a span rmsg_span_ok()
 * accepted: pinned, charged to @mm against @limit pages, counted, with one
 * reference and not busy.
 */
static struct rmsg_region *rmsg_region_make(struct mm_struct *mm, u64 addr,
					    u64 len, bool writable,
					    unsigned long limit)
{
	struct rmsg_region *r;
	int ret;

	r = kzalloc(sizeof(*r), RMSG_GFP_CHARGED);
	if (!r)
		return ERR_PTR(-ENOMEM);
	kref_init(&r->ref);
	atomic_set(&r->busy, 0);
	r->addr = addr;
	r->len = len;
	r->writable = writable;
	r->npages = rmsg_span_pages(addr, len);
	r->pages = kvmalloc_array(r->npages, sizeof(*r->pages),
				  RMSG_GFP_CHARGED);
	if (!r->pages) {
		ret = -ENOMEM;
		goto free;
	}
	ret = rmsg_region_charge(mm, r->npages, limit);
	if (ret)
		goto free;
	ret = rmsg_region_pin_pages(r, mm);
	if (ret) {
		rmsg_region_uncharge(mm, r->npages);
		goto free;
	}
	/* From here on the region is whole and only its release undoes it. */
	mmgrab(mm);
	r->mm = mm;
	atomic_long_inc(&rmsg_live[RMSG_LIVE_REGIONS]);
	atomic_long_add(r->npages, &rmsg_live[RMSG_LIVE_REGION_PAGES]);
	return r;

free:
	kvfree(r->pages);
	kfree(r);
	return ERR_PTR(ret);
}

/**
 * rmsg_region_reg() - RMSG_IOC_REG
 * @ep: the endpoint; it need not have rings
 * @uarg: struct rmsg_reg
 *
 * Return: 0 with the handle written back; -EINVAL for bad fields, -EFAULT
 * for memory not mapped writable, -ENOMEM over RLIMIT_MEMLOCK or without
 * memory, -EINTR when a fatal signal interrupts the pinning.
 */
long rmsg_region_reg(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct mm_struct *mm = current->mm;
	struct rmsg_region *r;
	struct rmsg_reg reg;
	u32 handle;
	int ret;

	if (copy_from_user(&reg, uarg, sizeof(reg)))
		return -EFAULT;
	if (reg.flags || !rmsg_all_zero(reg.resv, sizeof(reg.resv)))
		return -EINVAL;
	if (!reg.len || reg.len > RMSG_REG_MAX_LEN ||
	    reg.addr + reg.len < reg.addr)
		return -EINVAL;
	if (!rmsg_span_ok(reg.addr, reg.len) || !mm)
		return -EFAULT;

	r = rmsg_region_make(mm, reg.addr, reg.len, true,
			     rmsg_region_pin_limit());
	if (IS_ERR(r))
		return PTR_ERR(r);
	ret = xa_alloc(&ep->regions, &handle, r, xa_limit_32b,
		       RMSG_GFP_CHARGED);
	if (ret) {
		kref_put(&r->ref, rmsg_region_release);
		/* -EBUSY from a full table: every handle is in use. */
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	reg.handle = handle;
	if (copy_to_user(uarg, &reg, sizeof(reg))) {
		/* Unless another thread guessed the handle and took it. */
		if (xa_cmpxchg(&ep->regions, handle, r, NULL, 0) == r)
			kref_put(&r->ref, rmsg_region_release);
		return -EFAULT;
	}
	return 0;
}

/**
 * rmsg_region_dereg() - RMSG_IOC_DEREG
 * @ep: the endpoint
 * @uarg: struct rmsg_dereg
 *
 * The pages are unpinned and uncharged before this returns, unless a
 * transfer holding the region (none is, as it is not busy) still has a
 * reference: then when it drops it.
 *
 * Return: 0; -EINVAL for bad fields, -ENOENT for no such region, -EBUSY
 * while a transfer holds it.
 */
long rmsg_region_dereg(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_region *r;
	struct rmsg_dereg d;

	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	if (d.flags || d.resv)
		return -EINVAL;

	xa_lock(&ep->regions);
	r = xa_load(&ep->regions, d.handle);
	if (!r) {
		xa_unlock(&ep->regions);
		return -ENOENT;
	}
	if (atomic_read(&r->busy)) {
		xa_unlock(&ep->regions);
		return -EBUSY;
	}
	__xa_erase(&ep->regions, d.handle);
	xa_unlock(&ep->regions);

	kref_put(&r->ref, rmsg_region_release);
	return 0;
}

struct rmsg_region *rmsg_region_get(struct rmsg_endpoint *ep, u32 handle,
				    u64 addr, u64 len)
{
	struct rmsg_region *r;

	if (!len)
		return ERR_PTR(-EINVAL);
	xa_lock(&ep->regions);
	r = xa_load(&ep->regions, handle);
	if (!r) {
		r = ERR_PTR(-ENOENT);
	} else if (!rmsg_region_holds(r, addr, len)) {
		r = ERR_PTR(-EFAULT);
	} else {
		/* Under the lock: DEREG sees either no region or a busy one. */
		atomic_inc(&r->busy);
		kref_get(&r->ref);
	}
	xa_unlock(&ep->regions);
	return r;
}

struct rmsg_region *rmsg_region_pin(struct rmsg_endpoint *ep, u64 addr,
				    u64 len, bool writable)
{
	struct mm_struct *mm = current->mm;
	unsigned long limit = ep->pin_limit;
	struct rmsg_region *r;

	if (!len)
		return ERR_PTR(-EINVAL);
	if (!rmsg_span_ok(addr, len))
		return ERR_PTR(-EFAULT);
	if (mm) {
		limit = rmsg_region_pin_limit();
	} else {
		/* The poller: its starter's memory, while that lives. */
		mm = ep->pin_mm;
		if (!mm || !mmget_not_zero(mm))
			return ERR_PTR(-EFAULT);
	}
	lockdep_assert_not_held(&ep->lock);
	r = rmsg_region_make(mm, addr, len, writable, limit);
	if (mm != current->mm)
		mmput(mm);
	if (!IS_ERR(r))
		atomic_set(&r->busy, 1);
	return r;
}

struct rmsg_region *rmsg_region_take_pinned(struct rmsg_endpoint *ep,
					    u64 addr, u64 len, bool writable)
{
	struct rmsg_region *r = ep->pinned;

	lockdep_assert_held(&ep->lock);
	if (!r)
		return ERR_PTR(-EFAULT);
	ep->pinned = NULL;
	if (IS_ERR(r))
		return r;
	if (r->addr != addr || r->len != len || r->writable != writable) {
		rmsg_region_put(r);
		return ERR_PTR(-EFAULT);
	}
	return r;
}

void rmsg_region_put(struct rmsg_region *region)
{
	might_sleep();
	WARN_ON_ONCE(atomic_dec_return(&region->busy) < 0);
	kref_put(&region->ref, rmsg_region_release);
}

int rmsg_region_sgt(struct rmsg_region *region, u64 addr, u64 len,
		    struct sg_table *sgt, unsigned int max_seg)
{
	unsigned long first;

	if (!len || !rmsg_region_holds(region, addr, len))
		return -EFAULT;
	first = (addr >> PAGE_SHIFT) - (region->addr >> PAGE_SHIFT);
	return sg_alloc_table_from_pages_segment(sgt, region->pages + first,
						 rmsg_span_pages(addr, len),
						 offset_in_page(addr), len,
						 max_t(unsigned int, max_seg,
						       PAGE_SIZE),
						 RMSG_GFP_CHARGED);
}
