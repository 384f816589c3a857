/*
 * tool.c — the tool information interface (MPI-3.1 §14.3), with no
 * variables: BCS-MPI exposes no control or performance variable and no
 * category yet, which the standard allows.  So a tool (TAU, Score-P)
 * that calls MPI_T_init_thread, counts variables and opens a session
 * goes on: every count is 0, every index, name or handle is invalid
 * with the class MPI_T says.  The calls work before MPI_Init and after
 * MPI_Finalize, as MPI_T's must, and return their codes directly (no
 * error handler applies to them).
 */
#include <stdlib.h>

#include "impl.h"

static int t_inits; /* MPI_T_init_thread's not yet finalized */

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
int PMPI_T_init_thread(int required, int *provided)
{
	if (!provided)
		return MPI_ERR_ARG;
	/* as the library grants MPI_Init_thread: no more than FUNNELED */
	*provided = required > MPI_THREAD_FUNNELED ? MPI_THREAD_FUNNELED :
						    required;
	t_inits++;
	return MPI_SUCCESS;
}

#pragma weak MPI_T_finalize = PMPI_T_finalize
int PMPI_T_finalize(void)
{
	if (!t_inits)
		return MPI_T_ERR_NOT_INITIALIZED;
	t_inits--;
	return MPI_SUCCESS;
}

/* A count (0) or the reason there is none. */
static int none(int *num)
{
	if (!t_inits)
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!num)
		return MPI_ERR_ARG;
	*num = 0;
	return MPI_SUCCESS;
}

/* An index, item, name or handle: none exists. */
static int invalid(int cls)
{
	return t_inits ? cls : MPI_T_ERR_NOT_INITIALIZED;
}

#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
int PMPI_T_cvar_get_num(int *num_cvar)
{
	return none(num_cvar);
}

#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
int PMPI_T_pvar_get_num(int *num_pvar)
{
	return none(num_pvar);
}

#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
int PMPI_T_category_get_num(int *num_cat)
{
	return none(num_cat);
}

#pragma weak MPI_T_category_changed = PMPI_T_category_changed
int PMPI_T_category_changed(int *stamp)
{
	return none(stamp); /* never changes: always 0 */
}

#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name,
			 int *name_len)
{
	(void)enumtype, (void)num, (void)name, (void)name_len;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value,
			 char *name, int *name_len)
{
	(void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len,
			 int *verbosity, MPI_Datatype *datatype,
			 MPI_T_enum *enumtype, char *desc, int *desc_len,
			 int *bind, int *scope)
{
	(void)cvar_index, (void)name, (void)name_len, (void)verbosity;
	(void)datatype, (void)enumtype, (void)desc, (void)desc_len;
	(void)bind, (void)scope;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
	(void)name, (void)cvar_index;
	return invalid(MPI_T_ERR_INVALID_NAME);
}

#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle,
			     MPI_T_cvar_handle *handle, int *count)
{
	(void)cvar_index, (void)obj_handle, (void)handle, (void)count;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
	(void)handle;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
	(void)handle, (void)buf;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
	(void)handle, (void)buf;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len,
			 int *verbosity, int *var_class,
			 MPI_Datatype *datatype, MPI_T_enum *enumtype,
			 char *desc, int *desc_len, int *bind, int *readonly,
			 int *continuous, int *atomic)
{
	(void)pvar_index, (void)name, (void)name_len, (void)verbosity;
	(void)var_class, (void)datatype, (void)enumtype, (void)desc;
	(void)desc_len, (void)bind, (void)readonly, (void)continuous;
	(void)atomic;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
	(void)name, (void)var_class, (void)pvar_index;
	return invalid(MPI_T_ERR_INVALID_NAME);
}

/* A session holds no variable; its handle is a byte of its own. */
#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
	if (!t_inits)
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!session)
		return MPI_ERR_ARG;
	if (!(*session = malloc(1)))
		return MPI_T_ERR_OUT_OF_SESSIONS;
	return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
	if (!t_inits)
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!session || *session == MPI_T_PVAR_SESSION_NULL)
		return MPI_T_ERR_INVALID_SESSION;
	free(*session);
	*session = MPI_T_PVAR_SESSION_NULL;
	return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
			     void *obj_handle, MPI_T_pvar_handle *handle,
			     int *count)
{
	(void)session, (void)pvar_index, (void)obj_handle, (void)handle;
	(void)count;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session,
			    MPI_T_pvar_handle *handle)
{
	(void)session, (void)handle;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	(void)session, (void)handle;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	(void)session, (void)handle;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	(void)session, (void)handle;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
		     void *buf)
{
	(void)session, (void)handle, (void)buf;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
int PMPI_T_pvar_readreset(MPI_T_pvar_session session,
			  MPI_T_pvar_handle handle, void *buf)
{
	(void)session, (void)handle, (void)buf;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
		      const void *buf)
{
	(void)session, (void)handle, (void)buf;
	return invalid(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len,
			     char *desc, int *desc_len, int *num_cvars,
			     int *num_pvars, int *num_categories)
{
	(void)cat_index, (void)name, (void)name_len, (void)desc;
	(void)desc_len, (void)num_cvars, (void)num_pvars;
	(void)num_categories;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
	(void)name, (void)cat_index;
	return invalid(MPI_T_ERR_INVALID_NAME);
}

/* The category lists: no category has any. */
static int no_category(int cat_index, int len, int indices[])
{
	(void)cat_index, (void)len, (void)indices;
	return invalid(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
	return no_category(cat_index, len, indices);
}

#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
	return no_category(cat_index, len, indices);
}

#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
	return no_category(cat_index, len, indices);
}
