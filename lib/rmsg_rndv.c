// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: rendezvous messages (Documentation/rendezvous.rst).
 *
 * Placeholders until the implementation lands: the API of RMSG_0.6 links,
 * and every call reports -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdint.h>

#include "rmsg_priv.h"

int rmsg_recv_into(struct rmsg_ep *ep, const struct rmsg_msg *msg, void *buf,
		   size_t room, uint64_t user_data)
{
	return -EOPNOTSUPP;
}

int rmsg_discard(struct rmsg_ep *ep, const struct rmsg_msg *msg)
{
	return -EOPNOTSUPP;
}

int rmsg_send_zc(struct rmsg_ep *ep, uint32_t channel, const void *buf,
		 size_t len, unsigned int flags, uint64_t user_data)
{
	return -EOPNOTSUPP;
}

int rmsg_ep_set_rndv_threshold(struct rmsg_ep *ep, size_t bytes)
{
	return -EOPNOTSUPP;
}

size_t rmsg_ep_rndv_threshold(struct rmsg_ep *ep)
{
	return SIZE_MAX;
}

int rmsg_protocol_info(struct rmsg_ep *ep, uint32_t channel, FILE *out)
{
	return -EOPNOTSUPP;
}
