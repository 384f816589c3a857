/*
 * config.c — sp_config_t: the knobs of a world, set before sp_open().
 * Setters validate their own argument; cross-field checks (every node has an
 * address, the id is below the node count) happen in sp_open(), which is the
 * only place that knows which back-end is wanted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sp_config.h"

int sp_config_create(sp_config_t **out)
{
	sp_config_t *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->gmem_bytes = 1u << 20;
	c->nevents = 64;
	c->fanout = 4;
	c->chunk = 256u << 10;
	c->staging_bytes = SIZE_MAX; /* auto: from gmem_bytes at open */
	c->hb_period_ms = 250;
	c->hb_timeout_ms = 1000;
	c->startup_ms = 10000;
	*out = c;
	return 0;
}

static void free_addrs(sp_config_t *c)
{
	if (!c->addrs)
		return;
	for (uint32_t i = 0; i < c->nnodes; i++)
		free(c->addrs[i]);
	free(c->addrs);
	c->addrs = NULL;
}

void sp_config_destroy(sp_config_t *c)
{
	if (!c)
		return;
	free_addrs(c);
	free(c->provider);
	/* the key does not outlive its use in freed memory */
	memset(c->auth_key, 0, sizeof(c->auth_key));
	free(c);
}

int sp_config_set_node(sp_config_t *c, uint32_t node_id, uint32_t nnodes)
{
	if (!c || nnodes == 0 || nnodes > SP_MAX_NODES || node_id >= nnodes)
		return -EINVAL;
	if (nnodes != c->nnodes) {
		char **a = calloc(nnodes, sizeof(*a));

		if (!a)
			return -ENOMEM;
		free_addrs(c);
		c->addrs = a;
	}
	c->node_id = node_id;
	c->nnodes = nnodes;
	return 0;
}

int sp_config_set_provider(sp_config_t *c, const char *provider)
{
	char *p;

	if (!c || !provider || !*provider)
		return -EINVAL;
	p = strdup(provider);
	if (!p)
		return -ENOMEM;
	free(c->provider);
	c->provider = p;
	return 0;
}

int sp_config_set_address(sp_config_t *c, uint32_t node_id, const char *addr)
{
	char *a;

	if (!c || !addr || !*addr)
		return -EINVAL;
	if (node_id >= c->nnodes)
		return -ERANGE;
	a = strdup(addr);
	if (!a)
		return -ENOMEM;
	free(c->addrs[node_id]);
	c->addrs[node_id] = a;
	return 0;
}

int sp_config_set_gmem(sp_config_t *c, size_t bytes, uint32_t nevents)
{
	if (!c || bytes < 64 || bytes > (1u << 30) || nevents == 0 ||
	    nevents > 65536)
		return -EINVAL;
	c->gmem_bytes = bytes;
	c->nevents = nevents;
	return 0;
}

int sp_config_set_fanout(sp_config_t *c, uint32_t fanout)
{
	if (!c || fanout < 2 || fanout > 256 || (fanout & (fanout - 1)))
		return -EINVAL;
	c->fanout = fanout;
	return 0;
}

int sp_config_set_auth_key(sp_config_t *c, const uint8_t *key, size_t len)
{
	if (!c || !key || len != SP_AUTH_KEY_BYTES)
		return -EINVAL;
	memcpy(c->auth_key, key, len);
	c->auth = 1;
	return 0;
}

int sp_config_set_chunk(sp_config_t *c, size_t bytes)
{
	if (!c || bytes < 4096 || bytes > (4u << 20))
		return -EINVAL;
	c->chunk = bytes;
	return 0;
}

int sp_config_set_staging(sp_config_t *c, size_t bytes)
{
	if (!c || (bytes && bytes < (64u << 10)) || bytes > ((size_t)1 << 40))
		return -EINVAL;
	c->staging_bytes = bytes;
	return 0;
}

int sp_config_set_liveness(sp_config_t *c, uint32_t period_ms,
			   uint32_t timeout_ms, uint32_t startup_ms)
{
	if (!c || (period_ms && timeout_ms < 2 * period_ms) || startup_ms == 0)
		return -EINVAL;
	c->hb_period_ms = period_ms;
	c->hb_timeout_ms = timeout_ms;
	c->startup_ms = startup_ms;
	return 0;
}

int sp_config_set_join(sp_config_t *c, int join)
{
	if (!c)
		return -EINVAL;
	c->join = !!join;
	return 0;
}

int sp_config_set_machine(sp_config_t *c, sp_machine_t *m)
{
	if (!c || !m)
		return -EINVAL;
	c->machine = m;
	return 0;
}
