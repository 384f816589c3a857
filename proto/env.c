/*
 * env.c — the variables Storm sets in every rank itself, named once for
 * stormctl (which never exports them from its caller) and storm-nm (which
 * never takes them from a job's environment): a job submitted from inside
 * another must not carry the other's identity.
 */
#include <string.h>

#include "storm_proto.h"

int st_env_storm_sets(const char *kv)
{
	static const char *const exact[] = {
		"STORM_JOB_ID=", "STORM_STEP_ID=", "STORM_RANK=",
		"STORM_SIZE=", "STORM_NODEID=", "STORM_LOCALID=",
		"STORM_NODELIST=", "STORM_NODENAME=", "STORM_JOB_DIR=",
		"STORM_ARRAY_JOB_ID=", "STORM_ARRAY_TASK_ID=",
		"STORM_BCS_FD=", "STORM_BCS_AREA=", "STORM_BCS_BELL=",
		"PMI_FD=", "PMI_RANK=", "PMI_SIZE=", "FLUX_JOB_ID=",
		"FLUX_PMI_LIBRARY_PATH=",
	};

	for (size_t i = 0; i < sizeof(exact) / sizeof(*exact); i++)
		if (!strncmp(kv, exact[i], strlen(exact[i])))
			return 1;
	return 0;
}
