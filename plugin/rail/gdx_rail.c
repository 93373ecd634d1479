/* SPDX-License-Identifier: MIT */
/* One rail of a channel: its CQ and QPs, RESET to RTS and back (gdx_rail.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "dev/gdx_dev_gid.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_sysfs.h"
#include "rail/gdx_rail.h"

/* A CTS entry is 64 bytes; inlining it saves the NIC a DMA read. */
#define GDX_INLINE_WANT 64

static int gdx_rail_pick_gid(struct gdx_rail *r)
{
	return gdx_dev_gid(r->dev, &r->gid_index, &r->gid);
}

static int gdx_rail_qp_create(struct gdx_rail *r, void *owner, struct gdx_qp *q)
{
	struct ibv_qp_init_attr ia = {
		.qp_context = owner,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = r->sq_depth,
			.max_recv_wr = r->rq_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = r->max_inline},
	};

	q->qp = ibv_create_qp(r->pd, &ia);
	if (!q->qp && ia.cap.max_inline_data) {
		/* Some devices cannot inline; the CTS then goes by DMA. */
		ia.cap.max_inline_data = 0;
		q->qp = ibv_create_qp(r->pd, &ia);
	}
	if (!q->qp)
		return errno ? -errno : -ENOMEM;
	/* the rail inlines what every one of its QPs can */
	if (ia.cap.max_inline_data < r->max_inline)
		r->max_inline = ia.cap.max_inline_data;
	return 0;
}

/* RESET -> INIT, as a QP is made and as it is restored. */
static int gdx_qp_init(struct gdx_rail *r, struct gdx_qp *q)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = (uint16_t)gdx_params.pkey,
		.port_num = (uint8_t)r->dev->ib_port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   (r->atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	int ret = ibv_modify_qp(
		q->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	if (ret)
		GDX_WARN("ibv_modify_qp(%s qp 0x%x, INIT) failed: %s", r->dev->ibdev, q->qp->qp_num,
			 strerror(ret));
	return -ret;
}

static void gdx_rail_new_psn(struct gdx_rail *r)
{
	if (getrandom(&r->psn, sizeof(r->psn), 0) != sizeof(r->psn))
		r->psn = (uint32_t)random();
	r->psn &= 0xffffff;
}

/* The rail as gdx_rail_create() and gdx_rail_create_shared() make it: its
 * CQ, made here when cq is NULL; r->atomics and r->rd_atomic set by the
 * caller before the QPs go to INIT. */
static int gdx_rail_make(struct gdx_rail *r, struct gdx_dev *dev, void *owner, int nqps,
			 struct gdx_qp *qps, uint32_t max_send_wr, uint32_t max_recv_wr,
			 struct ibv_cq *cq)
{
	int ret;

	r->dev = dev;
	r->qps = qps;
	r->sq_depth = max_send_wr;
	r->rq_depth = max_recv_wr;
	r->max_inline = GDX_INLINE_WANT;
	ret = gdx_dev_pd(dev, &r->pd);
	if (ret)
		return ret;
	ret = gdx_rail_pick_gid(r);
	if (ret)
		return ret;
	r->cq_shared = cq != NULL;
	r->cq = cq ? cq
		   : ibv_create_cq(dev->ib->ctx, nqps * (int)(max_send_wr + max_recv_wr), owner,
				   NULL, 0);
	if (!r->cq) {
		ret = errno ? -errno : -ENOMEM;
		GDX_WARN("ibv_create_cq(%s) failed: %s", dev->ibdev, strerror(-ret));
		return ret;
	}
	for (r->nqps = 0; r->nqps < nqps; r->nqps++) {
		struct gdx_qp *q = &qps[r->nqps];

		ret = gdx_rail_qp_create(r, owner, q);
		if (ret) {
			GDX_WARN("ibv_create_qp(%s, QP %d of %d) failed: %s", dev->ibdev,
				 r->nqps + 1, nqps, strerror(-ret));
			goto err;
		}
		ret = gdx_qp_init(r, q);
		if (ret) {
			ibv_destroy_qp(q->qp);
			q->qp = NULL;
			goto err;
		}
	}
	gdx_rail_new_psn(r);
	return 0;

err:
	gdx_rail_destroy(r);
	return ret;
}

int gdx_rail_create(struct gdx_rail *r, struct gdx_dev *dev, void *owner, int nqps,
		    struct gdx_qp *qps, uint32_t max_send_wr, uint32_t max_recv_wr)
{
	memset(r, 0, sizeof(*r));
	return gdx_rail_make(r, dev, owner, nqps, qps, max_send_wr, max_recv_wr, NULL);
}

int gdx_rail_create_shared(struct gdx_rail *r, struct gdx_dev *dev, void *owner, int nqps,
			   struct gdx_qp *qps, uint32_t max_send_wr, struct ibv_cq *cq,
			   int rd_atomic)
{
	int most = dev->ib->attr.max_qp_rd_atom < dev->ib->attr.max_qp_init_rd_atom
			   ? dev->ib->attr.max_qp_rd_atom
			   : dev->ib->attr.max_qp_init_rd_atom;

	memset(r, 0, sizeof(*r));
	r->atomics = true;
	if (most > 0 && rd_atomic > most)
		rd_atomic = most;
	r->rd_atomic = (uint8_t)(rd_atomic > 1 ? (rd_atomic < 255 ? rd_atomic : 255) : 1);
	return gdx_rail_make(r, dev, owner, nqps, qps, max_send_wr, 0, cq);
}

void gdx_rail_local(const struct gdx_rail *r, struct gdx_wire_rail *out, uint32_t *qpn)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->gid, r->gid.raw, sizeof(out->gid));
	out->psn = r->psn;
	out->lid = r->dev->lid;
	out->link_layer = (uint8_t)r->dev->link_layer;
	out->mtu = (uint8_t)r->dev->active_mtu;
	out->ece = r->ece;
	for (int q = 0; q < r->nqps; q++)
		qpn[q] = r->qps[q].qp->qp_num;
}

static int gdx_qp_connect(struct gdx_rail *r, struct gdx_qp *q, const struct gdx_wire_rail *remote,
			  uint32_t qpn)
{
	struct gdx_dev *dev = r->dev;
	struct ibv_qp_attr attr;
	int ret;

	if (r->ece.supported) {
		struct ibv_ece ece = {.vendor_id = r->ece.vendor_id,
				      .options = r->ece.options,
				      .comp_mask = r->ece.comp_mask};

		ret = ibv_set_ece(q->qp, &ece);
		if (ret) {
			GDX_WARN("ibv_set_ece(%s qp 0x%x, options 0x%x) failed: %s; set "
				 "NCCL_GDX_ECE_ENABLE=0 to connect without it",
				 dev->ibdev, q->qp->qp_num, ece.options, strerror(ret));
			return -ret;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = r->path_mtu;
	attr.dest_qp_num = qpn;
	attr.rq_psn = remote->psn;
	attr.max_dest_rd_atomic = r->rd_atomic ? r->rd_atomic : 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.port_num = (uint8_t)dev->ib_port;
	attr.ah_attr.sl = r->sl;
	if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
		attr.ah_attr.is_global = 1;
		memcpy(attr.ah_attr.grh.dgid.raw, remote->gid, 16);
		attr.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
		attr.ah_attr.grh.hop_limit = 255;
		attr.ah_attr.grh.traffic_class = r->tc;
	} else {
		attr.ah_attr.dlid = remote->lid;
	}
	ret = ibv_modify_qp(q->qp, &attr,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret) {
		GDX_WARN("ibv_modify_qp(%s qp 0x%x, RTR to qp 0x%x) failed: %s; check the GID "
			 "index (%d) and that the peer is reachable",
			 dev->ibdev, q->qp->qp_num, qpn, strerror(ret), r->gid_index);
		return -ret;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = r->psn;
	attr.timeout = (uint8_t)gdx_params.timeout;
	attr.retry_cnt = (uint8_t)gdx_params.retry_cnt;
	/* Receives are always posted ahead, so RNR means a broken peer: end too. */
	attr.rnr_retry = 6;
	attr.max_rd_atomic = r->rd_atomic ? r->rd_atomic : 1;
	ret = ibv_modify_qp(q->qp, &attr,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret) {
		GDX_WARN("ibv_modify_qp(%s qp 0x%x, RTS) failed: %s", dev->ibdev, q->qp->qp_num,
			 strerror(ret));
		return -ret;
	}
	return 0;
}

int gdx_rail_connect(struct gdx_rail *r, const struct gdx_wire_rail *remote, const uint32_t *qpn)
{
	struct gdx_dev *dev = r->dev;

	if (remote->link_layer != dev->link_layer) {
		GDX_WARN("%s is %s but the peer's rail is %s: both ends must use one link layer",
			 dev->ibdev, dev->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
			 remote->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB");
		return -EPROTO;
	}
	r->path_mtu = remote->mtu < dev->active_mtu ? (enum ibv_mtu)remote->mtu : dev->active_mtu;
	for (int q = 0; q < r->nqps; q++) {
		int ret = gdx_qp_connect(r, &r->qps[q], remote, qpn[q]);

		if (ret)
			return ret;
	}
	return 0;
}

void gdx_rail_freeze(struct gdx_rail *r)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

	for (int q = 0; q < r->nqps; q++) {
		int ret = ibv_modify_qp(r->qps[q].qp, &attr, IBV_QP_STATE);

		if (ret)
			GDX_WARN("ibv_modify_qp(%s qp 0x%x, ERR) failed: %s", r->dev->ibdev,
				 r->qps[q].qp->qp_num, strerror(ret));
	}
}

int gdx_rail_reset(struct gdx_rail *r)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RESET};
	int ret = gdx_rail_pick_gid(r);

	for (int q = 0; q < r->nqps && !ret; q++) {
		struct gdx_qp *qp = &r->qps[q];

		ret = -ibv_modify_qp(qp->qp, &attr, IBV_QP_STATE);
		if (ret) {
			GDX_WARN("ibv_modify_qp(%s qp 0x%x, RESET) failed: %s", r->dev->ibdev,
				 qp->qp->qp_num, strerror(-ret));
			break;
		}
		ret = gdx_qp_init(r, qp);
		qp->wr_posted = qp->wr_done = qp->unsignaled = qp->recvs_to_post = qp->imms = 0;
		qp->recvs_out = qp->stall_done = 0;
		qp->stall_since_ms = 0;
		qp->stall_warned = false; /* failover has said what became of it */
	}
	__atomic_store_n(&r->gen, (uint16_t)(r->gen + 1), __ATOMIC_RELAXED);
	gdx_rail_new_psn(r);
	return ret;
}

void gdx_rail_destroy(struct gdx_rail *r)
{
	for (int q = 0; q < r->nqps; q++)
		if (r->qps[q].qp && ibv_destroy_qp(r->qps[q].qp))
			GDX_WARN("ibv_destroy_qp(%s) failed", r->dev->ibdev);
	if (r->cq && !r->cq_shared && ibv_destroy_cq(r->cq))
		GDX_WARN("ibv_destroy_cq(%s) failed", r->dev->ibdev);
	memset(r, 0, sizeof(*r));
}

int gdx_rail_post_recvs(struct gdx_rail *r, int q, int n)
{
	struct ibv_recv_wr wrs[64], *bad;
	int ret;

	while (n > 0) {
		int k = n < 64 ? n : 64;

		for (int i = 0; i < k; i++) {
			wrs[i] =
				(struct ibv_recv_wr){.wr_id = GDX_WRID(GDX_WRID_RECV, r->gen, q, 0),
						     .sg_list = NULL,
						     .num_sge = 0};
			wrs[i].next = i + 1 < k ? &wrs[i + 1] : NULL;
		}
		ret = ibv_post_recv(r->qps[q].qp, wrs, &bad);
		if (ret) {
			GDX_WARN("ibv_post_recv(%s qp 0x%x) failed: %s", r->dev->ibdev,
				 r->qps[q].qp->qp_num, strerror(ret));
			return -ret;
		}
		r->qps[q].recvs_out += (uint32_t)k;
		n -= k;
	}
	return 0;
}

void gdx_rail_qos(int config_tc, uint8_t *sl, uint8_t *tc)
{
	int fallback = config_tc >= 0 ? config_tc : 0;

	*sl = (uint8_t)(gdx_params.sl >= 0 ? gdx_params.sl : fallback);
	*tc = (uint8_t)(gdx_params.tc >= 0 ? gdx_params.tc : fallback);
}

const char *gdx_wc_hint(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_RETRY_EXC_ERR:
		return "the peer did not answer: check the GID index and routing between the "
		       "two ports, that the peer is alive, and NCCL_GDX_TIMEOUT";
	case IBV_WC_RNR_RETRY_EXC_ERR: return "the peer posted no receive: it is stuck or gone";
	case IBV_WC_LOC_PROT_ERR:
		return "local protection error: a buffer outside its registration, or for GPU "
		       "memory an ACS bridge or translating IOMMU on the PCIe path";
	case IBV_WC_REM_ACCESS_ERR:
		return "the peer's buffer key or range was refused: a registration mismatch";
	case IBV_WC_REM_INV_REQ_ERR:
		return "the peer refused the request: sizes or keys out of range";
	case IBV_WC_WR_FLUSH_ERR:
		return "the QP had already failed; an earlier completion holds the cause";
	case IBV_WC_LOC_QP_OP_ERR:
		return "the local QP could not send: its port or link is down, or it was "
		       "misconfigured";
	case IBV_WC_LOC_LEN_ERR: return "message longer than the posted receive";
	default: return "see ibv_wc_status_str";
	}
}
