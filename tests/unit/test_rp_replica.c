/*
 * test_rp_replica.c — libstorm-replication without corosync: a solo
 * replica end to end (replica.c, store.c and group.c's loopback) driving a
 * toy deterministic state machine through the public API, then fed
 * malformed group messages straight into rp_on_deliver().  The codecs'
 * own tests are in test_rp_codec.c.
 *
 * Key rules pinned here: a (client, seq) is applied at most once and every
 * retry gets the stored reply; a request is answered only after it was
 * applied; a restart restores exactly the state and index it stopped at;
 * a message carrying no well-formed OP never changes the replicated state.
 *
 * The toy state machine is a running 64-bit FNV-1a hash of the applied op
 * bytes plus a count; its snapshot carries a check word so that a damaged
 * image is refused rather than installed.
 */
#include "rp_test_util.h"

/* ---- the toy state machine ---------------------------------------------------- */

#define TOY_IDS 1024
#define TOY_MAGIC UINT32_C(0x31594f54) /* "TOY1" */
#define TOY_IMAGE 28u
#define FNV_OFF UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

struct toy {
	uint64_t hash, count;     /* the replicated state */
	uint64_t last_index;      /* apply sees strictly increasing indexes */
	uint16_t times[TOY_IDS];  /* applications per op id */
	unsigned napply, nreplay, nrestore, nsnapshot, nstatus, ncast, ndone;
	uint64_t cast_sum;
	int synced, master;       /* as the last status callback said */
	int in_propose;           /* done() must never come from rp_propose */
	uint64_t fail_at;         /* apply fails (locally) at this index */
};

struct digest {
	uint64_t hash, count;
};

static void toy_init(struct toy *t)
{
	memset(t, 0, sizeof(*t));
	t->hash = FNV_OFF;
	t->master = -1;
}

static struct digest toy_digest(const struct toy *t)
{
	return (struct digest){ t->hash, t->count };
}

static void assert_digest(const struct toy *t, struct digest d)
{
	assert_int_equal(t->hash, d.hash);
	assert_int_equal(t->count, d.count);
}

static uint64_t toy_check(uint64_t count, uint64_t hash)
{
	uint8_t x[16];

	put_le64(x, count);
	put_le64(x + 8, hash);
	return fnv(FNV_OFF, x, 16) ^ UINT64_C(0x5eed5eed5eed5eed);
}

static int toy_apply(void *ctx, const rp_request_t *req, uint8_t *reply,
		     size_t cap, size_t *rlen)
{
	struct toy *t = ctx;

	assert_true(req->index > t->last_index);
	t->last_index = req->index;
	t->hash = fnv(t->hash, req->op, req->len);
	t->count++;
	t->napply++;
	if (req->replay)
		t->nreplay++;
	if (req->len >= 8) {
		uint64_t id = get_le64(req->op);

		if (id < TOY_IDS)
			t->times[id]++;
	}
	assert_true(cap >= 24);
	put_le64(reply, t->count);
	put_le64(reply + 8, t->hash);
	put_le64(reply + 16, req->index);
	*rlen = 24;
	return t->fail_at && req->index == t->fail_at ? -ENOMEM : 0;
}

static void toy_image(uint64_t count, uint64_t hash, uint8_t img[TOY_IMAGE])
{
	for (int i = 0; i < 4; i++)
		img[i] = (uint8_t)(TOY_MAGIC >> (8 * i));
	put_le64(img + 4, count);
	put_le64(img + 12, hash);
	put_le64(img + 20, toy_check(count, hash));
}

static int toy_snapshot(void *ctx, uint8_t **buf, size_t *len)
{
	struct toy *t = ctx;

	if (!(*buf = malloc(TOY_IMAGE)))
		return -ENOMEM;
	toy_image(t->count, t->hash, *buf);
	*len = TOY_IMAGE;
	t->nsnapshot++;
	return 0;
}

static int toy_restore(void *ctx, const uint8_t *buf, size_t len, char *err,
		       size_t errlen)
{
	struct toy *t = ctx;
	uint32_t magic = 0;

	t->nrestore++;
	if (len != TOY_IMAGE) {
		snprintf(err, errlen, "toy image of %zu bytes, not %u", len,
			 TOY_IMAGE);
		return -STORM_EPROTO;
	}
	for (int i = 0; i < 4; i++)
		magic |= (uint32_t)buf[i] << (8 * i);
	uint64_t count = get_le64(buf + 4), hash = get_le64(buf + 12);
	if (magic != TOY_MAGIC || get_le64(buf + 20) != toy_check(count, hash)) {
		snprintf(err, errlen, "toy image damaged");
		return -STORM_EPROTO;
	}
	t->count = count;
	t->hash = hash;
	t->last_index = 0;
	return 0;
}

static void toy_cast(void *ctx, uint32_t from, const void *msg, size_t len)
{
	struct toy *t = ctx;
	const uint8_t *b = msg;

	(void)from;
	t->ncast++;
	for (size_t i = 0; i < len; i++) /* every byte: ASan checks bounds */
		t->cast_sum += b[i];
}

static void toy_status(void *ctx, const rp_status_t *st)
{
	struct toy *t = ctx;

	t->nstatus++;
	t->synced = st->synced;
	t->master = st->master;
	assert_true(st->nmembers <= RP_MAX_REPLICAS);
}

/* One proposal: the cookie handed to rp_propose(). */
struct req {
	uint64_t id, client, seq;
	int expect_rc;
	long dup_of;              /* index of the original, or -1 */
	uint64_t expect_count, expect_hash; /* originals: the reply */
	int ndone, rc;
	size_t rlen;
	uint8_t reply[RP_REPLY_MAX];
	unsigned times_at_done;   /* applications of its id when done came */
};

static void toy_done(void *ctx, void *cookie, int rc, const uint8_t *reply,
		     size_t len)
{
	struct toy *t = ctx;
	struct req *q = cookie;

	assert_false(t->in_propose);
	assert_true(len <= RP_REPLY_MAX);
	q->ndone++;
	q->rc = rc;
	q->rlen = len;
	if (len)
		memcpy(q->reply, reply, len);
	q->times_at_done = q->id < TOY_IDS ? t->times[q->id] : 0;
	t->ndone++;
}

static const rp_callbacks_t toy_cb = {
	.apply = toy_apply,
	.snapshot = toy_snapshot,
	.restore = toy_restore,
	.cast = toy_cast,
	.status = toy_status,
	.done = toy_done,
};

static struct toy *toy_new(void)
{
	struct toy *t = malloc(sizeof(*t));

	assert_non_null(t);
	toy_init(t);
	return t;
}

/* The op bytes of id: its id, then filler of an id-dependent length (a few
 * of them a few KiB, so that batches mix sizes). */
static size_t make_op(uint64_t id, uint8_t *buf, size_t cap)
{
	size_t n = 8 + (size_t)((id * 37) % 300) + (id % 50 == 7 ? 3000 : 0);

	assert_true(n <= cap);
	put_le64(buf, id);
	for (size_t i = 8; i < n; i++)
		buf[i] = (uint8_t)(id * 131 + i * 7);
	return n;
}

static rp_config_t solo_cfg(const char *dir)
{
	return (rp_config_t){
		.backend = RP_BACKEND_SOLO,
		.cluster = "unit",
		.replica = 0,
		.nreplicas = 1,
		.state_dir = dir,
		.state_version = 7,
		.snapshot_every = 50,
	};
}

static int propose(rp_replica_t *r, struct toy *t, struct req *q,
		   const void *op, size_t len)
{
	int rc;

	t->in_propose = 1;
	rc = rp_propose(r, q->client, q->seq, 1000, 100, op, len, q);
	t->in_propose = 0;
	return rc;
}

/* ---- driving a replica like a main loop --------------------------------------- */

typedef int (*pred_fn)(rp_replica_t *r, const void *arg);

/* poll() its fds, rp_dispatch() when one is readable, rp_tick() when
 * rp_next_timeout_ms() says it is time; until pred holds (10 s at most). */
static void drive(rp_replica_t *r, pred_fn pred, const void *arg)
{
	uint64_t deadline = mono_ms() + 10000;

	while (!pred(r, arg)) {
		int fds[4], n = rp_fds(r, fds, 4), t = rp_next_timeout_ms(r);
		struct pollfd p[4];

		assert_true(n >= 1 && n <= 4);
		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ fds[i], POLLIN, 0 };
		if (t < 0 || t > 50)
			t = 50;
		int rc = poll(p, (nfds_t)n, t);
		assert_true(rc >= 0 || errno == EINTR);
		if (rc > 0)
			assert_int_equal(rp_dispatch(r), 0);
		if (rp_next_timeout_ms(r) == 0)
			rp_tick(r);
		assert_true(mono_ms() < deadline);
	}
}

static int is_synced(rp_replica_t *r, const void *arg)
{
	rp_status_t st;

	(void)arg;
	rp_status(r, &st);
	return st.synced;
}

struct ndone_at_least {
	const struct toy *t;
	unsigned n;
};

static int done_reached(rp_replica_t *r, const void *arg)
{
	const struct ndone_at_least *w = arg;

	(void)r;
	return w->t->ndone >= w->n;
}

static void drive_until_done(rp_replica_t *r, const struct toy *t, unsigned n)
{
	struct ndone_at_least w = { t, n };

	drive(r, done_reached, &w);
}

static int cast_reached(rp_replica_t *r, const void *arg)
{
	const struct ndone_at_least *w = arg;

	(void)r;
	return w->t->ncast >= w->n;
}

static uint64_t applied_of(const rp_replica_t *r)
{
	rp_status_t st;

	rp_status(r, &st);
	return st.applied;
}

/* A started, synced solo replica on a fresh directory. */
static rp_replica_t *solo_started(const char *dir, struct toy *t)
{
	rp_config_t cfg = solo_cfg(dir);
	rp_replica_t *r = NULL;
	char err[512] = "";

	assert_int_equal(rp_create(&cfg, &toy_cb, t, &r, err, sizeof(err)), 0);
	assert_int_equal(rp_start(r, err, sizeof(err)), 0);
	drive(r, is_synced, NULL);
	return r;
}

/* ---- a solo replica end to end ------------------------------------------------ */

#define NOPS 500
#define NREQ 2000
#define NCLIENTS 7

struct run {
	struct req *reqs;
	size_t nreq;
	uint64_t seqs[NCLIENTS];
	uint64_t expect_hash, expect_count, ordered;
	uint64_t next_id;
	uint8_t op[8192];
};

static struct req *new_req(struct run *u, uint64_t id, uint64_t client,
			   uint64_t seq, int expect_rc, long dup_of)
{
	struct req *q;

	assert_true(u->nreq < NREQ);
	q = &u->reqs[u->nreq++];
	memset(q, 0, sizeof(*q));
	q->id = id;
	q->client = client;
	q->seq = seq;
	q->expect_rc = expect_rc;
	q->dup_of = dup_of;
	return q;
}

/* Propose the next original operation of client c (0: none). */
static struct req *propose_original(rp_replica_t *r, struct toy *t,
				    struct run *u, int c)
{
	uint64_t id = u->next_id++;
	uint64_t client = c < 0 ? 0 : 100 + (uint64_t)c;
	uint64_t seq = c < 0 ? id : ++u->seqs[c];
	struct req *q = new_req(u, id, client, seq, 0, -1);
	size_t n = make_op(id, u->op, sizeof(u->op));

	assert_int_equal(propose(r, t, q, u->op, n), 0);
	u->expect_hash = fnv(u->expect_hash, u->op, n);
	q->expect_count = ++u->expect_count;
	q->expect_hash = u->expect_hash;
	u->ordered++;
	return q;
}

/* Propose q's (client, seq) again with its op bytes. */
static struct req *propose_again(rp_replica_t *r, struct toy *t,
				 struct run *u, const struct req *q,
				 uint64_t seq, int expect_rc, int ordered)
{
	long orig = q - u->reqs;
	struct req *d = new_req(u, q->id, q->client, seq, expect_rc, orig);
	size_t n = make_op(q->id, u->op, sizeof(u->op));

	assert_int_equal(propose(r, t, d, u->op, n), 0);
	u->ordered += (uint64_t)ordered;
	return d;
}

static void check_answers(const struct run *u, size_t from)
{
	for (size_t i = from; i < u->nreq; i++) {
		const struct req *q = &u->reqs[i];

		assert_int_equal(q->ndone, 1);
		assert_int_equal(q->rc, q->expect_rc);
		if (q->expect_rc) {
			assert_int_equal(q->rlen, 0);
		} else if (q->dup_of < 0) { /* applied once, before done */
			assert_int_equal(q->times_at_done, 1);
			assert_int_equal(q->rlen, 24);
			assert_int_equal(get_le64(q->reply), q->expect_count);
			assert_int_equal(get_le64(q->reply + 8), q->expect_hash);
		} else { /* the stored reply; never applied again */
			const struct req *o = &u->reqs[q->dup_of];

			assert_int_equal(q->times_at_done, 1);
			assert_int_equal(q->rlen, o->rlen);
			assert_memory_equal(q->reply, o->reply, o->rlen);
		}
	}
}

/* The last original of client c, or NULL. */
static const struct req *last_of(const struct run *u, int c)
{
	for (size_t i = u->nreq; i-- > 0;)
		if (u->reqs[i].dup_of < 0 &&
		    u->reqs[i].client == 100 + (uint64_t)c)
			return &u->reqs[i];
	return NULL;
}

static void test_solo_replica_end_to_end(void **state)
{
	char dir[512], err[512] = "";
	rp_config_t cfg;
	rp_replica_t *r = NULL;
	struct toy *t = toy_new(), *t2 = toy_new();
	struct run *u = calloc(1, sizeof(*u));
	struct req probe = { 0 };
	rp_status_t st;

	(void)state;
	assert_non_null(u);
	u->reqs = calloc(NREQ, sizeof(*u->reqs));
	assert_non_null(u->reqs);
	u->expect_hash = FNV_OFF;
	fuzz_seed_begin(0xe2e);
	make_state_dir(dir, sizeof(dir));
	cfg = solo_cfg(dir);

	assert_int_equal(rp_create(&cfg, &toy_cb, t, &r, err, sizeof(err)), 0);
	size_t n = make_op(999, u->op, sizeof(u->op));
	probe.id = 999;
	/* not started: no group, no quorum */
	assert_int_equal(rp_propose(r, 1, 1, 0, 0, u->op, n, &probe),
			 -STORM_ENOQUORUM);
	assert_int_equal(rp_start(r, err, sizeof(err)), 0);
	/* started, its own STATE not delivered yet: not seeded */
	assert_int_equal(rp_propose(r, 1, 1, 0, 0, u->op, n, &probe),
			 -STORM_ENOTSYNCED);
	assert_int_equal(rp_cast(r, "x", 1), -STORM_ENOTSYNCED);
	drive(r, is_synced, NULL);
	assert_true(t->synced);
	assert_int_equal(t->master, 0);
	assert_true(t->nstatus > 0);
	assert_int_equal(rp_propose(r, 1, 1, 0, 0, NULL, 5, &probe), -EINVAL);
	assert_int_equal(rp_propose(r, 1, 1, 0, 0, u->op, 0, &probe), -EINVAL);
	assert_int_equal(rp_propose(r, 1, 1, 0, 0, u->op, RP_OP_MAX + 1,
				    &probe), -EINVAL);
	assert_int_equal(probe.ndone, 0);

	/* an agreed, unlogged message comes back to this replica too */
	assert_int_equal(rp_cast(r, "hello", 5), 0);
	struct ndone_at_least w = { t, 1 };
	drive(r, cast_reached, &w);
	assert_int_equal(t->cast_sum, 'h' + 'e' + 'l' + 'l' + 'o');

	/* 500 originals in rounds of 1..40, with retries in flight (ordered,
	 * answered from the session table), older sequences in flight
	 * (ordered, refused), retries of applied ones (answered at once) */
	unsigned n_dup = 0, n_old_inflight = 0, n_retry = 0, n_old = 0;
	while (u->next_id < NOPS) {
		unsigned round = 1 + (unsigned)(rnd() % 40);
		size_t from = u->nreq;

		for (unsigned k = 0; k < round && u->next_id < NOPS; k++) {
			int c = u->next_id % 10 == 0 ? -1 :
				(int)(u->next_id % NCLIENTS);
			struct req *q = propose_original(r, t, u, c);

			if (c < 0)
				continue;
			if (rnd() % 6 == 0) {
				propose_again(r, t, u, q, q->seq, 0, 1);
				n_dup++;
			}
			if (rnd() % 12 == 0 && u->next_id < NOPS) {
				/* q and a newer one of its client in flight,
				 * then q's sequence again: older by the time
				 * it is applied */
				size_t qi = (size_t)(q - u->reqs);
				propose_original(r, t, u, c);
				propose_again(r, t, u, &u->reqs[qi],
					      u->reqs[qi].seq, -STORM_EREPLAY, 1);
				n_old_inflight++;
			}
		}
		drive_until_done(r, t, (unsigned)u->nreq);
		check_answers(u, from);

		from = u->nreq;
		int c = (int)(rnd() % NCLIENTS);
		const struct req *last = last_of(u, c);
		if (last) { /* already applied: no new order */
			propose_again(r, t, u, last, last->seq, 0, 0);
			n_retry++;
			if (last->seq > 1) {
				propose_again(r, t, u, last, last->seq - 1,
					      -STORM_EREPLAY, 0);
				n_old++;
			}
			drive_until_done(r, t, (unsigned)u->nreq);
			check_answers(u, from);
		}
	}
	print_message("%zu proposals: %u retries in flight, %u older in "
		      "flight, %u retries applied, %u older\n", u->nreq, n_dup,
		      n_old_inflight, n_retry, n_old);
	assert_true(n_dup > 0 && n_old_inflight > 0 && n_retry > 0 && n_old > 0);
	assert_int_equal(t->count, NOPS);
	assert_int_equal(t->hash, u->expect_hash);
	for (uint64_t id = 0; id < NOPS; id++)
		assert_int_equal(t->times[id], 1);
	rp_status(r, &st);
	assert_int_equal(st.applied, u->ordered);
	assert_int_equal(st.durable, st.applied);
	assert_int_equal(st.pending, 0);
	assert_true(st.sent_ops >= st.sent_batches);
	assert_true(st.sent_batches < u->ordered); /* some were batched */
	assert_true(t->nsnapshot > 0);
	assert_true(r->store.snap_index > 0);
	/* leave some log after the last snapshot, for the replay */
	while (r->store.snap_index == applied_of(r)) {
		propose_original(r, t, u, 0);
		drive_until_done(r, t, (unsigned)u->nreq);
	}
	check_answers(u, 0);
	struct digest before = toy_digest(t);
	uint64_t applied = applied_of(r), snap = r->store.snap_index;
	assert_true(snap > 0 && snap < applied);
	rp_destroy(r);

	/* restart: the snapshot, then the log after it */
	r = NULL;
	assert_int_equal(rp_create(&cfg, &toy_cb, t2, &r, err, sizeof(err)), 0);
	assert_int_equal(t2->nrestore, 1);
	assert_true(t2->nreplay >= 1 && t2->nreplay <= applied - snap);
	assert_int_equal(t2->napply, t2->nreplay);
	assert_digest(t2, before);
	assert_int_equal(applied_of(r), applied);
	assert_int_equal(r->store.snap_index, snap);

	/* the sessions came back with it: a retry is answered, not applied */
	assert_int_equal(rp_start(r, err, sizeof(err)), 0);
	drive(r, is_synced, NULL);
	const struct req *last = last_of(u, 3);
	assert_non_null(last);
	size_t from = u->nreq;
	propose_again(r, t2, u, last, last->seq, 0, 0);
	propose_again(r, t2, u, last, last->seq - 1, -STORM_EREPLAY, 0);
	drive_until_done(r, t2, 2);
	assert_int_equal(u->reqs[from].rc, 0);
	assert_int_equal(u->reqs[from].rlen, last->rlen);
	assert_memory_equal(u->reqs[from].reply, last->reply, last->rlen);
	assert_int_equal(u->reqs[from + 1].rc, -STORM_EREPLAY);
	assert_int_equal(u->reqs[from + 1].rlen, 0);
	assert_digest(t2, before);
	assert_int_equal(applied_of(r), applied);
	/* and the next one carries on from the restored state */
	u->expect_count = t2->count;
	u->expect_hash = t2->hash;
	struct req *q = propose_original(r, t2, u, 3);
	drive_until_done(r, t2, 3);
	assert_int_equal(q->rc, 0);
	assert_int_equal(get_le64(q->reply), before.count + 1);
	assert_int_equal(get_le64(q->reply + 16), applied + 1);
	before = toy_digest(t2);
	applied++;

	/* a proposal still pending when the replica goes: outcome unknown */
	struct req lost = { .id = 1000 };
	n = make_op(1000, u->op, sizeof(u->op));
	assert_int_equal(rp_propose(r, 0, 0, 0, 0, u->op, n, &lost), 0);
	assert_int_equal(lost.ndone, 0);
	rp_destroy(r);
	assert_int_equal(lost.ndone, 1);
	assert_int_equal(lost.rc, -STORM_EUNKNOWN);

	/* another cluster's or another version's directory is refused */
	struct toy *t3 = toy_new();
	rp_config_t other = cfg;
	other.cluster = "elsewhere";
	r = NULL;
	err[0] = 0;
	assert_int_equal(rp_create(&other, &toy_cb, t3, &r, err, sizeof(err)),
			 -STORM_ESTATE);
	assert_null(r);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "cluster"));
	assert_non_null(strstr(err, "\"unit\""));
	assert_non_null(strstr(err, "\"elsewhere\""));
	assert_non_null(strstr(err, dir));
	other = cfg;
	other.state_version = 8;
	err[0] = 0;
	assert_int_equal(rp_create(&other, &toy_cb, t3, &r, err, sizeof(err)),
			 -STORM_ESTATE);
	assert_null(r);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "version 7"));
	assert_non_null(strstr(err, "version 8"));
	assert_int_equal(t3->nrestore + t3->napply, 0);

	/* ...and changed nothing: the right configuration opens it as it
	 * was, without the lost proposal */
	assert_int_equal(rp_create(&cfg, &toy_cb, t3, &r, err, sizeof(err)), 0);
	assert_digest(t3, before);
	assert_int_equal(applied_of(r), applied);
	assert_int_equal(t3->times[1000], 0);
	rp_destroy(r);
	rp_destroy(NULL);

	remove_state_dir(dir);
	free(t);
	free(t2);
	free(t3);
	free(u->reqs);
	free(u);
}

/* ---- malformed group messages into rp_on_deliver() ------------------------------ */

/* How many entries of msg reach the apply step (each takes an index,
 * malformed or not: it was agreed, so every replica drops it alike) and
 * how many of those are well-formed OPs. */
static void deliver_oracle(const uint8_t *msg, size_t len, unsigned *entries,
			   unsigned *wellformed)
{
	struct rp_buf b;
	struct rp_op o;
	int type = rpr_begin(&b, msg, len);

	*entries = *wellformed = 0;
	if (type == RP_MSG_OP) {
		*entries = 1;
		*wellformed = rp_op_decode(msg, len, &o) == 0;
	} else if (type == RP_MSG_BATCH) {
		uint32_t n = rpr_u32(&b);

		for (uint32_t i = 0; i < n && !b.bad; i++) {
			uint32_t l = rpr_u32(&b);
			const uint8_t *p = rpr_bytes(&b, l);

			if (p) {
				(*entries)++;
				*wellformed += rp_op_decode(p, l, &o) == 0;
			}
		}
	}
}

/* Deliver an exact heap copy of msg from (nodeid, pid); check that the
 * applied index moved by one per entry and that the toy's state moved
 * only if well-formed OPs were in it (at most one application each). */
static void deliver_checked(rp_replica_t *r, struct toy *t, uint32_t nodeid,
			    uint32_t pid, const uint8_t *msg, size_t len)
{
	unsigned entries, wellformed;
	uint64_t applied = applied_of(r);
	struct digest d = toy_digest(t);
	uint32_t nsessions = r->sessions.n;
	uint8_t *c = dup_exact(msg, len);

	deliver_oracle(msg, len, &entries, &wellformed);
	rp_on_deliver(r, nodeid, pid, c, len);
	free(c);
	assert_int_equal(applied_of(r), applied + entries);
	if (!wellformed) {
		assert_int_equal(t->hash, d.hash);
		assert_int_equal(t->count, d.count);
		assert_int_equal(r->sessions.n, nsessions);
	} else {
		assert_true(t->count - d.count <= wellformed);
	}
}

static uint8_t *op_msg(uint32_t nodeid, uint32_t pid, uint64_t token,
		       uint64_t client, uint64_t seq, const void *op,
		       uint32_t len, size_t *n)
{
	struct rp_buf b;
	struct rp_op o = { nodeid, pid, token, 0, client, seq, 1000, 100, op,
			   len };

	assert_int_equal(rp_op_encode(&o, &b), 0);
	*n = b.len;
	return b.p;
}

/* A BATCH claiming nclaim entries and holding the given ones. */
static uint8_t *batch_msg(uint32_t nclaim, uint8_t *const *ops,
			  const size_t *lens, uint32_t nops, size_t *n)
{
	struct rp_buf b;

	assert_int_equal(rpw_begin(&b, RP_MSG_BATCH, 64), 0);
	rpw_u32(&b, nclaim);
	for (uint32_t i = 0; i < nops; i++) {
		rpw_u32(&b, (uint32_t)lens[i]);
		rpw_bytes(&b, ops[i], lens[i]);
	}
	assert_false(b.bad);
	*n = b.len;
	return b.p;
}

static uint8_t *state_msg(uint32_t replica, int synced, uint64_t applied,
			  uint32_t version, size_t *n)
{
	struct rp_buf b;

	assert_int_equal(rpw_begin(&b, RP_MSG_STATE, 32), 0);
	rpw_u32(&b, replica);
	rpw_u8(&b, (uint8_t)synced);
	rpw_u64(&b, applied);
	rpw_u32(&b, version);
	rpw_u8(&b, 1);
	assert_false(b.bad);
	*n = b.len;
	return b.p;
}

/* A state image as a donor sends it: the membership it sees (one member:
 * the joiner at (nodeid, pid), unsynced), the sessions, the toy's image. */
static void image_build(struct rp_buf *img, uint32_t nodeid, uint32_t pid,
			uint64_t count, uint64_t hash, uint64_t client,
			uint64_t seq)
{
	struct rp_sessions s;
	uint8_t toy[TOY_IMAGE];

	*img = (struct rp_buf){ 0 };
	rpw_u8(img, 1);
	rpw_u32(img, nodeid);
	rpw_u32(img, pid);
	rpw_u32(img, 1);
	rpw_u32(img, nodeid);
	rpw_u32(img, pid);
	rpw_u32(img, 0);
	rpw_u8(img, 0);
	assert_int_equal(rp_sessions_init(&s), 0);
	assert_int_equal(rp_session_put(&s, client, seq, 1, (const uint8_t *)
					"stored", 6), 0);
	assert_int_equal(rp_sessions_encode(&s, img), 0);
	rp_sessions_free(&s);
	toy_image(count, hash, toy);
	rpw_u64(img, TOY_IMAGE);
	rpw_bytes(img, toy, TOY_IMAGE);
	assert_false(img->bad);
}

static uint8_t *snap_msg(uint64_t id, uint64_t index, uint32_t k,
			 uint32_t nchunks, uint64_t total, uint32_t nodeid,
			 uint32_t pid, const uint8_t *data, size_t dlen,
			 size_t *n)
{
	struct rp_buf b;

	assert_int_equal(rpw_begin(&b, RP_MSG_SNAP, 64 + dlen), 0);
	rpw_u64(&b, id);
	rpw_u64(&b, index);
	rpw_u32(&b, k);
	rpw_u32(&b, nchunks);
	rpw_u64(&b, total);
	rpw_u32(&b, 1);
	rpw_u32(&b, nodeid);
	rpw_u32(&b, pid);
	rpw_bytes(&b, data, dlen);
	assert_false(b.bad);
	*n = b.len;
	return b.p;
}

static void dispatch_now(rp_replica_t *r)
{
	assert_int_equal(rp_dispatch(r), 0);
}

/* The one this test pins: an OP that fails to decode but whose first
 * fields name this replica and the token of one of its pending proposals
 * must not answer that proposal — it is answered when its own OP is
 * applied, with the reply the state machine gave. */
static void test_malformed_op_never_answers_a_pending_proposal(void **state)
{
	char dir[512];
	struct toy *t = toy_new();
	struct req a = { .id = 1 }, b = { .id = 2 };
	uint8_t op[OP_BUF];
	size_t n;

	(void)state;
	make_state_dir(dir, sizeof(dir));
	rp_replica_t *r = solo_started(dir, t);

	n = make_op(1, op, sizeof(op));
	assert_int_equal(propose(r, t, &a, op, n), 0); /* multicast */
	n = make_op(2, op, sizeof(op));
	assert_int_equal(propose(r, t, &b, op, n), 0); /* waits for a */
	uint64_t token_b = r->next_token;

	/* the fields up to the length are b's; the bytes are not there */
	size_t mlen;
	uint8_t *m = op_with_len(100, 10, &mlen);
	put_le32(m + 4, r->my_nodeid);
	put_le32(m + 8, r->my_pid);
	put_le64(m + 12, token_b);
	deliver_checked(r, t, r->my_nodeid, r->my_pid, m, mlen);
	free(m);

	drive_until_done(r, t, 2);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.times_at_done, 1);
	assert_int_equal(b.ndone, 1);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.times_at_done, 1); /* applied before done */
	assert_int_equal(b.rlen, 24);
	assert_int_equal(get_le64(b.reply), 2);
	assert_int_equal(t->count, 2);
	rp_destroy(r);
	remove_state_dir(dir);
	free(t);
}

/* Fail-stop: an apply that fails for a local reason (no memory, a full
 * disk) stops the replica — rp_dispatch says so — instead of going on
 * with a state its peers do not have; the operation is not answered as
 * applied, and what came before it stays applied and durable. */
static void test_failed_apply_stops_the_replica(void **state)
{
	char dir[512];
	struct toy *t = toy_new();
	struct req a = { .id = 1 }, b = { .id = 2 };
	uint8_t op[OP_BUF];
	uint64_t deadline;
	rp_status_t st;
	size_t n;
	int rc = 0;

	(void)state;
	make_state_dir(dir, sizeof(dir));
	rp_replica_t *r = solo_started(dir, t);

	n = make_op(1, op, sizeof(op));
	assert_int_equal(propose(r, t, &a, op, n), 0);
	drive_until_done(r, t, 1);
	assert_int_equal(a.rc, 0);
	rp_status(r, &st);
	t->fail_at = st.applied + 1;
	n = make_op(2, op, sizeof(op));
	assert_int_equal(propose(r, t, &b, op, n), 0);
	deadline = mono_ms() + 10000;
	while (rc == 0 && mono_ms() < deadline) {
		int fds[4], k = rp_fds(r, fds, 4);
		struct pollfd p[4];

		for (int i = 0; i < k; i++)
			p[i] = (struct pollfd){ fds[i], POLLIN, 0 };
		if (poll(p, (nfds_t)k, 50) > 0)
			rc = rp_dispatch(r);
	}
	assert_int_equal(rc, -STORM_ESTATE);
	assert_true(b.ndone == 0 || b.rc != 0);
	rp_status(r, &st);
	assert_int_equal(st.durable, t->fail_at - 1);
	rp_destroy(r);
	remove_state_dir(dir);
	free(t);
}

static void test_truncated_state_snap_batch_op_change_nothing(void **state)
{
	char dir[512], err[256];
	struct toy *t = toy_new(), *t2 = toy_new();
	static uint8_t opb[3][OP_BUF];
	uint8_t *ops[3];
	size_t lens[3], n;
	struct req q[20];

	(void)state;
	make_state_dir(dir, sizeof(dir));
	rp_replica_t *r = solo_started(dir, t);
	uint32_t me_n = r->my_nodeid, me_p = r->my_pid;

	for (int i = 0; i < 20; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].id = (uint64_t)i;
		q[i].client = 42;
		q[i].seq = (uint64_t)i + 1;
		n = make_op((uint64_t)i, opb[0], sizeof(opb[0]));
		assert_int_equal(propose(r, t, &q[i], opb[0], n), 0);
	}
	drive_until_done(r, t, 20);
	assert_int_equal(t->count, 20);

	/* STATE from this member, every truncation: nothing moves */
	struct rp_mem mem0 = r->mem[0];
	uint8_t *m = state_msg(0, 1, 12345, 7, &n);
	for (size_t cut = 0; cut < n; cut++) {
		deliver_checked(r, t, me_n, me_p, m, cut);
		assert_memory_equal(&r->mem[0], &mem0, sizeof(mem0));
	}
	free(m);

	/* SNAP: a synced replica ignores snapshots, whole or not */
	struct rp_buf img;
	image_build(&img, me_n, me_p, 77, 88, 42, 999);
	m = snap_msg(9, 5000, 0, 1, img.len, me_n, me_p, img.p, img.len, &n);
	for (size_t cut = 0; cut <= n; cut++)
		deliver_checked(r, t, 2, 99, m, cut);
	assert_int_equal(t->nrestore, 0);
	assert_int_equal(r->sessions.n, 1);
	assert_int_equal(rp_session_get(&r->sessions, 42)->seq, 20);
	free(m);
	free(img.p);

	/* BATCH of three well-formed OPs (client 0: no session), every
	 * truncation: the entries wholly inside it are applied, the rest
	 * not */
	for (int i = 0; i < 3; i++) {
		size_t l = make_op(100 + (uint64_t)i, opb[i], sizeof(opb[i]));
		ops[i] = op_msg(2, 99, (uint64_t)i, 0, 0, opb[i], (uint32_t)l,
				&lens[i]);
	}
	m = batch_msg(3, ops, lens, 3, &n);
	size_t ends[3], at = 8;
	for (int i = 0; i < 3; i++) {
		at += 4 + lens[i];
		ends[i] = at;
	}
	for (size_t cut = 0; cut < n; cut++) {
		uint64_t c0 = t->count;
		unsigned whole = 0;

		for (int i = 0; i < 3; i++)
			whole += cut >= 8 && ends[i] <= cut;
		deliver_checked(r, t, 2, 99, m, cut);
		assert_int_equal(t->count, c0 + whole);
	}
	free(m);

	/* a BATCH claiming more entries than it holds: the two it holds */
	uint64_t c0 = t->count, a0 = applied_of(r);
	m = batch_msg(1000, ops, lens, 2, &n);
	deliver_checked(r, t, 2, 99, m, n);
	free(m);
	assert_int_equal(t->count, c0 + 2);
	assert_int_equal(applied_of(r), a0 + 2);
	/* one claiming UINT32_MAX and holding none */
	m = batch_msg(UINT32_MAX, ops, lens, 0, &n);
	deliver_checked(r, t, 2, 99, m, n);
	free(m);
	assert_int_equal(t->count, c0 + 2);
	/* an entry whose length runs past the message: the one before it */
	size_t biglen[2] = { lens[0], lens[1] };
	m = batch_msg(2, ops, biglen, 2, &n);
	/* second entry's length field sits after the first entry */
	size_t lf = 8 + 4 + lens[0];
	m[lf] = 0xff;
	m[lf + 1] = 0xff;
	m[lf + 2] = 0xff;
	m[lf + 3] = 0x7f;
	deliver_checked(r, t, 2, 99, m, n);
	free(m);
	assert_int_equal(t->count, c0 + 3);
	/* an empty BATCH */
	m = batch_msg(0, ops, lens, 0, &n);
	deliver_checked(r, t, 2, 99, m, n);
	free(m);
	assert_int_equal(t->count, c0 + 3);

	/* OP, every truncation: from the header on it takes its index
	 * (documented in apply_op: agreed, so dropped alike everywhere)
	 * and changes nothing else */
	c0 = t->count;
	for (size_t cut = 0; cut < lens[2]; cut++) {
		a0 = applied_of(r);
		deliver_checked(r, t, 2, 99, ops[2], cut);
		assert_int_equal(applied_of(r), a0 + (cut >= 4));
	}
	assert_int_equal(t->count, c0);
	for (int i = 0; i < 3; i++)
		free(ops[i]);

	/* CAST and SEED cut short */
	uint8_t cast[4] = { 'S', 'R', RP_WIRE_VERSION, RP_MSG_CAST };
	unsigned nc = t->ncast;
	deliver_checked(r, t, 2, 99, cast, 4); /* empty cast: delivered */
	assert_int_equal(t->ncast, nc + 1);
	deliver_checked(r, t, 2, 99, cast, 3);
	assert_int_equal(t->ncast, nc + 1);
	uint8_t seed[4] = { 'S', 'R', RP_WIRE_VERSION, RP_MSG_SEED };
	deliver_checked(r, t, 2, 99, seed, 4);
	deliver_checked(r, t, 2, 99, seed, 2);

	dispatch_now(r);
	rp_status_t st;
	rp_status(r, &st);
	assert_true(st.synced);
	struct digest d = toy_digest(t);
	uint64_t applied = st.applied;
	rp_destroy(r);

	/* the malformed entries were logged with their indexes: a restart
	 * replays to the same state and index */
	rp_config_t cfg = solo_cfg(dir);
	r = NULL;
	assert_int_equal(rp_create(&cfg, &toy_cb, t2, &r, err, sizeof(err)), 0);
	assert_int_equal(t2->hash, d.hash);
	assert_int_equal(t2->count, d.count);
	assert_int_equal(applied_of(r), applied);
	rp_destroy(r);
	remove_state_dir(dir);
	free(t);
	free(t2);
}

/* A joiner (here: a solo replica started but not yet seeded) refuses
 * every malformed snapshot addressed to it and installs a good one. */
static void test_joiner_refuses_malformed_snapshots(void **state)
{
	char dir[512], err[256];
	struct toy *t = toy_new(), *other = toy_new();
	rp_config_t cfg;
	rp_replica_t *r = NULL;
	size_t n;
	uint8_t *m;

	(void)state;
	make_state_dir(dir, sizeof(dir));
	cfg = solo_cfg(dir);
	assert_int_equal(rp_create(&cfg, &toy_cb, t, &r, err, sizeof(err)), 0);
	assert_int_equal(rp_start(r, err, sizeof(err)), 0);
	assert_false(r->synced);
	uint32_t me_n = r->my_nodeid, me_p = r->my_pid;
	struct digest d0 = toy_digest(t);
	other->hash = fnv(FNV_OFF, "other", 5);
	other->count = 4242;

#define ASSERT_NOT_INSTALLED()                                              \
	do {                                                                \
		assert_false(r->synced);                                    \
		assert_int_equal(applied_of(r), 0);                         \
		assert_int_equal(t->hash, d0.hash);                         \
		assert_int_equal(t->count, d0.count);                       \
		assert_int_equal(r->sessions.n, 0);                         \
	} while (0)

	struct rp_buf img;
	image_build(&img, me_n, me_p, other->count, other->hash, 77, 5);

	/* every truncation of the one chunk */
	m = snap_msg(1, 1000, 0, 1, img.len, me_n, me_p, img.p, img.len, &n);
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *c = dup_exact(m, cut);

		rp_on_deliver(r, 2, 99, c, cut);
		free(c);
		ASSERT_NOT_INSTALLED();
	}
	free(m);
	/* claiming more bytes than come, or fewer */
	m = snap_msg(1, 1000, 0, 1, img.len + 1, me_n, me_p, img.p, img.len,
		     &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	ASSERT_NOT_INSTALLED();
	m = snap_msg(1, 1000, 0, 1, img.len - 1, me_n, me_p, img.p, img.len,
		     &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	ASSERT_NOT_INSTALLED();
	/* chunk numbers that make no sense, a huge total */
	m = snap_msg(1, 1000, 1, 1, img.len, me_n, me_p, img.p, img.len, &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	m = snap_msg(1, 1000, 0, 0, img.len, me_n, me_p, img.p, img.len, &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	m = snap_msg(1, 1000, 0, 1, UINT64_MAX, me_n, me_p, img.p, img.len,
		     &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	ASSERT_NOT_INSTALLED();
	/* two chunks: the second from another snapshot, or first */
	size_t half = img.len / 2;
	m = snap_msg(1, 1000, 1, 2, img.len, me_n, me_p, img.p + half,
		     img.len - half, &n);
	rp_on_deliver(r, 2, 99, m, n); /* no first chunk */
	free(m);
	ASSERT_NOT_INSTALLED();
	m = snap_msg(1, 1000, 0, 2, img.len, me_n, me_p, img.p, half, &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	m = snap_msg(2, 1000, 1, 2, img.len, me_n, me_p, img.p + half,
		     img.len - half, &n);
	rp_on_deliver(r, 2, 99, m, n); /* another id */
	free(m);
	ASSERT_NOT_INSTALLED();

	/* whole, but the image inside is damaged */
	struct { const char *what; size_t at; uint8_t v; } bad[] = {
		{ "membership count", 9, 0xff },
		{ "sessions count", 26, 0x7f },
		{ "toy magic", img.len - TOY_IMAGE, 0 },
		{ "toy check", img.len - 1, 0 },
		{ "application length", img.len - TOY_IMAGE - 8, 27 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *c = dup_exact(img.p, img.len);

		c[bad[i].at] ^= bad[i].v ? bad[i].v : 0x01;
		m = snap_msg(3, 1000, 0, 1, img.len, me_n, me_p, c, img.len,
			     &n);
		rp_on_deliver(r, 2, 99, m, n);
		free(m);
		free(c);
		if (r->synced)
			fail_msg("a snapshot with a damaged %s was installed",
				 bad[i].what);
		ASSERT_NOT_INSTALLED();
	}
	/* addressed to someone else */
	m = snap_msg(4, 1000, 0, 1, img.len, me_n + 1, me_p, img.p, img.len,
		     &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	ASSERT_NOT_INSTALLED();
#undef ASSERT_NOT_INSTALLED
	/* none of it stuck: its own STATE comes back and it seeds the
	 * group from its own (empty) state as if nothing had come */
	drive(r, is_synced, NULL);
	assert_int_equal(applied_of(r), 0);
	assert_int_equal(t->hash, d0.hash);
	assert_int_equal(t->count, d0.count);
	assert_int_equal(t->nrestore, 2); /* the two damaged toy images */

	/* and the good one, in two chunks: installed at its index */
	rp_destroy(r);
	r = NULL;
	toy_init(t);
	assert_int_equal(rp_create(&cfg, &toy_cb, t, &r, err, sizeof(err)), 0);
	assert_int_equal(rp_start(r, err, sizeof(err)), 0);
	me_p = r->my_pid;
	m = snap_msg(5, 1000, 0, 2, img.len, me_n, me_p, img.p, half, &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	assert_false(r->synced);
	m = snap_msg(5, 1000, 1, 2, img.len, me_n, me_p, img.p + half,
		     img.len - half, &n);
	rp_on_deliver(r, 2, 99, m, n);
	free(m);
	assert_true(r->synced);
	assert_int_equal(applied_of(r), 1000);
	assert_int_equal(t->hash, other->hash);
	assert_int_equal(t->count, other->count);
	assert_non_null(rp_session_get(&r->sessions, 77));
	/* its sessions are live: client 77's seq 5 is answered, seq 4 not */
	struct req q5 = { .id = 5, .client = 77, .seq = 5 };
	struct req q4 = { .id = 4, .client = 77, .seq = 4 };
	uint8_t op[OP_BUF];
	n = make_op(5, op, sizeof(op));
	assert_int_equal(propose(r, t, &q5, op, n), 0);
	assert_int_equal(propose(r, t, &q4, op, n), 0);
	drive_until_done(r, t, 2);
	assert_int_equal(q5.rc, 0);
	assert_int_equal(q5.rlen, 6);
	assert_memory_equal(q5.reply, "stored", 6);
	assert_int_equal(q4.rc, -STORM_EREPLAY);
	assert_int_equal(t->count, other->count);
	free(img.p);
	rp_destroy(r);
	remove_state_dir(dir);
	free(t);
	free(other);
}

/* A random message: pure noise, a plausible header on noise, or a valid
 * message of each type mutated and cut. */
static uint8_t *random_group_msg(uint32_t me_n, uint32_t me_p, size_t *n,
				 uint32_t *from_n, uint32_t *from_p)
{
	static uint8_t body[OP_BUF];
	struct rp_buf b = { 0 };
	uint8_t *m = NULL;

	*from_n = 2;
	*from_p = 99;
	if (rnd() % 4 == 0) {
		*from_n = me_n;
		*from_p = me_p;
	}
	for (size_t i = 0; i < 300; i++)
		body[i] = (uint8_t)rnd();
	switch (rnd() % 8) {
	case 0:
		*n = rnd() % 300;
		return dup_exact(body, *n);
	case 1:
		assert_int_equal(rpw_begin(&b, (int)(rnd() % 9), 300), 0);
		rpw_bytes(&b, body, rnd() % 300);
		*n = b.len;
		return b.p;
	case 2: {
		uint64_t id = 2000 + rnd() % 1000;
		size_t l = make_op(id, body, sizeof(body));
		m = op_msg(*from_n, *from_p, rnd(), rnd() % 3 ? 0 : rnd() % 5,
			   rnd() % 5, body, (uint32_t)l, n);
		break;
	}
	case 3: {
		uint8_t *ops[4];
		size_t lens[4];
		uint32_t k = 1 + (uint32_t)(rnd() % 4);
		for (uint32_t i = 0; i < k; i++) {
			size_t l = make_op(2000 + rnd() % 1000, body,
					   sizeof(body));
			ops[i] = op_msg(2, 99, rnd(), 0, 0, body, (uint32_t)l,
					&lens[i]);
		}
		m = batch_msg(rnd() % 3 ? k : (uint32_t)rnd(), ops, lens, k, n);
		for (uint32_t i = 0; i < k; i++)
			free(ops[i]);
		break;
	}
	case 4:
		m = state_msg((uint32_t)(rnd() % 3), (int)(rnd() % 2), rnd(),
			      rnd() % 2 ? 7 : (uint32_t)rnd(), n);
		break;
	case 5: {
		struct rp_buf img;
		image_build(&img, me_n, me_p, rnd(), rnd(), rnd(), rnd());
		m = snap_msg(rnd(), rnd(), 0, 1, img.len, me_n, me_p, img.p,
			     img.len, n);
		free(img.p);
		break;
	}
	case 6:
		assert_int_equal(rpw_begin(&b, RP_MSG_CAST, 64), 0);
		rpw_bytes(&b, body, rnd() % 64);
		*n = b.len;
		m = b.p;
		break;
	default:
		assert_int_equal(rpw_begin(&b, RP_MSG_SEED, 0), 0);
		*n = b.len;
		m = b.p;
		break;
	}
	/* mutate, then maybe cut */
	for (int k = (int)(rnd() % 4); k > 0 && *n; k--)
		m[rnd() % *n] = (uint8_t)rnd();
	if (rnd() % 3 == 0)
		*n = rnd() % (*n + 1);
	return m;
}

static void test_random_group_messages_change_nothing_but_ops(void **state)
{
	char dir[512], err[256];
	struct toy *t = toy_new(), *t2 = toy_new();
	unsigned wellformed_total = 0, entries_total = 0;

	(void)state;
	fuzz_seed_begin(0xde11e7e5);
	make_state_dir(dir, sizeof(dir));
	rp_replica_t *r = solo_started(dir, t);
	uint32_t me_n = r->my_nodeid, me_p = r->my_pid;

	for (int iter = 0; iter < 4000; iter++) {
		uint32_t fn, fp;
		size_t n;
		unsigned e, w;
		uint8_t *m = random_group_msg(me_n, me_p, &n, &fn, &fp);

		deliver_oracle(m, n, &e, &w);
		entries_total += e;
		wellformed_total += w;
		deliver_checked(r, t, fn, fp, m, n);
		free(m);
		assert_true(r->synced);
		if (iter % 100 == 99)
			dispatch_now(r); /* commit (and snapshot) as we go */
	}
	print_message("random messages: %u entries applied, %u well-formed\n",
		      entries_total, wellformed_total);
	assert_true(wellformed_total > 0 && entries_total > wellformed_total);
	dispatch_now(r);
	struct digest d = toy_digest(t);
	uint64_t applied = applied_of(r);
	rp_destroy(r);

	rp_config_t cfg = solo_cfg(dir);
	r = NULL;
	assert_int_equal(rp_create(&cfg, &toy_cb, t2, &r, err, sizeof(err)), 0);
	assert_int_equal(t2->hash, d.hash);
	assert_int_equal(t2->count, d.count);
	assert_int_equal(applied_of(r), applied);
	rp_destroy(r);
	remove_state_dir(dir);
	free(t);
	free(t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_solo_replica_end_to_end),
		cmocka_unit_test(test_malformed_op_never_answers_a_pending_proposal),
		cmocka_unit_test(test_failed_apply_stops_the_replica),
		cmocka_unit_test(test_truncated_state_snap_batch_op_change_nothing),
		cmocka_unit_test(test_joiner_refuses_malformed_snapshots),
		cmocka_unit_test(test_random_group_messages_change_nothing_but_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
