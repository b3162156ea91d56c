// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the block window (RMSG_FEAT_BLOCK_WINDOW): every channel's receive
 * block in one read-only mapping of the endpoint, at RMSG_OFF_WINDOW(shift),
 * channel id's in the slot at id << shift. A program with thousands of
 * channels then needs one mapping, not one per channel (each costs an
 * mmap() and a munmap(), and counts against vm.max_map_count).
 *
 * The window is made by the first mapping of it and lives until the
 * endpoint goes (every mapping holds the file). Its slots hold blocks
 * with references of their own: a slot keeps its block after the channel
 * ended, when the channel's id is held (struct rmsg_block_window), so
 * that what arrived can still be read there while no other channel may
 * take the id. Which channel enters the window, when an id is held and
 * let go of, is decided by rmsg_channel.c; this file keeps the slots and
 * the pages the program's page tables show of them.
 *
 * Locking: a slot changes under ep->block_map_lock for writing, with a zap
 * of what the program's page tables hold of it (when anything does:
 * @touched), so that no page of the slot's old state survives; the fault
 * handler holds the lock for reading while it looks the slot up and puts
 * pages in. The lock order is chan_lock -> block_map_lock -> i_mmap_rwsem
 * (the zap's); the fault takes block_map_lock under mmap_lock (or the
 * VMA's lock), so nothing under block_map_lock takes mmap_lock, chan_lock
 * or ep->lock.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_pages.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/pfn_t.h>
#include <linux/pgtable.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "rmsg.h"
#include "rmsg_compat.h"

/* The window offsets of two shifts are this far apart (the UAPI's 37). */
#define RMSG_WINDOW_SPAN_SHIFT	37
static_assert(RMSG_OFF_WINDOW(1) - RMSG_OFF_WINDOW(0) ==
	      1ULL << RMSG_WINDOW_SPAN_SHIFT);
/* The largest window fits in its span, and all of them above the blocks. */
static_assert((u64)RMSG_MAX_CHANNELS << RMSG_WINDOW_SHIFT_MAX <=
	      1ULL << RMSG_WINDOW_SPAN_SHIFT);
static_assert(RMSG_OFF_BLOCK(RMSG_MAX_CHANNELS) <= RMSG_OFF_WINDOW_BASE);

/**
 * struct rmsg_block_window - an endpoint's block window (ep->window)
 * @shift: log2 of a slot's bytes, fixed by the first mapping
 * @slots: channel id -> its block (struct rmsg_pages) with a reference of
 *	the slot's own; an allocating xarray, so that a slot reserved for a
 *	channel whose leased block is not granted yet reads as NULL and
 *	takes its block later without allocating. Changed under
 *	ep->block_map_lock for writing.
 * @held: ids held after their channel's end, until RMSG_IOC_CHAN_DROP:
 *	no new channel takes one (rmsg_channel.c). Under ep->chan_lock.
 * @touched: slots the fault handler put a page of in since their last
 *	zap: only those are zapped when they change (atomic bit operations)
 */
struct rmsg_block_window {
	u8 shift;
	struct xarray slots;
	unsigned long *held;
	unsigned long *touched;
};

static void rmsg_window_release(struct rmsg_block_window *w)
{
	bitmap_free(w->held);
	bitmap_free(w->touched);
	kfree(w);
}

/* Charged to the mapper, whose mmap() makes it. */
static struct rmsg_block_window *rmsg_window_new(unsigned int shift)
{
	struct rmsg_block_window *w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);

	if (!w)
		return NULL;
	w->shift = shift;
	xa_init_flags(&w->slots, XA_FLAGS_ALLOC);
	w->held = bitmap_zalloc(RMSG_MAX_CHANNELS, GFP_KERNEL_ACCOUNT);
	w->touched = bitmap_zalloc(RMSG_MAX_CHANNELS, GFP_KERNEL_ACCOUNT);
	if (!w->held || !w->touched) {
		rmsg_window_release(w);
		return NULL;
	}
	return w;
}

/*
 * A page of the window. Under ep->block_map_lock for reading, with every
 * page table entry made before it is dropped: a slot that changes is
 * zapped under it for writing, so no entry of the old state survives.
 * A slot's block is put in whole at its first touch (each page that lies
 * in the VMA), as a channel's program reads all of it soon; a page some
 * other fault put in first is left as it is (-EBUSY). Pages go in with a
 * reference of the entry's own (vm_insert_page()): the block may leave
 * the slot while they are mapped. A slot without a block, and the bytes
 * past a block, show the shared zero page, as a leased block's mapping
 * does (rmsg_chan_block_fault()), without a reference.
 */
static vm_fault_t rmsg_window_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct rmsg_endpoint *ep = vma->vm_file->private_data;
	/* Pairs with rmsg_window_mmap()'s cmpxchg: the VMA came after. */
	struct rmsg_block_window *w = smp_load_acquire(&ep->window);
	u64 rel = ((u64)vmf->pgoff << PAGE_SHIFT) - RMSG_OFF_WINDOW(w->shift);
	u32 id = rel >> w->shift;
	u32 idx = (rel & ((1ULL << w->shift) - 1)) >> PAGE_SHIFT;
	unsigned long first = vmf->address - ((unsigned long)idx << PAGE_SHIFT);
	struct rmsg_pages *block;
	unsigned long addr;
	vm_fault_t ret;
	u32 i;

	if (id >= RMSG_MAX_CHANNELS)
		return VM_FAULT_SIGBUS;
	down_read(&ep->block_map_lock);
	set_bit(id, w->touched);
	block = xa_load(&w->slots, id);
	if (block && idx < block->npages) {
		ret = vmf_insert_page(vma, vmf->address, block->pages[idx]);
		for (i = 0; i < block->npages && !(ret & VM_FAULT_ERROR); i++) {
			addr = first + ((unsigned long)i << PAGE_SHIFT);
			if (i == idx || addr < vma->vm_start ||
			    addr >= vma->vm_end)
				continue;
			/* Best effort: a page left out faults in itself. */
			vm_insert_page(vma, addr, block->pages[i]);
		}
	} else {
		ret = vmf_insert_mixed(vma, vmf->address,
				       pfn_to_pfn_t(my_zero_pfn(vmf->address)));
	}
	up_read(&ep->block_map_lock);
	return ret;
}

static const struct vm_operations_struct rmsg_window_vm_ops = {
	.fault	= rmsg_window_fault,
};

/**
 * rmsg_window_mmap() - map the endpoint's block window
 * @ep: the endpoint, its rings set up
 * @vma: at RMSG_OFF_WINDOW(shift), read-only and shared
 *
 * Called with mmap_lock held for writing: takes no rmsg lock. The first
 * mapping makes the window, with its shift; two racing first mappings
 * both make one and the loser frees its own. VM_MIXEDMAP lets the fault
 * handler put pages in under mmap_lock for reading (and the zero page
 * without a reference); read-only for good, fixed in size. No pages now:
 * each comes at its first touch (rmsg_window_fault()).
 *
 * Return: 0, -EINVAL for a bad offset or shift, a length past the last
 * slot, a private mapping or another shift than the window's, -EPERM for
 * a writable mapping, -ENOMEM.
 */
int rmsg_window_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma)
{
	u64 rel = ((u64)vma->vm_pgoff << PAGE_SHIFT) - RMSG_OFF_WINDOW_BASE;
	u64 len = vma->vm_end - vma->vm_start;
	u64 shift = rel >> RMSG_WINDOW_SPAN_SHIFT;
	struct rmsg_block_window *w, *old;

	if (rel & ((1ULL << RMSG_WINDOW_SPAN_SHIFT) - 1) ||
	    shift < RMSG_WINDOW_SHIFT_MIN || shift < PAGE_SHIFT ||
	    shift > RMSG_WINDOW_SHIFT_MAX ||
	    len > (u64)RMSG_MAX_CHANNELS << shift ||
	    !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* The peers write the blocks; the program only ever reads them. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	/* Pairs with the cmpxchg below, of this or a racing mapping. */
	w = smp_load_acquire(&ep->window);
	if (!w) {
		w = rmsg_window_new(shift);
		if (!w)
			return -ENOMEM;
		/* Release: a reader that sees it sees it made. */
		old = cmpxchg_release(&ep->window, NULL, w);
		if (old) {
			rmsg_window_release(w);
			w = old;
		}
	}
	if (w->shift != shift)
		return -EINVAL;
	rmsg_vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
			  VM_MAYWRITE);
	vma->vm_ops = &rmsg_window_vm_ops;
	return 0;
}

/**
 * rmsg_window_fits() - would a channel's block have a slot of the window?
 * @ep: the endpoint
 * @block_size: the channel's block size
 *
 * Return: true when the endpoint's window is mapped (made) and a block of
 * @block_size, rounded up to pages, fits in a slot.
 */
bool rmsg_window_fits(struct rmsg_endpoint *ep, u32 block_size)
{
	/* Pairs with rmsg_window_mmap()'s cmpxchg: its shift is set. */
	struct rmsg_block_window *w = smp_load_acquire(&ep->window);

	return w && PAGE_ALIGN((u64)block_size) <= 1ULL << w->shift;
}

/**
 * rmsg_window_reserve() - make room for channel @id's slot
 * @ep: the endpoint, whose window rmsg_window_fits() found
 * @id: the channel's id
 *
 * Allocates what storing a block (rmsg_window_set()) needs later, so
 * that the store cannot fail. In a work item between
 * rmsg_ep_charge_begin() and _end(), or in the program's call: charged
 * to the endpoint's opener.
 *
 * Return: 0 or -ENOMEM.
 */
int rmsg_window_reserve(struct rmsg_endpoint *ep, u32 id)
{
	return xa_reserve(&ep->window->slots, id, RMSG_GFP_CHARGED);
}

/*
 * Slot @id changed: what the page tables show of it goes, if they show
 * anything (the fault handler marks it touched first, under the lock).
 */
static void rmsg_window_zap(struct rmsg_endpoint *ep, u32 id)
{
	struct rmsg_block_window *w = ep->window;

	if (test_and_clear_bit(id, w->touched))
		unmap_mapping_range(&ep->block_mapping,
				    RMSG_OFF_WINDOW(w->shift) +
				    ((u64)id << w->shift),
				    1ULL << w->shift, 1);
}

/**
 * rmsg_window_set() - slot @id shows @block from now on
 * @ep: the endpoint, its block_map_lock held for writing
 * @id: a slot reserved by rmsg_window_reserve()
 * @block: the channel's block, or NULL while it has none (a leased block
 *	not granted yet); the slot takes a reference of its own
 *
 * Return: the block the slot held, whose reference the caller puts once
 * it dropped its locks, or NULL.
 */
struct rmsg_pages *rmsg_window_set(struct rmsg_endpoint *ep, u32 id,
				   struct rmsg_pages *block)
{
	struct rmsg_pages *old;

	lockdep_assert_held_write(&ep->block_map_lock);
	if (block)
		kref_get(&block->ref);
	/* Reserved: nothing to allocate, cannot fail. */
	old = xa_store(&ep->window->slots, id, block, GFP_NOWAIT);
	if (WARN_ON_ONCE(xa_is_err(old))) {
		if (block)
			rmsg_pages_put(block);
		return NULL;
	}
	rmsg_window_zap(ep, id);
	return old;
}

/**
 * rmsg_window_clear() - slot @id is empty from now on: reads as zero
 * @ep: the endpoint, with a window; block_map_lock not held (taken here),
 *	chan_lock may be
 * @id: the slot
 *
 * Return: the block the slot held, whose reference the caller puts once
 * it dropped its locks, or NULL.
 */
struct rmsg_pages *rmsg_window_clear(struct rmsg_endpoint *ep, u32 id)
{
	struct rmsg_pages *old;

	down_write(&ep->block_map_lock);
	old = xa_erase(&ep->window->slots, id);
	rmsg_window_zap(ep, id);
	up_write(&ep->block_map_lock);
	return old;
}

/*
 * Held ids (struct rmsg_block_window's @held): under ep->chan_lock, which
 * rmsg_channel.c holds around the id's quarantine and release too.
 */
bool rmsg_window_held(struct rmsg_endpoint *ep, u32 id)
{
	/* Pairs with rmsg_window_mmap()'s cmpxchg: its bitmaps are made. */
	struct rmsg_block_window *w = smp_load_acquire(&ep->window);

	lockdep_assert_held(&ep->chan_lock);
	return w && test_bit(id, w->held);
}

void rmsg_window_hold(struct rmsg_endpoint *ep, u32 id)
{
	lockdep_assert_held(&ep->chan_lock);
	__set_bit(id, ep->window->held);
}

void rmsg_window_unhold(struct rmsg_endpoint *ep, u32 id)
{
	lockdep_assert_held(&ep->chan_lock);
	__clear_bit(id, ep->window->held);
}

/**
 * rmsg_window_free() - the endpoint's window goes, if it has one
 * @ep: the endpoint being destroyed: no mapping of its file is left (each
 *	holds the file), and no channel (rmsg_chan_release_all())
 *
 * The slots' blocks are put; pages the program still had mapped went with
 * its mappings, which held references of their own.
 */
void rmsg_window_free(struct rmsg_endpoint *ep)
{
	struct rmsg_block_window *w = ep->window;
	struct rmsg_pages *block;
	unsigned long id;

	if (!w)
		return;
	xa_for_each(&w->slots, id, block)
		rmsg_pages_put(block);
	xa_destroy(&w->slots);
	rmsg_window_release(w);
	ep->window = NULL;
}
