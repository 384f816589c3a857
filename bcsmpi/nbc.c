/*
 * nbc.c — the non-blocking collectives (MPI-3.1 §5.12): Ibarrier,
 * Ibcast, Ireduce, Iallreduce, Igather(v), Iscatter(v), Iallgather(v),
 * Ialltoall(v,w), Ireduce_scatter(_block), Iscan, Iexscan.
 *
 * Each runs the blocking collective's own code as a coroutine
 * (ucontext: no thread, which a rank may not start): it posts its first
 * descriptors at once and returns; where the blocking code would wait,
 * the coroutine yields instead (bcs_wait), and Wait or Test on its
 * request resumes it once what it waits for is done.  So a non-blocking
 * collective is the blocking one's descriptors without the wait, with
 * the same results bit for bit (reductions in rank order, the engine's
 * microphases where the blocking one has them).
 *
 * Key invariant: each runs on a private communicator — the caller's
 * group, a context derived from the caller's and the count of
 * non-blocking collectives started on it (every member starts them in
 * the same order, as MPI requires) — so its engine collectives and
 * messages never meet another collective's, whatever order the
 * coroutines are resumed in on each rank.
 *
 * Progress is MPI's weak kind: a collective moves on when its rank calls
 * Wait or Test on it (or any Wait or Test on a set holding it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "impl.h"

#if defined(__SANITIZE_ADDRESS__)
#define NBC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NBC_ASAN 1
#endif
#endif
#ifdef NBC_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define STACK_BYTES (256u * 1024u)

/* A collective's arguments, as its blocking call takes them. */
struct nbc_args {
	/* a neighborhood collective runs on the caller's communicator
	 * itself (its topology; all its messages go at the start, in the
	 * program's order) */
	int on_caller;
	const MPI_Aint *sdispls_a, *rdispls_a; /* Ineighbor_alltoallw's */
	/* Comm_idup: the new communicator's key, reserved at the call, and
	 * where its handle goes */
	uint64_t key;
	MPI_Comm *newcomm, parent;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype stype, rtype;
	const MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
};

struct nbc {
	ucontext_t self, caller;
	void *stack;
	int (*run)(struct nbc *n);
	int (*ready)(void *ctx); /* what it waits for, when it yields */
	void *ready_ctx;
	int finished, rc;
	MPI_Comm comm;           /* its private communicator */
	struct nbc_args a;       /* the call's (the program keeps the
				  * buffers and arrays until completion) */
#ifdef NBC_ASAN
	void *fake_stack;
	const void *caller_bottom;
	size_t caller_size;
#endif
};

static struct nbc *current; /* the coroutine running, or NULL */

static void switch_to(struct nbc *n, int into)
{
#ifdef NBC_ASAN
	if (into)
		__sanitizer_start_switch_fiber(&n->fake_stack, n->stack,
					       STACK_BYTES);
	else
		__sanitizer_start_switch_fiber(n->finished ? NULL :
					       &n->fake_stack,
					       n->caller_bottom,
					       n->caller_size);
#endif
	if (into)
		swapcontext(&n->caller, &n->self);
	else
		swapcontext(&n->self, &n->caller);
#ifdef NBC_ASAN
	if (into)
		__sanitizer_finish_switch_fiber(n->fake_stack, NULL, NULL);
	else
		__sanitizer_finish_switch_fiber(n->fake_stack,
						&n->caller_bottom,
						&n->caller_size);
#endif
}

int bcs_wait(int (*ready)(void *ctx), void *ctx)
{
	struct nbc *n = current;

	if (!n)
		return bcs_rt_wait(ready, ctx);
	/* in a coroutine: yield until what it waits for is done */
	bcs_rt_poll();
	while (!ready(ctx)) {
		if (bcs_rt_failed())
			return -EPIPE;
		n->ready = ready;
		n->ready_ctx = ctx;
		current = NULL;
		switch_to(n, 0);
		current = n;
	}
	n->ready = NULL;
	return 0;
}

static void trampoline(unsigned lo, unsigned hi)
{
	struct nbc *n = (struct nbc *)((uintptr_t)hi << 32 | lo);

#ifdef NBC_ASAN
	__sanitizer_finish_switch_fiber(NULL, &n->caller_bottom,
					&n->caller_size);
#endif
	n->rc = n->run(n);
	/* its private communicator goes with it */
	if (!n->a.on_caller)
		PMPI_Comm_free(&n->comm);
	n->finished = 1;
	current = NULL;
	switch_to(n, 0); /* never resumed again */
}

/* Run n until it yields or finishes. */
static void resume(struct nbc *n)
{
	current = n;
	switch_to(n, 1);
	current = NULL;
}

int bcs_nbc_done(struct bcs_req *r)
{
	struct nbc *n = r->nbc;

	if (r->done)
		return 1;
	/* only the program's own context resumes coroutines */
	if (!current && !n->finished && n->ready) {
		bcs_rt_poll();
		if (n->ready(n->ready_ctx))
			resume(n);
	}
	if (n->finished) {
		r->done = 1;
		r->err = n->rc;
	}
	return r->done;
}

void bcs_nbc_free(struct nbc *n)
{
	if (!n)
		return;
	free(n->stack);
	free(n);
}

/* Start run on args a and comm as fn: its request, or an error through
 * comm's handler. */
static int start(const char *fn, int (*run)(struct nbc *n),
		 const struct nbc_args *a, MPI_Comm comm, MPI_Request *request)
{
	struct bcs_comm *c;
	struct bcs_req *r;
	struct nbc *n;
	int rc;

	BCS_NEED_INIT(fn);
	if ((rc = bcs_coll_comm_ok(fn, comm, &c)))
		return rc;
	if (!request)
		return bcs_error(c, fn, MPI_ERR_REQUEST, "request is NULL");
	if (!(n = calloc(1, sizeof(*n))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	n->run = run;
	n->a = *a;
	if (a->on_caller)
		n->comm = comm;
	else
		n->comm = bcs_comm_make(c, UINT64_C(1) << 62 | c->nbcs,
					c->size, c->world, &rc);
	if (rc || !(n->stack = malloc(STACK_BYTES)) ||
	    !(r = bcs_req_new(R_NBC, c))) {
		if (!rc && !a->on_caller)
			PMPI_Comm_free(&n->comm);
		bcs_nbc_free(n);
		return bcs_error(c, fn, rc ? rc : MPI_ERR_NO_MEM, "no room for "
				 "another non-blocking collective");
	}
	c->nbcs++;
	r->nbc = n;
	getcontext(&n->self);
	n->self.uc_stack.ss_sp = n->stack;
	n->self.uc_stack.ss_size = STACK_BYTES;
	n->self.uc_link = NULL;
	makecontext(&n->self, (void (*)(void))trampoline, 2,
		    (unsigned)(uintptr_t)n, (unsigned)((uintptr_t)n >> 32));
	/* its first descriptors now, in the program's order */
	resume(n);
	if (bcs_nbc_done(r) && r->err) {
		/* its arguments were refused (said through the handler
		 * already): the call fails, as the blocking one would */
		rc = r->err;
		bcs_req_free(r);
		return rc;
	}
	*request = bcs_req_handle(r);
	return MPI_SUCCESS;
}

/* ---- the calls -------------------------------------------------------------- */

/* Each run is the blocking call on the collective's own communicator. */
static int run_barrier(struct nbc *n)
{
	return PMPI_Barrier(n->comm);
}

static int run_bcast(struct nbc *n)
{
	return PMPI_Bcast(n->a.rbuf, n->a.rcount, n->a.rtype, n->a.root,
			  n->comm);
}

static int run_reduce(struct nbc *n)
{
	return PMPI_Reduce(n->a.sbuf, n->a.rbuf, n->a.rcount, n->a.rtype,
			   n->a.op, n->a.root, n->comm);
}

static int run_allreduce(struct nbc *n)
{
	return PMPI_Allreduce(n->a.sbuf, n->a.rbuf, n->a.rcount, n->a.rtype,
			      n->a.op, n->comm);
}

static int run_scan(struct nbc *n)
{
	return PMPI_Scan(n->a.sbuf, n->a.rbuf, n->a.rcount, n->a.rtype,
			 n->a.op, n->comm);
}

static int run_exscan(struct nbc *n)
{
	return PMPI_Exscan(n->a.sbuf, n->a.rbuf, n->a.rcount, n->a.rtype,
			   n->a.op, n->comm);
}

static int run_reduce_scatter_block(struct nbc *n)
{
	return PMPI_Reduce_scatter_block(n->a.sbuf, n->a.rbuf, n->a.rcount,
					 n->a.rtype, n->a.op, n->comm);
}

static int run_reduce_scatter(struct nbc *n)
{
	return PMPI_Reduce_scatter(n->a.sbuf, n->a.rbuf, n->a.rcounts,
				   n->a.rtype, n->a.op, n->comm);
}

static int run_gather(struct nbc *n)
{
	return PMPI_Gather(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			   n->a.rcount, n->a.rtype, n->a.root, n->comm);
}

static int run_gatherv(struct nbc *n)
{
	return PMPI_Gatherv(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			    n->a.rcounts, n->a.rdispls, n->a.rtype, n->a.root,
			    n->comm);
}

static int run_scatter(struct nbc *n)
{
	return PMPI_Scatter(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			    n->a.rcount, n->a.rtype, n->a.root, n->comm);
}

static int run_scatterv(struct nbc *n)
{
	return PMPI_Scatterv(n->a.sbuf, n->a.scounts, n->a.sdispls,
			     n->a.stype, n->a.rbuf, n->a.rcount, n->a.rtype,
			     n->a.root, n->comm);
}

static int run_allgather(struct nbc *n)
{
	return PMPI_Allgather(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			      n->a.rcount, n->a.rtype, n->comm);
}

static int run_allgatherv(struct nbc *n)
{
	return PMPI_Allgatherv(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			       n->a.rcounts, n->a.rdispls, n->a.rtype,
			       n->comm);
}

static int run_alltoall(struct nbc *n)
{
	return PMPI_Alltoall(n->a.sbuf, n->a.scount, n->a.stype, n->a.rbuf,
			     n->a.rcount, n->a.rtype, n->comm);
}

static int run_alltoallv(struct nbc *n)
{
	return PMPI_Alltoallv(n->a.sbuf, n->a.scounts, n->a.sdispls,
			      n->a.stype, n->a.rbuf, n->a.rcounts,
			      n->a.rdispls, n->a.rtype, n->comm);
}

static int run_alltoallw(struct nbc *n)
{
	return PMPI_Alltoallw(n->a.sbuf, n->a.scounts, n->a.sdispls,
			      n->a.stypes, n->a.rbuf, n->a.rcounts,
			      n->a.rdispls, n->a.rtypes, n->comm);
}

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { 0 };

	return start("MPI_Ibarrier", run_barrier, &a, comm, request);
}

#pragma weak MPI_Ibcast = PMPI_Ibcast
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
		MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .rbuf = buffer, .rcount = count,
			      .rtype = datatype, .root = root };

	return start("MPI_Ibcast", run_bcast, &a, comm, request);
}

/* The reductions' arguments (root 0 where there is none). */
#define REDUCTION(root_)                                                    \
	{ .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,                \
	  .rtype = datatype, .op = op, .root = (root_) }

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
		 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
		 MPI_Request *request)
{
	struct nbc_args a = REDUCTION(root);

	return start("MPI_Ireduce", run_reduce, &a, comm, request);
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
		    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		    MPI_Request *request)
{
	struct nbc_args a = REDUCTION(0);

	return start("MPI_Iallreduce", run_allreduce, &a, comm, request);
}

#pragma weak MPI_Iscan = PMPI_Iscan
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count,
	       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	       MPI_Request *request)
{
	struct nbc_args a = REDUCTION(0);

	return start("MPI_Iscan", run_scan, &a, comm, request);
}

#pragma weak MPI_Iexscan = PMPI_Iexscan
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
		 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		 MPI_Request *request)
{
	struct nbc_args a = REDUCTION(0);

	return start("MPI_Iexscan", run_exscan, &a, comm, request);
}

#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
			       int recvcount, MPI_Datatype datatype,
			       MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .rbuf = recvbuf,
			      .rcount = recvcount, .rtype = datatype,
			      .op = op };

	return start("MPI_Ireduce_scatter_block", run_reduce_scatter_block,
		     &a, comm, request);
}

#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
			 const int recvcounts[], MPI_Datatype datatype,
			 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .rbuf = recvbuf,
			      .rcounts = recvcounts, .rtype = datatype,
			      .op = op };

	return start("MPI_Ireduce_scatter", run_reduce_scatter, &a, comm,
		     request);
}

/* The gathers', scatters' and all-to-alls' fixed arguments. */
#define MOVE(root_)                                                         \
	{ .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,          \
	  .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,          \
	  .root = (root_) }

#pragma weak MPI_Igather = PMPI_Igather
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 int root, MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = MOVE(root);

	return start("MPI_Igather", run_gather, &a, comm, request);
}

#pragma weak MPI_Igatherv = PMPI_Igatherv
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, const int recvcounts[], const int displs[],
		  MPI_Datatype recvtype, int root, MPI_Comm comm,
		  MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .scount = sendcount,
			      .stype = sendtype, .rbuf = recvbuf,
			      .rcounts = recvcounts, .rdispls = displs,
			      .rtype = recvtype, .root = root };

	return start("MPI_Igatherv", run_gatherv, &a, comm, request);
}

#pragma weak MPI_Iscatter = PMPI_Iscatter
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = MOVE(root);

	return start("MPI_Iscatter", run_scatter, &a, comm, request);
}

#pragma weak MPI_Iscatterv = PMPI_Iscatterv
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[],
		   const int displs[], MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, int root,
		   MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .scounts = sendcounts,
			      .sdispls = displs, .stype = sendtype,
			      .rbuf = recvbuf, .rcount = recvcount,
			      .rtype = recvtype, .root = root };

	return start("MPI_Iscatterv", run_scatterv, &a, comm, request);
}

#pragma weak MPI_Iallgather = PMPI_Iallgather
int PMPI_Iallgather(const void *sendbuf, int sendcount,
		    MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, MPI_Comm comm,
		    MPI_Request *request)
{
	struct nbc_args a = MOVE(0);

	return start("MPI_Iallgather", run_allgather, &a, comm, request);
}

#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
int PMPI_Iallgatherv(const void *sendbuf, int sendcount,
		     MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[],
		     MPI_Datatype recvtype, MPI_Comm comm,
		     MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .scount = sendcount,
			      .stype = sendtype, .rbuf = recvbuf,
			      .rcounts = recvcounts, .rdispls = displs,
			      .rtype = recvtype };

	return start("MPI_Iallgatherv", run_allgatherv, &a, comm, request);
}

#pragma weak MPI_Ialltoall = PMPI_Ialltoall
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = MOVE(0);

	return start("MPI_Ialltoall", run_alltoall, &a, comm, request);
}

#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
		    const int sdispls[], MPI_Datatype sendtype,
		    void *recvbuf, const int recvcounts[],
		    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		    MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .scounts = sendcounts,
			      .sdispls = sdispls, .stype = sendtype,
			      .rbuf = recvbuf, .rcounts = recvcounts,
			      .rdispls = rdispls, .rtype = recvtype };

	return start("MPI_Ialltoallv", run_alltoallv, &a, comm, request);
}

#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
		    const int sdispls[], const MPI_Datatype sendtypes[],
		    void *recvbuf, const int recvcounts[],
		    const int rdispls[], const MPI_Datatype recvtypes[],
		    MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .sbuf = sendbuf, .scounts = sendcounts,
			      .sdispls = sdispls, .stypes = sendtypes,
			      .rbuf = recvbuf, .rcounts = recvcounts,
			      .rdispls = rdispls, .rtypes = recvtypes };

	return start("MPI_Ialltoallw", run_alltoallw, &a, comm, request);
}

/* ---- neighborhood collectives and Comm_idup ------------------------------- */

static int run_neighbor_allgather(struct nbc *n)
{
	return PMPI_Neighbor_allgather(n->a.sbuf, n->a.scount, n->a.stype,
				       n->a.rbuf, n->a.rcount, n->a.rtype,
				       n->comm);
}

static int run_neighbor_allgatherv(struct nbc *n)
{
	return PMPI_Neighbor_allgatherv(n->a.sbuf, n->a.scount, n->a.stype,
					n->a.rbuf, n->a.rcounts,
					n->a.rdispls, n->a.rtype, n->comm);
}

static int run_neighbor_alltoall(struct nbc *n)
{
	return PMPI_Neighbor_alltoall(n->a.sbuf, n->a.scount, n->a.stype,
				      n->a.rbuf, n->a.rcount, n->a.rtype,
				      n->comm);
}

static int run_neighbor_alltoallv(struct nbc *n)
{
	return PMPI_Neighbor_alltoallv(n->a.sbuf, n->a.scounts, n->a.sdispls,
				       n->a.stype, n->a.rbuf, n->a.rcounts,
				       n->a.rdispls, n->a.rtype, n->comm);
}

static int run_neighbor_alltoallw(struct nbc *n)
{
	return PMPI_Neighbor_alltoallw(n->a.sbuf, n->a.scounts,
				       n->a.sdispls_a, n->a.stypes, n->a.rbuf,
				       n->a.rcounts, n->a.rdispls_a,
				       n->a.rtypes, n->comm);
}

#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
			     MPI_Datatype sendtype, void *recvbuf,
			     int recvcount, MPI_Datatype recvtype,
			     MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = MOVE(0);

	a.on_caller = 1;
	return start("MPI_Ineighbor_allgather", run_neighbor_allgather, &a,
		     comm, request);
}

#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
			      MPI_Datatype sendtype, void *recvbuf,
			      const int recvcounts[], const int displs[],
			      MPI_Datatype recvtype, MPI_Comm comm,
			      MPI_Request *request)
{
	struct nbc_args a = { .on_caller = 1, .sbuf = sendbuf,
			      .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcounts = recvcounts,
			      .rdispls = displs, .rtype = recvtype };

	return start("MPI_Ineighbor_allgatherv", run_neighbor_allgatherv, &a,
		     comm, request);
}

#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf,
			    int recvcount, MPI_Datatype recvtype,
			    MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = MOVE(0);

	a.on_caller = 1;
	return start("MPI_Ineighbor_alltoall", run_neighbor_alltoall, &a,
		     comm, request);
}

#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
			     const int sdispls[], MPI_Datatype sendtype,
			     void *recvbuf, const int recvcounts[],
			     const int rdispls[], MPI_Datatype recvtype,
			     MPI_Comm comm, MPI_Request *request)
{
	struct nbc_args a = { .on_caller = 1, .sbuf = sendbuf,
			      .scounts = sendcounts, .sdispls = sdispls,
			      .stype = sendtype, .rbuf = recvbuf,
			      .rcounts = recvcounts, .rdispls = rdispls,
			      .rtype = recvtype };

	return start("MPI_Ineighbor_alltoallv", run_neighbor_alltoallv, &a,
		     comm, request);
}

#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
			     const MPI_Aint sdispls[],
			     const MPI_Datatype sendtypes[], void *recvbuf,
			     const int recvcounts[], const MPI_Aint rdispls[],
			     const MPI_Datatype recvtypes[], MPI_Comm comm,
			     MPI_Request *request)
{
	struct nbc_args a = { .on_caller = 1, .sbuf = sendbuf,
			      .scounts = sendcounts, .sdispls_a = sdispls,
			      .stypes = sendtypes, .rbuf = recvbuf,
			      .rcounts = recvcounts, .rdispls_a = rdispls,
			      .rtypes = recvtypes };

	return start("MPI_Ineighbor_alltoallw", run_neighbor_alltoallw, &a,
		     comm, request);
}

/* Comm_idup: everyone is there (a barrier on its own communicator),
 * then the new one is made with the key reserved when the call was made
 * — so communicators made on the parent meanwhile derive the same
 * contexts on every member, whenever each resumes this. */
static int run_idup(struct nbc *n)
{
	struct bcs_comm *parent = bcs_comm_get(n->a.parent);
	int rc;

	if ((rc = PMPI_Barrier(n->comm)))
		return rc;
	*n->a.newcomm = bcs_comm_make(parent, n->a.key, parent->size,
				      parent->world, &rc);
	if (rc)
		return bcs_error(parent, "MPI_Comm_idup", rc, "no room for "
				 "another communicator");
	rc = bcs_attr_copy(parent, n->a.parent,
			   bcs_comm_get(*n->a.newcomm), *n->a.newcomm);
	return rc ? bcs_error(parent, "MPI_Comm_idup", rc, "an attribute's "
			      "copy callback failed (%d)", rc) : MPI_SUCCESS;
}

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	struct nbc_args a = { .newcomm = newcomm, .parent = comm };
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Comm_idup");
	if ((rc = bcs_coll_comm_ok("MPI_Comm_idup", comm, &c)))
		return rc;
	if (!newcomm)
		return bcs_error(c, "MPI_Comm_idup", MPI_ERR_ARG,
				 "newcomm is NULL");
	*newcomm = MPI_COMM_NULL; /* not usable before completion */
	a.key = (uint64_t)c->children++ << 32;
	return start("MPI_Comm_idup", run_idup, &a, comm, request);
}
