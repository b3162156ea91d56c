// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: what the tests' reports share. A report is a table in
 * perftest's columns, or one JSON object per size (--json); the bench
 * scripts parse both, so a line changes only with them.
 *
 * Calls clock.c and syscount.c only (and reads common.c's state).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "rmsg-perf.h"

const char rule[] =
	"---------------------------------------------------------------------------------------\n";

void print_header(void)
{
	const struct worker *w = &workers[0];

	if (opt.json)
		return;
	fputs(rule, stdout);
	printf(" rmsg-perf %s: %s, %s\n", test_names[opt.test],
	       !opt.reg ? "eager messages" :
	       opt.put ? "rmsg_msg_send_zc(RMSG_ZC_PUT), RPut zero copy" :
	       opt.zc ? "rmsg_msg_send_zc(), RGet zero copy" :
	       opt.unreg ? "rmsg_msg_send() from memory in no region" :
	       "rmsg_msg_send() from registered memory",
	       opt.test == TEST_LAT ?
	       "ping-pong, half of the round trip" :
	       "one way, measured at the receiver");
	if (opt.reg && !opt.zc && run_thresh == THRESH_NEVER)
		printf(" rendezvous threshold: never; ");
	else if (opt.reg && !opt.zc)
		printf(" rendezvous threshold: %" PRIu64 " bytes; ", run_thresh);
	if (opt.reg)
		printf("%sreceived with rmsg_msg_recv_into() into %s memory\n",
		       opt.zc ? " " : "",
		       opt.unreg ? "pinned-per-transfer" : "registered");
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
const char *protocol(uint64_t rndv, uint64_t msgs)
{
	return !rndv ? "eager" : rndv == msgs ? "rndv" : "mixed";
}

/* The keys of rendezvous runs, after json_common()'s. */
void json_reg(uint64_t rndv, uint64_t msgs)
{
	if (!opt.reg)
		return;
	printf(", \"send\": \"%s\", \"put\": %s, \"rndv_thresh\": ",
	       opt.zc ? "rmsg_msg_send_zc" : "rmsg_msg_send",
	       opt.put ? "true" : "false");
	if (run_thresh == THRESH_NEVER)
		printf("null");
	else
		printf("%" PRIu64, run_thresh);
	printf(", \"slots\": %u, \"protocol\": \"%s\", \"rndv_msgs\": %" PRIu64,
	       workers[0].ntx, protocol(rndv, msgs), rndv);
}

int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The nearest-rank percentile @p (0 < p <= 1) of @n sorted samples. */
uint64_t percentile(const uint64_t *v, uint64_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p * n);

	return v[rank ? rank - 1 : 0];
}

double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / b : 0;
}

void json_common(uint32_t size, uint64_t iters, uint64_t warmup)
{
	printf("{\"test\": \"%s\", \"bytes\": %u, \"iterations\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"threads\": %d, \"channels\": %d, \"block\": %u, \"sqpoll\": %s, \"clock\": \"%s\", \"syscall_counter\": \"%s\"",
	       test_names[opt.test], size, iters, warmup, opt.threads,
	       opt.channels, opt.block, opt.sqpoll ? "true" : "false",
	       clock_name(), sysctr_method_name(workers[0].sc.method));
}
