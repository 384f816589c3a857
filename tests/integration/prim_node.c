/*
 * prim_node.c — one node process of the libfabric integration tests
 * (test_fabric.c starts N of them through tests/harness/sp_cluster).
 *
 *   prim_node --node I --nodes N --provider P --addrs A0,… --scenario S
 *
 * Scenarios (every node runs the same one):
 *   xfer  node 0 multicasts a multi-chunk buffer to every node, node 3 one
 *         to the others (a source outside its set); every node checks the
 *         bytes and the remote event, raises a local "verified" flag and
 *         tells node 0, which asks everyone at once with one CAW.
 *   caw   every node sets a variable (node 2 differently); node 0 checks
 *         the four comparisons true and false, writes only when true, and
 *         on a subset.
 *   kill  the driver SIGKILLs node N-1 after every node printed READY; the
 *         survivors wait for a stable view without it, then agree on its
 *         epoch through a CAW.
 * XFER on the staging arena (test_fabric_xfer.c; 5 MiB global memory,
 * 256 KiB chunks, fan-out 2 so that the trees have interior nodes, at
 * least 7 nodes):
 *   xbig    two rounds of: node 0 sends 3 MiB + 1000 bytes (13 chunks) to
 *           every node while node 5 sends 1 MiB + 12 to the others; every
 *           node checks both regions byte for byte, and that its staging
 *           arena holds pages (the transfers took the RMA path); a CAW
 *           agrees that everyone verified.
 *   xmsg    the same with sp_config_set_staging(cfg, 0): by messages.
 *   xsmall  a 128 KiB arena: node 0's 1 MiB + 12 cannot fit (messages),
 *           its 96 KiB and node 5's 96 KiB can, or not while the other
 *           holds the arena (then a node stages privately and forwards
 *           by messages); all three delivered, two rounds.
 *   xkill   (8 nodes) rounds of a 3 MiB + 1000 transfer from node 0 to
 *           the live nodes (but one, in two rounds); the driver stops
 *           then kills, or kills as it starts, an interior node of the
 *           round's tree in rounds 1-3 (xkill_rounds[]); node 0 sends the
 *           outcome, and every survivor checks all or nothing: the local
 *           event gave -STORM_EABORTED and its region is unchanged with no
 *           remote event, or 0 and it holds every byte (a node outside the
 *           set: unchanged either way).  Round 4 must commit.
 *   xkill-root  the same with children of the membership root as victims
 *           (see xkill_root_rounds[]).
 *   silent  (8 nodes, fan-out 2) node 1, a leaf child of the root, is
 *           stopped; the survivors' view must lack node 1 only (a
 *           regression: the root expelled the live children it adopted).
 *
 * Output: "READY <epoch>" once the world is open, "PASS" or "FAIL: why" at
 * the end; exit 0 = pass.  Every wait is bounded (WAIT_MS).  The library's
 * libqb log goes to stderr (same file) from level info.
 *
 *   caw-dead  node 0 compares over every node after node n-1 was killed
 *           and reaped: a view change, never a stale "true" (the direct
 *           compares of shm).
 *
 * Commands to the driver (fabric_driver.c), printed by node 0 at the start
 * of a line (xkill, xkill-root, silent, caw-dead):
 *   "STOP v r"  SIGSTOP node v, wait until it is stopped, then SIGUSR1
 *               node 0 (which waits for it, sigtimedwait, bounded);
 *   "KILL v r"  SIGKILL node v (xkill: printed right after node 0 started
 *               round r's transfer);
 *   "REAP v r"  SIGKILL node v, wait until it is reaped, then SIGUSR1
 *               node 0.
 *
 * Shutdown without losing trailing messages: the libfabric back-end does
 * not flush on sp_close(), so node 0 ends with a "bye" XFER to everyone and
 * closes only when its local event says every node committed it (every
 * message to node 0 before that has arrived); the others close once node 0
 * has left their view, so they never drop a message node 0 still needs.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "sp_cluster.h"
#include "storm_primitives.h"

#define WAIT_MS 15000
#define GMEM (64 * 1024)
#define CHUNK 4096

/* global variables */
#define G_VERIFIED 0
#define G_DONE 8
#define G_VAR 16
#define G_W 24
#define G_EPOCH 32
#define G_BYE 40
#define G_FROM 64    /* G_FROM + 8*i: node i's "verified" note to node 0 */
#define G_DATA 4096  /* node 0's buffer */
#define G_DATA3 32768 /* node 3's buffer */
#define LEN0 (3 * CHUNK + 100)
#define LEN3 1000

/* events */
enum {
	EV_LOCAL, EV_DATA, EV_DATA3, EV_NOTE, EV_BYE_LOCAL, EV_BYE,
	EV_GO,              /* x*: a round starts */
	EV_XL0, EV_XL1, EV_XL2, /* x*: local event of transfer i */
	EV_XR0, EV_XR1, EV_XR2, /* x*: remote event of transfer i */
	EV_OUT,             /* xkill: a round's outcome */
	EV_NEVER,           /* never signalled: a victim waits on it */
	NEV
};

static uint32_t me, n;
static int on_shm; /* --provider shm */
/* node sets, made once in main() */
static sp_nodeset_t *s_all, *s_zero, *s_two, *s_not1, *s_not2, *s_not3,
	*s_rest;

static int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failf(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: node %u: ", me);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return 1;
}

static uint8_t byte_of(uint32_t src, size_t i)
{
	return (uint8_t)(i * 31u + src * 7u + (i >> 10));
}

/* Every node but skip (-1: every node). */
static sp_nodeset_t *all_but(int64_t skip)
{
	sp_nodeset_t *s = NULL;

	if (sp_nodeset_create(n, &s))
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if ((int64_t)i != skip)
			sp_nodeset_add(s, i);
	return s;
}

static sp_nodeset_t *only(uint32_t id)
{
	sp_nodeset_t *s = NULL;

	if (sp_nodeset_create(n, &s))
		return NULL;
	sp_nodeset_add(s, id);
	return s;
}

static int make_sets(void)
{
	s_all = all_but(-1);
	s_zero = only(0);
	s_two = only(2);
	s_not1 = all_but(1);
	s_not2 = all_but(2);
	s_not3 = all_but(3);
	s_rest = all_but(n - 1);
	return s_all && s_zero && s_two && s_not1 && s_not2 && s_not3 &&
			       s_rest ? 0 : -ENOMEM;
}

static void free_sets(void)
{
	sp_nodeset_destroy(s_all);
	sp_nodeset_destroy(s_zero);
	sp_nodeset_destroy(s_two);
	sp_nodeset_destroy(s_not1);
	sp_nodeset_destroy(s_not2);
	sp_nodeset_destroy(s_not3);
	sp_nodeset_destroy(s_rest);
}

static int xfer(sp_world_t *w, const sp_nodeset_t *dst, const void *buf,
		size_t len, uint64_t gaddr, sp_ev_t lev, sp_ev_t rev)
{
	char err[256] = "";
	int rc = sp_xfer_and_signal(w, dst, buf, len, gaddr, lev, rev, err,
				    sizeof(err));

	if (rc)
		return failf("xfer to %#llx: %s (%s)", (unsigned long long)gaddr,
			     storm_strerror(rc), err);
	return 0;
}

static int wait_ev(sp_world_t *w, sp_ev_t ev, const char *what)
{
	int rc = sp_test_event(w, ev, WAIT_MS);

	if (rc)
		return failf("waiting for %s: %s", what, storm_strerror(rc));
	return 0;
}

static int caw_expect(sp_world_t *w, const sp_nodeset_t *set, uint64_t var,
		      sp_cmp_t op, int64_t value, uint64_t waddr, int64_t wval,
		      int want, const char *what)
{
	int rc = sp_compare_and_write(w, set, var, op, value, waddr, wval,
				      WAIT_MS);

	if (rc != want)
		return failf("CAW %s: got %d (%s), want %d", what, rc,
			     rc < 0 ? storm_strerror(rc) : "", want);
	return 0;
}

/* ---- shutdown ------------------------------------------------------------- */

/* Node 0: every member of set (node 0 included) gets "bye"; close once all
 * of them committed it. */
static int bye_root(sp_world_t *w, const sp_nodeset_t *set)
{
	static const int64_t one = 1;

	if (xfer(w, set, &one, sizeof(one), G_BYE, EV_BYE_LOCAL, EV_BYE) ||
	    wait_ev(w, EV_BYE_LOCAL, "every node to commit bye"))
		return 1;
	return 0;
}

/* Others: wait for bye, then for node 0 to leave the view (bounded: if it
 * is slow to be noticed, leave anyway; node 0 needs nothing more). */
static int bye_member(sp_world_t *w)
{
	sp_nodeset_t *live = NULL;
	sp_view_info_t vi;
	int rc;

	if (wait_ev(w, EV_BYE, "bye from node 0"))
		return 1;
	if (sp_nodeset_create(n, &live))
		return failf("out of memory");
	for (int i = 0; i < 20; i++) {
		if (sp_view(w, &vi, live) || !sp_nodeset_has(live, 0))
			break;
		rc = sp_view_wait(w, vi.epoch + 1, 250);
		if (rc && rc != -ETIMEDOUT)
			break;
	}
	sp_nodeset_destroy(live);
	return 0;
}

/* ---- scenarios ------------------------------------------------------------ */

/* Tell node 0 this node has reached the checkpoint, then end. */
static int note_and_leave(sp_world_t *w)
{
	static const int64_t one = 1;

	return xfer(w, s_zero, &one, sizeof(one), G_FROM + 8u * me, EV_LOCAL,
		    EV_NOTE) ||
	       wait_ev(w, EV_LOCAL, "note to node 0") || bye_member(w);
}

/* A victim: serve (the progress thread answers) until the driver kills
 * it, bounded; never pass on its own. */
static int await_kill(sp_world_t *w, const char *what)
{
	int rc = sp_test_event(w, EV_NEVER, 2 * WAIT_MS);

	return failf("was not %s (%s)", what, storm_strerror(rc));
}

/* Node 0: wait for the notes of count other nodes. */
static int await_notes(sp_world_t *w, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if (wait_ev(w, EV_NOTE, "a node's note"))
			return 1;
	return 0;
}

/* Node 0, once every other node sent its note: everyone verified, so one
 * CAW says so and records it everywhere; then bye. */
static int root_agree_verified(sp_world_t *w)
{
	return await_notes(w, n - 1) ||
	       caw_expect(w, s_all, G_VERIFIED, SP_CMP_GE, 1, G_DONE, 1, 1,
			  "all verified") ||
	       caw_expect(w, s_all, G_DONE, SP_CMP_EQ, 1, SP_NO_WRITE, 0, 1,
			  "done everywhere") ||
	       bye_root(w, s_all);
}

static int check_xfer(sp_world_t *w, const uint8_t *buf0, const uint8_t *buf3)
{
	const uint8_t *g = sp_gmem(w, NULL);
	int bad = 0;

	/* 0 -> everyone (itself included); 3 -> everyone else */
	if (me == 0 && xfer(w, s_all, buf0, LEN0, G_DATA, EV_LOCAL, EV_DATA))
		return 1;
	if (me == 3 && xfer(w, s_not3, buf3, LEN3, G_DATA3, EV_LOCAL, EV_DATA3))
		return 1;
	if (wait_ev(w, EV_DATA, "node 0's data"))
		return 1;
	if (me != 3 && wait_ev(w, EV_DATA3, "node 3's data"))
		return 1;
	if ((me == 0 || me == 3) && wait_ev(w, EV_LOCAL, "own transfer"))
		return 1;
	for (size_t i = 0; i < LEN0; i++)
		bad |= g[G_DATA + i] != buf0[i];
	for (size_t i = 0; i < LEN3; i++)
		bad |= g[G_DATA3 + i] != (me == 3 ? 0 : buf3[i]);
	if (bad)
		return failf("transferred bytes differ");
	/* one signal each, no more */
	if (sp_test_event(w, EV_DATA, 0) != -EAGAIN ||
	    sp_test_event(w, EV_DATA3, 0) != -EAGAIN)
		return failf("a remote event fired twice");
	printf("verified %u+%u bytes\n", LEN0, me == 3 ? 0 : LEN3);
	return 0;
}

static int scenario_xfer(sp_world_t *w)
{
	uint8_t *buf0 = malloc(LEN0), *buf3 = malloc(LEN3);
	int rc;

	if (!buf0 || !buf3) {
		free(buf0);
		free(buf3);
		return failf("out of memory");
	}
	for (size_t i = 0; i < LEN0; i++)
		buf0[i] = byte_of(0, i);
	for (size_t i = 0; i < LEN3; i++)
		buf3[i] = byte_of(3, i);
	rc = check_xfer(w, buf0, buf3);
	/* buffers stay valid until the local events fired (check_xfer) */
	free(buf0);
	free(buf3);
	if (rc)
		return rc;
	sp_gvar_write_local(w, G_VERIFIED, 1);
	if (me != 0)
		return note_and_leave(w);
	return root_agree_verified(w);
}

static int scenario_caw(sp_world_t *w)
{
	sp_gvar_write_local(w, G_VAR, me == 2 ? 9 : 5);
	if (me != 0)
		return note_and_leave(w);
	if (await_notes(w, n - 1))
		return 1;
	/* VAR is 5 everywhere but node 2, where it is 9 */
	if (caw_expect(w, s_all, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE, 0, 1, "GE 5") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_GE, 6, SP_NO_WRITE, 0, 0, "GE 6") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_LT, 10, SP_NO_WRITE, 0, 1, "LT 10") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_LT, 9, SP_NO_WRITE, 0, 0, "LT 9") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_EQ, 5, SP_NO_WRITE, 0, 0, "EQ 5") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_NE, 9, SP_NO_WRITE, 0, 0, "NE 9") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_NE, 4, SP_NO_WRITE, 0, 1, "NE 4"))
		return 1;
	/* writes happen only when true */
	if (caw_expect(w, s_all, G_VAR, SP_CMP_GE, 5, G_W, 7, 1, "write 7") ||
	    caw_expect(w, s_all, G_W, SP_CMP_EQ, 7, SP_NO_WRITE, 0, 1, "W == 7") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_EQ, 5, G_W, 8, 0, "write 8") ||
	    caw_expect(w, s_all, G_W, SP_CMP_EQ, 7, SP_NO_WRITE, 0, 1,
		       "W still 7"))
		return 1;
	/* a subset: true without node 2, written only there */
	if (caw_expect(w, s_not2, G_VAR, SP_CMP_EQ, 5, G_W, 9, 1, "subset") ||
	    caw_expect(w, s_not2, G_W, SP_CMP_EQ, 9, SP_NO_WRITE, 0, 1,
		       "W == 9 on the subset") ||
	    caw_expect(w, s_two, G_W, SP_CMP_EQ, 7, SP_NO_WRITE, 0, 1,
		       "W still 7 outside"))
		return 1;
	return bye_root(w, s_all);
}

/* Wait for a stable view without the victim; fill *vi. */
static int await_view_without(sp_world_t *w, uint32_t victim,
			      sp_view_info_t *vi)
{
	sp_nodeset_t *live = NULL;
	int rc = 0;

	if (sp_nodeset_create(n, &live))
		return failf("out of memory");
	for (;;) {
		rc = sp_view(w, vi, live);
		if (rc) {
			rc = failf("sp_view: %s", storm_strerror(rc));
			break;
		}
		if (vi->stable && !sp_nodeset_has(live, victim))
			break;
		rc = sp_view_wait(w, vi->epoch + (vi->stable ? 1 : 0), WAIT_MS);
		if (rc) {
			rc = failf("waiting for a view without node %u: %s",
				   victim, storm_strerror(rc));
			break;
		}
	}
	sp_nodeset_destroy(live);
	return rc;
}

static int scenario_kill(sp_world_t *w)
{
	uint32_t victim = n - 1;
	sp_view_info_t vi;
	int rc;

	if (me == victim) {
		/* wait to be killed; never pass on our own */
		return await_kill(w, "killed");
	}
	if (await_view_without(w, victim, &vi))
		return 1;
	if (vi.nlive != n - 1 || vi.root != 0)
		return failf("view has %u nodes, root %u", vi.nlive, vi.root);
	printf("view epoch %#llx without node %u, %u live\n",
	       (unsigned long long)vi.epoch, victim, vi.nlive);
	sp_gvar_write_local(w, G_EPOCH, (int64_t)vi.epoch);
	if (me != 0)
		return note_and_leave(w);
	if (await_notes(w, n - 2))
		return 1;
	/* every survivor holds the same view */
	if (caw_expect(w, s_rest, G_EPOCH, SP_CMP_EQ, (int64_t)vi.epoch,
		       SP_NO_WRITE, 0, 1, "same epoch everywhere"))
		return 1;
	/* and the dead node is refused */
	rc = sp_compare_and_write(w, s_all, G_EPOCH, SP_CMP_GE, 0, SP_NO_WRITE,
				  0, WAIT_MS);
	if (rc != -STORM_ENOTINVIEW)
		return failf("CAW including the dead node: %d (%s)", rc,
			     storm_strerror(rc));
	return bye_root(w, s_rest);
}

/* ---- XFER on the staging arena ------------------------------------------- */

#define XGMEM (5u << 20)
#define XCHUNK (256u << 10)
/* The arena size of xbig and xkill: no other mapping of the process has
 * it, so arena_rss() can find the arena in /proc/self/smaps. */
#define XSTAGING (13u << 20)
#define XSTAGING_SMALL (128u << 10)
#define G_GO 1024  /* the round node 0 starts */
#define G_OUT 1040 /* xkill: round, status (two int64) */
#define G_XA (64u << 10)
#define G_XB (G_XA + (3u << 20) + (64u << 10))
#define G_XC (G_XB + (1u << 20) + (64u << 10))
#define G_XD (G_XC + (128u << 10))
#define LEN_BIG ((3u << 20) + 1000) /* 13 chunks, the last one short */
#define LEN_MID ((1u << 20) + 12)   /* 5 chunks */
#define LEN_FIT (96u << 10)         /* RMA-sized, fits a 128 KiB arena */
#define XMAX 3                      /* transfers per round */

/* One transfer of a round: from src to every node (all) or to every node
 * but src. */
struct xspec {
	uint32_t src;
	int all;
	size_t len;
	uint64_t gaddr;
};

static const struct xspec xbig_plan[] = {
	{0, 1, LEN_BIG, G_XA},
	{5, 0, LEN_MID, G_XB},
};
static const struct xspec xsmall_plan[] = {
	{0, 1, LEN_MID, G_XA},
	{0, 1, LEN_FIT, G_XC},
	{5, 0, LEN_FIT, G_XD},
};
#define XROUNDS 2

/* The bytes src sends in round r (1, 2, …): never 0, and every byte
 * differs from the same byte of round r - 1, so a region that holds
 * round r - 1 (or zeros) holds no byte of round r. */
static uint8_t xbyte(uint32_t src, uint32_t round, size_t i)
{
	return (uint8_t)(1u + (i * 31u + src * 7u + round * 13u + (i >> 10)) %
				      255u);
}

/* Expected contents of a region: round 0 means never written (zeros). */
static uint8_t xwant(uint32_t src, uint32_t round, size_t i)
{
	return round ? xbyte(src, round, i) : 0;
}

/* Check len bytes at gaddr hold src's round `round`; on a mismatch say
 * where, and how many bytes hold round `other` instead (0: none). */
static int xcheck(sp_world_t *w, uint64_t gaddr, size_t len, uint32_t src,
		  uint32_t round, uint32_t other, const char *what)
{
	const uint8_t *g = (const uint8_t *)sp_gmem(w, NULL) + gaddr;
	size_t bad = 0, first = 0, of_other = 0;

	for (size_t i = 0; i < len; i++) {
		if (g[i] == xwant(src, round, i))
			continue;
		if (bad++ == 0)
			first = i;
		of_other += other && g[i] == xbyte(src, other, i);
	}
	if (bad)
		return failf("%s: %zu of %zu bytes at %#llx differ from round "
			     "%u of node %u, the first at +%zu (%#x, want %#x); "
			     "%zu of them are round %u's", what, bad, len,
			     (unsigned long long)gaddr, round, src, first,
			     g[first], xwant(src, round, first), of_other,
			     other);
	return 0;
}

/* Resident bytes of staging arenas: the mappings of exactly XSTAGING
 * bytes — ours (writable; own != 0) or also the parents' we read (shm
 * maps them read-only).  stage.c maps ours whole at open (MAP_NORESERVE),
 * so its pages are resident only once transfers staged there: in xbig it
 * is the sign that they took the RMA path.  -1: no such mapping. */
static long arena_rss(int own)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long rss = -1, kb;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s ", &a, &b, perms) == 3)
			in = b - a == XSTAGING && (!own || perms[1] == 'w');
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			rss = (rss < 0 ? 0 : rss) + kb * 1024;
	}
	fclose(f);
	return rss;
}

/* Tell node 0 this node finished round r. */
static int xnote(sp_world_t *w, uint32_t r)
{
	static int64_t round;

	round = r;
	return xfer(w, s_zero, &round, sizeof(round), G_FROM + 8u * me,
		    EV_LOCAL, EV_NOTE) ||
	       wait_ev(w, EV_LOCAL, "note to node 0");
}

static int xis_dest(const struct xspec *x)
{
	return x->all || x->src != me;
}

/* One round of a plan: node 0 says go (once everyone finished the last
 * round), every source starts its transfers, every node waits for its
 * events and checks every region. */
static int xround(sp_world_t *w, const struct xspec *x, uint32_t nx,
		  uint32_t r, uint8_t **buf, sp_nodeset_t **dst, int rma)
{
	static int64_t go;
	int64_t v = 0;
	size_t most = 0;
	long rss;

	if (me == 0) {
		if (r > 1 && await_notes(w, n - 1))
			return 1;
		go = r;
		if (xfer(w, s_all, &go, sizeof(go), G_GO, EV_LOCAL, EV_GO))
			return 1;
	}
	if (wait_ev(w, EV_GO, "go"))
		return 1;
	if (sp_gvar_read(w, G_GO, &v) || v != (int64_t)r)
		return failf("round %u: go says %lld", r, (long long)v);
	for (uint32_t i = 0; i < nx; i++) {
		if (x[i].src != me)
			continue;
		for (size_t j = 0; j < x[i].len; j++)
			buf[i][j] = xbyte(me, r, j);
		if (xfer(w, dst[i], buf[i], x[i].len, x[i].gaddr, EV_XL0 + i,
			 EV_XR0 + i))
			return 1;
	}
	for (uint32_t i = 0; i < nx; i++)
		if (x[i].src == me && wait_ev(w, EV_XL0 + i, "own transfer"))
			return 1;
	for (uint32_t i = 0; i < nx; i++)
		if (xis_dest(&x[i]) && wait_ev(w, EV_XR0 + i, "a transfer"))
			return 1;
	if (me == 0 && wait_ev(w, EV_LOCAL, "go to everyone"))
		return 1;
	for (uint32_t i = 0; i < nx; i++) {
		char what[64];

		snprintf(what, sizeof(what), "round %u, transfer %u", r, i);
		if (xcheck(w, x[i].gaddr, x[i].len, x[i].src,
			   xis_dest(&x[i]) ? r : 0, 0, what))
			return 1;
		if (sp_test_event(w, EV_XR0 + i, 0) != -EAGAIN)
			return failf("%s: the remote event fired twice", what);
		most = x[i].len > most ? x[i].len : most;
	}
	rss = arena_rss(0);
	if (rma && rss < (long)(most & ~(size_t)4095))
		return failf("round %u: staging arena holds %ld bytes, less "
			     "than a %zu-byte transfer: not the RMA path?", r,
			     rss, most);
	/* Node 1 is a leaf child of node 0 in node 0's tree (fan-out 2,
	 * positions in id order): on shm it reads node 0's transfer from
	 * node 0's arena at the commit, in place (pinned), staging none of
	 * it in its own; it stages only node 5's, where it forwards. */
	if (rma && on_shm && me == 1 && x[0].src == 0 &&
	    arena_rss(1) >= (long)x[0].len)
		return failf("round %u: node 1 staged node 0's %zu bytes in "
			     "its own arena (%ld bytes resident): a leaf child "
			     "of the source on shm should read in place", r,
			     x[0].len, arena_rss(1));
	printf("round %u verified (%u transfers; arena %ld bytes resident)\n",
	       r, nx, rss);
	if (r == XROUNDS)
		sp_gvar_write_local(w, G_VERIFIED, 1);
	return me == 0 ? 0 : xnote(w, r);
}

static int xplan(sp_world_t *w, const struct xspec *x, uint32_t nx, int rma)
{
	uint8_t *buf[XMAX] = {0};
	sp_nodeset_t *dst[XMAX] = {0};
	int rc = 0;

	for (uint32_t i = 0; i < nx; i++) {
		if (x[i].src != me)
			continue;
		buf[i] = malloc(x[i].len);
		dst[i] = all_but(x[i].all ? -1 : (int64_t)x[i].src);
		if (!buf[i] || !dst[i])
			rc = failf("out of memory");
	}
	for (uint32_t r = 1; !rc && r <= XROUNDS; r++)
		rc = xround(w, x, nx, r, buf, dst, rma);
	for (uint32_t i = 0; i < nx; i++) {
		free(buf[i]); /* every local event has fired (xround) */
		sp_nodeset_destroy(dst[i]);
	}
	if (rc)
		return rc;
	if (me != 0)
		return bye_member(w);
	return root_agree_verified(w);
}

static int scenario_xbig(sp_world_t *w)
{
	return xplan(w, xbig_plan, 2, 1);
}

static int scenario_xmsg(sp_world_t *w)
{
	return xplan(w, xbig_plan, 2, 0);
}

static int scenario_xsmall(sp_world_t *w)
{
	return xplan(w, xsmall_plan, 3, 0);
}

/* ---- xkill: all or nothing when a destination dies -------------------------- */

enum { K_NONE, K_STOP, K_RACE };

/* One round of xkill: who dies and how the driver kills it, and a live
 * node left out of the transfer's set (-1: none), which reshapes the
 * tree and must see nothing of the round whatever its outcome.  K_STOP:
 * stopped before the transfer starts, so staging cannot finish and the
 * outcome must be an abort; K_RACE: killed as soon as the driver sees
 * the transfer started, so either outcome is allowed, never a mix. */
struct kround {
	int victim;
	int how;
	int outside;
};

/* Every victim is an interior node of its round's transfer tree (8
 * nodes, fan-out 2, positions in id order from node 0): its children
 * read their chunks from its arena.  None is a child of the membership
 * root (node 0): each is watched by non-root members (see
 * xkill_root_rounds[]). */
static const struct kround xkill_rounds[] = {
	{6, K_STOP, -1}, /* tree 0>{1,2,4} 2>3 4>{5,6} 6>7 */
	{5, K_RACE, 1},  /* set 0,2-5,7: 0>{2,3,5} 3>4 5>7 */
	{3, K_STOP, 2},  /* set 0,1,3,4,7: 0>{1,3,7} 3>4 */
	{-1, K_NONE, -1},
};
/* The same with victims the membership root watches itself (its
 * children 4 and 2, then 6 re-linked under it): the root must expel
 * only the silent child, not the live ones it adopts. */
static const struct kround xkill_root_rounds[] = {
	{4, K_STOP, -1},
	{2, K_RACE, -1},
	{6, K_STOP, -1},
	{-1, K_NONE, -1},
};

/* Wait for a stable view whose members are exactly want. */
static int await_view_of(sp_world_t *w, const sp_nodeset_t *want)
{
	sp_nodeset_t *live = NULL;
	sp_view_info_t vi;
	int rc = 0, same;

	if (sp_nodeset_create(n, &live))
		return failf("out of memory");
	for (;;) {
		rc = sp_view(w, &vi, live);
		if (rc) {
			rc = failf("sp_view: %s", storm_strerror(rc));
			break;
		}
		same = sp_nodeset_count(live) == sp_nodeset_count(want);
		for (uint32_t i = 0; same && i < n; i++)
			same = sp_nodeset_has(live, i) == sp_nodeset_has(want, i);
		if (vi.stable && same)
			break;
		rc = sp_view_wait(w, vi.epoch + (vi.stable ? 1 : 0), WAIT_MS);
		if (rc) {
			char a[128], b[128];

			sp_nodeset_format(live, a, sizeof(a));
			sp_nodeset_format(want, b, sizeof(b));
			rc = failf("waiting for a view of %s (now %s): %s", b, a,
				   storm_strerror(rc));
			break;
		}
	}
	sp_nodeset_destroy(live);
	return rc;
}

/* Node 0: the driver has stopped the victim when SIGUSR1 arrives
 * (blocked in every thread since main() began). */
static int await_driver(uint32_t r)
{
	struct timespec t = {WAIT_MS / 1000, 0};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigtimedwait(&set, NULL, &t) != SIGUSR1)
		return failf("round %u: no SIGUSR1 from the driver", r);
	return 0;
}

/* All or nothing on this node after round r, whose transfer ended with
 * status st at the source; *held is the round whose bytes this node held
 * before (0: zeros), updated.  dest: this node was in the set. */
static int xkill_check(sp_world_t *w, uint32_t r, int st, int dest,
		       uint32_t *held)
{
	int got = dest && st == 0; /* this node must have round r */
	char what[96];
	int ev;

	snprintf(what, sizeof(what), "round %u (%s%s)", r,
		 st ? "aborted" : "committed", dest ? "" : ", not in the set");
	if (st != 0 && st != -STORM_EABORTED)
		return failf("%s: status %d (%s)", what, st, storm_strerror(st));
	if (xcheck(w, G_XA, LEN_BIG, 0, got ? r : *held, got ? *held : r,
		   what))
		return 1;
	ev = sp_test_event(w, EV_XR0, 0);
	if (got && ev != 0)
		return failf("%s: no remote event (%s)", what,
			     storm_strerror(ev));
	if (!got && ev != -EAGAIN)
		return failf("%s: a remote event fired (%d)", what, ev);
	if (sp_test_event(w, EV_XR0, 0) != -EAGAIN)
		return failf("%s: the remote event fired twice", what);
	*held = got ? r : *held;
	return 0;
}

static int xkill_source(sp_world_t *w, const struct kround *k, uint32_t nk,
			sp_nodeset_t *live, sp_nodeset_t *set, uint8_t *buf)
{
	static int64_t out[2];
	uint32_t held = 0, aborted = 0;

	for (uint32_t i = 0; i < nk; i++) {
		uint32_t r = i + 1;
		int v = k[i].victim, how = k[i].how, st;

		if (await_view_of(w, live) || sp_nodeset_copy(set, live))
			return 1;
		if (k[i].outside >= 0)
			sp_nodeset_del(set, (uint32_t)k[i].outside);
		for (size_t j = 0; j < LEN_BIG; j++)
			buf[j] = xbyte(0, r, j);
		if (how == K_STOP) {
			printf("STOP %d %u\n", v, r);
			if (await_driver(r))
				return 1;
		}
		if (xfer(w, set, buf, LEN_BIG, G_XA, EV_XL0, EV_XR0))
			return 1;
		if (v >= 0)
			printf("KILL %d %u\n", v, r);
		st = sp_test_event(w, EV_XL0, WAIT_MS);
		if ((how == K_STOP && st != -STORM_EABORTED) ||
		    (how == K_NONE && st != 0))
			return failf("round %u: node %d %s: transfer ended "
				     "with %d (%s)", r, v, how == K_STOP ?
				     "stopped then killed" : "alive", st,
				     st ? storm_strerror(st) : "committed");
		if (xkill_check(w, r, st, 1, &held))
			return 1;
		aborted += st != 0;
		if (v >= 0) {
			sp_nodeset_del(live, (uint32_t)v);
			if (await_view_of(w, live))
				return 1;
		}
		/* every survivor checks the same outcome */
		out[0] = r;
		out[1] = st;
		if (xfer(w, live, out, sizeof(out), G_OUT, EV_LOCAL, EV_OUT) ||
		    wait_ev(w, EV_LOCAL, "outcome to every survivor") ||
		    wait_ev(w, EV_OUT, "own outcome") ||
		    await_notes(w, sp_nodeset_count(live) - 1))
			return 1;
		if (v >= 0)
			printf("round %u: node %d %s, transfer %s\n", r, v,
			       how == K_STOP ? "stopped then killed" :
					       "killed as it started",
			       st ? "aborted" : "committed");
		else
			printf("round %u: nobody killed, transfer %s\n", r,
			       st ? "aborted" : "committed");
	}
	printf("%u of %u rounds aborted\n", aborted, nk);
	sp_gvar_write_local(w, G_VERIFIED, 1);
	return caw_expect(w, live, G_VERIFIED, SP_CMP_GE, 1, G_DONE, 1, 1,
			  "every survivor verified") ||
	       bye_root(w, live);
}

static int xkill_member(sp_world_t *w, const struct kround *k, uint32_t nk)
{
	uint32_t held = 0;
	int64_t r = 0, st = 0;

	for (uint32_t i = 0; i < nk; i++) {
		if (wait_ev(w, EV_OUT, "a round's outcome") ||
		    sp_gvar_read(w, G_OUT, &r) || sp_gvar_read(w, G_OUT + 8, &st))
			return 1;
		if (r != (int64_t)i + 1)
			return failf("outcome of round %lld, want %u",
				     (long long)r, i + 1);
		if (xkill_check(w, i + 1, (int)st, k[i].outside != (int)me,
				&held))
			return 1;
		printf("round %u %s: checked\n", i + 1,
		       st ? "aborted" : "committed");
		if (i + 1 == nk)
			sp_gvar_write_local(w, G_VERIFIED, 1);
		if (xnote(w, i + 1))
			return 1;
	}
	if (bye_member(w))
		return 1;
	/* no aborted transfer landed late, nothing fired late */
	if (xcheck(w, G_XA, LEN_BIG, 0, held, 0, "at the end"))
		return 1;
	if (sp_test_event(w, EV_XR0, 0) != -EAGAIN)
		return failf("a remote event fired after the last round");
	return 0;
}

static int xkill(sp_world_t *w, const struct kround *k, uint32_t nk)
{
	sp_nodeset_t *live = all_but(-1), *set = all_but(-1);
	uint8_t *buf = me == 0 ? malloc(LEN_BIG) : NULL;
	int rc;

	if (!live || !set || (me == 0 && !buf))
		rc = failf("out of memory");
	else if (n != 8)
		rc = failf("xkill's rounds are drawn for 8 nodes");
	else if (me == 0)
		rc = xkill_source(w, k, nk, live, set, buf);
	else
		rc = xkill_member(w, k, nk);
	sp_nodeset_destroy(live);
	sp_nodeset_destroy(set);
	free(buf); /* its transfers ended (xkill_source waits for each) */
	return rc;
}

static int scenario_xkill(sp_world_t *w)
{
	return xkill(w, xkill_rounds,
		     sizeof(xkill_rounds) / sizeof(xkill_rounds[0]));
}

static int scenario_xkill_root(sp_world_t *w)
{
	return xkill(w, xkill_root_rounds,
		     sizeof(xkill_root_rounds) / sizeof(xkill_root_rounds[0]));
}

/* ---- silent: the root removes a silent child, and only it ------------------- */

/* Wait for the first stable view without node gone: it must hold every
 * other node (fails at once, naming them, if anyone else was dropped). */
static int await_view_without_only(sp_world_t *w, uint32_t gone)
{
	sp_nodeset_t *live = NULL;
	sp_view_info_t vi;
	char text[128];
	int rc = 0;

	if (sp_nodeset_create(n, &live))
		return failf("out of memory");
	for (;;) {
		rc = sp_view(w, &vi, live);
		if (rc || (vi.stable && !sp_nodeset_has(live, gone)))
			break;
		rc = sp_view_wait(w, vi.epoch + (vi.stable ? 1 : 0), WAIT_MS);
		if (rc)
			break;
	}
	sp_nodeset_format(live, text, sizeof(text));
	if (rc)
		rc = failf("waiting for a view without node %u (now %s): %s",
			   gone, text, storm_strerror(rc));
	else if (sp_nodeset_count(live) != n - 1)
		rc = failf("view %#llx without node %u holds only %s: live "
			   "nodes were expelled", (unsigned long long)vi.epoch,
			   gone, text);
	else
		sp_gvar_write_local(w, G_EPOCH, (int64_t)vi.epoch);
	sp_nodeset_destroy(live);
	return rc;
}

/* 8 nodes, fan-out 2: the membership root's children are 1, 2 and 4.
 * The driver stops node 1 (a leaf: only the root watches it, and a
 * stopped process breaks no connection), so the root finds it silent in
 * its tick and removes it there; every survivor must then hold a view of
 * the 7 others.  Then node 1 is killed and the survivors agree. */
static int scenario_silent(sp_world_t *w)
{
	const uint32_t victim = 1;

	if (me == victim) {
		/* wait to be stopped, then killed; never pass on our own */
		return await_kill(w, "stopped");
	}
	if (me == 0) {
		if (await_view_of(w, s_all))
			return 1;
		printf("STOP %u 1\n", victim);
		if (await_driver(1))
			return 1;
	}
	if (await_view_without_only(w, victim))
		return 1;
	if (me != 0)
		return note_and_leave(w);
	printf("KILL %u 1\n", victim);
	return await_notes(w, n - 2) ||
	       caw_expect(w, s_not1, G_EPOCH, SP_CMP_NE, 0, SP_NO_WRITE, 0, 1,
			  "every survivor saw the view") ||
	       bye_root(w, s_not1);
}

/* Direct compares (shm, caw.c) must never answer for a dead member from
 * the memory it left mapped.  Two compares over every node (the first by
 * messages, which lets the next ones load directly on shm); node 0 has
 * the driver kill node n-1 and reap it ("REAP"), then compares over every
 * node again: it must hear that the view changed, never "true".  The
 * survivors then compare twice without it (messages, then direct). */
static int scenario_caw_dead(sp_world_t *w)
{
	uint32_t victim = n - 1;
	sp_view_info_t vi;
	int rc;

	sp_gvar_write_local(w, G_VAR, 5);
	if (me == victim) {
		static const int64_t one = 1;

		if (xfer(w, s_zero, &one, sizeof(one), G_FROM + 8u * me,
			 EV_LOCAL, EV_NOTE) ||
		    wait_ev(w, EV_LOCAL, "note to node 0"))
			return 1;
		return await_kill(w, "killed");
	}
	if (me != 0)
		return note_and_leave(w);
	if (await_notes(w, n - 1) ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE, 0, 1,
		       "all, by messages") ||
	    caw_expect(w, s_all, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE, 0, 1,
		       "all, again"))
		return 1;
	printf("REAP %u 1\n", victim);
	fflush(stdout);
	if (await_driver(1))
		return 1;
	rc = sp_compare_and_write(w, s_all, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE,
				  0, WAIT_MS);
	if (rc != -STORM_EVIEWCHANGE && rc != -STORM_ENOTINVIEW)
		return failf("CAW over a set with a dead node: got %d (%s), "
			     "want a view change", rc,
			     rc < 0 ? storm_strerror(rc) : "");
	printf("round 1: compare with node %u dead: %s\n", victim,
	       storm_strerror(rc));
	if (await_view_without(w, victim, &vi) ||
	    caw_expect(w, s_rest, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE, 0, 1,
		       "survivors, by messages") ||
	    caw_expect(w, s_rest, G_VAR, SP_CMP_GE, 5, SP_NO_WRITE, 0, 1,
		       "survivors, again") ||
	    caw_expect(w, s_rest, G_VAR, SP_CMP_GE, 6, SP_NO_WRITE, 0, 0,
		       "survivors, false"))
		return 1;
	return bye_root(w, s_rest);
}

/* What each scenario runs, and the configuration it needs. */
static const struct scenario {
	const char *name;
	int (*run)(sp_world_t *w);
	uint32_t min_nodes;
	size_t gmem, chunk, staging; /* staging SIZE_MAX: the default */
	uint32_t fanout;             /* 0: the default */
	uint32_t hb_ms, hb_timeout_ms;
} scenarios[] = {
	{"xfer", scenario_xfer, 4, GMEM, CHUNK, SIZE_MAX, 0, 50, 300},
	{"caw", scenario_caw, 4, GMEM, CHUNK, SIZE_MAX, 0, 50, 300},
	{"kill", scenario_kill, 4, GMEM, CHUNK, SIZE_MAX, 0, 50, 300},
	{"caw-dead", scenario_caw_dead, 4, GMEM, CHUNK, SIZE_MAX, 0, 50, 300},
	/* Failure detection is not under test in these three: a generous
	 * timeout keeps a busy 2-core host from failing a live node. */
	{"xbig", scenario_xbig, 7, XGMEM, XCHUNK, XSTAGING, 2, 100, 1000},
	{"xmsg", scenario_xmsg, 7, XGMEM, XCHUNK, 0, 2, 100, 1000},
	{"xsmall", scenario_xsmall, 7, XGMEM, XCHUNK, XSTAGING_SMALL, 2, 100,
	 1000},
	{"xkill", scenario_xkill, 8, XGMEM, XCHUNK, XSTAGING, 2, 50, 500},
	{"xkill-root", scenario_xkill_root, 8, XGMEM, XCHUNK, XSTAGING, 2, 50,
	 500},
	{"silent", scenario_silent, 8, GMEM, CHUNK, SIZE_MAX, 2, 50, 300},
};

static int configure(sp_config_t *cfg, const struct scenario *sc)
{
	int rc = sp_config_set_gmem(cfg, sc->gmem, NEV);

	if (!rc)
		rc = sp_config_set_chunk(cfg, sc->chunk);
	if (!rc && sc->staging != SIZE_MAX)
		rc = sp_config_set_staging(cfg, sc->staging);
	if (!rc && sc->fanout)
		rc = sp_config_set_fanout(cfg, sc->fanout);
	if (!rc)
		rc = sp_config_set_liveness(cfg, sc->hb_ms, sc->hb_timeout_ms,
					    10000);
	return rc;
}

int main(int argc, char **argv)
{
	const struct scenario *sc = NULL;
	const char *name = NULL;
	sp_config_t *cfg = NULL;
	sp_world_t *w = NULL;
	sp_view_info_t vi;
	sigset_t usr1;
	char err[512] = "";
	int rc;

	/* SIGUSR1 (xkill: "the victim is stopped") is taken by
	 * sigtimedwait(): blocked before any thread exists, so in all. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	qb_log_init("prim_node", LOG_USER, LOG_INFO);
	qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, QB_FALSE);
	qb_log_filter_ctl(QB_LOG_STDERR, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE,
			  "*", LOG_INFO);
	qb_log_ctl(QB_LOG_STDERR, QB_LOG_CONF_ENABLED, QB_TRUE);
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--provider") == 0)
			on_shm = strcmp(argv[i + 1], "shm") == 0;
	rc = spc_node_config(&argc, argv, &cfg, err, sizeof(err));
	if (rc) {
		printf("FAIL: %s\n", err);
		qb_log_fini();
		return 2;
	}
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--scenario") == 0)
			name = argv[i + 1];
	}
	for (size_t i = 0; name && i < sizeof(scenarios) / sizeof(*scenarios);
	     i++)
		if (strcmp(scenarios[i].name, name) == 0)
			sc = &scenarios[i];
	if (!sc) {
		printf("FAIL: usage: prim_node … --scenario "
		       "xfer|caw|kill|xbig|xmsg|xsmall|xkill|xkill-root|silent\n");
		sp_config_destroy(cfg);
		qb_log_fini();
		return 2;
	}
	rc = configure(cfg, sc);
	if (rc) {
		sp_config_destroy(cfg);
		printf("FAIL: config: %s\n", storm_strerror(rc));
		qb_log_fini();
		return 2;
	}
	rc = sp_open(cfg, &w, err, sizeof(err));
	sp_config_destroy(cfg);
	if (rc) {
		printf("FAIL: sp_open: %s: %s\n", storm_strerror(rc), err);
		qb_log_fini();
		return 1;
	}
	me = sp_node_id(w);
	n = sp_node_count(w);
	sp_view(w, &vi, NULL);
	printf("READY %#llx\n", (unsigned long long)vi.epoch);
	if (n < sc->min_nodes)
		rc = failf("scenario %s needs at least %u nodes", sc->name,
			   sc->min_nodes);
	else if (make_sets())
		rc = failf("out of memory");
	else
		rc = sc->run(w);
	if (rc == 0)
		printf("PASS\n");
	sp_close(w);
	free_sets();
	qb_log_fini();
	return rc;
}
