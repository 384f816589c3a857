/*
 * storm_hello.c — the sample parallel job: each rank says where it runs,
 * from the environment its node manager gave it, and what its binary is
 * (a copy on that node's RAM disk, multicast there at launch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "?";
}

int main(int argc, char **argv)
{
	char self[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	(void)argc;
	printf("hello from rank %s of %s, job %s, on node %s (pid %d, "
	       "running %s as %s)\n", env("STORM_RANK"), env("STORM_SIZE"),
	       env("STORM_JOB_ID"), env("STORM_NODENAME"), (int)getpid(),
	       self, argv[0]);
	return 0;
}
