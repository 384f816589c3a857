/*
 * bcsmpi_stubs.h — what the unit tests of libbcsmpi's datatype, operation
 * and topology layers stand in for (bcsmpi_stubs.c): the error path of
 * impl.h, which records the last error instead of consulting a handler
 * (as MPI_ERRORS_RETURN would, returning the class), and an initialized
 * library without an engine.
 */
#ifndef BCSMPI_STUBS_H
#define BCSMPI_STUBS_H

#include "impl.h"

/* The last bcs_error: its call, class and text; stub_errors counts them. */
extern const char *stub_err_fn;
extern int stub_err_cls;
extern char stub_err_text[256];
extern int stub_errors;

/* Forget the last error. */
void stub_err_reset(void);
/* The phase MPI_Init leaves (bcs_state.h): every call then runs. */
void stub_initialize(void);

#endif
