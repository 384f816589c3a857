/*
 * seeds.c — writes the fuzz targets' seed corpora (valid encodings of
 * each kind, from the encoders themselves) under DIR/<target>/.  Run
 * once when a format changes; the output is checked in as
 * tests/fuzz/corpus/.   Usage: fuzz-seeds DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <storm_manager.h>
#include <storm_proto.h>

#include "bcs_wire.h"
#include "bcs_xchg.h"
#include "rp_internal.h"
#include "sp_wire.h"

static const char *root;

static void put(const char *target, int k, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/seed-%d", root, target, k);
	if (!(f = fopen(path, "wb")) || fwrite(p, 1, n, f) != n) {
		fprintf(stderr, "fuzz-seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fclose(f);
}

/* PMI-1 transcripts: a byte of cut (piece length, first rank), then
 * what MPICH's MPI_Init says, and the usual mistakes. */
static void pmi(void)
{
	static const char *const t[] = {
		"\x3f" "cmd=init pmi_version=1 pmi_subversion=1\n"
		"cmd=get_maxes\ncmd=get_appnum\ncmd=get_my_kvsname\n"
		"cmd=get kvsname=storm-5 key=PMI_process_mapping\n"
		"cmd=put kvsname=storm-5 key=P0-bc value=tcp://a:1\n"
		"cmd=barrier_in\n",
		"\x05" "cmd=init pmi_version=1 pmi_subversion=1\n"
		"cmd=init pmi_version=1 pmi_subversion=1\n"
		"cmd=barrier_in\ncmd=barrier_in\n",
		"\x80" "cmd=init pmi_version=1 pmi_subversion=1\n"
		"cmd=abort exitcode=3\n",
		"\x00" "hello\n",
		"\x10" "cmd=put key=k value=v\ncmd=spawn\nmcmd=spawn\n",
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(*t); k++)
		put("pmi", (int)k, t[k], strlen(t[k]));
}

/* The snapshot's PMI part: none, and one job midway through barrier
 * 2 (a store, the next barrier's entries, one node in). */
static void pmisnap(void)
{
	uint8_t b[128];
	size_t n = 0;

	st_put32(b, 0);
	put("pmisnap", 0, b, 4);
	st_put32(b, 1);
	n = 4;
	st_put32(b + n, 7);     /* job */
	st_put32(b + n + 4, 0); /* inc */
	st_put32(b + n + 8, 1); /* done */
	st_put32(b + n + 12, 0);
	n += 16;
	st_put32(b + n, 8); /* store: one entry */
	memcpy(b + n + 4, "\x02\x00\x02\x00P0ab", 8);
	n += 12;
	st_put32(b + n, 0); /* next: nothing yet */
	n += 4;
	st_put32(b + n, 1); /* got: node 3 */
	st_put32(b + n + 4, 3);
	n += 8;
	put("pmisnap", 1, b, n);
}

static void hb(void)
{
	st_hb_job_t jobs[3] = { { 1, ST_HB_STAGING, 0, 0, 0, 3, 1 },
				{ 7, ST_HB_ACTIVE, 1, 9, 2, 0, 0 },
				{ 4000000, ST_HB_ACTIVE, 0, 3, 0, 0, 0 } };
	st_hb_t h = { .slice = 42, .row = ST_HB_ALL_ROWS, .lo = 0,
		      .hi = UINT32_MAX, .njobs = 3, .jobs = jobs };
	uint8_t b[256];
	int n = st_hb_encode(b, sizeof(b), &h);

	put("hb", 0, b, (size_t)n);
	h.row = 1;
	h.lo = 5;
	h.hi = 10;
	h.njobs = 1;
	n = st_hb_encode(b, sizeof(b), &h);
	put("hb", 1, b, (size_t)n);
	h.flags = ST_HB_IDLE;
	n = st_hb_encode(b, sizeof(b), &h);
	put("hb", 2, b, (size_t)n);
}

static void mailbox(void)
{
	uint8_t box[512] = { 0 };
	size_t off = ST_BOX_HDR;
	st_exit_t e = { 0, 1500, 20, 2048 };
	uint8_t ex[ST_EXIT_LEN];

	st_exit_encode(ex, &e);
	st_box_put_rec(box + off, ST_REC_STDOUT, 3, 0, "hello\n", 6);
	off += ST_REC_HDR + 6;
	st_box_put_rec(box + off, ST_REC_EXIT, 3, 0, ex, sizeof(ex));
	off += ST_REC_HDR + sizeof(ex);
	st_box_put_rec(box + off, ST_REC_FAIL, 4, 0, "no", 2);
	off += ST_REC_HDR + 2;
	{
		st_ckpt_rec_t c = { .epoch = 2, .rc = -28, .why = "disk full" };
		uint8_t cb[64];
		int n = st_ckpt_rec_encode(cb, sizeof(cb), &c);

		st_box_put_rec(box + off, ST_REC_CKPT, 3, 1, cb, (uint32_t)n);
		off += ST_REC_HDR + (size_t)n;
	}
	{
		st_rerun_t x = { 1, { 40, 0 } };
		uint8_t rb[ST_RERUN_LEN];

		st_rerun_encode(rb, &x);
		st_box_put_rec(box + off, ST_REC_RERUN, 3, 1, rb, sizeof(rb));
		off += ST_REC_HDR + sizeof(rb);
	}
	st_box_put_hdr(box, 77, (uint32_t)(off - ST_BOX_HDR));
	put("mailbox", 0, box, off);
	st_chunk_put_hdr(box, 5, 0, 3, 100);
	put("mailbox", 1, box, ST_CHUNK_HDR + 100);
	put("mailbox", 2, ex, sizeof(ex));
}

static void manifest(void)
{
	uint32_t rank_node[2] = { 1, 2 };
	char *argv[] = { "prog", "-x" }, *env[] = { "A=1" };
	char *names[] = { "prog", "data" };
	uint64_t sizes[] = { 10, 3 };
	uint32_t modes[] = { 0755, 0644 };
	st_manifest_t m = { .job = 9, .ranks = 2, .uid = 1000, .gid = 100,
			    .owned = 1, .rank_node = rank_node, .argc = 2,
			    .envc = 1, .nfiles = 2, .argv = argv, .env = env,
			    .cwd = "/tmp", .file_names = names,
			    .file_sizes = sizes, .file_modes = modes };
	uint8_t *p = NULL;
	size_t n = 0;

	if (st_manifest_encode(&m, &p, &n))
		exit(1);
	put("manifest", 0, p, n);
	free(p);
	/* a batch job: its output patterns at the end */
	m.batch = 1;
	m.out_pat = "out.%j.%r";
	m.err_pat = "/tmp/err.%j";
	if (st_manifest_encode(&m, &p, &n))
		exit(1);
	put("manifest", 2, p, n);
	free(p);
}

static void ops(void)
{
	const char *argv[] = { "/bin/true" }, *env[] = { "X=1" };
	mm_job_spec_t spec = { .name = "j", .uid = 1000, .gid = 1000,
			       .ranks = 2, .argc = 1, .argv = argv,
			       .envc = 1, .env = env, .cwd = "/",
			       .time_limit_ms = 5000 };
	mm_job_spec_t alloc = spec, step = spec;
	int32_t status[2] = { 0, 256 };
	mm_usage_t usage[2] = { { 1000, 20, 4096 }, { 0, 0, 1 } };
	mm_sched_conf_t sc = { MM_POLICY_GANG, 2, 10, MM_PLACE_BUDDY };
	mm_op_t o[] = {
		{ .code = MM_OP_SUBMIT, .spec = &spec },
		{ .code = MM_OP_CANCEL, .job = 3, .uid = 1000 },
		{ .code = MM_OP_TICK, .slice = 100, .now_ms = 1700000000000 },
		{ .code = MM_OP_NODE_DOWN, .node = 2, .reason = "gone" },
		{ .code = MM_OP_JOB_EXITED, .job = 1, .nstatus = 2,
		  .status = status },
		{ .code = MM_OP_SCHED, .sched = &sc },
		{ .code = MM_OP_SUBMIT_CAPPED, .spec = &spec,
		  .max_pending = 100, .max_pending_user = 10 },
		{ .code = MM_OP_JOB_EXITED_USAGE, .job = 1, .nstatus = 2,
		  .status = status, .usage = usage },
		{ .code = MM_OP_CRED, .uid = 1000,
		  .cred_id = (const uint8_t *)"0123456789abcdef",
		  .cred_expire_ms = 1700000300000 },
		{ .code = MM_OP_CKPT_REQUEST, .job = 1, .uid = 1000 },
		{ .code = MM_OP_CKPT_COMMIT, .job = 1, .epoch = 1,
		  .ckpt_bytes = 1 << 20, .ckpt_stop_us = 900,
		  .ckpt_keep = 2 },
		{ .code = MM_OP_CKPT_ABORT, .job = 1, .epoch = 2,
		  .reason = "disk full" },
		{ .code = MM_OP_CKPT_RESTART, .job = 1, .uid = 0, .epoch = 1 },
		{ .code = MM_OP_CKPT_REQUEUE, .job = 1, .uid = 1000 },
		{ .code = MM_OP_SUBMIT_STEP, .spec = &alloc },
		{ .code = MM_OP_SUBMIT_STEP, .spec = &step },
	};
	static uint8_t b[65536];

	alloc.alloc = 1;
	alloc.node_count = 2;
	step.parent = 1;
	for (int i = 0; i < (int)(sizeof(o) / sizeof(o[0])); i++) {
		int n = mm_op_encode(&o[i], b, sizeof(b));

		if (n < 0)
			exit(1);
		put("opcodec", i, b, (size_t)n);
	}
}

static void snapshot(void)
{
	uint32_t ids[2] = { 1, 2 }, cpus[2] = { 2, 4 };
	const char *names[2] = { "n1", "n2" };
	const char *argv[] = { "/bin/true" };
	mm_job_spec_t spec = { .name = "j", .ranks = 2, .argc = 1,
			       .argv = argv, .cwd = "/" };
	int32_t status[2] = { 0, 0 };
	mm_usage_t usage[2] = { { 5, 6, 7 }, { 8, 9, 10 } };
	mm_state_t *st = NULL;
	mm_result_t res;
	uint8_t *p = NULL;
	size_t n = 0;

	if (mm_state_create(3, 2, ids, names, cpus, &st))
		exit(1);
	mm_state_encode(st, &p, &n);
	put("snapshot", 0, p, n);
	free(p);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_NODE_UP, .node = 1 }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_NODE_UP, .node = 2 }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_SUBMIT, .spec = &spec }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_SUBMIT, .spec = &spec }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_TICK, .slice = 5,
				 .now_ms = 1000 }, &res);
	mm_state_encode(st, &p, &n);
	put("snapshot", 1, p, n);
	free(p);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_JOB_STAGED, .job = 1 }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_JOB_EXITED_USAGE, .job = 1,
				 .nstatus = 2, .status = status,
				 .usage = usage }, &res);
	mm_state_encode(st, &p, &n);
	put("snapshot", 2, p, n);
	free(p);
	/* a batch allocation running, a step of it on one task slot */
	mm_job_spec_t al = spec, sp2 = spec;

	al.alloc = 1;
	sp2.parent = 3;
	sp2.ranks = 1;
	mm_apply(st, &(mm_op_t){ .code = MM_OP_SUBMIT_STEP, .spec = &al },
		 &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_TICK, .slice = 6,
				 .now_ms = 1010 }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_JOB_STAGED, .job = 3 }, &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_SUBMIT_STEP, .spec = &sp2 },
		 &res);
	mm_apply(st, &(mm_op_t){ .code = MM_OP_TICK, .slice = 7,
				 .now_ms = 1020 }, &res);
	mm_state_encode(st, &p, &n);
	put("snapshot", 3, p, n);
	free(p);
	mm_state_destroy(st);
}

static void repl(void)
{
	uint8_t op[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct rp_op o = { 7, 1234, 99, 0, 0xabcdef, 3, 1000, 1000, op, 8 };
	struct rp_buf b = { 0 };

	if (rp_op_encode(&o, &b) || b.bad)
		exit(1);
	put("repl", 0, b.p, b.len);
	free(b.p);
}

static void frame(void)
{
	uint8_t b[64];
	int n;

	st_frame_put_hdr(b, ST_FRAME_REQUEST, 17);
	put("frame", 0, b, ST_FRAME_HDR);
	n = st_output_encode(b, sizeof(b), 3, 1, 2, "out\n", 4);
	put("frame", 1, b, (size_t)n);
}

static void seal(void)
{
	static const char body[] = "{\"op\":\"status\"}";
	uint8_t nonce[ST_SEAL_NONCE_BYTES] = { 7 }, *p = NULL;
	char pl[ST_SEAL_PAYLOAD_LEN + 1];
	uint32_t len;

	if (st_seal_encode("MUNGE:AwQFAAD:", body, sizeof(body) - 1, &p,
			   &len) || st_seal_payload(body, sizeof(body) - 1,
						    nonce, pl))
		exit(1);
	put("seal", 0, p, len);
	put("seal", 1, pl, strlen(pl));
	free(p);
}

static void config(void)
{
	static const char c[] =
		"[cluster]\nname = fz\nslice_us = 1000\nheartbeat_kib = 2\n"
		"clients_max = 10\n\n[manager mm0]\naddress = 127.0.0.1:7000\n"
		"listen = 127.0.0.1:7100\n\n[node nm1]\n"
		"address = 127.0.0.1:7001\ncpus = 4\n";

	put("config", 0, c, sizeof(c) - 1);
}

static void jobsnap(void)
{
	/* count 1 | job 5 | 2 ranks | (status, utime, stime, maxrss) x 2 */
	uint8_t b[4 + 8 + 2 * 28] = { 1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0 };

	b[12] = 0xff; b[13] = 0xff; b[14] = 0xff; b[15] = 0xff; /* -1 */
	b[40] = 0; b[44] = 100; /* status 0, utime 100 */
	put("jobsnap", 0, b, sizeof(b));
	put("jobsnap", 1, b, 4); /* count 1, no entry: refused */
}

static void wire(void)
{
	uint8_t b[SP_HDR_LEN + 16] = { SP_WIRE_MAGIC & 0xff,
				       SP_WIRE_MAGIC >> 8, SP_WIRE_VERSION };

	for (int t = 0; t < SP_MSG_MAX; t++) {
		b[3] = (uint8_t)t;
		put("wire", t, b, sizeof(b));
	}
}

/* A BCS round's section: one item of each type, as bcs_round.c and
 * bcs_coll.c build them. */
static size_t bcs_section(uint8_t *b, size_t cap)
{
	struct bcs_w_state st = { .rank = 1, .flags = BCS_W_BLOCKED,
				  .clock = 12, .sent = 3, .pending = 1 };
	struct bcs_w_desc d = { .rank = 1, .seq = 3,
				.d = { .kind = BCS_D_SEND, .req = 77,
				       .ctx = 1, .peer = 0, .tag = 5,
				       .bytes = 5, .clock = 11 } };
	struct bcs_w_data da = { .match = 4, .off = 0 };
	struct bcs_w_coll co = { .ctx = 1, .n = 2, .member = 1, .off = 0 };
	struct bcs_w_cut cu = { .epoch = 3 };
	size_t len = 0;

	if (bcs_wire_put(b, cap, &len, BCS_W_STATE, &st, NULL, 0) ||
	    bcs_wire_put(b, cap, &len, BCS_W_DESC, &d, "hello", 5) ||
	    bcs_wire_put(b, cap, &len, BCS_W_DATA, &da, "0123456789abcdef",
			 16) ||
	    bcs_wire_put(b, cap, &len, BCS_W_COLL, &co, "\1\0\0\0", 4) ||
	    bcs_wire_put(b, cap, &len, BCS_W_CUT, &cu, NULL, 0))
		exit(1);
	return len;
}

static void bcswire(void)
{
	struct bcs_w_state st = { .rank = 0, .flags = BCS_W_GONE };
	uint8_t b[1024];
	size_t len = bcs_section(b, sizeof(b)), one = 0;

	put("bcswire", 0, b, len);
	if (bcs_wire_put(b, sizeof(b), &one, BCS_W_STATE, &st, NULL, 0))
		exit(1);
	put("bcswire", 1, b, one);
}

/* A BCS record (bcs_xchg.c): the header, then sections of
 * struct bcs_sect_hdr and 8-aligned bytes; and an acknowledgement
 * alone. */
static void bcsrec(void)
{
	uint8_t b[2048], sec[1024];
	size_t slen = bcs_section(sec, sizeof(sec)), len = sizeof(struct
								  bcs_rec_hdr);
	struct bcs_rec_hdr h = { .magic = BCS_REC_MAGIC, .inc = 0x1234,
				 .seq = 2, .ack_inc = 0x5678, .ack = 1,
				 .from = 1, .nsect = 2 };

	for (uint32_t k = 0; k < 2; k++) {
		struct bcs_sect_hdr s = { .job = 7 + k, .len = (uint32_t)slen,
					  .round = 3, .inc = k };

		memcpy(b + len, &s, sizeof(s));
		memcpy(b + len + sizeof(s), sec, slen);
		len += sizeof(s) + ((slen + 7) & ~(size_t)7);
	}
	h.len = (uint32_t)len;
	memcpy(b, &h, sizeof(h));
	put("bcsrec", 0, b, len);
	h.len = sizeof(h);
	h.nsect = 0;
	memcpy(b, &h, sizeof(h));
	put("bcsrec", 1, b, sizeof(h));
}

/* rank 0's stdin: the first byte picks a chunk (0) or an ack (1) */
static void stdin_seeds(void)
{
	uint8_t b[1 + ST_STDIN_HDR + 6];
	st_stdin_chunk_t c = { .job = 7, .seq = 1, .len = 6 };
	st_stdin_ack_t a = { .seq = 2, .job = 7 };

	b[0] = 0;
	st_stdin_chunk_put(b + 1, &c);
	memcpy(b + 1 + ST_STDIN_HDR, "hello\n", 6);
	put("stdin", 0, b, sizeof(b));
	c = (st_stdin_chunk_t){ .job = 7, .seq = 2, .flags = ST_STDIN_EOF };
	st_stdin_chunk_put(b + 1, &c);
	put("stdin", 1, b, 1 + ST_STDIN_HDR);
	b[0] = 1;
	st_stdin_ack_put(b + 1, &a);
	put("stdin", 2, b, 1 + ST_STDIN_ACK_LEN);
	a.flags = ST_STDIN_CLOSED;
	st_stdin_ack_put(b + 1, &a);
	put("stdin", 3, b, 1 + ST_STDIN_ACK_LEN);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seeds DIR\n");
		return 2;
	}
	root = argv[1];
	mkdir(root, 0755);
	hb();
	mailbox();
	manifest();
	ops();
	snapshot();
	repl();
	frame();
	seal();
	config();
	wire();
	jobsnap();
	bcswire();
	bcsrec();
	pmi();
	pmisnap();
	stdin_seeds();
	return 0;
}
