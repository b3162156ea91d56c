// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf's client: connects its threads' channels, tells the server
 * what to run (HELLO, then one RUN per message size), runs its side, and
 * has thread 0 report each size once every thread is done with it.
 *
 * Calls common.c, event.c and ep.c, and the test through perf_test.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmsg-perf.h"

/* OSU-style defaults (osu_latency, osu_bw): see Documentation/bench.rst. */
#define LAT_ITERS	10000
#define LAT_WARMUP	100
#define LAT_ITERS_LARGE	1000
#define LAT_WARMUP_LARGE 10
#define LARGE_SIZE	8192
#define BW_LOOPS	100	/* windows measured */
#define BW_SKIP		10	/* windows of warm-up */
/* Above HUGE_SIZE (rendezvous only) a message takes seconds under TCG. */
#define HUGE_SIZE	(1U << 20)
#define LAT_ITERS_HUGE	100
#define LAT_WARMUP_HUGE	5
#define BW_MSGS_HUGE	32	/* messages, not windows */
#define BW_SKIP_HUGE	4

#define MAX_ALL_SIZE	(64U << 20)	/* -a with rendezvous stops here */

const struct sockaddr *server_sa;
socklen_t server_salen;

/* ------------------------------------------------------------------------
 * Client.
 */
static void connect_chan(struct worker *w, struct chan *c)
{
	struct sockaddr_storage ss;
	int ret;

	memcpy(&ss, server_sa, server_salen);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port =
			htons(opt.port + w->idx);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port =
			htons(opt.port + w->idx);
	ret = rmsg_chan_connect(w->ep, (struct sockaddr *)&ss, server_salen,
				c - w->ch, opt.block);
	if (ret < 0)
		die(w, "rmsg_chan_connect: %s", strerror(-ret));
	c->id = ret;
	c->retry_at = 0;
}

/*
 * Connect the thread's channels. A server that is not listening yet
 * refuses; that is retried until the timeout, so that scripts may start
 * server and client at the same time.
 */
static void cli_connect(struct worker *w)
{
	uint64_t deadline = now_ns() + opt.timeout_s * 1000000000ULL;
	struct ctl hello, ack;
	int i, open;

	w->nch = opt.channels;
	for (i = 0; i < w->nch; i++)
		connect_chan(w, &w->ch[i]);
	for (;;) {
		pump(w);
		open = 0;
		for (i = 0; i < w->nch; i++) {
			struct chan *c = &w->ch[i];

			if (c->open)
				open++;
			else if (c->retry_at && now_ns() >= c->retry_at)
				connect_chan(w, c);
		}
		if (open == w->nch)
			break;
		if (now_ns() > deadline)
			die(w, "%d of %d channels connected after %d s", open,
			    w->nch, opt.timeout_s);
		/* Not timed: leave the CPU to the kernel doing the work. */
		usleep(1000);
	}

	for (i = 0; i < w->nch; i++) {
		memset(&hello, 0, sizeof(hello));
		hello.test = opt.test;
		hello.threads = opt.threads;
		hello.thread = w->idx;
		hello.channels = w->nch;
		hello.chan_idx = i;
		hello.flags = CTL_F_EXT;
		send_ctl(w, &w->ch[i], &hello, CTL_HELLO);
	}
	recv_ctl(w, &w->ch[0], &ack, CTL_BIT(CTL_ACK));
	if (ack.error)
		die(w, "the server refused: %s", ack.text);
	w->peer_max = ack.max_msg;
	if (ack.caps & CTL_CAP_RNDV) {
		w->ext = true;
		w->ctl_len = sizeof(ack);
	}
}

static uint64_t default_iters(uint32_t size)
{
	if (opt.iters >= 0)
		return opt.iters;
	if (opt.test == TEST_RECOVER)
		return RECOVER_FAULTS;
	if (opt.test == TEST_LAT)
		return size > HUGE_SIZE ? LAT_ITERS_HUGE :
		       size > LARGE_SIZE ? LAT_ITERS_LARGE : LAT_ITERS;
	if (size > HUGE_SIZE)
		return BW_MSGS_HUGE;
	return (uint64_t)opt.window * (size > LARGE_SIZE ? BW_LOOPS / 5 :
				       BW_LOOPS);
}

static uint64_t default_warmup(uint32_t size)
{
	if (opt.warmup >= 0)
		return opt.warmup;
	if (opt.test == TEST_LAT)
		return size > HUGE_SIZE ? LAT_WARMUP_HUGE :
		       size > LARGE_SIZE ? LAT_WARMUP_LARGE : LAT_WARMUP;
	if (size > HUGE_SIZE)
		return BW_SKIP_HUGE;
	return (uint64_t)opt.window * (size > LARGE_SIZE ? BW_SKIP / 5 :
				       BW_SKIP);
}

/* Can a message of @size bytes go, eager up to @limit or rendezvous? */
static bool size_ok(uint32_t size, uint32_t limit)
{
	if (size <= limit)
		return true;
	return opt.reg && size <= RMSG_RNDV_MAX_LEN &&
	       (opt.zc || size >= run_thresh);
}

/*
 * Rendezvous runs need the module's RMSG_FEAT_RNDV and a server that knows
 * the control protocol's extension; the threshold the runs use is the
 * client's (--rndv-thresh, or its endpoint's default), told to the server.
 */
static void reg_setup(uint32_t limit)
{
	struct worker *w = &workers[0];
	struct rmsg_version ver;
	size_t th;
	int ret, t;

	ret = rmsg_node_version(rmsg_ep_fd(w->ep), &ver);
	if (ret && ret != -EPROTO)
		die(NULL, "rmsg_node_version: %s", strerror(-ret));
	if (!(ver.features & RMSG_FEAT_RNDV))
		die(NULL, "rendezvous runs (sizes above %u bytes, --zc, --put, --rndv-thresh, --max-size): this rmsg module has no RMSG_FEAT_RNDV",
		    limit);
	for (t = 0; t < opt.threads; t++)
		if (!workers[t].ext)
			die(NULL, "rendezvous runs: the server's rmsg-perf is older than rendezvous (no CTL_CAP_RNDV)");
	if (opt.thresh_set) {
		run_thresh = opt.rndv_thresh;
	} else {
		th = rmsg_ep_rndv_threshold(w->ep);
		run_thresh = th == SIZE_MAX ? THRESH_NEVER : th;
	}
}

/*
 * The sizes to run: one, or (-a) powers of two from 2 up to the largest
 * message every channel can carry, in both directions for lat; with
 * rendezvous, up to --max-size (64 MiB), leaving out sizes that neither
 * protocol can carry (above the eager limit, under the threshold).
 */
static void make_sizes(void)
{
	uint32_t limit = UINT32_MAX, s, top;
	int t, i, skipped = 0;

	for (t = 0; t < opt.threads; t++) {
		struct worker *w = &workers[t];

		for (i = 0; i < w->nch; i++)
			if (w->ch[i].max_msg < limit)
				limit = w->ch[i].max_msg;
		if ((opt.test == TEST_LAT || opt.test == TEST_RECOVER) &&
		    w->peer_max < limit)
			limit = w->peer_max;
	}
	sizes = calloc(33, sizeof(*sizes));
	if (!sizes)
		die(NULL, "out of memory");
	if (opt.test == TEST_RECOVER && (opt.reg || opt.size > limit))
		die(NULL, "recover runs eager messages of at most %u bytes (and rendezvous ones with --rndv-every)",
		    limit);
	if (opt.rndv_every && !workers[0].ext)
		die(NULL, "--rndv-every: the server's rmsg-perf is older than rendezvous (no CTL_CAP_RNDV)");
	/* Larger than any eager message: rendezvous, from registered memory. */
	if (!opt.all && opt.size > limit)
		opt.reg = true;
	if (opt.reg)
		reg_setup(limit);
	if (!opt.all) {
		if (!size_ok(opt.size, limit))
			die(NULL, "%u-byte messages: the largest eager message the channels carry is %u bytes (a larger receive block, -b, allows more), and rendezvous starts at %" PRIu64 " bytes (--rndv-thresh)",
			    opt.size, limit, run_thresh);
		sizes[nsizes++] = opt.size;
		return;
	}
	top = !opt.reg ? limit : opt.max_size ? opt.max_size : MAX_ALL_SIZE;
	for (s = MIN_ALL_SIZE; s && s <= top; s <<= 1) {
		if (size_ok(s, limit))
			sizes[nsizes++] = s;
		else
			skipped++;
	}
	if (skipped && !opt.json)
		fprintf(stderr, "rmsg-perf: %d sizes left out: above the largest eager message (%u bytes) and below the rendezvous threshold (%" PRIu64 ")\n",
			skipped, limit, run_thresh);
	if (!nsizes)
		die(NULL, "no size to run");
}

static void report(int s)
{
	perf_test->report(s);
	fflush(stdout);
}

void *cli_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t most = 0;
	struct ctl run;
	int s;

	sysctr_open(&w->sc);
	open_ep(w);
	cli_connect(w);

	pthread_barrier_wait(&barrier);
	if (!w->idx)
		make_sizes();
	pthread_barrier_wait(&barrier);

	for (s = 0; s < nsizes; s++)
		if (default_iters(sizes[s]) > most)
			most = default_iters(sizes[s]);
	if (perf_test->samples) {
		w->samples = calloc(most ? most : 1, sizeof(*w->samples));
		if (!w->samples)
			die(w, "out of memory");
	}

	for (s = 0; s < nsizes; s++) {
		w->size = sizes[s];
		w->iters = default_iters(w->size);
		w->warmup = default_warmup(w->size);
		w->window = opt.window;
		w->flags = opt.full_check ? CTL_F_FULL_CHECK : 0;
		if (opt.reg)
			w->flags |= CTL_F_REG | (opt.zc ? CTL_F_ZC : 0) |
				    (opt.put ? CTL_F_PUT : 0) |
				    (opt.unreg ? CTL_F_UNREG : 0);
		w->thresh = run_thresh;
		w->rndv_every = opt.rndv_every;
		setup_run(w, true, perf_test->pingpong);
		/* The threads' runs overlap: that is what rate measures. */
		pthread_barrier_wait(&barrier);
		memset(&run, 0, sizeof(run));
		run.size = w->size;
		run.iters = w->iters;
		run.warmup = w->warmup;
		run.window = w->window;
		run.flags = w->flags;
		run.rndv_thresh = w->thresh;
		run.rndv_every = w->rndv_every;
		send_ctl(w, &w->ch[0], &run, CTL_RUN);
		perf_test->client(w);
		recv_ctl(w, &w->ch[0], &w->result, CTL_BIT(CTL_RESULT));
		pthread_barrier_wait(&barrier);
		if (!w->idx)
			report(s);
	}

	memset(&run, 0, sizeof(run));
	send_ctl(w, &w->ch[0], &run, CTL_BYE);
	close_ep(w, true);
	sysctr_close(&w->sc);
	free(w->samples);
	return NULL;
}
