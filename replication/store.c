/*
 * store.c — a replica's durable state in LMDB: the last snapshot (the
 * state image at an index) and the operation log after it, with the
 * applied index, in one environment.  Operations applied during one
 * dispatch round are appended to one write transaction and committed
 * together (group commit).  The environment is MDB_NOMETASYNC: each
 * commit writes and flushes its data pages, but not the meta page that
 * points at them; rps_sync() (mdb_env_sync: one flush of the meta page)
 * makes the commits before it survive a crash of the host, and a reply
 * waits for it.  (MDB_NOSYNC would be faster, and LMDB's documentation
 * warns that a host crash may then corrupt the environment: only the
 * measurement of that cost uses it, rp_config_t.unsafe_nosync.)  The
 * state on disk is snapshot + log: a restart restores the one and
 * re-applies the other.
 *
 * Databases: "meta" (cluster, version, applied, snap_index, snapshot),
 * "log" (index as 8 big-endian bytes -> OP message bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rp_internal.h"

static int lmdb_err(int rc)
{
	if (rc == 0)
		return 0;
	if (rc > 0 && rc < 4096)
		return -rc; /* an errno */
	return rc == MDB_MAP_FULL ? -ENOSPC : -EIO;
}

static void be64(uint8_t k[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		k[i] = (uint8_t)v;
}

static int meta_get(MDB_txn *t, MDB_dbi d, const char *key, MDB_val *v)
{
	MDB_val k = { strlen(key), (void *)(uintptr_t)key };
	return mdb_get(t, d, &k, v);
}

static int meta_put(MDB_txn *t, MDB_dbi d, const char *key, const void *p,
		    size_t n)
{
	MDB_val k = { strlen(key), (void *)(uintptr_t)key };
	MDB_val v = { n, (void *)(uintptr_t)p };
	return mdb_put(t, d, &k, &v, 0);
}

static int mkdirs(const char *dir)
{
	char p[1024];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++)
		if (p[i] == '/' || p[i] == 0) {
			char c = p[i];
			p[i] = 0;
			if (mkdir(p, 0700) && errno != EEXIST)
				return -errno;
			p[i] = c;
		}
	return 0;
}

int rps_open(struct rp_store *s, const char *dir, const char *cluster,
	     uint32_t version, int nosync, char *err, size_t errlen)
{
	MDB_txn *t = NULL;
	MDB_val v;
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = mkdirs(dir))) {
		snprintf(err, errlen, "%s: cannot create the state directory: "
			 "%s", dir, storm_strerror(rc));
		return rc;
	}
	rc = mdb_env_create(&s->env);
	if (!rc)
		rc = mdb_env_set_maxdbs(s->env, 2 + RP_APP_DBS);
	if (!rc) /* address space only; the file grows as written */
		rc = mdb_env_set_mapsize(s->env, RP_MAP_BYTES);
	if (!rc)
		rc = mdb_env_open(s->env, dir, MDB_NOTLS | (nosync ?
				  MDB_NOSYNC : MDB_NOMETASYNC), 0600);
	if (rc) {
		snprintf(err, errlen, "%s: cannot open the LMDB state: %s",
			 dir, mdb_strerror(rc));
		goto fail;
	}
	if ((rc = mdb_txn_begin(s->env, NULL, 0, &t)) ||
	    (rc = mdb_dbi_open(t, "meta", MDB_CREATE, &s->meta)) ||
	    (rc = mdb_dbi_open(t, "log", MDB_CREATE, &s->log))) {
		snprintf(err, errlen, "%s: cannot open the LMDB databases: %s",
			 dir, mdb_strerror(rc));
		goto fail;
	}
	/* A file of another cluster or state version is refused, never
	 * reinterpreted. */
	if (meta_get(t, s->meta, "cluster", &v) == 0) {
		if (v.mv_size != strlen(cluster) ||
		    memcmp(v.mv_data, cluster, v.mv_size)) {
			snprintf(err, errlen, "%s: the state belongs to cluster "
				 "\"%.*s\", not \"%s\": point state_dir at this "
				 "cluster's directory, or remove it to start "
				 "empty", dir, (int)(v.mv_size > 64 ? 64 :
						     v.mv_size),
				 (const char *)v.mv_data, cluster);
			rc = -STORM_ESTATE;
			goto fail_rc;
		}
	} else if ((rc = meta_put(t, s->meta, "cluster", cluster,
				  strlen(cluster)))) {
		goto fail_lmdb;
	}
	if (meta_get(t, s->meta, "version", &v) == 0) {
		uint32_t have = 0;

		if (v.mv_size == 4)
			memcpy(&have, v.mv_data, 4);
		if (have != version) {
			snprintf(err, errlen, "%s: the state has version %u, "
				 "this storm-mm reads version %u: run the "
				 "matching storm-mm, or remove the directory "
				 "so that this replica joins by state transfer",
				 dir, have, version);
			rc = -STORM_ESTATE;
			goto fail_rc;
		}
	} else if ((rc = meta_put(t, s->meta, "version", &version, 4))) {
		goto fail_lmdb;
	}
	if (meta_get(t, s->meta, "snap_index", &v) == 0 && v.mv_size == 8)
		memcpy(&s->snap_index, v.mv_data, 8);
	if ((rc = mdb_txn_commit(t))) {
		t = NULL;
		goto fail_lmdb;
	}
	return 0;
fail_lmdb:
	snprintf(err, errlen, "%s: LMDB: %s", dir, mdb_strerror(rc));
fail:
	rc = rc < 0 ? rc : lmdb_err(rc);
fail_rc:
	if (t)
		mdb_txn_abort(t);
	mdb_env_close(s->env);
	s->env = NULL;
	return rc;
}

void rps_close(struct rp_store *s)
{
	if (!s->env)
		return;
	rps_abort(s);
	mdb_env_close(s->env);
	s->env = NULL;
}

int rps_snapshot(struct rp_store *s, uint64_t *index, uint8_t **buf,
		 size_t *len)
{
	MDB_txn *t;
	MDB_val v;
	int rc;

	*index = 0;
	*buf = NULL;
	*len = 0;
	if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t)))
		return lmdb_err(rc);
	if (meta_get(t, s->meta, "snapshot", &v) == 0 && v.mv_size) {
		*buf = malloc(v.mv_size);
		if (!*buf) {
			mdb_txn_abort(t);
			return -ENOMEM;
		}
		memcpy(*buf, v.mv_data, v.mv_size);
		*len = v.mv_size;
		*index = s->snap_index;
	}
	mdb_txn_abort(t);
	return 0;
}

int rps_replay(struct rp_store *s, uint64_t after,
	       int (*fn)(void *arg, uint64_t index, const void *e, size_t len),
	       void *arg)
{
	MDB_txn *t;
	MDB_cursor *c;
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	uint64_t expect = after + 1;
	int rc, op = MDB_SET_RANGE;

	be64(kb, after + 1);
	if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t)))
		return lmdb_err(rc);
	if ((rc = mdb_cursor_open(t, s->log, &c))) {
		mdb_txn_abort(t);
		return lmdb_err(rc);
	}
	while ((rc = mdb_cursor_get(c, &k, &v, (MDB_cursor_op)op)) == 0) {
		uint64_t idx = 0;

		op = MDB_NEXT;
		if (k.mv_size != 8) {
			rc = -STORM_ESTATE;
			break;
		}
		for (int i = 0; i < 8; i++)
			idx = idx << 8 | ((uint8_t *)k.mv_data)[i];
		if (idx != expect) { /* a hole: the log is damaged */
			rc = -STORM_ESTATE;
			break;
		}
		expect++;
		if ((rc = fn(arg, idx, v.mv_data, v.mv_size)))
			break;
	}
	mdb_cursor_close(c);
	mdb_txn_abort(t);
	return rc == MDB_NOTFOUND ? 0 : (rc < 0 ? rc : lmdb_err(rc));
}

int rps_batch(struct rp_store *s)
{
	if (s->txn)
		return 0;
	return lmdb_err(mdb_txn_begin(s->env, NULL, 0, &s->txn));
}

int rps_append(struct rp_store *s, uint64_t index, const void *e, size_t len)
{
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v = { len, (void *)(uintptr_t)e };
	int rc;

	if ((rc = rps_batch(s)))
		return rc;
	be64(kb, index);
	if ((rc = mdb_put(s->txn, s->log, &k, &v, MDB_APPEND)) ||
	    (rc = meta_put(s->txn, s->meta, "applied", &index, 8)))
		return lmdb_err(rc);
	return 0;
}

int rps_put_snapshot(struct rp_store *s, uint64_t index, const void *img,
		     size_t len, int clear)
{
	int rc;

	if ((rc = rps_batch(s)))
		return rc;
	if (clear) {
		rc = mdb_drop(s->txn, s->log, 0);
	} else {
		MDB_cursor *c;
		MDB_val k, v;

		rc = mdb_cursor_open(s->txn, s->log, &c);
		while (!rc && (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0) {
			uint64_t idx = 0;

			for (size_t i = 0; i < 8 && i < k.mv_size; i++)
				idx = idx << 8 | ((uint8_t *)k.mv_data)[i];
			if (idx > index)
				break;
			rc = mdb_cursor_del(c, 0);
		}
		if (rc == MDB_NOTFOUND)
			rc = 0;
		if (c)
			mdb_cursor_close(c);
	}
	if (!rc)
		rc = meta_put(s->txn, s->meta, "snapshot", img, len);
	if (!rc)
		rc = meta_put(s->txn, s->meta, "snap_index", &index, 8);
	if (!rc && clear)
		rc = meta_put(s->txn, s->meta, "applied", &index, 8);
	if (rc)
		return lmdb_err(rc);
	s->snap_index = index;
	return 0;
}

int rps_commit(struct rp_store *s)
{
	int rc;

	if (!s->txn)
		return 0;
	rc = mdb_txn_commit(s->txn);
	s->txn = NULL;
	return lmdb_err(rc);
}

int rps_sync(struct rp_store *s)
{
	return lmdb_err(mdb_env_sync(s->env, 1));
}

void rps_abort(struct rp_store *s)
{
	if (s->txn)
		mdb_txn_abort(s->txn);
	s->txn = NULL;
}
