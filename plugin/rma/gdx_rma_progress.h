/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's engine (gdx_rma_progress.c): a connection's requests made
 * into work requests over its rails and QPs, given to the NIC, their
 * completions taken, signals released once what they cover is placed, a
 * failed rail's work moved to the others (or the failure reported), and
 * test.
 *
 * How a signal is held (the order NCCL relies on): the atomic of a strong
 * signal covers every put and signal issued before it on its connection
 * (same context, same peer) and its own put; a weak one only its own put.
 * The atomic is made only once every work request it covers is complete
 * (the NIC has its acknowledgement, so the bytes are placed at the target),
 * except those on one single QP, on which it is then posted behind them:
 * RC executes a QP's requests in order, so the target applies the add after
 * it placed them. A large put striped over two rails is therefore
 * signaled on the rail whose part completes last, as soon as the other
 * part is acknowledged; small puts and their signals share one QP (the
 * connection's home QP) and go back to back. With NCCL_GDX_FAILOVER=1 a
 * signal goes on the home QP only (it waits for the other rails' parts):
 * an atomic a failed rail held may or may not have been applied and
 * cannot be sent again, so only the home rail's failure can fail a
 * signal; any other rail's work moves to the rails left.
 */
#ifndef GDX_RMA_PROGRESS_H
#define GDX_RMA_PROGRESS_H

#include <stdbool.h>

#include "rma/gdx_rma_comm.h"

/* The connection's lists empty and its pools free (after its QPs are made). */
void gdx_rma_conn_reset(struct gdx_rma_conn *c);
/* A free request of c for op, counted in flight; NULL when every one is. */
struct gdx_rma_req *gdx_rma_req_get(struct gdx_rma_conn *c, enum gdx_rma_op op);
/* The most work requests a request of op and size may take on c, however
 * many of its QPs are left when it is made: one larger than the
 * connection's pool could never be. */
uint32_t gdx_rma_req_wrs(const struct gdx_rma_conn *c, enum gdx_rma_op op, uint64_t size);
/* req (filled in) issued on c: its work requests made, or it
 * waits in c's backlog behind earlier ones; a signal queued. Given to the
 * NIC at once unless hold (the aggregate hint: the next call without it,
 * test or rmaProgress rings the doorbell); the order is the same. */
void gdx_rma_issue(struct gdx_rma_conn *c, struct gdx_rma_req *req, bool hold);
/* One context of a block moved on: its CQs polled, signals released,
 * waiting work given to the NIC. */
void gdx_rma_progress(struct gdx_rma_ctx *x, int context);
/* test: progress on the request's context, then *done when it is
 * complete (the request is given back then, or on an error, returned). */
int gdx_rma_test(struct gdx_rma_req *req, int *done);
/* A context's first failure, in words, for queryLastError; NULL when none. */
const char *gdx_rma_ctx_error(const struct gdx_rma_ctx *x);

#endif
