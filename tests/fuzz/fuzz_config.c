/* fuzz_config.c — the configuration file (an administrator's, read by
 * every daemon and stormctl): any bytes load or are refused with a
 * message, never crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <storm_proto.h>

#include "fuzz.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/storm-fuzz-config-%d", getpid());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_config_t cfg;
	char err[1024] = "";
	FILE *f = fopen(path, "wb");
	int rc;

	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	rc = st_config_load(path, &cfg, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || err[0]);
	if (rc == 0) {
		st_layout_t lay;

		st_layout(&cfg, &lay);
		FUZZ_CHECK(lay.size >= lay.hb_len);
	}
	st_config_free(&cfg);
	unlink(path);
	return 0;
}
