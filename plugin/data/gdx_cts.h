/* SPDX-License-Identifier: MIT */
/*
 * A receive comm's clear-to-sends (gdx_cts.c): the rules for when they are
 * written, the write itself, and the rewrite after a rail was taken out.
 *
 * Each write costs an RDMA WRITE and a doorbell (a system call on some
 * providers), so a small receive's entry is held and goes with the next
 * ones, up to NCCL_GDX_CTS_BATCH in one write. It is held only while the
 * sender still has GDX_CTS_DEFER_MIN or more clear-to-sends whose receives
 * are not complete: it has work meanwhile. The held ones are written at
 * once (gdx_cts_flush):
 * - with a receive of GDX_CTS_EAGER_MIN bytes or more (irecv): the receiver
 *   counts messages still on the wire as held by the sender, so holding one
 *   back can leave the sender with none and the link idle, and one small
 *   write costs little next to 64 KiB;
 * - with the receive that fills the batch (irecv);
 * - when a poll finds the sender down to its last one, so that the batch
 *   arrives while it still has a message to send, or finds a write that
 *   had no room in the send queue due again: the poll marks them due
 *   (cts_flush_due) and the data path writes them after it
 *   (gdx_cts_progress, from gdx_cq_poll and test), so that writing never
 *   polls and polling never writes;
 * - when NCCL tests a held receive (gdx_cts_due).
 */
#ifndef GDX_CTS_H
#define GDX_CTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "rail/gdx_post.h"
#include "data/gdx_req.h"

#define GDX_CTS_DEFER_MIN 2
#define GDX_CTS_EAGER_MIN (64u << 10)

/* Whether a test writes the held clear-to-sends (after its poll, so that
 * what had arrived is counted first): only when the tested receive is one
 * of them. NCCL waits for that very message, so holding it longer only adds
 * latency; a test of a receive already sent leaves the batch to the rules
 * above, as one write per message would cost more than the sender waits. */
static inline bool gdx_cts_due(const struct gdx_recv_comm *rc, const struct gdx_request *req)
{
	return rc->cts_sent < rc->tail && !req->flush && req->seq >= rc->cts_sent;
}

/* The sender is down to its last clear-to-send with some held back: the
 * batch goes while it still has a message to send, so that it never waits
 * for one. Only a completion lowers cts_outstanding (irecv applies the rule
 * itself); asked by every poll that took a completion. */
static inline bool gdx_cts_held_low(const struct gdx_recv_comm *rc)
{
	return rc->cts_sent < rc->tail && rc->cts_outstanding < GDX_CTS_DEFER_MIN;
}

/* One RDMA WRITE of count FIFO entries from index first on, on the rail the
 * control writes go on, signaled when must; fails the comm if it cannot. */
static inline int gdx_cts_write(struct gdx_recv_comm *rc, int rail, uint32_t first, uint32_t count,
				bool must_signal)
{
	int ret = gdx_post_ctrl_write(&rc->base.ch, rail, 0, &rc->base.stage->fifo[first],
				      count * (uint32_t)sizeof(struct gdx_cts),
				      rc->base.remote_ctrl + offsetof(struct gdx_ctrl, fifo) +
					      first * sizeof(struct gdx_cts),
				      must_signal);

	if (ret)
		gdx_comm_fail(&rc->base, ret);
	return ret;
}

/* The flush's common case: one single receive held (each receive of 64 KiB
 * or more, or one the sender waits for) on a comm that works, whose rail 0
 * carries them (no failover) and has room. */
static inline bool gdx_cts_one(const struct gdx_recv_comm *rc)
{
	return rc->cts_sent + 1 == rc->tail && !rc->cts_groups && !rc->base.ch.failover &&
	       !rc->base.err && gdx_qp_room(&rc->base.ch.rails[0], &rc->base.ch.rails[0].qps[0], 1);
}

/* Its entry, written now: every held one is. */
static inline int gdx_cts_write_one(struct gdx_recv_comm *rc)
{
	int ret;

	rc->cts_flush_due = false;
	ret = gdx_cts_write(rc, 0, GDX_FIFO_INDEX(rc->cts_sent % GDX_MAX_REQUESTS, 0), 1, false);
	if (ret)
		return ret;
	rc->cts_sent++;
	rc->cts_outstanding++;
	rc->cts_stalled = false;
	return 0;
}

/* gdx_cts_flush out of line, for every case: several held, grouped
 * receives, failover's control rail, a send queue without room. */
int gdx_cts_flush_held(struct gdx_recv_comm *rc);

/* Writes the held clear-to-sends, receives [cts_sent, tail); 0, or the
 * comm's error. A send queue without room stalls it (cts_stalled): the next
 * poll marks it due again. */
static inline int gdx_cts_flush(struct gdx_recv_comm *rc)
{
	return gdx_cts_one(rc) ? gdx_cts_write_one(rc) : gdx_cts_flush_held(rc);
}

/* What polls marked due, written: a rewrite after a rail was taken out,
 * then the held ones. Out of line; gdx_cts_progress asks first. */
void gdx_cts_catch_up(struct gdx_recv_comm *rc);

/* After a poll, on the data path: what it marked due. One flag for all of
 * it (a rewrite and a stalled flush mark it too): an empty test asks it. */
static inline void gdx_cts_progress(struct gdx_recv_comm *rc)
{
	if (rc->cts_flush_due)
		gdx_cts_catch_up(rc);
}

/* Whether slot s may not be staged again yet: the NIC may still read a
 * rewrite of its entries. */
bool gdx_cts_rewrite_unread(struct gdx_recv_comm *rc, uint32_t s);

#endif
