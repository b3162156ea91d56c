/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: memory regions, the program's memory pinned for rendezvous
 * transfers (RMSG_IOC_REG, RMSG_IOC_DEREG; rmsg_region.c).
 *
 * A region is pinned pages and nothing else: no device mapping, no MR.
 * A transfer asks for the pages of the span it moves (rmsg_region_sgt()),
 * maps them for its own device and registers them itself, so a region
 * outlives any one device.
 */
#ifndef _RMSG_REGION_H
#define _RMSG_REGION_H

#include <linux/scatterlist.h>
#include <linux/types.h>

struct rmsg_endpoint;
struct rmsg_region;

/* Endpoint life: an empty table at creation, every region gone at release. */
void rmsg_regions_init(struct rmsg_endpoint *ep);
void rmsg_regions_release(struct rmsg_endpoint *ep);

/* current's RLIMIT_MEMLOCK in pages, ULONG_MAX with CAP_IPC_LOCK. */
unsigned long rmsg_region_pin_limit(void);

/* The ioctls. */
long rmsg_region_reg(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_region_dereg(struct rmsg_endpoint *ep, void __user *uarg);

/**
 * rmsg_region_get() - take a region for a transfer
 * @ep: the endpoint
 * @handle: the SQE's region handle, untrusted
 * @addr: first byte of the span the transfer uses, a program address
 * @len: its length, at least 1
 *
 * Marks the region busy (RMSG_IOC_DEREG answers EBUSY) until the matching
 * rmsg_region_put(). May be called under ep->lock; does not sleep on
 * anything but memory.
 *
 * Return: the region, or ERR_PTR(-ENOENT) for no such handle,
 * ERR_PTR(-EFAULT) for a span not inside it, ERR_PTR(-EINVAL) for @len 0.
 */
struct rmsg_region *rmsg_region_get(struct rmsg_endpoint *ep, u32 handle,
				    u64 addr, u64 len);

/**
 * rmsg_region_pin() - pin memory in no region for one transfer
 * @ep: the endpoint
 * @addr: first byte, a program address, untrusted
 * @len: bytes, untrusted
 * @writable: the transfer writes the memory (a receive's sink); a send
 *	may come from read-only memory
 *
 * The memory is current's, or for the endpoint's poller (a kernel thread
 * with none) that of the task that started it. The pages are charged
 * against its RLIMIT_MEMLOCK as RMSG_IOC_REG's are, and stay pinned until
 * the transfer's rmsg_region_put(), even if the program unmaps them
 * meanwhile. May sleep (page faults): never under ep->lock, which
 * rdma_cm handlers take (rmsg_ep_submit() pins before the SQE runs).
 *
 * Return: a region, busy, that rmsg_region_put() unpins; ERR_PTR(-EINVAL)
 * for @len 0, ERR_PTR(-EFAULT) for memory not mapped (writable), -ENOMEM
 * over RLIMIT_MEMLOCK or without memory, -EINTR for a fatal signal.
 */
struct rmsg_region *rmsg_region_pin(struct rmsg_endpoint *ep, u64 addr,
				    u64 len, bool writable);

/**
 * rmsg_region_take_pinned() - take what submission pinned for this SQE
 * @ep: the endpoint; the caller holds ep->lock and runs the SQE
 *	rmsg_ep_submit() pinned for
 * @addr: the SQE's first byte
 * @len: its bytes
 * @writable: as for rmsg_region_pin()
 *
 * Return: the region rmsg_region_pin() gave for exactly this span, now
 * the caller's, or the error it gave; ERR_PTR(-EFAULT) when nothing was
 * pinned for it.
 */
struct rmsg_region *rmsg_region_take_pinned(struct rmsg_endpoint *ep,
					    u64 addr, u64 len, bool writable);

/*
 * The transfer is over: the region is no longer busy on its account. May
 * sleep: the last reference unpins the pages (page locks), so call it in
 * process context (a work item, not a completion handler). The endpoint
 * may be gone by then.
 */
void rmsg_region_put(struct rmsg_region *region);

/**
 * rmsg_region_sgt() - the pages of a span, as a scatter list
 * @region: taken with rmsg_region_get() for a span containing this one
 * @addr: first byte, a program address
 * @len: bytes, at least 1
 * @sgt: filled in; the caller maps it for its device, then frees it with
 *	sg_free_table()
 * @max_seg: the device's DMA segment limit (ib_dma_max_seg_size())
 *
 * The entries cover exactly @len bytes from @addr (the first starts at
 * @addr's offset in its page); physically contiguous pages may share one,
 * up to @max_seg rounded down to a page.
 *
 * Return: 0, -ENOMEM, or -EFAULT for a span not inside @region.
 */
int rmsg_region_sgt(struct rmsg_region *region, u64 addr, u64 len,
		    struct sg_table *sgt, unsigned int max_seg);

#endif /* _RMSG_REGION_H */
