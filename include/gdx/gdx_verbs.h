/* SPDX-License-Identifier: MIT */
/*
 * One rail of a connection: a CQ and an RC QP on one device, taken from RESET
 * to RTS with the peer's address from the handshake.
 */
#ifndef GDX_VERBS_H
#define GDX_VERBS_H

#include <infiniband/verbs.h>

#include <gdx/gdx_dev.h>
#include <gdx/gdx_wire.h>

struct gdx_rail {
	struct gdx_dev *dev;
	int member; /* which NIC of the comm's device: its keys in a gdx_mr */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int gid_index;
	union ibv_gid gid;
	uint32_t psn;
	uint32_t max_inline;
	enum ibv_mtu path_mtu;
	uint8_t sl, tc;	     /* service level; RoCE traffic class (the GRH's) */
	uint32_t sq_depth;   /* send queue slots */
	uint32_t sq_used;    /* slots taken by WRs whose completion is not yet polled */
	uint32_t unsignaled; /* WRs posted unsignaled since the last signaled one */
};

/* Creates the CQ and QP and moves the QP to INIT. On failure nothing is left. */
/* owner: the comm, found again from the QP's and CQ's context when an async
 * event names them. */
int gdx_rail_create(struct gdx_rail *r, struct gdx_dev *dev, void *owner, uint32_t max_send_wr,
		    uint32_t max_recv_wr);
void gdx_rail_local(const struct gdx_rail *r, struct gdx_wire_rail *out);
/* INIT -> RTR -> RTS towards the peer's rail. */
int gdx_rail_connect(struct gdx_rail *r, const struct gdx_wire_rail *remote);
void gdx_rail_destroy(struct gdx_rail *r);

/* Posts n zero-length receives (they only consume WRITE_WITH_IMM). */
int gdx_rail_post_recvs(struct gdx_rail *r, int n);

/* The connection's service level and traffic class, as net_ib chooses them
 * on the sending side: NCCL_GDX_SL / NCCL_GDX_TC (or their NCCL_IB_ twins)
 * when set, else NCCL's traffic class for the communicator (config_tc, -1
 * when it gives none) for both, else 0. The receiving side takes the
 * sender's (its clear-to-sends' class is NCCL_GDX_FIFO_TC when set). */
void gdx_rail_qos(int config_tc, uint8_t *sl, uint8_t *tc);

/* Why a completion failed, and what to check. */
const char *gdx_wc_hint(enum ibv_wc_status status);

#endif
