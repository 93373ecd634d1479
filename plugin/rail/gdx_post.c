/* SPDX-License-Identifier: MIT */
/* Posting on a channel's QPs and the segment log (gdx_post.h). */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/gdx_log.h"
#include "rail/gdx_post.h"
#include "rail/gdx_stall.h"
#include <gdx/gdx_stamp.h>
#include "rail/gdx_stripe.h"

/* Work requests chained into one ibv_post_send call. */
#define GDX_POST_BATCH 16

int gdx_seglog_create(struct gdx_qp *q)
{
	q->log = calloc(1, sizeof(*q->log));
	return q->log ? 0 : -ENOMEM;
}

void gdx_seglog_destroy(struct gdx_qp *q)
{
	if (!q->log)
		return;
	free(q->log);
	q->log = NULL;
}

static uint32_t gdx_seg_rkey(const struct gdx_chan *c, int rail, const struct gdx_seg *seg)
{
	return seg->rkeys ? le32toh(seg->rkeys[rail]) : c->ctrl_rkey[rail];
}

static uint32_t gdx_seg_lkey(const struct gdx_chan *c, const struct gdx_rail *r,
			     const struct gdx_seg *seg)
{
	if (seg->flags & GDX_SEG_CTRL)
		return c->stage_lkey[r->member];
	if (!seg->lkeys)
		return 0; /* no bytes */
	return seg->lkeys[r->member];
}

/* Whether every byte of the segment goes inline, on any rail of the channel:
 * host memory (the provider's memcpy cannot read GPU memory) in one WR. */
static bool gdx_seg_inline(const struct gdx_chan *c, const struct gdx_seg *seg)
{
	bool host = seg->flags & (GDX_SEG_CTRL | GDX_SEG_HOST);

	return seg->len == 0 || (host && seg->len <= c->max_inline);
}

/* Logs a segment posted on q, its last WR at the QP's count now (a send
 * comm's log: what a completion shows delivered, what failover re-sends). */
static inline void gdx_seg_log(struct gdx_qp *q, const struct gdx_seg *seg, uint8_t flags,
			       uint32_t nwrs, bool inl, bool waits, uint64_t stamp)
{
	struct gdx_seglog *log = q->log;
	struct gdx_seglog_entry *e = &log->e[log->tail++ % GDX_SEGLOG_SIZE];

	e->seg = *seg;
	e->last_wr = q->wr_posted;
	/* The immediate that ends its piece on this QP: its own (counted just
	 * before) or the next. The receiver's count for the QP reaching it says
	 * the segment was placed (gdx_fo_resend). */
	e->imm_ord = (flags & GDX_SEG_IMM) ? q->imms : q->imms + 1;
	e->nwrs = nwrs;
	e->stamp = stamp;
	if (inl)
		e->seg.flags |= GDX_SEG_INLINE; /* the bytes were copied when posted */
	if (!waits)
		e->seg.wait = NULL; /* nothing waits for it */
}

/* What a posted segment leaves behind: the QP's counts, its log entry, the
 * rail's bytes in flight and the live counters, and its request's wait.
 * flags are seg->flags, as far as the caller knows them: a constant there
 * folds a test away on the path most messages take (gdx_post_single). */
static inline void gdx_seg_posted(struct gdx_chan *c, int rail, struct gdx_qp *q,
				  const struct gdx_seg *seg, uint8_t flags, uint32_t nwrs, bool inl,
				  bool waits, uint64_t stamp)
{
	q->wr_posted += nwrs;
	if (flags & GDX_SEG_IMM)
		q->imms++;
	/* A segment nothing waits for, on a channel without failover (nothing
	 * can be re-sent) and with one rail (no stripe counts its bytes back),
	 * is logged for no one: only a debug build's invariant looks for one
	 * whose bytes the NIC still reads (gdx_req.c). */
	if (q->log && (waits || c->nrails > 1 || GDX_DBG_SEGS))
		gdx_seg_log(q, seg, flags, nwrs, inl, waits, stamp);
	/* a sender's data: a receiver posts no segment, only its control
	 * writes (gdx_post_ctrl_write) */
	if (!(flags & GDX_SEG_CTRL)) {
		if (c->nrails > 1)
			gdx_stripe_posted(c, rail, seg->len);
		GDX_LIVE_COUNT(c->live->rails[rail].tx_bytes += seg->len);
	}
	if (waits) {
		seg->wait->pending++;
		gdx_wait_wrs_posted(seg->wait, nwrs);
	}
}

/* A segment longer than one WRITE may be (the port's max_msg_sz): its WRs
 * chained GDX_POST_BATCH at a time. Out of line: every segment NCCL sends
 * is one WR. */
static __attribute__((noinline)) int gdx_post_seg_long(struct gdx_chan *c, int rail, int qi,
						       const struct gdx_seg *seg, bool waits,
						       bool signal, uint32_t lkey, uint32_t rkey,
						       bool host)
{
	struct gdx_rail *r = &c->rails[rail];
	struct gdx_qp *q = &r->qps[qi];
	uint64_t max = gdx_rail_max_write(r), off = 0, stamp = 0;
	uint16_t gen = gdx_rail_gen(r);
	bool imm = seg->flags & GDX_SEG_IMM;
	struct ibv_send_wr wrs[GDX_POST_BATCH], *bad;
	struct ibv_sge sges[GDX_POST_BATCH];
	uint32_t total = 0;
	int ret;

	do {
		int n = 0;
		bool last = false;

		while (n < GDX_POST_BATCH && !last) {
			uint32_t chunk = (uint32_t)(seg->len - off < max ? seg->len - off : max);

			last = off + chunk == seg->len;
			gdx_wr_set(&wrs[n], &sges[n],
				   GDX_WRID(GDX_WRID_SEND, gen, qi, q->wr_posted + total + n + 1),
				   seg->data + off, chunk, lkey, seg->raddr + off, rkey,
				   last && imm, htobe32(seg->imm),
				   host && chunk <= r->max_inline ? IBV_SEND_INLINE : 0);
			if (n)
				wrs[n - 1].next = &wrs[n];
			n++;
			off += chunk;
		}
		if (last && gdx_qp_signal(q, total + (uint32_t)n, signal)) {
			wrs[n - 1].send_flags |= IBV_SEND_SIGNALED;
			GDX_LIVE_COUNT(stamp = signal && c->timed ? gdx_stamp() : 0);
		}
		ret = ibv_post_send(q->qp, wrs, &bad);
		if (ret)
			return gdx_post_failed(r, q, ret);
		total += (uint32_t)n;
	} while (off < seg->len);
	gdx_seg_posted(c, rail, q, seg, seg->flags, total, false, waits, stamp);
	return 0;
}

int gdx_post_failed(const struct gdx_rail *r, const struct gdx_qp *q, int ret)
{
	GDX_WARN("%s: ibv_post_send(qp 0x%x) failed: %s", r->dev->ibdev, q->qp->qp_num,
		 strerror(ret));
	return -ret;
}

/* Posts one segment: one WR, or (longer than a WRITE may be) several. Its
 * request waits for it when waits, and its last WR is signaled when signal
 * (or when the QP's unsignaled run is due). */
static int gdx_post_seg(struct gdx_chan *c, int rail, int qi, const struct gdx_seg *seg, bool waits,
			bool signal)
{
	struct gdx_rail *r = &c->rails[rail];
	struct gdx_qp *q = &r->qps[qi];
	uint32_t lkey = gdx_seg_lkey(c, r, seg), rkey = gdx_seg_rkey(c, rail, seg);
	bool host = seg->flags & (GDX_SEG_CTRL | GDX_SEG_HOST);
	bool imm = seg->flags & GDX_SEG_IMM, inl = host && seg->len <= r->max_inline;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint64_t stamp = 0;
	int ret;

	if (!imm && seg->len == 0)
		return 0; /* nothing to place, nothing to say */
	if (seg->len > gdx_rail_max_write(r))
		return gdx_post_seg_long(c, rail, qi, seg, waits, signal, lkey, rkey, host);
	gdx_wr_set(&wr, &sge, GDX_WRID(GDX_WRID_SEND, gdx_rail_gen(r), qi, q->wr_posted + 1),
		   seg->data, seg->len, lkey, seg->raddr, rkey, imm, htobe32(seg->imm),
		   inl && seg->len ? IBV_SEND_INLINE : 0);
	if (gdx_qp_signal(q, 1, signal)) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		/* a request's last WR here: its latency, post to completion,
		 * when someone can read it (one sample per piece) */
		GDX_LIVE_COUNT(stamp = signal && c->timed ? gdx_stamp() : 0);
	}
	ret = ibv_post_send(q->qp, &wr, &bad);
	if (ret)
		return gdx_post_failed(r, q, ret);
	gdx_seg_posted(c, rail, q, seg, seg->flags, 1, seg->len && inl && seg->len <= c->max_inline,
		       waits, stamp);
	return 0;
}

int gdx_post_single(struct gdx_chan *c, int rail, int qi, const struct gdx_seg *seg)
{
	struct gdx_rail *r = &c->rails[rail];
	struct gdx_qp *q = &r->qps[qi];
	bool host = seg->flags & GDX_SEG_HOST, inl = host && seg->len <= c->max_inline;
	/* done when posted: every byte copied inline, and no rail to re-send from */
	bool waits = !inl || c->failover;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint64_t stamp = 0;
	int ret;

	if (!waits)
		gdx_wait_mode(seg->wait, GDX_REQ_INLINE);
	gdx_wr_set(&wr, &sge, GDX_WRID(GDX_WRID_SEND, gdx_rail_gen(r), qi, q->wr_posted + 1),
		   seg->data, seg->len, seg->lkeys[r->member], seg->raddr,
		   le32toh(seg->rkeys[rail]), true, htobe32(seg->imm),
		   seg->len && host && seg->len <= r->max_inline ? IBV_SEND_INLINE : 0);
	if (gdx_qp_signal(q, 1, waits)) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		GDX_LIVE_COUNT(stamp = waits && c->timed ? gdx_stamp() : 0);
	}
	ret = ibv_post_send(q->qp, &wr, &bad);
	if (ret)
		return gdx_post_failed(r, q, ret);
	/* its immediate is known here, and that it is no control write */
	gdx_seg_posted(c, rail, q, seg, GDX_SEG_IMM, 1, seg->len && inl, waits, stamp);
	return 0;
}

int gdx_post_piece(struct gdx_chan *c, int rail, int q, const struct gdx_seg *segs, int n)
{
	int last = -1, ret;
	bool inl;

	if (n == 1 && segs[0].wait && segs[0].lkeys && segs[0].rkeys &&
	    (segs[0].flags & GDX_SEG_IMM) && !(segs[0].flags & GDX_SEG_CTRL) &&
	    segs[0].len <= gdx_rail_max_write(&c->rails[rail]))
		return gdx_post_single(c, rail, q, segs);

	/* A request's segments wait as one: a zero-byte WRITE_WITH_IMM after a
	 * bulk WRITE (adaptive routing) is not done when posted, as the WRITE
	 * before it still reads the buffer; the signaled last one covers them.
	 * Where a rail can be taken out, none is done when posted: its pieces
	 * may have to go again, and only a send not yet complete keeps NCCL
	 * testing the comm, which is what re-sends them (a send done at post
	 * whose rail then failed waited for a test that never came). */
	inl = !c->failover;
	for (int i = 0; i < n; i++) {
		if (!segs[i].wait)
			continue;
		inl &= gdx_seg_inline(c, &segs[i]);
		last = i;
	}
	for (int i = 0; i < n; i++) {
		bool waits = segs[i].wait && !inl;

		if (segs[i].wait && inl)
			gdx_wait_mode(segs[i].wait, GDX_REQ_INLINE);
		ret = gdx_post_seg(c, rail, q, &segs[i], waits, waits && i == last);
		if (ret)
			return ret;
	}
	return 0;
}

int gdx_post_probe(struct gdx_chan *c, int rail, int q)
{
	return gdx_post_one(c, rail, q, NULL, 0, 0, GDX_WRID_PROBE, true);
}

/* The segments a signaled completion with WR count wr shows delivered, let
 * go; the bytes of data among them. */
static inline uint64_t gdx_seglog_take(struct gdx_seglog *log, uint32_t wr)
{
	uint64_t bytes = 0;

	while (log->head != log->tail) {
		struct gdx_seglog_entry *e = &log->e[log->head % GDX_SEGLOG_SIZE];

		if ((int32_t)(wr - e->last_wr) < 0)
			break;
		if (e->seg.wait) {
			e->seg.wait->pending--;
			gdx_wait_wrs_done(e->seg.wait, e->nwrs);
		}
		if (!(e->seg.flags & GDX_SEG_CTRL))
			bytes += e->seg.len;
		log->head++;
	}
	return bytes;
}

/* gdx_seglog_take for a comm whose sends are timed into lr: then the
 * latency of the segment the completion was signaled for (the last one it
 * delivered, when that was timed as it was posted; one an earlier
 * completion delivered has a smaller WR count). Out of line, a leaf. */
static __attribute__((noinline)) uint64_t gdx_seglog_take_timed(struct gdx_live_rail *lr,
								struct gdx_seglog *log, uint32_t wr)
{
	uint64_t bytes = gdx_seglog_take(log, wr);
	const struct gdx_seglog_entry *e = &log->e[(log->head - 1) % GDX_SEGLOG_SIZE];

	if (e->stamp && e->last_wr == wr)
		gdx_live_latency(lr, gdx_stamp() - e->stamp);
	return bytes;
}

/* A completion on a QP whose stall was told: the stall's end said, then
 * the completion taken as any other. */
static __attribute__((noinline)) uint64_t gdx_post_delivered_stalled(struct gdx_chan *c, int rail,
								     int qi, uint32_t wr)
{
	gdx_stall_drained(c, rail, qi);
	return gdx_post_delivered(c, rail, qi, wr);
}

uint64_t gdx_post_delivered(struct gdx_chan *c, int rail, int qi, uint32_t wr)
{
	struct gdx_qp *q = &c->rails[rail].qps[qi];

	/* the rare paths are tail calls: the usual one stays a leaf */
	if (__builtin_expect(q->stall_warned, 0))
		return gdx_post_delivered_stalled(c, rail, qi, wr);
	q->wr_done = wr;
	if (!q->log)
		return 0;
	GDX_LIVE_COUNT(
		if (c->timed) return gdx_seglog_take_timed(&c->live->rails[rail], q->log, wr));
	return gdx_seglog_take(q->log, wr);
}

#ifdef GDX_DEBUG
void gdx_seg_dbg_moved(const struct gdx_seg *segs, int n, int rail, int q)
{
	for (int i = 0; i < n; i++) {
		struct gdx_dbg_piece *d = (struct gdx_dbg_piece *)segs[i].data;

		for (uint32_t k = 0; (segs[i].flags & GDX_SEG_DBG) && k < segs[i].len / sizeof(*d);
		     k++) {
			d[k].rail = (uint16_t)rail;
			d[k].q = (uint16_t)q;
		}
	}
}
#endif
