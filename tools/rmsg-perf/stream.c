// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf bw and rate: one-way streams, bandwidth and message rate
 * measured at the receiver.
 *
 * Calls common.c, report.c, event.c and data.c; client.c and server.c run
 * them through stream_test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rmsg-perf.h"

/*
 * Streams (bw, rate): the client sends warmup + iters messages, message k
 * on channel k % nch, with at most a window of sends not completed per
 * channel. The server takes them from whichever channel has one and
 * measures from the arrival of the last warm-up message (the first
 * message, when there is no warm-up) to the arrival of the last one: the
 * bandwidth is measured at the receiver.
 *
 * Rendezvous messages are measured from the answer of the first measured
 * one (the first message, without warm-up) to the arrival of the last,
 * all measured ones counted: the bytes move between the answer and the
 * arrival, several transfers' reads at once, so that the arrivals of a
 * short run can come almost together (and do, in the emulated test bed,
 * where completions come in batches), and counting from an arrival would
 * count bytes that moved before it. This is ib_read_bw's interval, from
 * the reader's first request to its last completion.
 */
static void stream_client(struct worker *w)
{
	uint64_t k, n = w->warmup + w->iters, s0 = 0;
	struct waiter wt;
	struct chan *c;

	wait_init(&wt, "send completions (window full)");
	for (k = 0; k < n; k++) {
		c = &w->ch[k % w->nch];
		if (k == w->warmup) {
			s0 = sysctr_read(&w->sc);
			w->t0 = now_ns();
		}
		while (c->inflight >= w->window) {
			pump(w);
			tick(w, &wt);
		}
		send_one(w, c);
	}
	drain_sends(w);
	w->t1 = now_ns();
	w->sys = sysctr_read(&w->sc) - s0;
	w->msgs = w->iters;
}

static void stream_server(struct worker *w, struct ctl *res)
{
	uint64_t n = w->warmup + w->iters, start, taken = 0;
	struct rmsg_msg msg;
	bool rndv = false;
	struct waiter wt;
	struct chan *c;
	int ret;

	/*
	 * The message whose arrival starts the clock: arrived() notes it,
	 * when the message is checked, be it eager or the completion of a
	 * rendezvous answer.
	 */
	start = w->warmup ? w->warmup : 1;
	w->clock_at = start;
	w->first_measured = start;
	wait_init(&wt, "a message");
	while (w->arrived < n) {
		ret = rmsg_msg_peek_any(w->ep, &msg);
		if (ret == -EAGAIN) {
			/* Answers complete through the events. */
			if (w->flags & CTL_F_REG)
				pump(w);
			tick(w, &wt);
			continue;
		}
		if (ret)
			die(w, "rmsg_msg_peek_any: %s", strerror(-ret));
		c = chan_of(w, msg.channel);
		if (!c)
			die(w, "a message on unknown channel %u", msg.channel);
		if (!taken++ && msg.kind == RMSG_MSG_RNDV) {
			/* A rendezvous run: its clock, see above. */
			rndv = true;
			w->clock_at = 0;
			w->first_measured = w->warmup;
		}
		if (rndv && taken == w->warmup + 1) {
			w->rx_t0 = now_ns();
			w->rx_s0 = sysctr_read(&w->sc);
		}
		if (msg.kind == RMSG_MSG_EAGER)
			take_data(w, c, &msg);
		else
			answer_rndv(w, c, &msg);
		wt.spins = 0;
	}
	res->t0 = w->rx_t0;
	res->t1 = now_ns();
	res->syscalls = sysctr_read(&w->sc) - w->rx_s0;
	res->msgs = rndv ? w->iters : n - start;
	res->bytes = res->msgs * w->size;
	res->rndv_msgs = w->rndv_msgs;
}

static void report_stream(uint32_t size)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, msgs = 0, bytes = 0, tsys = 0;
	uint64_t tmsgs = 0, rsys = 0, st0 = UINT64_MAX, st1 = 0, rndv = 0;
	double secs, ssecs, bw, rate;
	int t;

	for (t = 0; t < opt.threads; t++) {
		struct worker *w = &workers[t];

		if (w->result.t0 < t0)
			t0 = w->result.t0;
		if (w->result.t1 > t1)
			t1 = w->result.t1;
		if (w->t0 < st0)
			st0 = w->t0;
		if (w->t1 > st1)
			st1 = w->t1;
		msgs += w->result.msgs;
		bytes += w->result.bytes;
		rsys += w->result.syscalls;
		tsys += w->sys;
		tmsgs += w->msgs;
		rndv += w->result.rndv_msgs;
	}
	secs = t1 > t0 ? (t1 - t0) / 1e9 : 0;
	ssecs = st1 > st0 ? (st1 - st0) / 1e9 : 0;
	/* MB is 2^20 bytes and Mpps 10^6 messages, as in perftest. */
	bw = secs ? bytes / secs / 1048576.0 : 0;
	rate = secs ? msgs / secs / 1e6 : 0;
	if (opt.json) {
		json_common(size, workers[0].iters, workers[0].warmup);
		json_reg(rndv, msgs);
		printf(", \"window\": %u, \"messages\": %" PRIu64 ", \"seconds\": %.6f, \"bw_MBps\": %.3f, \"msg_rate_Mps\": %.6f, \"sender_bw_MBps\": %.3f",
		       opt.window, msgs, secs, bw, rate,
		       ssecs ? (double)tmsgs * size / ssecs / 1048576.0 : 0);
		printf(", \"syscalls_per_msg\": %.4f, \"tx_syscalls_per_msg\": %.4f, \"rx_syscalls_per_msg\": %.4f}\n",
		       ratio(tsys + rsys, tmsgs + msgs), ratio(tsys, tmsgs),
		       ratio(rsys, msgs));
	} else {
		printf(" %-10u %-14" PRIu64 " %-20.2f %-15.6f %-18.2f %.2f",
		       size, workers[0].iters, bw, rate, ratio(tsys, tmsgs),
		       ratio(rsys, msgs));
		if (opt.reg)
			printf("               %s", protocol(rndv, msgs));
		printf("\n");
	}
}

static void stream_report(int s)
{
	if (!s)
		print_header();
	report_stream(sizes[s]);
}

const struct perf_test stream_test = {
	.client = stream_client,
	.server = stream_server,
	.report = stream_report,
};
