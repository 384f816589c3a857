/*
 * unsupported.c — calls BCS-MPI declares but does not implement
 * (tests/bcsmpi/test_jobs.py, test "unsupported"): the program builds and
 * links; under MPI_ERRORS_RETURN each call returns
 * MPI_ERR_UNSUPPORTED_OPERATION; with "fatal", MPI_Win_fence under the
 * default handler ends the job FAILED naming the call.
 */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

static int failed;

static void expect(const char *call, int rc)
{
	int cls = -1;

	MPI_Error_class(rc, &cls);
	if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
		fprintf(stderr, "%s: returned %d (class %d), want "
			"MPI_ERR_UNSUPPORTED_OPERATION\n", call, rc, cls);
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	MPI_Win win = MPI_WIN_NULL;
	MPI_File fh = MPI_FILE_NULL;
	MPI_Comm child = MPI_COMM_NULL;
	int rank, buf = 0, errs[1];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
		/* the default handler: the job ends here, naming the call */
		MPI_Win_fence(0, win);
		printf("unsupported: MPI_Win_fence returned\n");
		MPI_Finalize();
		return 0;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	expect("MPI_Win_create", MPI_Win_create(&buf, sizeof(buf), 1,
						MPI_INFO_NULL,
						MPI_COMM_WORLD, &win));
	expect("MPI_File_open", MPI_File_open(MPI_COMM_WORLD, "x",
					      MPI_MODE_RDONLY, MPI_INFO_NULL,
					      &fh));
	expect("MPI_Comm_spawn", MPI_Comm_spawn("x", MPI_ARGV_NULL, 1,
						MPI_INFO_NULL, 0,
						MPI_COMM_WORLD, &child, errs));
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && !failed)
		printf("unsupported: every call returned "
		       "MPI_ERR_UNSUPPORTED_OPERATION\n");
	MPI_Finalize();
	return failed;
}
