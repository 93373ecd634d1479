/* SPDX-License-Identifier: MIT */
/*
 * How a channel cuts a message over its rails and QPs: large messages over
 * every rail that is up, in shares weighted by what each rail has been
 * delivering (a slower or degraded rail does not pace the others, as an even
 * split would), small ones to the rail that would finish them first; on a
 * rail, one QP in turn or every QP (NCCL_GDX_SPLIT_DATA_ON_QPS).
 */
#ifndef GDX_STRIPE_H
#define GDX_STRIPE_H

#include <stdbool.h>
#include <stdint.h>

#include "rail/gdx_chan.h"

struct gdx_piece {
	uint8_t rail, q;
	uint64_t off, len;
};

/* Shares are multiples of this, so that NCCL's LL and LL128 flag lines are
 * never split between rails or QPs (net_ib's IB_WRITE_CHUNK_ALIGNMENT). */
#define GDX_STRIPE_ALIGN 128

/* Starting rates, from each rail's port speed. */
void gdx_stripe_init(struct gdx_chan *c);
/* The pieces of a message of size bytes with sequence number seq, in out
 * (up to GDX_MAX_QPS); one_rail keeps it on one rail (grouped receives).
 * Returns how many, 0 when no rail is up. */
int gdx_stripe_plan(struct gdx_chan *c, uint64_t size, uint64_t seq, bool one_rail,
		    struct gdx_piece *out);
/* gdx_stripe_plan for a single message, without the call where there is
 * nothing to choose: one rail, whose QPs take messages in turn. */
static inline int gdx_stripe_plan_inline(struct gdx_chan *c, uint64_t size, uint64_t seq,
					 struct gdx_piece *out)
{
	int nq = c->rails[0].nqps;

	if (c->nrails > 1 || (c->split && nq > 1))
		return gdx_stripe_plan(c, size, seq, false, out);
	out[0] = (struct gdx_piece){
		.rail = 0, .q = (uint8_t)(nq > 1 ? seq % (uint64_t)nq : 0), .off = 0, .len = size};
	return 1;
}

/* The rail that would finish size more bytes first, -1 when none is up. */
int gdx_stripe_pick(const struct gdx_chan *c, uint64_t size, uint64_t seq);

/* Bytes posted on a rail, and bytes a completion has shown it delivered
 * (counted only while it is up): the rates, per ms it had bytes in flight. */
void gdx_stripe_posted(struct gdx_chan *c, int rail, uint64_t bytes);
void gdx_stripe_delivered(struct gdx_chan *c, int rail, uint64_t bytes);
/* A rail's in-flight bytes forgotten: it was taken out. */
void gdx_stripe_reset(struct gdx_chan *c, int rail);
/* A rail back: it starts from the rate it had or the others' average,
 * whichever is more (what it delivered as it failed says nothing of the
 * path now), and its share settles from there. */
void gdx_stripe_back(struct gdx_chan *c, int rail);

/* For the tests only: no other file of the plugin uses what follows. */

/* Pure share computation: split size over n weights into aligned shares
 * (the last takes the rest). */
void gdx_stripe_shares(uint64_t size, const double *weight, int n, uint64_t *share);

#endif
