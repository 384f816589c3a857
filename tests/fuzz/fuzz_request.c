/* fuzz_request.c — a client's request frame as storm-mm's request table
 * takes it (manager/mmd/requests.c): any bytes, after the frame layer, as
 * the JSON of any request type, from root or a user, on the unix socket
 * or an authenticated TCP connection.  A job's inputs too (inputs.c):
 * the bytes after the JSON's first NUL are, over TCP, the INPUT frames
 * that follow it, and on the unix socket the content of a regular file
 * passed as two descriptors with it (a FIFO's, when the bytes are
 * none).  The harness is the
 * daemon's own modules around a real state (a one-replica SOLO group in
 * LMDB, a machine of two nodes with jobs in every state, a history), with
 * the client's connection a socketpair whose other end is drained: every
 * request is answered or left pending (a write goes to the group), never
 * crashes, and never leaves the state inconsistent.  The state is rebuilt
 * every RESET_EVERY inputs so that accepted writes cannot pile up. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clients.h"
#include "jobrec.h"
#include "mailbox.h"
#include "repl.h"
#include "requests.h"
#include "strobe.h"
#include "fuzz.h"

#define RESET_EVERY 2000

static struct {
	int up;
	char dir[64];
	st_config_t cfg;
	st_layout_t lay;
	mm_state_t *st;
	struct mmd_jobs jobs;
	struct mmd_mailbox mbox;
	struct mmd_strobe sb;
	struct mmd_repl repl;
	struct mmd_clients clients;
	struct mmd_requests rq;
	unsigned n;
} H;

static int h_applied(void *ctx, const mm_op_t *op, const mm_result_t *res)
{
	(void)ctx;
	(void)op;
	(void)res;
	return 0;
}

static void h_answer(void *ctx, struct mmd_client *c, int kind, uint32_t job,
		     const mm_result_t *res)
{
	mmd_requests_answer(&H.rq, c, kind, job, res);
	(void)ctx;
}

static void h_box(void *ctx, uint32_t node, const uint8_t *b, size_t len)
{
	(void)ctx;
	(void)node;
	(void)b;
	(void)len;
}

static void h_status(void *ctx, const rp_status_t *st)
{
	(void)ctx;
	(void)st;
}

static void h_restored(void *ctx)
{
	(void)ctx;
}

static void h_propose(void *ctx, const mm_op_t *op)
{
	(void)ctx;
	(void)op;
}

static void h_sched(void *ctx, mm_sched_conf_t *c)
{
	(void)ctx;
	mm_sched_get(H.st, c);
}

static void h_output(void *ctx, uint32_t job, uint32_t rank, int stream,
		     const uint8_t *data, uint32_t len)
{
	(void)ctx;
	(void)job;
	(void)rank;
	(void)stream;
	(void)data;
	(void)len;
}

static void apply(mm_op_t op)
{
	FUZZ_CHECK(mm_apply(H.st, &op, NULL) == 0);
}

/* Jobs in every state, some of them already in the history. */
static void populate(void)
{
	static const char *const argv[] = { "/bin/true" };
	mm_job_spec_t sp = { .name = "j", .uid = 1000, .gid = 1000,
			     .ranks = 1, .argc = 1, .argv = argv,
			     .cwd = "/" };

	for (uint32_t w = 0; w < H.cfg.nnodes; w++)
		apply((mm_op_t){ .code = MM_OP_NODE_UP,
				 .node = H.cfg.nodes[w].world_id });
	for (int i = 0; i < 12; i++)
		apply((mm_op_t){ .code = MM_OP_SUBMIT, .spec = &sp });
	for (uint32_t id = 1; id <= 6; id++)
		apply((mm_op_t){ .code = MM_OP_CANCEL, .job = id });
	apply((mm_op_t){ .code = MM_OP_TICK_RETAIN, .slice = 1,
			 .now_ms = 1000, .retain_jobs = 2 });
	FUZZ_CHECK(mmd_history_apply(&H.repl.hist, rp_txn(H.repl.rp), H.st,
				     1, 0, 0) == 0);
	FUZZ_CHECK(mmd_repl_dispatch(&H.repl) == 0);
}

static void teardown(void)
{
	char cmd[128];

	mmd_requests_fini(&H.rq);
	mmd_inputs_stop(&H.rq.inputs);
	mmd_repl_close(&H.repl);
	mmd_strobe_fini(&H.sb);
	mmd_mailbox_fini(&H.mbox);
	mmd_jobs_free(&H.jobs);
	mm_state_destroy(H.st);
	H.st = NULL;
	qb_loop_destroy(H.clients.loop);
	st_config_free(&H.cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", H.dir);
	FUZZ_CHECK(system(cmd) == 0);
	H.up = 0;
}

static void at_exit(void)
{
	if (H.up)
		teardown(); /* the state directory goes with the process */
}

static void setup(void)
{
	static int registered;
	char path[128], err[1024];
	FILE *f;
	uint32_t ids[2], cpus[2];
	const char *names[2];

	snprintf(H.dir, sizeof(H.dir), "/tmp/storm-fuzz-req-XXXXXX");
	FUZZ_CHECK(mkdtemp(H.dir) != NULL);
	snprintf(path, sizeof(path), "%s/storm.conf", H.dir);
	f = fopen(path, "w");
	FUZZ_CHECK(f != NULL);
	fprintf(f, "[cluster]\nname = fuzz\nprovider = shm\n"
		"replication = none\nstate_dir = %s/state\nrun_dir = %s\n"
		"log_level = error\nadmins = 7\n"
		"[manager m0]\naddress = fuzz-m0\n"
		"[node n1]\naddress = fuzz-n1\ncpus = 2\n"
		"[node n2]\naddress = fuzz-n2\ncpus = 2\n", H.dir, H.dir);
	fclose(f);
	FUZZ_CHECK(st_config_load(path, &H.cfg, err, sizeof(err)) == 0);
	st_layout(&H.cfg, &H.lay);
	for (uint32_t i = 0; i < 2; i++) {
		ids[i] = H.cfg.nodes[i].world_id;
		cpus[i] = H.cfg.nodes[i].cpus;
		names[i] = H.cfg.nodes[i].name;
	}
	FUZZ_CHECK(mm_state_create(3, 2, ids, names, cpus, &H.st) == 0);
	{
		const struct mmd_mailbox_hooks mh = {
			.output = h_output, .propose = h_propose };
		const struct mmd_strobe_hooks sh = {
			.propose = h_propose, .sched_conf = h_sched };
		const struct mmd_repl_hooks rh = {
			.applied = h_applied, .answer = h_answer,
			.box = h_box, .status = h_status,
			.restored = h_restored };

		FUZZ_CHECK(mmd_mailbox_init(&H.mbox, &H.lay, 3, 1, &H.jobs,
					    &mh) == 0);
		FUZZ_CHECK(mmd_strobe_init(&H.sb, &H.cfg, &H.lay, "m0",
					   &H.jobs, &H.mbox, &sh) == 0);
		FUZZ_CHECK(mmd_repl_open(&H.repl, &H.cfg, &H.cfg.managers[0],
					 &H.st, &H.mbox, &H.jobs, &rh, err,
					 sizeof(err)) == 0);
		FUZZ_CHECK(mmd_repl_start(&H.repl, err, sizeof(err)) == 0);
	}
	rp_status(H.repl.rp, &H.repl.rs);
	H.clients = (struct mmd_clients){ .cfg = &H.cfg, .unix_fd = -1,
					  .tcp_fd = -1, .spare_fd = -1,
					  .loop = qb_loop_create() };
	FUZZ_CHECK(H.clients.loop != NULL);
	H.rq = (struct mmd_requests){ .cfg = &H.cfg,
				      .host = &H.cfg.managers[0],
				      .st = &H.st, .repl = &H.repl,
				      .sb = &H.sb, .jobs = &H.jobs,
				      .clients = &H.clients };
	snprintf(path, sizeof(path), "%s/inputs", H.dir);
	FUZZ_CHECK(mmd_inputs_start(&H.rq.inputs, path, 1, err,
				    sizeof(err)) == 0);
	populate();
	H.up = 1;
	if (!registered++)
		atexit(at_exit);
}

/* Two descriptors of a regular file holding p (a FIFO's when n is 0),
 * as if they came with the request (SCM_RIGHTS). */
static void pass_fds(struct mmd_client *c, const uint8_t *p, size_t n)
{
	char path[128];
	int fd;

	if (!n) {
		int pp[2];

		FUZZ_CHECK(pipe(pp) == 0);
		c->fds[c->nfds++] = pp[0];
		c->fds[c->nfds++] = pp[1];
		return;
	}
	snprintf(path, sizeof(path), "%s/input", H.dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, p, n) == (ssize_t)n);
	c->fds[c->nfds++] = fd;
	c->fds[c->nfds++] = dup(fd);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmd_client *c;
	char *text, sink[65536];
	const uint8_t *rest;
	size_t nrest;
	int sv[2];
	char why[256];

	if (!H.up)
		setup();
	if (size < 1 || size > MMD_UNAUTH_FRAME_MAX * 4)
		return 0;
	/* the first byte: who asks (root, an administrator, a user) */
	c = calloc(1, sizeof(*c));
	FUZZ_CHECK(c != NULL);
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	c->fd = sv[0];
	c->set = &H.clients;
	c->id = ++H.clients.next_id;
	c->uid = c->gid = data[0] % 3 == 0 ? 0 : data[0] % 3 == 1 ? 7 : 1000;
	c->authed = 1;
	c->next = H.clients.list;
	H.clients.list = c;
	H.clients.n++;
	/* bit 0x40: a TCP connection (authenticated); bit 0x20: on the
	 * unix socket, two descriptors of a file with the bytes after the
	 * JSON come with it */
	c->tcp = !!(data[0] & 0x40);
	{
		const uint8_t *nul = memchr(data + 1, 0, size - 1);
		size_t tlen = nul ? (size_t)(nul - data - 1) : size - 1;

		rest = nul ? nul + 1 : data + size;
		nrest = (size_t)(data + size - rest);
		text = malloc(tlen + 1);
		FUZZ_CHECK(text != NULL);
		memcpy(text, data + 1, tlen);
		text[tlen] = '\0';
		if (!c->tcp && (data[0] & 0x20))
			pass_fds(c, rest, nrest);
		/* the first byte's top bit: a sealed frame, which an
		 * authenticated connection may not send (refused before it
		 * is read) */
		mmd_requests_handle(&H.rq, c, data[0] & 0x80 ?
				    ST_FRAME_SEALED : ST_FRAME_REQUEST, text,
				    (uint32_t)tlen);
		free(text);
	}
	/* what clients.c does after a request: descriptors not taken go */
	for (uint32_t i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	c->nfds = 0;
	/* TCP: the rest as INPUT frames, as clients.c lets them through */
	while (c->input_left && nrest) {
		uint32_t len = nrest < c->input_left ? (uint32_t)nrest :
						       (uint32_t)c->input_left;

		len = len > 7 ? len / 2 + 1 : len; /* two frames or more */
		c->input_left -= len;
		mmd_requests_input(&H.rq, c, rest, len);
		rest += len;
		nrest -= len;
	}
	/* the workers' sets: wait for each (bounded) */
	for (int spin = 0; spin < 5000 && H.rq.inputs.queued; spin++) {
		struct pollfd p = { .fd = H.rq.inputs.efd, .events = POLLIN };

		poll(&p, 1, 1);
		mmd_requests_inputs_done(&H.rq);
	}
	FUZZ_CHECK(H.rq.inputs.queued == 0);
	FUZZ_CHECK(mmd_repl_dispatch(&H.repl) == 0);
	while (read(sv[1], sink, sizeof(sink)) > 0)
		;
	/* the client goes: nothing may refer to it afterwards */
	mmd_repl_client_gone(&H.repl, c);
	mmd_requests_client_gone(&H.rq, c);
	H.clients.list = c->next;
	H.clients.n--;
	close(sv[0]);
	close(sv[1]);
	free(c->buf);
	free(c->out);
	free(c);
	FUZZ_CHECK(mm_matrix_check(H.st, why, sizeof(why)) == 0);
	if (++H.n % RESET_EVERY == 0)
		teardown();
	return 0;
}
