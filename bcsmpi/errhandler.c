/*
 * errhandler.c — the program's own error handlers and error codes
 * (MPI-3.1 §8.3, §8.5): Comm_create_errhandler, Comm_call_errhandler,
 * Errhandler_free, Add_error_class, Add_error_code, Add_error_string.
 * bcs_error (init.c) calls a communicator's user handler through
 * bcs_errh_invoke; Error_class and Error_string (errors.c) answer for
 * the added codes through bcs_user_error.
 *
 * Added classes and codes are numbered from BCS_FIRST_USER_CODE up,
 * above every predefined one, and MPI_LASTUSEDCODE follows them.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define HANDLERS_MAX 256
#define CODES_MAX 1024
#define BCS_FIRST_USER_CODE 0x40000000

struct handler {
	int used;
	MPI_Comm_errhandler_function *fn;
};

struct code {
	int cls;                 /* the class it belongs to (itself for one) */
	char *text;              /* Add_error_string's, or NULL */
};

static struct handler handlers[HANDLERS_MAX]; /* [0] unused */
static struct code codes[CODES_MAX];
static int ncodes;

static struct handler *handler_get(MPI_Errhandler h)
{
	unsigned i = H_INDEX(h);

	if (H_KIND(h) != H_DIRECT || H_OBJ(h) != O_ERRHANDLER || !i ||
	    i >= HANDLERS_MAX || !handlers[i].used)
		return NULL;
	return &handlers[i];
}

int bcs_errh_valid(MPI_Errhandler h)
{
	return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN ||
	       handler_get(h) != NULL;
}

int bcs_errh_invoke(MPI_Errhandler h, MPI_Comm comm, int code)
{
	struct handler *p = handler_get(h);

	if (p)
		p->fn(&comm, &code);
	return code;
}

int bcs_user_error(int code, int *cls, const char **text)
{
	int i = code - BCS_FIRST_USER_CODE;

	if (i < 0 || i >= ncodes)
		return -1;
	*cls = codes[i].cls;
	*text = codes[i].text ? codes[i].text : "an error class or code the "
						 "program added";
	return 0;
}

void bcs_errh_fini(void)
{
	for (int i = 0; i < ncodes; i++)
		free(codes[i].text);
	memset(codes, 0, sizeof(codes));
	memset(handlers, 0, sizeof(handlers));
	ncodes = 0;
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
				MPI_Errhandler *errhandler)
{
	BCS_NEED_INIT("MPI_Comm_create_errhandler");
	if (!function || !errhandler)
		return bcs_error(NULL, "MPI_Comm_create_errhandler",
				 MPI_ERR_ARG, "function or errhandler is NULL");
	/* slots are not reused: a communicator may still hold a freed one */
	for (unsigned i = 1; i < HANDLERS_MAX; i++)
		if (!handlers[i].used) {
			handlers[i] = (struct handler){ 1, function };
			*errhandler = H_MAKE(H_DIRECT, O_ERRHANDLER, i);
			return MPI_SUCCESS;
		}
	return bcs_error(NULL, "MPI_Comm_create_errhandler", MPI_ERR_INTERN,
			 "no room for another error handler (%d at most)",
			 HANDLERS_MAX - 1);
}

/* A handler stays usable by the communicators it was set on (MPI-3.1
 * §8.3.4): freeing only retires the handle. */
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	BCS_NEED_INIT("MPI_Errhandler_free");
	if (!errhandler || !bcs_errh_valid(*errhandler))
		return bcs_error(NULL, "MPI_Errhandler_free", MPI_ERR_ARG,
				 "not an error handler");
	*errhandler = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	struct bcs_comm *c;
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	BCS_NEED_INIT("MPI_Comm_call_errhandler");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_call_errhandler",
				 MPI_ERR_COMM, "not a communicator (%#x)",
				 (unsigned)comm);
	if (c->errh == MPI_ERRORS_ARE_FATAL) {
		if (PMPI_Error_string(errorcode, text, &len))
			strcpy(text, "an unknown code");
		bcs_fatal("MPI_Comm_call_errhandler", "error code %d: %s",
			  errorcode, text);
	}
	bcs_errh_invoke(c->errh, comm, errorcode);
	return MPI_SUCCESS;
}

static int add_code(const char *fn, int cls, int *out)
{
	BCS_NEED_INIT(fn);
	if (!out)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "the result's address "
				 "is NULL");
	if (ncodes == CODES_MAX)
		return bcs_error(NULL, fn, MPI_ERR_INTERN, "no room for "
				 "another error code (%d at most)", CODES_MAX);
	*out = BCS_FIRST_USER_CODE + ncodes;
	codes[ncodes].cls = cls < 0 ? *out : cls;
	codes[ncodes].text = NULL;
	ncodes++;
	bcs_attr_lastcode(*out);
	return MPI_SUCCESS;
}

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int PMPI_Add_error_class(int *errorclass)
{
	return add_code("MPI_Add_error_class", -1, errorclass);
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	int cls;
	const char *t;

	BCS_NEED_INIT("MPI_Add_error_code");
	if (bcs_user_error(errorclass, &cls, &t) || cls != errorclass)
		return bcs_error(NULL, "MPI_Add_error_code", MPI_ERR_ARG,
				 "%d is not a class MPI_Add_error_class made",
				 errorclass);
	return add_code("MPI_Add_error_code", errorclass, errorcode);
}

#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int PMPI_Add_error_string(int errorcode, const char *string)
{
	int i = errorcode - BCS_FIRST_USER_CODE;
	char *copy;

	BCS_NEED_INIT("MPI_Add_error_string");
	if (i < 0 || i >= ncodes)
		return bcs_error(NULL, "MPI_Add_error_string", MPI_ERR_ARG,
				 "%d is not a code the program added (a "
				 "predefined one's text cannot change)",
				 errorcode);
	if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
		return bcs_error(NULL, "MPI_Add_error_string", MPI_ERR_ARG,
				 "the string is NULL or longer than %d",
				 MPI_MAX_ERROR_STRING - 1);
	if (!(copy = strdup(string)))
		return bcs_error(NULL, "MPI_Add_error_string", MPI_ERR_NO_MEM,
				 "out of memory");
	free(codes[i].text);
	codes[i].text = copy;
	return MPI_SUCCESS;
}
