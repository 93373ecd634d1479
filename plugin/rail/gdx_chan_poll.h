/* SPDX-License-Identifier: MIT */
/*
 * A channel's completions. The channel takes its own part of each (the
 * generation it belongs to, receives counted and posted again, signaled
 * sends that show segments delivered, a restored rail's probes, what a
 * rail being drained has taken) and hands the protocol above what is left
 * as one typed event: an immediate with its value, rail and QP; a probe's
 * outcome; a completion that failed on a rail that is up. The protocol
 * switches on the type: no callback, no flag.
 *
 * A poll's batch is taken in order, one event per completion, so that what
 * the protocol does with one (a rail taken out) is what the next is judged
 * by. The common completions have a path of their own, inline, that takes
 * the channel's part with no event at all where there is none to give (a
 * send comm's signaled sends) or with the immediate only.
 */
#ifndef GDX_CHAN_POLL_H
#define GDX_CHAN_POLL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "rail/gdx_chan.h"
#include "rail/gdx_post.h"

/* Completions one poll takes per CQ. */
#define GDX_POLL_BATCH 16

enum gdx_chan_ev_type {
	GDX_CHAN_EV_NONE,   /* the channel's alone: nothing for the protocol */
	GDX_CHAN_EV_IMM,    /* an immediate arrived (imm, qp) */
	GDX_CHAN_EV_PROBED, /* a restored rail's probe completed (ok: delivered) */
	GDX_CHAN_EV_FAILED, /* a completion failed on a rail that is up (its wc):
			     * the rail out, or the connection failed */
	GDX_CHAN_EV_BROKEN, /* the channel cannot go on (err): receives could not
			     * be posted again */
};

struct gdx_chan_ev {
	uint32_t imm; /* GDX_CHAN_EV_IMM: host order */
	int qp;	      /* GDX_CHAN_EV_IMM: the QP of the rail it came by */
	bool ok;      /* GDX_CHAN_EV_PROBED */
	int err;      /* GDX_CHAN_EV_BROKEN: -errno */
};

/* Completion wc of rail r: the channel's part taken, the protocol's event. */
enum gdx_chan_ev_type gdx_chan_wc(struct gdx_chan *ch, int r, const struct ibv_wc *wc,
				  struct gdx_chan_ev *ev);

/* A failed ibv_poll_cq on rail r (ret): the WARN, -EIO. */
int gdx_chan_poll_failed(const struct gdx_chan *ch, int r, int ret) __attribute__((cold, noinline));

/* Polls rail r's CQ for up to GDX_POLL_BATCH completions into wcs: how
 * many, or ibv_poll_cq's negative answer, which the caller hands to
 * gdx_chan_poll_failed (not here: a spin's empty poll pays for no test it
 * does not need). */
static inline int gdx_chan_poll_cq(struct gdx_chan *ch, int r, struct ibv_wc *wcs)
{
	return ibv_poll_cq(ch->rails[r].cq, GDX_POLL_BATCH, wcs);
}

/* After a poll of rail r that found n completions, every one taken: a
 * rail being drained knows its CQ was found empty (gdx_failover.c takes its
 * counts only from one that was). */
static inline void gdx_chan_polled(struct gdx_chan *ch, int r, int n)
{
	if (ch->run[r].state == GDX_RAIL_DRAINING)
		ch->run[r].cq_idle = n < GDX_POLL_BATCH;
}

/* Whether a poll of the channel may end at rail 0's CQ when it is empty:
 * one rail, and it is up. */
static inline bool gdx_chan_single(const struct gdx_chan *ch)
{
	return ch->nrails == 1 && ch->run[0].state == GDX_RAIL_UP;
}

/* ---- the common completions, on rail 0 of a channel whose rail is up ---- */

/* A signaled send of the current generation gen that succeeded: everything
 * before it on its QP is delivered (one rail: no stripe to tell). Returns
 * whether it was one, and taken; anything else is left for gdx_chan_wc. */
static inline bool gdx_chan_send_done(struct gdx_chan *ch, uint16_t gen, const struct ibv_wc *wc)
{
	uint64_t id = wc->wr_id;

	if (wc->status != IBV_WC_SUCCESS || GDX_WRID_OP(id) != GDX_WRID_SEND ||
	    GDX_WRID_GEN(id) != gen)
		return false;
	gdx_post_delivered(ch, 0, GDX_WRID_QP(id), GDX_WRID_WR(id));
	return true;
}

/* Whether wc is an immediate that arrived on rail 0 in the current
 * generation gen. Its value (be32toh(wc->imm_data)) is the protocol's to
 * judge, and a probe's is GDX_IMM_PROBE, which no protocol sends
 * (wire/gdx_wire.h): a caller takes it with gdx_chan_imm_take only as a
 * form of its own, else leaves it to gdx_chan_wc. (The probe is not
 * tested here: the small path's own form check turns it away, at no cost
 * per message.) */
static inline bool gdx_chan_imm_arrived(uint16_t gen, const struct ibv_wc *wc)
{
	return wc->status == IBV_WC_SUCCESS && GDX_WRID_OP(wc->wr_id) == GDX_WRID_RECV &&
	       GDX_WRID_GEN(wc->wr_id) == gen;
}

/* gdx_chan_recv_repost's batch, out of line (gdx_chan_poll.c). */
int gdx_chan_recv_batch(struct gdx_chan *ch, int r, int qi);

/* The receive of QP qi of rail r, which is up, counted back and, a batch at
 * a time, posted again: the receive queue has a batch's room beyond what can
 * be in flight. Returns 0, or -EIO when the receives could not be posted. */
static inline int gdx_chan_recv_repost(struct gdx_chan *ch, int r, int qi)
{
	struct gdx_qp *q = &ch->rails[r].qps[qi];

	q->recvs_out--;
	if (__builtin_expect(++q->recvs_to_post < GDX_RECV_BATCH, 1))
		return 0;
	return gdx_chan_recv_batch(ch, r, qi);
}

/* An immediate of gdx_chan_imm_arrived on rail 0, not a probe, taken: its receive back,
 * counted on its QP (a DOWN note's counts, gdx_failover.c) and in the live
 * slot. Returns 0 or -EIO, as gdx_chan_recv_repost. */
static inline int gdx_chan_imm_take(struct gdx_chan *ch, const struct ibv_wc *wc)
{
	int qi = GDX_WRID_QP(wc->wr_id);

	ch->rails[0].qps[qi].imms++;
	GDX_LIVE_COUNT(ch->live->rails[0].rx_pieces++);
	return gdx_chan_recv_repost(ch, 0, qi);
}

/* After immediates were taken on rail r: it is proven again (a restored
 * rail's control writes wait for something to come by it). */
static inline void gdx_chan_imms_taken(struct gdx_chan *ch, int r)
{
	ch->run[r].unproven = false;
}

#endif
