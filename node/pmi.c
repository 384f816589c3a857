/*
 * pmi.c — a job's PMI-1 server on this node (pmi.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi.h"

enum { C_NEW, C_INIT, C_FINAL, C_GONE };

struct client {
	uint32_t rank;
	int state;
	int in_barrier;     /* waiting for barrier fences + 1 */
	char in[NM_PMI_LINE_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_cap;
};

struct kv {
	char *key, *val;
};

struct nm_pmi {
	uint32_t job, size, nlocal;
	char kvsname[NM_PMI_KVSNAME_MAX];
	char *mapping;          /* PMI_process_mapping */
	struct client *c;
	struct kv *tab;         /* open addressing, cap a power of two */
	size_t cap, n, bytes;
	uint8_t *mine;          /* this node's puts since the last barrier */
	size_t mine_len, mine_cap;
	uint32_t fences;        /* barriers completed */
	uint32_t waiting;       /* local ranks in the barrier */
	int handed;             /* this barrier's entries handed out */
	char *why;              /* the job fails: why */
	int code;
};

/* ---- the key-value space --------------------------------------------------- */

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static struct kv *kv_slot(struct kv *tab, size_t cap, const char *k,
			  size_t kl)
{
	size_t i = hash(k, kl) & (cap - 1);

	while (tab[i].key && (strlen(tab[i].key) != kl ||
			      memcmp(tab[i].key, k, kl)))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static const char *kv_get(const struct nm_pmi *p, const char *k)
{
	struct kv *s;

	if (!p->cap)
		return NULL;
	s = kv_slot(p->tab, p->cap, k, strlen(k));
	return s->key ? s->val : NULL;
}

/* 0, -ENOMEM, -ENOSPC (beyond NM_PMI_STORE_MAX). */
static int kv_put(struct nm_pmi *p, const char *k, size_t kl, const char *v,
		  size_t vl)
{
	struct kv *s;
	char *val;

	if (2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct kv *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < p->cap; i++)
			if (p->tab[i].key)
				*kv_slot(t, cap, p->tab[i].key,
					 strlen(p->tab[i].key)) = p->tab[i];
		free(p->tab);
		p->tab = t;
		p->cap = cap;
	}
	s = kv_slot(p->tab, p->cap, k, kl);
	if (s->key && strlen(s->val) == vl && !memcmp(s->val, v, vl))
		return 0; /* the same again (our own put, merged back) */
	if (p->bytes + kl + vl + 2 > NM_PMI_STORE_MAX)
		return -ENOSPC;
	if (!(val = strndup(v, vl)))
		return -ENOMEM;
	if (!s->key) {
		if (!(s->key = strndup(k, kl))) {
			free(val);
			return -ENOMEM;
		}
		p->n++;
		p->bytes += kl + 1;
	} else {
		p->bytes -= strlen(s->val) + 1;
		free(s->val);
	}
	s->val = val;
	p->bytes += vl + 1;
	return 0;
}

/* ---- entries ------------------------------------------------------------ */

int nm_pmi_entries_check(const uint8_t *e, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t kl, vl;

		if (len - off < 4)
			return -1;
		kl = (size_t)e[off] | (size_t)e[off + 1] << 8;
		vl = (size_t)e[off + 2] | (size_t)e[off + 3] << 8;
		if (!kl || kl > NM_PMI_KEY_MAX || vl > NM_PMI_VAL_MAX ||
		    len - off - 4 < kl + vl ||
		    memchr(e + off + 4, 0, kl + vl))
			return -1;
		off += 4 + kl + vl;
	}
	return 0;
}

static int mine_add(struct nm_pmi *p, const char *k, size_t kl,
		    const char *v, size_t vl)
{
	size_t need = 4 + kl + vl;

	if (p->mine_len + need > p->mine_cap) {
		size_t cap = p->mine_cap ? p->mine_cap : 1024;
		uint8_t *m;

		while (cap < p->mine_len + need)
			cap *= 2;
		if (!(m = realloc(p->mine, cap)))
			return -ENOMEM;
		p->mine = m;
		p->mine_cap = cap;
	}
	p->mine[p->mine_len] = (uint8_t)kl;
	p->mine[p->mine_len + 1] = (uint8_t)(kl >> 8);
	p->mine[p->mine_len + 2] = (uint8_t)vl;
	p->mine[p->mine_len + 3] = (uint8_t)(vl >> 8);
	memcpy(p->mine + p->mine_len + 4, k, kl);
	memcpy(p->mine + p->mine_len + 4 + kl, v, vl);
	p->mine_len += need;
	return 0;
}

/* ---- failing the job ---------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int fail(struct nm_pmi *p, int code, const char *fmt, ...)
{
	va_list ap;

	if (p->why)
		return -1; /* the first reason stands */
	va_start(ap, fmt);
	if (vasprintf(&p->why, fmt, ap) < 0)
		p->why = NULL;
	va_end(ap);
	if (!p->why)
		p->why = strdup("PMI: out of memory");
	p->code = code;
	return -1;
}

const char *nm_pmi_failed(const struct nm_pmi *p, int *code)
{
	if (code)
		*code = p->why ? p->code : -1;
	return p->why;
}

/* ---- replies ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4)))
static int reply(struct nm_pmi *p, struct client *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->state == C_GONE)
		return 0;
	for (;;) {
		size_t room = c->out_cap - c->out_len;

		va_start(ap, fmt);
		/* no buffer yet: measure only (NULL + 0 is undefined) */
		n = vsnprintf(c->out ? c->out + c->out_len : NULL, room, fmt,
			      ap);
		va_end(ap);
		if (n < 0)
			return fail(p, -1, "PMI: cannot format a reply");
		if ((size_t)n < room)
			break;
		if (c->out_len + (size_t)n + 1 > NM_PMI_OUT_MAX)
			return fail(p, -1, "rank %u: PMI: it does not read its "
				    "replies (%zu bytes waiting)", c->rank,
				    c->out_len);
		size_t cap = c->out_cap ? c->out_cap : 256;
		char *o;

		while (cap < c->out_len + (size_t)n + 1)
			cap *= 2;
		if (!(o = realloc(c->out, cap)))
			return fail(p, -1, "PMI: out of memory");
		c->out = o;
		c->out_cap = cap;
	}
	c->out_len += (size_t)n;
	return 0;
}

size_t nm_pmi_output(const struct nm_pmi *p, uint32_t i, const char **buf)
{
	if (i >= p->nlocal)
		return 0;
	*buf = p->c[i].out;
	return p->c[i].out_len;
}

void nm_pmi_written(struct nm_pmi *p, uint32_t i, size_t n)
{
	struct client *c;

	if (i >= p->nlocal)
		return;
	c = &p->c[i];
	if (n >= c->out_len) {
		c->out_len = 0;
		return;
	}
	memmove(c->out, c->out + n, c->out_len - n);
	c->out_len -= n;
}

/* ---- a request's words -------------------------------------------------- */

#define MAX_WORDS 16

struct req {
	size_t n;
	const char *k[MAX_WORDS], *v[MAX_WORDS];
	size_t kl[MAX_WORDS], vl[MAX_WORDS];
};

/* The value of word key, or NULL (*len its length). */
static const char *arg(const struct req *r, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (size_t i = 1; i < r->n; i++)
		if (r->kl[i] == kl && !memcmp(r->k[i], key, kl)) {
			if (len)
				*len = r->vl[i];
			return r->v[i];
		}
	return NULL;
}

/* A decimal argument within [lo, hi], or -1 with the job failed. */
static int arg_int(struct nm_pmi *p, struct client *c, const struct req *r,
		   const char *key, long lo, long hi, long *out)
{
	size_t len;
	const char *v = arg(r, key, &len);
	char buf[24], *end;

	if (!v || !len || len >= sizeof(buf))
		return fail(p, -1, "rank %u: PMI: cmd=%.*s without a number "
			    "%s=", c->rank, (int)r->vl[0], r->v[0], key);
	memcpy(buf, v, len);
	buf[len] = 0;
	errno = 0;
	*out = strtol(buf, &end, 10);
	if (errno || *end || *out < lo || *out > hi)
		return fail(p, -1, "rank %u: PMI: %s=%s is not a number from "
			    "%ld to %ld", c->rank, key, buf, lo, hi);
	return 0;
}

/* The request's kvsname, if any, must be the job's. */
static int kvs_ok(struct nm_pmi *p, struct client *c, const struct req *r,
		  const char *res)
{
	size_t len;
	const char *v = arg(r, "kvsname", &len);

	if (!v || (len == strlen(p->kvsname) && !memcmp(v, p->kvsname, len)))
		return 1;
	reply(p, c, "cmd=%s rc=-1 msg=no_such_kvsname\n", res);
	return 0;
}

/* ---- commands ----------------------------------------------------------- */

static int do_init(struct nm_pmi *p, struct client *c, const struct req *r)
{
	long ver = 0, sub = 0;

	if (arg_int(p, c, r, "pmi_version", 0, 1000, &ver) ||
	    arg_int(p, c, r, "pmi_subversion", 0, 1000, &sub))
		return -1;
	if (ver != 1)
		return reply(p, c, "cmd=response_to_init rc=-1 "
			     "pmi_version=1 pmi_subversion=1 "
			     "msg=only_PMI-1_is_served\n");
	c->state = C_INIT;
	return reply(p, c, "cmd=response_to_init rc=0 pmi_version=1 "
		     "pmi_subversion=1\n");
}

static int do_maxes(struct nm_pmi *p, struct client *c, const struct req *r)
{
	(void)r;
	return reply(p, c, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d "
		     "vallen_max=%d\n", NM_PMI_KVSNAME_MAX, NM_PMI_KEY_MAX,
		     NM_PMI_VAL_MAX);
}

static int do_appnum(struct nm_pmi *p, struct client *c, const struct req *r)
{
	(void)r;
	return reply(p, c, "cmd=appnum rc=0 appnum=0\n");
}

static int do_universe(struct nm_pmi *p, struct client *c,
		       const struct req *r)
{
	(void)r;
	return reply(p, c, "cmd=universe_size rc=0 size=%u\n", p->size);
}

static int do_kvsname(struct nm_pmi *p, struct client *c,
		      const struct req *r)
{
	(void)r;
	return reply(p, c, "cmd=my_kvsname rc=0 kvsname=%s\n", p->kvsname);
}

static int do_put(struct nm_pmi *p, struct client *c, const struct req *r)
{
	size_t kl, vl;
	const char *k = arg(r, "key", &kl), *v = arg(r, "value", &vl);
	int rc;

	if (!kvs_ok(p, c, r, "put_result"))
		return 0;
	if (!k || !kl || !v)
		return fail(p, -1, "rank %u: PMI: cmd=put without key= and "
			    "value=", c->rank);
	if (kl > NM_PMI_KEY_MAX || vl > NM_PMI_VAL_MAX)
		return fail(p, -1, "rank %u: PMI: put of a %s of %zu bytes "
			    "(at most %d)", c->rank,
			    kl > NM_PMI_KEY_MAX ? "key" : "value",
			    kl > NM_PMI_KEY_MAX ? kl : vl,
			    kl > NM_PMI_KEY_MAX ? NM_PMI_KEY_MAX
						: NM_PMI_VAL_MAX);
	if ((rc = kv_put(p, k, kl, v, vl)) || mine_add(p, k, kl, v, vl))
		return fail(p, -1, rc == -ENOSPC ?
			    "rank %u: PMI: the job's key-value space "
			    "exceeds %u MiB" : "rank %u: PMI: out of memory "
			    "(%u MiB)", c->rank, NM_PMI_STORE_MAX >> 20);
	return reply(p, c, "cmd=put_result rc=0\n");
}

static int do_get(struct nm_pmi *p, struct client *c, const struct req *r)
{
	size_t kl;
	const char *k = arg(r, "key", &kl), *v;
	char key[NM_PMI_KEY_MAX + 1];

	if (!kvs_ok(p, c, r, "get_result"))
		return 0;
	if (!k || !kl)
		return fail(p, -1, "rank %u: PMI: cmd=get without key=",
			    c->rank);
	if (kl > NM_PMI_KEY_MAX)
		return reply(p, c, "cmd=get_result rc=-1 "
			     "msg=key_too_long\n");
	memcpy(key, k, kl);
	key[kl] = 0;
	v = !strcmp(key, "PMI_process_mapping") ? p->mapping : kv_get(p, key);
	if (!v)
		return reply(p, c, "cmd=get_result rc=-1 msg=key_%s_not_found\n",
			     key);
	return reply(p, c, "cmd=get_result rc=0 value=%s\n", v);
}

static int do_barrier(struct nm_pmi *p, struct client *c,
		      const struct req *r)
{
	(void)r;
	/* a barrier is of every rank: one that finalized or ended will
	 * never come */
	for (uint32_t i = 0; i < p->nlocal; i++)
		if (p->c[i].state == C_GONE || p->c[i].state == C_FINAL)
			return fail(p, -1, "rank %u %s before PMI barrier "
				    "%u, which rank %u entered: it cannot "
				    "complete", p->c[i].rank,
				    p->c[i].state == C_GONE ? "ended"
							    : "finalized",
				    p->fences + 1, c->rank);
	c->in_barrier = 1;
	p->waiting++;
	return 0;
}

static int do_finalize(struct nm_pmi *p, struct client *c,
		       const struct req *r)
{
	(void)r;
	if (p->waiting)
		return fail(p, -1, "rank %u finalized while other ranks wait "
			    "in PMI barrier %u: it cannot complete", c->rank,
			    p->fences + 1);
	c->state = C_FINAL;
	return reply(p, c, "cmd=finalize_ack rc=0\n");
}

static int do_abort(struct nm_pmi *p, struct client *c, const struct req *r)
{
	long code = 1;
	size_t ml = 0;
	const char *m = arg(r, "msg", &ml);

	if (!m)
		m = arg(r, "message", &ml);
	if (!m)
		m = arg(r, "error_msg", &ml);
	if (arg(r, "exitcode", NULL) &&
	    arg_int(p, c, r, "exitcode", -2147483647L - 1, 2147483647L,
		    &code))
		return -1;
	if (m && ml)
		return fail(p, (int)code, "rank %u called MPI_Abort (exit "
			    "code %ld): %.*s", c->rank, code,
			    (int)(ml > 200 ? 200 : ml), m);
	return fail(p, (int)code, "rank %u called MPI_Abort (exit code %ld)",
		    c->rank, code);
}

/* Name service and spawning: answered, not served. */
static int do_unsupported(struct nm_pmi *p, struct client *c,
			  const struct req *r)
{
	static const struct { const char *cmd, *res; } res[] = {
		{ "publish_name", "publish_result" },
		{ "unpublish_name", "unpublish_result" },
		{ "lookup_name", "lookup_result" },
	};

	for (size_t i = 0; i < sizeof(res) / sizeof(*res); i++)
		if (r->vl[0] == strlen(res[i].cmd) &&
		    !memcmp(r->v[0], res[i].cmd, r->vl[0]))
			return reply(p, c, "cmd=%s rc=-1 "
				     "msg=not_served_by_storm\n", res[i].res);
	return fail(p, -1, "rank %u: PMI: cmd=%.*s (MPI_Comm_spawn) is not "
		    "served by Storm", c->rank, (int)r->vl[0], r->v[0]);
}

typedef int (*cmd_fn)(struct nm_pmi *, struct client *, const struct req *);

static const struct {
	const char *name;
	cmd_fn fn;
	int before_init; /* allowed before init */
} commands[] = {
	{ "init", do_init, 1 },
	{ "get_maxes", do_maxes, 0 },
	{ "get_appnum", do_appnum, 0 },
	{ "get_universe_size", do_universe, 0 },
	{ "get_my_kvsname", do_kvsname, 0 },
	{ "put", do_put, 0 },
	{ "get", do_get, 0 },
	{ "barrier_in", do_barrier, 0 },
	{ "finalize", do_finalize, 0 },
	{ "abort", do_abort, 1 },
	{ "publish_name", do_unsupported, 0 },
	{ "unpublish_name", do_unsupported, 0 },
	{ "lookup_name", do_unsupported, 0 },
	{ "spawn", do_unsupported, 0 },
};

/* Split line (len bytes, no newline) into words. */
static int split(struct req *r, const char *line, size_t len)
{
	size_t i = 0;

	r->n = 0;
	while (i < len) {
		size_t s, eq;

		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			break;
		if (r->n == MAX_WORDS)
			return -1;
		for (s = i, eq = 0; i < len && line[i] != ' '; i++)
			if (!eq && line[i] == '=')
				eq = i;
		if (!eq || eq == s)
			return -1;
		/* value= comes last and may hold spaces (Open MPI's
		 * encoding does): it runs to the end of the line */
		if (eq - s == 5 && !memcmp(line + s, "value", 5))
			i = len;
		r->k[r->n] = line + s;
		r->kl[r->n] = eq - s;
		r->v[r->n] = line + eq + 1;
		r->vl[r->n] = i - eq - 1;
		r->n++;
	}
	return r->n ? 0 : -1;
}

static int printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

static int line(struct nm_pmi *p, struct client *c, const char *s,
		size_t len)
{
	struct req r;

	if (len && s[len - 1] == '\r')
		len--;
	if (!printable(s, len) || split(&r, s, len) ||
	    ((r.kl[0] != 3 || memcmp(r.k[0], "cmd", 3)) &&
	     (r.kl[0] != 4 || memcmp(r.k[0], "mcmd", 4))))
		return fail(p, -1, "rank %u: PMI: '%.*s' is not a PMI-1 "
			    "request (cmd=NAME key=value ...); is the "
			    "program an MPI program of the right kind for "
			    "--mpi?", c->rank, (int)(len > 80 ? 80 : len), s);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		if (strlen(commands[i].name) != r.vl[0] ||
		    memcmp(commands[i].name, r.v[0], r.vl[0]))
			continue;
		if (c->state == C_NEW && !commands[i].before_init)
			return fail(p, -1, "rank %u: PMI: cmd=%s before "
				    "cmd=init", c->rank, commands[i].name);
		if (c->state == C_FINAL && strcmp(commands[i].name, "abort"))
			return fail(p, -1, "rank %u: PMI: cmd=%s after "
				    "cmd=finalize", c->rank,
				    commands[i].name);
		if (c->in_barrier && strcmp(commands[i].name, "abort"))
			return fail(p, -1, "rank %u: PMI: cmd=%s while in "
				    "barrier_in", c->rank, commands[i].name);
		return commands[i].fn(p, c, &r);
	}
	return fail(p, -1, "rank %u: PMI: unknown request cmd=%.*s", c->rank,
		    (int)(r.vl[0] > 40 ? 40 : r.vl[0]), r.v[0]);
}

int nm_pmi_input(struct nm_pmi *p, uint32_t i, const char *buf, size_t len)
{
	struct client *c;

	if (p->why)
		return -1;
	if (i >= p->nlocal)
		return 0;
	c = &p->c[i];
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t take = nl ? (size_t)(nl - buf) : len;

		if (c->in_len + take >= NM_PMI_LINE_MAX)
			return fail(p, -1, "rank %u: PMI: a request line of "
				    "more than %d bytes", c->rank,
				    NM_PMI_LINE_MAX - 1);
		memcpy(c->in + c->in_len, buf, take);
		c->in_len += take;
		if (!nl)
			break;
		if (line(p, c, c->in, c->in_len))
			return -1;
		c->in_len = 0;
		buf += take + 1;
		len -= take + 1;
	}
	return 0;
}

int nm_pmi_closed(struct nm_pmi *p, uint32_t i)
{
	struct client *c;

	if (i >= p->nlocal || p->c[i].state == C_GONE)
		return p->why ? -1 : 0;
	c = &p->c[i];
	/* finalized, or never a PMI client while no barrier began */
	if (c->state == C_FINAL || (c->state == C_NEW && !p->fences &&
				    !p->waiting && !c->in_len)) {
		c->state = C_GONE;
		c->out_len = 0;
		return 0;
	}
	c->state = C_GONE;
	c->out_len = 0;
	if (c->in_barrier)
		return fail(p, -1, "rank %u ended inside PMI barrier %u",
			    c->rank, p->fences + 1);
	return fail(p, -1, "rank %u ended without PMI finalize (in MPI, "
		    "without MPI_Finalize): the job's other ranks cannot "
		    "complete", c->rank);
}

/* ---- barriers ----------------------------------------------------------- */

int nm_pmi_fence_ready(struct nm_pmi *p, const uint8_t **entries,
		       size_t *len, uint32_t *fence)
{
	if (p->why || p->handed || !p->nlocal || p->waiting < p->nlocal)
		return 0;
	p->handed = 1;
	*entries = p->mine;
	*len = p->mine_len;
	*fence = p->fences + 1;
	return 1;
}

int nm_pmi_fence_take(struct nm_pmi *p, uint32_t fence,
		      const uint8_t *e, size_t len)
{
	size_t off = 0;

	if (p->why)
		return -1;
	if (fence != p->fences + 1 || !p->handed)
		return 0;
	if (nm_pmi_entries_check(e, len))
		return fail(p, -1, "PMI: the merged key-value entries of "
			    "barrier %u are malformed", fence);
	while (off < len) {
		size_t kl = (size_t)e[off] | (size_t)e[off + 1] << 8;
		size_t vl = (size_t)e[off + 2] | (size_t)e[off + 3] << 8;
		int rc = kv_put(p, (const char *)e + off + 4, kl,
				(const char *)e + off + 4 + kl, vl);

		if (rc)
			return fail(p, -1, rc == -ENOSPC ?
				    "PMI: the job's key-value space exceeds "
				    "%u MiB" : "PMI: out of memory (%u MiB)",
				    NM_PMI_STORE_MAX >> 20);
		off += 4 + kl + vl;
	}
	p->fences = fence;
	p->handed = 0;
	p->mine_len = 0;
	p->waiting = 0;
	for (uint32_t i = 0; i < p->nlocal; i++) {
		struct client *c = &p->c[i];

		if (!c->in_barrier)
			continue;
		c->in_barrier = 0;
		if (reply(p, c, "cmd=barrier_out rc=0\n"))
			return -1;
	}
	return 1;
}

uint32_t nm_pmi_fences(const struct nm_pmi *p)
{
	return p->fences;
}

/* ---- the job ------------------------------------------------------------ */

/* PMI_process_mapping, as MPICH reads it: (vector,(first node, nodes,
 * ranks each),...): runs of consecutive ranks on one node, runs of one
 * length on consecutive nodes grouped; the job's nodes are numbered 0..
 * in order of their first rank. */
static char *mapping(uint32_t size, const uint32_t *rank_node)
{
	uint32_t *idx = malloc((size ? size : 1) * sizeof(*idx));
	uint32_t *seen = malloc((size ? size : 1) * sizeof(*seen));
	uint32_t nseen = 0;
	size_t cap = 64, len = 0;
	char *s = malloc(cap);

	if (!idx || !seen || !s)
		goto fail;
	for (uint32_t r = 0; r < size; r++) {
		uint32_t k;

		for (k = 0; k < nseen && seen[k] != rank_node[r]; k++)
			;
		if (k == nseen)
			seen[nseen++] = rank_node[r];
		idx[r] = k;
	}
	len = (size_t)snprintf(s, cap, "(vector");
	for (uint32_t r = 0; r < size;) {
		uint32_t first = idx[r], run = 0, nodes = 1;
		char item[48];
		int n;

		while (r + run < size && idx[r + run] == first)
			run++;
		r += run;
		/* the next run: same length, on the next node */
		for (;;) {
			uint32_t k = 0;

			while (r + k < size && k < run &&
			       idx[r + k] == first + nodes)
				k++;
			if (k != run || (r + k < size &&
					 idx[r + k] == first + nodes))
				break;
			r += run;
			nodes++;
		}
		n = snprintf(item, sizeof(item), ",(%u,%u,%u)", first, nodes,
			     run);
		while (len + (size_t)n + 2 > cap) {
			char *t = realloc(s, cap * 2);

			if (!t)
				goto fail;
			s = t;
			cap *= 2;
		}
		memcpy(s + len, item, (size_t)n + 1);
		len += (size_t)n;
	}
	memcpy(s + len, ")", 2);
	free(idx);
	free(seen);
	return s;
fail:
	free(idx);
	free(seen);
	free(s);
	return NULL;
}

struct nm_pmi *nm_pmi_new(uint32_t job, const char *kvsname, uint32_t size,
			  const uint32_t *rank_node, uint32_t nlocal,
			  const uint32_t *ranks)
{
	struct nm_pmi *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->job = job;
	p->size = size;
	p->nlocal = nlocal;
	snprintf(p->kvsname, sizeof(p->kvsname), "%s", kvsname);
	p->c = calloc(nlocal ? nlocal : 1, sizeof(*p->c));
	p->mapping = mapping(size, rank_node);
	if (!p->c || !p->mapping) {
		nm_pmi_free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < nlocal; i++)
		p->c[i].rank = ranks[i];
	return p;
}

void nm_pmi_free(struct nm_pmi *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; p->c && i < p->nlocal; i++)
		free(p->c[i].out);
	for (size_t i = 0; i < p->cap; i++) {
		free(p->tab[i].key);
		free(p->tab[i].val);
	}
	free(p->tab);
	free(p->c);
	free(p->mapping);
	free(p->mine);
	free(p->why);
	free(p);
}
