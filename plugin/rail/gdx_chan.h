/* SPDX-License-Identifier: MIT */
/*
 * A multi-rail channel: the rails of one connection (a rail per NIC of the
 * larger end's device, as net_ib makes max(local, remote) QPs), their QPs,
 * where each rail stands and what it has been delivering. The two-sided
 * comms (comm/gdx_comm.h) and the one-sided RMA connections
 * (rma/gdx_rma_comm.h) each embed one: striping (gdx_stripe.h), taking a
 * rail out and the liveness rule are this layer's, the same for both; what
 * goes on the rails and how it is re-sent is each protocol's.
 *
 * The recovery model, stated once: a rail that fails is taken out of the
 * channel (its QPs to error); its traffic goes on the rails left. The
 * two-sided path then finds out what of it had arrived (its notes, DOWN
 * with the receiver's counts), re-sends the rest, and restores the rail
 * (RESTORE, READY, probes). RMA re-sends what is known not to have been
 * executed, fails an atomic it cannot be sure of (adding it twice could
 * count a signal twice) and keeps the rail out.
 */
#ifndef GDX_CHAN_H
#define GDX_CHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gdx/gdx_live_layout.h>
#include "rail/gdx_rail.h"
#include "wire/gdx_ctrl.h"
#include "wire/gdx_wire.h"

/* Where a rail of a channel stands (the two-sided path: gdx_failover.c;
 * one-sided RMA takes a rail out for good: UP, then DOWN). */
enum gdx_rail_state {
	GDX_RAIL_UP = 0,    /* carries traffic */
	GDX_RAIL_DRAINING,  /* taken out, QPs in error: the receiver counts what had
			     * arrived, the sender waits for those counts (it
			     * cannot tell alone: a piece may have landed with
			     * no completion to say so) */
	GDX_RAIL_DOWN,	    /* out, nothing of it outstanding: to be restored */
	GDX_RAIL_RESTORING, /* sender: asked the receiver to restore it */
	GDX_RAIL_PROBING,   /* sender: restored; probes check the path */
};

struct gdx_rail_run {
	enum gdx_rail_state state;
	int speed_mbps;		/* its port's, as its rate last followed it (gdx_event.c) */
	uint64_t since_ms;	/* when it entered the state */
	uint64_t deadline_ms;	/* DRAINING, RESTORING, PROBING: when to move on */
	uint64_t renote_ms;	/* sender, DRAINING: when to ask for the counts again */
	uint64_t down_ms;	/* when it was last taken out */
	uint32_t backoff_ms;	/* DOWN: wait before the next restore attempt */
	uint32_t attempts;	/* restore attempts since it went down */
	uint32_t failed;	/* sender: of those, failed ones NCCL_GDX_RECOVERY_ATTEMPTS
				 * counts (not those the peer's port refused) */
	bool gave_up;		/* sender: it stays out until the comm closes */
	uint32_t downs;		/* times taken out */
	uint32_t my_epoch;	/* of our note about it */
	uint32_t peer_epoch;	/* of the peer's last note acted on */
	uint32_t probes;	/* PROBING: probes not yet completed */
	uint32_t life;		/* of its QPs, as both ends name it: the epoch of the
				 * sender's RESTORE that started them, 0 for the
				 * first. Not gdx_rail.gen, the QPs' generation:
				 * each end counts its own resets, and a refused
				 * restore resets the sender's QPs alone */
	bool cq_idle;		/* receiver, DRAINING: the last poll emptied its CQ */
	uint32_t drain_imms;	/* receiver, DRAINING: immediates taken meanwhile */
	uint64_t drain_last_ms; /* and when the last came (for the INFO line) */
	bool note_due;		/* our note about it is still to be written */
	/* That note, as set; it goes into the control region (notes_out) only
	 * once the NIC has read the last write of what is there: a write being
	 * sent, or sent again after a loss, reads the region as it is then,
	 * and a note rewritten under it would arrive half old, half new, with
	 * a stamp that says it is whole. The last write: its rail + 1 (0:
	 * none), that rail's generation and its WR count there. */
	struct gdx_note note_next;
	uint8_t note_lane;
	uint16_t note_gen;
	uint32_t note_wr;
	bool unproven; /* receiver: restored, and nothing has come by it yet:
			* control writes avoid it until something does */
	/* A restore's verbs calls, in a thread of their own: taking a RoCE QP
	 * to RTR resolves the peer's address, which after a link flap can
	 * block for a second (gdx_failover.c). */
	pthread_t bg;
	int bg_busy;	     /* the thread runs (atomic) */
	int bg_result;	     /* its result once it is done: 0 or -errno */
	bool bg_joinable;    /* a thread was started and not yet joined */
	uint32_t bg_answers; /* receiver: the RESTORE it works on */
	char why[80];	     /* why it went down */
	/* striping (gdx_stripe.c): what it delivers, in bytes per ms of the
	 * time it had bytes in flight (idle time does not make it look slow),
	 * over windows of that time */
	double rate;
	uint64_t inflight;   /* bytes posted and not yet known delivered */
	uint64_t busy_since; /* ms; when inflight last went above 0 */
	uint64_t busy_ms;    /* of the current window */
	uint64_t win_bytes;  /* delivered in the current window */
	uint32_t samples;    /* windows measured: the first replaces the port's speed */
};

/* The first word of what a channel's QPs and CQs carry as their context,
 * where an async event finds its channel (gdx_event.c): every context the
 * plugin gives a QP or CQ starts with a tag word (a comm's kind, an RMA
 * context's). */
#define GDX_CHAN_TAG 0x4348414eu /* "CHAN" */

struct gdx_chan {
	uint32_t tag; /* GDX_CHAN_TAG, first: an async event's context */
	/* The owner's error, its first failure as -errno: what an async event
	 * that fails the channel sets (atomic: any thread may drain the
	 * events). */
	int *err;
	/* rails[i] is on this end's NIC i % the device's members, with
	 * qps_per_rail QPs each (qps, rail-major: the owner's storage) */
	int nrails;
	int qps_per_rail;
	struct gdx_rail rails[GDX_MAX_RAILS];
	struct gdx_qp *qps;
	struct gdx_rail_run run[GDX_MAX_RAILS];
	int nlive;	       /* rails UP */
	uint32_t standby;      /* rails on a far NIC of the device (gdx_vdev.far): while a
				* rail not among them is up, no data goes on them */
	bool failover;	       /* a failed rail is taken out (two or more, NCCL_GDX_FAILOVER) */
	bool split;	       /* each piece of a rail over all its QPs */
	uint32_t max_inline;   /* bytes every rail takes inline (the least of them) */
	uint32_t async_failed; /* rails an async event put in error (gdx_event.c) */
	/* Control writes go from the owner's staging (its key on each NIC of
	 * the device, by member) into the peer's control region (its key on
	 * each rail). */
	uint32_t stage_lkey[GDX_MAX_RAILS];
	uint32_t ctrl_rkey[GDX_MAX_RAILS];
	bool timed; /* its signaled sends' latencies go to live (gdx_post.c) */
	/* Its live counters: a slot of the process's file, or the owner's own
	 * when there is none; never NULL once initialised. */
	struct gdx_live_comm *live;
	/* Whose rails these are, for log lines: the owner's device, its peer's
	 * address and device (the owner's strings, as long as it lives). */
	const char *name, *peer, *peer_dev;
};

/* Whether rail r carries traffic. */
static inline bool gdx_chan_up(const struct gdx_chan *ch, int r)
{
	return ch->run[r].state == GDX_RAIL_UP;
}

/* Whether the channel's QP q (rail-major) is on a rail that is up. */
static inline bool gdx_chan_qp_up(const struct gdx_chan *ch, int q)
{
	return gdx_chan_up(ch, q / ch->qps_per_rail);
}

/* Rail r's QPs' generation (gdx_rail_gen). */
static inline uint16_t gdx_chan_gen(const struct gdx_chan *ch, int r)
{
	return gdx_rail_gen(&ch->rails[r]);
}

/* Rail r's NIC, for log lines. */
static inline const char *gdx_chan_ibdev(const struct gdx_chan *ch, int r)
{
	return ch->rails[r].dev->ibdev;
}

/* nlive again, after a rail's state moved. */
static inline void gdx_chan_count_live(struct gdx_chan *ch)
{
	ch->nlive = 0;
	for (int r = 0; r < ch->nrails; r++)
		ch->nlive += gdx_chan_up(ch, r);
}

#endif
