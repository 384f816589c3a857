/*
 * bcsmpi_stubs.c — impl.h's error path for unit tests that compile
 * libbcsmpi's files without the rest of the library (bcsmpi_stubs.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bcsmpi_stubs.h"

const char *stub_err_fn;
int stub_err_cls;
char stub_err_text[256];
int stub_errors;

void stub_err_reset(void)
{
	stub_err_fn = NULL;
	stub_err_cls = MPI_SUCCESS;
	stub_err_text[0] = '\0';
}

void stub_initialize(void)
{
	if (bcs_state_phase() == BCS_PHASE_UNINITIALIZED &&
	    bcs_state_advance(BCS_PHASE_INITIALIZED) != MPI_SUCCESS)
		abort();
}

int bcs_error(struct bcs_comm *c, const char *fn, int cls, const char *fmt,
	      ...)
{
	va_list ap;

	(void)c;
	stub_err_fn = fn;
	stub_err_cls = cls;
	stub_errors++;
	va_start(ap, fmt);
	vsnprintf(stub_err_text, sizeof stub_err_text, fmt, ap);
	va_end(ap);
	return cls;
}

void bcs_fatal(const char *fn, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bcs_fatal in %s: ", fn ? fn : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* attr.c's communicator side, unused by the datatype and operation
 * tests (weak: the topology test has its own communicators) */
__attribute__((weak)) struct bcs_comm *bcs_comm_get(MPI_Comm c)
{
	(void)c;
	return NULL;
}
