// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: page sets that programs map and devices read or write: receive
 * blocks and send areas.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "rmsg.h"

static void rmsg_pages_release(struct kref *ref)
{
	struct rmsg_pages *p = container_of(ref, struct rmsg_pages, ref);
	u32 i;

	for (i = 0; i < p->npages; i++)
		if (p->pages[i])
			put_page(p->pages[i]);
	kvfree(p);
}

/**
 * rmsg_pages_new() - zeroed pages, charged to the caller's memcg
 * @size: bytes, rounded up to whole chunks
 * @order: the pages come in physically contiguous chunks of 2^@order
 *	pages, each split into order-0 pages for mapping
 *
 * Zeroed because a receive block's first lap needs a clear last flag
 * (Documentation/veloblock.rst), and a send area must not show a program
 * what the pages held before. Contiguous chunks let the device read a
 * message that crosses pages with one scatter-gather entry.
 *
 * Return: the set with one reference, or NULL.
 */
struct rmsg_pages *rmsg_pages_new(u32 size, unsigned int order)
{
	u32 i, j, chunk = PAGE_SIZE << order;
	u32 npages = (ALIGN(size, chunk) >> PAGE_SHIFT);
	struct rmsg_pages *p;
	struct page *page;

	p = kvzalloc(struct_size(p, pages, npages), GFP_KERNEL_ACCOUNT);
	if (!p)
		return NULL;
	kref_init(&p->ref);
	p->npages = npages;
	for (i = 0; i < npages; i += 1U << order) {
		page = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO, order);
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

/**
 * rmsg_pages_mmap() - map a page set into a program
 * @p: the pages; the caller holds a reference for the call
 * @vma: MAP_SHARED, at most @p's size
 * @writable: the program may write the pages
 *
 * The mapping takes page references of its own (vm_insert_pages()), so it
 * stays valid after @p is put. It cannot grow by mremap(), and a read-only
 * one cannot become writable by mprotect().
 *
 * Return: 0, -EINVAL for a bad size or a private mapping, -EPERM for a
 * writable mapping of read-only pages.
 */
int rmsg_pages_mmap(struct rmsg_pages *p, struct vm_area_struct *vma,
		    bool writable)
{
	unsigned long npages = (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (!writable && (vma->vm_flags & VM_WRITE))
		return -EPERM;
	if (!npages || npages > p->npages)
		return -EINVAL;
	if (!writable)
		vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return vm_insert_pages(vma, vma->vm_start, p->pages, &npages);
}
