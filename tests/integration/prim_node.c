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
 *
 * Output: "READY <epoch>" once the world is open, "PASS" or "FAIL: why" at
 * the end; exit 0 = pass.  Every wait is bounded (WAIT_MS).
 *
 * Shutdown without losing trailing messages: the libfabric back-end does
 * not flush on sp_close(), so node 0 ends with a "bye" XFER to everyone and
 * closes only when its local event says every node committed it (every
 * message to node 0 before that has arrived); the others close once node 0
 * has left their view, so they never drop a message node 0 still needs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
enum { EV_LOCAL, EV_DATA, EV_DATA3, EV_NOTE, EV_BYE_LOCAL, EV_BYE, NEV };

static uint32_t me, n;
/* node sets, made once in main() */
static sp_nodeset_t *s_all, *s_zero, *s_two, *s_not2, *s_not3, *s_rest;

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
	s_not2 = all_but(2);
	s_not3 = all_but(3);
	s_rest = all_but(n - 1);
	return s_all && s_zero && s_two && s_not2 && s_not3 && s_rest ? 0 :
									   -ENOMEM;
}

static void free_sets(void)
{
	sp_nodeset_destroy(s_all);
	sp_nodeset_destroy(s_zero);
	sp_nodeset_destroy(s_two);
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

/* Node 0: wait for the notes of count other nodes. */
static int await_notes(sp_world_t *w, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if (wait_ev(w, EV_NOTE, "a node's note"))
			return 1;
	return 0;
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
	/* everyone verified: one CAW says so and records it everywhere */
	return await_notes(w, n - 1) ||
	       caw_expect(w, s_all, G_VERIFIED, SP_CMP_GE, 1, G_DONE, 1, 1,
			  "all verified") ||
	       caw_expect(w, s_all, G_DONE, SP_CMP_EQ, 1, SP_NO_WRITE, 0, 1,
			  "done everywhere") ||
	       bye_root(w, s_all);
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
		sleep(2 * WAIT_MS / 1000);
		return failf("was not killed");
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

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(sp_world_t *w);
	} scenarios[] = {
		{"xfer", scenario_xfer},
		{"caw", scenario_caw},
		{"kill", scenario_kill},
	};
	const char *name = NULL;
	sp_config_t *cfg = NULL;
	sp_world_t *w = NULL;
	sp_view_info_t vi;
	char err[512] = "";
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = spc_node_config(&argc, argv, &cfg, err, sizeof(err));
	if (rc) {
		printf("FAIL: %s\n", err);
		return 2;
	}
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--scenario") == 0)
			name = argv[i + 1];
	if (!name) {
		printf("FAIL: usage: prim_node … --scenario xfer|caw|kill\n");
		sp_config_destroy(cfg);
		return 2;
	}
	rc = sp_config_set_gmem(cfg, GMEM, NEV);
	if (!rc)
		rc = sp_config_set_chunk(cfg, CHUNK);
	if (!rc)
		rc = sp_config_set_liveness(cfg, 50, 300, 10000);
	if (rc) {
		sp_config_destroy(cfg);
		printf("FAIL: config: %s\n", storm_strerror(rc));
		return 2;
	}
	rc = sp_open(cfg, &w, err, sizeof(err));
	sp_config_destroy(cfg);
	if (rc) {
		printf("FAIL: sp_open: %s: %s\n", storm_strerror(rc), err);
		return 1;
	}
	me = sp_node_id(w);
	n = sp_node_count(w);
	sp_view(w, &vi, NULL);
	printf("READY %#llx\n", (unsigned long long)vi.epoch);
	rc = -1;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		if (strcmp(scenarios[i].name, name) != 0)
			continue;
		if (n < 4)
			rc = failf("scenarios need at least 4 nodes");
		else if (make_sets())
			rc = failf("out of memory");
		else
			rc = scenarios[i].run(w);
		if (rc == 0)
			printf("PASS\n");
	}
	if (rc < 0) {
		printf("FAIL: no scenario \"%s\"\n", name);
		rc = 2;
	}
	sp_close(w);
	free_sets();
	return rc;
}
