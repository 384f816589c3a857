/*
 * test_config.c — sp_config_t setters (config.c), the checks sp_open()
 * makes before any back-end runs (engine.c), global-variable access, and
 * storm_strerror() (errors.c).  Key rule: a rejected setting returns its
 * error and leaves the configuration as it was; a rejected sp_open()
 * leaves *out untouched and says what to do in err.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "storm_primitives.h"

static sp_config_t *mkcfg(void)
{
	sp_config_t *c = NULL;

	assert_int_equal(sp_config_create(&c), 0);
	assert_non_null(c);
	return c;
}

static void test_config_setters_validate_ranges(void **state)
{
	sp_config_t *c = mkcfg();

	(void)state;
	assert_int_equal(sp_config_set_node(c, 0, 0), -EINVAL);
	assert_int_equal(sp_config_set_node(c, 4, 4), -EINVAL);
	assert_int_equal(sp_config_set_node(c, 0, 65537), -EINVAL);
	assert_int_equal(sp_config_set_node(c, 3, 4), 0);
	assert_int_equal(sp_config_set_node(c, 65535, 65536), 0);
	assert_int_equal(sp_config_set_node(c, 1, 4), 0);
	assert_int_equal(sp_config_set_provider(c, ""), -EINVAL);
	assert_int_equal(sp_config_set_provider(c, NULL), -EINVAL);
	assert_int_equal(sp_config_set_provider(c, "tcp"), 0);
	assert_int_equal(sp_config_set_address(c, 4, "127.0.0.1:1"), -ERANGE);
	assert_int_equal(sp_config_set_address(c, 3, ""), -EINVAL);
	assert_int_equal(sp_config_set_address(c, 3, "127.0.0.1:1"), 0);
	assert_int_equal(sp_config_set_gmem(c, 63, 1), -EINVAL);
	assert_int_equal(sp_config_set_gmem(c, (1u << 30) + 1, 1), -EINVAL);
	assert_int_equal(sp_config_set_gmem(c, 4096, 0), -EINVAL);
	assert_int_equal(sp_config_set_gmem(c, 4096, 65537), -EINVAL);
	assert_int_equal(sp_config_set_gmem(c, 64, 1), 0);
	assert_int_equal(sp_config_set_gmem(c, 1u << 30, 65536), 0);
	for (uint32_t k = 0; k <= 512; k++) {
		int pow2 = k && !(k & (k - 1));

		assert_int_equal(sp_config_set_fanout(c, k),
				 pow2 && k >= 2 && k <= 256 ? 0 : -EINVAL);
	}
	assert_int_equal(sp_config_set_chunk(c, 4095), -EINVAL);
	assert_int_equal(sp_config_set_chunk(c, (4u << 20) + 1), -EINVAL);
	assert_int_equal(sp_config_set_chunk(c, 4096), 0);
	assert_int_equal(sp_config_set_chunk(c, 4u << 20), 0);
	/* timeout must allow two missed heartbeats; startup must be > 0 */
	assert_int_equal(sp_config_set_liveness(c, 50, 99, 1000), -EINVAL);
	assert_int_equal(sp_config_set_liveness(c, 50, 100, 0), -EINVAL);
	assert_int_equal(sp_config_set_liveness(c, 50, 100, 1000), 0);
	assert_int_equal(sp_config_set_liveness(c, 0, 0, 1000), 0);
	assert_int_equal(sp_config_set_join(c, 7), 0);
	assert_int_equal(sp_config_set_machine(c, NULL), -EINVAL);
	assert_int_equal(sp_config_set_join(NULL, 1), -EINVAL);
	sp_config_destroy(c);
	sp_config_destroy(NULL);
}

/* sp_open() refuses what it cannot run, with a message, before touching
 * any back-end. */
static void test_open_rejects_incomplete_config(void **state)
{
	sp_config_t *c = mkcfg();
	sp_world_t *w = (sp_world_t *)0x1;
	char err[512];

	(void)state;
	err[0] = '\0';
	assert_int_equal(sp_open(c, &w, err, sizeof(err)), -STORM_ECONFIG);
	assert_true(strlen(err) > 0);
	assert_int_equal(sp_config_set_node(c, 0, 2), 0);
	err[0] = '\0';
	assert_int_equal(sp_open(c, &w, err, sizeof(err)), -STORM_ECONFIG);
	assert_non_null(strstr(err, "provider"));
	assert_int_equal(sp_config_set_provider(c, "inproc"), 0);
	err[0] = '\0';
	assert_int_equal(sp_open(c, &w, err, sizeof(err)), -STORM_ECONFIG);
	assert_non_null(strstr(err, "machine"));
	/* a libfabric provider with addresses missing */
	assert_int_equal(sp_config_set_provider(c, "tcp"), 0);
	assert_int_equal(sp_config_set_address(c, 0, "127.0.0.1:1"), 0);
	err[0] = '\0';
	assert_int_equal(sp_open(c, &w, err, sizeof(err)), -STORM_ECONFIG);
	assert_true(strlen(err) > 0);
	/* err is optional */
	assert_int_equal(sp_open(c, &w, NULL, 0), -STORM_ECONFIG);
	assert_int_equal(sp_open(NULL, &w, NULL, 0), -EINVAL);
	assert_ptr_equal(w, (sp_world_t *)0x1);
	sp_config_destroy(c);
}

static void test_open_unknown_provider_is_eprovider(void **state)
{
	sp_config_t *c = mkcfg();
	sp_world_t *w = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(sp_config_set_node(c, 0, 2), 0);
	assert_int_equal(sp_config_set_provider(c, "no-such-provider"), 0);
	assert_int_equal(sp_config_set_address(c, 0, "127.0.0.1:1"), 0);
	assert_int_equal(sp_config_set_address(c, 1, "127.0.0.1:2"), 0);
	assert_int_equal(sp_open(c, &w, err, sizeof(err)), -STORM_EPROVIDER);
	assert_null(w);
	assert_non_null(strstr(err, "no-such-provider"));
	sp_config_destroy(c);
}

static void test_gvar_access_is_aligned_and_bounded(void **state)
{
	sp_machine_t *m = NULL;
	sp_config_t *c = mkcfg();
	sp_world_t *w = NULL;
	int64_t v = 0;
	size_t size = 0;

	(void)state;
	assert_int_equal(sp_machine_create(1, NULL, &m), 0);
	assert_int_equal(sp_config_set_node(c, 0, 1), 0);
	assert_int_equal(sp_config_set_provider(c, "inproc"), 0);
	assert_int_equal(sp_config_set_machine(c, m), 0);
	assert_int_equal(sp_config_set_gmem(c, 4096, 4), 0);
	assert_int_equal(sp_open(c, &w, NULL, 0), 0);
	sp_config_destroy(c);
	assert_non_null(sp_gmem(w, &size));
	assert_int_equal(size, 4096);
	assert_int_equal(sp_gvar_write_local(w, 4088, -5), 0);
	assert_int_equal(sp_gvar_read(w, 4088, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(sp_gvar_read(w, 4, &v), -EINVAL);
	assert_int_equal(sp_gvar_read(w, 4096, &v), -EINVAL);
	assert_int_equal(sp_gvar_read(w, UINT64_MAX - 7, &v), -EINVAL);
	assert_int_equal(sp_gvar_read(w, 0, NULL), -EINVAL);
	assert_int_equal(sp_gvar_write_local(w, 12, 1), -EINVAL);
	assert_int_equal(sp_gvar_write_local(w, 4096, 1), -EINVAL);
	assert_int_equal(sp_gvar_read(w, 4088, &v), 0);
	assert_int_equal(v, -5);
	sp_close(w);
	sp_close(NULL);
	sp_machine_destroy(m);
	sp_machine_destroy(NULL);
}

static void test_strerror_names_every_code(void **state)
{
	(void)state;
	for (int e = STORM_ECLOSED; e < STORM_ERRNO_MAX; e++) {
		const char *a = storm_strerror(-e), *b = storm_strerror(e);

		assert_non_null(a);
		assert_ptr_equal(a, b); /* the sign is ignored */
		assert_string_not_equal(a, "unknown Storm error");
	}
	assert_string_equal(storm_strerror(0), "success");
	assert_string_equal(storm_strerror(-STORM_ERRNO_MAX),
			    "unknown Storm error");
	assert_string_equal(storm_strerror(-STORM_ERRNO_OFFSET - 500),
			    "unknown Storm error");
	assert_string_equal(storm_strerror(-EINVAL), strerror(EINVAL));
	assert_non_null(storm_strerror(-ETIMEDOUT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_setters_validate_ranges),
		cmocka_unit_test(test_open_rejects_incomplete_config),
		cmocka_unit_test(test_open_unknown_provider_is_eprovider),
		cmocka_unit_test(test_gvar_access_is_aligned_and_bounded),
		cmocka_unit_test(test_strerror_names_every_code),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
