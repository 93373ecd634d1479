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
 * once (gdx_cts_flush, gdx_cq.h):
 * - with a receive of GDX_CTS_EAGER_MIN bytes or more (irecv): the receiver
 *   counts messages still on the wire as held by the sender, so holding one
 *   back can leave the sender with none and the link idle, and one small
 *   write costs little next to 64 KiB;
 * - with the receive that fills the batch (irecv);
 * - when a poll finds the sender down to its last one, so that the batch
 *   arrives while it still has a message to send, or finds a write that
 *   had no room in the send queue due again (gdx_cq_poll);
 * - when NCCL tests a held receive (gdx_cts_due).
 */
#ifndef GDX_CTS_H
#define GDX_CTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "data/gdx_post.h"
#include "data/gdx_req.h"

#define GDX_CTS_DEFER_MIN 2
#define GDX_CTS_EAGER_MIN (64u << 10)

/* One RDMA WRITE of count FIFO entries from index first on, on the rail the
 * control writes go on, signaled when must. Inline: every batch goes by it. */
static inline int gdx_cts_write(struct gdx_recv_comm *rc, int rail, uint32_t first, uint32_t count,
				bool must_signal)
{
	int ret = gdx_post_ctrl_write(&rc->base, rail, 0, &rc->base.ctrl->fifo[first],
				      count * (uint32_t)sizeof(struct gdx_cts),
				      rc->base.remote_ctrl + offsetof(struct gdx_ctrl, fifo) +
					      first * sizeof(struct gdx_cts),
				      must_signal);

	if (ret)
		gdx_comm_fail(&rc->base, ret);
	return ret;
}

/* Whether a test writes the held clear-to-sends (after its poll, so that
 * what had arrived is counted first): only when the tested receive is one
 * of them. NCCL waits for that very message, so holding it longer only adds
 * latency; a test of a receive already sent leaves the batch to the rules
 * above, as one write per message would cost more than the sender waits. */
static inline bool gdx_cts_due(const struct gdx_recv_comm *rc, const struct gdx_request *req)
{
	return rc->cts_sent < rc->tail && !req->flush && req->seq >= rc->cts_sent;
}

/* A rail was taken out: every receive not yet complete has its entries
 * written again on the rail now used. 0, or the comm's error. */
int gdx_cts_rewrite(struct gdx_recv_comm *rc);
/* Whether slot s may not be staged again yet: the NIC may still read a
 * rewrite of its entries. */
bool gdx_cts_rewrite_unread(struct gdx_recv_comm *rc, uint32_t s);

#endif
