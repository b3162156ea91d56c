// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: page sets that programs map and devices read or write: receive
 * blocks and send areas.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_user.c.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "rmsg.h"
#include "rmsg_compat.h"

static void rmsg_pages_release(struct kref *ref)
{
	struct rmsg_pages *p = container_of(ref, struct rmsg_pages, ref);
	u32 i;

	for (i = 0; i < p->npages; i++)
		if (p->pages[i])
			put_page(p->pages[i]);
	rmsg_kernel_pages_sub(p->npages);
	kvfree(p);
}

/**
 * rmsg_pages_new() - zeroed pages for an endpoint
 * @size: bytes, rounded up to whole chunks
 * @order: the pages come in physically contiguous chunks of 2^@order
 *	pages, each split into order-0 pages for mapping
 *
 * Zeroed because a receive block's first lap needs a clear last flag
 * (Documentation/veloblock.rst), and a send area must not show a program
 * what the pages held before. Contiguous chunks let the device read a
 * message that crosses pages with one scatter-gather entry.
 *
 * The pages are charged to the memory cgroup that is active (the caller's,
 * or the endpoint's opener's between rmsg_ep_charge_begin() and _end()),
 * as io_uring's rings are since Linux 5.12, and to no RLIMIT_MEMLOCK:
 * that limit is for the program's own memory pinned by RMSG_IOC_REG.
 *
 * Return: the set with one reference, or NULL (no memory, or the cgroup's
 * limit reached).
 */
struct rmsg_pages *rmsg_pages_new(u32 size, unsigned int order)
{
	u32 i, j, chunk = PAGE_SIZE << order;
	u32 npages = (ALIGN(size, chunk) >> PAGE_SHIFT);
	struct rmsg_pages *p;
	struct page *page;

	p = kvzalloc(struct_size(p, pages, npages), RMSG_GFP_CHARGED);
	if (!p)
		return NULL;
	rmsg_kernel_pages_add(npages);
	kref_init(&p->ref);
	p->npages = npages;
	for (i = 0; i < npages; i += 1U << order) {
		/*
		 * Costly orders never call the memcg's OOM killer; smaller
		 * ones are kept from it (RMSG_GFP_CHARGED) without giving up
		 * the compaction the large chunks need.
		 */
		page = alloc_pages(order > PAGE_ALLOC_COSTLY_ORDER ?
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_ZERO :
				   RMSG_GFP_CHARGED | __GFP_ZERO, order);
		if (!page) {
			rmsg_pages_put(p);
			return NULL;
		}
		if (order)
			split_page(page, order);
		for (j = 0; j < 1U << order; j++)
			p->pages[i + j] = page + j;
	}
	return p;
}

void rmsg_pages_put(struct rmsg_pages *p)
{
	kref_put(&p->ref, rmsg_pages_release);
}

static void rmsg_summary_set(struct rmsg_pages *summary, u32 off)
{
	WRITE_ONCE(*((u8 *)page_address(summary->pages[off >> PAGE_SHIFT]) +
		     offset_in_page(off)), 1);
}

/**
 * rmsg_summary_mark() - set @channel's bytes of an endpoint's summary
 * @summary: the endpoint's arrival summary (RMSG_OFF_SUMMARY)
 * @channel: a channel whose block just got records, which the caller
 *	wrote (or whose flags it set) before this call
 *
 * What the peer's two hint writes do (RMSG_HELLO_F_SUMMARY), for records
 * whose arrival this kernel sees: the channel's byte, then its group's,
 * each after what the program must see once it sees the byte.
 */
void rmsg_summary_mark(struct rmsg_pages *summary, u32 channel)
{
	/* The records before the channel's byte: the program reads them after. */
	smp_wmb();
	rmsg_summary_set(summary, RMSG_SUMMARY_CHANNEL(channel));
	/* The channel's byte before the group's, read in the other order. */
	smp_wmb();
	rmsg_summary_set(summary, RMSG_SUMMARY_GROUP(channel));
}

/*
 * Each mapping holds a reference, so the pages stay charged while the
 * program can reach them, even after their channel or endpoint let go.
 */
static void rmsg_pages_vm_open(struct vm_area_struct *vma)
{
	struct rmsg_pages *p = vma->vm_private_data;

	kref_get(&p->ref);
}

static void rmsg_pages_vm_close(struct vm_area_struct *vma)
{
	rmsg_pages_put(vma->vm_private_data);
}

static const struct vm_operations_struct rmsg_pages_vm_ops = {
	.open	= rmsg_pages_vm_open,
	.close	= rmsg_pages_vm_close,
};

/**
 * rmsg_pages_mmap() - map a page set into a program
 * @p: the pages; the caller holds a reference for the call
 * @vma: MAP_SHARED, at most @p's size
 * @writable: the program may write the pages
 *
 * The mapping takes a reference to @p (and the pages' own through
 * vm_insert_pages()), so it stays valid, and charged, after the caller's
 * is put. It cannot grow by mremap(), and a read-only one cannot become
 * writable by mprotect().
 *
 * Return: 0, -EINVAL for a bad size or a private mapping, -EPERM for a
 * writable mapping of read-only pages.
 */
int rmsg_pages_mmap(struct rmsg_pages *p, struct vm_area_struct *vma,
		    bool writable)
{
	unsigned long npages = (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;
	int ret;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (!writable && (vma->vm_flags & VM_WRITE))
		return -EPERM;
	if (!npages || npages > p->npages)
		return -EINVAL;
	rmsg_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP,
			  writable ? 0 : VM_MAYWRITE);
	ret = vm_insert_pages(vma, vma->vm_start, p->pages, &npages);
	if (ret)
		return ret;
	/* Only now: a failed mmap() is torn down without ->close(). */
	kref_get(&p->ref);
	vma->vm_private_data = p;
	vma->vm_ops = &rmsg_pages_vm_ops;
	return 0;
}

/* A leased channel's view, with the channel's reference; no block yet. */
struct rmsg_block_view *rmsg_block_view_new(void)
{
	struct rmsg_block_view *v = kzalloc(sizeof(*v), RMSG_GFP_CHARGED);

	if (v)
		kref_init(&v->ref);
	return v;
}

static void rmsg_block_view_release(struct kref *ref)
{
	struct rmsg_block_view *v =
		container_of(ref, struct rmsg_block_view, ref);

	if (v->block)
		rmsg_pages_put(v->block);
	kfree(v);
}

/*
 * The last reference (the channel ended and no mapping is left) frees
 * the view and puts its block; the page tables' own references keep
 * each page a program still maps.
 */
void rmsg_block_view_put(struct rmsg_block_view *v)
{
	kref_put(&v->ref, rmsg_block_view_release);
}
