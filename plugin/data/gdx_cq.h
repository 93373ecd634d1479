/* SPDX-License-Identifier: MIT */
/*
 * Completion handling (gdx_cq.c): a comm's CQs polled, and what their
 * completions let go. The data path (gdx_p2p.c) polls through these only.
 */
#ifndef GDX_CQ_H
#define GDX_CQ_H

#include <stdbool.h>

#include "comm/gdx_comm.h"
#include "data/gdx_failover.h"
#include "rail/gdx_chan_poll.h"

/* gdx_cq_collect, then the held clear-to-sends that gdx_cts.h's rules let go
 * (after completions, or a flush stopped for room): every rail's CQ polled
 * once and, only when due, failover's sweep (gdx_failover_due) and a
 * receive comm's flush CQs (flush reads out); returns how many completions
 * were seen. */
int gdx_cq_poll(struct gdx_comm *c);

/* The rest of a poll (gdx_cq.c): rail 0's found n0 completions in wcs, or
 * its rail is not up, or there are more rails, or something is due. */
int gdx_cq_poll_all(struct gdx_comm *c, struct ibv_wc *wcs, int n0);
/* The rest of a poll of a comm with one rail, whose CQ gave n > 0
 * completions in wcs: what gdx_cq_poll_all does, the common ones (a small
 * receive's immediate, a signaled send) taken first on a path of their own. */
int gdx_cq_poll_one(struct gdx_comm *c, struct ibv_wc *wcs, int n);

/* Whether a poll that took no completion still has work after the CQs.
 * The clear-to-sends keep a flag each: a flush stopped for room is marked
 * due again by every poll (its completions give the room back), and a
 * rewrite left undone the same. */
static inline bool gdx_cq_poll_due(struct gdx_comm *c)
{
	if (c->kind == GDX_KIND_RECV) {
		const struct gdx_recv_comm *rc = gdx_recv_comm_of(c);

		if (rc->cts_stalled || rc->cts_rewrite || rc->flushes_out)
			return true;
	}
	return gdx_failover_due(c);
}

/* The completions of every rail taken, and what is due after them (the
 * failover sweep, flush CQs), but no clear-to-send written: test writes
 * them itself after it, gdx_cq_poll right away. Inline where a proxy spins
 * (test): the case of one rail that is up with an empty CQ and nothing due
 * costs the provider's poll and a few compares, and no call of its own. */
static inline __attribute__((always_inline)) int gdx_cq_collect(struct gdx_comm *c)
{
	struct ibv_wc wcs[GDX_POLL_BATCH];
	int n = gdx_chan_poll_cq(&c->ch, 0, wcs);

	if (n == 0 && gdx_chan_single(&c->ch) && !gdx_cq_poll_due(c))
		return 0;
	if (n > 0 && c->ch.nrails == 1)
		return gdx_cq_poll_one(c, wcs, n);
	return gdx_cq_poll_all(c, wcs, n);
}
/* Every GDX_LIVENESS_POLLS polls without progress: the live slot's wait
 * state, and (every 100 ms) whether the peer process is still there; fails
 * the comm if not. */
void gdx_cq_check_peer(struct gdx_comm *c);

#define GDX_LIVENESS_POLLS 1024

/* A request waits and a poll saw nothing. */
static inline void gdx_cq_idle(struct gdx_comm *c)
{
	if (!(++c->idle_polls % GDX_LIVENESS_POLLS))
		gdx_cq_check_peer(c);
}

#endif
