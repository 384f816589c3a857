/*
 * mmd_slice.c — the strobe: what storm-mm does at every slice boundary.
 *
 *  1. take the nodes' output mailboxes (records -> clients, files, exits)
 *  2. view -> NODE_DOWN / NODE_UP operations (fault detection)
 *  3. TICK (schedules pending jobs)
 *  4. termination: one COMPARE-AND-WRITE per running job over its nodes
 *     ("done slot == job id" everywhere) -> JOB_EXITED
 *  5. launch: multicast the staging job's next chunks into the nodes'
 *     ring slots, COMPARE-AND-WRITE on gv_consumed for flow control
 *  6. multicast the heartbeat block: every STAGING/RUNNING job
 *
 * Between two slices, micro_slices - 1 micro-slice boundaries only collect
 * events (1 and 4): what the nodes report is seen within a micro-slice,
 * while commands still go out once a slice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "mmd.h"

#define STAGE_BUDGET_NS 50000000u /* launch work per slice, at most */

uint64_t mmd_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time TICK carries into the state: wall-clock milliseconds, since
 * clients show submit/start/end times as dates (the state machine never
 * lets it go backwards). */
static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* For the shell's own deadlines: monotonic. */
uint64_t mmd_now_ms(struct mmd *mm)
{
	return (mmd_mono_ns() - mm->t0_ns) / 1000000u;
}

/* The strobe's COMPARE-AND-WRITEs block the main loop (clients too), so
 * each waits at most a couple of slices, and once one times out (e.g.
 * the sequencer died and the view has not changed yet) the rest of the
 * slice skips them: they are level-triggered and are simply asked again
 * at the next slice. */
static int strobe_caw(struct mmd *mm, const sp_nodeset_t *set, uint64_t var,
		      sp_cmp_t op, int64_t value, uint64_t wvar, int64_t wval,
		      int timeout_ms)
{
	int limit = (int)(2 * mm->cfg.slice_us / 1000u);
	int rc;

	if (limit < 20)
		limit = 20;
	if (timeout_ms > limit)
		timeout_ms = limit;
	/* after a timeout, none for ten slices: the sequencer is probably
	 * gone until the view changes, and clients wait while we block */
	if (mm->caw_stalled && mm->slice < mm->caw_stalled + 10)
		return -ETIMEDOUT;
	rc = sp_compare_and_write(mm->w, set, var, op, value, wvar, wval,
				  timeout_ms);
	if (rc == -ETIMEDOUT) {
		mm->caw_stalled = mm->slice;
		qb_log(LOG_DEBUG, "slice %llu: a compare timed out; the others "
		       "wait for the next slice", (unsigned long long)mm->slice);
	}
	return rc;
}

/* The jobs that hold cpus (STAGING, RUNNING), ascending: rebuilt only
 * when the state says one started or stopped, so the per-slice work does
 * not grow with the queue. */
uint32_t mmd_active(struct mmd *mm)
{
	mm_job_t j;
	uint32_t n = 0;

	if (mm->active_valid && mm->active_gen == mm_active_gen(mm->st))
		return mm->nactive;
	for (uint32_t id = 1; mm_job_next(mm->st, id, &j) == 0; id = j.id + 1) {
		if (j.state != MM_JOB_STAGING && j.state != MM_JOB_RUNNING)
			continue;
		if (n == mm->active_cap) {
			uint32_t cap = mm->active_cap ? 2 * mm->active_cap : 64;
			uint32_t *a = realloc(mm->active, cap * sizeof(*a));

			if (!a)
				break;
			mm->active = a;
			mm->active_cap = cap;
		}
		mm->active[n++] = j.id;
	}
	mm->nactive = n;
	mm->active_gen = mm_active_gen(mm->st);
	mm->active_valid = 1;
	return n;
}

/* ---- 1. mailboxes ---------------------------------------------------------- */

static int32_t *status_of(struct mmd *mm, uint32_t job, uint32_t ranks)
{
	uint32_t k = job % ST_DONE_SLOTS;

	if (mm->status_job[k] != job) {
		free(mm->status[k]);
		mm->status[k] = calloc(ranks ? ranks : 1, sizeof(int32_t));
		for (uint32_t r = 0; mm->status[k] && r < ranks; r++)
			mm->status[k][r] = -1;
		mm->status_job[k] = job;
		mm->status_got[k] = 0;
	}
	return mm->status[k];
}

/* pat with %j (job id) and %r (rank) expanded, relative to cwd. */
static void expand(char *out, size_t cap, const char *pat, const char *cwd,
		   uint32_t job, uint32_t rank)
{
	size_t n = 0;

	if (pat[0] != '/' && cwd && cwd[0])
		n = (size_t)snprintf(out, cap, "%s/", cwd);
	for (const char *s = pat; *s && n + 12 < cap; s++) {
		if (s[0] == '%' && (s[1] == 'j' || s[1] == 'r')) {
			n += (size_t)snprintf(out + n, cap - n, "%u",
					      s[1] == 'j' ? job : rank);
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n < cap ? n : cap - 1] = '\0';
}

static void batch_write(struct mmd *mm, const mm_job_t *j, uint32_t rank,
			int stream, const uint8_t *data, uint32_t len)
{
	const char *pat = stream ? j->err_path : j->out_path;
	struct mmd_out *o;
	uint32_t key;

	if (!pat || !pat[0])
		pat = stream ? "storm-%j.err" : "storm-%j.out";
	key = strstr(pat, "%r") ? rank : UINT32_MAX;
	for (o = mm->outs; o && !(o->job == j->id && o->rank == key);
	     o = o->next)
		;
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return;
		o->job = j->id;
		o->rank = key;
		o->fd[0] = o->fd[1] = -1;
		o->next = mm->outs;
		mm->outs = o;
	}
	if (o->fd[stream] < 0) {
		char path[4096];

		expand(path, sizeof(path), pat, j->cwd, j->id, rank);
		o->fd[stream] = open(path, O_WRONLY | O_CREAT | O_APPEND |
				     O_CLOEXEC, 0644);
		if (o->fd[stream] < 0) {
			qb_log(LOG_WARNING, "job %u: cannot open its output "
			       "file %s: %s", j->id, path, strerror(errno));
			return;
		}
	}
	if (write(o->fd[stream], data, len) < 0)
		qb_log(LOG_WARNING, "job %u: output file: %s", j->id,
		       strerror(errno));
}

static void outs_close(struct mmd *mm, uint32_t job)
{
	for (struct mmd_out **pp = &mm->outs; *pp;) {
		struct mmd_out *o = *pp;

		if (o->job != job) {
			pp = &o->next;
			continue;
		}
		for (int s = 0; s < 2; s++)
			if (o->fd[s] >= 0)
				close(o->fd[s]);
		*pp = o->next;
		free(o);
	}
}

static void take_record(struct mmd *mm, const st_rec_t *rec)
{
	mm_job_t j;

	if (mm_job_get(mm->st, rec->job, &j))
		return;
	if (rec->type == ST_REC_STDOUT || rec->type == ST_REC_STDERR) {
		int stream = rec->type == ST_REC_STDERR;

		if (j.batch) {
			/* the strobe master writes batch files (one writer) */
			if (mm->master)
				batch_write(mm, &j, rec->rank, stream,
					    rec->data, rec->len);
		} else
			mmd_client_output(mm, rec->job, rec->rank, stream + 1,
					  rec->data, rec->len);
	} else if (rec->type == ST_REC_EXIT) {
		int32_t *st = status_of(mm, rec->job, j.ranks);
		int32_t v;

		if (!st || rec->rank >= j.ranks || rec->len != 4)
			return;
		memcpy(&v, rec->data, 4);
		if (st[rec->rank] == -1)
			mm->status_got[rec->job % ST_DONE_SLOTS]++;
		st[rec->rank] = v;
	} else if (rec->type == ST_REC_FAIL) {
		char why[MM_REASON_MAX];
		mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = rec->job,
			       .reason = why };
		mm_result_t res;

		(void)res;
		snprintf(why, sizeof(why), "%.*s", (int)rec->len, rec->data);
		mmd_propose(mm, &op);
	}
}

/* Nodes send each box to every manager replica; the strobe master
 * multicasts the new ones to the group (rp_cast) and acts on them, like
 * every replica, when the group delivers them (mmd_box_agreed). */
static void take_boxes(struct mmd *mm)
{
	if (!mm->master)
		return;
	for (uint32_t n = mm->cfg.nmanagers; n < mm->nworld; n++) {
		uint8_t *box = mm->gmem + mm->lay.outbox +
			       (uint64_t)mm->lay.outbox_len * n;
		uint64_t seq;
		uint32_t len;

		/* a new box is one with another number: a restarted node
		 * numbers its boxes from a new base */
		if (st_box_get_hdr(box, mm->lay.outbox_len, &seq, &len) ||
		    seq == 0 || seq == mm->box_cast[n])
			continue;
		if (seq == mm->box_seq[n]) { /* agreed before: ack again */
			mmd_box_agreed(mm, n, box, mm->lay.outbox_len);
			mm->box_cast[n] = seq;
			continue;
		}
		/* the cast: node u32 | the box as the node wrote it */
		uint8_t *msg = malloc(4 + ST_BOX_HDR + len);

		if (!msg)
			return;
		memcpy(msg, &n, 4);
		memcpy(msg + 4, box, ST_BOX_HDR + len);
		int crc = rp_cast(mm->rp, msg, 4 + ST_BOX_HDR + len);

		qb_log(LOG_DEBUG, "box %llu of node %u: %u bytes cast (%d)",
		       (unsigned long long)seq, n, len, crc);
		if (crc == 0)
			mm->box_cast[n] = seq;
		free(msg);
	}
}

void mmd_box_agreed(struct mmd *mm, uint32_t node, const uint8_t *box,
		    size_t boxlen)
{
	uint64_t seq;
	uint32_t len;

	if (st_box_get_hdr(box, boxlen, &seq, &len) ||
	    ST_BOX_HDR + (size_t)len > boxlen)
		return;
	qb_log(LOG_DEBUG, "box %llu of node %u agreed (%s)",
	       (unsigned long long)seq, node,
	       seq != mm->box_seq[node] ? "new" : "seen");
	if (seq != mm->box_seq[node]) {
		size_t off = ST_BOX_HDR;
		st_rec_t rec;

		while (st_box_next(box, ST_BOX_HDR + len, &off, &rec) == 1)
			take_record(mm, &rec);
		mm->box_seq[node] = seq;
	}
	if (!mm->master)
		return;
	/* every replica has it: the node may forget it */
	mm->ack[node] = (int64_t)seq;
	sp_nodeset_clear(mm->tmp);
	sp_nodeset_add(mm->tmp, node);
	sp_xfer_and_signal(mm->w, mm->tmp, &mm->ack[node], 8, mm->lay.outack,
			   SP_EV_NONE, ST_EV_OUTACK, NULL, 0);
}

static void heartbeat(struct mmd *mm);

int mmd_on_notify(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	uint64_t v;
	int rc;

	(void)revents;
	if (!mm->w || (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN))
		return 0;
	while (sp_test_event(mm->w, ST_EV_OUT, 0) == 0)
		take_boxes(mm);
	/* the slots' and the acks' completions are only the master's */
	if (!mm->master)
		for (uint32_t k = 0; k < 16; k++)
			while (sp_test_event(mm->w, k, 0) == 0)
				;
	while ((rc = sp_test_event(mm->w, ST_EV_LOCAL_HB, 0)) != -EAGAIN) {
		mmd_stats_hb_done(mm, rc);
		if (rc == 0 && mm->hb_inflight)
			mm->hb_done_slice = mm->hb_sent_slice;
		mm->hb_inflight = 0;
	}
	/* a slice boundary passed while the last heartbeat was in flight:
	 * its commands (the active row above all) go now, late, rather than
	 * at the next boundary — skipping every other heartbeat would show
	 * the nodes the same gang row each time */
	if (mm->master && mm->hb_owed && !mm->hb_inflight) {
		mm->hb_owed = 0;
		heartbeat(mm);
	}
	return 0;
}

/* ---- 2. view ---------------------------------------------------------------- */

void mmd_check_view(struct mmd *mm)
{
	sp_view_info_t vi;
	uint32_t n = mm_node_count(mm->st);

	if (!mm->master || sp_view(mm->w, &vi, mm->live))
		return;
	for (uint32_t i = 0; i < n; i++) {
		mm_node_t node;
		mm_op_t op = { 0 };
		uint64_t joined;
		int in;

		if (mm_node_get(mm->st, i, &node))
			continue;
		in = sp_nodeset_has(mm->live, node.id);
		if (in && sp_view_joined(mm->w, node.id, &joined) == 0 &&
		    joined != mm->joined[node.id]) {
			/* it joined again: a new incarnation, whatever ran on
			 * the old one is gone */
			if (mm->seen[node.id] && node.state == MM_NODE_UP) {
				op.code = MM_OP_NODE_DOWN;
				op.node = node.id;
				op.reason = "restarted: its processes are gone";
				qb_log(LOG_WARNING, "node %s restarted",
				       node.name);
				mmd_propose(mm, &op);
				node.state = MM_NODE_DOWN;
			}
			mm->joined[node.id] = joined;
		}
		if (in)
			mm->seen[node.id] = 1;
		if (!in && node.state == MM_NODE_UP) {
			op.code = MM_OP_NODE_DOWN;
			op.node = node.id;
			op.reason = mm->seen[node.id] ?
				"missed heartbeats: left the view" :
				"has not joined yet";
			if (mm->seen[node.id])
				qb_log(LOG_WARNING, "node %s failed: missed "
				       "heartbeats", node.name);
			mmd_propose(mm, &op);
		} else if (in && node.state == MM_NODE_DOWN) {
			mm->joined_slice[node.id] = mm->slice;
			op.code = MM_OP_NODE_UP;
			op.node = node.id;
			qb_log(LOG_NOTICE, "node %s is back", node.name);
			mmd_propose(mm, &op);
		}
	}
}

/* ---- 2b. missed heartbeats ---------------------------------------------- */

/* Nodes of set whose node manager has not applied heartbeat `want`:
 * halve the set with COMPARE-AND-WRITE until each culprit stands alone
 * (STORM's binary search: log2(N) compares for one culprit). */
static void locate(struct mmd *mm, sp_nodeset_t *set, int64_t want)
{
	sp_nodeset_t *half = NULL;
	uint32_t n = sp_nodeset_count(set), k = 0;
	int rc;

	if (n == 0)
		return;
	rc = strobe_caw(mm, set, mm->lay.gv_slice, SP_CMP_GE,
				  want, SP_NO_WRITE, 0, 1000);
	if (rc != 0)
		return; /* all applied it, or the view changed: not now */
	if (n == 1) {
		uint32_t x = (uint32_t)sp_nodeset_next(set, 0);
		mm_op_t op = { .code = MM_OP_NODE_DOWN, .node = x,
			       .reason = "missed heartbeats: its node manager "
					 "is not responding" };
		mm_result_t res;
		mm_node_t node;

		if (mm_node_by_id(mm->st, x, &node) == 0)
			qb_log(LOG_WARNING, "node %s missed heartbeats: taken "
			       "out of the view", node.name);
		(void)res;
		mmd_propose(mm, &op);
		/* out of the view too: a node manager that wakes up finds
		 * itself expelled, exits, and is restarted to rejoin */
		sp_report_failure(mm->w, x);
		return;
	}
	if (sp_nodeset_create(mm->nworld, &half))
		return;
	for (int64_t x = sp_nodeset_next(set, 0); x >= 0;
	     x = sp_nodeset_next(set, (uint32_t)x + 1))
		if (k++ < n / 2) {
			sp_nodeset_add(half, (uint32_t)x);
			sp_nodeset_del(set, (uint32_t)x);
		}
	locate(mm, half, want);
	locate(mm, set, want);
	sp_nodeset_destroy(half);
}

static void check_strobe(struct mmd *mm)
{
	uint64_t lag = mm->cfg.hb_timeout_ms * 1000ull / mm->cfg.slice_us;
	sp_nodeset_t *set = NULL;
	uint32_t n = mm_node_count(mm->st);

	lag = lag < 10 ? 10 : lag;
	/* every lag/2 slices; only heartbeats every node received count */
	if (mm->slice % (lag / 2) || mm->hb_done_slice <= lag ||
	    sp_nodeset_create(mm->nworld, &set))
		return;
	for (uint32_t i = 0; i < n; i++) {
		mm_node_t node;

		if (mm_node_get(mm->st, i, &node) == 0 &&
		    node.state == MM_NODE_UP &&
		    sp_nodeset_has(mm->live, node.id) &&
		    mm->joined_slice[node.id] + lag < mm->slice)
			sp_nodeset_add(set, node.id);
	}
	locate(mm, set, (int64_t)(mm->hb_done_slice - lag));
	sp_nodeset_destroy(set);
}

/* ---- 4. termination ------------------------------------------------------------ */

static void check_ends(struct mmd *mm)
{
	uint32_t n = mmd_active(mm);
	/* a job of a gang row that is not running now cannot end by itself
	 * (its processes are stopped): its compare waits for its turn, so
	 * time-sharing costs the strobe no more compares than one row */
	int shared = mm_matrix_shared(mm->st);
	uint32_t row = shared ? mm_active_row(mm->st, mm->slice) : 0;
	mm_job_t j;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = mm->active[i] % ST_DONE_SLOTS;
		mm_op_t op = { .code = MM_OP_JOB_EXITED, .job = mm->active[i] };
		mm_result_t res;
		int rc;

		if (mm_job_get(mm->st, mm->active[i], &j) ||
		    j.state != MM_JOB_RUNNING || (shared && j.row != row))
			continue;
		rc = strobe_caw(mm, j.nodes,
					  st_done_var(&mm->lay, j.id),
					  SP_CMP_EQ, j.id, SP_NO_WRITE, 0,
					  1000);
		if (rc != 1 || mm->status_job[k] != j.id ||
		    mm->status_got[k] < j.ranks || mm->exit_proposed[k] == j.id)
			continue;
		qb_log(LOG_DEBUG, "job %u: ended everywhere (slice %llu)",
		       j.id, (unsigned long long)mm->slice);
		op.nstatus = j.ranks;
		op.status = mm->status[k];
		mm->t_end[k] = mmd_mono_ns();
		(void)res;
		mm->exit_proposed[k] = j.id;
		mmd_propose(mm, &op);
	}
}

/* ---- 5. launch ---------------------------------------------------------------- */

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The stream (manifest, then every file) laid out as the slot images it
 * is sent in — a chunk header, then up to chunk - header bytes — so that
 * each chunk goes out from where the file was read into, without a copy. */
struct chunked {
	uint8_t *img;
	uint32_t chunk, data;
	size_t off; /* stream bytes placed */
};

static uint8_t *at(struct chunked *c, size_t *room)
{
	size_t k = c->off / c->data, pos = c->off % c->data;

	*room = c->data - pos;
	return c->img + k * c->chunk + ST_CHUNK_HDR + pos;
}

static void put(struct chunked *c, const uint8_t *p, size_t n)
{
	while (n) {
		size_t room, m;
		uint8_t *dst = at(c, &room);

		m = n < room ? n : room;
		memcpy(dst, p, m);
		p += m;
		n -= m;
		c->off += m;
	}
}

/* Read n bytes of fd straight into the stream. */
static int put_file(struct chunked *c, int fd, size_t n)
{
	while (n) {
		size_t room;
		uint8_t *dst = at(c, &room);
		ssize_t r = read(fd, dst, n < room ? n : room);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO; /* it shrank under us */
		c->off += (size_t)r;
		n -= (size_t)r;
	}
	return 0;
}

/* Manifest + files, as chunk images in mm->stage. */
static int build_stream(struct mmd *mm, const mm_job_t *j, char *why,
			size_t whylen)
{
	uint32_t nf = 1 + j->nfiles;
	st_manifest_t m = { .job = j->id, .ranks = j->ranks,
			    .rank_node = (uint32_t *)j->rank_node,
			    .argc = j->argc, .argv = (char **)j->argv,
			    .envc = j->envc, .env = (char **)j->env,
			    .cwd = (char *)j->cwd, .nfiles = nf };
	struct chunked c = { .chunk = mm->lay.chunk,
			     .data = mm->lay.chunk - ST_CHUNK_HDR };
	int *fds = malloc(nf * sizeof(int));
	uint8_t *mf = NULL;
	size_t mflen = 0, total;
	uint32_t chunks = 0;
	int rc = 0;

	m.file_names = calloc(nf, sizeof(char *));
	m.file_sizes = calloc(nf, sizeof(uint64_t));
	m.file_modes = calloc(nf, sizeof(uint32_t));
	for (uint32_t i = 0; fds && i < nf; i++)
		fds[i] = -1;
	if (!fds || !m.file_names || !m.file_sizes || !m.file_modes) {
		rc = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nf; i++) {
		const char *path = i ? j->files[i - 1] : j->argv[0];
		struct stat st;

		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0 || fstat(fds[i], &st) < 0 ||
		    !S_ISREG(st.st_mode)) {
			rc = fds[i] < 0 ? -errno : -EINVAL;
			snprintf(why, whylen, "cannot read %s on the manager: "
				 "%s", path, rc == -EINVAL ?
				 "not a regular file" : storm_strerror(rc));
			goto out;
		}
		m.file_names[i] = (char *)base(path);
		m.file_sizes[i] = (uint64_t)st.st_size;
		m.file_modes[i] = st.st_mode & 0777;
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(m.file_names[k], m.file_names[i])) {
				rc = -EINVAL;
				snprintf(why, whylen, "two files named %s: "
					 "file names must differ",
					 m.file_names[i]);
				goto out;
			}
	}
	if ((rc = st_manifest_encode(&m, &mf, &mflen))) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	total = mflen;
	for (uint32_t i = 0; i < nf; i++)
		total += m.file_sizes[i];
	chunks = (uint32_t)((total + c.data - 1) / c.data);
	c.img = malloc((size_t)chunks * c.chunk);
	if (!c.img) {
		rc = -ENOMEM;
		snprintf(why, whylen, "out of memory for %zu bytes", total);
		goto out;
	}
	put(&c, mf, mflen);
	for (uint32_t i = 0; i < nf; i++) {
		rc = put_file(&c, fds[i], m.file_sizes[i]);
		if (rc) {
			snprintf(why, whylen, "cannot read %s on the manager: "
				 "%s", i ? j->files[i - 1] : j->argv[0],
				 storm_strerror(rc));
			free(c.img);
			goto out;
		}
	}
	for (uint32_t k = 0; k < chunks; k++)
		st_chunk_put_hdr(c.img + (size_t)k * c.chunk, j->id, k, chunks,
				 (uint32_t)(k + 1 < chunks ? c.data :
					    total - (size_t)k * c.data));
	mm->stage.stream = c.img;
	mm->stage.len = total;
	mm->stage.total = chunks;
out:
	for (uint32_t i = 0; fds && i < nf; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(mf);
	free(m.file_names);
	free(m.file_sizes);
	free(m.file_modes);
	return rc;
}

void mmd_stage_free(struct mmd *mm)
{
	free(mm->stage.stream);
	mm->stage.stream = NULL;
	mm->stage.job = 0;
}

static uint32_t inflight_max(struct mmd *mm)
{
	return mm->lay.slots < MMD_MAX_INFLIGHT ? mm->lay.slots :
						   MMD_MAX_INFLIGHT;
}

static void stage_fail(struct mmd *mm, uint32_t job, const char *why)
{
	mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = job, .reason = why };
	mm_result_t res;

	qb_log(LOG_WARNING, "job %u: launch failed: %s", job, why);
	(void)res;
	mmd_propose(mm, &op);
	mmd_stage_free(mm);
}

static void stage(struct mmd *mm)
{
	struct mmd_stage *s = &mm->stage;
	uint32_t data_len = mm->lay.chunk - ST_CHUNK_HDR;
	uint64_t until = mmd_mono_ns() + STAGE_BUDGET_NS;
	mm_job_t j;
	char why[512];

	if (s->job && (mm_job_get(mm->st, s->job, &j) ||
		       j.state != MM_JOB_STAGING)) {
		/* cancelled or failed meanwhile: wait out what is in flight */
		for (uint32_t k = 0; k < inflight_max(mm); k++)
			if (s->busy[k] &&
			    sp_test_event(mm->w, MMD_SLOT_EV + k, 50) != -EAGAIN)
				s->busy[k] = 0;
		mmd_stage_free(mm);
	}
	if (!s->job) {
		uint32_t id = 0, n = mmd_active(mm);

		for (uint32_t i = 0; i < n && !id; i++)
			if (!mm_job_get(mm->st, mm->active[i], &j) &&
			    j.state == MM_JOB_STAGING &&
			    j.id != mm->staged_proposed)
				id = j.id;
		if (!id || mm_job_get(mm->st, id, &j))
			return;
		mm->t_stage[j.id % ST_DONE_SLOTS] = mmd_mono_ns();
		if (build_stream(mm, &j, why, sizeof(why))) {
			stage_fail(mm, j.id, why);
			return;
		}
		s->job = j.id;
		mm->t_staged[j.id % ST_DONE_SLOTS] = 0;
		mm->t_end[j.id % ST_DONE_SLOTS] = 0;
		s->next = 0;
		s->started_ns = mmd_mono_ns();
	}
	while (s->next < s->total && mmd_mono_ns() < until) {
		uint32_t c = s->next, k = c % inflight_max(mm);
		uint32_t slot = c % mm->lay.slots;
		size_t off = (size_t)c * data_len;
		uint32_t len = (uint32_t)(s->len - off < data_len ?
					  s->len - off : data_len);
		const uint8_t *img = s->stream + (size_t)c * mm->lay.chunk;
		int rc;

		if (s->busy[k]) {
			uint64_t now = mmd_mono_ns();

			rc = sp_test_event(mm->w, MMD_SLOT_EV + k,
					   now >= until ? 0 :
					   (int)((until - now) / 1000000u) + 1);
			if (rc == -EAGAIN || rc == -ETIMEDOUT)
				return; /* next slice */
			s->busy[k] = 0;
			if (rc) {
				snprintf(why, sizeof(why), "file multicast "
					 "failed: %s", storm_strerror(rc));
				stage_fail(mm, j.id, why);
				return;
			}
		}
		if (c >= mm->lay.slots) {
			/* the slot's previous chunk is on every node's disk */
			rc = strobe_caw(mm, j.nodes,
						  mm->lay.gv_consumed, SP_CMP_GE,
						  st_consumed(j.id, c -
							      mm->lay.slots + 1),
						  SP_NO_WRITE, 0, 1000);
			if (rc != 1) {
				qb_log(LOG_DEBUG, "job %u: chunk %u waits for "
				       "its slot (%d)", j.id, c, rc);
				return; /* not yet, or a node left: retry */
			}
		}
		rc = sp_xfer_and_signal(mm->w, j.nodes, img,
					ST_CHUNK_HDR + len, mm->lay.ring +
					(uint64_t)slot * mm->lay.chunk,
					MMD_SLOT_EV + k, ST_EV_CHUNK, why,
					sizeof(why));
		if (rc) {
			/* a node left the view: the view check fails the job */
			qb_log(LOG_DEBUG, "job %u: chunk %u: %s", j.id, c, why);
			return;
		}
		s->busy[k] = 1;
		s->next++;
	}
	if (s->next < s->total)
		return;
	if (strobe_caw(mm, j.nodes, mm->lay.gv_consumed,
				 SP_CMP_GE, st_consumed(j.id, s->total),
				 SP_NO_WRITE, 0, 1000) == 1) {
		mm_op_t op = { .code = MM_OP_JOB_STAGED, .job = j.id };
		mm_result_t res;

		for (uint32_t k = 0; k < inflight_max(mm); k++)
			if (s->busy[k] &&
			    sp_test_event(mm->w, MMD_SLOT_EV + k, 50) != -EAGAIN)
				s->busy[k] = 0;
		qb_log(LOG_INFO, "job %u: %zu bytes on %u node(s) in %.1f ms",
		       j.id, s->len, sp_nodeset_count(j.nodes),
		       (double)(mmd_mono_ns() - s->started_ns) / 1e6);
		mm->t_staged[j.id % ST_DONE_SLOTS] = mmd_mono_ns();
		(void)res;
		mm->staged_proposed = j.id;
		mmd_propose(mm, &op);
		mmd_stage_free(mm);
	}
}

/* ---- 6. heartbeat ---------------------------------------------------------- */

static void heartbeat(struct mmd *mm)
{
	st_hb_job_t *list = mm->hb_list;
	uint32_t n = 0;
	mm_job_t j;
	int len;

	if (mm->hb_inflight) {
		qb_log(LOG_DEBUG, "slice %llu: heartbeat late",
		       (unsigned long long)mm->slice);
		mm->hb_late++;
		mm->hb_owed = 1;
		return;
	}
	uint32_t na = mmd_active(mm);
	/* the gang matrix's row whose turn it is: its jobs RUN, the other
	 * rows' STOP (with one busy row, as at MPL 1, every job RUNs) */
	uint32_t row = mm_active_row(mm->st, mm->slice);
	int shared = mm_matrix_shared(mm->st);

	for (uint32_t i = 0; n < ST_HB_MAX_JOBS && i < na; i++) {
		if (mm_job_get(mm->st, mm->active[i], &j))
			continue;
		if (j.state == MM_JOB_STAGING)
			list[n++] = (st_hb_job_t){ j.id, ST_HB_STAGING };
		else if (j.state == MM_JOB_RUNNING)
			list[n++] = (st_hb_job_t){ j.id, !shared ||
				j.row == row ? ST_HB_RUN : ST_HB_STOP };
	}
	len = st_hb_encode(mm->hb, mm->lay.hb_len, mm->slice, list, n);
	sp_nodeset_copy(mm->tmp, mm->live);
	for (uint32_t i = 0; i < mm->cfg.nmanagers; i++)
		sp_nodeset_del(mm->tmp, i);
	if (len < 0 || sp_nodeset_count(mm->tmp) == 0)
		return;
	if (sp_xfer_and_signal(mm->w, mm->tmp, mm->hb, (size_t)len,
			       mm->lay.hb, ST_EV_LOCAL_HB, ST_EV_HB, NULL,
			       0) == 0) {
		mm->hb_inflight = 1;
		mm->hb_sent_slice = mm->slice;
	}
}


/* A TICK goes through the group (and the log), so it is proposed only
 * when it can change something: jobs wait, a time limit may pass, or
 * something freed cpus; at least once a second to keep the state's
 * clock near the wall clock.  One at a time. */
static int tick_due(struct mmd *mm)
{
	mm_job_t j;

	uint32_t n;
	uint64_t now = mmd_now_ms(mm);

	if (mm->tick_inflight)
		return now - mm->tick_last_ms > 2000; /* lost */
	if (now - mm->tick_last_ms >= 1000)
		return 1;
	/* a new job or freed cpus: only worth a tick if some PE is free
	 * (a full machine with a long queue must not pay a scan per slice) */
	if (mm->tick_wanted && mm_free_pes(mm->st) > 0)
		return 1;
	/* time limits: a tenth of a second is their resolution */
	n = mmd_active(mm);
	for (uint32_t i = 0; now - mm->tick_last_ms >= 100 && i < n; i++)
		if (!mm_job_get(mm->st, mm->active[i], &j) &&
		    j.time_limit_ms)
			return 1;
	return 0;
}

/* This replica becomes (or stops being) the strobe master.  Everything
 * the strobe needs is re-read: the nodes' state is level-triggered (the
 * job list, done slots, mailboxes still held until acknowledged), the
 * job table and exit statuses are agreed.  Slice numbers continue from
 * the wall clock so they never go backwards across masters. */
void mmd_master_changed(struct mmd *mm, int master)
{
	struct timespec ts;

	mm->master = master;
	mmd_stage_free(mm);
	mm->staged_proposed = 0;
	if (!master) {
		qb_log(LOG_NOTICE, "manager %s: no longer the strobe master",
		       mm->host->name);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	mm->slice = ((uint64_t)ts.tv_sec * 1000000u +
		     (uint64_t)ts.tv_nsec / 1000u) / mm->cfg.slice_us;
	mm->hb_inflight = 0;
	mm->hb_owed = 0;
	mm->hb_done_slice = 0;
	mm->tick_inflight = 0;
	mm->tick_wanted = 1;
	sp_view_info_t vi;

	sp_view(mm->w, &vi, mm->live);
	for (uint32_t x = 0; x < mm->nworld; x++) {
		mm->box_cast[x] = 0;
		mm->joined_slice[x] = mm->slice;
		sp_view_joined(mm->w, x, &mm->joined[x]);
		mm->seen[x] = (uint8_t)sp_nodeset_has(mm->live, x);
	}
	for (uint32_t k = 0; k < ST_DONE_SLOTS; k++)
		mm->exit_proposed[k] = 0;
	qb_log(LOG_NOTICE, "manager %s: strobe master from slice %llu",
	       mm->host->name, (unsigned long long)mm->slice);
	mmd_sched_apply(mm);
	take_boxes(mm);
}

/* Micro-slice boundaries between slices: the strobe master collects
 * events (mailboxes, the termination compares) without sending commands,
 * so a job's end is seen a fraction of a slice after it happens. */
static void micro_slice(struct mmd *mm)
{
	mmd_on_notify(mm->nfd, 0, mm);
	check_ends(mm);
	mmd_client_waits(mm);
	mmd_client_reap(mm);
}

/* The strobe's timerfd fired: one or more micro-slice boundaries passed
 * (a periodic kernel timer: no drift, and no polling of libqb's
 * millisecond timers in between). */
int mmd_on_timer(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	mm_op_t op = { .code = MM_OP_TICK };
	mm_result_t res;
	uint64_t n = 0;
	int full = 0;

	(void)revents;
	if (read(fd, &n, sizeof(n)) != sizeof(n) || n == 0)
		return 0;
	if (n > 1)
		mm->micro_late += n - 1;
	/* late by several: one pass, but a slice boundary is not skipped */
	for (uint64_t i = 0; i < n; i++)
		full |= ++mm->micro % mm->cfg.micro_slices == 0;
	mmd_stats_timer(mm, fd, n);
	mmd_repl_tick(mm);
	if (!mm->master) {
		/* a replica that is not the strobe master only serves */
		mmd_on_notify(mm->nfd, 0, mm);
		mmd_client_waits(mm);
		mmd_client_reap(mm);
		return 0;
	}
	if (!full) {
		micro_slice(mm);
		return 0;
	}
	mm->slice++;
	mmd_on_notify(mm->nfd, 0, mm);
	take_boxes(mm);
	mmd_check_view(mm);
	check_strobe(mm);
	(void)res;
	if (tick_due(mm)) {
		op.slice = mm->slice;
		op.now_ms = wall_ms();
		mm->tick_inflight = 1;
		mm->tick_wanted = 0;
		mm->tick_last_ms = mmd_now_ms(mm);
		mmd_propose(mm, &op);
	}
	check_ends(mm);
	stage(mm);
	heartbeat(mm);
	mmd_stats_sent(mm);
	mmd_client_waits(mm);
	mmd_client_reap(mm);
	return 0;
}

/* A job reached a terminal state: the shell's side effects. */
void mmd_job_ended(struct mmd *mm, const mm_job_t *j)
{
	outs_close(mm, j->id);
	mmd_client_job_ended(mm, j);
}
