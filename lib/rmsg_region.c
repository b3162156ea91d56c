// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: memory regions for rendezvous transfers.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmsg.h"

int rmsg_reg(struct rmsg_ep *ep, void *addr, size_t len, uint32_t *handle)
{
	struct rmsg_reg req;

	memset(&req, 0, sizeof(req));
	req.addr = (uintptr_t)addr;
	req.len = len;
	if (ioctl(ep->fd, RMSG_IOC_REG, &req))
		return -errno;
	*handle = req.handle;
	return 0;
}

int rmsg_dereg(struct rmsg_ep *ep, uint32_t handle)
{
	struct rmsg_dereg req;

	memset(&req, 0, sizeof(req));
	req.handle = handle;
	if (ioctl(ep->fd, RMSG_IOC_DEREG, &req))
		return -errno;
	return 0;
}
