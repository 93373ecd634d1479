/* SPDX-License-Identifier: MIT */
/* Scripted verbs under the plugin's own comms (gdx_fake_nic.h). */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "data/gdx_failover.h"
#include "data/gdx_flush.h"
#include "sys/gdx_log.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "rail/gdx_post.h"
#include "comm/gdx_ptrset.h"
#include "dev/gdx_mlx5dv.h"
#include "rma/gdx_rma_progress.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static struct ibv_context fake_ctx;
static struct gdx_ibctx fake_ib;
static struct ibv_pd fake_pd;
static struct gdx_dev fake_devs[FAKE_MAX_RAILS];
static uint64_t fake_order;
static bool fake_no_copy;

/* The registrations: what a WR may take its bytes from or put them into
 * (the local keys: data buffers, the staging, the RMA scratch page) and
 * what the peer may write into (the remote keys: control regions and data
 * buffers). */
#define FAKE_MAX_REGS 64
static struct fake_reg {
	uint64_t addr, len;
	uint32_t lkey[FAKE_MAX_RAILS], rkey[FAKE_MAX_RAILS]; /* 0: none */
	bool data;
} fake_regs[FAKE_MAX_REGS];
static int fake_nregs;
static uint32_t fake_next_key = 0x1000;

/* lkey or rkey NULL: no such access. */
static void fake_reg_add(uint64_t addr, uint64_t len, const uint32_t *lkey, const uint32_t *rkey,
			 int n, bool data)
{
	struct fake_reg *g;

	ASSERT(fake_nregs < FAKE_MAX_REGS);
	g = &fake_regs[fake_nregs++];
	g->addr = addr;
	g->len = len;
	g->data = data;
	for (int i = 0; i < FAKE_MAX_RAILS; i++) {
		g->lkey[i] = lkey && i < n ? lkey[i] : 0;
		g->rkey[i] = rkey && i < n ? rkey[i] : 0;
	}
}

/* The registration [addr, addr + len) with key lies in (remote: an rkey,
 * else an lkey; a local key 0: any local key, as inline bytes need none),
 * or NULL: an access error. */
static const struct fake_reg *fake_reg_find(bool remote, uint32_t key, uint64_t addr, uint32_t len)
{
	for (int i = 0; i < fake_nregs && (key || !remote); i++) {
		const struct fake_reg *g = &fake_regs[i];

		for (int m = 0; m < FAKE_MAX_RAILS; m++) {
			uint32_t k = remote ? g->rkey[m] : g->lkey[m];

			if (k && (k == key || !key) && addr >= g->addr && len <= g->len &&
			    addr - g->addr <= g->len - len)
				return g;
		}
	}
	return NULL;
}

bool fake_peer_write(struct fake_end *to, uint64_t raddr, const void *src, uint32_t len)
{
	if (!fake_reg_find(true, to->ctrl_mr.rkey, raddr, len))
		return false;
	memcpy((void *)(uintptr_t)raddr, src, len);
	return true;
}

/* ---- completions ---- */

static void fake_cq_push(struct fake_qp *q, const struct ibv_wc *wc)
{
	struct fake_cq *cq = &q->end->cq[q->rail];

	ASSERT(cq->tail - cq->head < FAKE_CQ);
	cq->wc[cq->tail++ % FAKE_CQ] = *wc;
}

bool fake_peer_imm(struct fake_qp *q, uint32_t imm, uint32_t len)
{
	struct ibv_wc wc = {.status = IBV_WC_SUCCESS,
			    .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
			    .byte_len = len,
			    .imm_data = htobe32(imm),
			    .wc_flags = IBV_WC_WITH_IMM,
			    .qp_num = q->qp.qp_num};

	if (q->error || q->reset || q->rq_head == q->rq_tail)
		return false;
	wc.wr_id = q->rq[q->rq_head++ % FAKE_RQ];
	fake_cq_push(q, &wc);
	return true;
}

static void fake_complete(struct fake_qp *q, const struct fake_wr *w, enum ibv_wc_status st)
{
	struct ibv_wc wc = {.wr_id = w->wr_id,
			    .status = st,
			    .opcode = w->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
				      : w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD
					      ? IBV_WC_FETCH_ADD
					      : IBV_WC_RDMA_WRITE,
			    .qp_num = q->qp.qp_num};

	fake_cq_push(q, &wc);
	/* a completion covers every WR posted before it */
	q->outstanding = q->sq_tail - q->sq_head;
}

static void fake_log(struct fake_qp *q, struct fake_wr *w, bool delivered)
{
	if (!q->log)
		q->log = calloc(FAKE_LOG, sizeof(*q->log));
	ASSERT(q->log != NULL && q->nlog < FAKE_LOG);
	w->delivered = delivered;
	q->log[q->nlog++] = *w;
	w->inl = NULL; /* the history owns the copy now */
}

/* The QP goes to error: everything it holds completes flushed, signaled or
 * not, and so do its posted receives. */
static void fake_qp_error(struct fake_qp *q)
{
	q->error = true;
	while (q->sq_head != q->sq_tail) {
		struct fake_wr *w = &q->sq[q->sq_head++ % FAKE_SQ];

		fake_complete(q, w, IBV_WC_WR_FLUSH_ERR);
		fake_log(q, w, false);
	}
	while (q->rq_head != q->rq_tail) {
		struct ibv_wc wc = {.wr_id = q->rq[q->rq_head++ % FAKE_RQ],
				    .status = IBV_WC_WR_FLUSH_ERR,
				    .opcode = IBV_WC_RECV,
				    .qp_num = q->qp.qp_num};

		fake_cq_push(q, &wc);
	}
}

/* ---- the provider's ops ---- */

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	for (; wr; wr = wr->next) {
		struct fake_wr w = {.wr_id = wr->wr_id,
				    .opcode = wr->opcode,
				    .signaled = wr->send_flags & IBV_SEND_SIGNALED,
				    .raddr = wr->wr.rdma.remote_addr,
				    .rkey = wr->wr.rdma.rkey,
				    .imm = be32toh(wr->imm_data),
				    .order = ++fake_order};

		ASSERT(wr->opcode == IBV_WR_RDMA_WRITE ||
		       wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr->opcode == IBV_WR_RDMA_READ ||
		       wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD);
		if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w.raddr = wr->wr.atomic.remote_addr;
			w.rkey = wr->wr.atomic.rkey;
			w.add = wr->wr.atomic.compare_add;
		}
		ASSERT(wr->num_sge == 0 || wr->num_sge == 1);
		if (wr->num_sge) {
			w.laddr = wr->sg_list->addr;
			w.len = wr->sg_list->length;
			/* the bytes (or, read, their place) lie in memory the
			 * plugin registered, under that registration's key;
			 * inline bytes under any */
			ASSERT(fake_reg_find(false,
					     (wr->send_flags & IBV_SEND_INLINE) ? 0
										: wr->sg_list->lkey,
					     w.laddr, w.len) != NULL);
		}
		if (wr->send_flags & IBV_SEND_INLINE)
			ASSERT(w.len <= q->max_inline);
		/* the plugin never has more on a QP than its depth: a real
		 * NIC's post fails (ENOMEM) */
		ASSERT(q->outstanding < q->depth);
		if ((wr->send_flags & IBV_SEND_INLINE) && w.len) {
			w.inl = malloc(w.len);
			ASSERT(w.inl != NULL);
			memcpy(w.inl, (const void *)(uintptr_t)w.laddr, w.len);
		}
		if (q->sq_tail - q->sq_head == FAKE_SQ) {
			free(w.inl);
			*bad = wr;
			return ENOMEM;
		}
		if (q->error) { /* posted into an error QP: flushed at once */
			fake_complete(q, &w, IBV_WC_WR_FLUSH_ERR);
			fake_log(q, &w, false);
			continue;
		}
		q->sq[q->sq_tail++ % FAKE_SQ] = w;
		q->outstanding++;
	}
	*bad = NULL;
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	for (; wr; wr = wr->next) {
		ASSERT(wr->num_sge == 0);
		if (q->error) {
			struct ibv_wc wc = {.wr_id = wr->wr_id,
					    .status = IBV_WC_WR_FLUSH_ERR,
					    .opcode = IBV_WC_RECV,
					    .qp_num = q->qp.qp_num};

			fake_cq_push(q, &wc);
			continue;
		}
		if (q->rq_tail - q->rq_head == FAKE_RQ) {
			*bad = wr;
			return ENOMEM;
		}
		q->rq[q->rq_tail++ % FAKE_RQ] = wr->wr_id;
	}
	*bad = NULL;
	return 0;
}

static int fake_poll_cq(struct ibv_cq *icq, int n, struct ibv_wc *wc)
{
	struct fake_end *e = icq->cq_context;
	struct fake_cq *cq = &e->cq[icq - e->icq];
	int got = 0;

	while (got < n && cq->head != cq->tail)
		wc[got++] = cq->wc[cq->head++ % FAKE_CQ];
	return got;
}

/* libibverbs' exported calls the failover and the event poll make,
 * replaced for the whole program (gdx_fake_nic.h). */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	if (!(mask & IBV_QP_STATE))
		return 0;
	if (attr->qp_state == IBV_QPS_ERR) {
		fake_qp_error(q);
	} else if (attr->qp_state == IBV_QPS_RESET) {
		q->sq_head = q->sq_tail;
		q->rq_head = q->rq_tail;
		q->outstanding = 0;
		q->error = false;
		q->reset = true;
	} else if (attr->qp_state == IBV_QPS_RTR) {
		q->reset = false;
	}
	return 0;
}

/* A QP's state, for the line a failure writes about each QP
 * (gdx_qpstat_dump): in error or ready to send. */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init)
{
	(void)mask;
	(void)init;
	attr->qp_state = ((struct fake_qp *)qp)->error ? IBV_QPS_ERR : IBV_QPS_RTS;
	return 0;
}

static bool fake_mlx5_ctx(const struct ibv_context *ctx);

/* in parentheses: verbs.h makes the name a macro */
int(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	(void)port;
	memset(attr, 0, sizeof(struct ibv_port_attr));
	((struct ibv_port_attr *)attr)->state = IBV_PORT_ACTIVE;
	if (fake_mlx5_ctx(ctx)) {
		((struct ibv_port_attr *)attr)->link_layer = IBV_LINK_LAYER_INFINIBAND;
		((struct ibv_port_attr *)attr)->active_mtu = IBV_MTU_4096;
		((struct ibv_port_attr *)attr)->max_msg_sz = 1u << 30;
	}
	return 0;
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	(void)ctx;
	(void)port;
	memset(gid, 0, sizeof(*gid));
	gid->raw[15] = (uint8_t)(index + 1);
	return 0;
}

/* Async events a test queued (fake_async_event), handed out in order. */
static struct ibv_async_event fake_events[16];
static unsigned fake_events_head, fake_events_tail;
/* ibv_query_port_speed's answer, in 100 Mb/s; 0: "not supported". */
static uint64_t fake_speed_100mbps;

void fake_async_event(enum ibv_event_type type, int port)
{
	struct ibv_async_event *ev = &fake_events[fake_events_tail++ % 16];

	memset(ev, 0, sizeof(*ev));
	ev->event_type = type;
	ev->element.port_num = port;
}

void fake_port_speed(uint64_t units_of_100mbps)
{
	fake_speed_100mbps = units_of_100mbps;
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	(void)ctx;
	if (fake_events_head == fake_events_tail) {
		errno = EAGAIN;
		return -1;
	}
	*ev = fake_events[fake_events_head++ % 16];
	return 0;
}

/* rdma-core 57's call, which the plugin finds by a weak reference */
int ibv_query_port_speed(struct ibv_context *ctx, uint32_t port, uint64_t *speed);
int ibv_query_port_speed(struct ibv_context *ctx, uint32_t port, uint64_t *speed)
{
	(void)ctx;
	(void)port;
	if (!fake_speed_100mbps)
		return EOPNOTSUPP;
	*speed = fake_speed_100mbps;
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

/* ---- carrying WRs out ---- */

void fake_drop_bytes(struct fake_qp *q, int n)
{
	q->drop = n;
}

unsigned fake_pending(const struct fake_qp *q)
{
	return q->sq_tail - q->sq_head;
}

/* The oldest WR of q reaches its peer, or fails the QP. */
static void fake_exec(struct fake_qp *q)
{
	struct fake_wr *w = &q->sq[q->sq_head % FAKE_SQ];
	struct fake_qp *peer = q->peer;
	const struct fake_reg *g = NULL;

	if (!peer) { /* the test plays the peer: the bytes go nowhere */
		q->sq_head++;
		if (w->signaled)
			fake_complete(q, w, IBV_WC_SUCCESS);
		fake_log(q, w, true);
		return;
	}
	if (peer->error || peer->reset) {
		/* nobody answers: the requester's retries run out */
		q->sq_head++;
		fake_complete(q, w, IBV_WC_RETRY_EXC_ERR);
		fake_log(q, w, false);
		fake_qp_error(q);
		return;
	}
	if (w->len && !(g = fake_reg_find(true, w->rkey, w->raddr, w->len))) {
		q->sq_head++;
		fake_complete(q, w, IBV_WC_REM_ACCESS_ERR);
		fake_log(q, w, false);
		fake_qp_error(q);
		return;
	}
	if (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM && peer->rq_head == peer->rq_tail) {
		q->sq_head++;
		fake_complete(q, w, IBV_WC_RNR_RETRY_EXC_ERR);
		fake_log(q, w, false);
		fake_qp_error(q);
		return;
	}
	q->sq_head++;
	if (w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		uint64_t *word = (uint64_t *)(uintptr_t)w->raddr;

		*(uint64_t *)(uintptr_t)w->laddr = *word;
		*word += w->add;
	} else if (w->opcode == IBV_WR_RDMA_READ) {
		if (!(fake_no_copy && g->data))
			memcpy((void *)(uintptr_t)w->laddr, (const void *)(uintptr_t)w->raddr,
			       w->len);
	} else if (w->len && g->data && q->drop > 0)
		q->drop--; /* astray */
	else if (w->len && !(fake_no_copy && g->data))
		memcpy((void *)(uintptr_t)w->raddr,
		       w->inl ? (const void *)w->inl : (const void *)(uintptr_t)w->laddr, w->len);
	if (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		struct ibv_wc wc = {.wr_id = peer->rq[peer->rq_head++ % FAKE_RQ],
				    .status = IBV_WC_SUCCESS,
				    .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				    .byte_len = w->len,
				    .imm_data = htobe32(w->imm),
				    .wc_flags = IBV_WC_WITH_IMM,
				    .qp_num = peer->qp.qp_num};

		fake_cq_push(peer, &wc);
	}
	if (w->signaled)
		fake_complete(q, w, IBV_WC_SUCCESS);
	fake_log(q, w, true);
}

int fake_run(struct fake_qp *q, int n)
{
	int done = 0;

	while (done < n && q->sq_head != q->sq_tail && !q->error) {
		fake_exec(q);
		done++;
	}
	return done;
}

static int fake_end_nqps(const struct fake_end *e)
{
	return e->c->ch.nrails * e->c->ch.qps_per_rail;
}

int fake_run_all(struct fake_pair *p)
{
	int total = 0, n;

	do {
		n = 0;
		for (int i = 0; i < fake_end_nqps(&p->s); i++)
			n += fake_run(&p->s.qp[i], 1);
		for (int i = 0; i < fake_end_nqps(&p->r); i++)
			n += fake_run(&p->r.qp[i], 1);
		total += n;
	} while (n);
	return total;
}

void fake_fail(struct fake_qp *q, enum ibv_wc_status status)
{
	if (q->sq_head != q->sq_tail) {
		struct fake_wr *w = &q->sq[q->sq_head++ % FAKE_SQ];

		fake_complete(q, w, status);
		fake_log(q, w, false);
	}
	fake_qp_error(q);
}

bool fake_restoring(const struct fake_pair *p)
{
	for (int r = 0; r < p->o.nrails; r++)
		if (__atomic_load_n(&p->s.c->ch.run[r].bg_busy, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&p->r.c->ch.run[r].bg_busy, __ATOMIC_ACQUIRE))
			return true;
	return false;
}

struct fake_qp *fake_qp_of(struct fake_end *e, int rail, int q)
{
	return &e->qp[rail * e->c->ch.qps_per_rail + q];
}

/* ---- the comms ---- */

void fake_init(void)
{
	gdx_log_set(gdx_test_logger);
	ASSERT_EQ(gdx_params_load(), 0);
	fake_ctx.ops.post_send = fake_post_send;
	fake_ctx.ops.post_recv = fake_post_recv;
	fake_ctx.ops.poll_cq = fake_poll_cq;
	fake_ib.ctx = &fake_ctx;
	fake_ib.pd = &fake_pd;
	pthread_mutex_init(&fake_ib.lock, NULL);
	fake_pd.context = &fake_ctx;
	for (int i = 0; i < FAKE_MAX_RAILS; i++) {
		struct gdx_dev *d = &fake_devs[i];

		snprintf(d->name, sizeof(d->name), "fake%d", i);
		snprintf(d->ibdev, sizeof(d->ibdev), "fake%d", i);
		d->ib_port = d->port = 1;
		d->link_layer = IBV_LINK_LAYER_INFINIBAND;
		d->active_mtu = IBV_MTU_4096;
		d->max_msg_sz = 1u << 31;
		d->speed_mbps = 100000;
		d->ptr_support = NCCL_PTR_HOST;
		d->rail_id = d->plane_id = -1;
		d->gid_auto_index = -1;
		d->ib = &fake_ib;
	}
}

static void fake_end_make(struct fake_end *e, bool send, const struct fake_opts *o)
{
	int nrails = o->nrails, nqps = o->nqps;
	struct gdx_comm *c;
	size_t off = 0;

	ASSERT(nrails >= 1 && nrails <= FAKE_MAX_RAILS && nqps >= 1 && nqps <= FAKE_MAX_QPS);
	memset(e, 0, sizeof(*e));
	if (send) {
		e->sc = calloc(1, sizeof(*e->sc));
		c = e->sc ? &e->sc->base : NULL;
	} else {
		e->rc = calloc(1, sizeof(*e->rc));
		c = e->rc ? &e->rc->base : NULL;
	}
	ASSERT(c != NULL);
	e->c = c;
	c->kind = send ? GDX_KIND_SEND : GDX_KIND_RECV;
	for (int r = 0; r < nrails; r++)
		off += (size_t)snprintf(c->dev_name + off, sizeof(c->dev_name) - off, "%sfake%d",
					r ? "+" : "", r);
	snprintf(c->peer, sizeof(c->peer), "the other end");
	snprintf(c->peer_dev, sizeof(c->peer_dev), "fake");
	c->nmembers = c->ch.nrails = nrails;
	c->ch.qps_per_rail = nqps;
#ifdef GDX_DEBUG
	/* both ends are this build: the handshake would say so; a peer the
	 * test plays writes no records */
	c->dbg_records = !o->no_peer;
#endif
	c->ch.qps = e->gqp;
	c->ch.max_inline = 64;
	c->ar = send && o->ar;
	c->ch.split = send && o->split;
	c->tc = -1;
	c->ch.live = &c->live_own;
	gdx_comm_bind_chan(c);
	c->max_reqs = send ? GDX_MAX_SEND_REQUESTS : 2 * GDX_MAX_REQUESTS;
	c->reqs = calloc((size_t)c->max_reqs, sizeof(*c->reqs));
	ASSERT(c->reqs != NULL);
	for (int i = 0; i < c->max_reqs; i++)
		c->reqs[i].comm = c;
	ASSERT_EQ(posix_memalign((void **)&c->ctrl, 4096, sizeof(*c->ctrl)), 0);
	memset(c->ctrl, 0, sizeof(*c->ctrl));
	ASSERT_EQ(posix_memalign((void **)&c->stage, 4096, sizeof(*c->stage)), 0);
	memset(c->stage, 0, sizeof(*c->stage));
	e->ctrl_mr.lkey = e->ctrl_mr.rkey = fake_next_key++;
	e->stage_mr.lkey = fake_next_key++; /* local access only: no remote key */
	{
		size_t at, len; /* the plugin's own rule of what the peer may write */

		gdx_ctrl_span(c->kind, &at, &len);
		fake_reg_add((uintptr_t)c->ctrl + at, len, NULL, &e->ctrl_mr.rkey, 1, false);
	}
	/* every control write goes out from the staging, never from what the
	 * peer writes: the control region has no local key here */
	fake_reg_add((uintptr_t)c->stage, sizeof(*c->stage), &e->stage_mr.lkey, NULL, 1, false);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, e->sock), 0);
	c->sock = e->sock[0]; /* the peer's end stays open: it is alive */
	for (int r = 0; r < nrails; r++) {
		struct gdx_rail *rail = &c->ch.rails[r];

		e->icq[r].context = &fake_ctx;
		e->icq[r].cq_context = e;
		rail->dev = &fake_devs[r];
		rail->member = r;
		rail->pd = &fake_pd;
		rail->cq = &e->icq[r];
		rail->nqps = nqps;
		rail->qps = &e->gqp[r * nqps];
		rail->max_inline = 64;
		rail->sq_depth = send ? GDX_SEND_SQ : GDX_RECV_SQ;
		rail->rq_depth = send ? 0 : gdx_recvs_ahead(nrails);
		c->ctrl_mr[r] = &e->ctrl_mr;
		c->stage_mr[r] = &e->stage_mr;
		c->ch.stage_lkey[r] = e->stage_mr.lkey;
		for (int q = 0; q < nqps; q++) {
			struct fake_qp *fq = &e->qp[r * nqps + q];

			fq->qp.context = &fake_ctx;
			fq->qp.qp_num = (uint32_t)((send ? 0x100 : 0x200) + r * 16 + q);
			fq->qp.send_cq = fq->qp.recv_cq = &e->icq[r];
			fq->qp.qp_context = &c->ch;
			fq->end = e;
			fq->rail = r;
			fq->q = q;
			fq->depth = rail->sq_depth;
			fq->max_inline = rail->max_inline;
			rail->qps[q].qp = &fq->qp;
		}
	}
}

void fake_pair_make(struct fake_pair *p, const struct fake_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->o = *o;
	fake_no_copy = o->no_copy;
	fake_nregs = 0;
	for (int i = 0; i < o->nrails; i++)
		fake_devs[i].ar = o->ar;
	fake_end_make(&p->s, true, o);
	fake_end_make(&p->r, false, o);
	for (int i = 0; i < o->nrails * o->nqps && !o->no_peer; i++) {
		p->s.qp[i].peer = &p->r.qp[i];
		p->r.qp[i].peer = &p->s.qp[i];
	}
	p->s.c->remote_ctrl = (uintptr_t)p->r.c->ctrl;
	p->r.c->remote_ctrl = (uintptr_t)p->s.c->ctrl;
	for (int r = 0; r < o->nrails; r++) {
		p->s.c->ch.ctrl_rkey[r] = p->r.ctrl_mr.rkey;
		p->r.c->ch.ctrl_rkey[r] = p->s.ctrl_mr.rkey;
		/* each end's address of the other's rails: a restore connects
		 * the rail's QPs to them again */
		for (int e = 0; e < 2; e++) {
			struct gdx_comm *to = e ? p->s.c : p->r.c, *of = e ? p->r.c : p->s.c;

			to->remote_rails[r].link_layer = (uint8_t)of->ch.rails[r].dev->link_layer;
			to->remote_rails[r].mtu = (uint8_t)of->ch.rails[r].dev->active_mtu;
			for (int q = 0; q < o->nqps; q++)
				to->remote_qpn[r * o->nqps + q] = of->ch.rails[r].qps[q].qp->qp_num;
		}
	}
	gdx_failover_init(p->s.c);
	gdx_failover_init(p->r.c);
	for (int i = 0; i < o->nrails * o->nqps; i++)
		ASSERT_EQ(gdx_seglog_create(&p->s.c->ch.qps[i]), 0);
	ASSERT_EQ(gdx_recv_comm_start(p->r.rc), 0);
}

static void fake_end_free(struct fake_end *e)
{
	struct gdx_comm *c = e->c;

	gdx_failover_fini(c);
	if (e->rc)
		gdx_flush_destroy(e->rc);
	for (int i = 0; i < c->ch.nrails * c->ch.qps_per_rail; i++) {
		struct fake_qp *q = &e->qp[i];

		gdx_seglog_destroy(&c->ch.qps[i]);
		while (q->sq_head != q->sq_tail)
			free(q->sq[q->sq_head++ % FAKE_SQ].inl);
		for (unsigned k = 0; k < q->nlog; k++)
			free(q->log[k].inl);
		free(q->log);
	}
	close(e->sock[0]);
	close(e->sock[1]);
	free(c->ctrl);
	free(c->stage);
	free(c->reqs);
	free(e->sc);
	free(e->rc);
}

void fake_pair_free(struct fake_pair *p)
{
	fake_end_free(&p->s);
	fake_end_free(&p->r);
}

void fake_mr(struct fake_pair *p, void *addr, uint64_t len, struct gdx_mr *mr)
{
	memset(mr, 0, sizeof(*mr));
	mr->kind = GDX_KIND_MR;
	mr->nmembers = p->o.nrails;
	mr->addr = (uintptr_t)addr;
	mr->size = len;
	gdx_mr_set_type(mr, NCCL_PTR_HOST);
	for (int r = 0; r < p->o.nrails; r++)
		mr->lkey[r] = mr->rkey[r] = fake_next_key++;
	fake_reg_add(mr->addr, len, mr->lkey, mr->rkey, p->o.nrails, true);
}

struct gdx_request *fake_isend(struct fake_pair *p, void *data, uint64_t size, int tag,
			       struct gdx_mr *mr)
{
	struct gdx_request *req = NULL;

	ASSERT_EQ(gdx_isend(p->s.sc, data, size, tag, mr, NULL, &req), 0);
	return req;
}

struct gdx_request *fake_irecv(struct fake_pair *p, void *data, uint64_t size, int tag,
			       struct gdx_mr *mr)
{
	struct gdx_request *req = NULL;

	ASSERT_EQ(gdx_irecv(p->r.rc, 1, &data, &size, &tag, &mr, NULL, &req), 0);
	return req;
}

int fake_test(struct gdx_request *req, int *size)
{
	int done = 0, sizes[GDX_MAX_RECVS] = {0};

	ASSERT_EQ(gdx_test(req, &done, sizes), 0);
	if (done && size)
		*size = sizes[0];
	return done;
}

/* ---- one-sided RMA ---- */

static void fake_rma_rank_make(struct fake_rma *f, int me)
{
	struct fake_rma_rank *k = &f->r[me];
	int nrails = f->o.nrails, nqps = f->o.nqps;
	struct gdx_rma_conn *c;

	memset(k, 0, sizeof(*k));
	k->v.nmembers = nrails;
	for (int r = 0; r < nrails; r++) {
		k->v.members[r] = &fake_devs[r];
		k->v.phys[r] = r;
	}
	snprintf(k->v.name, sizeof(k->v.name), "fake%d", nrails);
	k->coll.kind = GDX_KIND_RMA_COLL;
	k->coll.v = &k->v;
	k->coll.nranks = 2;
	k->coll.rank = me;
	k->coll.qps = nqps;
	k->coll.ranks = k->ranks;
	k->coll.live = &k->coll.live_own;
	pthread_mutex_init(&k->coll.lock, NULL);
	for (int i = 0; i < 2; i++) {
		k->ranks[i].nmembers = (uint32_t)nrails;
		k->ranks[i].qps = (uint32_t)nqps;
		snprintf(k->ranks[i].dev, sizeof(k->ranks[i].dev), "fake%d", nrails);
	}
	k->x.kind = GDX_KIND_RMA_CTX;
	k->x.coll = &k->coll;
	k->x.ncontexts = 1;
	k->x.stride = 1;
	k->x.tc = -1;
	k->x.cctx = &k->cctx;
	k->x.conns = k->conns;
	ASSERT_EQ(posix_memalign((void **)&k->x.scratch, 4096, 4096), 0);
	k->scratch_mr.lkey = k->scratch_mr.rkey = fake_next_key++;
	fake_reg_add((uintptr_t)k->x.scratch, 4096, &k->scratch_mr.lkey, NULL, 1, false);
	for (int r = 0; r < nrails; r++)
		k->x.scratch_mr[r] = &k->scratch_mr;
	c = calloc(1, sizeof(*c));
	ASSERT(c != NULL);
	k->conns[1 - me] = c;
	c->ctx = &k->x;
	c->context = 0;
	c->peer = 1 - me;
	c->nlocal = c->nremote = c->ch.nrails = nrails;
	c->ch.qps_per_rail = nqps;
	c->nqps = nrails * nqps;
	for (int r = 0; r < nrails; r++) {
		struct gdx_rail *rail = &c->ch.rails[r];

		k->e.icq[r].context = &fake_ctx;
		k->e.icq[r].cq_context = &k->e;
		k->cctx.cq[r] = &k->e.icq[r];
		rail->dev = &fake_devs[r];
		rail->member = r;
		rail->pd = &fake_pd;
		rail->cq = &k->e.icq[r];
		rail->nqps = nqps;
		rail->qps = &c->qp_store[r * nqps];
		rail->max_inline = 64;
		rail->sq_depth = GDX_RMA_SQ;
		for (int q = 0; q < nqps; q++) {
			struct fake_qp *fq = &k->e.qp[r * nqps + q];

			fq->qp.context = &fake_ctx;
			fq->qp.qp_num = (uint32_t)((me ? 0x400 : 0x300) + r * 16 + q);
			fq->qp.send_cq = fq->qp.recv_cq = &k->e.icq[r];
			fq->qp.qp_context = &k->x;
			fq->end = &k->e;
			fq->rail = r;
			fq->q = q;
			fq->depth = rail->sq_depth;
			fq->max_inline = rail->max_inline;
			rail->qps[q].qp = &fq->qp;
		}
	}
	gdx_rma_conn_reset(c);
}

void fake_rma_make(struct fake_rma *f, const struct fake_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->o = *o;
	fake_no_copy = o->no_copy;
	fake_nregs = 0;
	fake_rma_rank_make(f, 0);
	fake_rma_rank_make(f, 1);
	for (int i = 0; i < o->nrails * o->nqps; i++) {
		f->r[0].e.qp[i].peer = &f->r[1].e.qp[i];
		f->r[1].e.qp[i].peer = &f->r[0].e.qp[i];
	}
}

void fake_rma_free(struct fake_rma *f)
{
	for (int me = 0; me < 2; me++) {
		struct fake_rma_rank *k = &f->r[me];

		for (int i = 0; i < f->o.nrails * f->o.nqps; i++) {
			struct fake_qp *q = &k->e.qp[i];

			for (unsigned j = 0; j < q->nlog; j++)
				free(q->log[j].inl);
			free(q->log);
		}
		free(k->conns[1 - me]);
		free(k->x.scratch);
		gdx_ptrset_free(&k->coll.mrs);
		pthread_mutex_destroy(&k->coll.lock);
	}
}

void fake_rma_window(struct fake_rma *f, void *mem0, void *mem1, uint64_t len,
		     struct fake_window *w)
{
	void *mem[2] = {mem0, mem1};

	memset(w, 0, sizeof(*w));
	for (int me = 0; me < 2; me++) {
		struct gdx_mr *l = &w->local[me];

		l->kind = GDX_KIND_MR;
		l->nmembers = f->o.nrails;
		l->addr = (uintptr_t)mem[me];
		l->size = len;
		l->type = NCCL_PTR_HOST;
		for (int r = 0; r < f->o.nrails; r++)
			l->lkey[r] = l->rkey[r] = fake_next_key++;
		fake_reg_add(l->addr, len, l->lkey, l->rkey, f->o.nrails, true);
	}
	for (int me = 0; me < 2; me++) {
		struct gdx_rma_mr *mh = &w->mh[me];

		mh->kind = GDX_KIND_RMA_MR;
		mh->coll = &f->r[me].coll;
		mh->local = &w->local[me];
		mh->type = NCCL_PTR_HOST;
		mh->ranks = w->ranks[me];
		for (int i = 0; i < 2; i++) {
			mh->ranks[i].base = w->local[i].addr;
			mh->ranks[i].size = len;
			mh->ranks[i].nmembers = (uint32_t)f->o.nrails;
			memcpy(mh->ranks[i].rkey, w->local[i].rkey, sizeof(mh->ranks[i].rkey));
		}
		ASSERT_EQ(gdx_ptrset_add(&f->r[me].coll.mrs, mh), 0);
	}
}

int fake_rma_run_all(struct fake_rma *f)
{
	int total = 0, n;

	do {
		n = 0;
		for (int me = 0; me < 2; me++)
			for (int i = 0; i < f->o.nrails * f->o.nqps; i++)
				n += fake_run(&f->r[me].e.qp[i], 1);
		total += n;
	} while (n);
	return total;
}

struct fake_qp *fake_rma_qp(struct fake_rma *f, int rank, int rail, int q)
{
	return &f->r[rank].e.qp[rail * f->o.nqps + q];
}

/* ---- a list of mlx5 devices, and libmlx5's Data Direct calls ---- */

#define FAKE_MLX5_MAX 4

static struct fake_mlx5 fake_m = {.no_lib = true};
static struct ibv_device fake_mlx5_devs[FAKE_MLX5_MAX];
static struct ibv_device *fake_mlx5_list[FAKE_MLX5_MAX + 1];
struct fake_dmabuf_seen fake_dmabuf_seen;

void fake_mlx5_devices(const struct fake_mlx5 *m)
{
	ASSERT(m->ndevs >= 1 && m->ndevs <= FAKE_MLX5_MAX);
	fake_m = *m;
	for (int i = 0; i < m->ndevs; i++) {
		snprintf(fake_mlx5_devs[i].name, sizeof(fake_mlx5_devs[i].name), "mlx5_%d", i);
		fake_mlx5_list[i] = &fake_mlx5_devs[i];
	}
	fake_mlx5_list[m->ndevs] = NULL;
}

static int fake_mlx5_index(const struct ibv_device *dev)
{
	for (int i = 0; i < fake_m.ndevs; i++)
		if (dev == &fake_mlx5_devs[i])
			return i;
	return -1;
}

/* A context, PD or MR of the made-up devices: its context's device is one
 * of them. Anything else goes to libibverbs' own call. */
static bool fake_mlx5_ctx(const struct ibv_context *ctx)
{
	return ctx && fake_mlx5_index(ctx->device) >= 0;
}

#define FAKE_NEXT(ret, name, ...)                          \
	do {                                               \
		__typeof__(&name) next;                    \
                                                           \
		*(void **)&next = dlsym(RTLD_NEXT, #name); \
		ASSERT(next != NULL);                      \
		return next(__VA_ARGS__);                  \
	} while (0)

struct ibv_device **ibv_get_device_list(int *n)
{
	if (fake_m.ndevs == 0)
		FAKE_NEXT(struct ibv_device **, ibv_get_device_list, n);
	if (n)
		*n = fake_m.ndevs;
	return fake_mlx5_list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	if (list != fake_mlx5_list)
		FAKE_NEXT(void, ibv_free_device_list, list);
}

const char *ibv_get_device_name(struct ibv_device *dev)
{
	if (fake_mlx5_index(dev) < 0)
		FAKE_NEXT(const char *, ibv_get_device_name, dev);
	return dev->name;
}

struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	if (fake_mlx5_index(dev) < 0)
		FAKE_NEXT(struct ibv_context *, ibv_open_device, dev);
	ctx = calloc(1, sizeof(*ctx));
	ASSERT(ctx != NULL);
	ctx->device = dev;
	ctx->async_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT(ctx->async_fd >= 0);
	return ctx;
}

int ibv_close_device(struct ibv_context *ctx)
{
	if (!fake_mlx5_ctx(ctx))
		FAKE_NEXT(int, ibv_close_device, ctx);
	close(ctx->async_fd);
	free(ctx);
	return 0;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	if (!fake_mlx5_ctx(ctx))
		FAKE_NEXT(int, ibv_query_device, ctx, attr);
	memset(attr, 0, sizeof(*attr));
	attr->phys_port_cnt = 1;
	attr->max_qp = 1024;
	attr->sys_image_guid = htobe64(0x1000 + (uint64_t)fake_mlx5_index(ctx->device));
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (!fake_mlx5_ctx(ctx))
		FAKE_NEXT(struct ibv_pd *, ibv_alloc_pd, ctx);
	pd = calloc(1, sizeof(*pd));
	ASSERT(pd != NULL);
	pd->context = ctx;
	return pd;
}

/* A PD or MR of the made-up devices is only freed. */
#define FAKE_RELEASE(name, type)                 \
	int name(type *o)                        \
	{                                        \
		if (!fake_mlx5_ctx(o->context))  \
			FAKE_NEXT(int, name, o); \
		free(o);                         \
		return 0;                        \
	}
FAKE_RELEASE(ibv_dealloc_pd, struct ibv_pd)
FAKE_RELEASE(ibv_dereg_mr, struct ibv_mr)

/* fd -1 is net_ib's probe: EBADF where DMA-BUF is supported. */
static struct ibv_mr *fake_mlx5_reg(struct ibv_pd *pd, size_t length, uint64_t iova, int fd)
{
	struct ibv_mr *mr;

	if (fd < 0 || fake_m.no_dmabuf) {
		fake_dmabuf_seen.probes += fd < 0;
		errno = fake_m.no_dmabuf ? EOPNOTSUPP : EBADF;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	ASSERT(mr != NULL);
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = (void *)(uintptr_t)iova;
	mr->length = length;
	mr->lkey = mr->rkey = fake_next_key++;
	return mr;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	struct ibv_mr *mr;

	if (!fake_mlx5_ctx(pd->context))
		FAKE_NEXT(struct ibv_mr *, ibv_reg_dmabuf_mr, pd, offset, length, iova, fd, access);
	mr = fake_mlx5_reg(pd, length, iova, fd);
	fake_dmabuf_seen.ibv_calls += mr != NULL;
	return mr;
}

static bool fake_mlx5dv_is_supported(struct ibv_device *dev)
{
	return fake_mlx5_index(dev) >= 0 && !fake_m.not_mlx5;
}

static int fake_mlx5dv_dd_path(struct ibv_context *ctx, char *buf, size_t len)
{
	ASSERT(fake_mlx5_ctx(ctx));
	if (!fake_m.dd_path)
		return ENODEV;
	snprintf(buf, len, "%s", fake_m.dd_path);
	return 0;
}

static struct ibv_mr *fake_mlx5dv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
						uint64_t iova, int fd, int access, int mlx5_access)
{
	struct ibv_mr *mr;

	(void)offset;
	(void)access;
	ASSERT(fake_mlx5_ctx(pd->context));
	mr = fake_mlx5_reg(pd, length, iova, fd);
	if (mr) {
		fake_dmabuf_seen.mlx5dv_calls++;
		fake_dmabuf_seen.mlx5_access = mlx5_access;
	}
	return mr;
}

/* The plugin's seam (gdx_mlx5dv.h): libmlx5.so.1 as the test plays it. */
void *gdx_mlx5dv_sym(const char *name)
{
	static const struct {
		const char *name;
		void *fn;
	} syms[] = {
		{"mlx5dv_is_supported", (void *)fake_mlx5dv_is_supported},
		{"mlx5dv_get_data_direct_sysfs_path", (void *)fake_mlx5dv_dd_path},
		{"mlx5dv_reg_dmabuf_mr", (void *)fake_mlx5dv_reg_dmabuf_mr},
	};

	for (size_t i = 0; !fake_m.no_lib && i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strcmp(syms[i].name, name))
			return syms[i].fn;
	return NULL;
}
