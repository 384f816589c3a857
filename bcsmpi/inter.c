/*
 * inter.c — intercommunicators (MPI-3.1 §6.6): Intercomm_create and
 * _merge, Comm_test_inter, Comm_remote_size/group, and the collectives
 * defined on them (Barrier, Bcast, Reduce, Allreduce, Gather, Scatter,
 * Allgather, Alltoall).
 *
 * An intercommunicator is a pair of groups and a context: the local
 * group (world, size, rank), the remote one (rworld, rsize) which
 * point-to-point ranks name, and an intracommunicator of the local
 * group (local) for the collectives' local halves.  The two leaders
 * agree on the context: the one of the lower world rank proposes it
 * (from its local communicator's context and count of children), so
 * both groups derive the same without a word more than the groups.
 *
 * A collective is made of local collectives and messages between the
 * two leaders (local rank 0 of each group) in the intercommunicator's
 * collective context (ctx + 1); Alltoall goes straight from each
 * process to each remote one.  Data that crosses between the leaders in
 * one message travels packed, so the two groups' datatypes need only
 * agree in signature, as MPI requires.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

enum { T_INTER_BARRIER = 20, T_INTER_BCAST, T_INTER_REDUCE,
       T_INTER_GATHER, T_INTER_SCATTER, T_INTER_ALLGATHER,
       T_INTER_ALLTOALL, T_INTER_ALLREDUCE, T_INTER_MERGE,
       T_INTER_DIRECT };

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* The leaders' exchange: what each tells the other. */
struct hello {
	int32_t size;
	int32_t leader_world;
	uint64_t key;
};

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
			  MPI_Comm peer_comm, int remote_leader, int tag,
			  MPI_Comm *newintercomm)
{
	static const char fn[] = "MPI_Intercomm_create";
	struct bcs_comm *c, *p = NULL, *ic;
	struct hello me, them = { 0 };
	int32_t *rworld = NULL, info[4];
	uint64_t key;
	int rc, low;

	BCS_NEED_INIT(fn);
	if (!(c = bcs_comm_get(local_comm)) || c->inter)
		return bcs_error(NULL, fn, MPI_ERR_COMM, "local_comm is not "
				 "an intracommunicator (%#x)",
				 (unsigned)local_comm);
	if (!newintercomm)
		return bcs_error(c, fn, MPI_ERR_ARG, "newintercomm is NULL");
	if (local_leader < 0 || local_leader >= c->size)
		return bcs_error(c, fn, MPI_ERR_RANK, "local_leader %d in a "
				 "communicator of %d", local_leader, c->size);
	/* every member counts it, so the proposal is the same on all */
	me = (struct hello){ c->size, c->world[local_leader],
			     mix(c->ctx ^ mix(c->children++ << 8 | 0x1c)) };
	if (c->rank == local_leader) {
		MPI_Status st;

		if (!(p = bcs_comm_get(peer_comm)))
			return bcs_error(c, fn, MPI_ERR_COMM, "peer_comm is "
					 "not a communicator (%#x)",
					 (unsigned)peer_comm);
		if (remote_leader < 0 || remote_leader >= bcs_peer_size(p))
			return bcs_error(c, fn, MPI_ERR_RANK, "remote_leader "
					 "%d in peer_comm of %d",
					 remote_leader, bcs_peer_size(p));
		rc = PMPI_Sendrecv(&me, sizeof(me), MPI_BYTE, remote_leader,
				   tag, &them, sizeof(them), MPI_BYTE,
				   remote_leader, tag, peer_comm, &st);
		if (rc)
			return rc;
	}
	/* the remote group's size, leader and the agreed key, to all */
	info[0] = them.size;
	info[1] = them.leader_world;
	info[2] = (int32_t)(them.key >> 32);
	info[3] = (int32_t)them.key;
	if ((rc = PMPI_Bcast(info, 4, MPI_INT, local_leader, local_comm)))
		return rc;
	them = (struct hello){ info[0], info[1],
			       (uint64_t)(uint32_t)info[2] << 32 |
			       (uint32_t)info[3] };
	if (them.size <= 0 || them.size > bcs_rt.size)
		return bcs_error(c, fn, MPI_ERR_OTHER, "the remote group's "
				 "size %d", them.size);
	if (!(rworld = malloc((size_t)them.size * sizeof(*rworld))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	if (c->rank == local_leader) {
		rc = PMPI_Sendrecv(c->world, c->size, MPI_INT, remote_leader,
				   tag, rworld, them.size, MPI_INT,
				   remote_leader, tag, peer_comm,
				   MPI_STATUS_IGNORE);
		if (rc) {
			free(rworld);
			return rc;
		}
	}
	if ((rc = PMPI_Bcast(rworld, them.size, MPI_INT, local_leader,
			     local_comm))) {
		free(rworld);
		return rc;
	}
	for (int i = 0; i < them.size; i++)
		for (int k = 0; k < c->size; k++)
			if (rworld[i] == c->world[k]) {
				int32_t both = rworld[i];

				free(rworld);
				return bcs_error(c, fn, MPI_ERR_COMM, "the "
						 "groups overlap (world rank "
						 "%d is in both)", both);
			}
	low = me.leader_world < them.leader_world;
	key = low ? me.key : them.key;
	*newintercomm = bcs_comm_alloc(key, c->size, c->world, &rc);
	if (rc) {
		free(rworld);
		return bcs_error(c, fn, rc, "no room for another communicator");
	}
	ic = bcs_comm_get(*newintercomm);
	ic->inter = 1;
	ic->rsize = them.size;
	ic->rworld = rworld;
	ic->errh = c->errh;
	/* its local group's own communicator, for the collectives */
	ic->local = bcs_comm_make(c, UINT64_C(3) << 62 | (mix(key) >> 2),
				  c->size, c->world, &rc);
	if (rc) {
		PMPI_Comm_free(newintercomm);
		return bcs_error(c, fn, rc, "no room for another communicator");
	}
	return MPI_SUCCESS;
}

static int inter_of(const char *fn, MPI_Comm comm, struct bcs_comm **cp)
{
	if (!(*cp = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (!(*cp)->inter)
		return bcs_error(*cp, fn, MPI_ERR_COMM, "not an "
				 "intercommunicator");
	return MPI_SUCCESS;
}

/* One message each way between the leaders (either may be NULL). */
static int leaders_swap(const char *fn, struct bcs_comm *c, int tag,
			const void *sbuf, int scount, MPI_Datatype stype,
			void *rbuf, int rcount, MPI_Datatype rtype)
{
	MPI_Request r[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	int rc = MPI_SUCCESS;

	if (rbuf)
		rc = bcs_irecv(rbuf, rcount, rtype, c->rworld[0], tag,
			       c->ctx + 1, c, &r[0]);
	if (!rc && sbuf)
		rc = bcs_isend(sbuf, scount, stype, c->rworld[0], tag,
			       c->ctx + 1, c, 0, &r[1]);
	{
		int w = bcs_coll_wait(fn, c, r, 2);

		return rc ? bcs_error(c, fn, rc, "out of requests") : w;
	}
}

#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high,
			 MPI_Comm *newintracomm)
{
	static const char fn[] = "MPI_Intercomm_merge";
	struct bcs_comm *c;
	int32_t *world;
	int mine[2], theirs[2] = { 0, 0 }, rc, first;

	BCS_NEED_INIT(fn);
	if ((rc = inter_of(fn, intercomm, &c)))
		return rc;
	if (!newintracomm)
		return bcs_error(c, fn, MPI_ERR_ARG, "newintracomm is NULL");
	/* the leaders tell each other their group's high (the leader's) */
	mine[0] = !!high;
	mine[1] = c->world[0];
	if (c->rank == 0 &&
	    (rc = leaders_swap(fn, c, T_INTER_MERGE, mine, 2, MPI_INT,
			       theirs, 2, MPI_INT)))
		return rc;
	if ((rc = PMPI_Bcast(mine, 2, MPI_INT, 0, c->local)) ||
	    (rc = PMPI_Bcast(theirs, 2, MPI_INT, 0, c->local)))
		return rc;
	/* low first; on a tie, the group of the lower leader */
	first = mine[0] != theirs[0] ? !mine[0] : mine[1] < theirs[1];
	if (!(world = malloc((size_t)(c->size + c->rsize) * sizeof(*world))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	memcpy(world + (first ? 0 : c->rsize), c->world,
	       (size_t)c->size * sizeof(*world));
	memcpy(world + (first ? c->size : 0), c->rworld,
	       (size_t)c->rsize * sizeof(*world));
	/* both groups count it on the intercommunicator alike */
	*newintracomm = bcs_comm_new(c, 0x6d, c->size + c->rsize, world, &rc);
	free(world);
	if (rc)
		return bcs_error(c, fn, rc, "no room for another communicator");
	return PMPI_Barrier(*newintracomm);
}

MPI_Comm bcs_inter_dup(struct bcs_comm *c, int *rc)
{
	MPI_Comm h;
	struct bcs_comm *d;

	h = bcs_comm_alloc(c->ctx ^ mix(c->children++ << 8 | 0xd),
			   c->size, c->world, rc);
	if (*rc)
		return MPI_COMM_NULL;
	d = bcs_comm_get(h);
	d->inter = 1;
	d->errh = c->errh;
	d->rsize = c->rsize;
	if (!(d->rworld = malloc((size_t)c->rsize * sizeof(*d->rworld)))) {
		*rc = MPI_ERR_NO_MEM;
		PMPI_Comm_free(&h);
		return MPI_COMM_NULL;
	}
	memcpy(d->rworld, c->rworld, (size_t)c->rsize * sizeof(*d->rworld));
	d->local = bcs_comm_new(bcs_comm_get(c->local), 0xd, c->size,
				c->world, rc);
	if (*rc) {
		PMPI_Comm_free(&h);
		return MPI_COMM_NULL;
	}
	return h;
}

static int inter_flag(const struct bcs_comm *c)
{
	return c->inter;
}

static int remote_size(const struct bcs_comm *c)
{
	return c->rsize;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	return bcs_comm_query("MPI_Comm_test_inter", comm, 0, inter_flag,
			      flag);
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	return bcs_comm_query("MPI_Comm_remote_size", comm, 1, remote_size,
			      size);
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Comm_remote_group");
	if ((rc = inter_of("MPI_Comm_remote_group", comm, &c)))
		return rc;
	if (!group)
		return bcs_error(c, "MPI_Comm_remote_group", MPI_ERR_ARG,
				 "group is NULL");
	*group = bcs_group_new(c->rsize, c->rworld, &rc);
	return rc ? bcs_error(c, "MPI_Comm_remote_group", rc, "no room for "
			      "another group") : MPI_SUCCESS;
}

/* ---- the collectives ---------------------------------------------------------- */

/* root on an intercommunicator: MPI_ROOT (the root itself),
 * MPI_PROC_NULL (the rest of its group) or a rank of the remote group
 * (the receiving group). */
static int inter_root_ok(const char *fn, struct bcs_comm *c, int root)
{
	if (root != MPI_ROOT && root != MPI_PROC_NULL &&
	    (root < 0 || root >= c->rsize))
		return bcs_error(c, fn, MPI_ERR_ROOT, "root %d: MPI_ROOT, "
				 "MPI_PROC_NULL or a rank of the remote group "
				 "of %d", root, c->rsize);
	return MPI_SUCCESS;
}

int bcs_inter_barrier(struct bcs_comm *c)
{
	int rc;

	/* all here, the leaders meet, then all may go */
	if ((rc = PMPI_Barrier(c->local)))
		return rc;
	if (c->rank == 0 &&
	    (rc = leaders_swap("MPI_Barrier", c, T_INTER_BARRIER, "", 0,
			       MPI_BYTE, (void *)"", 0, MPI_BYTE)))
		return rc;
	return PMPI_Barrier(c->local);
}

int bcs_inter_bcast(struct bcs_comm *c, void *buf, int count,
		    MPI_Datatype dt, int root)
{
	int rc;

	if ((rc = inter_root_ok("MPI_Bcast", c, root)) ||
	    root == MPI_PROC_NULL)
		return rc;
	if (root == MPI_ROOT) {
		MPI_Request s;

		if ((rc = bcs_isend(buf, count, dt, c->rworld[0],
				    T_INTER_BCAST, c->ctx + 1, c, 0, &s)))
			return bcs_error(c, "MPI_Bcast", rc, "out of "
					 "requests");
		return bcs_coll_wait("MPI_Bcast", c, &s, 1);
	}
	if (c->rank == 0) {
		MPI_Request q;

		if ((rc = bcs_irecv(buf, count, dt, c->rworld[root],
				    T_INTER_BCAST, c->ctx + 1, c, &q)) ||
		    (rc = bcs_coll_wait("MPI_Bcast", c, &q, 1)))
			return rc ? rc : MPI_ERR_INTERN;
	}
	return PMPI_Bcast(buf, count, dt, 0, c->local);
}

/* A buffer for count of dt, laid out as dt (bcs_dt_span): the typed
 * pointer, or NULL; free *block. */
static void *typed_tmp(int count, MPI_Datatype dt, void **block)
{
	MPI_Aint lb = 0, span = 0;
	uint8_t *b;

	*block = NULL;
	if (bcs_dt_span(dt, count, &lb, &span) ||
	    !(b = malloc((size_t)span + 1)))
		return NULL;
	*block = b;
	return b - lb;
}

int bcs_inter_reduce(struct bcs_comm *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype dt, MPI_Op op, int root, int all)
{
	const char *fn = all ? "MPI_Allreduce" : "MPI_Reduce";
	void *tmp = NULL, *block = NULL;
	int rc;

	if (!all && ((rc = inter_root_ok(fn, c, root)) ||
		     root == MPI_PROC_NULL))
		return rc;
	if (!all && root == MPI_ROOT) {
		MPI_Request q;

		if ((rc = bcs_irecv(rbuf, count, dt, c->rworld[0],
				    T_INTER_REDUCE, c->ctx + 1, c, &q)))
			return bcs_error(c, fn, rc, "out of requests");
		return bcs_coll_wait(fn, c, &q, 1);
	}
	/* this group's reduction, at its leader, goes across */
	if (c->rank == 0 && !(tmp = typed_tmp(count, dt, &block)))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	rc = PMPI_Reduce(sbuf, tmp, count, dt, op, 0, c->local);
	if (!rc && all && c->rank == 0)
		rc = leaders_swap(fn, c, T_INTER_ALLREDUCE, tmp, count, dt,
				  rbuf, count, dt);
	if (!rc && !all && c->rank == 0) {
		MPI_Request s;

		if ((rc = bcs_isend(tmp, count, dt, c->rworld[root],
				    T_INTER_REDUCE, c->ctx + 1, c, 0, &s)))
			rc = bcs_error(c, fn, rc, "out of requests");
		else
			rc = bcs_coll_wait(fn, c, &s, 1);
	}
	free(block);
	if (!rc && all)
		rc = PMPI_Bcast(rbuf, count, dt, 0, c->local);
	return rc;
}

/* This group's data, packed, gathered at its leader: *all (lsize *
 * bytes, to free), or NULL elsewhere. */
static int gather_packed(const char *fn, struct bcs_comm *c, const void *sbuf,
			 int scount, MPI_Datatype stype, size_t bytes,
			 uint8_t **all)
{
	uint8_t *mine = malloc(bytes + 1);
	int rc;

	*all = NULL;
	if (!mine || (c->rank == 0 &&
		      !(*all = malloc(bytes * (size_t)c->size + 1)))) {
		free(mine);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	bcs_dt_pack(stype, scount, sbuf, mine);
	rc = PMPI_Gather(mine, (int)bytes, MPI_BYTE, *all, (int)bytes,
			 MPI_BYTE, 0, c->local);
	free(mine);
	if (rc) {
		free(*all);
		*all = NULL;
	}
	return rc;
}

int bcs_inter_gather(struct bcs_comm *c, const void *sbuf, int scount,
		     MPI_Datatype stype, void *rbuf, int rcount,
		     MPI_Datatype rtype, int root)
{
	size_t bytes = (size_t)scount * bcs_dt_size(stype);
	uint8_t *all = NULL;
	int rc;

	if ((rc = inter_root_ok("MPI_Gather", c, root)) ||
	    root == MPI_PROC_NULL)
		return rc;
	if (root == MPI_ROOT) {
		MPI_Request q;

		if ((rc = bcs_irecv(rbuf, rcount * c->rsize, rtype,
				    c->rworld[0], T_INTER_GATHER, c->ctx + 1,
				    c, &q)))
			return bcs_error(c, "MPI_Gather", rc, "out of "
					 "requests");
		return bcs_coll_wait("MPI_Gather", c, &q, 1);
	}
	if ((rc = gather_packed("MPI_Gather", c, sbuf, scount, stype, bytes,
				&all)))
		return rc;
	if (c->rank == 0) {
		MPI_Request s;

		if ((rc = bcs_isend(all, (int)(bytes * (size_t)c->size),
				    MPI_BYTE, c->rworld[root], T_INTER_GATHER,
				    c->ctx + 1, c, 0, &s)))
			rc = bcs_error(c, "MPI_Gather", rc, "out of requests");
		else
			rc = bcs_coll_wait("MPI_Gather", c, &s, 1);
	}
	free(all);
	return rc;
}

int bcs_inter_scatter(struct bcs_comm *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype, int root)
{
	size_t bytes = (size_t)rcount * bcs_dt_size(rtype);
	uint8_t *all = NULL, *mine;
	int rc;

	if ((rc = inter_root_ok("MPI_Scatter", c, root)) ||
	    root == MPI_PROC_NULL)
		return rc;
	if (root == MPI_ROOT) {
		MPI_Request s;

		if ((rc = bcs_isend(sbuf, scount * c->rsize, stype,
				    c->rworld[0], T_INTER_SCATTER, c->ctx + 1,
				    c, 0, &s)))
			return bcs_error(c, "MPI_Scatter", rc, "out of "
					 "requests");
		return bcs_coll_wait("MPI_Scatter", c, &s, 1);
	}
	mine = malloc(bytes + 1);
	if (!mine || (c->rank == 0 &&
		      !(all = malloc(bytes * (size_t)c->size + 1)))) {
		free(mine);
		return bcs_error(c, "MPI_Scatter", MPI_ERR_NO_MEM,
				 "out of memory");
	}
	if (c->rank == 0) {
		MPI_Request q;

		if ((rc = bcs_irecv(all, (int)(bytes * (size_t)c->size),
				    MPI_BYTE, c->rworld[root],
				    T_INTER_SCATTER, c->ctx + 1, c, &q)))
			rc = bcs_error(c, "MPI_Scatter", rc, "out of "
				       "requests");
		else
			rc = bcs_coll_wait("MPI_Scatter", c, &q, 1);
	}
	if (!rc)
		rc = PMPI_Scatter(all, (int)bytes, MPI_BYTE, mine, (int)bytes,
				  MPI_BYTE, 0, c->local);
	if (!rc)
		bcs_dt_unpack(rtype, rcount, mine, bytes, rbuf);
	free(mine);
	free(all);
	return rc;
}

int bcs_inter_allgather(struct bcs_comm *c, const void *sbuf, int scount,
			MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype)
{
	size_t bytes = (size_t)scount * bcs_dt_size(stype);
	uint8_t *all = NULL;
	int rc;

	if ((rc = gather_packed("MPI_Allgather", c, sbuf, scount, stype,
				bytes, &all)))
		return rc;
	if (c->rank == 0)
		rc = leaders_swap("MPI_Allgather", c, T_INTER_ALLGATHER, all,
				  (int)(bytes * (size_t)c->size), MPI_BYTE,
				  rbuf, rcount * c->rsize, rtype);
	free(all);
	if (!rc)
		rc = PMPI_Bcast(rbuf, rcount * c->rsize, rtype, 0, c->local);
	return rc;
}

int bcs_inter_alltoall(struct bcs_comm *c, const void *sbuf, int scount,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype)
{
	MPI_Aint sext = bcs_dt_extent(stype), rext = bcs_dt_extent(rtype);
	MPI_Request *r = malloc((size_t)c->rsize * 2 * sizeof(*r));
	int rc = MPI_SUCCESS, w;

	if (!r)
		return bcs_error(c, "MPI_Alltoall", MPI_ERR_NO_MEM,
				 "out of memory");
	for (int k = 0; k < 2 * c->rsize; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < c->rsize; k++) {
		if (!(rc = bcs_irecv((uint8_t *)rbuf + (MPI_Aint)k * rcount *
				     rext, rcount, rtype, c->rworld[k],
				     T_INTER_ALLTOALL, c->ctx + 1, c,
				     &r[2 * k])))
			rc = bcs_isend((const uint8_t *)sbuf +
				       (MPI_Aint)k * scount * sext, scount,
				       stype, c->rworld[k], T_INTER_ALLTOALL,
				       c->ctx + 1, c, 0, &r[2 * k + 1]);
	}
	w = bcs_coll_wait("MPI_Alltoall", c, r, 2 * c->rsize);
	free(r);
	return rc ? bcs_error(c, "MPI_Alltoall", rc, "out of requests") : w;
}

/* ---- the v and w variants: straight between the processes ---------------- */

/* One block to or from a remote rank. */
struct part {
	const void *buf;
	int count;
	MPI_Datatype type;
	int peer;                /* remote rank */
};

/* Every receive then every send, posted at once and waited for. */
static int direct(const char *fn, struct bcs_comm *c, const struct part *rv,
		  int nr, const struct part *sd, int ns)
{
	MPI_Request *r = malloc(((size_t)nr + ns + 1) * sizeof(*r));
	int rc = MPI_SUCCESS, w;

	if (!r)
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < nr + ns; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < nr; k++)
		if ((rc = bcs_coll_type_ok(fn, c, rv[k].count, rv[k].type)) ||
		    (rc = bcs_irecv((void *)rv[k].buf, rv[k].count,
				    rv[k].type, c->rworld[rv[k].peer],
				    T_INTER_DIRECT, c->ctx + 1, c, &r[k])))
			break;
	for (int k = 0; !rc && k < ns; k++)
		if ((rc = bcs_coll_type_ok(fn, c, sd[k].count, sd[k].type)) ||
		    (rc = bcs_isend(sd[k].buf, sd[k].count, sd[k].type,
				    c->rworld[sd[k].peer], T_INTER_DIRECT,
				    c->ctx + 1, c, 0, &r[nr + k])))
			break;
	w = bcs_coll_wait(fn, c, r, nr + ns);
	free(r);
	return rc ? rc : w;
}

/* count blocks laid out by counts/displs (displs in elements of type, or
 * in bytes with a type each), one per remote rank. */
static struct part *parts(struct bcs_comm *c, const void *buf,
			  const int *counts, const int *displs,
			  MPI_Datatype type, const MPI_Datatype *types)
{
	struct part *p = malloc(((size_t)c->rsize + 1) * sizeof(*p));

	for (int k = 0; p && k < c->rsize; k++)
		p[k] = (struct part){
			(const char *)buf + (types ? (MPI_Aint)displs[k] :
					     (MPI_Aint)displs[k] *
					     bcs_dt_extent(type)),
			counts[k], types ? types[k] : type, k };
	return p;
}

int bcs_inter_gatherv(struct bcs_comm *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, const int *rcounts,
		      const int *displs, MPI_Datatype rtype, int root)
{
	struct part one = { sbuf, scount, stype, root }, *all;
	int rc;

	if ((rc = inter_root_ok("MPI_Gatherv", c, root)) ||
	    root == MPI_PROC_NULL)
		return rc;
	if (root != MPI_ROOT)
		return direct("MPI_Gatherv", c, NULL, 0, &one, 1);
	if (!rcounts || !displs)
		return bcs_error(c, "MPI_Gatherv", MPI_ERR_ARG, "recvcounts "
				 "or displs is NULL at the root");
	if (!(all = parts(c, rbuf, rcounts, displs, rtype, NULL)))
		return bcs_error(c, "MPI_Gatherv", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = direct("MPI_Gatherv", c, all, c->rsize, NULL, 0);
	free(all);
	return rc;
}

int bcs_inter_scatterv(struct bcs_comm *c, const void *sbuf,
		       const int *scounts, const int *displs,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, int root)
{
	struct part one = { rbuf, rcount, rtype, root }, *all;
	int rc;

	if ((rc = inter_root_ok("MPI_Scatterv", c, root)) ||
	    root == MPI_PROC_NULL)
		return rc;
	if (root != MPI_ROOT)
		return direct("MPI_Scatterv", c, &one, 1, NULL, 0);
	if (!scounts || !displs)
		return bcs_error(c, "MPI_Scatterv", MPI_ERR_ARG, "sendcounts "
				 "or displs is NULL at the root");
	if (!(all = parts(c, sbuf, scounts, displs, stype, NULL)))
		return bcs_error(c, "MPI_Scatterv", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = direct("MPI_Scatterv", c, NULL, 0, all, c->rsize);
	free(all);
	return rc;
}

int bcs_inter_alltoallw(const char *fn, struct bcs_comm *c, const void *sbuf,
			const int *scounts, const int *sdispls,
			MPI_Datatype stype, const MPI_Datatype *stypes,
			void *rbuf, const int *rcounts, const int *rdispls,
			MPI_Datatype rtype, const MPI_Datatype *rtypes)
{
	struct part *s = NULL, *r = NULL;
	int rc;

	if (sbuf == MPI_IN_PLACE)
		return bcs_error(c, fn, MPI_ERR_ARG, "MPI_IN_PLACE on an "
				 "intercommunicator");
	if (!(s = parts(c, sbuf, scounts, sdispls, stype, stypes)) ||
	    !(r = parts(c, rbuf, rcounts, rdispls, rtype, rtypes))) {
		free(s);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	rc = direct(fn, c, r, c->rsize, s, c->rsize);
	free(s);
	free(r);
	return rc;
}

int bcs_inter_allgatherv(struct bcs_comm *c, const void *sbuf, int scount,
			 MPI_Datatype stype, void *rbuf, const int *rcounts,
			 const int *displs, MPI_Datatype rtype)
{
	struct part *s, *r;
	int rc;

	if (sbuf == MPI_IN_PLACE)
		return bcs_error(c, "MPI_Allgatherv", MPI_ERR_ARG,
				 "MPI_IN_PLACE on an intercommunicator");
	if (!(s = malloc(((size_t)c->rsize + 1) * sizeof(*s))) ||
	    !(r = parts(c, rbuf, rcounts, displs, rtype, NULL))) {
		free(s);
		return bcs_error(c, "MPI_Allgatherv", MPI_ERR_NO_MEM,
				 "out of memory");
	}
	for (int k = 0; k < c->rsize; k++)
		s[k] = (struct part){ sbuf, scount, stype, k };
	rc = direct("MPI_Allgatherv", c, r, c->rsize, s, c->rsize);
	free(s);
	free(r);
	return rc;
}
