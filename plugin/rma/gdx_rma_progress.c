/* SPDX-License-Identifier: MIT */
/* One-sided RMA's engine (gdx_rma_progress.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rail/gdx_chan_out.h"
#include "rail/gdx_event.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rma/gdx_rma_progress.h"
#include "sys/gdx_time.h"
#include "rail/gdx_rail.h"
#include "rail/gdx_stall.h"
#include "rail/gdx_stripe.h"

#define NIL GDX_RMA_NIL

/* Work requests handed to ibv_post_send at once, and completions polled at
 * once. */
#define GDX_RMA_BATCH 16
#define GDX_RMA_POLL  32
/* How often the live slot's wait is worked out (ms). */
#define GDX_RMA_TICK_MS 100

/* ---- pools and lists ---- */

void gdx_rma_conn_reset(struct gdx_rma_conn *c)
{
	c->free_req = NIL;
	for (int i = GDX_RMA_MAX_REQS - 1; i >= 0; i--) {
		c->reqs[i].index = (uint16_t)i;
		c->reqs[i].kind = GDX_KIND_DEAD;
		c->reqs[i].next = c->free_req;
		c->free_req = (uint16_t)i;
	}
	c->free_wr = NIL;
	for (int i = GDX_RMA_CONN_WRS - 1; i >= 0; i--) {
		c->wrs[i].next = c->free_wr;
		c->free_wr = (uint16_t)i;
	}
	c->nfree_wrs = GDX_RMA_CONN_WRS;
	for (int q = 0; q < GDX_RMA_MAX_QPS; q++)
		c->qs[q] = (struct gdx_rma_qp){.head = NIL, .tail = NIL, .unposted = NIL};
	c->sig_head = c->sig_tail = c->bl_head = c->bl_tail = NIL;
	c->home = 0;
	/* every rail in; the stripe's rates from the ports' speeds */
	c->ch.qps = c->qp_store;
	c->ch.split = true;
	c->ch.standby = 0;
	c->ch.failover = gdx_params.failover;
	c->ch.nlive = c->ch.nrails;
	for (int r = 0; r < c->ch.nrails; r++)
		c->ch.run[r] = (struct gdx_rail_run){.state = GDX_RAIL_UP};
	gdx_stripe_init(&c->ch);
	c->err = 0;
	c->tick = 0;
	c->active = 0;
}

static uint16_t gdx_rma_wr_get(struct gdx_rma_conn *c)
{
	uint16_t i = c->free_wr;

	if (i == NIL)
		return NIL;
	c->free_wr = c->wrs[i].next;
	c->nfree_wrs--;
	return i;
}

/* Back to the pool; a completion of this use that comes later is dropped. */
static void gdx_rma_wr_put(struct gdx_rma_conn *c, uint16_t i)
{
	c->wrs[i].gen++;
	c->wrs[i].posted = false;
	c->wrs[i].next = c->free_wr;
	c->free_wr = i;
	c->nfree_wrs++;
}

static void gdx_rma_fifo_append(struct gdx_rma_conn *c, int q, uint16_t i)
{
	struct gdx_rma_qp *s = &c->qs[q];

	c->wrs[i].qp = (uint8_t)q;
	c->wrs[i].next = NIL;
	c->wrs[i].posted = false;
	if (s->tail == NIL)
		s->head = i;
	else
		c->wrs[s->tail].next = i;
	s->tail = i;
	if (s->unposted == NIL)
		s->unposted = i;
}

/* Takes entry i out of its QP's FIFO (the head, but for a completion out of
 * the NIC's order, which RC never gives). */
static void gdx_rma_fifo_remove(struct gdx_rma_conn *c, int q, uint16_t i)
{
	struct gdx_rma_qp *s = &c->qs[q];
	uint16_t prev = NIL;

	for (uint16_t k = s->head; k != NIL; prev = k, k = c->wrs[k].next) {
		if (k != i)
			continue;
		if (prev == NIL)
			s->head = c->wrs[k].next;
		else
			c->wrs[prev].next = c->wrs[k].next;
		if (s->tail == k)
			s->tail = prev;
		if (s->unposted == k)
			s->unposted = c->wrs[k].next;
		return;
	}
}

static void gdx_rma_busy_link(struct gdx_rma_conn *c)
{
	struct gdx_rma_cctx *cc = &c->ctx->cctx[c->context];

	if (c->busy_linked)
		return;
	c->busy_prev = NULL;
	c->busy_next = cc->busy;
	if (cc->busy)
		cc->busy->busy_prev = c;
	cc->busy = c;
	c->busy_linked = true;
}

static void gdx_rma_busy_unlink(struct gdx_rma_conn *c)
{
	struct gdx_rma_cctx *cc = &c->ctx->cctx[c->context];

	if (!c->busy_linked)
		return;
	if (c->busy_prev)
		c->busy_prev->busy_next = c->busy_next;
	else
		cc->busy = c->busy_next;
	if (c->busy_next)
		c->busy_next->busy_prev = c->busy_prev;
	c->busy_linked = false;
}

struct gdx_rma_req *gdx_rma_req_get(struct gdx_rma_conn *c, enum gdx_rma_op op)
{
	struct gdx_rma_req *r;
	uint16_t i = c->free_req;

	if (i == NIL)
		return NULL;
	r = &c->reqs[i];
	c->free_req = r->next;
	memset(r, 0, sizeof(*r));
	r->index = i;
	r->next = r->bl_next = NIL;
	r->kind = GDX_KIND_RMA_REQ;
	r->op = (uint8_t)op;
	r->conn = c;
	r->tick = ++c->tick;
	r->issued_ms = gdx_now_ms();
	c->active++;
	gdx_rma_busy_link(c);
	__atomic_add_fetch(&c->ctx->coll->live->outstanding, 1, __ATOMIC_RELAXED);
	return r;
}

static void gdx_rma_req_free(struct gdx_rma_req *r)
{
	struct gdx_rma_conn *c = r->conn;

	gdx_rma_req_hold(r, -1);
	r->kind = GDX_KIND_DEAD;
	r->next = c->free_req;
	c->free_req = r->index;
	c->active--;
	__atomic_sub_fetch(&c->ctx->coll->live->outstanding, 1, __ATOMIC_RELAXED);
}

/* ---- which QPs a request takes ---- */

static bool gdx_rma_qp_live(const struct gdx_rma_conn *c, int q)
{
	return gdx_chan_qp_up(&c->ch, q);
}

/* Whether a request of this size is striped over the channel's rails up
 * and their QPs, or goes whole on the home QP (small puts, which a signal
 * then follows on the same QP without waiting). */
static bool gdx_rma_spread(const struct gdx_rma_conn *c, uint64_t size)
{
	return size >= (uint64_t)gdx_params.stripe_min && c->nqps > 1;
}

static uint64_t gdx_rma_piece_max(const struct gdx_rma_conn *c)
{
	uint64_t most = GDX_RMA_PIECE_MAX;

	for (int r = 0; r < c->ch.nrails; r++)
		if (c->ch.rails[r].dev->max_msg_sz && c->ch.rails[r].dev->max_msg_sz < most)
			most = c->ch.rails[r].dev->max_msg_sz & ~(uint64_t)(GDX_STRIPE_ALIGN - 1);
	return most ? most : GDX_STRIPE_ALIGN;
}

uint32_t gdx_rma_req_wrs(const struct gdx_rma_conn *c, enum gdx_rma_op op, uint64_t size)
{
	uint64_t most = gdx_rma_piece_max(c);

	if (op == GDX_RMA_FLUSH)
		return (uint32_t)c->nlocal;
	/* whatever number of QPs is left when it is made: the smallest
	 * multiple of it at or past size / most is below that plus the QPs */
	return (uint32_t)((size + most - 1) / most) + (uint32_t)c->nqps;
}

/* Connection to itself: NIC r's rail is out, so a flush cannot read through
 * it; what it wrote into windows before it failed is ordered by no flush
 * from now on. Once per NIC, at WARN: the GPU may see those bytes late. */
static void gdx_rma_unflushed(struct gdx_rma_conn *c, int r)
{
	if (c->unflushed_told & (1u << r))
		return;
	c->unflushed_told |= 1u << r;
	GDX_WARN("RMA: rank %d, context %d: iflush cannot read through %s, its rail to itself "
		 "is out (taken out after a failure): what %s wrote into this rank's windows "
		 "before then is not ordered by this flush or any later one; the other NICs "
		 "are flushed (the job goes on, failover on; a restart brings the NIC back)",
		 c->ctx->coll->rank, c->context, c->ch.rails[r].dev->ibdev,
		 c->ch.rails[r].dev->ibdev);
}

/* The request's work requests, in its QPs' FIFOs; -EAGAIN while the pool
 * has no room for them all. */
static int gdx_rma_expand(struct gdx_rma_conn *c, struct gdx_rma_req *req)
{
	struct gdx_piece pieces[GDX_MAX_QPS];
	uint64_t most = gdx_rma_piece_max(c);
	uint32_t need = 0;
	uint8_t op = req->op == GDX_RMA_GET ? GDX_RMA_WR_READ : GDX_RMA_WR_WRITE;
	int n;

	if (req->op == GDX_RMA_FLUSH) {
		if ((req->size ? c->nlocal : 0) > c->nfree_wrs)
			return -EAGAIN;
		req->expanded = true;
		/* through the connection to itself: an 8-byte read on each NIC
		 * that may have written the window, the first QP of its rail. A
		 * read through another NIC orders nothing this one wrote, so a
		 * NIC whose rail is out gets none, and that is said. */
		for (int r = 0; r < c->nlocal && req->size; r++) {
			uint16_t i;
			int q = r * c->ch.qps_per_rail;

			if (!gdx_rma_qp_live(c, q)) {
				gdx_rma_unflushed(c, r);
				continue;
			}
			i = gdx_rma_wr_get(c);
			c->wrs[i].req = req->index;
			c->wrs[i].op = GDX_RMA_WR_FLUSH;
			c->wrs[i].off = 0;
			c->wrs[i].len = (uint32_t)(req->size < 8 ? req->size : 8);
			gdx_rma_fifo_append(c, q, i);
			req->pending++;
		}
		return 0;
	}
	if (!req->size) {
		req->expanded = true;
		return 0;
	}
	/* spread as the two-sided path stripes (rail/gdx_stripe.h): over the
	 * rails up, by what each has been delivering, each rail's share over
	 * all its QPs; small ones whole on the home QP */
	if (gdx_rma_spread(c, req->size)) {
		n = gdx_stripe_plan(&c->ch, req->size, req->tick, false, pieces);
	} else {
		pieces[0] = (struct gdx_piece){.rail = (uint8_t)(c->home / c->ch.qps_per_rail),
					       .q = (uint8_t)(c->home % c->ch.qps_per_rail),
					       .len = req->size};
		n = 1;
	}
	if (!n)
		return -EAGAIN; /* no rail is up: the connection has failed (c->err) */
	for (int k = 0; k < n; k++)
		need += (uint32_t)((pieces[k].len + most - 1) / most);
	if (need > (uint32_t)c->nfree_wrs)
		return -EAGAIN;
	req->expanded = true;
	for (int k = 0; k < n; k++) {
		int q = pieces[k].rail * c->ch.qps_per_rail + pieces[k].q;
		uint64_t off = pieces[k].off, end = off + pieces[k].len;

		gdx_stripe_posted(&c->ch, pieces[k].rail, pieces[k].len);
		while (off < end) {
			uint64_t len = end - off < most ? end - off : most;
			uint16_t i = gdx_rma_wr_get(c);

			c->wrs[i].req = req->index;
			c->wrs[i].op = op;
			c->wrs[i].off = off;
			c->wrs[i].len = (uint32_t)len;
			gdx_rma_fifo_append(c, q, i);
			req->pending++;
			off += len;
		}
	}
	return 0;
}

/* ---- signals ---- */

/* Whether entry e of c is work that signal s covers. */
static bool gdx_rma_covers(const struct gdx_rma_conn *c, const struct gdx_rma_req *s,
			   const struct gdx_rma_wr *e)
{
	const struct gdx_rma_req *r = &c->reqs[e->req];

	if (!s->strong)
		return e->req == s->index;
	return (r->op == GDX_RMA_PUT || r->op == GDX_RMA_PUT_SIGNAL) && r->tick <= s->tick;
}

/* The QP the signal s would be posted on now, or -1 while what it covers
 * is outstanding on two or more. */
static int gdx_rma_signal_qp(const struct gdx_rma_conn *c, const struct gdx_rma_req *s)
{
	int found = -1;

	for (int q = 0; q < c->nqps; q++) {
		for (uint16_t i = c->qs[q].head; i != NIL; i = c->wrs[i].next) {
			if (!gdx_rma_covers(c, s, &c->wrs[i]))
				continue;
			if (found >= 0)
				return -1; /* outstanding on two QPs */
			found = q;
			break;
		}
	}
	/* With failover a signal goes on the home QP only: a rail that fails
	 * then never holds an atomic but the home rail's (which failover
	 * cannot send again, see gdx_rma_rail_out) */
	if (found >= 0 && found != c->home && c->ch.failover)
		return -1;
	return found >= 0 ? found : c->home;
}

/* Signals made into atomics, in order, while what each covers allows. */
static void gdx_rma_release(struct gdx_rma_conn *c)
{
	while (c->sig_head != NIL) {
		struct gdx_rma_req *s = &c->reqs[c->sig_head];
		int q;
		uint16_t i;

		if (!s->expanded)
			return; /* its puts wait for room: so does it */
		q = gdx_rma_signal_qp(c, s);
		if (q < 0)
			return;
		i = gdx_rma_wr_get(c);
		if (i == NIL)
			return;
		c->wrs[i].req = s->index;
		c->wrs[i].op = GDX_RMA_WR_ATOMIC;
		c->wrs[i].off = 0;
		c->wrs[i].len = 8;
		gdx_rma_fifo_append(c, q, i);
		s->released = true;
		c->sig_head = s->next;
		if (c->sig_head == NIL)
			c->sig_tail = NIL;
	}
}

static void gdx_rma_backlog(struct gdx_rma_conn *c)
{
	while (c->bl_head != NIL) {
		struct gdx_rma_req *r = &c->reqs[c->bl_head];

		if (gdx_rma_expand(c, r))
			return;
		c->bl_head = r->bl_next;
		if (c->bl_head == NIL)
			c->bl_tail = NIL;
	}
}

/* ---- the NIC ---- */

static void gdx_rma_wr_build(struct gdx_rma_conn *c, uint16_t i, struct ibv_send_wr *wr,
			     struct ibv_sge *sge)
{
	const struct gdx_rma_wr *e = &c->wrs[i];
	const struct gdx_rma_req *r = &c->reqs[e->req];
	const struct gdx_rail *rail = &c->ch.rails[e->qp / c->ch.qps_per_rail];
	int m = rail->member, rm = (e->qp / c->ch.qps_per_rail) % c->nremote;
	struct gdx_rma_ctx *x = c->ctx;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = GDX_RMA_WRID(c->peer, i, e->gen);
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	sge->length = e->len;
	switch (e->op) {
	case GDX_RMA_WR_WRITE:
	case GDX_RMA_WR_READ:
		sge->addr = r->lmh->local->addr + r->loff + e->off;
		sge->lkey = r->lmh->local->lkey[m];
		wr->opcode = e->op == GDX_RMA_WR_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = r->rmh->ranks[c->peer].base + r->roff + e->off;
		wr->wr.rdma.rkey = r->rmh->ranks[c->peer].rkey[rm];
		if (e->op == GDX_RMA_WR_WRITE && e->len <= rail->max_inline)
			wr->send_flags |= IBV_SEND_INLINE;
		break;
	case GDX_RMA_WR_ATOMIC:
		sge->addr = (uintptr_t)x->scratch + 8 * (uint64_t)m;
		sge->lkey = x->scratch_mr[m]->lkey;
		wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = r->smh->ranks[c->peer].base + r->soff;
		wr->wr.atomic.compare_add = r->add;
		wr->wr.atomic.rkey = r->smh->ranks[c->peer].rkey[rm];
		break;
	default: /* GDX_RMA_WR_FLUSH: the local window, as the NIC reaches it */
		sge->addr = (uintptr_t)x->scratch + 128 + 8 * (uint64_t)m;
		sge->lkey = x->scratch_mr[m]->lkey;
		wr->opcode = IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = r->lmh->ranks[c->peer].base;
		wr->wr.rdma.rkey = r->lmh->ranks[c->peer].rkey[rm];
		break;
	}
}

static void gdx_rma_qp_failed(struct gdx_rma_conn *c, int q, enum ibv_wc_status st, uint32_t vendor,
			      const char *what);

/* The QP's work not yet given to the NIC, as its send queue has room. */
static void gdx_rma_post_qp(struct gdx_rma_conn *c, int q)
{
	struct gdx_rma_qp *s = &c->qs[q];

	while (s->unposted != NIL && s->posted < GDX_RMA_SQ && !c->err && gdx_rma_qp_live(c, q)) {
		struct ibv_send_wr wrs[GDX_RMA_BATCH], *bad = NULL;
		struct ibv_sge sges[GDX_RMA_BATCH];
		uint16_t idx[GDX_RMA_BATCH];
		int n = 0, ret;

		for (uint16_t i = s->unposted;
		     i != NIL && n < GDX_RMA_BATCH && s->posted + (uint32_t)n < GDX_RMA_SQ;
		     i = c->wrs[i].next) {
			gdx_rma_wr_build(c, i, &wrs[n], &sges[n]);
			if (n)
				wrs[n - 1].next = &wrs[n];
			idx[n++] = i;
		}
		ret = ibv_post_send(c->qp_store[q].qp, wrs, &bad);
		if (!s->posted)
			s->since_ms = gdx_now_ms();
		for (int k = 0; k < n && (!ret || &wrs[k] != bad); k++) {
			c->wrs[idx[k]].posted = true;
			s->unposted = c->wrs[idx[k]].next;
			s->posted++;
		}
		if (ret == ENOMEM)
			return; /* the queue is full after all: the next call goes on */
		if (ret) {
			GDX_WARN("RMA: ibv_post_send(%s qp 0x%x) to rank %d failed: %s",
				 c->ch.rails[q / c->ch.qps_per_rail].dev->ibdev,
				 c->qp_store[q].qp->qp_num, c->peer, strerror(ret));
			gdx_rma_qp_failed(c, q, IBV_WC_LOC_QP_OP_ERR, (uint32_t)ret,
					  "ibv_post_send failed");
			return;
		}
	}
}

static void gdx_rma_service(struct gdx_rma_conn *c)
{
	if (!c->err) {
		gdx_rma_backlog(c);
		gdx_rma_release(c);
		for (int q = 0; q < c->nqps; q++)
			if (c->qs[q].unposted != NIL)
				gdx_rma_post_qp(c, q);
		c->held = false;
	}
	if (!c->active)
		gdx_rma_busy_unlink(c);
}

void gdx_rma_issue(struct gdx_rma_conn *c, struct gdx_rma_req *req, bool hold)
{
	req->pending = 0; /* its work requests count as they are made */
	if (req->op == GDX_RMA_PUT_SIGNAL) {
		req->pending++; /* the atomic, once released */
		if (c->sig_tail == NIL)
			c->sig_head = req->index;
		else
			c->reqs[c->sig_tail].next = req->index;
		c->sig_tail = req->index;
		req->next = NIL;
	}
	if (c->bl_head != NIL || gdx_rma_expand(c, req)) {
		if (c->bl_tail == NIL)
			c->bl_head = req->index;
		else
			c->reqs[c->bl_tail].bl_next = req->index;
		c->bl_tail = req->index;
	}
	if (hold)
		c->held = true;
	else
		gdx_rma_service(c);
}

/* ---- failures ---- */

static void gdx_rma_ctx_fail(struct gdx_rma_ctx *x, const char *why)
{
	if (x->has_error)
		return;
	snprintf(x->error, sizeof(x->error), "%s", why);
	__atomic_store_n(&x->has_error, true, __ATOMIC_RELEASE);
}

/* What a rail's QP is, for a person. */
static void gdx_rma_qp_name(const struct gdx_rma_conn *c, int q, enum ibv_wc_status st,
			    uint32_t vendor, const char *what, char *buf, size_t len)
{
	const struct gdx_rma_coll *coll = c->ctx->coll;
	int r = q / c->ch.qps_per_rail;
	char status[96];

	if (what)
		snprintf(status, sizeof(status), "%s", what);
	else
		snprintf(status, sizeof(status), "%s (vendor error 0x%x)", ibv_wc_status_str(st),
			 vendor);
	snprintf(buf, len, "rank %d to rank %d (%s), context %d, rail %d (%s) qp 0x%x: %s",
		 coll->rank, c->peer, coll->ranks[c->peer].dev, c->context, r,
		 c->ch.rails[r].dev->ibdev, c->qp_store[q].qp ? c->qp_store[q].qp->qp_num : 0,
		 status);
}

/* Every request of the connection fails with err; its QPs go to error. */
static void gdx_rma_conn_fail(struct gdx_rma_conn *c, int err, const char *why, const char *hint)
{
	int failed = 0;

	if (c->err)
		return;
	c->err = err;
	for (int r = 0; r < c->ch.nrails; r++)
		if (gdx_chan_up(&c->ch, r))
			gdx_rail_freeze(&c->ch.rails[r]);
	for (int q = 0; q < c->nqps; q++) {
		while (c->qs[q].head != NIL) {
			uint16_t i = c->qs[q].head;

			c->qs[q].head = c->wrs[i].next;
			gdx_rma_wr_put(c, i);
		}
		c->qs[q] = (struct gdx_rma_qp){.head = NIL, .tail = NIL, .unposted = NIL};
	}
	c->sig_head = c->sig_tail = c->bl_head = c->bl_tail = NIL;
	for (int i = 0; i < GDX_RMA_MAX_REQS; i++) {
		struct gdx_rma_req *r = &c->reqs[i];

		if (r->kind != GDX_KIND_RMA_REQ)
			continue;
		if (r->pending || !r->expanded) {
			r->err = r->err ? r->err : err;
			failed++;
		}
		r->pending = 0;
		r->expanded = true;
	}
	GDX_WARN("RMA: %s: the connection failed, %d request(s) with it; queryLastError says so "
		 "from now on (%s)",
		 why, failed, hint);
	gdx_rma_ctx_fail(c->ctx, why);
}

static bool gdx_rma_transport_err(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_WR_FLUSH_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_FATAL_ERR:
	case IBV_WC_GENERAL_ERR: return true;
	default: return false;
	}
}

/* Rail r out of the connection: its QPs to error and its work, in order,
 * onto the home QP of the rails left; but for an atomic the NIC had: the
 * target may or may not have added it, and adding it again could count a
 * signal twice, so its request fails instead. */
static void gdx_rma_rail_out(struct gdx_rma_conn *c, int r, const char *why)
{
	int moved = 0, doubt = 0, home = -1;
	char lost[200] = "";

	gdx_chan_take_out(&c->ch, r, GDX_RAIL_DOWN, gdx_now_ms());
	for (int q = 0; q < c->nqps && home < 0; q++)
		if (gdx_rma_qp_live(c, q))
			home = q;
	c->home = home;
	for (int q = r * c->ch.qps_per_rail; q < (r + 1) * c->ch.qps_per_rail; q++) {
		uint16_t i = c->qs[q].head;

		c->qs[q] = (struct gdx_rma_qp){.head = NIL, .tail = NIL, .unposted = NIL};
		while (i != NIL) {
			uint16_t next = c->wrs[i].next;
			struct gdx_rma_req *req = &c->reqs[c->wrs[i].req];

			if (c->wrs[i].op == GDX_RMA_WR_ATOMIC && c->wrs[i].posted) {
				if (!doubt++)
					snprintf(
						lost, sizeof(lost),
						"; the signal at +0x%llx of rank %d's window was on "
						"it: it may or may not have been added, and is not "
						"sent again",
						(unsigned long long)req->soff, c->peer);
				gdx_rma_wr_put(c, i);
				req->pending--;
				req->err = -EREMOTEIO;
			} else {
				c->wrs[i].gen++; /* what the failed QP flushes is dropped */
				gdx_rma_fifo_append(c, home, i);
				moved++;
			}
			i = next;
		}
	}
	GDX_WARN("RMA: %s: rail %d taken out of the connection (NCCL_GDX_FAILOVER=1), %d work "
		 "request(s) sent again on %s%s",
		 why, r, moved, c->ch.rails[home / c->ch.qps_per_rail].dev->ibdev, lost);
	__atomic_add_fetch(&c->ctx->coll->live->rails[c->ch.rails[r].member % GDX_LIVE_RAILS].downs,
			   1, __ATOMIC_RELAXED);
	if (doubt) {
		char full[640];

		snprintf(full, sizeof(full), "%s%s", why, lost);
		gdx_rma_ctx_fail(c->ctx, full);
	}
}

static void gdx_rma_qp_failed(struct gdx_rma_conn *c, int q, enum ibv_wc_status st, uint32_t vendor,
			      const char *what)
{
	int r = q / c->ch.qps_per_rail, live = c->ch.nlive;
	char why[384];

	if (c->err || !gdx_rma_qp_live(c, q))
		return;
	gdx_rma_qp_name(c, q, st, vendor, what, why, sizeof(why));
	if (c->ch.failover && live > 1 && gdx_rma_transport_err(st)) {
		gdx_rma_rail_out(c, r, why);
		return;
	}
	gdx_rma_conn_fail(c, -EREMOTEIO, why,
			  c->ch.failover ? (live > 1 ? "not an error another rail can get past"
						     : "no other rail is left")
					 : gdx_wc_hint(st));
}

/* ---- completions ---- */

static void gdx_rma_count(struct gdx_rma_conn *c, const struct gdx_rma_wr *e)
{
	struct gdx_live_comm *l = c->ctx->coll->live;
	int m = c->ch.rails[e->qp / c->ch.qps_per_rail].member % GDX_LIVE_RAILS;

	if (e->op == GDX_RMA_WR_WRITE || e->op == GDX_RMA_WR_READ)
		gdx_stripe_delivered(&c->ch, e->qp / c->ch.qps_per_rail, e->len);
	if (e->op == GDX_RMA_WR_WRITE)
		GDX_LIVE_COUNT(__atomic_add_fetch(&l->rails[m].tx_bytes, e->len, __ATOMIC_RELAXED));
	else if (e->op == GDX_RMA_WR_READ)
		GDX_LIVE_COUNT(
			__atomic_add_fetch(&l->rails[m].rx_pieces, e->len, __ATOMIC_RELAXED));
}

static void gdx_rma_wc(struct gdx_rma_ctx *x, int context, const struct ibv_wc *wc)
{
	int peer = GDX_RMA_WRID_PEER(wc->wr_id);
	uint16_t i = GDX_RMA_WRID_WR(wc->wr_id);
	struct gdx_rma_conn *c;
	struct gdx_rma_wr *e;
	struct gdx_rma_req *r;

	if (peer < 0 || peer >= x->coll->nranks || i >= GDX_RMA_CONN_WRS)
		return;
	c = gdx_rma_conn_of(x, context, peer);
	if (!c)
		return;
	e = &c->wrs[i];
	if (e->gen != GDX_RMA_WRID_GEN(wc->wr_id) || !e->posted)
		return; /* of a QP that failed: its work went elsewhere */
	if (wc->status != IBV_WC_SUCCESS) {
		gdx_rma_qp_failed(c, e->qp, wc->status, wc->vendor_err, NULL);
		return;
	}
	r = &c->reqs[e->req];
	gdx_rma_count(c, e);
	c->qs[e->qp].posted--;
	c->qs[e->qp].since_ms = gdx_now_ms();
	if (c->qp_store[e->qp].stall_warned)
		gdx_stall_drained(&c->ch, e->qp / c->ch.qps_per_rail, e->qp % c->ch.qps_per_rail);
	gdx_rma_fifo_remove(c, e->qp, i);
	gdx_rma_wr_put(c, i);
	if (!--r->pending && r->abandoned)
		gdx_rma_req_free(r);
}

static void gdx_rma_tick(struct gdx_rma_ctx *x, int context, uint64_t now);

void gdx_rma_progress(struct gdx_rma_ctx *x, int context)
{
	struct gdx_rma_cctx *cc = &x->cctx[context];
	struct ibv_wc wc[GDX_RMA_POLL];
	uint64_t now;

	for (int m = 0; m < x->coll->v->nmembers; m++) {
		int n;

		do {
			n = ibv_poll_cq(cc->cq[m], GDX_RMA_POLL, wc);
			for (int k = 0; k < n; k++)
				gdx_rma_wc(x, context, &wc[k]);
		} while (n == GDX_RMA_POLL);
		if (n < 0)
			GDX_WARN("RMA: ibv_poll_cq(%s) failed: %s", x->coll->v->members[m]->ibdev,
				 strerror(-n));
	}
	for (struct gdx_rma_conn *c = cc->busy, *next; c; c = next) {
		next = c->busy_next;
		gdx_rma_service(c);
	}
	now = gdx_now_ms();
	if (now - cc->last_tick_ms >= GDX_RMA_TICK_MS) {
		cc->last_tick_ms = now;
		gdx_rma_tick(x, context, now);
	}
}

int gdx_rma_test(struct gdx_rma_req *req, int *done)
{
	struct gdx_rma_conn *c = req->conn;
	struct gdx_live_comm *l = c->ctx->coll->live;
	int err;

	*done = 0;
	if (!req->err && (req->pending || !req->expanded))
		gdx_rma_progress(c->ctx, c->context);
	if (req->err) {
		err = req->err;
		if (req->pending)
			req->abandoned = true; /* NCCL tests it no more */
		else
			gdx_rma_req_free(req);
		return err;
	}
	if (req->pending || !req->expanded)
		return 0;
	*done = 1;
	GDX_LIVE_COUNT(__atomic_add_fetch(&l->msgs, 1, __ATOMIC_RELAXED));
	if (req->op != GDX_RMA_FLUSH) {
		if (req->lmh && req->lmh->type == NCCL_PTR_CUDA)
			GDX_LIVE_COUNT(
				__atomic_add_fetch(&l->bytes_gpu, req->size, __ATOMIC_RELAXED));
		else
			GDX_LIVE_COUNT(
				__atomic_add_fetch(&l->bytes_host, req->size, __ATOMIC_RELAXED));
	}
	gdx_rma_req_free(req);
	return 0;
}

const char *gdx_rma_ctx_error(const struct gdx_rma_ctx *x)
{
	return __atomic_load_n(&x->has_error, __ATOMIC_ACQUIRE) ? x->error : NULL;
}

/* ---- the live slot ---- */

static const char *const gdx_rma_op_names[] = {
	[GDX_RMA_PUT] = "put",
	[GDX_RMA_PUT_SIGNAL] = "putSignal",
	[GDX_RMA_GET] = "get",
	[GDX_RMA_FLUSH] = "flush",
};

/*
 * A QP whose work has not moved: one WARN past NCCL_GDX_STALL_MS; and past
 * what its retries can last, failed as a completion error would (failover,
 * or the error reported), when its NIC's port went down meanwhile (its
 * retries then need not end: rxe keeps work it could not send), or four
 * times that in any case. The NIC's async events are read here.
 */
static void gdx_rma_watch(struct gdx_rma_conn *c, uint64_t now)
{
	for (int q = 0; q < c->nqps && !c->err; q++) {
		struct gdx_rma_qp *s = &c->qs[q];
		struct gdx_dev *dev = c->ch.rails[q / c->ch.qps_per_rail].dev;
		uint64_t waited;
		char what[96];

		if (!s->posted || !gdx_rma_qp_live(c, q))
			continue;
		waited = now > s->since_ms ? now - s->since_ms : 0;
		if (gdx_params.stall_ms && waited > (uint64_t)gdx_params.stall_ms)
			gdx_stall_tell(&c->ch, q / c->ch.qps_per_rail, q % c->ch.qps_per_rail,
				       s->posted, waited);
		gdx_event_poll_dev(dev);
		if (gdx_chan_overdue(dev, waited, now, what, sizeof(what)))
			gdx_rma_qp_failed(c, q, IBV_WC_RETRY_EXC_ERR, 0, what);
	}
}

/* What the oldest request of the context waits for, into the slot: the
 * signal held, and the QPs its puts are still on, when it is one. */
static void gdx_rma_tick(struct gdx_rma_ctx *x, int context, uint64_t now)
{
	struct gdx_live_comm *l = x->coll->live;
	const struct gdx_rma_req *old = NULL;
	const struct gdx_rma_conn *oc = NULL;
	uint32_t wait = GDX_LIVE_IDLE;
	char what[160] = "";
	int err = 0;

	for (struct gdx_rma_conn *c = x->cctx[context].busy; c; c = c->busy_next)
		gdx_rma_watch(c, now);
	for (const struct gdx_rma_conn *c = x->cctx[context].busy; c; c = c->busy_next) {
		err = err ? err : c->err;
		for (int i = 0; i < GDX_RMA_MAX_REQS; i++) {
			const struct gdx_rma_req *r = &c->reqs[i];

			if (r->kind == GDX_KIND_RMA_REQ && r->pending &&
			    (!old || r->issued_ms < old->issued_ms)) {
				old = r;
				oc = c;
			}
		}
	}
	l->tick_ms = now;
	if (!old || l->msgs != l->tick_msgs) {
		l->tick_msgs = l->msgs;
		l->stall_ms = now;
	}
	if (err) {
		wait = GDX_LIVE_FAILED;
		l->err = err;
	} else if (old && old->op == GDX_RMA_PUT_SIGNAL && !old->released) {
		int qps = 0;

		for (int q = 0; q < oc->nqps; q++)
			for (uint16_t i = oc->qs[q].head; i != GDX_RMA_NIL; i = oc->wrs[i].next)
				if (gdx_rma_covers(oc, old, &oc->wrs[i])) {
					qps++;
					break;
				}
		wait = GDX_LIVE_WAIT_SIGNAL;
		snprintf(what, sizeof(what),
			 "%s signal +0x%llx to rank %d, ctx %d: puts on %d QP(s) unplaced",
			 old->strong ? "strong" : "weak", (unsigned long long)old->soff, oc->peer,
			 context, qps);
	} else if (old) {
		wait = GDX_LIVE_WAIT_COMPLETION;
		snprintf(what, sizeof(what), "%s of %llu B to rank %d, ctx %d",
			 gdx_rma_op_names[old->op], (unsigned long long)old->size, oc->peer,
			 context);
	}
	snprintf(l->peer_dev, sizeof(l->peer_dev), "%.63s", what);
	l->wait = wait;
}
