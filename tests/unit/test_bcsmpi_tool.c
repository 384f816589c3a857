/*
 * test_bcsmpi_tool.c — the tool information interface (bcsmpi/tool.c):
 * before MPI_T_init_thread every call says MPI_T_ERR_NOT_INITIALIZED;
 * after it every count is 0 and every index, name, handle and enum is
 * invalid with MPI_T's classes; sessions open and close; init and
 * finalize nest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "impl.h"

static void test_every_call_before_and_after_init(void **state)
{
	char name[64], desc[64];
	int n, len = 64, dlen = 64, v, idx, count, cls, ro, cont, at, prov;
	int bind, scope, num[3], list[4];
	MPI_Datatype dt;
	MPI_T_enum e;
	MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
	MPI_T_pvar_handle ph = MPI_T_PVAR_HANDLE_NULL;
	MPI_T_pvar_session s;

	(void)state;
	for (int round = 0; round < 2; round++) {
		int ni = round ? 0 : MPI_T_ERR_NOT_INITIALIZED;
#define WANT(call, cls_) assert_int_equal((call), round ? (cls_) : ni)

		WANT(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
		WANT(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
		WANT(MPI_T_category_get_num(&n), MPI_SUCCESS);
		WANT(MPI_T_category_changed(&n), MPI_SUCCESS);
		if (round)
			assert_int_equal(n, 0);
		WANT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, name, &len),
		     MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &v, name, &len),
		     MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_cvar_get_info(0, name, &len, &v, &dt, &e, desc,
					 &dlen, &bind, &scope),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_cvar_get_index("x", &idx), MPI_T_ERR_INVALID_NAME);
		WANT(MPI_T_cvar_handle_alloc(0, NULL, &ch, &count),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_cvar_handle_free(&ch), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_cvar_read(ch, &v), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_cvar_write(ch, &v), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_get_info(0, name, &len, &v, &cls, &dt, &e, desc,
					 &dlen, &bind, &ro, &cont, &at),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_pvar_get_index("x", 0, &idx),
		     MPI_T_ERR_INVALID_NAME);
		WANT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
		WANT(MPI_T_pvar_handle_alloc(s, 0, NULL, &ph, &count),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_pvar_handle_free(s, &ph),
		     MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_start(s, ph), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_stop(s, ph), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_read(s, ph, &v), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_write(s, ph, &v), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_reset(s, ph), MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_readreset(s, ph, &v),
		     MPI_T_ERR_INVALID_HANDLE);
		WANT(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
		WANT(MPI_T_category_get_info(0, name, &len, desc, &dlen,
					     &num[0], &num[1], &num[2]),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_category_get_index("x", &idx),
		     MPI_T_ERR_INVALID_NAME);
		WANT(MPI_T_category_get_cvars(0, 4, list),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_category_get_pvars(0, 4, list),
		     MPI_T_ERR_INVALID_INDEX);
		WANT(MPI_T_category_get_categories(0, 4, list),
		     MPI_T_ERR_INVALID_INDEX);
#undef WANT
		if (!round) {
			assert_int_equal(MPI_T_finalize(),
					 MPI_T_ERR_NOT_INITIALIZED);
			/* nested: two inits, two finalizes */
			assert_int_equal(MPI_T_init_thread(MPI_THREAD_MULTIPLE,
							   &prov),
					 MPI_SUCCESS);
			assert_int_equal(prov, MPI_THREAD_FUNNELED);
			assert_int_equal(MPI_T_init_thread(MPI_THREAD_SINGLE,
							   &prov),
					 MPI_SUCCESS);
			assert_int_equal(prov, MPI_THREAD_SINGLE);
			assert_int_equal(MPI_T_finalize(), MPI_SUCCESS);
		}
	}
	assert_int_equal(MPI_T_finalize(), MPI_SUCCESS);
	assert_int_equal(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_call_before_and_after_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
