// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf recover: how long a repair takes, seen by a program. The
 * client keeps a window (-W, default 1: a ping-pong) of checked pings out
 * on each channel and the server echoes each one; now and then (--interval
 * after the last repair) the client injects a fault into one of its own
 * channels, in turn, and a sample is the time from just before
 * rmsg_node_fault() to the arrival of that channel's next echo. Before
 * the injection the client takes every echo already there, so that the
 * one sampled came after it (or in the instant between). Every message is
 * checked for its bytes and its place in the sequence, and at the end
 * every ping must have come back: a lost, repeated or damaged message
 * fails the run.
 *
 * With --fault=none the client injects nothing: the checked stream runs
 * for --duration seconds while faults come from elsewhere (a link taken
 * down, packets dropped, a peer killed), and the same checks apply at its
 * end.
 *
 * Calls common.c, report.c, event.c and mix.c; client.c and server.c run
 * it through recover_test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmsg-perf.h"

#define READD_DEV		"rxe0"

/* The repair counters of the caller's own channels, summed. */
struct repair_count {
	uint64_t repairs, retx_msgs, retx_bytes, recover_ns;
};

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

/* Recovery times of the faults of one kind (0: all), in ms. */
struct rec_stats {
	uint64_t n;
	double p50, p99, max, min, mean;
};

static int recover_status;	/* 1: faults without a repair */

/*
 * A message of @c has arrived whole and checked: the first one the client
 * took after the fault under way was injected on its channel ends the
 * fault's sample.
 */
static void rec_arrival(struct worker *w, struct chan *c, uint64_t seq)
{
	uint64_t t = now_ns();

	if (c != rec.fc || seq < c->mark)
		return;
	w->samples[rec.faults - 1] = t - rec.t_inj;
	rec.fc = NULL;
	rec.next_at = t + opt.interval_ms * 1000000ULL;
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
		n = rmsg_node_channels(rmsg_ep_fd(w->ep), 0, &info, NULL);
		if (n < 0)
			die(w, "rmsg_node_channels: %s", strerror(-n));
		for (i = 0; i < n; i++)
			if (info[i].state != RMSG_CHAN_INFO_OPEN)
				break;
		if (i == n)
			break;
		free(info);
		info = NULL;
		pump(w);
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

const char *fault_name(uint32_t kind)
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

	n = rmsg_node_channels(rmsg_ep_fd(w->ep), 0, &info, NULL);
	if (n < 0)
		die(w, "rmsg_node_channels: %s", strerror(-n));
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
		while (!rmsg_msg_peek(w->ep, c->id, &msg)) {
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
	      rmsg_node_fault(rmsg_ep_fd(w->ep), 0, c->id, kind);
	if (ret == -ENOTCONN) {
		/* Not open (yet): still being repaired. */
		rec.not_open++;
		rec.next_at = t + 1000000ULL;
		return;
	}
	if (ret)
		die(w, "rmsg_node_fault(%s) on channel %u: %s",
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
	struct ctl ctl;
	bool more;
	int i;

	rec.kinds = calloc(nf ? nf : 1, 1);
	if (!rec.kinds)
		die(w, "out of memory");
	mix_setup(w);
	w->arrival = rec_arrival;
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
		/* Sends complete, and free their room, through events. */
		pump(w);
		if (mix_rx(w, NULL)) {
			wait_renew(&wt);
			continue;
		}
		faults = rec.faults;
		if (!opt.no_fault)
			recover_fault(w);
		if (rec.faults != faults)
			wait_renew(&wt);
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
	/* The end of the data: the server stops echoing and reports. */
	memset(&ctl, 0, sizeof(ctl));
	send_ctl(w, &w->ch[0], &ctl, CTL_STOP);
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
		/* Sends complete, and free their room, through events. */
		pump(w);
		if (mix_rx(w, &stop)) {
			wait_renew(&wt);
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
			       " a sample: from rmsg_node_fault() to the channel's next echo\n",
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

static void recover_report(int s)
{
	report_recover(sizes[s]);
}

static int recover_finish(void)
{
	free(rec.kinds);
	rec.kinds = NULL;
	return recover_status;
}

const struct perf_test recover_test = {
	.client = recover_client,
	.server = recover_server,
	.report = recover_report,
	.on_mix_op = mix_op,
	.finish = recover_finish,
	.samples = true,
};
