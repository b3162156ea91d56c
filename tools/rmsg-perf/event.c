// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: waiting with a deadline, taking the endpoint's events, and
 * the control protocol between client and server (struct ctl).
 *
 * Calls common.c, clock.c and syscount.c; the completions of recover's
 * rendezvous mix go to perf_test->on_mix_op.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rmsg-perf.h"

void wait_init(struct waiter *wt, const char *what)
{
	wt->deadline = 0;
	wt->spins = 0;
	wt->what = what;
}

void wait_renew(struct waiter *wt)
{
	wt->deadline = 0;
}

void tick(struct worker *w, struct waiter *wt)
{
	uint64_t now;

	if (w->lost)
		die(w, "channel %u ended while waiting for %s: %s",
		    w->lost_id, wt->what, w->lost == -ECONNRESET ?
		    "closed by the peer" : strerror(-w->lost));
	/*
	 * Nothing else in a spin: a wait whose passes all look alike is
	 * what the instruction counter's loop detection takes out
	 * (Documentation/bench.rst), and each pass unlike the others
	 * counts a few passes as work.
	 */
	if (++wt->spins & (TICK_EVERY - 1))
		return;
	if (pump(w) > 0)
		wait_renew(wt);
	now = now_ns();
	if (!wt->deadline)
		wt->deadline = now + opt.timeout_s * 1000000000ULL;
	else if (now > wt->deadline)
		die(w, "nothing happened for %d s while waiting for %s",
		    opt.timeout_s, wt->what);
}

static void on_connected(struct worker *w, const struct rmsg_event *ev)
{
	struct chan *c;

	if (ev->user_data >= (uint64_t)w->nch)
		die(w, "CONNECTED event for unknown channel %u", ev->channel);
	c = &w->ch[ev->user_data];
	if (c->id != ev->channel)
		die(w, "CONNECTED event for channel %u, expected %u",
		    ev->channel, c->id);
	w->by_id[c->id] = -1;
	if (ev->res == -ECONNREFUSED) {
		/* The server may not be listening yet: try again soon. */
		c->retry_at = now_ns() + 200000000ULL;
		return;
	}
	if (ev->res)
		die(w, "connect: %s", strerror(-ev->res));
	w->by_id[c->id] = c - w->ch;
	c->open = true;
	c->max_msg = rmsg_chan_max_msg(w->ep, c->id);
	if ((int32_t)c->max_msg < 0)
		die(w, "rmsg_chan_max_msg: %s", strerror(-(int)c->max_msg));
}

static void on_accepted(struct worker *w, const struct rmsg_event *ev)
{
	if (ev->res)
		die(w, "accept: %s", strerror(-ev->res));
	if (ev->channel >= RMSG_MAX_CHANNELS)
		die(w, "ACCEPTED event for channel %u", ev->channel);
	if (w->nunplaced >= MAX_CHANNELS)
		die(w, "more than %d channels", MAX_CHANNELS);
	w->unplaced[w->nunplaced++] = ev->channel;
}

static void on_closed(struct worker *w, const struct rmsg_event *ev)
{
	struct chan *c = chan_of(w, ev->channel);

	if (!w->closing && !w->lost) {
		/*
		 * Not fatal yet: what the peer sent before it went is still
		 * readable (an error report, say), and tick() fails the wait
		 * only if that did not satisfy it.
		 */
		w->lost = ev->res ? ev->res : -ECONNRESET;
		w->lost_id = ev->channel;
	}
	if (c)
		c->open = false;
}

/* The completion of an answer: the message is in its slot, or not. */
static void rx_done(struct worker *w, struct chan *c,
		    const struct rmsg_event *ev)
{
	uint64_t seq = ev->user_data & TAG_SEQ, got = 0;
	uint32_t slot = seq % (w->nrx ? w->nrx : 1);
	const uint8_t *buf = c->rx_slots + slot * w->stride;

	if (!(c->rx_busy & (1U << slot)))
		die(w, "completion of a rendezvous receive not made, channel %u",
		    c->id);
	if (ev->res)
		die(w, "rendezvous message %" PRIu64 " on channel %u: %s",
		    seq, c->id, strerror(-ev->res));
	if (ev->len != w->size ||
	    !stamp_ok(buf, w->size, seq, w->flags & CTL_F_FULL_CHECK)) {
		if (w->size >= 8)
			memcpy(&got, buf, 8);
		die(w, "bad rendezvous message on channel %u (%d of the thread): %u bytes, expected %u; message %" PRIu64 " expected, first 8 bytes %#" PRIx64,
		    c->id, (int)(c - w->ch), ev->len, w->size, seq, got);
	}
	c->rx_busy &= ~(1U << slot);
	arrived(w, true);
}

static void on_op(struct worker *w, const struct rmsg_event *ev)
{
	struct chan *c = chan_of(w, ev->channel);

	if (c && (ev->user_data & TAG_MIX)) {
		if (!perf_test->on_mix_op)
			die(w, "completion of a rendezvous operation not made, channel %u, message %" PRIu64,
			    c->id, ev->user_data & TAG_SEQ);
		perf_test->on_mix_op(w, c, ev);
		return;
	}
	if (c && (ev->user_data & TAG_RX)) {
		rx_done(w, c, ev);
		return;
	}
	/* Sends still in flight when a channel closes may fail then. */
	if (ev->res && !w->closing && !w->aborting) {
		if (ev->res == -EINVAL && (w->flags & CTL_F_PUT))
			give_up(w, "RPut (--put) refused with EINVAL: this rmsg module does not do RMSG_RNDV_F_PUT");
		die(w, "send on channel %u: %s", ev->channel,
		    strerror(-ev->res));
	}
	if (!c || !c->inflight)
		die(w, "completion of a send not made, channel %u",
		    ev->channel);
	c->inflight--;
	if ((ev->user_data & TAG_TX) && w->ntx)
		c->tx_busy &= ~(1U << ((ev->user_data & TAG_SEQ) % w->ntx));
}

/* Take what the endpoint has; returns the number of events. */
int pump(struct worker *w)
{
	struct rmsg_event ev[64];
	int n, i;

	n = rmsg_ep_progress(w->ep, ev, 64);
	if (n < 0)
		die(w, "rmsg_ep_progress: %s", strerror(-n));
	for (i = 0; i < n; i++) {
		switch (ev[i].kind) {
		case RMSG_CQE_OP:
			on_op(w, &ev[i]);
			break;
		case RMSG_CQE_CONNECTED:
			on_connected(w, &ev[i]);
			break;
		case RMSG_CQE_ACCEPTED:
			on_accepted(w, &ev[i]);
			break;
		case RMSG_CQE_CLOSED:
			on_closed(w, &ev[i]);
			break;
		default:
			break;
		}
	}
	return n;
}

void send_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
	      enum ctl_type type)
{
	struct waiter wt;
	int ret;

	ctl->magic = CTL_MAGIC;
	ctl->version = CTL_VERSION;
	ctl->type = type;
	wait_init(&wt, "room to send a control message");
	while ((ret = rmsg_msg_send(w->ep, c->id, ctl, w->ctl_len, 0, 0)) ==
	       -EAGAIN) {
		pump(w);
		tick(w, &wt);
	}
	if (ret)
		die(w, "rmsg_msg_send: %s", strerror(-ret));
	c->inflight++;
}

/* Is @ctl a control message of one of the types in @types (CTL_BIT()s)? */
bool ctl_valid(struct worker *w, const struct ctl *ctl, int len,
	       unsigned int types, bool fatal)
{
	const char *why = NULL;

	if (len != CTL_V1_LEN && len != sizeof(*ctl))
		why = "of the wrong length";
	else if (ctl->magic != CTL_MAGIC)
		why = "without rmsg-perf's magic (another program, or a peer of the other byte order?)";
	else if (ctl->version != CTL_VERSION)
		why = "of another rmsg-perf version";
	else if (ctl->type >= 32 || !(CTL_BIT(ctl->type) & types))
		why = "of an unexpected type";
	if (why && fatal)
		die(w, "a %d-byte control message %s (type %u)", len, why,
		    len == sizeof(*ctl) ? ctl->type : 0);
	return !why;
}

/* Receive a control message of one of @types on @c, waiting for it. */
void recv_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
	      unsigned int types)
{
	struct waiter wt;
	int ret;

	memset(ctl, 0, sizeof(*ctl));
	wait_init(&wt, "a control message");
	while ((ret = rmsg_msg_recv(w->ep, c->id, ctl, sizeof(*ctl), 0)) ==
	       -EAGAIN)
		tick(w, &wt);
	if (ret == -EMSGSIZE)
		die(w, "a message larger than any control message, on channel %u",
		    c->id);
	if (ret < 0)
		die(w, "rmsg_msg_recv on channel %u: %s", c->id,
		    strerror(-ret));
	if (ctl_valid(w, ctl, ret, CTL_BIT(CTL_ABORT), false)) {
		ctl->text[sizeof(ctl->text) - 1] = '\0';
		die(w, "the peer gave up: %s", ctl->text);
	}
	ctl_valid(w, ctl, ret, types, true);
}

/* Wait until every send of the thread has completed. */
void drain_sends(struct worker *w)
{
	struct waiter wt;
	int i;

	wait_init(&wt, "send completions");
	for (i = 0; i < w->nch; i++)
		while (w->ch[i].inflight) {
			pump(w);
			tick(w, &wt);
		}
}

/*
 * Stop the run for @fmt, telling the peer why first (CTL_ABORT on the
 * first channel, where it arrives in place of a data message) so that it
 * does not stop with a mere "closed by the peer".
 */
_Noreturn void give_up(struct worker *w, const char *fmt, ...)
{
	struct ctl a;
	va_list ap;

	memset(&a, 0, sizeof(a));
	va_start(ap, fmt);
	vsnprintf(a.text, sizeof(a.text), fmt, ap);
	va_end(ap);
	if (w->ext && !w->aborting && w->nch && w->ch[0].open) {
		struct chan *c = &w->ch[0];
		uint64_t until;

		w->aborting = true;
		send_ctl(w, c, &a, CTL_ABORT);
		/*
		 * Until it has gone; the peer may well close the channel as
		 * soon as it has read it, which is not the news here.
		 */
		w->closing = true;
		until = now_ns() + 2000000000ULL;
		while (c->open && c->inflight && now_ns() < until)
			pump(w);
	}
	die(w, "%s", a.text);
}
