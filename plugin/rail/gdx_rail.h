/* SPDX-License-Identifier: MIT */
/*
 * One rail of a connection: a CQ and one or more RC QPs on one device (more
 * than one spreads the rail's traffic over as many flows, for ECMP), taken
 * from RESET to RTS with the peer's addresses from the handshake, and back
 * to RESET and RTS again when a rail that failed is restored.
 */
#ifndef GDX_RAIL_H
#define GDX_RAIL_H

#include <infiniband/verbs.h>

#include "dev/gdx_dev.h"
#include "wire/gdx_wire.h"

struct gdx_seglog;

/* wr_id of every work request on a rail's QPs: what it is (op), the QP, the
 * rail's generation (a completion from before a reset is told from one
 * after it and dropped) and, for sends, the QP's WR count up to it (all of
 * which a signaled completion gives back and shows delivered). */
#define GDX_WRID_SEND  1u
#define GDX_WRID_PROBE 2u
#define GDX_WRID_RECV  3u
#define GDX_WRID(op, gen, q, wr) \
	((uint64_t)(wr) << 32 | (uint64_t)(uint16_t)(gen) << 16 | (uint64_t)(q) << 8 | (op))
#define GDX_WRID_OP(id)	 ((uint32_t)(id)&0xffu)
#define GDX_WRID_QP(id)	 ((int)(((id) >> 8) & 0xffu))
#define GDX_WRID_GEN(id) ((uint16_t)((id) >> 16))
#define GDX_WRID_WR(id)	 ((uint32_t)((id) >> 32))

struct gdx_qp {
	struct ibv_qp *qp;
	uint32_t wr_posted;	/* WRs posted since the QP last started */
	uint32_t wr_done;	/* of those, the ones a completion has given back */
	uint32_t unsignaled;	/* WRs posted unsignaled since the last signaled one */
	uint32_t recvs_to_post; /* receiver: receives taken and not yet posted again */
	uint32_t imms;		/* pieces ending with an immediate since the QP last
				 * started: posted (sender) or taken (receiver) */
	uint32_t recvs_out;	/* receiver: receives posted and not yet completed */
	struct gdx_seglog *log; /* sender: what it posted and does not know delivered */
	/* A stall (gdx_stall.h): wr_done when the checks last saw it move, since
	 * when (0: nothing signaled is out), and whether this one was told. */
	uint32_t stall_done;
	uint64_t stall_since_ms;
	bool stall_warned;
	/* The last completion that failed on it, for the line about it that
	 * a failure writes (gdx_qpstat_dump): its ibv_wc_status. */
	bool failed;
	uint8_t failed_status;
};

/*
 * A rail: one NIC's share of one connection, its QPs and CQ. A comm on a
 * fused device (a rail group: NCCL_GDX_RAILS, makeVDevice) has one rail per
 * member NIC; striping spreads over rails and failover takes one out. The
 * code says "rail" in this sense only and "rail group" for the NICs fused.
 */
struct gdx_rail {
	struct gdx_dev *dev;
	int member; /* which NIC of the comm's device: its keys in a gdx_mr */
	struct ibv_pd *pd;
	struct ibv_cq *cq; /* every QP of the rail completes here */
	int nqps;
	struct gdx_qp *qps; /* nqps, the caller's storage */
	int gid_index;
	union ibv_gid gid;
	uint32_t psn; /* every QP of the rail starts at it */
	uint16_t gen; /* the QPs' generation, one more at each reset (atomic) */
	uint32_t max_inline;
	uint32_t sq_depth, rq_depth; /* per QP */
	enum ibv_mtu path_mtu;
	uint8_t sl, tc;		 /* service level; RoCE traffic class (the GRH's) */
	struct gdx_wire_ece ece; /* set on every QP before RTR when supported */
	/* One-sided RMA's rails (gdx_rail_create_shared): the CQ is the
	 * caller's, shared with other rails, and not destroyed with the rail;
	 * the QPs take remote atomics, and rd_atomic RDMA READs and atomics
	 * outstanding each way (0: one, as the two-sided path's). */
	bool cq_shared;
	bool atomics;
	uint8_t rd_atomic;
};

/* Creates the CQ and nqps QPs (qps: the caller's storage, zeroed) and moves
 * them to INIT. On failure nothing is left. owner: what an async event
 * that names the QPs or the CQ finds as their context (a channel, tagged
 * GDX_CHAN_TAG: gdx_event.c). */
int gdx_rail_create(struct gdx_rail *r, struct gdx_dev *dev, void *owner, int nqps,
		    struct gdx_qp *qps, uint32_t max_send_wr, uint32_t max_recv_wr);
/* One-sided RMA: the same on the caller's CQ (cq, which it keeps), with
 * remote atomics allowed on the QPs and rd_atomic READs and atomics in
 * flight each way (within the device's limits); no receive queue. */
int gdx_rail_create_shared(struct gdx_rail *r, struct gdx_dev *dev, void *owner, int nqps,
			   struct gdx_qp *qps, uint32_t max_send_wr, struct ibv_cq *cq,
			   int rd_atomic);
/* The rail's address, and its QP numbers into qpn[0..nqps). */
void gdx_rail_local(const struct gdx_rail *r, struct gdx_wire_rail *out, uint32_t *qpn);
/* Every QP INIT -> RTR -> RTS towards the peer's QP of the same index. */
int gdx_rail_connect(struct gdx_rail *r, const struct gdx_wire_rail *remote, const uint32_t *qpn);
/* Every QP to ERR: nothing more is sent or taken on the rail. */
void gdx_rail_freeze(struct gdx_rail *r);
/* Every QP to RESET and INIT again, with a new PSN and the port's GID read
 * again, ready for gdx_rail_connect; the counters start over and the
 * generation goes up. */
int gdx_rail_reset(struct gdx_rail *r);
void gdx_rail_destroy(struct gdx_rail *r);

/* Receives taken are posted again this many at a time (gdx_chan_poll.h). */
#define GDX_RECV_BATCH 16

/* Posts n zero-length receives on QP q (they only consume WRITE_WITH_IMM),
 * counted in recvs_out until they complete. */
int gdx_rail_post_recvs(struct gdx_rail *r, int q, int n);

/* The connection's service level and traffic class, as net_ib chooses them
 * on the sending side: NCCL_GDX_SL / NCCL_GDX_TC (or their NCCL_IB_ twins)
 * when set, else NCCL's traffic class for the communicator (config_tc, -1
 * when it gives none) for both, else 0. The receiving side takes the
 * sender's (its clear-to-sends' class is NCCL_GDX_FIFO_TC when set). */
void gdx_rail_qos(int config_tc, uint8_t *sl, uint8_t *tc);

/* Why a completion failed, and what to check. */
const char *gdx_wc_hint(enum ibv_wc_status status);

/* The rail's generation: read on the data path while a restore's thread
 * may be resetting the rail. */
static inline uint16_t gdx_rail_gen(const struct gdx_rail *r)
{
	return __atomic_load_n(&r->gen, __ATOMIC_RELAXED);
}

#endif
