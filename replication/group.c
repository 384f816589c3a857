/*
 * group.c — the transport under the replication protocol: corosync CPG
 * (agreed order, views with virtual synchrony) and votequorum (quorum and
 * the votes it takes), or, for a single head node, a loopback that
 * delivers each message back to this replica in send order.  corosync's
 * cs_error_t is converted here and goes no further.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "rp_internal.h"

uint64_t rp_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int cs_err(cs_error_t e)
{
	switch (e) {
	case CS_OK: return 0;
	case CS_ERR_TRY_AGAIN: return -EAGAIN;
	case CS_ERR_NO_MEMORY: return -ENOMEM;
	case CS_ERR_LIBRARY: case CS_ERR_BAD_HANDLE: return -STORM_ECLOSED;
	case CS_ERR_TOO_BIG: return -EMSGSIZE;
	case CS_ERR_INVALID_PARAM: return -EINVAL;
	default: return -EIO;
	}
}

/* ---- solo: a loopback in send order ------------------------------------ */

struct solo_msg {
	struct solo_msg *next;
	size_t len;
	uint8_t msg[];
};

/* ---- CPG callbacks --------------------------------------------------------- */

static rp_replica_t *of(cpg_handle_t h)
{
	void *ctx = NULL;

	cpg_context_get(h, &ctx);
	return ctx;
}

static void on_deliver(cpg_handle_t h, const struct cpg_name *g,
		       uint32_t nodeid, uint32_t pid, void *msg, size_t len)
{
	(void)g;
	rp_on_deliver(of(h), nodeid, pid, msg, len);
}

static void on_confchg(cpg_handle_t h, const struct cpg_name *g,
		       const struct cpg_address *m, size_t nm,
		       const struct cpg_address *l, size_t nl,
		       const struct cpg_address *j, size_t nj)
{
	(void)g;
	rp_on_confchg(of(h), m, nm, l, nl, j, nj);
}

static void on_totem(cpg_handle_t h, struct cpg_ring_id ring, uint32_t n,
		     const uint32_t *members)
{
	(void)ring;
	(void)members;
	rp_on_ring(of(h), n);
}


static void on_quorum(votequorum_handle_t h, uint64_t ctx, uint32_t quorate,
		      uint32_t nn, votequorum_node_t nodes[])
{
	struct votequorum_info info;
	rp_replica_t *r = (rp_replica_t *)(uintptr_t)ctx;

	(void)nn;
	(void)nodes;
	/* node id 0: this node */
	if (votequorum_getinfo(h, 0, &info) != CS_OK)
		info.quorum = r->quorum_votes;
	rp_on_quorum(r, (int)quorate, info.quorum);
}

int rpg_start(rp_replica_t *r, char *err, size_t errlen)
{
	struct cpg_name g;
	cs_error_t e;

	if (r->cfg.backend == RP_BACKEND_SOLO) {
		struct cpg_address me = { 1, (uint32_t)getpid(), 1 };

		r->my_nodeid = 1;
		r->my_pid = me.pid;
		rp_on_quorum(r, 1, 1);
		rp_on_ring(r, 1);
		rp_on_confchg(r, &me, 1, NULL, 0, &me, 1);
		return 0;
	}
	cpg_model_v1_data_t model = {
		.model = CPG_MODEL_V1,
		.cpg_deliver_fn = on_deliver,
		.cpg_confchg_fn = on_confchg,
		.cpg_totem_confchg_fn = on_totem,
		.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF,
	};
	votequorum_callbacks_t vqcb = { .votequorum_quorum_notify_fn =
						on_quorum };
	struct votequorum_info info;
	unsigned int nodeid = 0;

	e = votequorum_initialize(&r->vq, &vqcb);
	if (e != CS_OK) {
		snprintf(err, errlen, "cannot reach corosync's votequorum "
			 "(error %d): is corosync running on this head node "
			 "with quorum { provider: corosync_votequorum }?", e);
		return -STORM_EUNREACH;
	}
	if (votequorum_getinfo(r->vq, 0, &info) == CS_OK) {
		r->quorum_votes = info.quorum;
		r->quorate = !!(info.flags & VOTEQUORUM_INFO_QUORATE);
	}
	votequorum_trackstart(r->vq, (uint64_t)(uintptr_t)r, CS_TRACK_CHANGES);
	votequorum_fd_get(r->vq, &r->vq_fd);
	e = cpg_model_initialize(&r->cpg, CPG_MODEL_V1,
				 (cpg_model_data_t *)&model, r);
	if (e != CS_OK) {
		snprintf(err, errlen, "cannot reach corosync's CPG service "
			 "(error %d): is corosync running on this head node?",
			 e);
		return -STORM_EUNREACH;
	}
	if (cpg_local_get(r->cpg, &nodeid) != CS_OK) {
		snprintf(err, errlen, "corosync did not tell this node's id");
		return -STORM_EUNREACH;
	}
	r->my_nodeid = nodeid;
	r->my_pid = (uint32_t)getpid();
	cpg_fd_get(r->cpg, &r->cpg_fd);
	g.length = (uint32_t)snprintf(g.value, sizeof(g.value), "storm-%s",
				      r->cluster);
	do {
		e = cpg_join(r->cpg, &g);
		if (e == CS_ERR_TRY_AGAIN)
			poll(NULL, 0, 1);
	} while (e == CS_ERR_TRY_AGAIN);
	if (e != CS_OK) {
		snprintf(err, errlen, "cannot join the CPG group %s (error %d)",
			 g.value, e);
		return -STORM_EUNREACH;
	}
	return 0;
}

void rpg_stop(rp_replica_t *r)
{
	if (r->cfg.backend == RP_BACKEND_SOLO) {
		while (r->solo_head) {
			struct solo_msg *m = r->solo_head;
			r->solo_head = m->next;
			free(m);
		}
		r->solo_tail = &r->solo_head;
		return;
	}
	if (r->cpg) {
		struct cpg_name g;

		g.length = (uint32_t)snprintf(g.value, sizeof(g.value),
					      "storm-%s", r->cluster);
		cpg_leave(r->cpg, &g);
		cpg_finalize(r->cpg);
		r->cpg = 0;
	}
	if (r->vq) {
		votequorum_finalize(r->vq);
		r->vq = 0;
	}
}

int rpg_send(rp_replica_t *r, const void *msg, size_t len)
{
	if (r->cfg.backend == RP_BACKEND_SOLO) {
		struct solo_msg *m = malloc(sizeof(*m) + len);
		uint64_t one = 1;

		if (!m)
			return -ENOMEM;
		m->next = NULL;
		m->len = len;
		memcpy(m->msg, msg, len);
		*r->solo_tail = m;
		r->solo_tail = &m->next;
		if (write(r->solo_fd, &one, 8) < 0 && errno != EAGAIN)
			return -errno;
		return 0;
	}
	struct iovec iov = { (void *)(uintptr_t)msg, len };
	return cs_err(cpg_mcast_joined(r->cpg, CPG_TYPE_AGREED, &iov, 1));
}

int rpg_dispatch(rp_replica_t *r)
{
	if (r->cfg.backend == RP_BACKEND_SOLO) {
		uint64_t v;
		struct solo_msg *m;

		if (read(r->solo_fd, &v, 8) < 0 && errno != EAGAIN)
			return -errno;
		/* only what was queued before this round: a delivery may
		 * queue more, which the eventfd brings back next round */
		struct solo_msg *batch = r->solo_head;
		r->solo_head = NULL;
		r->solo_tail = &r->solo_head;
		while ((m = batch)) {
			batch = m->next;
			rp_on_deliver(r, r->my_nodeid, r->my_pid, m->msg,
				      m->len);
			free(m);
		}
		return 0;
	}
	cs_error_t e = cpg_dispatch(r->cpg, CS_DISPATCH_ALL);
	if (e != CS_OK && e != CS_ERR_TRY_AGAIN)
		return -STORM_ECLOSED;
	if (r->vq) {
		e = votequorum_dispatch(r->vq, CS_DISPATCH_ALL);
		if (e != CS_OK && e != CS_ERR_TRY_AGAIN)
			return -STORM_ECLOSED;
	}
	return 0;
}
