// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf mem: what one idle channel costs in memory.
 *
 * The method is the one of selftests/rmsg_scale_test.c (memory_per_channel),
 * where its reasoning is written out: the measure is how many free pages
 * are gone while N channels are open, counting MemFree plus the pages on
 * the per-CPU free lists (/proc/zoneinfo "count:"), read after folding the
 * per-CPU counters (/proc/sys/vm/stat_refresh) and after the figures have
 * settled. That catches every page the kernel takes, whichever allocator
 * takes it (slab, vmalloc for the device's queues, the receive blocks'
 * pages), plus the page tables and the library's own memory. Round 0 is a
 * warm-up, the figure is the median of the later rounds. Both ends of every
 * channel are in this kernel, so the figure is divided by 2N.
 *
 * Unlike the selftest this one asserts nothing; it reports.
 *
 * Calls common.c, report.c and clock.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rmsg.h>

#include "rmsg-perf.h"

#define MEM_ROUNDS	4	/* the first is a warm-up */
#define MEM_WINDOW	64	/* connects not yet reported, at most */
#define LISTEN_DATA	(~0ULL)

struct meminfo {
	long free;		/* MemFree + per-CPU free lists */
	long sunreclaim;
	long vmalloc;
};

static long pcp_pages(void)
{
	char line[256];
	long n, sum = 0;
	FILE *f;

	f = fopen("/proc/zoneinfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &n) == 1)
			sum += n;
	fclose(f);
	return sum;
}

static bool read_meminfo(struct meminfo *mi)
{
	char line[256], buf[64];
	int found = 0, fd;
	long kb;
	FILE *f;

	/* Reading stat_refresh folds the per-CPU counter deltas first. */
	fd = open("/proc/sys/vm/stat_refresh", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = '\0';
		close(fd);
	}
	mi->free = pcp_pages() * sysconf(_SC_PAGESIZE);
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1) {
			mi->free += kb * 1024;
			found++;
		} else if (sscanf(line, "SUnreclaim: %ld kB", &kb) == 1) {
			mi->sunreclaim = kb * 1024;
			found++;
		} else if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1) {
			mi->vmalloc = kb * 1024;
			found++;
		}
	}
	fclose(f);
	return found == 3;
}

/*
 * The pages each slab cache holds (num_slabs * pagesperslab of
 * /proc/slabinfo, version 2.1), by name. The cache a kmalloc() of the
 * module lands in is the one of its size class; SLUB shows merged caches
 * under one of their names.
 */
#define SLAB_CACHES	512

struct slab_snap {
	int n;
	struct {
		char name[32];
		long bytes;
	} cache[SLAB_CACHES];
};

static bool read_slabinfo(struct slab_snap *snap)
{
	long pagesize = sysconf(_SC_PAGESIZE), pps, slabs;
	char line[512], name[32];
	FILE *f;

	snap->n = 0;
	f = fopen("/proc/slabinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f) && snap->n < SLAB_CACHES) {
		if (sscanf(line, "%31s %*d %*d %*d %*d %ld : tunables %*d %*d %*d : slabdata %*d %ld",
			   name, &pps, &slabs) != 3)
			continue;
		strcpy(snap->cache[snap->n].name, name);
		snap->cache[snap->n].bytes = slabs * pps * pagesize;
		snap->n++;
	}
	fclose(f);
	return snap->n > 0;
}

/*
 * The MEM_SLAB_TOP caches that grew most from @before to @after, per end
 * of @ends, into @res (largest first; only caches that grew).
 */
static void slab_growth(const struct slab_snap *before,
			const struct slab_snap *after, long ends,
			struct mem_result *res)
{
	long grew;
	int i, j, k;

	res->nslab = 0;
	for (i = 0; i < after->n; i++) {
		grew = after->cache[i].bytes;
		for (j = 0; j < before->n; j++)
			if (!strcmp(before->cache[j].name,
				    after->cache[i].name)) {
				grew -= before->cache[j].bytes;
				break;
			}
		grew /= ends;
		if (grew <= 0)
			continue;
		/* Insertion into the sorted top list. */
		for (k = res->nslab; k > 0 && res->slab[k - 1].per_end < grew;
		     k--)
			if (k < MEM_SLAB_TOP)
				res->slab[k] = res->slab[k - 1];
		if (k >= MEM_SLAB_TOP)
			continue;
		strcpy(res->slab[k].name, after->cache[i].name);
		res->slab[k].per_end = grew;
		if (res->nslab < MEM_SLAB_TOP)
			res->nslab++;
	}
}

/* Sample once a second until two samples agree within 256 KiB (15 s). */
static bool settle(struct meminfo *mi)
{
	struct meminfo prev;
	int i;

	if (!read_meminfo(&prev))
		return false;
	for (i = 0; i < 15; i++) {
		sleep(1);
		if (!read_meminfo(mi))
			return false;
		if (labs(mi->free - prev.free) < 256 * 1024)
			break;
		prev = *mi;
	}
	return true;
}

/*
 * Take the events of both endpoints; count what was expected and fail on
 * anything else. Returns the number of events or a negative errno.
 */
static int take_events(struct rmsg_ep *ep, unsigned int want, int *count,
		       int *ids)
{
	struct rmsg_event ev[64];
	int n, i;

	n = rmsg_ep_progress(ep, ev, 64);
	for (i = 0; i < n; i++) {
		if (ev[i].kind != want || ev[i].res) {
			fprintf(stderr, "rmsg-perf: mem: event %u res %d (%s) on channel %u\n",
				ev[i].kind, ev[i].res, strerror(-ev[i].res),
				ev[i].channel);
			return -EPROTO;
		}
		if (ids)
			ids[(*count)] = ev[i].channel;
		(*count)++;
	}
	return n;
}

int mem_open(struct rmsg_ep *a, struct rmsg_ep *b,
	     const struct sockaddr *addr, unsigned int addrlen, int n,
	     unsigned int block_size, int timeout_s, int *b_ids)
{
	int issued = 0, connected = 0, accepted = 0, ret, got;
	uint64_t stall = now_ns() + timeout_s * 1000000000ULL;

	while (connected < n || accepted < n) {
		while (issued < n && issued - connected < MEM_WINDOW) {
			ret = rmsg_chan_connect(b, addr, addrlen, issued,
						block_size);
			if (ret < 0)
				return ret;
			b_ids[issued++] = ret;
		}
		got = take_events(b, RMSG_CQE_CONNECTED, &connected, NULL);
		if (got < 0)
			return got;
		ret = take_events(a, RMSG_CQE_ACCEPTED, &accepted, NULL);
		if (ret < 0)
			return ret;
		if (got + ret) {
			stall = now_ns() + timeout_s * 1000000000ULL;
			continue;
		}
		if (now_ns() > stall)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

int mem_close(struct rmsg_ep *a, struct rmsg_ep *b, int n, int timeout_s,
	      const int *b_ids)
{
	uint64_t stall = now_ns() + timeout_s * 1000000000ULL;
	int i, ret, got, a_closed = 0, b_closed = 0;

	for (i = 0; i < n; i++) {
		ret = rmsg_chan_close(b, b_ids[i], 0);
		if (ret)
			return ret;
	}
	while (a_closed < n || b_closed < n) {
		got = take_events(b, RMSG_CQE_CLOSED, &b_closed, NULL);
		if (got < 0)
			return got;
		ret = take_events(a, RMSG_CQE_CLOSED, &a_closed, NULL);
		if (ret < 0)
			return ret;
		if (got + ret) {
			stall = now_ns() + timeout_s * 1000000000ULL;
			continue;
		}
		if (now_ns() > stall)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

int mem_measure(const struct sockaddr *addr, unsigned int addrlen,
		int channels, unsigned int block_size, int timeout_s,
		struct mem_result *res)
{
	long per_end[MEM_ROUNDS], slab[MEM_ROUNDS], vmal[MEM_ROUNDS];
	static struct slab_snap slab_base, slab_opened;
	static struct mem_result by_cache[MEM_ROUNDS];
	struct sockaddr_storage laddr;
	struct meminfo base, opened, closed;
	struct rmsg_ep *a = NULL, *b = NULL;
	unsigned int entries;
	int ret, round, i, j, order[MEM_ROUNDS - 1], *ids;
	long ends = 2L * channels;

	memset(res, 0, sizeof(*res));
	if (addrlen > sizeof(laddr))
		return -EINVAL;
	ids = calloc(channels, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	/* Room for every channel's events at once. */
	for (entries = 64; entries < 2U * channels + 64; entries <<= 1)
		;
	ret = rmsg_ep_open(&a, 64, entries);
	if (ret)
		goto out_ids;
	ret = rmsg_ep_open(&b, 64, entries);
	if (ret)
		goto out_a;
	memcpy(&laddr, addr, addrlen);
	ret = rmsg_ep_listen(a, (struct sockaddr *)&laddr, addrlen,
			     LISTEN_DATA, block_size);
	if (ret)
		goto out_b;

	for (round = 0; round < MEM_ROUNDS; round++) {
		ret = -EIO;
		if (!settle(&base))
			goto out_b;
		read_slabinfo(&slab_base);
		ret = mem_open(a, b, (struct sockaddr *)&laddr, addrlen,
			       channels, block_size, timeout_s, ids);
		if (ret)
			goto out_b;
		ret = -EIO;
		if (!settle(&opened))
			goto out_b;
		if (read_slabinfo(&slab_opened))
			slab_growth(&slab_base, &slab_opened, ends,
				    &by_cache[round]);
		else
			by_cache[round].nslab = 0;
		ret = mem_close(a, b, channels, timeout_s, ids);
		if (ret)
			goto out_b;
		ret = -EIO;
		if (!settle(&closed))
			goto out_b;
		per_end[round] = (base.free - opened.free) / ends;
		slab[round] = (opened.sunreclaim - base.sunreclaim) / ends;
		vmal[round] = (opened.vmalloc - base.vmalloc) / ends;
		fprintf(stderr, "rmsg-perf: mem: round %d: %ld B per channel end (slab %ld, vmalloc %ld); %ld B not back after close\n",
			round, per_end[round], slab[round], vmal[round],
			(base.free - closed.free) / ends);
	}
	res->warmup_per_end = per_end[0];
	res->rounds = MEM_ROUNDS - 1;
	/* The median round; its breakdown goes with it. */
	for (i = 0; i < MEM_ROUNDS - 1; i++)
		order[i] = i + 1;
	for (i = 1; i < MEM_ROUNDS - 1; i++)
		for (j = i; j > 0 && per_end[order[j]] < per_end[order[j - 1]];
		     j--) {
			round = order[j];
			order[j] = order[j - 1];
			order[j - 1] = round;
		}
	round = order[(MEM_ROUNDS - 1) / 2];
	res->per_end = per_end[round];
	res->slab_per_end = slab[round];
	res->vmalloc_per_end = vmal[round];
	res->nslab = by_cache[round].nslab;
	memcpy(res->slab, by_cache[round].slab, sizeof(res->slab));
	ret = 0;
out_b:
	rmsg_ep_close(b);
out_a:
	rmsg_ep_close(a);
out_ids:
	free(ids);
	return ret;
}



int run_mem(void)
{
	struct sockaddr_storage ss;
	struct mem_result res;
	socklen_t len;
	int ret, i;

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
		printf("{\"test\": \"mem\", \"channels\": %d, \"block\": %u, \"rounds\": %d, \"bytes_per_channel\": %ld, \"warmup_bytes_per_channel\": %ld, \"slab_bytes_per_channel\": %ld, \"vmalloc_bytes_per_channel\": %ld, \"slab_caches\": {",
		       opt.channels, opt.block, res.rounds, res.per_end,
		       res.warmup_per_end, res.slab_per_end,
		       res.vmalloc_per_end);
		for (i = 0; i < res.nslab; i++)
			printf("%s\"%s\": %ld", i ? ", " : "",
			       res.slab[i].name, res.slab[i].per_end);
		printf("}}\n");
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
		for (i = 0; i < res.nslab; i++)
			printf("   slab %-24s %7ld bytes\n", res.slab[i].name,
			       res.slab[i].per_end);
		fputs(rule, stdout);
	}
	return 0;
}
