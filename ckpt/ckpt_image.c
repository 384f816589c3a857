/*
 * ckpt_image.c — the checkpoint image format (ckpt_image.h): the writer
 * streams header, sections and trailer to a descriptor, digesting as it
 * goes; the reader checks all of an image before it hands out a part.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_image.h"

static const char MAGIC[8] = { 'S', 'T', 'O', 'R', 'M', 'C', 'K', 'P' };
static const char END[8] = { 'S', 'T', 'O', 'R', 'M', 'E', 'N', 'D' };

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- writing ---------------------------------------------------------------- */

/* len bytes to the image (and its digest, unless it is the digest). */
static int emit(struct ckpt_writer *w, const void *buf, size_t len,
		int digest)
{
	const unsigned char *p = buf;

	if (w->err)
		return w->err;
	if (digest)
		crypto_generichash_update(&w->digest, p, len);
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return w->err = n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

int ckpt_write_begin(struct ckpt_writer *w, int fd,
		     const struct ckpt_header *h)
{
	unsigned char b[CKPT_HEADER_BYTES] = { 0 };

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	if (sodium_init() < 0)
		return w->err = -EIO;
	crypto_generichash_init(&w->digest, NULL, 0, CKPT_DIGEST_BYTES);
	memcpy(b, MAGIC, 8);
	put32(b + 8, CKPT_IMAGE_VERSION);
	put32(b + 12, (uint32_t)h->kind);
	put64(b + 16, h->id.cluster);
	put64(b + 24, h->id.job);
	put32(b + 32, h->id.rank);
	put64(b + 40, h->id.binary);
	put64(b + 48, h->epoch);
	put64(b + 56, h->parent);
	return emit(w, b, sizeof(b), 1);
}

/* Padding to 8 after a section's data. */
static int pad(struct ckpt_writer *w, uint64_t len)
{
	static const unsigned char zero[8];

	return len % 8 ? emit(w, zero, 8 - len % 8, 1) : 0;
}

int ckpt_section_begin(struct ckpt_writer *w, uint32_t type, uint32_t flags,
		       uint64_t len)
{
	unsigned char b[CKPT_SECTION_BYTES];

	if (w->err)
		return w->err;
	if (w->open_done != w->open_len)
		return w->err = -EINVAL; /* the last one is not whole */
	put32(b, type);
	put32(b + 4, flags);
	put64(b + 8, len);
	w->open_len = len;
	w->open_done = 0;
	w->sections++;
	if (emit(w, b, sizeof(b), 1))
		return w->err;
	return len ? 0 : pad(w, 0);
}

int ckpt_write_data(struct ckpt_writer *w, const void *buf, size_t len)
{
	if (w->err)
		return w->err;
	if (len > w->open_len - w->open_done)
		return w->err = -EINVAL; /* more than the section said */
	if (emit(w, buf, len, 1))
		return w->err;
	w->open_done += len;
	return w->open_done == w->open_len ? pad(w, w->open_len) : 0;
}

int ckpt_write_end(struct ckpt_writer *w)
{
	unsigned char b[CKPT_TRAILER_BYTES] = { 0 };

	if (w->err)
		return w->err;
	if (w->open_done != w->open_len)
		return w->err = -EINVAL;
	memcpy(b, END, 8);
	put64(b + 8, w->sections);
	put64(b + 16, w->bytes); /* the length before the trailer */
	crypto_generichash_final(&w->digest, b + 24, CKPT_DIGEST_BYTES);
	return emit(w, b, sizeof(b), 0);
}

/* ---- reading ---------------------------------------------------------------- */

static int bad(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return -1;
}

int ckpt_read_begin(struct ckpt_reader *r, const void *buf, size_t len,
		    const struct ckpt_ident *expect, char *why, size_t whylen)
{
	const unsigned char *p = buf, *t;
	unsigned char digest[CKPT_DIGEST_BYTES];
	uint64_t n = 0;
	size_t off;

	memset(r, 0, sizeof(*r));
	if (len < CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES)
		return bad(why, whylen, "shorter than a header and a trailer "
			   "(a torn write?)");
	if (memcmp(p, MAGIC, 8))
		return bad(why, whylen, "not a Storm checkpoint image");
	if (get32(p + 8) != CKPT_IMAGE_VERSION)
		return bad(why, whylen, "an image of another format version");
	t = p + len - CKPT_TRAILER_BYTES;
	if (memcmp(t, END, 8) || get64(t + 16) != len - CKPT_TRAILER_BYTES)
		return bad(why, whylen, "no trailer where the image ends (a "
			   "torn write?)");
	if (sodium_init() < 0)
		return bad(why, whylen, "libsodium failed to start");
	crypto_generichash(digest, sizeof(digest), p, len - CKPT_TRAILER_BYTES,
			   NULL, 0);
	if (sodium_memcmp(digest, t + 24, sizeof(digest)))
		return bad(why, whylen, "the digest does not match (a corrupt "
			   "image)");
	r->h.version = CKPT_IMAGE_VERSION;
	r->h.kind = (enum ckpt_kind)get32(p + 12);
	r->h.id.cluster = get64(p + 16);
	r->h.id.job = get64(p + 24);
	r->h.id.rank = get32(p + 32);
	r->h.id.binary = get64(p + 40);
	r->h.epoch = get64(p + 48);
	r->h.parent = get64(p + 56);
	if (r->h.kind != CKPT_FULL && r->h.kind != CKPT_DELTA)
		return bad(why, whylen, "an image of no known kind");
	if ((r->h.kind == CKPT_FULL) != (r->h.parent == 0) ||
	    (r->h.kind == CKPT_DELTA && r->h.parent >= r->h.epoch))
		return bad(why, whylen, "a delta's base epoch is not before "
			   "it, or a full image has one");
	if (expect && (expect->cluster != r->h.id.cluster ||
		       expect->job != r->h.id.job ||
		       expect->rank != r->h.id.rank ||
		       expect->binary != r->h.id.binary))
		return bad(why, whylen, "the image of another cluster, job, "
			   "rank or binary");
	/* every section inside, their count the trailer's */
	for (off = CKPT_HEADER_BYTES; off < len - CKPT_TRAILER_BYTES; n++) {
		uint64_t sl;

		if (len - CKPT_TRAILER_BYTES - off < CKPT_SECTION_BYTES)
			return bad(why, whylen, "a section header cut short");
		sl = get64(p + off + 8);
		off += CKPT_SECTION_BYTES;
		if (sl > len - CKPT_TRAILER_BYTES - off ||
		    (sl + 7) / 8 * 8 > len - CKPT_TRAILER_BYTES - off)
			return bad(why, whylen, "a section longer than the "
				   "image");
		off += (size_t)((sl + 7) / 8 * 8);
	}
	if (n != get64(t + 8))
		return bad(why, whylen, "the trailer counts other sections");
	r->buf = p;
	r->len = len - CKPT_TRAILER_BYTES;
	r->off = CKPT_HEADER_BYTES;
	r->sections = n;
	return 0;
}

int ckpt_read_section(struct ckpt_reader *r, struct ckpt_section *s)
{
	const unsigned char *p;

	if (r->seen == r->sections)
		return 0;
	p = r->buf + r->off;
	s->type = get32(p);
	s->flags = get32(p + 4);
	s->len = get64(p + 8);
	s->data = p + CKPT_SECTION_BYTES;
	r->off += CKPT_SECTION_BYTES + (size_t)((s->len + 7) / 8 * 8);
	r->seen++;
	return 1;
}
