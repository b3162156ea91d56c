// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: what its eager (rmsg_msg.c) and rendezvous (rmsg_rndv.c) halves
 * both stand on: handing SQEs to the kernel, ending a channel whose block
 * broke the protocol, a channel's largest eager message. rmsg_rndv.c calls
 * these and nothing of rmsg_msg.c, which calls rmsg_rndv.c: the two do not
 * need each other. The caller holds the endpoint's lock.
 *
 * Calls rmsg_endpoint.c (the doorbell), rmsg_channel.c (closing) and
 * rmsg_area.c only.
 */
#include <errno.h>

#include "rmsg_priv.h"

/*
 * Let the kernel take what was handed out, if it will not by itself;
 * during an RMSG_SEND_MORE send only publish it (a poller takes it, the
 * next kick enters for it).
 */
void rmsg_lib_kick(struct rmsg_ep *ep)
{
	unsigned int n;

	if (ep->data->more) {
		/* A: the SQEs are written before the producer publishes them. */
		__atomic_store_n(ep->rings.sq.producer,
				 ep->rings.sq.cached_prod,
				 __ATOMIC_RELEASE);
		return;
	}

	/*
	 * Nothing handed out that the kernel has not taken: skip the full
	 * barrier of rmsg_sq_submit(), which rmsg_ep_progress() would
	 * otherwise pay on every call of a busy-polling program.
	 */
	if (rmsg_sq_taken(ep))
		return;
	n = rmsg_sq_submit(ep);

	/*
	 * -EBUSY (CQ full) leaves the SQEs in the SQ; rmsg_ep_progress()
	 * kicks again once it has consumed CQEs. Nothing is lost.
	 */
	if (n)
		rmsg_ep_enter(ep, n, 0, 0);
}

/*
 * A free SQE; when the SQ is full, let the kernel drain it once first,
 * RMSG_SEND_MORE or not: a batch larger than the SQ goes in SQ-sized parts.
 */
struct rmsg_sqe *rmsg_lib_sqe(struct rmsg_ep *ep)
{
	struct rmsg_sqe *sqe = rmsg_sq_get_sqe(ep);
	bool more = ep->data->more;

	if (sqe)
		return sqe;
	ep->data->more = false;
	rmsg_lib_kick(ep);
	ep->data->more = more;
	return rmsg_sq_get_sqe(ep);
}

/*
 * The peer wrote something into channel @id's block that the protocol
 * forbids: reading stops there, and the channel is torn down. Its CLOSED
 * event still comes (and is reported), and messages peeked before stay
 * readable until released.
 */
void rmsg_lib_broken(struct rmsg_ep *ep, __u32 id, int err)
{
	struct rmsg_chan *ch = &ep->data->chans[id];

	ch->err = err;
	if (ch->state == RMSG_CH_OPEN)
		rmsg_lib_abort_locked(ep, id);
}

/* The largest eager message of channel @id, or -ENOTCONN. */
int rmsg_lib_max_msg(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *ch = rmsg_chan_get(d, id);
	int ret = -ENOTCONN;

	if (ch && ch->state == RMSG_CH_OPEN) {
		ret = (int)ch->max_msg;
		if (d->area_map && rmsg_area_max(&d->area) < ch->max_msg)
			ret = (int)rmsg_area_max(&d->area);
	}
	return ret;
}
