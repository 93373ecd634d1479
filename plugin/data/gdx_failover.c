/* SPDX-License-Identifier: MIT */
/*
 * Taking a rail out of a connection and bringing it back (gdx_failover.h).
 *
 * Out: the end that sees the failure first moves the rail's QPs to error,
 * so that nothing more is sent or taken on it, and notes DOWN to the other
 * end, which does the same. The receiver then waits until every receive it
 * had posted on the rail has come back out of its CQ (an immediate, or
 * flushed), so that its counts include every piece the sender may have seen
 * acknowledged, and notes DOWN with the number of immediates each of the
 * rail's QPs took; after that it takes nothing from them. The sender posts
 * again, on the rails left, every logged segment of a piece past those
 * counts (gdx_post.h), and forgets the rest as delivered. Counts are of one
 * life of the rail's QPs: a DOWN note names the RESTORE that started
 * it, and the sender acts on none of another (a late answer to an earlier
 * outage would forget what the new QPs lost).
 * A piece is thus posted again only if the receiver never counted it, and
 * the receiver counts each piece of a receive once (gdx_cq.c), so nothing
 * completes twice; and a receive cannot complete while one of its pieces is
 * uncounted, so the bytes a re-sent piece writes never land in a buffer NCCL
 * has been given back.
 *
 * Back: the sender, once its port is up and its wait is over, resets the
 * rail's QPs and notes RESTORE with its PSN and GID; the receiver resets its
 * own, takes them to RTS towards the sender's and notes READY (or REFUSE,
 * its port being down); the sender takes its QPs to RTS and probes each QP
 * with a zero-byte write; once every probe is delivered the rail is up. A
 * step that fails or is not answered in time takes the rail out again, and
 * the wait before the next attempt doubles, up to NCCL_GDX_RECOVERY_MAX_MS.
 *
 * Three numbers keep one life of a rail from being taken for another:
 * - a note's epoch (gdx_note), one more each time an end sets its note
 *   about the rail: the peer acts on each epoch once (so asking again takes
 *   a new one), and READY or REFUSE carries the epoch of the RESTORE it
 *   answers, so an answer to an earlier attempt is not taken for this one;
 * - the rail's life (gdx_rail_run.life), the epoch of the RESTORE that
 *   started its QPs: both ends know it and a DOWN note names it, so counts,
 *   which start at 0 with the QPs, are never read against another life's log;
 * - the QPs' gen (gdx_rail), one more at each reset of this end's QPs: every
 *   wr_id carries it, so a completion from before a reset is dropped
 *   (gdx_cq.c), and a WR count is compared only with those of the same QPs.
 *
 * The model, per rail (tests/unit/failover_notes.c takes each note in each
 * state, the other end not polling):
 *
 *   sender    UP --fail--> DRAINING --receiver's DOWN (counts), or log empty-->
 *             DOWN --wait over, port up: reset, RESTORE--> RESTORING
 *             --READY: RTS--> PROBING --every probe delivered--> UP
 *             (a step that fails or times out: DRAINING again, log empty)
 *   receiver  UP --fail, or the sender's DOWN or RESTORE--> DRAINING
 *             --every receive back out of the CQ: DOWN (counts)--> DOWN
 *             --RESTORE: reset, RTS towards it, READY--> UP (unproven)
 *
 * Invariant: every immediate the receiver's NIC acknowledged is taken by the
 * receiver (counted once, gdx_cq.c) or posted again by the sender. The
 * sender forgets a logged piece only when a count covers it or when it is
 * posted again; the receiver counts only its current QPs' immediates, and
 * resets them only once they are all out of the CQ (DRAINING, then DOWN).
 *
 * A note is one slot per rail and direction, so a newer note overwrites one
 * not yet read (the reader may not poll for a while: an idle receive comm is
 * not called by NCCL). Its epoch says how many came before (gdx_fo_note
 * traces those skipped), and each note's meaning includes what an
 * overwritten one said: the sender writes RESTORE only from DOWN, so a
 * RESTORE read in UP is the DOWN never read, and the receiver takes the rail
 * out first (drains, and writes again the clear-to-sends the rail carried)
 * before it restores; the receiver writes READY only after a RESTORE, so a
 * sender that reads READY needs no counts (its log was empty when it wrote
 * RESTORE, gdx_fo_try), and a DOWN it reads after its RESTORE, of the
 * life before, only closes that outage. A DOWN overwritten by a newer
 * DOWN loses nothing: the newer counts cover the older.
 *
 * Both ends must run failover (gdx_setup.c: the handshake's
 * GDX_META_F_FAILOVER): one end alone would wait for counts that never come.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "rail/gdx_chan_out.h"
#include "rail/gdx_event.h"
#include "data/gdx_failover.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "data/gdx_note.h"
#include "sys/gdx_param.h"
#include "rail/gdx_post.h"
#include "stats/gdx_qpstat.h"
#include "rail/gdx_stripe.h"
#include "sys/gdx_time.h"

/* Receiver: how long it waits for the receives of a rail in error to come
 * back before it takes its counts from a CQ found empty (a provider that
 * does not flush receives). */
#define GDX_DRAIN_WAIT_MS 1000
/* Sender: how long it waits for those counts before failing the comm (the
 * receiver has stopped answering on every rail left). */
#define GDX_COUNTS_WAIT_MS 10000
/* Sender: how often it asks again while it waits (a note is one write; the
 * rail it went by may have failed too before it landed). */
#define GDX_RENOTE_MS 500
/* Sender: how often it looks again at a port that is not up yet, or at a
 * restore's thread still busy (the wait between attempts themselves is
 * NCCL_GDX_RECOVERY_START_MS, doubling up to NCCL_GDX_RECOVERY_MAX_MS; how
 * long one waits for the receiver's answer, NCCL_GDX_RECOVERY_ANSWER_MS,
 * and for its probes, NCCL_GDX_RECOVERY_PROBE_MS). */
#define GDX_LOOK_AGAIN_MS 100
/* How often the async events and the ports are looked at. */
#define GDX_PORT_CHECK_MS 20 /* and GDX_PORT_CHECK_POLLS polls, gdx_failover.h */
#define GDX_PORT_QUERY_MS 100

static const char *const gdx_rail_state_names[] = {
	[GDX_RAIL_UP] = "up",
	[GDX_RAIL_DRAINING] = "down (draining)",
	[GDX_RAIL_DOWN] = "down",
	[GDX_RAIL_RESTORING] = "recovering",
	[GDX_RAIL_PROBING] = "recovering (probing)",
};

const char *gdx_rail_state_name(enum gdx_rail_state s)
{
	return (unsigned)s < sizeof(gdx_rail_state_names) / sizeof(gdx_rail_state_names[0])
		       ? gdx_rail_state_names[s]
		       : "?";
}

/* Wall-clock time of day, for the log lines a person reads afterwards. */
static const char *gdx_clock_str(char *buf, size_t len)
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(tv.tv_usec / 1000));
	return buf;
}

static bool gdx_fo_sender(const struct gdx_comm *c)
{
	return c->kind == GDX_KIND_SEND;
}

static void gdx_fo_set(struct gdx_comm *c, int r, enum gdx_rail_state s, uint64_t now)
{
	GDX_TRACE(NCCL_NET, "%s: rail %d %s -> %s", c->dev_name, r,
		  gdx_rail_state_name(c->run[r].state), gdx_rail_state_name(s));
	c->ch.run[r].state = s;
	c->ch.run[r].since_ms = now;
	gdx_live_rail(c, r, s, now, c->ch.run[r].downs);
}

int gdx_failover_ctrl_rail(const struct gdx_comm *c)
{
	for (int r = 0; r < c->ch.nrails; r++)
		if (c->ch.run[r].state == GDX_RAIL_UP && !c->ch.run[r].unproven)
			return r;
	/* only restored ones, not yet proven: better than none */
	for (int r = 0; r < c->ch.nrails; r++)
		if (c->ch.run[r].state == GDX_RAIL_UP)
			return r;
	return -1;
}

void gdx_failover_init(struct gdx_comm *c)
{
	c->ch.failover = c->ch.nrails >= 2 && gdx_params.failover;
	for (int r = 0; r < c->ch.nrails; r++) {
		memset(&c->ch.run[r], 0, offsetof(struct gdx_rail_run, rate));
	}
	c->ch.nlive = c->ch.nrails;
	gdx_stripe_init(&c->ch);
}

bool gdx_failover_status(enum ibv_wc_status status)
{
	/* net_ib's two, and what rxe reports when its port is down */
	return status == IBV_WC_WR_FLUSH_ERR || status == IBV_WC_RETRY_EXC_ERR ||
	       status == IBV_WC_LOC_QP_OP_ERR;
}

/* Writes the notes not yet written, on the control rail. */
static void gdx_notes_flush(struct gdx_comm *c)
{
	gdx_note_flush(c, gdx_failover_ctrl_rail(c));
}

/* ---- out ---- */

static void gdx_fo_fail_comm(struct gdx_comm *c)
{
	char list[512];
	size_t off = 0;

	for (int r = 0; r < c->ch.nrails && off < sizeof(list); r++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%srail %d (%s): %s",
					r ? "; " : "", r, c->ch.rails[r].dev->ibdev,
					c->ch.run[r].why[0] ? c->ch.run[r].why : "down");
	if (!c->err)
		GDX_WARN("%s: every rail of the connection with %s (%s) is down: %s", c->dev_name,
			 c->peer, GDX_LOG_QUOTED(c->peer_dev), list);
	if (!c->err)
		c->err = -ENETDOWN;
}

static bool gdx_fo_log_empty(const struct gdx_rail *rail)
{
	for (int q = 0; q < rail->nqps; q++)
		if (rail->qps[q].log && rail->qps[q].log->head != rail->qps[q].log->tail)
			return false;
	return true;
}

/* The wait before the next restore attempt after one that failed. */
static uint32_t gdx_fo_backoff(uint32_t b)
{
	uint64_t next = b ? 2ull * b : 1;
	uint32_t max = (uint32_t)gdx_params.recovery_max_ms;

	return next < max ? (uint32_t)next : max;
}

/* Sender: a restore attempt of rail r failed, and not for the receiver's
 * port being down: counted against NCCL_GDX_RECOVERY_ATTEMPTS. Returns
 * whether the rail now stays out (said in one WARN). */
static bool gdx_fo_give_up(struct gdx_comm *c, int r)
{
	struct gdx_rail_run *run = &c->ch.run[r];

	run->failed++;
	if (!gdx_params.recovery_attempts || run->failed < (uint32_t)gdx_params.recovery_attempts)
		return false;
	run->gave_up = true;
	GDX_WARN("%s: rail %d (%s): %u restore attempt(s) failed, the most "
		 "NCCL_GDX_RECOVERY_ATTEMPTS (or NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX) "
		 "allows: it stays out of the connection with %s until the connection closes; "
		 "%d rail(s) carry its traffic",
		 c->dev_name, r, c->ch.rails[r].dev->ibdev, run->failed, c->peer, c->ch.nlive);
	return true;
}

/* Rail r's undelivered work is all posted elsewhere: it waits to come back. */
static void gdx_fo_down(struct gdx_comm *c, int r, uint64_t now)
{
	gdx_fo_set(c, r, GDX_RAIL_DOWN, now);
	c->ch.run[r].deadline_ms = now + c->ch.run[r].backoff_ms;
}

int gdx_rail_failed(struct gdx_comm *c, int r, const char *why)
{
	struct gdx_rail_run *run = &c->ch.run[r];
	uint64_t now = gdx_now_ms();
	bool was_up = run->state == GDX_RAIL_UP;
	char when[16];

	if (!c->ch.failover) {
		if (!c->err)
			c->err = -EREMOTEIO;
		return 0;
	}
	if (run->state == GDX_RAIL_DRAINING || run->state == GDX_RAIL_DOWN)
		return 0;
	snprintf(run->why, sizeof(run->why), "%s", why);
	GDX_TRACE(NCCL_NET, "%s: rail %d %s -> %s", c->dev_name, r, gdx_rail_state_name(run->state),
		  gdx_rail_state_name(GDX_RAIL_DRAINING));
	gdx_chan_take_out(&c->ch, r, GDX_RAIL_DRAINING, now);
	gdx_live_rail(c, r, GDX_RAIL_DRAINING, now, run->downs);
	run->deadline_ms = now + (gdx_fo_sender(c) ? GDX_COUNTS_WAIT_MS : GDX_DRAIN_WAIT_MS);
	run->cq_idle = false;
	run->drain_imms = 0;
	run->renote_ms = now + GDX_RENOTE_MS;
	/* a receiver's rail restored that fails before anything came by it is
	 * a restore attempt that failed, not a new outage */
	if (was_up && run->unproven)
		was_up = false;
	if (was_up) {
		run->down_ms = now;
		run->downs++;
		gdx_live_rail(c, r, run->state, now, run->downs);
		run->attempts = 0;
		run->failed = 0;
		run->gave_up = false;
		run->backoff_ms = (uint32_t)gdx_params.recovery_start_ms;
		GDX_WARN("%s: rail %d (%s port %d, peer %s) taken out of the connection with %s "
			 "at %s: %s; %d rail(s) carry its traffic until it is back (check the "
			 "link: ibv_devinfo -d %s)",
			 c->dev_name, r, c->ch.rails[r].dev->ibdev, c->ch.rails[r].dev->ib_port,
			 GDX_LOG_QUOTED(c->peer_dev), c->peer, gdx_clock_str(when, sizeof(when)),
			 why, c->ch.nlive, c->ch.rails[r].dev->ibdev);
		gdx_qpstat_dump(c, r, "its rail taken out");
	} else if (!gdx_fo_sender(c) || !gdx_fo_give_up(c, r)) {
		run->backoff_ms = gdx_fo_backoff(run->backoff_ms);
		GDX_INFO(NCCL_NET, "%s: rail %d (%s): restore attempt %u failed: %s; next in %u ms",
			 c->dev_name, r, c->ch.rails[r].dev->ibdev, run->attempts, why,
			 run->backoff_ms);
	}
	if (c->ch.nlive == 0) {
		gdx_fo_fail_comm(c);
		return 0;
	}
	/* whatever went on the failed rail may be lost: every note again, as it
	 * was; same epoch, so a peer that had it does not act on it twice */
	for (int k = 0; k < c->ch.nrails; k++)
		c->ch.run[k].note_due |= c->ch.run[k].my_epoch != 0;
	if (!gdx_fo_sender(c)) {
		gdx_notes_flush(c);
		return GDX_FO_REWRITE_CTS;
	}
	gdx_note_set(c, r, GDX_NOTE_DOWN, 0, why);
	/* nothing in flight on it (a restore attempt): no counts to wait for */
	if (gdx_fo_log_empty(&c->ch.rails[r]))
		gdx_fo_down(c, r, now);
	gdx_notes_flush(c);
	return 0;
}

/* The log entries of the piece that starts at the log's head: every
 * segment that shares the head's immediate (imm_ord), in order; how many,
 * up to max. RC places a QP's WRITEs in order, so only on one QP does the
 * immediate landing mean the segments before it did. */
static int gdx_fo_piece(const struct gdx_seglog *log, struct gdx_seg *segs, int max)
{
	uint32_t ord = log->e[log->head % GDX_SEGLOG_SIZE].imm_ord;
	int n = 0;

	for (uint32_t i = log->head; i != log->tail && n < max; i++) {
		const struct gdx_seglog_entry *e = &log->e[i % GDX_SEGLOG_SIZE];

		if (e->imm_ord != ord)
			break;
		segs[n] = e->seg;
		segs[n].flags &= (uint8_t)~GDX_SEG_INLINE; /* posted anew, inline or not */
		n++;
		if (e->seg.flags & GDX_SEG_IMM)
			break;
	}
	return n;
}

/* The log's first n entries are done with: delivered (counted by the
 * receiver), or posted again elsewhere, which counted itself; the old WRs,
 * on a QP in error, never read the buffer again. */
static void gdx_fo_drop(struct gdx_seglog *log, int n)
{
	for (; n > 0; n--) {
		struct gdx_seglog_entry *e = &log->e[log->head % GDX_SEGLOG_SIZE];

		if (e->seg.wait) {
			e->seg.wait->pending--;
			gdx_wait_wrs_done(e->seg.wait, e->nwrs);
		}
		log->head++;
	}
}

/* Sender: posts again what the receiver did not take on rail r (counts per
 * QP); true once nothing of the rail is left. An entry's imm_ord is the
 * immediate that ends its piece on its QP: a count at or past it means the
 * whole piece landed and was counted; a count below it, that the receiver
 * never took that immediate and now takes nothing from the rail, so the
 * copy posted here is the only one it counts. A piece goes again whole, on
 * one QP of one rail, or not at all until that QP has room for all of it:
 * split, its immediate could land on one rail before its bytes or its size
 * record on another, and the receive complete without them (0.4.0, with
 * three rails or more). A piece posted again is logged again on its new
 * QP, should that rail fail too. */
static bool gdx_fo_resend(struct gdx_comm *c, int r, const uint32_t *counts)
{
	struct gdx_rail *rail = &c->ch.rails[r];

	for (int q = 0; q < rail->nqps; q++) {
		struct gdx_seglog *log = rail->qps[q].log;

		while (log && log->head != log->tail) {
			struct gdx_seg segs[GDX_PIECE_MAX_SEGS];
			int n = gdx_fo_piece(log, segs, GDX_PIECE_MAX_SEGS), to, to_q, ret;
			uint32_t need = 0;
			uint64_t bytes = 0;
			uint32_t ord = log->e[log->head % GDX_SEGLOG_SIZE].imm_ord;

			if ((int32_t)(ord - counts[q]) <= 0) {
				gdx_fo_drop(log, n);
				continue;
			}
			for (int i = 0; i < n; i++)
				bytes += segs[i].len;
			to = gdx_stripe_pick(&c->ch, bytes, ord);
			if (to < 0) {
				GDX_TRACE(NCCL_NET, "%s: rail %d: resend: no rail up", c->dev_name,
					  r);
				return false;
			}
			to_q = q % c->ch.rails[to].nqps;
			for (int i = 0; i < n; i++)
				need += gdx_seg_wrs(&c->ch.rails[to], &segs[i]);
			if (!gdx_qp_room(&c->ch.rails[to], &c->ch.rails[to].qps[to_q], need)) {
				GDX_TRACE(
					NCCL_NET,
					"%s: rail %d: resend of a piece of %u WRs waits for room on "
					"rail %d qp %d (%u posted, %u done)",
					c->dev_name, r, need, to, to_q,
					c->rails[to].qps[to_q].wr_posted,
					c->rails[to].qps[to_q].wr_done);
				return false;
			}
			for (int i = 0; i < n; i++)
				if (segs[i].wait)
					gdx_wait_mode(segs[i].wait, GDX_REQ_RESENT);
			gdx_seg_dbg_moved(segs, n, to, to_q);
			ret = gdx_post_piece(&c->ch, to, to_q, segs, n);
			if (ret) {
				if (!c->err)
					c->err = ret;
				return false;
			}
			gdx_fo_drop(log, n);
		}
	}
	return true;
}

/* Receiver: the rail's counts are final; tell the sender. */
static void gdx_fo_counted(struct gdx_comm *c, int r, uint64_t now)
{
	gdx_note_set(c, r, GDX_NOTE_DOWN, 0, c->ch.run[r].why);
	gdx_fo_down(c, r, now);
	gdx_notes_flush(c);
}

/* ---- the restore's slow part, in the background ---- */

enum { GDX_BG_RECEIVER, GDX_BG_SENDER };

struct gdx_bg_arg {
	struct gdx_comm *c;
	int r, op;
};

/* Receiver: reset, receives posted, RTR and RTS; sender: RTR and RTS. The
 * data path leaves the rail's QPs alone meanwhile (it is not up). */
static void *gdx_fo_bg_main(void *p)
{
	struct gdx_bg_arg a = *(struct gdx_bg_arg *)p;
	struct gdx_comm *c = a.c;
	struct gdx_rail *rail = &c->ch.rails[a.r];
	int ret = 0;

	free(p);
	if (a.op == GDX_BG_RECEIVER) {
		gdx_rail_freeze(rail); /* whatever it was doing: start over */
		ret = gdx_rail_reset(rail);
		for (int q = 0; q < rail->nqps && !ret; q++)
			ret = gdx_rail_post_recvs(rail, q, (int)gdx_recvs_ahead(c->ch.nrails));
	}
	if (!ret)
		ret = gdx_rail_connect(rail, &c->remote_rails[a.r],
				       &c->remote_qpn[a.r * c->ch.qps_per_rail]);
	__atomic_store_n(&c->ch.run[a.r].bg_result, ret, __ATOMIC_RELAXED);
	__atomic_store_n(&c->ch.run[a.r].bg_busy, 0, __ATOMIC_RELEASE);
	return NULL;
}

static void gdx_fo_bg_join(struct gdx_comm *c, int r)
{
	if (c->ch.run[r].bg_joinable) {
		pthread_join(c->ch.run[r].bg, NULL);
		c->ch.run[r].bg_joinable = false;
	}
}

static int gdx_fo_bg_start(struct gdx_comm *c, int r, int op)
{
	struct gdx_bg_arg *a = malloc(sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	*a = (struct gdx_bg_arg){c, r, op};
	gdx_fo_bg_join(c, r);
	c->ch.run[r].bg_busy = 1;
	ret = pthread_create(&c->ch.run[r].bg, NULL, gdx_fo_bg_main, a);
	if (ret) {
		c->ch.run[r].bg_busy = 0;
		free(a);
		return -ret;
	}
	c->ch.run[r].bg_joinable = true;
	return 0;
}

/* Whether the rail's background work is done; then its result in *ret. */
static bool gdx_fo_bg_done(struct gdx_comm *c, int r, int *ret)
{
	if (!c->ch.run[r].bg_joinable || __atomic_load_n(&c->ch.run[r].bg_busy, __ATOMIC_ACQUIRE))
		return false;
	gdx_fo_bg_join(c, r);
	*ret = c->ch.run[r].bg_result;
	return true;
}

/* ---- back ---- */

/* Whether the rail's port is up: what the async events said, and, while
 * they say down, what the port itself says every GDX_PORT_QUERY_MS (an
 * event can be missed, or come late). */
static bool gdx_fo_port_up(const struct gdx_rail *rail)
{
	struct gdx_dev *dev = rail->dev;
	struct ibv_port_attr pa;
	uint64_t now;

	if (__atomic_load_n(&dev->port_down_ms, __ATOMIC_RELAXED) == 0)
		return true;
	now = gdx_now_ms();
	if (now - __atomic_load_n(&dev->port_query_ms, __ATOMIC_RELAXED) < GDX_PORT_QUERY_MS)
		return false;
	__atomic_store_n(&dev->port_query_ms, now, __ATOMIC_RELAXED);
	if (ibv_query_port(dev->ib->ctx, (uint8_t)dev->ib_port, &pa) || pa.state != IBV_PORT_ACTIVE)
		return false;
	GDX_INFO(NCCL_NET, "%s port %d is active again (its state, before its event)", dev->ibdev,
		 dev->ib_port);
	__atomic_store_n(&dev->port_down_ms, 0, __ATOMIC_RELAXED);
	return true;
}

/* A restore attempt that did not get as far as the QPs: the wait doubles,
 * unless the receiver's port is only not back yet (again soon). */
static void gdx_fo_attempt_failed(struct gdx_comm *c, int r, uint64_t now, const char *why,
				  bool port_down)
{
	struct gdx_rail_run *run = &c->ch.run[r];

	if (!port_down && gdx_fo_give_up(c, r)) {
		gdx_fo_down(c, r, now);
		return;
	}
	if (!port_down)
		run->backoff_ms = gdx_fo_backoff(run->backoff_ms);
	GDX_INFO(NCCL_NET, "%s: rail %d (%s): restore attempt %u failed: %s; next in %u ms",
		 c->dev_name, r, c->ch.rails[r].dev->ibdev, run->attempts, why,
		 port_down ? 2 * GDX_LOOK_AGAIN_MS : run->backoff_ms);
	gdx_fo_down(c, r, now);
	if (port_down)
		run->deadline_ms = now + 2 * GDX_LOOK_AGAIN_MS;
}

/* Sender: reset the rail's QPs and ask the receiver to do the same. */
static void gdx_fo_try(struct gdx_comm *c, int r, uint64_t now)
{
	struct gdx_rail *rail = &c->ch.rails[r];
	struct gdx_rail_run *run = &c->ch.run[r];
	int ret;

	if (run->bg_joinable) {
		int bg;

		if (!gdx_fo_bg_done(c, r, &bg)) {
			run->deadline_ms = now + GDX_LOOK_AGAIN_MS; /* an earlier one ends first */
			return;
		}
	}
	if (!gdx_fo_port_up(rail)) {
		/* look again soon; once it is back, start from the first wait */
		run->deadline_ms = now + GDX_LOOK_AGAIN_MS;
		run->backoff_ms = (uint32_t)gdx_params.recovery_start_ms;
		return;
	}
	run->attempts++;
	ret = gdx_rail_reset(rail);
	for (int q = 0; q < rail->nqps; q++)
		if (rail->qps[q].log)
			rail->qps[q].log->head = rail->qps[q].log->tail;
	if (ret) {
		gdx_fo_attempt_failed(c, r, now, "its QPs could not be reset", false);
		return;
	}
	gdx_note_set(c, r, GDX_NOTE_RESTORE, 0, NULL);
	gdx_fo_set(c, r, GDX_RAIL_RESTORING, now);
	run->deadline_ms = now + (uint64_t)gdx_params.recovery_answer_ms;
	gdx_notes_flush(c);
}

static void gdx_fo_remote(struct gdx_comm *c, int r, const struct gdx_note *n)
{
	c->remote_rails[r].psn = n->psn;
	memcpy(c->remote_rails[r].gid, n->gid, sizeof(n->gid));
}

void gdx_failover_fini(struct gdx_comm *c)
{
	for (int r = 0; r < c->ch.nrails; r++)
		gdx_fo_bg_join(c, r);
}

static void gdx_fo_back(struct gdx_comm *c, int r, uint64_t now)
{
	struct gdx_rail_run *run = &c->ch.run[r];
	char when[16];

	gdx_fo_set(c, r, GDX_RAIL_UP, now);
	gdx_chan_count_live(&c->ch);
	gdx_stripe_back(&c->ch, r);
	/* At INIT too, unlike the connection's other lines: it ends the WARN
	 * that took the rail out, which every log shows; without it a default
	 * log would say the job stays slower. */
	GDX_INFO(NCCL_INIT | NCCL_NET,
		 "%s: rail %d (%s) back in the connection with %s at %s after %.1f s down "
		 "(%u attempt(s)); traffic returns to it, from %.0f Mb/s",
		 c->dev_name, r, c->ch.rails[r].dev->ibdev, c->peer,
		 gdx_clock_str(when, sizeof(when)), (double)(now - run->down_ms) / 1e3,
		 run->attempts, run->rate * 8e-3);
}

/* The peer's words (a note's why) after lead, this end's own, into why
 * (len at most a run's why, so that it is kept whole): quoted, as every
 * string of the peer's in a log line, so that a log reader (gdx-doctor log)
 * tells the plugin's words from what the peer wrote, whatever it holds; the
 * closing quote kept however long the peer's words. */
static const char *gdx_fo_peer_why(char *why, size_t len, const char *lead, const char *theirs)
{
	size_t n = strlen(lead);

	snprintf(why, len, "%s", lead);
	if (n + 3 <= len)
		gdx_log_quote(why + n, len - n, theirs);
	return why;
}

/* Sender: the receiver's answer to our RESTORE: its QPs are at RTS; ours
 * go there in the background, then the probes (gdx_fo_connected). */
static void gdx_fo_ready(struct gdx_comm *c, int r, const struct gdx_note *n, uint64_t now)
{
	if (n->says == GDX_NOTE_REFUSE) {
		char why[sizeof(c->ch.run[r].why)];

		gdx_fo_attempt_failed(c, r, now,
				      n->why[0] ? gdx_fo_peer_why(why, sizeof(why),
								  "the receiver refused: ", n->why)
						: "the receiver refused",
				      n->answers & GDX_NOTE_PORT_DOWN);
		return;
	}
	gdx_fo_remote(c, r, n);
	c->ch.run[r].life = c->ch.run[r].my_epoch; /* the RESTORE it answers */
	if (gdx_fo_bg_start(c, r, GDX_BG_SENDER)) {
		gdx_rail_failed(c, r, "no thread to connect its QPs again");
		return;
	}
	c->ch.run[r].deadline_ms = now + (uint64_t)gdx_params.recovery_answer_ms;
}

static void gdx_fo_connected(struct gdx_comm *c, int r, int ret, uint64_t now)
{
	struct gdx_rail *rail = &c->ch.rails[r];
	struct gdx_rail_run *run = &c->ch.run[r];

	if (ret) {
		gdx_rail_failed(c, r, "its QPs could not be connected again");
		return;
	}
	run->probes = 0;
	for (int k = 0; k < gdx_params.recovery_probes; k++)
		for (int q = 0; q < rail->nqps; q++) {
			if (gdx_post_probe(&c->ch, r, q)) {
				gdx_rail_failed(c, r, "a probe could not be posted");
				return;
			}
			run->probes++;
		}
	gdx_fo_set(c, r, GDX_RAIL_PROBING, now);
	run->deadline_ms = now + (uint64_t)gdx_params.recovery_probe_ms;
}

void gdx_failover_probed(struct gdx_comm *c, int r, bool ok)
{
	struct gdx_rail_run *run = &c->ch.run[r];

	if (run->state != GDX_RAIL_PROBING)
		return;
	if (!ok) {
		gdx_rail_failed(c, r, "a probe of the path was not delivered");
		return;
	}
	if (--run->probes == 0)
		gdx_fo_back(c, r, gdx_now_ms());
}

/* Receiver: the sender asks for the rail back: our QPs are reset and taken
 * to RTS towards its new PSN in the background (gdx_fo_restored). */
static void gdx_fo_restore(struct gdx_comm *c, int r, const struct gdx_note *n, uint64_t now)
{
	struct gdx_rail *rail = &c->ch.rails[r];

	gdx_event_poll(&c->ch, true); /* the port's latest state */
	if (!gdx_fo_port_up(rail)) {
		char why[80];

		snprintf(why, sizeof(why), "the receiver's port (%.40s port %d) is down",
			 rail->dev->ibdev, rail->dev->ib_port);
		gdx_note_set(c, r, GDX_NOTE_REFUSE, n->epoch | GDX_NOTE_PORT_DOWN, why);
		gdx_notes_flush(c);
		return;
	}
	gdx_fo_remote(c, r, n);
	c->ch.run[r].bg_answers = n->epoch;
	if (gdx_fo_bg_start(c, r, GDX_BG_RECEIVER)) {
		gdx_note_set(c, r, GDX_NOTE_REFUSE, n->epoch,
			     "the receiver has no thread to restore it");
		gdx_notes_flush(c);
		return;
	}
	gdx_fo_set(c, r, GDX_RAIL_RESTORING, now);
	gdx_chan_count_live(&c->ch);
}

static void gdx_fo_restored(struct gdx_comm *c, int r, int ret, uint64_t now)
{
	struct gdx_rail *rail = &c->ch.rails[r];

	if (ret) {
		gdx_note_set(c, r, GDX_NOTE_REFUSE, c->ch.run[r].bg_answers,
			     "the receiver could not reset its QPs");
		gdx_fo_set(c, r, GDX_RAIL_DOWN, now);
		gdx_notes_flush(c);
		return;
	}
	c->ch.run[r].attempts++;
	/* the RESTORE's epoch: the sender takes the same (gdx_fo_ready) */
	c->ch.run[r].life = c->ch.run[r].bg_answers;
	c->ch.run[r].unproven = true; /* until the sender's probe comes by it */
	gdx_fo_set(c, r, GDX_RAIL_UP, now);
	gdx_chan_count_live(&c->ch);
	GDX_INFO(NCCL_NET,
		 "%s: rail %d (%s) restored at the sender's request; receiving on it again",
		 c->dev_name, r, rail->dev->ibdev);
	gdx_note_set(c, r, GDX_NOTE_READY, c->ch.run[r].bg_answers, NULL);
	gdx_notes_flush(c);
}

/* ---- the peer's notes ---- */

/* Acts on the peer's note about rail r; returns GDX_FO_* actions, and sets
 * *again where the note is to be read again at a later poll (what it asks
 * must wait for this end's state to move on). */
static int gdx_fo_note(struct gdx_comm *c, int r, const struct gdx_note *n, uint64_t now,
		       bool *again)
{
	struct gdx_rail_run *run = &c->ch.run[r];
	int act = 0;
	char why[sizeof(run->why)];

	GDX_TRACE(NCCL_NET,
		  "%s: rail %d: note kind %u epoch %u (%u skipped) answers 0x%x read in state %s",
		  c->dev_name, r, n->says, n->epoch,
		  run->peer_epoch && n->epoch > run->peer_epoch ? n->epoch - run->peer_epoch - 1
								: 0,
		  n->answers, gdx_rail_state_name(run->state));
	if (gdx_fo_sender(c)) {
		switch (n->says) {
		case GDX_NOTE_DOWN:
			/* counts of the QPs' earlier life: read against this log,
			 * they could forget what the new QPs lost */
			if (n->answers != run->life) {
				GDX_TRACE(NCCL_NET,
					  "%s: rail %d: DOWN note of life %u, ours is %u: "
					  "dropped",
					  c->dev_name, r, n->answers, run->life);
				break;
			}
			/* before READY: the receiver's answer to the outage this end
			 * closed with an empty log (its RESTORE asked for nothing it
			 * counted), not a failure of this attempt */
			if (run->state == GDX_RAIL_RESTORING && run->life != run->my_epoch)
				break;
			if (run->state != GDX_RAIL_DRAINING) {
				gdx_rail_failed(c, r,
						gdx_fo_peer_why(why, sizeof(why),
								"the receiver saw: ", n->why));
			}
			if (run->state != GDX_RAIL_DRAINING)
				break; /* the comm failed */
			if (!gdx_fo_resend(c, r, n->counts)) {
				*again = true; /* room first */
				break;
			}
			gdx_fo_down(c, r, now);
			break;
		case GDX_NOTE_READY:
		case GDX_NOTE_REFUSE:
			if (run->state == GDX_RAIL_RESTORING &&
			    (n->answers & ~GDX_NOTE_PORT_DOWN) == run->my_epoch)
				gdx_fo_ready(c, r, n, now);
			break;
		default: break;
		}
		return act;
	}
	switch (n->says) {
	case GDX_NOTE_DOWN:
		if (run->state == GDX_RAIL_UP) {
			act |= gdx_rail_failed(
				c, r,
				gdx_fo_peer_why(why, sizeof(why), "the sender saw: ", n->why));
		} else if (run->state == GDX_RAIL_DOWN) {
			/* asked again: our answer was lost; the counts are final
			 * until the sender asks for the rail back */
			gdx_fo_counted(c, r, now);
		}
		break;
	case GDX_NOTE_RESTORE:
		/* A RESTORE says the sender took the rail out first: the DOWN
		 * it wrote into the same slot may never have been read (this
		 * end did not poll between the two). Still up here, the rail
		 * goes out now as for that DOWN: every immediate of its QPs'
		 * life is taken from the CQ before the QPs are reset, and the
		 * clear-to-sends it may have carried go again on another rail.
		 * The RESTORE is read again once the counts are final. */
		if (run->state == GDX_RAIL_UP) {
			act |= gdx_rail_failed(c, r,
					       "the sender took it out: its RESTORE note came "
					       "before its DOWN note was read");
			*again = !c->err;
			break;
		}
		if (run->state == GDX_RAIL_DRAINING || run->state == GDX_RAIL_RESTORING) {
			*again = true; /* after the counts, or the restore under way */
			break;
		}
		gdx_fo_restore(c, r, n, now);
		break;
	default: break;
	}
	return act;
}

/* Receiver: whether the rail's counts are final: every receive it had
 * posted came back; or, past GDX_DRAIN_WAIT_MS, its CQ was found empty (by
 * then nothing more can arrive on QPs in error). Counts taken sooner left
 * out immediates still in the CQ whose pieces the sender had seen
 * acknowledged and dropped from its log: never re-sent, their receives
 * never completed (fixed in 0.3.1). */
static bool gdx_fo_drained(struct gdx_comm *c, int r, uint64_t now)
{
	const struct gdx_rail *rail = &c->ch.rails[r];
	uint32_t out = 0;

	if (c->ch.run[r].bg_joinable) {
		int ret;

		/* a restore was under way: once its thread is done, the QPs it
		 * may have started go to error too */
		if (!gdx_fo_bg_done(c, r, &ret))
			return false;
		gdx_rail_freeze(&c->ch.rails[r]);
		return false;
	}
	for (int q = 0; q < rail->nqps; q++)
		out += rail->qps[q].recvs_out;
	if (!out)
		return true;
	if (now < c->ch.run[r].deadline_ms || !c->ch.run[r].cq_idle)
		return false;
	GDX_INFO(NCCL_NET,
		 "%s: rail %d (%s): %u receive(s) of its QPs in error never came back (the "
		 "provider does not flush them); its counts are taken from its CQ, empty %u ms "
		 "after",
		 c->dev_name, r, rail->dev->ibdev, out, GDX_DRAIN_WAIT_MS);
	return true;
}

static int gdx_fo_timers(struct gdx_comm *c, uint64_t now)
{
	int act = 0;

	for (int r = 0; r < c->ch.nrails && !c->err; r++) {
		struct gdx_rail_run *run = &c->ch.run[r];

		if (run->state == GDX_RAIL_UP) {
			if (!gdx_fo_port_up(&c->ch.rails[r])) {
				char why[80];

				snprintf(why, sizeof(why), "%s port %d is down",
					 c->ch.rails[r].dev->ibdev, c->ch.rails[r].dev->ib_port);
				act |= gdx_rail_failed(c, r, why);
			}
			continue;
		}
		if (run->state == GDX_RAIL_RESTORING && run->bg_joinable) {
			int ret;

			if (gdx_fo_bg_done(c, r, &ret)) {
				if (gdx_fo_sender(c))
					gdx_fo_connected(c, r, ret, now);
				else
					gdx_fo_restored(c, r, ret, now);
			}
			continue;
		}
		if (run->state == GDX_RAIL_DRAINING && !gdx_fo_sender(c)) {
			if (gdx_fo_drained(c, r, now)) {
				GDX_INFO(NCCL_NET,
					 "%s: rail %d: the rail's counts final %llu ms after "
					 "it was taken out; %u immediate(s) taken meanwhile, "
					 "the last %llu ms after",
					 c->dev_name, r, (unsigned long long)(now - run->since_ms),
					 run->drain_imms,
					 (unsigned long long)(run->drain_imms
								      ? run->drain_last_ms -
										run->since_ms
								      : 0));
				gdx_fo_counted(c, r, now);
			}
			continue;
		}
		if (run->state == GDX_RAIL_DRAINING && gdx_fo_sender(c) && now >= run->renote_ms) {
			run->renote_ms = now + GDX_RENOTE_MS;
			/* a new epoch, so that the receiver answers again: its
			 * last answer may have been lost */
			gdx_note_set(c, r, GDX_NOTE_DOWN, 0, run->why);
		}
		if (now < run->deadline_ms)
			continue;
		switch (run->state) {
		case GDX_RAIL_DRAINING:
			GDX_WARN("%s: rail %d (%s) failed and the receiver %s did not say what it "
				 "had taken within %d ms",
				 c->dev_name, r, c->ch.rails[r].dev->ibdev, c->peer,
				 GDX_COUNTS_WAIT_MS);
			c->err = -ETIMEDOUT;
			break;
		case GDX_RAIL_DOWN:
			if (gdx_fo_sender(c) && gdx_params.recovery &&
			    gdx_params.recovery_max_ms > 0 && !run->gave_up)
				gdx_fo_try(c, r, now);
			break;
		case GDX_RAIL_RESTORING:
			gdx_rail_failed(c, r, "the receiver did not answer the restore");
			break;
		case GDX_RAIL_PROBING: gdx_rail_failed(c, r, "the probes were not answered"); break;
		default: break;
		}
	}
	return act;
}

int gdx_failover_poll(struct gdx_comm *c)
{
	uint64_t now = 0;
	uint32_t async;
	int act = 0;

	if (!c->ch.failover || c->err)
		return 0;
	for (int r = 0; r < c->ch.nrails; r++) {
		struct gdx_note n;
		bool again = false;

		if (!gdx_note_read(c, r, &n))
			continue;
		if (!now)
			now = gdx_now_ms();
		act |= gdx_fo_note(c, r, &n, now, &again);
		if (!again)
			c->ch.run[r].peer_epoch = n.epoch; /* else read again at the next poll */
	}
	async = __atomic_exchange_n(&c->ch.async_failed, 0, __ATOMIC_RELAXED);
	for (int r = 0; async && r < c->ch.nrails; r++)
		if (async & (1u << r))
			act |= gdx_rail_failed(c, r, "an async event put its QP in error");
	/* counted by gdx_failover_due */
	if (c->fo_polls < GDX_PORT_CHECK_POLLS && c->ch.nlive == c->ch.nrails)
		return act;
	c->fo_polls = 0;
	if (!now)
		now = gdx_now_ms();
	if (now - c->fo_check_ms >= GDX_PORT_CHECK_MS) {
		c->fo_check_ms = now;
		gdx_event_poll(&c->ch, false);
	}
	act |= gdx_fo_timers(c, now);
	for (int r = 0; r < c->ch.nrails; r++)
		if (c->ch.run[r].note_due) {
			gdx_notes_flush(c);
			break;
		}
	return act;
}
