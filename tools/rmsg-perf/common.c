// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: the options, the state of the threads, dying with a reason.
 *
 * Calls librmsg, clock.c and syscount.c only.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmsg-perf.h"

const char * const test_names[] = {
	[TEST_LAT] = "lat", [TEST_BW] = "bw", [TEST_RATE] = "rate",
	[TEST_MEM] = "mem", [TEST_RECOVER] = "recover", [TEST_POLL] = "poll",
};

struct options opt = {
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

const struct perf_test *perf_test;
struct worker *workers;
pthread_barrier_t barrier;
uint32_t *sizes;
int nsizes;
uint64_t run_thresh;

/*
 * Every channel this process may see, with its epoch and repair counters;
 * @when says at what point.
 */
void print_chans(struct worker *w, const char *when)
{
	struct rmsg_chan_info *info = NULL;
	struct rmsg_dev_info *devs = NULL;
	const char *dev;
	uint32_t me = 0;
	int n, i, j, ndevs;

	n = rmsg_node_channels(rmsg_ep_fd(w->ep), RMSG_CHAN_LIST_F_ALL, &info,
			       &me);
	if (n < 0)
		return;
	/* Which device each channel is on, by name. */
	ndevs = rmsg_node_devices(rmsg_ep_fd(w->ep), &devs, NULL);
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

	n = rmsg_ep_progress(w->ep, ev, 64);
	for (i = 0; i < n; i++)
		if (ev[i].kind == RMSG_CQE_CLOSED)
			fprintf(stderr, "rmsg-perf: channel %u ended: %s\n",
				ev[i].channel, ev[i].res ?
				strerror(-ev[i].res) : "closed by the peer");
	print_chans(w, "");
}

_Noreturn void die(struct worker *w, const char *fmt, ...)
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

struct chan *chan_of(struct worker *w, uint32_t id)
{
	int32_t i = id < RMSG_MAX_CHANNELS ? w->by_id[id] : -1;

	return i >= 0 ? &w->ch[i] : NULL;
}

void resolve(const char *host, struct sockaddr_storage *ss,
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

/*
 * A data message has arrived whole (checked). The stream server's clock
 * starts at the arrival of number @clock_at; @first_measured are warm-up.
 */
void arrived(struct worker *w, bool rndv)
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
void check_abort(struct worker *w, const void *data, uint32_t len)
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
