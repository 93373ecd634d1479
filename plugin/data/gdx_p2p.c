/* SPDX-License-Identifier: MIT */
/*
 * The data path. The receiver posts a buffer by RDMA-writing a clear-to-send
 * entry into the sender's FIFO (gdx_cts.h); the sender, on finding it, cuts
 * the message into pieces over its rails and QPs (gdx_stripe.h) and
 * RDMA-writes each straight into that buffer, ending with a WRITE_WITH_IMM
 * whose immediate names the receive and the piece (gdx_wire.h), which the
 * receiver counts as its completions come (gdx_cq.h). Zero-length receives
 * are posted ahead on every QP to take the immediates. No allocation, lock
 * or system call here beyond what the verbs provider itself does.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/gdx_comm.h"
#include "data/gdx_cq.h"
#include "data/gdx_cts.h"
#include "data/gdx_failover.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "rail/gdx_post.h"
#include "data/gdx_prof.h"
#include "data/gdx_req.h"
#include "rail/gdx_stripe.h"
#include "sys/gdx_time.h"

/* How long closing a send comm waits for its inline sends to be delivered;
 * a peer host that let one such wait run out is not waited for again for
 * GDX_DEAF_MS, so that closing every comm to a dead host costs one wait. */
#define GDX_DRAIN_MS 100
#define GDX_DEAF_MS  10000

static bool gdx_mr_covers(const struct gdx_mr *mr, const void *data, uint64_t size)
{
	uintptr_t a = (uintptr_t)data;

	return a >= mr->addr && size <= mr->size && a - mr->addr <= mr->size - size;
}

/* Why gdx_check_mr refused: kept out of line, off the data path. */
__attribute__((cold, noinline)) static int gdx_mr_refuse(const struct gdx_comm *c,
							 const struct gdx_mr *mr, const void *data,
							 uint64_t size, const char *what)
{
	if (!mr || mr->kind != GDX_KIND_MR) {
		GDX_WARN("%s: %s with an invalid memory handle %p", c->dev_name, what,
			 (const void *)mr);
		return -EINVAL;
	}
	if (mr->nmembers < c->nmembers) {
		GDX_WARN("%s: %s with a memory handle registered on %d NIC(s), the comm's device "
			 "has %d",
			 c->dev_name, what, mr->nmembers, c->nmembers);
		return -EINVAL;
	}
	if (size && !gdx_mr_covers(mr, data, size)) {
		GDX_WARN("%s: %s of %llu bytes at %p lies outside its registration [%p, +%llu)",
			 c->dev_name, what, (unsigned long long)size, data, (void *)mr->addr,
			 (unsigned long long)mr->size);
		return -EINVAL;
	}
	return 0;
}

static inline int gdx_check_mr(const struct gdx_comm *c, const struct gdx_mr *mr, const void *data,
			       uint64_t size, const char *what)
{
	if (mr && mr->kind == GDX_KIND_MR && mr->nmembers >= c->nmembers &&
	    (!size || gdx_mr_covers(mr, data, size)))
		return 0;
	return gdx_mr_refuse(c, mr, data, size, what);
}

/* ---- the send side ---- */

/* The receiver's record of slot s, where a message's sizes go. */
static uint64_t gdx_remote_record(const struct gdx_comm *c, uint32_t s)
{
	return c->remote_ctrl + offsetof(struct gdx_ctrl, sizes) + s * sizeof(c->ctrl->sizes[0]);
}

/* The message does not fit the receive: tell the receiver (its request
 * would otherwise wait forever), and fail. */
static int gdx_send_refuse(struct gdx_send_comm *sc, uint64_t size, uint64_t posted)
{
	struct gdx_comm *c = &sc->base;
	int rail = gdx_failover_ctrl_rail(c);
	struct gdx_seg seg = {.flags = GDX_SEG_IMM | GDX_SEG_CTRL,
			      .imm = gdx_imm_chunk(sc->head, 0, 1, GDX_IMM_F_REFUSED)};

	GDX_WARN("%s: send of %llu bytes to %s is larger than the receive posted there "
		 "(%llu bytes): the two ranks disagree on the message size",
		 c->dev_name, (unsigned long long)size, c->peer, (unsigned long long)posted);
	if (rail >= 0)
		gdx_post_piece(&c->ch, rail, 0, &seg, 1);
	gdx_comm_fail(c, -EMSGSIZE);
	return -EMSGSIZE;
}

#ifdef GDX_DEBUG
/* The modes a single send went by, for the invariant's message. */
static uint32_t gdx_send_mode(const struct gdx_comm *c, const struct gdx_piece *pieces, int np,
			      bool chunked, bool ar)
{
	uint32_t mode = (chunked ? GDX_REQ_CHUNKED : 0) | (ar ? GDX_REQ_AR : 0);

	for (int k = 1; k < np; k++)
		mode |= pieces[k].rail != pieces[0].rail ? GDX_REQ_STRIPED : GDX_REQ_QPS;
	(void)c;
	return mode;
}

/* GDX_DEBUG_BREAK=ar-imm-only puts back 0.3.1's bug, the request named on
 * the immediate alone, so that the tests see the invariant catch it. */
static bool gdx_names_request(bool imm)
{
	static int broken = -1;

	if (broken < 0) {
		const char *b = getenv("GDX_DEBUG_BREAK");

		broken = b && !strcmp(b, "ar-imm-only");
	}
	return !broken || imm;
}
#else
#define gdx_send_mode(c, pieces, np, chunked, ar) 0
#define gdx_names_request(imm)			  true
#endif

/* The segments of piece k of n of a single message: the size record first
 * on the first piece of a message that needs it, the bytes, and the
 * immediate: with adaptive routing after the bytes, by itself, so that it
 * completes only once every packet before it is placed. The caller names
 * the request on the bytes and the immediate alike: it waits until the
 * WRITE that reads its buffer is complete (0.3.1 and before named it on the
 * immediate only, which, zero bytes, completed it when posted: NCCL refilled
 * a buffer the NIC was still sending from). The size record names none: the
 * receiver writes the slot's next clear-to-send, and only that lets this
 * record be rewritten, after the message is complete, so after the record
 * was placed. */
static int gdx_piece_segs(struct gdx_send_comm *sc, const struct gdx_piece *p, int k, int n,
			  char *data, uint64_t size, const struct gdx_mr *mr, uint64_t raddr,
			  bool chunked, bool ar, struct gdx_request *req, struct gdx_seg *segs)
{
	struct gdx_comm *c = &sc->base;
	uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS);
	const uint32_t *rkeys = c->ctrl->fifo[GDX_FIFO_INDEX(s, 0)].rkeys;
	uint8_t host = gdx_mr_seg_flags(mr);
	uint32_t imm = chunked ? gdx_imm_chunk(sc->head, (uint32_t)k, (uint32_t)n, 0)
			       : gdx_imm_small(sc->head, (uint32_t)size);
	int m = 0;

	if (chunked && k == 0)
		segs[m++] = (struct gdx_seg){.data = (char *)c->stage->sizes[s],
					     .raddr = gdx_remote_record(c, s),
					     .len = 2 * sizeof(uint32_t),
					     .flags = GDX_SEG_CTRL};
#ifdef GDX_DEBUG
	if (chunked && c->dbg_records) { /* what the bytes hold, for the receiver's check */
		gdx_req_dbg_fill(c, s, (uint32_t)k, sc->head, data, p->off, p->len,
				 mr->type == NCCL_PTR_CUDA, p->rail, p->q);
		segs[m++] = gdx_req_dbg_seg(c, s, (uint32_t)k, 1);
	}
#endif
	if (ar) {
		segs[m++] = (struct gdx_seg){.wait = gdx_names_request(false) ? &req->wait : NULL,
					     .data = data + p->off,
					     .lkeys = mr->lkey,
					     .rkeys = rkeys,
					     .raddr = raddr + p->off,
					     .len = (uint32_t)p->len,
					     .flags = host};
		segs[m++] = (struct gdx_seg){
			.wait = &req->wait, .rkeys = rkeys, .flags = GDX_SEG_IMM, .imm = imm};
	} else {
		segs[m++] = (struct gdx_seg){.wait = &req->wait,
					     .data = data + p->off,
					     .lkeys = mr->lkey,
					     .rkeys = rkeys,
					     .raddr = raddr + p->off,
					     .len = (uint32_t)p->len,
					     .flags = GDX_SEG_IMM | host,
					     .imm = imm};
	}
	return m;
}

/* Whether the receiver's write of entry e for sequence number seq has
 * landed (its seq last: the rest of the entry is there before it). */
static inline bool gdx_cts_arrived(const struct gdx_cts *e, uint32_t seq)
{
	return le32toh(__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)) == seq;
}

/* Reads the head slot: 0 with the entry count once every entry of it has
 * arrived, -EAGAIN before, -EPROTO for a malformed slot. */
static int gdx_head_slot(struct gdx_send_comm *sc, struct gdx_cts **slot, int *n_p)
{
	struct gdx_comm *c = &sc->base;
	uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS), seq = (uint32_t)(sc->head + 1), n;

	slot[0] = &sc->base.ctrl->fifo[GDX_FIFO_INDEX(s, 0)];
	if (!gdx_cts_arrived(slot[0], seq))
		return -EAGAIN;
	n = le32toh(slot[0]->nreqs);
	if (n < 1 || n > GDX_MAX_RECVS) {
		GDX_WARN("%s: clear-to-send from %s is malformed (%u buffers)", c->dev_name,
			 c->peer, n);
		gdx_comm_fail(c, -EPROTO);
		return -EPROTO;
	}
	/* The other entries come by other writes, or land in any order. */
	for (uint32_t i = 1; i < n; i++) {
		slot[i] = &sc->base.ctrl->fifo[GDX_FIFO_INDEX(s, i)];
		if (!gdx_cts_arrived(slot[i], seq))
			return -EAGAIN;
	}
	*n_p = (int)n;
	return 0;
}

/* Every buffer of a grouped receive has its isend: on one QP, each buffer's
 * bytes by plain RDMA WRITEs, then the sizes into the receiver's record of
 * the slot by one WRITE_WITH_IMM, which RC places after them. */
static int gdx_group_post(struct gdx_send_comm *sc, struct gdx_cts *const *slot, int n, int rail,
			  int q)
{
	struct gdx_comm *c = &sc->base;
	uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS);
	struct gdx_seg sizes = {.data = (char *)c->stage->sizes[s],
				.raddr = gdx_remote_record(c, s),
				.len = (uint32_t)n * (uint32_t)sizeof(uint32_t),
				.flags = GDX_SEG_CTRL | GDX_SEG_IMM,
				.imm = gdx_imm_chunk(sc->head, 0, 1, GDX_IMM_F_GROUP)};
	int ret;

	for (int i = 0; i < n; i++) {
		struct gdx_request *req = sc->matched[i];
		struct gdx_seg seg = {.wait = &req->wait,
				      .data = sc->matched_data[i],
				      .lkeys = sc->matched_mr[i]->lkey,
				      .rkeys = c->ctrl->fifo[GDX_FIFO_INDEX(s, i)].rkeys,
				      .raddr = le64toh(slot[i]->addr),
				      .len = (uint32_t)req->size,
				      .flags = gdx_mr_seg_flags(sc->matched_mr[i])};

		gdx_req_mode(req, GDX_REQ_GROUPED);
		gdx_req_buffer(req, seg.data, seg.len);
		ret = gdx_post_piece(&c->ch, rail, q, &seg, 1);
		if (ret)
			return ret;
		req->wait.pending--; /* posted now: its own completion, if any, is what is left */
		gdx_prof_grouped(c, req, rail, q);
		c->stage->sizes[s][i] = htole32((uint32_t)req->size);
	}
#ifdef GDX_DEBUG
	if (c->dbg_records) { /* what each buffer holds, for the receiver's check (gdx_req.h) */
		struct gdx_seg dbg = gdx_req_dbg_seg(c, s, 0, (uint32_t)n);

		for (int i = 0; i < n; i++)
			gdx_req_dbg_fill(c, s, (uint32_t)i, sc->head, sc->matched_data[i], 0,
					 sc->matched[i]->size,
					 sc->matched_mr[i]->type == NCCL_PTR_CUDA, rail, q);
		ret = gdx_post_piece(&c->ch, rail, q, &dbg, 1);
		if (ret)
			return ret;
	}
#endif
	/* The sizes' WRITE_WITH_IMM completes the receive: the group's last
	 * send waits for it too, so that a send stays in flight until it is
	 * delivered (a rail that fails has it posted again, at a test of the
	 * comm, and NCCL tests a comm only while a send is in flight). Their
	 * record is rewritten only for the slot's next receive, whose
	 * clear-to-send comes after this group is complete, and so after the
	 * sizes were placed. */
	sizes.wait = &sc->matched[n - 1]->wait;
	ret = gdx_post_piece(&c->ch, rail, q, &sizes, 1);
	if (ret)
		return ret;
	memset(sc->matched, 0, sizeof(sc->matched));
	sc->nmatched = 0;
	sc->head++;
	return 0;
}

/* isend into a grouped receive: matched by tag; the request is returned at
 * once, the bytes go when the last buffer of the slot is matched. */
static int gdx_isend_group(struct gdx_send_comm *sc, struct gdx_cts *const *slot, int n, void *data,
			   uint64_t size, int tag, struct gdx_mr *mr, void *phandle,
			   struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	struct gdx_request *req;
	int rail = 0, q = 0, i, ret;

	for (i = 0; i < n; i++)
		if (!sc->matched[i] && le32toh(slot[i]->tag) == (uint32_t)tag)
			break;
	if (i == n)
		return 0; /* no buffer for this tag in the slot: NCCL calls again */
	if (size > le64toh(slot[i]->size)) {
		ret = gdx_send_refuse(sc, size, le64toh(slot[i]->size));
		sc->head++;
		return ret;
	}
	if (sc->nmatched == n - 1) {
		/* the last one: make sure the whole group fits before taking it,
		 * the sizes' write included */
		uint64_t total = size;
		uint32_t need = 1 + GDX_DBG_SEGS; /* the sizes (and the records) */

		for (int k = 0; k < n; k++)
			total += k == i ? 0 : sc->matched[k]->size;
		rail = gdx_stripe_pick(&c->ch, total, sc->head);
		if (rail < 0)
			return c->err;
		q = (int)(sc->head % (uint64_t)c->ch.rails[rail].nqps);
		for (int k = 0; k < n; k++) {
			struct gdx_seg seg = {
				.len = (uint32_t)(k == i ? size : sc->matched[k]->size)};

			need += gdx_seg_wrs(&c->ch.rails[rail], &seg);
		}
		if (!gdx_qp_room(&c->ch.rails[rail], &c->ch.rails[rail].qps[q], need)) {
			gdx_cq_poll(c);
			return c->err;
		}
	}
	req = gdx_req_get(c, true);
	if (!req)
		return -ENOSPC;
	req->size = size;
	req->gpu = mr->gpu;
	req->wait.pending = 1; /* not done before its bytes are posted, with the group's last */
	gdx_prof_hold(req, phandle);
	sc->matched[i] = req;
	sc->matched_data[i] = data;
	sc->matched_mr[i] = mr;
	sc->nmatched++;
	*req_p = req;
	if (sc->nmatched < n)
		return 0;
	ret = gdx_group_post(sc, slot, n, rail, q);
	if (ret)
		gdx_comm_fail(c, ret);
	return ret;
}

/*
 * A proxy calls isend until it returns a request, and most calls find no
 * clear-to-send yet: such a call reads the FIFO slot's sequence number and
 * returns, as net_ib's does (it leaves the CPU no work and no stack frame).
 * Every GDX_ISEND_POLL_EVERY-th one polls, so that send queue slots come
 * back, failover moves and the liveness checks run while the sender has
 * nothing in flight for its tests to poll.
 */
#ifndef GDX_ISEND_POLL_EVERY
#define GDX_ISEND_POLL_EVERY 16
#endif

/* Every waiting call counts as an idle poll (the hang detection's tick and
 * the liveness check come every GDX_LIVENESS_POLLS of them, as a test's);
 * every GDX_ISEND_POLL_EVERY-th polls, and the check falls on one of those. */
_Static_assert(GDX_LIVENESS_POLLS % GDX_ISEND_POLL_EVERY == 0,
	       "the liveness check must fall on a polling call");

static __attribute__((noinline)) int gdx_isend_wait(struct gdx_comm *c)
{
	GDX_LIVE_COUNT(c->ch.live->want_cts = 1);
	if (!gdx_cq_poll(c) && !(c->idle_polls % GDX_LIVENESS_POLLS))
		gdx_cq_check_peer(c);
	return c->err;
}

/* An isend that found no clear-to-send (or not all of a group's entries). */
static inline int gdx_isend_none(struct gdx_comm *c)
{
	return ++c->idle_polls % GDX_ISEND_POLL_EVERY ? 0 : gdx_isend_wait(c);
}

/* A message that goes whole in one WRITE_WITH_IMM on one QP of the one
 * rail: most of what NCCL sends (under 16 MiB, no adaptive routing, a rail
 * whose QPs take messages in turn). */
static inline bool gdx_isend_simple(const struct gdx_comm *c, uint64_t size)
{
	return c->ch.nrails == 1 && (!c->ch.split || c->ch.rails[0].nqps == 1) &&
	       !(c->ar && size > (uint64_t)gdx_params.ar_threshold) && size <= GDX_IMM_SMALL_MAX;
}

/* cts: the clear-to-send it answers, whose keys the segment carries (the
 * entry holds them until the message is delivered: the receiver stages a
 * slot's entry anew only once its receive is done, and a rewrite after a
 * rail failed writes the same keys). */
static int gdx_isend_one(struct gdx_send_comm *sc, char *data, uint64_t size, struct gdx_mr *mr,
			 const struct gdx_cts *cts, void *phandle, struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	struct gdx_rail *r = &c->ch.rails[0];
	int qi = r->nqps > 1 ? (int)(sc->head % (uint64_t)r->nqps) : 0;
	struct gdx_seg seg = {.data = data,
			      .lkeys = mr->lkey,
			      .rkeys = cts->rkeys,
			      .raddr = le64toh(cts->addr),
			      .len = (uint32_t)size,
			      .flags = GDX_SEG_IMM | gdx_mr_seg_flags(mr),
			      .imm = gdx_imm_small(sc->head, (uint32_t)size)};
	uint32_t wrs = gdx_seg_wrs(r, &seg);
	struct gdx_request *req;
	int ret;

	if (!gdx_qp_room(r, &r->qps[qi], wrs)) {
		gdx_cq_poll(c); /* completions free the room; NCCL calls again */
		return c->err;
	}
	req = gdx_req_get(c, true);
	if (!req)
		return -ENOSPC;
	req->size = size;
	req->gpu = mr->gpu;
	seg.wait = &req->wait;
	gdx_req_buffer(req, data, size);
	ret = wrs == 1 ? gdx_post_single(&c->ch, 0, qi, &seg)
		       : gdx_post_piece(&c->ch, 0, qi, &seg, 1);
	sc->head++;
	if (ret) {
		gdx_req_put(req);
		gdx_comm_fail(c, ret);
		return ret;
	}
	if (phandle) {
		struct gdx_piece piece = {.rail = 0, .q = (uint8_t)qi, .off = 0, .len = size};

		gdx_prof_isend(c, req, phandle, &piece, 1);
	}
	*req_p = req;
	return 0;
}

/* Every other message: cut into pieces over the rails and QPs, each of its
 * segments (a size record, the bytes, the immediate) planned, room checked
 * for all of them before any is posted. Out of line, with its per-piece
 * arrays. */
static __attribute__((noinline)) int gdx_isend_pieces(struct gdx_send_comm *sc, char *data,
						      uint64_t size, struct gdx_mr *mr,
						      uint64_t raddr, void *phandle,
						      struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	struct gdx_piece pieces[GDX_MAX_QPS];
	struct gdx_seg segs[GDX_MAX_QPS][3 + GDX_DBG_SEGS];
	int nsegs[GDX_MAX_QPS];
	struct gdx_request *req;
	bool chunked, ar;
	int np, ret = 0;

	np = gdx_stripe_plan_inline(&c->ch, size, sc->head, pieces);
	if (np == 0)
		return c->err ? c->err : -ENETDOWN;
	req = gdx_req_get(c, true);
	if (!req)
		return -ENOSPC;
	/* net_ib's rule: adaptive routing for messages above the threshold */
	ar = c->ar && size > (uint64_t)gdx_params.ar_threshold;
	chunked = np > 1 || ar || size > GDX_IMM_SMALL_MAX;
	for (int k = 0; k < np; k++) {
		struct gdx_rail *r = &c->ch.rails[pieces[k].rail];
		uint32_t need = 0;

		nsegs[k] = gdx_piece_segs(sc, &pieces[k], k, np, data, size, mr, raddr, chunked, ar,
					  req, segs[k]);
		for (int m = 0; m < nsegs[k]; m++)
			need += gdx_seg_wrs(r, &segs[k][m]);
		if (!gdx_qp_room(r, &r->qps[pieces[k].q], need)) {
			gdx_req_put(req);
			gdx_cq_poll(c); /* completions free the room; NCCL calls again */
			return c->err;
		}
	}
	req->size = size;
	req->gpu = mr->gpu;
	if (chunked) {
		uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS);

		c->stage->sizes[s][0] = htole32((uint32_t)size);
		c->stage->sizes[s][1] = htole32((uint32_t)(size >> 32));
	}
	gdx_req_buffer(req, data, size);
	gdx_req_mode(req, gdx_send_mode(c, pieces, np, chunked, ar));
	for (int k = 0; k < np && !ret; k++)
		ret = gdx_post_piece(&c->ch, pieces[k].rail, pieces[k].q, segs[k], nsegs[k]);
	sc->head++;
	if (ret) {
		gdx_req_put(req);
		gdx_comm_fail(c, ret);
		return ret;
	}
	gdx_prof_isend(c, req, phandle, pieces, np);
	*req_p = req;
	return 0;
}

/* Whether a send queue the message may use is half full: its slots come
 * back now, before a send finds none. */
static bool gdx_sq_half_full(const struct gdx_comm *c)
{
	for (int r = 0; r < c->ch.nrails; r++)
		for (int q = 0; q < c->ch.rails[r].nqps; q++)
			if (!gdx_qp_room(&c->ch.rails[r], &c->ch.rails[r].qps[q],
					 c->ch.rails[r].sq_depth / 2))
				return true;
	return false;
}

/* An isend whose clear-to-send is there: matched and posted. Out of line:
 * the calls that find none, most of a proxy's, set none of it up. */
static __attribute__((noinline)) int gdx_isend_post(struct gdx_send_comm *sc, void *data,
						    uint64_t size, int tag, struct gdx_mr *mr,
						    void *phandle, struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	struct gdx_cts *slot[GDX_MAX_RECVS];
	uint64_t posted;
	int n, ret;

	/* A wrong handle is refused by the call that would post it: one that
	 * finds no clear-to-send yet reads nothing of it. */
	ret = gdx_check_mr(c, mr, data, size, "isend");
	if (ret)
		return ret;
	ret = gdx_head_slot(sc, slot, &n);
	if (ret == -EAGAIN) /* a group's other entries are still on their way */
		return gdx_isend_none(c);
	if (ret)
		return ret;
	c->idle_polls = 0;
	GDX_LIVE_COUNT(c->ch.live->want_cts = 0);
	if (n > 1)
		return gdx_isend_group(sc, slot, n, data, size, tag, mr, phandle, req_p);
	/* A single receive is matched by tag as a grouped one is (net_ib): NCCL
	 * shares one send comm among local ranks (PXN) and tells them apart by
	 * tag, so a send of another rank waits for a receive of its own. */
	if (le32toh(slot[0]->tag) != (uint32_t)tag)
		return 0;
	/* A send queue half full has its slots back now, before a send finds
	 * none (small sends are done at post, their tests poll nothing, and a
	 * waiting isend polls only now and then); before the plan, which what
	 * the poll takes may change (a rail taken out). */
	if (c->ch.nrails == 1 && c->ch.rails[0].nqps == 1
		    ? !gdx_qp_room(&c->ch.rails[0], &c->ch.rails[0].qps[0],
				   c->ch.rails[0].sq_depth / 2)
		    : gdx_sq_half_full(c)) {
		gdx_cq_poll(c);
		if (c->err)
			return c->err;
	}
	posted = le64toh(slot[0]->size);
	if (size > posted) {
		ret = gdx_send_refuse(sc, size, posted);
		sc->head++;
		return ret;
	}
	if (gdx_isend_simple(c, size))
		return gdx_isend_one(sc, data, size, mr, slot[0], phandle, req_p);
	return gdx_isend_pieces(sc, data, size, mr, le64toh(slot[0]->addr), phandle, req_p);
}

int gdx_isend(struct gdx_send_comm *sc, void *data, uint64_t size, int tag, struct gdx_mr *mr,
	      void *phandle, struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	const struct gdx_cts *head = &c->ctrl->fifo[GDX_FIFO_INDEX(sc->head % GDX_MAX_REQUESTS, 0)];

	*req_p = NULL;
	if (c->err)
		return c->err;
	if (!gdx_cts_arrived(head, (uint32_t)(sc->head + 1)))
		return gdx_isend_none(c);
	return gdx_isend_post(sc, data, size, tag, mr, phandle, req_p);
}

/* ---- the receive side ---- */

/* One buffer of a receive, staged in its clear-to-send entry: every field
 * written, the sequence number last (the sender reads it first); the rkeys
 * of rails the comm lacks stay 0. Read into locals first: the entry's
 * stores could alias the comm and the handle for the compiler. */
static inline void gdx_cts_stage(const struct gdx_comm *c, struct gdx_cts *cts, const void *data,
				 uint64_t size, const struct gdx_mr *mr, int tag, int n,
				 uint64_t seq)
{
	const struct gdx_rail *rails = c->ch.rails;
	const uint32_t *rkey = mr->rkey;
	int nrails = c->ch.nrails;

	cts->addr = htole64((uintptr_t)data);
	cts->size = htole64(size);
	for (int r = 0; r < nrails; r++)
		cts->rkeys[r] = htole32(rkey[rails[r].member]);
	cts->tag = htole32((uint32_t)tag);
	cts->nreqs = htole32((uint32_t)n);
	cts->seq = htole32((uint32_t)seq);
}

int gdx_irecv(struct gdx_recv_comm *rc, int n, void **data, const uint64_t *sizes, const int *tags,
	      struct gdx_mr **mrs, void **phandles, struct gdx_request **req_p)
{
	struct gdx_comm *c = &rc->base;
	uint32_t s = (uint32_t)(rc->tail % GDX_MAX_REQUESTS);
	struct gdx_request *req;
	uint64_t posted = 0;
	int ret;

	*req_p = NULL;
	if (c->err)
		return c->err;
	if (n < 1 || n > GDX_MAX_RECVS) {
		GDX_WARN("%s: irecv of %d buffers; this device takes 1 to %d", c->dev_name, n,
			 GDX_MAX_RECVS);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (sizes[i] > GDX_MAX_MESSAGE) {
			GDX_WARN("irecv: %llu bytes is more than maxP2pBytes (%llu)",
				 (unsigned long long)sizes[i], GDX_MAX_MESSAGE);
			return -EINVAL;
		}
		ret = gdx_check_mr(c, mrs[i], data[i], sizes[i], "irecv");
		if (ret)
			return ret;
	}
	if (rc->recvs_active == GDX_MAX_REQUESTS) {
		GDX_WARN("%s: more than %d receive requests in flight on one comm (NCCL allows %d)",
			 c->dev_name, GDX_MAX_REQUESTS, NCCL_NET_MAX_REQUESTS);
		return -ENOSPC;
	}
	/* The slot's last receive is still in flight (NCCL tests in any order:
	 * 31 later ones can be done while it is not), or a rewrite of its
	 * entries may be unread: the sender may not have read that receive's
	 * entry yet, nor its immediates have come. No request: NCCL posts it
	 * again. 0.4.0 staged the slot over it, which then never completed. */
	if (rc->slots[s] || (rc->rewrite_rail[s] && gdx_cts_rewrite_unread(rc, s))) {
		gdx_cq_poll(c);
		if (rc->slots[s] || (rc->rewrite_rail[s] && gdx_cts_rewrite_unread(rc, s)))
			return c->err;
	}
	req = gdx_req_get(c, false);
	if (!req)
		return -ENOSPC;
	rc->recvs_active++;
	req->posted = sizes[0];
	req->n = n;
	req->gpu = mrs[0]->gpu;
	/* seen[] is cleared by the first piece of a chunked message, sizes[]
	 * written by a group's completion: a small one needs neither */
	req->pieces = req->arrived = 0;
	req->small = false;
	for (int i = 0; i < n; i++) {
		gdx_cts_stage(c, &c->stage->fifo[GDX_FIFO_INDEX(s, i)], data[i], sizes[i], mrs[i],
			      tags[i], n, rc->tail + 1);
		req->posted_n[i] = sizes[i];
		posted += sizes[i];
	}
	if (n > 1)
		rc->cts_groups++;
	req->seq = rc->tail++;
	req->wait.pending = 1; /* until every piece of it has arrived */
	rc->slots[s] = req;
	if (posted >= GDX_CTS_EAGER_MIN || rc->cts_outstanding < GDX_CTS_DEFER_MIN ||
	    rc->tail - rc->cts_sent >= (uint64_t)gdx_params.cts_batch)
		ret = gdx_cts_flush(rc);
	else
		/* held back only while the sender really holds two or more: what
		 * arrived since the last poll may say it does not */
		ret = gdx_cq_poll(c) >= 0 ? c->err : 0;
	if (ret) {
		gdx_req_put(req); /* the comm has failed: so do its other requests */
		return ret;
	}
	gdx_prof_irecv(rc, req, phandles, sizes);
	*req_p = req;
	return 0;
}

/* Whether a request is still in flight on a comm that works: what a
 * proxy's spin finds on most calls. */
static inline bool gdx_req_waits(const struct gdx_request *req, const struct gdx_comm *c)
{
	return (req->wait.pending > 0) & !(req->err | c->err);
}

/* A request test found done, or failed: what NCCL is told, and the request
 * freed. */
static __attribute__((noinline)) int gdx_test_end(struct gdx_request *req, int *done_p, int *sizes)
{
	struct gdx_comm *c = req->comm;
	int err = req->err ? req->err : (req->wait.pending > 0 ? c->err : 0);

	if (err) {
		gdx_req_put(req);
		return err;
	}
	gdx_req_check_done(req);
	*done_p = 1;
	if (req->n > 1) {
		for (int i = 0; i < req->n; i++)
			req->size += req->sizes[i]; /* a group's total, for the counters */
		if (sizes)
			for (int i = 0; i < req->n; i++)
				sizes[i] = (int)req->sizes[i];
	} else if (sizes) {
		sizes[0] = (int)req->size;
	}
	/* the comm's byte counts (its close line's) are its live slot's */
	*(req->gpu ? &c->ch.live->bytes_gpu : &c->ch.live->bytes_host) += req->size;
	GDX_LIVE_COUNT(c->ch.live->msgs++);
	gdx_req_put(req);
	return 0;
}

int gdx_test(struct gdx_request *req, int *done_p, int *sizes)
{
	struct gdx_comm *c = req->comm;

	if (req->state != GDX_REQ_ACTIVE) {
		GDX_WARN("test of request %p, which is not in flight (already completed?)",
			 (void *)req);
		return -EINVAL;
	}
	*done_p = 0;
	if (gdx_req_waits(req, c)) {
		if (gdx_cq_collect(c))
			c->idle_polls = 0;
		else
			gdx_cq_idle(c);
	}
	if (c->kind == GDX_KIND_RECV) {
		struct gdx_recv_comm *rc = gdx_recv_comm_of(c);

		/* what the poll marked due, then the tested receive's own */
		gdx_cts_progress(rc);
		if (gdx_cts_due(rc, req))
			gdx_cts_flush_held(rc);
	}
	if (gdx_req_waits(req, c))
		return 0; /* the spin's answer */
	return gdx_test_end(req, done_p, sizes);
}

int gdx_recv_comm_start(struct gdx_recv_comm *rc)
{
	for (int r = 0; r < rc->base.ch.nrails; r++) {
		for (int q = 0; q < rc->base.ch.rails[r].nqps; q++) {
			int ret = gdx_rail_post_recvs(&rc->base.ch.rails[r], q,
						      (int)gdx_recvs_ahead(rc->base.ch.nrails));

			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Peer hosts a drain gave up on lately, by address without the port. A job
 * that aborts closes its comms one by one; only the first to a dead host
 * waits. Off the data path: closing only. */
#define GDX_DEAF_HOSTS 32
static struct {
	char host[64];
	uint64_t since;
} gdx_deaf[GDX_DEAF_HOSTS];
static pthread_mutex_t gdx_deaf_lock = PTHREAD_MUTEX_INITIALIZER;

static void gdx_peer_host(const struct gdx_comm *c, char *host, size_t len)
{
	const char *colon = strrchr(c->peer, ':');

	snprintf(host, len, "%.*s", colon ? (int)(colon - c->peer) : (int)strlen(c->peer), c->peer);
}

/* What gdx_deaf_host() does to host's record besides reading it. */
enum gdx_deaf_op {
	GDX_DEAF_ASK,	/* only whether it is there */
	GDX_DEAF_MARK,	/* a drain to it ran out: recorded as of now */
	GDX_DEAF_CLEAR, /* it answered again: forgotten */
};

/* Whether host let a drain run out within GDX_DEAF_MS; op then marks or
 * clears it. */
static bool gdx_deaf_host(const char *host, enum gdx_deaf_op op)
{
	uint64_t now = gdx_now_ms();
	bool found = false;
	int slot = 0;

	pthread_mutex_lock(&gdx_deaf_lock);
	for (int i = 0; i < GDX_DEAF_HOSTS; i++) {
		if (!strcmp(gdx_deaf[i].host, host) && now - gdx_deaf[i].since < GDX_DEAF_MS) {
			found = true;
			slot = i;
			break;
		}
		if (gdx_deaf[i].since < gdx_deaf[slot].since)
			slot = i; /* the oldest, to take when host is not there */
	}
	if (op == GDX_DEAF_MARK) {
		snprintf(gdx_deaf[slot].host, sizeof(gdx_deaf[slot].host), "%s", host);
		gdx_deaf[slot].since = now;
	} else if (op == GDX_DEAF_CLEAR && found) {
		gdx_deaf[slot].host[0] = '\0';
	}
	pthread_mutex_unlock(&gdx_deaf_lock);
	return found;
}

/* Inline sends count as done when posted, but destroying the QP could still
 * drop them (and the receiver would wait forever): one signaled zero-byte
 * write behind them (no address or key: the responder checks none for zero
 * bytes) says when they are delivered. A peer that has closed its end needs
 * nothing more; one that does not answer holds the close up GDX_DRAIN_MS,
 * once per host (net_ib waits for nothing, and can lose such sends). */
void gdx_send_drain(struct gdx_send_comm *sc)
{
	struct gdx_comm *c = &sc->base;
	bool busy = false, deaf;
	uint64_t deadline;
	char host[64];

	for (int r = 0; r < c->ch.nrails && !c->err; r++) {
		struct gdx_rail *rail = &c->ch.rails[r];

		if (c->ch.run[r].state != GDX_RAIL_UP)
			continue;
		for (int q = 0; q < rail->nqps; q++) {
			if (!rail->qps[q].unsignaled)
				continue;
			if (gdx_post_ctrl_write(&c->ch, r, q, NULL, 0, 0, true))
				return;
			busy = true;
		}
	}
	if (!busy)
		return;
	gdx_peer_host(c, host, sizeof(host));
	deaf = gdx_deaf_host(host, GDX_DEAF_ASK);
	deadline = gdx_now_ms() + (deaf ? 0 : GDX_DRAIN_MS);
	while (busy && !c->err) {
		busy = false;
		gdx_cq_poll(c);
		for (int r = 0; r < c->ch.nrails; r++)
			for (int q = 0;
			     q < c->ch.rails[r].nqps && c->ch.run[r].state == GDX_RAIL_UP; q++)
				busy |= c->ch.rails[r].qps[q].wr_posted !=
					c->ch.rails[r].qps[q].wr_done;
		if (busy && gdx_sock_peer_gone(c->sock))
			return; /* the peer closed its comm: nothing waits for them */
		if (busy && gdx_now_ms() > deadline) {
			if (!deaf)
				GDX_INFO(NCCL_NET,
					 "%s: closing the send comm to %s with sends not confirmed "
					 "delivered after %d ms; further comms to %s close without "
					 "waiting for %d s",
					 c->dev_name, c->peer, GDX_DRAIN_MS, host,
					 GDX_DEAF_MS / 1000);
			gdx_deaf_host(host, GDX_DEAF_MARK);
			return;
		}
	}
	if (deaf && !busy)
		gdx_deaf_host(host, GDX_DEAF_CLEAR);
}
