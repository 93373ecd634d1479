/* SPDX-License-Identifier: MIT */
/*
 * Completion handling (gdx_cq.c): a comm's CQs polled, and what their
 * completions let go. The data path (gdx_p2p.c) polls through these only.
 */
#ifndef GDX_CQ_H
#define GDX_CQ_H

#include <gdx/gdx_comm.h>

/* Polls every rail's CQ once; then, only when due, failover's sweep
 * (gdx_failover_due), a receive comm's flush CQs (flush reads out) and the
 * held clear-to-sends that gdx_cts.h's rules let go (after completions, or
 * a flush stopped for room); returns how many completions were seen. */
int gdx_comm_poll(struct gdx_comm *c);
/* Every GDX_LIVENESS_POLLS polls without progress: the live slot's wait
 * state, and (every 100 ms) whether the peer process is still there; fails
 * the comm if not. */
void gdx_comm_check_peer(struct gdx_comm *c);

#define GDX_LIVENESS_POLLS 1024

/* A request waits and a poll saw nothing. */
static inline void gdx_comm_idle(struct gdx_comm *c)
{
	if (!(++c->idle_polls % GDX_LIVENESS_POLLS))
		gdx_comm_check_peer(c);
}
/* Writes the held clear-to-sends, receives [cts_sent, tail); 0, or the
 * comm's error. Here rather than in gdx_cts.c: it polls for send queue
 * room, and a poll writes held ones, so the two call each other. */
int gdx_cts_flush(struct gdx_recv_comm *rc);

#endif
