/*
 * ckpt_image.h — the checkpoint image format (docs/checkpoint.md §2): what
 * one rank's capture at one epoch is written as, and read back from.
 *
 * An image is a header, a sequence of sections, and a trailer:
 *
 *     header   64 B: "STORMCKP", version, kind (full or delta), the
 *              identity it belongs to (cluster, job, rank, binary), its
 *              epoch and, for a delta, the epoch it applies to;
 *     section  16 B of type, flags and length, then length bytes, then
 *              padding to 8 — as many as the capture needs (memory runs,
 *              registers, files: their types are the agent's);
 *     trailer  56 B: "STORMEND", the number of sections, the image's
 *              length before the trailer, and the BLAKE2b-256 digest
 *              (libsodium) of every byte before it.
 *
 * Every integer is little-endian.  An image is taken as whole or not at
 * all: the reader checks the header, the trailer and the digest before
 * it hands out a single section, so a torn write (no trailer, a short
 * file) or a corrupt byte is found and the previous epoch used.  Pure:
 * the writer writes to a file descriptor it is given, the reader reads a
 * buffer; no clock, no allocation that the input can size.
 */
#ifndef STORM_CKPT_IMAGE_H
#define STORM_CKPT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define CKPT_IMAGE_VERSION 1u
#define CKPT_HEADER_BYTES 64u
#define CKPT_SECTION_BYTES 16u
#define CKPT_TRAILER_BYTES 56u
#define CKPT_DIGEST_BYTES 32u

enum ckpt_kind { CKPT_FULL = 1, CKPT_DELTA = 2 };

/* Whose image it is: a restore refuses one of anybody else's. */
struct ckpt_ident {
	uint64_t cluster;        /* the cluster's id */
	uint64_t job;
	uint32_t rank;
	uint64_t binary;         /* the executable's identity */
};

struct ckpt_header {
	uint32_t version;
	enum ckpt_kind kind;
	struct ckpt_ident id;
	uint64_t epoch;
	uint64_t parent;         /* a delta's base epoch; 0 for a full one */
};

/* ---- writing ---------------------------------------------------------------- */

struct ckpt_writer {
	int fd;
	int err;                 /* the first error (-errno), kept */
	uint64_t bytes;          /* written so far */
	uint64_t sections;
	uint64_t open_len;       /* the section being written: its length */
	uint64_t open_done;      /* ... and bytes of it written */
	crypto_generichash_state digest;
};

/* Start an image on fd with header h: 0 or -errno. */
int ckpt_write_begin(struct ckpt_writer *w, int fd,
		     const struct ckpt_header *h);
/* A section of type and flags, len bytes to follow in any number of
 * ckpt_write_data calls (a memory run need not sit in one buffer). */
int ckpt_section_begin(struct ckpt_writer *w, uint32_t type, uint32_t flags,
		       uint64_t len);
int ckpt_write_data(struct ckpt_writer *w, const void *buf, size_t len);
/* The trailer, once every section is whole: 0, or the first error of
 * the image (-ENOSPC: the disk is full; the epoch is aborted). */
int ckpt_write_end(struct ckpt_writer *w);

/* ---- reading ---------------------------------------------------------------- */

struct ckpt_reader {
	const unsigned char *buf;
	size_t len;              /* up to the trailer */
	size_t off;              /* the next section */
	uint64_t sections, seen;
	struct ckpt_header h;
};

struct ckpt_section {
	uint32_t type, flags;
	const void *data;
	uint64_t len;
};

/* Check image buf[0..len): the header (magic, version), the trailer,
 * the digest, every section's bounds, and, if expect is not NULL, that
 * the image is expect's.  0 and *r ready, or -1 with why saying what is
 * wrong (a torn or corrupt image, another job's, another version). */
int ckpt_read_begin(struct ckpt_reader *r, const void *buf, size_t len,
		    const struct ckpt_ident *expect, char *why, size_t whylen);
/* The next section: 1 and *s, or 0 after the last. */
int ckpt_read_section(struct ckpt_reader *r, struct ckpt_section *s);

#endif
