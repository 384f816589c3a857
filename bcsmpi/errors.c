/*
 * errors.c — MPI_Error_class and MPI_Error_string: one table naming every
 * predefined error class of MPI-3.1 (values in mpi.h, which are MPICH's).
 *
 * Until MPI_Add_error_class / MPI_Add_error_code exist, every error code
 * libbcsmpi returns is its own class, so a code is valid exactly when the
 * table below names it.  The one who adds user classes and codes extends
 * bcs_error_text() and PMPI_Error_class, not the table.
 *
 * Neither call needs MPI_Init: a program may name an error at any time.
 * An invalid code is reported as MPI_ERR_ARG (the error handlers arrive with
 * the engine; until then every call returns its error).
 */
#include <stddef.h>
#include <string.h>

#include "mpi.h"

/* The codes the program added (errhandler.c); weak, so that this file
 * stands alone in its unit test. */
int bcs_user_error(int code, int *cls, const char **text)
	__attribute__((weak));

/* Each text starts with the class's name, so a user can look it up. */
static const char *const bcs_error_texts[] = {
	[MPI_SUCCESS] = "MPI_SUCCESS: no error",
	[MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
	[MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
	[MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
	[MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
	[MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
	[MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
	[MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
	[MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
	[MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
	[MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
	[MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
	[MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
	[MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
	[MPI_ERR_TRUNCATE] =
		"MPI_ERR_TRUNCATE: message truncated: the receive buffer is "
		"smaller than the message",
	[MPI_ERR_OTHER] = "MPI_ERR_OTHER: other error",
	[MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error in the MPI library",
	[MPI_ERR_IN_STATUS] =
		"MPI_ERR_IN_STATUS: error code is in the status (MPI_ERROR)",
	[MPI_ERR_PENDING] = "MPI_ERR_PENDING: request pending: it neither "
			    "completed nor failed",
	[MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
	[MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
	[MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
	[MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
	[MPI_ERR_CONVERSION] =
		"MPI_ERR_CONVERSION: a user data conversion function failed",
	[MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation "
				"already registered",
	[MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
	[MPI_ERR_FILE_IN_USE] =
		"MPI_ERR_FILE_IN_USE: file in use by some process",
	[MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
	[MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
	[MPI_ERR_INFO_KEY] =
		"MPI_ERR_INFO_KEY: info key longer than MPI_MAX_INFO_KEY",
	[MPI_ERR_INFO_VALUE] =
		"MPI_ERR_INFO_VALUE: info value longer than MPI_MAX_INFO_VAL",
	[MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
	[MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
	[MPI_ERR_NAME] = "MPI_ERR_NAME: service name not published",
	[MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory (MPI_Alloc_mem)",
	[MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: a collective argument differs "
			     "between processes",
	[MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: no space left on device",
	[MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: no such file",
	[MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
	[MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
	[MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: file is read-only",
	[MPI_ERR_SERVICE] =
		"MPI_ERR_SERVICE: service name could not be unpublished",
	[MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: could not spawn processes",
	[MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: "
					"unsupported data representation",
	[MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: "
					  "operation not supported on this file",
	[MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
	[MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
	[MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
	[MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
	[MPI_ERR_RMA_CONFLICT] =
		"MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
	[MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of "
			     "one-sided calls",
	[MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size argument",
	[MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement argument",
	[MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
	[MPI_ERR_RMA_RANGE] =
		"MPI_ERR_RMA_RANGE: target memory is outside the window",
	[MPI_ERR_RMA_ATTACH] =
		"MPI_ERR_RMA_ATTACH: memory cannot be attached to the window",
	[MPI_ERR_RMA_SHARED] =
		"MPI_ERR_RMA_SHARED: memory cannot be shared between processes",
	[MPI_ERR_RMA_FLAVOR] =
		"MPI_ERR_RMA_FLAVOR: wrong window flavor for this call",
	[MPI_T_ERR_MEMORY] = "MPI_T_ERR_MEMORY: out of memory",
	[MPI_T_ERR_NOT_INITIALIZED] =
		"MPI_T_ERR_NOT_INITIALIZED: the tool interface is not "
		"initialized",
	[MPI_T_ERR_CANNOT_INIT] =
		"MPI_T_ERR_CANNOT_INIT: the tool interface cannot be "
		"initialized now",
	[MPI_T_ERR_INVALID_INDEX] =
		"MPI_T_ERR_INVALID_INDEX: index invalid or deleted",
	[MPI_T_ERR_INVALID_ITEM] =
		"MPI_T_ERR_INVALID_ITEM: item index out of range",
	[MPI_T_ERR_INVALID_HANDLE] = "MPI_T_ERR_INVALID_HANDLE: invalid handle",
	[MPI_T_ERR_OUT_OF_HANDLES] =
		"MPI_T_ERR_OUT_OF_HANDLES: no more handles available",
	[MPI_T_ERR_OUT_OF_SESSIONS] =
		"MPI_T_ERR_OUT_OF_SESSIONS: no more sessions available",
	[MPI_T_ERR_INVALID_SESSION] =
		"MPI_T_ERR_INVALID_SESSION: invalid session",
	[MPI_T_ERR_CVAR_SET_NOT_NOW] =
		"MPI_T_ERR_CVAR_SET_NOT_NOW: control variable cannot be set now",
	[MPI_T_ERR_CVAR_SET_NEVER] =
		"MPI_T_ERR_CVAR_SET_NEVER: control variable can no longer be set",
	[MPI_T_ERR_PVAR_NO_STARTSTOP] =
		"MPI_T_ERR_PVAR_NO_STARTSTOP: performance variable cannot be "
		"started or stopped",
	[MPI_T_ERR_PVAR_NO_WRITE] =
		"MPI_T_ERR_PVAR_NO_WRITE: performance variable cannot be "
		"written or reset",
	[MPI_T_ERR_PVAR_NO_ATOMIC] =
		"MPI_T_ERR_PVAR_NO_ATOMIC: performance variable cannot be read "
		"and written atomically",
	[MPI_T_ERR_INVALID_NAME] =
		"MPI_T_ERR_INVALID_NAME: no variable or category of that name",
	[MPI_T_ERR_INVALID] = "MPI_T_ERR_INVALID: invalid use of the tool "
			      "interface",
};

#define BCS_NERRORS ((int)(sizeof bcs_error_texts / sizeof bcs_error_texts[0]))

_Static_assert(sizeof bcs_error_texts / sizeof bcs_error_texts[0] ==
	MPI_T_ERR_INVALID + 1, "one entry per MPI-3.1 error class");

/* The text of a predefined code, or NULL if it names none (the gap at 54
 * included). */
static const char *bcs_error_text(int errorcode)
{
	if (errorcode < 0 || errorcode >= BCS_NERRORS)
		return NULL;
	return bcs_error_texts[errorcode];
}

#pragma weak MPI_Error_class = PMPI_Error_class
int PMPI_Error_class(int errorcode, int *errorclass)
{
	const char *t;

	if (errorclass == NULL)
		return MPI_ERR_ARG;
	if (bcs_user_error && !bcs_user_error(errorcode, errorclass, &t))
		return MPI_SUCCESS; /* one the program added */
	if (bcs_error_text(errorcode) == NULL)
		return MPI_ERR_ARG;
	*errorclass = errorcode;
	return MPI_SUCCESS;
}

/* string must hold MPI_MAX_ERROR_STRING bytes; *resultlen is the length
 * without the terminating NUL. */
#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
	const char *text = bcs_error_text(errorcode);
	size_t len;
	int cls;

	if (!text && bcs_user_error)
		bcs_user_error(errorcode, &cls, &text);
	if (string == NULL || resultlen == NULL || text == NULL)
		return MPI_ERR_ARG;
	len = strlen(text);
	if (len > MPI_MAX_ERROR_STRING - 1)
		len = MPI_MAX_ERROR_STRING - 1;
	memcpy(string, text, len);
	string[len] = '\0';
	*resultlen = (int)len;
	return MPI_SUCCESS;
}
