/* SPDX-License-Identifier: MIT */
/*
 * NCCL's profiler events (net API v10+), reported as net_ib reports them: a
 * QP event (ncclProfilerNetIbDescr_v1_t, pluginId NCCL_PROFILER_NET_TYPE_IB
 * | NCCL_PROFILER_NET_IB_VER) per work request a call posts, started as it
 * goes and stopped when the request is given back: a test that finds it
 * complete, a failure, or its comm closing.
 *
 *   isend: one per piece of the message, its bytes on one QP (gdx_stripe.h),
 *          zero bytes included: that QP, its NIC's index in the device, the
 *          QP's WR count at the piece's last WR as wr_id (the id a signaled
 *          completion of it carries), WRITE_WITH_IMM (into a grouped
 *          receive, WRITE: the group's immediate ends the sizes' write), and
 *          the piece's bytes.
 *   irecv: one per buffer, for the clear-to-send that posts it: the QP it
 *          goes on, WRITE, the receive's sequence number as wr_id, and the
 *          bytes the buffer takes.
 *
 * At most GDX_PROF_MAX_EVENTS per request (net_ib's bound too): a message in
 * more pieces reports its first ones. Without a callback from init, or with
 * a NULL phandle, nothing is called: the hooks cost a test. An event NCCL
 * did not take (no profiler listening leaves the handle NULL) is not kept,
 * so it costs no stop. The callback's result never fails the data path.
 */
#ifndef GDX_PROF_H
#define GDX_PROF_H

#include <stdbool.h>
#include <stdint.h>

#include <nccl/net_common.h>
#include "comm/gdx_comm.h"
#include "rail/gdx_stripe.h"

/* NCCL's callback from init, kept once one gives it (v6-v9 give none). */
extern ncclProfilerCallback_t gdx_prof_cb;
void gdx_prof_set(ncclProfilerCallback_t cb);

static inline bool gdx_prof_on(const void *phandle)
{
	return phandle && __atomic_load_n(&gdx_prof_cb, __ATOMIC_RELAXED);
}

/* The events of what the hooks below saw posted. */
void gdx_prof_start_pieces(struct gdx_comm *c, struct gdx_request *req, void *phandle,
			   const struct gdx_piece *p, int np);
void gdx_prof_start_grouped(struct gdx_comm *c, struct gdx_request *req, int rail, int q);
void gdx_prof_start_bufs(struct gdx_recv_comm *rc, struct gdx_request *req, void **phandles,
			 const uint64_t *sizes);
void gdx_prof_stop(struct gdx_request *req);
/* A comm closing: stops the events of the requests it still has. */
void gdx_prof_comm_fini(struct gdx_comm *c);

/* ---- the hooks, one line each in gdx_p2p.c ---- */

/* isend posted the np pieces of req. */
static inline void gdx_prof_isend(struct gdx_comm *c, struct gdx_request *req, void *phandle,
				  const struct gdx_piece *p, int np)
{
	if (gdx_prof_on(phandle))
		gdx_prof_start_pieces(c, req, phandle, p, np);
}

/* An isend into a grouped receive: its bytes go with the group's last. */
static inline void gdx_prof_hold(struct gdx_request *req, void *phandle)
{
	req->prof_phandle = phandle;
}

/* The bytes of req, one buffer of a group, posted on QP q of rail. */
static inline void gdx_prof_grouped(struct gdx_comm *c, struct gdx_request *req, int rail, int q)
{
	if (gdx_prof_on(req->prof_phandle))
		gdx_prof_start_grouped(c, req, rail, q);
}

/* irecv posted req, of n buffers of these sizes; phandles: one per buffer. */
static inline void gdx_prof_irecv(struct gdx_recv_comm *rc, struct gdx_request *req,
				  void **phandles, const uint64_t *sizes)
{
	if (gdx_prof_on(phandles))
		gdx_prof_start_bufs(rc, req, phandles, sizes);
}

/* req is given back. */
static inline void gdx_prof_done(struct gdx_request *req)
{
	if (req->prof_n)
		gdx_prof_stop(req);
}

#endif
