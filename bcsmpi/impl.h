/*
 * impl.h — what the files of libbcsmpi share (private): handles,
 * communicators, requests, the error path, and the datatype and
 * operation layers (datatype.c, op.c).  Handles follow MPICH's encoding
 * (bits 30-31 kind, 26-29 object, the rest an index) so that the values
 * of mpi.h are MPICH's and an MPICH-built binary's handles mean the same
 * here (docs/bcsmpi.md §1).
 */
#ifndef BCSMPI_IMPL_H
#define BCSMPI_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bcs_state.h"
#include "mpi.h"
#include "rt.h"
#include "types.h"

/* ---- handles ------------------------------------------------------------- */

#define H_KIND(h) (((unsigned)(h) >> 30) & 3u)
#define H_OBJ(h) (((unsigned)(h) >> 26) & 0xfu)
#define H_INDEX(h) ((unsigned)(h) & 0x03ffffffu)
enum { H_INVALID = 0, H_BUILTIN = 1, H_DIRECT = 2 };
enum { O_COMM = 1, O_GROUP = 2, O_DATATYPE = 3, O_ERRHANDLER = 5, O_OP = 6,
       O_INFO = 7, O_KEYVAL = 9, O_REQUEST = 0xb };
#define H_MAKE(kind, obj, idx) \
	((int)(((unsigned)(kind) << 30) | ((unsigned)(obj) << 26) | (idx)))

/* ---- state (bcs_state.h holds the phase) ------------------------------- */

extern int bcs_thread_level;  /* as granted */

/* ---- communicators ------------------------------------------------------- */

struct bcs_cart {
	int ndims;
	int *dims, *periods, *coords; /* coords: this rank's */
};

struct bcs_attr;
struct bcs_graph;

struct bcs_comm {
	int used;
	uint64_t ctx;        /* point-to-point; ctx + 1 its collectives'
			      * internal messages */
	int size, rank;      /* here */
	int32_t *world;      /* communicator rank -> world rank */
	uint32_t children;   /* communicators made from it so far */
	MPI_Errhandler errh;
	struct bcs_cart *cart;
	struct bcs_graph *graph; /* graph.c's: a (distributed) graph */
	int builtin;         /* COMM_WORLD / COMM_SELF: never freed */
	int refs;            /* requests still using it */
	int freed;           /* MPI_Comm_free'd: gone once refs is 0 */
	struct bcs_attr *attrs; /* attr.c's, newest first */
	char name[MPI_MAX_OBJECT_NAME];
	uint64_t nbcs;       /* non-blocking collectives started on it */
	/* an intercommunicator (inter.c): the remote group, which
	 * point-to-point ranks name, and an intracommunicator of the local
	 * group for the collectives' local halves */
	int inter;
	int rsize;
	int32_t *rworld;
	MPI_Comm local;
};

/* The group a communicator's point-to-point ranks name: the remote one
 * of an intercommunicator. */
static inline const int32_t *bcs_peer_world(const struct bcs_comm *c)
{
	return c->inter ? c->rworld : c->world;
}

static inline int bcs_peer_size(const struct bcs_comm *c)
{
	return c->inter ? c->rsize : c->size;
}

#define BCS_COMMS_MAX 4096
/* The communicator of handle c, or NULL (not one). */
struct bcs_comm *bcs_comm_get(MPI_Comm c);
/* A new communicator of size members (world ranks), this rank among
 * them, its context derived from parent's; registered with the engine.
 * The handle, or MPI_COMM_NULL (out of room: *rc set). */
MPI_Comm bcs_comm_new(struct bcs_comm *parent, uint32_t color, int size,
		      const int32_t *world, int *rc);
int bcs_comms_init(void);
MPI_Comm bcs_comm_handle(const struct bcs_comm *c);
/* A query of one int about communicator comm (inter_only: of an
 * intercommunicator), get's answer into *out: 0, or the error through
 * the handler naming fn. */
int bcs_comm_query(const char *fn, MPI_Comm comm, int inter_only,
		   int (*get)(const struct bcs_comm *c), int *out);
/* A communicator of key (a value every member derives alike, unique
 * among parent's children) — what bcs_comm_new does with the parent's
 * count of children and a color. */
MPI_Comm bcs_comm_make(struct bcs_comm *parent, uint64_t key, int size,
		       const int32_t *world, int *rc);
/* A communicator of context key (mixed) and those members: not
 * announced to the engine (an intercommunicator, inter.c). */
MPI_Comm bcs_comm_alloc(uint64_t key, int size, const int32_t *world,
			int *rc);
/* Delete the attributes of MPI_COMM_SELF, callbacks and all (the first
 * thing MPI_Finalize does, MPI-3.1 §8.7.1). */
int bcs_comm_finalize_self(void);
/* A request holds c (NULL: nothing) until it is freed. */
void bcs_comm_ref(struct bcs_comm *c);
void bcs_comm_unref(struct bcs_comm *c);
void bcs_comms_fini(void);
void bcs_comms_made_fini(void);

/* ---- graph topologies (graph.c) ------------------------------------------ */

void bcs_graph_free(struct bcs_graph *g);
/* MPI_GRAPH, MPI_DIST_GRAPH, or MPI_UNDEFINED (g NULL). */
int bcs_graph_kind(const struct bcs_graph *g);

/* ---- intercommunicators (inter.c) --------------------------------------- */

/* MPI_Comm_dup of intercommunicator c (both groups count it alike). */
MPI_Comm bcs_inter_dup(struct bcs_comm *c, int *rc);
/* The collectives on an intercommunicator, arguments checked but the
 * root. */
int bcs_inter_barrier(struct bcs_comm *c);
int bcs_inter_bcast(struct bcs_comm *c, void *buf, int count,
		    MPI_Datatype dt, int root);
int bcs_inter_reduce(struct bcs_comm *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype dt, MPI_Op op, int root, int all);
int bcs_inter_gather(struct bcs_comm *c, const void *sbuf, int scount,
		     MPI_Datatype stype, void *rbuf, int rcount,
		     MPI_Datatype rtype, int root);
int bcs_inter_scatter(struct bcs_comm *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype, int root);
int bcs_inter_allgather(struct bcs_comm *c, const void *sbuf, int scount,
			MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype);
int bcs_inter_alltoall(struct bcs_comm *c, const void *sbuf, int scount,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype);
int bcs_inter_gatherv(struct bcs_comm *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, const int *rcounts,
		      const int *displs, MPI_Datatype rtype, int root);
int bcs_inter_scatterv(struct bcs_comm *c, const void *sbuf,
		       const int *scounts, const int *displs,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, int root);
int bcs_inter_allgatherv(struct bcs_comm *c, const void *sbuf, int scount,
			 MPI_Datatype stype, void *rbuf, const int *rcounts,
			 const int *displs, MPI_Datatype rtype);
/* Alltoallv (displacements in elements of stype/rtype) or Alltoallw
 * (in bytes, stypes/rtypes given) on an intercommunicator. */
int bcs_inter_alltoallw(const char *fn, struct bcs_comm *c, const void *sbuf,
			const int *scounts, const int *sdispls,
			MPI_Datatype stype, const MPI_Datatype *stypes,
			void *rbuf, const int *rcounts, const int *rdispls,
			MPI_Datatype rtype, const MPI_Datatype *rtypes);
/* bcs_coll_comm_ok, intercommunicators allowed (the collectives above). */
int bcs_coll_comm_any(const char *fn, MPI_Comm comm, struct bcs_comm **cp);

/* ---- groups (group.c) and attributes (attr.c) ---------------------------- */

/* A new group of size world ranks (MPI_GROUP_EMPTY for none), or
 * MPI_GROUP_NULL with *rc set. */
MPI_Group bcs_group_new(int size, const int32_t *world, int *rc);
/* Group g's members (world ranks, group order): 0, or -1 (no group). */
int bcs_group_members(MPI_Group g, const int32_t **world, int *size);
void bcs_groups_fini(void);
void bcs_attrs_init(int world_size);
/* MPI_Comm_dup's copy of old's attributes to new (copy callbacks). */
int bcs_attr_copy(struct bcs_comm *old, MPI_Comm oldh, struct bcs_comm *new,
		  MPI_Comm newh);
/* MPI_Comm_free's: every attribute's delete callback, newest first; 0
 * or the first callback's error (the rest kept). */
int bcs_attr_delete_all(struct bcs_comm *c, MPI_Comm h);
void bcs_attr_drop(struct bcs_comm *c);
/* The same on any object's list (h its handle, for the callbacks): set
 * (an older value deleted), get (1 and *val, or 0), delete
 * (MPI_ERR_KEYVAL: none), copy through the copy callbacks, delete all,
 * drop without callbacks. */
int bcs_attrs_set(struct bcs_attr **list, int h, int key, void *val);
int bcs_attrs_get(struct bcs_attr *list, int key, void **val);
int bcs_attrs_delete(struct bcs_attr **list, int h, int key);
int bcs_attrs_copy(struct bcs_attr *from, int fromh, struct bcs_attr **to,
		   int toh);
int bcs_attrs_delete_all(struct bcs_attr **list, int h);
void bcs_attrs_drop(struct bcs_attr **list);
/* Keyvals, of communicators or of datatypes (their callbacks take the
 * object's int handle alike). */
enum { BCS_KEYVAL_COMM, BCS_KEYVAL_TYPE };
int bcs_keyval_create(const char *fn, int kind,
		      MPI_Comm_copy_attr_function *copy,
		      MPI_Comm_delete_attr_function *del, int *keyval,
		      void *extra);
int bcs_keyval_free(const char *fn, int kind, int *keyval);
int bcs_keyval_ok(int key, int kind);
/* The extra state a keyval's callbacks get, replaced (the Fortran
 * bindings point it at their own record of the keyval). */
void bcs_keyval_set_extra(int key, void *extra);

/* ---- requests ------------------------------------------------------------ */

enum bcs_req_kind { R_SEND = 1, R_RECV, R_COLL, R_DONE, R_PROBE,
		   R_PERSIST, R_NBC, R_GREQ };

struct nbc;
struct greq;

/* How a send completes (MPI-3.1 §3.4): standard, synchronous (once
 * matched), ready (a standard send here) or buffered (bsend.c: copied
 * into the attached buffer, done as posted). */
enum bcs_send_mode { BCS_M_STANDARD, BCS_M_SYNC, BCS_M_READY,
		     BCS_M_BUFFERED };

/* A persistent request's arguments (persist.c): each MPI_Start starts
 * one operation of them. */
struct bcs_persist {
	void *buf;
	int count;
	MPI_Datatype dt;     /* held (bcs_dt_hold) while the request lives */
	int peer, tag;
	MPI_Comm comm;
	int recv;
	enum bcs_send_mode mode;
	const char *fn;      /* the call that made it, for errors */
};

struct bcs_req {
	int used;
	enum bcs_req_kind kind;
	int done;            /* the engine's completion came */
	int persistent_free; /* MPI_Request_free before done: freed then */
	MPI_Status st;
	uint64_t send_clock; /* RECV: the matched send's clock */
	int32_t src_world;   /* RECV: the send's world rank */
	struct bcs_comm *comm;
	/* a receive into a non-contiguous type: unpacked at completion */
	void *tmp;
	int unpack;          /* ubuf, ucount, utype set (ubuf may be
			      * MPI_BOTTOM) and utype held */
	void *ubuf;
	int ucount;
	MPI_Datatype utype;
	int err;             /* an MPI error class for its status */
	/* a collective made of several: done when all of parts are */
	void (*on_done)(struct bcs_req *r);
	int cancel_asked;    /* RECV: MPI_Cancel posted BCS_D_CANCEL */
	/* R_PERSIST: its arguments, and the operation of its latest
	 * MPI_Start (MPI_REQUEST_NULL: inactive) */
	struct bcs_persist pers;
	MPI_Request active;
	struct nbc *nbc;     /* R_NBC: its coroutine (nbc.c) */
	struct greq *greq;   /* R_GREQ: the program's functions (greq.c) */
};

/* A new request of kind on comm; its engine id is its handle's index.
 * NULL when the table is full. */
struct bcs_req *bcs_req_new(enum bcs_req_kind kind, struct bcs_comm *comm);
struct bcs_req *bcs_req_get(MPI_Request r);
MPI_Request bcs_req_handle(const struct bcs_req *r);
/* The id the engine echoes in r's completion. */
uint64_t bcs_req_id(const struct bcs_req *r);
/* A status's count in bytes (MPICH's layout). */
void bcs_status_set_bytes(MPI_Status *st, uint64_t bytes);
uint64_t bcs_status_bytes(const MPI_Status *st);
void bcs_req_free(struct bcs_req *r);
/* The engine's completion d (rt.h's done function). */
void bcs_req_done(const struct bcs_done *d);
/* The request whose completion h waits for: h's own, its persistent
 * request's active operation, or NULL (MPI_REQUEST_NULL, not a request,
 * or an inactive persistent request). */
struct bcs_req *bcs_req_live(MPI_Request h);
/* Complete r as the program sees it (its status out, the clock
 * advanced past a receive's send, r freed): Wait and Test. */
int bcs_req_finish(MPI_Request *h, MPI_Status *st);
/* Block until every request in r[0..n) is done (NULL entries skipped). */
int bcs_req_wait_all(struct bcs_req **r, int n);

/* ---- non-blocking collectives (nbc.c) ---------------------------------- */

/* Wait until ready(ctx): bcs_rt_wait, or in a non-blocking collective's
 * coroutine a yield to the program until it is.  0 or -EPIPE. */
int bcs_wait(int (*ready)(void *ctx), void *ctx);
/* Whether R_NBC request r is done, its coroutine moved on if what it
 * waits for has come. */
int bcs_nbc_done(struct bcs_req *r);
void bcs_nbc_free(struct nbc *n);

/* ---- generalized requests (greq.c) -------------------------------------- */

/* The query function's status into r->st: its return. */
int bcs_greq_status(struct bcs_req *r);
/* The cancel function, told whether r completed: its return. */
int bcs_greq_cancel(struct bcs_req *r);
/* The free function, once; r's record of them goes. */
void bcs_greq_free(struct bcs_req *r);

/* ---- point-to-point, internally ---------------------------------------- */

#define BCS_TAG_UB 0x3fffffff /* as MPI_TAG_UB reports */

/* How bcs_p2p_check checks: a receive (ANY_SOURCE and ANY_TAG
 * allowed); a datatype the caller holds (bcs_dt_hold: one the program
 * freed since is fine, as for a persistent request's Start). */
#define BCS_P2P_RECV 1u
#define BCS_P2P_HELD 2u
/* The common checks of a point-to-point call, *cp set: 0 or the error
 * returned (through the handler). */
int bcs_p2p_check(const char *fn, struct bcs_comm **cp, MPI_Comm comm,
		  const void *buf, int count, MPI_Datatype dt, int peer,
		  int tag, unsigned how);
/* Isend/Irecv as the program calls them (p2p.c), arguments checked
 * against comm's handler (how: BCS_P2P_HELD or 0) and errors named fn;
 * a send in mode. */
int bcs_p2p_send(const char *fn, const void *buf, int count,
		 MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		 enum bcs_send_mode mode, unsigned how, MPI_Request *req);
int bcs_p2p_recv(const char *fn, void *buf, int count, MPI_Datatype dt,
		 int source, int tag, MPI_Comm comm, unsigned how,
		 MPI_Request *req);
/* A buffered send (bsend.c), its arguments checked: the message packed
 * into the attached buffer and posted; *req a request already done.
 * 0, or an error through c's handler (MPI_ERR_BUFFER: no room). */
int bcs_bsend(const char *fn, struct bcs_comm *c, const void *buf, int count,
	      MPI_Datatype dt, int dest_world, int tag, MPI_Request *req);
/* Wait until every buffered send left the attached buffer (Finalize). */
void bcs_bsend_flush(void);

/* Isend / Irecv with world ranks and a context, for the collectives
 * built on messages (tag in the collective's own space). */
int bcs_isend(const void *buf, int count, MPI_Datatype dt, int dest_world,
	      int tag, uint64_t ctx, struct bcs_comm *c, int sync,
	      MPI_Request *req);
int bcs_irecv(void *buf, int count, MPI_Datatype dt, int src_world, int tag,
	      uint64_t ctx, struct bcs_comm *c, MPI_Request *req);

/* What every collective checks (coll.c): the communicator (*cp set),
 * a count and committed datatype, a reduction's operation; each error
 * through the handler, naming fn. */
int bcs_coll_comm_ok(const char *fn, MPI_Comm comm, struct bcs_comm **cp);
int bcs_coll_type_ok(const char *fn, struct bcs_comm *c, int count,
		     MPI_Datatype dt);
int bcs_coll_op_ok(const char *fn, struct bcs_comm *c, MPI_Op op);
/* Wait for n requests of a collective (MPI_REQUEST_NULL skipped), even
 * after an error: none may land after the call returned.  The first
 * error, through c's handler. */
int bcs_coll_wait(const char *fn, struct bcs_comm *c, MPI_Request *r, int n);
/* The root's gathering of a message-made reduction (coll.c): every
 * member's count of dt into *all, a span each in rank order, member k's
 * at *all + span * k - lb (the caller frees *all); tag in the
 * collective context.  0, or an error through c's handler. */
int bcs_coll_gather_spans(const char *fn, struct bcs_comm *c,
			  const void *sbuf, int count, MPI_Datatype dt,
			  int tag, uint8_t **all, MPI_Aint *lb,
			  MPI_Aint *span);
/* count of stype at sbuf into rcount of rtype at rbuf, here, element by
 * element (gaps left alone): 0, MPI_ERR_TRUNCATE or MPI_ERR_NO_MEM
 * (coll.c). */
int bcs_local_copy(const void *sbuf, int scount, MPI_Datatype stype,
		   void *rbuf, int rcount, MPI_Datatype rtype);

/* ---- datatypes (datatype.c) and operations (op.c) ----------------------- */

/* Whether dt is a datatype handle this library knows (and committed,
 * for a derived one). */
int bcs_dt_ok(MPI_Datatype dt);
/* Bytes of data in one dt (MPI_Type_size), and its extent. */
size_t bcs_dt_size(MPI_Datatype dt);
MPI_Aint bcs_dt_extent(MPI_Datatype dt);
/* Whether count of dt is one run of bytes from buf (so buf is used as
 * it is). */
int bcs_dt_contig(MPI_Datatype dt);
/* count of dt at buf into out (count * size bytes), and back. */
void bcs_dt_pack(MPI_Datatype dt, int count, const void *buf, void *out);
void bcs_dt_unpack(MPI_Datatype dt, int count, const void *in, size_t bytes,
		   void *buf);
/* A copy of count of dt's span at buf, laid out as at buf: the typed
 * pointer into it, or NULL (no memory); free *block. */
void *bcs_dt_span_dup(const void *buf, int count, MPI_Datatype dt,
		      void **block);
/* The reduction kernel type of a predefined dt: 0 and *t, or -1. */
int bcs_dt_kernel(MPI_Datatype dt, enum bcs_type *t);
int bcs_dt_init(void);

/* Whether op is an operation handle this library knows. */
int bcs_op_ok(MPI_Op op);
/* The kernel of a predefined op: 0 and *o, or -1 (a user op). */
int bcs_op_kernel(MPI_Op op, enum bcs_op *o);
/* inout = in op inout over count of dt: 0, or an MPI error class. */
int bcs_op_apply(MPI_Op op, const void *in, void *inout, int count,
		 MPI_Datatype dt);
int bcs_op_commutative(MPI_Op op);

/* ---- errors ---------------------------------------------------------------- */

/* The program's error handlers and codes (errhandler.c): whether h is a
 * handler (predefined or the program's); run h (a program's) for code
 * on comm, giving back code; an added code's class and text (0), or -1
 * (not one). */
int bcs_errh_valid(MPI_Errhandler h);
int bcs_errh_invoke(MPI_Errhandler h, MPI_Comm comm, int code);
int bcs_user_error(int code, int *cls, const char **text);
void bcs_errh_fini(void);
/* Info objects (info.c): MPI_INFO_ENV filled at MPI_Init. */
int bcs_infos_init(void);
void bcs_infos_fini(void);
/* MPI_LASTUSEDCODE's value from now on (attr.c). */
void bcs_attr_lastcode(int code);

/* An error of class cls in call fn on comm c (NULL: MPI_COMM_WORLD's
 * handler): the handler decides — MPI_ERRORS_ARE_FATAL ends the job
 * with the call, rank and message; MPI_ERRORS_RETURN returns cls. */
int bcs_error(struct bcs_comm *c, const char *fn, int cls,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A call mpi.h declares that BCS-MPI does not implement (unsupported.c,
 * generated): MPI_ERR_UNSUPPORTED_OPERATION through MPI_COMM_WORLD's
 * handler, the message naming the call; fatal outside MPI_Init and
 * MPI_Finalize (no handler to ask). */
int bcs_unsupported(const char *fn);
/* The engine failed the job (or the rank cannot go on): the message on
 * stderr, then exit. */
void bcs_fatal(const char *fn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* Calls before MPI_Init or after MPI_Finalize: fatal (there is no
 * communicator whose handler could say otherwise). */
#define BCS_NEED_INIT(fn)                                                   \
	do {                                                                \
		if (bcs_state_phase() != BCS_PHASE_INITIALIZED)             \
			bcs_fatal(fn, "called %s",                          \
				  bcs_state_phase() ==                      \
				  BCS_PHASE_UNINITIALIZED ?                 \
				  "before MPI_Init" : "after MPI_Finalize");\
	} while (0)

#endif
