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
/* A completion came on QP q of rail r, whose stall was told. */
void gdx_stall_drained(struct gdx_chan *c, int r, int q);

#endif
