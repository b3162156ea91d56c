// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: the data messages of lat, bw and rate, sent and received
 * the way the run asks and checked (common.c's stamps).
 *
 * Eager runs build each message in place in the send area and read it in
 * place. Rendezvous runs (sizes above the largest eager message, --zc,
 * --put, --rndv-thresh, --max-size) send from and receive into memory both
 * sides registered with rmsg_reg(), through the library's own choice of
 * protocol (rmsg_msg_send()) or zero copy always (rmsg_msg_send_zc()); a
 * rendezvous message is received with rmsg_msg_recv_into() and checked when
 * its completion comes (event.c).
 *
 * Calls common.c and event.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rmsg-perf.h"

/* Check a data message of @c (the next one expected) and release it. */
void take_data(struct worker *w, struct chan *c,
	       const struct rmsg_msg *msg)
{
	bool full = w->flags & CTL_F_FULL_CHECK;
	uint64_t got = 0;
	int ret;

	if (msg->kind != RMSG_MSG_EAGER)
		die(w, "a rendezvous message of %u bytes on channel %u in a run without registered buffers",
		    msg->len, c->id);
	if (msg->len != w->size || !stamp_ok(msg->data, msg->len, c->rx_seq,
					     full)) {
		check_abort(w, msg->data, msg->len);
		if (msg->len >= 8)
			memcpy(&got, msg->data, 8);
		die(w, "bad message on channel %u (%d of the thread): %u bytes, expected %u; message %" PRIu64 " expected, first 8 bytes %#" PRIx64,
		    c->id, (int)(c - w->ch), msg->len, w->size, c->rx_seq,
		    got);
	}
	c->rx_seq++;
	ret = rmsg_msg_release(w->ep, msg);
	if (ret)
		die(w, "rmsg_msg_release: %s", strerror(-ret));
	arrived(w, false);
}

/* Build the next data message of @c in place and send it. */
void send_data(struct worker *w, struct chan *c)
{
	unsigned int more = opt.more ? RMSG_SEND_MORE : 0;
	struct waiter wt;
	void *buf;
	int ret;

	ret = rmsg_msg_reserve(w->ep, c->id, w->size, &buf);
	if (ret == -EAGAIN) {
		wait_init(&wt, "room in the send area");
		do {
			pump(w);
			tick(w, &wt);
			ret = rmsg_msg_reserve(w->ep, c->id, w->size, &buf);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_msg_reserve of %u bytes on channel %u: %s",
		    w->size,
		    c->id, strerror(-ret));
	stamp(buf, w->size, c->tx_seq, w->flags & CTL_F_FULL_CHECK);
	/* -EAGAIN: no SQE free; the reservation stays for the retry. */
	ret = rmsg_msg_commit(w->ep, c->id, w->size, more, c->tx_seq);
	if (ret == -EAGAIN) {
		wait_init(&wt, "room in the submission ring");
		do {
			pump(w);
			tick(w, &wt);
			ret = rmsg_msg_commit(w->ep, c->id, w->size, more,
					      c->tx_seq);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_msg_commit: %s", strerror(-ret));
	c->tx_seq++;
	c->inflight++;
}

/* Wait for the next message of @c, in place. */
static void wait_msg(struct worker *w, struct chan *c, struct rmsg_msg *msg)
{
	struct waiter wt;
	int ret;

	ret = rmsg_msg_peek(w->ep, c->id, msg);
	if (ret == -EAGAIN) {
		wait_init(&wt, "a message");
		do {
			tick(w, &wt);
			ret = rmsg_msg_peek(w->ep, c->id, msg);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_msg_peek on channel %u: %s", c->id,
		    strerror(-ret));
}

/*
 * Rendezvous runs: send the next data message of @c from its slot, with
 * rmsg_msg_send() (the library picks the protocol by the threshold) or
 * rmsg_msg_send_zc(). A zero-copy send owns its slot until its completion.
 */
static void send_reg(struct worker *w, struct chan *c)
{
	uint64_t seq = c->tx_seq;
	uint32_t slot = seq % w->ntx, bit = 1U << slot;
	uint8_t *buf = c->tx_slots + slot * w->stride;
	struct waiter wt;
	int ret;

	if (c->tx_busy & bit) {
		wait_init(&wt, "a send's completion (to reuse its buffer)");
		while (c->tx_busy & bit) {
			pump(w);
			tick(w, &wt);
		}
	}
	stamp(buf, w->size, seq, w->flags & CTL_F_FULL_CHECK);
	wait_init(&wt, "room to send");
	for (;;) {
		if (w->flags & CTL_F_ZC)
			ret = rmsg_msg_send_zc(w->ep, c->id, buf, w->size,
					       w->flags & CTL_F_PUT ?
					       RMSG_ZC_PUT : 0, TAG_TX | seq);
		else
			ret = rmsg_msg_send(w->ep, c->id, buf, w->size, 0,
					    TAG_TX | seq);
		if (ret != -EAGAIN)
			break;
		pump(w);
		tick(w, &wt);
	}
	if (ret == -EINVAL && (w->flags & CTL_F_PUT))
		give_up(w, "RPut (--put) refused with EINVAL: this rmsg module does not do RMSG_RNDV_F_PUT");
	if (ret)
		die(w, "%s of %u bytes on channel %u: %s",
		    w->flags & CTL_F_ZC ? "rmsg_msg_send_zc" : "rmsg_msg_send",
		    w->size, c->id, strerror(-ret));
	if (w->zc_now)
		c->tx_busy |= bit;
	c->tx_seq++;
	c->inflight++;
}

/*
 * Answer the rendezvous message @msg of @c (the next one expected) into a
 * free slot, and release it; rx_done() checks it when it has come. The
 * slot's stamps are spoiled first, so that a transfer that wrote nothing
 * cannot pass for one that wrote what the previous message left there.
 */
void answer_rndv(struct worker *w, struct chan *c,
		 const struct rmsg_msg *msg)
{
	uint64_t seq = c->rx_seq;
	uint32_t slot, bit;
	struct waiter wt;
	uint8_t *buf;
	int ret;

	if (!(w->flags & CTL_F_REG) || !w->nrx)
		die(w, "a rendezvous message of %u bytes on channel %u in a run without registered buffers",
		    msg->len, c->id);
	if (msg->len != w->size)
		die(w, "bad rendezvous message on channel %u (%d of the thread): %u bytes, expected %u; message %" PRIu64,
		    c->id, (int)(c - w->ch), msg->len, w->size, seq);
	slot = seq % w->nrx;
	bit = 1U << slot;
	buf = c->rx_slots + slot * w->stride;
	if (c->rx_busy & bit) {
		wait_init(&wt, "a rendezvous receive to complete");
		while (c->rx_busy & bit) {
			pump(w);
			tick(w, &wt);
		}
	}
	stamp(buf, w->size, ~seq, w->flags & CTL_F_FULL_CHECK);
	wait_init(&wt, "room to answer a rendezvous message");
	while ((ret = rmsg_msg_recv_into(w->ep, msg, buf, w->size,
					 TAG_RX | seq)) == -EAGAIN) {
		pump(w);
		tick(w, &wt);
	}
	if (ret)
		die(w,
		    "rmsg_msg_recv_into of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    seq, msg->len, c->id, strerror(-ret));
	c->rx_busy |= bit;
	c->rx_seq++;
	c->rx_answered++;
	ret = rmsg_msg_release(w->ep, msg);
	if (ret)
		die(w, "rmsg_msg_release: %s", strerror(-ret));
}

/* Send the next data message of @c, the way the run asks. */
void send_one(struct worker *w, struct chan *c)
{
	if (w->flags & CTL_F_REG)
		send_reg(w, c);
	else
		send_data(w, c);
}

/*
 * Receive the next data message of @c whole: in place (eager), or answered
 * and waited for (rendezvous). Returns when it has been checked.
 */
void recv_one(struct worker *w, struct chan *c)
{
	uint64_t want = w->arrived + 1;
	struct rmsg_msg msg;
	struct waiter wt;

	wait_msg(w, c, &msg);
	if (msg.kind == RMSG_MSG_EAGER) {
		take_data(w, c, &msg);
		return;
	}
	answer_rndv(w, c, &msg);
	wait_init(&wt, "a rendezvous message's bytes");
	while (w->arrived < want) {
		pump(w);
		tick(w, &wt);
	}
}
