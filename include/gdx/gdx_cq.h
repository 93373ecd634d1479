/* SPDX-License-Identifier: MIT */
/*
 * Completion handling (gdx_cq.c): a comm's CQs polled, and what their
 * completions let go. The data path (gdx_p2p.c) polls through these only.
 */
#ifndef GDX_CQ_H
#define GDX_CQ_H

#include <gdx/gdx_comm.h>

/* Polls every rail's CQ once (and a receive comm's flush CQs), then writes
 * the held clear-to-sends that gdx_cts.h's rules say are due; returns how
 * many completions were seen. */
int gdx_comm_poll(struct gdx_comm *c);
/* Called while a request waits and a poll saw nothing: now and then looks
 * whether the peer process is still there, and fails the comm if not. */
void gdx_comm_check_peer(struct gdx_comm *c);
/* Writes the held clear-to-sends, receives [cts_sent, tail); 0, or the
 * comm's error. Here rather than in gdx_cts.c: it polls for send queue
 * room, and a poll writes held ones, so the two call each other. */
int gdx_cts_flush(struct gdx_recv_comm *rc);

#endif
