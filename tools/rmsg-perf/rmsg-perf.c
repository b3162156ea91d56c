// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: latency, bandwidth and message rate of rmsg's eager and
 * rendezvous messages, in the conventions of perftest and the OSU
 * benchmarks.
 *
 *   rmsg-perf [options] {lat|bw|rate} [SERVER]    (no SERVER: be the server)
 *   rmsg-perf [options] mem ADDRESS               (memory per idle channel)
 *   rmsg-perf [options] recover [SERVER]          (repair time after faults)
 *   rmsg-perf --fault=none -D SECS recover [SERVER]  (a checked stream,
 *                                           under faults made elsewhere)
 *   rmsg-perf --rndv-every=N ... recover    (every Nth message of recover's
 *                                           streams by rendezvous)
 *
 * Server and client take the same options. The client connects, tells the
 * server what to run (HELLO, then one RUN per message size), and prints
 * the results; the server runs the other side and reports what it measured
 * (RESULT). Documentation/bench.rst describes the tests and their figures.
 *
 * Every data message carries its sequence number in its first and last 8
 * bytes (or in every byte, for messages under 16 bytes), and every one
 * received is checked for its length, channel and sequence number. A
 * mismatch stops the run with an error instead of a number: a benchmark
 * must not report figures for data that did not arrive intact and in order.
 *
 * Rendezvous runs (sizes above the largest eager message, --zc, --put,
 * --rndv-thresh, --max-size) send from and receive into memory both sides
 * registered with rmsg_reg(), through the library's own choice of protocol
 * (rmsg_send()) or zero copy always (rmsg_send_zc()); a rendezvous message
 * is received with rmsg_recv_into() and checked when its completion comes.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rmsg.h>

#include "rmsg-perf.h"

#define DEFAULT_PORT	18520	/* perftest's is 18515: both may run */
#define MAX_CHANNELS	1024	/* per thread */
#define MAX_THREADS	64
#define MIN_ALL_SIZE	2	/* -a starts here, as perftest's does */

/* OSU-style defaults (osu_latency, osu_bw): see Documentation/bench.rst. */
#define LAT_ITERS	10000
#define LAT_WARMUP	100
#define LAT_ITERS_LARGE	1000
#define LAT_WARMUP_LARGE 10
#define LARGE_SIZE	8192
#define BW_WINDOW	64
#define BW_LOOPS	100	/* windows measured */
#define BW_SKIP		10	/* windows of warm-up */
/* Above HUGE_SIZE (rendezvous only) a message takes seconds under TCG. */
#define HUGE_SIZE	(1U << 20)
#define LAT_ITERS_HUGE	100
#define LAT_WARMUP_HUGE	5
#define BW_MSGS_HUGE	32	/* messages, not windows */
#define BW_SKIP_HUGE	4

/*
 * Registered buffers of rendezvous runs: per channel a ring of slots, one
 * per send in flight (the sender may not touch a message's bytes until its
 * completion) and one per receive answered. More than twice the kernel's
 * window of rendezvous transfers per channel gains nothing, and the memory
 * of one thread's slots is bounded (it is pinned, and the test guest has
 * 2 GiB for both sides).
 */
#define RNDV_SLOTS	16
#define DEFAULT_REG_MEM	(128UL << 20)
#define MAX_ALL_SIZE	(64U << 20)	/* -a with rendezvous stops here */
#define THRESH_NEVER	UINT64_MAX	/* --rndv-thresh=never */

/* recover: faults per run, and the pause from one repair to the next fault */
#define RECOVER_FAULTS	100
#define RECOVER_INTERVAL_MS 200

/*
 * recover --rndv-every: per channel and direction MIX_SLOTS buffers of
 * MIX_STRIDE bytes, each for one rendezvous message of 1 byte to MIX_MAX
 * that starts at an offset of up to 4 KiB into it. At most MIX_SLOTS
 * rendezvous messages of a channel's direction are in flight (the
 * kernel's window is 8 too).
 */
#define MIX_SLOTS	8
#define MIX_MAX		(192U << 10)
#define MIX_STRIDE	(MIX_MAX + 4096)

enum test {
	TEST_LAT = 1,
	TEST_BW,
	TEST_RATE,
	TEST_MEM,
	TEST_RECOVER,
};

static const char * const test_names[] = {
	[TEST_LAT] = "lat", [TEST_BW] = "bw", [TEST_RATE] = "rate",
	[TEST_MEM] = "mem", [TEST_RECOVER] = "recover",
};

static struct options {
	enum test test;
	uint32_t size;		/* 0: the test's default */
	bool all;
	int64_t iters;		/* -1: default */
	int64_t warmup;		/* -1: default */
	uint32_t window;
	int channels;
	int threads;
	uint16_t port;
	uint32_t block;
	bool sqpoll;
	uint32_t sqpoll_idle_ms;	/* 0: the module's default */
	bool json;
	bool full_check;
	bool more;		/* data sends with RMSG_SEND_MORE */
	int timeout_s;
	const char *server;	/* NULL: be the server */

	/* Rendezvous. */
	bool reg;		/* registered buffers, rmsg_send(): see above */
	bool zc;		/* rmsg_send_zc() for every message */
	bool put;		/* RPut (RMSG_ZC_PUT) */
	bool thresh_set;
	uint64_t rndv_thresh;	/* THRESH_NEVER: never automatically */
	uint32_t max_size;	/* -a stops here (0: the default) */
	uint64_t reg_mem;	/* registered bytes per thread and side */

	/* recover. */
	uint32_t fault;		/* enum rmsg_fault_kind, 0: alternate both */
	uint32_t interval_ms;	/* from one repair to the next fault */
	bool no_fault;		/* --fault=none: inject nothing */
	uint32_t duration_s;	/* --fault=none: stream this long */
	uint32_t rndv_every;	/* every this many-th message rendezvous */
	bool window_set;
} opt = {
	.iters = -1,
	.warmup = -1,
	.window = BW_WINDOW,
	.channels = 1,
	.threads = 1,
	.port = DEFAULT_PORT,
	.timeout_s = 60,
	.reg_mem = DEFAULT_REG_MEM,
	.fault = RMSG_FAULT_QP_ERROR,
	.interval_ms = RECOVER_INTERVAL_MS,
	.duration_s = 10,
};

/* ------------------------------------------------------------------------
 * The control protocol between client and server. Control messages travel
 * on the first channel of each thread, at points where no data message can
 * be in the way. Fields are in host byte order; a peer of the other order
 * shows up as a bad magic number.
 *
 * The rendezvous fields came later, appended, and travel only between
 * peers that both know them: a client sets CTL_F_EXT in its HELLOs (which
 * are of the first length, CTL_V1_LEN, so an older server takes them), a
 * server that knows the extension answers with an ACK of the full length
 * and CTL_CAP_RNDV, and from then on both send full-length messages. An
 * older peer on either side thus still runs the eager tests, and a client
 * asked for rendezvous by an older server stops with a reason.
 */
#define CTL_MAGIC	0x46504d52	/* "RMPF" */
#define CTL_VERSION	1

enum ctl_type {
	CTL_HELLO = 1,	/* client, on every channel: who it is, what to run */
	CTL_ACK,	/* server: accepted (or error and why) */
	CTL_RUN,	/* client: run one message size */
	CTL_RESULT,	/* server: its side of the run */
	CTL_BYE,	/* client: done */
	CTL_ABORT,	/* either side, in a run: giving up, and why (@text) */
	CTL_STOP,	/* client: the end of a recover run's data */
};

#define CTL_F_FULL_CHECK	(1U << 0)
#define CTL_F_EXT		(1U << 1)	/* HELLO: knows the full length */
#define CTL_F_REG		(1U << 2)	/* RUN: registered buffers */
#define CTL_F_ZC		(1U << 3)	/* RUN: rmsg_send_zc() always */
#define CTL_F_PUT		(1U << 4)	/* RUN: RPut */

#define CTL_CAP_RNDV		(1U << 0)	/* ACK: the flags above */

struct ctl {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t test;
	uint32_t threads;
	uint32_t thread;
	uint32_t channels;
	uint32_t chan_idx;	/* HELLO: which of the thread's channels */
	uint32_t size;		/* RUN */
	uint32_t window;	/* RUN */
	uint32_t flags;		/* RUN: CTL_F_* */
	uint32_t max_msg;	/* ACK: largest message the server can send */
	int32_t error;		/* ACK: 0, or an errno and @text */
	uint64_t iters;		/* RUN */
	uint64_t warmup;	/* RUN */
	uint64_t msgs;		/* RESULT: messages measured */
	uint64_t bytes;		/* RESULT: their payload bytes */
	uint64_t t0, t1;	/* RESULT: the measured interval, server's ns */
	uint64_t syscalls;	/* RESULT: the server's, in that interval */
	/*
	 * RESULT of recover: @msgs pings echoed, @bytes bytes written again,
	 * @iters pings that came by rendezvous, @warmup echoes sent so
	 */
	uint32_t sc_method;	/* RESULT: enum sc_method */
	/*
	 * RUN of recover (CTL_F_EXT peers): every this many-th data message
	 * goes by rendezvous, 0: none. A peer before it sends 0 here.
	 */
	uint32_t rndv_every;
	char text[96];		/* ACK: why the server refused; ABORT: why */
	/* Extension (CTL_F_EXT): */
	uint64_t rndv_thresh;	/* RUN: the endpoints' threshold */
	/* RESULT: measured ones that came rendezvous (recover: records the
	 * server wrote again)
	 */
	uint64_t rndv_msgs;
	uint32_t caps;		/* ACK: CTL_CAP_* */
	uint32_t repairs;	/* RESULT, recover: the server's repairs */
};

#define CTL_V1_LEN	offsetof(struct ctl, rndv_thresh)

/* ------------------------------------------------------------------------
 * Threads, endpoints and channels.
 */
struct chan {
	uint32_t id;		/* the endpoint's channel id */
	uint32_t max_msg;	/* largest message it can send */
	uint64_t tx_seq;	/* data messages sent */
	uint64_t rx_seq;	/* data messages received */
	uint32_t inflight;	/* sends not completed yet */
	bool open;
	uint64_t retry_at;	/* client: connect again then (ns), or 0 */

	/* Rendezvous runs: the channel's slots in the worker's region. */
	uint8_t *tx_slots, *rx_slots;
	uint32_t tx_busy;	/* slots of zero-copy sends in flight */
	uint32_t rx_busy;	/* slots answered, not completed */
	uint64_t rx_answered;	/* rendezvous messages answered */

	/* recover: the rendezvous mix (--rndv-every) and the echoes. */
	uint64_t mark;		/* client: messages taken before the fault */
	uint64_t owed;		/* server: echoes not sent yet */
	uint64_t mix_rx[MIX_SLOTS];	/* seq + 1 answered into a slot, 0 */
	uint32_t mix_pending;	/* answers not completed */
	uint64_t rndv_sent, rndv_arrived;
};

struct worker {
	int idx;
	bool server;
	pthread_t tid;
	struct rmsg_ep ep;
	struct sysctr sc;
	struct chan ch[MAX_CHANNELS];
	int nch;		/* channels of this thread */
	int32_t *by_id;		/* endpoint channel id -> index in ch[] */
	uint32_t *unplaced;	/* server: accepted, no HELLO yet */
	int nunplaced;
	int placed;		/* server: channels with their HELLO */
	bool closing;		/* CLOSED events are expected now */
	int lost;		/* a channel ended unasked: its error, or 0 */
	uint32_t lost_id;
	uint32_t peer_max;	/* the server's largest message */

	/* The run in progress. */
	uint32_t size;
	uint64_t iters, warmup;
	uint32_t window;
	uint32_t flags;
	uint64_t thresh;	/* rendezvous threshold (CTL_F_REG) */
	bool zc_now;		/* this run's sends go rendezvous */
	uint32_t ntx, nrx;	/* slots per channel */
	size_t stride;		/* bytes from one slot to the next */

	/* The registered region (rendezvous runs), grown as needed. */
	uint8_t *reg;
	size_t reg_len;
	uint32_t reg_handle;

	/* The control protocol's extension (see struct ctl). */
	size_t ctl_len;
	bool ext;
	bool aborting;		/* giving up: failed sends are expected */

	/* What this side measured of it. */
	uint64_t *samples;	/* lat client: round trips, ns */
	uint64_t sys;		/* system calls in the measured part */
	uint64_t msgs;		/* messages sent + received in it */
	uint64_t t0, t1;	/* stream client: sender's interval */
	struct ctl result;	/* client: the server's RESULT */
	uint64_t arrived;	/* data messages received whole, this run */
	uint64_t rndv_msgs;	/* of which by rendezvous, measured part */
	uint64_t clock_at;	/* stream server: the arrival starting it */
	uint64_t first_measured;	/* lat: the first measured message */
	uint64_t rx_t0, rx_t1, rx_s0;	/* stream server's interval */

	/*
	 * recover's rendezvous mix: every @rndv_every-th message of a
	 * channel's direction goes rendezvous. A rendezvous message that
	 * cannot be answered yet (its slot busy, the SQ full) is @held:
	 * peeking goes on past it, so nothing is peeked until it is
	 * answered.
	 */
	uint32_t rndv_every;
	struct rmsg_msg held;
	bool holding;
};

static struct worker *workers;
static pthread_barrier_t barrier;
static uint32_t *sizes;
static int nsizes;

static void dump_chans(struct worker *w);

static _Noreturn void die(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	if (w)
		fprintf(stderr, "rmsg-perf: %s %d: ",
			w->server ? "server thread" : "thread", w->idx);
	else
		fputs("rmsg-perf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* What became of the channels, for a failed repair. */
	if (w && opt.test == TEST_RECOVER)
		dump_chans(w);
	/* The kernel ends every channel of the process with it. */
	exit(1);
}

/*
 * Every channel this process may see, with its epoch and repair counters;
 * @when says at what point.
 */
static void print_chans(struct worker *w, const char *when)
{
	struct rmsg_chan_info *info = NULL;
	struct rmsg_dev_info *devs = NULL;
	const char *dev;
	uint32_t me = 0;
	int n, i, j, ndevs;

	n = rmsg_chan_list(w->ep.fd, RMSG_CHAN_LIST_F_ALL, &info, &me);
	if (n < 0)
		return;
	/* Which device each channel is on, by name. */
	ndevs = rmsg_query_devices(w->ep.fd, &devs, NULL);
	if (ndevs < 0) {
		ndevs = 0;
		devs = NULL;
	}
	fprintf(stderr, "rmsg-perf: channels%s (this endpoint is %u):\n", when,
		me);
	for (i = 0; i < n; i++) {
		dev = "-";
		for (j = 0; j < ndevs; j++)
			if (info[i].dev && devs[j].index == info[i].dev - 1)
				dev = devs[j].name;
		fprintf(stderr, "  ep %u chan %u %s epoch %u attempts %u of %u repairs %u retx %" PRIu64 "/%" PRIu64 " last error %d recovering %.3f ms dev %s\n",
			info[i].ep_id, info[i].channel,
			rmsg_chan_state_name(info[i].state), info[i].epoch,
			info[i].attempts, info[i].max_attempts,
			info[i].repairs, (uint64_t)info[i].retx_msgs,
			(uint64_t)info[i].retx_bytes, info[i].last_error,
			info[i].recover_ns / 1e6, dev);
	}
	free(info);
	free(devs);
}

/*
 * For a failed run: the ends of channels still to be taken from the
 * endpoint (a failed send comes before its channel's CLOSED event), and
 * the channel list.
 */
static void dump_chans(struct worker *w)
{
	struct rmsg_event ev[64];
	int n, i;

	n = rmsg_ep_progress(&w->ep, ev, 64);
	for (i = 0; i < n; i++)
		if (ev[i].kind == RMSG_CQE_CLOSED)
			fprintf(stderr, "rmsg-perf: channel %u ended: %s\n",
				ev[i].channel, ev[i].res ?
				strerror(-ev[i].res) : "closed by the peer");
	print_chans(w, "");
}

static struct chan *chan_of(struct worker *w, uint32_t id)
{
	int32_t i = id < RMSG_MAX_CHANNELS ? w->by_id[id] : -1;

	return i >= 0 ? &w->ch[i] : NULL;
}

/*
 * Busy-waiting with a deadline: every spin of a wait loop calls tick(),
 * which takes events now and then (a send area or a window may be waiting
 * for completions, and a closed channel must end the wait) and fails the
 * run when nothing has happened for opt.timeout_s seconds.
 */
struct waiter {
	uint64_t deadline;
	unsigned int spins;
	const char *what;
};

static int pump(struct worker *w);

static void wait_init(struct waiter *wt, const char *what)
{
	wt->deadline = now_ns() + opt.timeout_s * 1000000000ULL;
	wt->spins = 0;
	wt->what = what;
}

static void tick(struct worker *w, struct waiter *wt)
{
	if (w->lost)
		die(w, "channel %u ended while waiting for %s: %s",
		    w->lost_id, wt->what, w->lost == -ECONNRESET ?
		    "closed by the peer" : strerror(-w->lost));
	wt->spins++;
	if (!(wt->spins & 63) && pump(w) > 0)
		wt->deadline = now_ns() + opt.timeout_s * 1000000000ULL;
	if (!(wt->spins & 4095) && now_ns() > wt->deadline)
		die(w, "nothing happened for %d s while waiting for %s",
		    opt.timeout_s, wt->what);
}

/* ------------------------------------------------------------------------
 * Events.
 */
static const struct sockaddr *server_sa;
static socklen_t server_salen;

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
	c->max_msg = rmsg_channel_max_msg(&w->ep, c->id);
	if ((int32_t)c->max_msg < 0)
		die(w, "rmsg_channel_max_msg: %s", strerror(-(int)c->max_msg));
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

/*
 * The user_data of rendezvous runs' operations: data sends (whose
 * completion frees their slot) and rmsg_recv_into() answers, each with the
 * message's sequence number. Control messages and eager runs' data sends
 * carry no tag.
 */
#define TAG_TX		(1ULL << 63)
#define TAG_RX		(1ULL << 62)
#define TAG_MIX		(1ULL << 61)	/* recover's rendezvous mix */
#define TAG_SEQ		(TAG_MIX - 1)

static _Noreturn void give_up(struct worker *w, const char *fmt, ...);
static void rx_done(struct worker *w, struct chan *c,
		    const struct rmsg_event *ev);
static void mix_op(struct worker *w, struct chan *c,
		   const struct rmsg_event *ev);

static void on_op(struct worker *w, const struct rmsg_event *ev)
{
	struct chan *c = chan_of(w, ev->channel);

	if (c && (ev->user_data & TAG_MIX)) {
		mix_op(w, c, ev);
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
static int pump(struct worker *w)
{
	struct rmsg_event ev[64];
	int n, i;

	n = rmsg_ep_progress(&w->ep, ev, 64);
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

/* ------------------------------------------------------------------------
 * Messages: stamping, checking, sending, receiving.
 */
static void stamp(uint8_t *p, uint32_t len, uint64_t seq, bool full)
{
	uint32_t i;

	if (len < 16) {
		for (i = 0; i < len; i++)
			p[i] = seq >> (8 * (i & 7));
		return;
	}
	memcpy(p, &seq, 8);
	memcpy(p + len - 8, &seq, 8);
	if (full)
		for (i = 8; i < len - 8; i++)
			p[i] = seq + i;
}

static bool stamp_ok(const uint8_t *p, uint32_t len, uint64_t seq, bool full)
{
	uint64_t a, b;
	uint32_t i;

	if (len < 16) {
		for (i = 0; i < len; i++)
			if (p[i] != (uint8_t)(seq >> (8 * (i & 7))))
				return false;
		return true;
	}
	memcpy(&a, p, 8);
	memcpy(&b, p + len - 8, 8);
	if (a != seq || b != seq)
		return false;
	if (full)
		for (i = 8; i < len - 8; i++)
			if (p[i] != (uint8_t)(seq + i))
				return false;
	return true;
}

/*
 * A data message has arrived whole (checked). The stream server's clock
 * starts at the arrival of number @clock_at; @first_measured are warm-up.
 */
static void arrived(struct worker *w, bool rndv)
{
	w->arrived++;
	if (rndv && w->arrived > w->first_measured)
		w->rndv_msgs++;
	if (w->clock_at && w->arrived == w->clock_at) {
		w->rx_t0 = now_ns();
		w->rx_s0 = sysctr_read(&w->sc);
	}
}

/* An eager message that is the peer's CTL_ABORT ends the run with its why. */
static void check_abort(struct worker *w, const void *data, uint32_t len)
{
	struct ctl a;

	if (!data || len < CTL_V1_LEN || len > sizeof(a))
		return;
	memset(&a, 0, sizeof(a));
	memcpy(&a, data, len);
	if (a.magic == CTL_MAGIC && a.type == CTL_ABORT) {
		a.text[sizeof(a.text) - 1] = '\0';
		die(w, "the peer gave up: %s", a.text);
	}
}

/* Check a data message of @c (the next one expected) and release it. */
static void take_data(struct worker *w, struct chan *c,
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
	ret = rmsg_release(&w->ep, msg);
	if (ret)
		die(w, "rmsg_release: %s", strerror(-ret));
	arrived(w, false);
}

/* Build the next data message of @c in place and send it. */
static void send_data(struct worker *w, struct chan *c)
{
	unsigned int more = opt.more ? RMSG_SEND_MORE : 0;
	struct waiter wt;
	void *buf;
	int ret;

	ret = rmsg_reserve(&w->ep, c->id, w->size, &buf);
	if (ret == -EAGAIN) {
		wait_init(&wt, "room in the send area");
		do {
			pump(w);
			tick(w, &wt);
			ret = rmsg_reserve(&w->ep, c->id, w->size, &buf);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_reserve of %u bytes on channel %u: %s", w->size,
		    c->id, strerror(-ret));
	stamp(buf, w->size, c->tx_seq, w->flags & CTL_F_FULL_CHECK);
	/* -EAGAIN: no SQE free; the reservation stays for the retry. */
	ret = rmsg_msg_commit(&w->ep, c->id, w->size, more, c->tx_seq);
	if (ret == -EAGAIN) {
		wait_init(&wt, "room in the submission ring");
		do {
			pump(w);
			tick(w, &wt);
			ret = rmsg_msg_commit(&w->ep, c->id, w->size, more,
					      c->tx_seq);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_commit: %s", strerror(-ret));
	c->tx_seq++;
	c->inflight++;
}

/* Wait for the next message of @c, in place. */
static void wait_msg(struct worker *w, struct chan *c, struct rmsg_msg *msg)
{
	struct waiter wt;
	int ret;

	ret = rmsg_peek(&w->ep, c->id, msg);
	if (ret == -EAGAIN) {
		wait_init(&wt, "a message");
		do {
			tick(w, &wt);
			ret = rmsg_peek(&w->ep, c->id, msg);
		} while (ret == -EAGAIN);
	}
	if (ret)
		die(w, "rmsg_peek on channel %u: %s", c->id, strerror(-ret));
}

/*
 * Rendezvous runs: send the next data message of @c from its slot, with
 * rmsg_send() (the library picks the protocol by the threshold) or
 * rmsg_send_zc(). A zero-copy send owns its slot until its completion.
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
			ret = rmsg_send_zc(&w->ep, c->id, buf, w->size,
					   w->flags & CTL_F_PUT ?
					   RMSG_ZC_PUT : 0, TAG_TX | seq);
		else
			ret = rmsg_send(&w->ep, c->id, buf, w->size,
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
		    w->flags & CTL_F_ZC ? "rmsg_send_zc" : "rmsg_send",
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
static void answer_rndv(struct worker *w, struct chan *c,
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
	while ((ret = rmsg_recv_into(&w->ep, msg, buf, w->size,
				     TAG_RX | seq)) == -EAGAIN) {
		pump(w);
		tick(w, &wt);
	}
	if (ret)
		die(w, "rmsg_recv_into of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    seq, msg->len, c->id, strerror(-ret));
	c->rx_busy |= bit;
	c->rx_seq++;
	c->rx_answered++;
	ret = rmsg_release(&w->ep, msg);
	if (ret)
		die(w, "rmsg_release: %s", strerror(-ret));
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

/* Send the next data message of @c, the way the run asks. */
static void send_one(struct worker *w, struct chan *c)
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
static void recv_one(struct worker *w, struct chan *c)
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

static void send_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
		     enum ctl_type type)
{
	struct waiter wt;
	int ret;

	ctl->magic = CTL_MAGIC;
	ctl->version = CTL_VERSION;
	ctl->type = type;
	wait_init(&wt, "room to send a control message");
	while ((ret = rmsg_send(&w->ep, c->id, ctl, w->ctl_len, 0)) ==
	       -EAGAIN)
		tick(w, &wt);
	if (ret)
		die(w, "rmsg_send: %s", strerror(-ret));
	c->inflight++;
}

#define CTL_BIT(type)	(1U << (type))

/* Is @ctl a control message of one of the types in @types (CTL_BIT()s)? */
static bool ctl_valid(struct worker *w, const struct ctl *ctl, int len,
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
static void recv_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
		     unsigned int types)
{
	struct waiter wt;
	int ret;

	memset(ctl, 0, sizeof(*ctl));
	wait_init(&wt, "a control message");
	while ((ret = rmsg_recv(&w->ep, c->id, ctl, sizeof(*ctl))) ==
	       -EAGAIN)
		tick(w, &wt);
	if (ret == -EMSGSIZE)
		die(w, "a message larger than any control message, on channel %u",
		    c->id);
	if (ret < 0)
		die(w, "rmsg_recv on channel %u: %s", c->id, strerror(-ret));
	if (ctl_valid(w, ctl, ret, CTL_BIT(CTL_ABORT), false)) {
		ctl->text[sizeof(ctl->text) - 1] = '\0';
		die(w, "the peer gave up: %s", ctl->text);
	}
	ctl_valid(w, ctl, ret, types, true);
}

/* Wait until every send of the thread has completed. */
static void drain_sends(struct worker *w)
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
static _Noreturn void give_up(struct worker *w, const char *fmt, ...)
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

/* ------------------------------------------------------------------------
 * Endpoints.
 */
static unsigned int pow2_at_least(uint64_t n)
{
	unsigned int p = 1;

	while (p < n && p < (1U << 31))
		p <<= 1;
	return p;
}

static void open_ep(struct worker *w)
{
	struct rmsg_ep_setup p;
	uint64_t inflight, area;
	int ret;

	/*
	 * Every send in flight has a completion to come, and every channel
	 * up to two events: the CQ holds them all, so the library never has
	 * to leave one on the kernel's overflow list.
	 */
	inflight = (uint64_t)(w->server ? 4 : opt.window) * opt.channels;
	/* Rendezvous runs: each answered receive has a completion too. */
	inflight += (uint64_t)RNDV_SLOTS * opt.channels;
	memset(&p, 0, sizeof(p));
	p.cq_entries = pow2_at_least(inflight + 2 * MAX_CHANNELS + 64);
	if (p.cq_entries > RMSG_MAX_CQ_ENTRIES)
		die(w, "window × channels too large for one completion ring");
	p.sq_entries = p.cq_entries / 2;
	if (p.sq_entries > RMSG_MAX_RING_ENTRIES)
		p.sq_entries = RMSG_MAX_RING_ENTRIES;
	if (opt.sqpoll) {
		p.flags |= RMSG_EP_F_SQPOLL;
		p.sqpoll_idle_ms = opt.sqpoll_idle_ms;
	}
	/* Room for a full window of the largest message, at least 1 MiB. */
	area = inflight * ((opt.all || opt.size > RMSG_VB_MAX_PAYLOAD ?
			    RMSG_VB_MAX_PAYLOAD : opt.size) + 64);
	if (area < RMSG_LIB_SEND_AREA)
		area = RMSG_LIB_SEND_AREA;
	if (area > RMSG_SEND_AREA_MAX)
		area = RMSG_SEND_AREA_MAX;
	p.send_area_size = area;
	ret = rmsg_ep_open_setup(&w->ep, &p);
	if (ret)
		die(w, "opening an endpoint: %s", strerror(-ret));
	w->by_id = malloc(RMSG_MAX_CHANNELS * sizeof(*w->by_id));
	w->unplaced = malloc(MAX_CHANNELS * sizeof(*w->unplaced));
	if (!w->by_id || !w->unplaced)
		die(w, "out of memory");
	memset(w->by_id, 0xff, RMSG_MAX_CHANNELS * sizeof(*w->by_id));
	w->ctl_len = CTL_V1_LEN;
}

/*
 * The registered region of rendezvous runs: at least @need bytes, grown
 * (registered anew) between runs, when no transfer is using it.
 */
static void reg_grow(struct worker *w, size_t need)
{
	size_t len = (need + (2UL << 20) - 1) & ~((2UL << 20) - 1);
	void *p;
	int ret;

	if (need <= w->reg_len)
		return;
	if (w->reg) {
		ret = rmsg_dereg(&w->ep, w->reg_handle);
		if (ret)
			die(w, "rmsg_dereg: %s", strerror(-ret));
		munmap(w->reg, w->reg_len);
		w->reg = NULL;
		w->reg_len = 0;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die(w, "mapping %zu bytes for the buffers: %s", len,
		    strerror(errno));
	ret = rmsg_reg(&w->ep, p, len, &w->reg_handle);
	if (ret == -ENOMEM)
		die(w, "registering %zu bytes: %s (pinned memory counts in RLIMIT_MEMLOCK: raise ulimit -l, or lower --reg-mem)",
		    len, strerror(-ret));
	if (ret)
		die(w, "registering %zu bytes: %s", len, strerror(-ret));
	w->reg = p;
	w->reg_len = len;
}

static uint32_t clamp_slots(uint64_t fit, uint32_t most)
{
	if (fit > most)
		fit = most;
	return fit ? fit : 1;
}

/*
 * Before a run (both sides, outside the measured part): the endpoint's
 * threshold, whether this run's sends go rendezvous, and the slots. A
 * stream's sender needs a slot per send in flight, its receiver one per
 * answer outstanding; a ping-pong needs one each way, and a second one to
 * send from while the previous send's completion is still on its way.
 */
static void setup_run(struct worker *w, bool sender, bool receiver)
{
	uint64_t per_chan;
	size_t need;
	int i, ret;

	w->arrived = 0;
	w->rndv_msgs = 0;
	w->clock_at = 0;
	w->first_measured = 0;
	w->zc_now = false;
	w->ntx = w->nrx = 0;
	if (!(w->flags & CTL_F_REG))
		return;
	ret = rmsg_ep_set_rndv_threshold(&w->ep, w->thresh == THRESH_NEVER ?
					 SIZE_MAX : (size_t)w->thresh);
	if (ret)
		die(w, "rmsg_ep_set_rndv_threshold(%" PRIu64 "): %s",
		    w->thresh, strerror(-ret));
	w->zc_now = (w->flags & CTL_F_ZC) || w->size >= w->thresh;
	w->stride = w->size < 4096 ? (w->size + 63) & ~63U :
		    ((size_t)w->size + 4095) & ~(size_t)4095;
	per_chan = opt.reg_mem / w->nch / w->stride;
	if (sender && receiver) {
		w->nrx = 1;
		w->ntx = clamp_slots(per_chan > 1 ? per_chan - 1 : 1, 2);
	} else if (sender) {
		w->ntx = clamp_slots(per_chan, w->window < RNDV_SLOTS ?
						w->window : RNDV_SLOTS);
	} else {
		w->nrx = clamp_slots(per_chan, RNDV_SLOTS);
	}
	need = (size_t)w->nch * (w->ntx + w->nrx) * w->stride;
	reg_grow(w, need);
	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->tx_slots = w->reg + (size_t)i * (w->ntx + w->nrx) *
			      w->stride;
		c->rx_slots = c->tx_slots + (size_t)w->ntx * w->stride;
		c->tx_busy = c->rx_busy = 0;
	}
}

/*
 * End the thread's channels and endpoint: the client closes them, the
 * server waits for that.
 */
static void close_ep(struct worker *w, bool initiate)
{
	struct waiter wt;
	int i, ret, open;

	/* From here on a channel that ends is expected to. */
	w->closing = true;
	w->lost = 0;
	drain_sends(w);
	for (i = 0; initiate && i < w->nch; i++) {
		if (!w->ch[i].open)
			continue;
		ret = rmsg_ep_close_channel(&w->ep, w->ch[i].id, 0);
		if (ret)
			die(w, "closing channel %u: %s", w->ch[i].id,
			    strerror(-ret));
	}
	wait_init(&wt, "the channels to close");
	do {
		for (i = 0, open = 0; i < w->nch; i++)
			open += w->ch[i].open;
		if (open)
			tick(w, &wt);
	} while (open);
	rmsg_ep_close(&w->ep);
	if (w->reg)
		munmap(w->reg, w->reg_len);
	free(w->by_id);
	free(w->unplaced);
}

/* ------------------------------------------------------------------------
 * The tests, each in its client and its server half.
 */

/*
 * Ping-pong: the client sends message i on channel i % nch and waits for
 * the server's message i on the same channel. A sample is one round trip;
 * half of it is reported, as perftest's *_lat tests do.
 */
static void lat_client(struct worker *w)
{
	uint64_t i, n = w->warmup + w->iters, t0, t1, s0 = 0;
	struct chan *c;

	w->first_measured = w->warmup;
	for (i = 0; i < n; i++) {
		c = &w->ch[i % w->nch];
		if (i == w->warmup)
			s0 = sysctr_read(&w->sc);
		t0 = now_ns();
		send_one(w, c);
		recv_one(w, c);
		t1 = now_ns();
		if (i >= w->warmup)
			w->samples[i - w->warmup] = t1 - t0;
		/* Completions free the send area: take them as they come. */
		pump(w);
	}
	w->sys = sysctr_read(&w->sc) - s0;
	w->msgs = 2 * w->iters;
	/* A zero-copy send's buffer is the transfer's until it completes. */
	if (w->flags & CTL_F_REG)
		drain_sends(w);
}

static void lat_server(struct worker *w, struct ctl *res)
{
	uint64_t i, n = w->warmup + w->iters, s0 = 0;
	struct chan *c;

	w->first_measured = w->warmup;
	for (i = 0; i < n; i++) {
		c = &w->ch[i % w->nch];
		if (i == w->warmup)
			s0 = sysctr_read(&w->sc);
		recv_one(w, c);
		send_one(w, c);
		pump(w);
	}
	res->syscalls = sysctr_read(&w->sc) - s0;
	res->msgs = 2 * w->iters;
	res->rndv_msgs = w->rndv_msgs;
	if (w->flags & CTL_F_REG)
		drain_sends(w);
}

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
		ret = rmsg_peek_any(&w->ep, &msg);
		if (ret == -EAGAIN) {
			/* Answers complete through the events. */
			if (w->flags & CTL_F_REG)
				pump(w);
			tick(w, &wt);
			continue;
		}
		if (ret)
			die(w, "rmsg_peek_any: %s", strerror(-ret));
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

/*
 * recover: how long a repair takes, seen by a program. The client keeps a
 * window (-W, default 1: a ping-pong) of checked pings out on each channel
 * and the server echoes each one; now and then (--interval after the last
 * repair) the client injects a fault into one of its own channels, in turn,
 * and a sample is the time from just before rmsg_inject_fault() to the
 * arrival of that channel's next echo. Before the injection the client
 * takes every echo already there, so that the one sampled came after it
 * (or in the instant between). Every message is checked for its bytes and
 * its place in the sequence, and at the end every ping must have come
 * back: a lost, repeated or damaged message fails the run.
 *
 * With --fault=none the client injects nothing: the checked stream runs for
 * --duration seconds while faults come from elsewhere (a link taken down,
 * packets dropped, a peer killed), and the same checks apply at its end.
 */

/* The repair counters of the caller's own channels, summed. */
struct repair_count {
	uint64_t repairs, retx_msgs, retx_bytes, recover_ns;
};

/*
 * Not a kind of RMSG_IOC_FAULT: the client deletes the RDMA device under
 * its channels (rxe0) and makes it again on RMSG_NETDEV; a sample runs
 * from the end of "rdma link add" to the channel's next echo.
 */
#define FAULT_HCA_READD		(RMSG_FAULT_DEVICE_FATAL + 1)
#define READD_DEV		"rxe0"

/* What the client measured of a recover run, for report_recover(). */
static struct {
	uint64_t faults, by_kind[FAULT_HCA_READD + 1];
	uint64_t not_open;	/* injections refused with ENOTCONN, retried */
	uint64_t sent, received;
	uint64_t rndv_sent, rndv_received;	/* of which by rendezvous */
	uint64_t t0, t1;
	uint8_t *kinds;		/* the kind of each sample's fault */
	struct repair_count rc;
	struct chan *fc;	/* the channel of the fault under way */
	uint64_t t_inj;		/* when that fault was injected */
	uint64_t next_at;	/* when the next fault is due */
} rec;

/* Is @msg the client's CTL_STOP (on the first channel)? */
static bool is_stop(struct worker *w, struct chan *c,
		    const struct rmsg_msg *msg)
{
	struct ctl ctl;

	if (c != &w->ch[0] || msg->kind != RMSG_MSG_EAGER || !msg->data ||
	    msg->len != w->ctl_len)
		return false;
	memset(&ctl, 0, sizeof(ctl));
	memcpy(&ctl, msg->data, msg->len);
	return ctl_valid(w, &ctl, msg->len, CTL_BIT(CTL_STOP), false);
}

/*
 * The rendezvous mix (--rndv-every=N): message seq of a channel's
 * direction goes by rendezvous when seq % N == N - 1, with rmsg_send_zc()
 * from a registered slot, RGet and RPut in turn, 1 byte to MIX_MAX long
 * and starting anywhere in the first 4 KiB of its slot; every byte is
 * stamped. The receiver answers it with rmsg_recv_into() into a slot of
 * its own, at an offset of its own, with exactly the message's length as
 * room, and checks every byte when the answer completes: only then has it
 * arrived. The other messages are eager, as without the mix.
 */
static bool mix_rndv(const struct worker *w, uint64_t seq)
{
	return w->rndv_every && seq % w->rndv_every == w->rndv_every - 1;
}

static uint32_t mix_len(const struct worker *w, uint64_t seq)
{
	uint32_t h = (uint32_t)seq * 2654435761U;

	return mix_rndv(w, seq) ? 1 + (h >> 8) % MIX_MAX : w->size;
}

static uint32_t mix_slot(const struct worker *w, uint64_t seq)
{
	return seq / w->rndv_every % MIX_SLOTS;
}

/* Where message @seq goes in its slot: sender's (@tx) or receiver's. */
static uint8_t *mix_buf(const struct worker *w, const struct chan *c,
			uint64_t seq, bool tx)
{
	uint32_t off = tx ? seq * 97 % 4093 : seq * 31 % 4091;

	return (tx ? c->tx_slots : c->rx_slots) +
	       (size_t)mix_slot(w, seq) * MIX_STRIDE + off;
}

static const char *mix_proto(const struct worker *w, uint64_t seq)
{
	return seq / w->rndv_every % 2 ? "RPut" : "RGet";
}

/* The slots of the mix, in a region; every channel's counters from 0. */
static void mix_setup(struct worker *w)
{
	struct rmsg_version ver;
	int i, ret;

	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->mark = c->owed = 0;
		c->mix_pending = 0;
		c->tx_busy = 0;
		c->rndv_sent = c->rndv_arrived = 0;
		memset(c->mix_rx, 0, sizeof(c->mix_rx));
	}
	w->holding = false;
	if (!w->rndv_every)
		return;
	ret = rmsg_query_version(w->ep.fd, &ver);
	if (ret && ret != -EPROTO)
		die(w, "rmsg_query_version: %s", strerror(-ret));
	if (!(ver.features & RMSG_FEAT_RNDV))
		die(w, "--rndv-every: this rmsg module has no RMSG_FEAT_RNDV");
	reg_grow(w, (size_t)w->nch * 2 * MIX_SLOTS * MIX_STRIDE);
	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->tx_slots = w->reg + (size_t)i * 2 * MIX_SLOTS * MIX_STRIDE;
		c->rx_slots = c->tx_slots + (size_t)MIX_SLOTS * MIX_STRIDE;
	}
}

/* May the next message of @c go now (a rendezvous one needs its slot)? */
static bool mix_can_send(const struct worker *w, const struct chan *c)
{
	return !mix_rndv(w, c->tx_seq) ||
	       !(c->tx_busy & (1U << mix_slot(w, c->tx_seq)));
}

/* Send the next message of @c, which mix_can_send() allowed. */
static void mix_send(struct worker *w, struct chan *c)
{
	uint64_t seq = c->tx_seq;
	uint32_t len = mix_len(w, seq);
	uint8_t *buf = mix_buf(w, c, seq, true);
	struct waiter wt;
	int ret;

	if (!mix_rndv(w, seq)) {
		send_data(w, c);
		return;
	}
	stamp(buf, len, seq, true);
	wait_init(&wt, "room to send a rendezvous message");
	while ((ret = rmsg_send_zc(&w->ep, c->id, buf, len,
				   seq / w->rndv_every % 2 ? RMSG_ZC_PUT : 0,
				   TAG_TX | TAG_MIX | seq)) == -EAGAIN) {
		pump(w);
		tick(w, &wt);
	}
	if (ret)
		die(w, "rmsg_send_zc (%s) of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    mix_proto(w, seq), seq, len, c->id, strerror(-ret));
	c->tx_busy |= 1U << mix_slot(w, seq);
	c->tx_seq++;
	c->inflight++;
	c->rndv_sent++;
}

/*
 * A message of @c has arrived whole and checked: the first one the client
 * took after the fault under way was injected on its channel ends the
 * fault's sample.
 */
static void mix_arrival(struct worker *w, struct chan *c, uint64_t seq)
{
	uint64_t t = now_ns();

	if (c != rec.fc || seq < c->mark)
		return;
	w->samples[rec.faults - 1] = t - rec.t_inj;
	rec.fc = NULL;
	rec.next_at = t + opt.interval_ms * 1000000ULL;
}

/*
 * Answer @msg, the rendezvous message @c expects next, and release it:
 * 0, or -EAGAIN when it cannot be answered yet (its slot is busy, the SQ
 * full). The slot is spoilt first (every byte differs from the message's),
 * so that a transfer that wrote nothing, or only part, cannot pass.
 */
static int mix_answer(struct worker *w, struct chan *c,
		      const struct rmsg_msg *msg)
{
	uint64_t seq = c->rx_seq;
	uint32_t len = mix_len(w, seq), slot = mix_slot(w, seq);
	uint8_t *buf = mix_buf(w, c, seq, false);
	int ret;

	if (msg->len != len)
		die(w, "rendezvous message %" PRIu64 " on channel %u: %u bytes announced, expected %u (lost, repeated or reordered?)",
		    seq, c->id, msg->len, len);
	if (c->mix_rx[slot])
		return -EAGAIN;
	stamp(buf, len, ~seq, true);
	ret = rmsg_recv_into(&w->ep, msg, buf, len, TAG_RX | TAG_MIX | seq);
	if (ret == -EAGAIN)
		return ret;
	if (ret)
		die(w, "rmsg_recv_into of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    seq, len, c->id, strerror(-ret));
	c->mix_rx[slot] = seq + 1;
	c->mix_pending++;
	c->rx_seq++;
	if (w->server)
		c->owed++;
	ret = rmsg_release(&w->ep, msg);
	if (ret)
		die(w, "rmsg_release: %s", strerror(-ret));
	return 0;
}

/*
 * Take @msg, the next message of its channel: an eager one is checked and
 * released, a rendezvous one answered (or -EAGAIN: hold it).
 */
static int mix_take(struct worker *w, const struct rmsg_msg *msg)
{
	struct chan *c = chan_of(w, msg->channel);

	if (!c)
		die(w, "a message on unknown channel %u", msg->channel);
	if (mix_rndv(w, c->rx_seq)) {
		if (msg->kind != RMSG_MSG_RNDV) {
			check_abort(w, msg->data, msg->len);
			die(w, "message %" PRIu64 " on channel %u came eager (%u bytes), expected rendezvous: lost, repeated or reordered",
			    c->rx_seq, c->id, msg->len);
		}
		return mix_answer(w, c, msg);
	}
	if (msg->kind != RMSG_MSG_EAGER)
		die(w, "message %" PRIu64 " on channel %u came by rendezvous (%u bytes), expected eager: lost, repeated or reordered",
		    c->rx_seq, c->id, msg->len);
	take_data(w, c, msg);
	if (w->server)
		c->owed++;
	mix_arrival(w, c, c->rx_seq - 1);
	return 0;
}

/* The held message, if any, answered at last? */
static bool mix_unheld(struct worker *w)
{
	if (w->holding &&
	    mix_take(w, &w->held) == -EAGAIN)
		return false;
	w->holding = false;
	return true;
}

/*
 * Take the next message of any channel, if there is one: 1 when one was
 * taken (or held), 0 when none (or the held one still waits). The server
 * (@stop not NULL) is told of the client's CTL_STOP, which it releases.
 */
static int mix_rx(struct worker *w, bool *stop)
{
	struct rmsg_msg msg;
	int ret;

	if (w->holding) {
		if (!mix_unheld(w)) {
			pump(w);
			return 0;
		}
		return 1;
	}
	ret = rmsg_peek_any(&w->ep, &msg);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		die(w, "rmsg_peek_any: %s (channel %u)", strerror(-ret),
		    msg.channel);
	if (stop && is_stop(w, chan_of(w, msg.channel), &msg)) {
		ret = rmsg_release(&w->ep, &msg);
		if (ret)
			die(w, "rmsg_release: %s", strerror(-ret));
		*stop = true;
		return 1;
	}
	if (mix_take(w, &msg) == -EAGAIN) {
		w->held = msg;
		w->holding = true;
	}
	return 1;
}

/* The completion of a send or an answer of the mix. */
static void mix_op(struct worker *w, struct chan *c,
		   const struct rmsg_event *ev)
{
	uint64_t seq = ev->user_data & TAG_SEQ, got = 0;
	uint32_t len, slot;
	const uint8_t *buf;

	if (!w->rndv_every || !mix_rndv(w, seq))
		die(w, "completion of a rendezvous operation not made, channel %u, message %" PRIu64,
		    c->id, seq);
	len = mix_len(w, seq);
	slot = mix_slot(w, seq);
	if (ev->user_data & TAG_TX) {
		if (ev->res)
			die(w, "rendezvous send (%s) of message %" PRIu64 " (%u bytes) on channel %u failed: %s",
			    mix_proto(w, seq), seq, len, c->id,
			    strerror(-ev->res));
		if (!(c->tx_busy & (1U << slot)) || !c->inflight)
			die(w, "completion of a rendezvous send not made, channel %u, message %" PRIu64,
			    c->id, seq);
		c->tx_busy &= ~(1U << slot);
		c->inflight--;
		return;
	}
	if (c->mix_rx[slot] != seq + 1)
		die(w, "completion of a rendezvous answer not made, channel %u, message %" PRIu64,
		    c->id, seq);
	if (ev->res)
		die(w, "rendezvous message %" PRIu64 " (%s, %u bytes) on channel %u: its answer failed: %s",
		    seq, mix_proto(w, seq), len, c->id, strerror(-ev->res));
	buf = mix_buf(w, c, seq, false);
	if (ev->len != len || !stamp_ok(buf, len, seq, true)) {
		if (len >= 8)
			memcpy(&got, buf, 8);
		die(w, "bad rendezvous message %" PRIu64 " (%s) on channel %u: %u bytes, expected %u; first 8 bytes %#" PRIx64,
		    seq, mix_proto(w, seq), c->id, ev->len, len, got);
	}
	c->mix_rx[slot] = 0;
	c->mix_pending--;
	c->rndv_arrived++;
	arrived(w, true);
	mix_arrival(w, c, seq);
}

/* Answers of the mix not completed yet, on every channel. */
static uint32_t mix_pending(const struct worker *w)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < w->nch; i++)
		n += w->ch[i].mix_pending;
	return n;
}


/*
 * Once every channel of the caller's is OPEN: a repair is counted when
 * its channel opens again, which may be after the peer, open already,
 * has written the message that ended the sample.
 */
static void count_repairs(struct worker *w, struct repair_count *rc)
{
	struct rmsg_chan_info *info = NULL;
	struct waiter wt;
	int n, i;

	wait_init(&wt, "the channels to be repaired");
	for (;;) {
		n = rmsg_chan_list(w->ep.fd, 0, &info, NULL);
		if (n < 0)
			die(w, "rmsg_chan_list: %s", strerror(-n));
		for (i = 0; i < n; i++)
			if (info[i].state != RMSG_CHAN_INFO_OPEN)
				break;
		if (i == n)
			break;
		free(info);
		info = NULL;
		tick(w, &wt);
		usleep(1000);
	}
	memset(rc, 0, sizeof(*rc));
	for (i = 0; i < n; i++) {
		if (!chan_of(w, info[i].channel))
			continue;
		rc->repairs += info[i].repairs;
		rc->retx_msgs += info[i].retx_msgs;
		rc->retx_bytes += info[i].retx_bytes;
		rc->recover_ns += info[i].recover_ns;
	}
	free(info);
}



static const char *fault_name(uint32_t kind)
{
	return kind == FAULT_HCA_READD ? "hca-readd" :
					 rmsg_fault_kind_name(kind);
}


static uint32_t fault_kind(uint64_t k)
{
	if (opt.fault)
		return opt.fault;
	return k & 1 ? RMSG_FAULT_DISCONNECT : RMSG_FAULT_QP_ERROR;
}

/* Are all the caller's channels open? */
static bool all_open(struct worker *w)
{
	struct rmsg_chan_info *info = NULL;
	int n, i;

	n = rmsg_chan_list(w->ep.fd, 0, &info, NULL);
	if (n < 0)
		die(w, "rmsg_chan_list: %s", strerror(-n));
	for (i = 0; i < n; i++)
		if (info[i].state != RMSG_CHAN_INFO_OPEN)
			break;
	free(info);
	return i == n;
}

/*
 * Delete READD_DEV and make it again: 0 with *@t_back the time "rdma link
 * add" returned, -ENOTCONN when a channel is not open yet (still repaired
 * after the last one), or die.
 */
static int hca_readd(struct worker *w, uint64_t *t_back)
{
	const char *netdev = getenv("RMSG_NETDEV");
	char cmd[256];

	if (!netdev)
		die(w, "--fault=hca-readd: RMSG_NETDEV (the netdev under %s) is not set",
		    READD_DEV);
	if (!all_open(w))
		return -ENOTCONN;
	if (system("rdma link delete " READD_DEV))
		die(w, "rdma link delete %s failed", READD_DEV);
	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
		 READD_DEV, netdev);
	if (system(cmd))
		die(w, "%s failed", cmd);
	*t_back = now_ns();
	return 0;
}

/*
 * Take every echo of @c already there, and mark where the next fault's
 * sample starts: at the first message of @c taken after this.
 */
static void recover_take_all(struct worker *w, struct chan *c)
{
	struct rmsg_msg msg;

	/* Peeking @c would go past a rendezvous message held on it. */
	if (!w->holding || w->held.channel != c->id || mix_unheld(w)) {
		while (!rmsg_peek(&w->ep, c->id, &msg)) {
			if (mix_take(w, &msg) == -EAGAIN) {
				w->held = msg;
				w->holding = true;
				break;
			}
		}
	}
	c->mark = c->rx_seq;
}

/*
 * The end of a recover run, both sides: every answer and send completed,
 * every channel open again, and its repairs counted (@rc) and printed.
 */
static void recover_end(struct worker *w, struct repair_count *rc)
{
	struct waiter wt;

	wait_init(&wt, "the last rendezvous answers to complete");
	while (mix_pending(w)) {
		pump(w);
		tick(w, &wt);
	}
	drain_sends(w);
	count_repairs(w, rc);
	print_chans(w, " at the end");
}

/* Inject the fault that is due, if it is. */
static void recover_fault(struct worker *w)
{
	uint64_t t = now_ns();
	struct chan *c;
	uint32_t kind;
	int ret;

	if (rec.fc || rec.faults >= w->iters || t < rec.next_at)
		return;
	c = &w->ch[rec.faults % w->nch];
	recover_take_all(w, c);
	kind = fault_kind(rec.faults);
	rec.t_inj = now_ns();
	ret = kind == FAULT_HCA_READD ? hca_readd(w, &rec.t_inj) :
	      rmsg_inject_fault(w->ep.fd, 0, c->id, kind);
	if (ret == -ENOTCONN) {
		/* Not open (yet): still being repaired. */
		rec.not_open++;
		rec.next_at = t + 1000000ULL;
		return;
	}
	if (ret)
		die(w, "rmsg_inject_fault(%s) on channel %u: %s",
		    fault_name(kind), c->id, strerror(-ret));
	/*
	 * Echoes that came while the device was being deleted (the channel
	 * was open until then) are no sample: take them, and time from here.
	 */
	if (kind == FAULT_HCA_READD) {
		recover_take_all(w, c);
		rec.t_inj = now_ns();
	}
	rec.kinds[rec.faults++] = kind;
	rec.by_kind[kind]++;
	rec.fc = c;
}

static void recover_client(struct worker *w)
{
	uint64_t nf = w->iters, end_at, faults;
	struct waiter wt;
	struct chan *c;
	bool more;
	int i;

	rec.kinds = calloc(nf ? nf : 1, 1);
	if (!rec.kinds)
		die(w, "out of memory");
	mix_setup(w);
	rec.t0 = now_ns();
	rec.next_at = rec.t0 + opt.interval_ms * 1000000ULL;
	end_at = rec.t0 + opt.duration_s * 1000000000ULL;
	wait_init(&wt, "an echo");
	while (opt.no_fault ? now_ns() < end_at : rec.faults < nf || rec.fc) {
		for (i = 0; i < w->nch; i++) {
			c = &w->ch[i];
			while (c->tx_seq - c->rx_seq < w->window &&
			       mix_can_send(w, c))
				mix_send(w, c);
		}
		/* Answers and zero-copy sends complete through events. */
		if (w->rndv_every)
			pump(w);
		if (mix_rx(w, NULL)) {
			wt.deadline = now_ns() + opt.timeout_s * 1000000000ULL;
			continue;
		}
		faults = rec.faults;
		if (!opt.no_fault)
			recover_fault(w);
		if (rec.faults != faults)
			wt.deadline = now_ns() + opt.timeout_s * 1000000000ULL;
		tick(w, &wt);
	}
	/* Every ping must come back, whole. */
	wait_init(&wt, "the last echoes (a message lost?)");
	for (;;) {
		for (i = 0, more = false; i < w->nch; i++)
			more |= w->ch[i].rx_seq < w->ch[i].tx_seq ||
				w->ch[i].mix_pending;
		if (!more)
			break;
		if (w->rndv_every)
			pump(w);
		if (!mix_rx(w, NULL))
			tick(w, &wt);
	}
	rec.t1 = now_ns();
	for (i = 0; i < w->nch; i++) {
		c = &w->ch[i];
		rec.sent += c->tx_seq;
		rec.received += c->rx_seq;
		rec.rndv_sent += c->rndv_sent;
		rec.rndv_received += c->rndv_arrived;
	}
	recover_end(w, &rec.rc);
}

/*
 * The server's half: echo every ping until the client's CTL_STOP, a
 * message of the server's own sequence on the ping's channel (and so by
 * rendezvous when its own turn says so, not the ping's).
 */
static void recover_server(struct worker *w, struct ctl *res)
{
	struct repair_count rc;
	struct waiter wt;
	bool stop = false;
	uint64_t rndv_sent = 0;
	int i;

	mix_setup(w);
	wait_init(&wt, "a ping");
	for (;;) {
		for (i = 0; i < w->nch; i++) {
			struct chan *c = &w->ch[i];

			while (c->owed && mix_can_send(w, c)) {
				mix_send(w, c);
				c->owed--;
			}
		}
		if (stop)
			break;
		if (w->rndv_every)
			pump(w);
		if (mix_rx(w, &stop)) {
			wt.deadline = now_ns() + opt.timeout_s * 1000000000ULL;
			continue;
		}
		tick(w, &wt);
	}
	/* The client had every echo before its STOP: none can be owed. */
	for (i = 0; i < w->nch; i++) {
		if (w->ch[i].owed)
			die(w, "CTL_STOP with %" PRIu64 " echoes owed on channel %u",
			    w->ch[i].owed, w->ch[i].id);
		rndv_sent += w->ch[i].rndv_sent;
	}
	recover_end(w, &rc);
	res->msgs = w->arrived;
	res->iters = w->rndv_msgs;
	res->warmup = rndv_sent;
	res->repairs = rc.repairs;
	res->rndv_msgs = rc.retx_msgs;
	res->bytes = rc.retx_bytes;
}

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
	c->max_msg = rmsg_channel_max_msg(&w->ep, id);
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

	ret = rmsg_ep_listen(&w->ep, (struct sockaddr *)&sin6, sizeof(sin6),
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
		tick(w, &wt);
		any |= w->nunplaced > 0;
		for (i = 0; i < w->nunplaced; i++) {
			id = w->unplaced[i];
			ret = rmsg_peek(&w->ep, id, &msg);
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
			ret = rmsg_release(&w->ep, &msg);
			if (ret)
				die(w, "rmsg_release: %s", strerror(-ret));
			srv_place(w, id, &hello, &ack);
			w->unplaced[i--] = w->unplaced[--w->nunplaced];
			wt.deadline = now_ns() +
				      opt.timeout_s * 1000000000ULL;
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

static void *srv_thread(void *arg)
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
		w->rndv_every = opt.test == TEST_RECOVER ? run.rndv_every : 0;
		setup_run(w, opt.test == TEST_LAT, true);
		memset(&res, 0, sizeof(res));
		if (opt.test == TEST_LAT)
			lat_server(w, &res);
		else if (opt.test == TEST_RECOVER)
			recover_server(w, &res);
		else
			stream_server(w, &res);
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
	ret = rmsg_ep_connect(&w->ep, (struct sockaddr *)&ss, server_salen,
			      c - w->ch, opt.block);
	if (ret < 0)
		die(w, "rmsg_ep_connect: %s", strerror(-ret));
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

static uint64_t run_thresh;	/* the client's threshold, for the server too */

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

	ret = rmsg_query_version(w->ep.fd, &ver);
	if (ret && ret != -EPROTO)
		die(NULL, "rmsg_query_version: %s", strerror(-ret));
	if (!(ver.features & RMSG_FEAT_RNDV))
		die(NULL, "rendezvous runs (sizes above %u bytes, --zc, --put, --rndv-thresh, --max-size): this rmsg module has no RMSG_FEAT_RNDV",
		    limit);
	for (t = 0; t < opt.threads; t++)
		if (!workers[t].ext)
			die(NULL, "rendezvous runs: the server's rmsg-perf is older than rendezvous (no CTL_CAP_RNDV)");
	if (opt.thresh_set) {
		run_thresh = opt.rndv_thresh;
	} else {
		th = rmsg_ep_rndv_threshold(&w->ep);
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

static void report(int s);

static void *cli_thread(void *arg)
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
	if (opt.test == TEST_LAT || opt.test == TEST_RECOVER) {
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
				    (opt.put ? CTL_F_PUT : 0);
		w->thresh = run_thresh;
		w->rndv_every = opt.rndv_every;
		setup_run(w, true, opt.test == TEST_LAT);
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
		if (opt.test == TEST_LAT) {
			lat_client(w);
		} else if (opt.test == TEST_RECOVER) {
			recover_client(w);
			memset(&run, 0, sizeof(run));
			send_ctl(w, &w->ch[0], &run, CTL_STOP);
		} else {
			stream_client(w);
		}
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

/* ------------------------------------------------------------------------
 * Reports: a table in perftest's columns, or one JSON object per size.
 */
static const char rule[] =
	"---------------------------------------------------------------------------------------\n";

static void print_header(void)
{
	const struct worker *w = &workers[0];

	if (opt.json)
		return;
	fputs(rule, stdout);
	printf(" rmsg-perf %s: %s, %s\n", test_names[opt.test],
	       !opt.reg ? "eager messages" :
	       opt.put ? "rmsg_send_zc(RMSG_ZC_PUT), RPut zero copy" :
	       opt.zc ? "rmsg_send_zc(), RGet zero copy" :
	       "rmsg_send() from registered memory",
	       opt.test == TEST_LAT ?
	       "ping-pong, half of the round trip" :
	       "one way, measured at the receiver");
	if (opt.reg && !opt.zc && run_thresh == THRESH_NEVER)
		printf(" rendezvous threshold: never; ");
	else if (opt.reg && !opt.zc)
		printf(" rendezvous threshold: %" PRIu64 " bytes; ", run_thresh);
	if (opt.reg)
		printf("%sreceived with rmsg_recv_into() into registered memory\n",
		       opt.zc ? " " : "");
	printf(" server %s, port %u; %d thread(s) x %d channel(s); ",
	       opt.server, opt.port, opt.threads, opt.channels);
	if (opt.block)
		printf("receive block %u bytes\n", opt.block);
	else
		printf("receive block: the module's default\n");
	printf(" kernel poller: %s; clock: %s; system calls counted by: %s",
	       opt.sqpoll ? "on" : "off", clock_name(),
	       sysctr_method_name(w->sc.method));
	if (opt.test != TEST_LAT)
		printf("; window %u", opt.window);
	printf("\n");
	fputs(rule, stdout);
	if (opt.test == TEST_LAT)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]   syscalls/msg%s\n",
		       opt.reg ? "   protocol" : "");
	else
		printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]   syscalls/msg(tx)   syscalls/msg(rx)%s\n",
		       opt.reg ? "   protocol" : "");
}

/* How the measured messages went: all eager, all rendezvous, or both. */
static const char *protocol(uint64_t rndv, uint64_t msgs)
{
	return !rndv ? "eager" : rndv == msgs ? "rndv" : "mixed";
}

/* The keys of rendezvous runs, after json_common()'s. */
static void json_reg(uint64_t rndv, uint64_t msgs)
{
	if (!opt.reg)
		return;
	printf(", \"send\": \"%s\", \"put\": %s, \"rndv_thresh\": ",
	       opt.zc ? "rmsg_send_zc" : "rmsg_send",
	       opt.put ? "true" : "false");
	if (run_thresh == THRESH_NEVER)
		printf("null");
	else
		printf("%" PRIu64, run_thresh);
	printf(", \"slots\": %u, \"protocol\": \"%s\", \"rndv_msgs\": %" PRIu64,
	       workers[0].ntx, protocol(rndv, msgs), rndv);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The nearest-rank percentile @p (0 < p <= 1) of @n sorted samples. */
static uint64_t percentile(const uint64_t *v, uint64_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p * n);

	return v[rank ? rank - 1 : 0];
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / b : 0;
}

static void json_common(uint32_t size, uint64_t iters, uint64_t warmup)
{
	printf("{\"test\": \"%s\", \"bytes\": %u, \"iterations\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"threads\": %d, \"channels\": %d, \"block\": %u, \"sqpoll\": %s, \"clock\": \"%s\", \"syscall_counter\": \"%s\"",
	       test_names[opt.test], size, iters, warmup, opt.threads,
	       opt.channels, opt.block, opt.sqpoll ? "true" : "false",
	       clock_name(), sysctr_method_name(workers[0].sc.method));
}

static void report_lat(uint32_t size)
{
	uint64_t n = 0, i, csys = 0, cmsgs = 0, ssys = 0, smsgs = 0, *all;
	uint64_t rndv = 0;
	double sum = 0, sq = 0, avg, sd, med, spm;
	int t;

	for (t = 0; t < opt.threads; t++)
		n += workers[t].iters;
	all = malloc(n * sizeof(*all));
	if (!all)
		die(NULL, "out of memory");
	n = 0;
	for (t = 0; t < opt.threads; t++) {
		struct worker *w = &workers[t];

		memcpy(all + n, w->samples, w->iters * sizeof(*all));
		n += w->iters;
		csys += w->sys;
		cmsgs += w->msgs;
		ssys += w->result.syscalls;
		smsgs += w->result.msgs;
		rndv += w->rndv_msgs + w->result.rndv_msgs;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	for (i = 0; i < n; i++)
		sum += all[i];
	avg = sum / n;
	for (i = 0; i < n; i++)
		sq += (all[i] - avg) * (all[i] - avg);
	sd = sqrt(sq / n);
	med = n & 1 ? all[n / 2] : (all[n / 2 - 1] + all[n / 2]) / 2.0;
	spm = ratio(csys + ssys, cmsgs + smsgs);

	/* Samples are round trips in ns; reported: half of them, in us. */
#define US(x)	((double)(x) / 2000.0)
	if (opt.json) {
		json_common(size, workers[0].iters, workers[0].warmup);
		json_reg(rndv, 2 * n);
		printf(", \"t_min_us\": %.3f, \"t_max_us\": %.3f, \"t_typical_us\": %.3f, \"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, \"t_p99_us\": %.3f, \"t_p99_9_us\": %.3f",
		       US(all[0]), US(all[n - 1]), US(med), US(avg), US(sd),
		       US(percentile(all, n, 0.99)),
		       US(percentile(all, n, 0.999)));
		printf(", \"syscalls_per_msg\": %.4f, \"client_syscalls_per_msg\": %.4f, \"server_syscalls_per_msg\": %.4f}\n",
		       spm, ratio(csys, cmsgs), ratio(ssys, smsgs));
	} else {
		printf(" %-7u %-11" PRIu64 "    %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %-24.2f %.2f",
		       size, workers[0].iters, US(all[0]), US(all[n - 1]),
		       US(med), US(avg), US(sd),
		       US(percentile(all, n, 0.99)),
		       US(percentile(all, n, 0.999)), spm);
		if (opt.reg)
			printf("           %s", protocol(rndv, 2 * n));
		printf("\n");
	}
#undef US
	free(all);
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

/* Recovery times of the faults of one kind (0: all), in ms. */
struct rec_stats {
	uint64_t n;
	double p50, p99, max, min, mean;
};

static void rec_stats(const uint64_t *samples, uint32_t kind,
		      struct rec_stats *st)
{
	uint64_t *v, i;
	double sum = 0;

	memset(st, 0, sizeof(*st));
	v = malloc((rec.faults ? rec.faults : 1) * sizeof(*v));
	if (!v)
		die(NULL, "out of memory");
	for (i = 0; i < rec.faults; i++)
		if (!kind || rec.kinds[i] == kind)
			v[st->n++] = samples[i];
	if (st->n) {
		qsort(v, st->n, sizeof(*v), cmp_u64);
		for (i = 0; i < st->n; i++)
			sum += v[i];
		st->p50 = percentile(v, st->n, 0.5) / 1e6;
		st->p99 = percentile(v, st->n, 0.99) / 1e6;
		st->max = v[st->n - 1] / 1e6;
		st->min = v[0] / 1e6;
		st->mean = sum / st->n / 1e6;
	}
	free(v);
}

static int recover_status;	/* 1: faults without a repair */

static void report_recover(uint32_t size)
{
	static const uint32_t kinds[] = { RMSG_FAULT_QP_ERROR,
					  RMSG_FAULT_DISCONNECT,
					  RMSG_FAULT_DEVICE_FATAL,
					  FAULT_HCA_READD };
	static const char *const names[] = { "qp_error", "disconnect",
					     "device_fatal", "hca_readd" };
	const struct worker *w = &workers[0];
	uint64_t failures, peer_repairs = w->result.repairs;
	struct rec_stats st, sk;
	double secs = (rec.t1 - rec.t0) / 1e9;
	unsigned int k;

	/* The server must have taken every ping, and no more. */
	if (w->result.msgs != rec.sent)
		die(NULL, "the server took %" PRIu64 " pings, the client sent %" PRIu64,
		    (uint64_t)w->result.msgs, rec.sent);
	if (w->result.iters != rec.rndv_sent ||
	    w->result.warmup != rec.rndv_received)
		die(NULL, "rendezvous messages: the client sent %" PRIu64 " and received %" PRIu64 ", the server received %" PRIu64 " and sent %" PRIu64,
		    rec.rndv_sent, rec.rndv_received,
		    (uint64_t)w->result.iters, (uint64_t)w->result.warmup);
	/* Every fault must have been repaired (a repair is not "nothing"). */
	failures = rec.rc.repairs < rec.faults ? rec.faults - rec.rc.repairs
					       : 0;
	if (failures)
		recover_status = 1;
	rec_stats(w->samples, 0, &st);
	if (opt.json) {
		printf("{\"test\": \"recover\", \"bytes\": %u, \"channels\": %d, \"window\": %u, \"block\": %u, \"clock\": \"%s\", \"fault\": \"%s\", \"interval_ms\": %u",
		       size, opt.channels, w->window, opt.block, clock_name(),
		       opt.no_fault ? "none" : opt.fault ?
		       fault_name(opt.fault) : "all",
		       opt.interval_ms);
		printf(", \"faults\": %" PRIu64 ", \"recovery_ms_p50\": %.3f, \"recovery_ms_p99\": %.3f, \"recovery_ms_max\": %.3f, \"recovery_ms_min\": %.3f, \"recovery_ms_mean\": %.3f",
		       st.n, st.p50, st.p99, st.max, st.min, st.mean);
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			const char *name = names[k];

			rec_stats(w->samples, kinds[k], &sk);
			printf(", \"faults_%s\": %" PRIu64, name, sk.n);
			if (sk.n && !opt.fault)
				printf(", \"%s_ms_p50\": %.3f, \"%s_ms_p99\": %.3f",
				       name, sk.p50, name, sk.p99);
		}
		printf(", \"not_open_retries\": %" PRIu64 ", \"msgs_sent\": %" PRIu64 ", \"msgs_received\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"dups\": 0",
		       rec.not_open, rec.sent, rec.received,
		       rec.sent - rec.received);
		printf(", \"rndv_every\": %u, \"rndv_sent\": %" PRIu64 ", \"rndv_received\": %" PRIu64,
		       opt.rndv_every, rec.rndv_sent, rec.rndv_received);
		printf(", \"repairs\": %" PRIu64 ", \"peer_repairs\": %" PRIu64 ", \"retx_msgs\": %" PRIu64 ", \"retx_bytes\": %" PRIu64 ", \"peer_retx_msgs\": %" PRIu64 ", \"peer_retx_bytes\": %" PRIu64 ", \"recovering_ms\": %.3f, \"failures\": %" PRIu64 ", \"seconds\": %.3f}\n",
		       rec.rc.repairs, peer_repairs, rec.rc.retx_msgs,
		       rec.rc.retx_bytes, (uint64_t)w->result.rndv_msgs,
		       (uint64_t)w->result.bytes, rec.rc.recover_ns / 1e6,
		       failures, secs);
	} else {
		fputs(rule, stdout);
		printf(" rmsg-perf recover: %u-byte messages echoed on %d channel(s), window %u;\n",
		       size, opt.channels, w->window);
		if (opt.no_fault)
			printf(" no faults injected (--fault=none), %u s of stream\n",
			       opt.duration_s);
		else
			printf(" %s faults on the client's channels in turn, %u ms after each repair;\n"
			       " a sample: from rmsg_inject_fault() to the channel's next echo\n",
			       opt.fault ? fault_name(opt.fault) :
			       "qp-error and disconnect",
			       opt.interval_ms);
		printf(" server %s, port %u; clock: %s\n", opt.server, opt.port,
		       clock_name());
		fputs(rule, stdout);
		printf(" fault       #faults   p50[ms]    p99[ms]    max[ms]    min[ms]    mean[ms]\n");
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			rec_stats(w->samples, kinds[k], &sk);
			if (sk.n)
				printf(" %-12s %-8" PRIu64 " %-10.3f %-10.3f %-10.3f %-10.3f %.3f\n",
				       fault_name(kinds[k]), sk.n,
				       sk.p50, sk.p99, sk.max, sk.min,
				       sk.mean);
		}
		fputs(rule, stdout);
		printf(" messages: %" PRIu64 " sent, %" PRIu64 " echoed back, %" PRIu64 " lost, 0 duplicated (every one checked)\n",
		       rec.sent, rec.received, rec.sent - rec.received);
		if (opt.rndv_every)
			printf(" of them by rendezvous (one in %u each way, RGet and RPut in turn, every byte checked): %" PRIu64 " sent, %" PRIu64 " echoed\n",
			       opt.rndv_every, rec.rndv_sent,
			       rec.rndv_received);
		printf(" repairs: %" PRIu64 " here, %" PRIu64 " at the server; written again: %" PRIu64 " msgs/%" PRIu64 " bytes here, %" PRIu64 "/%" PRIu64 " at the server\n",
		       rec.rc.repairs, peer_repairs, rec.rc.retx_msgs,
		       rec.rc.retx_bytes, (uint64_t)w->result.rndv_msgs,
		       (uint64_t)w->result.bytes);
		printf(" faults refused as not open (retried): %" PRIu64 "; time recovering: %.1f ms; failures: %" PRIu64 "; %.1f s\n",
		       rec.not_open, rec.rc.recover_ns / 1e6, failures, secs);
	}
	if (failures)
		fprintf(stderr, "rmsg-perf: %" PRIu64 " faults but only %" PRIu64 " repairs\n",
			rec.faults, rec.rc.repairs);
}

static void report(int s)
{
	if (!s && opt.test != TEST_RECOVER)
		print_header();
	if (opt.test == TEST_LAT)
		report_lat(sizes[s]);
	else if (opt.test == TEST_RECOVER)
		report_recover(sizes[s]);
	else
		report_stream(sizes[s]);
	fflush(stdout);
}

/* ------------------------------------------------------------------------
 * main.
 */
static void print_usage(FILE *out)
{
	fputs("usage: rmsg-perf [options] {lat|bw|rate|recover} [SERVER]\n"
	      "       rmsg-perf [options] mem ADDRESS\n"
	      "       rmsg-perf hold-syscount\n"
	      "       rmsg-perf --version | --help\n"
	      "\n"
	      "Without SERVER, wait for a client; both take the same options.\n"
	      "\n"
	      "  lat    ping-pong latency (half round trip), perftest's columns\n"
	      "  bw     one-way bandwidth and message rate, measured at the receiver\n"
	      "  rate   bw with many channels (-c) and/or threads (-t), message rate first\n"
	      "  mem    memory one idle channel costs: -c channels (default 200) between\n"
	      "         two endpoints of this process on ADDRESS, a local address\n"
	      "  recover  time to repair a channel: -n faults injected by the client into\n"
	      "         its channels in turn, each timed from the injection to the\n"
	      "         channel's next echo of a checked ping-pong (64 bytes, window -W 1)\n"
	      "\n"
	      "  -s, --size=BYTES     message size (lat 8, bw 4096, rate 64); K, M, G\n"
	      "                       suffixes; above the largest eager message: rendezvous\n"
	      "  -a, --all            sizes 2, 4, ... up to the channels' largest message\n"
	      "                       (with rendezvous: up to --max-size)\n"
	      "  -n, --iters=N        measured iterations (lat) or messages (bw, rate) per\n"
	      "                       size and thread (lat 10000, bw/rate 100 windows;\n"
	      "                       fewer above 8 KiB and above 1 MiB)\n"
	      "  -w, --warmup=N       not measured, before them (lat 100, bw/rate 10 windows)\n"
	      "  -W, --window=N       sends in flight per channel, bw/rate (64, at most 256)\n"
	      "  -c, --channels=N     channels per thread (1)\n"
	      "  -t, --threads=N      threads, each with its own endpoint (1); thread i uses\n"
	      "                       port PORT+i\n"
	      "  -p, --port=PORT      first port (18520)\n"
	      "  -b, --block=BYTES    receive block of each channel (module default)\n"
	      "      --sqpoll[=MS]    kernel submission poller (RMSG_EP_F_SQPOLL), asleep\n"
	      "                       after MS ms without work (module default 10)\n"
	      "      --full-check     check every byte of every message, not only its\n"
	      "                       first and last 8\n"
	      "      --more           send eager data with RMSG_SEND_MORE: the library\n"
	      "                       enters the kernel once per batch, when it\n"
	      "                       progresses or waits, not once per message\n"
	      "\n"
	      "Rendezvous (any of these, or a size above the largest eager message: both\n"
	      "sides send from and receive into memory registered with rmsg_reg()):\n"
	      "      --rndv-thresh=BYTES  the endpoints' threshold: rmsg_send() goes\n"
	      "                       rendezvous from BYTES up ('never': eager only);\n"
	      "                       default: the library's (RMSG_RNDV_THRESH)\n"
	      "      --zc             every message with rmsg_send_zc() (rendezvous)\n"
	      "      --put            RPut (rmsg_send_zc() with RMSG_ZC_PUT); implies --zc\n"
	      "  -S, --max-size=BYTES -a stops here (64M)\n"
	      "      --reg-mem=BYTES  registered memory per thread and side (128M)\n"
	      "\n"
	      "recover:\n"
	      "      --fault=KIND     qp-error (default), disconnect, device-fatal, or all\n"
	      "                       (qp-error and disconnect alternating); hca-readd:\n"
	      "                       rdma link delete rxe0 and add it again on\n"
	      "                       $RMSG_NETDEV (from the end of the add); none: a\n"
	      "                       checked stream for -D seconds, under faults made\n"
	      "                       elsewhere\n"
	      "  -D, --duration=SECS  --fault=none: how long the stream runs (10)\n"
	      "  -i, --interval=MS    from a repair to the next fault (200)\n"
	      "  -n                   faults (100); -W: pings out per channel (1)\n"
	      "      --rndv-every=N   every Nth message of each channel's streams (both\n"
	      "                       ways) by rendezvous: rmsg_send_zc(), RGet and RPut\n"
	      "                       in turn, 1 B to 192 KiB, every byte checked (0: off)\n"
	      "\n"
	      "      --json           one JSON object per size on stdout\n"
	      "  -T, --timeout=SECS   give up when nothing moves for this long (60)\n"
	      "  -h, --help\n", out);
}

static long parse_num(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		die(NULL, "%s: '%s' is not a number from %ld to %ld", what, s,
		    min, max);
	return v;
}

/* A byte count with an optional K, M or G suffix (powers of 2). */
static uint64_t parse_bytes(const char *s, const char *what, uint64_t min,
			    uint64_t max)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!errno && end != s && *s != '-' && *end) {
		shift = *end == 'K' || *end == 'k' ? 10 :
			*end == 'M' || *end == 'm' ? 20 :
			*end == 'G' || *end == 'g' ? 30 : 0;
		if (shift && end[1] == '\0') {
			end++;
			if (v > UINT64_MAX >> shift)
				errno = ERANGE;
			v <<= shift;
		}
	}
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		die(NULL, "%s: '%s' is not a byte count from %" PRIu64 " to %" PRIu64,
		    what, s, min, max);
	return v;
}

static void parse(int argc, char **argv)
{
	enum { OPT_SQPOLL = 256, OPT_JSON, OPT_FULL, OPT_THRESH, OPT_ZC,
	       OPT_PUT, OPT_REG_MEM, OPT_FAULT, OPT_RNDV_EVERY, OPT_MORE };
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "window", required_argument, NULL, 'W' },
		{ "channels", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "block", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "sqpoll", optional_argument, NULL, OPT_SQPOLL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "full-check", no_argument, NULL, OPT_FULL },
		{ "more", no_argument, NULL, OPT_MORE },
		{ "rndv-thresh", required_argument, NULL, OPT_THRESH },
		{ "zc", no_argument, NULL, OPT_ZC },
		{ "put", no_argument, NULL, OPT_PUT },
		{ "max-size", required_argument, NULL, 'S' },
		{ "reg-mem", required_argument, NULL, OPT_REG_MEM },
		{ "fault", required_argument, NULL, OPT_FAULT },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'D' },
		{ "rndv-every", required_argument, NULL, OPT_RNDV_EVERY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	bool channels_set = false;
	int c, i;

	while ((c = getopt_long(argc, argv, "s:an:w:W:c:t:p:b:T:S:i:D:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			opt.size = parse_bytes(optarg, "size", 1,
					       RMSG_RNDV_MAX_LEN);
			break;
		case 'S':
			opt.max_size = parse_bytes(optarg, "max-size",
						   MIN_ALL_SIZE,
						   RMSG_RNDV_MAX_LEN);
			opt.reg = true;
			break;
		case OPT_THRESH:
			if (!strcmp(optarg, "never"))
				opt.rndv_thresh = THRESH_NEVER;
			else
				opt.rndv_thresh = parse_bytes(optarg,
						"rndv-thresh", 0, UINT64_MAX);
			opt.thresh_set = true;
			opt.reg = true;
			break;
		case OPT_PUT:
			opt.put = true;
			/* fall through */
		case OPT_ZC:
			opt.zc = true;
			opt.reg = true;
			break;
		case OPT_FAULT:
			opt.no_fault = !strcmp(optarg, "none");
			if (!strcmp(optarg, "all") || opt.no_fault)
				opt.fault = 0;
			else if (!strcmp(optarg, rmsg_fault_kind_name(
					RMSG_FAULT_QP_ERROR)))
				opt.fault = RMSG_FAULT_QP_ERROR;
			else if (!strcmp(optarg, rmsg_fault_kind_name(
					RMSG_FAULT_DISCONNECT)))
				opt.fault = RMSG_FAULT_DISCONNECT;
			else if (!strcmp(optarg, rmsg_fault_kind_name(
					RMSG_FAULT_DEVICE_FATAL)))
				opt.fault = RMSG_FAULT_DEVICE_FATAL;
			else if (!strcmp(optarg, fault_name(FAULT_HCA_READD)))
				opt.fault = FAULT_HCA_READD;
			else
				die(NULL, "fault: '%s' is not qp-error, disconnect, device-fatal, hca-readd, all or none",
				    optarg);
			break;
		case OPT_RNDV_EVERY:
			opt.rndv_every = parse_num(optarg, "rndv-every", 0,
						   1000000);
			break;
		case 'D':
			opt.duration_s = parse_num(optarg, "duration", 1,
						   86400);
			break;
		case 'i':
			opt.interval_ms = parse_num(optarg, "interval", 0,
						    3600000);
			break;
		case OPT_REG_MEM:
			opt.reg_mem = parse_bytes(optarg, "reg-mem", 4096,
						  RMSG_REG_MAX_LEN);
			break;
		case 'a':
			opt.all = true;
			break;
		case 'n':
			opt.iters = parse_num(optarg, "iterations", 2,
					      1L << 40);
			break;
		case 'w':
			opt.warmup = parse_num(optarg, "warm-up", 0, 1L << 40);
			break;
		case 'W':
			opt.window = parse_num(optarg, "window", 1,
					       RMSG_CHAN_MAX_PENDING);
			opt.window_set = true;
			break;
		case 'c':
			opt.channels = parse_num(optarg, "channels", 1,
						 MAX_CHANNELS);
			channels_set = true;
			break;
		case 't':
			opt.threads = parse_num(optarg, "threads", 1,
						MAX_THREADS);
			break;
		case 'p':
			opt.port = parse_num(optarg, "port", 1, 65535);
			break;
		case 'b':
			opt.block = parse_num(optarg, "block", RMSG_VB_MIN_BLOCK,
					      RMSG_VB_MAX_BLOCK);
			break;
		case 'T':
			opt.timeout_s = parse_num(optarg, "timeout", 1, 86400);
			break;
		case OPT_SQPOLL:
			opt.sqpoll = true;
			if (optarg)
				opt.sqpoll_idle_ms = parse_num(optarg, "sqpoll",
						1, RMSG_SQPOLL_IDLE_MAX_MS);
			break;
		case OPT_JSON:
			opt.json = true;
			break;
		case OPT_FULL:
			opt.full_check = true;
			break;
		case OPT_MORE:
			opt.more = true;
			break;
		case 'h':
			print_usage(stdout);
			exit(0);
		case 'V':
			printf("rmsg-perf (rmsg) %s, library ABI %u\n",
			       RMSG_VERSION, RMSG_ABI_VERSION);
			exit(0);
		default:
			print_usage(stderr);
			exit(2);
		}
	}
	if (optind >= argc || argc - optind > 2) {
		print_usage(stderr);
		exit(2);
	}
	for (i = TEST_LAT; i <= TEST_RECOVER; i++)
		if (!strcmp(argv[optind], test_names[i]))
			opt.test = i;
	if (!opt.test)
		die(NULL, "unknown test '%s': lat, bw, rate, mem or recover",
		    argv[optind]);
	opt.server = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (!opt.size)
		opt.size = opt.test == TEST_LAT ? 8 :
			   opt.test == TEST_BW ? 4096 : 64;
	if (opt.test == TEST_RECOVER) {
		if (opt.all || opt.threads > 1)
			die(NULL, "recover runs one size (-s) in one thread");
		/* A ping-pong unless asked for more. */
		if (!opt.window_set)
			opt.window = 1;
	} else if (opt.rndv_every) {
		die(NULL, "--rndv-every is for recover");
	}
	if (opt.test == TEST_MEM) {
		if (!opt.server)
			die(NULL, "mem needs the local address to use");
		if (!channels_set)
			opt.channels = 200;
	}
	if (opt.port + opt.threads - 1 > 65535)
		die(NULL, "ports %u to %u do not all exist", opt.port,
		    opt.port + opt.threads - 1);
}

static void resolve(const char *host, struct sockaddr_storage *ss,
		    socklen_t *len)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai;
	int ret;

	ret = getaddrinfo(host, NULL, &hints, &ai);
	if (ret)
		die(NULL, "%s: %s", host, gai_strerror(ret));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

static int run_mem(void)
{
	struct sockaddr_storage ss;
	struct mem_result res;
	socklen_t len;
	int ret;

	resolve(opt.server, &ss, &len);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(opt.port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(opt.port);
	ret = mem_measure((struct sockaddr *)&ss, len, opt.channels,
			  opt.block, opt.timeout_s, &res);
	if (ret)
		die(NULL, "mem: %s", strerror(-ret));
	if (opt.json) {
		printf("{\"test\": \"mem\", \"channels\": %d, \"block\": %u, \"rounds\": %d, \"bytes_per_channel\": %ld, \"warmup_bytes_per_channel\": %ld, \"slab_bytes_per_channel\": %ld, \"vmalloc_bytes_per_channel\": %ld}\n",
		       opt.channels, opt.block, res.rounds, res.per_end,
		       res.warmup_per_end, res.slab_per_end,
		       res.vmalloc_per_end);
	} else {
		fputs(rule, stdout);
		printf(" rmsg-perf mem: memory per idle channel end, %d channels, ",
		       opt.channels);
		if (opt.block)
			printf("receive block %u bytes\n", opt.block);
		else
			printf("the module's default receive block\n");
		fputs(rule, stdout);
		printf(" %ld bytes (median of %d rounds; slab %ld, vmalloc %ld; warm-up round %ld)\n",
		       res.per_end, res.rounds, res.slab_per_end,
		       res.vmalloc_per_end, res.warmup_per_end);
		fputs(rule, stdout);
	}
	return 0;
}

/*
 * Keep a system-call counter open until killed. Opening the first one, and
 * closing the last, patches kernel text (the syscall tracepoint's static
 * key and static call, perf's scheduler hooks); QEMU's TCG has been seen
 * to leave both vCPUs spinning on such a patched jump in
 * syscall_trace_enter() for minutes when two rmsg-perf processes opened
 * their counters at once. The test bed's guest holds one from boot, so
 * the kernel's text never changes under a measurement; it waits for the
 * line "held" with its other vCPU asleep (Documentation/testbed.rst).
 */
static int hold_syscount(void)
{
	struct sysctr sc;

	sysctr_open(&sc);
	if (sc.method != SC_TRACEPOINT) {
		fprintf(stderr, "rmsg-perf: no syscall tracepoint counter to hold\n");
		return 1;
	}
	/* The caller may wait for this line: the text is patched by now. */
	printf("held\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	int t, ret;

	if (argc == 2 && !strcmp(argv[1], "hold-syscount"))
		return hold_syscount();
	parse(argc, argv);
	clock_setup();
	if (opt.test == TEST_MEM)
		return run_mem();

	workers = calloc(opt.threads, sizeof(*workers));
	if (!workers)
		die(NULL, "out of memory");
	if (opt.server) {
		resolve(opt.server, &ss, &server_salen);
		server_sa = (struct sockaddr *)&ss;
		pthread_barrier_init(&barrier, NULL, opt.threads);
	} else if (!opt.json) {
		fprintf(stderr, "rmsg-perf: %s server: waiting for a client on port %u%s\n",
			test_names[opt.test], opt.port,
			opt.threads > 1 ? " and up" : "");
	}
	for (t = 0; t < opt.threads; t++) {
		workers[t].idx = t;
		workers[t].server = !opt.server;
		ret = pthread_create(&workers[t].tid, NULL,
				     opt.server ? cli_thread : srv_thread,
				     &workers[t]);
		if (ret)
			die(NULL, "pthread_create: %s", strerror(ret));
	}
	for (t = 0; t < opt.threads; t++)
		pthread_join(workers[t].tid, NULL);
	if (opt.server && !opt.json)
		fputs(rule, stdout);
	free(workers);
	free(sizes);
	free(rec.kinds);
	return recover_status;
}
