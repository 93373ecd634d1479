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
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int gid_index;
	union ibv_gid gid;
	uint32_t psn;
	uint32_t max_inline;
	enum ibv_mtu path_mtu;
	int tc;		     /* RoCE traffic class of this connection */
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

/* Why a completion failed, and what to check. */
const char *gdx_wc_hint(enum ibv_wc_status status);

#endif
