// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_pair: an Open MPI job that checks every byte it receives, for
 * selftests/pair_mpi.sh (the two guests of the pair topology, make
 * check-mpi) and for anyone who wants to know whether a transport delivers
 * what MPI handed it.
 *
 *   mpi_pair [-i ITERATIONS] [-t SECONDS] [-s SIZE,SIZE...] [-n WORDS] [-c]
 *
 * Each iteration, for each SIZE (bytes per peer; default 64 and 65536:
 * one eager, one above the rmsg provider's rendezvous threshold, which is
 * the largest payload a channel's 32 KiB block takes in one message):
 *
 *   MPI_Alltoall   SIZE bytes from every rank to every rank
 *   MPI_Alltoallv  a different count for every (sender, receiver,
 *                  iteration), from SIZE / 2 to SIZE bytes
 *
 * and then MPI_Allreduce (MPI_SUM of WORDS 64-bit words, default 4096)
 * and MPI_Allreduce (MPI_MAX of one word). Every byte a rank sends to rank
 * R in iteration I is a function of (sender, R, I, its offset), every
 * Allreduce word a function of (rank, I, index): the receiver computes
 * what it must get and compares all of it. A rank that finds a mismatch
 * says where (the first few), and the job exits 1 after the summary;
 * MPI's own errors abort it (MPI_ERRORS_ARE_FATAL). -c checks the checker:
 * the last rank flips one bit of what it received in the first Alltoall,
 * Alltoallv and Allreduce, and the job must fail.
 *
 * The job stops after ITERATIONS (default 10), or when rank 0 has run
 * SECONDS (a broadcast of rank 0's verdict ends each iteration, so all
 * stop together); with both, whichever comes first. Rank 0 prints one
 * line per iteration ("iteration N ..."; pair_mpi.sh waits for these
 * before it removes a device) and a summary:
 *
 *   mpi_pair: ranks R hosts H (NAME:COUNT ...) iterations I seconds S
 *   mpi_pair: checked alltoall B bytes alltoallv B bytes allreduce W words
 *   mpi_pair: bad B bytes W words: ok|FAILED
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 8
/* Mismatches a rank prints before it only counts them. */
#define MAX_REPORTS 8

static int rank, nranks;
static unsigned long long reports;

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser: every input bit moves every output bit. */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Byte OFF of what SENDER sends RECEIVER in iteration ITER, op OP. */
static uint64_t seed(int op, int sender, int receiver, long iter)
{
	return mix(((uint64_t)op << 56) ^ ((uint64_t)sender << 40) ^
		   ((uint64_t)receiver << 20) ^ (uint64_t)iter);
}

static void fill(unsigned char *p, size_t len, uint64_t s)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = mix(s + i / 8);
		size_t k;

		for (k = 0; k < 8 && i + k < len; k++)
			p[i + k] = (unsigned char)(w >> (8 * k));
	}
}

/* Bytes that differ from the pattern; the first few are printed. */
static unsigned long long check(const unsigned char *p, size_t len,
				uint64_t s, const char *what, int sender,
				long iter)
{
	unsigned long long bad = 0;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = mix(s + i / 8);
		size_t k;

		for (k = 0; k < 8 && i + k < len; k++) {
			unsigned char want = (unsigned char)(w >> (8 * k));

			if (p[i + k] == want)
				continue;
			if (bad == 0 && reports < MAX_REPORTS) {
				reports++;
				fprintf(stderr,
					"mpi_pair: rank %d: %s from rank %d, iteration %ld, byte %zu of %zu: 0x%02x, not 0x%02x\n",
					rank, what, sender, iter, i + k, len,
					p[i + k], want);
			}
			bad++;
		}
	}
	return bad;
}

/* The Alltoallv count from SENDER to RECEIVER in ITER: SIZE/2 .. SIZE. */
static int vcount(int size, int sender, int receiver, long iter)
{
	int half = size / 2;

	if (half == 0)
		return size;
	return half + (int)(seed(9, sender, receiver, iter) %
			    (uint64_t)(size - half + 1));
}

static uint64_t red_word(int r, long iter, int k)
{
	return mix(((uint64_t)r << 40) ^ ((uint64_t)iter << 20) ^
		   (uint64_t)k);
}

static void bad_usage(void)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: mpi_pair [-i ITERATIONS] [-t SECONDS] [-s SIZE,SIZE...] [-n WORDS] [-c]\n");
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	long iters = 10, iter;
	double limit = 0, t0, t_iter;
	int sizes[MAX_SIZES] = { 64, 65536 }, nsizes = 2, words = 4096;
	unsigned long long bad = 0, bad_words = 0, a2a_bytes = 0, a2av_bytes = 0;
	unsigned long long red_words = 0, sums[5], tot[5];
	unsigned char *sbuf, *rbuf;
	uint64_t *rin, *rout;
	int *scounts, *sdispls, *rcounts, *rdispls;
	char host[MPI_MAX_PROCESSOR_NAME], *hosts = NULL;
	int hlen, c, i, j, maxsize = 0, stop = 0, corrupt = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	while ((c = getopt(argc, argv, "i:t:s:n:c")) != -1) {
		char *p, *end;

		switch (c) {
		case 'i':
			iters = strtol(optarg, &end, 0);
			if (*end || iters < 0)
				bad_usage();
			break;
		case 't':
			limit = strtod(optarg, &end);
			if (*end || limit < 0)
				bad_usage();
			break;
		case 's':
			nsizes = 0;
			for (p = optarg; *p; p = end + (*end == ',')) {
				long v = strtol(p, &end, 0);

				if (end == p || v < 1 || v > (1 << 24) ||
				    nsizes == MAX_SIZES)
					bad_usage();
				sizes[nsizes++] = (int)v;
			}
			if (nsizes == 0)
				bad_usage();
			break;
		case 'n':
			words = (int)strtol(optarg, &end, 0);
			if (*end || words < 1 || words > (1 << 22))
				bad_usage();
			break;
		case 'c':
			corrupt = rank == nranks - 1;
			break;
		default:
			bad_usage();
		}
	}
	if (iters == 0 && limit == 0)
		bad_usage();
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > maxsize)
			maxsize = sizes[i];

	sbuf = malloc((size_t)maxsize * nranks);
	rbuf = malloc((size_t)maxsize * nranks);
	rin = malloc(sizeof(*rin) * words);
	rout = malloc(sizeof(*rout) * words);
	scounts = malloc(sizeof(int) * 4 * nranks);
	if (!sbuf || !rbuf || !rin || !rout || !scounts) {
		fprintf(stderr, "mpi_pair: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	sdispls = scounts + nranks;
	rcounts = sdispls + nranks;
	rdispls = rcounts + nranks;

	/* Where the ranks run: the test wants both nodes, 8 ranks each. */
	memset(host, 0, sizeof(host));
	MPI_Get_processor_name(host, &hlen);
	if (rank == 0)
		hosts = malloc((size_t)nranks * sizeof(host));
	MPI_Gather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host),
		   MPI_CHAR, 0, MPI_COMM_WORLD);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (rank == 0) {
		/* A job that hangs shows whether it got this far. */
		printf("mpi_pair: %d ranks in the first barrier\n", nranks);
		fflush(stdout);
	}
	for (iter = 0; !stop; iter++) {
		t_iter = MPI_Wtime();
		for (c = 0; c < nsizes; c++) {
			int size = sizes[c], off;

			/* Alltoall: SIZE bytes each way between every two. */
			for (j = 0; j < nranks; j++)
				fill(sbuf + (size_t)j * size, size,
				     seed(1, rank, j, iter) + (uint64_t)size);
			memset(rbuf, 0, (size_t)size * nranks);
			MPI_Alltoall(sbuf, size, MPI_BYTE, rbuf, size,
				     MPI_BYTE, MPI_COMM_WORLD);
			if (corrupt && iter == 0 && c == 0)
				rbuf[size / 2] ^= 0x10;
			for (j = 0; j < nranks; j++)
				bad += check(rbuf + (size_t)j * size, size,
					     seed(1, j, rank, iter) +
					     (uint64_t)size, "alltoall", j,
					     iter);
			a2a_bytes += (unsigned long long)size * nranks;

			/* Alltoallv: every pair its own count, packed. */
			for (j = 0, off = 0; j < nranks; j++) {
				scounts[j] = vcount(size, rank, j, iter);
				sdispls[j] = off;
				fill(sbuf + off, scounts[j],
				     seed(2, rank, j, iter) + (uint64_t)size);
				off += scounts[j];
			}
			for (j = 0, off = 0; j < nranks; j++) {
				rcounts[j] = vcount(size, j, rank, iter);
				rdispls[j] = off;
				off += rcounts[j];
			}
			memset(rbuf, 0, off);
			MPI_Alltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf,
				      rcounts, rdispls, MPI_BYTE,
				      MPI_COMM_WORLD);
			if (corrupt && iter == 0 && c == 0)
				rbuf[0] ^= 0x01;
			for (j = 0; j < nranks; j++)
				bad += check(rbuf + rdispls[j], rcounts[j],
					     seed(2, j, rank, iter) +
					     (uint64_t)size, "alltoallv", j,
					     iter);
			a2av_bytes += (unsigned long long)off;
		}

		/* Allreduce: the sum of every rank's words, and a max. */
		for (j = 0; j < words; j++)
			rin[j] = red_word(rank, iter, j);
		memset(rout, 0, sizeof(*rout) * words);
		MPI_Allreduce(rin, rout, words, MPI_UINT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		if (corrupt && iter == 0)
			rout[words - 1] ^= 1ULL << 63;
		for (j = 0; j < words; j++) {
			uint64_t want = 0;
			int r;

			for (r = 0; r < nranks; r++)
				want += red_word(r, iter, j);
			if (rout[j] == want)
				continue;
			if (bad_words == 0 && reports < MAX_REPORTS) {
				reports++;
				fprintf(stderr,
					"mpi_pair: rank %d: allreduce sum, iteration %ld, word %d: %#llx, not %#llx\n",
					rank, iter, j,
					(unsigned long long)rout[j],
					(unsigned long long)want);
			}
			bad_words++;
		}
		rin[0] = (uint64_t)rank * 1000003u + (uint64_t)iter;
		MPI_Allreduce(rin, rout, 1, MPI_UINT64_T, MPI_MAX,
			      MPI_COMM_WORLD);
		if (rout[0] != (uint64_t)(nranks - 1) * 1000003u +
				(uint64_t)iter) {
			fprintf(stderr,
				"mpi_pair: rank %d: allreduce max, iteration %ld: %llu\n",
				rank, iter, (unsigned long long)rout[0]);
			bad_words++;
		}
		red_words += (unsigned long long)words + 1;

		/* Rank 0 decides whether there is another iteration. */
		if (rank == 0) {
			double now = MPI_Wtime();

			stop = (iters && iter + 1 >= iters) ||
			       (limit && now - t0 >= limit);
			printf("iteration %ld %.2f s (%.1f s in all)\n", iter,
			       now - t_iter, now - t0);
			fflush(stdout);
		}
		MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}

	sums[0] = bad;
	sums[1] = bad_words;
	sums[2] = a2a_bytes;
	sums[3] = a2av_bytes;
	sums[4] = red_words;
	MPI_Reduce(sums, tot, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (rank == 0) {
		int nhosts = 0;

		printf("mpi_pair: ranks %d hosts", nranks);
		/* Distinct names, in order of first rank, with their counts. */
		for (i = 0; i < nranks; i++) {
			char *h = hosts + (size_t)i * sizeof(host);

			for (j = 0; j < i; j++)
				if (!strcmp(h, hosts + (size_t)j * sizeof(host)))
					break;
			nhosts += j == i;
		}
		printf(" %d (", nhosts);
		for (i = 0, c = 0; i < nranks; i++) {
			char *h = hosts + (size_t)i * sizeof(host);
			int n = 0;

			for (j = 0; j < i; j++)
				if (!strcmp(h, hosts + (size_t)j * sizeof(host)))
					break;
			if (j < i)
				continue;
			for (j = i; j < nranks; j++)
				n += !strcmp(h, hosts + (size_t)j * sizeof(host));
			printf("%s%s:%d", c++ ? " " : "", h, n);
		}
		printf(") iterations %ld seconds %.1f\n", iter,
		       MPI_Wtime() - t0);
		printf("mpi_pair: checked alltoall %llu bytes alltoallv %llu bytes allreduce %llu words\n",
		       tot[2], tot[3], tot[4]);
		printf("mpi_pair: bad %llu bytes %llu words: %s\n", tot[0],
		       tot[1], tot[0] || tot[1] ? "FAILED" : "ok");
		fflush(stdout);
	}
	MPI_Bcast(&tot, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return tot[0] || tot[1] ? 1 : 0;
}
