/*
 * types.h — what datatype.c and op.c offer the rest of libbcsmpi beyond
 * impl.h's "datatypes and operations" section (private; never installed).
 * impl.h may include it; it includes nothing of libbcsmpi's but mpi.h, so
 * either order works.
 *
 * Threads: like the communicator and request tables, the datatype and
 * operation tables take no lock — the caller serializes (one thread in the
 * library at a time).
 */
#ifndef BCSMPI_TYPES_H
#define BCSMPI_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

/* ---- datatypes (datatype.c) ---------------------------------------------- */

/** The predefined datatype every basic element of @dt is: @dt itself if it
 * is predefined, the one it was built from if derived and made of one
 * (however nested).  MPI_DATATYPE_NULL if @dt is made of several, or is
 * no datatype (or a freed one no pending operation holds).  What
 * bcs_op_apply reduces a derived type's elements as. */
MPI_Datatype bcs_dt_basic(MPI_Datatype dt);

/** Whole basic elements in @bytes of data of @dt (a run of elements of
 * @dt, the last maybe partial), whatever their types: for
 * MPI_Get_elements.  -1 if @dt is no datatype or the count overflows. */
int64_t bcs_dt_elements(MPI_Datatype dt, uint64_t bytes);
/** The bytes of data that hold @n basic elements of a run of @dt's
 * (MPI_Status_set_elements): 0 and *@bytes, or -1. */
int bcs_dt_elements_bytes(MPI_Datatype dt, int64_t n, uint64_t *bytes);

/** The span of @count elements of @dt's data, committed or not: the
 * lowest byte any of them touches, from the buffer's address (*@true_lb,
 * negative for a vector of negative stride), and how many bytes from there
 * to one past the highest (*@span).  A temporary buffer of *@span bytes,
 * used as tmp - *@true_lb, holds @count elements laid out as @dt.  Both 0
 * for @count 0 or no data.  -1 (outputs untouched) if @dt is no datatype,
 * @count is negative, or the span overflows MPI_Aint; else 0. */
int bcs_dt_span(MPI_Datatype dt, int count, MPI_Aint *true_lb,
		MPI_Aint *span);

/** Call @fn(@ctx, off, len) for each run of bytes of @count elements of
 * @dt, in type-map order (the order bcs_dt_pack packs them): @off is the
 * run's offset from the buffer's address (maybe negative), @len > 0 its
 * length.  Each run holds whole basic elements (bcs_dt_basic).  Adjacent
 * runs may be reported apart.  Stops at the first nonzero return of @fn
 * and returns it; 0 when every run was visited; -1 if @dt is no datatype
 * or @count is negative (@fn not called). */
int bcs_dt_walk(MPI_Datatype dt, int count,
		int (*fn)(void *ctx, MPI_Aint off, size_t len), void *ctx);

/** Whether @count elements of @dt touch some byte twice (a receive into
 * them is erroneous, MPI-3.1 §4.1.1); a type of more than 65,536 runs
 * is not looked at (0). */
int bcs_dt_overlaps(MPI_Datatype dt, int count);

/** Keep derived @dt alive for an operation in progress (a receive to
 * unpack at completion, a nonblocking collective): MPI_Type_free by the
 * program then only retires the handle for new uses (MPI-3.1 §4.1.9: "any
 * communication currently using this datatype will complete normally"),
 * and the type is freed at the last bcs_dt_release.  Predefined types need
 * no hold (a no-op).  0, or -1 if @dt is no live datatype. */
int bcs_dt_hold(MPI_Datatype dt);
/** Whether @dt is committed and alive: bcs_dt_ok, or freed by the program
 * while an operation holds it. */
int bcs_dt_held_ok(MPI_Datatype dt);
/** Drop one hold of bcs_dt_hold.  A no-op for a predefined type. */
void bcs_dt_release(MPI_Datatype dt);

/** Free every derived datatype (MPI_Finalize). */
void bcs_dt_fini(void);

/* ---- operations (op.c) ------------------------------------------------- */

/** Free every user operation (MPI_Finalize). */
void bcs_op_fini(void);

#endif /* BCSMPI_TYPES_H */
