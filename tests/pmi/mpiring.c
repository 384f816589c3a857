/*
 * mpiring.c — an MPI program of nothing but the standard, for MPIs of
 * their own under Storm's PMI (tests/pmi/test_pmi_jobs.py): a token
 * around the ring (each rank adds its number), an allreduce of the
 * ranks, and a shared-memory communicator, whose size is the ranks on
 * this rank's node.  One line per rank:
 *   rank R of N: ring T allreduce S node-size K
 * Modes (argv[1]):
 *   abort R    rank R calls MPI_Abort(MPI_COMM_WORLD, 42) after the ring
 *   hold FILE  rank 0 waits for FILE to exist before MPI_Init, so that
 *              the other ranks wait in the startup barrier (the test
 *              kills the strobe master meanwhile); every rank prints
 *              "rank R: before MPI_Init" first
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank = -1, size = 0, sum = 0, token = 0, shm = 0;
	const char *mode = argc > 1 ? argv[1] : "";
	const char *env = getenv("PMI_RANK");
	MPI_Comm node;

	if (!strcmp(mode, "hold")) {
		printf("rank %s: before MPI_Init\n", env ? env : "?");
		fflush(stdout);
		if (env && !strcmp(env, "0") && argc > 2) {
			struct timespec nap = { 0, 5000000 };

			/* bounded: the test's own timeout ends it anyway */
			for (int i = 0; i < 24000 && access(argv[2], F_OK);
			     i++)
				nanosleep(&nap, NULL);
		}
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 1) {
		if (rank == 0) {
			MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_INT, size - 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_INT, rank - 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token += rank;
			MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0,
				 MPI_COMM_WORLD);
		}
	}
	if (!strcmp(mode, "abort") && argc > 2 && rank == atoi(argv[2]))
		MPI_Abort(MPI_COMM_WORLD, 42);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &shm);
	printf("rank %d of %d: ring %d allreduce %d node-size %d\n", rank,
	       size, token, sum, shm);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return 0;
}
