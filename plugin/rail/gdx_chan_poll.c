/* SPDX-License-Identifier: MIT */
/* A channel's completions, and the events they give the protocol
 * (gdx_chan_poll.h). */
#include <endian.h>
#include <errno.h>

#include "rail/gdx_chan_poll.h"
#include "rail/gdx_stripe.h"
#include "sys/gdx_log.h"
#include "sys/gdx_time.h"

int gdx_chan_poll_failed(const struct gdx_chan *ch, int r, int ret)
{
	GDX_WARN("%s rail %d (%s): ibv_poll_cq failed (%d)", ch->name, r, ch->rails[r].dev->ibdev,
		 ret);
	return -EIO;
}

/* A batch of receives taken on QP qi of rail r, posted again. Out of line
 * (one receive in GDX_RECV_BATCH comes here): the caller keeps nothing
 * across it. */
int gdx_chan_recv_batch(struct gdx_chan *ch, int r, int qi)
{
	struct gdx_qp *q = &ch->rails[r].qps[qi];
	int ret = gdx_rail_post_recvs(&ch->rails[r], qi, (int)q->recvs_to_post);

	q->recvs_to_post = 0;
	return ret ? -EIO : 0;
}

/* A failed completion's status kept on its QP of rail r, for the line
 * gdx_qpstat_dump writes about it. */
static void gdx_chan_wc_note(struct gdx_chan *ch, int r, const struct ibv_wc *wc)
{
	for (int i = 0; i < ch->rails[r].nqps; i++) {
		struct gdx_qp *q = &ch->rails[r].qps[i];

		if (q->qp && q->qp->qp_num == wc->qp_num && !q->failed) {
			q->failed = true;
			q->failed_status = (uint8_t)wc->status;
		}
	}
}

/* A failed completion of rail r, in state: a probe's on a restored rail is
 * its outcome; on a rail already taken out, a flush; else the protocol's. */
static enum gdx_chan_ev_type gdx_chan_wc_error(struct gdx_chan *ch, int r, const struct ibv_wc *wc,
					       enum gdx_rail_state state, struct gdx_chan_ev *ev)
{
	if (GDX_WRID_OP(wc->wr_id) == GDX_WRID_PROBE && state == GDX_RAIL_PROBING) {
		ev->ok = false;
		return GDX_CHAN_EV_PROBED;
	}
	if (state != GDX_RAIL_UP)
		return GDX_CHAN_EV_NONE;
	gdx_chan_wc_note(ch, r, wc);
	return GDX_CHAN_EV_FAILED;
}

/* A receive of rail r completed: an immediate, or (its QPs in error) a
 * flush. A rail being drained counts every receive back (gdx_failover.c):
 * its counts are final only once none is outstanding. */
static enum gdx_chan_ev_type gdx_chan_wc_recv(struct gdx_chan *ch, int r, const struct ibv_wc *wc,
					      enum gdx_rail_state state, struct gdx_chan_ev *ev)
{
	int qi = GDX_WRID_QP(wc->wr_id);
	struct gdx_qp *q = &ch->rails[r].qps[qi];
	uint32_t imm = be32toh(wc->imm_data);

	if (wc->status != IBV_WC_SUCCESS) {
		q->recvs_out--;
		return gdx_chan_wc_error(ch, r, wc, state, ev);
	}
	if (state != GDX_RAIL_UP && state != GDX_RAIL_DRAINING) {
		/* after the counts went to the sender, which re-sends it */
		q->recvs_out--;
		GDX_WARN("%s: rail %d: an immediate (0x%08x) arrived after the rail's counts were "
			 "final; it is dropped and re-sent",
			 ch->name, r, imm);
		return GDX_CHAN_EV_NONE;
	}
	if (state == GDX_RAIL_UP) {
		ev->err = gdx_chan_recv_repost(ch, r, qi);
		if (ev->err)
			return GDX_CHAN_EV_BROKEN;
	} else {
		q->recvs_out--;
		q->recvs_to_post++;
		ch->run[r].drain_imms++;
		ch->run[r].drain_last_ms = gdx_now_ms();
	}
	gdx_chan_imms_taken(ch, r);
	/* A restored rail's probe carries again. It is not counted, as the
	 * sender neither logs nor counts it (gdx_post_probe): counted, it
	 * would shift every ordinal after it. */
	if (imm == GDX_IMM_PROBE)
		return GDX_CHAN_EV_NONE;
	q->imms++;
	GDX_LIVE_COUNT(ch->live->rails[r].rx_pieces++);
	ev->imm = imm;
	ev->qp = qi;
	return GDX_CHAN_EV_IMM;
}

enum gdx_chan_ev_type gdx_chan_wc(struct gdx_chan *ch, int r, const struct ibv_wc *wc,
				  struct gdx_chan_ev *ev)
{
	enum gdx_rail_state state = ch->run[r].state;
	uint32_t op = GDX_WRID_OP(wc->wr_id);

	/* A restore's thread owns the QPs, and nothing of their new generation
	 * can complete yet; nor can what came before a reset count after it. */
	if (state == GDX_RAIL_RESTORING || GDX_WRID_GEN(wc->wr_id) != gdx_rail_gen(&ch->rails[r])) {
		GDX_TRACE(NCCL_NET,
			  "%s: rail %d: completion 0x%llx of an earlier generation dropped",
			  ch->name, r, (unsigned long long)wc->wr_id);
		return GDX_CHAN_EV_NONE;
	}
	if (op == GDX_WRID_RECV)
		return gdx_chan_wc_recv(ch, r, wc, state, ev);
	if (wc->status != IBV_WC_SUCCESS)
		return gdx_chan_wc_error(ch, r, wc, state, ev);
	/* A restored rail's probe was delivered: once every QP's has been,
	 * the rail is up again (gdx_failover.c). */
	if (op == GDX_WRID_PROBE) {
		gdx_post_delivered(ch, r, GDX_WRID_QP(wc->wr_id), GDX_WRID_WR(wc->wr_id));
		ev->ok = true;
		return GDX_CHAN_EV_PROBED;
	}
	/* A signaled send: everything before it on its QP is delivered. On a
	 * rail taken out the receiver's counts say what was, not completions. */
	if (op == GDX_WRID_SEND && state == GDX_RAIL_UP)
		gdx_stripe_delivered(
			ch, r,
			gdx_post_delivered(ch, r, GDX_WRID_QP(wc->wr_id), GDX_WRID_WR(wc->wr_id)));
	return GDX_CHAN_EV_NONE;
}
