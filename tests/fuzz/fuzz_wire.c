/* fuzz_wire.c — the primitives' wire messages: any bytes a peer's
 * back-end hands a node (the in-process machine of the unit tests, four
 * nodes, built once), delivered to node 1 as if from node 0. */
#include <stdlib.h>

#include "storm_primitives.h"
#include "sp_transport.h"

#include "fuzz.h"

#define NODES 4

static sp_machine_t *machine;
static sp_world_t *w[NODES];

static int open_node(uint32_t id)
{
	sp_config_t *cfg = NULL;
	char err[256];
	int rc = sp_config_create(&cfg);

	if (!rc)
		rc = sp_config_set_node(cfg, id, NODES);
	if (!rc)
		rc = sp_config_set_provider(cfg, "inproc");
	if (!rc)
		rc = sp_config_set_machine(cfg, machine);
	if (!rc)
		rc = sp_config_set_gmem(cfg, 64 * 1024, 16);
	if (!rc)
		rc = sp_open(cfg, &w[id], err, sizeof(err));
	sp_config_destroy(cfg);
	return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sp_machine_create(NODES, NULL, &machine))
		abort();
	for (uint32_t i = 0; i < NODES; i++)
		if (open_node(i))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (w[1])
		sp_engine_deliver(w[1], 0, data, size);
	return 0;
}
