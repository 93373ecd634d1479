/* SPDX-License-Identifier: MIT */
/*
 * iflush: after the NIC wrote a receive into GPU memory, a 1-byte RDMA READ
 * of that buffer through a QP connected to itself, on every NIC; PCIe
 * ordering makes the earlier writes visible to the GPU once the read returns.
 * Host memory needs none (the completion already orders it), so on a
 * host-only device iflush returns no request, unless NCCL_GDX_GDR_FLUSH=2
 * asks for the reads on host memory too (diagnostics, and the tests over rxe).
 * The QPs are made when memory that needs them is first registered on the
 * comm (most connections never receive into GPU memory and need none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_flush.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>

#define GDX_FLUSH_WR 2 * GDX_MAX_REQUESTS

static bool gdx_flush_wanted(const struct gdx_recv_comm *rc)
{
	if (gdx_params.gdr_flush == 2)
		return true;
	if (gdx_params.gdr_flush != 1)
		return false;
	for (int m = 0; m < rc->base.nmembers; m++)
		if (!(rc->base.rails[m].dev->ptr_support & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)))
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
		ret = gdx_rail_create(f, c->rails[r].dev, c, 1, &rc->flush_qp[r], GDX_FLUSH_WR, 1);
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
