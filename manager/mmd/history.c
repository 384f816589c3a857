/*
 * history.c — the job history in LMDB (history.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

#define ARGV_MAX_BYTES 1024u /* of argv kept in a record */
#define TEXT_MAX 512u        /* of cwd */
#define NAMES_MAX 32u        /* node names listed (nodes has them all) */
#define RANKS_DETAIL_MAX 16u /* per-rank statuses and usage up to this */
#define REC_HDR 30u          /* the fixed part before the name */

static int lm(int rc)
{
	if (rc == 0)
		return 0;
	if (rc > 0 && rc < 4096)
		return -rc;
	return rc == MDB_MAP_FULL ? -ENOSPC : -EIO;
}

static void be32(uint8_t k[4], uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		k[i] = (uint8_t)v;
}

static void be64(uint8_t k[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		k[i] = (uint8_t)v;
}

static uint64_t rd_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t rd_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- records -------------------------------------------------------------- */

/* A record's header parsed from its bytes; -1 if they are not one. */
static int rec_parse(const MDB_val *v, struct mmd_hist_rec *r)
{
	const uint8_t *p = v->mv_data;
	size_t nl;

	if (v->mv_size < REC_HDR)
		return -1;
	r->purged_index = rd_le(p, 8);
	r->end_ms = rd_le(p + 8, 8);
	r->submit_ms = rd_le(p + 16, 8);
	r->uid = (uint32_t)rd_le(p + 24, 4);
	r->state = p[28];
	nl = p[29];
	if (v->mv_size < REC_HDR + nl)
		return -1;
	r->name = (const char *)p + REC_HDR; /* not NUL-terminated */
	r->json = (const char *)p + REC_HDR + nl;
	r->json_len = v->mv_size - REC_HDR - nl;
	return (int)nl;
}

static uint8_t *rec_build(const struct mmd_hist_rec *r, size_t *len)
{
	size_t nl = strlen(r->name);
	uint8_t *p;

	if (nl > 255)
		nl = 255;
	*len = REC_HDR + nl + r->json_len;
	if (!(p = malloc(*len)))
		return NULL;
	le(p, r->purged_index, 8);
	le(p + 8, r->end_ms, 8);
	le(p + 16, r->submit_ms, 8);
	le(p + 24, r->uid, 4);
	p[28] = r->state;
	p[29] = (uint8_t)nl;
	memcpy(p + REC_HDR, r->name, nl);
	memcpy(p + REC_HDR + nl, r->json, r->json_len);
	return p;
}

/* The job as JSON from the agreed state only (every replica writes the
 * same bytes): show's fields, argv up to ARGV_MAX_BYTES, per-rank detail
 * for jobs of up to RANKS_DETAIL_MAX ranks and totals for all. */
static char *job_text(const mm_state_t *st, const mm_job_t *j)
{
	json_t *argv = json_array(), *names = json_array(), *o;
	uint64_t cpu = 0, rss = 0;
	size_t argb = 0;
	char nodes[1024] = "", *text;

	for (uint32_t i = 0; i < j->argc; i++) {
		argb += strlen(j->argv[i]);
		if (argb > ARGV_MAX_BYTES) {
			json_array_append_new(argv, json_string("..."));
			break;
		}
		json_array_append_new(argv, json_string(j->argv[i]));
	}
	if (j->nodes) {
		sp_nodeset_format(j->nodes, nodes, sizeof(nodes));
		for (int64_t x = sp_nodeset_next(j->nodes, 0); x >= 0;
		     x = sp_nodeset_next(j->nodes, (uint32_t)x + 1)) {
			mm_node_t n;

			if (json_array_size(names) < NAMES_MAX &&
			    !mm_node_by_id(st, (uint32_t)x, &n))
				json_array_append_new(names,
						      json_string(n.name));
		}
	}
	o = json_pack("{s:i, s:s, s:i, s:i, s:s, s:s, s:i, s:s, s:o, s:o,"
		      " s:s, s:b, s:I, s:I, s:I, s:I, s:i, s:b}",
		      "id", j->id, "name", j->name, "uid", j->uid,
		      "gid", j->gid, "state", mm_job_state_name(j->state),
		      "reason", j->reason, "ranks", j->ranks, "nodes", nodes,
		      "node_names", names, "argv", argv,
		      "cwd", "", "batch", j->batch,
		      "submit_ms", (json_int_t)j->submit_ms,
		      "start_ms", (json_int_t)j->start_ms,
		      "end_ms", (json_int_t)j->end_ms,
		      "time_limit_ms", (json_int_t)j->time_limit_ms,
		      "exit_code", j->exit_code, "history", 1);
	if (o && j->cwd)
		json_object_set_new(o, "cwd", json_stringn(j->cwd,
			strlen(j->cwd) > TEXT_MAX ? TEXT_MAX : strlen(j->cwd)));
	if (!o)
		return NULL;
	if (j->rank_status && j->ranks <= RANKS_DETAIL_MAX) {
		json_t *s = json_array();

		for (uint32_t r = 0; r < j->ranks; r++)
			json_array_append_new(s,
					      json_integer(j->rank_status[r]));
		json_object_set_new(o, "rank_status", s);
	}
	if (j->rank_usage) {
		json_t *u = j->ranks <= RANKS_DETAIL_MAX ? json_array() : NULL;

		for (uint32_t r = 0; r < j->ranks; r++) {
			const mm_usage_t *x = &j->rank_usage[r];

			cpu += x->utime_us + x->stime_us;
			rss = x->maxrss_kib > rss ? x->maxrss_kib : rss;
			if (u)
				json_array_append_new(u, json_pack(
					"{s:I, s:I, s:I}",
					"utime_us", (json_int_t)x->utime_us,
					"stime_us", (json_int_t)x->stime_us,
					"maxrss_kib",
					(json_int_t)x->maxrss_kib));
		}
		if (u)
			json_object_set_new(o, "usage", u);
		json_object_set_new(o, "cpu_time_us",
				    json_integer((json_int_t)cpu));
		json_object_set_new(o, "max_rss_kib",
				    json_integer((json_int_t)rss));
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

/* ---- writes (in the replica's transaction) ---------------------------------- */

static int meta_put(struct mmd_history *h, MDB_txn *t, const char *key,
		    uint64_t v, int n)
{
	uint8_t b[8];
	MDB_val k = { strlen(key), (void *)key }, d = { (size_t)n, b };

	le(b, v, n);
	return lm(mdb_put(t, h->meta, &k, &d, 0));
}

static int meta_get(struct mmd_history *h, MDB_txn *t, const char *key,
		    uint64_t *v)
{
	MDB_val k = { strlen(key), (void *)key }, d;

	*v = 0;
	if (mdb_get(t, h->meta, &k, &d) || d.mv_size > 8)
		return 0;
	*v = rd_le(d.mv_data, (int)d.mv_size);
	return 1;
}

static int rec_put(struct mmd_history *h, MDB_txn *t,
		   const struct mmd_hist_rec *r)
{
	uint8_t kb[4], eb[12], *val;
	MDB_val k = { 4, kb }, e = { 12, eb }, v, empty = { 0, "" }, old;
	size_t len;
	int rc;

	be32(kb, r->id);
	/* a record already there (a backfill over what this replica kept)
	 * may sit at another end time in the age index: replace both */
	if (mdb_get(t, h->recs, &k, &old) == 0) {
		struct mmd_hist_rec o;

		if (rec_parse(&old, &o) >= 0) {
			be64(eb, o.end_ms);
			be32(eb + 8, r->id);
			if ((rc = mdb_del(t, h->by_end, &e, NULL)) &&
			    rc != MDB_NOTFOUND)
				return lm(rc);
		}
	}
	if (!(val = rec_build(r, &len)))
		return -ENOMEM;
	v = (MDB_val){ len, val };
	be64(eb, r->end_ms);
	be32(eb + 8, r->id);
	rc = mdb_put(t, h->recs, &k, &v, 0);
	if (!rc)
		rc = mdb_put(t, h->by_end, &e, &empty, 0);
	free(val);
	return lm(rc);
}

/* Retention: out go ids below floor and jobs ended before cutoff. */
static int retain(struct mmd_history *h, MDB_txn *t)
{
	MDB_cursor *c = NULL;
	MDB_val k, v;
	uint8_t kb[12];
	int rc;

	if ((rc = mdb_cursor_open(t, h->recs, &c)))
		return lm(rc);
	while ((rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0 &&
	       k.mv_size == 4 && rd_be(k.mv_data, 4) < h->floor) {
		struct mmd_hist_rec r;
		MDB_val e = { 12, kb };

		if (rec_parse(&v, &r) >= 0) {
			be64(kb, r.end_ms);
			memcpy(kb + 8, k.mv_data, 4);
			if ((rc = mdb_del(t, h->by_end, &e, NULL)) &&
			    rc != MDB_NOTFOUND)
				break;
		}
		if ((rc = mdb_cursor_del(c, 0)))
			break;
	}
	mdb_cursor_close(c);
	if (rc && rc != MDB_NOTFOUND)
		return lm(rc);
	if ((rc = mdb_cursor_open(t, h->by_end, &c)))
		return lm(rc);
	while ((rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0 &&
	       k.mv_size == 12 && rd_be(k.mv_data, 8) < h->cutoff) {
		MDB_val id = { 4, (uint8_t *)k.mv_data + 8 };

		memcpy(kb, id.mv_data, 4);
		id.mv_data = kb;
		if ((rc = mdb_cursor_del(c, 0)))
			break;
		if ((rc = mdb_del(t, h->recs, &id, NULL)) &&
		    rc != MDB_NOTFOUND)
			break;
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : lm(rc);
}

int mmd_history_apply(struct mmd_history *h, MDB_txn *t, const mm_state_t *st,
		      uint64_t index, uint32_t keep_ids, uint64_t keep_ms)
{
	uint32_t n = mm_purged_count(st), next = mm_next_id(st), floor = 0;
	uint64_t now = mm_now_ms(st), cutoff = 0;
	int rc = 0;

	if (!h->open || !t)
		return -EIO;
	for (uint32_t i = 0; i < n && !rc; i++) {
		mm_job_t j;
		struct mmd_hist_rec r;
		char *text;

		if (mm_purged_get(st, i, &j))
			continue;
		if (!(text = job_text(st, &j)))
			return -ENOMEM;
		r = (struct mmd_hist_rec){ .id = j.id, .purged_index = index,
					   .end_ms = j.end_ms,
					   .submit_ms = j.submit_ms,
					   .uid = j.uid,
					   .state = (uint8_t)j.state,
					   .name = j.name, .json = text,
					   .json_len = strlen(text) };
		rc = rec_put(h, t, &r);
		free(text);
	}
	if (rc)
		return rc;
	if (keep_ids && next > keep_ids)
		floor = next - keep_ids;
	/* in whole seconds: the bound (and its meta record) moves once a
	 * second, not at every tick */
	if (keep_ms && now > keep_ms)
		cutoff = (now - keep_ms) / 1000 * 1000;
	if (floor > h->floor || cutoff > h->cutoff || n) {
		uint32_t of = h->floor;
		uint64_t oc = h->cutoff;

		h->floor = floor > h->floor ? floor : h->floor;
		h->cutoff = cutoff > h->cutoff ? cutoff : h->cutoff;
		if ((rc = retain(h, t)) ||
		    (h->floor != of &&
		     (rc = meta_put(h, t, "floor", h->floor, 4))) ||
		    (h->cutoff != oc &&
		     (rc = meta_put(h, t, "cutoff", h->cutoff, 8))))
			return rc;
	}
	return 0;
}

int mmd_history_installed(struct mmd_history *h, MDB_txn *t, uint64_t index)
{
	int rc;

	if (!h->open || !t)
		return -EIO;
	/* what this replica kept stays (records are the same everywhere;
	 * the next retention removes any the group has removed since) and
	 * the backfill fetches the rest */
	h->backfill_below = index;
	h->backfill_after = 0;
	if ((rc = meta_put(h, t, "backfill_below", index, 8)) ||
	    (rc = meta_put(h, t, "backfill_after", 0, 4)))
		return rc;
	return 0;
}

int mmd_history_put_page(struct mmd_history *h, MDB_txn *t,
			 const struct mmd_hist_rec *recs, size_t n,
			 uint32_t last, int more)
{
	int rc = 0;

	if (!h->open || !t || !h->backfill_below)
		return -EIO;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct mmd_hist_rec *r = &recs[i];

		if (r->id <= h->backfill_after ||
		    r->purged_index > h->backfill_below)
			continue; /* not what was asked for */
		if (r->id < h->floor || r->end_ms < h->cutoff)
			continue; /* retention here has removed it */
		rc = rec_put(h, t, r);
	}
	if (rc)
		return rc;
	if (last > h->backfill_after)
		h->backfill_after = last;
	if (!more) {
		h->backfill_below = 0;
		h->backfill_after = 0;
	}
	if ((rc = meta_put(h, t, "backfill_below", h->backfill_below, 8)) ||
	    (rc = meta_put(h, t, "backfill_after", h->backfill_after, 4)))
		return rc;
	return 0;
}

/* ---- open ---------------------------------------------------------------------- */

int mmd_history_open(struct mmd_history *h, MDB_env *env, char *err,
		     size_t errlen)
{
	MDB_txn *t;
	uint64_t v;
	int rc;

	memset(h, 0, sizeof(*h));
	h->env = env;
	if ((rc = mdb_txn_begin(env, NULL, 0, &t))) {
		snprintf(err, errlen, "history: cannot open a transaction: %s",
			 mdb_strerror(rc));
		return lm(rc);
	}
	if ((rc = mdb_dbi_open(t, "history", MDB_CREATE, &h->recs)) ||
	    (rc = mdb_dbi_open(t, "history_end", MDB_CREATE, &h->by_end)) ||
	    (rc = mdb_dbi_open(t, "history_meta", MDB_CREATE, &h->meta))) {
		mdb_txn_abort(t);
		snprintf(err, errlen, "history: cannot open its databases: %s",
			 mdb_strerror(rc));
		return lm(rc);
	}
	meta_get(h, t, "floor", &v);
	h->floor = (uint32_t)v;
	meta_get(h, t, "cutoff", &h->cutoff);
	meta_get(h, t, "backfill_below", &h->backfill_below);
	meta_get(h, t, "backfill_after", &v);
	h->backfill_after = (uint32_t)v;
	if ((rc = mdb_txn_commit(t))) {
		snprintf(err, errlen, "history: cannot create its databases: "
			 "%s", mdb_strerror(rc));
		return lm(rc);
	}
	h->open = 1;
	return 0;
}

/* ---- reads ------------------------------------------------------------------------ */

int mmd_history_get(struct mmd_history *h, uint32_t id, json_t **out,
		    uint32_t *uid)
{
	MDB_txn *t;
	uint8_t kb[4];
	MDB_val k = { 4, kb }, v;
	struct mmd_hist_rec r;
	int rc;

	*out = NULL;
	if (!h->open)
		return -ENOENT;
	if ((rc = mdb_txn_begin(h->env, NULL, MDB_RDONLY, &t)))
		return lm(rc);
	be32(kb, id);
	rc = mdb_get(t, h->recs, &k, &v);
	if (rc == 0 && rec_parse(&v, &r) >= 0) {
		*out = json_loadb(r.json, r.json_len, 0, NULL);
		*uid = r.uid;
	}
	mdb_txn_abort(t);
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	return *out ? 0 : (rc ? lm(rc) : -EIO);
}

static int matches(const struct mmd_hist_query *q,
		   const struct mmd_hist_rec *r, int namelen)
{
	char name[256];

	if (q->by_uid && r->uid != q->uid)
		return 0;
	if (q->states && !(q->states & (1u << r->state)))
		return 0;
	if (q->until_ms && r->submit_ms > q->until_ms)
		return 0;
	if (q->name) {
		memcpy(name, r->name, (size_t)namelen);
		name[namelen] = '\0';
		if (fnmatch(q->name, name, 0))
			return 0;
	}
	return 1;
}

int mmd_history_query(struct mmd_history *h, const struct mmd_hist_query *q,
		      json_t *jobs, int *more, uint64_t *next_end,
		      uint32_t *next_id, char *err, size_t errlen)
{
	MDB_txn *t;
	MDB_cursor *c;
	uint8_t kb[12];
	MDB_val k = { 12, kb }, v;
	uint32_t got = 0, scanned = 0;
	int rc, op;

	*more = 0;
	if (q->until_ms && q->since_ms > q->until_ms) {
		snprintf(err, errlen, "history: the range is empty: --since "
			 "(%llu) is after --until (%llu); give since <= until",
			 (unsigned long long)q->since_ms,
			 (unsigned long long)q->until_ms);
		return -EINVAL;
	}
	if (q->limit < 1 || q->limit > MMD_HIST_LIMIT_MAX) {
		snprintf(err, errlen, "history: limit %u is outside 1..%u",
			 q->limit, MMD_HIST_LIMIT_MAX);
		return -EINVAL;
	}
	if (!h->open)
		return 0;
	if ((rc = mdb_txn_begin(h->env, NULL, MDB_RDONLY, &t)))
		goto fail;
	if ((rc = mdb_cursor_open(t, h->by_end, &c))) {
		mdb_txn_abort(t);
		goto fail;
	}
	if (q->before_end || q->before_id) {
		be64(kb, q->before_end);
		be32(kb + 8, q->before_id);
		rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
		/* at the first key >= the cursor, or past the end */
		op = rc == 0 ? MDB_PREV : MDB_LAST;
	} else {
		op = MDB_LAST;
	}
	while ((rc = mdb_cursor_get(c, &k, &v, (MDB_cursor_op)op)) == 0) {
		uint8_t ib[4];
		MDB_val id = { 4, ib }, rv;
		struct mmd_hist_rec r;
		uint64_t end;
		int nl;

		op = MDB_PREV;
		if (k.mv_size != 12)
			continue;
		end = rd_be(k.mv_data, 8);
		if (end < q->since_ms)
			break; /* ended before the range: so are the rest */
		if (got == q->limit || scanned == MMD_HIST_SCAN_MAX) {
			*more = 1;
			*next_end = end;
			*next_id = (uint32_t)rd_be((uint8_t *)k.mv_data + 8, 4);
			/* strictly before means this one is next: resume at
			 * the key after it */
			if (++*next_id == 0)
				++*next_end;
			break;
		}
		scanned++;
		memcpy(ib, (uint8_t *)k.mv_data + 8, 4);
		if (mdb_get(t, h->recs, &id, &rv) ||
		    (nl = rec_parse(&rv, &r)) < 0 || !matches(q, &r, nl))
			continue;
		json_array_append_new(jobs, json_loadb(r.json, r.json_len, 0,
						       NULL));
		got++;
	}
	mdb_cursor_close(c);
	mdb_txn_abort(t);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : lm(rc);
fail:
	snprintf(err, errlen, "history: cannot read: %s", mdb_strerror(rc));
	return lm(rc);
}

int mmd_history_page(struct mmd_history *h, uint64_t below, uint32_t after,
		     json_t **records, uint32_t *last, int *more)
{
	MDB_txn *t;
	MDB_cursor *c;
	uint8_t kb[4];
	MDB_val k = { 4, kb }, v;
	size_t bytes = 0;
	uint32_t scanned = 0;
	int rc, op = MDB_SET_RANGE;

	*records = json_array();
	*last = after;
	*more = 0;
	if (!*records)
		return -ENOMEM;
	if (!h->open || after == UINT32_MAX)
		return 0;
	if ((rc = mdb_txn_begin(h->env, NULL, MDB_RDONLY, &t)))
		return lm(rc);
	if ((rc = mdb_cursor_open(t, h->recs, &c))) {
		mdb_txn_abort(t);
		return lm(rc);
	}
	be32(kb, after + 1);
	while ((rc = mdb_cursor_get(c, &k, &v, (MDB_cursor_op)op)) == 0) {
		struct mmd_hist_rec r;
		uint32_t id;
		int nl;

		op = MDB_NEXT;
		if (k.mv_size != 4 || (nl = rec_parse(&v, &r)) < 0)
			continue;
		id = (uint32_t)rd_be(k.mv_data, 4);
		if (bytes + v.mv_size + 64 > MMD_HIST_PAGE_MAX ||
		    scanned == MMD_HIST_SCAN_MAX) {
			*more = 1;
			break;
		}
		scanned++;
		*last = id;
		if (r.purged_index > below)
			continue;
		bytes += v.mv_size + 64;
		json_array_append_new(*records, json_pack(
			"[I, I, I, I, I, i, s#, s#]", (json_int_t)id,
			(json_int_t)r.purged_index, (json_int_t)r.end_ms,
			(json_int_t)r.submit_ms, (json_int_t)r.uid,
			(int)r.state, r.name, (int)nl, r.json,
			(int)r.json_len));
	}
	mdb_cursor_close(c);
	mdb_txn_abort(t);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : lm(rc);
}

uint64_t mmd_history_count(struct mmd_history *h)
{
	MDB_txn *t;
	MDB_stat s;
	uint64_t n = 0;

	if (!h->open || mdb_txn_begin(h->env, NULL, MDB_RDONLY, &t))
		return 0;
	if (mdb_stat(t, h->recs, &s) == 0)
		n = s.ms_entries;
	mdb_txn_abort(t);
	return n;
}
