/*
 * hello.c — a user program built with bcsmpicc (test_bcsmpi.py wrapper):
 * calls every function libbcsmpi implements without MPI_Init, prints what
 * they return and checks it, checks the constants that are library objects
 * (MPI_UNWEIGHTED, ...) and that the library started no thread and opened
 * no socket.  Built with -DFOO=1 to show the user's flags reach the
 * compiler.  Exit 0 when every check holds.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#if !defined(FOO) || FOO != 1
#error "bcsmpicc must pass the user's -DFOO=1 through"
#endif

static int failures;

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "hello.c:%d: check failed: %s\n",   \
				__LINE__, #cond);                           \
			failures++;                                         \
		}                                                           \
	} while (0)

/* The library may start no thread and open no socket (checkpoints rely on
 * it): one task in /proc/self/task, no socket among the descriptors. */
static void check_no_thread_no_socket(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tasks = 0;
	char path[300], target[64];

	CHECK(d != NULL);
	while (d != NULL && (e = readdir(d)) != NULL)
		tasks += e->d_name[0] != '.';
	if (d != NULL)
		closedir(d);
	CHECK(tasks == 1);

	d = opendir("/proc/self/fd");
	CHECK(d != NULL);
	while (d != NULL && (e = readdir(d)) != NULL) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof target - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		CHECK(strncmp(target, "socket:", 7) != 0);
	}
	if (d != NULL)
		closedir(d);
}

int main(void)
{
	int version = 0, subversion = 0, pversion = 0, psubversion = 0;
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	char err[MPI_MAX_ERROR_STRING];
	int len = -1, cls = -1, flag = -1;
	double t0, t1, tick;
	struct timespec ten_ms = { 0, 10000000 };

	CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0);
	CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 0);

	CHECK(MPI_Get_version(&version, &subversion) == MPI_SUCCESS);
	CHECK(PMPI_Get_version(&pversion, &psubversion) == MPI_SUCCESS);
	CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION);
	CHECK(pversion == version && psubversion == subversion);
	printf("version %d.%d\n", version, subversion);

	CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS);
	CHECK(len == (int)strlen(lib));
	CHECK(strncmp(lib, "Storm BCS-MPI ", 14) == 0);
	printf("library %s\n", lib);

	t0 = MPI_Wtime();
	nanosleep(&ten_ms, NULL);
	t1 = MPI_Wtime();
	tick = MPI_Wtick();
	CHECK(t1 - t0 >= 0.009 && t1 - t0 < 5.0);
	CHECK(tick > 0.0 && tick <= 1e-3);
	printf("wtime ok, wtick %g\n", tick);

	CHECK(MPI_Error_string(MPI_ERR_TRUNCATE, err, &len) == MPI_SUCCESS);
	CHECK(len == (int)strlen(err) && len > 0);
	CHECK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls) == MPI_SUCCESS);
	CHECK(cls == MPI_ERR_TRUNCATE);
	printf("error %s\n", err);

	/* the constants that are library objects link and are distinct */
	CHECK(MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL);
	CHECK(MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY);
	CHECK(MPI_F_STATUS_IGNORE != NULL && MPI_F_STATUSES_IGNORE != NULL);
	CHECK(MPI_T_PVAR_ALL_HANDLES != MPI_T_PVAR_HANDLE_NULL);

	check_no_thread_no_socket();
	return failures == 0 ? 0 : 1;
}
