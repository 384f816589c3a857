/*
 * keygen.c — storm-keygen: a new cluster key (32 random bytes, mode 0400)
 * for the auth_key setting; copy it to every head and compute node.
 */
#include <stdio.h>
#include <string.h>

#include "storm_proto.h"

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/etc/storm/storm.key";
	char err[1200];

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") ||
				       !strcmp(argv[1], "--help")))) {
		fprintf(argc > 2 ? stderr : stdout,
			"usage: storm-keygen [PATH]\n"
			"  Write a new Storm cluster key (%d random bytes, "
			"mode 0400) to PATH\n  (default /etc/storm/storm.key); "
			"name it in auth_key and copy it to\n  every host of "
			"the cluster.  Exit status: 0 written, 1 failure, 2 "
			"usage.\n", ST_KEY_BYTES);
		return argc > 2 ? 2 : 0;
	}
	if (st_key_write(path, err, sizeof(err))) {
		fprintf(stderr, "storm-keygen: %s\n", err);
		return 1;
	}
	printf("storm-keygen: wrote a new key to %s\n", path);
	return 0;
}
