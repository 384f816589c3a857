/*
 * compact.c — a chain of images made one full image (ckpt_compact:
 * ckpt.h), away from the process: what a restore of the chain would put
 * in memory, written as the last epoch's full image.
 *
 * A restore applies the images oldest first, each one's sections in
 * order: a FRESH range returns its pages to what a new mapping holds,
 * a PAGES run writes its pages, and only pages of the last image's
 * private mappings are kept.  The compaction replays that on a table of
 * pages (address, where its bytes are) instead of a process: sorted, an
 * image's FRESH ranges drop entries, its runs replace them.  The result
 * holds every page whose last event was a write, the last image's other
 * sections as they are, and the last epoch in a full image's header.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"

struct page {
	uint64_t at;
	size_t seq;              /* order added: the later wins */
	const unsigned char *data;
};

static int by_at(const void *a, const void *b)
{
	const struct page *p = a, *q = b;

	if (p->at != q->at)
		return p->at < q->at ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

struct table {
	struct page *p;
	size_t n, cap;
};

static int add(struct table *t, uint64_t at, const unsigned char *data)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct page *np = realloc(t->p, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		t->p = np;
		t->cap = cap;
	}
	t->p[t->n] = (struct page){ at, t->n, data };
	t->n++;
	return 0;
}

/* Sorted by address, one entry an address: the last added. */
static void settle(struct table *t)
{
	size_t k = 0;

	if (t->n > 1)
		qsort(t->p, t->n, sizeof(*t->p), by_at);
	for (size_t i = 0; i < t->n; i++)
		if (i + 1 == t->n || t->p[i + 1].at != t->p[i].at)
			t->p[k++] = t->p[i];
	t->n = k;
}

/* FRESH ranges of one image. */
struct ranges {
	uint64_t (*r)[2];
	size_t n, cap;
};

static int add_range(struct ranges *f, const unsigned char *d)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		uint64_t (*nr)[2] = realloc(f->r, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		f->r = nr;
		f->cap = cap;
	}
	memcpy(f->r[f->n++], d, 16);
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const uint64_t *p = a, *q = b;

	return p[0] < q[0] ? -1 : p[0] > q[0];
}

/* Sorted and merged: disjoint, ascending. */
static void merge_ranges(struct ranges *f)
{
	size_t k = 0;

	if (f->n > 1)
		qsort(f->r, f->n, sizeof(*f->r), by_start);
	for (size_t i = 0; i < f->n; i++) {
		if (k && f->r[i][0] <= f->r[k - 1][1]) {
			if (f->r[i][1] > f->r[k - 1][1])
				f->r[k - 1][1] = f->r[i][1];
			continue;
		}
		f->r[k][0] = f->r[i][0];
		f->r[k][1] = f->r[i][1];
		k++;
	}
	f->n = k;
}

/* Whether at is in one of the merged ranges. */
static int in_ranges(const struct ranges *f, uint64_t at)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) { /* the first range starting after at */
		size_t mid = (lo + hi) / 2;

		if (f->r[mid][0] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && at < f->r[lo - 1][1];
}

/* Whether [at, at + page) is in a private mapping of the last image. */
static int kept(const struct ckpt_s_vma *const *v, size_t nv, uint64_t at)
{
	size_t lo = 0, hi = nv;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (at >= v[mid]->end)
			lo = mid + 1;
		else if (at < v[mid]->start)
			hi = mid;
		else
			return !(v[mid]->flags & (CKPT_VMA_SHARED |
						  CKPT_VMA_VDSO));
	}
	return 0;
}

int ckpt_compact(const struct ckpt_blob *chain, size_t n, int fd,
		 uint64_t *bytes, char *why, size_t whylen)
{
	struct table cur = { 0 }, img = { 0 }, next = { 0 };
	struct ranges fresh = { 0 };
	const struct ckpt_s_vma **vmas = NULL;
	size_t nv = 0, vcap = 0;
	struct ckpt_writer w;
	struct ckpt_reader rd;
	struct ckpt_section s;
	struct ckpt_header h;
	int rc;

	if ((rc = ckpt_check(chain, n, NULL, why, whylen)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		char rwhy[160];

		if (ckpt_read_begin(&rd, chain[i].buf, chain[i].len, NULL, rwhy,
				    sizeof(rwhy))) {
			rc = ckpt_fail(why, whylen, -EINVAL, "image %zu: %s", i,
				  rwhy);
			goto out;
		}
		img.n = 0;
		fresh.n = 0;
		while (ckpt_read_section(&rd, &s)) {
			const unsigned char *d = s.data;
			uint64_t at;

			if (s.type == CKPT_S_FRESH) {
				if ((rc = add_range(&fresh, d)))
					goto out;
				continue;
			}
			if (s.type != CKPT_S_PAGES)
				continue;
			memcpy(&at, d, 8);
			for (uint64_t off = 0; off + 8 < s.len;
			     off += CKPT_PAGE)
				if ((rc = add(&img, at + off, d + 8 + off)))
					goto out;
		}
		merge_ranges(&fresh);
		/* its fresh ranges drop what came before, its pages win */
		next.n = 0;
		for (size_t k = 0; k < cur.n; k++)
			if (!in_ranges(&fresh, cur.p[k].at) &&
			    (rc = add(&next, cur.p[k].at, cur.p[k].data)))
				goto out;
		for (size_t k = 0; k < img.n; k++)
			if ((rc = add(&next, img.p[k].at, img.p[k].data)))
				goto out;
		settle(&next);
		{
			struct table t = cur;

			cur = next;
			next = t;
		}
	}

	/* the last image: its header made full, its other sections as they
	 * are, then the pages its private mappings hold */
	if (ckpt_read_begin(&rd, chain[n - 1].buf, chain[n - 1].len, NULL, why,
			    whylen)) {
		rc = -EINVAL;
		goto out;
	}
	h = rd.h;
	h.kind = CKPT_FULL;
	h.parent = 0;
	rc = ckpt_write_begin(&w, fd, &h);
	while (!rc && ckpt_read_section(&rd, &s)) {
		if (s.type == CKPT_S_PAGES || s.type == CKPT_S_FRESH)
			continue;
		if (s.type == CKPT_S_VMA) {
			if (nv == vcap) {
				const struct ckpt_s_vma **nvv;

				vcap = vcap ? vcap * 2 : 64;
				nvv = realloc(vmas, vcap * sizeof(*nvv));
				if (!nvv) {
					rc = -ENOMEM;
					break;
				}
				vmas = nvv;
			}
			vmas[nv++] = s.data;
		}
		rc = ckpt_section_begin(&w, s.type, s.flags, s.len);
		if (!rc && s.len)
			rc = ckpt_write_data(&w, s.data, (size_t)s.len);
	}
	for (size_t k = 0; !rc && k < cur.n;) {
		size_t run = 1;
		uint64_t at = cur.p[k].at;

		if (!kept(vmas, nv, at)) {
			k++;
			continue;
		}
		while (k + run < cur.n && run < 1024 &&
		       cur.p[k + run].at == at + run * CKPT_PAGE &&
		       kept(vmas, nv, cur.p[k + run].at))
			run++;
		rc = ckpt_section_begin(&w, CKPT_S_PAGES, 0,
					8 + run * CKPT_PAGE);
		if (!rc)
			rc = ckpt_write_data(&w, &at, 8);
		for (size_t m = 0; !rc && m < run; m++)
			rc = ckpt_write_data(&w, cur.p[k + m].data, CKPT_PAGE);
		k += run;
	}
	if (!rc)
		rc = ckpt_write_end(&w);
	if (rc)
		ckpt_fail(why, whylen, rc, "writing the compacted image: %s",
		     strerror(-rc));
	else if (bytes)
		*bytes = w.bytes;
out:
	if (rc == -ENOMEM)
		ckpt_fail(why, whylen, rc, "out of memory");
	free(cur.p);
	free(img.p);
	free(next.p);
	free(fresh.r);
	free(vmas);
	return rc;
}
