// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf's server: one thread per client thread, each listening on its
 * own port. It accepts the client's channels, and runs the other side of
 * each run the client asks for (CTL_RUN) until its CTL_BYE, reporting
 * what it measured in a CTL_RESULT.
 *
 * Calls common.c, event.c and ep.c, and the test through perf_test.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "rmsg-perf.h"

/* ------------------------------------------------------------------------
 * Server.
 */
static void srv_place(struct worker *w, uint32_t id, const struct ctl *h,
		      struct ctl *ack)
{
	struct chan *c;

	if (ack->error)
		return;
	if (!w->nch) {
		if (!h->channels || h->channels > MAX_CHANNELS) {
			ack->error = EINVAL;
			snprintf(ack->text, sizeof(ack->text),
				 "%u channels per thread: at most %d",
				 h->channels, MAX_CHANNELS);
			return;
		}
		w->nch = h->channels;
	}
	if (h->test != opt.test) {
		ack->error = EINVAL;
		snprintf(ack->text, sizeof(ack->text),
			 "the server runs '%s', not '%s'",
			 test_names[opt.test],
			 h->test && h->test <= TEST_RECOVER &&
			 h->test != TEST_MEM ? test_names[h->test] : "?");
	} else if (h->threads != (uint32_t)opt.threads) {
		ack->error = EINVAL;
		snprintf(ack->text, sizeof(ack->text),
			 "the server has %d threads, the client %u: give both the same -t",
			 opt.threads, h->threads);
	} else if (h->thread != (uint32_t)w->idx ||
		   h->channels != (uint32_t)w->nch ||
		   h->chan_idx >= (uint32_t)w->nch ||
		   w->ch[h->chan_idx].open) {
		ack->error = EPROTO;
		snprintf(ack->text, sizeof(ack->text),
			 "inconsistent HELLO (thread %u, channel %u of %u)",
			 h->thread, h->chan_idx, h->channels);
	}
	if (ack->error)
		return;
	if (h->flags & CTL_F_EXT)
		w->ext = true;
	c = &w->ch[h->chan_idx];
	c->id = id;
	c->open = true;
	c->max_msg = rmsg_chan_max_msg(w->ep, id);
	w->by_id[id] = h->chan_idx;
	w->placed++;
}

/*
 * Accept the client's channels. Each sends a HELLO naming its place among
 * the thread's channels, so the order of the ACCEPTED events does not
 * matter.
 */
static void srv_accept(struct worker *w)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(opt.port + w->idx),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct ctl hello, ack;
	struct rmsg_msg msg;
	struct waiter wt;
	uint32_t id;
	int i, ret;
	bool any = false;

	ret = rmsg_ep_listen(w->ep, (struct sockaddr *)&sin6, sizeof(sin6),
			     0, opt.block);
	if (ret)
		die(w, "listening on port %d: %s", opt.port + w->idx,
		    strerror(-ret));
	memset(&ack, 0, sizeof(ack));
	wait_init(&wt, "the client's channels");
	while (!w->nch || w->placed < w->nch) {
		/* Before the first channel: wait for a client, forever. */
		if (!any)
			wt.deadline = UINT64_MAX;
		/* Channels come as ACCEPTED events. */
		pump(w);
		tick(w, &wt);
		any |= w->nunplaced > 0;
		for (i = 0; i < w->nunplaced; i++) {
			id = w->unplaced[i];
			ret = rmsg_msg_peek(w->ep, id, &msg);
			if (ret == -EAGAIN)
				continue;
			if (ret)
				die(w, "channel %u: %s", id, strerror(-ret));
			memset(&hello, 0, sizeof(hello));
			if (msg.data)
				memcpy(&hello, msg.data,
				       msg.len < sizeof(hello) ? msg.len :
				       sizeof(hello));
			ctl_valid(w, &hello, msg.len, CTL_BIT(CTL_HELLO), true);
			ret = rmsg_msg_release(w->ep, &msg);
			if (ret)
				die(w, "rmsg_msg_release: %s", strerror(-ret));
			srv_place(w, id, &hello, &ack);
			w->unplaced[i--] = w->unplaced[--w->nunplaced];
			wait_renew(&wt);
			if (ack.error)
				break;
		}
		if (ack.error)
			break;
	}

	ack.max_msg = UINT32_MAX;
	for (i = 0; i < w->nch && !ack.error; i++)
		if (w->ch[i].max_msg < ack.max_msg)
			ack.max_msg = w->ch[i].max_msg;
	if (!ack.error && w->nunplaced) {
		ack.error = EPROTO;
		snprintf(ack.text, sizeof(ack.text),
			 "%d channels more than the client announced",
			 w->nunplaced);
	}
	if (!ack.error) {
		/* A client that knows the extension hears of it, in full. */
		if (w->ext) {
			w->ctl_len = sizeof(ack);
			ack.caps = CTL_CAP_RNDV;
		}
		send_ctl(w, &w->ch[0], &ack, CTL_ACK);
		return;
	}
	/* Tell the client why, on whichever channel it can hear it. */
	if (w->placed)
		send_ctl(w, &w->ch[0], &ack, CTL_ACK);
	drain_sends(w);
	die(w, "refused the client: %s", ack.text);
}

void *srv_thread(void *arg)
{
	struct worker *w = arg;
	struct ctl run, res;
	int runs = 0;

	sysctr_open(&w->sc);
	open_ep(w);
	srv_accept(w);
	for (;;) {
		recv_ctl(w, &w->ch[0], &run,
			 CTL_BIT(CTL_RUN) | CTL_BIT(CTL_BYE));
		if (run.type == CTL_BYE)
			break;
		w->size = run.size;
		w->iters = run.iters;
		w->warmup = run.warmup;
		w->window = run.window;
		w->flags = run.flags;
		w->thresh = run.rndv_thresh;
		/* Only a test that runs the mix takes its --rndv-every. */
		w->rndv_every = perf_test->on_mix_op ? run.rndv_every : 0;
		setup_run(w, perf_test->pingpong, true);
		memset(&res, 0, sizeof(res));
		perf_test->server(w, &res);
		res.sc_method = w->sc.method;
		send_ctl(w, &w->ch[0], &res, CTL_RESULT);
		runs++;
	}
	close_ep(w, false);
	sysctr_close(&w->sc);
	if (!opt.json)
		fprintf(stderr, "rmsg-perf: server thread %d: %d runs over %d channels, every message checked\n",
			w->idx, runs, w->nch);
	return NULL;
}
