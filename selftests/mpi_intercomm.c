// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_intercomm: an intercommunicator over the rmsg provider, as a plain
 * MPI program (libfabric_test.sh runs it as two ranks of Open MPI's ofi
 * MTL with tools/testing/mpirun-rxe).
 *
 * MPI_Intercomm_create() between the even and the odd ranks: Open MPI
 * learns the remote group's processes again and its MTL inserts their
 * addresses into the provider's address vector a second time, then
 * receives from the entries that insert returned. With an address vector
 * that appended a second entry for a known address, a receive directed
 * to it never matched and every rank hung here.
 *
 * Over the intercommunicator each rank sends to the remote rank of its own
 * local rank and receives from it, small and large (rendezvous) messages,
 * every byte checked; then MPI_Intercomm_merge() and an MPI_Allreduce()
 * over the merged communicator. Rank 0 prints one line per check; the
 * exit status is 0 when all hold on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL	100
#define LARGE	(1 << 20)

static unsigned char byte_at(size_t i, int seed)
{
	return (unsigned char)(i * (2 * seed + 1) + seed);
}

/* Exchange @len bytes with the remote rank @peer of @inter; 1 if whole. */
static int exchange(MPI_Comm inter, int peer, int me, size_t len, int tag)
{
	unsigned char *out = malloc(len), *in = calloc(1, len);
	MPI_Request r[2];
	size_t i;
	int ok = out && in;

	for (i = 0; ok && i < len; i++)
		out[i] = byte_at(i, me + tag);
	if (ok) {
		MPI_Irecv(in, (int)len, MPI_BYTE, peer, tag, inter, &r[0]);
		MPI_Isend(out, (int)len, MPI_BYTE, peer, tag, inter, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
	/* What came was sent by the world rank on the other side. */
	for (i = 0; ok && i < len; i++)
		ok = in[i] == byte_at(i, (me ^ 1) + tag);
	free(out);
	free(in);
	return ok;
}

static int all(int ok, MPI_Comm comm)
{
	int every = 0;

	MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_LAND, comm);
	return every;
}

int main(int argc, char **argv)
{
	MPI_Comm local, inter, merged;
	int me, size, lrank, rsize, ok, sum = 0, want, failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size % 2) {
		if (!me)
			fprintf(stderr, "mpi_intercomm: an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* Evens and odds; the other group's leader is world rank 1 or 0. */
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
	MPI_Comm_rank(local, &lrank);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, !(me % 2), 7, &inter);
	MPI_Comm_remote_size(inter, &rsize);
	ok = all(rsize == size / 2, MPI_COMM_WORLD);
	if (!me)
		printf("%s MPI_Intercomm_create: a remote group of %d\n",
		       ok ? "ok" : "FAILED", rsize);
	failed |= !ok;

	/* Local rank k of the evens is world 2k, of the odds 2k + 1. */
	ok = all(exchange(inter, lrank, me, SMALL, 1) &&
		 exchange(inter, lrank, me, LARGE, 2), MPI_COMM_WORLD);
	if (!me)
		printf("%s messages over the intercommunicator, every byte\n",
		       ok ? "ok" : "FAILED");
	failed |= !ok;

	MPI_Intercomm_merge(inter, me % 2, &merged);
	MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, merged);
	want = size * (size - 1) / 2;
	ok = all(sum == want, MPI_COMM_WORLD);
	if (!me)
		printf("%s MPI_Intercomm_merge, an allreduce over it: %d\n",
		       ok ? "ok" : "FAILED", sum);
	failed |= !ok;

	MPI_Comm_free(&merged);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&local);
	MPI_Finalize();
	return failed;
}
