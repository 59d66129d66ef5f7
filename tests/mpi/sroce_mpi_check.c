/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An MPI job whose every result is checked (tests/vm/98-middleware.sh runs
 * it with Open MPI's UCX PML over sroce, one rank per network namespace):
 *
 *   ring       each rank passes a buffer to the next one, for sizes from
 *              8 bytes (UCX's eager path) to 4 MiB (rendezvous, done with
 *              RDMA READ or WRITE), and checks every byte it gets against
 *              the pattern of the rank it came from;
 *   allreduce  a sum of 64-bit integers over every rank, 1 MiB of them,
 *              checked against the closed form.
 *
 *   sroce_mpi_check [ROUNDS]
 *
 * Rank 0 prints one ok:/FAIL: line per check; the exit status is non-zero
 * on any failure on any rank.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte at `i` of what rank `from` sends in round `round`. */
static uint8_t pattern(int from, int round, size_t i)
{
	return (uint8_t)(i * 131 + (size_t)from * 29 + (size_t)round * 7 + (i >> 12));
}

static long ring(int rank, int size, size_t len, int rounds)
{
	uint8_t *out = malloc(len), *in = malloc(len);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	long bad = 0;

	if (!out || !in) {
		fprintf(stderr, "rank %d: no memory for %zu bytes\n", rank, len);
		exit(2);
	}
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < len; i++)
			out[i] = pattern(rank, r, i);
		memset(in, 0, len);
		MPI_Sendrecv(out, (int)len, MPI_BYTE, next, r, in, (int)len, MPI_BYTE, prev, r,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (size_t i = 0; i < len; i++)
			bad += in[i] != pattern(prev, r, i);
	}
	free(out);
	free(in);
	return bad;
}

static long allreduce(int rank, int size, size_t n)
{
	int64_t *v = malloc(n * sizeof(*v)), *sum = malloc(n * sizeof(*sum));
	/* sum over r of (r * 1000003 + i) */
	int64_t ranks = (int64_t)size * (size - 1) / 2;
	long bad = 0;

	if (!v || !sum) {
		fprintf(stderr, "rank %d: no memory\n", rank);
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)rank * 1000003 + (int64_t)i;
	MPI_Allreduce(v, sum, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++)
		bad += sum[i] != ranks * 1000003 + (int64_t)size * (int64_t)i;
	free(v);
	free(sum);
	return bad;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 4096, 65536, 1 << 20, 4 << 20 };
	int rounds = argc > 1 ? atoi(argv[1]) : 20, rank, size, failed = 0;
	char host[MPI_MAX_PROCESSOR_NAME];
	int hlen;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &hlen);
	printf("rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);

	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		long bad = ring(rank, size, sizes[s], rounds), all;

		MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%s: ring of %d ranks, %zu bytes, %d rounds: %ld bad bytes\n",
			       all ? "FAIL" : "ok", size, sizes[s], rounds, all);
		failed |= rank == 0 && all;
	}
	long bad = allreduce(rank, size, 1 << 17), all;

	MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: allreduce (sum) of 131072 int64 over %d ranks: %ld wrong\n",
		       all ? "FAIL" : "ok", size, all);
	failed |= rank == 0 && all;
	MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return failed ? 1 : 0;
}
