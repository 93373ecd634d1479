/* SPDX-License-Identifier: MIT */
#include <infiniband/verbs.h>

#include <nccl/profiler_net.h>
#include "data/gdx_failover.h"
#include "data/gdx_prof.h"

#define GDX_PROF_ID ((int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER))

ncclProfilerCallback_t gdx_prof_cb;

void gdx_prof_set(ncclProfilerCallback_t cb)
{
	/* Kept for the load once given: NCCL gives every init (v11: one per
	 * communicator, while other comms move data) the same core function,
	 * and the events started must be stopped through it. */
	if (cb)
		__atomic_store_n(&gdx_prof_cb, cb, __ATOMIC_RELAXED);
}

/* One event of req on QP q of rail r; kept to be stopped when NCCL took it. */
static void gdx_prof_start(struct gdx_request *req, void *phandle, const struct gdx_rail *r, int q,
			   int opcode, uint64_t wr_id, uint64_t len)
{
	ncclProfilerCallback_t cb = __atomic_load_n(&gdx_prof_cb, __ATOMIC_RELAXED);
	ncclProfilerNetIbDescr_v1_t d;
	void *ev = NULL;

	if (req->prof_n == GDX_PROF_MAX_EVENTS)
		return;
	d = (ncclProfilerNetIbDescr_v1_t){
		.type = ncclProfileQp,
		.qp = {.device = r->member,
		       .wr_id = wr_id,
		       .opcode = opcode,
		       .qpNum = (int)r->qps[q].qp->qp_num,
		       .length = (size_t)len},
	};
	/* NCCL copies what it keeps of the descriptor before it returns */
	if (cb(&ev, ncclProfilerNetEventStart, phandle, GDX_PROF_ID, &d) == ncclSuccess && ev)
		req->prof_ev[req->prof_n++] = ev;
}

void gdx_prof_start_pieces(struct gdx_comm *c, struct gdx_request *req, void *phandle,
			   const struct gdx_piece *p, int np)
{
	for (int k = 0; k < np; k++) {
		const struct gdx_rail *r = &c->ch.rails[p[k].rail];

		/* each piece is on a QP of its own: that QP's count now is the
		 * count at the piece's last WR */
		gdx_prof_start(
			req, phandle, r, p[k].q, IBV_WR_RDMA_WRITE_WITH_IMM,
			GDX_WRID(GDX_WRID_SEND, gdx_rail_gen(r), p[k].q, r->qps[p[k].q].wr_posted),
			p[k].len);
	}
}

void gdx_prof_start_grouped(struct gdx_comm *c, struct gdx_request *req, int rail, int q)
{
	const struct gdx_rail *r = &c->ch.rails[rail];

	gdx_prof_start(req, req->prof_phandle, r, q, IBV_WR_RDMA_WRITE,
		       GDX_WRID(GDX_WRID_SEND, gdx_rail_gen(r), q, r->qps[q].wr_posted), req->size);
}

void gdx_prof_start_bufs(struct gdx_recv_comm *rc, struct gdx_request *req, void **phandles,
			 const uint64_t *sizes)
{
	int rail = gdx_failover_ctrl_rail(&rc->base);

	/* the clear-to-sends go on QP 0 of the control rail (gdx_cts_write) */
	for (int i = 0; i < req->n && rail >= 0; i++)
		if (phandles[i])
			gdx_prof_start(req, phandles[i], &rc->base.ch.rails[rail], 0,
				       IBV_WR_RDMA_WRITE, req->seq, sizes[i]);
}

void gdx_prof_stop(struct gdx_request *req)
{
	ncclProfilerCallback_t cb = __atomic_load_n(&gdx_prof_cb, __ATOMIC_RELAXED);

	for (int i = 0; i < req->prof_n; i++)
		cb(&req->prof_ev[i], ncclProfilerNetEventStop, NULL, 0, NULL);
	req->prof_n = 0;
}

void gdx_prof_comm_fini(struct gdx_comm *c)
{
	for (int i = 0; i < c->max_reqs && c->reqs; i++)
		if (c->reqs[i].state == GDX_REQ_ACTIVE)
			gdx_prof_done(&c->reqs[i]);
}
