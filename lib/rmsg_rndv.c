// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: rendezvous messages (Documentation/rendezvous.rst,
 * Documentation/messages.rst).
 *
 * Sending: rmsg_msg_send_zc() names the program's bytes in a region it
 * registered (the library keeps a table of them to find the handle) and
 * submits RMSG_OP_SEND_RNDV; rmsg_msg_send() does the same by itself for large
 * messages in a region. Such a send counts in the channel's inflight sends
 * like an eager one, until its CQE: the kernel holds it in the channel's
 * pending ring (at most RMSG_CHAN_MAX_PENDING, eager and rendezvous
 * together) until its RTS record is written, and it completes only once
 * the peer has the bytes, so counting it to the CQE never lets the
 * library submit a send the kernel would refuse with -ENOBUFS.
 *
 * Receiving: an RTS record in the block is handed out as an RMSG_MSG_RNDV
 * message. The kernel wants the answers of a channel in cookie order, each
 * once; the library keeps per channel the cookie after the last message
 * peeked (rv_seen), the next to answer (rv_answer) and how far the program
 * has released (rv_drop), and discards what was released unanswered, so
 * that a program that ignores rendezvous cannot wedge the channel. An
 * answer the kernel refuses outright (its CQE has len 0) was not taken:
 * the channel's answer counter goes back to it.
 *
 * rmsg_msg_recv() reads a rendezvous message into a bounce region of the
 * library's own and copies it out once there (rmsg_msg.c, with this file's
 * answers). Meanwhile the message stays unread (the peek position goes
 * back), so each call finds it again; rmsg_ep_wait() neither counts it as
 * readable nor arms its channel, and wakes on the transfer's CQE instead.
 *
 * Completions carry a tag (rmsg_priv.h) with the index of the operation's
 * entry in a table that keeps the program's user_data.
 *
 * Calls rmsg_lib.c (SQEs, the doorbell, broken channels) and never
 * rmsg_msg.c, which calls this file.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmsg_priv.h"

/* Refused answers in a row after which the channel is given up. */
#define RMSG_RV_REFUSED_MAX	16

/* -------------------------------------------------------------------- */
/* Threshold, regions, the table of operations                           */

/* "16384", "16K", "1M": bytes; false for anything else. */
static bool rmsg_rv_parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'k':
	case 'K':
		v = v > SIZE_MAX >> 10 ? SIZE_MAX : v << 10;
		end++;
		break;
	case 'm':
	case 'M':
		v = v > SIZE_MAX >> 20 ? SIZE_MAX : v << 20;
		end++;
		break;
	case 'g':
	case 'G':
		v = v > SIZE_MAX >> 30 ? SIZE_MAX : v << 30;
		end++;
		break;
	}
	if (*end)
		return false;
	*out = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
	return true;
}

void rmsg_rv_init(struct rmsg_ep_data *d)
{
	const char *lend = getenv("RMSG_LEND");

	if (!rmsg_rv_parse_size(getenv("RMSG_RNDV_THRESH"), &d->rv_thresh))
		d->rv_thresh = RMSG_RNDV_THRESH_DEFAULT;
	d->no_lend = lend && !strcmp(lend, "0");
}

void rmsg_rv_free(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;

	/* The kernel drops the region with the endpoint. */
	__u32 i;

	if (d->bounce.map)
		munmap(d->bounce.map, d->bounce.len);
	/* The kernel holds the pages of a copy still in flight pinned. */
	for (i = 0; i < d->nops; i++)
		free(d->ops[i].copy);
	free(d->regs);
	free(d->ops);
}

/*
 * Whether @buf..@buf+@len lies in one region; its handle in *@handle, else
 * 0 (for the kernel: pin it for one transfer, RMSG_FEAT_RNDV_PIN).
 */
bool rmsg_rv_region_of(struct rmsg_ep_data *d, const void *buf, size_t len,
		       __u32 *handle)
{
	uintptr_t a = (uintptr_t)buf;
	__u32 i;

	*handle = 0;	/* none: the kernel's pin-for-one-transfer */
	for (i = 0; i < d->nregs; i++) {
		const struct rmsg_rv_region *r = &d->regs[i];

		if (a >= r->addr && len <= r->len && a - r->addr <= r->len - len) {
			*handle = r->handle;
			return true;
		}
	}
	return false;
}

static int rmsg_rv_op_get(struct rmsg_ep_data *d, __u32 type, __u64 ud,
			  __u32 *idx)
{
	struct rmsg_rv_op *p;
	__u32 i, n;

	if (!d->ops_free) {
		n = d->nops ? 2 * d->nops : 64;
		if (n > RMSG_RV_OPS_MAX)
			return -EAGAIN;
		p = realloc(d->ops, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (i = d->nops; i < n; i++) {
			p[i].type = RMSG_RVOP_FREE;
			p[i].copy = NULL;
			p[i].next_free = i + 1 < n ? i + 2 : 0;
		}
		d->ops_free = d->nops + 1;
		d->ops = p;
		d->nops = n;
	}
	i = d->ops_free - 1;
	d->ops_free = d->ops[i].next_free;
	d->ops_busy++;
	d->ops[i].type = type;
	d->ops[i].user_data = ud;
	d->ops[i].quiet = false;
	*idx = i;
	return 0;
}

static void rmsg_rv_op_put(struct rmsg_ep_data *d, __u32 i)
{
	free(d->ops[i].copy);
	d->ops[i].copy = NULL;
	d->ops[i].type = RMSG_RVOP_FREE;
	d->ops[i].next_free = d->ops_free;
	d->ops_free = i + 1;
	d->ops_busy--;
}

/* -------------------------------------------------------------------- */
/* Answers and discards                                                  */

static void rmsg_rv_set_owed(struct rmsg_ep_data *d, struct rmsg_chan *ch,
			     bool owed)
{
	if (owed == !!ch->rv_owed)
		return;
	ch->rv_owed = owed;
	if (owed)
		d->rv_owed++;
	else
		d->rv_owed--;
}

/*
 * Fill @sqe with the answer to channel @id's next rendezvous message: its
 * bytes to @addr in region @handle, or RMSG_RNDV_F_DISCARD (@addr NULL).
 */
void rmsg_rv_answer(struct rmsg_chan *ch, __u32 id, struct rmsg_sqe *sqe,
		    const void *addr, __u32 len, __u32 handle, __u64 tag)
{
	sqe->opcode = RMSG_OP_RECV_RNDV;
	sqe->channel = id;
	if (addr) {
		sqe->addr = (uintptr_t)addr;
		sqe->len = len;
		sqe->region = handle;
	} else {
		sqe->flags = RMSG_RNDV_F_DISCARD;
	}
	sqe->aux = ch->rv_answer++;
	sqe->user_data = tag;
}

/*
 * Discard the released, unanswered rendezvous messages of channel @id, in
 * order, as far as the SQ has room; the rest stays owed.
 */
void rmsg_rv_discards(struct rmsg_ep *ep, __u32 id)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch = &d->chans[id];
	struct rmsg_sqe *sqe;
	unsigned int n = 0;
	bool owed = false;

	while (ch->state == RMSG_CH_OPEN && !ch->err &&
	       (__s32)(ch->rv_drop - ch->rv_answer) > 0) {
		if (ch->rv_refused >= RMSG_RV_REFUSED_MAX)
			break;
		sqe = rmsg_lib_sqe(ep);
		if (!sqe) {
			owed = true;
			break;
		}
		rmsg_rv_answer(ch, id, sqe, NULL, 0, 0,
			       RMSG_TAG(RMSG_OP_RECV_RNDV,
					RMSG_RV_TAG_DISCARD));
		n++;
	}
	rmsg_rv_set_owed(d, ch, owed);
	if (n)
		rmsg_lib_kick(ep);
}

void rmsg_rv_flush(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 i;

	for (i = 0; d->rv_owed && i < d->nactive; i++)
		if (d->chans[d->active[i]].rv_owed)
			rmsg_rv_discards(ep, d->active[i]);
}

/*
 * The kernel refused the answer of @cookie outright (and so every later
 * answer of the channel it was given): it waits for an answer again.
 */
static void rmsg_rv_refused(struct rmsg_ep *ep, __u32 id, __u32 cookie)
{
	struct rmsg_chan *ch = &ep->data->chans[id];

	ep->data->lib_errors++;
	if ((__s32)(cookie - ch->rv_answer) < 0 &&
	    (__s32)(ch->rv_seen - cookie) > 0)
		ch->rv_answer = cookie;
	/* A refusal that keeps coming back is not going away. */
	if (++ch->rv_refused >= RMSG_RV_REFUSED_MAX) {
		rmsg_lib_broken(ep, id, -EIO);
		return;
	}
	rmsg_rv_discards(ep, id);
}

/* A peeked RTS record of @size bytes at @rts: fill in *@msg. */
int rmsg_rv_peeked(struct rmsg_chan *ch, const void *rts, __u32 size,
		   __u32 end, struct rmsg_msg *msg)
{
	struct rmsg_rts r;
	__u32 c, back;
	__u64 len;

	if (size < sizeof(r))
		return -EPROTO;
	/* One read of what the peer's kernel wrote. */
	memcpy(&r, rts, sizeof(r));
	len = le64toh(r.len);
	c = le32toh(r.cookie);
	if (!len || len > RMSG_RNDV_MAX_LEN)
		return -EPROTO;
	back = ch->rv_seen - c;
	if (!back) {
		/* A new one: the sender's window bounds the unanswered. */
		if (ch->rv_seen - ch->rv_answer >= RMSG_RV_RING)
			return -EPROTO;
		ch->rv_end[c % RMSG_RV_RING] = end;
		ch->rv_seen++;
	} else if (back > RMSG_RV_RING ||
		   ch->rv_end[c % RMSG_RV_RING] != end) {
		/* Seen again (rmsg_msg_recv() put it back) must be the same. */
		return -EPROTO;
	}
	msg->data = NULL;
	msg->len = (uint32_t)len;
	msg->kind = RMSG_MSG_RNDV;
	msg->cookie = c;
	return 0;
}

/* rmsg_msg_recv() will not come back for the bounce transfer's message. */
static void rmsg_rv_bounce_abandon(struct rmsg_bounce *b)
{
	if (b->done)
		b->busy = false;
	else
		b->gone = true;
}

/* The program released channel @id up to @end. */
void rmsg_rv_released(struct rmsg_ep *ep, __u32 id, __u32 end)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch = &d->chans[id];
	struct rmsg_bounce *b = &d->bounce;
	__u32 c;

	/*
	 * The eager stream's case: every rendezvous message peeked is
	 * answered and no discard is owed, so none can be released here.
	 */
	if (ch->rv_seen == ch->rv_answer && !ch->rv_owed &&
	    !(b->busy && b->channel == id)) {
		ch->rv_drop = ch->rv_answer;
		return;
	}
	if (b->busy && b->channel == id && (__s32)(end - b->end) >= 0)
		rmsg_rv_bounce_abandon(b);
	c = (__s32)(ch->rv_drop - ch->rv_answer) > 0 ? ch->rv_drop :
						       ch->rv_answer;
	while (c != ch->rv_seen &&
	       (__s32)(end - ch->rv_end[c % RMSG_RV_RING]) >= 0)
		c++;
	ch->rv_drop = c;
	rmsg_rv_discards(ep, id);
}

/* Channel @id is forgotten: rmsg_msg_recv() will not come for its message. */
void rmsg_rv_chan_gone(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_bounce *b = &d->bounce;

	if (b->busy && b->channel == id)
		rmsg_rv_bounce_abandon(b);
}

/* rmsg_msg_recv()'s transfer waits, and its message is the next to read. */
bool rmsg_rv_blocked(const struct rmsg_ep_data *d, __u32 id)
{
	const struct rmsg_bounce *b = &d->bounce;

	return b->busy && !b->done && b->channel == id &&
	       d->chans[id].rx.consumed == b->start;
}

/*
 * A SEND_RNDV or RECV_RNDV of the library completed. Returns as
 * rmsg_cqe_take() does: 1 for an event in *@ev, 0 when consumed, -1 when
 * it is to be reported but @ev is NULL (nothing done then).
 */
int rmsg_rv_cqe(struct rmsg_ep *ep, const struct rmsg_cqe *cqe,
		struct rmsg_event *ev)
{
	struct rmsg_ep_data *d = ep->data;
	unsigned int op = RMSG_TAG_OP(cqe->user_data);
	__u32 idx = RMSG_TAG_VAL(cqe->user_data);
	struct rmsg_chan *ch = rmsg_chan_get(d, cqe->channel);
	struct rmsg_bounce *b = &d->bounce;
	bool lib = op == RMSG_OP_RECV_RNDV && (idx == RMSG_RV_TAG_DISCARD ||
					       idx == RMSG_RV_TAG_BOUNCE);

	if (!lib && (idx >= d->nops ||
		     d->ops[idx].type != (op == RMSG_OP_SEND_RNDV ?
					  RMSG_RVOP_SEND : RMSG_RVOP_RECV))) {
		d->bad_cqes++;
		return 0;
	}
	/* A send the program wants to hear of only when it fails. */
	if (op == RMSG_OP_SEND_RNDV && d->ops[idx].quiet && cqe->res >= 0) {
		if (ch && ch->state != RMSG_CH_FREE && ch->inflight)
			ch->inflight--;
		rmsg_rv_op_put(d, idx);
		return 0;
	}
	if (!lib && !ev)
		return -1;
	if (op == RMSG_OP_RECV_RNDV && ch && ch->state == RMSG_CH_OPEN) {
		/* A transfer's CQE has the message's length, never 0. */
		if (cqe->res < 0 && !cqe->len)
			rmsg_rv_refused(ep, cqe->channel, (__u32)cqe->aux);
		else
			ch->rv_refused = 0;
	}
	if (idx == RMSG_RV_TAG_DISCARD && op == RMSG_OP_RECV_RNDV) {
		if (cqe->res)
			d->lib_errors++;
		return 0;
	}
	if (idx == RMSG_RV_TAG_BOUNCE && op == RMSG_OP_RECV_RNDV) {
		if (!b->busy || b->done || b->channel != cqe->channel ||
		    b->cookie != (__u32)cqe->aux) {
			d->bad_cqes++;
			return 0;
		}
		b->done = true;
		b->res = cqe->res;
		if (b->gone)
			b->busy = false;
		return 0;
	}
	if (op == RMSG_OP_SEND_RNDV && ch && ch->state != RMSG_CH_FREE &&
	    ch->inflight)
		ch->inflight--;
	ev->kind = RMSG_CQE_OP;
	ev->res = cqe->res;
	ev->channel = cqe->channel;
	ev->len = cqe->len;
	ev->user_data = d->ops[idx].user_data;
	rmsg_rv_op_put(d, idx);
	return 1;
}

/* -------------------------------------------------------------------- */
/* Sending                                                               */

/*
 * Submit a SEND_RNDV; the caller checked @len, @flags (RMSG_ZC_PUT,
 * RMSG_SEND_SKIP_SUCCESS) and the region.
 * @copy: memory of the library's that holds @buf (a gather's copy); it is
 * freed at the send's completion, or at once when this fails.
 */
int rmsg_rv_send(struct rmsg_ep *ep, __u32 id, const void *buf, size_t len,
		 unsigned int flags, __u64 user_data, __u32 handle, void *copy)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch = rmsg_chan_get(d, id);
	struct rmsg_sqe *sqe;
	__u32 idx;
	int ret;

	if (!ch || ch->state != RMSG_CH_OPEN || ch->closing || ch->err)
		ret = -ENOTCONN;
	/* Counted with the eager sends: see the top of this file. */
	else if (ch->inflight >= RMSG_CHAN_MAX_PENDING)
		ret = -EAGAIN;
	else
		ret = rmsg_rv_op_get(d, RMSG_RVOP_SEND, user_data, &idx);
	if (ret) {
		free(copy);
		return ret;
	}
	d->ops[idx].copy = copy;
	d->ops[idx].quiet = flags & RMSG_SEND_SKIP_SUCCESS;
	sqe = rmsg_lib_sqe(ep);
	if (!sqe) {
		rmsg_rv_op_put(d, idx);
		return -EAGAIN;
	}
	sqe->opcode = RMSG_OP_SEND_RNDV;
	sqe->flags = flags & RMSG_ZC_PUT ? RMSG_RNDV_F_PUT : 0;
	sqe->channel = id;
	sqe->addr = (uintptr_t)buf;
	sqe->len = (__u32)len;
	sqe->region = handle;
	sqe->user_data = RMSG_TAG(RMSG_OP_SEND_RNDV, idx);
	ch->inflight++;
	rmsg_lib_kick(ep);
	return 0;
}

int rmsg_msg_send_zc(struct rmsg_ep *ep, uint32_t channel, const void *buf,
		     size_t len, unsigned int flags, uint64_t user_data)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 handle;
	int ret;

	if (!d)
		return -EINVAL;
	if (!(d->features & RMSG_FEAT_RNDV))
		return -EOPNOTSUPP;
	if (flags & ~(RMSG_ZC_PUT | RMSG_SEND_SKIP_SUCCESS))
		return -EINVAL;
	if (!len || len > RMSG_RNDV_MAX_LEN)
		return -EMSGSIZE;
	rmsg_lock(d);
	/* In no region: the kernel pins it for this send (handle 0). */
	if (!rmsg_rv_region_of(d, buf, len, &handle) &&
	    !(d->features & RMSG_FEAT_RNDV_PIN))
		ret = -EFAULT;
	else
		ret = rmsg_rv_send(ep, channel, buf, len, flags, user_data,
				   handle, NULL);
	rmsg_unlock(d);
	return ret;
}

int rmsg_ep_set_rndv_threshold(struct rmsg_ep *ep, size_t bytes)
{
	struct rmsg_ep_data *d = ep->data;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	d->rv_thresh = bytes;
	rmsg_unlock(d);
	return 0;
}

/* The threshold of @id's sends: its own, else the endpoint's. */
size_t rmsg_rv_thresh(struct rmsg_ep_data *d, __u32 id)
{
	const struct rmsg_chan *ch = rmsg_chan_get(d, id);

	return ch && ch->rv_own ? ch->rv_thresh : d->rv_thresh;
}

int rmsg_chan_set_rndv_threshold(struct rmsg_ep *ep, uint32_t channel,
				 size_t bytes)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch;
	int ret = 0;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ch = rmsg_chan_get(d, channel);
	if (!ch || ch->state != RMSG_CH_OPEN) {
		ret = -ENOTCONN;
	} else {
		ch->rv_thresh = bytes;
		ch->rv_own = true;
	}
	rmsg_unlock(d);
	return ret;
}

size_t rmsg_ep_rndv_threshold(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	size_t t;

	if (!d)
		return SIZE_MAX;
	rmsg_lock(d);
	t = d->rv_thresh;
	rmsg_unlock(d);
	return t;
}

/* -------------------------------------------------------------------- */
/* Receiving                                                             */

/* Whether @msg may be answered now; 0 or a negative errno. */
static int rmsg_rv_answerable(struct rmsg_ep_data *d,
			      const struct rmsg_msg *msg,
			      struct rmsg_chan **chp)
{
	struct rmsg_chan *ch = rmsg_chan_get(d, msg->channel);

	if (!(d->features & RMSG_FEAT_RNDV))
		return -EOPNOTSUPP;
	if (!ch || !ch->block)
		return -ENOTCONN;
	if (msg->kind != RMSG_MSG_RNDV)
		return -EINVAL;
	/*
	 * The next one to answer, peeked, and not released (the library
	 * discards those itself).
	 */
	if (msg->cookie != ch->rv_answer ||
	    (__s32)(ch->rv_seen - msg->cookie) <= 0 ||
	    (__s32)(ch->rv_drop - msg->cookie) > 0)
		return -EINVAL;
	if (ch->state != RMSG_CH_OPEN || ch->err)
		return -ENOTCONN;
	*chp = ch;
	return 0;
}

int rmsg_msg_recv_into(struct rmsg_ep *ep, const struct rmsg_msg *msg,
		       void *buf,
		       size_t room, uint64_t user_data)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch;
	struct rmsg_sqe *sqe;
	__u32 handle, idx;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_rv_answerable(d, msg, &ch);
	if (ret)
		goto out;
	if (room < msg->len) {
		ret = -EMSGSIZE;
		goto out;
	}
	if (!rmsg_rv_region_of(d, buf, room, &handle) &&
	    !(d->features & RMSG_FEAT_RNDV_PIN)) {
		ret = -EFAULT;
		goto out;
	}
	ret = rmsg_rv_op_get(d, RMSG_RVOP_RECV, user_data, &idx);
	if (ret)
		goto out;
	sqe = rmsg_lib_sqe(ep);
	if (!sqe) {
		rmsg_rv_op_put(d, idx);
		ret = -EAGAIN;
		goto out;
	}
	/* The kernel writes the message's bytes, no more. */
	rmsg_rv_answer(ch, msg->channel, sqe, buf, msg->len, handle,
		       RMSG_TAG(RMSG_OP_RECV_RNDV, idx));
	rmsg_lib_kick(ep);
out:
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_discard(struct rmsg_ep *ep, const struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_rv_answerable(d, msg, &ch);
	if (ret)
		goto out;
	/* As if released: the library's own discard goes. */
	ch->rv_drop = msg->cookie + 1;
	rmsg_rv_discards(ep, msg->channel);
	if (ch->rv_answer == msg->cookie) {
		/* No SQE: take it back, it is the program's again. */
		ch->rv_drop = msg->cookie;
		rmsg_rv_set_owed(d, ch, false);
		ret = -EAGAIN;
	}
out:
	rmsg_unlock(d);
	return ret;
}

/* -------------------------------------------------------------------- */
/* The table of protocols                                                */

static void rmsg_rv_size(char *s, size_t n, unsigned long long v)
{
	if (v == RMSG_RNDV_MAX_LEN)
		snprintf(s, n, "1 GiB");
	else
		snprintf(s, n, "%llu", v);
}

static void rmsg_rv_line(FILE *out, unsigned long long lo,
			 unsigned long long hi, const char *what)
{
	char a[24], b[24], range[56];

	if (lo > hi)
		return;
	rmsg_rv_size(a, sizeof(a), lo);
	rmsg_rv_size(b, sizeof(b), hi);
	snprintf(range, sizeof(range), "%s .. %s", a, b);
	fprintf(out, "    %-19s %s\n", range, what);
}

int rmsg_chan_protocol_info(struct rmsg_ep *ep, uint32_t channel, FILE *out)
{
	struct rmsg_ep_data *d = ep->data;
	unsigned long long eager, zc, top = RMSG_RNDV_MAX_LEN;
	bool rndv, pin;
	size_t t;
	int max;

	if (!d || !out)
		return -EINVAL;
	rmsg_lock(d);
	max = rmsg_lib_max_msg(d, channel);
	t = rmsg_rv_thresh(d, channel);
	rndv = d->features & RMSG_FEAT_RNDV;
	pin = d->features & RMSG_FEAT_RNDV_PIN;
	rmsg_unlock(d);
	if (max < 0)
		return max;
	if (!d->area_map)
		max = -1;	/* no send area: no eager message at all */
	eager = (unsigned long long)(max + 1);	/* first size not eager */
	/* rmsg_msg_send() goes rendezvous from zc bytes (0 is always eager). */
	if (!rndv || t == SIZE_MAX)
		zc = top + 1;
	else
		zc = t < eager ? t : eager;
	if (!zc)
		zc = 1;
	fprintf(out, "    %-19s %s\n", "size range", "protocol");
	if (max >= 0) {
		rmsg_rv_line(out, 0, (zc < eager ? zc : eager) - 1,
			     "eager copy (send area -> receive block)");
		rmsg_rv_line(out, zc, eager - 1,
			     "rendezvous RGet zero copy if in a region, else eager copy");
	}
	if (zc > eager)
		rmsg_rv_line(out, eager, zc - 1 < top ? zc - 1 : top,
			     !rndv ? "too large (-EMSGSIZE): no rendezvous in this module" :
			     pin ? "too large for eager (-EMSGSIZE); rmsg_msg_send_zc() from any memory" :
			     "too large for eager (-EMSGSIZE); rmsg_msg_send_zc() from a region");
	if (rndv)
		rmsg_rv_line(out, zc > eager ? zc : eager, top,
			     pin ? "rendezvous RGet zero copy (a region's, or pinned for the send)" :
			     "rendezvous RGet zero copy (region required)");
	if (ferror(out))
		return -EIO;
	return 0;
}
