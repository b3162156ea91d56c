// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: endpoints, their setup and the mapping of their rings. The hot
 * path (rmsg_sq_get_sqe() and friends) is inline in rmsg.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rmsg_priv.h"

static int rmsg_ring_map(int fd, struct rmsg_ring_view *r, __u64 offset,
			 __u64 size, const struct rmsg_ring_offsets *off,
			 __u32 entries)
{
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)offset);

	if (map == MAP_FAILED)
		return -errno;
	r->map = map;
	r->map_size = size;
	r->producer = (__u32 *)((char *)map + off->producer);
	r->consumer = (__u32 *)((char *)map + off->consumer);
	r->flags = (__u32 *)((char *)map + off->flags);
	r->descs = (char *)map + off->descs;
	r->entries = entries;
	r->mask = entries - 1;
	r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return 0;
}

/* Undo what rmsg_ep_do_open() did, in reverse; @ep may be half built. */
static void rmsg_ep_free(struct rmsg_ep *ep)
{
	rmsg_ep_data_free(ep);
	if (ep->rings.sq.map)
		munmap(ep->rings.sq.map, ep->rings.sq.map_size);
	if (ep->rings.cq.map)
		munmap(ep->rings.cq.map, ep->rings.cq.map_size);
	if (ep->fd >= 0)
		close(ep->fd);
	free(ep);
}

/*
 * Open and set up an endpoint. With @want_area, ask for the library's
 * default send area if the module has a data path (an older module would
 * refuse the field).
 */
static int rmsg_ep_do_open(struct rmsg_ep **epp, struct rmsg_ep_setup *p,
			   bool want_area)
{
	struct rmsg_version ver;
	struct rmsg_ep *ep;
	int ret;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->fd = rmsg_node_open();
	if (ep->fd < 0) {
		ret = ep->fd;
		goto fail;
	}
	if (want_area && !rmsg_node_version(ep->fd, &ver) &&
	    (ver.features & RMSG_FEAT_EAGER))
		p->send_area_size = RMSG_LIB_SEND_AREA;
	if (ioctl(ep->fd, RMSG_IOC_EP_SETUP, p)) {
		ret = -errno;
		goto fail;
	}
	ret = rmsg_ring_map(ep->fd, &ep->rings.sq, RMSG_OFF_SQ_RING,
			    p->sq_mmap_size, &p->sq_off, p->sq_entries);
	if (ret)
		goto fail;
	ret = rmsg_ring_map(ep->fd, &ep->rings.cq, RMSG_OFF_CQ_RING,
			    p->cq_mmap_size, &p->cq_off, p->cq_entries);
	if (ret)
		goto fail;
	ret = rmsg_ep_data_init(ep, p);
	if (ret)
		goto fail;
	*epp = ep;
	return 0;
fail:
	rmsg_ep_free(ep);
	return ret;
}

int rmsg_ep_open_setup(struct rmsg_ep **ep, struct rmsg_ep_setup *p)
{
	return rmsg_ep_do_open(ep, p, false);
}

int rmsg_ep_open(struct rmsg_ep **ep, unsigned int sq_entries,
		 unsigned int cq_entries)
{
	struct rmsg_ep_setup p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = sq_entries;
	p.cq_entries = cq_entries;
	return rmsg_ep_do_open(ep, &p, true);
}

void rmsg_ep_close(struct rmsg_ep *ep)
{
	if (ep)
		rmsg_ep_free(ep);
}

int rmsg_ep_fd(const struct rmsg_ep *ep)
{
	return ep->fd;
}

int rmsg_ep_enter(struct rmsg_ep *ep, unsigned int to_submit,
		  unsigned int min_complete, unsigned int flags)
{
	struct rmsg_enter e;

	memset(&e, 0, sizeof(e));
	e.to_submit = to_submit;
	e.min_complete = min_complete;
	e.flags = flags;
	if (ioctl(ep->fd, RMSG_IOC_ENTER, &e))
		return -errno;
	return (int)e.submitted;
}
