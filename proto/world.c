/*
 * world.c — the primitives configuration of one world id, built from the
 * cluster file.  Apart from config.c so that stormctl, which never opens
 * the machine, does not link libfabric (its start-up alone costs ~200 ms
 * here: the InfiniPath libraries it pulls in pin and sleep at load time).
 */
#include <stdio.h>

#include <sodium.h>

#include "storm_proto.h"

int st_config_world(const st_config_t *cfg, uint32_t world_id, int join,
		    uint32_t startup_ms, sp_config_t **out, char *err,
		    size_t errlen)
{
	uint32_t n = cfg->nmanagers + cfg->nnodes;
	sp_config_t *sc = NULL;
	st_layout_t lay;
	int rc;

	if (world_id >= n) {
		if (err)
			snprintf(err, errlen, "%s: no host with world id %u",
				 cfg->path, world_id);
		return -STORM_ECONFIG;
	}
	st_layout(cfg, &lay);
	if ((rc = sp_config_create(&sc)))
		return rc;
	rc = sp_config_set_node(sc, world_id, n);
	if (!rc)
		rc = sp_config_set_provider(sc, cfg->provider);
	for (uint32_t i = 0; !rc && i < n; i++) {
		const st_host_t *h = i < cfg->nmanagers ?
			&cfg->managers[i] : &cfg->nodes[i - cfg->nmanagers];
		rc = sp_config_set_address(sc, i, h->address);
	}
	if (!rc)
		rc = sp_config_set_gmem(sc, (size_t)lay.size, ST_EV_COUNT);
	if (!rc)
		rc = sp_config_set_liveness(sc, cfg->hb_period_ms,
					    cfg->hb_timeout_ms, startup_ms);
	if (!rc)
		rc = sp_config_set_join(sc, join);
	/* the cluster key: every message of the machine carries a MAC */
	if (!rc && cfg->auth_key[0]) {
		uint8_t key[ST_KEY_BYTES];

		if ((rc = st_key_load(cfg->auth_key, key, err, errlen))) {
			sp_config_destroy(sc);
			return rc;
		}
		rc = sp_config_set_auth_key(sc, key, sizeof(key));
		sodium_memzero(key, sizeof(key));
	}
	if (rc) {
		if (err)
			snprintf(err, errlen, "%s: cannot build the machine "
				 "configuration: %s", cfg->path,
				 storm_strerror(rc));
		sp_config_destroy(sc);
		return rc;
	}
	*out = sc;
	return 0;
}
