// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: listening for, connecting and closing channels.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmsg_priv.h"

int rmsg_ep_listen_flags(struct rmsg_ep *ep, const struct sockaddr *addr,
			 socklen_t addrlen, uint64_t user_data,
			 uint32_t block_size, unsigned int flags)
{
	struct rmsg_listen req;

	memset(&req, 0, sizeof(req));
	req.addr = (uintptr_t)addr;
	req.addr_len = addrlen;
	req.user_data = user_data;
	req.block_size = block_size;
	req.flags = flags;
	return ioctl(ep->fd, RMSG_IOC_LISTEN, &req) ? -errno : 0;
}

int rmsg_ep_listen(struct rmsg_ep *ep, const struct sockaddr *addr,
		   socklen_t addrlen, uint64_t user_data, uint32_t block_size)
{
	return rmsg_ep_listen_flags(ep, addr, addrlen, user_data, block_size,
				    0);
}

int rmsg_chan_accept(struct rmsg_ep *ep, uint32_t channel, uint64_t user_data,
		     unsigned int flags)
{
	struct rmsg_accept req;

	memset(&req, 0, sizeof(req));
	req.channel = channel;
	req.flags = flags;
	req.user_data = user_data;
	return ioctl(ep->fd, RMSG_IOC_ACCEPT, &req) ? -errno : 0;
}

int rmsg_chan_connect(struct rmsg_ep *ep, const struct sockaddr *addr,
		      socklen_t addrlen, uint64_t user_data,
		      uint32_t block_size)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_connect req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.addr = (uintptr_t)addr;
	req.addr_len = addrlen;
	req.user_data = user_data;
	req.block_size = block_size;
	/* Marked before another thread's progress can take its CONNECTED. */
	if (d)
		rmsg_lock(d);
	ret = ioctl(ep->fd, RMSG_IOC_CONNECT, &req) ? -errno : (int)req.channel;
	if (d && ret >= 0)
		rmsg_chan_dialed(d, (__u32)ret, user_data);
	if (d)
		rmsg_unlock(d);
	return ret;
}

/* RMSG_IOC_CLOSE of channel @id: 0 or a negative errno. */
static int rmsg_close_ioctl(struct rmsg_ep *ep, __u32 id, unsigned int flags)
{
	struct rmsg_close req;

	memset(&req, 0, sizeof(req));
	req.channel = id;
	req.flags = flags;
	return ioctl(ep->fd, RMSG_IOC_CLOSE, &req) ? -errno : 0;
}

int rmsg_chan_close(struct rmsg_ep *ep, uint32_t channel,
		    unsigned int flags)
{
	return rmsg_chan_closing(ep, channel,
				 rmsg_close_ioctl(ep, channel, flags));
}

/*
 * Channel @id ends at the library's own word (the peer broke the protocol
 * in it, or the library could not take it on), from calls that hold the
 * endpoint's lock: rmsg_chan_close() takes it, and it is not recursive.
 */
void rmsg_lib_abort_locked(struct rmsg_ep *ep, __u32 id)
{
	rmsg_chan_closing_locked(ep->data, id,
				 rmsg_close_ioctl(ep, id, RMSG_CLOSE_ABORT));
}

int rmsg_chan_addr(struct rmsg_ep *ep, uint32_t channel,
		   struct sockaddr_storage *local,
		   struct sockaddr_storage *peer)
{
	struct rmsg_chan_addr req;

	_Static_assert(sizeof(req.local) == sizeof(*local),
		       "the kernel's sockaddr storage is the C library's");
	memset(&req, 0, sizeof(req));
	req.channel = channel;
	if (ioctl(ep->fd, RMSG_IOC_CHAN_ADDR, &req))
		return -errno;
	if (local)
		memcpy(local, &req.local, sizeof(*local));
	if (peer)
		memcpy(peer, &req.peer, sizeof(*peer));
	return 0;
}

int rmsg_chan_set(struct rmsg_ep *ep, uint32_t channel,
		  const struct rmsg_chan_opts *opts)
{
	struct rmsg_chan_set req;

	memset(&req, 0, sizeof(req));
	req.channel = channel;
	req.opts = *opts;
	return ioctl(ep->fd, RMSG_IOC_CHAN_SET, &req) ? -errno : 0;
}
