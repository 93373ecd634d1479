/* SPDX-License-Identifier: MIT */
/*
 * Completion handling: what a comm's CQs report, taken into its requests
 * and clear-to-sends. The channel (rail/gdx_chan_poll.h) takes its own part
 * of every completion (generations, receives posted again, sends shown
 * delivered, probes) and hands on one typed event, which a switch here
 * takes:
 * - an immediate: a piece of a receive has landed;
 * - a probe's outcome: a restored rail's path delivers again, or not;
 * - a completion that failed: its rail is taken out where failover can,
 *   else the comm fails.
 * A receive comm's flush CQs return its flush reads: the GPU then sees the
 * bytes written before them (gdx_flush.h). The receiver counts each piece
 * of a receive once, by name, whatever QP it came by, so that a piece a
 * failed rail's successor re-sends (gdx_failover.h) cannot count twice. A
 * poll says when held clear-to-sends are due; gdx_cq_poll, the data path's,
 * then writes them (gdx_cts.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>

#include "comm/gdx_comm.h"
#include "data/gdx_cq.h"
#include "data/gdx_cts.h"
#include "rail/gdx_event.h"
#include "data/gdx_failover.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "rail/gdx_post.h"
#include "stats/gdx_qpstat.h"
#include "data/gdx_req.h"
#include "rail/gdx_chan_poll.h"
#include "rail/gdx_stall.h"
#include "rail/gdx_stripe.h"
#include "sys/gdx_time.h"

/* How often a waiting request looks at the peer's out-of-band socket (and
 * GDX_LIVENESS_POLLS idle polls, gdx_cq.h). */
#define GDX_LIVENESS_MS 100

static void gdx_cq_wc_failed(struct gdx_comm *c, int rail, const struct ibv_wc *wc)
{
	bool first = !c->err;

	/* The async events first: a port that went down is the cause to name,
	 * and its event is queued before the completions it causes. */
	gdx_event_poll(&c->ch, true);
	if (!c->err)
		GDX_WARN("%s rail %d (%s), peer %s (%s): completion failed: %s (status %d, "
			 "vendor error 0x%x, qp 0x%x, %s); %s",
			 c->dev_name, rail, gdx_chan_ibdev(&c->ch, rail), c->peer,
			 GDX_LOG_QUOTED(c->peer_dev), ibv_wc_status_str(wc->status), wc->status,
			 wc->vendor_err, wc->qp_num,
			 c->kind == GDX_KIND_SEND ? "send side" : "receive side",
			 gdx_wc_hint(wc->status));
	gdx_comm_fail(c, -EREMOTEIO);
	/* the first failure only: what follows is its QPs' flushes */
	if (first)
		gdx_qpstat_dump(c, -1, "the comm failed");
}

/* ---- the receive side of the wire ---- */

/* The record of a slot the sender wrote before the immediate that ended the
 * receive's first piece: a single receive's size, or each buffer's. */
static void gdx_cq_recv_sizes(struct gdx_recv_comm *rc, struct gdx_request *req)
{
	const uint32_t *rec = rc->base.ctrl->sizes[req->seq % GDX_MAX_REQUESTS];

	if (req->n == 1) {
		uint64_t size = (uint64_t)__atomic_load_n(&rec[1], __ATOMIC_RELAXED) << 32 |
				__atomic_load_n(&rec[0], __ATOMIC_RELAXED);

		size = le64toh(size);
		if (size > req->posted) {
			GDX_WARN("%s: peer %s sent %llu bytes into a receive of %llu",
				 rc->base.dev_name, rc->base.peer, (unsigned long long)size,
				 (unsigned long long)req->posted);
			req->err = -EPROTO;
			gdx_comm_fail(&rc->base, -EPROTO);
		}
		req->size = size;
		return;
	}
	for (int i = 0; i < req->n; i++) {
		uint64_t posted = req->posted_n[i];

		req->sizes[i] = le32toh(__atomic_load_n(&rec[i], __ATOMIC_RELAXED));
		if (req->sizes[i] > posted) {
			GDX_WARN("%s: peer %s sent %u bytes into buffer %d of a grouped receive "
				 "of %llu",
				 rc->base.dev_name, rc->base.peer, req->sizes[i], i,
				 (unsigned long long)posted);
			req->err = -EPROTO;
			gdx_comm_fail(&rc->base, -EPROTO);
		}
	}
}

static void gdx_cq_recv_bad_imm(struct gdx_recv_comm *rc, uint32_t imm, const char *what)
{
	GDX_WARN("%s: peer %s sent immediate 0x%08x: %s", rc->base.dev_name, rc->base.peer, imm,
		 what);
	gdx_comm_fail(&rc->base, -EPROTO);
}

/* Every piece of the receive has arrived: it is complete, and its slot free
 * for the next lap. */
static inline void gdx_cq_recv_done(struct gdx_recv_comm *rc, struct gdx_request *req)
{
	req->wait.pending = 0;
	rc->cts_outstanding--;
	rc->slots[req->seq % GDX_MAX_REQUESTS] = NULL;
}

/* The whole message in one WRITE_WITH_IMM of the small form, size bytes
 * (checked against the receive): it is complete. */
static inline void gdx_cq_recv_whole(struct gdx_recv_comm *rc, struct gdx_request *req,
				     uint32_t size)
{
	req->pieces = req->arrived = 1;
	req->small = true;
	req->size = size;
	gdx_cq_recv_done(rc, req);
}

/* One immediate, taken on QP q of rail: a piece of the receive it names has
 * arrived. */
static void gdx_cq_recv_imm(struct gdx_recv_comm *rc, uint32_t imm, int rail, int q)
{
	struct gdx_comm *c = &rc->base;
	struct gdx_request *req;
	struct gdx_imm im;

	if (gdx_imm_decode(imm, &im)) {
		gdx_cq_recv_bad_imm(rc, imm, "not a form this plugin sends");
		return;
	}
	req = rc->slots[im.seq % GDX_MAX_REQUESTS];
	if (!req || (req->seq & GDX_IMM_SEQ_MASK) != im.seq) {
		/* a receive already complete: a piece sent again after a rail
		 * failed, whose first copy was counted after all */
		rc->base.stale_imms++;
		GDX_TRACE(NCCL_NET, "%s: immediate 0x%08x for no receive in flight, dropped",
			  rc->base.dev_name, imm);
		return;
	}
	if (im.flags & GDX_IMM_F_REFUSED) {
		GDX_WARN("%s: peer %s refused to send into a %llu-byte receive: its message is "
			 "larger (see its log for the size)",
			 rc->base.dev_name, rc->base.peer, (unsigned long long)req->posted);
		req->err = -EMSGSIZE;
		gdx_comm_fail(&rc->base, -EMSGSIZE);
		return;
	}
	if ((req->n > 1) != !!(im.flags & GDX_IMM_F_GROUP)) {
		gdx_cq_recv_bad_imm(rc, imm,
				    req->n > 1 ? "a grouped receive ended without its sizes"
					       : "a single receive ended as a group");
		return;
	}
	if (!im.chunked) {
		/* the whole message in one WRITE_WITH_IMM: it is complete, once
		 * (a copy re-sent after a rail failed may come too) */
		if (req->arrived) {
			GDX_TRACE(NCCL_NET, "%s: receive %llu arrived twice, counted once",
				  rc->base.dev_name, (unsigned long long)req->seq);
			return;
		}
		/* the size is the peer's word: never more than was posted (NCCL
		 * reads that many bytes of the buffer) */
		if (im.size > req->posted) {
			GDX_WARN("%s: peer %s sent %u bytes into a receive of %llu", c->dev_name,
				 c->peer, im.size, (unsigned long long)req->posted);
			req->err = -EPROTO;
			gdx_comm_fail(c, -EPROTO);
			return;
		}
		gdx_cq_recv_whole(rc, req, im.size);
		return;
	} else {
		if (req->pieces == 0) {
			req->pieces = im.pieces;
			memset(req->seen, 0, sizeof(req->seen));
		} else if (req->pieces != im.pieces || req->small) {
			gdx_cq_recv_bad_imm(rc, imm,
					    "the pieces of one message disagree on their count");
			return;
		}
		if (req->seen[im.piece / 64] & (1ULL << (im.piece % 64))) {
			GDX_TRACE(NCCL_NET,
				  "%s: piece %u of receive %llu arrived twice, counted once",
				  rc->base.dev_name, im.piece, (unsigned long long)req->seq);
			return;
		}
		req->seen[im.piece / 64] |= 1ULL << (im.piece % 64);
		/* debug builds: its bytes are there (gdx_req.h) */
		gdx_req_check_piece(rc, req, im.piece, im.flags & GDX_IMM_F_GROUP, rail, q);
		if (++req->arrived < req->pieces)
			return;
		gdx_cq_recv_sizes(rc, req);
	}
	gdx_cq_recv_done(rc, req);
}

/* The flush reads' completions, on their own CQs: an iflush is done once
 * the read through every NIC has returned. */
static int gdx_cq_flush_poll(struct gdx_recv_comm *rc)
{
	struct ibv_wc wcs[8];
	int seen = 0;

	for (int r = 0; r < rc->nflush; r++) {
		int n = ibv_poll_cq(rc->flush[r].cq, 8, wcs);

		for (int i = 0; i < n; i++) {
			struct gdx_request *req = (struct gdx_request *)(uintptr_t)wcs[i].wr_id;

			rc->flushes_out--; /* back, delivered or not */
			if (wcs[i].status != IBV_WC_SUCCESS) {
				gdx_cq_wc_failed(&rc->base, r, &wcs[i]);
			} else {
				req->wait.pending--;
				gdx_wait_wrs_done(&req->wait, 1);
			}
		}
		seen += n > 0 ? n : 0;
	}
	return seen;
}

/* A completion that failed on rail r, which is up: the rail is taken out
 * where failover can (the path failed), else the comm fails. */
static void gdx_cq_wc_error(struct gdx_comm *c, int r, const struct ibv_wc *wc)
{
	char why[160];

	if (!c->ch.failover || !gdx_failover_status(wc->status)) {
		gdx_cq_wc_failed(c, r, wc);
		return;
	}
	snprintf(why, sizeof(why), "completion failed: %s (status %d, vendor error 0x%x, qp 0x%x)",
		 ibv_wc_status_str(wc->status), wc->status, wc->vendor_err, wc->qp_num);
	if (gdx_rail_failed(c, r, why) & GDX_FO_REWRITE_CTS)
		gdx_recv_comm_of(c)->cts_rewrite = true;
}

/* One completion of rail r, as the channel hands it on (gdx_chan_poll.h). */
static void gdx_cq_wc(struct gdx_comm *c, int r, const struct ibv_wc *wc)
{
	struct gdx_chan_ev ev;

	switch (gdx_chan_wc(&c->ch, r, wc, &ev)) {
	case GDX_CHAN_EV_NONE: break;
	case GDX_CHAN_EV_IMM: gdx_cq_recv_imm(gdx_recv_comm_of(c), ev.imm, r, ev.qp); break;
	case GDX_CHAN_EV_PROBED: gdx_failover_probed(c, r, ev.ok); break;
	case GDX_CHAN_EV_FAILED: gdx_cq_wc_error(c, r, wc); break;
	case GDX_CHAN_EV_BROKEN: gdx_comm_fail(c, ev.err); break;
	}
}

/* What a poll found on rail r beyond an empty CQ of a rail that is up: n
 * completions (or n < 0, the poll failed), or a rail that drains and must
 * know when its CQ is found empty; wcs[from, n) are those not taken yet.
 * Returns n, or -1 once the comm has failed. */
static inline int gdx_cq_take(struct gdx_comm *c, int r, const struct ibv_wc *wcs, int from, int n)
{
	if (n < 0) {
		gdx_comm_fail(c, gdx_chan_poll_failed(&c->ch, r, n));
		return -1;
	}
	for (int i = from; i < n; i++)
		gdx_cq_wc(c, r, &wcs[i]);
	gdx_chan_polled(&c->ch, r, n);
	return n;
}

/* After the CQs, what a poll does only when it is due: failover's sweep,
 * the flush reads' CQs while reads are out, and saying that clear-to-sends
 * are due: a completion, a stall or a rail taken out lets them go, and the
 * data path writes them (gdx_cts_progress), never a poll. Returns the flush
 * completions seen. */
static __attribute__((noinline)) int gdx_cq_poll_rest(struct gdx_comm *c)
{
	struct gdx_recv_comm *rc;
	int seen = 0;

	if (c->ch.failover && (gdx_failover_poll(c) & GDX_FO_REWRITE_CTS))
		gdx_recv_comm_of(c)->cts_rewrite = true;
	if (c->kind != GDX_KIND_RECV)
		return 0;
	rc = gdx_recv_comm_of(c);
	if (rc->flushes_out)
		seen += gdx_cq_flush_poll(rc);
	if (rc->cts_rewrite || rc->cts_stalled || gdx_cts_held_low(rc))
		rc->cts_flush_due = true;
	return seen;
}

/* The immediates of small single receives on rail 0, which is up: what a
 * receive comm's poll mostly finds, taken with the checks they need and no
 * more. It stops at the first completion that is anything else (a send's,
 * a failed one, an earlier generation's, a probe, a chunked or grouped
 * receive's, a copy, a bad one), which gdx_cq_wc then takes and names.
 * Returns how many it took. */
_Static_assert(GDX_IMM_PROBE >> 31, "the small path's form check turns a probe away");

static int gdx_cq_recv_small(struct gdx_recv_comm *rc, const struct ibv_wc *wcs, int n)
{
	struct gdx_comm *c = &rc->base;
	uint16_t gen = gdx_chan_gen(&c->ch, 0);
	int i;

	for (i = 0; i < n; i++) {
		const struct ibv_wc *wc = &wcs[i];
		uint32_t imm = be32toh(wc->imm_data), seq = (imm >> 24) & GDX_IMM_SEQ_MASK;
		struct gdx_request *req = rc->slots[seq % GDX_MAX_REQUESTS];

		if (!gdx_chan_imm_arrived(gen, wc) || imm >> 31 || !req ||
		    (req->seq & GDX_IMM_SEQ_MASK) != seq || req->n != 1 || req->arrived ||
		    (imm & GDX_IMM_SMALL_MAX) > req->posted)
			break;
		if (gdx_chan_imm_take(&c->ch, wc))
			gdx_comm_fail(c, -EIO);
		gdx_cq_recv_whole(rc, req, imm & GDX_IMM_SMALL_MAX);
	}
	if (i)
		gdx_chan_imms_taken(&c->ch, 0);
	return i;
}

/* A send comm's signaled sends on rail 0, which is up: everything before
 * each on its QP is delivered. Stops, as gdx_cq_recv_small does, at the
 * first completion that is anything else. Returns how many it took. */
static int gdx_cq_send_small(struct gdx_comm *c, const struct ibv_wc *wcs, int n)
{
	uint16_t gen = gdx_chan_gen(&c->ch, 0);
	int i;

	for (i = 0; i < n && gdx_chan_send_done(&c->ch, gen, &wcs[i]); i++)
		;
	return i;
}

int gdx_cq_poll_one(struct gdx_comm *c, struct ibv_wc *wcs, int n)
{
	bool recv = c->kind == GDX_KIND_RECV;
	int i = 0;

	if (gdx_chan_up(&c->ch, 0))
		i = recv ? gdx_cq_recv_small(gdx_recv_comm_of(c), wcs, n)
			 : gdx_cq_send_small(c, wcs, n);
	if (i < n && gdx_cq_take(c, 0, wcs, i, n) < 0)
		return 0;
	if (gdx_cq_poll_due(c) || c->ch.failover || (recv && gdx_cts_held_low(gdx_recv_comm_of(c))))
		n += gdx_cq_poll_rest(c);
	return n;
}

/* What a poll does after rail 0's CQ (gdx_cq_collect): the other
 * rails, what they found, then what is due. */
int gdx_cq_poll_all(struct gdx_comm *c, struct ibv_wc *wcs, int n0)
{
	int seen = 0;

	for (int r = 0; r < c->ch.nrails; r++) {
		int n = r ? gdx_chan_poll_cq(&c->ch, r, wcs) : n0;

		if (n == 0 && gdx_chan_up(&c->ch, r))
			continue;
		n = gdx_cq_take(c, r, wcs, 0, n);
		if (n < 0)
			return seen;
		seen += n;
	}
	/* due is asked on every poll: failover counts its polls there; after
	 * completions, failover's notes and the clear-to-sends they let go */
	if (gdx_cq_poll_due(c) ||
	    (seen && (c->ch.failover ||
		      (c->kind == GDX_KIND_RECV && gdx_cts_held_low(gdx_recv_comm_of(c))))))
		seen += gdx_cq_poll_rest(c);
	return seen;
}

int gdx_cq_poll(struct gdx_comm *c)
{
	int n = gdx_cq_collect(c);

	if (c->kind == GDX_KIND_RECV)
		gdx_cts_progress(gdx_recv_comm_of(c));
	return n;
}

/* What the liveness check does on its clock, every GDX_LIVENESS_MS of
 * waiting, not on the polls' count: whether the peer process is still
 * there (verbs says nothing when it is simply gone, but its kernel closes
 * the out-of-band socket), async events, a stall, the NIC's counters. A
 * function of its own so that scripts/cpu-cost.sh counts it per check: an
 * emulator under callgrind makes each call hundreds of times slower, and the
 * clock fires that much more often per call. */
static __attribute__((noinline)) void gdx_cq_check_timed(struct gdx_comm *c, uint64_t now)
{
	c->last_check_ms = now;
	gdx_event_poll(&c->ch, false);
	if (c->err)
		return;
	gdx_qpstat_tick(now); /* the NIC's counters, about once a second */
	gdx_stall_check(&c->ch, now);
	if (!gdx_sock_peer_gone(c->sock))
		return;
	/* Anything that arrived before the peer left still counts. */
	if (gdx_cq_poll(c))
		return;
	GDX_WARN("%s: peer %s (%s) closed its connection with requests pending: the peer "
		 "process exited or closed its comm",
		 c->dev_name, c->peer, GDX_LOG_QUOTED(c->peer_dev));
	gdx_comm_fail(c, -ECONNRESET);
}

/* Called every GDX_LIVENESS_POLLS polls without progress (gdx_cq_idle):
 * the live slot's wait state, and now and then the timed checks. */
void gdx_cq_check_peer(struct gdx_comm *c)
{
	uint64_t now = gdx_now_ms();

	gdx_live_tick(c, now);
	if (now - c->last_check_ms >= GDX_LIVENESS_MS)
		gdx_cq_check_timed(c, now);
}
