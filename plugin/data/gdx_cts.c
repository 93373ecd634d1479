/* SPDX-License-Identifier: MIT */
/*
 * Clear-to-sends after a rail was taken out: the entries it may have been
 * carrying are written again, on the rail now used, and a slot whose
 * rewrite the NIC may not have read yet is not staged again. The rules for
 * when clear-to-sends are written are gdx_cts.h's.
 */
#include <stdbool.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "data/gdx_cts.h"
#include "data/gdx_failover.h"
#include "data/gdx_post.h"
#include "dev/gdx_verbs.h"

/* A rail was taken out: the clear-to-sends it may have been carrying are
 * written again, for every receive not yet complete, on the rail now used
 * (the sender takes a rewrite of an entry it has as the same entry).
 *
 * The staged entries a write reads stay as they are until the NIC has read
 * them. For the first write of a receive's entries that holds by itself:
 * the receive cannot complete before the sender has them, and only a new
 * receive in the slot restages it. A rewrite may still be unread when the
 * receive completes (the sender had the first write), so it is signaled,
 * and irecv does not restage the slot before it is complete
 * (gdx_cts_rewrite_unread): the NIC would read a half-written entry, the
 * new sequence number with the old address. */
int gdx_cts_rewrite(struct gdx_recv_comm *rc)
{
	struct gdx_comm *c = &rc->base;

	if (c->err)
		return c->err;
	for (uint32_t s = 0; s < GDX_MAX_REQUESTS; s++) {
		struct gdx_request *req = rc->slots[s];

		if (!req || req->state != GDX_REQ_ACTIVE || req->pending == 0 ||
		    req->seq >= rc->cts_sent)
			continue;
		for (int i = 0; i < req->n; i++) {
			int rail = gdx_failover_ctrl_rail(c);

			if (rail < 0)
				return c->err;
			if (!gdx_qp_room(&c->rails[rail], &c->rails[rail].qps[0], 1))
				return 0; /* the next poll does them all again */
			if (gdx_cts_write(rc, rail, GDX_FIFO_INDEX(s, i), 1, true))
				return c->err;
			rc->rewrite_rail[s] = (uint8_t)(rail + 1);
			rc->rewrite_gen[s] = gdx_rail_gen(&c->rails[rail]);
			rc->rewrite_wr[s] = c->rails[rail].qps[0].wr_posted;
		}
	}
	rc->cts_rewrite = false;
	return 0;
}

/* Whether a rewrite of slot s's entries may still be unread by the NIC: its
 * rail carries on, the same QPs, and no completion has covered it yet. A
 * rail taken out since has its QPs in error: they read nothing more. */
bool gdx_cts_rewrite_unread(struct gdx_recv_comm *rc, uint32_t s)
{
	const struct gdx_comm *c = &rc->base;
	int rail = rc->rewrite_rail[s] - 1;

	if (rail < 0)
		return false;
	if (c->run[rail].state == GDX_RAIL_UP &&
	    gdx_rail_gen(&c->rails[rail]) == rc->rewrite_gen[s] &&
	    (int32_t)(c->rails[rail].qps[0].wr_done - rc->rewrite_wr[s]) < 0)
		return true;
	rc->rewrite_rail[s] = 0;
	return false;
}
