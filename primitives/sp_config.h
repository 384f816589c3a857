/*
 * sp_config.h — the configuration record behind sp_config_t (private).
 * Filled through the sp_config_set_* setters, read by sp_open() and the
 * back-ends.  Defaults are set in config.c and documented in
 * docs/primitives.md.
 */
#ifndef SP_CONFIG_H
#define SP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "storm_primitives.h"

#define SP_MAX_NODES 65536u

struct sp_config {
	uint32_t node_id;
	uint32_t nnodes;       /* 0 until set */
	char *provider;        /* "inproc" or a libfabric provider name */
	char **addrs;          /* nnodes entries, NULL where unset */
	size_t gmem_bytes;
	uint32_t nevents;
	uint32_t fanout;
	size_t chunk;
	size_t staging_bytes;   /* SIZE_MAX: auto */
	uint32_t hb_period_ms;  /* 0: no heartbeat */
	uint32_t hb_timeout_ms;
	uint32_t startup_ms;
	int join;
	int auth;               /* messages carry a MAC by auth_key */
	uint8_t auth_key[32];
	sp_machine_t *machine;  /* inproc only */
};

#endif /* SP_CONFIG_H */
