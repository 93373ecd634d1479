/* SPDX-License-Identifier: MIT */
/*
 * iflush: after the NIC wrote a receive into GPU memory, a 1-byte RDMA READ
 * of the last buffer that received bytes, through a QP connected to itself,
 * on every NIC; PCIe ordering makes that NIC's earlier writes visible to the
 * GPU once the read returns. Host memory needs none (the completion already
 * orders it), so a receive into host memory gets no request from iflush,
 * unless NCCL_GDX_GDR_FLUSH=2 asks for the reads on host memory too
 * (diagnostics, and the tests over rxe). The QPs are made when memory that
 * needs them is first registered on the comm (most connections never
 * receive into GPU memory and need none), or at the first iflush that needs
 * them. The reads complete on the QPs' own CQs, which gdx_cq_poll takes
 * with the rails' (gdx_cq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm/gdx_comm.h"
#include "data/gdx_flush.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "data/gdx_req.h"

#define GDX_FLUSH_WR 2 * GDX_MAX_REQUESTS

static bool gdx_flush_wanted(const struct gdx_recv_comm *rc)
{
	if (gdx_params.gdr_flush == 2)
		return true;
	if (gdx_params.gdr_flush != 1)
		return false;
	for (int m = 0; m < rc->base.nmembers; m++)
		if (!(rc->base.ch.rails[m].dev->ptr_support & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)))
			return false;
	return true;
}

void gdx_flush_destroy(struct gdx_recv_comm *rc)
{
	for (int r = 0; r < rc->nflush; r++) {
		gdx_rail_destroy(&rc->flush[r]);
		if (rc->flush_mr[r])
			ibv_dereg_mr(rc->flush_mr[r]);
		rc->flush_mr[r] = NULL;
	}
	rc->nflush = 0;
	rc->flushes_out = 0;
	free(rc->flush_byte);
	rc->flush_byte = NULL;
}

int gdx_flush_create(struct gdx_recv_comm *rc)
{
	struct gdx_comm *c = &rc->base;
	int ret = 0;

	if (rc->nflush || !gdx_flush_wanted(rc))
		return 0;
	rc->flush_byte = calloc(1, 64);
	if (!rc->flush_byte)
		return -ENOMEM;
	/* one per NIC: a read through a NIC orders that NIC's earlier writes */
	for (int r = 0; r < c->nmembers && !ret; r++) {
		struct gdx_rail *f = &rc->flush[r];
		struct gdx_wire_rail self;
		uint32_t qpn;

		memset(&rc->flush_qp[r], 0, sizeof(rc->flush_qp[r]));
		ret = gdx_rail_create(f, c->ch.rails[r].dev, &c->ch, 1, &rc->flush_qp[r],
				      GDX_FLUSH_WR, 1);
		if (ret)
			break;
		rc->nflush = r + 1;
		gdx_rail_local(f, &self, &qpn);
		ret = gdx_rail_connect(f, &self, &qpn);
		if (ret)
			break;
		rc->flush_mr[r] = ibv_reg_mr(f->pd, rc->flush_byte, 64, IBV_ACCESS_LOCAL_WRITE);
		if (!rc->flush_mr[r]) {
			ret = errno ? -errno : -ENOMEM;
			GDX_WARN("ibv_reg_mr(%s, flush byte) failed: %s", f->dev->ibdev,
				 strerror(-ret));
		}
	}
	if (ret)
		gdx_flush_destroy(rc);
	return ret;
}

int gdx_iflush(struct gdx_recv_comm *rc, int n, void **data, const int *sizes, struct gdx_mr **mrs,
	       struct gdx_request **req_p)
{
	struct gdx_comm *c = &rc->base;
	struct gdx_request *req;
	int last = -1;

	*req_p = NULL;
	if (c->err)
		return c->err;
	if (n < 1 || n > GDX_MAX_RECVS || !data || !sizes || !mrs)
		return 0; /* nothing to flush: NCCL counts it done */
	/* The last buffer that received bytes into memory that needs it. */
	for (int i = 0; i < n; i++)
		if (sizes[i] > 0 && mrs[i] && mrs[i]->kind == GDX_KIND_MR &&
		    (mrs[i]->type == NCCL_PTR_CUDA || gdx_params.gdr_flush == 2))
			last = i;
	if (last < 0)
		return 0;
	if (!rc->nflush) {
		/* GPU memory registered through another comm (regIsGlobal, NCCL
		 * 2.20-2.23's user buffers): the QPs are made now, once */
		int ret = gdx_flush_create(rc);

		if (ret) {
			gdx_comm_fail(c, ret);
			return ret;
		}
		if (!rc->nflush)
			return 0; /* the device needs no flush */
	}
	req = gdx_req_get(c, false);
	if (!req)
		return -ENOSPC;
	req->flush = true;
	for (int r = 0; r < rc->nflush; r++) {
		struct ibv_sge sge = {.addr = (uintptr_t)rc->flush_byte,
				      .length = 1,
				      .lkey = rc->flush_mr[r]->lkey};
		struct ibv_send_wr wr = {
			.wr_id = (uintptr_t)req,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = {.remote_addr = (uintptr_t)data[last],
				    .rkey = mrs[last]->rkey[r]}, /* flush[r] is on member r */
		};
		struct ibv_send_wr *bad;
		int ret = ibv_post_send(rc->flush[r].qps[0].qp, &wr, &bad);

		if (ret) {
			GDX_WARN("%s: ibv_post_send(flush read, qp 0x%x) failed: %s", c->dev_name,
				 rc->flush[r].qps[0].qp->qp_num, strerror(ret));
			gdx_comm_fail(c, -ret);
			if (req->wait.pending == 0)
				gdx_req_put(req);
			return -ret;
		}
		req->wait.pending++;
		rc->flushes_out++; /* its CQ is polled while any is out */
		gdx_wait_wrs_posted(&req->wait, 1);
	}
	gdx_req_mode(req, GDX_REQ_FLUSH);
	*req_p = req;
	return 0;
}
