/*
 * replay.c — main() for a fuzz target outside libFuzzer: runs
 * LLVMFuzzerTestOneInput() over every file named, or every file in every
 * directory named (the seed corpus, the regressions).  Exit 0 when all
 * ran; a crash is the sanitizer's or abort()'s.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st)) {
			continue; /* no regressions yet for this target */
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]) != 0;
			files++;
			continue;
		}
		if (!(d = opendir(argv[i])))
			continue;
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 e->d_name);
			bad += run_file(path) != 0;
			files++;
		}
		closedir(d);
	}
	printf("replay: %d input(s), %d unreadable\n", files, bad);
	return bad ? 1 : 0;
}
