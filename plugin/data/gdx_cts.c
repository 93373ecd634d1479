/* SPDX-License-Identifier: MIT */
/*
 * A receive comm's clear-to-sends, written (gdx_cts.h has the rules for
 * when): the held ones in one write, or one per row a grouped receive uses;
 * after a rail was taken out, the entries it may have been carrying again,
 * on the rail now used, and a slot whose rewrite the NIC may not have read
 * yet is not staged again. Nothing here polls: a poll only marks writes
 * due, and the data path calls here (gdx_cts_progress).
 */
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "data/gdx_cts.h"
#include "data/gdx_failover.h"
#include "rail/gdx_post.h"
#include "rail/gdx_rail.h"
#include "sys/gdx_param.h"

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
static int gdx_cts_rewrite(struct gdx_recv_comm *rc)
{
	struct gdx_comm *c = &rc->base;

	if (c->err)
		return c->err;
	for (uint32_t s = 0; s < GDX_MAX_REQUESTS; s++) {
		struct gdx_request *req = rc->slots[s];

		if (!req || req->state != GDX_REQ_ACTIVE || req->wait.pending == 0 ||
		    req->seq >= rc->cts_sent)
			continue;
		for (int i = 0; i < req->n; i++) {
			int rail = gdx_failover_ctrl_rail(c);

			if (rail < 0)
				return c->err;
			if (!gdx_qp_room(&c->ch.rails[rail], &c->ch.rails[rail].qps[0], 1))
				return 0; /* the next poll does them all again */
			if (gdx_cts_write(rc, rail, GDX_FIFO_INDEX(s, i), 1, true))
				return c->err;
			rc->rewrite_rail[s] = (uint8_t)(rail + 1);
			rc->rewrite_gen[s] = gdx_rail_gen(&c->ch.rails[rail]);
			rc->rewrite_wr[s] = c->ch.rails[rail].qps[0].wr_posted;
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
	if (c->ch.run[rail].state == GDX_RAIL_UP &&
	    gdx_rail_gen(&c->ch.rails[rail]) == rc->rewrite_gen[s] &&
	    (int32_t)(c->ch.rails[rail].qps[0].wr_done - rc->rewrite_wr[s]) < 0)
		return true;
	rc->rewrite_rail[s] = 0;
	return false;
}

/* Room for one write on the control rail; -1 when there is none (or no
 * rail). It does not poll for room: the flush stalls, the next poll marks it
 * due again, and the data path retries it once that poll's completions have
 * given the room back. */
static int gdx_cts_rail(struct gdx_recv_comm *rc)
{
	struct gdx_comm *c = &rc->base;
	int rail;

	/* without failover every rail is up, and the first carries them */
	if (!c->ch.failover && gdx_qp_room(&c->ch.rails[0], &c->ch.rails[0].qps[0], 1))
		return 0;
	rail = gdx_failover_ctrl_rail(c);
	if (rail < 0)
		return -1;
	return gdx_qp_room(&c->ch.rails[rail], &c->ch.rails[rail].qps[0], 1) ? rail : -1;
}

/* Writes the clear-to-sends of receives [cts_sent, tail) into the sender's
 * FIFO: per run of consecutive slots (two where the ring wraps), one write of
 * their first entries, and in each further row one per run of slots whose
 * grouped receive uses it (gdx_cts_flush_row). */
/* The common flush: the staged receives are all single buffers, so one
 * write of their entries (two where the ring wraps) says everything. */
static int gdx_cts_flush_singles(struct gdx_recv_comm *rc)
{
	while (rc->cts_sent < rc->tail) {
		uint32_t first = (uint32_t)(rc->cts_sent % GDX_MAX_REQUESTS);
		uint64_t count = rc->tail - rc->cts_sent;
		int rail = gdx_cts_rail(rc), ret;

		if (first + count > GDX_MAX_REQUESTS)
			count = GDX_MAX_REQUESTS - first;
		rc->cts_stalled = rail < 0;
		if (rc->cts_stalled)
			return rc->base.err;
		ret = gdx_cts_write(rc, rail, GDX_FIFO_INDEX(first, 0), (uint32_t)count, false);
		if (ret)
			return ret;
		rc->cts_sent += count;
		rc->cts_outstanding += (uint32_t)count;
	}
	rc->cts_stalled = false;
	return 0;
}

static uint32_t gdx_cts_nreqs(const struct gdx_recv_comm *rc, uint32_t s)
{
	return le32toh(rc->base.stage->fifo[GDX_FIFO_INDEX(s, 0)].nreqs);
}

/* Row i of slots [first, first + count): one write per run of slots whose
 * receive has more than i buffers (*any: there was one). A write across a
 * slot with fewer would carry that slot's row i as an earlier lap staged
 * it, and the NIC may read it (or read it again, to retransmit) after the
 * slot is staged anew: a half-written entry at the sender. No room: the
 * whole run is written again once there is (the writes are idempotent);
 * every poll retries it. */
static int gdx_cts_flush_row(struct gdx_recv_comm *rc, uint32_t first, uint32_t count, uint32_t i,
			     bool *any)
{
	for (uint32_t lo = first; lo < first + count;) {
		uint32_t hi = lo;
		int rail, ret;

		if (gdx_cts_nreqs(rc, lo) <= i) {
			lo++;
			continue;
		}
		while (hi + 1 < first + count && gdx_cts_nreqs(rc, hi + 1) > i)
			hi++;
		*any = true;
		rail = gdx_cts_rail(rc);
		rc->cts_stalled = rail < 0;
		if (rc->cts_stalled)
			return rc->base.err;
		ret = gdx_cts_write(rc, rail, GDX_FIFO_INDEX(lo, i), hi - lo + 1, false);
		if (ret)
			return ret;
		lo = hi + 1;
	}
	return 0;
}

int gdx_cts_flush_held(struct gdx_recv_comm *rc)
{
	if (rc->base.err)
		return rc->base.err;
	if (gdx_cts_one(rc))
		return gdx_cts_write_one(rc);
	rc->cts_flush_due = false;
	if (!rc->cts_groups)
		return gdx_cts_flush_singles(rc);
	while (rc->cts_sent < rc->tail) {
		uint32_t first = (uint32_t)(rc->cts_sent % GDX_MAX_REQUESTS);
		uint64_t count = rc->tail - rc->cts_sent;

		if (first + count > GDX_MAX_REQUESTS)
			count = GDX_MAX_REQUESTS - first;
		for (uint32_t i = 0; i < GDX_MAX_RECVS; i++) {
			bool any = false;
			int ret = gdx_cts_flush_row(rc, first, (uint32_t)count, i, &any);

			if (ret || rc->cts_stalled)
				return ret;
			if (!any)
				break; /* no receive of the run has this many buffers */
		}
		rc->cts_sent += count;
		rc->cts_outstanding += (uint32_t)count;
	}
	rc->cts_groups = 0; /* every one staged is written */
	return 0;
}

/* Only under cts_flush_due, which a rewrite and a stall mark too: the flush
 * always follows (it clears the flag; nothing held costs it a compare). */
void gdx_cts_catch_up(struct gdx_recv_comm *rc)
{
	if (rc->cts_rewrite)
		gdx_cts_rewrite(rc);
	gdx_cts_flush_held(rc);
}
