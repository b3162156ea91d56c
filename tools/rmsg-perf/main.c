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
 *   rmsg-perf hold-syscount                 (the test bed's counter)
 *
 * Server and client take the same options. The client connects, tells the
 * server what to run (HELLO, then one RUN per message size), and prints
 * the results; the server runs the other side and reports what it measured
 * (RESULT). Documentation/bench.rst describes the tests and their figures.
 *
 * This file parses the options and starts the subcommand: mem.c's and
 * syscount.c's directly, the others' through client.c or server.c with
 * the test's struct perf_test. It may call any of rmsg-perf's files.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmsg-perf.h"

/* The client-server tests, by enum test (mem runs on its own). */
static const struct perf_test *const tests[] = {
	[TEST_LAT] = &lat_test, [TEST_BW] = &stream_test,
	[TEST_RATE] = &stream_test, [TEST_RECOVER] = &recover_test,
};

/* ------------------------------------------------------------------------
 * main.
 */
static void print_usage(FILE *out)
{
	fputs("usage: rmsg-perf [options] {lat|bw|rate|recover} [SERVER]\n"
	      "       rmsg-perf [options] {mem|poll} ADDRESS\n"
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
	      "  poll   what finding messages costs: an empty rmsg_msg_peek_any(), one\n"
	      "         that finds a message, and rmsg_ep_arm() with -c channels (default\n"
	      "         1024, at most 65536) against one channel, same process, ADDRESS\n"
	      "         local; also how fast the -c channels open, the idle packets,\n"
	      "         and the repair of all after a QP error on one (a link's too)\n"
	      "  recover  time to repair a channel: -n faults injected by the client into\n"
	      "         its channels in turn, each timed from the injection to the\n"
	      "         channel's next echo of a checked ping-pong (64 bytes, window -W 1)\n"
	      "  hold-syscount  not a test: hold a system-call counter open until\n"
	      "         killed, so that measurements do not patch the kernel's text\n"
	      "         (rmsg's test bed runs one in its guest)\n"
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
	      "      --samples=FILE   lat, client: every measured round trip to FILE,\n"
	      "                       in the order run, a line 'BYTES NS' each (a tail's\n"
	      "                       period shows there, not in percentiles)\n"
	      "\n"
	      "Rendezvous (any of these, or a size above the largest eager message: both\n"
	      "sides send from and receive into memory registered with rmsg_reg()):\n"
	      "      --rndv-thresh=BYTES  the endpoints' threshold: rmsg_msg_send() goes\n"
	      "                       rendezvous from BYTES up ('never': eager only);\n"
	      "                       default: the library's (RMSG_RNDV_THRESH)\n"
	      "      --zc             every message with rmsg_msg_send_zc() (rendezvous)\n"
	      "      --put            RPut (rmsg_msg_send_zc() with RMSG_ZC_PUT); implies --zc\n"
	      "      --unreg          the same buffers, never registered: the kernel pins\n"
	      "                       each transfer's pages for it (RMSG_FEAT_RNDV_PIN)\n"
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
	      "                       ways) by rendezvous: rmsg_msg_send_zc(), RGet and RPut\n"
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
	       OPT_PUT, OPT_REG_MEM, OPT_FAULT, OPT_RNDV_EVERY, OPT_MORE,
	       OPT_UNREG, OPT_SAMPLES };
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
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "rndv-thresh", required_argument, NULL, OPT_THRESH },
		{ "zc", no_argument, NULL, OPT_ZC },
		{ "put", no_argument, NULL, OPT_PUT },
		{ "unreg", no_argument, NULL, OPT_UNREG },
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
		case OPT_UNREG:
			opt.unreg = true;
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
						 RMSG_MAX_CHANNELS);
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
		case OPT_SAMPLES:
			opt.samples = optarg;
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
	for (i = TEST_LAT; i <= TEST_POLL; i++)
		if (!strcmp(argv[optind], test_names[i]))
			opt.test = i;
	if (!opt.test)
		die(NULL, "unknown test '%s': lat, bw, rate, mem, poll or recover",
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
	if (opt.test == TEST_MEM || opt.test == TEST_POLL) {
		if (!opt.server)
			die(NULL, "%s needs the local address to use",
			    test_names[opt.test]);
		if (!channels_set)
			opt.channels = opt.test == TEST_MEM ? 200 : 1024;
	} else if (opt.channels > MAX_CHANNELS) {
		die(NULL, "channels: at most %d per thread", MAX_CHANNELS);
	}
	if (opt.port + opt.threads - 1 > 65535)
		die(NULL, "ports %u to %u do not all exist", opt.port,
		    opt.port + opt.threads - 1);
	if (opt.samples) {
		FILE *f;

		if (opt.test != TEST_LAT || !opt.server)
			die(NULL, "--samples is for a lat client");
		/* Started empty now, not found unwritable after the run. */
		f = fopen(opt.samples, "w");
		if (!f || fclose(f))
			die(NULL, "--samples: cannot write %s: %s",
			    opt.samples, strerror(errno));
	}
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
	if (opt.test == TEST_POLL)
		return run_poll();
	perf_test = tests[opt.test];

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
	return perf_test->finish ? perf_test->finish() : 0;
}
