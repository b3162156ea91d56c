// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf poll: what finding messages costs when an endpoint has many
 * channels, against the same with one channel, in this process.
 *
 * Two pairs of endpoints on the local address, with arrival summaries
 * (RMSG_EP_F_SUMMARY): one with a single channel, one with -c channels. Each round measures, for both pairs in turn (the
 * order alternating from round to round, so that neither always runs
 * first):
 *
 *   empty  the mean of POLL_EMPTY rmsg_msg_peek_any() calls that find
 *          nothing;
 *   ready  the mean of the POLL_READY calls that found a message, each
 *          sent to the pair's last channel and awaited by calling
 *          rmsg_msg_peek_any() until it comes (those calls are not timed):
 *          the search, the channel's block staying in the caches;
 *   random the same, each message to a channel picked at random: the
 *          search and a block that is cold in the caches and the TLB,
 *          which no search avoids (a cost of touching more memory, which
 *          emulation makes larger than hardware does);
 *   arm    the mean of POLL_ARMS rmsg_ep_arm() calls with every channel
 *          armed already, as a program that waits again finds them.
 *
 * The figures are the medians over the rounds, and each ratio (many
 * channels over one) is the median of the rounds' ratios. How fast the
 * -c channels opened (at most 64 connecting at once) comes with them.
 *
 * And what idle channels cost the fabric: the packets the RDMA ports sent
 * per second, over POLL_IDLE_S seconds with nothing to send, first with
 * the single pair open, then with both (the -c channels idle too). With
 * liveness per peer node that is a heartbeat a period each way, whatever
 * the number of channels; with a heartbeat per channel it grew with them.
 *
 * Last, a repair: a QP error forced on the last of the -c channels, and
 * the time until no channel of the process is being repaired (every one
 * OPEN) with that channel's two ends repaired, and how many ends of the
 * -c channels and of the single one were repaired. Channels of their own
 * see only that channel repaired; channels on a link (link_port) share its
 * connection, which the fault breaks, so every one of them is repaired
 * with it. (With link_port set the single channel brought the link, a
 * connection of its own, and the idle count's seconds let the link come
 * up before the -c channels open on it.) Then a message on each of the -c
 * channels, each read once with rmsg_msg_peek_any() and checked: every
 * channel carries after the repair.
 *
 * Calls common.c, clock.c and mem.c.
 */
#include <errno.h>
#include <glob.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rmsg.h>

#include "rmsg-perf.h"

#define POLL_ROUNDS	9
#define POLL_EMPTY	20000
#define POLL_READY	200
#define POLL_ARMS	20000
#define POLL_LISTEN	(~0ULL)
#define POLL_IDLE_S	5	/* seconds of idle packets counted */
#define POLL_SETTLE_US	1000000	/* the last packets of what went before */
#define POLL_REPAIR_S	300	/* the most a repair of every channel may take */

struct poll_pair {
	struct rmsg_ep *a;	/* listens, and is polled */
	struct rmsg_ep *b;	/* connects, and sends */
	int n;
	int *b_ids;
	uint64_t open_ns;
};

enum {
	POLL_EMPTY_NS,
	POLL_READY_NS,
	POLL_RANDOM_NS,
	POLL_ARM_NS,
	POLL_FIGURES
};

/* An endpoint with an arrival summary (RMSG_EP_F_SUMMARY). */
static int pair_ep_open(struct rmsg_ep **ep, unsigned int entries)
{
	struct rmsg_ep_setup s = {
		.sq_entries = 256,
		.cq_entries = entries,
		.flags = RMSG_EP_F_SUMMARY,
		.send_area_size = RMSG_LIB_SEND_AREA,
	};

	return rmsg_ep_open_setup(ep, &s);
}

static int pair_open(struct poll_pair *p, struct sockaddr_storage *ss,
		     socklen_t len, uint16_t port, int n)
{
	unsigned int entries;
	uint64_t t0;
	int ret;

	p->n = n;
	p->b_ids = calloc(n, sizeof(*p->b_ids));
	if (!p->b_ids)
		return -ENOMEM;
	/* Room for every channel's events at once, and the READABLEs. */
	for (entries = 1024; entries < 2U * n + 1024; entries <<= 1)
		;
	ret = pair_ep_open(&p->a, entries);
	if (!ret)
		ret = pair_ep_open(&p->b, entries);
	if (ret)
		return ret;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	ret = rmsg_ep_listen(p->a, (struct sockaddr *)ss, len, POLL_LISTEN, 0);
	if (ret)
		return ret;
	t0 = now_ns();
	ret = mem_open(p->a, p->b, (struct sockaddr *)ss, len, n, 0,
		       opt.timeout_s, p->b_ids);
	p->open_ns = now_ns() - t0;
	return ret;
}

static void pair_close(struct poll_pair *p)
{
	if (p->a && p->b && p->b_ids)
		mem_close(p->a, p->b, p->n, opt.timeout_s, p->b_ids);
	rmsg_ep_close(p->b);
	rmsg_ep_close(p->a);
	free(p->b_ids);
}

/* Take the events a pair's endpoints have: send completions, READABLEs. */
static int pair_drain(struct poll_pair *p)
{
	struct rmsg_event ev[64];
	int ret;

	do {
		ret = rmsg_ep_progress(p->b, ev, 64);
	} while (ret == 64);
	if (ret < 0)
		return ret;
	do {
		ret = rmsg_ep_progress(p->a, ev, 64);
	} while (ret == 64);
	return ret < 0 ? ret : 0;
}

static double sample_empty(struct poll_pair *p)
{
	struct rmsg_msg msg;
	uint64_t t0;
	int i;

	t0 = now_ns();
	for (i = 0; i < POLL_EMPTY; i++)
		if (rmsg_msg_peek_any(p->a, &msg) != -EAGAIN)
			return -1;
	return (double)(now_ns() - t0) / POLL_EMPTY;
}

static double sample_ready(struct poll_pair *p, bool random_channel)
{
	uint64_t t0, found_ns = 0, deadline;
	struct rmsg_msg msg;
	uint32_t word;
	int i, ch, ret;

	for (i = 0; i < POLL_READY; i++) {
		ch = !random_channel ? p->n - 1 :
		     p->n > 1 ? (int)(random() % p->n) : 0;
		word = (uint32_t)i;
		do {
			ret = rmsg_msg_send(p->b, p->b_ids[ch], &word,
					    sizeof(word), 0, i);
			if (ret == -EAGAIN && pair_drain(p))
				return -1;
		} while (ret == -EAGAIN);
		if (ret)
			return -1;
		deadline = now_ns() + (uint64_t)opt.timeout_s * 1000000000ULL;
		for (;;) {
			t0 = now_ns();
			ret = rmsg_msg_peek_any(p->a, &msg);
			if (ret != -EAGAIN)
				break;
			if (now_ns() > deadline)
				return -1;
		}
		found_ns += now_ns() - t0;
		if (ret || msg.len != sizeof(word) ||
		    memcmp(msg.data, &word, sizeof(word)) ||
		    rmsg_msg_release(p->a, &msg))
			return -1;
		if (i % 32 == 31 && pair_drain(p))
			return -1;
	}
	if (pair_drain(p))
		return -1;
	return (double)found_ns / POLL_READY;
}

static double sample_arm(struct poll_pair *p)
{
	uint64_t t0;
	int i;

	/* Arm what is not armed yet: not timed. */
	if (rmsg_ep_arm(p->a))
		return -1;
	t0 = now_ns();
	for (i = 0; i < POLL_ARMS; i++)
		if (rmsg_ep_arm(p->a))
			return -1;
	return (double)(now_ns() - t0) / POLL_ARMS;
}

static double sample(struct poll_pair *p, int what)
{
	switch (what) {
	case POLL_EMPTY_NS:
		return sample_empty(p);
	case POLL_READY_NS:
		return sample_ready(p, false);
	case POLL_RANDOM_NS:
		return sample_ready(p, true);
	default:
		return sample_arm(p);
	}
}

/*
 * Packets sent by every port of every RDMA device: rxe's
 * hw_counters/sent_pkts, or port_xmit_packets where a device has no such
 * counter; -1 when there is neither.
 */
static long long fabric_packets(void)
{
	static const char * const patterns[] = {
		"/sys/class/infiniband/*/ports/*/hw_counters/sent_pkts",
		"/sys/class/infiniband/*/ports/*/counters/port_xmit_packets",
	};
	long long sum = -1, v;
	unsigned int i;
	size_t j;
	glob_t g;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(patterns) && sum < 0; i++) {
		if (glob(patterns[i], 0, NULL, &g))
			continue;
		for (j = 0; j < g.gl_pathc; j++) {
			f = fopen(g.gl_pathv[j], "r");
			if (!f)
				continue;
			if (fscanf(f, "%lld", &v) == 1)
				sum = (sum < 0 ? 0 : sum) + v;
			fclose(f);
		}
		globfree(&g);
	}
	return sum;
}

/* Packets per second the fabric's ports sent while nothing was sent. */
static double idle_packets_per_s(void)
{
	long long before, after;

	usleep(POLL_SETTLE_US);
	before = fabric_packets();
	sleep(POLL_IDLE_S);
	after = fabric_packets();
	if (before < 0 || after < before)
		return -1;
	return (double)(after - before) / POLL_IDLE_S;
}

/* An endpoint's repair counters before the fault, by channel id. */
struct repair_base {
	struct rmsg_ep *ep;
	uint32_t *repairs;
	uint32_t ids;
};

/* What the fault did: channel ends of the process, how many repaired. */
struct repair_result {
	int chans;		/* of the four endpoints, when it settled */
	int repaired;		/* OPEN with a repair more than before */
	int repaired_1;		/* of those, the single pair's */
	int faulted;		/* of those, the faulted channel's end */
	int faulted_listed;	/* the faulted end, whatever its state */
	double ms;		/* from the fault to the last repair seen */
	int carried;		/* of the -c channels, a message each after */
};

static int repair_base_take(struct repair_base *rb, struct rmsg_ep *ep)
{
	struct rmsg_chan_info *info = NULL;
	uint32_t max = 0;
	int n, i;

	n = rmsg_node_channels(rmsg_ep_fd(ep), 0, &info, NULL);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (info[i].channel > max)
			max = info[i].channel;
	rb->ep = ep;
	rb->ids = max + 1;
	rb->repairs = calloc(rb->ids, sizeof(*rb->repairs));
	if (!rb->repairs) {
		free(info);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		rb->repairs[info[i].channel] = info[i].repairs;
	free(info);
	return 0;
}

/*
 * @rb's endpoint's channels now: added to @chans, to @repaired those OPEN
 * with more repairs than in @rb, to @unsettled those not OPEN, to
 * @faulted_listed @channel (UINT32_MAX: none) if listed, and to @faulted
 * if it is also repaired.
 */
static int repair_count(const struct repair_base *rb, uint32_t channel,
			struct repair_result *res, int *unsettled)
{
	struct rmsg_chan_info *info = NULL;
	int n, i;
	bool again;

	n = rmsg_node_channels(rmsg_ep_fd(rb->ep), 0, &info, NULL);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		res->chans++;
		res->faulted_listed += info[i].channel == channel;
		if (info[i].state != RMSG_CHAN_INFO_OPEN) {
			(*unsettled)++;
			continue;
		}
		again = info[i].channel >= rb->ids ||
			info[i].repairs > rb->repairs[info[i].channel];
		res->repaired += again;
		res->faulted += again && info[i].channel == channel;
	}
	free(info);
	return 0;
}

/*
 * A message on each of @p's channels, read with rmsg_msg_peek_any() and
 * checked: how many arrived, each once, or -1.
 */
static int carry_all(struct poll_pair *p)
{
	uint64_t deadline = now_ns() + (uint64_t)opt.timeout_s * 1000000000ULL;
	unsigned char *seen = calloc(p->n, 1);
	struct rmsg_msg msg;
	int i, got = 0, ret;
	uint32_t word;

	if (!seen)
		return -1;
	for (i = 0; i < p->n; i++) {
		word = (uint32_t)i;
		do {
			ret = rmsg_msg_send(p->b, p->b_ids[i], &word,
					    sizeof(word), 0, i);
			if (ret == -EAGAIN && pair_drain(p))
				goto fail;
		} while (ret == -EAGAIN && now_ns() < deadline);
		if (ret)
			goto fail;
		if (i % 32 == 31 && pair_drain(p))
			goto fail;
	}
	while (got < p->n && now_ns() < deadline) {
		ret = rmsg_msg_peek_any(p->a, &msg);
		if (ret == -EAGAIN) {
			if (pair_drain(p))
				goto fail;
			continue;
		}
		if (ret || msg.len != sizeof(word))
			goto fail;
		memcpy(&word, msg.data, sizeof(word));
		if (word >= (uint32_t)p->n || seen[word] ||
		    rmsg_msg_release(p->a, &msg))
			goto fail;
		seen[word] = 1;
		got++;
	}
	free(seen);
	return pair_drain(p) ? -1 : got;
fail:
	free(seen);
	return -1;
}

/*
 * The fault on @multi's last channel, then the repair watched until no
 * channel of the four endpoints is being repaired and the faulted one's
 * two ends are repaired, then @multi's channels carry a message each.
 */
static int poll_repair(struct poll_pair *single, struct poll_pair *multi,
		       struct repair_result *res)
{
	struct rmsg_ep *eps[] = { single->a, single->b, multi->a, multi->b };
	uint32_t faulted_b = (uint32_t)multi->b_ids[multi->n - 1];
	struct repair_base rb[ARRAY_SIZE(eps)] = { 0 };
	struct repair_result now;
	uint64_t t0, deadline;
	int ret = 0, unsettled, last = -1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(eps) && !ret; i++)
		ret = repair_base_take(&rb[i], eps[i]);
	if (ret)
		goto out;
	memset(res, 0, sizeof(*res));
	t0 = now_ns();
	deadline = t0 + (uint64_t)POLL_REPAIR_S * 1000000000ULL;
	ret = rmsg_node_fault(rmsg_ep_fd(multi->b), 0, faulted_b,
			      RMSG_FAULT_QP_ERROR);
	if (ret)
		goto out;
	for (;;) {
		/* Channel ends' events (CLOSED of one that gave up) too. */
		if (pair_drain(single) || pair_drain(multi)) {
			ret = -EIO;
			goto out;
		}
		memset(&now, 0, sizeof(now));
		unsettled = 0;
		for (i = 0; i < ARRAY_SIZE(eps) && !ret; i++) {
			ret = repair_count(&rb[i], i == 3 ? faulted_b :
					   UINT32_MAX, &now, &unsettled);
			if (i == 1)
				now.repaired_1 = now.repaired;
		}
		if (ret)
			goto out;
		if (now.repaired != last) {
			last = now.repaired;
			res->ms = (now_ns() - t0) / 1e6;
		}
		/*
		 * Settled: the faulted end on b repaired, and its peer on a
		 * (any end repaired), or the faulted end gone (a channel that
		 * is not repaired ends).
		 */
		if ((!unsettled && (now.faulted ? now.repaired >= 2 :
				    !now.faulted_listed)) ||
		    now_ns() > deadline)
			break;
		usleep(10000);
	}
	res->chans = now.chans;
	res->repaired = now.repaired;
	res->repaired_1 = now.repaired_1;
	res->faulted = now.faulted;
	res->carried = carry_all(multi);
out:
	for (i = 0; i < ARRAY_SIZE(eps); i++)
		free(rb[i].repairs);
	return ret;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run_poll(void)
{
	static const char * const names[POLL_FIGURES] = {
		"empty", "ready", "random", "arm",
	};
	double one[POLL_FIGURES][POLL_ROUNDS], many[POLL_FIGURES][POLL_ROUNDS];
	double ratio[POLL_FIGURES][POLL_ROUNDS], med[3][POLL_FIGURES];
	struct poll_pair single = { 0 }, multi = { 0 };
	struct repair_result rep;
	struct sockaddr_storage ss;
	int ret, r, f, first;
	double idle_1, idle_n;
	socklen_t len;

	resolve(opt.server, &ss, &len);
	ret = pair_open(&single, &ss, len, opt.port, 1);
	if (ret)
		die(NULL, "poll: one channel: %s", strerror(-ret));
	idle_1 = idle_packets_per_s();
	ret = pair_open(&multi, &ss, len, opt.port + 1, opt.channels);
	if (ret)
		die(NULL, "poll: %d channels: %s", opt.channels,
		    strerror(-ret));
	srandom(1);
	for (r = 0; r < POLL_ROUNDS; r++) {
		for (f = 0; f < POLL_FIGURES; f++) {
			for (first = 0; first < 2; first++) {
				if ((first ^ r) & 1)
					many[f][r] = sample(&multi, f);
				else
					one[f][r] = sample(&single, f);
			}
			if (one[f][r] <= 0 || many[f][r] <= 0)
				die(NULL, "poll: the %s sample failed",
				    names[f]);
			ratio[f][r] = many[f][r] / one[f][r];
		}
	}
	ret = pair_drain(&single);
	if (!ret)
		ret = pair_drain(&multi);
	if (ret)
		die(NULL, "poll: %s", strerror(-ret));
	idle_n = idle_packets_per_s();
	ret = poll_repair(&single, &multi, &rep);
	if (ret)
		die(NULL, "poll: the repair: %s", strerror(-ret));
	for (f = 0; f < POLL_FIGURES; f++) {
		med[0][f] = median(one[f], POLL_ROUNDS);
		med[1][f] = median(many[f], POLL_ROUNDS);
		med[2][f] = median(ratio[f], POLL_ROUNDS);
	}
	if (opt.json) {
		printf("{\"test\": \"poll\", \"channels\": %d, \"rounds\": %d, \"open_ms\": %.1f, \"opens_per_s\": %.1f",
		       opt.channels, POLL_ROUNDS, multi.open_ns / 1e6,
		       opt.channels / (multi.open_ns / 1e9));
		for (f = 0; f < POLL_FIGURES; f++)
			printf(", \"%s_ns_1\": %.1f, \"%s_ns_n\": %.1f, \"%s_ratio\": %.3f",
			       names[f], med[0][f], names[f], med[1][f],
			       names[f], med[2][f]);
		if (idle_1 > 0 && idle_n >= 0)
			printf(", \"idle_pkts_s_1\": %.1f, \"idle_pkts_s_n\": %.1f, \"idle_ratio\": %.3f",
			       idle_1, idle_n, idle_n / idle_1);
		printf(", \"repair_ends\": %d, \"repair_ends_n\": %d, \"repair_ends_1\": %d, \"repair_ms\": %.1f, \"repair_carried\": %d",
		       rep.chans, rep.repaired - rep.repaired_1,
		       rep.repaired_1, rep.ms, rep.carried);
		printf("}\n");
	} else {
		fputs(rule, stdout);
		printf(" rmsg-perf poll: finding messages, 1 channel against %d (median of %d rounds)\n",
		       opt.channels, POLL_ROUNDS);
		fputs(rule, stdout);
		printf(" %-8s %12s %12s %10s\n", "call", "1 ch (ns)",
		       "N ch (ns)", "N / 1");
		for (f = 0; f < POLL_FIGURES; f++)
			printf(" %-8s %12.1f %12.1f %10.3f\n", names[f],
			       med[0][f], med[1][f], med[2][f]);
		printf(" %d channels opened in %.0f ms: %.0f per second\n",
		       opt.channels, multi.open_ns / 1e6,
		       opt.channels / (multi.open_ns / 1e9));
		if (idle_1 > 0 && idle_n >= 0)
			printf(" idle: %.1f packets/s with 1 channel, %.1f with %d more: %.3f\n",
			       idle_1, idle_n, opt.channels, idle_n / idle_1);
		else
			printf(" idle: no packet counter of the RDMA ports\n");
		printf(" repair: %d ends of the %d channels and %d of the 1 repaired in %.1f ms; %d of %d carried after\n",
		       rep.repaired - rep.repaired_1, opt.channels,
		       rep.repaired_1, rep.ms, rep.carried, opt.channels);
		fputs(rule, stdout);
	}
	pair_close(&multi);
	pair_close(&single);
	return 0;
}
