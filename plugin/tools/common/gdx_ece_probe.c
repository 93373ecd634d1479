/* SPDX-License-Identifier: MIT */
/* The ECE of a throw-away RC QP (gdx_ece_probe.h). */
#include <errno.h>
#include <string.h>

#include "tools/common/gdx_ece_probe.h"

int gdx_ece_probe(struct ibv_context *ctx, struct ibv_ece *out)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if (cq) {
		ia.send_cq = ia.recv_cq = cq;
		qp = ibv_create_qp(pd, &ia);
	}
	ret = qp ? ibv_query_ece(qp, out) : (errno ? errno : ENOMEM);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	return ret;
}
