// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: the waiting calls of a program that wants a channel the way it
 * wants a socket: a host name and a port in, an open channel out
 * (rmsg_chan_dial()), and the next accepted channel (rmsg_ep_accept()).
 * Both are rmsg_chan_connect() and the endpoint's events underneath; what
 * they wait for is taken out of the events, the rest stays, in order, for
 * rmsg_ep_progress() (rmsg_lib_wait_event()).
 *
 * Calls rmsg_msg.c and rmsg_channel.c, which call nothing here.
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "rmsg_priv.h"

/* How long a dial waits for the end of a channel it gave up on. */
#define RMSG_DIAL_ABORT_MS	1000

struct rmsg_dial_want {
	__u32 channel;
	__u64 user_data;
};

static bool rmsg_dial_match(const struct rmsg_event *ev, const void *arg)
{
	const struct rmsg_dial_want *w = arg;

	return ev->kind == RMSG_CQE_CONNECTED && ev->channel == w->channel &&
	       ev->user_data == w->user_data;
}

static bool rmsg_accept_match(const struct rmsg_event *ev, const void *arg)
{
	return ev->kind == RMSG_CQE_ACCEPTED;
}

/* getaddrinfo()'s failures as errnos (rmsg_chan_dial(3), ERRORS). */
static int rmsg_gai_errno(int gai)
{
	switch (gai) {
	case EAI_NONAME:
#ifdef EAI_NODATA
	case EAI_NODATA:
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
#endif
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	case EAI_SERVICE:
	case EAI_BADFLAGS:
		return -EINVAL;
	case EAI_FAMILY:
	case EAI_SOCKTYPE:
		return -EAFNOSUPPORT;
	default:
		return -EIO;
	}
}

/*
 * One address: connect, then wait for the channel's CONNECTED. Return:
 * the channel; the connection's error, with *@next set (this address
 * failed: refused, unreachable, no answer in the rdma_cm's time; the next
 * may open); or an error of the call that the next address would meet
 * again (the endpoint's: no id, no memory, a bad block size; the wait's:
 * @deadline passed, a signal). A channel still connecting at @deadline
 * is closed, and its own end (a CONNECTED with an error) taken too if it
 * comes within RMSG_DIAL_ABORT_MS, so that it does not reach the program
 * as an event of a channel it never heard of.
 */
static int rmsg_dial_one(struct rmsg_ep *ep, const struct addrinfo *ai,
			 uint64_t user_data, uint32_t block_size,
			 __s64 deadline, bool *next)
{
	struct rmsg_dial_want want = { .user_data = user_data };
	struct rmsg_event ev;
	int id, ret;

	*next = false;
	id = rmsg_chan_connect(ep, ai->ai_addr, ai->ai_addrlen, user_data,
			       block_size);
	if (id < 0) {
		/* The kernel's: a family it cannot reach is the address's. */
		*next = id == -EAFNOSUPPORT || id == -EADDRNOTAVAIL;
		return id;
	}
	want.channel = (__u32)id;
	ret = rmsg_lib_wait_event(ep, rmsg_dial_match, &want, &ev, deadline);
	if (!ret) {
		*next = ev.res < 0;
		return ev.res < 0 ? ev.res : id;
	}
	rmsg_chan_close(ep, (__u32)id, RMSG_CLOSE_ABORT);
	rmsg_lib_wait_event(ep, rmsg_dial_match, &want, &ev,
			    rmsg_lib_now_ms() + RMSG_DIAL_ABORT_MS);
	return ret;
}

int rmsg_chan_dial(struct rmsg_ep *ep, const char *host, const char *service,
		   uint64_t user_data, uint32_t block_size)
{
	const struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *list, *ai;
	bool next = true;
	__s64 deadline;
	int ret, gai;

	if (!ep || !ep->data || !host || !service)
		return -EINVAL;
	errno = 0;
	gai = getaddrinfo(host, service, &hints, &list);
	if (gai)
		return rmsg_gai_errno(gai);
	deadline = rmsg_wait_deadline(ep->data);
	ret = -EAFNOSUPPORT;
	/* The last address's error is the dial's, as connect(2) loops do. */
	for (ai = list; ai && next; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		ret = rmsg_dial_one(ep, ai, user_data, block_size, deadline,
				    &next);
	}
	freeaddrinfo(list);
	return ret;
}

int rmsg_ep_accept(struct rmsg_ep *ep, struct sockaddr_storage *peer)
{
	struct rmsg_event ev;
	__s64 deadline;
	int ret;

	if (!ep || !ep->data)
		return -EINVAL;
	deadline = rmsg_wait_deadline(ep->data);
	do {
		ret = rmsg_lib_wait_event(ep, rmsg_accept_match, NULL, &ev,
					  deadline);
		if (ret)
			return ret;
		/* One that failed to open never was the program's. */
	} while (ev.res < 0);
	/* A channel that ended at once is still the program's: no address. */
	if (peer && rmsg_chan_addr(ep, ev.channel, NULL, peer))
		memset(peer, 0, sizeof(*peer));
	return (int)ev.channel;
}
