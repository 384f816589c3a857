/*
 * seal.c — sealed requests (docs/protocol.md §2.6): over TCP a client
 * sends its request in a SEALED frame, a MUNGE credential beside the
 * request body, and the credential's payload names the SHA-256 of that
 * body as sent.  The manager hashes the bytes it received, so a
 * credential captured on the wire vouches for one body only: altered,
 * the request is refused.  (That the same credential is taken only once,
 * cluster-wide, is the replicated replay cache's job: manager/creds.c.)
 *
 * Key invariant: st_seal_decode() reads an untrusted payload field by
 * field, checks every length against the bytes left and the limits
 * before it hands anything back, and copies nothing: the credential and
 * body it returns point into the caller's buffer.  The hash is
 * OpenSSL's (libcrypto), never our own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <storm_proto.h>

static const char hexdigits[] = "0123456789abcdef";

int st_sha256(const void *p, size_t n, uint8_t out[ST_SHA256_BYTES])
{
	if (sodium_init() < 0)
		return -ENOMEM;
	return crypto_hash_sha256(out, n ? p : (const void *)"", n) ? -EIO
								   : 0;
}

static void put_hex(char *dst, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = hexdigits[b[i] >> 4];
		dst[2 * i + 1] = hexdigits[b[i] & 15];
	}
}

/* Lowercase hex only: the payload has one spelling per digest. */
static int get_hex(const char *src, uint8_t *b, size_t n)
{
	for (size_t i = 0; i < 2 * n; i++) {
		const char *d = memchr(hexdigits, src[i], 16);

		if (!src[i] || !d)
			return -1;
		if (i % 2 == 0)
			b[i / 2] = (uint8_t)((d - hexdigits) << 4);
		else
			b[i / 2] |= (uint8_t)(d - hexdigits);
	}
	return 0;
}

static int printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return 0;
	return 1;
}

int st_seal_encode(const char *cred, const void *body, size_t blen,
		   uint8_t **out, uint32_t *len)
{
	size_t clen = cred ? strlen(cred) : 0, n;
	uint8_t *p;

	if (!cred || !out || !len || (blen && !body) || clen == 0 ||
	    clen > ST_SEAL_CRED_MAX || !printable(cred, clen))
		return -EINVAL;
	n = ST_SEAL_HDR + clen + blen;
	if (blen > ST_FRAME_MAX || n > ST_FRAME_MAX)
		return -EMSGSIZE;
	if (!(p = malloc(n)))
		return -ENOMEM;
	p[0] = ST_SEAL_VERSION;
	p[1] = ST_SEAL_MUNGE;
	p[2] = (uint8_t)(clen >> 8);
	p[3] = (uint8_t)clen;
	memcpy(p + ST_SEAL_HDR, cred, clen);
	if (blen)
		memcpy(p + ST_SEAL_HDR + clen, body, blen);
	*out = p;
	*len = (uint32_t)n;
	return 0;
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *err, size_t errlen, const char *f, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, f);
		vsnprintf(err, errlen, f, ap);
		va_end(ap);
	}
	return -STORM_EPROTO;
}

int st_seal_decode(const uint8_t *p, size_t len, const char **cred,
		   size_t *clen, const uint8_t **body, size_t *blen,
		   char *err, size_t errlen)
{
	size_t n;

	if (err && errlen)
		err[0] = '\0';
	if ((!p && len) || !cred || !clen || !body || !blen)
		return -EINVAL;
	if (len < ST_SEAL_HDR)
		return refuse(err, errlen, "sealed request: %zu bytes, fewer "
			      "than its %d-byte header", len, ST_SEAL_HDR);
	if (p[0] != ST_SEAL_VERSION)
		return refuse(err, errlen, "sealed request: version %u at "
			      "offset 0, this manager reads %d (upgrade "
			      "it, or use a stormctl of its version)", p[0],
			      ST_SEAL_VERSION);
	if (p[1] != ST_SEAL_MUNGE)
		return refuse(err, errlen, "sealed request: credential scheme "
			      "%u at offset 1, only %d (MUNGE) is known",
			      p[1], ST_SEAL_MUNGE);
	n = (size_t)p[2] << 8 | p[3];
	if (n == 0 || n > ST_SEAL_CRED_MAX)
		return refuse(err, errlen, "sealed request: a credential of "
			      "%zu bytes at offset 2 (1 to %u)", n,
			      ST_SEAL_CRED_MAX);
	if (n > len - ST_SEAL_HDR)
		return refuse(err, errlen, "sealed request: a credential of "
			      "%zu bytes at offset 2, but only %zu follow",
			      n, len - ST_SEAL_HDR);
	if (!printable((const char *)p + ST_SEAL_HDR, n))
		return refuse(err, errlen, "sealed request: the credential "
			      "(offset %d, %zu bytes) holds a byte that is "
			      "not printable ASCII", ST_SEAL_HDR, n);
	if (n == len - ST_SEAL_HDR)
		return refuse(err, errlen, "sealed request: no body after the "
			      "credential (offset %zu)", len);
	*cred = (const char *)p + ST_SEAL_HDR;
	*clen = n;
	*body = p + ST_SEAL_HDR + n;
	*blen = len - ST_SEAL_HDR - n;
	return 0;
}

int st_seal_payload(const void *body, size_t blen,
		    const uint8_t nonce[ST_SEAL_NONCE_BYTES],
		    char out[ST_SEAL_PAYLOAD_LEN + 1])
{
	uint8_t d[ST_SHA256_BYTES];
	char *q = out;
	int rc = st_sha256(body, blen, d);

	if (rc)
		return rc;
	memcpy(q, ST_SEAL_PAYLOAD_PREFIX, 20);
	q += 20;
	put_hex(q, d, sizeof(d));
	q += 64;
	memcpy(q, " nonce=", 7);
	q += 7;
	put_hex(q, nonce, ST_SEAL_NONCE_BYTES);
	q[32] = '\0';
	return 0;
}

int st_seal_check(const void *payload, size_t plen,
		  const uint8_t digest[ST_SHA256_BYTES], char *err,
		  size_t errlen)
{
	const char *s = payload;
	uint8_t d[ST_SHA256_BYTES], nonce[ST_SEAL_NONCE_BYTES];
	char text[ST_SEAL_PAYLOAD_LEN + 1];

	if (err && errlen)
		err[0] = '\0';
	if (!payload || !digest || plen != ST_SEAL_PAYLOAD_LEN ||
	    memchr(s, 0, plen))
		return refuse(err, errlen, "its payload is not a sealed "
			      "request's (%zu bytes; an older stormctl, which "
			      "puts the credential inside the request? "
			      "upgrade it)", plen);
	memcpy(text, s, plen);
	text[plen] = '\0';
	if (memcmp(text, ST_SEAL_PAYLOAD_PREFIX, 20) ||
	    get_hex(text + 20, d, sizeof(d)) ||
	    memcmp(text + 84, " nonce=", 7) ||
	    get_hex(text + 91, nonce, sizeof(nonce)))
		return refuse(err, errlen, "its payload is not a sealed "
			      "request's (\"storm-seal-1 sha256=HEX "
			      "nonce=HEX\")");
	if (memcmp(d, digest, sizeof(d))) {
		if (err && errlen)
			snprintf(err, errlen, "it binds another request body "
				 "(the SHA-256 in the credential differs from "
				 "that of the bytes received: the request was "
				 "altered in transit, or the credential was "
				 "made for another request)");
		return -EACCES;
	}
	return 0;
}
