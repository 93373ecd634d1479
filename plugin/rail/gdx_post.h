/* SPDX-License-Identifier: MIT */
/*
 * Posting on a channel's QPs, and knowing what was delivered. A segment is
 * one part of a message as it goes on the wire (RDMA WRITEs into the peer's
 * buffer or control region, the last one with an immediate or not); a piece
 * is the segments of one message that go on one QP, in order. A sending
 * channel logs every segment it posts until a completion shows it
 * delivered, so that a rail that fails can have its undelivered segments
 * posted again on another (gdx_failover.c): a segment carries its own keys
 * for every rail. Signaled completions carry the QP's WR count, so one of
 * them shows everything before it on its QP delivered and gives its queue
 * slots back; the rest go unsignaled.
 *
 * What waits for a segment (a request: the protocol's) is an opaque count,
 * struct gdx_wait: done only when the NIC is done with the buffer, once a
 * signaled completion on the segment's QP covers it. The one exception is a
 * piece whose every byte goes inline on a channel whose rails are never
 * taken out: the provider copies those when they are posted, so the buffer
 * is free at once.
 */
#ifndef GDX_POST_H
#define GDX_POST_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "rail/gdx_chan.h"

enum {
	GDX_SEG_IMM = 1,    /* ends with a WRITE_WITH_IMM of seg.imm */
	GDX_SEG_CTRL = 2,   /* into the peer's control region, from ours */
	GDX_SEG_DBG = 4,    /* debug builds: a piece's record (gdx_req.h); CTRL too */
	GDX_SEG_INLINE = 8, /* logged: every byte went inline, copied when posted */
	GDX_SEG_HOST = 16,  /* its bytes are host memory (the provider may copy them inline) */
};

/* The ways a request's bytes went, which a debug build's invariant names
 * (gdx_req.h): */
enum {
	GDX_REQ_CHUNKED = 1u << 0, /* pieces named in the immediate, size in the record */
	GDX_REQ_AR = 1u << 1,	   /* adaptive routing: bulk WRITEs, then the immediate */
	GDX_REQ_QPS = 1u << 2,	   /* split over several QPs of a rail */
	GDX_REQ_STRIPED = 1u << 3, /* over several rails */
	GDX_REQ_GROUPED = 1u << 4, /* a buffer of a grouped receive */
	GDX_REQ_RESENT = 1u << 5,  /* a piece posted again after its rail failed */
	GDX_REQ_INLINE = 1u << 6,  /* every byte inline: done when posted */
	GDX_REQ_FLUSH = 1u << 7,   /* an iflush's reads */
};

/* What waits for segments: the count of those posted and not yet
 * delivered, over all rails. Debug builds count the WRs posted and done,
 * and the ways the bytes went, for the invariant (gdx_req.h). */
struct gdx_wait {
	int pending;
	uint32_t dbg_wrs, dbg_wrs_done, dbg_mode;
};

#ifdef GDX_DEBUG
static inline void gdx_wait_wrs_posted(struct gdx_wait *w, uint32_t n)
{
	w->dbg_wrs += n;
}
static inline void gdx_wait_wrs_done(struct gdx_wait *w, uint32_t n)
{
	w->dbg_wrs_done += n;
}
static inline void gdx_wait_mode(struct gdx_wait *w, uint32_t mode)
{
	w->dbg_mode |= mode;
}
#else
static inline void gdx_wait_wrs_posted(struct gdx_wait *w, uint32_t n)
{
	(void)w;
	(void)n;
}
static inline void gdx_wait_wrs_done(struct gdx_wait *w, uint32_t n)
{
	(void)w;
	(void)n;
}
static inline void gdx_wait_mode(struct gdx_wait *w, uint32_t mode)
{
	(void)w;
	(void)mode;
}
#endif
/* Segments a debug build adds to a piece: its record. */
#ifdef GDX_DEBUG
#define GDX_DBG_SEGS 1
#else
#define GDX_DBG_SEGS 0
#endif
struct gdx_seg {
	/* What waits until the segment is delivered (the request whose buffer
	 * it reads or whose immediate it carries). NULL: nothing, a control
	 * write from the channel's staging. */
	struct gdx_wait *wait;
	char *data;
	/* data's key on each NIC of the device, by member; NULL: no bytes, or
	 * GDX_SEG_CTRL: the staging's (stage_lkey) */
	const uint32_t *lkeys;
	/* the target's key on each rail, little-endian (a clear-to-send's);
	 * NULL: the peer's control region (ctrl_rkey) */
	const uint32_t *rkeys;
	uint64_t raddr;
	uint32_t len;
	uint32_t imm;
	uint8_t flags;
};

struct gdx_seglog_entry {
	struct gdx_seg seg;
	uint32_t last_wr; /* the QP's WR count at its last WR */
	uint32_t imm_ord; /* the QP's immediate count at (or, without one, after) it */
	uint32_t nwrs;	  /* WRs it took */
	uint64_t stamp;	  /* gdx_stamp as it was posted, when signaled and timed; else 0 */
};

/* Segments of one piece at most: a grouped send's buffers and its sizes, or
 * a chunked one's size record, bytes and immediate; and in debug builds the
 * record of what the bytes hold (gdx_req.h). */
#define GDX_PIECE_MAX_SEGS (GDX_MAX_RECVS + 1 + GDX_DBG_SEGS)

/* A ring: a QP never has more segments outstanding than WRs (127 at most). */
#define GDX_SEGLOG_SIZE 128

struct gdx_seglog {
	uint32_t head, tail;
	struct gdx_seglog_entry e[GDX_SEGLOG_SIZE];
};

int gdx_seglog_create(struct gdx_qp *q);
void gdx_seglog_destroy(struct gdx_qp *q);

/* Largest part of one RDMA WRITE; the port's max_msg_sz may be lower. */
#define GDX_MAX_WRITE (1ULL << 30)

static inline uint64_t gdx_rail_max_write(const struct gdx_rail *r)
{
	uint64_t max = r->dev->max_msg_sz;

	return max && max < GDX_MAX_WRITE ? max : GDX_MAX_WRITE;
}

/* WRs the segment takes on rail r. */
static inline uint32_t gdx_seg_wrs(const struct gdx_rail *r, const struct gdx_seg *s)
{
	uint64_t max = gdx_rail_max_write(r);

	if (s->len == 0)
		return (s->flags & GDX_SEG_IMM) ? 1 : 0;
	return s->len <= max ? 1 : (uint32_t)((s->len + max - 1) / max);
}
/* Whether QP q of rail r has room for need more WRs. */
static inline bool gdx_qp_room(const struct gdx_rail *r, const struct gdx_qp *q, uint32_t need)
{
	return q->wr_posted - q->wr_done + need <= r->sq_depth;
}

/* Debug builds: a piece's segments are posted again on QP q of rail (a
 * failed rail's, gdx_failover.c): its records (gdx_req.h) say so. */
#ifdef GDX_DEBUG
void gdx_seg_dbg_moved(const struct gdx_seg *segs, int n, int rail, int q);
#else
static inline void gdx_seg_dbg_moved(const struct gdx_seg *segs, int n, int rail, int q)
{
	(void)segs;
	(void)n;
	(void)rail;
	(void)q;
}
#endif

/* Posts the n segments of one piece in order on QP q of the channel's rail
 * (its room checked by the caller) and logs them on a sending channel. Their
 * request waits for them, its last one signaled, unless every byte of the
 * request's segments goes inline (small host-memory sends): then it does
 * not wait for them at all, and its buffer is NCCL's again at once. */
int gdx_post_piece(struct gdx_chan *c, int rail, int q, const struct gdx_seg *segs, int n);
/* A piece of one segment of one WR with a request, its buffer registered,
 * ending with its immediate: most of what NCCL sends (a message under 16
 * MiB on one rail's QP), posted with nothing computed twice. The caller
 * checked that it takes one WR (gdx_seg_wrs) and that q has room. */
int gdx_post_single(struct gdx_chan *c, int rail, int q, const struct gdx_seg *seg);

/* A QP signals one WR in this many, so that a completion gives the slots
 * of those before it back. */
#define GDX_SIGNAL_EVERY 16

/* Counts n more WRs on q and says whether the last of them is signaled:
 * always when must, else one in GDX_SIGNAL_EVERY to give the slots back. */
static inline bool gdx_qp_signal(struct gdx_qp *q, uint32_t n, bool must)
{
	q->unsignaled += n;
	if (!must && q->unsignaled < GDX_SIGNAL_EVERY)
		return false;
	q->unsignaled = 0;
	return true;
}

/* What every WR of a segment shares: the fields an RC RDMA WRITE reads,
 * each set; the provider reads no other for this opcode (the rest of the
 * 128-byte struct, the atomic, UD, XRC and bind parts, is left as it is
 * rather than zeroed on every post). */
static inline void gdx_wr_set(struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t wr_id,
			      const char *data, uint32_t len, uint32_t lkey, uint64_t raddr,
			      uint32_t rkey, bool imm, uint32_t imm_data, unsigned flags)
{
	sge->addr = (uintptr_t)data;
	sge->length = len;
	sge->lkey = lkey;
	wr->wr_id = wr_id;
	wr->next = NULL;
	wr->sg_list = len ? sge : NULL;
	wr->num_sge = len ? 1 : 0;
	wr->opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr->send_flags = flags;
	wr->imm_data = imm_data;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/* A failed ibv_post_send: the WARN, -ret. */
int gdx_post_failed(const struct gdx_rail *r, const struct gdx_qp *q, int ret)
	__attribute__((cold, noinline));

static inline int gdx_post_one(struct gdx_chan *c, int rail, int qi, const void *local,
			       uint32_t len, uint64_t raddr, uint32_t op, bool must_signal)
{
	struct gdx_rail *r = &c->rails[rail];
	struct gdx_qp *q = &r->qps[qi];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int ret;

	gdx_wr_set(&wr, &sge, GDX_WRID(op, gdx_rail_gen(r), qi, q->wr_posted + 1), local, len,
		   c->stage_lkey[r->member], raddr, c->ctrl_rkey[rail], op == GDX_WRID_PROBE,
		   htobe32(GDX_IMM_PROBE), len && len <= r->max_inline ? IBV_SEND_INLINE : 0);
	if (gdx_qp_signal(q, 1, must_signal))
		wr.send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(q->qp, &wr, &bad);
	if (ret)
		return gdx_post_failed(r, q, ret);
	q->wr_posted++;
	return 0;
}

/* One RDMA WRITE of len bytes from our control region (0 bytes: none) into
 * the peer's at raddr, unsignaled unless its slots are due or must. Inline:
 * each clear-to-send goes by it. */
static inline int gdx_post_ctrl_write(struct gdx_chan *c, int rail, int q, const void *local,
				      uint32_t len, uint64_t raddr, bool must_signal)
{
	return gdx_post_one(c, rail, q, local, len, raddr, GDX_WRID_SEND, must_signal);
}
/* A signaled zero-byte WRITE_WITH_IMM of GDX_IMM_PROBE: whether the path
 * delivers (gdx_failover.c); the receiver learns it does. */
int gdx_post_probe(struct gdx_chan *c, int rail, int q);

/* A signaled send completion on QP q of rail with WR count wr: everything up
 * to it is delivered; returns the bytes of data that shows delivered. */
uint64_t gdx_post_delivered(struct gdx_chan *c, int rail, int q, uint32_t wr);

#endif
