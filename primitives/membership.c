/*
 * membership.c — radix-tree membership (MOLAR §7).
 *
 * Node ids are positions in a radix tree of fan-out k; every node holds the
 * same tree.  A member whose ancestors have failed hangs off its nearest
 * live ancestor, or off the root when none is left.  The root alone changes
 * the view: it removes a failed node (or adds a joiner), sends the new view
 * down the new tree, and the view is stable when every acknowledgement has
 * come back up to it (Ts = O_cm + O_cp·H).  If the root fails, the lowest
 * live id takes over.  Epochs are (counter << 16 | creator), so two roots
 * that both believe they lead can never install different views under one
 * number.
 *
 * State × event at one node (illegal/stale events are dropped silently):
 *
 *   state \ event  | VIEW(e>cur)        | VIEW_ACK(e=cur)          | STABLE(e=cur)
 *   ---------------+--------------------+--------------------------+-------------
 *   none/booting   | install, forward   | drop                     | drop
 *   installing     | install (supersede)| count; last -> ACK up or | drop
 *                  |                    | (root) STABLE down       |
 *   stable         | install, forward   | drop                     | drop (dup)
 *
 *   SUSPECT(x) from a member (a non-member's is dropped: it may be an
 *   expelled node that does not know it yet): x joins this node's suspects
 *   and goes to the acting root — the root unless it is suspected, else the
 *   lowest live member not suspected.  The acting root makes a view without
 *   every suspect, so a root dying with its successor moves on to the next
 *   live id; when the acting root changes, every suspicion is sent to the
 *   new one.  The root also sends the new view to the nodes it removes, so
 *   a live one learns it was expelled.  JOIN(v): root -> new view with v;
 *   others forward to the root.
 *
 * Every VIEW_ACK carries facts (sp_facts) about decisions whose coordinator
 * may be gone; the root merges them and STABLE carries the merged facts
 * down, so every survivor finishes those decisions the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "sp_engine.h"


/* ---- facts --------------------------------------------------------------- */

int sp_facts_init(struct sp_facts *f, uint32_t nwords)
{
	memset(f, 0, sizeof(*f));
	f->wset = calloc(nwords ? nwords : 1, sizeof(uint64_t));
	return f->wset ? 0 : -ENOMEM;
}

void sp_facts_fini(struct sp_facts *f)
{
	free(f->wset);
	free(f->xids);
	f->wset = NULL;
	f->xids = NULL;
}

void sp_facts_reset(struct sp_facts *f)
{
	f->caw_max_seq = 0;
	f->wseq = 0;
	f->nxids = 0;
}

int sp_facts_add_xid(struct sp_facts *f, uint64_t xid)
{
	for (uint32_t i = 0; i < f->nxids; i++)
		if (f->xids[i] == xid)
			return 0;
	if (f->nxids == f->capxids) {
		uint32_t cap = f->capxids ? 2 * f->capxids : 16;
		uint64_t *x = realloc(f->xids, cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		f->xids = x;
		f->capxids = cap;
	}
	f->xids[f->nxids++] = xid;
	return 0;
}

static void facts_merge(struct sp_facts *dst, const struct sp_facts *src,
			uint32_t nwords)
{
	if (src->caw_max_seq > dst->caw_max_seq)
		dst->caw_max_seq = src->caw_max_seq;
	if (src->wseq > dst->wseq) {
		dst->wseq = src->wseq;
		dst->winit = src->winit;
		dst->wreq = src->wreq;
		dst->waddr = src->waddr;
		dst->wval = src->wval;
		memcpy(dst->wset, src->wset, nwords * sizeof(uint64_t));
	}
	for (uint32_t i = 0; i < src->nxids; i++)
		sp_facts_add_xid(dst, src->xids[i]);
}

static void facts_encode(struct sp_wbuf *b, const struct sp_facts *f,
			 uint32_t nwords)
{
	sp_w_u64(b, f->caw_max_seq);
	sp_w_u64(b, f->wseq);
	if (f->wseq) {
		sp_w_u32(b, f->winit);
		sp_w_u64(b, f->wreq);
		sp_w_u64(b, f->waddr);
		sp_w_u64(b, (uint64_t)f->wval);
		for (uint32_t i = 0; i < nwords; i++)
			sp_w_u64(b, f->wset[i]);
	}
	sp_w_u32(b, f->nxids);
	for (uint32_t i = 0; i < f->nxids; i++)
		sp_w_u64(b, f->xids[i]);
}

static int facts_decode(struct sp_rbuf *r, struct sp_facts *f,
			uint32_t nwords)
{
	uint32_t n;

	sp_facts_reset(f);
	f->caw_max_seq = sp_r_u64(r);
	f->wseq = sp_r_u64(r);
	if (f->wseq) {
		f->winit = sp_r_u32(r);
		f->wreq = sp_r_u64(r);
		f->waddr = sp_r_u64(r);
		f->wval = (int64_t)sp_r_u64(r);
		for (uint32_t i = 0; i < nwords; i++)
			f->wset[i] = sp_r_u64(r);
	}
	n = sp_r_u32(r);
	if (r->bad || n > (r->len - r->off) / 8)
		return -STORM_EPROTO;
	for (uint32_t i = 0; i < n; i++)
		if (sp_facts_add_xid(f, sp_r_u64(r)))
			return -ENOMEM;
	return r->bad ? -STORM_EPROTO : 0;
}

/* ---- the tree of a view ---------------------------------------------------- */

static void compute_tree(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;
	uint32_t k = w->fanout;

	for (uint32_t x = 0; x < w->n; x++) {
		int32_t p = -1;

		if (sp_nodeset_has(v->live, x) && x != v->root) {
			uint32_t a = x;

			p = (int32_t)v->root;
			while (a != 0) {
				a = sp_radix_parent(a, k);
				if (a == v->root || sp_nodeset_has(v->live, a)) {
					p = (int32_t)a;
					break;
				}
			}
		}
		v->parent[x] = p;
	}
	v->nkids = 0;
	v->height = 0;
	for (uint32_t x = 0; x < w->n; x++) {
		uint32_t d = 0;

		if (!sp_nodeset_has(v->live, x))
			continue;
		if (v->parent[x] == (int32_t)w->id)
			v->kids[v->nkids++] = x;
		for (int32_t a = v->parent[x]; a >= 0; a = v->parent[a])
			d++;
		if (d > v->height)
			v->height = d;
	}
}

int sp_mship_init(sp_world_t *w, const sp_config_t *cfg)
{
	struct sp_view_state *v = &w->v;
	int rc = 0;

	(void)cfg;
	rc |= sp_nodeset_create(w->n, &v->live);
	rc |= sp_nodeset_create(w->n, &v->hello);
	rc |= sp_nodeset_create(w->n, &v->reported);
	v->parent = calloc(w->n, sizeof(*v->parent));
	v->kids = calloc(w->n, sizeof(*v->kids));
	v->last_heard = calloc(w->n, sizeof(*v->last_heard));
	v->joined = calloc(w->n, sizeof(*v->joined));
	v->inc = calloc(w->n, sizeof(*v->inc));
	if (rc || !v->parent || !v->kids || !v->last_heard || !v->joined || !v->inc ||
	    sp_facts_init(&v->facts, w->nwords))
		return -ENOMEM;
	return 0;
}

void sp_mship_fini(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;

	sp_nodeset_destroy(v->live);
	sp_nodeset_destroy(v->hello);
	sp_nodeset_destroy(v->reported);
	free(v->parent);
	free(v->kids);
	free(v->last_heard);
	free(v->joined);
	free(v->inc);
	sp_facts_fini(&v->facts);
}

/* ---- messages ------------------------------------------------------------- */

static void send_view(sp_world_t *w, uint32_t dst)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, SP_MSG_VIEW, w->v.epoch);
	sp_w_u32(&b, w->v.root);
	for (uint32_t i = 0; i < w->nwords; i++)
		sp_w_u64(&b, w->v.live->words[i]);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

static void send_with_facts(sp_world_t *w, uint32_t dst, uint8_t type)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, type, w->v.epoch);
	facts_encode(&b, &w->v.facts, w->nwords);
	if (b.overflow) {
		/* Too many unresolved transfers to report in one message:
		 * report none rather than a truncated list (they abort). */
		w->v.facts.nxids = 0;
		sp_msg_begin(w, &b, type, w->v.epoch);
		facts_encode(&b, &w->v.facts, w->nwords);
	}
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

static void became_stable(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;

	v->stable = 1;
	for (uint32_t i = 0; i < v->nkids; i++)
		send_with_facts(w, v->kids[i], SP_MSG_STABLE);
	sp_xfer_resolve(w, &v->facts);
	sp_caw_on_stable(w, &v->facts);
	pthread_cond_broadcast(&w->cond);
	sp_notify(w);
}

static void subtree_acked(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;

	if (v->root == w->id) {
		v->stabilize_ns = sp_now(w) - v->t_start;
		became_stable(w);
	} else if (v->parent[w->id] >= 0) {
		send_with_facts(w, (uint32_t)v->parent[w->id],
				SP_MSG_VIEW_ACK);
	}
}

/* Install (epoch, root, live) and push it down the new tree. */
static void install(sp_world_t *w, uint64_t epoch, uint32_t root,
		    const uint64_t *live, int propagate)
{
	struct sp_view_state *v = &w->v;
	uint64_t now = sp_now(w);

	/* a node absent from the last view and present in this one joined
	 * (a first view is not a join: nobody was there before) */
	for (uint32_t x = 0; v->installed && x < w->n; x++)
		if (((live[x / 64] >> (x % 64)) & 1) &&
		    !sp_nodeset_has(v->live, x))
			v->joined[x] = epoch;
	v->epoch = epoch;
	v->root = root;
	memcpy(v->live->words, live, w->nwords * sizeof(uint64_t));
	/* bits beyond n must stay clear (sp_nodeset invariant) */
	if (w->n % 64)
		v->live->words[w->nwords - 1] &= (UINT64_C(1) << (w->n % 64)) - 1;
	compute_tree(w);
	v->installed = 1;
	v->stable = 0;
	v->joining = 0;
	v->expelled = !sp_nodeset_has(v->live, w->id);
	qb_log(v->expelled ? LOG_WARNING : LOG_INFO,
	       "node %u: view %#llx from root %u, %u live%s", w->id,
	       (unsigned long long)epoch, root, sp_nodeset_count(v->live),
	       v->expelled ? ": this node was expelled" : "");
	sp_nodeset_clear(v->reported);
	v->report_to = UINT32_MAX;
	for (uint32_t x = 0; x < w->n; x++)
		v->last_heard[x] = now;
	sp_facts_reset(&v->facts);
	sp_xfer_on_view(w);
	sp_caw_on_view(w);
	sp_xfer_facts(w, &v->facts);
	sp_caw_facts(w, &v->facts);
	pthread_cond_broadcast(&w->cond);
	sp_notify(w);
	if (v->expelled || !propagate)
		return;
	v->pending_acks = v->nkids;
	for (uint32_t i = 0; i < v->nkids; i++)
		send_view(w, v->kids[i]);
	if (v->pending_acks == 0)
		subtree_acked(w);
}

/* This node, as root, makes a new view from live.  Live nodes it removes
 * get the view too: it is how one that was wrongly suspected (or cut off)
 * learns it was expelled; a dead one's send just fails. */
static void start_change_to(sp_world_t *w, const uint64_t *live,
			    int tell_gone);

static void start_change(sp_world_t *w, const uint64_t *live)
{
	start_change_to(w, live, 1);
}

static void start_change_to(sp_world_t *w, const uint64_t *live,
			    int tell_gone)
{
	uint64_t counter = (w->v.epoch >> 16) + 1;
	uint64_t *gone = malloc(w->nwords * sizeof(uint64_t));

	if (gone)
		for (uint32_t i = 0; i < w->nwords; i++)
			gone[i] = w->v.live->words[i] & ~live[i];
	w->v.t_start = sp_now(w);
	install(w, counter << 16 | w->id, w->id, live, 1);
	for (uint32_t x = 0; tell_gone && gone && x < w->n; x++)
		if (x != w->id && ((gone[x / 64] >> (x % 64)) & 1))
			send_view(w, x);
	free(gone);
}

/* The node that should make the next view, as this node sees it: the root
 * unless it is suspected, else the lowest live member not suspected (at
 * worst this node, which never suspects itself).  Skipping every suspect,
 * not just the failed root, is what lets a root and its successor die
 * together. */
static uint32_t acting_root(const sp_world_t *w)
{
	const struct sp_view_state *v = &w->v;

	if (!sp_nodeset_has(v->reported, v->root))
		return v->root;
	for (int64_t x = sp_nodeset_next(v->live, 0); x >= 0;
	     x = sp_nodeset_next(v->live, (uint32_t)x + 1))
		if (!sp_nodeset_has(v->reported, (uint32_t)x))
			return (uint32_t)x;
	return w->id;
}

/* As acting root: a new view without every node suspected so far. */
static void change_without_suspects(sp_world_t *w)
{
	uint64_t *live = malloc(w->nwords * sizeof(uint64_t));

	if (!live)
		return;
	for (uint32_t i = 0; i < w->nwords; i++)
		live[i] = w->v.live->words[i] & ~w->v.reported->words[i];
	start_change(w, live);
	free(live);
}

static void change_with(sp_world_t *w, uint32_t x)
{
	uint64_t *live = malloc(w->nwords * sizeof(uint64_t));

	if (!live)
		return;
	memcpy(live, w->v.live->words, w->nwords * sizeof(uint64_t));
	live[x / 64] |= UINT64_C(1) << (x % 64);
	start_change(w, live);
	free(live);
}

static void send_u32(sp_world_t *w, uint32_t dst, uint8_t type, uint32_t x)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, type, w->v.epoch);
	sp_w_u32(&b, x);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

/* JOIN carries the joiner's incarnation: a knock repeated by the same
 * incarnation is not a restart. */
static void send_join(sp_world_t *w, uint32_t dst, uint32_t x, uint64_t inc)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, SP_MSG_JOIN, w->v.epoch);
	sp_w_u32(&b, x);
	sp_w_u64(&b, inc);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

/* Every suspicion to the acting root to (which may know none of them). */
static void send_suspicions(sp_world_t *w, uint32_t to)
{
	for (int64_t x = sp_nodeset_next(w->v.reported, 0); x >= 0;
	     x = sp_nodeset_next(w->v.reported, (uint32_t)x + 1))
		send_u32(w, to, SP_MSG_SUSPECT, (uint32_t)x);
}

/* A joiner's candidate for the root is gone: knock at the next one now,
 * not at the next tick (the in-process machine never ticks).  Once every
 * other node was found unreachable in a row, leave it to the tick. */
static void join_next_candidate(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;

	v->join_target = (v->join_target + 1) % w->n;
	if (v->join_target == w->id)
		v->join_target = (v->join_target + 1) % w->n;
	if (++v->join_tried >= w->n - 1) {
		v->join_next = 0;
		return;
	}
	v->join_next = sp_now(w) + 200000000u;
	send_join(w, v->join_target, w->id, v->my_inc);
}

void sp_failure_locked(sp_world_t *w, uint32_t x)
{
	struct sp_view_state *v = &w->v;
	uint32_t to;

	if (v->joining && !v->installed) {
		if (x == v->join_target)
			join_next_candidate(w);
		return;
	}
	if (!v->installed || v->expelled || x == w->id ||
	    !sp_nodeset_has(v->live, x) || sp_nodeset_has(v->reported, x))
		return;
	sp_nodeset_add(v->reported, x);
	to = acting_root(w);
	if (to == w->id) {
		change_without_suspects(w);
		return;
	}
	v->report_time = sp_now(w);
	if (to != v->report_to) {
		v->report_to = to;
		send_suspicions(w, to);
	} else {
		send_u32(w, to, SP_MSG_SUSPECT, x);
	}
}

void sp_mship_heard(sp_world_t *w, uint32_t src)
{
	if (w->hb_period_ns)
		w->v.last_heard[src] = sp_now(w);
}

static void boot_view(sp_world_t *w)
{
	start_change(w, w->v.hello->words);
}

void sp_mship_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		     uint64_t epoch, struct sp_rbuf *r)
{
	struct sp_view_state *v = &w->v;

	switch (type) {
	case SP_MSG_HELLO:
		if (w->id != 0)
			return;
		if (v->installed) {
			if (v->root == w->id)
				change_with(w, src);
			return;
		}
		sp_nodeset_add(v->hello, src);
		if (sp_nodeset_count(v->hello) == w->n)
			boot_view(w);
		return;
	case SP_MSG_VIEW: {
		uint32_t root = sp_r_u32(r);
		const uint8_t *words = sp_r_ptr(r, w->nwords * 8u);
		uint64_t *live;

		if (!words || epoch <= v->epoch || root >= w->n)
			return;
		live = malloc(w->nwords * sizeof(uint64_t));
		if (!live)
			return;
		for (uint32_t i = 0; i < w->nwords; i++) {
			struct sp_rbuf rr = {.p = words + 8 * i, .len = 8};

			live[i] = sp_r_u64(&rr);
		}
		/* A joiner that was never in a view cannot be expelled from
		 * one: a view without it was sent to its previous incarnation
		 * (removed on a late detection) and reached this one.  It
		 * waits for the view its own knock brings. */
		if (v->joining && !v->installed &&
		    !((live[w->id / 64] >> (w->id % 64)) & 1)) {
			free(live);
			return;
		}
		install(w, epoch, root, live, 1);
		free(live);
		return;
	}
	case SP_MSG_VIEW_ACK:
	case SP_MSG_STABLE: {
		struct sp_facts f;

		if (epoch != v->epoch || v->expelled || sp_facts_init(&f, w->nwords))
			return;
		if (facts_decode(r, &f, w->nwords) == 0) {
			if (type == SP_MSG_VIEW_ACK) {
				facts_merge(&v->facts, &f, w->nwords);
				if (v->pending_acks && --v->pending_acks == 0)
					subtree_acked(w);
			} else if (!v->stable) {
				sp_facts_reset(&v->facts);
				facts_merge(&v->facts, &f, w->nwords);
				became_stable(w);
			}
		}
		sp_facts_fini(&f);
		return;
	}
	case SP_MSG_SUSPECT: {
		uint32_t x = sp_r_u32(r);

		/* Only members may remove members: a node that was expelled,
		 * and may not know it yet, must not. */
		if (r->bad || x >= w->n || !v->installed ||
		    !sp_nodeset_has(v->live, src))
			return;
		sp_failure_locked(w, x);
		return;
	}
	case SP_MSG_JOIN: {
		uint32_t x = sp_r_u32(r);
		uint64_t inc = sp_r_u64(r);

		if (r->bad || x >= w->n || v->expelled)
			return;
		if (!v->installed && w->id == 0 && v->boot_deadline) {
			/* The founding root is still gathering its boot view:
			 * a joiner knocking now goes in it, like a HELLO.
			 * Dropped, it would knock at every other candidate
			 * (none of them a member yet) and come back here only
			 * seconds later, after its own join had given up. */
			v->inc[x] = inc;
			sp_nodeset_add(v->hello, x);
			if (sp_nodeset_count(v->hello) == w->n)
				boot_view(w);
			return;
		}
		if (!v->installed)
			return;
		if (v->root != w->id) {
			send_join(w, v->root, x, inc);
			return;
		}
		if (sp_nodeset_has(v->live, x) && v->inc[x] == inc)
			return; /* a repeated knock: it is in already */
		v->inc[x] = inc;
		if (sp_nodeset_has(v->live, x) && x != w->id) {
			/* A member knocking again is a new incarnation: the
			 * old one is gone with whatever it held.  Two views —
			 * without it, then with it — so that every operation
			 * and every layer above sees it leave and join.  The
			 * joiner is not told the first (it would think itself
			 * expelled). */
			uint64_t *without = malloc(w->nwords * sizeof(uint64_t));

			if (!without)
				return;
			memcpy(without, v->live->words,
			       w->nwords * sizeof(uint64_t));
			without[x / 64] &= ~(UINT64_C(1) << (x % 64));
			start_change_to(w, without, 0);
			free(without);
			change_with(w, x);
		} else {
			change_with(w, x);
		}
		return;
	}
	case SP_MSG_HB:
	default:
		return;
	}
}

void sp_mship_boot(sp_world_t *w, const sp_config_t *cfg)
{
	struct sp_view_state *v = &w->v;

	/* distinct for every open of this node: time, process, address */
	v->my_inc = (sp_now(w) ^ ((uint64_t)getpid() << 40) ^
		     (uint64_t)(uintptr_t)w) | 1;
	/* Transfer ids of this incarnation start at a random point, not
	 * where the last one's did: peers keep tombstones of its decided
	 * transfers (which the STABLE facts may still need) and would take
	 * a repeated id for a late chunk of a decided transfer. */
	if (!cfg->machine)
		w->xseq = (uint32_t)(v->my_inc >> 8) & 0x7fffffffu;
	if (cfg->join) {
		v->joining = 1;
		v->join_target = w->id == 0 ? 1 % w->n : 0;
		v->join_next = 0;
		sp_mship_tick(w);
		return;
	}
	if (cfg->machine) {
		/* The in-process machine is wired: every node starts in one
		 * stable view without exchanging a message. */
		uint64_t *all = calloc(w->nwords, sizeof(uint64_t));

		if (!all)
			return;
		for (uint32_t x = 0; x < w->n; x++)
			all[x / 64] |= UINT64_C(1) << (x % 64);
		install(w, UINT64_C(1) << 16, 0, all, 0);
		v->stable = 1;
		free(all);
		return;
	}
	if (w->id == 0) {
		sp_nodeset_add(v->hello, 0);
		v->boot_deadline = sp_now(w) + w->startup_ns;
		if (w->n == 1)
			boot_view(w);
		return;
	}
	send_u32(w, 0, SP_MSG_HELLO, w->id);
}

void sp_mship_tick(sp_world_t *w)
{
	struct sp_view_state *v = &w->v;
	uint64_t now = sp_now(w);

	if (v->joining && !v->installed) {
		if (now >= v->join_next) {
			v->join_next = now + 200000000u;
			v->join_tried = 0;
			/* a candidate that is up but no member (it is joining
			 * too, e.g. after a whole-group restart) never answers:
			 * after three knocks, the next one */
			if (++v->join_knocks % 3 == 0) {
				v->join_target = (v->join_target + 1) % w->n;
				if (v->join_target == w->id)
					v->join_target =
						(v->join_target + 1) % w->n;
			}
			send_join(w, v->join_target, w->id, v->my_inc);
		}
		return;
	}
	if (!v->installed) {
		if (w->id == 0 && v->boot_deadline && now >= v->boot_deadline)
			boot_view(w);
		return;
	}
	if (v->expelled || !w->hb_period_ns)
		return;
	if (now - v->last_hb >= w->hb_period_ns) {
		struct sp_wbuf b;

		v->last_hb = now;
		sp_msg_begin(w, &b, SP_MSG_HB, v->epoch);
		if (v->parent[w->id] >= 0)
			sp_msg_send(w, (uint32_t)v->parent[w->id], &b, NULL, 0,
				    NULL);
		for (uint32_t i = 0; i < v->nkids; i++)
			sp_msg_send(w, v->kids[i], &b, NULL, 0, NULL);
	}
	if (sp_nodeset_count(v->reported) &&
	    now - v->report_time > w->hb_timeout_ns) {
		uint32_t to = acting_root(w);

		if (to != v->root) {
			/* A successor that took over at once would have sent a
			 * view by now: it is gone too (nobody else may watch
			 * it, e.g. a leaf under the failed root). */
			sp_failure_locked(w, to);
		} else {
			/* no view yet: report again, in case it was lost */
			v->report_time = now;
			send_suspicions(w, to);
		}
		if (!v->installed || v->expelled)
			return;
	}
	for (uint32_t i = 0; i < v->nkids + 1; i++) {
		int64_t x = i < v->nkids ? (int64_t)v->kids[i] :
					   (int64_t)v->parent[w->id];
		uint64_t epoch = v->epoch;

		/* last_heard may be newer than now (install() stamps it): an
		 * unsigned difference would wrap and expel a live node. */
		if (x >= 0 && now > v->last_heard[x] &&
		    now - v->last_heard[x] > w->hb_timeout_ns) {
			sp_failure_locked(w, (uint32_t)x);
			/* A new view re-linked the tree: kids[] is another
			 * list now, judged at the next tick. */
			if (v->epoch != epoch || !v->installed || v->expelled)
				return;
		}
	}
}

/* ---- public membership calls ---------------------------------------------- */

int sp_view(sp_world_t *w, sp_view_info_t *info, sp_nodeset_t *live)
{
	if (!w || !info)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	info->epoch = w->v.epoch;
	info->root = w->v.root;
	info->nlive = sp_nodeset_count(w->v.live);
	info->stable = w->v.stable;
	info->height = w->v.height;
	info->stabilize_ns = w->v.stabilize_ns;
	if (live && live->capacity == w->n)
		sp_nodeset_copy(live, w->v.live);
	pthread_mutex_unlock(&w->lock);
	return w->closed ? -STORM_ECLOSED : 0;
}

int sp_view_joined(sp_world_t *w, uint32_t node, uint64_t *epoch)
{
	if (!w || !epoch || node >= w->n)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	*epoch = w->v.joined[node];
	pthread_mutex_unlock(&w->lock);
	return w->closed ? -STORM_ECLOSED : 0;
}

int sp_view_wait(sp_world_t *w, uint64_t min_epoch, int timeout_ms)
{
	struct sp_wait wt;
	int rc = 0;

	if (!w)
		return -EINVAL;
	sp_wait_init(w, &wt, timeout_ms);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->closed) {
			rc = -STORM_ECLOSED;
			break;
		}
		if (w->v.expelled) {
			rc = -STORM_EEXPELLED;
			break;
		}
		if (w->v.installed && w->v.stable && w->v.epoch >= min_epoch)
			break;
		if (sp_wait(w, &wt) ==
		    -ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int sp_report_failure(sp_world_t *w, uint32_t node)
{
	if (!w)
		return -EINVAL;
	if (node >= w->n)
		return -ERANGE;
	pthread_mutex_lock(&w->lock);
	if (!w->closed) {
		sp_failure_locked(w, node);
		sp_deferred_run(w);
	}
	pthread_mutex_unlock(&w->lock);
	return w->closed ? -STORM_ECLOSED : 0;
}

int sp_tree_links(sp_world_t *w, int64_t *parent, uint32_t *children,
		  uint32_t max)
{
	uint32_t n;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (parent)
		*parent = w->v.installed ? w->v.parent[w->id] : -1;
	n = w->v.nkids;
	for (uint32_t i = 0; i < n && i < max && children; i++)
		children[i] = w->v.kids[i];
	pthread_mutex_unlock(&w->lock);
	return (int)n;
}
