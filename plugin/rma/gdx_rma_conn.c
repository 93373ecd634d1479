/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's connection setup (gdx_rma_conn.h): the listen comm, the
 * collective connect (a ring over the out-of-band network, gdx_rma_boot.c,
 * and what every rank learns of the others), and blocks of contexts: RC QPs
 * per (context, peer, rail) on a CQ per (context, NIC), their addresses
 * all-gathered over the ring, then every QP taken to RTS and a barrier, so
 * that no rank puts before its peers' QPs can take it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rma/gdx_rma_boot.h"
#include "rma/gdx_rma_conn.h"
#include "rma/gdx_rma_progress.h"
#include "rma/gdx_rma_reg.h"
#include "rail/gdx_rail.h"

/* What each rank says of itself in connect. */
#define GDX_RMA_RANK_REC 160

int gdx_rma_listen(struct gdx_rma_init *owner, int dev, void *handle, struct gdx_rma_listen **lc_p)
{
	struct gdx_rma_listen *lc = calloc(1, sizeof(*lc));
	int ret;

	if (!lc)
		return -ENOMEM;
	ret = gdx_rma_boot_listen(handle, &lc->fd, &lc->nonce, lc->addr, sizeof(lc->addr));
	if (ret) {
		free(lc);
		return ret;
	}
	lc->kind = GDX_KIND_RMA_LISTEN;
	lc->owner = owner;
	lc->dev = dev;
	*lc_p = lc;
	return 0;
}

int gdx_rma_close_listen(struct gdx_rma_listen *lc)
{
	if (lc->fd >= 0)
		close(lc->fd);
	lc->kind = GDX_KIND_DEAD;
	free(lc);
	return 0;
}

static void gdx_rma_rank_pack(uint8_t *p, const struct gdx_rma_coll *c, const char *addr)
{
	memset(p, 0, GDX_RMA_RANK_REC);
	gdx_rma_put32(p, (uint32_t)c->v->nmembers);
	gdx_rma_put32(p + 4, (uint32_t)gdx_params.qps_per_connection);
	gdx_rma_put32(p + 8, (uint32_t)c->v->members[0]->link_layer);
	gdx_rma_put32(p + 12, 1); /* filled in: a rank that sent zeros is refused */
	snprintf((char *)p + 16, GDX_DEV_NAME_MAX, "%.63s", c->v->name);
	snprintf((char *)p + 16 + GDX_DEV_NAME_MAX, 64, "%.63s", addr);
}

/* Every rank's record into c->ranks, checked; the connections' QP count. */
static int gdx_rma_ranks_unpack(struct gdx_rma_coll *c, const uint8_t *buf)
{
	uint32_t qps = 1, most = 1;

	for (int i = 0; i < c->nranks; i++) {
		const uint8_t *p = buf + (size_t)i * GDX_RMA_RANK_REC;
		struct gdx_rma_rank *r = &c->ranks[i];

		r->nmembers = gdx_rma_get32(p);
		r->qps = gdx_rma_get32(p + 4);
		r->link_layer = gdx_rma_get32(p + 8);
		gdx_log_sanitize(r->dev, sizeof(r->dev), (const char *)p + 16, GDX_DEV_NAME_MAX);
		gdx_log_sanitize(r->addr, sizeof(r->addr), (const char *)p + 16 + GDX_DEV_NAME_MAX,
				 64);
		if (gdx_rma_get32(p + 12) != 1 || r->nmembers < 1 || r->nmembers > GDX_MAX_RAILS ||
		    r->qps < 1 || r->qps > GDX_RMA_MAX_QPS) {
			GDX_WARN("RMA connect: rank %d sent a malformed record (%u NICs, %u QPs)",
				 i, r->nmembers, r->qps);
			return -EPROTO;
		}
		if (r->link_layer != c->ranks[c->rank].link_layer) {
			GDX_WARN("RMA connect: rank %d's device %s is %s, this rank's %s is %s: "
				 "one group cannot mix InfiniBand and RoCE",
				 i, r->dev,
				 r->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
				 c->v->name,
				 c->ranks[c->rank].link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE"
											 : "IB");
			return -EPROTO;
		}
		if (r->qps > qps)
			qps = r->qps;
		if (r->nmembers > most)
			most = r->nmembers;
	}
	/* every connection has the same QPs per rail: the largest wish, within
	 * what one connection tracks */
	c->qps = (int)(qps * most <= GDX_RMA_MAX_QPS ? qps : GDX_RMA_MAX_QPS / most);
	return 0;
}

int gdx_rma_connect(struct gdx_rma_listen *lc, void *const *handles, int nranks, int rank,
		    struct gdx_rma_coll **coll_p)
{
	struct gdx_rma_coll *c = calloc(1, sizeof(*c));
	struct gdx_dev *devs[GDX_MAX_RAILS];
	char peer[64];
	uint8_t *buf = NULL;
	int ret;

	if (!c)
		return -ENOMEM;
	c->kind = GDX_KIND_RMA_COLL;
	c->owner = lc->owner;
	c->dev = lc->dev;
	c->v = gdx_vdev_get(lc->dev);
	c->nranks = nranks;
	c->rank = rank;
	c->boot.next_fd = c->boot.prev_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->live = &c->live_own;
	c->ranks = calloc((size_t)nranks, sizeof(*c->ranks));
	buf = calloc((size_t)nranks, GDX_RMA_RANK_REC);
	if (!c->ranks || !buf) {
		ret = -ENOMEM;
		goto err;
	}
	ret = gdx_rma_boot_ring(&c->boot, lc->fd, lc->nonce, handles, nranks, rank);
	if (ret)
		goto err;
	gdx_rma_rank_pack(buf + (size_t)rank * GDX_RMA_RANK_REC, c, lc->addr);
	c->ranks[rank].link_layer = (uint32_t)c->v->members[0]->link_layer;
	ret = gdx_rma_boot_allgather(&c->boot, buf, GDX_RMA_RANK_REC, "connect");
	if (!ret)
		ret = gdx_rma_ranks_unpack(c, buf);
	if (ret)
		goto err;
	free(buf);
	for (int m = 0; m < c->v->nmembers; m++)
		devs[m] = c->v->members[m];
	snprintf(peer, sizeof(peer), "rank %d of %d", rank, nranks);
	c->live = gdx_live_rma_open(&c->live_own, c->v->name, lc->addr, peer, c->v->nmembers, devs);
	GDX_INFO(NCCL_INIT | NCCL_NET,
		 "RMA: rank %d of %d connected on %s (%d NIC(s)), %d QP(s) per rail; ring %s -> "
		 "%s",
		 rank, nranks, c->v->name, c->v->nmembers, c->qps,
		 c->boot.prev_addr[0] ? c->boot.prev_addr : "-",
		 c->boot.next_addr[0] ? c->boot.next_addr : "-");
	*coll_p = c;
	return 0;

err:
	free(buf);
	gdx_rma_boot_close(&c->boot);
	free(c->ranks);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return ret;
}

/* Whether rank peer is connected in the block's contexts. */
static bool gdx_rma_connected(const struct gdx_rma_ctx *ctx, int peer)
{
	int n = ctx->coll->nranks;

	return ((peer - ctx->coll->rank + n) % n) % ctx->stride == 0;
}

/* ---- contexts ---- */

/* One rail's part of the exchanged record: its address and its QPs. */
#define GDX_RMA_RAIL_HDR 32
static size_t gdx_rma_rail_rec(int qps)
{
	return GDX_RMA_RAIL_HDR + 4 * (size_t)qps;
}

/* The largest NIC count of the group: every (context, peer) slot of the
 * record has room for that many rails. */
static int gdx_rma_most_rails(const struct gdx_rma_coll *c)
{
	int most = 1;

	for (int i = 0; i < c->nranks; i++)
		if ((int)c->ranks[i].nmembers > most)
			most = (int)c->ranks[i].nmembers;
	return most;
}

/* Where slot (context, peer) of a rank's record starts, after its status. */
static size_t gdx_rma_slot_off(const struct gdx_rma_coll *c, int context, int peer)
{
	size_t slot = (size_t)gdx_rma_most_rails(c) * gdx_rma_rail_rec(c->qps);

	return 8 + ((size_t)context * (size_t)c->nranks + (size_t)peer) * slot;
}

static void gdx_rma_rail_pack(uint8_t *p, const struct gdx_rail *r)
{
	struct gdx_wire_rail w;
	uint32_t qpn[GDX_RMA_MAX_QPS];

	gdx_rail_local(r, &w, qpn);
	memcpy(p, w.gid, 16);
	gdx_rma_put32(p + 16, w.psn);
	gdx_rma_put32(p + 20, w.lid);
	gdx_rma_put32(p + 24, w.link_layer);
	gdx_rma_put32(p + 28, w.mtu);
	for (int q = 0; q < r->nqps; q++)
		gdx_rma_put32(p + GDX_RMA_RAIL_HDR + 4 * (size_t)q, qpn[q]);
}

static void gdx_rma_rail_unpack(const uint8_t *p, int nqps, struct gdx_wire_rail *w, uint32_t *qpn)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->gid, p, 16);
	w->psn = gdx_rma_get32(p + 16) & 0xffffff;
	w->lid = (uint16_t)gdx_rma_get32(p + 20);
	w->link_layer = (uint8_t)gdx_rma_get32(p + 24);
	w->mtu = (uint8_t)gdx_rma_get32(p + 28);
	if (w->mtu < IBV_MTU_256 || w->mtu > IBV_MTU_4096)
		w->mtu = IBV_MTU_1024;
	for (int q = 0; q < nqps; q++)
		qpn[q] = gdx_rma_get32(p + GDX_RMA_RAIL_HDR + 4 * (size_t)q);
}

static void gdx_rma_conn_free(struct gdx_rma_conn *conn)
{
	if (!conn)
		return;
	for (int i = 0; i < GDX_RMA_MAX_REQS; i++)
		if (conn->reqs[i].kind == GDX_KIND_RMA_REQ) /* in flight: its windows go free */
			gdx_rma_req_hold(&conn->reqs[i], -1);
	for (int r = 0; r < conn->ch.nrails; r++)
		gdx_rail_destroy(&conn->ch.rails[r]);
	free(conn);
}

/* A connection's rails and QPs on the context's CQs, in INIT. */
static int gdx_rma_conn_make(struct gdx_rma_ctx *x, int context, int peer,
			     struct gdx_rma_conn **conn_p)
{
	struct gdx_rma_coll *c = x->coll;
	struct gdx_rma_conn *conn = calloc(1, sizeof(*conn));
	uint8_t sl, tc;
	int ret;

	if (!conn)
		return -ENOMEM;
	conn->ctx = x;
	conn->context = context;
	conn->peer = peer;
	conn->nlocal = c->v->nmembers;
	conn->nremote = (int)c->ranks[peer].nmembers;
	conn->ch.nrails = conn->nlocal > conn->nremote ? conn->nlocal : conn->nremote;
	conn->ch.qps_per_rail = c->qps;
	conn->nqps = conn->ch.nrails * c->qps;
	snprintf(conn->name, sizeof(conn->name), "RMA %.40s rank %d", c->v->name, c->rank);
	snprintf(conn->peer_name, sizeof(conn->peer_name), "rank %d, context %d", peer, context);
	conn->ch.err = &conn->err; /* its QPs' context is the RMA context: no tag */
	conn->ch.name = conn->name;
	conn->ch.peer = conn->peer_name;
	conn->ch.peer_dev = "";
	conn->ch.live = c->live;
	gdx_rail_qos(x->tc, &sl, &tc);
	for (int r = 0; r < conn->ch.nrails; r++) {
		int m = r % conn->nlocal;

		ret = gdx_rail_create_shared(&conn->ch.rails[r], c->v->members[m], x, c->qps,
					     &conn->qp_store[r * c->qps], GDX_RMA_SQ,
					     x->cctx[context].cq[m], GDX_RMA_RD_ATOMIC);
		if (ret) {
			gdx_rma_conn_free(conn);
			return ret;
		}
		conn->ch.rails[r].member = m;
		conn->ch.rails[r].sl = sl;
		conn->ch.rails[r].tc = tc;
	}
	gdx_rma_conn_reset(conn);
	*conn_p = conn;
	return 0;
}

/* QPs a context has on member m's NIC, for its CQ's depth. */
static int gdx_rma_qps_on(const struct gdx_rma_ctx *x, int m)
{
	const struct gdx_rma_coll *c = x->coll;
	int n = 0, nl = c->v->nmembers;

	for (int p = 0; p < c->nranks; p++) {
		int nr = (int)c->ranks[p].nmembers, rails = nl > nr ? nl : nr;

		if (!gdx_rma_connected(x, p))
			continue;
		for (int r = 0; r < rails; r++)
			n += r % nl == m ? c->qps : 0;
	}
	return n;
}

/* This rank's part of a block: CQs, scratch, connections. */
static int gdx_rma_ctx_local(struct gdx_rma_ctx *x)
{
	struct gdx_rma_coll *c = x->coll;
	int ret;

	x->scratch = aligned_alloc(4096, 4096);
	if (!x->scratch)
		return -ENOMEM;
	memset(x->scratch, 0, 4096);
	for (int m = 0; m < c->v->nmembers; m++) {
		struct gdx_dev *d = c->v->members[m];
		struct ibv_pd *pd;

		ret = gdx_dev_pd(d, &pd);
		if (ret)
			return ret;
		x->scratch_mr[m] = ibv_reg_mr(pd, x->scratch, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (!x->scratch_mr[m]) {
			ret = errno ? -errno : -ENOMEM;
			GDX_WARN("RMA: ibv_reg_mr(%s, the context's scratch page) failed: %s",
				 d->ibdev, strerror(-ret));
			return ret;
		}
	}
	for (int k = 0; k < x->ncontexts; k++) {
		for (int m = 0; m < c->v->nmembers; m++) {
			struct gdx_dev *d = c->v->members[m];
			int depth = gdx_rma_qps_on(x, m) * GDX_RMA_SQ;

			if (depth < 1)
				depth = 1;
			if (d->ib->attr.max_cqe > 0 && depth > d->ib->attr.max_cqe)
				depth = d->ib->attr.max_cqe;
			x->cctx[k].cq[m] = ibv_create_cq(d->ib->ctx, depth, x, NULL, 0);
			if (!x->cctx[k].cq[m]) {
				ret = errno ? -errno : -ENOMEM;
				GDX_WARN("RMA: ibv_create_cq(%s, %d entries) failed: %s", d->ibdev,
					 depth, strerror(-ret));
				return ret;
			}
		}
		for (int p = 0; p < c->nranks; p++) {
			if (!gdx_rma_connected(x, p))
				continue;
			ret = gdx_rma_conn_make(x, k, p, &x->conns[(size_t)k * c->nranks + p]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static void gdx_rma_ctx_free(struct gdx_rma_ctx *x)
{
	struct gdx_rma_coll *c = x->coll;

	for (int k = 0; x->conns && k < x->ncontexts; k++)
		for (int p = 0; p < c->nranks; p++)
			gdx_rma_conn_free(x->conns[(size_t)k * c->nranks + p]);
	for (int k = 0; x->cctx && k < x->ncontexts; k++)
		for (int m = 0; m < GDX_MAX_RAILS; m++)
			if (x->cctx[k].cq[m] && ibv_destroy_cq(x->cctx[k].cq[m]))
				GDX_WARN("RMA: ibv_destroy_cq failed");
	for (int m = 0; m < GDX_MAX_RAILS; m++)
		if (x->scratch_mr[m])
			ibv_dereg_mr(x->scratch_mr[m]);
	free(x->scratch);
	free(x->conns);
	free(x->cctx);
	x->kind = GDX_KIND_DEAD;
	free(x);
}

/* Every connection's QPs to RTS towards the peer's, from its record. */
static int gdx_rma_ctx_connect(struct gdx_rma_ctx *x, const uint8_t *all, size_t block)
{
	struct gdx_rma_coll *c = x->coll;

	for (int k = 0; k < x->ncontexts; k++) {
		for (int p = 0; p < c->nranks; p++) {
			struct gdx_rma_conn *conn = gdx_rma_conn_of(x, k, p);
			const uint8_t *theirs =
				all + (size_t)p * block + gdx_rma_slot_off(c, k, c->rank);

			for (int r = 0; conn && r < conn->ch.nrails; r++) {
				struct gdx_wire_rail w;
				uint32_t qpn[GDX_RMA_MAX_QPS];
				int ret;

				gdx_rma_rail_unpack(theirs + (size_t)r * gdx_rma_rail_rec(c->qps),
						    c->qps, &w, qpn);
				ret = gdx_rail_connect(&conn->ch.rails[r], &w, qpn);
				if (ret) {
					GDX_WARN("RMA createContext: rail %d of context %d to rank "
						 "%d (%s) did not connect",
						 r, k, p, c->ranks[p].dev);
					return ret;
				}
			}
		}
	}
	return 0;
}

/* Whether every rank's status word (the first 8 bytes of its block) is 0;
 * the first that is not is said. */
int gdx_rma_all_ok(const struct gdx_rma_coll *c, const uint8_t *all, size_t block, const char *what)
{
	for (int p = 0; p < c->nranks; p++) {
		uint32_t st = gdx_rma_get32(all + (size_t)p * block);
		int err = gdx_rma_peer_status(st);

		if (!st)
			continue;
		if (st > GDX_RMA_ERRNO_MAX)
			GDX_WARN("RMA %s: rank %d (%s) sent status 0x%x, which is no errno: a "
				 "malformed record, the call fails on every rank",
				 what, p, c->ranks[p].addr, st);
		else if (p != c->rank)
			GDX_WARN("RMA %s: rank %d (%s) could not make its part (%s): the "
				 "call fails on every rank",
				 what, p, c->ranks[p].addr, strerror(-err));
		return err;
	}
	return 0;
}

/* Every rank's QPs at RTS (local: this rank's result), or every rank
 * fails. */
static int gdx_rma_ctx_barrier(struct gdx_rma_coll *c, int local)
{
	uint8_t *bar = calloc((size_t)c->nranks, 8);
	int ret;

	if (!bar)
		return -ENOMEM; /* the others time out: nothing better to do */
	gdx_rma_put32(bar + (size_t)c->rank * 8, (uint32_t)-local);
	ret = gdx_rma_boot_allgather(&c->boot, bar, 8, "createContext");
	if (!ret)
		ret = gdx_rma_all_ok(c, bar, 8, "createContext");
	free(bar);
	return ret;
}

int gdx_rma_ctx_create(struct gdx_rma_coll *c, int n, int tc, int stride,
		       struct gdx_rma_ctx **ctx_p)
{
	struct gdx_rma_ctx *x = calloc(1, sizeof(*x));
	size_t block;
	uint8_t *all = NULL;
	int ret = 0, local = 0;

	if (!x)
		return -ENOMEM;
	x->kind = GDX_KIND_RMA_CTX;
	x->coll = c;
	x->ncontexts = n;
	x->stride = stride;
	x->tc = tc;
	x->cctx = calloc((size_t)n, sizeof(*x->cctx));
	x->conns = calloc((size_t)n * (size_t)c->nranks, sizeof(*x->conns));
	block = gdx_rma_slot_off(c, n, 0);
	all = calloc((size_t)c->nranks, block);
	if (!x->cctx || !x->conns || !all)
		local = -ENOMEM;
	if (!local)
		local = gdx_rma_ctx_local(x);
	if (!local) {
		uint8_t *mine = all + (size_t)c->rank * block;

		for (int k = 0; k < n; k++)
			for (int p = 0; p < c->nranks; p++) {
				struct gdx_rma_conn *conn = gdx_rma_conn_of(x, k, p);

				for (int r = 0; conn && r < conn->ch.nrails; r++)
					gdx_rma_rail_pack(mine + gdx_rma_slot_off(c, k, p) +
								  (size_t)r *
									  gdx_rma_rail_rec(c->qps),
							  &conn->ch.rails[r]);
			}
	}
	/* A rank that failed still takes part, saying so: the others must not
	 * wait for it, nor connect to what it does not have. */
	if (!all) {
		ret = local;
	} else {
		gdx_rma_put32(all + (size_t)c->rank * block, (uint32_t)-local);
		ret = gdx_rma_boot_allgather(&c->boot, all, block, "createContext");
		if (!ret)
			ret = gdx_rma_all_ok(c, all, block, "createContext");
		if (!ret)
			ret = gdx_rma_ctx_barrier(c, gdx_rma_ctx_connect(x, all, block));
	}
	free(all);
	if (ret) {
		gdx_rma_ctx_free(x);
		return ret;
	}
	pthread_mutex_lock(&c->lock);
	x->next = c->ctxs;
	c->ctxs = x;
	c->nctxs++;
	pthread_mutex_unlock(&c->lock);
	GDX_INFO(NCCL_NET,
		 "RMA: %d context(s) on %s, rank stride %d: connections to %d rank(s) each, %d "
		 "QP(s) per rail",
		 n, c->v->name, stride, c->nranks / stride, c->qps);
	*ctx_p = x;
	return 0;
}

int gdx_rma_ctx_destroy(struct gdx_rma_ctx *x)
{
	struct gdx_rma_coll *c = x->coll;
	int left = 0;

	for (int k = 0; k < x->ncontexts; k++)
		for (int p = 0; p < c->nranks; p++) {
			struct gdx_rma_conn *conn = gdx_rma_conn_of(x, k, p);

			left += conn ? conn->active : 0;
		}
	if (left)
		GDX_WARN("RMA destroyContext: %d request(s) still in flight are dropped", left);
	pthread_mutex_lock(&c->lock);
	for (struct gdx_rma_ctx **pp = &c->ctxs; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			c->nctxs--;
			break;
		}
	pthread_mutex_unlock(&c->lock);
	gdx_rma_ctx_free(x);
	return 0;
}

int gdx_rma_close_coll(struct gdx_rma_coll *c)
{
	int ctxs = 0, mrs;

	while (c->ctxs) {
		gdx_rma_ctx_destroy(c->ctxs);
		ctxs++;
	}
	mrs = gdx_rma_mrs_drop(c);
	/* NCCL's order is destroyContext, deregMrSym, then closeColl: what is
	 * left is released all the same, and the call says it was out of order */
	if (ctxs || mrs)
		GDX_WARN("RMA closeColl of %p: %d context(s) not destroyed and %d window(s) not "
			 "deregistered first (NCCL destroys its contexts, then deregisters, then "
			 "closes): released with it, and the call fails",
			 (void *)c, ctxs, mrs);
	gdx_ptrset_free(&c->reqs);
	gdx_live_rma_close(c->live, &c->live_own);
	gdx_rma_boot_close(&c->boot);
	free(c->ranks);
	pthread_mutex_destroy(&c->lock);
	c->kind = GDX_KIND_DEAD;
	free(c);
	return ctxs || mrs ? -EBUSY : 0;
}
