// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: reliable-datagram endpoints over rmsg channels.
 *
 * An endpoint is a librmsg endpoint that listens on the node's RDMA
 * address; its name is that address. A send to a peer goes on the first
 * channel the endpoint has with it: the one the peer opened, if its hello
 * came first, else one this endpoint opens (rmsg_chan_connect()) and greets
 * with its own name. Sends wait in the peer's queue until that channel is
 * open; once chosen, a peer's channel is the one every send to it takes,
 * so each direction keeps its order (FI_ORDER_SAS). Two endpoints that
 * open channels to each other at once settle on one before either sends
 * on its own (rfi_chan_attach(), rfi_greet_later()); if both sent first,
 * the one of the greater name moves to the other's channel behind a LAST
 * on its own (rfi_move_last(), rfi_rx_last(), rfi_rx_moved()).
 *
 * A channel id is the kernel's to give again once that channel ended, and
 * it may give it to a new channel before this endpoint has heard of the
 * end: each connect's user_data is its own (a count of the endpoint's
 * connects in it), and an event whose user_data is not that of the
 * channel the endpoint knows by its id is an earlier channel's, of no
 * concern any more (rfi_chan_take(), rfi_event_stale()).
 *
 * Every message starts with a struct rfi_hdr. Up to the channel's largest
 * eager message the payload follows it in the same message (one
 * rmsg_msg_sendv()); above, the header says so (RFI_F_RNDV) and the payload is
 * the channel's next message, a rendezvous one, which the receiving side
 * reads straight into the posted buffer (rmsg_msg_recv_into(): the kernel pins
 * it) or, if no receive matches yet, into memory of the provider's.
 *
 * Progress is manual: rfi_ep_progress(), called from CQ reads, peeks, a
 * send to a peer with no channel yet and a send librmsg had no room for,
 * takes librmsg's events (channels opened and ended, sends completed) and
 * the messages that arrived, and matches them against posted receives.
 * Everything here runs under the fabric's lock (rfi_lock(): one recursive
 * mutex per fabric, none with FI_THREAD_DOMAIN).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "rmsg_fi.h"

/* librmsg user_data of the provider's operations: kind and index. */
#define RFI_UD_SEND	(1ULL << 40)
#define RFI_UD_RECV	(2ULL << 40)
#define RFI_UD_PEER	(3ULL << 40)
#define RFI_UD_KIND(ud)	((ud) & (0xffULL << 40))
#define RFI_UD_IDX(ud)	((ud) & 0xffffffffULL)
/* A connect's: its peer's index, and which of the endpoint's connects. */
#define RFI_UD_CONNECT(n, peer) \
	(RFI_UD_PEER | (uint64_t)(n) << 48 | (peer))

/* --- small helpers ------------------------------------------------------ */

static size_t rfi_iov_len(const struct iovec *iov, size_t count)
{
	size_t i, n = 0;

	for (i = 0; i < count; i++)
		n += iov[i].iov_len;
	return n;
}

/* Copy @len bytes of @src into the pieces of @iov; returns bytes copied. */
static size_t rfi_scatter(const struct iovec *iov, size_t count,
			  const void *src, size_t len)
{
	const unsigned char *p = src;
	size_t i, n, done = 0;

	for (i = 0; i < count && done < len; i++) {
		n = iov[i].iov_len < len - done ? iov[i].iov_len : len - done;
		memcpy(iov[i].iov_base, p + done, n);
		done += n;
	}
	return done;
}

/* The pieces of @iov one after the other at @to. */
static void rfi_gather(void *to, const struct iovec *iov, size_t count)
{
	size_t i, off = 0;

	for (i = 0; i < count; i++) {
		memcpy((char *)to + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
}

/* Take a free slot of the endpoint's table for @ptr, a @kind. */
static int rfi_slot_get(struct rfi_ep *ep, enum rfi_slot_kind kind,
			void *ptr, uint64_t *idx)
{
	struct rfi_slot *grown;
	size_t i, n;

	if (ep->free_slot == ep->nslots) {
		n = ep->nslots ? 2 * ep->nslots : 64;
		grown = realloc(ep->slots, n * sizeof(*grown));
		if (!grown)
			return -FI_ENOMEM;
		for (i = ep->nslots; i < n; i++) {
			grown[i].kind = RFI_SLOT_FREE;
			grown[i].next_free = i + 1;
		}
		ep->slots = grown;
		ep->free_slot = ep->nslots;
		ep->nslots = n;
	}
	i = ep->free_slot;
	ep->free_slot = ep->slots[i].next_free;
	ep->slots[i].kind = kind;
	if (kind == RFI_SLOT_OP)
		ep->slots[i].op = ptr;
	else
		ep->slots[i].early = ptr;
	*idx = i;
	return 0;
}

static void rfi_slot_put(struct rfi_ep *ep, uint64_t idx)
{
	ep->slots[idx].kind = RFI_SLOT_FREE;
	ep->slots[idx].next_free = ep->free_slot;
	ep->free_slot = idx;
}

static struct rfi_chan *rfi_chan(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *grown;
	size_t n;

	if (id >= ep->nchans) {
		n = ep->nchans ? ep->nchans : 16;
		while (n <= id)
			n *= 2;
		grown = realloc(ep->chans, n * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + ep->nchans, 0,
		       (n - ep->nchans) * sizeof(*grown));
		ep->chans = grown;
		ep->nchans = n;
	}
	return &ep->chans[id];
}

/* Channel @id is one a peer opened to us that has not said whose it is. */
static bool rfi_chan_unnamed(const struct rfi_ep *ep, uint32_t id)
{
	return ep->chans[id].used && !ep->chans[id].named;
}

/* @peer's held hello (rfi_greet_later()) is not due any more. */
static void rfi_greet_cancel(struct rfi_ep *ep, struct rfi_peer *peer)
{
	if (peer->greet_later) {
		peer->greet_later = false;
		ep->greets_due--;
	}
}

/* Endpoint names ordered by address, then port: never their padding. */
static int rfi_name_cmp(const struct sockaddr_in *a,
			const struct sockaddr_in *b)
{
	uint32_t x = ntohl(a->sin_addr.s_addr), y = ntohl(b->sin_addr.s_addr);

	if (x != y)
		return x < y ? -1 : 1;
	x = ntohs(a->sin_port);
	y = ntohs(b->sin_port);
	return x < y ? -1 : x > y;
}

static void rfi_chan_resolve(struct rfi_ep *ep, uint32_t id);
static void rfi_chan_gone(struct rfi_ep *ep, uint32_t id, int res);
static void rfi_rx_progress(struct rfi_ep *ep, const uint32_t *only);

/*
 * The kernel gave id @id to a new channel, whose events carry @ud. What
 * the endpoint still knows by that id is of an earlier channel, which
 * has ended, its end not read yet: it ends here, after its messages
 * unless librmsg has dropped them for the new one's (@opened: its open
 * event was taken), as a CLOSED would end it, and its end event, when
 * read, is stale (rfi_event_stale()). Peers may move meanwhile
 * (rfi_peer()). Returns the id's entry, or NULL for want of memory.
 */
static struct rfi_chan *rfi_chan_take(struct rfi_ep *ep, uint32_t id,
				      uint64_t ud, bool opened)
{
	struct rfi_chan *c = rfi_chan(ep, id);

	if (!c)
		return NULL;
	if (c->used) {
		if (!opened)
			rfi_rx_progress(ep, &id);
		rfi_chan_gone(ep, id, 0);
	}
	c = &ep->chans[id];
	c->used = true;
	c->ud = ud;
	return c;
}

/*
 * Whether channel event @ev (CONNECTED, CLOSED) is of a channel the
 * endpoint no longer knows: one it closed and forgot, or one whose id a
 * new channel has since taken (rfi_chan_take()). The channels peers open
 * all carry the listener's user_data: one of them whose id an earlier
 * peer's channel had is told from it by order alone, which holds as the
 * kernel reports a channel's end just after it frees the id, long before
 * a new channel's handshake can end.
 */
static bool rfi_event_stale(const struct rfi_ep *ep,
			    const struct rmsg_event *ev)
{
	return ev->channel >= ep->nchans || !ep->chans[ev->channel].used ||
	       ep->chans[ev->channel].ud != ev->user_data;
}

static struct rfi_peer *rfi_peer(struct rfi_ep *ep, fi_addr_t addr)
{
	struct rfi_peer *grown;
	size_t i, n;

	/* Connected: the one peer, whatever the address says. */
	if (ep->connected)
		return ep->peers;
	if (!ep->av || addr >= ep->av->n)
		return NULL;
	if (addr >= ep->npeers) {
		n = ep->av->cap > addr ? ep->av->cap : addr + 1;
		grown = realloc(ep->peers, n * sizeof(*grown));
		if (!grown)
			return NULL;
		for (i = ep->npeers; i < n; i++) {
			memset(&grown[i], 0, sizeof(grown[i]));
			grown[i].chan = -1;
			grown[i].move_to = -1;
		}
		ep->peers = grown;
		ep->npeers = n;
	}
	return &ep->peers[addr];
}

/*
 * Receive @op's message came from @name (NULL: not known), for its
 * completion with FI_SOURCE_ERR.
 */
static void rfi_op_from(struct rfi_op *op, const struct sockaddr_in *name)
{
	op->from_named = name != NULL;
	if (name)
		op->from = *name;
}

/*
 * @op's completion. A receive whose sender is not in the AV (@src
 * FI_ADDR_NOTAVAIL), on an endpoint with FI_SOURCE_ERR, completes as an
 * error, FI_EADDRNOTAVAIL, its bytes received all the same and the
 * sender's name its err_data, for the program to insert.
 */
static void rfi_complete(struct rfi_ep *ep, struct rfi_op *op, size_t len,
			 uint64_t tag, uint64_t data, uint64_t extra,
			 fi_addr_t src, int err, size_t olen)
{
	struct rfi_cq *cq = op->flags & FI_SEND ? ep->tx_cq : ep->rx_cq;
	const struct sockaddr_in *from = NULL;
	struct fi_cq_err_entry e;

	if (!err && (ep->caps & FI_SOURCE_ERR) && (op->flags & FI_RECV) &&
	    src == FI_ADDR_NOTAVAIL && op->from_named) {
		err = FI_EADDRNOTAVAIL;
		from = &op->from;
	}

	/*
	 * An operation without a completion still reports its failure,
	 * unless it has no context to name it by (an inject): Open MPI
	 * takes every error entry's context for its request.
	 */
	if (!cq || (!op->complete && (!err || !op->context)))
		return;
	memset(&e, 0, sizeof(e));
	e.op_context = op->context;
	e.flags = (op->flags & (FI_SEND | FI_RECV | FI_MSG | FI_TAGGED)) |
		  extra;
	e.len = len;
	e.buf = op->flags & FI_RECV && op->iov_count ? op->iov[0].iov_base :
						       NULL;
	e.data = data;
	e.tag = tag;
	e.err = err;
	e.prov_errno = err && op->prov_err ? op->prov_err : err;
	e.olen = olen;
	if (rfi_cq_push(cq, &e, src, from))
		RFI_WARN("a completion lost: no memory\n");
}

/* A zeroed operation; under the domain lock. */
static struct rfi_op *rfi_op_get(struct rfi_ep *ep)
{
	struct rfi_op *op = ep->op_cache;

	if (!op)
		return calloc(1, sizeof(*op));
	ep->op_cache = op->next;
	ep->op_cached--;
	memset(op, 0, sizeof(*op));
	return op;
}

/* @op is over: into the endpoint's cache, or freed; under the lock. */
static void rfi_op_free(struct rfi_ep *ep, struct rfi_op *op)
{
	if (op->copy != op->small)
		free(op->copy);
	if (ep->op_cached < RFI_OP_CACHE) {
		op->next = ep->op_cache;
		ep->op_cache = op;
		ep->op_cached++;
		return;
	}
	free(op);
}

/* --- sending ----------------------------------------------------------- */

/* The librmsg sends @op takes: one, or a header and a rendezvous. */
static unsigned int rfi_send_parts(const struct rfi_ep *ep,
				   const struct rfi_op *op)
{
	return op->len <= ep->peers[op->addr].max_eager ? 1 : 2;
}

/* @peer's channel is open: what it takes with a header, in one message. */
static void rfi_peer_open(struct rfi_ep *ep, struct rfi_peer *peer)
{
	int max = rmsg_chan_max_msg(ep->rep, peer->chan);

	peer->max_eager = max > (int)sizeof(struct rfi_hdr) ?
			  max - sizeof(struct rfi_hdr) : 0;
	if (peer->max_eager > ep->rndv_threshold)
		peer->max_eager = ep->rndv_threshold;
	peer->open = true;
	FI_INFO(&rfi_prov, FI_LOG_EP_DATA,
		"channel %d open: eager payloads up to %zu bytes\n",
		peer->chan, peer->max_eager);
}

/*
 * Put @op on its channel: 0 when librmsg took all of it (its completion
 * comes with librmsg's), -FI_EAGAIN when the send queue or the send area
 * is full (it stays first in the peer's queue, and what was sent of it
 * stays sent), or another error for the send's error completion.
 */
static int rfi_send_now(struct rfi_ep *ep, struct rfi_peer *peer,
			struct rfi_op *op)
{
	const void *buf;
	struct iovec iov[1 + RFI_IOV_MAX];
	size_t i;
	int ret;

	if (!op->slotted) {
		if (rfi_slot_get(ep, RFI_SLOT_OP, op, &op->slot))
			return -FI_ENOMEM;
		op->slotted = true;
	}
	if (rfi_send_parts(ep, op) == 1) {
		iov[0].iov_base = &op->hdr;
		iov[0].iov_len = sizeof(op->hdr);
		if (op->copy) {
			iov[1].iov_base = op->copy;
			iov[1].iov_len = op->len;
			i = 1;
		} else {
			for (i = 0; i < op->iov_count; i++)
				iov[i + 1] = op->iov[i];
			i = op->iov_count;
		}
		ret = rmsg_msg_sendv(ep->rep, peer->chan, iov, (int)i + 1, 0,
				     RFI_UD_SEND | op->slot);
		if (ret)
			return ret == -EAGAIN ? -FI_EAGAIN : ret;
		op->sent = 1;
		return 0;
	}
	/* Rendezvous: the header, then the payload as the next message. */
	if (!op->sent) {
		op->hdr.flags |= RFI_F_RNDV;
		ret = rmsg_msg_send(ep->rep, peer->chan, &op->hdr,
				    sizeof(op->hdr), 0, RFI_UD_SEND | op->slot);
		if (ret)
			return ret == -EAGAIN ? -FI_EAGAIN : ret;
		op->sent = 1;
	}
	if (op->iov_count > 1 && !op->copy) {
		op->copy = malloc(op->len);
		if (!op->copy)
			return -FI_ENOMEM;
		rfi_gather(op->copy, op->iov, op->iov_count);
	}
	buf = op->copy ? op->copy : op->iov[0].iov_base;
	ret = rmsg_msg_send_zc(ep->rep, peer->chan, buf, op->len, 0,
			       RFI_UD_SEND | op->slot);
	if (ret)
		return ret == -EAGAIN ? -FI_EAGAIN : ret;
	op->sent = 2;
	return 0;
}

/* @op's send is over: its completion, and it is gone. */
static void rfi_send_end(struct rfi_ep *ep, struct rfi_op *op)
{
	if (op->slotted)
		rfi_slot_put(ep, op->slot);
	if (op->err)
		rfi_complete(ep, op, 0, op->tag, 0, 0, FI_ADDR_NOTAVAIL,
			     op->err, 0);
	else
		rfi_complete(ep, op, op->len, op->tag, 0, 0, FI_ADDR_NOTAVAIL,
			     0, 0);
	rfi_op_free(ep, op);
}

/*
 * Fail @op's send, off its peer's queue: it ends now, or with the last
 * completion of what librmsg has of it.
 */
static void rfi_send_fail(struct rfi_ep *ep, struct rfi_op *op, int err,
			  int why)
{
	op->queued = false;
	if (!op->err) {
		op->err = rfi_fi_errno(err);
		op->prov_err = why > 0 ? why : -why;
	}
	if (op->done == op->sent)
		rfi_send_end(ep, op);
}

/* @peer's sends wait for room: the next progress flushes it again. */
static void rfi_peer_backlog(struct rfi_ep *ep, struct rfi_peer *peer)
{
	if (!peer->in_backlog) {
		peer->in_backlog = true;
		peer->backlog_next = ep->backlog;
		ep->backlog = (size_t)(peer - ep->peers);
	}
}

/* A message of the provider's own, a header of @kind alone, on @chan. */
static int rfi_ctl(struct rfi_ep *ep, uint32_t chan, uint8_t kind)
{
	struct rfi_hdr hdr = { .kind = kind };

	return rmsg_msg_send(ep->rep, chan, &hdr, sizeof(hdr), 0, RFI_UD_PEER);
}

/*
 * @peer's sends move to its channel @peer->move_to: a LAST on the channel
 * they took so far, after everything sent on it, and from now on they
 * queue until the peer says it read the LAST (rfi_rx_moved()).
 */
static void rfi_move_last(struct rfi_ep *ep, struct rfi_peer *peer)
{
	int ret = rfi_ctl(ep, (uint32_t)peer->chan, RFI_LAST);

	if (ret == -EAGAIN) {
		rfi_peer_backlog(ep, peer);
		return;
	}
	/* A channel that refuses it is ending: its end moves the sends. */
	peer->last_sent = !ret;
	peer->open = false;
}

/*
 * Send what waits for @peer, in order, as far as librmsg takes it; a
 * move's LAST goes before the first send that has nothing on the old
 * channel yet (a rendezvous whose header went finishes there first).
 */
static void rfi_peer_flush(struct rfi_ep *ep, struct rfi_peer *peer)
{
	struct rfi_op *op;
	int ret;

	while (peer->open && (op = peer->queue)) {
		if (peer->move_to >= 0 && !op->sent) {
			rfi_move_last(ep, peer);
			return;
		}
		ret = rfi_send_now(ep, peer, op);
		if (ret == -FI_EAGAIN) {
			rfi_peer_backlog(ep, peer);
			return;
		}
		peer->queue = op->next;
		if (!peer->queue)
			peer->queue_tail = NULL;
		op->next = NULL;
		op->queued = false;
		if (ret)
			rfi_send_fail(ep, op, ret, ret);
		else if (op->done == op->sent)
			rfi_send_end(ep, op);	/* completed meanwhile */
	}
	if (peer->open && peer->move_to >= 0)
		rfi_move_last(ep, peer);
}

/* Greet a channel this endpoint opened: who it is. */
static int rfi_hello(struct rfi_ep *ep, struct rfi_peer *peer)
{
	struct rfi_hdr hdr = {
		.kind = RFI_HELLO,
		.len = sizeof(ep->name),
	};
	struct iovec iov[2] = {
		{ &hdr, sizeof(hdr) },
		{ &ep->name, sizeof(ep->name) },
	};

	return rmsg_msg_sendv(ep->rep, peer->chan, iov, 2, 0, RFI_UD_PEER);
}

/* The header of a send of @len bytes; the rest of @hdr is zero. */
static void rfi_hdr_fill(struct rfi_hdr *hdr, size_t len, uint64_t tag,
			 uint64_t data, uint64_t flags)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->kind = flags & FI_TAGGED ? RFI_TAGGED : RFI_MSG;
	hdr->flags = flags & FI_REMOTE_CQ_DATA ? RFI_F_DATA : 0;
	hdr->len = (uint32_t)len;
	hdr->tag = tag;
	hdr->data = data;
}

/*
 * An inject that fits one message of @peer's open channel, with nothing
 * of the peer's queued before it, goes at once and needs no operation:
 * it has no completion, and no failure to report (it has no context to
 * name one by, rfi_complete()), so librmsg's completion of its send is
 * ignored as a hello's is (RFI_UD_PEER). Returns 0, or -EAGAIN when it
 * does not go this way, which changes nothing.
 */
static int rfi_inject_now(struct rfi_ep *ep, struct rfi_peer *peer,
			  const struct iovec *iov, size_t count, size_t len,
			  uint64_t tag, uint64_t data, uint64_t flags)
{
	struct iovec parts[1 + RFI_IOV_MAX];
	struct rfi_hdr hdr;
	int ret;

	if (!peer->open || peer->queue || len > peer->max_eager)
		return -EAGAIN;
	rfi_hdr_fill(&hdr, len, tag, data, flags);
	parts[0].iov_base = &hdr;
	parts[0].iov_len = sizeof(hdr);
	memcpy(parts + 1, iov, count * sizeof(*iov));
	ret = rmsg_msg_sendv(ep->rep, peer->chan, parts, (int)count + 1, 0,
			     RFI_UD_PEER);
	/* Refused (full, closing...): the queue's way says what to do. */
	return ret ? -EAGAIN : 0;
}

/*
 * A send, or with @inject one of the fi_inject*() calls, the only sends
 * that write no completion: FI_INJECT in @flags alone (the endpoint's
 * tx_attr->op_flags, fi_sendmsg()'s flags) means the buffer is free when
 * the call returns, and the completion comes all the same.
 */
static ssize_t rfi_send_common(struct rfi_ep *ep, const struct iovec *iov,
			       size_t count, fi_addr_t dest, uint64_t tag,
			       uint64_t data, uint64_t flags, void *context,
			       bool inject)
{
	struct sockaddr_in name;
	struct rfi_peer *peer;
	struct rfi_op *op;
	size_t len = rfi_iov_len(iov, count);
	int ch, ret;

	if (count > RFI_IOV_MAX || len > RMSG_RNDV_MAX_LEN ||
	    ((flags & FI_INJECT) && len > RFI_INJECT_SIZE))
		return -FI_EINVAL;
	if (flags & RFI_TX_COMPLETIONS_NOT_GIVEN)
		return -FI_EBADFLAGS;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	rfi_lock(ep->dom);
	/*
	 * Connected: the address is ignored. A send before fi_connect() or
	 * fi_accept(), or after the channel ended, has nowhere to go; one
	 * while it opens waits in the peer's queue as an RDM one does.
	 */
	if (ep->connected) {
		dest = 0;
		if (ep->peers[0].chan < 0) {
			rfi_unlock(ep->dom);
			return -FI_ENOTCONN;
		}
	}
	peer = rfi_peer(ep, dest);
	if (!peer || (!ep->connected && rfi_av_addr(ep->av, dest, &name))) {
		rfi_unlock(ep->dom);
		return -FI_EINVAL;
	}
	/*
	 * No channel with the peer yet: the peer's may be open already, its
	 * hello unread. Read it before opening a second channel between the
	 * same two endpoints (rfi_peer() may move the peers meanwhile).
	 */
	if (peer->chan < 0) {
		uint32_t id;

		rfi_ep_progress(ep);
		for (id = 0; id < ep->nchans; id++)
			rfi_chan_resolve(ep, id);
		peer = rfi_peer(ep, dest);
		if (!peer) {
			rfi_unlock(ep->dom);
			return -FI_ENOMEM;
		}
	}
	if (inject) {
		ret = rfi_inject_now(ep, peer, iov, count, len, tag, data,
				     flags);
		if (!ret) {
			rfi_unlock(ep->dom);
			return 0;
		}
	}
	op = rfi_op_get(ep);
	if (!op) {
		rfi_unlock(ep->dom);
		return -FI_ENOMEM;
	}
	op->context = context;
	op->flags = FI_SEND | (flags & FI_TAGGED ? FI_TAGGED : FI_MSG);
	op->complete = !inject &&
		       (!(ep->tx_flags & FI_SELECTIVE_COMPLETION) ||
			(flags & FI_COMPLETION));
	memcpy(op->iov, iov, count * sizeof(*iov));
	op->iov_count = count;
	op->len = len;
	op->addr = dest;
	op->tag = tag;
	rfi_hdr_fill(&op->hdr, len, tag, data, flags);
	/* Injected: the program's buffer is free when this returns. */
	if (flags & FI_INJECT) {
		op->copy = len <= sizeof(op->small) ? op->small :
						       malloc(len);
		if (!op->copy) {
			rfi_op_free(ep, op);
			rfi_unlock(ep->dom);
			return -FI_ENOMEM;
		}
		rfi_gather(op->copy, iov, count);
	}
	if (peer->chan < 0) {
		uint64_t ud = RFI_UD_CONNECT(++ep->connects, dest);

		ch = rmsg_chan_connect(ep->rep, (struct sockaddr *)&name,
				       sizeof(name), ud, ep->block_size);
		/* No entry for it: its events would be taken for stale. */
		if (ch >= 0 && !rfi_chan_take(ep, ch, ud, false)) {
			rmsg_chan_close(ep->rep, ch, 0);
			ch = -ENOMEM;
		}
		peer = &ep->peers[dest];	/* rfi_chan_take() */
		/*
		 * Refused at once (the user's channel quota, EDQUOT; no
		 * memory): the send fails in its completion, as one whose
		 * connect fails later does; an inject, which has none, here.
		 */
		if (ch < 0 && (ch == -EAGAIN || inject)) {
			rfi_op_free(ep, op);
			rfi_unlock(ep->dom);
			return -rfi_fi_errno(ch);
		}
		if (ch < 0) {
			op->err = rfi_fi_errno(ch);
			op->prov_err = -ch;
			rfi_send_end(ep, op);
			rfi_unlock(ep->dom);
			return 0;
		}
		peer->chan = ch;
		peer->open = false;
		peer->ours = true;
		ep->chans_opened++;
		ep->chans[ch].named = true;
		ep->chans[ch].name = name;
		ep->chans[ch].src = dest;
		ep->chans[ch].src_gen = ep->av->gen;
	}
	op->queued = true;
	if (peer->queue_tail)
		peer->queue_tail->next = op;
	else
		peer->queue = op;
	peer->queue_tail = op;
	rfi_peer_flush(ep, peer);
	/*
	 * Progress here only when librmsg had no room for it: completions
	 * make room. A send it took needs nothing more until the program
	 * reads its CQ, which progresses anyway.
	 */
	if (peer->in_backlog)
		rfi_ep_progress(ep);
	rfi_unlock(ep->dom);
	return 0;
}

ssize_t rfi_send(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		 fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags,
		 void *context)
{
	return rfi_send_common(ep, iov, count, dest, tag, data, flags,
			       context, false);
}

ssize_t rfi_inject(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		   fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags)
{
	return rfi_send_common(ep, iov, count, dest, tag, data,
			       flags | FI_INJECT, NULL, true);
}

/* --- receiving --------------------------------------------------------- */

static bool rfi_matches(const struct rfi_ep *ep, const struct rfi_op *op,
			const struct rfi_hdr *hdr, fi_addr_t src)
{
	if ((op->flags & FI_TAGGED) != (hdr->kind == RFI_TAGGED ? FI_TAGGED :
								0))
		return false;
	if ((ep->caps & FI_DIRECTED_RECV) && op->addr != FI_ADDR_UNSPEC &&
	    op->addr != src)
		return false;
	return !(op->flags & FI_TAGGED) ||
	       ((hdr->tag ^ op->tag) & ~op->ignore) == 0;
}

static uint64_t rfi_rx_flags(const struct rfi_hdr *hdr)
{
	return hdr->flags & RFI_F_DATA ? FI_REMOTE_CQ_DATA : 0;
}

/* Deliver @len bytes at @payload to the receive @op and complete it. */
static void rfi_deliver(struct rfi_ep *ep, struct rfi_op *op,
			const struct rfi_hdr *hdr, const void *payload,
			fi_addr_t src, const struct sockaddr_in *name)
{
	size_t got = rfi_scatter(op->iov, op->iov_count, payload, hdr->len);

	rfi_op_from(op, name);
	if (got < hdr->len)
		rfi_complete(ep, op, got, hdr->tag, hdr->data,
			     rfi_rx_flags(hdr), src, FI_ETRUNC,
			     hdr->len - got);
	else
		rfi_complete(ep, op, got, hdr->tag, hdr->data,
			     rfi_rx_flags(hdr), src, 0, 0);
	rfi_op_free(ep, op);
}

/* Take the first posted receive that matches, off its queue. */
static struct rfi_op *rfi_take_posted(struct rfi_ep *ep,
				      const struct rfi_hdr *hdr, fi_addr_t src)
{
	struct rfi_op_queue *q = &ep->posted[hdr->kind == RFI_TAGGED];
	struct rfi_op *op;

	TAILQ_FOREACH(op, q, link)
		if (rfi_matches(ep, op, hdr, src)) {
			TAILQ_REMOVE(q, op, link);
			return op;
		}
	return NULL;
}

static void rfi_unexp_add(struct rfi_ep *ep, struct rfi_unexp *u)
{
	TAILQ_INSERT_TAIL(&ep->unexp[u->hdr.kind == RFI_TAGGED], u, link);
	u->listed = true;
}

/*
 * Channel @id's held message is answered, or will never be: give back
 * what it kept back, itself or the last message after it. Released
 * unanswered, the library discards it and its sender is told.
 */
static void rfi_held_done(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = &ep->chans[id];
	struct rfi_unexp *u = c->held;

	if (u->retry) {
		u->retry = false;
		ep->held_retry--;
	}
	u->held = false;
	c->held = NULL;
	rmsg_msg_release(ep->rep, c->release_due ? &c->release : &c->held_msg);
	c->release_due = false;
}

/*
 * @u's bytes will never come (@cause, a negative errno, says why): the
 * receive waiting for it fails, and @u goes with it; one still listed
 * fails the receive that takes it.
 */
static void rfi_unexp_lost(struct rfi_ep *ep, struct rfi_unexp *u, int cause)
{
	u->lost = true;
	u->lost_errno = cause < 0 ? -cause : EIO;
	if (!u->waiting)
		return;
	u->waiting->prov_err = u->lost_errno;
	rfi_complete(ep, u->waiting, 0, u->hdr.tag, u->hdr.data, 0, u->src,
		     FI_EIO, 0);
	rfi_op_free(ep, u->waiting);
	u->waiting = NULL;
	if (!u->listed) {
		free(u->buf);
		free(u);
	}
}

/*
 * Read channel @id's held message into memory of the provider's now: the
 * channel needs it answered. Its entry keeps its place among the
 * unexpected messages and completes the receive that takes it once its
 * bytes are in (rfi_op_done()). Returns 0, or -EAGAIN when the send queue
 * is full (it stays held).
 */
static int rfi_held_bounce(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = &ep->chans[id];
	struct rfi_unexp *u = c->held;
	int ret = -ENOMEM;
	uint64_t idx;

	u->buf = malloc(u->hdr.len ? u->hdr.len : 1);
	if (u->buf && !rfi_slot_get(ep, RFI_SLOT_EARLY, u, &idx)) {
		ret = rmsg_msg_recv_into(ep->rep, &c->held_msg, u->buf,
					 u->hdr.len, RFI_UD_RECV | idx);
		if (ret)
			rfi_slot_put(ep, idx);
	}
	if (ret == -EAGAIN) {
		free(u->buf);
		u->buf = NULL;
		return -EAGAIN;
	}
	rfi_held_done(ep, id);
	if (ret) {
		free(u->buf);
		u->buf = NULL;
		rfi_unexp_lost(ep, u, ret);
		return 0;
	}
	ep->rndv_bounced++;
	ep->rndv_bounced_bytes += u->hdr.len;
	return 0;
}

/*
 * The receive waiting on channel @id's held message takes it: straight
 * into its buffer when that is one piece with room, else by way of memory
 * of the provider's. Returns 0, or -EAGAIN when the send queue is full.
 */
static int rfi_held_answer(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_unexp *u = ep->chans[id].held;
	struct rfi_op *op = u->waiting;
	uint64_t idx;
	int ret;

	if (op->iov_count != 1 || op->iov[0].iov_len < u->hdr.len ||
	    rfi_slot_get(ep, RFI_SLOT_OP, op, &idx))
		return rfi_held_bounce(ep, id);
	ret = rmsg_msg_recv_into(ep->rep, &ep->chans[id].held_msg,
				 op->iov[0].iov_base, u->hdr.len,
				 RFI_UD_RECV | idx);
	if (ret == -EAGAIN) {
		rfi_slot_put(ep, idx);
		return -EAGAIN;
	}
	op->hdr = u->hdr;
	op->addr = u->src;
	rfi_op_from(op, u->named ? &u->name : NULL);
	u->waiting = NULL;
	rfi_held_done(ep, id);
	free(u);
	if (ret) {
		rfi_slot_put(ep, idx);
		op->prov_err = -ret;
		rfi_complete(ep, op, 0, op->hdr.tag, op->hdr.data, 0, op->addr,
			     FI_EIO, 0);
		rfi_op_free(ep, op);
		return 0;
	}
	ep->rndv_direct++;
	return 0;
}

/*
 * Receive @op takes channel @id's held message, now or, while the send
 * queue is full, from progress (rfi_held_retry()).
 */
static void rfi_held_take(struct rfi_ep *ep, uint32_t id, struct rfi_op *op)
{
	struct rfi_unexp *u = ep->chans[id].held;

	u->waiting = op;
	if (rfi_held_answer(ep, id) == -EAGAIN) {
		u->retry = true;
		ep->held_retry++;
	}
}

/* Receives that found the send queue full take their held messages now. */
static void rfi_held_retry(struct rfi_ep *ep)
{
	struct rfi_unexp *u;
	uint32_t id;

	for (id = 0; ep->held_retry && id < ep->nchans; id++) {
		u = ep->chans[id].held;
		if (u && u->retry && rfi_held_answer(ep, id) == -EAGAIN)
			return;
	}
}

/*
 * Release @msg now, or once its channel's held message is answered: a
 * release would discard that one. When the messages kept back reach
 * RFI_HELD_BYTES of the block, the held one is read into memory of the
 * provider's after all, so that a sender never stalls on a receive the
 * program may post only after messages still to come.
 */
static void rfi_release(struct rfi_ep *ep, const struct rmsg_msg *msg)
{
	struct rfi_chan *c = &ep->chans[msg->channel];

	if (c->held && msg->end - c->held_msg.end > RFI_HELD_BYTES)
		rfi_held_bounce(ep, msg->channel);
	if (!c->held) {
		rmsg_msg_release(ep->rep, msg);
		return;
	}
	c->release = *msg;
	c->release_due = true;
}

/**
 * rfi_release_flush() - release what rfi_rx_msg() left for later
 * @ep: the endpoint, under the domain's lock
 *
 * A message's release (its credit check, and on a channel with a held
 * message the bookkeeping of rfi_release()) is not needed before the
 * program has its completion, so the last message a progress takes is
 * released by the next: a ping-pong's program then pays for it while it
 * waits, not between the message's arrival and its reply. It must go
 * before anything that can end or reopen its channel id (librmsg's
 * events, rfi_chan_gone()), before another message is taken (releases go
 * in order, and a held message needs the ones before it released), and
 * before the program may sleep (rfi_cq_trywait()): the sender may be
 * waiting for the credit it gives.
 */
void rfi_release_flush(struct rfi_ep *ep)
{
	if (!ep->release_next_due)
		return;
	ep->release_next_due = false;
	rfi_release(ep, &ep->release_next);
}

/*
 * Unexpected message @u came on channel @c from @src: its sender's name
 * too, for the source of a sender inserted only later (rfi_unexp_src()).
 */
static void rfi_unexp_from(struct rfi_unexp *u, const struct rfi_chan *c,
			   fi_addr_t src)
{
	u->src = src;
	u->named = c->named;
	u->name = c->name;
}

/*
 * The source of unexpected message @u: a sender that was not in the AV
 * when it came (FI_ADDR_NOTAVAIL) has its entry once it is inserted, for
 * a directed receive to match it and for the completion's source.
 */
static fi_addr_t rfi_unexp_src(struct rfi_ep *ep, struct rfi_unexp *u)
{
	if (u->src == FI_ADDR_NOTAVAIL && u->named)
		u->src = rfi_av_find(ep->av, &u->name);
	return u->src;
}

/* An eager message of channel @c: matched, or kept for a receive to come. */
static void rfi_rx_eager(struct rfi_ep *ep, const struct rfi_chan *c,
			 const struct rfi_hdr *hdr, const void *payload,
			 fi_addr_t src)
{
	struct rfi_op *op = rfi_take_posted(ep, hdr, src);
	struct rfi_unexp *u;

	if (op) {
		rfi_deliver(ep, op, hdr, payload, src,
			    c->named ? &c->name : NULL);
		return;
	}
	u = calloc(1, sizeof(*u));
	if (u)
		u->buf = malloc(hdr->len ? hdr->len : 1);
	if (!u || !u->buf) {
		RFI_WARN("a message dropped: no memory for it\n");
		free(u);
		return;
	}
	u->hdr = *hdr;
	rfi_unexp_from(u, c, src);
	memcpy(u->buf, payload, hdr->len);
	u->arrived = true;
	rfi_unexp_add(ep, u);
}

/*
 * The rendezvous payload @msg of header @hdr: held unanswered at the
 * sender (rfi_chan.held) until a receive takes it, which may be one
 * posted already. rfi_held_answer() reads it straight into that
 * receive's buffer when it is one piece with room, else into memory of
 * the provider's, and retries from progress while the send queue is
 * full. Returns 1 (its release waits for its answer), 0 (it was
 * discarded), or -EAGAIN to be tried again (nothing changed).
 */
static int rfi_rx_rndv(struct rfi_ep *ep, const struct rfi_hdr *hdr,
		       const struct rmsg_msg *msg, fi_addr_t src)
{
	struct rfi_chan *c = &ep->chans[msg->channel];
	struct rfi_unexp *u;
	struct rfi_op *op;

	/* Answers go in the channel's order: one held before goes first. */
	if (c->held && rfi_held_bounce(ep, msg->channel) == -EAGAIN)
		return -EAGAIN;
	u = calloc(1, sizeof(*u));
	if (!u) {
		op = rfi_take_posted(ep, hdr, src);
		if (op) {
			rfi_complete(ep, op, 0, hdr->tag, hdr->data, 0, src,
				     FI_ENOMEM, 0);
			rfi_op_free(ep, op);
		}
		return 0;	/* released, so discarded */
	}
	u->hdr = *hdr;
	rfi_unexp_from(u, c, src);
	u->held = true;
	u->chan = msg->channel;
	c->held = u;
	c->held_msg = *msg;
	c->release_due = false;
	op = rfi_take_posted(ep, hdr, src);
	if (!op) {
		/* Its bytes wait at the sender for the receive to come. */
		rfi_unexp_add(ep, u);
		return 1;
	}
	rfi_held_take(ep, msg->channel, op);
	return 1;
}

/*
 * Channel @id, which a peer opened, has a name now that is in the AV:
 * which channel sends to that peer take from now on.
 */
static void rfi_chan_attach(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = &ep->chans[id];
	struct rfi_peer *peer = rfi_peer(ep, c->src);

	if (!peer || peer->chan == (int)id)
		return;
	/*
	 * Ours still connecting: nothing has gone on it (its hello goes when
	 * it opens), so sends take the peer's channel instead and ours is
	 * closed: the two endpoints share one channel. At most one side
	 * does so: it gives up only on the other's hello, and the side that
	 * gives up never sends its own. When ours carried messages already,
	 * see below.
	 */
	if (peer->chan >= 0 && peer->ours && !peer->open) {
		uint32_t old = (uint32_t)peer->chan;

		if (rmsg_chan_close(ep->rep, old, 0))
			return;
		RFI_DBG("channel %u: given up for the peer's %u\n", old, id);
		/*
		 * Its CONNECTED or CLOSED, still to come, finds no peer. The
		 * peer lets go of it first, so that rfi_chan_gone() leaves the
		 * peer's queued sends for the channel taken below instead of
		 * failing them; the held hello is then ours to cancel.
		 */
		peer->chan = -1;
		rfi_greet_cancel(ep, peer);
		rfi_chan_gone(ep, old, 0);
		ep->chans_given_up++;
	}
	/*
	 * Ours open and greeted too: both endpoints sent on their own. The
	 * one of the greater name moves its sends to the other's channel
	 * (rfi_move_last(), rfi_rx_moved()), so that the two share one
	 * whoever dialled first; the other keeps its own and reads the
	 * moving one's old channel up to its LAST.
	 */
	if (peer->chan >= 0 && peer->ours && peer->open &&
	    peer->move_to < 0 &&
	    rfi_name_cmp(&ep->name, &c->name) > 0) {
		RFI_DBG("channel %d: sends move to the peer's %u\n",
			peer->chan, id);
		peer->move_to = (int)id;
		peer->last_sent = false;
		rfi_peer_flush(ep, peer);
		return;
	}
	/* No channel of its own to that peer (now): sends take this one. */
	if (peer->chan < 0) {
		peer->chan = id;
		peer->ours = false;
		rfi_peer_open(ep, peer);
		rfi_peer_flush(ep, peer);
	}
}

/*
 * A LAST on channel @id, which the peer opened: everything it sent on it
 * came before, and was taken. Tell it on our channel to it that its
 * sends may take that one now. Returns 0, or -EAGAIN (no room to say so:
 * the LAST is taken again later).
 */
static int rfi_rx_last(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = rfi_chan(ep, id);
	struct rfi_peer *peer;
	int ret;

	if (!c->named || c->src == FI_ADDR_NOTAVAIL)
		return 0;
	peer = rfi_peer(ep, c->src);
	if (!peer || peer->chan < 0 || peer->chan == (int)id || !peer->open)
		return 0;
	ret = rfi_ctl(ep, (uint32_t)peer->chan, RFI_MOVED);
	return ret == -EAGAIN ? -EAGAIN : 0;
}

/*
 * The peer read our LAST, and everything before it, and says so on its
 * channel @id: our sends take that one from now on, and ours closes (what
 * was sent on it completes first).
 */
static void rfi_rx_moved(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = rfi_chan(ep, id);
	struct rfi_peer *peer;
	uint32_t old;

	if (!c->named || c->src == FI_ADDR_NOTAVAIL)
		return;
	peer = rfi_peer(ep, c->src);
	if (!peer || peer->move_to != (int)id || !peer->last_sent)
		return;
	old = (uint32_t)peer->chan;
	RFI_DBG("channel %u: moved to the peer's %u\n", old, id);
	peer->chan = (int)id;
	peer->ours = false;
	peer->move_to = -1;
	peer->last_sent = false;
	rfi_peer_open(ep, peer);
	/* Its CLOSED, still to come, finds no peer on it. */
	rmsg_chan_close(ep->rep, old, 0);
	ep->chans_given_up++;
	rfi_peer_flush(ep, peer);
}

/* The first message of a channel the peer opened: the peer's name. */
static void rfi_rx_hello(struct rfi_ep *ep, uint32_t id,
			 const struct rfi_hdr *hdr, const void *payload)
{
	struct rfi_chan *c = rfi_chan(ep, id);

	if (!c || hdr->len != sizeof(struct sockaddr_in))
		return;
	memcpy(&c->name, payload, sizeof(c->name));
	c->named = true;
	c->src = rfi_av_find(ep->av, &c->name);
	c->src_gen = ep->av ? ep->av->gen : 0;
	if (c->src != FI_ADDR_NOTAVAIL)
		rfi_chan_attach(ep, id);
}

/*
 * A named channel's source, again if the AV changed since it was looked
 * up: FI_ADDR_NOTAVAIL once its entry is removed, the entry again once
 * it is inserted again (it keeps its index, struct rfi_av), and the new
 * entry of a peer that was not in the AV when its hello came, whose
 * channel then becomes the one sends to it take (a server that inserts a
 * client it heard from, FI_SOURCE, answers it on the channel the client
 * opened rather than a second one).
 */
static void rfi_chan_resolve(struct rfi_ep *ep, uint32_t id)
{
	struct rfi_chan *c = &ep->chans[id];
	fi_addr_t was = c->src;

	if (!c->used || !c->named || !ep->av || c->src_gen == ep->av->gen)
		return;
	c->src_gen = ep->av->gen;
	c->src = rfi_av_find(ep->av, &c->name);
	if (c->src != FI_ADDR_NOTAVAIL && c->src != was)
		rfi_chan_attach(ep, id);
}

/*
 * Take message @msg of its channel. Returns 0, or -EAGAIN when it could
 * not be taken now (the send queue is full, or no memory for the
 * channel's state), having changed nothing: the caller puts it back.
 */
static int rfi_rx_msg(struct rfi_ep *ep, const struct rmsg_msg *msg)
{
	struct rfi_chan *c = rfi_chan(ep, msg->channel);
	struct rfi_hdr hdr;
	fi_addr_t src;
	int ret;

	if (!c)
		return -EAGAIN;
	rfi_release_flush(ep);
	/*
	 * Connected: what comes on the channel after this side shut it
	 * down has no receive to go to (they were cancelled).
	 */
	if (ep->connected && ep->peers[0].chan != (int)msg->channel) {
		rmsg_msg_release(ep->rep, msg);
		return 0;
	}
	rfi_chan_resolve(ep, msg->channel);
	src = c->named ? c->src : FI_ADDR_NOTAVAIL;
	if (c->has_pending) {
		if (msg->kind != RMSG_MSG_RNDV || msg->len != c->pending.len) {
			RFI_WARN("channel %u: no payload after its header\n",
				 msg->channel);
			c->has_pending = false;
			rfi_release(ep, msg);
			return 0;
		}
		ret = rfi_rx_rndv(ep, &c->pending, msg, src);
		if (ret == -EAGAIN)
			return -EAGAIN;
		c->has_pending = false;
		if (!ret)
			rfi_release(ep, msg);
		return 0;
	}
	if (msg->kind != RMSG_MSG_EAGER || msg->len < sizeof(hdr)) {
		/* Not ours: a peer that speaks something else. */
		rfi_release(ep, msg);
		return 0;
	}
	memcpy(&hdr, msg->data, sizeof(hdr));
	if (hdr.kind == RFI_LAST) {
		if (rfi_rx_last(ep, msg->channel))
			return -EAGAIN;
	} else if (hdr.kind == RFI_MOVED) {
		rfi_rx_moved(ep, msg->channel);
	} else if (hdr.kind == RFI_HELLO) {
		rfi_rx_hello(ep, msg->channel, &hdr,
			     (const char *)msg->data + sizeof(hdr));
	} else if (hdr.flags & RFI_F_RNDV) {
		c->pending = hdr;
		c->has_pending = true;
	} else if (sizeof(hdr) + hdr.len <= msg->len &&
		   (hdr.kind == RFI_MSG || hdr.kind == RFI_TAGGED)) {
		rfi_rx_eager(ep, c, &hdr,
			     (const char *)msg->data + sizeof(hdr), src);
	}
	ep->release_next = *msg;
	ep->release_next_due = true;
	return 0;
}

/*
 * Take the messages that arrived, in each channel's order: of every
 * channel, or of channel *@only. A channel that closed has its messages
 * taken before the close is acted on, so that a receive one of them
 * completes does not fail with the channel; its id must not have gone to
 * a new channel yet (librmsg dropped the rest for that one's open event).
 *
 * A message that cannot be taken now goes back to librmsg
 * (rmsg_msg_unpeek()), which gives it again, before its channel's later
 * messages, at the next progress; no other channel waits for it there.
 * Progress stops at it this time: what stalled it (a full send queue)
 * holds for this pass.
 */
static void rfi_rx_progress(struct rfi_ep *ep, const uint32_t *only)
{
	struct rmsg_msg msg;

	while (!(only ? rmsg_msg_peek(ep->rep, *only, &msg) :
			rmsg_msg_peek_any(ep->rep, &msg))) {
		if (rfi_rx_msg(ep, &msg)) {
			rmsg_msg_unpeek(ep->rep, &msg);
			return;
		}
	}
}

/*
 * Before this endpoint greets a channel of its own that just opened: the
 * messages of the channels the peers opened and have not named yet. A
 * peer's hello waiting there lets rfi_rx_hello() give ours up, unused,
 * where taking the events first would keep two channels with that peer
 * whenever both connects completed before this endpoint looked.
 */
static void rfi_rx_greetings(struct rfi_ep *ep)
{
	uint32_t id;

	for (id = 0; id < ep->nchans; id++)
		if (rfi_chan_unnamed(ep, id))
			rfi_rx_progress(ep, &id);
}

/* librmsg finished a send or a rendezvous receive of the provider's. */
static void rfi_op_done(struct rfi_ep *ep, const struct rmsg_event *ev)
{
	uint64_t idx = RFI_UD_IDX(ev->user_data);
	struct rfi_unexp *u;
	struct rfi_op *op;

	if (RFI_UD_KIND(ev->user_data) == RFI_UD_PEER)
		return;		/* a hello */
	if (idx >= ep->nslots || ep->slots[idx].kind == RFI_SLOT_FREE)
		return;
	if (ep->slots[idx].kind == RFI_SLOT_EARLY) {
		u = ep->slots[idx].early;
		rfi_slot_put(ep, idx);
		u->arrived = true;
		if (ev->res && !u->discarded) {
			/* The receive that takes it fails: no bytes came. */
			free(u->buf);
			u->buf = NULL;
			rfi_unexp_lost(ep, u, ev->res);
			return;
		}
		if (u->waiting || u->discarded) {
			if (u->waiting)
				rfi_deliver(ep, u->waiting, &u->hdr, u->buf,
					    u->src, u->named ? &u->name : NULL);
			free(u->buf);
			free(u);
		}
		return;
	}
	op = ep->slots[idx].op;
	if (RFI_UD_KIND(ev->user_data) == RFI_UD_RECV) {
		rfi_slot_put(ep, idx);
		if (ev->res) {
			op->prov_err = -ev->res;
			rfi_complete(ep, op, 0, op->hdr.tag, op->hdr.data, 0,
				     op->addr, FI_EIO, 0);
		} else {
			rfi_complete(ep, op, op->hdr.len, op->hdr.tag,
				     op->hdr.data, rfi_rx_flags(&op->hdr),
				     op->addr, 0, 0);
		}
		rfi_op_free(ep, op);
		return;
	}
	/*
	 * A send: it ends with the completion of the last of its parts.
	 * -ECANCELED: the receiver discarded it unread (FI_DISCARD of a
	 * message held at the sender), as it may: delivered, as far as the
	 * sender is concerned.
	 */
	op->done++;
	if (ev->res && ev->res != -ECANCELED && !op->err) {
		RFI_DBG("channel %u: a send failed (%d)\n", ev->channel,
			ev->res);
		op->err = FI_EIO;
		op->prov_err = -ev->res;
	}
	if (op->done < op->sent || op->queued)
		return;
	rfi_send_end(ep, op);
}

/*
 * The channel from @src ended with an error: what it sent before is
 * taken, and nothing more will come from it. The posted receives
 * directed to @src end with FI_EIO, and so do those from any source when
 * the channel broke (@any: its repair gave up, its device went) rather
 * than its peer closing its endpoint or exiting (ECONNRESET), so that a
 * program waiting for a message learns of the failure instead of waiting
 * for ever: an MPI job then aborts, as it does over any transport that
 * loses a peer. A peer that leaves does not fail another's receives.
 * @err: their completions' error, FI_EIO but for a connected endpoint;
 * @why: the errno behind it (negative, or 0 for @err's own), their
 * prov_errno.
 */
static void rfi_fail_recvs(struct rfi_ep *ep, fi_addr_t src, bool any,
			   int err, int why)
{
	struct rfi_op *op, *next;
	int q;

	for (q = 0; q < 2; q++) {
		for (op = TAILQ_FIRST(&ep->posted[q]); op; op = next) {
			next = TAILQ_NEXT(op, link);
			/* FI_ADDR_UNSPEC is FI_ADDR_NOTAVAIL: @src unnamed. */
			if (op->addr == FI_ADDR_UNSPEC ? !any : op->addr != src)
				continue;
			TAILQ_REMOVE(&ep->posted[q], op, link);
			op->prov_err = -why;
			rfi_complete(ep, op, 0, op->tag, 0, 0, FI_ADDR_NOTAVAIL,
				     err, 0);
			rfi_op_free(ep, op);
		}
	}
}

/*
 * A channel ended: its peer's waiting sends fail; the next one reopens.
 * One that failed once open (@res, a negative errno: its repair gave up,
 * its peer is gone) also fails receives its messages could have
 * completed (rfi_fail_recvs()); a connect that did not succeed (@res 0
 * here), or a channel either side closed in order, does not.
 */
static void rfi_chan_gone(struct rfi_ep *ep, uint32_t id, int res)
{
	fi_addr_t src = FI_ADDR_NOTAVAIL;
	bool failed = res < 0;
	struct rfi_op *op;
	size_t i;

	rfi_release_flush(ep);
	if (failed && id < ep->nchans && ep->chans[id].named)
		src = ep->chans[id].src;

	for (i = 0; i < ep->npeers; i++) {
		struct rfi_peer *peer = &ep->peers[i];

		/* The channel a move went to: the sends stay where they were. */
		if (peer->move_to == (int)id) {
			peer->move_to = -1;
			peer->open = peer->open || peer->last_sent;
			peer->last_sent = false;
			rfi_peer_flush(ep, peer);
		}
		if (peer->chan != (int)id)
			continue;
		/* The channel a move left: the sends go on the other now. */
		if (peer->move_to >= 0) {
			peer->chan = peer->move_to;
			peer->ours = false;
			peer->move_to = -1;
			peer->last_sent = false;
			rfi_peer_open(ep, peer);
			rfi_peer_flush(ep, peer);
			continue;
		}
		RFI_DBG("channel %u: ended (%d), the sends queued fail\n", id,
			res);
		peer->chan = -1;
		peer->open = false;
		rfi_greet_cancel(ep, peer);
		while ((op = peer->queue)) {
			peer->queue = op->next;
			op->next = NULL;
			rfi_send_fail(ep, op, FI_EIO, failed ? res : -EIO);
		}
		peer->queue_tail = NULL;
		if (failed)
			src = i;
	}
	if (id < ep->nchans && ep->chans[id].held) {
		struct rfi_unexp *u = ep->chans[id].held;

		rfi_held_done(ep, id);
		rfi_unexp_lost(ep, u, res);
	}
	if (id < ep->nchans)
		memset(&ep->chans[id], 0, sizeof(ep->chans[id]));
	if (failed)
		rfi_fail_recvs(ep, src, res != -ECONNRESET, FI_EIO, res);
}

/* How long an endpoint holds its hello back for the peer's. */
#define RFI_GREET_WAIT_NS	(100 * 1000 * 1000ULL)

static uint64_t rfi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Whether a channel a peer opened to us has not said whose it is yet. */
static bool rfi_unnamed_accepted(const struct rfi_ep *ep)
{
	uint32_t id;

	for (id = 0; id < ep->nchans; id++)
		if (rfi_chan_unnamed(ep, id))
			return true;
	return false;
}

/* Our channel to @peer is open: greet it, then what waited for it goes. */
static void rfi_greet(struct rfi_ep *ep, struct rfi_peer *peer)
{
	uint32_t id = (uint32_t)peer->chan;
	int ret;

	/* The hello first: nothing of ours before it. */
	ret = rfi_hello(ep, peer);
	if (ret) {
		RFI_DBG("channel %u: hello refused (%d): closed\n", id, ret);
		rmsg_chan_close(ep->rep, id, 0);
		rfi_chan_gone(ep, id, 0);
		return;
	}
	rfi_peer_open(ep, peer);
	rfi_peer_flush(ep, peer);
}

/*
 * Our channel @id to @peer just opened, and some peer's channel to us
 * has not said whose it is: the two endpoints may have opened one to the
 * other at once. Of two such endpoints the one of the greater name holds
 * its hello back, for RFI_GREET_WAIT_NS at most: if the peer's hello comes
 * meanwhile, rfi_rx_hello() gives ours up unused and the two share the
 * peer's channel. The one of the smaller name greets at once, so one of
 * the two always does, and neither waits for the other.
 */
static bool rfi_greet_later(struct rfi_ep *ep, struct rfi_peer *peer,
			    uint32_t id)
{
	if (id >= ep->nchans || !ep->chans[id].named ||
	    rfi_name_cmp(&ep->name, &ep->chans[id].name) <= 0 ||
	    !rfi_unnamed_accepted(ep))
		return false;
	peer->greet_later = true;
	peer->greet_at = rfi_now_ns() + RFI_GREET_WAIT_NS;
	ep->greets_due++;
	return true;
}

/* Greet the channels held back whose wait is over, or pointless now. */
static void rfi_greet_due(struct rfi_ep *ep)
{
	bool unnamed = rfi_unnamed_accepted(ep);
	uint64_t now = rfi_now_ns();
	size_t i;

	for (i = 0; i < ep->npeers && ep->greets_due; i++) {
		struct rfi_peer *peer = &ep->peers[i];

		if (!peer->greet_later || (unnamed && now < peer->greet_at))
			continue;
		peer->greet_later = false;
		ep->greets_due--;
		rfi_greet(ep, peer);
	}
}

/*
 * Whether one of the @n events at @ev opens a new channel of id @id:
 * librmsg dropped what was left of the old one when it took that event.
 */
static bool rfi_reopened(const struct rmsg_event *ev, int n, uint32_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ev[i].channel == id && !ev[i].res &&
		    (ev[i].kind == RMSG_CQE_CONNECTED ||
		     ev[i].kind == RMSG_CQE_ACCEPTED))
			return true;
	return false;
}

/* A channel event of an RDM endpoint's; @rest: the @nrest after it. */
static void rfi_rdm_event(struct rfi_ep *ep, const struct rmsg_event *ev,
			  const struct rmsg_event *rest, int nrest)
{
	struct rfi_peer *peer;

	switch (ev->kind) {
	case RMSG_CQE_CONNECTED:
		if (rfi_event_stale(ep, ev))
			break;
		peer = rfi_peer(ep, RFI_UD_IDX(ev->user_data));
		if (!peer || peer->chan != (int)ev->channel)
			break;
		if (ev->res) {
			rfi_chan_gone(ep, ev->channel, 0);
			break;
		}
		/* rfi_peer() may have moved the peers meanwhile. */
		rfi_rx_greetings(ep);
		peer = rfi_peer(ep, RFI_UD_IDX(ev->user_data));
		if (!peer || peer->chan != (int)ev->channel)
			break;
		if (!rfi_greet_later(ep, peer, ev->channel))
			rfi_greet(ep, peer);
		break;
	case RMSG_CQE_ACCEPTED:
		if (!ev->res)
			rfi_chan_take(ep, ev->channel, ev->user_data, true);
		break;
	case RMSG_CQE_CLOSED:
		if (rfi_event_stale(ep, ev))
			break;
		if (!rfi_reopened(rest, nrest, ev->channel))
			rfi_rx_progress(ep, &ev->channel);
		rfi_chan_gone(ep, ev->channel, ev->res);
		break;
	default:
		break;
	}
}

/*
 * A connected endpoint's channel @id ended: by this side's fi_shutdown()
 * (@res 0, @local), by the peer's, or broken (its repair gave up, the
 * peer's process went: @res a negative errno). Its queued sends fail
 * (rfi_chan_gone()), and so does every posted receive, as no message
 * will come for it any more: FI_ECANCELED for an orderly end, else the
 * errno's code. The peer's end is an FI_SHUTDOWN on the EQ.
 */
static void rfi_msg_ended(struct rfi_ep *ep, uint32_t id, int res,
			  bool local)
{
	if (ep->conn == RFI_CONN_ENDED)
		return;
	rfi_chan_gone(ep, id, res);
	rfi_fail_recvs(ep, FI_ADDR_NOTAVAIL, true,
		       res ? rfi_fi_errno(res) : FI_ECANCELED, res);
	ep->peers[0].chan = -1;
	ep->conn = RFI_CONN_ENDED;
	if (!local)
		rfi_eq_report(ep->eq, FI_SHUTDOWN, &ep->ep.fid, 0, 0);
}

/*
 * A channel event of a connected endpoint's: its connection opened (or
 * failed to: an error entry on the EQ, ECONNREFUSED for a reject), or
 * ended. An event of a channel that is not the endpoint's connection
 * (one it shut down, an earlier channel's of the same id) is stale.
 */
static void rfi_msg_event(struct rfi_ep *ep, const struct rmsg_event *ev,
			  const struct rmsg_event *rest, int nrest)
{
	struct rfi_peer *peer = ep->peers;

	if (rfi_event_stale(ep, ev) || peer->chan != (int)ev->channel)
		return;
	switch (ev->kind) {
	case RMSG_CQE_CONNECTED:
	case RMSG_CQE_ACCEPTED:
		if (ev->res) {
			/* Nothing will come: receives posted early fail. */
			rfi_chan_gone(ep, ev->channel, 0);
			rfi_fail_recvs(ep, FI_ADDR_NOTAVAIL, true,
				       rfi_fi_errno(ev->res), ev->res);
			peer->chan = -1;
			ep->conn = RFI_CONN_ENDED;
			rfi_eq_report(ep->eq, FI_CONNECTED, &ep->ep.fid,
				      rfi_fi_errno(ev->res), -ev->res);
			break;
		}
		rfi_peer_open(ep, peer);
		ep->conn = RFI_CONN_OPEN;
		rfi_eq_report(ep->eq, FI_CONNECTED, &ep->ep.fid, 0, 0);
		rfi_peer_flush(ep, peer);
		break;
	case RMSG_CQE_CLOSED:
		/* What the peer sent before the end is taken first. */
		if (!rfi_reopened(rest, nrest, ev->channel))
			rfi_rx_progress(ep, &ev->channel);
		rfi_msg_ended(ep, ev->channel, ev->res, false);
		break;
	default:
		break;
	}
}

/* One librmsg event of @ep's; @rest: the @nrest after it in its batch. */
static void rfi_ep_event(struct rfi_ep *ep, const struct rmsg_event *ev,
			 const struct rmsg_event *rest, int nrest)
{
	if (ev->kind != RMSG_CQE_OP)
		RFI_DBG("channel %u: event %u (%d), user_data %#llx\n",
			ev->channel, ev->kind, ev->res,
			(unsigned long long)ev->user_data);
	if (ev->kind == RMSG_CQE_OP)
		rfi_op_done(ep, ev);
	else if (ep->connected)
		rfi_msg_event(ep, ev, rest, nrest);
	else
		rfi_rdm_event(ep, ev, rest, nrest);
}

/* What progress does after the events and messages were taken. */
static void rfi_ep_progress_tail(struct rfi_ep *ep)
{
	struct rfi_peer *peer;
	size_t p;

	if (ep->greets_due)
		rfi_greet_due(ep);
	if (ep->held_retry)
		rfi_held_retry(ep);
	/* A peer still refused goes back on the list as it is flushed. */
	p = ep->backlog;
	ep->backlog = RFI_NO_PEER;
	while (p != RFI_NO_PEER) {
		peer = &ep->peers[p];
		p = peer->backlog_next;
		peer->in_backlog = false;
		rfi_peer_flush(ep, peer);
	}
}

void rfi_ep_progress(struct rfi_ep *ep)
{
	struct rmsg_event ev[32];
	int n, i;

	if (!ep->enabled)
		return;
	/* Accepted: the listener's events and messages, for every one. */
	if (ep->pep) {
		rfi_pep_progress(ep->pep);
		return;
	}
	if (ep->dump_gen != rfi_dump_asked())
		rfi_ep_dump(ep);
	rfi_release_flush(ep);
	while ((n = rmsg_ep_progress(ep->rep, ev, 32)) > 0) {
		for (i = 0; i < n; i++)
			rfi_ep_event(ep, &ev[i], ev + i + 1, n - i - 1);
		if (n < 32)
			break;
	}
	rfi_rx_progress(ep, NULL);
	rfi_ep_progress_tail(ep);
}

/* The endpoint accepted on channel @chan of @pep's listener, or NULL. */
static struct rfi_ep *rfi_pep_owner(struct rfi_pep *pep, uint32_t chan)
{
	return chan < pep->nowners ? pep->owners[chan] : NULL;
}

/**
 * rfi_pep_progress() - progress a passive endpoint's librmsg endpoint
 * @pep: the passive endpoint, listening, under the fabric's lock
 *
 * Its events and messages are of the channels it accepted, each of one
 * endpoint (@pep->owners by channel id), and its connection requests:
 * each goes where it belongs, in the order librmsg gives them, so that
 * each channel's keep theirs. A message of a channel whose endpoint
 * closed is released unread; an event of one, dropped.
 */
void rfi_pep_progress(struct rfi_pep *pep)
{
	struct rmsg_event ev[32];
	struct rmsg_msg msg;
	struct rfi_ep *owner;
	uint32_t id;
	int n, i;

	if (!pep->rep)
		return;
	for (id = 0; id < pep->nowners; id++)
		if (pep->owners[id])
			rfi_release_flush(pep->owners[id]);
	while ((n = rmsg_ep_progress(pep->rep, ev, 32)) > 0) {
		for (i = 0; i < n; i++) {
			if (ev[i].kind == RMSG_CQE_REQUEST) {
				rfi_pep_request(pep, &ev[i]);
				continue;
			}
			owner = rfi_pep_owner(pep, ev[i].channel);
			if (owner)
				rfi_ep_event(owner, &ev[i], ev + i + 1,
					     n - i - 1);
		}
		if (n < 32)
			break;
	}
	while (!rmsg_msg_peek_any(pep->rep, &msg)) {
		owner = rfi_pep_owner(pep, msg.channel);
		if (!owner) {
			rmsg_msg_release(pep->rep, &msg);
			continue;
		}
		if (rfi_rx_msg(owner, &msg)) {
			rmsg_msg_unpeek(pep->rep, &msg);
			break;
		}
	}
	for (id = 0; id < pep->nowners; id++)
		if (pep->owners[id])
			rfi_ep_progress_tail(pep->owners[id]);
}

/*
 * Channel @chan of @pep's listener is not its endpoint's any more: a new
 * request took its id (the kernel frees an id before it reports the
 * end), or the endpoint closes. The endpoint's connection ends here.
 */
void rfi_pep_detach(struct rfi_pep *pep, uint32_t chan)
{
	struct rfi_ep *ep = rfi_pep_owner(pep, chan);

	if (!ep)
		return;
	pep->owners[chan] = NULL;
	if (ep->peers[0].chan == (int)chan)
		rfi_msg_ended(ep, chan, -ECONNRESET, false);
}

/*
 * Receive @op takes the held message of @u (off its queue already): with
 * FI_DISCARD it is released unanswered (its sender is told); else its
 * bytes are read, straight into @op's buffer when they can be.
 */
static void rfi_recv_held(struct rfi_ep *ep, struct rfi_op *op,
			  struct rfi_unexp *u, uint64_t flags)
{
	uint32_t id = u->chan;

	if (flags & FI_DISCARD) {
		rfi_held_done(ep, id);
		rfi_complete(ep, op, 0, u->hdr.tag, u->hdr.data, 0, u->src, 0,
			     0);
		rfi_op_free(ep, op);
		free(u);
		return;
	}
	rfi_held_take(ep, id, op);
}

/*
 * FI_PEEK | FI_DISCARD found @u: it goes, unread; a rendezvous one held
 * at its sender is released unanswered (its send completes), one whose
 * bytes are still coming is freed when they are in.
 */
static void rfi_unexp_discard(struct rfi_ep *ep, struct rfi_unexp *u)
{
	TAILQ_REMOVE(&ep->unexp[u->hdr.kind == RFI_TAGGED], u, link);
	u->listed = false;
	if (u->held) {
		rfi_held_done(ep, u->chan);
		free(u);
		return;
	}
	if (!u->arrived && !u->lost) {
		u->discarded = true;
		return;
	}
	free(u->buf);
	free(u);
}

ssize_t rfi_recv(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		 fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
		 void *context)
{
	struct rfi_unexp_queue *unexp = &ep->unexp[!!(flags & FI_TAGGED)];
	struct rfi_unexp *u;
	struct rfi_op *op;
	struct rfi_hdr probe;
	bool claimed;

	if (count > RFI_IOV_MAX)
		return -FI_EINVAL;
	/* Not offered (no FI_MULTI_RECV capability): refused, not ignored. */
	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	rfi_lock(ep->dom);
	op = rfi_op_get(ep);
	if (!op) {
		rfi_unlock(ep->dom);
		return -FI_ENOMEM;
	}
	op->context = context;
	op->flags = FI_RECV | (flags & FI_TAGGED ? FI_TAGGED : FI_MSG);
	op->complete = !(ep->rx_flags & FI_SELECTIVE_COMPLETION) ||
		       (flags & FI_COMPLETION);
	memcpy(op->iov, iov, count * sizeof(*iov));
	op->iov_count = count;
	op->len = rfi_iov_len(iov, count);
	op->addr = (ep->caps & FI_DIRECTED_RECV) ? src : FI_ADDR_UNSPEC;
	op->tag = tag;
	op->ignore = ignore;
	memset(&probe, 0, sizeof(probe));
	probe.kind = flags & FI_TAGGED ? RFI_TAGGED : RFI_MSG;

	/*
	 * A peek looks at what has arrived, so it progresses first. A
	 * receive need not: a message still in its channel's block is
	 * matched against the posted receives, this one included, when
	 * progress takes it, in the order it came.
	 */
	if (flags & FI_PEEK)
		rfi_ep_progress(ep);
	/*
	 * FI_CLAIM alone takes the message an FI_PEEK | FI_CLAIM with the
	 * same context claimed; anything else looks for one unclaimed.
	 */
	claimed = (flags & (FI_CLAIM | FI_PEEK)) == FI_CLAIM;
	TAILQ_FOREACH(u, unexp, link) {
		probe.tag = u->hdr.tag;
		if (claimed ? u->claimed && u->claim_ctx == context :
		    !u->claimed && !u->waiting &&
		    rfi_matches(ep, op, &probe, rfi_unexp_src(ep, u)))
			break;
	}
	if (flags & FI_PEEK) {
		if (!u) {
			op->complete = true;
			rfi_complete(ep, op, 0, tag, 0, 0, FI_ADDR_NOTAVAIL,
				     FI_ENOMSG, 0);
		} else {
			if (flags & FI_CLAIM) {
				u->claimed = true;
				u->claim_ctx = context;
			}
			op->complete = true;
			rfi_op_from(op, u->named ? &u->name : NULL);
			rfi_complete(ep, op, u->hdr.len, u->hdr.tag,
				     u->hdr.data, rfi_rx_flags(&u->hdr),
				     u->src, 0, 0);
			if ((flags & (FI_DISCARD | FI_CLAIM)) == FI_DISCARD)
				rfi_unexp_discard(ep, u);
		}
		rfi_op_free(ep, op);
		rfi_unlock(ep->dom);
		return 0;
	}
	if (u) {
		TAILQ_REMOVE(unexp, u, link);
		u->listed = false;
		if (u->held) {
			rfi_recv_held(ep, op, u, flags);
			rfi_unlock(ep->dom);
			return 0;
		}
		if (u->lost) {
			op->prov_err = u->lost_errno;
			rfi_complete(ep, op, 0, u->hdr.tag, u->hdr.data, 0,
				     u->src, flags & FI_DISCARD ? 0 : FI_EIO,
				     0);
			rfi_op_free(ep, op);
		} else if (flags & FI_DISCARD) {
			rfi_complete(ep, op, 0, u->hdr.tag, u->hdr.data, 0,
				     u->src, 0, 0);
			rfi_op_free(ep, op);
			if (!u->arrived) {
				/* Its slot frees it when the bytes are in. */
				u->discarded = true;
				rfi_unlock(ep->dom);
				return 0;
			}
		} else if (u->arrived) {
			rfi_deliver(ep, op, &u->hdr, u->buf, u->src,
				    u->named ? &u->name : NULL);
		} else {
			/* Its bytes are still coming: it completes then. */
			u->waiting = op;
			rfi_unlock(ep->dom);
			return 0;
		}
		free(u->buf);
		free(u);
		rfi_unlock(ep->dom);
		return 0;
	}
	if (flags & FI_CLAIM) {
		rfi_op_free(ep, op);
		rfi_unlock(ep->dom);
		return -FI_EINVAL;
	}
	/* Connected, the channel ended: no message will come for it. */
	if (ep->connected && ep->conn == RFI_CONN_ENDED) {
		rfi_op_free(ep, op);
		rfi_unlock(ep->dom);
		return -FI_ENOTCONN;
	}
	TAILQ_INSERT_TAIL(&ep->posted[!!(flags & FI_TAGGED)], op, link);
	rfi_unlock(ep->dom);
	return 0;
}

/* fi_cancel(): a posted receive goes, with an FI_ECANCELED completion. */
static ssize_t rfi_cancel(fid_t fid, void *context)
{
	struct rfi_ep *ep = container_of(fid, struct rfi_ep, ep.fid);
	struct rfi_op *op;
	int q;

	rfi_lock(ep->dom);
	for (q = 0; q < 2; q++)
		TAILQ_FOREACH(op, &ep->posted[q], link)
			if (op->context == context) {
				TAILQ_REMOVE(&ep->posted[q], op, link);
				op->complete = true;
				rfi_complete(ep, op, 0, op->tag, 0, 0,
					     FI_ADDR_NOTAVAIL, FI_ECANCELED,
					     0);
				rfi_op_free(ep, op);
				rfi_unlock(ep->dom);
				return 0;
			}
	rfi_unlock(ep->dom);
	return -FI_ENOENT;
}

/* --- the endpoint object ----------------------------------------------- */

static ssize_t rfi_size_left(struct fid_ep *ep)
{
	return RFI_QUEUE_SIZE;
}

static struct fi_ops_ep rfi_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = rfi_cancel,
	.getopt = rfi_no_getopt,
	.setopt = rfi_no_setopt,
	.tx_ctx = rfi_no_tx_ctx,
	.rx_ctx = rfi_no_rx_ctx,
	.rx_size_left = rfi_size_left,
	.tx_size_left = rfi_size_left,
};

static int rfi_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int rfi_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rfi_ep *ep = container_of(fid, struct rfi_ep, ep.fid);
	size_t len = *addrlen;

	*addrlen = sizeof(ep->name);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (len < sizeof(ep->name))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, sizeof(ep->name));
	return 0;
}

static int rfi_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int rfi_connect(struct fid_ep *ep, const void *addr, const void *param,
		       size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int rfi_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_reject(struct fid_pep *pep, fid_t handle, const void *param,
		      size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int rfi_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm rfi_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rfi_setname,
	.getname = rfi_getname,
	.getpeer = rfi_getpeer,
	.connect = rfi_connect,
	.listen = rfi_listen,
	.accept = rfi_accept,
	.reject = rfi_reject,
	.shutdown = rfi_shutdown,
	.join = rfi_join,
};

static void rfi_msg_release_chan(struct rfi_ep *ep);

static void rfi_cq_unbind(struct rfi_cq *cq, struct rfi_ep *ep)
{
	unsigned int i;

	for (i = 0; cq && i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			return;
		}
}

/*
 * What the kernel counted for @ep, in the log at level info
 * (FI_LOG_LEVEL=info FI_LOG_PROV=rmsg): how many system calls and control
 * messages a program's traffic cost, the first thing to look at when it
 * is slower than it should be.
 */
static void rfi_ep_log_stats(struct rfi_ep *ep)
{
	struct rmsg_ep_stats st;

	if (!fi_log_enabled(&rfi_prov, FI_LOG_INFO, FI_LOG_EP_DATA) ||
	    ioctl(rmsg_ep_fd(ep->rep), RMSG_IOC_EP_STATS, &st))
		return;
	FI_INFO(&rfi_prov, FI_LOG_EP_DATA,
		"endpoint closed: rendezvous receives %llu into the posted buffer, %llu (%llu bytes) through a buffer of the provider's\n",
		(unsigned long long)ep->rndv_direct,
		(unsigned long long)ep->rndv_bounced,
		(unsigned long long)ep->rndv_bounced_bytes);
	FI_INFO(&rfi_prov, FI_LOG_EP_DATA,
		"endpoint closed: channels opened %llu, of which closed for the peer's %llu\n",
		(unsigned long long)ep->chans_opened,
		(unsigned long long)ep->chans_given_up);
	FI_INFO(&rfi_prov, FI_LOG_EP_DATA,
		"endpoint closed: sends %llu (waited %llu), enters %llu, credits out %llu in %llu, wakes out %llu in %llu, signalled writes %llu, inline %llu\n",
		(unsigned long long)st.sends,
		(unsigned long long)st.send_waits,
		(unsigned long long)st.enters,
		(unsigned long long)st.credits_out,
		(unsigned long long)st.credits_in,
		(unsigned long long)st.wakes_out,
		(unsigned long long)st.wakes_in,
		(unsigned long long)st.writes_signalled,
		(unsigned long long)st.writes_inline);
}

static int rfi_ep_close(struct fid *fid)
{
	struct rfi_ep *ep = container_of(fid, struct rfi_ep, ep.fid);
	struct rfi_unexp *u;
	struct rfi_op *op;
	size_t i;
	int q;

	rfi_lock(ep->dom);
	if (ep->enabled) {
		rfi_cq_watch(ep->tx_cq, ep, false);
		if (ep->rx_cq != ep->tx_cq)
			rfi_cq_watch(ep->rx_cq, ep, false);
	}
	rfi_cq_unbind(ep->tx_cq, ep);
	if (ep->rx_cq != ep->tx_cq)
		rfi_cq_unbind(ep->rx_cq, ep);
	if (ep->eq)
		rfi_eq_unbind(ep->eq, &ep->ep.fid);
	if (ep->pep) {
		rfi_msg_release_chan(ep);
	} else {
		if (ep->rep)
			rfi_ep_log_stats(ep);
		/* The kernel keeps what is pinned until its transfer ends. */
		rmsg_ep_close(ep->rep);
	}
	/*
	 * What librmsg was still doing for the endpoint ended with it: free
	 * the ops of the slots (a queued one goes with its queue below). A
	 * message still arriving early keeps its buffer: the kernel may be
	 * writing it until its transfer is torn down, and heap memory freed
	 * under a write would be another allocation's. A close in the middle
	 * of a rendezvous is rare; that leak is the safe side.
	 */
	for (i = 0; i < ep->nslots; i++) {
		if (ep->slots[i].kind == RFI_SLOT_OP &&
		    !ep->slots[i].op->queued) {
			rfi_op_free(ep, ep->slots[i].op);
		} else if (ep->slots[i].kind == RFI_SLOT_EARLY) {
			u = ep->slots[i].early;
			if (u->waiting)
				rfi_op_free(ep, u->waiting);
			u->waiting = NULL;
			if (!u->listed)
				free(u);
			else
				u->buf = NULL;	/* not for the list's free */
		}
	}
	/* A held message a receive waits on is on no list: it goes here. */
	for (i = 0; i < ep->nchans; i++) {
		u = ep->chans[i].held;
		if (u && !u->listed) {
			rfi_op_free(ep, u->waiting);
			free(u);
		}
	}
	for (i = 0; i < ep->npeers; i++)
		while ((op = ep->peers[i].queue)) {
			ep->peers[i].queue = op->next;
			rfi_op_free(ep, op);
		}
	for (q = 0; q < 2; q++) {
		while ((op = TAILQ_FIRST(&ep->posted[q]))) {
			TAILQ_REMOVE(&ep->posted[q], op, link);
			rfi_op_free(ep, op);
		}
	}
	for (q = 0; q < 2; q++) {
		while ((u = TAILQ_FIRST(&ep->unexp[q]))) {
			TAILQ_REMOVE(&ep->unexp[q], u, link);
			if (u->waiting)
				rfi_op_free(ep, u->waiting);
			free(u->buf);
			free(u);
		}
	}
	while ((op = ep->op_cache)) {
		ep->op_cache = op->next;
		free(op);
	}
	if (ep->pep)
		rfi_pep_put(ep->pep);
	rfi_unlock(ep->dom);
	free(ep->slots);
	free(ep->peers);
	free(ep->chans);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int rfi_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct rfi_ep *ep = container_of(fid, struct rfi_ep, ep.fid);
	struct rfi_cq *cq;

	switch (bfid->fclass) {
	case FI_CLASS_AV:
		ep->av = container_of(bfid, struct rfi_av, av.fid);
		return 0;
	case FI_CLASS_EQ:
		/* An RDM endpoint has no connection events: nothing to bind. */
		if (!ep->connected)
			return 0;
		if (ep->eq)
			return -FI_EINVAL;
		ep->eq = container_of(bfid, struct rfi_eq, eq.fid);
		return rfi_eq_bind(ep->eq, &ep->ep.fid);
	case FI_CLASS_CQ:
		cq = container_of(bfid, struct rfi_cq, cq.fid);
		if (!(flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EINVAL;
		rfi_lock(ep->dom);
		if (rfi_cq_bind_ep(cq, ep)) {
			rfi_unlock(ep->dom);
			return -FI_ENOMEM;
		}
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_flags = flags;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_flags = flags;
		}
		rfi_unlock(ep->dom);
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/*
 * The CQs sleep on @ep's librmsg descriptor from now on, and @ep is
 * enabled: the last step of fi_enable().
 */
static int rfi_ep_watch(struct rfi_ep *ep)
{
	int ret = rfi_cq_watch(ep->tx_cq, ep, true);

	if (ret)
		return ret;
	if (ep->rx_cq != ep->tx_cq) {
		ret = rfi_cq_watch(ep->rx_cq, ep, true);
		if (ret) {
			rfi_cq_watch(ep->tx_cq, ep, false);
			return ret;
		}
	}
	ep->enabled = true;
	ep->dump_gen = rfi_dump_asked();
	rfi_dump_init();
	return 0;
}

/*
 * FI_ENABLE of a connected endpoint: one accepted from a passive
 * endpoint uses its librmsg endpoint, which exists since fi_listen();
 * one that connects opens its own, without a listener. Its name is the
 * node's RDMA address (and the listener's port, if accepted).
 */
static int rfi_msg_enable(struct rfi_ep *ep)
{
	int ret;

	if (!ep->tx_cq || !ep->rx_cq)
		return -FI_ENOCQ;
	if (!ep->eq)
		return -FI_ENOEQ;
	ret = rfi_params(&ep->block_size, &ep->rndv_threshold, &ep->summary);
	if (ret)
		return ret;
	if (ep->pep) {
		ep->name = ep->pep->name;
		ep->rep = ep->pep->rep;
		return rfi_ep_watch(ep);
	}
	ret = rfi_local_addr(&ep->name);
	if (ret)
		return ret;
	ep->name.sin_port = 0;
	ret = rmsg_ep_open(&ep->rep, 256, 1024);
	if (ret)
		return ret;
	ret = rfi_ep_watch(ep);
	if (ret) {
		rmsg_ep_close(ep->rep);
		ep->rep = NULL;
	}
	return ret;
}

/**
 * rfi_msg_connect() - fi_connect(): open the endpoint's channel
 * @ep: a connected endpoint of its own librmsg endpoint, enabled
 * @dest: the passive endpoint's name
 *
 * FI_CONNECTED comes on the EQ when the channel is open, or an error
 * entry when it fails (ECONNREFUSED: rejected). Sends posted meanwhile
 * wait in the peer's queue.
 *
 * Return: 0 or a negative libfabric error code.
 */
int rfi_msg_connect(struct rfi_ep *ep, const struct sockaddr_in *dest)
{
	struct rfi_peer *peer = ep->peers;
	uint64_t ud;
	int ch, ret = 0;

	rfi_lock(ep->dom);
	if (!ep->enabled || ep->pep || ep->conn != RFI_CONN_IDLE) {
		ret = ep->conn == RFI_CONN_IDLE ? -FI_EOPBADSTATE :
						  -FI_EISCONN;
		goto out;
	}
	ud = RFI_UD_CONNECT(++ep->connects, 0);
	ch = rmsg_chan_connect(ep->rep, (const struct sockaddr *)dest,
			       sizeof(*dest), ud, ep->block_size);
	if (ch < 0) {
		ret = -rfi_fi_errno(ch);
		goto out;
	}
	if (!rfi_chan_take(ep, ch, ud, false)) {
		rmsg_chan_close(ep->rep, ch, 0);
		ret = -FI_ENOMEM;
		goto out;
	}
	peer->chan = ch;
	peer->ours = true;
	peer->open = false;
	ep->chans_opened++;
	ep->conn = RFI_CONN_OPENING;
out:
	rfi_unlock(ep->dom);
	return ret;
}

/* Room in @pep's owners for channel id @chan. */
static int rfi_pep_owners_grow(struct rfi_pep *pep, uint32_t chan)
{
	struct rfi_ep **grown;
	size_t n;

	if (chan < pep->nowners)
		return 0;
	n = pep->nowners ? pep->nowners : 16;
	while (n <= chan)
		n *= 2;
	grown = realloc(pep->owners, n * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	memset(grown + pep->nowners, 0, (n - pep->nowners) * sizeof(*grown));
	pep->owners = grown;
	pep->nowners = n;
	return 0;
}

/**
 * rfi_msg_accept() - fi_accept(): answer the endpoint's request
 * @ep: an endpoint made from an FI_CONNREQ's info, enabled
 *
 * The channel is the passive endpoint's (struct rfi_pep): from here on
 * its events and messages are routed to @ep. FI_CONNECTED comes on the
 * EQ when it is open.
 *
 * Return: 0 or a negative libfabric error code.
 */
int rfi_msg_accept(struct rfi_ep *ep)
{
	struct rfi_connreq *cr = ep->connreq;
	struct rfi_pep *pep = ep->pep;
	struct rfi_peer *peer = ep->peers;
	uint64_t ud;
	int ret;

	rfi_lock(ep->dom);
	if (!cr || cr->answered || !ep->enabled) {
		ret = cr && !cr->answered ? -FI_EOPBADSTATE : -FI_EISCONN;
		goto out;
	}
	ret = rfi_pep_owners_grow(pep, cr->chan);
	if (ret)
		goto out;
	/* The id of a channel this listener had: that one ended. */
	rfi_pep_detach(pep, cr->chan);
	ud = RFI_UD_CONNECT(++ep->connects, 0);
	if (!rfi_chan_take(ep, cr->chan, ud, false)) {
		ret = -FI_ENOMEM;
		goto out;
	}
	ret = rmsg_chan_accept(pep->rep, cr->chan, ud, 0);
	if (ret) {
		memset(&ep->chans[cr->chan], 0, sizeof(ep->chans[cr->chan]));
		ret = -rfi_fi_errno(ret);
		goto out;
	}
	pep->owners[cr->chan] = ep;
	peer->chan = cr->chan;
	peer->ours = false;
	peer->open = false;
	ep->conn = RFI_CONN_OPENING;
	cr->answered = true;
out:
	rfi_unlock(ep->dom);
	return ret;
}

/**
 * rfi_msg_shutdown() - fi_shutdown(): end the endpoint's connection
 * @ep: a connected endpoint
 *
 * The channel closes after what was sent on it (the peer gets
 * FI_SHUTDOWN once it has read that); the sends still queued here and
 * every posted receive complete now, with errors (rfi_msg_ended()).
 *
 * Return: 0, or -FI_ENOTCONN for an endpoint never connected.
 */
int rfi_msg_shutdown(struct rfi_ep *ep)
{
	int chan, ret = 0;

	rfi_lock(ep->dom);
	chan = ep->peers[0].chan;
	if (ep->conn == RFI_CONN_IDLE) {
		ret = -FI_ENOTCONN;
	} else if (chan >= 0) {
		rmsg_chan_close(ep->rep, (uint32_t)chan, 0);
		rfi_msg_ended(ep, (uint32_t)chan, 0, true);
	}
	rfi_unlock(ep->dom);
	return ret;
}

/*
 * An accepted endpoint closes: its channel, if still open, closes (its
 * peer gets FI_SHUTDOWN), a request it never answered is refused, and
 * the listener forgets it, so that what still comes on the channel is
 * released unread.
 */
static void rfi_msg_release_chan(struct rfi_ep *ep)
{
	struct rfi_pep *pep = ep->pep;
	size_t i;

	if (ep->connreq) {
		if (!ep->connreq->answered)
			rmsg_chan_accept(pep->rep, ep->connreq->chan, 0,
					 RMSG_ACCEPT_REJECT);
		rfi_connreq_free(ep->connreq);
		ep->connreq = NULL;
	}
	if (ep->peers[0].chan >= 0)
		rmsg_chan_close(pep->rep, (uint32_t)ep->peers[0].chan, 0);
	for (i = 0; i < pep->nowners; i++)
		if (pep->owners[i] == ep)
			pep->owners[i] = NULL;
}

/* FI_ENABLE: the librmsg endpoint and its listener; the name is known. */
static int rfi_ep_enable(struct rfi_ep *ep)
{
	const struct sockaddr_in *src;
	socklen_t len = sizeof(ep->name);
	int ret;

	if (ep->enabled)
		return 0;
	if (ep->connected)
		return rfi_msg_enable(ep);
	if (!ep->av)
		return -FI_ENOAV;
	if (!ep->tx_cq || !ep->rx_cq)
		return -FI_ENOCQ;
	ret = rfi_local_addr(&ep->name);
	if (!ret)
		ret = rfi_params(&ep->block_size, &ep->rndv_threshold,
				 &ep->summary);
	if (ret)
		return ret;
	ep->name.sin_port = 0;
	/* fi_getinfo()'s source (FI_SOURCE with node and service). */
	src = ep->info->src_addr;
	if (src && ep->info->src_addrlen >= sizeof(*src) &&
	    src->sin_family == AF_INET) {
		ep->name.sin_port = src->sin_port;
		if (src->sin_addr.s_addr != htonl(INADDR_ANY))
			ep->name.sin_addr = src->sin_addr;
	}
	if (ep->summary) {
		struct rmsg_ep_setup s = {
			.sq_entries = 256,
			.cq_entries = 1024,
			.flags = RMSG_EP_F_SUMMARY,
			.send_area_size = RMSG_LIB_SEND_AREA,
		};

		ret = rmsg_ep_open_setup(&ep->rep, &s);
	} else {
		ret = rmsg_ep_open(&ep->rep, 256, 1024);
	}
	if (ret)
		return ret;
	/*
	 * No rmsg_ep_set_locking(): every call into librmsg is made under
	 * the domain's lock, or the program serializes its calls
	 * (FI_THREAD_DOMAIN), so librmsg's own would be a second mutex
	 * round trip per call that excludes nothing.
	 */
	ret = rmsg_ep_listen(ep->rep, (struct sockaddr *)&ep->name, len, 0,
			     ep->block_size);
	if (ret)
		goto fail_close;
	ret = rfi_ep_watch(ep);
	if (ret)
		goto fail_close;
	return 0;
fail_close:
	/* Nothing was sent or received yet: a later fi_enable() starts anew. */
	rmsg_ep_close(ep->rep);
	ep->rep = NULL;
	return ret;
}

static int rfi_ep_control(struct fid *fid, int command, void *arg)
{
	struct rfi_ep *ep = container_of(fid, struct rfi_ep, ep.fid);
	int ret;

	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	rfi_lock(ep->dom);
	ret = rfi_ep_enable(ep);
	rfi_unlock(ep->dom);
	return ret;
}

static struct fi_ops rfi_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rfi_ep_close,
	.bind = rfi_ep_bind,
	.control = rfi_ep_control,
	.ops_open = rfi_no_ops_open,
	.tostr = rfi_no_tostr,
	.ops_set = rfi_no_ops_set,
};

/*
 * What a connected endpoint has that an RDM one has not: its one peer,
 * and, made from an FI_CONNREQ's info, the request it answers and a
 * reference to the passive endpoint whose channel it will use.
 */
static int rfi_msg_endpoint(struct rfi_ep *ep, const struct fi_info *info)
{
	struct rfi_connreq *cr = NULL;

	if (info->handle && info->handle->fclass == FI_CLASS_CONNREQ)
		cr = container_of(info->handle, struct rfi_connreq, fid);
	if (cr && cr->ep)
		return -FI_EBUSY;	/* a second endpoint for one request */
	/* Its info's handle is the request's, not the endpoint's to keep. */
	ep->info->handle = NULL;
	ep->peers = calloc(1, sizeof(*ep->peers));
	if (!ep->peers)
		return -FI_ENOMEM;
	ep->peers[0].chan = -1;
	ep->peers[0].move_to = -1;
	ep->npeers = 1;
	ep->connected = true;
	ep->conn = RFI_CONN_IDLE;
	if (cr) {
		rfi_fab_lock(cr->pep->fab);
		cr->ep = ep;
		ep->connreq = cr;
		ep->pep = cr->pep;
		ep->pep->refs++;
		rfi_fab_unlock(cr->pep->fab);
	}
	return 0;
}

int rfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **fep, void *context)
{
	struct rfi_domain *dom = container_of(domain, struct rfi_domain,
					      domain);
	struct rfi_ep *ep;
	int i;

	if (!info || !info->ep_attr || (info->ep_attr->type != FI_EP_RDM &&
					info->ep_attr->type != FI_EP_MSG))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	if (info->ep_attr->type == FI_EP_MSG) {
		int ret = rfi_msg_endpoint(ep, info);

		if (ret) {
			free(ep->peers);
			fi_freeinfo(ep->info);
			free(ep);
			return ret;
		}
	}
	ep->dom = dom;
	ep->backlog = RFI_NO_PEER;
	for (i = 0; i < 2; i++) {
		TAILQ_INIT(&ep->posted[i]);
		TAILQ_INIT(&ep->unexp[i]);
	}
	ep->caps = info->caps;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &rfi_ep_fi_ops;
	ep->ep.ops = &rfi_ep_ops;
	ep->ep.cm = ep->connected ? &rfi_msg_cm_ops : &rfi_cm_ops;
	ep->ep.msg = &rfi_msg_ops;
	ep->ep.tagged = &rfi_tagged_ops;
	ep->ep.rma = &rfi_rma_ops;
	ep->ep.atomic = &rfi_atomic_ops;
	ep->ep.collective = &rfi_collective_ops;
	*fep = &ep->ep;
	return 0;
}
