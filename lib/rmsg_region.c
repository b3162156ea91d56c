// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: memory regions for rendezvous transfers.
 *
 * The library keeps a table of the regions registered on each endpoint, so
 * that rmsg_msg_send(), rmsg_msg_send_zc() and rmsg_msg_recv_into() find the
 * handle of
 * a buffer themselves (rmsg_rv_region_of() in rmsg_rndv.c). The kernel
 * checks the span again in every SQE; the table only spares the program
 * from naming handles.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmsg_priv.h"

int rmsg_lib_reg(int fd, void *addr, size_t len, uint32_t *handle)
{
	struct rmsg_reg req;

	memset(&req, 0, sizeof(req));
	req.addr = (uintptr_t)addr;
	req.len = len;
	if (ioctl(fd, RMSG_IOC_REG, &req))
		return -errno;
	*handle = req.handle;
	return 0;
}

int rmsg_lib_dereg(int fd, uint32_t handle)
{
	struct rmsg_dereg req;

	memset(&req, 0, sizeof(req));
	req.handle = handle;
	if (ioctl(fd, RMSG_IOC_DEREG, &req))
		return -errno;
	return 0;
}

/* Room for one more entry in the table. */
static int rmsg_regs_room(struct rmsg_ep_data *d)
{
	struct rmsg_rv_region *p;
	__u32 n;

	if (d->nregs < d->regs_cap)
		return 0;
	n = d->regs_cap ? 2 * d->regs_cap : 8;
	p = realloc(d->regs, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->regs = p;
	d->regs_cap = n;
	return 0;
}

int rmsg_reg(struct rmsg_ep *ep, void *addr, size_t len, uint32_t *handle)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_rv_region *r;
	int ret;

	if (!d)
		return rmsg_lib_reg(ep->fd, addr, len, handle);
	rmsg_lock(d);
	ret = rmsg_regs_room(d);
	if (!ret)
		ret = rmsg_lib_reg(ep->fd, addr, len, handle);
	if (!ret) {
		r = &d->regs[d->nregs++];
		r->addr = (uintptr_t)addr;
		r->len = len;
		r->handle = *handle;
	}
	rmsg_unlock(d);
	return ret;
}

int rmsg_dereg(struct rmsg_ep *ep, uint32_t handle)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 i;
	int ret;

	if (!d)
		return rmsg_lib_dereg(ep->fd, handle);
	rmsg_lock(d);
	ret = rmsg_lib_dereg(ep->fd, handle);
	/* Forget it only once the kernel has (not on -EBUSY). */
	for (i = 0; !ret && i < d->nregs; i++) {
		if (d->regs[i].handle != handle)
			continue;
		d->regs[i] = d->regs[--d->nregs];
		break;
	}
	rmsg_unlock(d);
	return ret;
}
