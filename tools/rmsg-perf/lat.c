// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf lat: ping-pong latency, half of the round trip, in perftest's
 * columns.
 *
 * Calls common.c, report.c, event.c and data.c; client.c and server.c run
 * it through lat_test.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmsg-perf.h"

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
 * --samples: the round trips of @size in the order they ran (ns), after
 * those of the sizes before (parse() made the file empty).
 */
static void write_samples(uint32_t size)
{
	FILE *f = fopen(opt.samples, "a");
	uint64_t i;
	int t;

	if (!f)
		die(NULL, "--samples: cannot open %s: %s", opt.samples,
		    strerror(errno));
	for (t = 0; t < opt.threads; t++)
		for (i = 0; i < workers[t].iters; i++)
			fprintf(f, "%" PRIu32 " %" PRIu64 "\n", size,
				workers[t].samples[i]);
	if (fclose(f))
		die(NULL, "--samples: cannot write %s: %s", opt.samples,
		    strerror(errno));
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

static void lat_report(int s)
{
	if (!s)
		print_header();
	if (opt.samples)
		write_samples(sizes[s]);
	report_lat(sizes[s]);
}

const struct perf_test lat_test = {
	.client = lat_client,
	.server = lat_server,
	.report = lat_report,
	.pingpong = true,
	.samples = true,
};
