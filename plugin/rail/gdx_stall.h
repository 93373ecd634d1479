/* SPDX-License-Identifier: MIT */
/*
 * A QP that stops completing: its oldest signaled work request has waited
 * longer than NCCL_GDX_STALL_MS (a congested or broken path, a peer NIC that
 * does not answer). One WARN per episode, naming the NIC, QP, peer and how
 * long, and one INFO when a completion drains it: a QP that slows before it
 * fails shows in the log before the job's timeout does. The check rides the
 * liveness check (gdx_cq_check_peer: a waiting comm, every
 * GDX_LIVENESS_MS), never the data path; the drain is seen where the
 * completion is taken, one flag tested.
 */
#ifndef GDX_STALL_H
#define GDX_STALL_H

#include <stdint.h>

struct gdx_chan;

/* Every QP of the channel: its episode started, or told once it is long. */
void gdx_stall_check(struct gdx_chan *c, uint64_t now_ms);
/* QP q of rail r has had out work requests without a completion for
 * waited_ms, past NCCL_GDX_STALL_MS: the WARN, once per episode, and the
 * live slot's count. Both protocols tell a stall by it (one-sided RMA keeps
 * its own clock: its QPs' work is not counted as the two-sided path's). */
void gdx_stall_tell(struct gdx_chan *c, int r, int q, uint32_t out, uint64_t waited_ms);
/* A completion came on QP q of rail r, whose stall was told. */
void gdx_stall_drained(struct gdx_chan *c, int r, int q);

#endif
